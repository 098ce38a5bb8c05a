//! The portable half of [`nofollow`](super::nofollow): what a name in a
//! directory others may write is, as listed. Each system's `nofollow.rs`
//! fills it from the name itself, never from what a link names.

use std::time::SystemTime;

use super::FileId;

/// What a name is, as listed (a symbolic link is a link, not its target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A symbolic link (on Windows, any reparse point).
    Link,
    /// A directory.
    Dir,
    /// A FIFO, socket or device (none on Windows, where such names are
    /// not listed as files).
    #[cfg_attr(windows, allow(dead_code))]
    Other,
}

/// A name's file, as the system lists it.
///
/// Invariant: `mine` compares the owner with the process's *effective*
/// user (Unix `st_uid == geteuid()`; Windows: the owner SID is the token's
/// user or the owner it gives new files), read from the name itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) kind: Kind,
    /// Owned by the process's effective user.
    pub(crate) mine: bool,
    /// Names (hard links) the file has.
    pub(crate) links: u64,
    /// Bytes, as the file states them (a sparse file's whole length).
    pub(crate) len: u64,
    /// Last modification, where the system tells it.
    pub(crate) modified: Option<SystemTime>,
    /// Unix permission bits (`0o7777` at most); 0 on Windows.
    pub(crate) mode: u32,
    /// What names the file whatever its path.
    pub(crate) id: FileId,
}

impl Stat {
    /// Whether the file may be taken for one a sink made: a regular file
    /// of the process's effective user with no other name. Anything else
    /// under a sink's name is someone else's (or a link to someone
    /// else's), never written, compressed, counted or removed.
    pub(crate) fn is_ours(&self) -> bool {
        self.kind == Kind::File && self.mine && self.links == 1
    }

    /// Why [`is_ours`](Stat::is_ours) says no, in words (`None` if it
    /// says yes).
    pub(crate) fn not_ours(&self) -> Option<String> {
        Some(match self.kind {
            Kind::Link => "a symbolic link".into(),
            Kind::Dir => "a directory".into(),
            Kind::Other => "not a regular file".into(),
            Kind::File if !self.mine => "a file of another user".into(),
            Kind::File if self.links != 1 => {
                format!("a file with {} names (hard links)", self.links)
            }
            Kind::File => return None,
        })
    }
}
