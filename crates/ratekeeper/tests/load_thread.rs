//! `SystemLoad`'s thread, seen from outside: one `ratekeeper-load` thread
//! per sampler (not per clone), gone when the last clone is dropped, and
//! the drop does not wait out the interval. Alone in its test binary, so
//! no other test's sampler is counted.
#![cfg(target_os = "linux")]

use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use ratekeeper::{SamplerOptions, SystemLoad};

/// This process's threads named `ratekeeper-load` (`/proc/self/task/*/comm`).
fn sampler_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == "ratekeeper-load")
        .count()
}

/// `sampler_threads()`, once it is `n`: a joined thread's task can outlive
/// the join by a moment (the kernel wakes the joiner before it removes
/// the task), so the count is polled for up to 2 s.
fn settles_at(n: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while sampler_threads() != n {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Drops `load` on another thread and returns how long the drop took, so
/// that a drop that waits out the interval fails the test (after 10 s)
/// instead of hanging it.
fn drop_timed(load: SystemLoad) -> Duration {
    let (done, dropped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let started = Instant::now();
        drop(load);
        done.send(started.elapsed()).unwrap();
    });
    dropped.recv_timeout(Duration::from_secs(10)).expect("the drop still waits after 10 s")
}

#[test]
fn the_thread_lives_as_long_as_a_clone() {
    assert_eq!(sampler_threads(), 0);
    let hour = SamplerOptions { interval: Duration::from_secs(3600), ..SamplerOptions::default() };
    // Were an assertion below to fail, unwinding must not drop a sampler
    // on this thread: a broken drop would hang the test there. Every drop
    // is `drop_timed`.
    let first = ManuallyDrop::new(SystemLoad::with_options(hour.clone()).unwrap());
    let clone = ManuallyDrop::new(SystemLoad::clone(&first));
    let second = ManuallyDrop::new(SystemLoad::with_options(hour).unwrap());
    // A new thread names itself: polled, not read at once.
    assert!(settles_at(2), "{} threads", sampler_threads());
    drop_timed(ManuallyDrop::into_inner(first));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(sampler_threads(), 2, "a clone still holds the first sampler");
    let waited = drop_timed(ManuallyDrop::into_inner(clone));
    assert!(settles_at(1), "{} threads", sampler_threads());
    assert!(waited < Duration::from_secs(5), "the drop waited {waited:?} of an hour's interval");
    drop_timed(ManuallyDrop::into_inner(second));
    assert!(settles_at(0), "{} threads", sampler_threads());
}
