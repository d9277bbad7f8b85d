//! Summaries of a trace: the figures a reviewer quotes (device reads and their sizes,
//! folios by order, windows) and the per-window table that snapshots keep.
//!
//! Pure: a trace in, text out.

use std::collections::BTreeMap;
use std::fmt::Write;

use radiff_model::{Extent, Request, Submit, Trace, Trigger, Window};

/// Figures of one trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    pub windows: u64,
    pub sync_windows: u64,
    pub async_windows: u64,
    /// Read requests with data (not metadata).
    pub data_reads: u64,
    /// Metadata reads (REQ_META, rwbs `M`).
    pub metadata_reads: u64,
    /// Other requests on the device (writes, flushes).
    pub other_requests: u64,
    pub bytes_read: u64,
    /// Bytes of read request → number of requests.
    pub read_sizes: BTreeMap<u64, u64>,
    /// Folio order → number of folios.
    pub folio_orders: BTreeMap<u32, u64>,
    pub folios: u64,
    /// `mm_filemap_fault` events (Fault windows).
    pub faults: u64,
    /// `mm_filemap_map_pages` events (FaultAround windows).
    pub fault_arounds: u64,
    /// Pages the fault-around ranges covered (their `req_count`s summed; the event does
    /// not say how many of them it mapped).
    pub fault_around_pages: u64,
}

impl Figures {
    pub fn of(trace: &Trace) -> Figures {
        let mut f = Figures::default();
        for w in &trace.windows {
            match w.trigger {
                Trigger::Sync => f.sync_windows += 1,
                Trigger::Async => f.async_windows += 1,
                Trigger::Fault => f.faults += 1,
                Trigger::FaultAround => {
                    f.fault_arounds += 1;
                    f.fault_around_pages += w.req_count;
                }
                // A collapse reads through its Sync windows, counted above.
                Trigger::Start | Trigger::Collapse(_) => {}
            }
        }
        f.windows = f.sync_windows + f.async_windows;
        for r in trace.requests() {
            if !r.is_read() {
                f.other_requests += 1;
            } else if r.is_metadata() {
                f.metadata_reads += 1;
            } else {
                f.data_reads += 1;
                f.bytes_read += r.bytes();
                *f.read_sizes.entry(r.bytes()).or_default() += 1;
            }
        }
        for folio in trace.folios() {
            *f.folio_orders.entry(folio.order).or_default() += 1;
            f.folios += 1;
        }
        f
    }

    /// All requests the device saw.
    pub fn requests(&self) -> u64 {
        self.data_reads + self.metadata_reads + self.other_requests
    }

    /// "3329 (3328 data reads + 1 metadata read)"
    pub fn requests_line(&self) -> String {
        let mut parts = vec![format!("{} data read{}", self.data_reads, plural(self.data_reads))];
        if self.metadata_reads > 0 {
            parts.push(format!("{} metadata read{}", self.metadata_reads, plural(self.metadata_reads)));
        }
        if self.other_requests > 0 {
            parts.push(format!("{} other", self.other_requests));
        }
        format!("{} ({})", self.requests(), parts.join(" + "))
    }

    /// "516 o0, 768 o1, ..."
    pub fn orders_line(&self) -> String {
        if self.folio_orders.is_empty() {
            return "none".into();
        }
        self.folio_orders.iter().map(|(o, n)| format!("{n} o{o}")).collect::<Vec<_>>().join(", ")
    }

    /// "3327 x 512 KiB, 1 x 64 KiB" (largest first, at most `max` sizes).
    /// "2048 (1024 fault-around ranges over 16384 pages)", or `None` for a trace without
    /// faults or fault-around (every pread trace: their totals stay as they were).
    pub fn faults_line(&self) -> Option<String> {
        if self.faults == 0 && self.fault_arounds == 0 {
            return None;
        }
        Some(format!(
            "{} ({} fault-around range{} over {} page{})",
            self.faults,
            self.fault_arounds,
            plural(self.fault_arounds),
            self.fault_around_pages,
            plural(self.fault_around_pages)
        ))
    }

    pub fn sizes_line(&self, max: usize) -> String {
        let mut sizes: Vec<(u64, u64)> = self.read_sizes.iter().map(|(s, n)| (*s, *n)).collect();
        sizes.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        let mut parts: Vec<String> = sizes.iter().take(max).map(|(s, n)| format!("{n} x {}", kib(*s))).collect();
        if sizes.len() > max {
            parts.push(format!("{} other sizes", sizes.len() - max));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub fn kib(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// The short summary `radiff run` prints for one variant.
pub fn short(f: &Figures) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  windows:       {} ({} sync, {} async)", f.windows, f.sync_windows, f.async_windows);
    if let Some(faults) = f.faults_line() {
        let _ = writeln!(s, "  faults:        {faults}");
    }
    let _ = writeln!(s, "  device:        {} requests", f.requests_line());
    let _ = writeln!(s, "  read sizes:    {}", f.sizes_line(6));
    let _ = writeln!(s, "  bytes read:    {} ({})", f.bytes_read, kib(f.bytes_read));
    let _ = writeln!(s, "  folios:        {} ({})", f.folios, f.orders_line());
    s
}

/// One line per window: what started it, the window it submitted, the folios it added
/// (grouped by order) and the requests the device saw (`sector+sectors`, flags other than
/// `RA` after a colon). Stable text, made for diffs.
pub fn window_line(w: &Window) -> String {
    window_line_in(w, &[])
}

/// A request as file pages when it falls inside one of `extents` (`p1024+128`: 128 pages
/// from page 1024 of the file), which does not depend on where the image put the file;
/// metadata as `meta+sectors`; anything else as `sector+sectors`.
/// With several files, a request inside another file than its window's reads
/// `NAME:p12+32`.
fn request_text(r: &Request, files: &[FileLoc], own: usize) -> String {
    let flags = if r.rwbs == "RA" { String::new() } else { format!(":{}", r.rwbs) };
    let byte = r.sector * radiff_model::trace::SECTOR_SIZE;
    if r.is_metadata() && files.iter().any(|f| !f.extents.is_empty()) {
        return format!("meta+{}{flags}", r.sectors);
    }
    for (i, file) in files.iter().enumerate() {
        for e in file.extents {
            if byte >= e.physical && byte + r.bytes() <= e.physical + e.length {
                let page = (e.logical + byte - e.physical) / radiff_model::trace::PAGE_SIZE;
                let pages = r.bytes() as f64 / radiff_model::trace::PAGE_SIZE as f64;
                let other = if i == own { String::new() } else { format!("{}:", file.name) };
                return format!("{other}p{page}+{pages}{flags}");
            }
        }
    }
    format!("{}+{}{flags}", r.sector, r.sectors)
}

/// One of a scenario's files, for placing requests in it: its name and extents.
#[derive(Clone, Copy, Debug)]
pub struct FileLoc<'a> {
    pub name: &'a str,
    pub extents: &'a [Extent],
}

/// [`window_line`] with requests placed in the file by its `extents`.
pub fn window_line_in(w: &Window, extents: &[Extent]) -> String {
    window_line_files(w, &[FileLoc { name: "", extents }])
}

/// [`window_line`] with requests placed in `files` (by index: `Window::file`); with
/// several files, the line starts with its window's file name (`b: sync @0 ...`).
pub fn window_line_files(w: &Window, files: &[FileLoc]) -> String {
    let own = w.file as usize;
    let prefix = match files.get(own) {
        Some(f) if files.len() > 1 => format!("{}: ", f.name),
        None if w.file > 0 => format!("file{}: ", w.file),
        _ => String::new(),
    };
    // A fault's req_count is always 1 and a fault-around's is its range: neither is a
    // read's request, so neither line shows `req`.
    let mut s = prefix;
    s += &match w.trigger {
        Trigger::Start => format!("start @{} req {}", w.index, w.req_count),
        Trigger::Sync => format!("sync  @{} req {}", w.index, w.req_count),
        Trigger::Async => format!("async @{} req {}", w.index, w.req_count),
        Trigger::Fault => format!("fault @{}", w.index),
        Trigger::FaultAround => format!("around [{}+{})", w.index, w.req_count),
        Trigger::Collapse(result) => format!("collapse @{} nr {} {}", w.index, w.req_count, result.name()),
    };
    for submit in &w.submits {
        match submit {
            Submit::Order { index, size, async_size, order } => {
                let _ = write!(s, " | ra [{index}+{size}) async {async_size} order {order}");
            }
            Submit::Unbounded { index, nr_to_read, lookahead_size } => {
                let _ = write!(s, " | unbounded [{index}+{nr_to_read}) lookahead {lookahead_size}");
            }
        }
    }
    if !w.folios.is_empty() {
        let _ = write!(s, " | folios");
        let mut run: Option<(u32, u64)> = None;
        for folio in &w.folios {
            match &mut run {
                Some((order, n)) if *order == folio.order => *n += 1,
                _ => {
                    if let Some((order, n)) = run {
                        let _ = write!(s, " {n}xo{order}");
                    }
                    run = Some((folio.order, 1));
                }
            }
        }
        if let Some((order, n)) = run {
            let _ = write!(s, " {n}xo{order}");
        }
    }
    if !w.requests.is_empty() {
        let _ = write!(s, " | rq");
        for r in &w.requests {
            let _ = write!(s, " {}", request_text(r, files, own));
        }
    }
    s
}

/// The header of the window table in a snapshot.
pub const TABLE_HEADER: &str =
    "# trigger @index req req_count | ra [start+size) async async_size order | folios NxoORDER | rq pPAGE+PAGES (file pages)";

/// What a trace with faults adds to the table's header: how its fault lines read.
pub const FAULT_HEADER: &str = "# fault @index (filemap_fault) | around [index+pages) (filemap_map_pages' range)";

/// The snapshot text of a trace: the totals, a blank line, then the window table, requests
/// placed in the file by `extents` so that the text does not depend on where the image put
/// the file. A window's line carries no running number: the page index that opened it
/// (`@index`) is its key, so a change to some windows changes only their lines (and the
/// totals) in a diff, however many windows it inserts or removes.
pub fn snapshot(trace: &Trace, extents: &[Extent]) -> String {
    snapshot_files(trace, &[FileLoc { name: "", extents }])
}

/// [`snapshot`] of a trace over several files (see [`window_line_files`]).
pub fn snapshot_files(trace: &Trace, files: &[FileLoc]) -> String {
    let figures = Figures::of(trace);
    let mut s = totals(&figures);
    let _ = writeln!(s, "\n{TABLE_HEADER}");
    if figures.faults_line().is_some() {
        let _ = writeln!(s, "{FAULT_HEADER}");
    }
    for w in &trace.windows {
        let _ = writeln!(s, "{}", window_line_files(w, files));
    }
    s
}

/// The first line of the snapshot of a run whose tasks' readahead raced
/// ([`crate::calls::ra::RaCalls::raced`]).
pub const RACED_FORM: &str = "form: what repeats only: several tasks' readahead calls raced (which task made which window, the folios' orders and the requests are the scheduler's; each decision is checked alone: docs/concurrency.md)";

/// The snapshot text of a trace whose tasks' readahead raced: only what repeats from run
/// to run, the pages of each file that were brought in (as `[index+pages)` runs). Not the
/// bytes read: where a task drops pages (fio's `invalidate`) while another reads, how many
/// are read again is the scheduler's, and where none is, the pages say it.
pub fn raced_snapshot(trace: &Trace, files: &[FileLoc]) -> String {
    let mut s = format!("{RACED_FORM}\n");
    for (file, merged) in pages_brought_in(trace) {
        let name = match files.get(file as usize) {
            Some(f) if files.len() > 1 => format!("{} ", f.name),
            _ if file > 0 => format!("file{file} "),
            _ => String::new(),
        };
        let text: Vec<String> = merged.iter().map(|(a, b)| format!("[{a}+{})", b - a)).collect();
        let _ = writeln!(s, "pages brought in: {name}{}", text.join(" "));
    }
    s
}

/// The pages of each file a trace brought in, as sorted, merged `[first, end)` runs, by file.
pub type Pages = BTreeMap<u32, Vec<(u64, u64)>>;

/// The pages each file of `trace` brought in (its folios'), merged into runs: what repeats
/// of a run whose tasks raced ([`raced_snapshot`]).
pub fn pages_brought_in(trace: &Trace) -> Pages {
    let mut pages: Pages = BTreeMap::new();
    for w in &trace.windows {
        let runs = pages.entry(w.file).or_default();
        runs.extend(w.folios.iter().map(|f| (f.index, f.index + (1u64 << f.order))));
    }
    for runs in pages.values_mut() {
        runs.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for &(a, b) in runs.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *runs = merged;
    }
    pages
}

/// How many pages `pages` holds.
pub fn page_count(pages: &Pages) -> u64 {
    pages.values().flatten().map(|(a, b)| b - a).sum()
}

/// The totals a snapshot starts with, one figure a line.
pub fn totals(f: &Figures) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "windows: {} ({} sync, {} async)", f.windows, f.sync_windows, f.async_windows);
    if let Some(faults) = f.faults_line() {
        let _ = writeln!(s, "faults: {faults}");
    }
    let _ = writeln!(s, "requests: {}", f.requests_line());
    let _ = writeln!(s, "read sizes: {}", f.sizes_line(usize::MAX));
    let _ = writeln!(s, "bytes read: {}", f.bytes_read);
    let _ = writeln!(s, "folios: {} ({})", f.folios, f.orders_line());
    s
}

/// What describes a trial's run, kept in its snapshot's metadata (`cargo insta review`
/// shows it apart from the trace): the scenario, variant, matrix point, kernel, queue and
/// file layout.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunInfo {
    pub scenario: String,
    pub variant: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    pub kernel: String,
    pub queue: String,
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where the trials' snapshots are, from the repository root: inside the `radiff` package,
/// because `cargo insta review` looks for pending snapshots only below the workspace's
/// package directories (`harness/`, `model/`); the top-level `snapshots` is a link to it.
pub const SNAPSHOT_DIR: &str = "harness/snapshots";

/// One trial's snapshot: its file stem under [`SNAPSHOT_DIR`], the scenario's description and
/// the run's [`RunInfo`] (the snapshot's metadata) and the kernel's trace as text (its
/// contents).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrialSnapshot {
    pub stem: String,
    pub description: String,
    pub info: RunInfo,
    pub contents: String,
}

/// The snapshot of one trial: the kernel's `trace` on `scenario`'s `point` with `variant`,
/// as [`crate::compare::normalise_for_snapshot`] left it (`normalised` names the step it took).
pub fn trial_snapshot(
    scenario: &crate::scenario::Scenario,
    point: &crate::scenario::Point,
    variant: &str,
    env: &crate::wire::GuestEnv,
    trace: &Trace,
    normalised: Option<&str>,
    raced: bool,
) -> TrialSnapshot {
    let name = scenario.trial_name(variant, point);
    let stem = name.trim_start_matches("scenario_").replace("::", "__").replace(['=', ','], "_");
    let q = &env.queue;
    let info = RunInfo {
        scenario: scenario.name.clone(),
        variant: variant.to_string(),
        point: point.label.clone(),
        kernel: env.release.clone(),
        queue: format!(
            "read_ahead_kb {} max_sectors_kb {} max_hw_sectors_kb {} max_segments {} logical_block_size {}",
            q.read_ahead_kb, q.max_sectors_kb, q.max_hw_sectors_kb, q.max_segments, q.logical_block_size
        ),
        file: if scenario.file_names.len() > 1 {
            let sizes = std::iter::once((env.file_size, env.extents.len()))
                .chain(env.other_files.iter().map(|f| (f.file_size, f.extents.len())));
            scenario
                .file_names
                .iter()
                .zip(sizes)
                .map(|(n, (size, extents))| format!("{n}: {size} bytes in {extents} extents"))
                .collect::<Vec<_>>()
                .join("; ")
        } else {
            format!("{} bytes in {} extents", env.file_size, env.extents.len())
        },
        note: normalised.map(str::to_string),
    };
    let extents: Vec<&[Extent]> =
        std::iter::once(env.extents.as_slice()).chain(env.other_files.iter().map(|f| f.extents.as_slice())).collect();
    let files: Vec<FileLoc> = if scenario.file_names.len() > 1 {
        scenario.file_names.iter().zip(&extents).map(|(name, extents)| FileLoc { name, extents }).collect()
    } else {
        vec![FileLoc { name: "", extents: &env.extents }]
    };
    let contents = if raced { raced_snapshot(trace, &files) } else { snapshot_files(trace, &files) };
    TrialSnapshot { stem, description: format!("{}: {}", scenario.name, scenario.description), info, contents }
}

/// The text of an insta snapshot file, without its `---` metadata header.
pub fn snapshot_body(file_text: &str) -> &str {
    let mut rest = file_text;
    if let Some(after) = rest.strip_prefix("---\n") {
        if let Some(end) = after.find("\n---\n") {
            rest = &after[end + 5..];
        }
    }
    rest
}

/// The totals lines of a snapshot's contents (`key: value`, up to the first blank line).
fn totals_of(contents: &str) -> Vec<(&str, &str)> {
    contents.lines().take_while(|l| !l.trim().is_empty()).filter_map(|l| l.split_once(": ")).collect()
}

/// The totals of two snapshot contents side by side, one figure a line, the ones that
/// changed first marked `*`: what a reviewer reads before the line diff.
pub fn totals_change(old: &str, new: &str) -> String {
    let (a, b) = (totals_of(old), totals_of(new));
    let mut keys: Vec<&str> = a.iter().map(|(k, _)| *k).collect();
    keys.extend(b.iter().map(|(k, _)| *k).filter(|k| !a.iter().any(|(o, _)| o == k)));
    let width = keys.iter().map(|k| k.len()).max().unwrap_or(0);
    let get =
        |t: &[(&str, &str)], k: &str| t.iter().find(|(o, _)| *o == k).map_or("-".to_string(), |(_, v)| v.to_string());
    let mut out = String::new();
    for k in keys {
        let (x, y) = (get(&a, k), get(&b, k));
        if x == y {
            let _ = writeln!(out, "  {k:width$}  {x} (same)");
        } else {
            let _ = writeln!(out, "* {k:width$}  {x}\n  {:width$}  -> {y}", "");
        }
    }
    out
}

/// How the snapshot contents `new` differ from `old`, for a trial's message: the totals
/// before and after, then the changed lines of the window table (at most `max`).
pub fn snapshot_review(old: &str, new: &str, max: usize) -> String {
    let table = |c: &str| -> String {
        match c.find("\n\n") {
            Some(i) => c[i + 2..].to_string(),
            None => c.to_string(),
        }
    };
    format!(
        "totals (before -> after):\n{}window lines (-before, +after; line numbers of the window table):\n{}",
        totals_change(old, new),
        snapshot_diff(&table(old), &table(new), max)
    )
}

/// The lines where `new` differs from the snapshot body `old`, at most `max` of them,
/// each with its line number on the side it comes from (`-12 old line`, `+12 new line`),
/// and how many more changed lines were left out: short enough for a CI log that keeps
/// only part of the output.
pub fn snapshot_diff(old: &str, new: &str, max: usize) -> String {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    let mut shown = 0;
    let mut left = 0;
    for change in diff.iter_all_changes() {
        let (sign, line) = match change.tag() {
            ChangeTag::Equal => continue,
            ChangeTag::Delete => ('-', change.old_index()),
            ChangeTag::Insert => ('+', change.new_index()),
        };
        if shown == max {
            left += 1;
            continue;
        }
        shown += 1;
        let _ = writeln!(out, "{sign}{:<5} {}", line.map_or(0, |i| i + 1), change.value().trim_end());
    }
    if left > 0 {
        let _ = writeln!(out, "... and {left} more changed lines");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::{Folio, RaState, Request};

    fn window(trigger: Trigger, folios: &[(u64, u32)], requests: &[(u64, u64, &str)]) -> Window {
        Window {
            file: 0,
            trigger,
            index: 4,
            req_count: 256,
            ra: RaState::default(),
            submits: vec![Submit::Order { index: 4, size: 16, async_size: 16, order: 2 }],
            folios: folios.iter().map(|&(index, order)| Folio { index, order }).collect(),
            requests: requests
                .iter()
                .map(|&(sector, sectors, rwbs)| Request { sector, sectors, rwbs: rwbs.into() })
                .collect(),
        }
    }

    #[test]
    fn figures_count_data_metadata_and_orders() {
        let trace = Trace {
            windows: vec![
                window(Trigger::Sync, &[(0, 0), (1, 0)], &[(0, 16, "RA"), (100, 8, "RM")]),
                window(Trigger::Async, &[(4, 2), (8, 2), (12, 2)], &[(16, 32, "RA"), (900, 8, "WS")]),
            ],
        };
        let f = Figures::of(&trace);
        assert_eq!((f.windows, f.sync_windows, f.async_windows), (2, 1, 1));
        assert_eq!((f.data_reads, f.metadata_reads, f.other_requests), (2, 1, 1));
        assert_eq!(f.bytes_read, (16 + 32) * 512);
        assert_eq!(f.folio_orders, BTreeMap::from([(0, 2), (2, 3)]));
        assert_eq!(f.requests_line(), "4 (2 data reads + 1 metadata read + 1 other)");
        assert_eq!(f.orders_line(), "2 o0, 3 o2");
        assert_eq!(f.sizes_line(1), "1 x 16 KiB, 1 other sizes");
    }

    #[test]
    fn a_raced_snapshot_keeps_the_pages_brought_in_whoever_made_the_windows() {
        let files = [FileLoc { name: "", extents: &[] }];
        // Pages 0..16 in two tasks' windows, made in one order with order-2 folios ...
        let one = Trace {
            windows: vec![
                window(Trigger::Sync, &[(0, 2), (4, 2)], &[(0, 64, "RA")]),
                window(Trigger::Sync, &[(8, 2), (12, 2)], &[(64, 64, "RA"), (900, 8, "RM")]),
            ],
        };
        // ... and in the other order, with other folios and requests.
        let other = Trace {
            windows: vec![
                window(Trigger::Sync, &[(8, 3)], &[(64, 32, "RA"), (96, 32, "RA")]),
                window(Trigger::Async, &[(0, 0), (1, 0), (2, 1), (4, 2)], &[(0, 64, "RA")]),
            ],
        };
        let text = raced_snapshot(&one, &files);
        assert_eq!(text, format!("{RACED_FORM}\npages brought in: [0+16)\n"));
        assert_eq!(raced_snapshot(&other, &files), text);
        // A page left out is a gap; a second file has its own line, by name.
        let gap = Trace { windows: vec![window(Trigger::Sync, &[(0, 2), (8, 2)], &[(0, 64, "RA")])] };
        assert!(raced_snapshot(&gap, &files).contains("pages brought in: [0+4) [8+4)\n"));
        let mut two = one.clone();
        two.windows[1].file = 1;
        let named = [FileLoc { name: "a", extents: &[] }, FileLoc { name: "b", extents: &[] }];
        let text = raced_snapshot(&two, &named);
        assert!(text.contains("pages brought in: a [0+8)\npages brought in: b [8+8)\n"), "{text}");
    }

    #[test]
    fn snapshot_diffs_show_changed_lines_with_numbers_and_stop_at_the_limit() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nD\ne\n";
        assert_eq!(snapshot_diff(old, new, 10), "-2     b\n+2     B\n-4     d\n+4     D\n+5     e\n");
        assert_eq!(snapshot_diff(old, new, 2), "-2     b\n+2     B\n... and 3 more changed lines\n");
        assert_eq!(snapshot_diff(old, old, 2), "");
    }

    /// A sequential trace of async windows of `size` pages from page `from` to `to`, each
    /// with one folio of `order` per window and one request.
    fn windows(from: u64, to: u64, size: u64, order: u32) -> Vec<Window> {
        (from..to)
            .step_by(size as usize)
            .map(|i| Window {
                file: 0,
                trigger: Trigger::Async,
                index: i,
                req_count: 256,
                ra: RaState::default(),
                submits: vec![Submit::Order { index: i, size, async_size: size, order }],
                folios: vec![Folio { index: i, order }],
                requests: vec![Request { sector: i * 8, sectors: size * 8, rwbs: "RA".into() }],
            })
            .collect()
    }

    #[test]
    fn two_windows_inserted_early_change_only_their_lines_and_the_totals() {
        // Before: windows of 64 pages from page 0. After: the window at page 64 is split
        // into two windows of 32 pages (two lines in place of one), everything else the same.
        let before = Trace { windows: windows(0, 64 * 200, 64, 4) };
        let mut after_windows = windows(0, 64, 64, 4);
        after_windows.extend(windows(64, 128, 32, 3));
        after_windows.extend(windows(128, 64 * 200, 64, 4));
        let after = Trace { windows: after_windows };
        let (old, new) = (snapshot(&before, &[]), snapshot(&after, &[]));
        assert!(!old.lines().any(|l| l.starts_with(' ')), "no running numbers on window lines:\n{old}");
        let diff = snapshot_diff(&old, &new, usize::MAX);
        let changed: Vec<&str> = diff.lines().collect();
        // Totals: windows, requests, read sizes and folios changed (bytes did not); the
        // window table: one line out, two in.
        let table: Vec<&str> = changed.iter().copied().filter(|l| l.contains(" @")).collect();
        assert_eq!(table.len(), 3, "{diff}");
        assert!(table[0].starts_with('-') && table[0].contains("async @64 req 256 | ra [64+64)"), "{diff}");
        assert!(table[1].starts_with('+') && table[1].contains("async @64 req 256 | ra [64+32)"), "{diff}");
        assert!(table[2].starts_with('+') && table[2].contains("async @96 req 256 | ra [96+32)"), "{diff}");
        assert_eq!(changed.len(), 3 + 2 * 4, "{diff}");
        // The review puts the totals first, then the table's changed lines alone.
        let review = snapshot_review(&old, &new, 40);
        assert!(review.starts_with("totals (before -> after):\n* windows     200 (0 sync, 200 async)\n              -> 201 (0 sync, 201 async)\n"), "{review}");
        assert!(review.contains("\n  bytes read  52428800 (same)\n"), "{review}");
        assert_eq!(review.lines().filter(|l| l.contains(" @")).count(), 3, "{review}");
    }

    #[test]
    fn totals_change_lists_every_figure_once() {
        let old = "windows: 2 (1 sync, 1 async)\nfolios: 3 (3 o0)\n\n# table\n";
        let new = "windows: 2 (1 sync, 1 async)\nfolios: 1 (1 o2)\nextra: 1\n\n# table\n";
        assert_eq!(
            totals_change(old, new),
            "  windows  2 (1 sync, 1 async) (same)\n* folios   3 (3 o0)\n           -> 1 (1 o2)\n* extra    -\n           -> 1\n"
        );
    }

    #[test]
    fn fault_windows_show_in_lines_and_totals_only_when_there_are_some() {
        let mut fault = window(Trigger::Fault, &[(0, 2), (4, 2)], &[(0, 64, "RA")]);
        fault.index = 10;
        fault.req_count = 1;
        fault.submits = vec![Submit::Order { index: 0, size: 32, async_size: 8, order: 2 }];
        assert_eq!(window_line(&fault), "fault @10 | ra [0+32) async 8 order 2 | folios 2xo2 | rq 0+64");
        let around = Window::open(Trigger::FaultAround, 16, 16, RaState::default());
        assert_eq!(window_line(&around), "around [16+16)");
        let trace = Trace {
            windows: vec![fault.clone(), around.clone(), Window::open(Trigger::FaultAround, 32, 4, RaState::default())],
        };
        let f = Figures::of(&trace);
        assert_eq!((f.windows, f.faults, f.fault_arounds, f.fault_around_pages), (0, 1, 2, 20));
        assert_eq!(f.faults_line().unwrap(), "1 (2 fault-around ranges over 20 pages)");
        assert!(totals(&f).contains("\nfaults: 1 (2 fault-around ranges over 20 pages)\n"), "{}", totals(&f));
        assert!(short(&f).contains("\n  faults:        1 (2 fault-around ranges over 20 pages)\n"), "{}", short(&f));
        assert!(snapshot(&trace, &[]).contains(FAULT_HEADER));
        // A pread trace's totals and table have no fault lines at all.
        let pread = Trace { windows: vec![window(Trigger::Sync, &[(0, 0)], &[(0, 8, "RA")])] };
        let (t, sh, snap) = (totals(&Figures::of(&pread)), short(&Figures::of(&pread)), snapshot(&pread, &[]));
        assert!(!t.contains("fault") && !sh.contains("fault") && !snap.contains("fault"), "{t}{sh}{snap}");
    }

    #[test]
    fn window_lines_group_folio_runs() {
        let w = window(Trigger::Async, &[(4, 2), (8, 2), (12, 3), (20, 2)], &[(8, 64, "RA"), (72, 8, "RM")]);
        assert_eq!(
            window_line(&w),
            "async @4 req 256 | ra [4+16) async 16 order 2 | folios 2xo2 1xo3 1xo2 | rq 8+64 72+8:RM"
        );
        let extents = [Extent { logical: 4096, physical: 4096, length: 1 << 20, flags: 0 }];
        assert_eq!(
            window_line_in(&w, &extents),
            "async @4 req 256 | ra [4+16) async 16 order 2 | folios 2xo2 1xo3 1xo2 | rq p1+8 meta+8:RM"
        );
    }
}
