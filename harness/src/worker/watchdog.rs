//! A time limit on each call into a tree's C: a call still running after
//! [`CALL_LIMIT`] ([`set_call_limit`]) (a patched loop that never ends) is interrupted with SIGXCPU, which the
//! crash handler turns into that call's failure, as it does a SIGSEGV. Nothing of radiff
//! hangs on the C.
//!
//! The model calls the C through the table's `radiff_guard`; the table holds
//! `timed_guard`, which counts the call in the calling thread's slot as it enters and
//! again as it leaves (an odd count: a call runs), with no clock read: thousands of calls
//! a prediction each cost two stores. A watchdog thread, started with the first loaded
//! object, looks at the slots a few times a second and times, on its own clock, a count it
//! finds odd and unchanged.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU64, Ordering};
use std::sync::Once;
use std::time::Duration;

use radiff_model::hybrid::GuardFn;

/// How long one call into the C may run by default. A readahead call takes microseconds
/// in the model.
pub const CALL_LIMIT: Duration = Duration::from_secs(5);

static LIMIT_MS: AtomicU64 = AtomicU64::new(CALL_LIMIT.as_millis() as u64);

/// Sets the limit on one call into the C (for a test that must not wait [`CALL_LIMIT`]).
pub fn set_call_limit(limit: Duration) {
    LIMIT_MS.store(limit.as_millis().max(1) as u64, Ordering::Release);
}

/// The limit on one call into the C.
pub fn call_limit() -> Duration {
    Duration::from_millis(LIMIT_MS.load(Ordering::Acquire))
}

/// The signal a call past its limit gets.
pub const SIGNAL: libc::c_int = libc::SIGXCPU;

/// Aligned to a cache line of its own: each thread writes its slot on every call into
/// the C, and two threads' slots on one line would bounce it between their cores.
#[repr(align(128))]
struct Slot {
    /// Whether a thread holds this slot (each thread that calls the C holds one while it lives).
    owned: AtomicBool,
    /// Calls entered plus calls left: odd while a call runs.
    calls: AtomicU64,
    /// The holding thread, for the signal.
    thread: AtomicU64,
}

const SLOTS: usize = 256;
static TABLE: [Slot; SLOTS] =
    [const { Slot { owned: AtomicBool::new(false), calls: AtomicU64::new(0), thread: AtomicU64::new(0) } }; SLOTS];
/// The guard of the first object loaded: any object's guard catches any object's crash
/// (the handler asks every object's `radiff_crashed`, and the one guarding this thread
/// jumps).
static GUARD: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());

/// A thread's slot, given back when the thread ends.
struct Claim(usize);

impl Drop for Claim {
    fn drop(&mut self) {
        // Even: no call runs (a thread ends outside the C).
        TABLE[self.0].calls.store(0, Ordering::Release);
        TABLE[self.0].owned.store(false, Ordering::Release);
    }
}

/// A free slot for this thread; `None` (the thread's calls go untimed) when all are held.
fn claim() -> Option<Claim> {
    TABLE.iter().position(|s| s.owned.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok()).map(
        |i| {
            // SAFETY: pthread_self() has no preconditions.
            TABLE[i].thread.store(unsafe { libc::pthread_self() } as u64, Ordering::Release);
            Claim(i)
        },
    )
}

thread_local! {
    static MINE: Option<Claim> = claim();
}

/// Registers `guard` (an object's `radiff_guard`) and starts the watchdog; returns the
/// guard the model's table holds.
pub fn install(guard: GuardFn) -> GuardFn {
    let _ =
        GUARD.compare_exchange(std::ptr::null_mut(), guard as *mut libc::c_void, Ordering::AcqRel, Ordering::Acquire);
    start();
    timed_guard
}

/// A worker's parent (radiff) as the worker started, 0 outside a worker: the watchdog ends
/// the worker once its parent is gone, so that a worker left running in the model's own
/// code (no C call for the time limit to stop) does not outlive a radiff that was killed.
static PARENT: AtomicI32 = AtomicI32::new(0);

/// Makes the watchdog end this process when its parent is gone (a worker's).
pub fn end_with_parent() {
    // SAFETY: getppid has no preconditions.
    PARENT.store(unsafe { libc::getppid() }, Ordering::Release);
}

/// Starts the watchdog thread (once) and returns when it runs: in a worker, before its
/// filters take away thread creation and what a starting thread asks of the kernel (rseq).
pub fn start() {
    static START: Once = Once::new();
    START.call_once(|| {
        let (running, started) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("radiff-c-watchdog".into())
            .spawn(move || {
                let _ = running.send(());
                watch()
            })
            .expect("a thread for the hybrid's time limit");
        let _ = started.recv();
    });
}

/// How often the watchdog looks at the slots.
const TICK: Duration = Duration::from_millis(100);

fn watch() {
    // Each slot's count as last seen, and when the watchdog first saw it odd.
    let mut seen = [(0u64, std::time::Instant::now()); SLOTS];
    loop {
        std::thread::sleep(TICK);
        let parent = PARENT.load(Ordering::Acquire);
        // SAFETY: getppid and _exit have no preconditions.
        if parent != 0 && unsafe { libc::getppid() } != parent {
            // Nothing reads what this worker makes any more.
            unsafe { libc::_exit(4) };
        }
        let (now, limit) = (std::time::Instant::now(), call_limit());
        for (slot, seen) in TABLE.iter().zip(seen.iter_mut()) {
            let calls = slot.calls.load(Ordering::Acquire);
            if calls != seen.0 {
                // Another call, or none: timed from now (a call is seen at most a tick late).
                *seen = (calls, now);
                continue;
            }
            if calls % 2 == 1 && now.duration_since(seen.1) > limit {
                // SAFETY: the thread of a running call (it clears its slot before it ends).
                // Sent again each round until the call ends: the handler lets it pass while
                // the thread is in the model's Rust.
                unsafe { libc::pthread_kill(slot.thread.load(Ordering::Acquire) as libc::pthread_t, SIGNAL) };
            }
        }
    }
}

/// The table's `radiff_guard`: the object's guard, timed.
unsafe extern "C" fn timed_guard(
    body: unsafe extern "C" fn(*mut libc::c_void),
    data: *mut libc::c_void,
) -> libc::c_int {
    let guard = GUARD.load(Ordering::Acquire);
    // SAFETY: install() stored an object's radiff_guard before any table held this one.
    let guard = unsafe { std::mem::transmute::<*mut libc::c_void, GuardFn>(guard) };
    let slot = MINE.try_with(|m| m.as_ref().map(|c| &TABLE[c.0])).ok().flatten();
    // Only this thread writes its slot's count: a load and a store, no atomic increment.
    if let Some(slot) = slot {
        slot.calls.store(slot.calls.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
    // SAFETY: the model's body and data, as the object's guard expects them.
    let signal = unsafe { guard(body, data) };
    if let Some(slot) = slot {
        slot.calls.store(slot.calls.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
    signal
}
