//! The records a sink's backtrace keeps (see [`BacktraceBuffer`]), as the writer
//! thread holds them: raw records in a circle of bytes.
//!
//! Each record is stored as `level:u8 kind:u8 len:u32 payload`, oldest
//! first, in one `VecDeque<u8>` reserved once to the byte bound (so it never
//! grows past it); `count` is the number of records in it. Invariants:
//! `bytes.len() <= max_bytes`, `count <= max_records`, and the bytes parse
//! as exactly `count` records.

use std::collections::VecDeque;

use crate::level::Level;
use crate::record::Record;
use crate::sink::backtrace::{BacktraceBuffer, RECORD_OVERHEAD};

/// A sink's kept records.
#[derive(Debug)]
pub(super) struct Kept {
    pub(super) config: BacktraceBuffer,
    bytes: VecDeque<u8>,
    count: u64,
    /// Records not kept since the last release: forgotten to make room,
    /// or larger than the whole bound.
    pub(super) not_kept: u64,
}

impl Kept {
    pub(super) fn new(config: BacktraceBuffer) -> Kept {
        Kept {
            config,
            bytes: VecDeque::new(),
            count: 0,
            not_kept: 0,
        }
    }

    /// Records kept now.
    pub(super) fn len(&self) -> u64 {
        self.count
    }

    /// Keeps a record, forgetting the oldest ones past a bound. Returns
    /// how many records are no longer kept (forgotten, or this one if it
    /// is larger than the whole bound): they are filtered.
    pub(super) fn keep(&mut self, record: &Record<'_>) -> u64 {
        let payload = record.payload();
        let need = RECORD_OVERHEAD + payload.len();
        if need > self.config.bytes || payload.len() > u32::MAX as usize {
            self.not_kept += 1;
            return 1;
        }
        if self.bytes.capacity() < self.config.bytes {
            self.bytes
                .reserve_exact(self.config.bytes - self.bytes.len());
        }
        let mut gone = 0;
        while self.count > 0
            && (self.bytes.len() + need > self.config.bytes
                || self.count >= self.config.records as u64)
        {
            let len = self.front_len();
            self.bytes.drain(..RECORD_OVERHEAD + len);
            self.count -= 1;
            gone += 1;
        }
        self.bytes.push_back(record.level() as u8);
        self.bytes.push_back(record.kind());
        self.bytes
            .extend((payload.len() as u32).to_le_bytes().iter());
        self.bytes.extend(payload.iter());
        self.count += 1;
        self.not_kept += gone;
        gone
    }

    /// Payload length of the oldest record.
    fn front_len(&self) -> usize {
        let b = |i| self.bytes[i];
        u32::from_le_bytes([b(2), b(3), b(4), b(5)]) as usize
    }

    /// Hands every kept record to `each`, oldest first, and forgets them.
    pub(super) fn release(&mut self, mut each: impl FnMut(&Record<'_>)) {
        let mut rest: &[u8] = self.bytes.make_contiguous();
        while let [level, kind, l0, l1, l2, l3, tail @ ..] = rest {
            let len = u32::from_le_bytes([*l0, *l1, *l2, *l3]) as usize;
            let (payload, next) = tail.split_at(len);
            let level = Level::from_u8(*level).unwrap_or(Level::Error);
            each(&Record::new(level, *kind, payload));
            rest = next;
        }
        self.bytes.clear();
        self.count = 0;
        self.not_kept = 0;
    }

    /// Hands every kept record to `each`, oldest first, and keeps them
    /// (a dump on request: the next trigger still releases them).
    pub(super) fn each(&mut self, mut each: impl FnMut(&Record<'_>)) {
        let mut rest: &[u8] = self.bytes.make_contiguous();
        while let [level, kind, l0, l1, l2, l3, tail @ ..] = rest {
            let len = u32::from_le_bytes([*l0, *l1, *l2, *l3]) as usize;
            let (payload, next) = tail.split_at(len);
            let level = Level::from_u8(*level).unwrap_or(Level::Error);
            each(&Record::new(level, *kind, payload));
            rest = next;
        }
    }

    /// Forgets every kept record (shutdown); returns how many.
    pub(super) fn discard(&mut self) -> u64 {
        let n = self.count;
        self.bytes.clear();
        self.count = 0;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(kept: &mut Kept) -> Vec<(Level, String)> {
        let mut out = Vec::new();
        kept.release(|r| {
            out.push((
                r.level(),
                String::from_utf8(r.payload().to_vec()).expect("utf-8"),
            ))
        });
        out
    }

    #[test]
    fn keeps_the_last_n_in_order() {
        let mut k = Kept::new(BacktraceBuffer::records(3));
        for (i, level) in [Level::Debug, Level::Trace, Level::Debug, Level::Info]
            .into_iter()
            .enumerate()
        {
            let text = format!("r{i}");
            let gone = k.keep(&Record::new(level, 0, text.as_bytes()));
            assert_eq!(gone, u64::from(i == 3));
        }
        assert_eq!((k.len(), k.not_kept), (3, 1));
        assert_eq!(
            texts(&mut k),
            [
                (Level::Trace, "r1".into()),
                (Level::Debug, "r2".into()),
                (Level::Info, "r3".into())
            ]
        );
        assert_eq!((k.len(), k.not_kept), (0, 0));
    }

    /// The byte bound holds exactly and the circle never grows past it,
    /// whatever the payload sizes (wrapping included).
    #[test]
    fn the_byte_bound_holds_and_memory_never_grows() {
        let mut k = Kept::new(BacktraceBuffer::bytes(1024));
        let mut rng = nowait_testkit::Rng::new(7);
        let mut expect: VecDeque<Vec<u8>> = VecDeque::new();
        for i in 0..5000u32 {
            let len = rng.below(300) as usize;
            let payload: Vec<u8> = (0..len).map(|j| (i as usize + j) as u8).collect();
            k.keep(&Record::new(Level::Debug, 1, &payload));
            expect.push_back(payload);
            while expect
                .iter()
                .map(|p| p.len() + RECORD_OVERHEAD)
                .sum::<usize>()
                > 1024
            {
                expect.pop_front();
            }
            assert!(k.bytes.len() <= 1024);
            assert_eq!(k.bytes.capacity(), 1024);
            assert_eq!(k.len(), expect.len() as u64);
            if i % 97 == 0 {
                let mut got = Vec::new();
                k.release(|r| got.push(r.payload().to_vec()));
                assert_eq!(got, Vec::from(std::mem::take(&mut expect)));
            }
        }
    }

    #[test]
    fn a_record_larger_than_the_bound_is_not_kept() {
        let mut k = Kept::new(BacktraceBuffer::bytes(1024));
        k.keep(&Record::new(Level::Debug, 0, b"small"));
        assert_eq!(k.keep(&Record::new(Level::Debug, 0, &[b'x'; 1019])), 1);
        assert_eq!((k.len(), k.not_kept), (1, 1));
        assert_eq!(k.keep(&Record::new(Level::Debug, 0, &[b'x'; 1018])), 1);
        assert_eq!((k.len(), k.not_kept), (1, 2));
        assert_eq!(k.discard(), 1);
    }
}
