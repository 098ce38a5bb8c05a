//! The synchronisation primitives nowait uses, swapped for loom's under
//! `cfg(loom)` so that the models in `ring/tests.rs` check the real code.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicU8};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicU8};

pub(crate) use std::sync::atomic::Ordering;

/// An `UnsafeCell` with loom's closure-based API, so the ring's accesses are
/// tracked by loom and compile to plain pointer accesses otherwise.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Raw pointer to the contents.
    pub(crate) fn get(&self) -> *mut T {
        self.0.get()
    }

    /// The contents, through exclusive access.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;
