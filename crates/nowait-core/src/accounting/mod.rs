//! Accounting: every accepted record ends in exactly one counted outcome.
//!
//! * `policy.rs`: what a push does when the ring is full ([`FullPolicy`](policy::FullPolicy)).
//! * `stats.rs`: the counters producers and the writer keep, and the
//!   [`Stats`](stats::Stats) snapshot a user reads.
//! * `outcome.rs`: what one attempt to write a sink's bytes ended in.
//! * `loss.rs`: turning counters that grew into the notices written into
//!   the output.
//! * `metrics.rs` (feature `metrics`): the counters published through the
//!   `metrics` facade.

#[cfg(all(loom, test))]
mod loom_models;
pub(crate) mod loss;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;
pub(crate) mod outcome;
pub(crate) mod policy;
pub(crate) mod stats;
