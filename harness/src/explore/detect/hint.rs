//! Hint shortfall: a WILLNEED hint (`POSIX_FADV_WILLNEED`, `readahead(2)`,
//! `MADV_WILLNEED`) over pages not in the cache that reads far fewer of them than it asked
//! for before the next access.
//!
//! All three reach mm/readahead.c `force_page_cache_ra()` through `generic_fadvise()`,
//! which reads at most `max(bdi->io_pages, ra->ra_pages)` pages of the range, as
//! `page_cache_ra_unbounded` submits with no lookahead. A hint opens no window: its submits
//! and folios land in the window the last read opened (and the Start windows of another
//! file's folios) until the next read or fault opens one. So the detector finds each hint's
//! submits in the trace, in the program's order, by their first page, and counts the
//! folios it added; what the file held before is what the windows before held.

use radiff_model::{Advice, MadvAdvice, Op, Submit, Trace, Trigger};

use super::{file_base, pow2_floor, Context, Hit, Thresholds, FILE_STRIDE, PAGE};

/// A hint the program gave: op `op` asked for pages `[first, end)` of file `file` (the
/// range clamped to the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    pub op: usize,
    pub file: u32,
    pub first: u64,
    pub end: u64,
    /// `willneed`, `readahead(2)` or `madv-willneed`.
    pub kind: &'static str,
}

/// The hints of `ops`, in order, over files of `file_size` bytes. The pages are
/// generic_fadvise()'s: "First and last PARTIAL page!"; `len` 0 is to the end of the
/// file (of the mapping for MADV_WILLNEED), as [`super::distinct_bytes_read`] counts it.
pub fn hints(ops: &[Op], file_size: u64) -> Vec<Hint> {
    let pages = file_size.div_ceil(PAGE);
    let range = |offset: u64, len: u64| {
        let first = offset / PAGE;
        let end = if len == 0 { pages } else { ((offset + len - 1) / PAGE + 1).min(pages) };
        (first, end)
    };
    // Mappings: (file offset, length) by map number.
    let mut maps: std::collections::BTreeMap<u32, (u32, u64, u64)> = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for (op, o) in ops.iter().enumerate() {
        let (fd, offset, len, kind) = match *o {
            Op::Fadvise { fd, offset, len, advice: Advice::Willneed } => (fd, offset, len, "willneed"),
            Op::Readahead { fd, offset, len } => (fd, offset, len, "readahead(2)"),
            Op::Mmap { map, fd, offset, len, .. } => {
                maps.insert(map, (fd, offset, len));
                continue;
            }
            Op::Madvise { map, offset, len, advice: MadvAdvice::Willneed } => {
                let Some(&(fd, at, maplen)) = maps.get(&map) else { continue };
                let maplen = if maplen == 0 { file_size.saturating_sub(at) } else { maplen };
                let len = if len == 0 { maplen.saturating_sub(offset) } else { len.min(maplen.saturating_sub(offset)) };
                if len == 0 {
                    continue;
                }
                (fd, at + offset, len, "madv-willneed")
            }
            _ => continue,
        };
        let (first, end) = range(offset, len);
        if first < end {
            out.push(Hint { op, file: (file_base(fd) / FILE_STRIDE) as u32, first, end, kind });
        }
    }
    out
}

/// What one hint did in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Effect {
    /// Pages of the hint's range not cached before it.
    asked: u64,
    /// Pages it added of them.
    read: u64,
    /// Pages its submits covered (what force_page_cache_ra() let it read).
    submitted: u64,
}

/// The `page_cache_ra_unbounded` submits a hint can have made: no lookahead, and not the
/// one a sync window's read made for itself (the window's first submit at its own index:
/// a random or FMODE_RANDOM read). (window, submit, first page, pages), in trace order.
fn hint_submits(trace: &Trace) -> Vec<(usize, usize, u64, u64)> {
    let mut out = Vec::new();
    for (wi, w) in trace.windows.iter().enumerate() {
        for (si, s) in w.submits.iter().enumerate() {
            if let Submit::Unbounded { index, nr_to_read, lookahead_size: 0 } = *s {
                if si == 0 && w.trigger == Trigger::Sync && index == w.index {
                    continue;
                }
                out.push((wi, si, index, nr_to_read));
            }
        }
    }
    out
}

/// Pages of `[first, end)` inside the (sorted, possibly overlapping) ranges.
fn covered(ranges: &mut [(u64, u64)], first: u64, end: u64) -> u64 {
    ranges.sort_unstable();
    let mut total = 0;
    let mut upto = first;
    for &(a, b) in ranges.iter() {
        let (a, b) = (a.max(upto), b.min(end));
        if a < b {
            total += b - a;
            upto = b;
        }
    }
    total
}

/// What each hint of `hints` did in `trace` (`None`: none of its submits was found).
fn effects(trace: &Trace, hints: &[Hint]) -> Vec<Option<Effect>> {
    let subs = hint_submits(trace);
    let mut next = 0;
    let mut out = Vec::new();
    for h in hints {
        let Some(k) = (next..subs.len()).find(|&k| subs[k].2 == h.first) else {
            out.push(None);
            continue;
        };
        let w0 = subs[k].0;
        // The windows the hint's events can be in: its first submit's, and the Start windows
        // after it, up to the next read or fault.
        let w_end = (w0 + 1..trace.windows.len())
            .find(|&i| trace.windows[i].trigger != Trigger::Start)
            .unwrap_or(trace.windows.len());
        // Its chunks (and the pieces of a split mapping): contiguous submits in those windows.
        let mut ranges = vec![(subs[k].2, subs[k].2 + subs[k].3)];
        next = k + 1;
        while next < subs.len()
            && subs[next].0 < w_end
            && subs[next].2 == ranges.last().expect("one").1
            && subs[next].2 < h.end
        {
            ranges.push((subs[next].2, subs[next].2 + subs[next].3));
            next += 1;
        }
        let folios = |ws: &[radiff_model::Window]| -> Vec<(u64, u64)> {
            ws.iter()
                .filter(|w| w.file == h.file)
                .flat_map(|w| w.folios.iter().map(|f| (f.index, f.index + f.pages())))
                .collect()
        };
        // Cached before: what the windows before added, and what the hint's windows added
        // outside its submits (the read before it, in the same window).
        let in_hint = |f: &(u64, u64)| ranges.iter().any(|&(a, b)| f.0 < b && a < f.1);
        let (added, earlier): (Vec<_>, Vec<_>) = folios(&trace.windows[w0..w_end]).into_iter().partition(in_hint);
        let mut before = folios(&trace.windows[..w0]);
        before.extend(earlier);
        let asked = (h.end - h.first) - covered(&mut before, h.first, h.end);
        let mut read = 0;
        for &(a, b) in &ranges {
            read += covered(&mut added.clone(), a.max(h.first), b.min(h.end));
        }
        let submitted = ranges.iter().map(|(a, b)| b.min(&h.end).saturating_sub(*a)).sum();
        out.push(Some(Effect { asked, read: read.min(asked), submitted }));
    }
    out
}

/// Hint shortfall: a hint over at least `hint_min_pages` pages not in the cache that added
/// fewer than `hint_read_share` of them before the next access. The strongest is the one
/// that read the smallest share (then asked the most).
pub fn hint_shortfall(trace: &Trace, ctx: &Context, t: &Thresholds) -> Option<Hit> {
    let hints = hints(ctx.ops, ctx.file_size);
    if hints.is_empty() {
        return None;
    }
    let (share, min_pages) = (t.get("hint_read_share"), t.count("hint_min_pages"));
    let mut best: Option<(f64, u64, Hint, Effect)> = None;
    for (h, e) in hints.iter().zip(effects(trace, &hints)) {
        let Some(e) = e else { continue };
        if e.asked < min_pages.max(1) || e.read as f64 >= share * e.asked as f64 {
            continue;
        }
        let strength = 1.0 - e.read as f64 / e.asked as f64;
        if best.as_ref().is_none_or(|b| (strength, e.asked) > (b.0, b.1)) {
            best = Some((strength, e.asked, *h, e));
        }
    }
    let (strength, _, h, e) = best?;
    let io_pages = ctx.max_sectors_kb / 4;
    Some(Hit {
        detector: "hint-shortfall",
        change: None,
        key: format!("{} read under 1/{} of it", h.kind, pow2_floor(e.asked / e.read.max(1)).max(1)),
        strength,
        detail: format!(
            "{} over pages [{}, {}) of file {} ({} of them not cached) read {} of them ({:.1} %; its submits covered {} pages) before the next access; io_pages {io_pages}, ra_pages {}",
            h.kind,
            h.first,
            h.end,
            h.file,
            e.asked,
            e.read,
            e.read as f64 * 100.0 / e.asked as f64,
            e.submitted,
            ctx.ra_pages
        ),
    })
}
