//! The questions readahead reviewers ask of every patch, as detectors over trace data: a
//! window or a request over its limit ("will the window exceed read_ahead_kb?"), random
//! reads amplified ("will random reads regress?"), folio orders that drop ("how did the
//! folio orders change?"), a hint that changes nothing or resets the stream ("what if the
//! file was marked FMODE_RANDOM before?", "does a WILLNEED in the middle of a stream destroy
//! the readahead state?"). Pure: traces, figures and limits in, what fired out; the reply
//! names each by its question ([`Fired::sentence`]). Nothing here reads text.

use std::collections::BTreeSet;

use radiff_model::pattern::{Advice, MadvAdvice, Op};
use radiff_model::{Step, Submit, Trace, Trigger};

use crate::explore::detect::requests_or_folios_differ;

use crate::summary::{kib, Figures};

const PAGE: u64 = radiff_model::trace::PAGE_SIZE;

/// HPAGE_PMD_ORDER on x86_64: a VM_HUGEPAGE fault reads a PMD's worth whatever
/// read_ahead_kb says (do_sync_mmap_readahead()), and page_cache_async_ra() keeps that size
/// after it (`ra->size = max(ra->size, get_next_ra_size())`, "the actual size might exceed
/// the readahead window").
const HPAGE_PMD_ORDER: u32 = 9;

/// The limits a case ran under (its point's queue, as the guest sets them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub read_ahead_kb: u64,
    pub max_sectors_kb: u64,
}

impl Limits {
    fn ra_pages(&self) -> u64 {
        self.read_ahead_kb * 1024 / PAGE
    }

    fn io_pages(&self) -> u64 {
        self.max_sectors_kb * 1024 / PAGE
    }
}

/// What is held to a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// A readahead window (`page_cache_ra_order`'s size, `page_cache_ra_unbounded`'s
    /// nr_to_read), held to read_ahead_kb.
    Window,
    /// A device read request, held to max_sectors_kb.
    Request,
}

/// A window or request over its limit: the largest such in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Over {
    pub held: Held,
    /// Its size and the limit it exceeds, KiB.
    pub kb: u64,
    pub limit_kb: u64,
    /// The window's index in the trace (the request's window).
    pub window: usize,
    /// For a window: what the limit is when it is not read_ahead_kb.
    pub raised: Raised,
}

/// Why a window's limit is above read_ahead_kb.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raised {
    /// It is read_ahead_kb (ra_pages as the call saw it).
    No,
    /// The read's own size, up to max_sectors_kb (ractl_max_pages(), force_page_cache_ra()).
    ReadSize,
    /// A VM_HUGEPAGE fault's window: two PMDs (do_sync_mmap_readahead(): `ra->size =
    /// HPAGE_PMD_NR`, doubled without VM_RAND_READ), kept by the async windows after it.
    Hugepage,
    /// The window before it: page_cache_async_ra() keeps the previous size where it is
    /// larger than the ramp-up (`ra->size = max(ra->size, get_next_ra_size())`).
    Kept,
}

impl Over {
    /// `windows exceed read_ahead_kb: 272 KiB > 256 KiB`.
    pub fn said(&self) -> String {
        let (what, limit) = match self.held {
            Held::Window => ("windows", "read_ahead_kb"),
            Held::Request => ("requests", "max_sectors_kb"),
        };
        let raised = match self.raised {
            Raised::No => "",
            Raised::ReadSize => " (the read's own size, up to max_sectors_kb)",
            Raised::Hugepage => " (a VM_HUGEPAGE fault's window, two PMDs)",
            Raised::Kept => " (the window before it)",
        };
        format!("{what} exceed {limit}: {} KiB > {} KiB{raised}", self.kb, self.limit_kb)
    }
}

/// The size of each window's readahead, pages, with the window's index: each
/// `page_cache_ra_order` submit's size (the window the state machine chose), and each
/// `page_cache_ra_unbounded` submit's nr_to_read where no `page_cache_ra_order` came first
/// in its window (a forced read: fadvise WILLNEED, readahead(2), FMODE_RANDOM).
fn window_sizes(trace: &Trace) -> Vec<(usize, u64, bool)> {
    let mut out = Vec::new();
    for (i, w) in trace.windows.iter().enumerate() {
        let ordered = w.submits.iter().any(|s| matches!(s, Submit::Order { .. }));
        for s in &w.submits {
            match *s {
                Submit::Order { size, .. } => out.push((i, size, true)),
                Submit::Unbounded { nr_to_read, .. } if !ordered => out.push((i, nr_to_read, false)),
                Submit::Unbounded { .. } => {}
            }
        }
    }
    out
}

/// The largest readahead window of `trace`, KiB (0: none).
pub fn largest_window_kb(trace: &Trace) -> u64 {
    window_sizes(trace).iter().map(|&(_, pages, _)| pages * PAGE / 1024).max().unwrap_or(0)
}

/// The largest data read request of `trace`, KiB (0: none).
pub fn largest_request_kb(trace: &Trace) -> u64 {
    trace.requests().filter(|r| r.is_read() && !r.is_metadata()).map(|r| r.bytes() / 1024).max().unwrap_or(0)
}

/// The largest window of `trace` over what the kernel lets it be under `limits`, if any:
/// a window the readahead state machine chose (`page_cache_ra_order`) may be
/// max(ra_pages, min(req_count, io_pages)) (ractl_max_pages(); ra_pages as the call saw
/// it, which POSIX_FADV_SEQUENTIAL doubles), two PMDs once a VM_HUGEPAGE fault read them,
/// an async window the size of the one before it (the first window past its limit is the
/// one that breaks it); a
/// forced read (`page_cache_ra_unbounded` alone) max(ra_pages, io_pages)
/// (force_page_cache_ra()).
pub fn windows_over(trace: &Trace, limits: &Limits) -> Option<Over> {
    let mut hugepage = false;
    let mut worst: Option<Over> = None;
    let sizes = window_sizes(trace);
    for (i, w) in trace.windows.iter().enumerate() {
        let ra_pages = match w.trigger {
            Trigger::Sync | Trigger::Async => w.ra.ra_pages.max(limits.ra_pages()),
            _ => limits.ra_pages(),
        };
        if w.trigger == Trigger::Fault
            && w.submits.iter().any(|s| matches!(s, Submit::Order { order, .. } if *order == HPAGE_PMD_ORDER))
        {
            hugepage = true;
        }
        for &(_, pages, ordered) in sizes.iter().filter(|s| s.0 == i) {
            let raised_to = if ordered { w.req_count.min(limits.io_pages()) } else { limits.io_pages() };
            let mut allowed = ra_pages.max(raised_to);
            let mut raised = if allowed > ra_pages { Raised::ReadSize } else { Raised::No };
            if hugepage && allowed < 2 << HPAGE_PMD_ORDER {
                (allowed, raised) = (2 << HPAGE_PMD_ORDER, Raised::Hugepage);
            }
            if ordered && w.trigger == Trigger::Async && w.ra.size > allowed {
                (allowed, raised) = (w.ra.size, Raised::Kept);
            }
            let (kb, limit_kb) = (pages * PAGE / 1024, allowed * PAGE / 1024);
            if pages > allowed && worst.is_none_or(|o| kb - limit_kb > o.kb - o.limit_kb) {
                worst = Some(Over { held: Held::Window, kb, limit_kb, window: i, raised });
            }
        }
    }
    worst
}

/// The largest data read request of `trace` over max_sectors_kb, if any (the block layer
/// splits every bio to it: one over it is a bug, not a policy).
pub fn requests_over(trace: &Trace, limits: &Limits) -> Option<Over> {
    let mut worst: Option<Over> = None;
    for (i, w) in trace.windows.iter().enumerate() {
        for r in w.requests.iter().filter(|r| r.is_read() && !r.is_metadata()) {
            let kb = r.bytes() / 1024;
            if kb > limits.max_sectors_kb && worst.is_none_or(|o| kb > o.kb) {
                worst = Some(Over {
                    held: Held::Request,
                    kb,
                    limit_kb: limits.max_sectors_kb,
                    window: i,
                    raised: Raised::No,
                });
            }
        }
    }
    worst
}

/// The bytes `ops` ask to read from files of `file_sizes`: each read's length up to the end
/// of its file (an O_DIRECT read's too: the page cache is not asked), each splice's, a page
/// per touch of a mapping; `None` when a program's calls are not known.
pub fn asked_bytes(ops: &[Op], file_sizes: &[u64]) -> Option<u64> {
    let size_of = |fd: u32| file_sizes.get(radiff_model::pattern::file_of(fd) as usize).copied().unwrap_or(0);
    let mut asked = 0;
    for op in ops {
        asked += match *op {
            Op::Read { fd, offset, len } | Op::Splice { fd, offset, len, .. } => {
                len.min(size_of(fd).saturating_sub(offset))
            }
            Op::ReadWith { fd, offset, len, how } if !how.direct => len.min(size_of(fd).saturating_sub(offset)),
            Op::Touch { .. } => PAGE,
            Op::Program { .. } => return None,
            _ => 0,
        };
    }
    Some(asked)
}

/// Bytes the device read per byte the calls asked (`None`: nothing asked, or unknown).
pub fn amplification(trace: &Trace, asked: Option<u64>) -> Option<f64> {
    let asked = asked.filter(|&a| a > 0)?;
    Some(Figures::of(trace).bytes_read as f64 / asked as f64)
}

/// Random reads are amplified when the device reads more than this many bytes per byte
/// asked: the kernel reads a lone random read as it is (page_cache_sync_ra(): "standalone,
/// small random read"), so the base stays near 1 but for a first read at offset 0.
pub const AMPLIFIED: f64 = 2.0;

/// The amplification of random reads on `trace` when over [`AMPLIFIED`].
pub fn random_amplified(trace: &Trace, asked: Option<u64>) -> Option<f64> {
    amplification(trace, asked).filter(|&a| a > AMPLIFIED)
}

/// Folio orders that drop from base to patch: the largest order falls, or the pages per
/// folio fall by a quarter or more.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrderDrop {
    pub base_top: u32,
    pub patch_top: u32,
    pub base_pages: f64,
    pub patch_pages: f64,
}

impl OrderDrop {
    /// `folio orders drop: largest o4 -> o2, 16.0 -> 4.0 pages per folio` (the largest
    /// order where it fell).
    pub fn said(&self) -> String {
        let top = if self.patch_top < self.base_top {
            format!("largest o{} -> o{}, ", self.base_top, self.patch_top)
        } else {
            String::new()
        };
        format!("folio orders drop: {top}{:.1} -> {:.1} pages per folio", self.base_pages, self.patch_pages)
    }
}

/// Pages per folio of `f` (0 without folios).
pub fn pages_per_folio(f: &Figures) -> f64 {
    if f.folios == 0 {
        return 0.0;
    }
    f.folio_orders.iter().map(|(o, n)| n << o).sum::<u64>() as f64 / f.folios as f64
}

/// Whether the folio orders drop from `base` to `patch` (both with folios).
pub fn order_drop(base: &Figures, patch: &Figures) -> Option<OrderDrop> {
    let top = |f: &Figures| f.folio_orders.keys().next_back().copied();
    let (base_top, patch_top) = (top(base)?, top(patch)?);
    let d = OrderDrop { base_top, patch_top, base_pages: pages_per_folio(base), patch_pages: pages_per_folio(patch) };
    (patch_top < base_top || d.patch_pages <= 0.75 * d.base_pages).then_some(d)
}

/// Whether fadvise `advice` is a readahead hint (all but POSIX_FADV_DONTNEED, which drops
/// pages rather than advising).
pub fn hint_advice(advice: Advice) -> bool {
    advice != Advice::Dontneed
}

/// Whether madvise `advice` says how a mapping is read (NORMAL, RANDOM, SEQUENTIAL,
/// WILLNEED, HUGEPAGE, NOHUGEPAGE), not what to do to it (POPULATE_READ, COLLAPSE, ...).
pub fn hint_madvice(advice: MadvAdvice) -> bool {
    matches!(
        advice,
        MadvAdvice::Normal
            | MadvAdvice::Random
            | MadvAdvice::Sequential
            | MadvAdvice::Willneed
            | MadvAdvice::Hugepage
            | MadvAdvice::Nohugepage
    )
}

/// `ops` without their readahead hints (fadvise but DONTNEED, readahead(2), madvise's
/// [`hint_madvice`]); `None` where there is none.
pub fn without_hints(ops: &[Op]) -> Option<Vec<Op>> {
    let hint = |op: &Op| match *op {
        Op::Fadvise { advice, .. } => hint_advice(advice),
        Op::Readahead { .. } => true,
        Op::Madvise { advice, .. } => hint_madvice(advice),
        _ => false,
    };
    ops.iter().any(hint).then(|| ops.iter().filter(|o| !hint(o)).cloned().collect())
}

/// Whether a scenario's step is a readahead hint, as [`without_hints`] leaves out its op.
pub fn is_hint_step(step: &Step) -> bool {
    match *step {
        Step::Fadvise { advice, .. } => hint_advice(advice),
        Step::Readahead { .. } => true,
        Step::Madvise { advice, .. } => hint_madvice(advice),
        _ => false,
    }
}

/// One kernel's traces of a case: as it ran, with its hints, and with them left out.
#[derive(Clone, Copy, Debug)]
pub struct Hinted<'a> {
    pub with: &'a Trace,
    pub without: &'a Trace,
}

impl Hinted<'_> {
    /// Whether the hints change the device's requests or the folios.
    fn matter(&self) -> bool {
        requests_or_folios_differ(self.with, self.without)
    }

    /// Calls that found the readahead state emptied ([`restarts`]) with the hints, less
    /// those without them.
    fn resets(&self) -> i64 {
        restarts(self.with) as i64 - restarts(self.without) as i64
    }
}

/// The hints change nothing on the patch (the same requests and folios with them as
/// without) where on base they change something: `hints change nothing: ...`.
pub fn hints_ignored(base: Hinted, patch: Hinted) -> Option<String> {
    if !base.matter() || patch.matter() {
        return None;
    }
    let (with, without) = (Figures::of(base.with), Figures::of(base.without));
    Some(format!(
        "hints change nothing: the same requests and folios with them as without (base: device reads {} -> {}, folios {} -> {}, without -> with)",
        without.data_reads, with.data_reads, without.folios, with.folios
    ))
}

/// Readahead calls (page_cache_sync_ra(), page_cache_async_ra()) that found their file's
/// `file_ra_state` as a fresh open leaves it (no window, or `prev_pos` -1) after an earlier
/// call on that file had found a window: a stream that lost its state.
pub fn restarts(t: &Trace) -> usize {
    let mut had = BTreeSet::new();
    let mut n = 0;
    for w in t.windows.iter().filter(|w| matches!(w.trigger, Trigger::Sync | Trigger::Async)) {
        if w.ra.size == 0 || w.ra.prev_pos == -1 {
            n += usize::from(had.contains(&w.file));
        } else {
            had.insert(w.file);
        }
    }
    n
}

/// The hints empty the readahead state on the patch more often than on base (calls that
/// found it fresh mid-stream, with the hints less without them): `hints reset the stream:
/// ...`.
pub fn hints_reset(base: Hinted, patch: Hinted) -> Option<String> {
    let (b, p) = (base.resets().max(0), patch.resets());
    (p > b).then(|| {
        format!(
            "hints reset the stream: {p} readahead call{} found the file's readahead state emptied after them (base: {b})",
            if p == 1 { "" } else { "s" }
        )
    })
}

/// One detector that fired on a case: its question's sentence, by name, with the figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Fired {
    pub case: String,
    /// `windows exceed read_ahead_kb: 272 KiB > 256 KiB`.
    pub said: String,
    /// Whether base shows it too (then it is the base's, not the patch's).
    pub on_base: bool,
}

impl Fired {
    /// `windows exceed read_ahead_kb: 272 KiB > 256 KiB in CASE`, and where the base shows
    /// it too, so.
    pub fn sentence(&self) -> String {
        let base = if self.on_base { " (base too)" } else { "" };
        format!("{} in {}{base}", self.said, self.case)
    }
}

/// Amounts in a sentence: KiB below a MiB, else MiB with one decimal.
pub fn size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        kib(bytes)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
