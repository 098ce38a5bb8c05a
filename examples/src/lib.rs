//! Examples live in examples/.
