//! Load-test servers and tools.
