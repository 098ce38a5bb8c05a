//! Shutdown: drain until the deadline, then give every accepted record its
//! final count, and say in the output what was lost.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Writer;
use crate::level::Level;
use crate::shared::consumer;

/// The part of the shutdown timeout (at most) kept for counting and the
/// final notices.
const MARGIN: Duration = Duration::from_millis(50);

impl Writer {
    /// Drains and writes until everything accepted is written (or its sink
    /// is failed, stalled, or failing with its attempts at shutdown spent:
    /// `SinkState::begin_shutdown`) or the deadline is near; then counts
    /// what is left, writes the notices, publishes and marks the counts
    /// final.
    pub(super) fn finish(&mut self) {
        let start = Instant::now();
        // A shutdown stores its deadline before it closes the logger, so
        // there is one; were there none, the configured bound stands.
        let deadline =
            self.shared.ctl.deadline().unwrap_or_else(|| {
                crate::record::clock::deadline_after(self.shared.shutdown_timeout)
            });
        let margin = (deadline.saturating_duration_since(start) / 4).min(MARGIN);
        let drain_until = deadline.checked_sub(margin).unwrap_or(deadline);
        self.shared.close_queues();
        // A failing sink is tried again at once, then a few times with
        // back-off (a transient error may clear), never in a tight loop.
        for sink in &mut self.sinks {
            sink.begin_shutdown();
        }
        let mut timed_out = false;
        loop {
            self.drain();
            if self.taken {
                return;
            }
            let now = Instant::now();
            self.write_all(now, false);
            self.report_losses(true);
            self.write_all(now, false);
            self.answer(now);
            if self.taken {
                return;
            }
            let ring_done = self.shared.all_released();
            let now = Instant::now();
            let sinks_done = self
                .sinks
                .iter()
                .all(|s| s.done_for_shutdown(now, drain_until));
            if ring_done && sinks_done {
                break;
            }
            if now >= drain_until {
                timed_out = true;
                break;
            }
            // Wait for room in a slow sink, or for a producer still copying.
            self.poll((drain_until - now).min(Duration::from_millis(5)), false);
        }
        self.count_and_report(deadline, timed_out.then(|| start.elapsed()));
        if self.taken {
            return;
        }
        self.settle_durable();
        self.publish(Instant::now());
        self.shared.mark_finished();
        let _ = self.shared.consumer.compare_exchange(
            consumer::WRITER,
            consumer::NONE,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }

    /// Counts what the drain could not write, then writes the notices (and
    /// whatever else the sinks still hold) until they are out or the
    /// deadline: the margin kept for this is what lets a slow terminal
    /// still show what it missed. `timed_out`: the drain ran out of time
    /// after this long (else it stopped because nothing it waited for
    /// could still be written).
    fn count_and_report(&mut self, deadline: Instant, timed_out: Option<Duration>) {
        let left = self.shared.abandon_ring();
        let now = Instant::now();
        let mut detail = Vec::new();
        let mut shed_notices = Vec::new();
        for i in 0..self.sinks.len() {
            let sink = &mut self.sinks[i];
            let why = if sink.dead {
                "failed".to_owned()
            } else if sink.failing() {
                sink.gave_up_reason()
            } else if sink.stalled(now) {
                "stalled".to_owned()
            } else {
                "too slow for the shutdown timeout".to_owned()
            };
            // What no trigger released is filtered, never written.
            sink.discard_backtrace();
            let (n, held, shed) = sink.abandon_pending();
            if let Some(msg) = shed {
                shed_notices.push((i, msg));
            }
            if n > 0 {
                detail.push(format!(
                    "{n} pending for sink {} ({why}){}",
                    sink.name,
                    if held > 0 {
                        format!(", {held} more being written")
                    } else {
                        String::new()
                    }
                ));
            }
        }
        for (i, msg) in shed_notices {
            // Into the sink itself (it may still take a line); the others
            // have the count from the loss reports (below).
            self.sinks[i].add_notice(Level::Warn, &msg);
        }
        if left > 0 || !detail.is_empty() {
            let s = if left == 1 { "" } else { "s" };
            let msg = match timed_out {
                Some(after) => format!(
                    "shutdown timed out after {} ms: {left} record{s} abandoned in the ring{}{}",
                    after.as_millis(),
                    if detail.is_empty() { "" } else { "; " },
                    detail.join(", ")
                ),
                None if left > 0 => format!(
                    "shutdown: {left} record{s} abandoned in the ring{}{}",
                    if detail.is_empty() { "" } else { "; " },
                    detail.join(", ")
                ),
                None => format!("shutdown: {}", detail.join(", ")),
            };
            self.broadcast(Level::Warn, &msg, None);
        }
        // Refusals and sheds counted while draining.
        self.report_losses(true);
        // The last writes, the pipes' reserve included, until the sinks
        // that still work have taken everything or the deadline; then
        // flush users' writers.
        let mut now = Instant::now();
        self.write_all(now, true);
        while !self.taken
            && now < deadline
            && self
                .sinks
                .iter()
                .any(|s| !s.dead && !s.failing() && !s.stalled(now) && s.unsent() > 0)
        {
            self.poll((deadline - now).min(Duration::from_millis(5)), false);
            now = Instant::now();
            self.write_all(now, true);
        }
        // What a sink's I/O thread did not finish in time is abandoned.
        for sink in &mut self.sinks {
            sink.abandon_rest();
        }
        for i in 0..self.sinks.len() {
            if self.taken {
                return;
            }
            if self.sinks[i].output.may_block() && !self.sinks[i].dead {
                if !self.enter_io(now) {
                    return;
                }
                let event = self.sinks[i].flush_output(now);
                if !self.leave_io() {
                    return;
                }
                if let Some((level, msg)) = event {
                    self.broadcast(level, &msg, Some(i));
                }
            }
        }
    }
}
