//! What a format renders once per call site and appends to each event.
//!
//! [`KnownSites`] finds a call site's rendering by the site's key, trying
//! the last one found first (events of one call site tend to come in
//! runs). Renderings are only ever added: an index that `find` or `add`
//! returns stays valid in `texts` for the life of the format. [`Piece`]
//! keeps a short rendering (up to 32 bytes) in a fixed array, so appending
//! it is one fixed-size copy cut to length; a longer one is kept as is.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::event::KeyHasher;

/// What a format renders once per call site (`T`), found by the call
/// site's key; the last one found is tried first (events of one call site
/// tend to come in runs).
#[derive(Debug)]
pub(crate) struct KnownSites<T> {
    /// The key and index of the last site found.
    last: Option<(u64, usize)>,
    index: HashMap<u64, usize, BuildHasherDefault<KeyHasher>>,
    pub(crate) texts: Vec<T>,
}

impl<T> Default for KnownSites<T> {
    fn default() -> Self {
        KnownSites {
            last: None,
            index: HashMap::default(),
            texts: Vec::new(),
        }
    }
}

impl<T> KnownSites<T> {
    /// The index in `texts` of call site `key`'s, if rendered.
    #[inline]
    pub(crate) fn find(&mut self, key: u64) -> Option<usize> {
        match self.last {
            Some((last, i)) if last == key => Some(i),
            _ => {
                let i = *self.index.get(&key)?;
                self.last = Some((key, i));
                Some(i)
            }
        }
    }

    /// Keeps `text` for call site `key`; its index.
    #[cold]
    pub(crate) fn add(&mut self, key: u64, text: T) -> usize {
        self.texts.push(text);
        let i = self.texts.len() - 1;
        self.index.insert(key, i);
        self.last = Some((key, i));
        i
    }
}

/// A short piece of text kept in a fixed array, so that appending it is
/// one fixed-size copy (cut to length after) rather than a call to
/// `memcpy`; longer text is kept as it is.
#[derive(Clone, Debug)]
pub(crate) enum Piece {
    Short([u8; 32], usize),
    Long(Vec<u8>),
}

impl Piece {
    pub(crate) fn new(bytes: &[u8]) -> Piece {
        let mut short = [0; 32];
        match short.get_mut(..bytes.len()) {
            Some(head) => {
                head.copy_from_slice(bytes);
                Piece::Short(short, bytes.len())
            }
            None => Piece::Long(bytes.to_vec()),
        }
    }

    #[inline]
    pub(crate) fn append_to(&self, out: &mut Vec<u8>) {
        match self {
            Piece::Short(bytes, len) => {
                let at = out.len();
                out.extend_from_slice(bytes);
                out.truncate(at + len);
            }
            Piece::Long(bytes) => out.extend_from_slice(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_append_their_bytes() {
        for len in [0, 1, 16, 31, 32, 33, 100] {
            let text: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let mut out = b"x".to_vec();
            Piece::new(&text).append_to(&mut out);
            assert_eq!(out[1..], text[..]);
        }
    }
}
