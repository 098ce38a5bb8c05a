//! The process-wide logger used by the macros and the `log` front end.

use std::sync::OnceLock;

use crate::error::SetGlobalError;
use crate::logger::Logger;

static GLOBAL: OnceLock<Logger> = OnceLock::new();

/// Sets the process-wide logger used by the macros and the `log` front end.
///
/// # Errors
///
/// [`SetGlobalError`] if one was already set (it stays).
///
/// # Examples
///
/// ```
/// let (logger, _guard) = nowait_core::Builder::new()
///     .sink(nowait_core::Sink::writer(std::io::sink()))
///     .build()
///     .unwrap();
/// nowait_core::set_global(logger).unwrap();
/// assert!(nowait_core::global().is_some());
/// ```
pub fn set_global(logger: Logger) -> Result<(), SetGlobalError> {
    let min_level = logger.min_level();
    let routes = std::sync::Arc::clone(&logger.shared.routes);
    GLOBAL.set(logger).map_err(|_| SetGlobalError(()))?;
    crate::filter::logger_installed(min_level, &routes);
    Ok(())
}

/// The process-wide logger, if [`set_global`] was called.
///
/// # Examples
///
/// ```
/// if let Some(logger) = nowait_core::global() {
///     let _ = logger.try_log(nowait_core::Level::Info, "hello");
/// }
/// ```
#[inline]
pub fn global() -> Option<&'static Logger> {
    GLOBAL.get()
}
