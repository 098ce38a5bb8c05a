//! An explicit-state model checker of the crash-durable ring's promise:
//! after a kill at any instant, the next start writes every record a
//! producer committed exactly once, from the ring or from the file sink's
//! file and mirror.
//!
//! # What it explores
//!
//! Two producers push five records between them into a ring of 8 words
//! (the smallest ring: claims wrap, need padding, find the ring full, and
//! claims of the second lap start on payload words of the first), while
//! the writer takes records, formats each into one byte of a file sink's
//! buffer, commits snapshots, releases ring space and writes bytes to the
//! file. The mirror holds 2 bytes, so commits meet a mirror that wraps
//! and overflows. Every interleaving of the three threads' steps is
//! explored breadth-first (a counterexample is a shortest one), each
//! reachable state once (a set of state hashes).
//!
//! A step is one access to memory the file maps (a load, a store, the
//! claim's compare-and-swap), or one effect on the sink's file (one byte
//! written), followed by the thread's local computation up to its next
//! such access: the same cut loom makes, at the granularity of shared
//! accesses, in program order. Program order is what a kill sees: the
//! stores a killed process made before the kill all reach the mapping,
//! whatever the order the hardware makes them visible in; the code keeps
//! the compiler to that order with release stores and fences. Each step
//! names the code it transcribes (`Ring::try_push_below`,
//! `Ring::consume`, `Writer::commit_durable`, `DurableWriter::commit`,
//! `Ring::release`, `SinkState::write_out`); the snapshot arithmetic is
//! the code's own ([`slot_range`]).
//!
//! Two reductions keep the states few, both exact: a producer that found
//! the ring full retries only once `tail` moved (a retry before fails
//! again), and what no later step reads is not state (what a claim loaded
//! once it claimed, the snapshot half `gen` does not name, how many
//! snapshots were published).
//!
//! # The kill
//!
//! Every reachable state is a kill point: a SIGKILL freezes the file's
//! mapping as it is. The check then runs recovery over it: the real
//! [`scan`] over the ring's region (the production byte layout, built
//! here store by store), from the `taken` of the snapshot `gen` names, and
//! the recovery's mirror completion (the file's bytes
//! past the snapshot's `written`, then the mirror's up to its `appended`).
//! Every committed record must come out exactly once, except those whose
//! bytes a mirror overflow gave up (counted in the file, as in
//! production); nothing else may come out.
//!
//! The record payloads are adversarial on purpose: each payload word reads
//! as a header of the next lap, as user bytes may.
//!
//! Not modelled: more than one file sink, notices, rotation, sinks without
//! a mirror, payload writers that unwind (`VOID`).
//!
//! # Why not loom
//!
//! Loom explores the interleavings of the real code, but a kill is not a
//! thread: freezing memory between two steps of another thread and reading
//! it as bytes (a data race on the words, for loom) has no place in it, and
//! under loom `head`, `tail` and the state bytes are loom's atomics beside
//! the region, not the bytes [`scan`] reads (`region.rs`). Here the
//! producers' and writer's steps are a transcription of the code, and the
//! recovery side is the code itself.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::ring::snapshot::{slot_range, Phase, SlotRange};

use super::region::{self, HEAD_AT, SEEN_TAIL_AT, STATES_AT, TAIL_AT};
use super::{lap_of, record_words, scan, Found, Header, COMMITTED, FREE, PADDING, WORD};

/// Ring size in bytes (8 words).
const RING_BYTES: usize = 64;
const CAP: u64 = 8;
/// The file sink's mirror, in bytes (each record formats to one byte).
const MIRROR: u64 = 2;

/// What the model explores.
#[derive(Clone, Copy, Debug)]
struct Model {
    protocol: Protocol,
    /// Payload words of each producer's records (1 to 3: claims of 2 to
    /// 4 words, so that some need padding and laps do not line up).
    records: [&'static [u64]; 2],
}

/// Which commit the model's writer makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// `DurableWriter::commit`'s.
    Code,
    /// One whose first snapshot, when the mirror wraps, names the new
    /// `taken` and none of the new bytes, and whose copy gives up the
    /// bytes an overflow loses only in the second: the model must find
    /// that a kill between the two loses the batch.
    NewTakenFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum P {
    /// `head.load` at the start of a claim (also the blocking policy's
    /// retry after `Full`).
    LoadHead,
    LoadSeenTail,
    /// `tail > head`: `head.load` again.
    ReloadHead,
    /// `refresh_tail`: `tail.load`, then `seen_tail.store`.
    RefreshLoad,
    RefreshStore(u64),
    Cas,
    /// The padding's state byte.
    Padding,
    /// The header word.
    Header,
    /// The payload words.
    Payload,
    /// The record's state byte: `COMMITTED`.
    Commit,
    /// `Full`: waits for the writer to release space (`wait_for_room`),
    /// then claims from scratch. A retry that finds `tail` where it was
    /// fails again (`head` only grows), so the model only wakes it once
    /// `tail` moved.
    Full(u64),
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Producer {
    pc: P,
    next: usize,
    head: u64,
    tail: u64,
    fresh: bool,
    /// The claim: start of the padding or record, pad words.
    at: u64,
    pad: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum W {
    /// Between batches: write a byte, or start a batch.
    Idle,
    /// In `consume`: the state byte at `read`.
    Consume {
        lap_end: u64,
    },
    /// `DurableWriter::commit`: copy into the mirror (phase 2 only), then
    /// publish a snapshot (`gen`).
    MirrorCopy,
    Publish {
        copy: bool,
    },
    /// `Ring::release`: the state bytes from `pos`, then `tail`.
    Release {
        pos: u64,
    },
    ReleaseTail,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Writer {
    pc: W,
    read: u64,
    /// The sink: its buffer holds the bytes at offsets `written..appended`.
    buf: Vec<u8>,
    written: u64,
    appended: u64,
    /// The crash-durable file's slot: offsets below are in the mirror or
    /// written.
    mirrored: u64,
    /// `written` as last published.
    committed_written: u64,
    /// `taken` as last published (`DurableWriter::taken`).
    last_taken: u64,
    /// The snapshot being published, and the sink offsets it gives up
    /// to a mirror overflow (counted before `gen` is stored).
    snap: Snap,
    lost: (u64, u64),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Snap {
    taken: u64,
    written: u64,
    appended: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    /// The ring's region, in the production layout.
    region: Vec<u8>,
    /// The snapshot `gen` names (the other half is never read before
    /// the next `gen` store rewrites it, and how many were published does
    /// not matter: neither is state).
    in_force: Snap,
    mirror: [u8; MIRROR as usize],
    file: Vec<u8>,
    producers: [Producer; 2],
    writer: Writer,
    /// Records whose commit store happened (bit per id).
    committed: u32,
    /// Records whose bytes a mirror overflow dropped (counted loss).
    overflowed: u32,
}

fn id_of(p: usize, k: usize) -> u8 {
    (p * 4 + k) as u8
}

/// A payload word that reads as the header of a 4-word record of the
/// second lap.
fn payload_word(id: u8, j: u64) -> u64 {
    Header {
        len: 3 * WORD as u32,
        level: id,
        kind: j as u8,
        lap: 1,
    }
    .pack()
}

impl State {
    fn new() -> State {
        let producer = Producer {
            pc: P::LoadHead,
            next: 0,
            head: 0,
            tail: 0,
            fresh: false,
            at: 0,
            pad: 0,
        };
        State {
            region: vec![0; region::size(CAP as usize)],
            in_force: Snap::default(),
            mirror: [0; MIRROR as usize],
            file: Vec::new(),
            producers: [producer.clone(), producer],
            writer: Writer {
                pc: W::Idle,
                read: 0,
                buf: Vec::new(),
                written: 0,
                appended: 0,
                mirrored: 0,
                committed_written: 0,
                last_taken: 0,
                snap: Snap::default(),
                lost: (0, 0),
            },
            committed: 0,
            overflowed: 0,
        }
    }

    fn u64_at(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.region[at..at + 8].try_into().unwrap())
    }
    fn set_u64(&mut self, at: usize, v: u64) {
        self.region[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    fn head(&self) -> u64 {
        self.u64_at(HEAD_AT)
    }
    fn seen_tail(&self) -> u64 {
        self.u64_at(SEEN_TAIL_AT)
    }
    fn tail(&self) -> u64 {
        self.u64_at(TAIL_AT)
    }
    fn state(&self, pos: u64) -> u8 {
        self.region[STATES_AT + (pos % CAP) as usize]
    }
    fn set_state(&mut self, pos: u64, s: u8) {
        self.region[STATES_AT + (pos % CAP) as usize] = s;
    }
    fn word(&self, index: u64) -> u64 {
        self.u64_at(region::words_at(CAP as usize) + index as usize * WORD)
    }
    fn set_word(&mut self, index: u64, v: u64) {
        self.set_u64(region::words_at(CAP as usize) + index as usize * WORD, v);
    }

    fn hash64(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

/// The producer's computation between two shared accesses: the body of
/// `try_push_below`'s claim loop from its top.
fn decide(p: &mut Producer, len_words: u64) {
    let need = record_words(len_words as usize * WORD);
    if p.tail > p.head {
        p.pc = P::ReloadHead;
        return;
    }
    let offset = p.head % CAP;
    let to_end = CAP - offset;
    let pad = if need <= to_end { 0 } else { to_end };
    let new_head = p.head + pad + need;
    if new_head - p.tail > CAP {
        if !p.fresh {
            p.pc = P::RefreshLoad;
        } else {
            p.pc = P::Full(p.tail);
        }
        return;
    }
    p.pad = pad;
    p.pc = P::Cas;
}

/// The successors of `s`: (label, state).
fn successors(s: &State, m: Model) -> Vec<(String, State)> {
    let mut out = Vec::new();
    for i in 0..2 {
        if let Some(step) = producer_step(s, i, m) {
            out.push(step);
        }
    }
    out.extend(writer_steps(s, m));
    out
}

fn producer_step(s: &State, i: usize, m: Model) -> Option<(String, State)> {
    let p = &s.producers[i];
    match p.pc {
        P::Done => return None,
        P::Full(t) if s.tail() == t => return None,
        _ => {}
    }
    let id = id_of(i, p.next);
    let len_words = m.records[i][p.next];
    let need = record_words(len_words as usize * WORD);
    let mut n = s.clone();
    let label;
    {
        let head_now = s.head();
        let seen = s.seen_tail();
        let tail_now = s.tail();
        let q = &mut n.producers[i];
        match q.pc {
            P::LoadHead => {
                q.head = head_now;
                q.pc = P::LoadSeenTail;
                label = format!("p{i} #{id}: head.load = {head_now}");
            }
            P::LoadSeenTail => {
                q.tail = seen;
                q.fresh = false;
                decide(q, len_words);
                label = format!("p{i} #{id}: seen_tail.load = {seen}");
            }
            P::ReloadHead => {
                q.head = head_now;
                decide(q, len_words);
                label = format!("p{i} #{id}: head.load = {head_now}");
            }
            P::RefreshLoad => {
                q.pc = P::RefreshStore(tail_now);
                label = format!("p{i} #{id}: tail.load = {tail_now}");
            }
            P::RefreshStore(t) => {
                q.tail = t;
                q.fresh = true;
                decide(q, len_words);
                n.set_u64(SEEN_TAIL_AT, t);
                label = format!("p{i} #{id}: seen_tail.store({t})");
            }
            P::Cas => {
                if head_now == q.head {
                    let new_head = q.head + q.pad + need;
                    q.at = q.head;
                    // What the claim loaded is dead from here on.
                    (q.head, q.tail, q.fresh) = (0, 0, false);
                    q.pc = if q.pad > 0 { P::Padding } else { P::Header };
                    let (at, pad) = (q.at, q.pad);
                    n.set_u64(HEAD_AT, new_head);
                    label = format!(
                        "p{i} #{id}: claims [{}, {new_head}){}",
                        at + pad,
                        if pad > 0 {
                            format!(" after {pad} words of padding")
                        } else {
                            String::new()
                        }
                    );
                } else {
                    q.head = head_now;
                    decide(q, len_words);
                    label = format!("p{i} #{id}: CAS fails, head = {head_now}");
                }
            }
            P::Padding => {
                q.pc = P::Header;
                let at = q.at;
                n.set_state(at, PADDING);
                label = format!("p{i} #{id}: state[{}] = PADDING", at % CAP);
            }
            P::Header => {
                q.pc = P::Payload;
                let start = q.at + q.pad;
                let header = Header {
                    len: (len_words as usize * WORD) as u32,
                    level: id,
                    kind: 0,
                    lap: lap_of(start, CAP),
                };
                n.set_word(start % CAP, header.pack());
                label = format!("p{i} #{id}: header at word {}", start % CAP);
            }
            P::Payload => {
                q.pc = P::Commit;
                let start = q.at + q.pad;
                for j in 0..len_words {
                    n.set_word(start % CAP + 1 + j, payload_word(id, j));
                }
                label = format!("p{i} #{id}: payload");
            }
            P::Commit => {
                let start = q.at + q.pad;
                q.next += 1;
                q.pc = if q.next == m.records[i].len() {
                    P::Done
                } else {
                    P::LoadHead
                };
                (q.at, q.pad) = (0, 0);
                n.set_state(start, COMMITTED);
                n.committed |= 1 << id;
                label = format!("p{i} #{id}: state[{}] = COMMITTED at {start}", start % CAP);
            }
            P::Full(_) => {
                (q.head, q.tail, q.fresh) = (0, 0, false);
                q.pc = P::LoadHead;
                label = format!("p{i} #{id}: woken, space was released");
            }
            P::Done => unreachable!(),
        }
    }
    Some((label, n))
}

fn writer_steps(s: &State, m: Model) -> Vec<(String, State)> {
    let w = &s.writer;
    let mut out = Vec::new();
    match w.pc {
        W::Idle => {
            // `write_out`: the file takes bytes (one at a time: every
            // short write).
            if !w.buf.is_empty() {
                let mut n = s.clone();
                let b = n.writer.buf.remove(0);
                n.writer.written += 1;
                n.file.push(b);
                out.push((format!("w: writes #{b} to the file"), n));
            }
            // A batch: `consume` reads `tail` (its own) for the lap end.
            // (Not while nothing is claimed: it would find the state byte
            // at `head` FREE and return.)
            if w.read < s.head() {
                let mut n = s.clone();
                n.writer.pc = W::Consume {
                    lap_end: s.tail() + CAP,
                };
                out.push(("w: consume".into(), n));
            }
        }
        W::Consume { lap_end } => {
            // The batch may end here (its byte budget), or at a FREE state.
            let mut end = s.clone();
            end.writer.pc = W::Idle;
            commit(&mut end, m);
            out.push((format!("w: batch ends at {}", w.read), end));
            if w.read < lap_end {
                let pos = w.read;
                let index = pos % CAP;
                match s.state(pos) {
                    FREE => {}
                    PADDING => {
                        let mut n = s.clone();
                        n.writer.read = pos + (CAP - index);
                        out.push((format!("w: skips padding at {pos}"), n));
                    }
                    COMMITTED => {
                        let header = Header::unpack(s.word(index));
                        let id = (s.word(index + 1) >> 32) as u8;
                        let mut n = s.clone();
                        n.writer.read = pos + record_words(header.len as usize);
                        n.writer.buf.push(id);
                        n.writer.appended += 1;
                        out.push((format!("w: takes #{id} at {pos}"), n));
                    }
                    other => panic!("state {other}"),
                }
            }
        }
        W::MirrorCopy => {
            // `publish` with `copy`: the mirror gets the new bytes (and
            // the oldest are given up if the mirror cannot hold them all).
            // One step: a kill midway leaves a part of them, which can
            // only overwrite less of what the snapshot in force needs.
            let mut n = s.clone();
            let nw = &n.writer;
            let p = match m.protocol {
                Protocol::NewTakenFirst => {
                    let from = nw.mirrored.max(nw.written);
                    let written = nw.written.max(nw.appended.saturating_sub(MIRROR));
                    SlotRange {
                        written,
                        appended: nw.appended,
                        lost: written - nw.written,
                        from: from.max(written),
                    }
                }
                Protocol::Code => slot_range(
                    nw.committed_written,
                    nw.mirrored,
                    nw.written,
                    nw.appended,
                    MIRROR,
                    Phase::Copy,
                ),
            };
            n.give_up(p.written - p.lost, p.written);
            let nw = &mut n.writer;
            for off in p.from..p.appended {
                n.mirror[(off % MIRROR) as usize] = nw.buf[(off - nw.written) as usize];
            }
            nw.mirrored = p.appended;
            nw.snap.written = p.written;
            nw.snap.appended = p.appended;
            nw.pc = W::Publish { copy: true };
            out.push((format!("w: mirror gets [{}, {})", p.from, p.appended), n));
        }
        W::Publish { copy } => {
            // The half not in use, then `gen`.
            let mut n = s.clone();
            let snap = n.writer.snap;
            let (from, to) = std::mem::take(&mut n.writer.lost);
            n.give_up(from, to);
            n.in_force = snap;
            n.writer.committed_written = snap.written;
            n.writer.last_taken = snap.taken;
            n.writer.snap = Snap::default();
            let label = format!(
                "w: publishes taken {} written {} appended {}",
                snap.taken, snap.written, snap.appended
            );
            if copy {
                n.writer.pc = W::Release { pos: n.tail() };
            } else {
                // Phase 2 of a commit whose mirror wraps.
                let taken = n.writer.read;
                n.writer.snap.taken = taken;
                n.writer.pc = W::MirrorCopy;
            }
            out.push((label, n));
        }
        W::Release { pos } => {
            let mut n = s.clone();
            if pos < w.read {
                n.set_state(pos, FREE);
                n.writer.pc = W::Release { pos: pos + 1 };
                out.push((format!("w: state[{}] = FREE", pos % CAP), n));
            } else {
                n.writer.pc = W::ReleaseTail;
                return writer_steps(&n, m);
            }
        }
        W::ReleaseTail => {
            let mut n = s.clone();
            let read = n.writer.read;
            n.set_u64(TAIL_AT, read);
            n.writer.pc = W::Idle;
            out.push((format!("w: tail.store({read})"), n));
        }
    }
    out
}

/// `Writer::commit_durable` after a batch: nothing if nothing was taken;
/// otherwise `DurableWriter::commit`, whose first step this sets up.
fn commit(n: &mut State, m: Model) {
    let taken = n.writer.read;
    if taken == n.tail() {
        return;
    }
    let w = &n.writer;
    let wraps = w.appended > w.committed_written + MIRROR;
    if wraps {
        // Phase 1: no new bytes in the mirror.
        let (taken, p) = match m.protocol {
            Protocol::NewTakenFirst => {
                let written = w.written;
                let p = SlotRange {
                    written,
                    appended: w.mirrored.max(written),
                    lost: 0,
                    from: 0,
                };
                (taken, p)
            }
            Protocol::Code => {
                let p = slot_range(
                    w.committed_written,
                    w.mirrored,
                    w.written,
                    w.appended,
                    MIRROR,
                    Phase::Clear,
                );
                (w.last_taken, p)
            }
        };
        n.writer.lost = (p.written - p.lost, p.written);
        n.writer.snap = Snap {
            taken,
            written: p.written,
            appended: p.appended,
        };
        n.writer.pc = W::Publish { copy: false };
    } else {
        n.writer.snap.taken = taken;
        n.writer.pc = W::MirrorCopy;
    }
}

impl State {
    /// Counts the bytes at sink offsets `from..to`, which a snapshot
    /// gives up to a mirror overflow: their records are a counted loss.
    fn give_up(&mut self, from: u64, to: u64) {
        let w = &self.writer;
        for off in from..to {
            self.overflowed |= 1 << w.buf[(off - w.written) as usize];
        }
    }
}

/// What the next start writes if the process dies in state `s`: the ids
/// in the file after the mirror completion, then those of the ring.
fn recover(s: &State) -> Result<Vec<u8>, String> {
    let snap = s.in_force;
    let mut file = s.file.clone();
    if snap.appended > snap.written {
        let bytes = snap.appended - snap.written;
        if bytes > MIRROR {
            // Recovery refuses such a snapshot: the mirror cannot hold it.
            return Err(format!(
                "the snapshot names {bytes} bytes of a mirror of {MIRROR}"
            ));
        }
        let done = (file.len() as u64).saturating_sub(snap.written).min(bytes);
        for off in snap.written + done..snap.appended {
            file.push(s.mirror[(off % MIRROR) as usize]);
        }
    }
    let mut ids = file;
    scan(&s.region, RING_BYTES, snap.taken, |found| {
        if let Found::Record { payload, .. } = found {
            ids.push(payload[4]);
        }
    })?;
    Ok(ids)
}

/// Whether recovery after a kill in `s` writes every committed record
/// once (but those an overflow gave up, at most once) and nothing else.
fn check(s: &State) -> Result<(), String> {
    let ids = recover(s)?;
    // Ids are `producer * 4 + record`.
    let mut count = [0u32; 8];
    for &id in &ids {
        *count
            .get_mut(id as usize)
            .ok_or("a record id out of range")? += 1;
    }
    for (id, &n) in count.iter().enumerate() {
        let committed = s.committed & (1 << id) != 0;
        let excused = s.overflowed & (1 << id) != 0;
        match n {
            0 if committed && !excused => {
                return Err(format!(
                    "#{id} was committed and is lost (recovered {ids:?})"
                ))
            }
            0 => {}
            1 if committed => {}
            1 => return Err(format!("#{id} was never committed but is written")),
            _ => return Err(format!("#{id} is written {n} times")),
        }
    }
    Ok(())
}

/// A breadth-first search of every reachable state (so that a
/// counterexample is a shortest one), each checked as a kill point.
struct Search {
    /// Reachable states: hash -> parent's hash.
    seen: HashMap<u64, u64>,
    /// States with no step left: every record committed and released, or
    /// a deadlock.
    ends: Vec<State>,
    failure: Option<(String, Vec<String>)>,
}

fn explore(m: Model) -> Search {
    let start = State::new();
    let mut search = Search {
        seen: HashMap::new(),
        ends: Vec::new(),
        failure: None,
    };
    search.seen.insert(start.hash64(), 0);
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(s) = queue.pop_front() {
        let h = s.hash64();
        if let Err(why) = check(&s) {
            search.failure = Some((why, search.trace(h, m)));
            return search;
        }
        let next = successors(&s, m);
        if next.iter().all(|(_, n)| n.hash64() == h) {
            search.ends.push(s.clone());
        }
        for (_, n) in next {
            let nh = n.hash64();
            if let std::collections::hash_map::Entry::Vacant(e) = search.seen.entry(nh) {
                e.insert(h);
                queue.push_back(n);
            }
        }
    }
    search
}

impl Search {
    /// The steps from the start to the state hashed `to`.
    fn trace(&self, to: u64, m: Model) -> Vec<String> {
        let start = State::new();
        let mut hashes = vec![to];
        while let Some(&parent) = self.seen.get(hashes.last().unwrap()) {
            if parent == 0 {
                break;
            }
            hashes.push(parent);
        }
        hashes.pop();
        let mut state = start;
        let mut steps = Vec::new();
        for h in hashes.into_iter().rev() {
            let (label, next) = successors(&state, m)
                .into_iter()
                .find(|(_, n)| n.hash64() == h)
                .expect("a step of the search");
            steps.push(label);
            state = next;
        }
        steps
    }
}

/// The records of each producer in the run every test run explores: five
/// records, whose sizes put claims of the second lap on the payload words
/// of the first (about 240 000 states; 10 s unoptimized).
const RUN: [&[u64]; 2] = [&[3, 1], &[1, 3, 1]];

fn assert_recovered_once(records: [&'static [u64]; 2]) {
    let search = explore(Model {
        protocol: Protocol::Code,
        records,
    });
    if let Some((why, path)) = &search.failure {
        panic!("{records:?}: {why}, killed after:\n  {}", path.join("\n  "));
    }
    // Every run ends with every record committed, taken and released: the
    // model has no deadlock that would hide states.
    let all = records
        .iter()
        .enumerate()
        .flat_map(|(p, r)| (0..r.len()).map(move |k| 1 << id_of(p, k)))
        .fold(0, |a, b| a | b);
    assert!(!search.ends.is_empty());
    for end in &search.ends {
        assert_eq!(end.committed, all, "a deadlock");
        assert_eq!(end.tail(), end.head(), "a deadlock");
    }
    eprintln!(
        "{records:?}: {} states, each a kill point; {} final",
        search.seen.len(),
        search.ends.len()
    );
}

#[test]
fn every_committed_record_is_recovered_once_after_a_kill_at_any_step() {
    assert_recovered_once(RUN);
}

/// Other sizes, and three records per producer: about 4 million states,
/// half a minute in release.
#[test]
#[ignore = "long: cargo test -p nowait-core --release --lib durable_model -- --ignored"]
fn every_committed_record_is_recovered_once_after_a_kill_at_any_step_of_longer_runs() {
    assert_recovered_once([&[2, 1], &[3, 1, 1]]);
    assert_recovered_once([&[1, 2, 1], &[2, 1, 2]]);
}

/// A commit whose first snapshot, when the mirror wraps, names the new
/// `taken` with none of the new bytes: a kill before the second loses
/// every record the batch took, and the model finds it.
#[test]
fn the_model_finds_the_batch_a_commit_naming_the_new_taken_first_loses() {
    let search = explore(Model {
        protocol: Protocol::NewTakenFirst,
        records: RUN,
    });
    let (why, path) = search.failure.expect("a counterexample");
    eprintln!("{why}, killed after:\n  {}", path.join("\n  "));
    assert!(why.contains("is lost"), "{why}");
    assert!(path.last().unwrap().starts_with("w: publishes"), "{path:?}");
}
