//! nowait core
