//! Loading a compiled mm/readahead.c (`dlopen`) and building the model's table of its
//! kernel functions, with the crash handler that turns a crash in the C into that call's
//! failure. Only a hybrid worker process (worker.rs) loads an object: radiff's own process
//! never runs a tree's C.

use std::ffi::{CStr, CString};
use std::path::Path;

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use radiff_model::hybrid::{CAops, EnterFn, GuardFn, RaLoadFn, RaStoreFn};
use radiff_model::CReadahead;

use crate::error::{Error, Result};

/// A loaded shared object. It stays loaded for the life of the process: tables built from
/// it may be anywhere (explore's threads), and a tree's C is small.
pub struct Loaded {
    handle: *mut libc::c_void,
}

// SAFETY: a dlopen handle may be used from any thread (dlsym is thread-safe).
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dlopen error".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

impl Loaded {
    /// `dlopen()`s `so`, resolving every symbol now (a helper the header lacks is an
    /// error here, not a crash later).
    pub fn open(so: &Path) -> Result<Loaded> {
        assert!(
            crate::settings::get().hybrid_worker.is_some(),
            "a tree's C is loaded only in a hybrid worker (hybrid/worker.rs)"
        );
        let c = CString::new(so.as_os_str().as_encoded_bytes()).map_err(|e| Error::Other(e.to_string()))?;
        // SAFETY: loading a shared object radiff compiled from its own header; its
        // constructors are none (the header defines none and the kernel file has none).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(Error::Other(format!("dlopen {}: {}", so.display(), dlerror())));
        }
        Ok(Loaded { handle })
    }

    /// The address the object is loaded at (its symbols' values are from there), 0 when
    /// `dladdr()` cannot say.
    pub fn base(&self) -> u64 {
        let Some(enter) = self.symbol("radiff_enter") else { return 0 };
        // SAFETY: a Dl_info for dladdr() to fill, about an address of the loaded object.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr(enter, &mut info) == 0 {
                return 0;
            }
            info.dli_fbase as u64
        }
    }

    /// The address of `name`, if the object defines it.
    pub fn symbol(&self, name: &str) -> Option<*mut libc::c_void> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// The model's table: the functions of `only` (all of the model's
    /// [`radiff_model::hybrid::ENTRIES`] when `None`) that the object defines. An object
    /// without the header's `radiff_enter` or `radiff_aops` was not compiled by radiff: an
    /// error.
    pub fn table(&self, only: Option<&[&str]>) -> Result<CReadahead> {
        let need = |n: &str| {
            self.symbol(n).ok_or_else(|| Error::Other(format!("the hybrid object has no {n}: not built by radiff")))
        };
        let enter = need("radiff_enter")?;
        let ra_load = need("radiff_ra_load")?;
        let ra_store = need("radiff_ra_store")?;
        let aops = need("radiff_aops")?;
        let guard = need("radiff_guard")?;
        register_crashed(need("radiff_crashed")?);
        let want = |n: &str| only.is_none_or(|o| o.contains(&n));
        // Each function is exported as radiff_entry_NAME, NULL where the tree's type is not
        // the one the model calls it with (the header's RADIFF_ENTRY).
        let get = |n: &str| {
            let p = self.symbol(&format!("radiff_entry_{n}")).filter(|_| want(n))?;
            // SAFETY: radiff_entry_NAME is a `void *const` the unit defined.
            let f = unsafe { *(p as *const *mut libc::c_void) };
            (!f.is_null()).then_some(f)
        };
        // SAFETY: each symbol is the header's declaration of that kernel function, whose
        // C signature the model's type spells out (model/src/hybrid/functions.rs); the
        // object stays loaded for the life of the process.
        unsafe {
            Ok(CReadahead::from_symbols(
                get,
                std::mem::transmute::<*mut libc::c_void, EnterFn>(enter),
                (
                    std::mem::transmute::<*mut libc::c_void, RaLoadFn>(ra_load),
                    std::mem::transmute::<*mut libc::c_void, RaStoreFn>(ra_store),
                ),
                aops as *const CAops,
                Some(super::watchdog::install(std::mem::transmute::<*mut libc::c_void, GuardFn>(guard))),
            ))
        }
    }
}

/// The header's `radiff_crashed(sig)`: jumps back into the running guard, or returns 0.
type CrashedFn = unsafe extern "C" fn(libc::c_int) -> libc::c_int;

/// Each loaded object's `radiff_crashed`, for the signal handler (which may not lock).
static CRASHED: [AtomicPtr<libc::c_void>; 64] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 64];
static NR_CRASHED: AtomicUsize = AtomicUsize::new(0);

/// Registers an object's `radiff_crashed` with the handler ([`install_crash_handler`]).
fn register_crashed(crashed: *mut libc::c_void) {
    if CRASHED.iter().any(|p| p.load(Ordering::Acquire) == crashed) {
        return;
    }
    let i = NR_CRASHED.fetch_add(1, Ordering::AcqRel);
    if let Some(slot) = CRASHED.get(i) {
        slot.store(crashed, Ordering::Release);
    }
}

/// The address of the instruction the last crash in a guarded call stopped at; 0 when none
/// was recorded (another architecture).
static CRASH_PC: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Where the last crash in a guarded call happened, taken (the next starts anew).
pub fn crash_pc() -> Option<u64> {
    Some(CRASH_PC.swap(0, Ordering::AcqRel)).filter(|&pc| pc != 0)
}

/// The instruction a signal stopped at, from its context.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn pc_of(uc: *mut libc::c_void) -> u64 {
    if uc.is_null() {
        return 0;
    }
    // SAFETY: the kernel's ucontext for an SA_SIGINFO handler.
    unsafe { (*(uc as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] as u64 }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn pc_of(_uc: *mut libc::c_void) -> u64 {
    0
}

/// The number of the last system call the worker's seccomp filter refused (SIGSYS).
static FORBIDDEN: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(-1);

/// The system call behind the last SIGSYS: what the C tried.
pub fn last_forbidden_syscall() -> i64 {
    FORBIDDEN.load(Ordering::Acquire)
}

/// Installs (once) the handler that turns a crash in a guarded C call (SIGSEGV, SIGBUS,
/// SIGILL from `BUG()`, SIGFPE, SIGSYS from a system call the worker's filter refuses, the
/// watchdog's signal) into that call's failure. A crash outside any guard gets the default
/// action, as without the handler. Installed before the worker's filters take
/// `rt_sigaction` away.
pub fn install_crash_handler() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // SAFETY: a plain sigaction with a handler that only calls async-signal-safe code
        // (the objects' radiff_crashed, signal(), write()).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_crash as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGSYS, super::watchdog::SIGNAL]
            {
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

extern "C" fn on_crash(sig: libc::c_int, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    if sig == libc::SIGSYS && !info.is_null() {
        // SAFETY: the kernel's siginfo for SIGSYS: `_call_addr` (8 bytes), then `_syscall`
        // (an int) after the 16-byte header.
        let nr = unsafe { *(info as *const u8).add(24).cast::<libc::c_int>() };
        FORBIDDEN.store(nr as i64, Ordering::Release);
    }
    // The watchdog's signal is not acted on while the model's own Rust runs (a callback
    // may hold the allocator's lock): the watchdog sends it again until it lands in the C.
    if sig == super::watchdog::SIGNAL && radiff_model::hybrid::in_callback() {
        return;
    }
    CRASH_PC.store(pc_of(uc), Ordering::Release);
    for slot in &CRASHED {
        let p = slot.load(Ordering::Acquire);
        if p.is_null() {
            break;
        }
        // SAFETY: a registered radiff_crashed; it returns only when no guard runs.
        unsafe { std::mem::transmute::<*mut libc::c_void, CrashedFn>(p)(sig) };
    }
    // The watchdog's signal for a call that ended as it was sent: nothing to stop.
    if sig == super::watchdog::SIGNAL {
        return;
    }
    // Not a guarded C call's. The worker's filters take rt_sigaction away, so the default
    // action cannot be restored: say what happened and end with 128 + the signal, as a
    // shell reports a process a signal ended.
    let mut msg = *b"radiff's hybrid worker: signal    outside any call into the C (system call     )\n";
    let put = |msg: &mut [u8], at: usize, width: usize, mut n: i64| {
        for i in (0..width).rev() {
            msg[at + i] = if n > 0 || i == width - 1 { b'0' + (n % 10) as u8 } else { b' ' };
            n /= 10;
        }
    };
    put(&mut msg, 31, 2, sig as i64);
    put(&mut msg, 75, 4, FORBIDDEN.load(Ordering::Acquire).max(0));
    // SAFETY: write() and _exit() are async-signal-safe.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(128 + sig);
    }
}
