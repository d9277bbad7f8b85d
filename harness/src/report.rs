//! Reports for a patch's changelog: figures per variant and matrix point (median and
//! spread of N runs, change against the first variant), a summary sentence, an SVG of
//! the windows, and a regression view over every scenario (`--all`).
//!
//! The pure parts (statistics, rows, Markdown, the sentence, the changed-only filter)
//! come first and are tested without a VM; the running part at the end goes through
//! [`Lab`], and only [`main`] prints.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::ops::Range;
use std::path::Path;
use std::process::ExitCode;

use radiff_model::trace::PAGE_SIZE;
use radiff_model::Trace;

use crate::error::{Error, Result};
use crate::run::Lab;
use crate::scenario::{Point, Scenario};
use crate::summary::Figures;
use crate::vm::Accel;

/// Median and spread of one figure over N runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation between the sorted values).
    pub q1: f64,
    pub q3: f64,
}

/// From this many runs on, the spread shown is the interquartile range; below, min-max
/// (quartiles of three or four values say little more than the extremes).
pub const IQR_FROM: usize = 5;

impl Stat {
    /// The statistics of `values`; an empty slice gives zeros with `n` 0.
    pub fn of(values: &[f64]) -> Stat {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| -> f64 {
            if v.is_empty() {
                return 0.0;
            }
            let h = (v.len() - 1) as f64 * p;
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(v.len() - 1);
            v[lo] + (h - lo as f64) * (v[hi] - v[lo])
        };
        Stat { n: v.len(), median: q(0.5), min: q(0.0), max: q(1.0), q1: q(0.25), q3: q(0.75) }
    }

    /// The spread shown: (low, high), min-max or the interquartile range.
    pub fn spread(&self) -> (f64, f64) {
        if self.n >= IQR_FROM {
            (self.q1, self.q3)
        } else {
            (self.min, self.max)
        }
    }
}

/// A column of the report: one number per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Col {
    /// Read requests with data (the device reads a changelog quotes).
    DataReads,
    /// Metadata reads (REQ_META): the file system's own, shown so nothing is hidden.
    MetadataReads,
    /// Bytes of the data reads.
    Bytes,
    Windows,
    /// `mm_filemap_fault` events: a column only when some run of the report has faults
    /// or fault-around (see [`rows`]), so a pread report keeps its columns.
    Faults,
    /// `mm_filemap_map_pages` events (fault-around ranges).
    FaultArounds,
    /// Pages the fault-around ranges cover (not all of them mapped: the event does not say).
    FaultAroundPages,
    Folios,
    /// Folios of this order.
    Order(u32),
    /// Wall time of the access pattern in the guest.
    Time,
}

impl Col {
    pub fn name(self) -> String {
        match self {
            Col::DataReads => "device reads".into(),
            Col::MetadataReads => "metadata reads".into(),
            Col::Bytes => "bytes read".into(),
            Col::Windows => "windows".into(),
            Col::Faults => "faults".into(),
            Col::FaultArounds => "fault-around ranges".into(),
            Col::FaultAroundPages => "fault-around pages".into(),
            Col::Folios => "folios".into(),
            Col::Order(o) => format!("order-{o} folios"),
            Col::Time => "guest time".into(),
        }
    }

    /// The value without its unit (spreads are shown this way, after the median).
    fn plain(self, v: f64) -> String {
        match self {
            Col::Bytes => format!("{:.1}", v / (1u64 << 20) as f64),
            Col::Time => format!("{:.3}", v / 1e9),
            _ if v.fract() == 0.0 => format!("{v:.0}"),
            _ => format!("{v:.1}"),
        }
    }

    /// The value with its unit: `3328`, `512.0 MiB`, `2.541 s`.
    pub fn format(self, v: f64) -> String {
        match self {
            Col::Bytes => format!("{} MiB", self.plain(v)),
            Col::Time => format!("{} s", self.plain(v)),
            _ => self.plain(v),
        }
    }
}

/// One run's figures: those of the trace and the guest time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    pub figures: Figures,
    pub pattern_ns: u64,
}

impl Sample {
    pub fn value(&self, col: Col) -> f64 {
        let f = &self.figures;
        (match col {
            Col::DataReads => f.data_reads,
            Col::MetadataReads => f.metadata_reads,
            Col::Bytes => f.bytes_read,
            Col::Windows => f.windows,
            Col::Faults => f.faults,
            Col::FaultArounds => f.fault_arounds,
            Col::FaultAroundPages => f.fault_around_pages,
            Col::Folios => f.folios,
            Col::Order(o) => f.folio_orders.get(&o).copied().unwrap_or(0),
            Col::Time => self.pattern_ns,
        }) as f64
    }
}

/// The runs of one variant at one matrix point.
#[derive(Clone, Debug)]
pub struct Cell {
    pub point: Option<String>,
    pub variant: String,
    pub samples: Vec<Sample>,
}

/// One row of the report: a variant at a point, each column over its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub point: Option<String>,
    pub variant: String,
    pub stats: BTreeMap<Col, Stat>,
}

impl Row {
    pub fn median(&self, col: Col) -> f64 {
        self.stats.get(&col).map_or(0.0, |s| s.median)
    }

    pub fn runs(&self) -> usize {
        self.stats.get(&Col::DataReads).map_or(0, |s| s.n)
    }

    /// True when the row has the fault columns (some run of its report faulted).
    pub fn has_faults(&self) -> bool {
        self.stats.contains_key(&Col::Faults)
    }
}

/// The fault columns, in the order the table shows them.
pub const FAULT_COLS: [Col; 3] = [Col::Faults, Col::FaultArounds, Col::FaultAroundPages];

/// Rows of `cells`, in their order. Every row has a column for every folio order seen in
/// any run of any cell, so that an order a variant never uses shows as 0, not as a gap;
/// and the fault columns when any run of any cell has a fault or a fault-around range
/// (then a variant without them shows 0), none otherwise.
pub fn rows(cells: &[Cell]) -> Vec<Row> {
    let samples = || cells.iter().flat_map(|c| c.samples.iter());
    let orders: BTreeSet<u32> = samples().flat_map(|s| s.figures.folio_orders.keys().copied()).collect();
    let faults = samples().any(|s| s.figures.faults > 0 || s.figures.fault_arounds > 0);
    let mut cols = vec![Col::DataReads, Col::MetadataReads, Col::Bytes, Col::Windows];
    if faults {
        cols.extend(FAULT_COLS);
    }
    cols.push(Col::Folios);
    cols.extend(orders.iter().map(|&o| Col::Order(o)));
    cols.push(Col::Time);
    cells
        .iter()
        .map(|c| Row {
            point: c.point.clone(),
            variant: c.variant.clone(),
            stats: cols.iter().map(|&col| (col, Stat::of(&c.samples.iter().map(|s| s.value(col)).collect::<Vec<_>>()))).collect(),
        })
        .collect()
}

/// The change from `base` to `v` in percent: `-69%`, `+0.3%`, `0%`, `new` (from 0).
pub fn percent(base: f64, v: f64) -> String {
    if v == base {
        return "0%".into();
    }
    if base == 0.0 {
        return "new".into();
    }
    let p = (v - base) / base * 100.0;
    let sign = if p < 0.0 { '-' } else { '+' };
    format!("{sign}{}%", magnitude(p.abs()))
}

/// A percentage's size with as many decimals as make it mean something.
fn magnitude(p: f64) -> String {
    if (99.5..100.0).contains(&p) {
        // Not "100": that would read as "all gone" when some are left.
        return (1..=4).map(|d| format!("{p:.d$}")).find(|s| !s.starts_with("100")).unwrap_or_else(|| "99.9999".into());
    }
    if p >= 9.5 {
        format!("{p:.0}")
    } else if p >= 0.95 {
        format!("{p:.1}")
    } else if p >= 0.005 {
        format!("{p:.2}")
    } else {
        "<0.01".into()
    }
}

/// The row each row is compared with: the first variant's at the same point.
fn baseline<'a>(rows: &'a [Row], row: &Row, first: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.point == row.point && r.variant == first)
}

/// A cell of the Markdown table: the median, its spread when the runs differ, and the
/// change against the baseline's median (none on the baseline itself).
fn cell_text(col: Col, stat: &Stat, base: Option<&Stat>) -> String {
    let mut s = col.format(stat.median);
    let (lo, hi) = stat.spread();
    if stat.n > 1 && lo != hi {
        let _ = write!(s, " [{}-{}]", col.plain(lo), col.plain(hi));
    }
    if let Some(b) = base {
        let _ = write!(s, " ({})", percent(b.median, stat.median));
    }
    s
}

/// What a report is about, besides its rows.
#[derive(Clone, Debug)]
pub struct Heading {
    /// `1mib_after_4k: 1 MiB reads after ...`
    pub title: String,
    /// Where the runs ran: kernel releases, QEMU's accelerator.
    pub environment: String,
    /// The variants in order; the first is the baseline.
    pub variants: Vec<String>,
}

/// The Markdown for a changelog's notes: a table of requests, bytes, windows (faults and
/// fault-around when there are) and time, a table of folios by order, and a line saying
/// how to read them. No line starts with `#`, which `git commit` would take for a comment.
pub fn markdown(h: &Heading, rows: &[Row]) -> String {
    let first = h.variants.first().map(String::as_str).unwrap_or("");
    let with_point = rows.iter().any(|r| r.point.is_some());
    let table = |out: &mut String, cols: &[Col], names: &[String]| {
        let mut head = String::from("|");
        let mut rule = String::from("|");
        if with_point {
            head.push_str(" point |");
            rule.push_str(":--|");
        }
        head.push_str(" variant |");
        rule.push_str(":--|");
        for name in names {
            let _ = write!(head, " {name} |");
            rule.push_str("--:|");
        }
        let _ = writeln!(out, "{head}\n{rule}");
        for row in rows {
            let base = baseline(rows, row, first).filter(|b| !std::ptr::eq(*b, row));
            let mut line = String::from("|");
            if with_point {
                let _ = write!(line, " {} |", row.point.as_deref().unwrap_or(""));
            }
            let _ = write!(line, " {} |", row.variant);
            for col in cols {
                let stat = row.stats.get(col).copied().unwrap_or(Stat::of(&[]));
                let _ = write!(line, " {} |", cell_text(*col, &stat, base.and_then(|b| b.stats.get(col))));
            }
            let _ = writeln!(out, "{line}");
        }
    };
    let mut s = String::new();
    let _ = writeln!(s, "{}", h.title);
    let _ = writeln!(s, "{}\n", h.environment);
    let faults = rows.iter().any(Row::has_faults);
    let mut cols = vec![Col::DataReads, Col::MetadataReads, Col::Bytes, Col::Windows];
    if faults {
        cols.extend(FAULT_COLS);
    }
    cols.push(Col::Time);
    let names: Vec<String> = cols.iter().map(|c| c.name()).collect();
    table(&mut s, &cols, &names);
    s.push('\n');
    let mut cols = vec![Col::Folios];
    let orders: BTreeSet<u32> = rows.iter().flat_map(|r| r.stats.keys()).filter_map(|c| if let Col::Order(o) = c { Some(*o) } else { None }).collect();
    cols.extend(orders.iter().map(|&o| Col::Order(o)));
    let names: Vec<String> = cols.iter().map(|c| if let Col::Order(o) = c { format!("order {o}") } else { c.name() }).collect();
    table(&mut s, &cols, &names);
    let runs: BTreeSet<usize> = rows.iter().map(Row::runs).collect();
    let runs_text = match runs.iter().collect::<Vec<_>>().as_slice() {
        [1] => "One run each".to_string(),
        [n] => format!("Median of {n} runs each"),
        _ => format!("Median of {} runs", runs.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" to ")),
    };
    let spread = match runs.iter().max() {
        Some(&n) if n >= IQR_FROM => "; [interquartile range] where the runs differ",
        Some(&n) if n > 1 => "; [min-max] where the runs differ",
        _ => "",
    };
    let _ = write!(
        s,
        "\n{runs_text}{spread}; (change against {first}). Device reads are data reads; metadata reads (REQ_META) are counted apart. Guest time is the wall time of the reads inside the guest."
    );
    if faults {
        s.push_str(FAULTS_NOTE);
    }
    s.push('\n');
    s
}

/// How to read the fault columns, after the table's line when it has them.
pub const FAULTS_NOTE: &str = " Windows are those of page_cache_sync_ra/page_cache_async_ra calls; faults are \
mm_filemap_fault events (a fault retried after readahead dropped the mmap lock counts twice); fault-around \
ranges are mm_filemap_map_pages events, and fault-around pages the pages those ranges cover (the event does \
not say how many it mapped).";

/// The order most folios have, with its count and the total (ties: the larger order).
fn mode_order(row: &Row) -> Option<(u32, f64, f64)> {
    let total = row.median(Col::Folios);
    row.stats
        .iter()
        .filter_map(|(c, s)| if let Col::Order(o) = c { Some((*o, s.median)) } else { None })
        .filter(|(_, n)| *n > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(o, n)| (o, n, total))
}

/// `69% fewer`, `12% more` (the caller has checked that the values differ).
fn fewer_more(base: f64, v: f64, fewer: &str, more: &str) -> String {
    if base == 0.0 {
        return more.to_string();
    }
    let p = (v - base).abs() / base * 100.0;
    format!("{}% {}", magnitude(p), if v < base { fewer } else { more })
}

/// One sentence comparing `row` with `base`, for a changelog.
fn sentence(row: &Row, base: &Row) -> String {
    let (v, b) = (&row.variant, &base.variant);
    let mut parts = Vec::new();
    let (rv, rb) = (row.median(Col::DataReads), base.median(Col::DataReads));
    let mut reads = if rv == rb {
        format!("{v} issues as many device reads as {b} ({})", Col::DataReads.format(rv))
    } else {
        format!("{v} issues {} device reads than {b} ({} vs {})", fewer_more(rb, rv, "fewer", "more"), Col::DataReads.format(rv), Col::DataReads.format(rb))
    };
    let (mv, mb) = (row.median(Col::MetadataReads), base.median(Col::MetadataReads));
    if mv != mb {
        let _ = write!(reads, ", and {} metadata reads vs {}", Col::MetadataReads.format(mv), Col::MetadataReads.format(mb));
    }
    let (bv, bb) = (row.median(Col::Bytes), base.median(Col::Bytes));
    if bv == bb {
        let _ = write!(reads, " for the same {}", Col::Bytes.format(bv));
    } else {
        let _ = write!(reads, " and reads {} bytes ({} vs {})", fewer_more(bb, bv, "fewer", "more"), Col::Bytes.format(bv), Col::Bytes.format(bb));
    }
    parts.push(reads);
    if row.has_faults() {
        parts.push(faults_part(row, base));
    }
    let (tv, tb) = (row.stats.get(&Col::Time).copied().unwrap_or(Stat::of(&[])), base.stats.get(&Col::Time).copied().unwrap_or(Stat::of(&[])));
    let n = tv.n.min(tb.n);
    let runs = if n > 1 { format!("median of {n} runs") } else { "one run each".into() };
    // Say so when the medians differ by less than the runs vary: a reviewer should not
    // read a timing difference into noise.
    let (vlo, vhi) = tv.spread();
    let (blo, bhi) = tb.spread();
    let noise = if n > 1 && vlo <= bhi && blo <= vhi { ", within the spread of the runs" } else { "" };
    if tv.median == tb.median {
        parts.push(format!("its reads take as long in the guest ({}, {runs})", Col::Time.format(tv.median)));
    } else {
        parts.push(format!(
            "its reads take {} time in the guest ({} vs {}, {runs}{noise})",
            fewer_more(tb.median, tv.median, "less", "more"),
            Col::Time.format(tv.median),
            Col::Time.format(tb.median)
        ));
    }
    let orders = |r: &Row| -> Vec<(Col, f64)> { r.stats.iter().filter(|(c, _)| matches!(c, Col::Order(_))).map(|(c, s)| (*c, s.median)).collect() };
    if orders(row) == orders(base) {
        parts.push(format!("it adds the same folios ({})", Col::Folios.format(row.median(Col::Folios))));
    } else {
        let mode = |r: &Row| match mode_order(r) {
            Some((o, k, t)) => format!("mostly order {o} ({} of {})", Col::Folios.format(k), Col::Folios.format(t)),
            None => "none".into(),
        };
        parts.push(format!("its folios are {}, {b}'s {}", mode(row), mode(base)));
    }
    parts.join("; ")
}

/// The faults part of [`sentence`]: faults and fault-around ranges against the base's.
fn faults_part(row: &Row, base: &Row) -> String {
    let fmt = |c: Col, r: &Row| c.format(r.median(c));
    let (fv, fb) = (row.median(Col::Faults), base.median(Col::Faults));
    let mut s = if fv == fb {
        format!("it takes as many faults ({})", fmt(Col::Faults, row))
    } else {
        format!("it takes {} faults ({} vs {})", fewer_more(fb, fv, "fewer", "more"), fmt(Col::Faults, row), fmt(Col::Faults, base))
    };
    let (av, ab) = (row.median(Col::FaultArounds), base.median(Col::FaultArounds));
    let (pv, pb) = (row.median(Col::FaultAroundPages), base.median(Col::FaultAroundPages));
    if av == ab && pv == pb {
        let _ = write!(s, " and as many fault-around ranges ({}, over {} pages)", fmt(Col::FaultArounds, row), fmt(Col::FaultAroundPages, row));
    } else {
        let _ = write!(
            s,
            " and {} fault-around ranges ({} vs {}, over {} pages vs {})",
            if av == ab { "as many".to_string() } else { fewer_more(ab, av, "fewer", "more") },
            fmt(Col::FaultArounds, row),
            fmt(Col::FaultArounds, base),
            fmt(Col::FaultAroundPages, row),
            fmt(Col::FaultAroundPages, base)
        );
    }
    s
}

/// The summary paragraph: for each point and each variant after the first, how it
/// compares with the first. Every number comes from `rows`.
pub fn summary(description: &str, variants: &[String], rows: &[Row]) -> String {
    let Some(first) = variants.first() else { return String::new() };
    let mut sentences = Vec::new();
    for row in rows.iter().filter(|r| &r.variant != first) {
        let Some(base) = baseline(rows, row, first) else { continue };
        let at = row.point.as_deref().map(|p| format!(" at {p}")).unwrap_or_default();
        sentences.push(format!("{description}{at}: {}.", sentence(row, base)));
    }
    sentences.join(" ")
}

/// One figure that differs between two variants at one scenario point.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub col: Col,
    pub a: f64,
    pub b: f64,
}

/// What differs between `a` and `b` in device reads (data and metadata), bytes, windows,
/// faults and fault-around (when the rows have them) and folios (total and each order);
/// guest time is left out, as it differs run to run.
pub fn differences(a: &Row, b: &Row) -> Vec<Difference> {
    let cols: BTreeSet<Col> = a.stats.keys().chain(b.stats.keys()).copied().filter(|c| *c != Col::Time).collect();
    cols.into_iter()
        .map(|col| Difference { col, a: a.median(col), b: b.median(col) })
        .filter(|d| d.a != d.b)
        .collect()
}

/// The outcome of one scenario point in `--all`.
#[derive(Clone, Debug)]
pub struct PointOutcome {
    pub scenario: String,
    pub point: Option<String>,
    /// The rows of the two variants, or why they could not be had.
    pub rows: std::result::Result<(Row, Row), String>,
}

impl PointOutcome {
    fn name(&self) -> String {
        match &self.point {
            Some(p) => format!("{} ({p})", self.scenario),
            None => self.scenario.clone(),
        }
    }
}

/// The `--all` report: a table of what changed, then the points that did not change,
/// the scenarios not run, and the runs that failed.
pub fn render_all(a: &str, b: &str, outcomes: &[PointOutcome], skipped: &[String]) -> String {
    let mut s = String::new();
    let runs = outcomes.iter().filter_map(|o| o.rows.as_ref().ok()).map(|(r, _)| r.runs()).max().unwrap_or(1);
    let runs = if runs > 1 { format!("median of {runs} runs") } else { "one run each".into() };
    let _ = writeln!(s, "{b} against {a}, every scenario that runs both ({runs}); only what changed:\n");
    let mut changed = 0;
    let mut unchanged = Vec::new();
    let mut table = String::new();
    for o in outcomes {
        let Ok((ra, rb)) = &o.rows else { continue };
        let diffs = differences(ra, rb);
        if diffs.is_empty() {
            unchanged.push(o.name());
            continue;
        }
        changed += 1;
        for d in diffs {
            let _ = writeln!(table, "| {} | {} | {} | {} | {} |", o.name(), d.col.name(), d.col.format(d.a), d.col.format(d.b), percent(d.a, d.b));
        }
    }
    if table.is_empty() {
        let _ = writeln!(s, "(nothing changed)");
    } else {
        let _ = writeln!(s, "| scenario | figure | {a} | {b} | change |\n|:--|:--|--:|--:|--:|");
        s.push_str(&table);
    }
    let ran = changed + unchanged.len();
    let _ = writeln!(s, "\nChanged: {changed} of {ran} scenario points.");
    let faults = outcomes.iter().filter_map(|o| o.rows.as_ref().ok()).any(|(ra, rb)| ra.has_faults() || rb.has_faults());
    let figures = if faults { "windows, faults, fault-around ranges and folio orders" } else { "windows and folio orders" };
    let _ = write!(s, "Unchanged (device reads, metadata reads, bytes, {figures} all equal): {} of {ran}", unchanged.len());
    if unchanged.is_empty() {
        s.push_str(".\n");
    } else {
        let _ = writeln!(s, ": {}.", unchanged.join(", "));
    }
    let _ = writeln!(s, "Guest time is not compared here; `radiff report SCENARIO.yaml --variants {a},{b} --runs N` gives it.");
    if !skipped.is_empty() {
        let _ = writeln!(s, "Not run (their `variants:` do not list both): {}.", skipped.join(", "));
    }
    for o in outcomes {
        if let Err(e) = &o.rows {
            let _ = writeln!(s, "Failed: {}: {}", o.name(), e.lines().next().unwrap_or(""));
        }
    }
    s
}

/// `A..B` (page indices, B exclusive) clamped to the file's pages; the default is the
/// first 4096 pages. Returns the range and how to describe it in a title.
pub fn page_range(arg: Option<&str>, file_pages: u64) -> Result<(Range<u64>, String)> {
    const DEFAULT: u64 = 4096;
    let file_pages = file_pages.max(1);
    let Some(arg) = arg else {
        return Ok(if file_pages <= DEFAULT {
            (0..file_pages, format!("pages 0..{file_pages}, the whole file"))
        } else {
            (0..DEFAULT, format!("pages 0..{DEFAULT} of {file_pages} (the first {DEFAULT}; choose with --pages A..B)"))
        });
    };
    let bad = || Error::Other(format!("--pages {arg}: give page indices A..B with A < B (4 KiB pages; the file has {file_pages})"));
    let (a, b) = arg.split_once("..").ok_or_else(bad)?;
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    if a >= b || a >= file_pages {
        return Err(bad());
    }
    let b = b.min(file_pages);
    Ok((a..b, format!("pages {a}..{b} of {file_pages}")))
}

/// "kernel 7.3.4+ under QEMU TCG, 2 vCPUs": the releases named per variant when they differ.
pub fn environment(runs: &[(String, String, Accel)], cpus: u32) -> String {
    let releases: BTreeSet<&str> = runs.iter().map(|(_, r, _)| r.as_str()).collect();
    let kernel = if releases.len() == 1 {
        format!("kernel {}", releases.iter().next().unwrap_or(&""))
    } else {
        let mut seen = Vec::new();
        for (v, r, _) in runs {
            let item = format!("{v} {r}");
            if !seen.contains(&item) {
                seen.push(item);
            }
        }
        format!("kernels {}", seen.join(", "))
    };
    let accels: BTreeSet<String> = runs.iter().map(|(_, _, a)| format!("{a:?}").to_uppercase()).collect();
    format!("{kernel} under QEMU {}, {cpus} vCPUs", accels.into_iter().collect::<Vec<_>>().join("/"))
}

/// The SVG of a scenario: a section per matrix point, a series per variant.
pub fn picture(title: &str, subtitle: &str, pages: Range<u64>, traces: &[(Option<String>, Vec<(String, Trace)>)]) -> String {
    let sections: Vec<crate::svg::Section> = traces
        .iter()
        .map(|(label, series)| crate::svg::Section {
            label: label.as_deref(),
            series: series.iter().map(|(v, t)| crate::svg::Series { variant: v, trace: t }).collect(),
        })
        .collect();
    crate::svg::render(title, subtitle, pages, &sections)
}

// The running part: everything below boots VMs through the lab.

/// What the runs of one scenario point produced.
struct PointRuns {
    cells: Vec<Cell>,
    /// The first run's trace of each variant, for the picture.
    traces: Vec<(String, Trace)>,
    /// (variant, release, accelerator) of every run.
    envs: Vec<(String, String, Accel)>,
}

/// Runs `point` on each variant `runs` times. The variants take turns (A B A B, not
/// A A B B) so that a change in the host's load over time falls on all of them alike.
fn run_point(lab: &Lab, scenario: &Scenario, point: &Point, variants: &[String], runs: usize, progress: &dyn Fn(&str)) -> Result<PointRuns> {
    let mut cells: Vec<Cell> = variants.iter().map(|v| Cell { point: point.label.clone(), variant: v.clone(), samples: Vec::new() }).collect();
    let mut traces = Vec::new();
    let mut envs = Vec::new();
    let at = point.label.as_deref().map(|l| format!(" [{l}]")).unwrap_or_default();
    for run in 1..=runs {
        for (variant, cell) in variants.iter().zip(&mut cells) {
            progress(&format!("report: {}{at} on {variant}, run {run} of {runs}", scenario.name));
            let out = lab.run(scenario, point, variant, &format!("radiff report {}{at} on {variant}", scenario.name))?;
            cell.samples.push(Sample { figures: Figures::of(&out.capture.trace), pattern_ns: out.env.pattern_ns });
            envs.push((variant.clone(), out.env.release.clone(), out.accel));
            if run == 1 {
                traces.push((variant.clone(), out.capture.trace));
            }
        }
    }
    Ok(PointRuns { cells, traces, envs })
}

/// `radiff report ...` (see `radiff report --help`).
pub fn main(args: &crate::cli::ReportArgs) -> Result<ExitCode> {
    // clap checks the rest (a scenario or --all, --pages with --svg, ...); --all compares
    // exactly two.
    if args.all && args.variants.len() != 2 {
        return Err(Error::Other("--all compares two variants: give --variants A,B".into()));
    }
    let runs = usize::try_from(args.runs).unwrap_or(usize::MAX);
    let lab = crate::cli::lab()?;
    for name in &args.variants {
        lab.kernels.variant(name)?;
    }
    let progress: &dyn Fn(&str) = &crate::cli::progress;
    if args.all {
        let names = &args.variants;
        let (text, failed) = all(&lab, &names[0], &names[1], runs, progress)?;
        crate::cli::output(&text);
        return Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS });
    }
    let path = args.scenario.as_deref().unwrap_or(Path::new(""));
    let scenario = Scenario::load(path)?;
    let variants = match args.variants.is_empty() {
        false => args.variants.clone(),
        true => scenario.variants(&lab.kernels.names())?,
    };
    // Check the range before hours of runs, not after.
    let pages = page_range(args.pages.as_deref(), scenario.file_size.div_ceil(PAGE_SIZE))?;
    let mut cells = Vec::new();
    let mut traces = Vec::new();
    let mut envs = Vec::new();
    for point in &scenario.points {
        let r = run_point(&lab, &scenario, point, &variants, runs, progress)?;
        cells.extend(r.cells);
        envs.extend(r.envs);
        traces.push((point.label.clone(), r.traces));
    }
    let rows = rows(&cells);
    let heading = Heading {
        title: format!("{}: {}", scenario.name, scenario.description),
        environment: environment(&envs, lab.vcpus()),
        variants: variants.clone(),
    };
    crate::cli::output(&format!("{}\n{}\n", markdown(&heading, &rows), summary(&scenario.description, &variants, &rows)));
    if let Some(file) = &args.svg {
        let (range, what) = pages;
        let first_run = if runs > 1 { format!("; traces of the first of {runs} runs") } else { String::new() };
        let svg = picture(&heading.title, &format!("{what}{first_run}; {}", heading.environment), range, &traces);
        std::fs::write(file, svg.as_bytes()).map_err(|e| Error::io(file, e))?;
        progress(&format!("wrote {} ({} KiB)", file.display(), svg.len().div_ceil(1024)));
    }
    Ok(ExitCode::SUCCESS)
}

/// `--all`: every scenario point whose scenario runs both `a` and `b`, on both. A failed
/// run is reported with the others rather than stopping the rest; returns the text and
/// whether any run failed.
fn all(lab: &Lab, a: &str, b: &str, runs: usize, progress: &dyn Fn(&str)) -> Result<(String, bool)> {
    let scenarios = crate::scenario::load_all(&crate::repo_root().join("scenarios"))?;
    let pair = [a.to_string(), b.to_string()];
    let mut outcomes = Vec::new();
    let mut skipped = Vec::new();
    for scenario in &scenarios {
        if scenario.variants.as_ref().is_some_and(|listed| !pair.iter().all(|v| listed.contains(v))) {
            skipped.push(scenario.name.clone());
            continue;
        }
        for point in &scenario.points {
            let result = run_point(lab, scenario, point, &pair, runs, progress).map(|r| {
                let mut rows = rows(&r.cells).into_iter();
                (rows.next().expect("a row per variant"), rows.next().expect("a row per variant"))
            });
            if let Err(e) = &result {
                progress(&format!("report: {} failed: {e}", scenario.name));
            }
            outcomes.push(PointOutcome { scenario: scenario.name.clone(), point: point.label.clone(), rows: result.map_err(|e| e.to_string()) });
        }
    }
    let failed = outcomes.iter().any(|o| o.rows.is_err());
    Ok((render_all(a, b, &outcomes, &skipped), failed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::{Folio, RaState, Request, Submit, Trigger, Window};

    /// A trace of `windows` windows, each one data read of `sectors` and one folio of
    /// `order`, plus one metadata read in the first window.
    fn trace(windows: u64, sectors: u64, order: u32) -> Trace {
        let mut t = Trace {
            windows: (0..windows)
                .map(|i| Window {
            file: 0,
                    trigger: if i == 0 { Trigger::Sync } else { Trigger::Async },
                    index: i << order,
                    req_count: 256,
                    ra: RaState::default(),
                    submits: vec![Submit::Order { index: i << order, size: 1 << order, async_size: 1 << order, order }],
                    folios: vec![Folio { index: i << order, order }],
                    requests: vec![Request { sector: 1000 + i * sectors, sectors, rwbs: "RA".into() }],
                })
                .collect(),
        };
        t.windows[0].requests.push(Request { sector: 8, sectors: 8, rwbs: "RM".into() });
        t
    }

    fn sample(t: &Trace, ms: u64) -> Sample {
        Sample { figures: Figures::of(t), pattern_ns: ms * 1_000_000 }
    }

    /// base: 40 windows of 4-page (o2) folios read as 32 KiB; v1: 10 windows of 16-page
    /// (o4) folios read as 128 KiB: the same 1.25 MiB in a quarter of the reads.
    fn cells(runs_ms: &[(u64, u64)]) -> Vec<Cell> {
        let (base, v1) = (trace(40, 64, 2), trace(10, 256, 4));
        vec![
            Cell { point: None, variant: "base".into(), samples: runs_ms.iter().map(|&(b, _)| sample(&base, b)).collect() },
            Cell { point: None, variant: "async-align-v1".into(), samples: runs_ms.iter().map(|&(_, v)| sample(&v1, v)).collect() },
        ]
    }

    fn heading() -> Heading {
        Heading { title: "t: test reads".into(), environment: "kernel 7.3.4+ under QEMU TCG, 2 vCPUs".into(), variants: vec!["base".into(), "async-align-v1".into()] }
    }

    #[test]
    fn median_and_spread() {
        let s = Stat::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.n, s.median, s.min, s.max), (3, 2.0, 1.0, 3.0));
        assert_eq!(s.spread(), (1.0, 3.0), "min-max below five runs");
        let s = Stat::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.median, 2.5, "even counts take the mean of the middle two");
        // Eight runs: quartiles by linear interpolation (h = 7 * 0.25 = 1.75).
        let s = Stat::of(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 1000.0]);
        assert_eq!((s.median, s.q1, s.q3), (45.0, 27.5, 62.5));
        assert_eq!(s.spread(), (27.5, 62.5), "the interquartile range from five runs on, ignoring the outlier");
        assert_eq!(Stat::of(&[7.0]).spread(), (7.0, 7.0));
        assert_eq!(Stat::of(&[]).n, 0);
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(3329.0, 1032.0), "-69%");
        assert_eq!(percent(1000.0, 1003.0), "+0.30%");
        assert_eq!(percent(100.0, 104.0), "+4.0%");
        assert_eq!(percent(7.0, 7.0), "0%");
        assert_eq!(percent(0.0, 1019.0), "new");
        assert_eq!(percent(516.0, 0.0), "-100%");
        assert_eq!(percent(768.0, 3.0), "-99.6%", "not -100% while some are left");
        assert_eq!(percent(100000.0, 1.0), "-99.999%");
        assert_eq!(percent(536870912.0, 536870912.0 + 4096.0), "+<0.01%");
    }

    #[test]
    fn rows_aggregate_runs_and_share_folio_orders() {
        let rows = rows(&cells(&[(250, 180), (240, 200), (260, 170)]));
        assert_eq!(rows.len(), 2);
        let (b, v) = (&rows[0], &rows[1]);
        assert_eq!((b.median(Col::DataReads), b.median(Col::MetadataReads), b.median(Col::Windows)), (40.0, 1.0, 40.0));
        assert_eq!(b.median(Col::Bytes), (40 * 64 * 512) as f64);
        assert_eq!(v.median(Col::Bytes), b.median(Col::Bytes));
        // Both rows have a column for orders 2 and 4, zero where the variant has none.
        assert_eq!((b.median(Col::Order(2)), b.median(Col::Order(4))), (40.0, 0.0));
        assert_eq!((v.median(Col::Order(2)), v.median(Col::Order(4))), (0.0, 10.0));
        let t = b.stats[&Col::Time];
        assert_eq!((t.median, t.min, t.max, t.n), (250e6, 240e6, 260e6, 3));
        assert_eq!(b.runs(), 3);
    }

    #[test]
    fn the_markdown_table() {
        let rows = rows(&cells(&[(250, 180), (240, 200), (260, 170)]));
        let md = markdown(&heading(), &rows);
        let expected = "\
t: test reads
kernel 7.3.4+ under QEMU TCG, 2 vCPUs

| variant | device reads | metadata reads | bytes read | windows | guest time |
|:--|--:|--:|--:|--:|--:|
| base | 40 | 1 | 1.2 MiB | 40 | 0.250 s [0.240-0.260] |
| async-align-v1 | 10 (-75%) | 1 (0%) | 1.2 MiB (0%) | 10 (-75%) | 0.180 s [0.170-0.200] (-28%) |

| variant | folios | order 2 | order 4 |
|:--|--:|--:|--:|
| base | 40 | 40 | 0 |
| async-align-v1 | 10 (-75%) | 0 (-100%) | 10 (new) |

Median of 3 runs each; [min-max] where the runs differ; (change against base). Device reads are data reads; metadata reads (REQ_META) are counted apart. Guest time is the wall time of the reads inside the guest.
";
        assert_eq!(md, expected, "\n{md}");
        assert!(md.lines().all(|l| !l.starts_with('#')));
    }

    #[test]
    fn the_table_has_a_point_column_for_a_matrix_and_compares_within_a_point() {
        let mut c = cells(&[(250, 180)]);
        let mut d = cells(&[(100, 100)]);
        for x in &mut c {
            x.point = Some("max_sectors_kb=1024".into());
        }
        for x in &mut d {
            x.point = Some("max_sectors_kb=2048".into());
        }
        // At 2048 the variant's reads are those of base: no change there.
        d[1].samples = d[0].samples.clone();
        let rows = rows(&[c, d].concat());
        let md = markdown(&heading(), &rows);
        assert!(md.contains("| point | variant | device reads |"), "{md}");
        assert!(md.contains("| max_sectors_kb=1024 | async-align-v1 | 10 (-75%) | 1 (0%) | 1.2 MiB (0%) | 10 (-75%) | 0.180 s (-28%) |"), "{md}");
        assert!(md.contains("| max_sectors_kb=2048 | base | 40 | 1 | 1.2 MiB | 40 | 0.100 s |"), "{md}");
        assert!(md.contains("| max_sectors_kb=2048 | async-align-v1 | 40 (0%) | 1 (0%) | 1.2 MiB (0%) | 40 (0%) | 0.100 s (0%) |"), "{md}");
        assert!(md.contains("\nOne run each; (change against base)."), "{md}");
        let text = summary("test reads", &heading().variants, &rows);
        assert!(text.contains("test reads at max_sectors_kb=1024: async-align-v1 issues 75% fewer device reads than base (10 vs 40)"), "{text}");
        assert!(text.contains("test reads at max_sectors_kb=2048: async-align-v1 issues as many device reads as base (40) for the same 1.2 MiB; its reads take as long in the guest (0.100 s, one run each); it adds the same folios (40)."), "{text}");
    }

    #[test]
    fn the_summary_sentence_comes_from_the_figures() {
        let rows = rows(&cells(&[(250, 180), (240, 200), (260, 170)]));
        let text = summary("1 MiB reads after a 4 KiB read", &heading().variants, &rows);
        assert_eq!(
            text,
            "1 MiB reads after a 4 KiB read: async-align-v1 issues 75% fewer device reads than base (10 vs 40) for the same 1.2 MiB; \
its reads take 28% less time in the guest (0.180 s vs 0.250 s, median of 3 runs); \
its folios are mostly order 4 (10 of 10), base's mostly order 2 (40 of 40)."
        );
        // Overlapping spreads are called out as such.
        let rows = super::rows(&cells(&[(250, 245), (240, 230), (260, 262)]));
        let text = summary("x", &heading().variants, &rows);
        assert!(text.contains("its reads take 2.0% less time in the guest (0.245 s vs 0.250 s, median of 3 runs, within the spread of the runs)"), "{text}");
        // More bytes and more metadata reads are said, with their numbers.
        let mut c = cells(&[(100, 100)]);
        c[1].samples[0].figures.bytes_read += 1 << 20;
        c[1].samples[0].figures.metadata_reads = 3;
        let text = summary("x", &heading().variants, &super::rows(&c));
        assert!(text.contains("(10 vs 40), and 3 metadata reads vs 1 and reads 80% more bytes (2.2 MiB vs 1.2 MiB)"), "{text}");
    }

    #[test]
    fn all_lists_only_what_changed_and_counts_the_rest() {
        let changed = rows(&cells(&[(250, 180)]));
        // Equal figures with different times: unchanged (time is not compared).
        let mut same = cells(&[(250, 180)]);
        same[1].samples = vec![Sample { pattern_ns: 1, ..same[0].samples[0].clone() }];
        let same = rows(&same);
        assert!(differences(&same[0], &same[1]).is_empty());
        let d = differences(&changed[0], &changed[1]);
        let cols: Vec<Col> = d.iter().map(|d| d.col).collect();
        assert_eq!(cols, vec![Col::DataReads, Col::Windows, Col::Folios, Col::Order(2), Col::Order(4)], "bytes and metadata reads are equal");
        let pair = |r: &[Row]| Ok((r[0].clone(), r[1].clone()));
        let outcomes = vec![
            PointOutcome { scenario: "1mib_after_4k".into(), point: None, rows: pair(&changed) },
            PointOutcome { scenario: "random_4k".into(), point: None, rows: pair(&same) },
            PointOutcome { scenario: "2mib_limit".into(), point: Some("max_sectors_kb=2048".into()), rows: pair(&same) },
            PointOutcome { scenario: "random_64k".into(), point: None, rows: Err("the VM did not finish within 240 s\nmore".into()) },
        ];
        let text = render_all("base", "async-align-v1", &outcomes, &["f2fs_512k_reads_ufs".into()]);
        let expected = "\
async-align-v1 against base, every scenario that runs both (one run each); only what changed:

| scenario | figure | base | async-align-v1 | change |
|:--|:--|--:|--:|--:|
| 1mib_after_4k | device reads | 40 | 10 | -75% |
| 1mib_after_4k | windows | 40 | 10 | -75% |
| 1mib_after_4k | folios | 40 | 10 | -75% |
| 1mib_after_4k | order-2 folios | 40 | 0 | -100% |
| 1mib_after_4k | order-4 folios | 0 | 10 | new |

Changed: 1 of 3 scenario points.
Unchanged (device reads, metadata reads, bytes, windows and folio orders all equal): 2 of 3: random_4k, 2mib_limit (max_sectors_kb=2048).
Guest time is not compared here; `radiff report SCENARIO.yaml --variants base,async-align-v1 --runs N` gives it.
Not run (their `variants:` do not list both): f2fs_512k_reads_ufs.
Failed: random_64k: the VM did not finish within 240 s
";
        assert_eq!(text, expected, "\n{text}");
    }

    /// An mmap-like trace: `faults` fault windows of 32 pages each (read-around, one
    /// 128 KiB read, order-2 folios), each followed by `arounds` fault-around ranges of 16
    /// pages.
    fn fault_trace(faults: u64, arounds: u64) -> Trace {
        let mut windows = Vec::new();
        for i in 0..faults {
            let mut w = Window::open(Trigger::Fault, i * 32, 1, RaState::default());
            w.submits.push(Submit::Order { index: i * 32, size: 32, async_size: 8, order: 2 });
            w.folios = (0..8).map(|k| Folio { index: i * 32 + 4 * k, order: 2 }).collect();
            w.requests.push(Request { sector: 1000 + i * 256, sectors: 256, rwbs: "RA".into() });
            windows.push(w);
            for k in 0..arounds {
                windows.push(Window::open(Trigger::FaultAround, i * 32 + 16 * (k % 2), 16, RaState::default()));
            }
        }
        Trace { windows }
    }

    #[test]
    fn fault_columns_only_when_a_run_faulted() {
        // base: 4 faults and 8 ranges over 128 pages; v1: 2 faults, 6 ranges, over 96.
        let fault_cells = vec![
            Cell { point: None, variant: "base".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "async-align-v1".into(), samples: vec![sample(&fault_trace(2, 3), 100)] },
        ];
        let rows = rows(&fault_cells);
        assert!(rows.iter().all(Row::has_faults));
        assert_eq!((rows[0].median(Col::Faults), rows[0].median(Col::FaultArounds), rows[0].median(Col::FaultAroundPages)), (4.0, 8.0, 128.0));
        let md = markdown(&heading(), &rows);
        let expected = "\
t: test reads
kernel 7.3.4+ under QEMU TCG, 2 vCPUs

| variant | device reads | metadata reads | bytes read | windows | faults | fault-around ranges | fault-around pages | guest time |
|:--|--:|--:|--:|--:|--:|--:|--:|--:|
| base | 4 | 0 | 0.5 MiB | 0 | 4 | 8 | 128 | 0.100 s |
| async-align-v1 | 2 (-50%) | 0 (0%) | 0.2 MiB (-50%) | 0 (0%) | 2 (-50%) | 6 (-25%) | 96 (-25%) | 0.100 s (0%) |

| variant | folios | order 2 |
|:--|--:|--:|
| base | 32 | 32 |
| async-align-v1 | 16 (-50%) | 16 (-50%) |

One run each; (change against base). Device reads are data reads; metadata reads (REQ_META) are counted apart. \
Guest time is the wall time of the reads inside the guest. Windows are those of page_cache_sync_ra/page_cache_async_ra \
calls; faults are mm_filemap_fault events (a fault retried after readahead dropped the mmap lock counts twice); \
fault-around ranges are mm_filemap_map_pages events, and fault-around pages the pages those ranges cover (the event \
does not say how many it mapped).
";
        assert_eq!(md, expected, "\n{md}");
        let text = summary("touches", &heading().variants, &rows);
        assert!(
            text.contains("(2 vs 4) and reads 50% fewer bytes (0.2 MiB vs 0.5 MiB); it takes 50% fewer faults (2 vs 4) and 25% fewer fault-around ranges (6 vs 8, over 96 pages vs 128); its reads take"),
            "{text}"
        );
        let cols: Vec<Col> = differences(&rows[0], &rows[1]).iter().map(|d| d.col).collect();
        assert_eq!(cols, vec![Col::DataReads, Col::Bytes, Col::Faults, Col::FaultArounds, Col::FaultAroundPages, Col::Folios, Col::Order(2)]);

        // A variant that did not fault beside one that did shows 0, and equal faults say so.
        let mixed = super::rows(&[
            Cell { point: None, variant: "base".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "async-align-v1".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "pread".into(), samples: vec![sample(&trace(4, 256, 2), 100)] },
        ]);
        assert!(mixed.iter().all(Row::has_faults));
        let md = markdown(&heading(), &mixed);
        assert!(md.contains("| pread | 4 (0%) | 1 (new) | 0.5 MiB (0%) | 4 (new) | 0 (-100%) | 0 (-100%) | 0 (-100%) | 0.100 s (0%) |"), "{md}");
        let text = summary("touches", &heading().variants, &mixed);
        assert!(text.contains("it takes as many faults (4) and as many fault-around ranges (8, over 128 pages);"), "{text}");

        // Pread runs alone: no fault column, no fault words (the_markdown_table has the text).
        let pread = super::rows(&cells(&[(250, 180)]));
        assert!(!pread.iter().any(Row::has_faults));
        let (md, text) = (markdown(&heading(), &pread), summary("x", &heading().variants, &pread));
        assert!(!md.contains("fault") && !text.contains("fault"), "{md}{text}");
    }

    #[test]
    fn all_names_faults_among_the_unchanged_figures_only_when_there_are_some() {
        let faulting = rows(&[
            Cell { point: None, variant: "base".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "v1".into(), samples: vec![sample(&fault_trace(4, 3), 100)] },
        ]);
        let outcomes = vec![PointOutcome { scenario: "mmap_seq_8mib".into(), point: None, rows: Ok((faulting[0].clone(), faulting[1].clone())) }];
        let text = render_all("base", "v1", &outcomes, &[]);
        assert!(text.contains("| mmap_seq_8mib | fault-around ranges | 8 | 12 | +50% |\n| mmap_seq_8mib | fault-around pages | 128 | 192 | +50% |\n"), "{text}");
        assert!(text.contains("Unchanged (device reads, metadata reads, bytes, windows, faults, fault-around ranges and folio orders all equal): 0 of 1."), "{text}");
    }

    #[test]
    fn page_ranges() {
        assert_eq!(page_range(None, 131072).unwrap(), (0..4096, "pages 0..4096 of 131072 (the first 4096; choose with --pages A..B)".into()));
        assert_eq!(page_range(None, 100).unwrap(), (0..100, "pages 0..100, the whole file".into()));
        assert_eq!(page_range(Some("512..1024"), 131072).unwrap().0, 512..1024);
        assert_eq!(page_range(Some("0..999999"), 131072).unwrap(), (0..131072, "pages 0..131072 of 131072".into()));
        assert!(page_range(Some("9..9"), 131072).is_err());
        assert!(page_range(Some("200000..300000"), 131072).is_err());
        assert!(page_range(Some("x"), 131072).unwrap_err().to_string().contains("A..B"));
    }

    #[test]
    fn a_picture_has_a_section_per_point_and_a_marker_per_window() {
        let traces = vec![
            (Some("max_sectors_kb=1024".to_string()), vec![("base".to_string(), trace(40, 64, 2)), ("v1".to_string(), trace(10, 256, 4))]),
            (Some("max_sectors_kb=2048".to_string()), vec![("base".to_string(), trace(40, 64, 2)), ("v1".to_string(), trace(10, 256, 4))]),
        ];
        let (range, what) = page_range(None, 160).unwrap();
        let svg = picture("t: test", &what, range, &traces);
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert!(svg.contains(">pages 0..160, the whole file</text>"), "{svg}");
        assert_eq!(svg.matches(r#"class="legend-entry""#).count(), 2);
        assert!(svg.contains(">max_sectors_kb=1024</text>") && svg.contains(">max_sectors_kb=2048</text>"));
        // base: 40 windows of 4 pages, v1: 10 of 16 pages (all inside 160 pages), twice.
        assert_eq!(svg.matches("<title>base: [").count(), 80);
        assert_eq!(svg.matches("<title>v1: [").count(), 20);
        assert!(svg.contains("<title>v1: [144+16) order 4</title>"), "{svg}");
    }

    #[test]
    fn the_environment_line() {
        let runs = vec![("base".to_string(), "7.3.4+".to_string(), Accel::Tcg), ("v1".into(), "7.3.4+".into(), Accel::Tcg)];
        assert_eq!(environment(&runs, 2), "kernel 7.3.4+ under QEMU TCG, 2 vCPUs");
        let runs = vec![("base".to_string(), "7.3.4".to_string(), Accel::Kvm), ("v1".into(), "7.3.4-v1".into(), Accel::Kvm)];
        assert_eq!(environment(&runs, 2), "kernels base 7.3.4, v1 7.3.4-v1 under QEMU KVM, 2 vCPUs");
    }
}
