//! Loom models of the set of registered call sites. Run with
//! `bash ci/loom.sh registered` (`RUSTFLAGS="--cfg loom"
//! LOOM_MAX_PREEMPTIONS=2 cargo test -p nowait-tracing --release --lib
//! registered::loom_models`).
//!
//! The set is production's code on four slots with two probes. The
//! call-site registry (a map behind a lock in `nowait-core`) is stood in
//! for by one relaxed flag per key, set before the key is marked: loom
//! lets a thread read such a flag's old value unless the store happens
//! before the load, which is what the set must guarantee. (A loom `Mutex`
//! would hide a missing ordering: loom orders its lock by execution, so
//! a thread that sees the mark always locks after the insertion.)

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::{key_starting_at, Set};

/// A thread that sees a key marked finds the call site in the registry:
/// the registration happens before the mark (release) and the mark before
/// the sighting (acquire).
#[test]
fn a_thread_that_sees_a_key_finds_its_registration() {
    loom::model(|| {
        let set = Arc::new(Set::new());
        let registered = Arc::new(AtomicBool::new(false));
        let key = key_starting_at(1, 0);
        let registering = {
            let (set, registered) = (Arc::clone(&set), Arc::clone(&registered));
            thread::spawn(move || {
                registered.store(true, Ordering::Relaxed);
                set.mark(key);
            })
        };
        if set.contains(key) {
            assert!(
                registered.load(Ordering::Relaxed),
                "a marked key was not in the registry"
            );
        }
        registering.join().unwrap();
        assert!(set.contains(key));
    });
}

/// The same, for a key that lands in its second slot because another key
/// marked at the same time took (or raced it for) the first.
#[test]
fn a_key_in_its_second_slot_is_seen_with_its_registration() {
    loom::model(|| {
        let set = Arc::new(Set::new());
        let keys = [key_starting_at(2, 0), key_starting_at(2, 1)];
        let registered = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let (set, registered) = (Arc::clone(&set), Arc::clone(&registered));
                thread::spawn(move || {
                    registered[i].store(true, Ordering::Relaxed);
                    set.mark(keys[i]);
                })
            })
            .collect();
        for i in 0..2 {
            if set.contains(keys[i]) {
                assert!(
                    registered[i].load(Ordering::Relaxed),
                    "a marked key was not in the registry"
                );
            }
        }
        for t in threads {
            t.join().unwrap();
        }
        assert!(keys.iter().all(|&k| set.contains(k)));
    });
}

/// Two concurrent marks of one key leave it in one slot, also when the
/// key's first slot is being taken by another key at the same time (the
/// two marks then race for the second slot or find the key there).
#[test]
fn two_marks_of_one_key_take_one_slot() {
    for with_other in [false, true] {
        loom::model(move || {
            let set = Arc::new(Set::new());
            let (key, other) = (key_starting_at(3, 0), key_starting_at(3, 1));
            let mut keys = vec![key, key];
            if with_other {
                keys.push(other);
            }
            let threads: Vec<_> = keys
                .into_iter()
                .map(|k| {
                    let set = Arc::clone(&set);
                    thread::spawn(move || set.mark(k))
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(set.slots_holding(key), 1, "a key in two slots");
            assert!(set.contains(key));
            if with_other {
                assert_eq!(set.slots_holding(other), 1);
                assert!(set.contains(other));
            }
        });
    }
}
