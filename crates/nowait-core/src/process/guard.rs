//! [`Guard`]: shuts the logger down when dropped.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::shared::Shared;

/// Shuts the writer down when dropped: refuses new records, drains
/// everything accepted, writes it, flushes the sinks, and returns within
/// the shutdown timeout (`Builder::shutdown_timeout`,
/// default 5 s) whatever the sinks do.
///
/// It does not wait for a sink that is failing or stalled (a terminal or
/// pipe nobody reads): their pending records are counted at once. Records
/// still unwritten when the timeout runs out are counted as abandoned and
/// the output says so; a writer stuck in a blocking write (a hung disk, a
/// custom writer) is left behind and the counting is done by the dropping
/// thread, so [`Logger::stats`](crate::logger::Logger::stats) is final when `drop`
/// returns.
///
/// Keep it alive for as long as you log, typically in `main`.
///
/// # Examples
///
/// ```
/// let (logger, guard) = nowait_core::Builder::new()
///     .sink(nowait_core::Sink::writer(std::io::sink()))
///     .build()
///     .unwrap();
/// logger.log(nowait_core::Level::Info, "bye").unwrap();
/// drop(guard);
/// assert_eq!(logger.stats().records_written, 1);
/// ```
#[must_use = "dropping the guard shuts the logger down at once"]
pub struct Guard {
    pub(crate) shared: Arc<Shared>,
    pub(crate) timeout: Duration,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// The logger's [`flush_async`](crate::logger::Logger::flush_async),
    /// from the guard (for code that holds only the guard): a future that
    /// completes once every record pushed before the call is written, or
    /// with the error a flush reports.
    ///
    /// # Errors
    ///
    /// The future's output: as `Logger::flush`.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     use std::task::{Context, Poll, Wake, Waker};
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop {
    /// #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) { return v; }
    /// #         std::thread::park();
    /// #     }
    /// # }
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::writer(std::io::sink()))
    ///     .build()?;
    /// logger.log(nowait_core::Level::Info, "bye")?;
    /// block_on(guard.flush_async())?;
    /// assert_eq!(logger.stats().records_written, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush_async(
        &self,
    ) -> impl std::future::Future<Output = Result<(), crate::error::FlushError>>
           + Send
           + Sync
           + Unpin
           + 'static {
        crate::shared::waiters::Flush::new(
            &self.shared,
            crate::shared::FlushScope::All,
            self.shared.flush_timeout,
        )
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.shared.shutdown(self.timeout);
        // The final counts, whoever did the counting (the writer, or this
        // thread after a takeover).
        #[cfg(feature = "metrics")]
        {
            let s = &*self.shared;
            s.counters
                .snapshot(s.ring.capacity_bytes(), &s.sinks)
                .record_metrics();
        }
    }
}
