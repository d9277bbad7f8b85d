//! Comparing traces: normalising the kernel's trace to what the model predicts, finding
//! the first window where two traces part, and rendering that divergence for a reviewer.
//!
//! Pure. A divergence is data ([`Divergence`]); [`render`] is the one place that turns it
//! into text.

use std::fmt::Write;

use radiff_model::{Extent, RaState, Request, Trace, Window};
use similar::{ChangeTag, TextDiff};

use crate::summary::{window_line, Figures};

/// One normalisation step: a name (shown in reports, so nothing is dropped silently) and
/// what it does to a trace, returning how many things it removed.
pub struct Normalisation {
    pub name: &'static str,
    /// Applied to a trace of the file whose extents are given.
    pub apply: fn(&mut Trace, &[Extent]) -> u64,
}

/// The steps applied to the kernel's trace before it is compared with the model's, in
/// order. New steps go at the end, so that old snapshots keep passing.
pub const NORMALISATIONS: &[Normalisation] = &[
    Normalisation { name: "drop metadata reads (REQ_META): the file system's own reads, which the model does not predict", apply: drop_metadata_reads },
    Normalisation { name: "drop requests that are not reads (log writes, flushes)", apply: drop_non_reads },
    Normalisation {
        name: "drop reads outside the file's extents: the file system's own blocks read without REQ_META (f2fs's node pages)",
        apply: drop_reads_outside_file,
    },
    Normalisation { name: "drop a start window (events before the first readahead call) left empty", apply: drop_empty_start },
];

fn drop_reads_outside_file(trace: &mut Trace, extents: &[Extent]) -> u64 {
    if extents.is_empty() {
        return 0;
    }
    retain_requests(trace, |r| {
        let (start, end) =
            (r.sector * radiff_model::trace::SECTOR_SIZE, (r.sector + r.sectors) * radiff_model::trace::SECTOR_SIZE);
        extents.iter().any(|e| start < e.physical + e.length && e.physical < end)
    })
}

fn drop_empty_start(trace: &mut Trace, _: &[Extent]) -> u64 {
    let empty = trace.windows.first().is_some_and(|w| {
        w.trigger == radiff_model::Trigger::Start
            && w.submits.is_empty()
            && w.folios.is_empty()
            && w.requests.is_empty()
    });
    if empty {
        trace.windows.remove(0);
    }
    empty as u64
}

fn drop_metadata_reads(trace: &mut Trace, _: &[Extent]) -> u64 {
    retain_requests(trace, |r| !(r.is_read() && r.is_metadata()))
}

fn drop_non_reads(trace: &mut Trace, _: &[Extent]) -> u64 {
    retain_requests(trace, |r| r.is_read())
}

fn retain_requests(trace: &mut Trace, keep: impl Fn(&radiff_model::Request) -> bool) -> u64 {
    let mut dropped = 0;
    for w in &mut trace.windows {
        let before = w.requests.len();
        w.requests.retain(&keep);
        dropped += (before - w.requests.len()) as u64;
    }
    dropped
}

/// The snapshot's one normalisation beyond [`NORMALISATIONS`], named where it is applied: where a
/// request's size is bound by its segments, adjacent requests are merged, because where
/// they split depends on where the guest's allocator put the pages. The model check does
/// not need it (the model is given the folios' page frames).
pub const SNAPSHOT_MERGE: &str = "adjacent requests merged: with max_segments x 4 KiB below max_sectors_kb, where requests split depends on where the guest's allocator put the pages";

/// The kernel's trace as its snapshot keeps it under queue limits `q`, and the name of the
/// step applied ([`SNAPSHOT_MERGE`]) when one was.
pub fn normalise_for_snapshot(trace: &Trace, q: &radiff_model::QueueLimits) -> (Trace, Option<&'static str>) {
    if segments_bind(q) {
        (merge_adjacent_requests(trace), Some(SNAPSHOT_MERGE))
    } else {
        (trace.clone(), None)
    }
}

/// True when a request's page count is limited by its segments rather than its size, so
/// that its boundaries depend on which pages happen to be physically adjacent.
fn segments_bind(q: &radiff_model::QueueLimits) -> bool {
    q.max_segments * radiff_model::trace::PAGE_SIZE < q.max_sectors_kb * 1024
}

/// The trace with each window's runs of back-to-back requests (same flags) made one.
fn merge_adjacent_requests(trace: &Trace) -> Trace {
    let mut t = trace.clone();
    for w in &mut t.windows {
        let mut merged: Vec<Request> = Vec::new();
        for r in w.requests.drain(..) {
            match merged.last_mut() {
                Some(last) if last.rwbs == r.rwbs && last.sector + last.sectors == r.sector => {
                    last.sectors += r.sectors
                }
                _ => merged.push(r),
            }
        }
        w.requests = merged;
    }
    t
}

/// `trace` as a kernel without the readahead tracepoints records it
/// ([`crate::kernels::Tracing::Flat`], [`crate::ftrace::Capture::windowless`]): each
/// `Sync`/`Async` window gone, its folios and requests at the end of the window before it
/// (a `Start` window when none is), and no submission (`page_cache_ra_order` and
/// `page_cache_ra_unbounded` are readahead tracepoints too). The faults, fault-around and
/// collapses keep their windows, as that kernel traces them.
pub fn as_untraced(trace: &Trace) -> Trace {
    let mut windows: Vec<radiff_model::Window> = Vec::with_capacity(trace.windows.len());
    for w in &trace.windows {
        let readahead = matches!(w.trigger, radiff_model::Trigger::Sync | radiff_model::Trigger::Async);
        if !readahead {
            let mut kept = w.clone();
            kept.submits.clear();
            windows.push(kept);
            continue;
        }
        if windows.is_empty() {
            windows.push(radiff_model::Window::open(radiff_model::Trigger::Start, 0, 0, Default::default()));
        }
        let last = windows.last_mut().expect("pushed above");
        last.folios.extend(w.folios.iter().copied());
        last.requests.extend(w.requests.iter().cloned());
    }
    Trace { windows }
}

/// Applies every step to the trace of the file with `extents`; returns the normalised
/// trace and (step, count removed) for each step that removed something.
pub fn normalise(trace: &Trace, extents: &[Extent]) -> (Trace, Vec<(&'static str, u64)>) {
    let mut t = trace.clone();
    let mut applied = Vec::new();
    for step in NORMALISATIONS {
        let n = (step.apply)(&mut t, extents);
        if n > 0 {
            applied.push((step.name, n));
        }
    }
    (t, applied)
}

/// What differs in the first window where two traces part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The device requests differ: fails the trial.
    Requests,
    /// The folios (indices or orders) differ: fails the trial.
    Folios,
    /// A fault or fault-around window differs in kind, page or range (the page-fault path
    /// took another fault than the model's): fails the trial. Only for windows opened by
    /// `mm_filemap_fault` or `mm_filemap_map_pages`, on either side.
    Faults,
    /// A MADV_COLLAPSE ended otherwise (`mm_khugepaged_collapse_file`: another result or
    /// index, or on one side only): fails the trial.
    Collapse,
    /// One trace has more windows than the other.
    WindowCount,
    /// Only window fields (trigger, index, req_count, ra state, submissions) differ, while
    /// device reads and folios agree: fails the trial too (the model ports the decisions,
    /// not only their I/O; `known_divergence` is the only way to pass).
    WindowFields,
}

/// Where and how two traces part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the first window that differs.
    pub window: usize,
    pub part: Part,
    pub kernel: Trace,
    pub model: Trace,
}

/// The first place where the kernel's (normalised) trace and the model's differ in device
/// requests or folios; failing that, the first window whose other fields differ.
pub fn compare(kernel: &Trace, model: &Trace) -> Option<Divergence> {
    let n = kernel.windows.len().min(model.windows.len());
    let mut soft = None;
    for i in 0..n {
        let (k, m) = (&kernel.windows[i], &model.windows[i]);
        let part = if k.requests != m.requests {
            Some(Part::Requests)
        } else if k.folios != m.folios {
            Some(Part::Folios)
        } else if (is_fault(k) || is_fault(m)) && (k.trigger, k.index, k.req_count) != (m.trigger, m.index, m.req_count)
        {
            Some(Part::Faults)
        } else if (is_collapse(k) || is_collapse(m))
            && (k.trigger, k.index, k.req_count) != (m.trigger, m.index, m.req_count)
        {
            Some(Part::Collapse)
        } else if k != m {
            soft = soft.or(Some(i));
            None
        } else {
            None
        };
        if let Some(part) = part {
            return Some(Divergence { window: i, part, kernel: kernel.clone(), model: model.clone() });
        }
    }
    if kernel.windows.len() != model.windows.len() {
        return Some(Divergence { window: n, part: Part::WindowCount, kernel: kernel.clone(), model: model.clone() });
    }
    soft.map(|i| Divergence { window: i, part: Part::WindowFields, kernel: kernel.clone(), model: model.clone() })
}

/// A window whose `ra.prev_pos` alone differs from the model's, in a window
/// [`crate::model_check::timed_windows`] marks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timed {
    pub window: usize,
    pub kernel: i64,
    pub model: i64,
}

/// [`compare`], where a window that [`crate::model_check::timed_windows`] marks (`timed[i]`) passes when only
/// its `ra.prev_pos` differs from the model's. Returns the divergence left, if any, and
/// the windows that passed that way, for the report.
pub fn compare_timed(kernel: &Trace, model: &Trace, timed: &[bool]) -> (Option<Divergence>, Vec<Timed>) {
    let d = compare(kernel, model);
    if !matches!(d, Some(Divergence { part: Part::WindowFields, .. })) {
        return (d, Vec::new());
    }
    let mut taken = Vec::new();
    for (i, (k, m)) in kernel.windows.iter().zip(&model.windows).enumerate() {
        if k == m {
            continue;
        }
        let only_prev_pos = Window { ra: RaState { prev_pos: m.ra.prev_pos, ..k.ra }, ..k.clone() } == *m;
        if !only_prev_pos || !timed.get(i).copied().unwrap_or(false) {
            return (
                Some(Divergence { window: i, part: Part::WindowFields, kernel: kernel.clone(), model: model.clone() }),
                taken,
            );
        }
        taken.push(Timed { window: i, kernel: k.ra.prev_pos, model: m.ra.prev_pos });
    }
    (None, taken)
}

/// A shape the model marks (a coverage id) where the kernel races, so that no run of it
/// is exact: what happens there, and how to write the scenario without it.
#[derive(Debug)]
pub struct RaceMark {
    pub id: &'static str,
    pub why: &'static str,
    pub avoid: &'static str,
}

/// Every race the model marks.
pub const RACE_MARKS: [RaceMark; 4] = [
    RaceMark {
        id: radiff_model::collapse::COLLAPSE_RACE,
        why: "a MADV_COLLAPSE here reads a window of several requests (pages already cached, or an extent boundary, inside the range split it): \
              the kernel's collapse then meets a request still in flight (SCAN_PAGE_LOCK) or not",
        avoid: "collapse a range nothing has read yet, or read it whole first (docs/scenarios.md, MADV_COLLAPSE)",
    },
    RaceMark {
        id: radiff_model::fault::FAULT_RACE,
        why: "a fault here sleeps on its own request while another request of the reads in flight holds a folio its fault-around then looks at: \
              the kernel's fault-around maps that folio or skips it (and a later touch faults)",
        avoid: "fault on a range nothing has read yet, or read it whole first (docs/scenarios.md, \"What a step starts completes before the next one\")",
    },
    RaceMark {
        id: radiff_model::fault::LOAD_RACE,
        why: "a program's load faulted here while a read it had started (the block requests the guest recorded in flight) held a folio the fault looks at: \
              the kernel's fault met that folio locked (and waited, or fault-around skipped it) or not, as the device finished",
        avoid: "give the device time between loads (fio's `thinktime`, a sleep), so that each fault finds the reads before it completed (docs/scenarios.md, Programs)",
    },
    RaceMark {
        id: radiff_model::filemap::NOWAIT_RACE,
        why: "an RWF_NOWAIT read here returned other than the model can follow: it stopped at a folio the model had complete (a read the guest's \
              wait for an idle device should have finished), or read past where the model must stop",
        avoid: "start each NOWAIT read on pages cached or just submitted by its own readahead (docs/scenarios.md, \"preadv2 flags and O_DIRECT reads\")",
    },
];

/// The races `coverage` (the model's, of one run) marks.
pub fn races_marked(coverage: &radiff_model::Coverage) -> impl Iterator<Item = &'static RaceMark> + '_ {
    RACE_MARKS.iter().filter(|m| coverage.contains(m.id))
}

fn is_collapse(w: &Window) -> bool {
    matches!(w.trigger, radiff_model::Trigger::Collapse(_))
}

fn is_fault(w: &Window) -> bool {
    matches!(w.trigger, radiff_model::Trigger::Fault | radiff_model::Trigger::FaultAround)
}

/// Windows of context shown before the first divergent one.
pub const CONTEXT_BEFORE: usize = 3;
/// Windows shown from the divergent one on.
pub const CONTEXT_AFTER: usize = 6;

/// The divergence as a reviewer reads it: what parted, a diff of the windows around it
/// (kernel `-`, model `+`), the totals on both sides and the command that reruns it.
pub fn render(d: &Divergence, title: &str, rerun: &str) -> String {
    render_between(d, title, rerun, ("kernel", "model"))
}

/// [`render`] with other names for the two traces (`kernel` and `model` there): the
/// first is shown with `-`, the second with `+`.
pub fn render_between(d: &Divergence, title: &str, rerun: &str, (a, b): (&str, &str)) -> String {
    let mut s = String::new();
    let what = match d.part {
        Part::Requests => "device requests differ",
        Part::Folios => "folios differ",
        Part::Faults => "faults differ (another fault page or fault-around range)",
        Part::Collapse => "a collapse ended otherwise (another result or index)",
        Part::WindowCount => "the number of windows differs",
        Part::WindowFields => "window fields differ (device requests and folios agree)",
    };
    let _ = writeln!(s, "{title}: {a} and {b} part at window {}: {what}", d.window);
    let from = d.window.saturating_sub(CONTEXT_BEFORE);
    let lines = |t: &Trace| -> String {
        t.windows
            .iter()
            .enumerate()
            .skip(from)
            .take(CONTEXT_BEFORE + CONTEXT_AFTER)
            .map(|(i, w)| format!("{i:5} {}\n", window_line(w)))
            .collect()
    };
    let (k, m) = (lines(&d.kernel), lines(&d.model));
    let _ = writeln!(s, "--- {a}\n+++ {b}");
    let diff = TextDiff::from_lines(&k, &m);
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
            ChangeTag::Equal => ' ',
        };
        let _ = write!(s, "{sign}{}", change);
        if change.missing_newline() {
            s.push('\n');
        }
    }
    if let (Some(kw), Some(mw)) = (d.kernel.windows.get(d.window), d.model.windows.get(d.window)) {
        let fields = field_differences(kw, mw);
        if !fields.is_empty() {
            let _ = writeln!(s, "window {} fields ({a} / {b}): {}", d.window, fields.join(", "));
        }
    }
    let (fk, fm) = (Figures::of(&d.kernel), Figures::of(&d.model));
    let _ = writeln!(s, "totals      {a} / {b}");
    let _ = writeln!(s, "  windows   {} / {}", fk.windows, fm.windows);
    if fk.faults_line().is_some() || fm.faults_line().is_some() {
        let none = || "0".to_string();
        let _ = writeln!(
            s,
            "  faults    {} / {}",
            fk.faults_line().unwrap_or_else(none),
            fm.faults_line().unwrap_or_else(none)
        );
    }
    let _ = writeln!(s, "  requests  {} / {}", fk.requests_line(), fm.requests_line());
    let _ = writeln!(s, "  folios    {} ({}) / {} ({})", fk.folios, fk.orders_line(), fm.folios, fm.orders_line());
    let _ = writeln!(s, "rerun: {rerun}");
    s
}

/// The fields of two windows that differ, as "name k / m".
fn field_differences(k: &Window, m: &Window) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |name: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{name} {a} / {b}"));
        }
    };
    check("trigger", format!("{:?}", k.trigger), format!("{:?}", m.trigger));
    check("index", k.index.to_string(), m.index.to_string());
    check("req_count", k.req_count.to_string(), m.req_count.to_string());
    check("ra.size", k.ra.size.to_string(), m.ra.size.to_string());
    check("ra.async_size", k.ra.async_size.to_string(), m.ra.async_size.to_string());
    check("ra.order", k.ra.order.to_string(), m.ra.order.to_string());
    check("ra.ra_pages", k.ra.ra_pages.to_string(), m.ra.ra_pages.to_string());
    check("ra.prev_pos", k.ra.prev_pos.to_string(), m.ra.prev_pos.to_string());
    check("submits", format!("{:?}", k.submits), format!("{:?}", m.submits));
    check("folios", k.folios.len().to_string(), m.folios.len().to_string());
    check("requests", k.requests.len().to_string(), m.requests.len().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::{Folio, RaState, Request, Submit, Trigger};

    fn w(index: u64, size: u64, folio_order: u32, sectors: u64, rwbs: &str) -> Window {
        Window {
            file: 0,
            trigger: Trigger::Async,
            index,
            req_count: 256,
            ra: RaState::default(),
            submits: vec![Submit::Order { index, size, async_size: size, order: folio_order }],
            folios: vec![Folio { index, order: folio_order }],
            requests: vec![Request { sector: index * 8, sectors, rwbs: rwbs.into() }],
        }
    }

    #[test]
    fn a_prev_pos_differs_only_in_the_windows_marked_timed() {
        let mut model = Trace { windows: vec![w(0, 4, 2, 32, "RA"), w(4, 4, 2, 32, "RA"), w(8, 4, 2, 32, "RA")] };
        model.windows[1].ra.prev_pos = 40960;
        let timed = [false, true, false];
        let mut kernel = model.clone();
        kernel.windows[1].ra.prev_pos = -1;
        assert_eq!(compare(&kernel, &model).map(|d| (d.window, d.part)), Some((1, Part::WindowFields)));
        assert_eq!(compare_timed(&kernel, &model, &timed), (None, vec![Timed { window: 1, kernel: -1, model: 40960 }]));
        assert_eq!(compare_timed(&kernel, &model, &[]).0.map(|d| d.window), Some(1), "nothing timed: it fails");
        // An unmarked window admits no other value.
        kernel.windows[2].ra.prev_pos = 7;
        assert_eq!(compare_timed(&kernel, &model, &timed).0.map(|d| (d.window, d.part)), Some((2, Part::WindowFields)));
        // Another field than prev_pos is never excused, nor are requests.
        let mut kernel = model.clone();
        kernel.windows[1].ra.size += 1;
        assert_eq!(compare_timed(&kernel, &model, &timed).0.map(|d| d.window), Some(1));
        let mut kernel = model.clone();
        kernel.windows[1].ra.prev_pos = -1;
        kernel.windows[0].requests[0].sectors = 8;
        assert_eq!(compare_timed(&kernel, &model, &timed).0.map(|d| (d.window, d.part)), Some((0, Part::Requests)));
    }

    #[test]
    fn adjacent_requests_merge_per_window() {
        let mut win = w(0, 16, 2, 8, "RA");
        win.requests = [(0, 1064, "RA"), (1064, 984, "RA"), (9000, 8, "R"), (2048, 8, "RA")]
            .iter()
            .map(|&(sector, sectors, rwbs)| Request { sector, sectors, rwbs: rwbs.into() })
            .collect();
        let t = Trace { windows: vec![win] };
        let m = merge_adjacent_requests(&t);
        let got: Vec<(u64, u64)> = m.windows[0].requests.iter().map(|r| (r.sector, r.sectors)).collect();
        assert_eq!(got, vec![(0, 2048), (9000, 8), (2048, 8)]);
        let ufs = radiff_model::QueueLimits { max_segments: 128, max_sectors_kb: 1024, ..Default::default() };
        let nvme = radiff_model::QueueLimits { max_segments: 129, max_sectors_kb: 512, ..Default::default() };
        assert!(segments_bind(&ufs));
        assert!(!segments_bind(&nvme));
        assert_eq!(normalise_for_snapshot(&t, &ufs), (m, Some(SNAPSHOT_MERGE)));
        assert_eq!(normalise_for_snapshot(&t, &nvme), (t.clone(), None));
    }

    #[test]
    fn normalising_drops_metadata_reads_then_writes_and_counts_them() {
        let mut t = Trace { windows: vec![w(0, 4, 2, 32, "RA"), w(4, 4, 2, 32, "RA")] };
        t.windows[0].requests.push(Request { sector: 9, sectors: 8, rwbs: "RM".into() });
        t.windows[1].requests.push(Request { sector: 7, sectors: 8, rwbs: "WS".into() });
        let (n, applied) = normalise(&t, &[]);
        assert_eq!(n.requests().count(), 2);
        assert_eq!(applied.len(), 2);
        assert_eq!(applied[0].1, 1);
        assert!(applied[0].0.starts_with("drop metadata reads"));
        assert_eq!(applied[1].1, 1);
        // An inode read before the first call leaves an empty start window, then none.
        let mut start = w(0, 4, 2, 32, "RA");
        start.trigger = radiff_model::Trigger::Start;
        start.submits.clear();
        start.folios.clear();
        start.requests = vec![Request { sector: 9, sectors: 8, rwbs: "RM".into() }];
        let with_start = Trace { windows: vec![start, w(0, 4, 2, 32, "RA")] };
        let (n, applied) = normalise(&with_start, &[]);
        assert_eq!(n, Trace { windows: vec![w(0, 4, 2, 32, "RA")] });
        assert_eq!(applied.iter().map(|a| a.1).collect::<Vec<_>>(), vec![1, 1]);
        // Before/after pair: a trace without them is left alone.
        let clean = Trace { windows: vec![w(0, 4, 2, 32, "RA")] };
        assert_eq!(normalise(&clean, &[]), (clean.clone(), vec![]));
        // A plain read of a block outside the file (an f2fs node page) goes too, once the
        // file's extents are known; reads inside them stay.
        let extents = [Extent { logical: 0, physical: 0, length: 1 << 20, flags: 0 }];
        let mut node = Trace { windows: vec![w(0, 4, 2, 32, "RA")] };
        node.windows[0].requests.push(Request { sector: 1 << 20, sectors: 8, rwbs: "R".into() });
        let (n, applied) = normalise(&node, &extents);
        assert_eq!(n, Trace { windows: vec![w(0, 4, 2, 32, "RA")] });
        assert_eq!(applied.len(), 1);
        assert!(applied[0].0.contains("outside the file's extents"));
    }

    #[test]
    fn equal_traces_do_not_diverge() {
        let t = Trace { windows: vec![w(0, 4, 2, 32, "RA"), w(4, 4, 2, 32, "RA")] };
        assert_eq!(compare(&t, &t), None);
    }

    #[test]
    fn the_first_window_with_other_requests_fails() {
        let k = Trace { windows: vec![w(0, 4, 2, 32, "RA"), w(4, 4, 2, 32, "RA"), w(8, 4, 2, 32, "RA")] };
        let mut m = k.clone();
        m.windows[1].requests[0].sectors = 16;
        m.windows[2].folios[0].order = 0;
        let d = compare(&k, &m).unwrap();
        assert_eq!((d.window, d.part), (1, Part::Requests));
        let text = render(&d, "scenario_x::base", "cargo test -- --exact scenario_x::base");
        assert!(text.contains("part at window 1: device requests differ"), "{text}");
        assert!(text.contains("-    1 async @4 req 256 | ra [4+4) async 4 order 2 | folios 1xo2 | rq 32+32"), "{text}");
        assert!(text.contains("+    1 async @4 req 256 | ra [4+4) async 4 order 2 | folios 1xo2 | rq 32+16"), "{text}");
        assert!(text.contains("rerun: cargo test -- --exact scenario_x::base"), "{text}");
    }

    #[test]
    fn two_kernels_render_under_their_own_names() {
        let a = Trace { windows: vec![w(0, 4, 2, 32, "RA"), w(4, 4, 2, 32, "RA")] };
        let mut b = a.clone();
        b.windows[1].folios[0].order = 3;
        let text = render_between(&compare(&a, &b).unwrap(), "t", "r", ("base kernel", "my-fix kernel"));
        assert!(text.starts_with("t: base kernel and my-fix kernel part at window 1: folios differ\n--- base kernel\n+++ my-fix kernel\n"), "{text}");
        assert!(text.contains("totals      base kernel / my-fix kernel"), "{text}");
        assert!(!text.contains("model"), "{text}");
    }

    #[test]
    fn folio_orders_fail_and_window_fields_alone_are_named() {
        let k = Trace { windows: vec![w(0, 4, 2, 32, "RA")] };
        let mut m = k.clone();
        m.windows[0].folios[0].order = 1;
        assert_eq!(compare(&k, &m).unwrap().part, Part::Folios);
        let mut m = k.clone();
        m.windows[0].ra.async_size = 9;
        let d = compare(&k, &m).unwrap();
        assert_eq!(d.part, Part::WindowFields);
        let text = render(&d, "t", "r");
        assert!(text.contains("window fields differ") && text.contains("ra.async_size 0 / 9"), "{text}");
    }

    #[test]
    fn untraced_the_readahead_windows_fold_into_the_window_before_and_faults_stay() {
        let fault = |index| {
            let mut f = Window::open(Trigger::Fault, index, 1, RaState::default());
            f.folios.push(Folio { index, order: 0 });
            f
        };
        let traced = Trace { windows: vec![w(0, 4, 2, 32, "RA"), fault(64), w(4, 4, 2, 32, "RA"), w(8, 4, 0, 8, "R")] };
        let flat = as_untraced(&traced);
        let triggers: Vec<Trigger> = flat.windows.iter().map(|w| w.trigger).collect();
        assert_eq!(triggers, [Trigger::Start, Trigger::Fault], "the first window's folios open a start window");
        let indices = |w: &Window| w.folios.iter().map(|f| f.index).collect::<Vec<_>>();
        assert_eq!(indices(&flat.windows[0]), [0]);
        assert_eq!(indices(&flat.windows[1]), [64, 4, 8], "after the fault, in order");
        let sectors: Vec<u64> = flat.windows[1].requests.iter().map(|r| r.sectors).collect();
        assert_eq!(sectors, [32, 8]);
        assert!(flat.windows.iter().all(|w| w.submits.is_empty()), "no readahead submission is traced");
        assert_eq!(as_untraced(&flat), flat, "a trace with no readahead window is as it was");
        // Held to an untraced kernel, another folio order still parts.
        let mut other = traced.clone();
        other.windows[3].folios[0].order = 2;
        assert!(compare(&flat, &as_untraced(&other)).is_some());
    }

    #[test]
    fn another_fault_or_fault_around_range_fails() {
        let fault = |index| Window::open(Trigger::Fault, index, 1, RaState::default());
        let around = |index, n| Window::open(Trigger::FaultAround, index, n, RaState::default());
        let k = Trace { windows: vec![fault(0), around(0, 16), fault(24)] };
        assert_eq!(compare(&k, &k), None);
        let m = Trace { windows: vec![fault(0), around(0, 16), fault(16)] };
        let d = compare(&k, &m).unwrap();
        assert_eq!((d.window, d.part), (2, Part::Faults));
        let text = render(&d, "t", "r");
        assert!(text.contains("part at window 2: faults differ"), "{text}");
        assert!(text.contains("-    2 fault @24\n+    2 fault @16\n"), "{text}");
        assert!(
            text.contains(
                "  faults    2 (1 fault-around range over 16 pages) / 2 (1 fault-around range over 16 pages)"
            ),
            "{text}"
        );
        let m = Trace { windows: vec![fault(0), around(0, 8), fault(24)] };
        assert_eq!(compare(&k, &m).unwrap().part, Part::Faults);
        // A sync window where the kernel took a fault is a fault difference too.
        let mut m = k.clone();
        m.windows[2].trigger = Trigger::Sync;
        assert_eq!(compare(&k, &m).unwrap().part, Part::Faults);
    }

    #[test]
    fn a_collapse_with_another_result_fails_at_its_window() {
        use radiff_model::ScanResult;
        let collapse = |index, r| Window::open(Trigger::Collapse(r), index, 512, RaState::default());
        let fault = |index| Window::open(Trigger::Fault, index, 1, RaState::default());
        // The kernel's trylock met a folio still under read; the model collapsed: the
        // kernel then faults where the model maps by PMD.
        let k = Trace { windows: vec![w(0, 128, 64, 1024, "RA"), collapse(128, ScanResult::PageLock), fault(0)] };
        let m = Trace { windows: vec![w(0, 128, 64, 1024, "RA"), collapse(512, ScanResult::PteMappedHugepage)] };
        assert_eq!(compare(&k, &k), None);
        let d = compare(&k, &m).unwrap();
        assert_eq!((d.window, d.part), (1, Part::Collapse));
        let text = render(&d, "t", "r");
        assert!(
            text.contains("part at window 1: a collapse ended otherwise")
                && text.contains("collapse @128 nr 512 page_locked"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_window_fails() {
        let k = Trace { windows: vec![w(0, 4, 2, 32, "RA"), w(4, 4, 2, 32, "RA")] };
        let m = Trace { windows: vec![w(0, 4, 2, 32, "RA")] };
        let d = compare(&k, &m).unwrap();
        assert_eq!((d.window, d.part), (1, Part::WindowCount));
    }

    /// A program's load whose fault the recorded reads do not settle is a race the trial
    /// names, with what to do about it.
    #[test]
    fn a_programs_load_the_record_does_not_settle_is_a_race_mark() {
        use radiff_model::{Input, LoadInFlight, Op};
        let ops = vec![
            Op::Mmap { map: 0, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: false, populate: false },
            Op::Touch { map: 0, offset: 0 },
            Op::Touch { map: 0, offset: 16 << 12 },
        ];
        let mut input = Input::xfs_on_nvme(8 << 20, ops);
        let sector = |page: u64| input.extents[0].physical / 512 + page * 8;
        // Pages 16 and 20 read by two requests in flight; 20's completed before the task's
        // next line: perhaps while the fault at 16 looked at it.
        let load = LoadInFlight {
            op: 2,
            requests: vec![(sector(16), 8), (sector(20), 8)],
            completed_after: vec![(sector(20), 8)],
        };
        input.vm.loads_in_flight = vec![load];
        let (_, coverage) = radiff_model::coverage(&input, &radiff_model::Policy::BASE);
        // The fault waits for page 16's request while 20's, of its fault-around block, is
        // in flight: FAULT_RACE too, as for radiff's own touches.
        let marks: Vec<&str> = races_marked(&coverage).map(|m| m.id).collect();
        assert_eq!(marks, vec![radiff_model::fault::FAULT_RACE, radiff_model::fault::LOAD_RACE]);
        let mark = races_marked(&coverage).find(|m| m.id == radiff_model::fault::LOAD_RACE).unwrap();
        assert!(mark.why.starts_with("a program's load faulted here") && mark.avoid.contains("thinktime"), "{mark:?}");
        // One request of pages [16+16), completing whenever: the fault waits for it, settled.
        input.vm.loads_in_flight =
            vec![LoadInFlight { op: 2, requests: vec![(sector(16), 128)], completed_after: vec![(sector(16), 128)] }];
        assert_eq!(races_marked(&radiff_model::coverage(&input, &radiff_model::Policy::BASE).1).count(), 0);
    }

    /// An RWF_NOWAIT read that returned what the model cannot follow is a race the trial
    /// names; one the model follows (it read on where the kernel did) is not.
    #[test]
    fn a_nowait_return_the_model_cannot_follow_is_a_race_mark() {
        use radiff_model::{Input, NowaitReturned, Op, ReadHow};
        let nowait = ReadHow { nowait: true, ..ReadHow::default() };
        // 16 KiB at 0 caches [0, 8) (the guest lets it complete); a NOWAIT read of 8 KiB
        // inside it that returned nothing stopped where the model has every folio uptodate.
        let ops =
            vec![Op::Read { fd: 0, offset: 0, len: 16384 }, Op::ReadWith { fd: 0, offset: 0, len: 8192, how: nowait }];
        let mut input = Input::xfs_on_nvme(8 << 20, ops);
        let marks = |input: &Input| -> Vec<&str> {
            races_marked(&radiff_model::coverage(input, &radiff_model::Policy::BASE).1).map(|m| m.id).collect()
        };
        input.vm.nowait_returned = vec![NowaitReturned { op: 1, bytes: 0 }];
        assert_eq!(marks(&input), vec![radiff_model::filemap::NOWAIT_RACE]);
        input.vm.nowait_returned = vec![NowaitReturned { op: 1, bytes: 8192 }];
        assert_eq!(marks(&input), Vec::<&str>::new());
    }
}
