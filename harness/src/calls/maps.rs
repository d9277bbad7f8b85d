//! A program's mappings of the scenario's files: `mmap` of one of its descriptors is an
//! `Op::Mmap` (at the address it returned: [`super::ProgramCalls::map_addrs`]), `madvise`
//! and `munmap` of a mapping are `Op::Madvise` and `Op::Munmap`, and a page fault whose
//! address lies in a mapping is one `Op::Touch` of that page. Loads of pages already
//! mapped (by fault-around, or an earlier fault) fault nowhere and do no readahead: they
//! need no op.
//!
//! What a fault does depends on which reads had completed (a folio still locked by its
//! read is waited on, or skipped by fault-around), where the model's own touches wait for
//! the device to go idle (`Touches::WaitIdle`). The guest records the block requests'
//! issue and completion on the same clock as the faults: a fault that found none in flight
//! is exactly such a touch; one that found some takes them to the model
//! ([`super::ProgramCalls::loads_in_flight`]), which marks a race where they hold a folio
//! the fault looks at (`radiff_model::fault::LOAD_RACE`) and is exact where they do not.

use super::line::Line;
use super::{num, Follow, Pending};
use radiff_model::{pattern, MadvAdvice, Op};

const PAGE: u64 = 4096;

/// One live mapping of a scenario file in a process.
#[derive(Clone, Debug)]
pub(super) struct Mapping {
    map: u32,
    start: u64,
    len: u64,
    /// The open file it maps (`Follow::descs`): the `file_ra_state` its faults use.
    desc: usize,
}

impl Mapping {
    fn overlaps(&self, start: u64, len: u64) -> bool {
        start < self.start + self.len && self.start < start.saturating_add(len)
    }
}

/// `madvise(2)` advice (include/uapi/asm-generic/mman-common.h) as the model's, where it
/// has it.
fn advice(behavior: u64) -> Option<MadvAdvice> {
    Some(match behavior {
        0 => MadvAdvice::Normal,
        1 => MadvAdvice::Random,
        2 => MadvAdvice::Sequential,
        3 => MadvAdvice::Willneed,
        14 => MadvAdvice::Hugepage,
        15 => MadvAdvice::Nohugepage,
        22 => MadvAdvice::PopulateRead,
        25 => MadvAdvice::Collapse,
        _ => return None,
    })
}

impl Follow<'_> {
    /// `mmap` of descriptor `d` returned `ret` (the address).
    pub(super) fn mmapped(&mut self, l: &Line, p: &Pending, d: usize, ret: i64) {
        if ret < 0 {
            return self.refuse(format!("mmap by pid {} failed with {ret}", l.pid));
        }
        let (prot, flags) = (num(&p.args, "prot").unwrap_or(0), num(&p.args, "flags").unwrap_or(0));
        // PROT_WRITE 0x2 (include/uapi/asm-generic/mman-common.h).
        if prot & 0x2 != 0 {
            return self.refuse(format!("mmap by pid {} with PROT_WRITE: the model maps files for loads only", l.pid));
        }
        let len = num(&p.args, "len").unwrap_or(0).div_ceil(PAGE) * PAGE;
        let offset = num(&p.args, "off").unwrap_or(0);
        if self.maps.get(&l.tgid).is_some_and(|v| v.iter().any(|m| m.overlaps(ret as u64, len))) {
            return self.refuse(format!(
                "mmap by pid {} at {ret:#x} over a mapping of the file (MAP_FIXED): not modelled",
                l.pid
            ));
        }
        let desc = &self.descs[d];
        let fd = pattern::fd_of(desc.file, desc.n);
        let map = self.out.map_addrs.len() as u32;
        self.out.map_addrs.push(ret as u64);
        self.maps.entry(l.tgid).or_default().push(Mapping { map, start: ret as u64, len, desc: d });
        // MAP_TYPE 0x0f holds MAP_PRIVATE 0x02; PROT_EXEC 0x4; MAP_POPULATE 0x8000.
        let shared = flags & 0x0f != 0x02;
        let (exec, populate) = (prot & 0x4 != 0, flags & 0x8000 != 0);
        if populate {
            self.check_idle(l, "an mmap with MAP_POPULATE");
        }
        self.push(Op::Mmap { map, fd, offset, len, shared, exec, populate });
    }

    /// A `munmap`, `madvise`, `mprotect`, `mremap` or an `mmap` of something else returned
    /// `ret`: those of a range of a mapping of the scenario's files are the model's, or
    /// refused.
    pub(super) fn on_mappings(&mut self, l: &Line, p: &Pending, ret: i64) {
        let (start, len) = match p.name.as_str() {
            // Another mapping put over one of the file's (MAP_FIXED) replaces that part.
            "mmap" if ret >= 0 => (Some(ret as u64), num(&p.args, "len")),
            "mmap" => return,
            "munmap" => (num(&p.args, "addr"), num(&p.args, "len")),
            "madvise" | "mprotect" => (num(&p.args, "start"), num(&p.args, "len_in").or(num(&p.args, "len"))),
            _ => (num(&p.args, "addr"), num(&p.args, "old_len")),
        };
        let (Some(start), Some(len)) = (start, len) else { return };
        let len = len.div_ceil(PAGE) * PAGE;
        let Some(maps) = self.maps.get(&l.tgid) else { return };
        let Some(i) = maps.iter().position(|m| m.overlaps(start, len)) else { return };
        let m = maps[i].clone();
        let name = p.name.as_str();
        *self.out.calls.entry(name.to_string()).or_default() += 1;
        if ret < 0 {
            return self.refuse(format!("{name} by pid {} of a mapping of the file failed with {ret}", l.pid));
        }
        let inside = start >= m.start && start + len <= m.start + m.len;
        match name {
            "munmap" if start <= m.start && start + len >= m.start + m.len => {
                self.maps.get_mut(&l.tgid).map(|v| v.remove(i));
                self.push(Op::Munmap { map: m.map });
            }
            "madvise" if inside => {
                let behavior = num(&p.args, "behavior").unwrap_or(u64::MAX);
                let Some(advice) = advice(behavior) else {
                    return self.refuse(format!(
                        "madvise by pid {} with advice {behavior} on a mapping of the file: not modelled",
                        l.pid
                    ));
                };
                if matches!(advice, MadvAdvice::PopulateRead | MadvAdvice::Collapse) {
                    self.check_idle(l, &format!("madvise {advice:?}"));
                }
                self.push(Op::Madvise { map: m.map, offset: start - m.start, len, advice });
            }
            _ => self.refuse(format!(
                "{name} by pid {} of {:#x}+{len:#x}, across or part of a mapping of the file at {:#x}+{:#x}: not modelled",
                l.pid, start, m.start, m.len
            )),
        }
    }

    /// A page fault by a task of the program at `address`: a touch of that page where it
    /// lies in one of the process's mappings of the scenario's files.
    pub(super) fn fault(&mut self, l: &Line, address: u64, error_code: u64) {
        let Some(m) = self.maps.get(&l.tgid).and_then(|v| v.iter().find(|m| m.overlaps(address, 1))).cloned() else {
            return;
        };
        // Its readahead, until the task's next call, is on the mapping's open file.
        self.fault_desc.insert(l.pid, m.desc);
        *self.out.calls.entry("page fault".to_string()).or_default() += 1;
        // X86_PF_PROT 0x1 (a present page), X86_PF_WRITE 0x2 (arch/x86/include/asm/trap_pf.h).
        if error_code & 0x3 != 0 {
            return self.refuse(format!(
                "a page fault by pid {} at {address:#x} with error code {error_code:#x} (a write, or on a present page): the model's touches are loads of pages not mapped",
                l.pid
            ));
        }
        if let Some(other) = self.faulted_by.filter(|&pid| pid != l.pid) {
            return self.refuse(format!(
                "a page fault by pid {} at {address:#x} after pid {other}'s: two tasks' loads on the mappings may overlap (a fault's end is not traced)",
                l.pid
            ));
        }
        if let Some((other, p)) = self.pending.iter().find(|(pid, p)| **pid != l.pid && p.desc.is_some()) {
            let why = format!(
                "a page fault by pid {} at {address:#x} while pid {other}'s {} on the file had not returned: two tasks' calls overlapping on the scenario's files",
                l.pid, p.name
            );
            return self.refuse(why);
        }
        self.faulted_by = Some(l.pid);
        self.note_in_flight(l);
        self.push(Op::Touch { map: m.map, offset: (address - m.start) / PAGE * PAGE });
    }

    /// The requests in flight as `l` began (first sector, sectors), sorted: those issued
    /// and not completed, and one completed at its time on another CPU (the clock cannot
    /// order the two).
    fn in_flight(&self, l: &Line) -> Vec<(u64, u64)> {
        let mut reqs: Vec<(u64, u64)> = self.inflight.iter().map(|((_, sector), n)| (*sector, *n)).collect();
        if let Some(&(cpu, micros, sector, n)) = self.last_completion.as_ref() {
            if cpu != l.cpu && micros == l.micros {
                reqs.push((sector, n));
            }
        }
        reqs.sort_unstable();
        reqs
    }

    /// A fault's load: the requests it found in flight go with its touch to the model.
    fn note_in_flight(&mut self, l: &Line) {
        let requests = self.in_flight(l);
        if !requests.is_empty() && self.out.unfollowable.is_none() {
            // One completed at the fault's time on another CPU may have completed after it began.
            let completed_after = match self.last_completion {
                Some((cpu, micros, s, n)) if cpu != l.cpu && micros == l.micros => vec![(s, n)],
                _ => Vec::new(),
            };
            let op = self.out.ops.len();
            self.out.loads_in_flight.push(radiff_model::LoadInFlight { op, requests, completed_after });
            self.faulting = Some(l.pid);
        }
    }

    /// A read completed: one the last fault found in flight, before the faulting task's
    /// next line, may have completed while the fault ran.
    pub(super) fn completed_after_fault(&mut self, sector: u64, sectors: u64) {
        if self.faulting.is_none() {
            return;
        }
        let Some(last) = self.out.loads_in_flight.last_mut() else { return };
        if last.requests.contains(&(sector, sectors)) && !last.completed_after.contains(&(sector, sectors)) {
            last.completed_after.push((sector, sectors));
        }
    }

    /// Notes the first populating call that began with block requests in flight.
    fn check_idle(&mut self, l: &Line, what: &str) {
        let reqs = self.in_flight(l);
        if reqs.is_empty() || self.out.raced.is_some() || self.out.unfollowable.is_some() {
            return;
        }
        let said: Vec<String> = reqs.iter().map(|(s, n)| format!("sector {s} + {n}")).collect();
        self.out.raced = Some(format!(
            "its reads raced: {what} by pid {} began with {} block request(s) in flight ({}): whether it met a folio still locked by its read is up to the device",
            l.pid,
            reqs.len(),
            said.join(", ")
        ));
    }

    /// The first line of `l.pid`, a new process forked by thread group `parent` (a new
    /// thread shares its parent's address space): where the parent had live mappings, the
    /// child's copy of them is another address space, with page tables of its own, which
    /// the model does not have.
    pub(super) fn forked_with_mappings(&mut self, l: &Line, parent: u32) {
        if self.maps.get(&parent).is_some_and(|v| !v.is_empty()) {
            self.refuse(format!(
                "a fork by pid {parent} with a mapping of the file: the child's copy (pid {}) is an address space the model does not have",
                l.pid
            ));
        }
    }

    /// A process's end (the last task of its thread group) or exec: its mappings go
    /// (exit_mmap()), as `munmap`s.
    pub(super) fn unmap_process(&mut self, tgid: u32) {
        let left: Vec<u32> = self.maps.remove(&tgid).unwrap_or_default().into_iter().map(|m| m.map).collect();
        for map in left {
            self.push(Op::Munmap { map });
        }
    }

    /// The program's end: what its processes left mapped goes, as `munmap`s, so that what
    /// comes after sees the folios unmapped.
    pub(super) fn unmap_at_exit(&mut self) {
        let mut left: Vec<u32> = self.maps.drain().flat_map(|(_, v)| v.into_iter().map(|m| m.map)).collect();
        left.sort_unstable();
        for map in left {
            self.push(Op::Munmap { map });
        }
    }
}
