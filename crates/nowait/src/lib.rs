//! nowait
