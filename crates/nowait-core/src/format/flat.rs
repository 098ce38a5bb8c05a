//! Lines whose fields all sit at the top level, beside the line's own
//! keys: fixed fields (the same on every line), an event's fields and its
//! spans' fields, each written once under a key no other part of the line
//! has.
//!
//! The rule, the same in every format that flattens (`Json` with fixed
//! fields or flattened spans, `Json::ecs`, `Json::cloud_logging`,
//! `Logfmt`):
//!
//! 1. The line's own keys (time, level, message, target, trace ids, …)
//!    are taken first, whatever the fields are named.
//! 2. Then the fixed fields, in the order they were given, then the
//!    event's fields in order, then the fields of its spans, innermost
//!    span first (a field a span recorded again with `Span::record` counts
//!    once, with its last value).
//! 3. A field whose key is taken is written with a prefix: `fields.` for
//!    fixed and event fields (the path they have in the unflattened JSON
//!    layout), `<span name>.` for span fields, prepended again while the
//!    key is still taken. Every key on the line is then distinct, and no
//!    field is dropped: the number of steps is bounded by the number of
//!    keys on the line.
//!
//! Elasticsearch reads a dotted key as a path of objects (`log.level` is
//! the `level` of the object `log`), so for `Json::ecs` two keys also
//! clash when one is the other's dotted prefix (`log` and `log.level`),
//! and the names of ECS's field sets (`error`, `host`, …, objects in the
//! ECS mapping) are taken as objects: a field named `error` becomes
//! `fields.error`, one named `error.message` stays itself.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::event::{decode_field_name, Callsite, Item, SiteCache, Value};
use crate::format::{is_message, Location, Resolved};

/// The keys one line has taken so far (see the module docs), in hash sets
/// so that a line of many fields, or of many fields of one name, costs
/// time linear in its keys.
///
/// Invariant: `leaves` holds every key taken as a value; in dotted mode
/// `interior` holds every proper dotted prefix of those (`log` for
/// `log.level`); `next[k]` is a number below which every `_N` form of the
/// prefixed key `k` is known to clash.
#[derive(Clone, Debug, Default)]
pub(crate) struct TopKeys {
    leaves: HashSet<Vec<u8>>,
    interior: HashSet<Vec<u8>>,
    next: HashMap<Vec<u8>, u64>,
    /// Object names (ECS's field sets, sorted): only that very key
    /// clashes with one.
    objects: &'static [&'static str],
    /// Whether dotted prefixes clash (Elasticsearch's reading of keys).
    dotted: bool,
    /// The key being built by [`claim`](TopKeys::claim).
    key: Vec<u8>,
}

impl TopKeys {
    /// No key taken; `dotted`: whether dotted prefixes clash too;
    /// `objects`: sorted names of objects.
    pub(crate) fn clear(&mut self, dotted: bool, objects: &'static [&'static str]) {
        debug_assert!(objects.windows(2).all(|w| w[0] < w[1]));
        self.leaves.clear();
        self.interior.clear();
        self.next.clear();
        self.objects = objects;
        self.dotted = dotted;
    }

    /// Takes one of the line's own keys.
    pub(crate) fn take(&mut self, key: &str) {
        self.push(key.as_bytes());
    }

    fn push(&mut self, key: &[u8]) {
        if self.dotted {
            for (i, &b) in key.iter().enumerate() {
                if b == b'.' && !self.interior.contains(&key[..i]) {
                    self.interior.insert(key[..i].to_vec());
                }
            }
        }
        self.leaves.insert(key.to_vec());
    }

    /// Whether `key` clashes with a key taken.
    fn clashes(&self, key: &[u8]) -> bool {
        if self.leaves.contains(key)
            || self
                .objects
                .binary_search_by(|o| o.as_bytes().cmp(key))
                .is_ok()
        {
            return true;
        }
        self.dotted
            && (self.interior.contains(key)
                || key
                    .iter()
                    .enumerate()
                    .any(|(i, &b)| b == b'.' && self.leaves.contains(&key[..i])))
    }

    /// Takes the key a field named `name` is written under and returns
    /// it: `name` if it clashes with no key taken; else `prefix` and `.`
    /// before it (no second `.` if `prefix` ends in one); else that key
    /// with `_2`, `_3`, … after its first part (`fields_2.level`), the
    /// first that clashes with nothing.
    pub(crate) fn claim(&mut self, name: &str, prefix: &str) -> &[u8] {
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.extend_from_slice(name.as_bytes());
        if self.clashes(&key) {
            key.clear();
            key.extend_from_slice(prefix.as_bytes());
            if !prefix.ends_with('.') {
                key.push(b'.');
            }
            let first = key.iter().position(|&b| b == b'.').unwrap_or(key.len());
            key.extend_from_slice(name.as_bytes());
            if self.clashes(&key) {
                // A taken key clashes with at most one numbered form (its
                // first part names the number), and `next` skips the
                // numbers tried before on this line: all claims of a line
                // take as many rounds in all as it has keys.
                let mut n = self.next.get(&key).copied().unwrap_or(2);
                let mut numbered = Vec::with_capacity(key.len() + 4);
                loop {
                    numbered.clear();
                    numbered.extend_from_slice(&key[..first]);
                    numbered.push(b'_');
                    numbered.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                    numbered.extend_from_slice(&key[first..]);
                    n += 1;
                    if !self.clashes(&numbered) {
                        break;
                    }
                }
                self.next.insert(key.clone(), n);
                key = numbered;
            }
        }
        self.push(&key);
        self.key = key;
        &self.key
    }
}

/// Where a flattened field comes from: the event, or a span of this name.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin<'s> {
    Event,
    Span(&'s str),
}

impl Origin<'_> {
    /// The prefix a clashing field of this origin is written with.
    pub(crate) fn prefix(&self) -> &str {
        match self {
            Origin::Event => "fields.",
            Origin::Span(name) => name,
        }
    }
}

/// The event's message: its first field named `message`.
pub(crate) fn message_of<'a>(ev: &Resolved<'a>) -> Option<Value<'a>> {
    ev.event.items().find_map(|item| match item {
        Item::Field { name, value } if is_message(ev.name_of(name)) => Some(value),
        _ => None,
    })
}

/// Calls `each(name, value, site, origin)` for the event's fields but its
/// location fields (kept in `at`) and, if `skip_message`, its message (see
/// [`message_of`]),
/// then for its spans' fields, innermost span first, a field recorded
/// again in a span only with its last value. `site` is the call site a
/// deferred value is rendered with. An item that does not decode is the
/// field `nowait.malformed` = `true`.
pub(crate) fn each_field<'a>(
    ev: &Resolved<'a>,
    sites: &mut SiteCache,
    at: &mut Location<'a>,
    skip_message: bool,
    mut each: impl FnMut(&str, Value<'a>, Option<&Arc<Callsite>>, Origin<'_>),
) {
    let mut message = !skip_message;
    let mut spans = 0usize;
    for item in ev.event.items() {
        match item {
            Item::Field { name, value } => {
                let name = ev.name_of(name);
                if at.take(ev.site.is_some(), name, value) {
                    continue;
                }
                if !message && is_message(name) {
                    message = true;
                    continue;
                }
                each(name, value, ev.site.as_ref(), Origin::Event);
            }
            Item::Malformed => each("nowait.malformed", Value::Bool(true), None, Origin::Event),
            Item::Span { .. } => spans += 1,
        }
    }
    // Innermost (last) span first: spans are few, so each is found by a
    // walk from the start rather than kept in a list.
    for k in (0..spans).rev() {
        let Some((site, fields)) = ev
            .event
            .items()
            .filter_map(|item| match item {
                Item::Span { site, fields } => Some((site, fields)),
                _ => None,
            })
            .nth(k)
        else {
            continue;
        };
        let span_site = sites.get(site.get());
        let span_name = span_site.as_ref().map_or("?", |s| s.name());
        let items = fields.items().filter_map(|f| match f {
            Item::Field { name, value } => Some((name, value)),
            _ => None,
        });
        for (i, (name, value)) in items.clone().enumerate() {
            let name = decode_field_name(name, span_site.as_ref());
            let again = items
                .clone()
                .skip(i + 1)
                .any(|(later, _)| decode_field_name(later, span_site.as_ref()) == name);
            if !again {
                each(name, value, span_site.as_ref(), Origin::Span(span_name));
            }
        }
    }
}

/// The names of the field sets of the Elastic Common Schema that are
/// objects (the first part of a dotted field name: `error.message` is in
/// `error`), and `labels`, as the ECS 9.4 field list has them.
pub(crate) const ECS_OBJECTS: [&str; 42] = [
    "agent",
    "client",
    "cloud",
    "container",
    "data_stream",
    "destination",
    "device",
    "dll",
    "dns",
    "ecs",
    "email",
    "entity",
    "error",
    "event",
    "faas",
    "file",
    "gen_ai",
    "group",
    "host",
    "http",
    "labels",
    "log",
    "network",
    "observer",
    "orchestrator",
    "organization",
    "package",
    "process",
    "registry",
    "related",
    "rule",
    "server",
    "service",
    "source",
    "span",
    "threat",
    "tls",
    "trace",
    "transaction",
    "url",
    "user",
    "user_agent",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(keys: &mut TopKeys, name: &str, prefix: &str) -> String {
        String::from_utf8(keys.claim(name, prefix).to_vec()).unwrap()
    }

    #[test]
    fn a_taken_key_gets_the_prefix_until_free() {
        let mut keys = TopKeys::default();
        keys.clear(false, &[]);
        keys.take("level");
        assert_eq!(claim(&mut keys, "a", "fields."), "a");
        assert_eq!(claim(&mut keys, "level", "fields."), "fields.level");
        assert_eq!(claim(&mut keys, "level", "fields."), "fields_2.level");
        assert_eq!(claim(&mut keys, "level", "fields."), "fields_3.level");
        assert_eq!(claim(&mut keys, "a", "request"), "request.a");
        assert_eq!(claim(&mut keys, "a", "request"), "request_2.a");
        assert_eq!(claim(&mut keys, "a", "my.span"), "my.span.a");
        assert_eq!(claim(&mut keys, "a", "my.span"), "my_2.span.a");
        // Without dotted clashes, `a.b` is its own key.
        assert_eq!(claim(&mut keys, "a.b", "fields."), "a.b");
    }

    #[test]
    fn dotted_prefixes_clash_but_objects_only_by_name() {
        let mut keys = TopKeys::default();
        keys.clear(true, &["error"]);
        keys.take("log.level");
        assert_eq!(claim(&mut keys, "log", "fields."), "fields.log");
        // `fields.log`, a value now, is a dotted prefix of
        // `fields.log.level.x`: the numbered prefix it is.
        assert_eq!(
            claim(&mut keys, "log.level.x", "fields."),
            "fields_2.log.level.x"
        );
        assert_eq!(claim(&mut keys, "error", "fields."), "fields.error");
        assert_eq!(
            claim(&mut keys, "error.message", "fields."),
            "error.message"
        );
        // `fields.log` is now taken: `fields` itself clashes with it, and
        // so does `fields.fields` once `fields` is a leaf.
        assert_eq!(claim(&mut keys, "fields", "fields."), "fields.fields");
        keys.take("x");
        assert_eq!(claim(&mut keys, "x", "x"), "x_2.x");
        assert_eq!(claim(&mut keys, "x", "x"), "x_3.x");
    }

    /// Whatever the keys taken, `claim` returns a key that clashes with
    /// none of them, and ends.
    #[test]
    fn claim_always_ends_on_a_free_key() {
        let parts = [
            "a",
            "fields",
            "fields_2",
            "x",
            "",
            "a.b",
            "fields.a",
            "fields_3.a",
            "s",
        ];
        let objects: [&'static [&'static str]; 3] = [&[], &["a"], &["fields", "s"]];
        let mut next = crate::format::test_rng();
        for dotted in [false, true] {
            for _ in 0..2000 {
                let mut keys = TopKeys::default();
                keys.clear(dotted, objects[next(3) as usize]);
                for _ in 0..next(8) {
                    keys.take(parts[next(parts.len() as u64) as usize]);
                }
                let mut claimed = Vec::new();
                for _ in 0..12 {
                    let name = parts[next(parts.len() as u64) as usize];
                    let prefix = ["fields.", "s", "a.b"][next(3) as usize];
                    let before = keys.clone();
                    let key = keys.claim(name, prefix).to_vec();
                    assert!(!before.clashes(&key), "{name:?} {prefix:?} -> {key:?}");
                    assert!(!claimed.contains(&key));
                    claimed.push(key);
                }
            }
        }
    }

    /// Many fields of one name: each claim is a few set lookups, not a
    /// walk over the numbers taken before.
    #[test]
    fn many_fields_of_one_name_stay_linear() {
        let mut keys = TopKeys::default();
        keys.clear(true, &[]);
        keys.take("level");
        let n = if cfg!(miri) { 50 } else { 20_000 };
        for i in 0..n {
            let key = keys.claim("level", "fields.").to_vec();
            let want = match i {
                0 => "fields.level".to_owned(),
                i => format!("fields_{}.level", i + 1),
            };
            assert_eq!(String::from_utf8(key).unwrap(), want);
        }
    }
}
