//! Documentation only, no code: what nowait guarantees, where each
//! platform stands, how each sink meets a slow or hostile receiver, and how
//! the ring works.

#[doc = include_str!("guarantees.md")]
pub mod guarantees {}

#[doc = include_str!("platforms.md")]
pub mod platforms {}

#[doc = include_str!("shipping.md")]
pub mod shipping {}

pub mod design {
    //! # How the ring works and why it looks like this
    //!
    //! ## Lanes in front of one shared ring
    //!
    //! Lanes are opt-in ([`Builder::lanes`](crate::builder::Builder::lanes), default
    //! 0; see the measurements below for why). With `lanes(n)`, each of the
    //! first `n` threads that log takes a lane: a small ring of the same
    //! algorithm, allocated and pre-faulted at build (1/16 of the capacity,
    //! 256 bytes to 64 KiB), that only it pushes into. A claim in a lane is
    //! a compare-and-swap on a line no other producer writes; the shared
    //! ring stays for the threads without a lane, for records larger than
    //! half a lane, and as every lane's reserve when it is full.
    //!
    //! - **Memory** is `capacity + lanes × lane_capacity` (plus 1/8 for
    //!   state bytes), fixed at build whatever the number of threads: a
    //!   thread gives its lane back when it exits (a thread-local's
    //!   destructor), and a thread that finds none claims in the shared
    //!   ring, looking again every 1,024 records.
    //! - **Order.** Each lane and the ring are in their producers' order.
    //!   The writer merges them by timestamp (a k-way merge: the oldest
    //!   record at the front of any input goes first), holding back
    //!   records stamped within the last 100 µs (the grace period) so that
    //!   a record another thread stamped earlier but committed a little
    //!   later still goes before them. A record committed more than the
    //!   grace period after it was stamped (its thread was preempted in
    //!   between) can follow later records of other threads; a flush, a
    //!   shutdown and the crash drain take everything committed without
    //!   waiting. A thread's own order holds in every case, by two rules
    //!   checked by loom models (`a_lane_spilling_into_the_ring_keeps_its_producers_order`,
    //!   each shown to fail without its rule): a thread whose record went
    //!   to the ring keeps pushing into the ring until the writer has taken
    //!   the ring past that record; and the writer looks at the ring before
    //!   the lanes, so that having seen a thread's ring record it sees the
    //!   lane records the thread committed before it. Records without a
    //!   time of their own (text lines, custom kinds) get one in front
    //!   while lanes are on, stripped before any format sees it
    //!   ([`Logger::max_record_len`](crate::logger::Logger::max_record_len) is 8
    //!   bytes less).
    //! - **Accounting** is the ring's, per queue: closing closes every lane
    //!   (the `CLOSED` bit in its `head`) before the ring, so a record is
    //!   accepted exactly when a lane or the ring took it; shutdown drains
    //!   and counts the lanes with the ring; a `fork()` child forgets the
    //!   parent's lane records and frees every slot but its own thread's.
    //! - **Flush** targets are ring positions, which say nothing about the
    //!   lanes: when the writer sees a new flush request it notes every
    //!   lane's claim position, and answers the request only once it has
    //!   taken the lanes up to there and the ring up to the target.
    //! - **Policies.** A full lane is not a full logger: the record goes to
    //!   the shared ring, where the full policy and the protected levels
    //!   apply as before (each lane also keeps its own headroom above the
    //!   high-water mark for WARN and above). So one thread can still burst
    //!   up to the whole ring, as before lanes.
    //! - **Crash-durable** loggers have no lanes: their records must be in
    //!   the file's ring from the moment they are accepted.
    //!
    //! ## On many cores
    //!
    //! Without lanes every push does one CAS on the ring's `head`, a single
    //! cache line for all producers. The repository's `claim_line` benchmark
    //! measures that line alone (on two virtual CPUs): one thread claiming
    //! back to back takes 7.7 ns per claim (130M claims/s); two threads
    //! claiming back to back, so that the line changes core on every claim,
    //! take 64–73 ns per claim each and 27–31M claims/s in total. That
    //! total is a cap whatever the number of producers; across sockets a
    //! transfer costs more. At 64 cores × 100k requests/s × 2 records
    //! (12.8M claims/s, one every 78 ns) claims would queue on that line.
    //! With lanes a claim touches only its own thread's lines and the
    //! cap is gone: 64 threads with 64 lanes claim in parallel, and the
    //! shared line is touched only by threads past the lane count and by
    //! overflow.
    //!
    //! What does not scale with cores is the one writer: it formats every
    //! record (about 95–250 ns each), so at 4–10M records/s it is the bound
    //! with or without lanes, and the merge adds a comparison per active
    //! input per record (64 active lanes: 64 compares per record, a
    //! tournament tree would make it 6; not needed at 16). A thread that
    //! logs more than its lane holds between two wake-ups of the writer
    //! uses the shared ring for the rest, so under a burst from many
    //! threads the shared line comes back, never worse than without lanes.
    //!
    //! Measured (the `lanes-ab` benchmark results,
    //! interleaved with the shared ring, 2 rounds, medians; the VM's spread
    //! is large): two producer threads 10 µs apart, per-call p50 0.18x
    //! (macros, Drop), 0.24x (Block) and 0.29x (layer) of the shared ring's;
    //! back to back 0.72x (layer) to 1.22x (macros); one thread 10 µs apart
    //! 20 → 30–35 ns for the macros (the timer's step is 10 ns). Saturated
    //! throughput to a file (Block, 2M records) 0.70–0.82x: the merge costs
    //! the writer more than the claim line cost the producers on 2 vCPUs.
    //! That is why lanes are off by default: they pay where several
    //! threads log at once on many cores, and the writer's merge is the
    //! next thing to make cheaper.
    //!
    //! Rejected alternatives:
    //! - **One shared ring only** (the design before lanes): fixed memory
    //!   and claim order for free, but the claim line caps claims at 27–31M/s
    //!   here and makes two producers pay 1.95x one back to back and up to
    //!   7.5x at 10 µs (the `latency` benchmark results).
    //! - **Per-thread queues only** (quill, NanoLog, ticklog): memory grows
    //!   with threads unless capped, and a capped design needs the shared
    //!   path anyway; quill's queues are unbounded by default, which an
    //!   allocation on the request thread pays for.
    //! - **Lanes moved into the ring by the writer** (tried first in this
    //!   change): everything downstream sees one ring, but each record is
    //!   copied twice, and a lane's size, not the ring's, became a thread's
    //!   burst capacity: a test pushing 20,000 lines from one thread under
    //!   the Drop policy (`writer_on_its_own_thread_never_delays_the_file`)
    //!   had lines refused with a 64 KiB lane where the 1 MiB ring had held
    //!   them all. Merging the lanes and the ring as inputs of equal
    //!   rank keeps the ring as the reserve and copies once.
    //! - **Chunks of the shared ring claimed per thread** (one CAS per
    //!   chunk, records placed inside without atomics): keeps one ring, but
    //!   the consumer stops at the first unfilled chunk, so an idle thread's
    //!   chunk must be sealed by the writer with a race against its owner;
    //!   and output would follow chunks, not time.
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
    //! ## Encoding straight into the record (the macros' fast path)
    //!
    //! A macro call whose values are all plain (integers, floats, `bool`,
    //! `char`, strings, and a deferred message whose arguments are those)
    //! knows its encoded size before it writes anything: 16 header bytes,
    //! 5 for the thread item when a format prints threads, 3 for the
    //! message's header, 9 for a number, 5 plus the length for a string.
    //! It adds those up, claims a record of exactly that size, and writes
    //! the bytes into the claimed words through a `Cursor` (a safe
    //! `&mut [u8]` over the claimed region, lent by the ring), then commits.
    //! There is no thread-local buffer, no capacity check per value and no
    //! second copy: on the `push_profile` example this halved the cost of
    //! the benchmark's event (78.6 to 39.3 ns per call, medians of 5 interleaved
    //! runs), and `latency_load` shows 0.4x to 0.55x of the p50 from back to
    //! back up to calls 100 us apart, about 0.75x for calls 1 ms apart
    //! (where the first touch of cold pages dominates).
    //!
    //! The bytes are those the general encoder (`EventBuf`) writes, which a
    //! unit test checks for every plain type. Anything else (a `%`/`?`
    //! field, a message rendered on the caller, an event larger than a
    //! record, which must be cut) takes the general path: encoded into the
    //! thread's reusable buffer, then copied. Retrying a claim under the
    //! blocking policy writes the same bytes again, with the timestamp read
    //! once. If writing the payload unwound (only a nowait bug could make
    //! it), the claimed region is committed as `VOID`, which the consumer
    //! skips, so a half-written record can neither stall the ring nor be
    //! formatted.
    //!
    //! The `tracing` layer keeps the general path: `tracing` hands values
    //! over through a visitor, one dynamic call each, and a message only as
    //! `&dyn Debug`, so sizing first would mean visiting (and rendering the
    //! message) twice.
    //!
    //! ## Spans: encoded once, chained at creation
    //!
    //! An event inside spans carries the fields of every enclosing span
    //! (the text layout prints them), so the layer must find them on the
    //! request thread. Each span's fields are encoded once, when it is
    //! created, together with its parent's encoded chain: the span's
    //! extension holds the whole chain, outermost first, its own item
    //! last. The first event of an `enter` copies that chain (one registry
    //! lookup) into the thread's stack of entered spans; further events in
    //! the same `enter` copy it from there. A walk of the registry's scope
    //! (one lookup and one extension lock per enclosing span) is left for
    //! the cases the kept chain cannot answer: a chain that would not fit
    //! beside the span's fields in its 128 inline bytes (kept to one
    //! allocation per span), and a chain made stale by `Span::record`.
    //! Every record bumps a global epoch; a chain is used only if encoded
    //! at the current epoch, and a span created while its parent's chain is
    //! stale keeps none. The parent is the one this layer sees (a parent a
    //! per-layer filter hides is skipped), read before the user's `Debug`
    //! code runs, so no extension lock is held across it. A random
    //! differential test against `tracing_subscriber::fmt` (which walks the
    //! registry on every event), with duplicate enters, out-of-order exits,
    //! explicit parents, hidden spans and records, checks that every line
    //! is the same.
    //!
    //! ## Finding records without being woken
    //!
    //! Producers never wake the writer: a push is a claim, a copy and a
    //! commit, never a system call. The writer polls: every
    //! `flush_interval` (3 ms) while rounds find records, doubling its sleep
    //! up to `idle_interval` (50 ms) while they find none. That bounds the
    //! delay of an isolated record by the idle interval and costs an idle
    //! logger about 20 wake-ups a second. While records flow fast, the
    //! interval shrinks to the time the producers take, at the rate the last
    //! round measured (ring space claimed since the previous round, over the
    //! time since), to fill an eighth of the ring, down to 100 us: with a
    //! fixed 3 ms, a 1 MiB ring filled by 340 MB/s of span-carrying events
    //! (a `TraceLayer`-shaped request every microsecond) overflowed between
    //! two rounds and dropped about 30 % of them while the writer had CPU
    //! to spare. The rate is the writer's own measurement; producers still
    //! do nothing but push. (An earlier design let the writer
    //! sleep without a timer and had the first producer after a quiet spell
    //! wake it with a futex call: about 10 us on that request, and a
    //! store-buffering handshake loom could not check.)
    //!
    //! The writer sleeps in `poll(2)` on an eventfd (the doorbell) and on the
    //! sinks that returned `EAGAIN`, so a stalled terminal costs no wake-ups
    //! of its own: the writer learns from the kernel when it takes bytes
    //! again. The doorbell is rung only by calls that wait anyway: flush,
    //! reopen, shutdown, and a producer waiting for room under a blocking
    //! policy.
    //!
    //! What a visit costs the request thread: quill's benchmark method
    //! (batches of 20 calls 2 ms apart) makes most batches follow a visit
    //! of the writer, and `latency_load` with `NOWAIT_BENCH_INTERVAL_MS=500`
    //! took the macros' q20x2ms p50 from 76 to 46 ns (one thread, medians
    //! of three interleaved rounds: 76, 80, 46 against 46, 43, 47; back to
    //! back it is 20 to 40 ns either way). The likely cause, not measured
    //! (the VM it was measured on exposes no cache counters): after the writer has read a
    //! stretch of the ring and reset its state bytes, the next records a
    //! producer writes land on cache lines the writer's core last held. A longer
    //! interval is what a user who wants that chooses (`flush_interval`);
    //! the default keeps a record's delay to the file at about 3 ms. The
    //! fields every push reads (the ring's address, the lanes, the level
    //! limits) sit on lines the writer never writes: what it does write
    //! (counters, `consumer` around each write, the flush answers, the
    //! events) is on lines of its own.
    //!
    //! Three explanations of the rest of that gap were tested by timing and
    //! rejected, each with a benchmark-only patch to the ring
    //! (the `claim-hypotheses` benchmark results, 6 interleaved rounds,
    //! one thread, q20x2ms p50 against the unchanged ring, whose own rounds
    //! spread over 87-139 ns that hour): the writer leaving the state bytes
    //! of its last, partly read line for its next visit, so that it never
    //! writes the line the producer writes next (0.91x, inside the spread);
    //! a claim by plain store instead of compare-and-swap, which on x86 also
    //! removes the store-buffer drain of a locked instruction (1.01x); and
    //! quill's queue discipline, the producer prefetching lines ahead of
    //! its position and the writer flushing (`clflush`) every line it has
    //! read (1.00x). None is worth its cost or risk: the first needs lap
    //! tags in the state bytes and new loom models, the second is only
    //! correct for one producer, the third makes the writer flush every
    //! line it reads: about 10M lines a second at the macros' measured
    //! 4.8M records/s of about 135 bytes.
    //!
    //! ## Control without queues
    //!
    //! Flush, reopen and shutdown are numbers in atomics, not messages: a
    //! flush publishes `req = max(req, ring position)` and waits (futex,
    //! bounded) for the writer's `done` to pass its position; the writer
    //! answers the largest request it has seen. A flush that times out
    //! leaves nothing queued, so no number of them can make a later call
    //! block, and any number of threads can wait at once.
    //!
    //! ## Exact accounting at shutdown
    //!
    //! Shutdown sets a `CLOSED` bit in the ring's `head` with one `fetch_or`.
    //! A claim is a compare-and-swap that expects `head` without the bit, so
    //! every record is either claimed before the position the close returns
    //! (the writer drains or counts it) or refused and counted by its
    //! producer: no check on the hot path, no window. The writer drains until
    //! the deadline, then counts what is left (in the ring: `abandoned`; in a
    //! sink's buffer: that sink's `abandoned`), publishes, and marks the
    //! counts final. Every call that can block (a file write, a user's
    //! writer, fsync) runs with the consumer role set to `IN_IO`, after the
    //! counters were published; if the deadline passes meanwhile, the
    //! shutting-down thread takes the role with a compare-and-swap and counts
    //! the rest itself, and the writer, back from its write, finds the role
    //! gone and exits without touching anything.
    //!
    //! ## fork()
    //!
    //! `pthread_atfork` handlers lock the registry of live loggers before the
    //! fork and, in the child (single-threaded), reset each logger with
    //! atomic stores only: the parent's records are forgotten (the parent
    //! writes them), regions claimed by threads that do not exist in the
    //! child are dropped, counters start at zero, and a `FORKED` bit in
    //! `head` makes the child's first push fail its claim and start a new
    //! writer thread (stdout, stderr and files reopened; a custom writer
    //! cannot cross a fork and counts its records as failed). On Linux
    //! waiting uses futexes and no lock is held across the fork, so nothing
    //! in the child can wait for a thread that is gone. Elsewhere the
    //! full-ring wait uses `parking_lot_core`, whose bucket locks are held
    //! for a few instructions: a `fork()` that lands inside one leaves that
    //! bucket locked in the child, so a child's producer waiting for room
    //! could hang there (a window of nanoseconds, only under `Block`).
    //!
    //! ## Crashes
    //!
    //! A handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGTRAP
    //! (`sys/unix/crash.rs`, installed with the first logger that keeps
    //! [`Builder::drain_on_crash`](crate::builder::Builder::drain_on_crash) on) runs
    //! on the thread that crashed, on its alternate signal stack. Only
    //! async-signal-safe steps:
    //!
    //! 1. An atomic swap makes the first fatal signal the only one that
    //!    drains; a second one (during the drain, on any thread) goes
    //!    straight to step 5, so nothing can hang the process.
    //! 2. If the crashed thread is a writer thread, nobody can drain: step 5.
    //! 3. The live loggers are found in the registry with `try_lock` (a
    //!    registry locked by the crashed thread is skipped) and weak
    //!    upgrades (atomics). For each one whose writer runs, a flush of
    //!    every sink is asked the way `Logger::flush` asks it: `fetch_max`
    //!    and `fetch_add` on the control atomics, and the doorbell (one
    //!    `write(2)` to an eventfd or pipe). The crashed thread then polls
    //!    the answers with `clock_gettime` and `nanosleep` (no futex, no
    //!    parking lot: neither is needed), at most
    //!    [`Builder::crash_timeout`](crate::builder::Builder::crash_timeout). The
    //!    writer drains on its own thread, as it always does; if it needs a
    //!    lock the crashed thread holds (a crash inside `malloc`), the bound
    //!    ends the wait.
    //! 4. The last line is built in a stack buffer (`itoa`, no formatting
    //!    machinery; the thread's name from `prctl(PR_GET_NAME)` or
    //!    `pthread_getname_np`) and pushed into the ring (a claim, a copy, a
    //!    commit), then flushed, at most 100 ms more.
    //! 5. The previous action is restored with `sigaction`. A fault raised by
    //!    the kernel (`si_code > 0`) happens again when the handler returns,
    //!    under that action and with its own address (Rust's stack-overflow
    //!    handler needs it: its message still prints); a signal sent with
    //!    `kill`, `raise` or `abort()` is raised again and delivered under
    //!    that action when the handler returns. The exit status, core dumps
    //!    and crash reporters installed before nowait see the same signal.
    //!
    //! **Windows** (`sys/windows/crash.rs`): a top-level exception filter
    //! (`SetUnhandledExceptionFilter`) runs on the faulting thread when no
    //! handler took the exception, on its own stack (there is no alternate
    //! one). For an access violation, an illegal or privileged instruction,
    //! an integer division by zero, an in-page error or an array bound
    //! exceeded it runs the same drain (steps 1 to 4, the thread named by
    //! its id: its description is a string Windows allocates), then chains
    //! to the filter installed before it, or lets the system end the
    //! process with the exception's code. Not covered: a stack overflow
    //! (too little stack left; Rust's own handler prints its message),
    //! `std::process::abort` and `panic = "abort"` (`__fastfail` ends the
    //! process without running any handler). The writer's doorbell there is
    //! an unpark, which takes a `parking_lot_core` bucket lock: a crash
    //! inside that lock (a window of instructions) would hang the drain.
    //!
    //! ## The crash-durable ring
    //!
    //! `SIGKILL` (the OOM killer, `kill -9`, a container runtime giving up)
    //! runs no handler at all. With
    //! [`Builder::crash_durable`](crate::builder::Builder::crash_durable) the ring
    //! lives in a `MAP_SHARED` mapping of a file, whose pages the kernel
    //! keeps when the process dies, however it dies (`src/durable.rs`,
    //! `sys/unix/mapping.rs`). The same file holds:
    //!
    //! * a **catalog** of call sites (level, target, name, module, file,
    //!   line, field names, message format) and threads (name, id),
    //!   appended when each registers, under a mutex, off the hot path: a
    //!   record refers to its call site by key, and the next process
    //!   cannot know the keys of the dead one;
    //! * per file sink, a **mirror**: the bytes the writer formatted for
    //!   that file and has not yet seen written, copied there as they are
    //!   formatted;
    //! * two **snapshots**, written alternately and published by one store
    //!   of a generation word: the ring position up to which every record
    //!   is in the sinks' buffers (`taken`), each file's identity, and how
    //!   many of its bytes were written and formatted; and a clock anchor
    //!   to turn the records' raw timestamps into wall time.
    //!
    //! **What "written" means.** The ring hands space back to producers
    //! only after the writer has copied what the file sinks made of the
    //! records into their mirrors and published a snapshot covering them
    //! (deferred release: `consume` advances a private read cursor, and
    //! `release` hands the space back after the snapshot). So at every
    //! instant each accepted record is either at or after `taken` in the
    //! ring (recovered by decoding it), or in every file sink's mirror or
    //! file (completed byte for byte). The pending bytes of the files are
    //! recoverable; the ring space is not held until the files have taken
    //! the records, so a slow disk never holds the request threads back
    //! more than without durability. A mirror is a circle: when a commit's
    //! copy would overwrite bytes that the snapshot in force still names,
    //! the commit first publishes one that names none of them (the ring
    //! position in force, each file's current `written`), then copies and
    //! publishes the new one. An explicit-state model checker
    //! (`ring/durable_model.rs`) explores every interleaving of two
    //! producers and the writer, store by store, and at each of its
    //! states (about 240,000; 3.5 million in its long run) runs recovery
    //! on the mapping as a kill would leave it: every committed record
    //! comes out exactly once.
    //!
    //! **Recovery** (the next `build()` with the path, or `nowait recover`
    //! from the nowait-cli crate), before any sink takes a new record:
    //!
    //! 1. The path is opened without following a link, or created
    //!    exclusively with mode `0600`; an existing file is adopted only if
    //!    it is a regular file of this user that nobody else may write, and
    //!    a crash-durable file (else the build fails saying which). Then an
    //!    exclusive `flock`: a live logger (in this process or another)
    //!    holds it, and the build fails with an error saying so. A logger
    //!    of this process that was shut down (its handles still alive)
    //!    keeps its file unlinked and the path starts afresh.
    //! 2. The file is untrusted input (the repository's security policy): its header is
    //!    checked (magic, version, sizes within caps, the layout's size
    //!    against the file's real length, all in checked arithmetic), then
    //!    the file is mapped read-only for exactly that layout. Every word
    //!    is read through total getters; an inconsistent one is a notice
    //!    and a counted loss, and a file that cannot be read is set aside
    //!    as `PATH.corrupt`.
    //! 3. Each dead file sink's pending range goes only to a file sink of
    //!    the recovering logger that matches it (the same canonical path or
    //!    file identity; a rolling sink's own name in its directory), never
    //!    to a path the file names; without a match the bytes are counted
    //!    lost in a notice naming the file. The range is compared with the
    //!    file's length now: bytes the dead process wrote after its last
    //!    snapshot are not written again, a write the kill cut short is
    //!    completed from its first missing byte. A rotation published its
    //!    new file to the snapshot before writing to it, so the range always
    //!    belongs to the file the snapshot names; if that file was renamed
    //!    from outside, it is found by identity in its directory.
    //! 4. The ring is scanned from `taken` to the head: a committed record
    //!    is decoded with the catalog (call sites and threads of the dead
    //!    process are mapped to those of this one with the same content, or
    //!    registered anew; raw timestamps are converted with the anchor); a
    //!    region that was claimed and never committed (the process died
    //!    while copying into it) is counted as torn, never written, and
    //!    passed over up to the next word whose state byte is set (only a
    //!    claim's first word has one). A lap tag in each header (the claim
    //!    position's lap, 16 bits) tells a header the torn claim wrote
    //!    from a stale word of an earlier lap, so that two torn claims in
    //!    a row count as two; as a payload word of an earlier lap may carry
    //!    the tag too, its length is never trusted past that next word.
    //! 5. The new file is made at `PATH.recovering` (created exclusively),
    //!    with a ring large enough for everything recovered (at least the
    //!    configured size); every block is allocated with zeros (a full
    //!    disk is a build error, the old file untouched), mapped, and every
    //!    page touched. A notice, then the records, are pushed into the new
    //!    ring before the writer thread starts; then the new file is renamed over the
    //!    old one, and only then does the writer start. A process killed
    //!    during its recovery therefore leaves either the old file (none
    //!    of its records written yet; the files' completion of step 3 is
    //!    idempotent) or the new one, holding them: nothing is lost or
    //!    written twice (`a_recovery_killed_midway_…`: 48 recoveries, 35
    //!    killed midway). They go through the configured sinks and format
    //!    (which may differ from the dead process's): "recovered 4210
    //!    records from /dev/shm/app.nowait written by pid 812 before it
    //!    died (last at 2026-11-24T12:00:03.117Z); 3 records claimed and
    //!    never committed (the process died while writing them) lost".
    //!
    //! A second recovery of the same file finds a fresh file: nothing is
    //! written twice. A record that kills the writer thread (a `Format`
    //! that segfaults on it; a panic is caught) would kill every start
    //! that recovers it: the writer notes in the file which record of its
    //! batch it is formatting (one store per record, on the writer
    //! thread), the crash handler marks the file when the thread that
    //! crashed is a writer, and the next start sets that one record aside,
    //! counted ("1 record set aside, lost: the writer thread crashed while
    //! formatting it"). A `SIGKILL` during a format leaves no mark, so that
    //! record is recovered (`a_record_that_crashes_the_writer_is_set_aside_…`).
    //!
    //! **Measured** (the `durable` integration tests of nowait-core and of
    //! nowait-tracing): a process pinned to one CPU logs 10,000 records
    //! and is killed with `SIGKILL`: 0 of 10,000 on disk (plain text,
    //! macros, the `tracing` layer), 10,000 of 10,000 after recovery, each
    //! once. 200 seeded kills at random points while logging at full speed
    //! (two front ends, 4 KiB to 1 MiB rings, a third of the recoveries with
    //! another format, a quarter with another sink): every acknowledged
    //! record exactly once, 2.0 M records recovered, 18 torn claims counted,
    //! 45 files completed from their mirror, and a second recovery wrote
    //! nothing. The cost: the `durable-ab` benchmark results.
    //!
    //! **Limits.** Exactness needs this logger to be its files' only
    //! writer (step 3 reads the file's length). When the dead process
    //! left more than the new ring holds, the rest is pushed after the
    //! writer starts: a kill before it is in loses it. Without
    //! `drain_on_crash` a writer crash leaves no mark, and a record that
    //! crashes the writer is retried at every start. A record whose header survived from an earlier lap
    //! with the same 16-bit lap tag (1 in 65,536 laps apart) would be taken
    //! for committed. A forked child's logger is not durable (the child
    //! maps private memory over the parent's file) and the child holds the
    //! file's lock until it exits or `exec`s. On a disk-backed file the
    //! kernel writes the pages back, and each page faults once more after
    //! each writeback: put the file on tmpfs.
    //!
    //! **Windows** (`sys/windows/mapping.rs`): a view of a file mapping
    //! object (`CreateFileMappingW`, `MapViewOfFile`), which the system
    //! keeps and writes to the file when the process ends however it ends;
    //! the lock is a `LockFileEx` of one byte at offset 2^63 - 1 (Windows
    //! locks are mandatory for the bytes they cover: none anyone reads).
    //! Windows cannot rename a file onto a name whose file is still open,
    //! so step 5 closes the old file just before the rename: another
    //! process starting in that instant could lock and recover it too. A
    //! logger of this process that was shut down keeps its file mapped,
    //! and Windows refuses to delete a file with a mapped view: building
    //! the same path again while a handle to that logger lives may fail
    //! with an error naming the step ("remove"; not tested). Tested under
    //! Wine (the `durable_windows` integration tests: a
    //! child ended by `abort()` after 10,000 records, 0 on disk, 10,000
    //! after recovery).
    //!
    //! ## Platforms
    //!
    //! What differs between systems, facility by facility, and what CI runs
    //! on which: [`platforms`](super::platforms).
    //!
    //! ## Checked by
    //!
    //! Loom models of two producers and the consumer (including wrap-around
    //! padding, a full ring being released while producers race, and a
    //! close racing two claims), unit tests run under Miri, a
    //! counting-allocator test showing zero allocations per record on the
    //! producer thread, and a property test that injects sink faults
    //! (EAGAIN, EINTR, short writes, ENOSPC, EPIPE, slow writes, panicking
    //! formats) under random producers, policies and shutdown points and
    //! checks every outcome count exactly (the `accounting` integration tests).
}
