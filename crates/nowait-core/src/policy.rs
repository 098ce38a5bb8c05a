//! What a full ring does.

/// What happens to a record that finds the ring full.
///
/// Either way nothing is lost silently: drops are counted in
/// [`Stats`](crate::Stats) and reported in the output.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, FullPolicy};
///
/// // A service that must never wait on logging, even if a burst overflows:
/// let builder = Builder::new().full_policy(FullPolicy::Drop);
/// # let _ = builder;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FullPolicy {
    /// Drop the record and count it. With level protection (see
    /// [`Builder::protect`](crate::Builder::protect)), records below WARN are
    /// dropped already above the high-water mark so that WARN and above keep
    /// the headroom. `try_*` calls behave like this under every policy.
    Drop,
    /// Wait (parked, not spinning) until the writer frees room: no loss, at
    /// the price of waiting when logging outruns the sinks. The writer never
    /// waits on a terminal or pipe, so only the file's disk or a custom
    /// writer can make producers wait.
    Block,
}
