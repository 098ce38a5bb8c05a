//! Fixed fields: the same keys and values on every line of a sink
//! (service, version, host, environment), set by the program or read from
//! environment variables it names.
//!
//! An environment variable is untrusted input: its value is read once,
//! when the format is configured, as text (bytes that are not UTF-8
//! become U+FFFD), cut to [`MAX_ENV_VALUE`] bytes at a character boundary
//! with a mark, and escaped like any value when written.

use std::sync::Arc;

/// The longest value, in bytes, a fixed field takes from an environment
/// variable; a longer one is cut at a character boundary and ends in
/// `… [truncated]`.
pub(crate) const MAX_ENV_VALUE: usize = 1024;

/// What a cut value ends with (as an oversized event's cut values do).
const CUT_MARK: &str = "… [truncated]";

/// The fixed fields of a format, in the order given.
///
/// Invariant: keys are distinct (setting a key again replaces its value
/// in place), and no value is longer than the program made it or, from
/// the environment, than [`MAX_ENV_VALUE`] plus the mark.
#[derive(Clone, Debug, Default)]
pub(crate) struct FixedFields(Arc<Vec<(Box<str>, Box<str>)>>);

impl FixedFields {
    /// Sets `key` to `value`: replaced in place if the key is there, else
    /// added last.
    pub(crate) fn set(&mut self, key: &str, value: &str) {
        let fields = Arc::make_mut(&mut self.0);
        match fields.iter_mut().find(|(k, _)| &**k == key) {
            Some((_, v)) => *v = value.into(),
            None => fields.push((key.into(), value.into())),
        }
    }

    /// For each `(key, variable)`, sets `key` to the value of `variable`
    /// as `get` reads it, if it has one that is not empty (bounded, see the
    /// module docs); a variable that is unset or empty sets nothing.
    pub(crate) fn set_from_env<K, V>(
        &mut self,
        pairs: impl IntoIterator<Item = (K, V)>,
        mut get: impl FnMut(&str) -> Option<std::ffi::OsString>,
    ) where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        for (key, var) in pairs {
            let Some(raw) = get(var.as_ref()) else {
                continue;
            };
            let text = raw.to_string_lossy();
            if text.is_empty() {
                continue;
            }
            self.set(key.as_ref(), &bounded(&text));
        }
    }

    /// The fields, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `text` if at most [`MAX_ENV_VALUE`] bytes long, else its longest
/// prefix of whole characters that fits, followed by the cut mark.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_ENV_VALUE {
        return text.to_owned();
    }
    let mut end = MAX_ENV_VALUE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = String::with_capacity(end + CUT_MARK.len());
    cut.push_str(&text[..end]);
    cut.push_str(CUT_MARK);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn setting_a_key_again_replaces_it_in_place() {
        let mut f = FixedFields::default();
        f.set("service", "api");
        f.set("version", "1");
        f.set("service", "web");
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            [("service", "web"), ("version", "1")]
        );
    }

    /// Unset and empty variables set nothing; long values are cut at a
    /// character boundary with the mark; bytes that are not UTF-8 become
    /// U+FFFD.
    #[test]
    fn environment_values_are_bounded_and_text() {
        let long = "é".repeat(MAX_ENV_VALUE); // 2 bytes each
        let get = |name: &str| -> Option<OsString> {
            match name {
                "SET" => Some("prod".into()),
                "EMPTY" => Some("".into()),
                "LONG" => Some(long.clone().into()),
                #[cfg(unix)]
                "BYTES" => {
                    use std::os::unix::ffi::OsStringExt as _;
                    Some(OsString::from_vec(b"a\xffb\n".to_vec()))
                }
                _ => None,
            }
        };
        let mut f = FixedFields::default();
        f.set_from_env(
            [
                ("env", "SET"),
                ("empty", "EMPTY"),
                ("unset", "UNSET"),
                ("long", "LONG"),
                ("bytes", "BYTES"),
            ],
            get,
        );
        let got: Vec<_> = f.iter().collect();
        assert_eq!(got[0], ("env", "prod"));
        assert_eq!(got[1].0, "long");
        assert_eq!(got[1].1.len(), MAX_ENV_VALUE + CUT_MARK.len());
        assert!(got[1].1.ends_with(CUT_MARK));
        assert!(got[1].1.starts_with(&"é".repeat(MAX_ENV_VALUE / 2)));
        #[cfg(unix)]
        assert_eq!(got[2], ("bytes", "a\u{fffd}b\n"));
        assert_eq!(got.len(), if cfg!(unix) { 3 } else { 2 });
    }
}
