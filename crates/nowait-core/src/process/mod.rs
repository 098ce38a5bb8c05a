//! What nowait does for the whole process: the global logger, the list of
//! live loggers, the guard that ends a logger, and the hooks that drain
//! them when the process ends (exit, signals, console events, panics,
//! fatal signals) or forks.
//!
//! * `global.rs`: the process-wide logger the macros use.
//! * `live.rs`: the list of live loggers the hooks drain.
//! * `guard.rs`: [`Guard`](guard::Guard), which shuts a logger down when dropped.
//! * `hooks.rs`: installs the exit, signal and panic hooks once.
//! * `crash.rs`: the fatal-signal drain.
//! * `fork.rs`: the child's logger after `fork()`.

pub(crate) mod crash;
pub(crate) mod fork;
pub(crate) mod global;
pub(crate) mod guard;
pub(crate) mod hooks;
pub(crate) mod live;
