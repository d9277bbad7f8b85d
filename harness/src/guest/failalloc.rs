//! fail_page_alloc for the guest's own task: what an `Op::FailAlloc` writes to debugfs,
//! and the disarming at the end of a run (a batch runs several scenarios in one guest).

use std::sync::atomic::{AtomicBool, Ordering};

use super::sysfs::DEBUGFS;
use super::GResult;

/// Whether this task's allocations may fail now: a pread may then end short or with
/// ENOMEM (filemap_create_folio() failing), which the guest reports instead of refusing.
static ARMED: AtomicBool = AtomicBool::new(false);

pub(super) fn armed() -> bool {
    ARMED.load(Ordering::Relaxed)
}

fn write(name: &str, value: &str) -> GResult<()> {
    let path = format!("{DEBUGFS}/fail_page_alloc/{name}");
    std::fs::write(&path, value).map_err(|e| format!("fail_alloc: writing `{value}` to {path}: {e} (is CONFIG_FAIL_PAGE_ALLOC with CONFIG_FAULT_INJECTION_DEBUG_FS set? see kernels/config.fragment)"))
}

/// Arms fail_page_alloc so that this task's next `times` page allocations of order
/// `min_order` or more fail, and no other allocation (mm/fail_page_alloc.c
/// should_fail_alloc_page() and lib/fault-inject.c should_fail_ex(): probability 100,
/// interval 1, space 0, task-filter with this thread's make-it-fail; ignore-gfp-wait and
/// ignore-gfp-highmem off, as readahead's allocations may reclaim and are __GFP_HIGHMEM).
/// `times` 0 disarms. `radiff_model::fail_page_alloc` models the same.
pub(super) fn arm(times: u32, min_order: u32) -> GResult<()> {
    // times first: 0 while the rest changes.
    write("times", "0")?;
    for (name, value) in [
        ("probability", "100"),
        ("interval", "1"),
        ("space", "0"),
        ("verbose", "0"),
        ("task-filter", "Y"),
        ("ignore-gfp-wait", "N"),
        ("ignore-gfp-highmem", "N"),
    ] {
        write(name, value)?;
    }
    write("min-order", &min_order.to_string())?;
    std::fs::write("/proc/thread-self/make-it-fail", if times > 0 { "1" } else { "0" })
        .map_err(|e| format!("fail_alloc: /proc/thread-self/make-it-fail: {e}"))?;
    write("times", &times.to_string())?;
    ARMED.store(times > 0, Ordering::Relaxed);
    Ok(())
}

/// Leaves nothing armed (after a run that armed it, whatever its outcome).
pub(super) fn disarm() -> GResult<()> {
    ARMED.store(false, Ordering::Relaxed);
    write("times", "0")?;
    std::fs::write("/proc/thread-self/make-it-fail", "0")
        .map_err(|e| format!("fail_alloc: /proc/thread-self/make-it-fail: {e}"))
}
