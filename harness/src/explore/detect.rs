//! Detectors: named, pure functions over a trace (and the system calls that made it) that
//! say whether the trace shows an anomaly, how strongly, and which pattern fired them.
//!
//! Each detector works on the same trace type whether the model predicted it or the
//! kernel produced it (normalised), so a finding is confirmed by running the same
//! detector on the kernel's trace.
//!
//! Sequential streams are found from the program's reads, not from the trace: a stream is
//! a run of reads each starting where an earlier read of the run ended (through any file
//! descriptor), with at least `stream_reads` reads and
//! `stream_bytes` bytes ([`Thresholds`]). A window belongs to the stream whose byte range
//! holds its first page.

use std::collections::BTreeMap;

use radiff_model::{Op, Submit, Trace, Trigger, Window};

mod change;
mod hint;
mod ramp;
mod thresholds;

pub use change::{changes, requests_or_folios_differ, variant_change, Change, Figure, VariantChange};
pub use hint::{hint_shortfall, hints, Hint};
pub use ramp::lost_ramp;
pub use thresholds::{help as thresholds_help, Threshold, Thresholds};

const PAGE: u64 = radiff_model::trace::PAGE_SIZE;

/// What a trace was made from, as the detectors need it.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    pub ops: &'a [Op],
    pub file_size: u64,
    /// `read_ahead_kb / 4`.
    pub ra_pages: u64,
    pub max_sectors_kb: u64,
    /// The mapping's largest folio order (0: no large folios).
    pub max_order: u32,
    /// [`streams`] of `ops`, found by the first detector that asks ([`Context::streams`]),
    /// with the stream thresholds they were found under.
    pub found_streams: std::cell::OnceCell<([u64; 3], Vec<Stream>)>,
}

impl Context<'_> {
    /// [`streams`] of `ops` under `t`: found once for all the detectors that look at one
    /// trace (again if `t`'s stream thresholds differ from the first caller's).
    pub fn streams(&self, t: &Thresholds) -> std::borrow::Cow<'_, [Stream]> {
        let key = stream_thresholds(t);
        let (k, s) = self.found_streams.get_or_init(|| (key, streams(self.ops, t)));
        if *k == key {
            std::borrow::Cow::Borrowed(s)
        } else {
            std::borrow::Cow::Owned(streams(self.ops, t))
        }
    }
}

/// The thresholds [`streams`] is tuned by: stream_reads, stream_bytes, stream_gap.
fn stream_thresholds(t: &Thresholds) -> [u64; 3] {
    [t.count("stream_reads"), t.count("stream_bytes"), t.count("stream_gap")]
}

/// A detector that fired.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The detector's name: a row of [`DETECTORS`], or `variant-change`.
    pub detector: &'static str,
    /// The trace pattern that fired it, coarse enough to group alike findings.
    pub key: String,
    /// How strongly it fired (larger is stronger; comparable within one detector).
    pub strength: f64,
    /// What it saw, for a reviewer.
    pub detail: String,
    /// A variant change's figures and their directions, which `key` renders (`None` for
    /// the other detectors): what decides whether it is worse, never the key's text.
    pub change: Option<VariantChange>,
}

/// A detector over one trace.
pub type Detector = fn(&Trace, &Context, &Thresholds) -> Option<Hit>;

/// One row of the detectors' table: a detector's name (its [`Hit::detector`]), the
/// thresholds it is tuned by (each a `--threshold` option), and its function.
pub struct Row {
    pub name: &'static str,
    pub thresholds: &'static [Threshold],
    pub detect: Detector,
}

/// The thresholds of the stream finder every stream detector uses ([`streams`]).
pub const STREAM_THRESHOLDS: &[Threshold] = &[
    Threshold::whole("stream_reads", 8, "sequential streams have at least this many reads"),
    Threshold::whole("stream_bytes", 1 << 20, "... and at least this many bytes"),
    Threshold::whole("stream_gap", 8, "a read continues a stream only this many calls after its last read at most"),
];

/// The detectors over one trace, in the order they are listed and confirmed (after the
/// variant change). A new detector is one function and one row here.
pub const DETECTORS: &[Row] = &[
    Row {
        name: "trimmed-window",
        thresholds: &[
            Threshold::ratio("trim_ratio", 0.5, "an async window is trimmed when smaller than this fraction of the window before it in its stream"),
            Threshold::whole("trim_min_pages", 16, "... only after a window of at least this many pages"),
            Threshold::whole("trim_min_count", 2, "... and the detector fires on at least this many trimmed windows"),
        ],
        detect: trimmed_window,
    },
    Row {
        name: "order-collapse",
        thresholds: &[Threshold::whole("order_gap", 3, "fires when a stream's median folio order in its second half is this many orders below what its window allows")],
        detect: order_collapse,
    },
    Row {
        name: "fragmentation",
        thresholds: &[
            Threshold::ratio("frag_ratio", 0.25, "a window is fragmented when its largest request is below this fraction of min(window or read size, max_sectors_kb)"),
            Threshold::ratio("frag_share", 0.5, "... and the detector fires when this share of a stream's windows are"),
        ],
        detect: fragmentation,
    },
    Row {
        name: "amplification",
        thresholds: &[
            Threshold::ratio("amplification", 4.0, "fires when the device reads this many times the (distinct) bytes the program read or asked for"),
            Threshold::whole("amplification_min_bytes", 1 << 20, "... when the device read at least this many bytes"),
            Threshold::whole("amplification_min_program_bytes", 256 << 10, "... and the program at least this many"),
        ],
        detect: amplification,
    },
    Row {
        name: "hint-shortfall",
        thresholds: &[
            Threshold::ratio("hint_read_share", 0.5, "a hint (WILLNEED, readahead(2), MADV_WILLNEED) falls short when it reads less than this share of the uncached pages it asked for"),
            Threshold::whole("hint_min_pages", 64, "... when it asked for at least this many uncached pages"),
        ],
        detect: hint_shortfall,
    },
    Row {
        name: "lost-ramp",
        thresholds: &[
            Threshold::ratio("ramp_ratio", 4.0, "a stream has ramped up once a window is this many times its first (in pages, or 2^N in folio order)"),
            Threshold::whole("ramp_min_drops", 1, "fires when a ramped stream falls back to its first window's size or order this many times, in its middle and not after cached pages"),
        ],
        detect: lost_ramp,
    },
];

/// Where `detector` is listed: 0 for the variant change, then [`DETECTORS`]' order
/// (an unknown name last).
pub fn rank(detector: &str) -> usize {
    if detector == "variant-change" {
        return 0;
    }
    1 + DETECTORS.iter().position(|r| r.name == detector).unwrap_or(DETECTORS.len())
}

/// Every detector of [`DETECTORS`] that fires on `trace`, in table order.
pub fn run_all(trace: &Trace, ctx: &Context, t: &Thresholds) -> Vec<Hit> {
    DETECTORS.iter().filter_map(|row| (row.detect)(trace, ctx, t)).collect()
}

/// A sequential stream of the program's reads: bytes `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    pub start: u64,
    pub end: u64,
    pub reads: u64,
    /// The stream's most common read size (the largest of equally common ones).
    pub read_size: u64,
}

/// Touches of mapping `m` count as reads through this descriptor number plus `m`.
pub const MAP_FD: u32 = 1 << 16;

/// Streams and byte counts place file `f`'s byte `o` at `f * FILE_STRIDE + o`, so the
/// streams of several files never join (and `Stream` offsets of file 0 are its own).
pub const FILE_STRIDE: u64 = 1 << 44;

fn file_base(fd: u32) -> u64 {
    radiff_model::pattern::file_of(fd) as u64 * FILE_STRIDE
}

/// A stream's read sizes as (size, reads) pairs, in no order: a stream has few. Empty
/// while the stream has one read (its `read_size`): most streams of random reads never
/// have a second, and need no allocation.
type ReadSizes = Vec<(u64, u64)>;

/// The sequential streams of `ops` (see the module's comment). A stream that overlaps an
/// earlier one re-reads what is cached and is left out, and so is one begun under
/// `POSIX_FADV_RANDOM` (the program asked for no readahead).
pub fn streams(ops: &[Op], t: &Thresholds) -> Vec<Stream> {
    // Each stream, its read sizes, the op index of its last read, and whether its first read
    // was made under POSIX_FADV_RANDOM.
    let mut all: Vec<(Stream, ReadSizes, usize, bool)> = Vec::new();
    // Index of a stream by the offset where it ends.
    let mut by_end: std::collections::HashMap<u64, usize, std::hash::BuildHasherDefault<U64Hasher>> =
        Default::default();
    let mut random_fds: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    // Mappings: their file offset; a touch is a one-page read of the file through a
    // "descriptor" of its own (MAP_FD + map), MADV_RANDOM playing POSIX_FADV_RANDOM.
    let mut maps: BTreeMap<u32, u64> = BTreeMap::new();
    let [min_reads, min_bytes, gap] = stream_thresholds(t);
    for (n, op) in ops.iter().enumerate() {
        let (fd, offset, len) = match *op {
            Op::Read { fd, offset, len } => (fd, file_base(fd) + offset, len),
            Op::Splice { fd, offset, len, .. } => (fd, file_base(fd) + offset, len),
            Op::ReadWith { fd, offset, len, how } if !how.direct => (fd, file_base(fd) + offset, len),
            // O_DIRECT: no page cache, no readahead stream.
            Op::ReadWith { .. } => continue,
            Op::Touch { map, offset } => (MAP_FD + map, maps.get(&map).copied().unwrap_or(0) + offset, PAGE),
            Op::Mmap { map, offset, fd, .. } => {
                maps.insert(map, file_base(fd) + offset);
                random_fds.remove(&(MAP_FD + map));
                continue;
            }
            Op::Madvise { map, advice, .. } => {
                match advice {
                    radiff_model::MadvAdvice::Random => random_fds.insert(MAP_FD + map),
                    radiff_model::MadvAdvice::Normal | radiff_model::MadvAdvice::Sequential => {
                        random_fds.remove(&(MAP_FD + map))
                    }
                    _ => false,
                };
                continue;
            }
            Op::Fadvise { fd, advice, .. } => {
                match advice {
                    radiff_model::Advice::Random => random_fds.insert(fd),
                    radiff_model::Advice::Normal | radiff_model::Advice::Sequential => random_fds.remove(&fd),
                    _ => false,
                };
                continue;
            }
            // readahead(2) and munmap are not reads of a stream.
            Op::Readahead { .. } | Op::Munmap { .. } => continue,
            // Arming fail_page_alloc reads nothing; explore draws no programs.
            Op::FailAlloc { .. } | Op::Program { .. } => continue,
        };
        // A read continues a stream that ended where it starts, read a few calls ago.
        match by_end.remove(&offset).filter(|&i| n - all[i].2 <= gap as usize) {
            Some(i) => {
                let (s, sizes, last, _) = &mut all[i];
                s.end = offset + len;
                s.reads += 1;
                *last = n;
                if sizes.is_empty() {
                    sizes.push((s.read_size, 1));
                }
                match sizes.iter_mut().find(|(size, _)| *size == len) {
                    Some((_, n)) => *n += 1,
                    None => sizes.push((len, 1)),
                }
                by_end.insert(s.end, i);
            }
            None => {
                all.push((
                    Stream { start: offset, end: offset + len, reads: 1, read_size: len },
                    Vec::new(),
                    n,
                    random_fds.contains(&fd),
                ));
                by_end.insert(offset + len, all.len() - 1);
            }
        }
    }
    let mut kept: Vec<Stream> = Vec::new();
    for (mut s, sizes, _, random) in all {
        if random
            || s.reads < min_reads
            || s.end - s.start < min_bytes
            || kept.iter().any(|k| s.start < k.end && k.start < s.end)
        {
            continue;
        }
        if let Some(&(size, _)) = sizes.iter().max_by_key(|&&(size, n)| (n, size)) {
            s.read_size = size;
        }
        kept.push(s);
    }
    kept
}

/// A multiplicative hash (FxHash's) for [`streams`]' offsets: SipHash would cost more
/// than the rest of a lookup.
#[derive(Clone, Copy, Default)]
struct U64Hasher(u64);

impl std::hash::Hasher for U64Hasher {
    fn finish(&self) -> u64 {
        // The product's high bits are the mixed ones; the table indexes by the low ones
        // (offsets are multiples of the page size).
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// The windows of `trace` whose first page lies in `stream`, in trace order.
fn windows_of<'a>(trace: &'a Trace, stream: &Stream) -> Vec<&'a Window> {
    let (a, b) = (stream.start / PAGE, stream.end.div_ceil(PAGE));
    let at = |w: &Window| w.file as u64 * (FILE_STRIDE / PAGE) + w.index;
    trace.windows.iter().filter(|w| w.trigger != Trigger::Start && at(w) >= a && at(w) < b).collect()
}

/// A stream's bytes as `[start, end)` of its own file (see [`FILE_STRIDE`]).
fn in_file(stream: &Stream) -> (crate::scenario::Size, crate::scenario::Size) {
    (
        crate::scenario::Size(stream.start % FILE_STRIDE),
        crate::scenario::Size(stream.end - stream.start / FILE_STRIDE * FILE_STRIDE),
    )
}

/// The window a call submitted: (first page, pages).
fn submitted(w: &Window) -> Option<(u64, u64)> {
    w.submits.first().map(|s| match *s {
        Submit::Order { index, size, .. } => (index, size),
        Submit::Unbounded { index, nr_to_read, .. } => (index, nr_to_read),
    })
}

/// The largest power of two at or below `n` (n > 0), as a bucket for keys.
fn pow2_floor(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        1 << (63 - n.leading_zeros())
    }
}

fn ilog2(n: u64) -> u32 {
    if n == 0 {
        0
    } else {
        63 - n.leading_zeros()
    }
}

/// Trimmed window (seed 000's signature): in a sequential stream, an async window much
/// smaller than the window before it, away from the end of the file.
pub fn trimmed_window(trace: &Trace, ctx: &Context, t: &Thresholds) -> Option<Hit> {
    let file_pages = ctx.file_size.div_ceil(PAGE);
    let mut trimmed = 0u64;
    let mut windows = 0u64;
    let mut pairs: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut ratio_sum = 0.0;
    let (min_pages, ratio) = (t.count("trim_min_pages"), t.get("trim_ratio"));
    for &stream in ctx.streams(t).iter() {
        let mut prev: Option<u64> = None;
        for w in windows_of(trace, &stream) {
            let Some((index, size)) = submitted(w) else { continue };
            windows += 1;
            if let Some(p) = prev {
                let ends_at_eof = index + size >= file_pages;
                if w.trigger == Trigger::Async && p >= min_pages && (size as f64) < p as f64 * ratio && !ends_at_eof {
                    trimmed += 1;
                    ratio_sum += size as f64 / p as f64;
                    *pairs.entry((pow2_floor(p), pow2_floor(size))).or_default() += 1;
                }
            }
            prev = Some(size);
        }
    }
    if trimmed < t.count("trim_min_count") {
        return None;
    }
    let ((p, s), _) = pairs.iter().max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))?;
    let mean = ratio_sum / trimmed as f64;
    Some(Hit {
        detector: "trimmed-window",
        change: None,
        key: format!("~{p}->~{s} pages"),
        strength: trimmed as f64 / windows.max(1) as f64 * (1.0 - mean),
        detail: format!("{trimmed} of {windows} windows in sequential streams trimmed to {:.0} % of the one before (most often ~{p} -> ~{s} pages)", mean * 100.0),
    })
}

/// Order collapse: a sequential stream whose folios, in its second half (steady state),
/// have a median order far below what its window allows: min(the mapping's largest order,
/// log2 of max(read_ahead pages, the stream's read size in pages)).
pub fn order_collapse(trace: &Trace, ctx: &Context, t: &Thresholds) -> Option<Hit> {
    if ctx.max_order == 0 || ctx.ra_pages == 0 {
        return None;
    }
    let mut best: Option<Hit> = None;
    for &stream in ctx.streams(t).iter() {
        let allowed = ctx.max_order.min(ilog2(ctx.ra_pages.max(stream.read_size / PAGE)));
        if allowed < t.count("order_gap") as u32 {
            continue;
        }
        let ws = windows_of(trace, &stream);
        let mut orders: Vec<u32> = ws[ws.len() / 2..].iter().flat_map(|w| w.folios.iter().map(|f| f.order)).collect();
        if orders.len() < 4 {
            continue;
        }
        orders.sort_unstable();
        let median = orders[orders.len() / 2];
        if median + t.count("order_gap") as u32 <= allowed {
            let strength =
                (allowed - median) as f64 / allowed as f64 * (stream.end - stream.start) as f64 / ctx.file_size as f64;
            if best.as_ref().is_none_or(|b| strength > b.strength) {
                best = Some(Hit {
                    detector: "order-collapse",
                    change: None,
                    key: format!("o{median} of o{allowed}"),
                    strength,
                    detail: format!(
                        "a sequential stream over [{}, {}) of {} reads: median folio order {median} in its second half ({} folios) where its window allows order {allowed}",
                        in_file(&stream).0,
                        in_file(&stream).1,
                        stream.reads,
                        orders.len()
                    ),
                });
            }
        }
    }
    best
}

/// Fragmentation: a sequential stream whose windows are read with requests much smaller
/// than min(the window or the read, whichever is larger, and max_sectors_kb).
pub fn fragmentation(trace: &Trace, ctx: &Context, t: &Thresholds) -> Option<Hit> {
    let limit = ctx.max_sectors_kb * 1024;
    let (frag_ratio, frag_share) = (t.get("frag_ratio"), t.get("frag_share"));
    let mut best: Option<Hit> = None;
    for &stream in ctx.streams(t).iter() {
        let ws = windows_of(trace, &stream);
        let mut with_requests = 0u64;
        let mut fragmented = 0u64;
        let mut sizes: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        for w in &ws {
            let reads: Vec<u64> =
                w.requests.iter().filter(|r| r.is_read() && !r.is_metadata()).map(|r| r.bytes()).collect();
            let Some(&largest) = reads.iter().max() else { continue };
            let window = submitted(w).map_or(0, |(_, s)| s * PAGE);
            let expected = window.max(stream.read_size).min(limit);
            if expected < 32 << 10 {
                continue;
            }
            with_requests += 1;
            if (largest as f64) < expected as f64 * frag_ratio {
                fragmented += 1;
                *sizes.entry((pow2_floor(largest), pow2_floor(expected))).or_default() += 1;
            }
        }
        if with_requests >= 4 && fragmented as f64 >= with_requests as f64 * frag_share {
            let ((got, want), _) = sizes.iter().max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))?;
            let strength = fragmented as f64 / with_requests as f64 * (1.0 - *got as f64 / *want as f64);
            if best.as_ref().is_none_or(|b| strength > b.strength) {
                best = Some(Hit {
                    detector: "fragmentation",
                    change: None,
                    key: format!("~{} for ~{}", crate::summary::kib(*got), crate::summary::kib(*want)),
                    strength,
                    detail: format!(
                        "{fragmented} of {with_requests} windows of a sequential stream over [{}, {}) read with requests of ~{} where ~{} would do",
                        in_file(&stream).0,
                        in_file(&stream).1,
                        crate::summary::kib(*got),
                        crate::summary::kib(*want)
                    ),
                });
            }
        }
    }
    best
}

/// Bytes the program read or asked for (`POSIX_FADV_WILLNEED`, `readahead(2)` and
/// `MADV_WILLNEED` ranges count as asked for; `len` 0 is to the end of the file; a touch
/// reads its page), each byte of the file counted once.
pub fn distinct_bytes_read(ops: &[Op], file_size: u64) -> u64 {
    union_len(read_ranges(ops, file_size))
}

/// The byte ranges [`distinct_bytes_read`] counts, in op order, a range that starts inside
/// the one before merged into it.
fn read_ranges(ops: &[Op], file_size: u64) -> Vec<(u64, u64)> {
    // Offsets are file-global (FILE_STRIDE); every file has `file_size` bytes.
    let upto = |offset: u64, len: u64| {
        let end = offset / FILE_STRIDE * FILE_STRIDE + file_size;
        if len == 0 {
            end
        } else {
            (offset + len).min(end)
        }
    };
    let mut maps: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    // A range that starts inside the last one extends it (the union is the same, and
    // sequential reads leave one range to sort instead of one each).
    let push_range = |ranges: &mut Vec<(u64, u64)>, (a, b): (u64, u64)| match ranges.last_mut() {
        Some(last) if last.0 <= a && a <= last.1 && a <= b => last.1 = last.1.max(b),
        _ => ranges.push((a, b)),
    };
    for op in ops {
        match *op {
            Op::Read { fd, offset, len } | Op::Splice { fd, offset, len, .. } => {
                push_range(&mut ranges, (file_base(fd) + offset, file_base(fd) + offset + len))
            }
            Op::ReadWith { fd, offset, len, how } if !how.direct => {
                push_range(&mut ranges, (file_base(fd) + offset, file_base(fd) + offset + len))
            }
            Op::Fadvise { fd, offset, len, advice: radiff_model::Advice::Willneed }
            | Op::Readahead { fd, offset, len } => {
                push_range(&mut ranges, (file_base(fd) + offset, upto(file_base(fd) + offset, len)))
            }
            Op::Mmap { map, fd, offset, len, .. } => {
                maps.insert(map, (file_base(fd) + offset, len));
            }
            Op::Touch { map, offset } => {
                let at = maps.get(&map).map_or(0, |m| m.0) + offset;
                push_range(&mut ranges, (at, upto(at, PAGE)));
            }
            Op::Madvise { map, offset, len, advice: radiff_model::MadvAdvice::Willneed } => {
                if let Some(&(start, maplen)) = maps.get(&map) {
                    let len = if len == 0 { maplen.saturating_sub(offset) } else { len };
                    push_range(&mut ranges, (start + offset, upto(start + offset, len)));
                }
            }
            _ => {}
        }
    }
    ranges
}

/// Bytes in the union of `ranges`.
fn union_len(mut ranges: Vec<(u64, u64)>) -> u64 {
    ranges.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(u64, u64)> = None;
    for (a, b) in ranges {
        match &mut cur {
            Some((_, e)) if a <= *e => *e = (*e).max(b),
            _ => {
                if let Some((s, e)) = cur {
                    total += e - s;
                }
                cur = Some((a, b));
            }
        }
    }
    if let Some((s, e)) = cur {
        total += e - s;
    }
    total
}

/// Amplification: the device read many times the (distinct) bytes the program read or
/// asked for with `POSIX_FADV_WILLNEED`.
pub fn amplification(trace: &Trace, ctx: &Context, t: &Thresholds) -> Option<Hit> {
    let device: u64 = trace.requests().filter(|r| r.is_read() && !r.is_metadata()).map(|r| r.bytes()).sum();
    // The device's count first, then a bound, before the program's count sorts its reads.
    if device < t.count("amplification_min_bytes") {
        return None;
    }
    let ranges = read_ranges(ctx.ops, ctx.file_size);
    // The program read at least its longest range, so the ratio is at most this (float
    // division is monotone): below the threshold, the exact count cannot reach it.
    let longest = ranges.iter().map(|(a, b)| b.saturating_sub(*a)).max().unwrap_or(0);
    if longest > 0 && (device as f64 / longest as f64) < t.get("amplification") {
        return None;
    }
    let program = union_len(ranges);
    if program == 0 || program < t.count("amplification_min_program_bytes") {
        return None;
    }
    let ratio = device as f64 / program as f64;
    (ratio >= t.get("amplification")).then(|| Hit {
        detector: "amplification",
        change: None,
        key: format!("x{}", pow2_floor(ratio as u64)),
        strength: ratio,
        detail: format!(
            "the device read {} for {} the program read: x{ratio:.1}",
            crate::summary::kib(device),
            crate::summary::kib(program)
        ),
    })
}

pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests;
