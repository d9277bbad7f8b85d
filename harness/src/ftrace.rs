//! Parses ftrace's text (`/sys/kernel/tracing/trace`) into a [`Trace`]: the events of one
//! file and its device, grouped into windows, with counts of everything filtered out.
//!
//! Pure: text in, values out. The formats are those of Linux 7.3.4's
//! include/trace/events/{readahead,filemap,block,huge_memory}.h. Windows open at
//! `page_cache_sync_ra`, `page_cache_async_ra`, `mm_filemap_fault`, `mm_filemap_map_pages`
//! and `mm_khugepaged_collapse_file` events.

use std::collections::BTreeMap;

use radiff_model::{Folio, RaState, Request, Submit, Trace, Trigger, Window};
use serde::{Deserialize, Serialize};

/// What belongs to the scenario: the file system's device and the files' inodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// `major:minor` of the device (the block device and the file system's `s_dev`).
    pub major: u32,
    pub minor: u32,
    /// The inode of each of the scenario's files: an event's file is its index here
    /// ([`radiff_model::Window::file`]).
    pub inos: Vec<u64>,
}

impl Filter {
    /// From the guest's `"259:0"` and the files' inode numbers.
    pub fn new(dev: &str, inos: Vec<u64>) -> Option<Filter> {
        let (major, minor) = dev.split_once(':')?;
        Some(Filter { major: major.parse().ok()?, minor: minor.parse().ok()?, inos })
    }

    /// One file.
    pub fn one(major: u32, minor: u32, ino: u64) -> Filter {
        Filter { major, minor, inos: vec![ino] }
    }
}

/// A parsed trace and what was left out of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    pub trace: Trace,
    /// Why events were left out, and how many: never silently dropped.
    pub filtered: BTreeMap<String, u64>,
    /// Event lines read in all.
    pub events: u64,
    /// The page frame number of each folio of the file, in the order the folios were
    /// added (the model's input for how bios merge pages); empty when the trace has no
    /// `pfn=` fields.
    #[serde(default)]
    pub pfns: Vec<u64>,
    /// What each program step did to the scenario's files, from the run's `calls.txt`
    /// ([`crate::calls::parse`]); empty without program steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<crate::calls::ProgramCalls>,
    /// The kernel has no readahead tracepoints ([`NO_WINDOWS`]): the trace holds the
    /// folios added, the faults and the requests, and no readahead window.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub windowless: bool,
}

/// Why a trace was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A line that is not an event of the expected format.
    Line { line: usize, message: String },
    /// The trace says the ring buffer lost events: it is shorter than what the kernel did.
    Lost(Lost),
}

/// What the trace's own text says the ring buffer lost, as ftrace writes it
/// (kernel/trace/trace.c): the header `# entries-in-buffer/entries-written: E/W   #P:N`
/// (W - E events were overwritten, all CPUs together), `CPU:N [LOST M EVENTS]` (a
/// consuming read: M events of CPU N lost), `CPU:N [LOST EVENTS]` (the reader saw CPU N's
/// events overwritten, count unknown) and `##### CPU N buffer started ####` (printed only
/// when the buffer had overruns: CPU N's older events were overwritten).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// The header's `entries-in-buffer` and `entries-written`, when it has them.
    pub in_buffer: Option<u64>,
    pub written: Option<u64>,
    /// The header's `#P:N`: the CPUs traced (with one, the header's loss is CPU 0's).
    pub cpus: Option<u32>,
    /// Events counted lost per CPU by `CPU:N [LOST M EVENTS]` lines.
    pub counted: BTreeMap<u32, u64>,
    /// CPUs that lost events of a count the trace does not give.
    pub uncounted: std::collections::BTreeSet<u32>,
    /// The first line that shows a loss (1-based).
    pub line: usize,
}

impl Lost {
    /// Events the header counts as overwritten.
    pub fn overwritten(&self) -> u64 {
        match (self.in_buffer, self.written) {
            (Some(e), Some(w)) => w.saturating_sub(e),
            _ => 0,
        }
    }

    /// Whether the trace shows any loss.
    pub fn any(&self) -> bool {
        self.overwritten() > 0 || !self.counted.is_empty() || !self.uncounted.is_empty()
    }

    /// Events lost at least (the two counts cover different reads, so the larger).
    pub fn at_least(&self) -> u64 {
        self.overwritten().max(self.counted.values().sum())
    }

    /// A buffer size that would have held what was written: `kb` times written over kept,
    /// doubled and rounded up to a power of two.
    pub fn suggest_kb(&self, kb: u64) -> u64 {
        let kept = self.in_buffer.unwrap_or(0).max(1);
        let written = self.written.unwrap_or(0).max(kept + self.at_least());
        (kb.max(1) * written.div_ceil(kept) * 2).next_power_of_two()
    }
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the ftrace ring buffer lost at least {} events", self.at_least())?;
        let mut parts = Vec::new();
        if let (Some(e), Some(w)) = (self.in_buffer, self.written) {
            let on = match self.cpus {
                Some(1) => " on CPU 0, the only one traced (#P:1)".to_string(),
                Some(n) => format!(" over the {n} CPUs traced (#P:{n})"),
                None => String::new(),
            };
            parts.push(format!(
                "header `entries-in-buffer/entries-written: {e}/{w}`: {} overwritten{on}",
                w.saturating_sub(e)
            ));
        }
        for (cpu, n) in &self.counted {
            parts.push(format!("CPU {cpu}: {n} lost (`CPU:{cpu} [LOST {n} EVENTS]`)"));
        }
        for cpu in &self.uncounted {
            parts.push(format!("CPU {cpu}: its older events overwritten (`##### CPU {cpu} buffer started ####` or `CPU:{cpu} [LOST EVENTS]`)"));
        }
        write!(f, " ({}; first at line {})", parts.join("; "), self.line)
    }
}

impl ParseError {
    /// The 1-based line the error is about.
    pub fn line(&self) -> usize {
        match self {
            ParseError::Line { line, .. } => *line,
            ParseError::Lost(lost) => lost.line,
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Line { message, .. } => f.write_str(message),
            ParseError::Lost(lost) => lost.fmt(f),
        }
    }
}

pub const OTHER_FILES: &str = "readahead/filemap events of other files (other inodes, the guest's root file system)";
pub const OTHER_DEVICES: &str = "requests on other devices";
pub const OTHER_EVENTS: &str = "events radiff does not read";

/// The first line of a trace the guest copied with tracefs's `options/context-info` off:
/// its event lines are `EVENT: FIELDS`, without the task, CPU, flags and timestamp the
/// kernel would otherwise format for every event (under TCG, that formatting and the
/// bytes it adds took most of the time a large trace took to save), and the line after it
/// is the `entries-in-buffer/entries-written` header, which the kernel prints only with
/// context on, made by the guest from `per_cpu/*/stats` as the kernel makes it
/// (`entries`, and `entries + overrun`).
pub const CONTEXT_OFF: &str = "# radiff-guest: context-info off; the entries line from per_cpu/*/stats";

/// The line after the entries header of a trace whose kernel has no readahead tracepoints
/// ([`crate::kernels::Tracing::Flat`]): no window was traced, and
/// [`Capture::windowless`] says so.
pub const NO_WINDOWS: &str = "# radiff-guest: this kernel has no readahead tracepoints: no readahead window was traced";

/// Parses the whole text. Lines starting with `#` are headers. A trace that shows lost
/// events (see [`Lost`]) is an error: never a shorter trace. Event lines have the
/// kernel's context (`TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS`), or not if the
/// trace starts with [`CONTEXT_OFF`].
pub fn parse(text: &str, filter: &Filter) -> Result<Capture, ParseError> {
    let split = if text.starts_with(CONTEXT_OFF) { split_bare_event } else { split_event };
    let mut capture = Capture::default();
    let mut windows: Vec<Window> = Vec::new();
    let mut missing_pfn = false;
    let mut lost = Lost::default();
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        let err = |message: String| ParseError::Line { line: number, message };
        match lost_line(line).map_err(err)? {
            Some(Loss::Header { in_buffer, written, cpus }) => {
                (lost.in_buffer, lost.written, lost.cpus) = (Some(in_buffer), Some(written), cpus);
                if written > in_buffer && lost.line == 0 {
                    lost.line = number;
                }
                continue;
            }
            Some(loss) => {
                match loss {
                    Loss::Counted { cpu, events } => *lost.counted.entry(cpu).or_default() += events,
                    Loss::Uncounted { cpu } => {
                        lost.uncounted.insert(cpu);
                    }
                    Loss::Header { .. } => unreachable!(),
                }
                if lost.line == 0 {
                    lost.line = number;
                }
                continue;
            }
            None => {}
        }
        if line.starts_with('#') || line.trim().is_empty() {
            capture.windowless |= line == NO_WINDOWS;
            continue;
        }
        capture.events += 1;
        let (event, body) = split(line).ok_or_else(|| err(format!("not an ftrace event line: {line}")))?;
        match event {
            "page_cache_sync_ra" | "page_cache_async_ra" | "page_cache_ra_order" | "page_cache_ra_unbounded" => {
                ra_event(number, event, body, filter, &mut windows, &mut capture)?
            }
            "mm_filemap_fault" | "mm_filemap_map_pages" => {
                fault_event(number, event, body, filter, &mut windows, &mut capture)?
            }
            "mm_filemap_add_to_page_cache" => {
                folio_event(number, body, filter, &mut windows, &mut capture, &mut missing_pfn)?
            }
            "mm_khugepaged_collapse_file" => collapse_event(number, body, filter, &mut windows, &mut capture)?,
            "block_rq_issue" => {
                let request = parse_rq(body).ok_or_else(|| err(format!("cannot read block_rq_issue: {body}")))?;
                if request.0 != (filter.major, filter.minor) {
                    *capture.filtered.entry(OTHER_DEVICES.into()).or_default() += 1;
                    continue;
                }
                current(&mut windows).requests.push(request.1);
            }
            _ => *capture.filtered.entry(OTHER_EVENTS.into()).or_default() += 1,
        }
    }
    if lost.any() {
        return Err(ParseError::Lost(lost));
    }
    capture.trace = Trace { windows };
    if missing_pfn {
        // All or nothing: the n-th pfn must belong to the n-th folio.
        capture.pfns.clear();
    }
    Ok(capture)
}

/// A readahead event of [`parse`] (line `number`): a window opens, or its current one gets
/// a submission.
fn ra_event(
    number: usize,
    event: &str,
    body: &str,
    filter: &Filter,
    windows: &mut Vec<Window>,
    capture: &mut Capture,
) -> Result<(), ParseError> {
    let err = |message: String| ParseError::Line { line: number, message };
    let f = Fields::parse_eq(body);
    let Some(file) = f.file(filter).map_err(&err)? else {
        *capture.filtered.entry(OTHER_FILES.into()).or_default() += 1;
        return Ok(());
    };
    match event {
        "page_cache_sync_ra" | "page_cache_async_ra" => {
            let trigger = if event == "page_cache_sync_ra" { Trigger::Sync } else { Trigger::Async };
            let ra = RaState {
                start: 0,
                size: f.num("size").map_err(&err)?,
                async_size: f.num("async_size").map_err(&err)?,
                order: f.num("order").map_err(&err)? as u32,
                ra_pages: f.num("ra_pages").map_err(&err)?,
                mmap_miss: f.num("mmap_miss").map_err(&err)?,
                prev_pos: f.signed("prev_pos").map_err(&err)?,
            };
            windows.push(Window::open_in(
                file,
                trigger,
                f.num("index").map_err(&err)?,
                f.num("req_count").map_err(&err)?,
                ra,
            ));
        }
        "page_cache_ra_order" => current(windows).submits.push(Submit::Order {
            index: f.num("index").map_err(&err)?,
            size: f.num("size").map_err(&err)?,
            async_size: f.num("async_size").map_err(&err)?,
            order: f.num("order").map_err(&err)? as u32,
        }),
        _ => current(windows).submits.push(Submit::Unbounded {
            index: f.num("index").map_err(&err)?,
            nr_to_read: f.num("nr_to_read").map_err(&err)?,
            lookahead_size: f.num("lookahead_size").map_err(&err)?,
        }),
    }
    Ok(())
}

/// A fault event of [`parse`] (line `number`).
///
/// mm_filemap_fault: "dev=%d:%d ino=%llx ofs=%lld" (ofs = index << PAGE_SHIFT);
/// mm_filemap_map_pages (class mm_filemap_op_page_cache_range):
/// "dev=%d:%d ino=%llx ofs=%lld-%lld" (first byte of start_pgoff, last byte of
/// end_pgoff). Each opens a window (see Trigger::Fault and Trigger::FaultAround).
fn fault_event(
    number: usize,
    event: &str,
    body: &str,
    filter: &Filter,
    windows: &mut Vec<Window>,
    capture: &mut Capture,
) -> Result<(), ParseError> {
    let err = |message: String| ParseError::Line { line: number, message };
    let f = Fields::parse_eq(body);
    let Some(file) = f.file(filter).map_err(&err)? else {
        *capture.filtered.entry(OTHER_FILES.into()).or_default() += 1;
        return Ok(());
    };
    let ofs = f.get("ofs").map_err(&err)?;
    let page = |text: &str, what: &str| -> Result<u64, ParseError> {
        let bytes: u64 =
            text.parse().map_err(|_| err(format!("field `ofs`: `{ofs}`: {what} `{text}` is not a number")))?;
        Ok(bytes / radiff_model::trace::PAGE_SIZE)
    };
    let window = if event == "mm_filemap_fault" {
        let index = page(ofs, "offset")?;
        if index * radiff_model::trace::PAGE_SIZE != ofs.parse::<u64>().unwrap_or(0) {
            return Err(err(format!("fault offset {ofs} is not page-aligned")));
        }
        Window::open_in(file, Trigger::Fault, index, 1, RaState::default())
    } else {
        let (first, last) =
            ofs.split_once('-').ok_or_else(|| err(format!("field `ofs`: `{ofs}` is not FIRST-LAST")))?;
        let (index, last_index) = (page(first, "first byte")?, page(last, "last byte")?);
        if last_index < index {
            return Err(err(format!("fault-around range {ofs} ends before it starts")));
        }
        Window::open_in(file, Trigger::FaultAround, index, last_index - index + 1, RaState::default())
    };
    windows.push(window);
    Ok(())
}

/// A folio added to the page cache, in [`parse`] (line `number`): it joins the current window,
/// its pfn the capture's (`missing_pfn` once a folio has none).
fn folio_event(
    number: usize,
    body: &str,
    filter: &Filter,
    windows: &mut Vec<Window>,
    capture: &mut Capture,
    missing_pfn: &mut bool,
) -> Result<(), ParseError> {
    let err = |message: String| ParseError::Line { line: number, message };
    let f = Fields::parse_filemap(body);
    let Some(file) = f.file(filter).map_err(&err)? else {
        *capture.filtered.entry(OTHER_FILES.into()).or_default() += 1;
        return Ok(());
    };
    if windows.last().is_some_and(|w| w.file != file) {
        // A folio of another file than the window's (the model does the same).
        windows.push(Window::open_in(file, Trigger::Start, 0, 0, RaState::default()));
    }
    let ofs = f.num("ofs").map_err(&err)?;
    if ofs % radiff_model::trace::PAGE_SIZE != 0 {
        return Err(err(format!("folio offset {ofs} is not page-aligned")));
    }
    current(windows)
        .folios
        .push(Folio { index: ofs / radiff_model::trace::PAGE_SIZE, order: f.num("order").map_err(&err)? as u32 });
    match f.get("pfn").ok().map(|p| u64::from_str_radix(p.trim_start_matches("0x"), 16)) {
        Some(Ok(pfn)) => capture.pfns.push(pfn),
        Some(Err(_)) => return Err(err("field `pfn` is not hex".into())),
        None => *missing_pfn = true,
    }
    Ok(())
}

/// `mm_khugepaged_collapse_file` in [`parse`] (line `number`): "mm=%p, hpage_pfn=0x%lx,
/// index=%ld, addr=%lx, is_shmem=%d, filename=%s, nr=%d, result=%s" (fields separated by
/// ", "). It names the file by its name only (`d_iname`), which is the guest's
/// ([`crate::wire::file_name`]); it opens a [`Trigger::Collapse`] window.
fn collapse_event(
    number: usize,
    body: &str,
    filter: &Filter,
    windows: &mut Vec<Window>,
    capture: &mut Capture,
) -> Result<(), ParseError> {
    let err = |message: String| ParseError::Line { line: number, message };
    let f = Fields { pairs: body.split(", ").filter_map(|t| t.split_once('=')).collect() };
    let name = f.get("filename").map_err(&err)?;
    let Some(file) = (0..filter.inos.len()).find(|&i| crate::wire::file_name(i) == name) else {
        *capture.filtered.entry(OTHER_FILES.into()).or_default() += 1;
        return Ok(());
    };
    if f.get("is_shmem").map_err(&err)? != "0" {
        *capture.filtered.entry(OTHER_FILES.into()).or_default() += 1;
        return Ok(());
    }
    let result = f.get("result").map_err(&err)?;
    let result = radiff_model::ScanResult::from_name(result)
        .ok_or_else(|| err(format!("field `result`: `{result}` is not a scan result of Linux 7.3.4")))?;
    windows.push(Window::open_in(
        file as u32,
        Trigger::Collapse(result),
        f.num("index").map_err(&err)?,
        f.num("nr").map_err(&err)?,
        RaState::default(),
    ));
    Ok(())
}

/// A line of the trace about lost events.
#[derive(Debug, PartialEq, Eq)]
enum Loss {
    Header { in_buffer: u64, written: u64, cpus: Option<u32> },
    Counted { cpu: u32, events: u64 },
    Uncounted { cpu: u32 },
}

/// Reads the lines ftrace writes about lost events (trace.c: `print_event_info`,
/// `print_trace_line`, `test_cpu_buff_start`); `None` for any other line.
fn lost_line(line: &str) -> Result<Option<Loss>, String> {
    let num =
        |t: &str, what: &str| t.trim().parse::<u64>().map_err(|_| format!("{what} `{t}` is not a number in `{line}`"));
    if let Some(rest) = line.strip_prefix("# entries-in-buffer/entries-written:") {
        let mut tokens = rest.split_whitespace();
        let counts = tokens.next().unwrap_or("");
        let (e, w) = counts.split_once('/').ok_or_else(|| format!("no E/W counts in `{line}`"))?;
        let cpus = tokens.find_map(|t| t.strip_prefix("#P:")).map(|n| num(n, "#P")).transpose()?.map(|n| n as u32);
        return Ok(Some(Loss::Header {
            in_buffer: num(e, "entries-in-buffer")?,
            written: num(w, "entries-written")?,
            cpus,
        }));
    }
    if let Some(cpu) = line.strip_prefix("##### CPU ").and_then(|r| r.strip_suffix(" buffer started ####")) {
        return Ok(Some(Loss::Uncounted { cpu: num(cpu, "CPU")? as u32 }));
    }
    if let Some((cpu, rest)) = line.strip_prefix("CPU:").and_then(|r| r.split_once(" [LOST ")) {
        let cpu = num(cpu, "CPU")? as u32;
        return match rest.strip_suffix("EVENTS]").map(str::trim) {
            Some("") => Ok(Some(Loss::Uncounted { cpu })),
            Some(n) => Ok(Some(Loss::Counted { cpu, events: num(n, "lost events")? })),
            None => Err(format!("cannot read the lost-events line `{line}`")),
        };
    }
    Ok(None)
}

/// The window events go to: the last one, or a `Start` window before the first call.
fn current(windows: &mut Vec<Window>) -> &mut Window {
    if windows.is_empty() {
        windows.push(Window::open(Trigger::Start, 0, 0, RaState::default()));
    }
    windows.last_mut().expect("just pushed")
}

/// `"  task-123  [000] d..1.  12.345678: event_name: body"` → `("event_name", "body")`.
/// `EVENT: FIELDS` of a line without context (see [`CONTEXT_OFF`]): the event's name is
/// the line's start, up to the first `: ` (or a final `:`).
fn split_bare_event(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(": ").or_else(|| line.strip_suffix(':').map(|s| s.len()))?;
    let event = &line[..colon];
    if event.is_empty() || !event.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((event, line.get(colon + 2..).unwrap_or("")))
}

fn split_event(line: &str) -> Option<(&str, &str)> {
    // The task name may contain anything, so start after the CPU field "] ".
    let rest = &line[line.find("] ")? + 2..];
    // flags, then the timestamp ending in ':'.
    let after_ts = rest.find(": ")? + 2;
    let rest = &rest[after_ts..];
    let colon = rest.find(": ").or_else(|| rest.strip_suffix(':').map(|s| s.len()))?;
    let event = &rest[..colon];
    let body = rest.get(colon + 2..).unwrap_or("");
    Some((event, body))
}

struct Fields<'a> {
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Fields<'a> {
    /// `dev=259:0 ino=83 index=0 ...`
    fn parse_eq(body: &'a str) -> Fields<'a> {
        Fields { pairs: body.split_whitespace().filter_map(|t| t.split_once('=')).collect() }
    }

    /// `dev 259:0 ino 83 pfn=0x1234 ofs=4096 order=0`
    fn parse_filemap(body: &'a str) -> Fields<'a> {
        let mut pairs = Vec::new();
        let mut tokens = body.split_whitespace().peekable();
        while let Some(t) = tokens.next() {
            match t.split_once('=') {
                Some(kv) => pairs.push(kv),
                None => {
                    if let Some(v) = tokens.next() {
                        pairs.push((t, v));
                    }
                }
            }
        }
        Fields { pairs }
    }

    fn get(&self, key: &str) -> Result<&'a str, String> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).ok_or_else(|| format!("field `{key}` missing"))
    }

    fn num(&self, key: &str) -> Result<u64, String> {
        let v = self.get(key)?;
        v.parse().map_err(|_| format!("field `{key}`: `{v}` is not a number"))
    }

    fn signed(&self, key: &str) -> Result<i64, String> {
        let v = self.get(key)?;
        v.parse().map_err(|_| format!("field `{key}`: `{v}` is not a number"))
    }

    /// The index of the event's file in `filter`, `None` for other files.
    fn file(&self, filter: &Filter) -> Result<Option<u32>, String> {
        let dev = self.get("dev")?;
        let ino = self.get("ino")?;
        let ino = u64::from_str_radix(ino, 16).map_err(|_| format!("inode `{ino}` is not hex"))?;
        if dev != format!("{}:{}", filter.major, filter.minor) {
            return Ok(None);
        }
        Ok(filter.inos.iter().position(|&i| i == ino).map(|f| f as u32))
    }
}

/// `259,0 RA 16384 () 8 + 32 none,0,0 [xfs_io]` → ((259, 0), request).
fn parse_rq(body: &str) -> Option<((u32, u32), Request)> {
    let mut t = body.split_whitespace();
    let (major, minor) = t.next()?.split_once(',')?;
    let rwbs = radiff_model::trace::Rwbs::from(t.next()?);
    let _bytes = t.next()?;
    // The command field "(...)" may be empty "()" or hold words for passthrough commands.
    let mut tok = t.next()?;
    while !tok.ends_with(')') {
        tok = t.next()?;
    }
    let sector: u64 = t.next()?.parse().ok()?;
    if t.next()? != "+" {
        return None;
    }
    let sectors: u64 = t.next()?.parse().ok()?;
    Some(((major.parse().ok()?, minor.parse().ok()?), Request { sector, sectors, rwbs }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter() -> Filter {
        Filter::one(259, 0, 0x83)
    }

    #[test]
    fn groups_events_into_windows_and_counts_what_it_filtered() {
        let text = "\
# tracer: nop
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
radiff-guest-171     [001] .....    12.000001: page_cache_sync_ra: dev=259:0 ino=83 index=0 req_count=1 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1
radiff-guest-171     [001] .....    12.000002: page_cache_ra_order: dev=259:0 ino=83 index=0 order=0 size=4 async_size=3 ra_pages=32
radiff-guest-171     [001] .....    12.000003: mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x10a3c ofs=0 order=0
radiff-guest-171     [001] .....    12.000004: mm_filemap_add_to_page_cache: dev 0:24 ino 1f pfn=0x10a3d ofs=0 order=0
radiff-guest-171     [001] d..1.    12.000005: block_rq_issue: 259,0 RA 16384 () 1024 + 32 none,0,0 [radiff-guest]
radiff-guest-171     [001] .....    12.000006: page_cache_async_ra: dev=259:0 ino=83 index=1 req_count=256 order=0 size=4 async_size=3 ra_pages=32 mmap_miss=0 prev_pos=4095
kworker/0:1H-12      [000] d..1.    12.000007: block_rq_issue: 8,0 R 4096 () 8 + 8 none,0,0 [kworker/0:1H]
kworker/0:1H-12      [000] d..1.    12.000008: block_rq_issue: 259,0 RM 4096 () 64 + 8 none,0,0 [kworker/0:1H]
";
        let c = parse(text, &filter()).unwrap();
        assert_eq!(c.events, 8);
        assert_eq!(c.filtered[OTHER_FILES], 1);
        assert_eq!(c.filtered[OTHER_DEVICES], 1);
        let w = &c.trace.windows;
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].trigger, w[0].index, w[0].req_count, w[0].ra.prev_pos), (Trigger::Sync, 0, 1, -1));
        assert_eq!(w[0].submits, vec![Submit::Order { index: 0, size: 4, async_size: 3, order: 0 }]);
        assert_eq!(w[0].folios, vec![Folio { index: 0, order: 0 }]);
        assert_eq!(c.pfns, vec![0x10a3c], "the pfns of the file's folios only");
        assert_eq!(w[0].requests, vec![Request { sector: 1024, sectors: 32, rwbs: "RA".into() }]);
        assert_eq!((w[1].trigger, w[1].ra.size, w[1].ra.async_size, w[1].ra.prev_pos), (Trigger::Async, 4, 3, 4095));
        assert_eq!(w[1].requests, vec![Request { sector: 64, sectors: 8, rwbs: "RM".into() }]);
    }

    #[test]
    fn faults_and_fault_around_open_their_windows() {
        let text = "\
radiff-guest-171     [001] .....    12.000001: mm_filemap_fault: dev=259:0 ino=83 ofs=40960
radiff-guest-171     [001] .....    12.000002: page_cache_ra_order: dev=259:0 ino=83 index=0 order=0 size=32 async_size=8 ra_pages=32
radiff-guest-171     [001] .....    12.000003: mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x10a3c ofs=0 order=2
radiff-guest-171     [001] d..1.    12.000004: block_rq_issue: 259,0 RA 131072 () 1024 + 256 none,0,0 [radiff-guest]
radiff-guest-171     [001] .....    12.000005: mm_filemap_fault: dev=0:24 ino=1f ofs=0
radiff-guest-171     [001] .....    12.000006: mm_filemap_fault: dev=259:0 ino=83 ofs=40960
radiff-guest-171     [001] .....    12.000007: mm_filemap_map_pages: dev=259:0 ino=83 ofs=0-65535
radiff-guest-171     [001] .....    12.000008: mm_filemap_map_pages: dev=0:24 ino=1f ofs=0-4095
radiff-guest-171     [001] .....    12.000009: mm_filemap_get_pages: dev=259:0 ino=83 ofs=0-4095
radiff-guest-171     [001] .....    12.000010: mm_filemap_map_pages: dev=259:0 ino=83 ofs=65536-69631
";
        let c = parse(text, &filter()).unwrap();
        assert_eq!(c.filtered[OTHER_FILES], 2, "the root file system's fault and fault-around");
        assert_eq!(c.filtered[OTHER_EVENTS], 1);
        let w: Vec<(Trigger, u64, u64, usize, usize, usize)> = c
            .trace
            .windows
            .iter()
            .map(|w| (w.trigger, w.index, w.req_count, w.submits.len(), w.folios.len(), w.requests.len()))
            .collect();
        assert_eq!(
            w,
            vec![
                (Trigger::Fault, 10, 1, 1, 1, 1),
                (Trigger::Fault, 10, 1, 0, 0, 0),
                (Trigger::FaultAround, 0, 16, 0, 0, 0),
                (Trigger::FaultAround, 16, 1, 0, 0, 0),
            ]
        );
        assert!(c.trace.windows.iter().all(|w| w.ra == RaState::default()));
        let bad =
            parse("x-1 [000] ..... 1.0: mm_filemap_map_pages: dev=259:0 ino=83 ofs=4096\n", &filter()).unwrap_err();
        assert!(bad.to_string().contains("FIRST-LAST"), "{bad}");
        let bad = parse("x-1 [000] ..... 1.0: mm_filemap_fault: dev=259:0 ino=83 ofs=12\n", &filter()).unwrap_err();
        assert!(bad.to_string().contains("page-aligned"), "{bad}");
    }

    #[test]
    fn a_collapse_opens_a_window_of_its_file_with_index_nr_and_result() {
        // Lines as 7.3.4 prints them (a run of MADV_COLLAPSE on a cold 2 MiB of `data`).
        let text = "\
radiff-guest-71      [001] .....     5.413995: page_cache_sync_ra: dev=259:0 ino=83 index=0 req_count=512 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1
radiff-guest-71      [001] .....     5.458424: mm_khugepaged_collapse_file: mm=0000000095d9db1a, hpage_pfn=0x3600, index=512, addr=7ffff7800000, is_shmem=0, filename=data, nr=512, result=pte_mapped_hugepage
radiff-guest-71      [001] .....     5.458425: mm_khugepaged_collapse_file: mm=0000000095d9db1a, hpage_pfn=0x3600, index=349, addr=7ffff7a00000, is_shmem=0, filename=data1, nr=512, result=page_locked
radiff-guest-71      [001] .....     5.458426: mm_khugepaged_collapse_file: mm=0000000095d9db1a, hpage_pfn=0x3600, index=0, addr=7ffff7a00000, is_shmem=0, filename=libc.so.6, nr=512, result=failed
";
        let two = Filter { major: 259, minor: 0, inos: vec![0x83, 0x84] };
        let c = parse(text, &two).unwrap();
        let w: Vec<(u32, Trigger, u64, u64)> =
            c.trace.windows.iter().map(|w| (w.file, w.trigger, w.index, w.req_count)).collect();
        assert_eq!(
            w,
            vec![
                (0, Trigger::Sync, 0, 512),
                (0, Trigger::Collapse(radiff_model::ScanResult::PteMappedHugepage), 512, 512),
                (1, Trigger::Collapse(radiff_model::ScanResult::PageLock), 349, 512),
            ]
        );
        assert_eq!(c.filtered[OTHER_FILES], 1, "another file's collapse");
        let one = parse(text, &filter()).unwrap();
        assert_eq!(one.trace.windows.len(), 2, "data1 is not a file of a one-file scenario");
        let bad = parse("x-1 [000] ..... 1.0: mm_khugepaged_collapse_file: mm=0, hpage_pfn=0x1, index=0, addr=0, is_shmem=0, filename=data, nr=512, result=whatever\n", &filter()).unwrap_err();
        assert!(bad.to_string().contains("not a scan result"), "{bad}");
    }

    #[test]
    fn events_before_any_call_open_a_start_window() {
        let text = "x-1 [000] ..... 1.0: block_rq_issue: 259,0 RM 4096 () 64 + 8 none,0,0 [x]\n";
        let c = parse(text, &filter()).unwrap();
        assert_eq!(c.trace.windows.len(), 1);
        assert_eq!(c.trace.windows[0].trigger, Trigger::Start);
    }

    #[test]
    fn unbounded_submissions_are_read() {
        let text = "x-1 [000] ..... 1.0: page_cache_sync_ra: dev=259:0 ino=83 index=5 req_count=3 order=0 size=0 async_size=0 ra_pages=0 mmap_miss=0 prev_pos=-1\n\
x-1 [000] ..... 1.0: page_cache_ra_unbounded: dev=259:0 ino=83 index=5 nr_to_read=1 lookahead_size=0\n";
        let c = parse(text, &filter()).unwrap();
        assert_eq!(c.trace.windows[0].submits, vec![Submit::Unbounded { index: 5, nr_to_read: 1, lookahead_size: 0 }]);
    }

    #[test]
    fn a_malformed_line_is_an_error_with_its_line_number() {
        let text = "# header\nx-1 [000] ..... 1.0: page_cache_ra_order: dev=259:0 ino=83 index=zero order=0 size=4 async_size=3 ra_pages=32\n";
        let e = parse(text, &filter()).unwrap_err();
        assert_eq!(e.line(), 2);
        assert!(e.to_string().contains("index"), "{e}");
        let e = parse("garbage\n", &filter()).unwrap_err();
        assert_eq!(e.line(), 1);
    }

    #[test]
    fn task_names_with_spaces_and_colons_do_not_confuse_the_parser() {
        let (event, body) =
            split_event("  my: task-1   [001] .N.1.  99.5: block_rq_issue: 259,0 RA 4096 () 8 + 8 none,0,0 [x]")
                .unwrap();
        assert_eq!(event, "block_rq_issue");
        assert!(body.starts_with("259,0 RA"));
    }

    #[test]
    fn a_trace_without_context_reads_as_the_same_trace_with_it() {
        // The same three events as 7.3.4 prints them with options/context-info on and off.
        let with = "\
# tracer: nop
#
# entries-in-buffer/entries-written: 3/3   #P:1
#
    radiff-guest-96      [000] .....     7.39: page_cache_sync_ra: dev=259:0 ino=83 index=0 req_count=1 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1
    radiff-guest-96      [000] .....     7.40: mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x101b7d ofs=0 order=2
    kworker/0:0H-8       [000] ...1.     7.41: block_rq_issue: 259,0 RA 16384 () 0 + 32 none,0,0 [kworker/0:0H]
";
        let without = format!(
            "{CONTEXT_OFF}\n# entries-in-buffer/entries-written: 3/3   #P:1\n# tracer: nop\n#\n\
page_cache_sync_ra: dev=259:0 ino=83 index=0 req_count=1 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1
mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x101b7d ofs=0 order=2
block_rq_issue: 259,0 RA 16384 () 0 + 32 none,0,0 [kworker/0:0H]
"
        );
        let (a, b) = (parse(with, &filter()).unwrap(), parse(&without, &filter()).unwrap());
        assert_eq!(a.trace, b.trace);
        assert_eq!((a.events, a.pfns.clone()), (b.events, b.pfns.clone()));
        assert_eq!(a.trace.windows.len(), 1);
        assert_eq!(a.trace.windows[0].requests.len(), 1);
        // Its header counts losses as the kernel's does.
        let lossy = format!("{CONTEXT_OFF}\n# entries-in-buffer/entries-written: 3/9   #P:1\nblock_rq_issue: 259,0 RA 16384 () 0 + 32 none,0,0 [x]\n");
        assert_eq!(lost(&lossy).overwritten(), 6);
        // A context line in a bare trace, or a bare line in a trace with context, is not an event line.
        assert_eq!(parse(&format!("{CONTEXT_OFF}\n{EVENT}\n"), &filter()).unwrap_err().line(), 2);
        assert_eq!(parse("block_rq_issue: 259,0 RA 16384 () 0 + 32 none,0,0 [x]\n", &filter()).unwrap_err().line(), 1);
        assert!(!b.windowless, "a kernel with the readahead tracepoints");
        // A kernel without them: the guest's line says so; its folios open a start window.
        let flat = format!(
            "{CONTEXT_OFF}\n# entries-in-buffer/entries-written: 2/2   #P:1\n{NO_WINDOWS}\n\
mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x101b7d ofs=0 order=2
block_rq_issue: 259,0 RA 16384 () 0 + 32 none,0,0 [kworker/0:0H]
"
        );
        let c = parse(&flat, &filter()).unwrap();
        assert!(c.windowless);
        assert_eq!(c.trace, crate::compare::as_untraced(&b.trace));
    }

    const EVENT: &str = "x-1 [000] ..... 1.0: block_rq_issue: 259,0 RA 4096 () 64 + 8 none,0,0 [x]";

    fn lost(text: &str) -> Lost {
        match parse(text, &filter()) {
            Err(ParseError::Lost(lost)) => lost,
            other => panic!("expected lost events, got {other:?}"),
        }
    }

    #[test]
    fn a_header_that_counts_overwritten_events_is_an_error() {
        let text = format!("# tracer: nop\n#\n# entries-in-buffer/entries-written: 19713/19713   #P:2\n#\n{EVENT}\n");
        assert_eq!(parse(&text, &filter()).unwrap().events, 1, "nothing lost: written = in buffer");
        let text = format!("# tracer: nop\n#\n# entries-in-buffer/entries-written: 1200/5321   #P:2\n#\n{EVENT}\n##### CPU 1 buffer started ####\n{EVENT}\n");
        let l = lost(&text);
        assert_eq!(
            (l.in_buffer, l.written, l.overwritten(), l.at_least(), l.line),
            (Some(1200), Some(5321), 4121, 4121, 3)
        );
        assert_eq!(l.uncounted.iter().copied().collect::<Vec<_>>(), vec![1]);
        let message = ParseError::Lost(l.clone()).to_string();
        assert!(message.contains("lost at least 4121 events"), "{message}");
        assert!(message.contains("1200/5321`: 4121 overwritten over the 2 CPUs traced (#P:2)"), "{message}");
        let one = lost("# entries-in-buffer/entries-written: 155/303   #P:1\n");
        assert!(one.to_string().contains("148 overwritten on CPU 0, the only one traced (#P:1)"), "{one}");
        assert!(message.contains("CPU 1"), "{message}");
        // 5321 written into what holds 1200: five times the buffer, doubled, a power of two.
        assert_eq!(l.suggest_kb(64), 1024);
    }

    #[test]
    fn lost_event_lines_are_counted_per_cpu() {
        let text = format!("{EVENT}\nCPU:0 [LOST 123 EVENTS]\n{EVENT}\nCPU:1 [LOST 7 EVENTS]\nCPU:0 [LOST 2 EVENTS]\n{EVENT}\nCPU:1 [LOST EVENTS]\n");
        let l = lost(&text);
        assert_eq!(l.counted, BTreeMap::from([(0, 125), (1, 7)]));
        assert_eq!(l.uncounted.iter().copied().collect::<Vec<_>>(), vec![1]);
        assert_eq!((l.at_least(), l.line), (132, 2));
        let message = l.to_string();
        assert!(message.contains("CPU 0: 125 lost"), "{message}");
        assert!(message.contains("CPU 1: 7 lost"), "{message}");
        // Seen alone, an annotation is enough to refuse the trace.
        let l = lost(&format!("{EVENT}\n##### CPU 0 buffer started ####\n{EVENT}\n"));
        assert_eq!((l.at_least(), l.line), (0, 2));
        let e = parse("CPU:0 [LOST many EVENTS]\n", &filter()).unwrap_err();
        assert!(matches!(e, ParseError::Line { line: 1, .. }), "{e:?}");
    }

    #[test]
    fn events_of_each_file_go_to_windows_of_that_file() {
        let text = "x-1 [000] ..... 1.0: page_cache_sync_ra: dev=259:0 ino=83 index=0 req_count=1 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1\n\
x-1 [000] ..... 1.0: mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x10 ofs=0 order=2\n\
x-1 [000] ..... 1.0: page_cache_sync_ra: dev=259:0 ino=84 index=0 req_count=1 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1\n\
x-1 [000] ..... 1.0: mm_filemap_add_to_page_cache: dev 259:0 ino 84 pfn=0x20 ofs=0 order=2\n\
x-1 [000] ..... 1.0: mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x30 ofs=16384 order=0\n\
x-1 [000] ..... 1.0: mm_filemap_add_to_page_cache: dev 259:0 ino 85 pfn=0x40 ofs=0 order=0\n";
        let filter = Filter { major: 259, minor: 0, inos: vec![0x83, 0x84] };
        let c = parse(text, &filter).unwrap();
        let files: Vec<(u32, Trigger, usize)> =
            c.trace.windows.iter().map(|w| (w.file, w.trigger, w.folios.len())).collect();
        // ino 83 is file 0, ino 84 file 1; a folio of file 0 under file 1's window opens a
        // Start window of file 0; ino 85 is none of the scenario's.
        assert_eq!(files, vec![(0, Trigger::Sync, 1), (1, Trigger::Sync, 1), (0, Trigger::Start, 1)]);
        assert_eq!(c.filtered.get(OTHER_FILES), Some(&1));
        assert_eq!(c.pfns, vec![0x10, 0x20, 0x30]);
    }
}
