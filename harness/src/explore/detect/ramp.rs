//! Lost ramp: a sequential stream whose window or folio order falls back to where the
//! stream began, in its middle, with no cached pages to explain it.
//!
//! In a stream the readahead window ramps up (mm/readahead.c `get_next_ra_size()`) and so
//! does the folio order (`page_cache_async_ra()`: "ra->order += 2"); a sync miss starts
//! over ("ra->order = 0" at `readit:` of `page_cache_sync_ra()`, an initial window from
//! `get_init_ra_size()`). Starting over is expected where the stream reached pages
//! something else cached (a hint, another stream): the window after such pages, or one
//! that found some of its pages cached, does not count.

use radiff_model::{Op, Trace, Trigger, Window};

use super::{file_base, in_file, submitted, Context, Hit, Stream, Thresholds, FILE_STRIDE, PAGE};

/// The windows `stream`'s own reads opened, in trace order: from the first window at its
/// first read, those in its range that a read of it made. A read's sync and async calls
/// ask for the pages up to its end (filemap_get_pages(): "last_index - index"), so a
/// window whose `index + req_count` is not where one of the stream's reads ends was
/// opened by another read of the same pages (a random read before the stream). Touches
/// (one page each) keep every window in range.
fn stream_windows(trace: &Trace, ops: &[Op], stream: &Stream) -> Vec<usize> {
    // Sorted, each once: a set, searched by bisection.
    let mut ends: Vec<u64> = ops
        .iter()
        .filter_map(|op| match *op {
            Op::Read { fd, offset, len } => Some((file_base(fd) + offset, file_base(fd) + offset + len)),
            _ => None,
        })
        .filter(|&(a, b)| stream.start <= a && b <= stream.end)
        .map(|(_, b)| b.div_ceil(PAGE))
        .collect();
    ends.sort_unstable();
    ends.dedup();
    let touches = ends.is_empty();
    let file_pages = |w: &Window| w.file as u64 * (FILE_STRIDE / PAGE);
    let first_end = ends.first().copied().unwrap_or(stream.start / PAGE + 1);
    let (a, b) = (stream.start / PAGE, stream.end.div_ceil(PAGE));
    let ws: Vec<usize> = (0..trace.windows.len())
        .filter(|&i| {
            trace.windows[i].trigger != Trigger::Start
                && (a..b).contains(&(file_pages(&trace.windows[i]) + trace.windows[i].index))
        })
        .collect();
    let Some(begin) = ws
        .iter()
        .position(|&i| (a..first_end.max(a + 1)).contains(&(file_pages(&trace.windows[i]) + trace.windows[i].index)))
    else {
        return Vec::new();
    };
    ws[begin..]
        .iter()
        .copied()
        .filter(|&i| {
            let w = &trace.windows[i];
            touches
                || !matches!(w.trigger, Trigger::Sync | Trigger::Async)
                || ends.binary_search(&(file_pages(w) + w.index + w.req_count)).is_ok()
        })
        .collect()
}

/// One window of a stream as the detector sees it.
#[derive(Clone, Copy, Debug)]
struct RampStep {
    index: u64,
    size: u64,
    /// The largest folio order it added (`None`: it added none).
    order: Option<u32>,
    /// Pages it added.
    added: u64,
    trigger: Trigger,
    /// Its place in the trace.
    at: usize,
}

/// The folios that windows other than a stream's own (`own`, sorted) cached in its file,
/// gathered in trace order as far as the detector has gone: a stream's steps ask in trace
/// order, so the trace is read once a stream, not once a step.
struct Foreign<'a> {
    trace: &'a Trace,
    own: &'a [usize],
    file: u32,
    /// Windows before this trace position are gathered.
    scanned: usize,
    /// Each folio index gathered, with the most pages a folio there had.
    folios: std::collections::BTreeMap<u64, u64>,
    /// The most pages of any folio gathered: how far before a range a folio can start and
    /// still reach into it.
    widest: u64,
}

impl<'a> Foreign<'a> {
    fn new(trace: &'a Trace, own: &'a [usize], file: u32) -> Foreign<'a> {
        Foreign { trace, own, file, scanned: 0, folios: Default::default(), widest: 0 }
    }

    /// Whether a window other than the stream's own cached pages of the file in
    /// `[from, to)` before trace position `before` (which never goes back between calls):
    /// the stream met them.
    fn cached(&mut self, before: usize, from: u64, to: u64) -> bool {
        debug_assert!(before >= self.scanned, "asked in trace order");
        while self.scanned < before {
            let i = self.scanned;
            self.scanned += 1;
            let w = &self.trace.windows[i];
            if w.file != self.file || self.own.binary_search(&i).is_ok() {
                continue;
            }
            for f in &w.folios {
                let pages = self.folios.entry(f.index).or_insert(0);
                *pages = (*pages).max(f.pages());
                self.widest = self.widest.max(f.pages());
            }
        }
        self.folios.range(from.saturating_sub(self.widest)..to).any(|(&index, &pages)| from < index + pages)
    }
}

/// Lost ramp: in a sequential stream, after a window of at least `ramp_ratio` times the
/// first window's pages (or a folio order `log2(ramp_ratio)` above its order), a window
/// back at the first window's size (or order), fired `ramp_min_drops` times; the stream's
/// last window, windows reaching the end of the file or the stream, and windows at cached
/// pages (a gap after the window before, or pages of its own already cached) do not
/// count. The strongest stream is the one with the most drops per window.
pub fn lost_ramp(trace: &Trace, ctx: &Context, t: &Thresholds) -> Option<Hit> {
    let (ratio, min_drops) = (t.get("ramp_ratio"), t.count("ramp_min_drops").max(1));
    let order_gain = ratio.max(1.0).log2().ceil() as u32;
    let file_pages = ctx.file_size.div_ceil(PAGE);
    let mut best: Option<Hit> = None;
    for &stream in ctx.streams(t).iter() {
        let stream_end = stream.end.div_ceil(PAGE) % (super::FILE_STRIDE / PAGE);
        let own = stream_windows(trace, ctx.ops, &stream);
        let file = (stream.start / FILE_STRIDE) as u32;
        let mut foreign = Foreign::new(trace, &own, file);
        let steps: Vec<RampStep> = own
            .iter()
            .filter_map(|&at| {
                let w = &trace.windows[at];
                let (index, size) = submitted(w)?;
                Some(RampStep {
                    index,
                    size,
                    order: w.folios.iter().map(|f| f.order).max(),
                    added: w.folios.iter().map(|f| f.pages()).sum(),
                    trigger: w.trigger,
                    at,
                })
            })
            .collect();
        if steps.len() < 3 {
            continue;
        }
        let first = steps[0];
        let (mut peak_size, mut peak_order) = (first.size, first.order.unwrap_or(0));
        let mut end = first.index + first.size;
        let mut after_cached = first.added < first.size;
        let mut drops = 0u64;
        let mut example: Option<(RampStep, u64, u32)> = None;
        for (k, s) in steps.iter().enumerate().skip(1) {
            let cached = s.added < s.size.min(file_pages.saturating_sub(s.index));
            let gap = s.index > end;
            let middle = k + 1 < steps.len() && s.index + s.size < file_pages.min(stream_end);
            let size_drop = peak_size as f64 >= ratio * first.size as f64 && s.size <= first.size;
            let order_drop =
                s.order.is_some_and(|o| first.order.is_some_and(|f| peak_order >= f + order_gain && o <= f));
            if middle
                && !cached
                && !gap
                && !after_cached
                && (size_drop || order_drop)
                && !foreign.cached(s.at, s.index.saturating_sub(s.size.max(peak_size)), s.index + s.size)
            {
                drops += 1;
                example.get_or_insert((*s, peak_size, peak_order));
            }
            peak_size = peak_size.max(s.size);
            peak_order = peak_order.max(s.order.unwrap_or(0));
            end = end.max(s.index + s.size);
            after_cached = cached || gap;
        }
        if drops < min_drops {
            continue;
        }
        let (s, peak, peak_o) = example.expect("a drop");
        let strength = drops as f64 / steps.len() as f64;
        if best.as_ref().is_none_or(|b| strength > b.strength) {
            let what = if s.size <= first.size { "size" } else { "order" };
            best = Some(Hit {
                detector: "lost-ramp",
                change: None,
                key: format!("{what} back to the start at a {} window", trigger_name(s.trigger)),
                strength,
                detail: format!(
                    "a sequential stream over [{}, {}) of {} reads ramped to {peak} pages (folio order {peak_o}) from a first window of {} pages (order {}) and fell back {drops} times in its middle, first at page {} ({} window of {} pages, order {})",
                    in_file(&stream).0,
                    in_file(&stream).1,
                    stream.reads,
                    first.size,
                    first.order.unwrap_or(0),
                    s.index,
                    trigger_name(s.trigger),
                    s.size,
                    s.order.unwrap_or(0)
                ),
            });
        }
    }
    best
}

fn trigger_name(t: Trigger) -> &'static str {
    match t {
        Trigger::Sync => "sync",
        Trigger::Async => "async",
        Trigger::Fault => "fault",
        Trigger::FaultAround => "fault-around",
        Trigger::Start => "start",
        Trigger::Collapse(_) => "collapse",
    }
}
