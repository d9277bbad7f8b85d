//! The readahead calls a program's tasks made, as the calls' trace instance recorded them
//! (each line with its task): for each `page_cache_sync_ra`/`page_cache_async_ra`, the
//! state it entered with, the task's descriptor, and what the task did until its next
//! readahead call or the end of its system call (the submissions, the folios it added,
//! the requests issued in its context). `crate::decisions` checks each against the model.

use std::collections::HashMap;

use radiff_model::{Folio, RaState, Request, Submit, Trigger};
use serde::{Deserialize, Serialize};

use super::line::Line;

/// The scenario's device and files, as the readahead events name them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaFiles {
    pub major: u32,
    pub minor: u32,
    /// The inode of each file: an event's file is its index here.
    pub inos: Vec<u64>,
}

/// A readahead or page-cache event of the calls' trace instance, read with the fields
/// `crate::ftrace` reads in the main trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaEvent {
    /// `page_cache_sync_ra` or `page_cache_async_ra`: a readahead call, with the state it
    /// entered with.
    Open { file: u32, trigger: Trigger, index: u64, req_count: u64, ra: RaState },
    /// `page_cache_ra_order` or `page_cache_ra_unbounded`.
    Submit { file: u32, submit: Submit },
    /// `mm_filemap_add_to_page_cache`, with its page frame if the line has one.
    Folio { file: u32, folio: Folio, pfn: Option<u64> },
    /// `mm_filemap_delete_from_page_cache`: a folio gone (POSIX_FADV_DONTNEED, truncation,
    /// reclaim).
    Removed { file: u32, folio: Folio },
}

impl RaEvent {
    pub fn file(&self) -> u32 {
        match self {
            RaEvent::Open { file, .. }
            | RaEvent::Submit { file, .. }
            | RaEvent::Folio { file, .. }
            | RaEvent::Removed { file, .. } => *file,
        }
    }
}

/// The events [`event_of`] reads.
pub const EVENT_NAMES: [&str; 6] = [
    "page_cache_sync_ra",
    "page_cache_async_ra",
    "page_cache_ra_order",
    "page_cache_ra_unbounded",
    "mm_filemap_add_to_page_cache",
    "mm_filemap_delete_from_page_cache",
];

/// `event` with fields `body` (`dev=259:0 ino=83 index=0 ...`, or for a folio `dev 259:0
/// ino 83 pfn=0x1234 ofs=4096 order=0`) as an [`RaEvent`] of one of `files`; `None` for
/// another file or event.
pub fn event_of(event: &str, body: &str, files: &RaFiles) -> Result<Option<RaEvent>, String> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    let mut tokens = body.split_whitespace();
    while let Some(t) = tokens.next() {
        match t.split_once('=') {
            Some(kv) => pairs.push(kv),
            None => pairs.extend(tokens.next().map(|v| (t, v))),
        }
    }
    let get = |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).ok_or(format!("{event}: no `{key}`"));
    let num = |key: &str| -> Result<u64, String> {
        get(key)?.parse().map_err(|_| format!("{event}: `{key}` is not a number"))
    };
    let ino = u64::from_str_radix(get("ino")?, 16).map_err(|_| format!("{event}: `ino` is not hex"))?;
    let Some(file) = (get("dev")? == format!("{}:{}", files.major, files.minor))
        .then(|| files.inos.iter().position(|&i| i == ino))
        .flatten()
    else {
        return Ok(None);
    };
    let file = file as u32;
    Ok(Some(match event {
        "mm_filemap_add_to_page_cache" => RaEvent::Folio {
            file,
            folio: Folio { index: num("ofs")? / radiff_model::trace::PAGE_SIZE, order: num("order")? as u32 },
            pfn: get("pfn").ok().and_then(|p| u64::from_str_radix(p.trim_start_matches("0x"), 16).ok()),
        },
        "mm_filemap_delete_from_page_cache" => RaEvent::Removed {
            file,
            folio: Folio { index: num("ofs")? / radiff_model::trace::PAGE_SIZE, order: num("order")? as u32 },
        },
        "page_cache_ra_order" => RaEvent::Submit {
            file,
            submit: Submit::Order {
                index: num("index")?,
                size: num("size")?,
                async_size: num("async_size")?,
                order: num("order")? as u32,
            },
        },
        "page_cache_ra_unbounded" => RaEvent::Submit {
            file,
            submit: Submit::Unbounded {
                index: num("index")?,
                nr_to_read: num("nr_to_read")?,
                lookahead_size: num("lookahead_size")?,
            },
        },
        "page_cache_sync_ra" | "page_cache_async_ra" => RaEvent::Open {
            file,
            trigger: if event == "page_cache_sync_ra" { Trigger::Sync } else { Trigger::Async },
            index: num("index")?,
            req_count: num("req_count")?,
            ra: RaState {
                start: 0,
                size: num("size")?,
                async_size: num("async_size")?,
                order: num("order")? as u32,
                ra_pages: num("ra_pages")?,
                mmap_miss: num("mmap_miss")?,
                prev_pos: get("prev_pos")?.parse().map_err(|_| format!("{event}: `prev_pos` is not a number"))?,
            },
        },
        _ => return Ok(None),
    }))
}

/// How many of a task's last calls watch other tasks' folio adds.
const WATCHED: usize = 4;

/// The largest folio order looked for where a page's folio is found (a PMD's, 9, and
/// beyond on larger base pages).
const MAX_ORDER: u32 = 12;

/// One readahead call of a program's task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaCall {
    pub pid: u32,
    /// The struct file it was made on: the program's descriptor (its model fd, before
    /// `splice_programs` moves it), `None` when no read of the task was in flight on one
    /// of the files (a page fault's readahead).
    pub fd: Option<u32>,
    /// FMODE_RANDOM on that struct file (a POSIX_FADV_RANDOM before).
    #[serde(default)]
    pub random: bool,
    pub file: u32,
    pub trigger: Trigger,
    pub index: u64,
    pub req_count: u64,
    /// The state the call entered with (`start` is not traced: 0).
    pub ra: RaState,
    /// How many of the program's folio adds ([`RaCalls::adds`]) came before the call.
    pub adds_before: usize,
    /// How many of the folios removed ([`RaCalls::removed`]) went before the call.
    #[serde(default)]
    pub removed_before: usize,
    pub submits: Vec<Submit>,
    /// The folios the task added during the call, and their page frames.
    pub folios: Vec<Folio>,
    pub pfns: Vec<u64>,
    /// The requests issued in the task's context during the call.
    pub requests: Vec<Request>,
    /// Requests of the device issued meanwhile in another context (a kworker's, another
    /// task's plug): whose they were the trace does not say.
    #[serde(default)]
    pub elsewhere: u32,
    /// The other tasks with a call on the same file in flight when it was made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlapping: Vec<u32>,
    /// Folios other tasks added from its start to the task's next readahead call, or
    /// later in the trace but stamped no later than its last event (a folio is in the page
    /// cache a moment before its tracepoint fires, and two CPUs' events of one microsecond
    /// are listed in either order: one listed after the call may have been there when it
    /// looked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others_added: Vec<Folio>,
    /// The times (microseconds, the instance's global clock) of its first and last event:
    /// while it read and wrote its `file_ra_state`.
    #[serde(default)]
    pub at: (u64, u64),
    /// When the call was over for sure (microseconds): the task's next line after it (the
    /// end of its system call, its next fault or readahead call). A task preempted inside
    /// the call, after its tracepoint, reads its `file_ra_state` when it runs again.
    #[serde(default)]
    pub until: u64,
    /// The task that added the folio at `index` (the marked folio of an async call), where
    /// one of the program's tasks did before the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folio_by: Option<u32>,
}

/// Every readahead call of one program, and every folio its tasks added, in trace order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaCalls {
    pub calls: Vec<RaCall>,
    /// (file, folio) for each folio added to one of the scenario's files while the
    /// program ran, by any task.
    pub adds: Vec<(u32, Folio)>,
    /// (adds before it, file, folio) for each folio removed from one of the scenario's
    /// files while the program ran, by any task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<(usize, u32, Folio)>,
    /// The device's requests the calls' instance saw (`MAJOR,MINOR`): others are ignored.
    #[serde(skip)]
    pub(super) dev: String,
    /// Each task's call still running: its index in `calls`.
    #[serde(skip)]
    open: HashMap<u32, usize>,
    /// Each task's last calls (the newest last): the folios other tasks add until its next
    /// call, or stamped no later than a call's last event, are its `others_added`.
    #[serde(skip)]
    watch: HashMap<u32, Vec<usize>>,
    /// The task and time of each of `adds`.
    #[serde(skip)]
    added_by: Vec<(u32, u64)>,
    /// The last folio added at each (file, index): its order and task.
    #[serde(skip)]
    by_index: HashMap<(u32, u64), (u32, u32)>,
}

impl RaCalls {
    /// No readahead call and no folio added (or not read: see `crate::calls::parse`).
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.adds.is_empty()
    }

    pub(super) fn new(dev: String) -> Self {
        RaCalls { dev, ..RaCalls::default() }
    }

    /// The task that added the folio holding page `index` of `file`, if one was added.
    fn added_at(&self, file: u32, index: u64) -> Option<u32> {
        (0..=MAX_ORDER).find_map(|order| {
            let start = index >> order << order;
            self.by_index.get(&(file, start)).filter(|(o, _)| *o >= order).map(|(_, pid)| *pid)
        })
    }

    /// Whether two of the program's tasks made readahead calls on one file at the same
    /// time (a call made while another task that made readahead calls had a call on the
    /// file in flight, or two tasks' readahead calls interleaved, as faults' do): then
    /// which of them made which window, the folios' orders and the requests are the
    /// scheduler's, and no two runs' traces need be the same.
    pub fn raced(&self) -> bool {
        let readers: std::collections::HashSet<u32> = self.calls.iter().map(|c| c.pid).collect();
        if readers.len() < 2 {
            return false;
        }
        if self.calls.iter().any(|c| c.overlapping.iter().any(|p| readers.contains(p))) {
            return true;
        }
        // Faults are not calls in flight: two tasks whose readahead calls interleave.
        let mut spans: HashMap<u32, (u64, u64)> = HashMap::new();
        for c in &self.calls {
            let s = spans.entry(c.pid).or_insert(c.at);
            *s = (s.0.min(c.at.0), s.1.max(c.at.1));
        }
        let spans: Vec<(u64, u64)> = spans.into_values().collect();
        spans.iter().enumerate().any(|(i, a)| spans[i + 1..].iter().any(|b| a.0 <= b.1 && b.0 <= a.1))
    }

    /// A readahead event of task `l.pid`, made on struct file `fd` (`random`), while
    /// `overlapping` had calls on the same file in flight; `fault`: in a page fault on a
    /// mapping of that file.
    pub(super) fn event(
        &mut self,
        l: &Line,
        event: RaEvent,
        fd: Option<(u32, bool)>,
        overlapping: Vec<u32>,
        fault: bool,
    ) {
        // A fault's read-around (do_sync_mmap_readahead()) traces no call, only its
        // window: it opens a call of its own, Trigger::Fault, with the window's fields.
        if let RaEvent::Submit { file, submit: Submit::Order { index, size, async_size, order } } = event {
            if fault && self.current(l.pid).is_none_or(|c| c.file != file) {
                let ra = RaState { start: index, size, async_size, order, ..RaState::default() };
                let open = RaEvent::Open { file, trigger: Trigger::Fault, index, req_count: size, ra };
                self.event(l, open, fd, overlapping.clone(), fault);
            }
        }
        match event {
            RaEvent::Open { file, trigger, index, req_count, ra } => {
                self.ended(l.pid, l.micros);
                self.open.insert(l.pid, self.calls.len());
                // Other tasks' folios of the same microsecond listed before it: the clock cannot
                // order them, and one may have come after the call looked.
                let tied: Vec<Folio> = (0..self.adds.len())
                    .rev()
                    .take_while(|&k| self.added_by[k].1 >= l.micros)
                    .filter(|&k| self.added_by[k].0 != l.pid && self.adds[k].0 == file)
                    .map(|k| self.adds[k].1)
                    .collect();
                let recent = self.watch.entry(l.pid).or_default();
                if recent.len() == WATCHED {
                    recent.remove(0);
                }
                recent.push(self.calls.len());
                self.calls.push(RaCall {
                    pid: l.pid,
                    fd: fd.map(|(fd, _)| fd),
                    random: fd.is_some_and(|(_, random)| random),
                    file,
                    trigger,
                    index,
                    req_count,
                    ra,
                    adds_before: self.adds.len(),
                    removed_before: self.removed.len(),
                    submits: Vec::new(),
                    folios: Vec::new(),
                    pfns: Vec::new(),
                    requests: Vec::new(),
                    elsewhere: 0,
                    overlapping,
                    others_added: tied,
                    at: (l.micros, l.micros),
                    until: l.micros,
                    folio_by: self.added_at(file, index),
                });
            }
            RaEvent::Submit { file, submit } => {
                if let Some(c) = self.current(l.pid).filter(|c| c.file == file) {
                    c.submits.push(submit);
                    c.at.1 = l.micros;
                }
            }
            RaEvent::Removed { file, folio } => {
                self.removed.push((self.adds.len(), file, folio));
                self.by_index.remove(&(file, folio.index));
            }
            RaEvent::Folio { file, folio, pfn } => {
                self.adds.push((file, folio));
                self.added_by.push((l.pid, l.micros));
                self.by_index.insert((file, folio.index), (folio.order, l.pid));
                if let Some(c) = self.current(l.pid).filter(|c| c.file == file) {
                    c.folios.push(folio);
                    c.pfns.extend(pfn);
                    c.at.1 = l.micros;
                }
                for (&pid, recent) in &self.watch {
                    for (k, &i) in recent.iter().enumerate() {
                        let c = &mut self.calls[i];
                        let newest = k + 1 == recent.len();
                        if pid != l.pid && c.file == file && (newest || l.micros <= c.at.1) {
                            c.others_added.push(folio);
                        }
                    }
                }
            }
        }
    }

    /// A request issued (`block_rq_issue`) in task `pid`'s context.
    pub(super) fn issued(&mut self, pid: u32, dev: &str, request: Request) {
        if dev != self.dev || request.rwbs.contains('M') {
            return;
        }
        for (&task, &i) in &self.open {
            if task == pid {
                self.calls[i].requests.push(request.clone());
            } else {
                self.calls[i].elsewhere += 1;
            }
        }
    }

    /// Task `pid`'s system call returned, or it faulted: its readahead call is over.
    pub(super) fn ended(&mut self, pid: u32, micros: u64) {
        if let Some(i) = self.open.remove(&pid) {
            self.calls[i].until = self.calls[i].until.max(micros);
        }
    }

    fn current(&mut self, pid: u32) -> Option<&mut RaCall> {
        let i = *self.open.get(&pid)?;
        self.calls.get_mut(i)
    }
}
