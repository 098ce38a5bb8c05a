//! A job's plan, decided from a directory listing alone: which names are
//! the sink's own files before the current one (step 1), what step 2 does
//! with each plain file, and what retention removes (step 3).
//!
//! Pure functions of the listing, the job and the settings: the same input
//! gives the same plan, nothing here touches the directory, and the fuzz
//! target `rolling_housekeeping` (`fuzz_housekeeping`) holds them to the
//! rules of the module's doc over hostile listings: only the sink's own
//! files before `current` are compressed, removed or counted, every other
//! name of the sink's pattern is reported, and after the removals the
//! limits hold.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, SystemTime};

use crate::rolling::naming::{Key, Naming};
use crate::rolling::Compression;
use crate::sys::nofollow::{Mode, Stat};

/// Work for the housekeeping thread.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) current: Key,
    /// The time on the sink's clock, for `max_age`.
    pub(crate) now: SystemTime,
}

/// What the housekeeping thread needs to know.
#[derive(Debug, Clone)]
pub(crate) struct Housekeeping {
    pub(crate) naming: Naming,
    pub(crate) compress: Option<Compression>,
    pub(crate) max_files: Option<usize>,
    pub(crate) max_age: Option<Duration>,
    pub(crate) max_total: Option<u64>,
    /// The bits an archive gets at most ([`Rolling::mode`](crate::rolling::Rolling::mode)).
    pub(crate) mode: Mode,
}

impl Housekeeping {
    /// Whether there is anything to do after a rotation.
    pub(crate) fn needed(&self) -> bool {
        self.compress.is_some()
            || self.max_files.is_some()
            || self.max_age.is_some()
            || self.max_total.is_some()
    }
}

/// A name in the directory and what it is, as listed: the input of the
/// decisions.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) name: String,
    pub(crate) stat: Stat,
}

/// One file of an [`Entry`]: its name and what it was when listed (its
/// identity is checked again before it is removed).
pub(crate) type Part = Listed;

/// One file of the sink, compressed, plain, or (after a crash between the
/// rename and the removal) both; each the sink's own.
#[derive(Debug, Default, Clone)]
pub(crate) struct Entry {
    pub(crate) plain: Option<Part>,
    /// `NAME.gz`, `NAME.zst` (usually one; both if the setting changed).
    pub(crate) archives: Vec<(Compression, Part)>,
    /// An archive name is taken by something not the sink's: `NAME`
    /// cannot be compressed.
    pub(crate) blocked: bool,
}

impl Entry {
    /// Bytes of the plain file and archives, as listed.
    fn bytes(&self) -> u64 {
        self.parts().fold(0u64, |n, p| n.saturating_add(p.stat.len))
    }

    /// The latest modification of the plain file and archives, as listed.
    fn modified(&self) -> Option<SystemTime> {
        self.parts().filter_map(|p| p.stat.modified).max()
    }

    /// The plain file, then the archives.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &Part> {
        self.plain
            .iter()
            .chain(self.archives.iter().map(|(_, p)| p))
    }
}

/// What a listing holds for a sink (step 1).
#[derive(Debug, Default)]
pub(crate) struct Files {
    /// The sink's own files before `current`, by key.
    pub(crate) older: BTreeMap<Key, Entry>,
    /// Names of the sink's pattern that are not its files, and why: left
    /// alone, reported once while they stay.
    pub(crate) alone: Vec<(String, String)>,
    /// The sink's own temporaries of compressions not finished: removed.
    pub(crate) leftovers: Vec<Part>,
}

/// What a name of this sink is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    Archive(Compression),
    /// `NAME.gz.TOKEN.tmp` (or `NAME.gz.tmp`): a compression under way.
    Tmp,
}

/// The longest random token of a temporary name (hex digits of a `u64`).
const TOKEN_MAX: usize = 16;

/// The key and kind of `name`, if it is one of the sink's names. A name
/// the sink gives its files is never taken for a temporary.
pub(super) fn classify(naming: &Naming, name: &str) -> Option<(Key, Kind)> {
    if let Some((key, compressed)) = naming.parse(name) {
        if !compressed {
            return Some((key, Kind::Plain));
        }
        let how = Compression::ALL
            .into_iter()
            .find(|c| name.ends_with(c.extension()))?;
        return Some((key, Kind::Archive(how)));
    }
    let stem = name.strip_suffix(".tmp")?;
    // `ARCHIVE.TOKEN`, or `ARCHIVE`.
    let archive = match stem.rsplit_once('.') {
        Some((archive, token))
            if !token.is_empty()
                && token.len() <= TOKEN_MAX
                && token
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                && Compression::ALL
                    .iter()
                    .any(|c| archive.ends_with(c.extension())) =>
        {
            archive
        }
        _ => stem,
    };
    match naming.parse(archive)? {
        (key, true) => Some((key, Kind::Tmp)),
        (_, false) => None,
    }
}

/// Whether `name` is one of the sink's names: a file's, an archive's, or
/// a compression's temporary.
pub(crate) fn is_sinks(naming: &Naming, name: &str) -> bool {
    classify(naming, name).is_some()
}

/// Step 1: the sink's files in `listing`, before `current`, and the names
/// to leave alone or to clean up. Pure: the same listing gives the same
/// answer.
pub(crate) fn sort(
    naming: &Naming,
    current: &Key,
    listing: impl IntoIterator<Item = Listed>,
) -> Files {
    let mut files = Files::default();
    let mut blocked = HashSet::new();
    for item in listing {
        let Some((key, kind)) = classify(naming, &item.name) else {
            continue;
        };
        if let Some(why) = item.stat.not_ours() {
            if matches!(kind, Kind::Archive(_)) {
                blocked.insert(key);
            }
            files.alone.push((item.name, why));
            continue;
        }
        match kind {
            Kind::Tmp => files.leftovers.push(item),
            // The current file, and any named after it: not this job's.
            _ if key >= *current => {}
            Kind::Plain => files.older.entry(key).or_default().plain = Some(item),
            Kind::Archive(how) => files
                .older
                .entry(key)
                .or_default()
                .archives
                .push((how, item)),
        }
    }
    for (key, entry) in files.older.iter_mut() {
        entry.blocked = blocked.contains(key);
        entry.archives.sort_by_key(|(how, _)| *how as u8);
    }
    files
}

/// What step 2 does with one plain file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Compress it.
    Compress,
    /// Remove it if its first archive holds exactly its bytes.
    Verify,
}

/// Step 2's plan: what to do with each plain file of `files` (none without
/// compression). Pure.
pub(crate) fn compression(files: &Files, on: bool) -> Vec<(Key, Action)> {
    if !on {
        return Vec::new();
    }
    files
        .older
        .iter()
        .filter(|(_, e)| e.plain.is_some())
        .filter_map(|(key, e)| match (e.archives.is_empty(), e.blocked) {
            (false, _) => Some((key.clone(), Action::Verify)),
            (true, false) => Some((key.clone(), Action::Compress)),
            (true, true) => None,
        })
        .collect()
}

/// Step 3: the keys of `older` (the sink's own files before the current
/// one, as step 2 left them) to remove, oldest first, with the limit that
/// removes each. Pure.
pub(crate) fn retention(
    s: &Housekeeping,
    older: &BTreeMap<Key, Entry>,
    now: SystemTime,
) -> Vec<(Key, &'static str)> {
    // Files that remain, counting the current one.
    let mut count = older.len().saturating_add(1);
    let mut bytes = older
        .values()
        .fold(0u64, |n, e| n.saturating_add(e.bytes()));
    let mut out = Vec::new();
    for (key, entry) in older {
        let too_many = s.max_files.is_some_and(|max| count > max.max(1));
        let too_big = s.max_total.is_some_and(|max| bytes > max);
        let too_old = s.max_age.is_some_and(|max| {
            entry
                .modified()
                .is_some_and(|m| now.duration_since(m).unwrap_or(Duration::ZERO) > max)
        });
        let why = if too_many {
            "max_log_files"
        } else if too_big {
            "max_total_size"
        } else if too_old {
            "max_age"
        } else {
            continue;
        };
        out.push((key.clone(), why));
        count -= 1;
        bytes = bytes.saturating_sub(entry.bytes());
    }
    out
}

/// The fuzz target `rolling_housekeeping`: the decisions of a job (steps
/// 1 and 3, and step 2's plan) over a hostile listing. The first byte picks
/// the naming, the second which settings are on, the next three their
/// values; the rest, split at `0xff`, is the current file's name, then
/// listed names, each after three bytes saying what it is (kind, owner,
/// links), its size (up to 2^63) and its age in days (negative: in the
/// future). Whatever the listing, only the sink's own files before the
/// current one are compressed, removed or counted, every name elsewhere
/// of the sink's pattern is reported, and after the removals the limits
/// hold.
#[cfg(fuzzing)]
pub(crate) fn fuzz_housekeeping(data: &[u8]) {
    use crate::sys::nofollow::Kind as FileKind;
    use std::collections::HashMap;

    let Some((head, rest)) = data.split_first_chunk::<5>() else {
        return;
    };
    let (prefix, suffix, rotation) = match head[0] % 4 {
        0 => (Some("app"), Some("log"), crate::rolling::Rotation::Daily),
        1 => (Some("app.log"), None, crate::rolling::Rotation::Never),
        2 => (None, Some("log"), crate::rolling::Rotation::Hourly),
        _ => (Some("a"), None, crate::rolling::Rotation::Minutely),
    };
    let naming = Naming {
        prefix: prefix.map(Into::into),
        suffix: suffix.map(Into::into),
        rotation,
    };
    let on = head[1];
    let settings = Housekeeping {
        naming: naming.clone(),
        compress: (on & 1 != 0).then_some(Compression::Gzip),
        max_files: (on & 2 != 0).then_some(usize::from(head[2])),
        max_total: (on & 4 != 0).then_some(u64::from(head[3]) << (head[3] % 48)),
        max_age: (on & 8 != 0).then_some(Duration::from_secs(u64::from(head[4]) * 86_400)),
        mode: Mode::NEW,
    };
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_614_400);
    let mut parts = rest.split(|&b| b == 0xff);
    let Some(current) = parts.next() else { return };
    let Some((current, false)) = naming.parse(&String::from_utf8_lossy(current)) else {
        return;
    };
    // A directory lists a name once.
    let mut listing: Vec<Listed> = Vec::new();
    let mut seen: HashMap<String, Stat> = HashMap::new();
    for (i, part) in parts.enumerate() {
        let Some((meta, name)) = part.split_first_chunk::<3>() else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let kind = [
            FileKind::File,
            FileKind::Link,
            FileKind::Dir,
            FileKind::Other,
        ][usize::from(meta[0] & 3)];
        let len = if meta[1] & 0x80 != 0 {
            1u64 << (meta[1] & 63)
        } else {
            u64::from(meta[1]) * 100
        };
        let age = i64::from(meta[2] as i8) * 86_400;
        let stat = Stat {
            kind,
            mine: meta[0] & 4 != 0,
            links: [1, 1, 2, 0][usize::from(meta[0] >> 3 & 3)],
            len,
            modified: Some(if age >= 0 {
                now - Duration::from_secs(age.unsigned_abs())
            } else {
                now + Duration::from_secs(age.unsigned_abs())
            }),
            mode: 0o644,
            id: (0, i as u64),
        };
        if let std::collections::hash_map::Entry::Vacant(at) = seen.entry(name.clone()) {
            at.insert(stat);
            listing.push(Listed { name, stat });
        }
    }
    let files = sort(&naming, &current, listing.iter().cloned());
    // Only the sink's own files, each under exactly the name its key gets.
    let own = |p: &Part| {
        assert!(p.stat.is_ours(), "{p:?} taken for the sink's");
        assert_eq!(seen.get(&p.name), Some(&p.stat), "{p:?} not listed");
    };
    for (key, entry) in &files.older {
        assert!(*key < current, "{key:?} is not before {current:?}");
        let plain = naming.name(key);
        if let Some(p) = &entry.plain {
            own(p);
            assert_eq!(p.name, plain);
        }
        for (how, p) in &entry.archives {
            own(p);
            assert_eq!(p.name, format!("{plain}{}", how.extension()));
        }
    }
    for p in &files.leftovers {
        own(p);
        assert!(matches!(classify(&naming, &p.name), Some((_, Kind::Tmp))));
    }
    // Every name of the pattern that is not the sink's is reported.
    for item in &listing {
        let pattern = classify(&naming, &item.name).is_some();
        let reported = files.alone.iter().any(|(n, _)| *n == item.name);
        assert_eq!(pattern && !item.stat.is_ours(), reported, "{item:?}");
    }
    // Step 2, as if every compression worked and every archive held its
    // file.
    let mut older = files.older.clone();
    for (key, action) in compression(&files, settings.compress.is_some()) {
        let entry = older.get_mut(&key).expect("planned for a file not listed");
        let plain = entry.plain.take().expect("nothing to compress");
        assert!(!entry.blocked || action == Action::Verify, "{entry:?}");
        match action {
            Action::Verify => assert!(!entry.archives.is_empty()),
            Action::Compress => {
                assert!(entry.archives.is_empty());
                let stat = Stat {
                    len: plain.stat.len / 2,
                    ..plain.stat
                };
                let name = format!("{}.gz", plain.name);
                entry
                    .archives
                    .push((Compression::Gzip, Part { name, stat }));
            }
        }
    }
    older.retain(|_, e| e.plain.is_some() || !e.archives.is_empty());
    // Step 3: the limits hold over what is left.
    let removed = retention(&settings, &older, now);
    assert!(removed.windows(2).all(|w| w[0].0 < w[1].0));
    for (key, _) in &removed {
        assert!(
            older.remove(key).is_some(),
            "{key:?} removed twice or not listed"
        );
    }
    if let Some(max) = settings.max_files {
        assert!(older.len() < max.max(1), "{} files left", older.len() + 1);
    }
    let bytes = older
        .values()
        .fold(0u64, |n, e| n.saturating_add(e.bytes()));
    if let Some(max) = settings.max_total {
        assert!(bytes <= max, "{bytes} bytes left");
    }
    if let Some(max) = settings.max_age {
        for e in older.values() {
            let m = e.modified().expect("listed with a time");
            assert!(now.duration_since(m).unwrap_or(Duration::ZERO) <= max);
        }
    }
}
