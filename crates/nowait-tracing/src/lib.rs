//! nowait-tracing
