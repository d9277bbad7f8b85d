//! A program's calls on the scenario's files, from the syscall tracepoints the guest
//! recorded (`calls.txt`, see `guest::program`), turned into the model's input ops.
//!
//! Pure: text in, values out. One program's calls are those between its markers, of its
//! pid and of the tasks it forked (`sched_process_fork`). Descriptors are followed per
//! process (thread group): `openat` of a scenario file opens one (its own `struct file`,
//! so its own `file_ra_state`: a model descriptor of its own), `dup`s and forks share it,
//! `close` ends it. A program's mappings of the files are followed per process too
//! (`mmap`, `madvise`, `munmap`, and the page faults on them: [`maps`]). Whatever the model
//! cannot follow is named with its first call, and the ops then stop.

use std::collections::{BTreeMap, HashMap, HashSet};

use radiff_model::{pattern, Advice, Op, ReadHow};
use serde::{Deserialize, Serialize};

mod line;
mod maps;
pub mod ra;

use line::{Body, Line};

/// The calls the guest records at entry and exit: those replayed, those that end a
/// replay (writes, a copy out of the file), and the descriptor bookkeeping.
pub const CALLS: [&str; 28] = [
    "openat",
    "open",
    "close",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "read",
    "pread64",
    "readv",
    "preadv",
    "preadv2",
    "lseek",
    "fadvise64",
    "readahead",
    "mmap",
    "munmap",
    "madvise",
    "mprotect",
    "mremap",
    "write",
    "pwrite64",
    "writev",
    "pwritev",
    "pwritev2",
    "splice",
    "sendfile64",
    "copy_file_range",
];

/// The other events the guest records beside [`CALLS`]: a thread group's end and an exec
/// (its mappings go), the page faults (a fault on a program's mapping of a file is a
/// touch; x86's tracepoints, at the fault's entry) and the block requests' issue and
/// completion (whether a fault met a request still in flight).
pub const FAULT_EVENTS: [&str; 6] = [
    "sched:sched_process_exit",
    "sched:sched_process_exec",
    "exceptions:page_fault_user",
    "exceptions:page_fault_kernel",
    "block:block_rq_issue",
    "block:block_rq_complete",
];

/// Calls recorded when the kernel has them (asynchronous I/O: the model cannot follow
/// any), whose first use ends a replay.
pub const ASYNC_CALLS: [&str; 3] = ["io_setup", "io_submit", "io_uring_setup"];

/// What one program did to the scenario's files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramCalls {
    /// Its index in the scenario's programs.
    pub program: u32,
    /// The pid the guest started it as.
    pub pid: u32,
    /// The model's ops, in the order the calls returned; descriptors are this program's
    /// own: `pattern::fd_of(file, n)` is its n-th open of file `file` ([`splice_programs`]
    /// moves them past the scenario's other descriptors).
    pub ops: Vec<Op>,
    /// Calls on the scenario's files, by name (`pread64`), and bytes the reads asked for.
    pub calls: BTreeMap<String, u64>,
    pub bytes_asked: u64,
    /// The first call the model cannot follow, and why; `ops` end before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfollowable: Option<String>,
    /// The address each of its `Op::Mmap`s returned, in order (`map_addrs[n]` is map `n`'s).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub map_addrs: Vec<u64>,
    /// The block requests each of its faults found in flight, by the index in `ops` of
    /// its `Op::Touch` (only those that found some); the model decides whether the fault
    /// looked at them ([`radiff_model::fault::LOAD_RACE`]). See [`maps`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads_in_flight: Vec<radiff_model::LoadInFlight>,
    /// What each of its RWF_NOWAIT reads returned, by the index in `ops` of its
    /// `Op::ReadWith` (whose `len` is that return: the trace has no asked length).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nowait_returned: Vec<radiff_model::NowaitReturned>,
    /// The first populating call (MAP_POPULATE, MADV_POPULATE_READ, MADV_COLLAPSE) on a
    /// mapping that began with a block request in flight, said in a sentence: whether it
    /// met a folio still locked is up to the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raced: Option<String>,
    /// Its tasks' readahead calls, each with the state it entered with (checked one by
    /// one where the tasks' calls overlap: `crate::decisions`); empty when the calls were
    /// read without the scenario's files' identities ([`parse`]).
    #[serde(default, skip_serializing_if = "ra::RaCalls::is_empty")]
    pub ra: ra::RaCalls,
}

impl ProgramCalls {
    /// One line: `pid 812: 513 calls (1 openat, 512 pread64, 1 close), 512.0 MiB asked`.
    pub fn summary(&self) -> String {
        let total: u64 = self.calls.values().sum();
        let kinds: Vec<String> = self.calls.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let mut s = format!(
            "pid {}: {total} calls on the scenario's files ({}), {:.1} MiB asked, {} ops for the model",
            self.pid,
            if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") },
            self.bytes_asked as f64 / (1u64 << 20) as f64,
            self.ops.len()
        );
        if let Some(why) = &self.unfollowable {
            s.push_str(&format!("; the model stops replaying its calls in order at: {why}"));
        }
        if !self.loads_in_flight.is_empty() {
            let faults = self.ops.iter().filter(|o| matches!(o, Op::Touch { .. })).count();
            s.push_str(&format!(
                "; {} of its {faults} faults on the mappings began with reads in flight (the model checks the folios each looked at)",
                self.loads_in_flight.len()
            ));
        }
        if let Some(race) = &self.raced {
            s.push_str(&format!("; {race}"));
        }
        s
    }
}

/// Parses `calls.txt`: each program's calls on the files at `paths` (file `f` at
/// `paths[f]`, of `sizes[f]` bytes). Programs in the order of their markers.
pub fn parse(text: &str, paths: &[String], sizes: &[u64]) -> Result<Vec<ProgramCalls>, String> {
    parse_traced(text, paths, sizes, None)
}

/// [`parse`], and with `filter` (the scenario's device and inodes) each program's
/// readahead calls ([`ProgramCalls::ra`]).
pub fn parse_traced(
    text: &str,
    paths: &[String],
    sizes: &[u64],
    filter: Option<&ra::RaFiles>,
) -> Result<Vec<ProgramCalls>, String> {
    let mut segments: Vec<(u32, Vec<Line>)> = Vec::new();
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let l = line::parse(raw).map_err(|e| format!("calls.txt:{}: {e}: `{raw}`", n + 1))?;
        match &l.body {
            Body::Mark(m) => {
                let words: Vec<&str> = m.split_whitespace().collect();
                match words.as_slice() {
                    ["radiff", "program", p, "start"] => segments.push((p.parse().unwrap_or(0), Vec::new())),
                    ["radiff", "program", p, "pid", pid, "end"] => {
                        let (program, lines) =
                            segments.pop().ok_or_else(|| format!("calls.txt:{}: an end without a start", n + 1))?;
                        if p.parse::<u32>().ok() != Some(program) {
                            return Err(format!(
                                "calls.txt:{}: the end of program {p} inside program {program}",
                                n + 1
                            ));
                        }
                        let pid = pid.parse().map_err(|_| format!("calls.txt:{}: pid `{pid}`", n + 1))?;
                        out.push(follow(program, pid, &lines, paths, sizes, filter));
                    }
                    _ => {}
                }
            }
            _ => {
                if let Some((_, lines)) = segments.last_mut() {
                    lines.push(l);
                }
            }
        }
    }
    Ok(out)
}

/// An open file of the program's (a `struct file`).
#[derive(Clone, Debug)]
struct Desc {
    file: u32,
    /// Its number among the program's opens of `file`.
    n: u32,
    pos: u64,
    direct: bool,
    /// FMODE_RANDOM (POSIX_FADV_RANDOM, until NORMAL or SEQUENTIAL).
    random: bool,
}

/// A call entered and not yet returned, of one task.
struct Pending {
    name: String,
    args: BTreeMap<String, String>,
    desc: Option<usize>,
    /// The file position at entry, for calls that use it.
    pos: u64,
}

/// The state of one program's replay.
struct Follow<'a> {
    paths: &'a [String],
    sizes: &'a [u64],
    tree: HashSet<u32>,
    /// A forked task's parent's thread group, until its first line gives its own.
    forked: HashMap<u32, u32>,
    tables: HashMap<u32, HashMap<u64, usize>>,
    descs: Vec<Desc>,
    opens: Vec<u32>,
    pending: HashMap<u32, Pending>,
    /// Each process's live mappings of the scenario's files.
    maps: HashMap<u32, Vec<maps::Mapping>>,
    /// The task whose page faults on the mappings are followed (one only: a fault's end is
    /// not traced, so two tasks' faults could overlap unseen).
    faulted_by: Option<u32>,
    /// Block requests issued and not yet completed (device, sector), of any task.
    inflight: HashMap<(String, u64), u64>,
    /// The last completion's CPU and time, and its request (first sector, sectors).
    last_completion: Option<(u32, u64, u64, u64)>,
    /// The task of the last fault that found reads in flight, until its next line: the
    /// reads that complete meanwhile may have done so while the fault ran.
    faulting: Option<u32>,
    /// The scenario's device and files, to read the readahead events with.
    filter: Option<&'a ra::RaFiles>,
    /// Each task's last page fault on a mapping of the scenario's files, until its next
    /// system call: the open file (`descs`) whose `file_ra_state` its readahead uses.
    fault_desc: HashMap<u32, usize>,
    out: ProgramCalls,
}

fn follow(
    program: u32,
    pid: u32,
    lines: &[Line],
    paths: &[String],
    sizes: &[u64],
    filter: Option<&ra::RaFiles>,
) -> ProgramCalls {
    let dev = filter.map(|f| format!("{},{}", f.major, f.minor)).unwrap_or_default();
    let mut f = Follow {
        paths,
        sizes,
        tree: HashSet::from([pid]),
        forked: HashMap::new(),
        tables: HashMap::new(),
        descs: Vec::new(),
        opens: vec![0; paths.len()],
        pending: HashMap::new(),
        maps: HashMap::new(),
        faulted_by: None,
        inflight: HashMap::new(),
        last_completion: None,
        faulting: None,
        filter,
        fault_desc: HashMap::new(),
        out: ProgramCalls { program, pid, ra: ra::RaCalls::new(dev), ..ProgramCalls::default() },
    };
    for l in lines {
        f.line(l);
    }
    f.unmap_at_exit();
    if f.out.unfollowable.is_none() {
        // The model replays the calls in order: the decisions one by one are not asked
        // for (crate::decisions), and a long read's folios need not be kept twice.
        f.out.ra = ra::RaCalls::default();
    }
    f.out
}

impl Follow<'_> {
    fn line(&mut self, l: &Line) {
        if let Body::Ra { event, fields } = &l.body {
            self.ra_event(l, event, fields);
            return;
        }
        if let Body::Block { complete, dev, sector, sectors, rwbs } = &l.body {
            // Whichever task the block layer ran in: the interrupt's, for a completion.
            let key = (dev.clone(), *sector);
            if *complete {
                let n = self.inflight.remove(&key).unwrap_or(*sectors);
                self.last_completion = Some((l.cpu, l.micros, *sector, n));
                self.completed_after_fault(*sector, n);
            } else {
                self.inflight.insert(key, *sectors);
                let request = radiff_model::Request { sector: *sector, sectors: *sectors, rwbs: rwbs.as_str().into() };
                self.out.ra.issued(l.pid, dev, request);
            }
            return;
        }
        if !self.tree.contains(&l.pid) {
            return;
        }
        if self.faulting == Some(l.pid) {
            self.faulting = None;
        }
        if let Some(parent_tgid) = self.forked.remove(&l.pid) {
            if l.tgid != parent_tgid && !self.tables.contains_key(&l.tgid) {
                // A new process: fork copied its parent's descriptor table, and its
                // mappings (a thread shares both).
                let table = self.tables.get(&parent_tgid).cloned().unwrap_or_default();
                self.tables.insert(l.tgid, table);
                self.forked_with_mappings(l, parent_tgid);
            }
        }
        match &l.body {
            Body::Fork { child } => {
                self.tree.insert(*child);
                self.forked.insert(*child, l.tgid);
            }
            Body::Fault { address, error_code } => {
                self.out.ra.ended(l.pid, l.micros);
                self.fault(l, *address, *error_code)
            }
            Body::Gone { gone: true } => self.unmap_process(l.tgid),
            Body::Enter { name, args } => self.enter(l, name, args),
            Body::Exit { name, ret } => self.exit(l, name, *ret),
            Body::Mark(_) | Body::Other | Body::Block { .. } | Body::Ra { .. } | Body::Gone { gone: false } => {}
        }
    }

    fn desc_of(&self, tgid: u32, fd: Option<u64>) -> Option<usize> {
        self.tables.get(&tgid).and_then(|t| t.get(&fd?)).copied()
    }

    fn refuse(&mut self, why: String) {
        if self.out.unfollowable.is_none() {
            self.out.unfollowable = Some(why);
        }
    }

    fn enter(&mut self, l: &Line, name: &str, args: &BTreeMap<String, String>) {
        self.fault_desc.remove(&l.pid);
        if ASYNC_CALLS.contains(&name) {
            self.refuse(format!("{name} by pid {}: asynchronous I/O (libaio, io_uring) is not replayed", l.pid));
        }
        // A copy or splice into one of the scenario's files writes it.
        if ["fd_out", "out_fd"].into_iter().any(|k| self.desc_of(l.tgid, num(args, k)).is_some()) {
            self.refuse(format!("{name} by pid {} into the file: a write to the file", l.pid));
        }
        let fd_key = ["fd", "fildes", "oldfd", "fd_in", "in_fd"].into_iter().find(|k| args.contains_key(*k));
        let desc = fd_key.and_then(|k| self.desc_of(l.tgid, num(args, k)));
        if let Some(d) = desc {
            *self.out.calls.entry(name.to_string()).or_default() += 1;
            // Another task's call on a scenario file still in flight: the two overlap.
            if let Some((other, p)) = self.pending.iter().find(|(pid, p)| **pid != l.pid && p.desc.is_some()) {
                let why = format!("{name} by pid {} while pid {other}'s {} on the file had not returned: two tasks' calls overlapping on the scenario's files", l.pid, p.name);
                self.refuse(why);
            }
            let pos = self.descs[d].pos;
            match name {
                "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2" => {
                    self.refuse(format!("{name} by pid {}: a write to the file", l.pid))
                }
                // At its return: a copy_file_range to another file system fails at the
                // kernel's first checks, before it reads a page (cp's first try).
                "splice" | "sendfile64" => {
                    self.refuse(format!("{name} by pid {}: a copy out of the file is not replayed", l.pid))
                }
                "close" => {
                    if let (Some(t), Some(fd)) = (self.tables.get_mut(&l.tgid), num(args, "fd")) {
                        t.remove(&fd);
                    }
                }
                _ => {}
            }
            self.pending.insert(l.pid, Pending { name: name.to_string(), args: args.clone(), desc: Some(d), pos });
        } else {
            self.pending.insert(l.pid, Pending { name: name.to_string(), args: args.clone(), desc: None, pos: 0 });
        }
    }

    fn exit(&mut self, l: &Line, name: &str, ret: i64) {
        self.out.ra.ended(l.pid, l.micros);
        let Some(p) = self.pending.remove(&l.pid).filter(|p| p.name == name) else { return };
        match (name, p.desc) {
            ("openat" | "open", _) if ret >= 0 => self.opened(l, &p, ret as u64),
            ("dup" | "dup2" | "dup3", Some(d)) if ret >= 0 => {
                self.tables.entry(l.tgid).or_default().insert(ret as u64, d);
            }
            ("fcntl", Some(d)) if ret >= 0 && matches!(num(&p.args, "cmd"), Some(0 | 1030)) => {
                self.tables.entry(l.tgid).or_default().insert(ret as u64, d);
            }
            ("mmap", Some(d)) => self.mmapped(l, &p, d, ret),
            (_, Some(d)) => self.on_file(l, &p, d, ret),
            ("mmap" | "munmap" | "madvise" | "mprotect" | "mremap", None) => self.on_mappings(l, &p, ret),
            _ => {}
        }
    }

    /// An open of one of the scenario's files: a descriptor of its own.
    fn opened(&mut self, l: &Line, p: &Pending, fd: u64) {
        let raw = p.args.get("filename").map(String::as_str).unwrap_or_default();
        if !raw.contains('"') {
            // A kernel whose syscall events do not read user memory (Debian's 6.12) prints
            // the path's address alone: no open can be told to be of the scenario's files.
            self.refuse(format!(
                "{} by pid {}: this kernel's syscall events print the path's address, not the path (`filename: {raw}`), so its opens of the scenario's files cannot be told from others",
                p.name, l.pid
            ));
            return;
        }
        let path = quoted(raw);
        let Some(file) = self.paths.iter().position(|f| *f == path) else { return };
        *self.out.calls.entry(p.name.clone()).or_default() += 1;
        let n = self.opens[file];
        if n >= pattern::FDS_PER_FILE {
            self.refuse(format!("{} by pid {}: more than {} opens of one file", p.name, l.pid, pattern::FDS_PER_FILE));
            return;
        }
        self.opens[file] += 1;
        let direct = p.args.get("flags").is_some_and(|f| f.contains("O_DIRECT"));
        self.descs.push(Desc { file: file as u32, n, pos: 0, direct, random: false });
        self.tables.entry(l.tgid).or_default().insert(fd, self.descs.len() - 1);
    }

    /// A call on one of the scenario's open files returned `ret`.
    fn on_file(&mut self, l: &Line, p: &Pending, d: usize, ret: i64) {
        let desc = self.descs[d].clone();
        let fd = pattern::fd_of(desc.file, desc.n);
        let size = self.sizes.get(desc.file as usize).copied().unwrap_or(0);
        let name = p.name.as_str();
        if ret < 0 && matches!(name, "read" | "pread64" | "readv" | "preadv" | "preadv2" | "fadvise64" | "readahead") {
            self.refuse(format!("{name} by pid {} failed with {ret}", l.pid));
            return;
        }
        let (offset, len, how) = match name {
            // -EXDEV: generic_copy_file_checks() refused another file system's file before
            // any read (fs/read_write.c); anything else may have read the file.
            "copy_file_range" if ret == RET_EXDEV => return,
            "copy_file_range" => {
                let why = format!("copy_file_range by pid {} returned {ret}: a copy out of the file is not replayed (only one refused with EXDEV, to another file system, reads nothing)", l.pid);
                return self.refuse(why);
            }
            "read" => (p.pos, num(&p.args, "count").unwrap_or(0), ReadHow::default()),
            "pread64" => (num(&p.args, "pos").unwrap_or(0), num(&p.args, "count").unwrap_or(0), ReadHow::default()),
            "readv" | "preadv" | "preadv2" => {
                let at = match num(&p.args, "pos_l") {
                    Some(at) if name != "readv" && at != u64::MAX => at,
                    _ => p.pos,
                };
                let flags = num(&p.args, "flags").unwrap_or(0);
                // RWF_NOWAIT 0x8, RWF_DONTCACHE 0x80 (include/uapi/linux/fs.h).
                if flags & !0x88 != 0 {
                    self.refuse(format!(
                        "preadv2 by pid {} with flags {flags:#x}: only RWF_NOWAIT and RWF_DONTCACHE are modelled",
                        l.pid
                    ));
                    return;
                }
                // The tracepoint has the iovec's address, not its lengths: the bytes
                // returned are the bytes asked, except at the end of the file.
                if ret == 0 || at + ret as u64 >= size {
                    self.refuse(format!(
                        "{name} by pid {} at the end of the file: the length it asked for is not in the trace",
                        l.pid
                    ));
                    return;
                }
                (at, ret as u64, ReadHow { nowait: flags & 0x8 != 0, dontcache: flags & 0x80 != 0, direct: false })
            }
            "lseek" => {
                if ret >= 0 {
                    self.descs[d].pos = ret as u64;
                }
                return;
            }
            "fadvise64" => {
                let advice = match num(&p.args, "advice") {
                    Some(0) => Advice::Normal,
                    Some(1) => Advice::Random,
                    Some(2) => Advice::Sequential,
                    Some(3) => Advice::Willneed,
                    Some(4) => Advice::Dontneed,
                    Some(5) => Advice::Noreuse,
                    other => return self.refuse(format!("fadvise64 by pid {} with advice {other:?}", l.pid)),
                };
                match advice {
                    Advice::Random => self.descs[d].random = true,
                    Advice::Normal | Advice::Sequential => self.descs[d].random = false,
                    _ => {}
                }
                let (offset, len) = (num(&p.args, "offset").unwrap_or(0), num(&p.args, "len").unwrap_or(0));
                self.push(Op::Fadvise { fd, offset, len, advice });
                return;
            }
            "readahead" => {
                let (offset, len) = (num(&p.args, "offset").unwrap_or(0), num(&p.args, "count").unwrap_or(0));
                self.out.bytes_asked += len;
                self.push(Op::Readahead { fd, offset, len });
                return;
            }
            _ => return,
        };
        if name == "read" || name == "readv" {
            self.descs[d].pos = p.pos + ret as u64;
        }
        self.out.bytes_asked += len;
        if len == 0 {
            return;
        }
        let how = ReadHow { direct: desc.direct, ..how };
        if how == ReadHow::default() {
            self.push(Op::Read { fd, offset, len });
        } else {
            if how.nowait && self.out.unfollowable.is_none() {
                self.out.nowait_returned.push(radiff_model::NowaitReturned { op: self.out.ops.len(), bytes: len });
            }
            self.push(Op::ReadWith { fd, offset, len, how });
        }
    }

    /// A readahead or page-cache event: a folio added by any task; a readahead call of
    /// one of the program's tasks, on the descriptor of its read in flight.
    fn ra_event(&mut self, l: &Line, event: &str, fields: &str) {
        let Some(filter) = self.filter else { return };
        let Ok(Some(ev)) = ra::event_of(event, fields, filter) else { return };
        if !matches!(ev, ra::RaEvent::Folio { .. } | ra::RaEvent::Removed { .. }) && !self.tree.contains(&l.pid) {
            return;
        }
        let file = ev.file();
        // The read in flight's open file, else the mapping's of the task's fault.
        let read = self.pending.get(&l.pid).and_then(|p| p.desc).filter(|&d| self.descs[d].file == file);
        let fault = self.fault_desc.get(&l.pid).copied().filter(|&d| self.descs[d].file == file);
        let desc = read.or(fault).map(|d| &self.descs[d]);
        let fd = desc.map(|d| (pattern::fd_of(d.file, d.n), d.random));
        let mut overlapping: Vec<u32> = self
            .pending
            .iter()
            .filter(|(pid, p)| **pid != l.pid && p.desc.is_some_and(|d| self.descs[d].file == file))
            .map(|(pid, _)| *pid)
            .collect();
        overlapping.sort_unstable();
        self.out.ra.event(l, ev, fd, overlapping, read.is_none() && fault.is_some());
    }

    fn push(&mut self, op: Op) {
        if self.out.unfollowable.is_none() {
            self.out.ops.push(op);
        }
    }
}

/// The errno of a cross-file-system `copy_file_range`, as its exit tracepoint returns it.
const RET_EXDEV: i64 = -18;

/// An argument's value: `0x`-prefixed hexadecimal or decimal, as the tracepoints print them.
fn num(args: &BTreeMap<String, String>, key: &str) -> Option<u64> {
    let v = args.get(key)?.split_whitespace().next()?;
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// The quoted string of an argument (`0x7ffd1000 "/tmp/radiff-mnt/data"`).
fn quoted(v: &str) -> String {
    match (v.find('"'), v.rfind('"')) {
        (Some(a), Some(b)) if b > a => v[a + 1..b].to_string(),
        _ => String::new(),
    }
}

/// The model's ops of a scenario with its programs' recorded calls in place of each
/// `Op::Program`, and the address of each `Op::Mmap` in their order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spliced {
    pub ops: Vec<Op>,
    pub mmap_addrs: Vec<u64>,
    /// The programs' loads that faulted with requests in flight, by their index in `ops`.
    pub loads_in_flight: Vec<radiff_model::LoadInFlight>,
    /// The programs' RWF_NOWAIT reads' returns, by their index in `ops`.
    pub nowait_returned: Vec<radiff_model::NowaitReturned>,
    /// The index in `ops` of each op of the scenario's own (`moved[i]` is the i-th's).
    pub moved: Vec<usize>,
}

/// The model's ops of a scenario with its programs' recorded calls in place of each
/// `Op::Program`: each program's descriptors moved past those of the ops before it, file by
/// file, so each of its opens is a `struct file` of its own, and its mappings past the
/// numbers of the mappings before it. A program without a record stays an `Op::Program`
/// (the model makes no call for it). `own_addrs` are the addresses of the scenario's own
/// `Op::Mmap`s, in order (the guest measured them); a program's come from its record.
pub fn splice_programs(ops: &[Op], own_addrs: &[u64], programs: &[ProgramCalls]) -> Spliced {
    let mut next: BTreeMap<u32, u32> = BTreeMap::new();
    let mut next_map = 0u32;
    let mut own = own_addrs.iter();
    let mut out = Spliced { ops: Vec::with_capacity(ops.len()), ..Spliced::default() };
    let note = |next: &mut BTreeMap<u32, u32>, fd: u32| {
        let (file, n) = (pattern::file_of(fd), fd % pattern::FDS_PER_FILE);
        let e = next.entry(file).or_default();
        *e = (*e).max(n + 1);
    };
    for op in ops {
        let Op::Program { program } = *op else {
            out.moved.push(out.ops.len());
            if let Some(fd) = op.fd() {
                note(&mut next, fd);
            }
            if let Op::Mmap { map, .. } = *op {
                next_map = next_map.max(map + 1);
                out.mmap_addrs.extend(own.next());
            }
            out.ops.push(*op);
            continue;
        };
        out.moved.push(out.ops.len());
        let Some(calls) = programs.iter().find(|p| p.program == program) else {
            out.ops.push(*op);
            continue;
        };
        let (base, base_map) = (next.clone(), next_map);
        for (j, op) in calls.ops.iter().enumerate() {
            if let Some(l) = calls.loads_in_flight.iter().find(|l| l.op == j) {
                out.loads_in_flight.push(radiff_model::LoadInFlight { op: out.ops.len(), ..l.clone() });
            }
            if let Some(r) = calls.nowait_returned.iter().find(|r| r.op == j) {
                out.nowait_returned.push(radiff_model::NowaitReturned { op: out.ops.len(), ..*r });
            }
            let mut op = *op;
            if let Some(fd) = op.fd() {
                let (file, n) = (pattern::file_of(fd), fd % pattern::FDS_PER_FILE);
                let moved = pattern::fd_of(file, base.get(&file).copied().unwrap_or(0) + n);
                set_fd(&mut op, moved);
                note(&mut next, moved);
            }
            if let Op::Mmap { map, .. } = op {
                out.mmap_addrs.extend(calls.map_addrs.get(map as usize));
            }
            if let Some(map) = map_of(&mut op) {
                *map += base_map;
                next_map = next_map.max(*map + 1);
            }
            out.ops.push(op);
        }
    }
    out
}

/// The mapping an op is on.
fn map_of(op: &mut Op) -> Option<&mut u32> {
    match op {
        Op::Mmap { map, .. } | Op::Madvise { map, .. } | Op::Touch { map, .. } | Op::Munmap { map } => Some(map),
        _ => None,
    }
}

fn set_fd(op: &mut Op, to: u32) {
    match op {
        Op::Read { fd, .. }
        | Op::Fadvise { fd, .. }
        | Op::Readahead { fd, .. }
        | Op::Mmap { fd, .. }
        | Op::Splice { fd, .. }
        | Op::ReadWith { fd, .. } => *fd = to,
        Op::Madvise { .. } | Op::Touch { .. } | Op::Munmap { .. } | Op::FailAlloc { .. } | Op::Program { .. } => {}
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod map_tests;
