//! nowait-log
