//! What a full ring does.

/// What happens to a record that finds the ring full.
///
/// Either way nothing is lost silently: drops are counted in
/// [`Stats`](crate::accounting::stats::Stats) and reported in the output.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nowait_core::{Builder, FullPolicy};
///
/// // A service that must never wait on logging, even if a burst overflows:
/// let builder = Builder::new().full_policy(FullPolicy::Drop);
/// // Wait up to 20 ms for room, then drop and count:
/// let builder = Builder::new().full_policy(FullPolicy::BlockTimeout(Duration::from_millis(20)));
/// # let _ = builder;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FullPolicy {
    /// Drop the record and count it. With level protection (see
    /// `Builder::protect`), records below WARN are
    /// dropped already above the high-water mark so that WARN and above keep
    /// the headroom. `try_*` calls behave like this under every policy.
    Drop,
    /// Wait (parked, not spinning) until the writer frees room, however
    /// long that takes: no loss, at the price of waiting when logging
    /// outruns the sinks, and of waiting for as long as a file's disk (a
    /// hung NFS mount) or a custom writer is stuck. Only the explicit choice
    /// of a user who prefers a stopped service to a lost record; the default
    /// for files is [`FullPolicy::BlockTimeout`]. The writer never waits on a
    /// terminal or pipe, so those cannot make producers wait.
    Block,
    /// Wait for room like [`Block`](FullPolicy::Block), but at most this
    /// long per record; then drop the record and count it
    /// ([`Stats::dropped_timeout`](crate::accounting::stats::Stats::dropped_timeout)), as
    /// [`Drop`](FullPolicy::Drop) would. The default when a file or custom
    /// writer is among the sinks, with [`FullPolicy::DEFAULT_TIMEOUT`] (100 ms): a
    /// burst that outruns the disk loses nothing, and a disk that stops
    /// costs each request at most the timeout.
    ///
    BlockTimeout(std::time::Duration),
}

impl FullPolicy {
    /// The deadline of [`FullPolicy::BlockTimeout`] in the default policy
    /// when a file or custom writer is among the sinks (100 ms).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nowait_core::FullPolicy;
    ///
    /// assert_eq!(FullPolicy::DEFAULT_TIMEOUT, Duration::from_millis(100));
    /// ```
    pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);
}
