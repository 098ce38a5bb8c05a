//! [`Otlp::from_env`]: the OpenTelemetry specification's OTLP exporter
//! variables (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED`).
//!
//! # Reading the environment
//!
//! The environment is untrusted input, read by one total parser:
//!
//! 1. Each variable is read once through the caller's source; an empty
//!    value is unset (as the specification says), a value longer than
//!    [`MAX_VALUE`] bytes is an error. The endpoint variables are the
//!    exception: set but empty (or blank) is an error, since falling back
//!    to the default would send records, and headers, where no one chose.
//! 2. A signal-specific variable (`..._LOGS_...`) wins over the generic
//!    one; they are never merged. The default endpoint is used only when
//!    neither endpoint variable is set at all.
//! 3. Lists (`k=v,k2=v2`, headers and resource attributes) are split on
//!    commas, each member trimmed of blanks and split at its first `=`,
//!    keys and values percent-decoded ([`percent_decode`]: a `%` takes
//!    exactly two hex digits, the result must be UTF-8). At most
//!    [`MAX_ITEMS`] members. No recursion, no arithmetic on input.
//! 4. Every error is a [`BuildError`] that names the variable and, for a
//!    header, the header's name, never its value; what it quotes from the
//!    environment is escaped ([`shown`]), so no control character or line
//!    break from a variable reaches the terminal that prints it.
//! 5. TLS settings with a plain `http://` endpoint are an error naming the
//!    variable; credentials over plain HTTP are judged at build
//!    ([`Otlp::allow_plaintext_credentials`]), where code may have added
//!    the opt-in.

use std::time::Duration;

use super::{shown, Otlp, Resolve};
use crate::error::BuildError;

/// The longest value read from one variable.
pub(crate) const MAX_VALUE: usize = 16 << 10;
/// The most members of one list variable.
pub(crate) const MAX_ITEMS: usize = 128;
/// The longest timeout the environment may ask for.
const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// Percent-decodes `s` (`%XX` only; `+` is kept).
pub(crate) fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: u8| (b as char).to_digit(16);
            let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) else {
                return Err("a % not followed by two hex digits".into());
            };
            // Both digits are below 16: the byte cannot overflow.
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "percent-decodes to bytes that are not UTF-8".into())
}

/// Parses a `k=v,k2=v2` list (see the [module docs](self)). An error
/// names the member by position, never by its value.
pub(crate) fn parse_list(value: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, member) in value.split(',').enumerate() {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue;
        }
        if out.len() == MAX_ITEMS {
            return Err(format!("more than {MAX_ITEMS} entries"));
        }
        let Some((k, v)) = member.split_once('=') else {
            return Err(format!("entry {} is not key=value", n + 1));
        };
        let key = percent_decode(k.trim_matches([' ', '\t']))
            .map_err(|e| format!("entry {}: its key: {e}", n + 1))?;
        if key.is_empty() {
            return Err(format!("entry {} has an empty key", n + 1));
        }
        let value = percent_decode(v.trim_matches([' ', '\t']))
            .map_err(|e| format!("entry {} ({}): its value: {e}", n + 1, shown(&key)))?;
        out.push((key, value));
    }
    Ok(out)
}

/// The variables [`fuzz_env`] sets.
#[cfg(fuzzing)]
const FUZZ_VARS: [&str; 14] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_SERVICE_NAME",
    "OTEL_SDK_DISABLED",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE",
];

/// Fuzzing: `data[0]` and `data[1]` pick two variables (of
/// [`FUZZ_VARS`]), the rest (lossy UTF-8) split at its first NUL gives
/// their values. Names resolve without the network: loopback for
/// `localhost` and loopback addresses, a documentation address
/// (192.0.2.1) for anything else. Checked on every input:
///
/// * the list parser keeps its bounds and [`from_env_inner`] returns;
/// * an error quotes nothing raw (no control, line-breaking or bidi
///   character) and never a header's value (a canary value added after
///   the input's entries, valid and not);
/// * the default endpoint is used only when no endpoint variable is set;
/// * an accepted configuration has no TLS setting with an `http://`
///   endpoint, and its credentials over plain HTTP are refused at build
///   unless the address is loopback (then a warning), or allowed with the
///   opt-in and no warning.
#[cfg(fuzzing)]
pub(crate) fn fuzz_env(data: &[u8]) {
    let [a, b, rest @ ..] = data else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if let Ok(list) = parse_list(&text) {
        assert!(list.len() <= MAX_ITEMS);
        assert!(list.iter().all(|(k, v)| k.len() + v.len() <= text.len()));
    }
    let (first, second) = text.split_once('\0').unwrap_or((&text, ""));
    let vars = [
        (FUZZ_VARS[usize::from(*a) % FUZZ_VARS.len()], first),
        (FUZZ_VARS[usize::from(*b) % FUZZ_VARS.len()], second),
    ];
    let resolve = |host: &str, port: u16| -> std::io::Result<std::net::SocketAddr> {
        let ip: std::net::IpAddr = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => ip,
            Err(_) if host.eq_ignore_ascii_case("localhost") => [127, 0, 0, 1].into(),
            Err(_) => [192, 0, 2, 1].into(),
        };
        Ok((ip, port).into())
    };
    let run = |extra: Option<&str>| {
        from_env_inner(
            |name| {
                let found = vars.iter().find(|(var, _)| *var == name);
                match (found, extra) {
                    (Some((_, v)), Some(extra)) if name.ends_with("HEADERS") => {
                        Some(format!("{v},{extra}"))
                    }
                    (Some((_, v)), _) => Some((*v).to_owned()),
                    (None, _) => None,
                }
            },
            &resolve,
        )
    };
    let shown_raw = |e: &BuildError| {
        let e = e.to_string();
        assert_eq!(
            crate::format::unescaped_at(e.as_bytes(), &[]),
            None,
            "{e:?}"
        );
        e
    };
    let endpoint_set = vars.iter().any(|(var, _)| var.ends_with("ENDPOINT"));
    match run(None) {
        Err(e) => {
            shown_raw(&e);
        }
        Ok(None) => {}
        Ok(Some(otlp)) => {
            assert_eq!(otlp.default_endpoint, !endpoint_set, "{vars:?}");
            assert_eq!(otlp.check_tls_scheme(), Ok(()), "{vars:?}");
            let plain = otlp.endpoint.as_ref().is_ok_and(|e| e.tls.is_none());
            let credentials = otlp.headers.iter().any(|(n, _)| super::is_credential(n));
            let loopback = otlp
                .endpoint
                .as_ref()
                .is_ok_and(|e| e.addr.ip().is_loopback());
            match otlp.check() {
                Ok(()) => {
                    let refused = plain && credentials && (!loopback || otlp.default_endpoint);
                    assert!(!refused, "{vars:?}");
                    let warned = plain && credentials;
                    assert_eq!(otlp.plaintext_warning().is_some(), warned, "{vars:?}");
                }
                Err(e) => assert_eq!(crate::format::unescaped_at(e.as_bytes(), &[]), None),
            }
            let allowed = otlp.allow_plaintext_credentials(true);
            assert!(allowed.plaintext_warning().is_none());
            if let Err(e) = allowed.check() {
                assert!(!e.contains("in clear"), "{e}");
            }
        }
    }
    // A header value never shows in an error, valid or not: a canary
    // value after the input's entries (a value the input cannot name).
    if vars.iter().any(|(var, _)| var.ends_with("HEADERS")) && !text.contains("CANARY") {
        for canary in [
            "zz=NOWAITCANARY",
            "zz=NOWAITCANARY%0d%0a",
            "z z=NOWAITCANARY",
            "host=NOWAITCANARY",
            "zz=NOWAITCANARY%ff",
            "authorization=NOWAITCANARY",
        ] {
            if let Err(e) = run(Some(canary)) {
                let e = shown_raw(&e);
                assert!(!e.contains("NOWAITCANARY"), "{e}");
            }
            if let Ok(Some(otlp)) = run(Some(canary)) {
                for e in [otlp.check().err(), otlp.plaintext_warning()]
                    .into_iter()
                    .flatten()
                {
                    assert!(!e.contains("NOWAITCANARY"), "{e}");
                }
            }
        }
    }
}

/// The variables, read through the caller's source.
struct Env<F> {
    get: F,
}

impl<F: FnMut(&str) -> Option<String>> Env<F> {
    /// A variable's value as set (empty included), at most
    /// [`MAX_VALUE`] bytes.
    fn raw(&mut self, name: &str) -> Result<Option<String>, BuildError> {
        match (self.get)(name) {
            Some(v) if v.len() > MAX_VALUE => Err(BuildError::config(format!(
                "{name}: longer than {MAX_VALUE} bytes"
            ))),
            v => Ok(v),
        }
    }

    /// A variable's value: `None` if unset or empty.
    fn var(&mut self, name: &str) -> Result<Option<String>, BuildError> {
        Ok(self.raw(name)?.filter(|v| !v.trim().is_empty()))
    }

    /// An endpoint variable's value, trimmed: `None` only if unset; set
    /// but blank is an error (see the module docs).
    fn endpoint(&mut self, name: &str) -> Result<Option<String>, BuildError> {
        match self.raw(name)? {
            Some(v) if v.trim().is_empty() => Err(bad(
                name,
                "set but empty: unset it for the default endpoint, or give the receiver's URL",
            )),
            v => Ok(v.map(|v| v.trim().to_owned())),
        }
    }

    /// The logs variable `OTEL_EXPORTER_OTLP_LOGS_{what}` if set, else the
    /// generic `OTEL_EXPORTER_OTLP_{what}`: `(name, value)`.
    fn signal(&mut self, what: &str) -> Result<Option<(String, String)>, BuildError> {
        for name in [
            format!("OTEL_EXPORTER_OTLP_LOGS_{what}"),
            format!("OTEL_EXPORTER_OTLP_{what}"),
        ] {
            if let Some(v) = self.var(&name)? {
                return Ok(Some((name, v)));
            }
        }
        Ok(None)
    }
}

/// The error for variable `name`, `why` escaped: it may quote the
/// variable's content (escaping text already escaped changes nothing).
fn bad(name: &str, why: impl std::fmt::Display) -> BuildError {
    BuildError::config(format!("{name}: {}", shown(&why.to_string())))
}

/// See [`Otlp::from_env_with`].
pub(crate) fn from_env_with(
    get: impl FnMut(&str) -> Option<String>,
) -> Result<Option<Otlp>, BuildError> {
    from_env_inner(get, &super::resolve)
}

/// [`from_env_with`], names resolved by `resolve`.
pub(crate) fn from_env_inner(
    get: impl FnMut(&str) -> Option<String>,
    resolve: Resolve<'_>,
) -> Result<Option<Otlp>, BuildError> {
    let mut env = Env { get };
    // OTEL_SDK_DISABLED: a boolean, true only if "true" without case; any
    // other value is false, as the specification says.
    if env
        .var("OTEL_SDK_DISABLED")?
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    {
        return Ok(None);
    }
    if let Some((name, protocol)) = env.signal("PROTOCOL")? {
        if protocol.trim() != "http/protobuf" {
            return Err(bad(
                &name,
                format!("\"{}\": only http/protobuf is supported", protocol.trim()),
            ));
        }
    }
    // The endpoint: the logs one as is; the generic one with /v1/logs; the
    // default only if neither is set.
    let mut otlp = if let Some(url) = env.endpoint("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")? {
        let otlp = Otlp::with_endpoint(super::parse_as_is(&url, resolve));
        otlp.endpoint
            .as_ref()
            .map_err(|e| bad("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", e))?;
        otlp
    } else if let Some(url) = env.endpoint("OTEL_EXPORTER_OTLP_ENDPOINT")? {
        let sep = if url.ends_with('/') { "" } else { "/" };
        let endpoint = super::parse_as_is(&format!("{url}{sep}v1/logs"), resolve);
        let otlp = Otlp::with_endpoint(endpoint);
        otlp.endpoint
            .as_ref()
            .map_err(|e| bad("OTEL_EXPORTER_OTLP_ENDPOINT", e))?;
        otlp
    } else {
        let mut otlp = Otlp::with_endpoint(super::parse_as_is(DEFAULT_ENDPOINT, resolve));
        otlp.default_endpoint = true;
        otlp
    };
    if let Some((name, value)) = env.signal("HEADERS")? {
        for (k, v) in parse_list(&value).map_err(|e| bad(&name, e))? {
            super::check_header(&k, &v).map_err(|e| bad(&name, e))?;
            otlp = otlp.header(k, v);
        }
    }
    if let Some((name, value)) = env.signal("TIMEOUT")? {
        let value = value.trim();
        let ms =
            (!value.is_empty() && value.len() <= 10 && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse::<u64>().ok())
                .flatten()
                .filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms))
                .ok_or_else(|| {
                    bad(
                        &name,
                        format!("expected milliseconds from 1 to {MAX_TIMEOUT_MS}"),
                    )
                })?;
        otlp = otlp.timeout(Duration::from_millis(ms));
    }
    if let Some((name, value)) = env.signal("COMPRESSION")? {
        otlp = match value.trim() {
            "gzip" => otlp.gzip(true),
            "none" => otlp.gzip(false),
            _ => return Err(bad(&name, "expected gzip or none")),
        };
    }
    for what in ["CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"] {
        if let Some((name, path)) = env.signal(what)? {
            otlp = certificate(otlp, what, &name, path)?;
        }
    }
    if let Some(value) = env.var("OTEL_RESOURCE_ATTRIBUTES")? {
        for (k, v) in parse_list(&value).map_err(|e| bad("OTEL_RESOURCE_ATTRIBUTES", e))? {
            otlp = if k == "service.name" {
                otlp.service_name(v)
            } else {
                otlp.resource_attribute(k, v)
            };
        }
    }
    // OTEL_SERVICE_NAME wins over a service.name in the attributes.
    if let Some(name) = env.var("OTEL_SERVICE_NAME")? {
        otlp = otlp.service_name(name.trim());
    }
    // A certificate variable names itself (`set_by`) in this error.
    otlp.check_tls_scheme()
        .map_err(|e| BuildError::config(shown(&e)))?;
    Ok(Some(otlp))
}

/// The specification's default, used only when no endpoint variable is
/// set.
const DEFAULT_ENDPOINT: &str = "http://localhost:4318/v1/logs";

#[cfg(feature = "otlp-tls")]
fn certificate(mut otlp: Otlp, what: &str, name: &str, path: String) -> Result<Otlp, BuildError> {
    use super::tls::Source;

    let path = Source::Path(std::path::PathBuf::from(path.trim()));
    let tls = otlp.tls.changed();
    match what {
        "CERTIFICATE" => tls.ca = Some(path),
        "CLIENT_CERTIFICATE" => tls.client_cert = Some(path),
        _ => tls.client_key = Some(path),
    }
    tls.set_by(name);
    Ok(otlp)
}

#[cfg(not(feature = "otlp-tls"))]
fn certificate(_: Otlp, _: &str, name: &str, _: String) -> Result<Otlp, BuildError> {
    Err(bad(
        name,
        "certificates need nowait-core's otlp-tls feature (TLS is not built in)",
    ))
}

#[cfg(test)]
mod tests;
