//! Each readahead decision of a program's tasks checked against the model, from the state
//! the kernel recorded: where tasks' calls overlap, the model cannot replay the calls in
//! order (the interleaving is the scheduler's), but every `page_cache_sync_ra()` and
//! `page_cache_async_ra()` call is in the calls' trace with its task and the
//! `file_ra_state` it entered with ([`crate::calls::ra`]). For each, the page cache it met
//! is rebuilt from the trace (the folios added before it, by any task), and the model is
//! asked what that call does ([`radiff_model::decide`]): its window, the folios it adds
//! and their orders, its requests.
//!
//! Pure: the run's values in, counts and the first call that parts out. What the trace
//! cannot settle is set aside with its reason, counted, and never fails (docs/concurrency.md).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use radiff_model::readahead::FileRaState;
use radiff_model::{Decision, Folio, Input, Policy, Submit, Trace, Trigger, Window};

use crate::calls::ra::{RaCall, RaCalls};
use crate::calls::ProgramCalls;

/// Why a decision was not checked.
pub const FAULT: &str = "made by a page fault (the mapping's file_ra_state is not tied to a descriptor in the trace)";
pub const AROUND: &str = "a page fault's read-around (do_sync_mmap_readahead(): whether it reads around depends on mmap_miss, which its tracepoint does not print)";
pub const START_UNKNOWN: &str = "an async call after a page fault's window on the file (ra->start, which the tracepoint does not print, is unknown)";
pub const OTHERS_ADDED: &str = "another task added folios inside the window while the call ran or just after (a folio is in the page cache before its tracepoint fires: whether the call met it is the scheduler's)";
pub const ELSEWHERE: &str =
    "its requests differ and others were issued meanwhile in another context (whose they were the trace does not say)";
pub const SHARED_STATE: &str = "another task's readahead call on the same struct file ran at the same time (file_ra_state is shared and read without a lock: what this call read may be the other's)";
pub const NOT_ALIGNED: &str =
    "the program's folios are not a run of the whole trace's (the page cache before it is unknown)";

/// What the check of one run's decisions found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub checked: usize,
    /// Reason (one of this module's constants) and count.
    pub set_aside: BTreeMap<&'static str, usize>,
    /// The first decision where kernel and model part.
    pub parted: Option<Parted>,
}

/// A decision where kernel and model part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parted {
    pub program: u32,
    /// The decision's number among the program's readahead calls.
    pub call: usize,
    pub pid: u32,
    /// The other tasks with a call on the file in flight.
    pub overlapping: Vec<u32>,
    /// The task that added the folio the call was made on.
    pub folio_by: Option<u32>,
    pub kernel: Window,
    pub model: Option<Window>,
}

impl Checked {
    pub fn set_aside_total(&self) -> usize {
        self.set_aside.values().sum()
    }

    /// `412 decisions checked, 3 set aside (2 x REASON; 1 x REASON)`.
    pub fn line(&self) -> String {
        let mut s = format!("{} readahead decisions checked one by one", self.checked);
        if !self.set_aside.is_empty() {
            let why: Vec<String> = self.set_aside.iter().map(|(w, n)| format!("{n} x {w}")).collect();
            let _ = write!(s, ", {} set aside ({})", self.set_aside_total(), why.join("; "));
        }
        s
    }
}

impl Parted {
    /// The kernel's and the model's windows for the call, and who else was reading.
    pub fn render(&self, name: &str, rerun: &str) -> String {
        let others = if self.overlapping.is_empty() {
            "no other task had a call on the file in flight".to_string()
        } else {
            let pids: Vec<String> = self.overlapping.iter().map(u32::to_string).collect();
            format!("while pid {} had a call on the file in flight", pids.join(", pid "))
        };
        let folio = match self.folio_by {
            Some(by) if by != self.pid => format!("on a folio pid {by} added, "),
            _ => String::new(),
        };
        let model =
            self.model.as_ref().map_or("(no window: the call returns first)".to_string(), crate::summary::window_line);
        format!(
            "{name}: program {} decision {} (pid {}, {folio}{others}): kernel and model part\n- kernel {}\n+ model  {}\n  the model was given the state the kernel recorded for this call (its file_ra_state, the page cache the trace shows before it)\nrerun: {rerun}\n",
            self.program,
            self.call,
            self.pid,
            crate::summary::window_line(&self.kernel),
            model
        )
    }
}

/// Checks every readahead call of `programs` against the model of `input` under
/// `policy`; `whole` is the run's whole trace (where the page cache before each program
/// comes from).
pub fn check(input: &Input, policy: &Policy, whole: &Trace, programs: &[ProgramCalls]) -> Checked {
    let mut out = Checked::default();
    let all: Vec<(u32, Folio)> =
        whole.windows.iter().flat_map(|w| w.folios.iter().map(move |f| (w.file, *f))).collect();
    for p in programs {
        let Some(before) = run_of(&all, &p.ra.adds) else {
            *out.set_aside.entry(NOT_ALIGNED).or_default() += p.ra.calls.len();
            continue;
        };
        program(input, policy, p, &all[..before], &mut out);
        if out.parted.is_some() {
            break;
        }
    }
    out
}

fn program(input: &Input, policy: &Policy, p: &ProgramCalls, before: &[(u32, Folio)], out: &mut Checked) {
    // Each struct file's windows (page_cache_ra_order()'s index, size, async_size), where
    // ra->start comes from.
    let mut windows: HashMap<u32, Vec<Left>> = HashMap::new();
    let mut fault_moved: Vec<u32> = Vec::new();
    for (i, c) in p.ra.calls.iter().enumerate() {
        let Some(fd) = c.fd else {
            *out.set_aside.entry(FAULT).or_default() += 1;
            if c.submits.iter().any(|s| matches!(s, Submit::Order { .. })) {
                fault_moved.push(c.file);
            }
            continue;
        };
        if c.trigger == Trigger::Fault {
            // Its window is known (the state's next ra->start), not why it was made.
            *out.set_aside.entry(AROUND).or_default() += 1;
            left(&mut windows, fd, c);
            continue;
        }
        let known =
            (!fault_moved.contains(&c.file)).then(|| starts_of(windows.get(&fd).map_or(&[][..], Vec::as_slice), c));
        let Some(starts) = known.or((c.trigger == Trigger::Sync).then(|| vec![0])) else {
            *out.set_aside.entry(START_UNKNOWN).or_default() += 1;
            continue;
        };
        let cache = cache_before(before, &p.ra, c);
        let kernel = kernel_window(c);
        let (judged, model) = first_match(input, policy, c, shares_state(&p.ra.calls, i), &kernel, &starts, &cache);
        match judged {
            Ok(()) => out.checked += 1,
            Err(Some(why)) => *out.set_aside.entry(why).or_default() += 1,
            Err(None) => {
                out.parted = Some(Parted {
                    program: p.program,
                    call: i,
                    pid: c.pid,
                    overlapping: c.overlapping.clone(),
                    folio_by: c.folio_by,
                    kernel,
                    model,
                });
                return;
            }
        }
        left(&mut windows, fd, c);
    }
}

/// The folios of call `c`'s file in the page cache when it was made: those before the
/// program (`before`), then the program's adds and removals in the order they came.
fn cache_before(before: &[(u32, Folio)], ra: &RaCalls, c: &RaCall) -> Vec<Folio> {
    let mut cache: Vec<(u32, Folio)> = before.to_vec();
    let gone = |cache: &mut Vec<(u32, Folio)>, file: u32, folio: &Folio| {
        if let Some(i) = cache.iter().rposition(|(f, x)| *f == file && x.index == folio.index) {
            cache.remove(i);
        }
    };
    let mut removed = ra.removed[..c.removed_before.min(ra.removed.len())].iter().peekable();
    for (k, add) in ra.adds[..c.adds_before.min(ra.adds.len())].iter().enumerate() {
        while let Some((_, file, folio)) = removed.next_if(|(at, ..)| *at <= k) {
            gone(&mut cache, *file, folio);
        }
        cache.push(*add);
    }
    for (_, file, folio) in removed {
        gone(&mut cache, *file, folio);
    }
    cache.into_iter().filter(|(f, _)| *f == c.file).map(|(_, folio)| folio).collect()
}

/// Notes the windows call `c` left in struct file `fd`'s state.
fn left(windows: &mut HashMap<u32, Vec<Left>>, fd: u32, c: &RaCall) {
    for s in &c.submits {
        if let Submit::Order { index, size, async_size, .. } = *s {
            windows.entry(fd).or_default().push(Left { start: index, size, async_size, at: c.at });
        }
    }
}

/// The model's window for call `c` (`kernel`: its window in the trace) judged against the
/// kernel's: for each of the `ra->start`s it may have entered with, the page cache before it
/// (`cache`), then, where other tasks added folios while it ran, that cache with theirs
/// inside the window, and with each run of theirs in the order the trace lists them (a
/// page another task added while the call ran was there when the call reached it, or the
/// call would have added it itself: a folio present and one whose add failed with -EEXIST
/// are skipped alike). Ok where one of them gives the kernel's window; else [`judge`]'s
/// verdict over all of them, and the model's window from the first.
fn first_match(
    input: &Input,
    policy: &Policy,
    c: &RaCall,
    shared: bool,
    kernel: &Window,
    starts: &[u64],
    cache: &[Folio],
) -> (Result<(), Option<&'static str>>, Option<Window>) {
    let own =
        |f: &Folio| c.folios.iter().any(|o| o.index < f.index + (1 << f.order) && f.index < o.index + (1 << o.order));
    let theirs: Vec<Folio> = c.others_added.iter().filter(|f| !own(f)).copied().collect();
    let (lo, hi) = (c.index, c.index + c.req_count.max(1));
    let span = kernel
        .folios
        .iter()
        .map(|f| (f.index, f.index + (1 << f.order)))
        .fold((lo, hi), |(a, b), (x, y)| (a.min(x), b.max(y)));
    let inside: Vec<Folio> =
        theirs.iter().filter(|f| f.index < span.1 && f.index + (1 << f.order) > span.0).copied().collect();
    // The others' folios each state adds to `cache`: none, those inside, each run in
    // order (a run equal to those inside is that state again). Each state's cache is made
    // when it is tried: a call that matches first makes none.
    let prefixes = (1..=theirs.len()).map(|k| &theirs[..k]).filter(|run| *run != &inside[..]);
    let extras: Vec<&[Folio]> =
        std::iter::once(&[][..]).chain(Some(&inside[..]).filter(|i| !i.is_empty())).chain(prefixes).collect();
    let mut models = Vec::new();
    for &ra_start in starts {
        for more in &extras {
            let d = Decision {
                file: c.file,
                trigger: c.trigger,
                index: c.index,
                req_count: c.req_count,
                ra: FileRaState::entered(&c.ra, ra_start),
                random: c.random,
                cache: cache.iter().chain(*more).copied().collect(),
                pfns: c.pfns.clone(),
            };
            let model = radiff_model::decide(input, policy, &d).windows.into_iter().next();
            if judge(c, shared, kernel, std::slice::from_ref(&model)).is_ok() {
                return (Ok(()), model);
            }
            models.push(model);
        }
    }
    let judged = judge(c, shared, kernel, &models);
    (judged, models.into_iter().next().flatten())
}

/// A window a call left in its struct file's state (`page_cache_ra_order()`'s fields), and
/// the times of the call's first and last events.
#[derive(Clone, Copy, Debug)]
struct Left {
    start: u64,
    size: u64,
    async_size: u64,
    at: (u64, u64),
}

/// What `ra->start` may have been when call `c` entered: the start of the last window of
/// its struct file (`windows`, in trace order) that left the `size` and `async_size` the
/// call entered with, and of every other such window whose call ran while that one did or
/// after (where tasks share the state, two CPUs' events close in time may be listed in
/// either order, and the state shows only whose window it holds); else the last window's;
/// 0 before any (file_ra_state_init()).
fn starts_of(windows: &[Left], c: &RaCall) -> Vec<u64> {
    let left = |w: &&Left| (w.size, w.async_size) == (c.ra.size, c.ra.async_size);
    let Some(last) = windows.iter().rev().find(left).or(windows.last()) else { return vec![0] };
    let mut starts = vec![last.start];
    for w in windows.iter().rev().filter(left).filter(|w| w.at.1 >= last.at.0) {
        if !starts.contains(&w.start) {
            starts.push(w.start);
        }
    }
    starts
}

/// Whether the kernel's call (`kernel`, from `c`; `shared`: another task's call on the
/// same struct file ran at the same time) is one of the model's windows for the states it
/// may have met (`models`): `Err(Some(reason))` where they differ in a way the trace cannot
/// settle, `Err(None)` where they part.
fn judge(c: &RaCall, shared: bool, kernel: &Window, models: &[Option<Window>]) -> Result<(), Option<&'static str>> {
    // No window: an async call that returned before its tracepoint (the model's cache
    // holds no folio at the index); the kernel's must have done nothing either.
    let none = Window { submits: Vec::new(), folios: Vec::new(), requests: Vec::new(), ..kernel.clone() };
    let windows: Vec<&Window> = models.iter().map(|m| m.as_ref().unwrap_or(&none)).collect();
    if windows.contains(&kernel) {
        return Ok(());
    }
    let bare = |w: &Window| Window { requests: Vec::new(), ..w.clone() };
    let same_but_requests = windows.iter().any(|m| bare(m) == bare(kernel));
    // Folios of other tasks inside the window: the model met them cached, or not, where
    // the kernel's call raced their adds; that changes which folios the call added and
    // its requests, not the window it chose (the states with their folios were tried).
    // The folio the call was made on counts too: an async call on a folio the trace lists
    // later finds nothing in the model's cache.
    let span =
        windows.iter().flat_map(|m| &m.folios).chain(&kernel.folios).map(|f| (f.index, f.index + (1 << f.order)));
    let (lo, hi) = span.fold((c.index, c.index + 1), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    let same_window = windows.iter().any(|m| m.submits.first() == kernel.submits.first());
    if same_window && c.others_added.iter().any(|f| f.index < hi && f.index + (1 << f.order) > lo) {
        return Err(Some(OTHERS_ADDED));
    }
    if same_but_requests && c.elsewhere > 0 {
        return Err(Some(ELSEWHERE));
    }
    if shared {
        return Err(Some(SHARED_STATE));
    }
    Err(None)
}

/// Whether another task's readahead call on the same struct file as call `i` ran while it
/// did: from its first event to its last, or for a call that opened no window, until it
/// was over for sure ([`RaCall::until`]: a task preempted after its tracepoint reads the
/// state when it runs again, where one with a window has read it before its window's
/// event), ties included (the clock cannot order them).
fn shares_state(calls: &[RaCall], i: usize) -> bool {
    let c = &calls[i];
    let span = |c: &RaCall| (c.at.0, if c.submits.is_empty() { c.at.1.max(c.until) } else { c.at.1 });
    let (from, to) = span(c);
    calls.iter().any(|d| d.pid != c.pid && d.fd == c.fd && d.at.0 <= to && from <= span(d).1)
}

/// The kernel's call as a window of the trace.
fn kernel_window(c: &RaCall) -> Window {
    Window {
        file: c.file,
        trigger: c.trigger,
        index: c.index,
        req_count: c.req_count,
        ra: c.ra,
        submits: c.submits.clone(),
        folios: c.folios.clone(),
        requests: c.requests.clone(),
    }
}

/// Where `run` (the program's folio adds) begins in `all` (the whole trace's), taken as
/// multisets: two CPUs' adds may be ordered otherwise in the two trace instances.
fn run_of(all: &[(u32, Folio)], run: &[(u32, Folio)]) -> Option<usize> {
    if run.len() > all.len() {
        return None;
    }
    if run.is_empty() {
        return Some(all.len());
    }
    let mut want: HashMap<(u32, Folio), i64> = HashMap::new();
    for x in run {
        *want.entry(*x).or_default() += 1;
    }
    // `diff` counts the keys whose count in the window differs from `want`.
    let mut have: HashMap<(u32, Folio), i64> = HashMap::new();
    let mut diff = want.len();
    let bump = |have: &mut HashMap<(u32, Folio), i64>, diff: &mut usize, k: (u32, Folio), by: i64| {
        let target = want.get(&k).copied().unwrap_or(0);
        let n = have.entry(k).or_default();
        let was = *n == target;
        *n += by;
        match (was, *n == target) {
            (true, false) => *diff += 1,
            (false, true) => *diff -= 1,
            _ => {}
        }
    };
    for (i, x) in all.iter().enumerate() {
        bump(&mut have, &mut diff, *x, 1);
        if i >= run.len() {
            bump(&mut have, &mut diff, all[i - run.len()], -1);
        }
        if i + 1 >= run.len() && diff == 0 {
            return Some(i + 1 - run.len());
        }
    }
    None
}

#[cfg(test)]
mod tests;
