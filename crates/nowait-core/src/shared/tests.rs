//! Tests of the producer/writer contract that need a whole logger.

use std::sync::atomic::Ordering;

use crate::shared::state;

/// A writer that wakes on its own may see the logger closing at any
/// moment of a shutdown; the deadline it then reads must already be
/// there, or it would drain until "no deadline" (at once) and abandon
/// what a receiver was about to take.
#[test]
fn whoever_sees_the_logger_closing_sees_its_deadline() {
    for _ in 0..4000 {
        let (logger, guard) = crate::builder::Builder::new()
            .sink(crate::sink::Sink::writer(std::io::sink()))
            .build()
            .unwrap();
        let shared = std::sync::Arc::clone(&logger.shared);
        let watcher = std::thread::spawn(move || {
            while shared.state.load(Ordering::SeqCst) == state::RUNNING {
                std::hint::spin_loop();
            }
            shared.ctl.deadline().is_some()
        });
        drop(guard);
        assert!(watcher.join().unwrap(), "closing with no deadline");
    }
}
