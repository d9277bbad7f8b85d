//! The check of `madvise: {advice: collapse}` steps against the rest of the scenario
//! (moved out of `steps.rs`, which holds the step-by-step checks).

use radiff_model::Step;

use super::sections::At;
use super::size::Size;
use super::PAGE;
use crate::error::{Error, Result};
use crate::yaml;

/// What `madvise: {advice: collapse}` needs of the rest of the scenario, checked once it is
/// parsed. `collapse_file()` reads a missing page with `page_cache_sync_readahead()`,
/// sleeps until that one folio is unlocked, then `folio_trylock()`s the next folios of the
/// window: exact only while each window is one request (a later request of the window
/// may still be in flight, and then the collapse fails with SCAN_PAGE_LOCK or not, run to
/// run). A window is at most `ra_pages`, or `io_pages` for a larger request
/// (`ractl_max_pages()`), and `fadvise: sequential` doubles `ra_pages`; so every point must
/// set `read_ahead_kb` and `max_sectors_kb` with the window's bound at most
/// `max_sectors_kb`; and since a window may be `io_pages` long, QEMU UFS's 128 segments must
/// hold it one page a segment (order-0 folios need not be contiguous): `max_sectors_kb` at
/// most 512 there (QEMU NVMe has a segment per page of its transfer limit). No blocks
/// larger than the page (their folios round windows up; not tried). No `fail_alloc` either: the collapse's own order-9 allocation
/// (`alloc_charge_folio()`) has not been tried against fail_page_alloc on a real kernel.
pub(super) fn check_collapse(
    at: &At,
    steps: &[Step],
    points: &[super::Point],
    device: crate::wire::DeviceKind,
    block_size: Option<u64>,
) -> Result<()> {
    let Some(i) =
        steps.iter().position(|s| matches!(s, Step::Madvise { advice: radiff_model::MadvAdvice::Collapse, .. }))
    else {
        return Ok(());
    };
    let line = yaml::line_of_item(at.text, "reads", i);
    let bad = |message: String| {
        Err(Error::input(at.path, line, format!("reads[{i}]: madvise `advice: collapse`: {message}")))
    };
    if steps.iter().any(|s| matches!(s, Step::FailAlloc { times, .. } if *times > 0)) {
        return bad("not with `fail_alloc` (the collapse's order-9 allocation under fail_page_alloc has not been tried on a real kernel)".into());
    }
    if let Some(b) = block_size.filter(|&b| b > PAGE) {
        return bad(format!("not with `mkfs.block_size` {} (folios of a minimum order round every window up to a block: not tried on a real kernel)", Size(b)));
    }
    let doubled = steps.iter().any(|s| matches!(s, Step::Fadvise { advice: radiff_model::Advice::Sequential, .. }));
    for point in points {
        let (Some(ra), Some(max)) = (point.queue.read_ahead_kb, point.queue.max_sectors_kb) else {
            return bad("set `queue.read_ahead_kb` and `queue.max_sectors_kb` (and each `matrix:` value): the collapse's readahead is exact only while each of its windows is one request".into());
        };
        let ufs_kb = super::ufs_segments_kb();
        if device == crate::wire::DeviceKind::Ufs && max > ufs_kb {
            let segments = ufs_kb * 1024 / PAGE;
            return bad(format!("max_sectors_kb {max} on UFS: a window of that many order-0 folios may need more than its {segments} segments, so several requests; at most {ufs_kb}"));
        }
        let window = if doubled { 2 * ra } else { ra };
        if window > max {
            let why = if doubled {
                format!("2 x read_ahead_kb {ra} (`fadvise: sequential` doubles the window)")
            } else {
                format!("read_ahead_kb {ra}")
            };
            return bad(format!(
                "{why} is more than max_sectors_kb {max}: a window of several requests makes the collapse fail on a request still in flight (SCAN_PAGE_LOCK) or not, run to run"
            ));
        }
    }
    Ok(())
}
