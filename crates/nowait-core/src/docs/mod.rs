//! Design notes (documentation only, no code).

pub mod design {
    //! # How the ring works and why it looks like this
    //!
    //! ## One shared MPSC ring, not one ring per thread
    //!
    //! Per-thread SPSC rings (quill, ticklog) avoid the one contended
    //! compare-and-swap, but need a registry of rings that grows with the
    //! number of threads, recycling when threads exit, and a merge by
    //! timestamp on the writer to keep output in order. Servers on tokio
    //! spawn hundreds of short-lived blocking-pool threads; with per-thread
    //! rings memory is `threads × ring size` unless a cap and a fallback path
    //! are added. One shared ring keeps memory fixed at
    //! [`Builder::capacity`](crate::Builder::capacity) (plus 1/8 for state
    //! bytes), keeps output in claim order for free, and on a 2-core machine
    //! the claim CAS is rarely contended. It is the shape of Aeron's
    //! `ManyToOneRingBuffer` and the LMAX disruptor's multi-producer
    //! sequencer.
    //!
    //! ## Claim, write, commit, consume, release
    //!
    //! Positions count 8-byte words and never wrap (`u64`). A record is one
    //! header word (payload length, level, kind) and its payload, padded to
    //! a word. A producer reads `tail`, computes the claim, and moves `head`
    //! with one CAS. A record never straddles the end of the buffer: when it
    //! does not fit before the end, the producer claims the rest of the lap
    //! as padding too. It then copies its bytes and stores `COMMITTED` in
    //! the state byte of its first word (`Release`). The consumer walks from
    //! `tail`, `Acquire`-loads state bytes, lends each committed record to
    //! the formatter, resets the state bytes, and publishes the new `tail`
    //! (`Release`). The largest record is half the ring, so any record fits
    //! once the ring drains, wherever the lap ends.
    //!
    //! A producer preempted between claim and commit holds back the consumer
    //! (not other producers) until it resumes; the records after it wait.
    //!
    //! ## Waking the writer without a system call per record
    //!
    //! The writer polls on a short timer while records flow. Before it
    //! sleeps without a timer it stores `writer_sleeping = true` (`SeqCst`)
    //! and then re-reads `head` (`SeqCst`); a producer `SeqCst`-claims and
    //! then loads the flag (`SeqCst`). In the single total order of `SeqCst`
    //! operations, either the writer's re-read sees the claim (it does not
    //! sleep) or the producer's load sees the flag (it wakes the writer).
    //! On x86 the claim is a `lock cmpxchg` anyway and a `SeqCst` load is a
    //! plain load, so the handshake costs the hot path nothing. Loom cannot
    //! check this store-buffering argument: it models `SeqCst` loads and
    //! stores as acquire/release (see its documented limitations) and so
    //! reports a false alarm; only `SeqCst` fences are modelled, and a fence
    //! would cost the hot path an `mfence`. The writer also wakes at least
    //! once a second, which bounds the delay if a wake were ever missed.
    //!
    //! ## Checked by
    //!
    //! Loom models of two producers and the consumer (including wrap-around
    //! padding and a full ring being released while producers race), unit
    //! tests run under Miri, and a counting-allocator test showing zero
    //! allocations per record on the producer thread.
}
