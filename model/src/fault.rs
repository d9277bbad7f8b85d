//! The page-fault path of Linux 7.3.4 for a read fault on a file mapping: what a load from
//! an mmap()ed page that has no PTE does to readahead, the page cache and the page tables.
//!
//! | kernel file | ported here |
//! |---|---|
//! | arch/x86/mm/fault.c | `do_user_addr_fault()`: the per-VMA-lock try, then the mmap_lock tries, `FAULT_FLAG_TRIED` |
//! | mm/memory.c | `do_read_fault()`, `should_fault_around()`, `do_fault_around()`, `finish_fault()`, `do_set_pmd()`, `set_pte_range()` |
//! | mm/filemap.c | `filemap_fault()`, `do_sync_mmap_readahead()`, `do_async_mmap_readahead()`, `lock_folio_maybe_drop_mmap()`, `filemap_map_pages()`, `next_uptodate_folio()`, `filemap_map_pmd()`, `filemap_map_folio_range()`, `filemap_map_order0_folio()` |
//! | mm/internal.h | `maybe_unlock_mmap_for_io()`, `folio_within_vma()` |
//! | mm/madvise.c, mm/khugepaged.c | `madvise_update_vma()`'s flags (`madvise_vma_behavior()`, `hugepage_madvise()`), `madvise_willneed()` (MADV_COLLAPSE: [`crate::collapse`]) |
//!
//! What the trace shows of it: every `filemap_fault()` call emits `mm_filemap_fault`
//! (a [`Trigger::Fault`] window: the read-around or `VM_HUGEPAGE` window it submits, and a
//! folio it creates and reads itself, belong to it); every `filemap_map_pages()` that found
//! an uptodate folio and mapped no PMD emits `mm_filemap_map_pages` after mapping (a
//! [`Trigger::FaultAround`] window, empty); `page_cache_sync_ra()` and
//! `page_cache_async_ra()` open their own windows as on the read path.
//!
//! The radiff kernels' config (`.config` of the base build): CONFIG_PER_VMA_LOCK=y (the
//! first try of a user fault runs under the VMA lock), CONFIG_TRANSPARENT_HUGEPAGE=y, no
//! CONFIG_READ_ONLY_THP_FOR_FS, no CONFIG_USERFAULTFD, no CONFIG_NUMA, no DAX. Loads only:
//! no write faults, no COW; `PROT_READ`, or `PROT_READ | PROT_EXEC` (`VM_EXEC`) when the
//! scenario asks.
//!
//! The THP `enabled` mode ([`crate::ThpMode`]) is read nowhere on this path in 7.3.4:
//! `__handle_mm_fault()` may call `create_huge_pmd()`, but for a file VMA that is
//! `->huge_fault`, which XFS answers with VM_FAULT_FALLBACK unless DAX (ext4 and f2fs have
//! none); `do_set_pmd()` asks `vma_thp_disabled(vma, vm_flags, forced_collapse = true)`,
//! which reads `VM_NOHUGEPAGE` and the process's MMF_DISABLE_THP_* flags only;
//! `do_sync_mmap_readahead()` tests `VM_HUGEPAGE` alone; `hugepage_madvise()` sets the flag
//! whatever the mode. So the mode changes no window, folio or request.
//!
//! Assumptions (beyond [`crate::ModelConfig`]):
//! * Addresses: a mapping's virtual address is [`crate::VmSettings::mmap_addrs`] when the
//!   guest measured it, else one congruent to its file offset modulo 2 MiB, which is what
//!   `thp_get_unmapped_area()` (XFS's and ext4's `->get_unmapped_area`) returns for a
//!   mapping that spans an aligned 2 MiB of the file; smaller mappings, and every f2fs
//!   mapping, get an ASLR-randomised address from the kernel, which only a measurement gives.
//! * I/O completion: as [`crate::IoCompletion`] says; in addition, a fault that sleeps on a
//!   folio locked by its read (`lock_folio_maybe_drop_mmap()`, `filemap_read_folio()`)
//!   wakes when every read issued before it has completed (`BeforeNextOp`; the emulated
//!   device completes one reader's requests in order), or when that folio's has
//!   (`WhenWaited`). A folio under read I/O is locked and not uptodate, and only then.
//! * Nothing else runs: `lock_vma_under_rcu()` always succeeds, no signal is pending, no
//!   folio is `workingset` (nothing is reclaimed), no hwpoison, page tables and folios are
//!   always allocated.

use std::collections::HashMap;

use crate::config::IoCompletion;
use crate::coverage::cover;
use crate::model::{Model, Recorder, BLOCK_SIZE};
use crate::pagecache::FolioRef;
use crate::pattern::{Advice, MadvAdvice};
use crate::readahead::ReadaheadControl;
use crate::trace::{Trigger, PAGE_SIZE, SECTOR_SIZE};

/// The coverage id that marks a fault that sleeps on its folio's read while another
/// request of the reads in flight holds a folio its fault-around then looks at: the fault
/// wakes when its own request completes, and whether the others have is up to the device
/// (measured: two shared mappings of an XFS file, the first touched at random, the second
/// in order; the kernel's fault-around skipped such a folio at a different fault each run,
/// in 5 runs of 5, with one vCPU as with two). The model completes them all, so no trial
/// checks such a scenario exactly.
pub const FAULT_RACE: &str = "fault: woke on one request with others in flight: the kernel races";

/// The coverage id that marks a program's load (an `Op::Touch` the guest recorded as a
/// fault) whose fault the recorded block requests do not settle: a read of a folio the
/// fault looks at (its own or one fault-around may map) completed between the fault's
/// entry and the task's next traced event, so whether the fault met it locked is up to
/// the device; or the model had mapped a folio the kernel still read (they already part).
/// See [`crate::VmSettings::loads_in_flight`].
pub const LOAD_RACE: &str = "fault: a program's load met a read in flight on a folio it looks at: the kernel races";

/// `MMAP_LOTSAMISS` (mm/filemap.c).
pub const MMAP_LOTSAMISS: u64 = 100;
/// `PTRS_PER_PTE` on x86_64.
pub const PTRS_PER_PTE: u64 = 512;
/// `HPAGE_PMD_ORDER` on x86_64 (`get_order(SZ_2M)` too).
pub const HPAGE_PMD_ORDER: u32 = 9;
const HPAGE_PMD_NR: u64 = 1 << HPAGE_PMD_ORDER;

/// `vm_flags` bits the fault path reads.
pub const VM_SHARED: u32 = 1 << 0;
pub const VM_SEQ_READ: u32 = 1 << 1;
pub const VM_RAND_READ: u32 = 1 << 2;
pub const VM_HUGEPAGE: u32 = 1 << 3;
pub const VM_NOHUGEPAGE: u32 = 1 << 4;
/// VM_EXEC: the mapping is `PROT_EXEC` (`mmap: {exec: true}`).
pub const VM_EXEC: u32 = 1 << 5;

/// `vm_fault_t` bits.
pub const VM_FAULT_OOM: u32 = 1 << 0;
pub const VM_FAULT_SIGBUS: u32 = 1 << 1;
pub const VM_FAULT_MAJOR: u32 = 1 << 2;
pub const VM_FAULT_NOPAGE: u32 = 1 << 8;
pub const VM_FAULT_LOCKED: u32 = 1 << 9;
pub const VM_FAULT_RETRY: u32 = 1 << 10;
pub const VM_FAULT_FALLBACK: u32 = 1 << 11;
const VM_FAULT_ERROR: u32 = VM_FAULT_OOM | VM_FAULT_SIGBUS;

/// Virtual page number the model gives the n-th mapping when the guest did not measure
/// it: n + 1 times 512 GiB, plus the file offset modulo 2 MiB (see the module's assumptions).
const ASSUMED_MMAP_SLOT: u64 = 1 << 27;

/// One VMA of a mapping: pages `[start, end)` of the mapping (page 0 = the mapping's first
/// page), with its `vm_flags`. A mapping's VMAs cover it; madvise splits and merges them
/// as `madvise_update_vma()` does (`vma_modify_flags()` merges neighbours with equal flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub flags: u32,
}

/// A PMD entry of a mapping's page tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pmd {
    /// Points to a page table (`pmd_install()`).
    Table,
    /// Maps a PMD-sized folio (`do_set_pmd()`).
    Huge,
}

/// One `mmap()` of a file: its VMAs and page tables.
#[derive(Clone, Debug)]
pub struct Mmap {
    /// The fd it was made through: `vma->vm_file`, whose `f_ra` the fault path uses.
    pub fd: usize,
    /// File page of the mapping's first page (`vm_pgoff` of the whole mapping).
    pub pgoff: u64,
    pub pages: u64,
    /// Virtual page number of the first page (`vm_start >> PAGE_SHIFT`).
    pub vstart: u64,
    pub vmas: Vec<Vma>,
    /// Per page of the mapping: mapped (a PTE, or a PMD that maps it).
    pub(crate) ptes: Vec<bool>,
    /// PMD entries that are not none, by virtual PMD number (`vpn >> 9`).
    pub(crate) pmds: HashMap<u64, Pmd>,
}

impl Mmap {
    pub(crate) fn vma_of(&self, page: u64) -> Vma {
        *self.vmas.iter().find(|v| v.start <= page && page < v.end).expect("a page of the mapping without a VMA")
    }

    /// Whether virtual page `vpn` has a PTE (or a PMD) mapping it.
    fn pte_present(&self, vpn: u64) -> bool {
        vpn.checked_sub(self.vstart).and_then(|p| self.ptes.get(p as usize).copied()).unwrap_or(false)
    }

    fn set_pte(&mut self, vpn: u64) {
        let p = (vpn - self.vstart) as usize;
        self.ptes[p] = true;
    }

    pub(crate) fn pmd(&self, vpn: u64) -> Option<Pmd> {
        self.pmds.get(&(vpn / PTRS_PER_PTE)).copied()
    }

    /// Whether page `page` of the mapping is mapped: a load of it takes no fault.
    pub fn mapped(&self, page: u64) -> bool {
        self.ptes.get(page as usize).copied().unwrap_or(false)
    }

    /// `madvise_update_vma()`, mm/madvise.c, over the VMAs of pages `[start, end)`: sets
    /// `flags` to `f(flags)`, splitting and merging VMAs (`vma_modify_flags()`).
    fn update_flags(&mut self, start: u64, end: u64, f: impl Fn(u32) -> u32) {
        let mut out: Vec<Vma> = Vec::new();
        for v in &self.vmas {
            let pieces = [(v.start, v.end.min(start)), (v.start.max(start), v.end.min(end)), (v.start.max(end), v.end)];
            for (i, (s, e)) in pieces.into_iter().enumerate() {
                if s < e {
                    let flags = if i == 1 { f(v.flags) } else { v.flags };
                    match out.last_mut() {
                        Some(last) if last.end == s && last.flags == flags => last.end = e,
                        _ => out.push(Vma { start: s, end: e, flags }),
                    }
                }
            }
        }
        self.vmas = out;
    }
}

/// `struct vm_fault`, the parts the ported code reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VmFault {
    pub(crate) map: usize,
    pub(crate) vma: Vma,
    /// `vmf->pgoff`: the file page.
    pub(crate) pgoff: u64,
    /// `vmf->address >> PAGE_SHIFT`.
    pub(crate) vpn: u64,
    /// FAULT_FLAG_TRIED.
    pub(crate) tried: bool,
    /// FAULT_FLAG_VMA_LOCK.
    pub(crate) vma_lock: bool,
    /// `vmf->page`'s folio after `->fault` returned VM_FAULT_LOCKED.
    pub(crate) folio: Option<FolioRef>,
}

fn align_down(x: u64, a: u64) -> u64 {
    x / a * a
}

fn round_down(x: u64, a: u64) -> u64 {
    x / a * a
}

fn round_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// `exec_folio_order()`, include/linux/pgtable.h (7.3.4): "#ifndef exec_folio_order ...
/// return 0;", which x86 does not override (only arm64 does).
pub fn exec_folio_order() -> u32 {
    0
}

impl Model<'_> {
    /// `folio_mapped()`: a page of the folio has a PTE (or PMD) in some mapping.
    pub(crate) fn folio_mapped(&self, folio: &FolioRef) -> bool {
        self.mm.iter().flatten().any(|a| {
            let (s, e) = (folio.index.max(a.pgoff), folio.next_index().min(a.pgoff + a.pages));
            (s..e).any(|p| a.mapped(p - a.pgoff))
        })
    }

    fn vm_start(&self, vmf: &VmFault) -> u64 {
        self.mm[vmf.map].as_ref().unwrap().vstart + vmf.vma.start
    }

    fn vm_end(&self, vmf: &VmFault) -> u64 {
        self.mm[vmf.map].as_ref().unwrap().vstart + vmf.vma.end
    }

    /// `vma_start_pgoff()`.
    fn vma_start_pgoff(&self, vmf: &VmFault) -> u64 {
        self.mm[vmf.map].as_ref().unwrap().pgoff + vmf.vma.start
    }

    fn area(&mut self, vmf: &VmFault) -> &mut Mmap {
        self.mm[vmf.map].as_mut().unwrap()
    }

    /// `mmap(NULL, len, PROT_READ (| PROT_EXEC when `exec`), MAP_SHARED or MAP_PRIVATE, fd,
    /// offset)` as mapping `map`: one VMA, no page tables. Nothing is read here
    /// (MAP_POPULATE is [`Model::mm_populate`], after).
    pub(crate) fn do_mmap(&mut self, map: usize, fd: usize, offset: u64, len: u64, shared: bool, exec: bool) {
        let pgoff = offset / PAGE_SIZE;
        let pages = len.div_ceil(PAGE_SIZE);
        let n = self.nr_mmaps;
        self.nr_mmaps += 1;
        let vstart = match self.input.vm.mmap_addrs.get(n) {
            Some(&addr) => addr / PAGE_SIZE,
            None => (n as u64 + 1) * ASSUMED_MMAP_SLOT + pgoff % HPAGE_PMD_NR,
        };
        if self.mm.len() <= map {
            self.mm.resize(map + 1, None);
        }
        let flags = if shared { VM_SHARED } else { 0 } | if exec { VM_EXEC } else { 0 };
        self.mm[map] = Some(Mmap {
            fd,
            pgoff,
            pages,
            vstart,
            vmas: vec![Vma { start: 0, end: pages, flags }],
            ptes: vec![false; pages as usize],
            pmds: HashMap::new(),
        });
    }

    /// `munmap()` of the whole mapping: its VMAs and page tables go; the page cache stays.
    pub(crate) fn do_munmap(&mut self, map: usize) {
        if let Some(slot) = self.mm.get_mut(map) {
            *slot = None;
        }
    }

    /// `madvise(addr, len, advice)` on pages of mapping `map` (mm/madvise.c): the flags as
    /// `madvise_vma_behavior()` and `hugepage_madvise()` (mm/khugepaged.c) set them, on
    /// each VMA of the range (split at the range's ends, merged with neighbours of equal
    /// flags); MADV_WILLNEED is `madvise_willneed()` on each VMA of the range:
    /// `vfs_fadvise(file, offset, end - start, POSIX_FADV_WILLNEED)` with the VMA's part of
    /// the range.
    pub(crate) fn do_madvise(&mut self, map: usize, offset: u64, len: u64, advice: MadvAdvice) {
        let Some(area) = self.mm.get_mut(map).and_then(Option::as_mut) else { return };
        let start = offset / PAGE_SIZE;
        let end = (offset + len).div_ceil(PAGE_SIZE).min(area.pages);
        let split = area.vmas.iter().any(|v| (v.start < start && start < v.end) || (v.start < end && end < v.end));
        // Only the advice that changes VMA flags splits a VMA (madvise_update_vma());
        // WILLNEED reads and populate faults pages in, neither splits.
        if split && !matches!(advice, MadvAdvice::Willneed | MadvAdvice::PopulateRead | MadvAdvice::Collapse) {
            cover!(self.rec, "madvise_update_vma: VMA split");
        }
        let f = match advice {
            MadvAdvice::PopulateRead => {
                // madvise_do_behavior() runs madvise_populate() between blk_start_plug() and
                // blk_finish_plug(): readahead's requests wait in that plug until a fault
                // sleeps or the call ends. (MADV_WILLNEED runs under the same plug: below.)
                cover!(self.rec, "madvise_populate: MADV_POPULATE_READ");
                self.blk_start_plug();
                self.madvise_populate(map, start, end);
                self.blk_finish_plug();
                return;
            }
            MadvAdvice::Willneed => {
                let (fd, pgoff) = (area.fd, area.pgoff);
                let pieces: Vec<(u64, u64)> = area
                    .vmas
                    .iter()
                    .filter(|v| v.start < end && start < v.end)
                    .map(|v| (v.start.max(start), v.end.min(end)))
                    .collect();
                // madvise_do_behavior()'s plug holds madvise_walk_vmas() too: every
                // chunk's read_pages() plug nests in it, so the requests of all chunks wait
                // in one plug (merging across chunk ends, flushed at BLK_MAX_REQUEST_COUNT
                // or a large request) until the call ends.
                self.blk_start_plug();
                for (s, e) in pieces {
                    self.madvise_willneed(fd, pgoff, s, e);
                }
                self.blk_finish_plug();
                return;
            }
            MadvAdvice::Collapse => {
                // The same plug holds madvise_collapse()'s readahead: its requests wait in
                // it until collapse_file() sleeps on a folio they read (crate::collapse).
                self.blk_start_plug();
                self.madvise_collapse_range(map, start, end);
                self.blk_finish_plug();
                return;
            }
            _ => madvise_vma_behavior(&mut self.rec, advice),
        };
        area.update_flags(start, end, f);
    }

    /// `madvise_willneed()`, mm/madvise.c, on pages `[start, end)` of one VMA of a mapping
    /// of `fd` from file page `pgoff`: "vfs_fadvise(file, offset, end - start,
    /// POSIX_FADV_WILLNEED);".
    fn madvise_willneed(&mut self, fd: usize, pgoff: u64, start: u64, end: u64) {
        cover!(self.rec, "madvise_willneed: vfs_fadvise(POSIX_FADV_WILLNEED)");
        self.generic_fadvise(fd, (pgoff + start) * PAGE_SIZE, (end - start) * PAGE_SIZE, Advice::Willneed);
    }

    /// Before the load of op `self.op` (at `offset` of mapping `map`) faults: the folios
    /// of the reads the guest recorded in flight at the fault's entry are in flight again
    /// (locked, not uptodate), where the model had completed every read after the op
    /// before; the fault then waits for its own, and fault-around skips the others, as the
    /// kernel's did. Marks [`LOAD_RACE`] where the record does not settle it: a read of a
    /// folio the fault looks at (taken wide: every folio with a page within
    /// `fault_around_pages` of the fault's, do_fault_around()'s block being aligned in
    /// virtual pages) that completed before the task's next event, other than the reads
    /// of the faulting folio itself (the fault waits for those); or a folio of those reads
    /// that the model has mapped.
    pub(crate) fn reads_in_flight_at_load(&mut self, map: usize, offset: u64) {
        let Some(at) = self.input.vm.loads_in_flight.iter().find(|l| l.op == self.op).cloned() else { return };
        let Some(area) = self.mm.get(map).and_then(Option::as_ref) else { return };
        let page = offset / PAGE_SIZE;
        if page >= area.pages || area.mapped(page) {
            return;
        }
        let pgoff = area.pgoff + page;
        let folio_of = |m: &Self, p: u64| m.cache.folio_at(p).map_or((p, 1), |f| (f.index, 1u64 << f.order));
        let pages_of = |m: &Self, reqs: &[(u64, u64)]| -> Vec<u64> {
            reqs.iter().flat_map(|&(s, n)| m.layout.pages_on(s, n)).collect()
        };
        let mut heads: Vec<u64> =
            pages_of(self, &at.requests).into_iter().filter_map(|p| self.cache.folio_at(p)).map(|f| f.index).collect();
        heads.dedup();
        for head in heads {
            let Some(f) = self.cache.folio_at(head) else { continue };
            if self.folio_mapped(&f) {
                cover!(
                    self.rec,
                    "fault: a program's load met a read in flight on a folio it looks at: the kernel races"
                );
            } else if f.uptodate {
                self.cache.clear_uptodate(head);
                self.inflight.push(head);
            }
        }
        let (own, own_pages) = folio_of(self, pgoff);
        let own_range = own..own + own_pages;
        // The reads of the faulting folio: it waits for them (one bio's end_io unlocks all of
        // its folios).
        let own_reads: Vec<(u64, u64)> = at
            .requests
            .iter()
            .copied()
            .filter(|&(s, n)| self.layout.pages_on(s, n).iter().any(|p| own_range.contains(p)))
            .collect();
        let after: Vec<(u64, u64)> = at.completed_after.iter().copied().filter(|r| !own_reads.contains(r)).collect();
        let settled_late = pages_of(self, &after);
        let nr = self.fault_around_pages();
        let mut index = pgoff.saturating_sub(nr);
        while index < pgoff + nr {
            let (start, pages) = folio_of(self, index);
            if settled_late.iter().any(|p| (start..start + pages).contains(p)) {
                cover!(
                    self.rec,
                    "fault: a program's load met a read in flight on a folio it looks at: the kernel races"
                );
                return;
            }
            index = start + pages;
        }
    }

    /// `do_user_addr_fault()`, arch/x86/mm/fault.c: one load from page `offset / 4096` of
    /// mapping `map` (a page with a PTE takes no fault, so no call). The first try runs
    /// under the VMA lock ("lock_vma_under_rcu()", CONFIG_PER_VMA_LOCK=y); on
    /// VM_FAULT_RETRY it retries under the mmap_lock, with FAULT_FLAG_TRIED only if the
    /// first try was a major fault ("if (fault & VM_FAULT_MAJOR) flags |=
    /// FAULT_FLAG_TRIED;"), and every later retry with FAULT_FLAG_TRIED.
    pub(crate) fn do_user_addr_fault(&mut self, map: usize, offset: u64) {
        let Some(area) = self.mm.get(map).and_then(Option::as_ref) else { return };
        let page = offset / PAGE_SIZE;
        if page >= area.pages {
            return; // SIGSEGV: the harness refuses such touches
        }
        if area.mapped(page) {
            cover!(self.rec, "do_user_addr_fault: page mapped: no fault");
            return;
        }
        let mut vmf = VmFault {
            map,
            vma: area.vma_of(page),
            pgoff: area.pgoff + page,
            vpn: area.vstart + page,
            tried: false,
            vma_lock: true,
            folio: None,
        };
        let fault = self.handle_mm_fault(&mut vmf);
        if fault & VM_FAULT_RETRY == 0 {
            cover!(self.rec, "do_user_addr_fault: VMA lock: done");
            return;
        }
        if fault & VM_FAULT_MAJOR != 0 {
            cover!(self.rec, "do_user_addr_fault: VMA lock: VM_FAULT_RETRY, major: FAULT_FLAG_TRIED");
            vmf.tried = true;
        } else {
            cover!(self.rec, "do_user_addr_fault: VMA lock: VM_FAULT_RETRY, minor");
        }
        vmf.vma_lock = false;
        loop {
            vmf.folio = None;
            let fault = self.handle_mm_fault(&mut vmf);
            if fault & VM_FAULT_RETRY == 0 {
                return;
            }
            cover!(self.rec, "do_user_addr_fault: mmap_lock: VM_FAULT_RETRY: FAULT_FLAG_TRIED");
            vmf.tried = true;
        }
    }

    /// `handle_mm_fault()` → `__handle_mm_fault()` → `handle_pte_fault()` → `do_fault()`
    /// for a read on a file VMA, mm/memory.c: a PMD that maps a folio, or a PTE that is
    /// there, ends the fault; `create_huge_pmd()` falls back for a file that is not DAX.
    pub(crate) fn handle_mm_fault(&mut self, vmf: &mut VmFault) -> u32 {
        let area = self.mm[vmf.map].as_ref().unwrap();
        if area.pmd(vmf.vpn) == Some(Pmd::Huge) || area.pte_present(vmf.vpn) {
            return 0;
        }
        self.do_read_fault(vmf)
    }

    /// `should_fault_around()`, mm/memory.c: "A single page implies no faulting 'around'
    /// at all." (`fault_around_pages > 1`; the file systems all have `->map_pages`, and
    /// there is no userfaultfd).
    fn should_fault_around(&mut self) -> bool {
        if self.fault_around_pages() > 1 {
            true
        } else {
            cover!(self.rec, "should_fault_around: fault_around_pages == 1");
            false
        }
    }

    /// `fault_around_pages`, mm/memory.c, from the debugfs value the guest read back.
    fn fault_around_pages(&self) -> u64 {
        (self.input.vm.fault_around_bytes / PAGE_SIZE).max(1)
    }

    /// `do_read_fault()`, mm/memory.c: fault-around first; `->fault` only if it did not
    /// map the page; then `finish_fault()`.
    fn do_read_fault(&mut self, vmf: &mut VmFault) -> u32 {
        if self.should_fault_around() {
            let ret = self.do_fault_around(vmf);
            if ret != 0 {
                cover!(self.rec, "do_read_fault: fault-around mapped the page");
                return ret;
            }
        }
        // vmf_can_call_fault(): the VMA has ->map_pages, so 0.
        let ret = self.filemap_fault(vmf);
        if ret & (VM_FAULT_ERROR | VM_FAULT_NOPAGE | VM_FAULT_RETRY) != 0 {
            return ret;
        }
        ret | self.finish_fault(vmf)
    }

    /// `do_fault_around()`, mm/memory.c: `->map_pages` over the `fault_around_pages`
    /// naturally aligned virtual pages around the fault, clamped to the VMA and the page table.
    fn do_fault_around(&mut self, vmf: &mut VmFault) -> u32 {
        let nr_pages = self.fault_around_pages();
        let pte_off = vmf.vpn % PTRS_PER_PTE;
        let vma_off = vmf.pgoff - self.vma_start_pgoff(vmf);
        let vma_pages = vmf.vma.end - vmf.vma.start;
        let aligned = align_down(pte_off, nr_pages);
        let vma_first = pte_off - pte_off.min(vma_off);
        let from_pte = aligned.max(vma_first);
        if vma_first > aligned {
            cover!(self.rec, "do_fault_around: from clamped to the VMA start");
        }
        let vma_last = pte_off + vma_pages - vma_off;
        let to_pte = (from_pte + nr_pages).min(PTRS_PER_PTE).min(vma_last) - 1;
        if vma_last < (from_pte + nr_pages).min(PTRS_PER_PTE) {
            cover!(self.rec, "do_fault_around: to clamped to the VMA end");
        } else if from_pte + nr_pages > PTRS_PER_PTE {
            cover!(self.rec, "do_fault_around: to clamped to the page table");
        }
        self.filemap_map_pages(vmf, vmf.pgoff + from_pte - pte_off, vmf.pgoff + to_pte - pte_off)
    }

    /// `next_uptodate_folio()`, mm/filemap.c: from `*xa_index` (the xa_state's index), the
    /// next folio in `[.., end_pgoff]` that is unlocked, uptodate and without PG_readahead,
    /// with the index the xa_state stands at (`start_pgoff` itself when that falls inside a
    /// large folio, else the folio's first page); `*xa_index` moves past it.
    fn next_uptodate_folio(&mut self, xa_index: &mut u64, end_pgoff: u64) -> Option<(FolioRef, u64)> {
        let max_idx = self.isize.div_ceil(PAGE_SIZE);
        let mut i = *xa_index;
        while i <= end_pgoff {
            let Some(folio) = self.cache.folio_at(i) else {
                i += 1;
                continue;
            };
            let at = i;
            i = folio.next_index();
            *xa_index = i;
            if !folio.uptodate {
                // folio_test_locked(): its read is in flight.
                cover!(self.rec, "next_uptodate_folio: folio locked: skip");
                continue;
            }
            if folio.readahead {
                cover!(self.rec, "next_uptodate_folio: PG_readahead: skip");
                continue;
            }
            if at >= max_idx {
                continue;
            }
            return Some((folio, at));
        }
        *xa_index = i;
        None
    }

    /// `filemap_map_pages()`, mm/filemap.c: map the uptodate folios of
    /// `[start_pgoff, end_pgoff]` (end clamped to the last page of the file); a PMD-sized
    /// folio first found may be mapped by a PMD instead. Emits `mm_filemap_map_pages`
    /// unless no folio was found or a PMD was mapped. Decrements `mmap_miss` for each folio
    /// that mapped the faulting page (first try, no VM_SEQ_READ).
    fn filemap_map_pages(&mut self, vmf: &mut VmFault, start_pgoff: u64, end_pgoff: u64) -> u32 {
        let file_end = self.isize.div_ceil(PAGE_SIZE).wrapping_sub(1);
        if end_pgoff > file_end {
            cover!(self.rec, "filemap_map_pages: end_pgoff clamped to file_end");
        }
        let end_pgoff = end_pgoff.min(file_end);
        let mut xas = start_pgoff;
        let Some((mut folio, mut xa_index)) = self.next_uptodate_folio(&mut xas, end_pgoff) else {
            cover!(self.rec, "filemap_map_pages: no uptodate folio: no event");
            return 0;
        };
        if file_end >= folio.next_index() && self.filemap_map_pmd(vmf, folio) {
            cover!(self.rec, "filemap_map_pages: PMD mapped: no event");
            return VM_FAULT_NOPAGE;
        }
        // "vmf->pte = pte_offset_map_lock(vma->vm_mm, vmf->pmd, addr, &vmf->ptl);", and
        // without a PTE the kernel unlocks and drops the folio and maps nothing. A
        // PMD-sized folio that ends past file_end skips filemap_map_pmd(), which is what
        // installs the preallocated page table; with the PMD still none (or huge) there is
        // no page table to map into: nothing is mapped, no event, and the fault goes on to
        // ->fault().
        if self.mm[vmf.map].as_ref().unwrap().pmd(vmf.vpn) != Some(Pmd::Table) {
            cover!(self.rec, "filemap_map_pages: no page table: no event");
            return 0;
        }
        let vma_start_pgoff = self.vma_start_pgoff(vmf);
        let mut addr = self.vm_start(vmf) + (start_pgoff - vma_start_pgoff);
        let mut last_pgoff = start_pgoff;
        let mut ret = 0;
        let fd = self.mm[vmf.map].as_ref().unwrap().fd;
        loop {
            addr += xa_index - last_pgoff;
            last_pgoff = xa_index;
            let end = folio.next_index() - 1;
            let nr_pages = end.min(end_pgoff) - xa_index + 1;
            let map_ret = if folio.order == 0 {
                self.filemap_map_order0_folio(vmf, addr)
            } else {
                self.filemap_map_folio_range(vmf, folio, xa_index - folio.index, addr, nr_pages, file_end)
            };
            ret |= map_ret;
            // "!folio_test_workingset(folio)": nothing is reclaimed, so never workingset.
            if map_ret & VM_FAULT_NOPAGE != 0 && !vmf.tried && vmf.vma.flags & (VM_SEQ_READ | VM_EXEC) == 0 {
                let ra = &mut self.files[fd].ra;
                if ra.mmap_miss > 0 {
                    cover!(self.rec, "filemap_map_pages: mmap_miss--");
                    ra.mmap_miss -= 1;
                }
            }
            match self.next_uptodate_folio(&mut xas, end_pgoff) {
                Some((f, i)) => (folio, xa_index) = (f, i),
                None => break,
            }
        }
        cover!(self.rec, "filemap_map_pages: mm_filemap_map_pages");
        self.rec.open_event(Trigger::FaultAround, start_pgoff, end_pgoff - start_pgoff + 1, self.op, fd as u32);
        ret
    }

    /// `filemap_map_pmd()`, mm/filemap.c: with no page table yet, a PMD-sized folio is
    /// mapped by `do_set_pmd()`; otherwise the preallocated page table is installed
    /// (`do_fault_around()` preallocated it). True when a PMD maps the range.
    fn filemap_map_pmd(&mut self, vmf: &mut VmFault, folio: FolioRef) -> bool {
        let pmd = self.mm[vmf.map].as_ref().unwrap().pmd(vmf.vpn);
        if pmd == Some(Pmd::Huge) {
            return true;
        }
        if pmd.is_none() && folio.order >= HPAGE_PMD_ORDER && self.do_set_pmd(vmf, folio) == 0 {
            cover!(self.rec, "filemap_map_pmd: do_set_pmd");
            return true;
        }
        let vpn = vmf.vpn;
        self.area(vmf).pmds.entry(vpn / PTRS_PER_PTE).or_insert(Pmd::Table);
        false
    }

    /// `do_set_pmd()`, mm/memory.c: map a PMD-order folio with one PMD entry, if THP is not
    /// disabled for the VMA (`vma_thp_disabled(..., forced_collapse = true)`: VM_NOHUGEPAGE),
    /// the VMA's start and file offset agree modulo 2 MiB and it holds the whole PMD
    /// (`thp_vma_suitable_order()`), and the PMD is still none.
    fn do_set_pmd(&mut self, vmf: &mut VmFault, folio: FolioRef) -> u32 {
        if vmf.vma.flags & VM_NOHUGEPAGE != 0 {
            cover!(self.rec, "do_set_pmd: VM_NOHUGEPAGE");
            return VM_FAULT_FALLBACK;
        }
        let (vm_start, vm_end) = (self.vm_start(vmf), self.vm_end(vmf));
        let haddr = align_down(vmf.vpn, HPAGE_PMD_NR);
        if (vm_start.wrapping_sub(self.vma_start_pgoff(vmf))) % HPAGE_PMD_NR != 0
            || haddr < vm_start
            || haddr + HPAGE_PMD_NR > vm_end
        {
            cover!(self.rec, "do_set_pmd: !thp_vma_suitable_order");
            return VM_FAULT_FALLBACK;
        }
        if folio.order != HPAGE_PMD_ORDER {
            cover!(self.rec, "do_set_pmd: folio not of PMD order");
            return VM_FAULT_FALLBACK;
        }
        let area = self.area(vmf);
        if area.pmd(haddr).is_some() {
            return VM_FAULT_FALLBACK;
        }
        area.pmds.insert(haddr / PTRS_PER_PTE, Pmd::Huge);
        for vpn in haddr..haddr + HPAGE_PMD_NR {
            area.set_pte(vpn);
        }
        cover!(self.rec, "do_set_pmd: PMD mapped");
        0
    }

    /// `filemap_map_folio_range()`, mm/filemap.c: map `nr_pages` pages of a large folio
    /// from its page `start` at virtual page `addr`, or the whole folio when it lies inside
    /// i_size, the VMA and one page table; pages with a PTE are skipped. VM_FAULT_NOPAGE
    /// when the faulting page got its PTE here.
    fn filemap_map_folio_range(
        &mut self,
        vmf: &mut VmFault,
        folio: FolioRef,
        start: u64,
        mut addr: u64,
        mut nr_pages: u64,
        file_end: u64,
    ) -> u32 {
        let addr0 = addr - start;
        if file_end >= folio.next_index()
            && self.folio_within_vma(vmf, folio)
            && addr0 / PTRS_PER_PTE == (addr0 + folio.nr_pages() - 1) / PTRS_PER_PTE
        {
            cover!(self.rec, "filemap_map_folio_range: the whole folio");
            addr = addr0;
            nr_pages = folio.nr_pages();
        } else {
            cover!(self.rec, "filemap_map_folio_range: part of the folio");
        }
        let mut ret = 0;
        let area = self.area(vmf);
        for vpn in addr..addr + nr_pages {
            if area.pte_present(vpn) {
                continue;
            }
            area.set_pte(vpn);
            if vpn == vmf.vpn {
                ret = VM_FAULT_NOPAGE;
            }
        }
        ret
    }

    /// `folio_within_vma()`, mm/internal.h: the folio's pages all fall inside the VMA.
    fn folio_within_vma(&self, vmf: &VmFault, folio: FolioRef) -> bool {
        let pgoff_vma_start = self.vma_start_pgoff(vmf);
        let vma_pglen = vmf.vma.end - vmf.vma.start;
        if folio.index < pgoff_vma_start || folio.index >= pgoff_vma_start + vma_pglen {
            return false;
        }
        let addr = self.vm_start(vmf) + (folio.index - pgoff_vma_start);
        self.vm_end(vmf) - addr >= folio.nr_pages()
    }

    /// `filemap_map_order0_folio()`, mm/filemap.c: one PTE, unless there is one.
    fn filemap_map_order0_folio(&mut self, vmf: &mut VmFault, addr: u64) -> u32 {
        let area = self.area(vmf);
        if area.pte_present(addr) {
            return 0;
        }
        area.set_pte(addr);
        if addr == vmf.vpn {
            VM_FAULT_NOPAGE
        } else {
            0
        }
    }

    /// `maybe_unlock_mmap_for_io()`, mm/internal.h: on a first try that may retry
    /// (FAULT_FLAG_ALLOW_RETRY without FAULT_FLAG_TRIED), pin the file and drop the fault
    /// lock (VMA lock or mmap_lock); the fault then ends in VM_FAULT_RETRY.
    fn maybe_unlock_mmap_for_io(&mut self, vmf: &VmFault, fpin: bool) -> bool {
        if fpin {
            return true;
        }
        if !vmf.tried {
            cover!(self.rec, "maybe_unlock_mmap_for_io: fault lock dropped");
            true
        } else {
            cover!(self.rec, "maybe_unlock_mmap_for_io: FAULT_FLAG_TRIED: lock kept");
            false
        }
    }

    /// A fault sleeps until the read of the folio at `head` completed: see the module's
    /// assumptions.
    pub(crate) fn fault_wait_locked(&mut self, head: u64) {
        // Sleeping flushes the task's plug (held only inside madvise(MADV_POPULATE_READ)).
        self.blk_flush_plug();
        match self.config.io_completion {
            IoCompletion::AtIssue => {}
            IoCompletion::BeforeNextOp => {
                if self.rec.covering() && self.woken_with_other_requests_in_flight(head) {
                    cover!(self.rec, "fault: woke on one request with others in flight: the kernel races");
                }
                // The model's choice: the device finished them all (see FAULT_RACE).
                self.complete_inflight()
            }
            IoCompletion::WhenWaited => {}
        }
        self.complete_read(head);
    }

    /// Whether a read in flight that the retry's fault-around would look at (a folio in the
    /// `fault_around_pages`-aligned block around `head`) is in a request the folio at `head`
    /// does not need: the fault wakes when `head`'s requests complete (all of them, for a
    /// folio several requests read), and the model then completes every read in flight,
    /// which the kernel has done only if the device finished the others first; a folio
    /// still under I/O is one fault-around skips.
    fn woken_with_other_requests_in_flight(&self, head: u64) -> bool {
        // The requests (start sector, sectors) that read some of the folio at `index`.
        let requests_of = |index: u64| -> Vec<(u64, u64)> {
            let pages = self.cache.folio_at(index).map_or(1, |f| 1u64 << f.order);
            let sectors: Vec<u64> = (index..index + pages)
                .filter_map(|i| self.layout.block(i * PAGE_SIZE / BLOCK_SIZE))
                .map(|b| b * BLOCK_SIZE / SECTOR_SIZE)
                .collect();
            // Reads in flight were issued by the current system call (each ends with every
            // read complete: Touches::WaitIdle), so by its windows.
            let mut found: Vec<(u64, u64)> = self.rec.windows[self.rec.op_first_window.min(self.rec.windows.len())..]
                .iter()
                .flat_map(|w| w.requests.iter())
                .filter(|r| sectors.iter().any(|s| (r.sector..r.sector + r.sectors).contains(s)))
                .map(|r| (r.sector, r.sectors))
                .collect();
            // Reads an earlier op issued that the guest recorded in flight at this load.
            if let Some(at) = self.input.vm.loads_in_flight.iter().find(|l| l.op == self.op) {
                found.extend(
                    at.requests.iter().filter(|&&(s, n)| sectors.iter().any(|x| (s..s + n).contains(x))).copied(),
                );
            }
            found.sort_unstable();
            found.dedup();
            found
        };
        let nr = self.fault_around_pages();
        let around = (head / nr * nr)..(head / nr * nr + nr);
        let mine = requests_of(head);
        self.inflight
            .iter()
            .any(|&f| f != head && around.contains(&f) && requests_of(f).iter().any(|r| !mine.contains(r)))
    }

    /// `lock_folio_maybe_drop_mmap()`, mm/filemap.c, on a folio under read I/O (locked):
    /// "*fpin = maybe_unlock_mmap_for_io(vmf, *fpin);", then sleep until its read
    /// completed. Returns fpin.
    fn lock_folio_maybe_drop_mmap(&mut self, vmf: &VmFault, folio: FolioRef, fpin: bool) -> bool {
        cover!(self.rec, "lock_folio_maybe_drop_mmap: folio locked: wait");
        let fpin = self.maybe_unlock_mmap_for_io(vmf, fpin);
        self.fault_wait_locked(folio.index);
        fpin
    }

    /// `do_sync_mmap_readahead()`, mm/filemap.c: the fault found no folio. VM_HUGEPAGE on a
    /// mapping with large folios reads PMD-sized folios (two unless VM_RAND_READ);
    /// otherwise VM_RAND_READ or no readahead reads nothing, VM_SEQ_READ is
    /// `page_cache_sync_ra(ra_pages)`, and the rest counts `mmap_miss` and, below
    /// MMAP_LOTSAMISS, reads around the fault: `ra_pages` pages from `index - ra_pages / 2`,
    /// a quarter of them async. Returns whether the fault lock was dropped (fpin).
    fn do_sync_mmap_readahead(&mut self, vmf: &VmFault) -> bool {
        let fd = self.mm[vmf.map].as_ref().unwrap().fd;
        let mut ractl = ReadaheadControl::new(fd, vmf.pgoff);
        let vm_flags = vmf.vma.flags;
        let mut fpin = false;
        let mut force_thp_readahead = false;
        let mut thp_order = 0;
        // "Use the readahead code, even if readahead is disabled"
        if vm_flags & VM_HUGEPAGE != 0 {
            if self.input.mapping.large_folios {
                cover!(self.rec, "do_sync_mmap_readahead: VM_HUGEPAGE: force_thp_readahead");
                force_thp_readahead = true;
                thp_order = self.max_order().min(HPAGE_PMD_ORDER);
            } else {
                cover!(self.rec, "do_sync_mmap_readahead: VM_HUGEPAGE without large folios");
            }
        }
        if !force_thp_readahead {
            // "If we don't want any read-ahead, don't bother." (VM_EXEC is left to its own
            // branch below, which already reads for random access.)
            if vm_flags & (VM_RAND_READ | VM_EXEC) == VM_RAND_READ {
                cover!(self.rec, "do_sync_mmap_readahead: VM_RAND_READ: no readahead");
                self.rec.note(|| "fault: VM_RAND_READ: no readahead".into());
                return fpin;
            }
            if self.files[fd].ra.ra_pages == 0 {
                cover!(self.rec, "do_sync_mmap_readahead: ra_pages == 0");
                return fpin;
            }
            if vm_flags & VM_SEQ_READ != 0 {
                cover!(self.rec, "do_sync_mmap_readahead: VM_SEQ_READ: page_cache_sync_ra");
                fpin = self.maybe_unlock_mmap_for_io(vmf, fpin);
                let ra_pages = self.files[fd].ra.ra_pages;
                self.page_cache_sync_ra(&mut ractl, ra_pages);
                return fpin;
            }
        }
        if vm_flags & (VM_SEQ_READ | VM_EXEC) == 0 {
            // "Avoid banging the cache line if not needed"
            let ra = &mut self.files[fd].ra;
            if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
                ra.mmap_miss += 1;
                cover!(self.rec, "do_sync_mmap_readahead: mmap_miss++");
            }
            let mmap_miss = ra.mmap_miss;
            // Far more misses than hits in this file: readahead stops, as it would only
            // cost.
            if mmap_miss > MMAP_LOTSAMISS {
                cover!(self.rec, "do_sync_mmap_readahead: mmap_miss > MMAP_LOTSAMISS: no readahead");
                self.rec.note(|| format!("fault: mmap_miss {mmap_miss} > MMAP_LOTSAMISS: no readahead"));
                return fpin;
            }
        }
        if force_thp_readahead {
            let folio_nr_pages = 1u64 << thp_order;
            fpin = self.maybe_unlock_mmap_for_io(vmf, fpin);
            ractl.index &= !(folio_nr_pages - 1);
            let ra = &mut self.files[fd].ra;
            ra.size = folio_nr_pages;
            // Two folios unless the mapping is VM_RAND_READ: the second is the async part, so
            // a later access to it starts readahead.
            if vm_flags & VM_RAND_READ == 0 {
                cover!(self.rec, "do_sync_mmap_readahead: force_thp_readahead: two folios");
                ra.size *= 2;
            }
            ra.async_size = folio_nr_pages;
            ra.order = thp_order;
            let (index, size) = (ractl.index, ra.size);
            self.rec.note(|| format!("fault: VM_HUGEPAGE: {size} pages at {index}, order {thp_order}"));
            self.page_cache_ra_order(&mut ractl);
            return fpin;
        }
        if vm_flags & VM_EXEC != 0 {
            fpin = self.exec_read_around(vmf, fpin);
            let start = self.files[fd].ra.start;
            ractl.index = start;
            self.page_cache_ra_order(&mut ractl);
            return fpin;
        }
        // "mmap read-around"
        let ra = &mut self.files[fd].ra;
        if vmf.pgoff < ra.ra_pages / 2 {
            cover!(self.rec, "do_sync_mmap_readahead: read-around from 0");
        }
        ra.start = vmf.pgoff.saturating_sub(ra.ra_pages / 2);
        ra.size = ra.ra_pages;
        ra.async_size = ra.ra_pages / 4;
        ra.order = 0;
        let (start, size, async_size) = (ra.start, ra.size, ra.async_size);
        cover!(self.rec, "do_sync_mmap_readahead: read-around");
        self.rec.note(|| format!("fault: read-around [{start}+{size}) async {async_size}"));
        fpin = self.maybe_unlock_mmap_for_io(vmf, fpin);
        ractl.index = start;
        self.page_cache_ra_order(&mut ractl);
        fpin
    }

    /// The `VM_EXEC` branch of `do_sync_mmap_readahead()`, mm/filemap.c (7.3.4): code is
    /// read at random, so the window has no async part and stays inside the VMA. It starts
    /// at the fault (rounded down to `exec_folio_order()`, 0 on x86: the generic
    /// include/linux/pgtable.h one), not before the VMA, and is `ra_pages` long but ends
    /// at the VMA's end. Sets `ra` and returns fpin; the caller reads the window.
    fn exec_read_around(&mut self, vmf: &VmFault, fpin: bool) -> bool {
        let fd = self.mm[vmf.map].as_ref().unwrap().fd;
        let start = self.vma_start_pgoff(vmf);
        let end = start + (vmf.vma.end - vmf.vma.start); // vma_end_pgoff()
        let order = exec_folio_order();
        let ra = &mut self.files[fd].ra;
        ra.order = order;
        ra.start = round_down(vmf.pgoff, 1 << order).max(start);
        let ra_end = round_up(ra.start + ra.ra_pages, 1 << order).min(end);
        if ra.start + ra.ra_pages > end {
            cover!(self.rec, "do_sync_mmap_readahead: VM_EXEC: window ends at the VMA's end");
        }
        ra.size = ra_end - ra.start;
        ra.async_size = 0;
        let (s, size) = (ra.start, ra.size);
        cover!(self.rec, "do_sync_mmap_readahead: VM_EXEC: read from the fault, no async part");
        self.rec.note(|| format!("fault: VM_EXEC: [{s}+{size}) async 0, order {order}"));
        self.maybe_unlock_mmap_for_io(vmf, fpin)
    }

    /// `do_async_mmap_readahead()`, mm/filemap.c: the fault found `folio` in the page
    /// cache: count a hit in `mmap_miss` (unless the folio is locked or the VMA is
    /// VM_SEQ_READ) and, on PG_readahead, `page_cache_async_ra(ra_pages)` from the faulting
    /// page. Returns whether the fault lock was dropped.
    fn do_async_mmap_readahead(&mut self, vmf: &VmFault, folio: FolioRef) -> bool {
        let fd = self.mm[vmf.map].as_ref().unwrap().fd;
        let mut fpin = false;
        // "If we don't want any read-ahead, don't bother"
        if vmf.vma.flags & VM_RAND_READ != 0 || self.files[fd].ra.ra_pages == 0 {
            cover!(self.rec, "do_async_mmap_readahead: VM_RAND_READ or ra_pages == 0");
            return fpin;
        }
        // The sync path never counts a miss for VM_SEQ_READ or VM_EXEC mappings, so a hit
        // here does not take one off either: the counter stays symmetric.
        if folio.uptodate && vmf.vma.flags & (VM_SEQ_READ | VM_EXEC) == 0 {
            let ra = &mut self.files[fd].ra;
            if ra.mmap_miss > 0 {
                cover!(self.rec, "do_async_mmap_readahead: mmap_miss--");
                ra.mmap_miss -= 1;
            }
        } else if !folio.uptodate {
            cover!(self.rec, "do_async_mmap_readahead: folio locked: mmap_miss kept");
        }
        if folio.readahead {
            cover!(self.rec, "do_async_mmap_readahead: PG_readahead: page_cache_async_ra");
            fpin = self.maybe_unlock_mmap_for_io(vmf, fpin);
            let mut ractl = ReadaheadControl::new(fd, vmf.pgoff);
            let ra_pages = self.files[fd].ra.ra_pages;
            self.page_cache_async_ra(&mut ractl, folio, ra_pages);
        }
        fpin
    }

    /// `__filemap_get_folio(mapping, index, FGP_CREAT | FGP_FOR_MMAP, gfp)`, mm/filemap.c:
    /// the folio at `index`, or a new one of the minimum order, added unlocked and not
    /// uptodate (true: created).
    fn filemap_get_folio_for_mmap(&mut self, index: u64) -> (FolioRef, bool) {
        if let Some(folio) = self.cache.folio_at(index) {
            return (folio, false);
        }
        let min_order = self.min_order();
        let aligned = index >> min_order << min_order;
        // The slot is empty, so the add succeeds.
        let _ = self.filemap_add_folio(aligned, min_order, false);
        cover!(self.rec, "filemap_fault: __filemap_get_folio created the folio");
        (self.cache.folio_at(index).unwrap(), true)
    }

    /// `filemap_fault()`, mm/filemap.c (XFS's `xfs_filemap_fault()` and f2fs's
    /// `f2fs_filemap_fault()` call it for a read): emits `mm_filemap_fault`; with a folio
    /// in the page cache, async readahead (first try only); without, sync readahead and a
    /// folio of its own if readahead left none; waits for the folio's read, reads it with
    /// `->read_folio` if nobody did, and returns VM_FAULT_RETRY if the fault lock was dropped
    /// on the way, else the locked folio.
    fn filemap_fault(&mut self, vmf: &mut VmFault) -> u32 {
        let fd = self.mm[vmf.map].as_ref().unwrap().fd;
        let index = vmf.pgoff;
        let max_idx = self.isize.div_ceil(PAGE_SIZE);
        if index >= max_idx {
            cover!(self.rec, "filemap_fault: index >= max_idx: VM_FAULT_SIGBUS");
            return VM_FAULT_SIGBUS;
        }
        self.rec.open_event(Trigger::Fault, index, 1, self.op, fd as u32);
        let mut fpin = false;
        let mut ret = 0;
        let (mut folio, mut created);
        match self.cache.folio_at(index) {
            Some(found) => {
                cover!(self.rec, "filemap_fault: folio in the page cache");
                // "We found the page, so try async readahead before waiting for the lock."
                if !vmf.tried {
                    fpin = self.do_async_mmap_readahead(vmf, found);
                } else {
                    cover!(self.rec, "filemap_fault: FAULT_FLAG_TRIED: no async readahead");
                }
                folio = self.cache.folio_at(index).unwrap();
                created = false;
            }
            None => {
                cover!(self.rec, "filemap_fault: no folio: VM_FAULT_MAJOR");
                ret = VM_FAULT_MAJOR;
                fpin = self.do_sync_mmap_readahead(vmf);
                (folio, created) = self.filemap_get_folio_for_mmap(index);
            }
        }
        loop {
            // A folio under read I/O is locked.
            if !folio.uptodate && !created {
                fpin = self.lock_folio_maybe_drop_mmap(vmf, folio, fpin);
                folio = self.cache.folio_at(index).unwrap();
            }
            if folio.uptodate {
                break;
            }
            // page_not_uptodate: "Umm, take care of errors if the page isn't up-to-date."
            // The folio __filemap_get_folio() just created: nobody reads it but us.
            cover!(self.rec, "filemap_fault: page_not_uptodate: ->read_folio");
            fpin = self.maybe_unlock_mmap_for_io(vmf, fpin);
            self.aops_read_folio(folio);
            self.end_io_submission();
            self.fault_wait_locked(folio.index);
            if fpin {
                cover!(self.rec, "filemap_fault: VM_FAULT_RETRY");
                return ret | VM_FAULT_RETRY;
            }
            // retry_find
            (folio, created) = self.filemap_get_folio_for_mmap(index);
        }
        // The mmap_lock was dropped on the way: the caller must look the VMA up again and
        // retry the fault.
        if fpin {
            cover!(self.rec, "filemap_fault: VM_FAULT_RETRY");
            return ret | VM_FAULT_RETRY;
        }
        cover!(self.rec, "filemap_fault: VM_FAULT_LOCKED");
        vmf.folio = Some(folio);
        ret | VM_FAULT_LOCKED
    }

    /// `finish_fault()`, mm/memory.c: map the folio `->fault` returned: by a PMD
    /// (`do_set_pmd()`) when there is no page table yet and the folio is PMD-sized and inside
    /// i_size; else the whole large folio when it lies inside the VMA and one page table and
    /// none of its PTEs is set; else the faulting page alone.
    fn finish_fault(&mut self, vmf: &mut VmFault) -> u32 {
        let folio = vmf.folio.expect("finish_fault without a folio");
        let file_end = self.isize.div_ceil(PAGE_SIZE);
        let mut needs_fallback = file_end < folio.next_index();
        if needs_fallback {
            cover!(self.rec, "finish_fault: folio past i_size: one page");
        }
        loop {
            let pmd = self.mm[vmf.map].as_ref().unwrap().pmd(vmf.vpn);
            if pmd.is_none() {
                if !needs_fallback && folio.order >= HPAGE_PMD_ORDER {
                    let ret = self.do_set_pmd(vmf, folio);
                    if ret != VM_FAULT_FALLBACK {
                        cover!(self.rec, "finish_fault: do_set_pmd");
                        return ret;
                    }
                }
                let vpn = vmf.vpn;
                self.area(vmf).pmds.insert(vpn / PTRS_PER_PTE, Pmd::Table);
            }
            let mut nr_pages = folio.nr_pages();
            let mut addr = vmf.vpn;
            if needs_fallback {
                nr_pages = 1;
            } else if nr_pages > 1 {
                let idx = vmf.pgoff - folio.index;
                let vma_off = vmf.pgoff - self.vma_start_pgoff(vmf);
                let pte_off = vmf.vpn % PTRS_PER_PTE;
                let vma_pages = vmf.vma.end - vmf.vma.start;
                // A folio that reaches past the VMA or its page table is mapped one page at a
                // time.
                if vma_off < idx
                    || vma_off + (nr_pages - idx) > vma_pages
                    || pte_off < idx
                    || pte_off + (nr_pages - idx) > PTRS_PER_PTE
                {
                    cover!(self.rec, "finish_fault: folio beyond the VMA or page table: one page");
                    nr_pages = 1;
                } else {
                    addr = vmf.vpn - idx;
                }
            }
            let area = self.mm[vmf.map].as_ref().unwrap();
            if nr_pages == 1 && area.pte_present(addr) {
                cover!(self.rec, "finish_fault: PTE changed");
                return VM_FAULT_NOPAGE;
            } else if nr_pages > 1 && (addr..addr + nr_pages).any(|v| area.pte_present(v)) {
                cover!(self.rec, "finish_fault: PTEs of the folio not none: fallback");
                needs_fallback = true;
                continue;
            }
            if nr_pages > 1 {
                cover!(self.rec, "finish_fault: the whole folio");
            } else {
                cover!(self.rec, "finish_fault: one page");
            }
            // set_pte_range()
            let area = self.area(vmf);
            for vpn in addr..addr + nr_pages {
                area.set_pte(vpn);
            }
            return 0;
        }
    }
}

/// `madvise_vma_behavior()`, mm/madvise.c: the `vm_flags` MADV_NORMAL, MADV_SEQUENTIAL and
/// MADV_RANDOM set; MADV_HUGEPAGE and MADV_NOHUGEPAGE are `hugepage_madvise()`'s.
/// (MADV_WILLNEED and MADV_POPULATE_READ are `do_madvise()`'s own arms.)
fn madvise_vma_behavior(rec: &mut Recorder, advice: MadvAdvice) -> fn(u32) -> u32 {
    match advice {
        MadvAdvice::Normal => {
            cover!(rec, "madvise_vma_behavior: MADV_NORMAL");
            |f| f & !VM_RAND_READ & !VM_SEQ_READ
        }
        MadvAdvice::Sequential => {
            cover!(rec, "madvise_vma_behavior: MADV_SEQUENTIAL");
            |f| (f & !VM_RAND_READ) | VM_SEQ_READ
        }
        MadvAdvice::Random => {
            cover!(rec, "madvise_vma_behavior: MADV_RANDOM");
            |f| (f & !VM_SEQ_READ) | VM_RAND_READ
        }
        MadvAdvice::Hugepage | MadvAdvice::Nohugepage => hugepage_madvise(rec, advice),
        MadvAdvice::Willneed | MadvAdvice::PopulateRead | MadvAdvice::Collapse => {
            unreachable!("do_madvise() handles {advice:?}")
        }
    }
}

/// `hugepage_madvise()`, mm/khugepaged.c: MADV_HUGEPAGE sets VM_HUGEPAGE and clears
/// VM_NOHUGEPAGE, MADV_NOHUGEPAGE the other way round.
fn hugepage_madvise(rec: &mut Recorder, advice: MadvAdvice) -> fn(u32) -> u32 {
    if advice == MadvAdvice::Hugepage {
        cover!(rec, "hugepage_madvise: MADV_HUGEPAGE");
        |f| (f & !VM_NOHUGEPAGE) | VM_HUGEPAGE
    } else {
        cover!(rec, "hugepage_madvise: MADV_NOHUGEPAGE");
        |f| (f & !VM_HUGEPAGE) | VM_NOHUGEPAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(pages: u64) -> Mmap {
        Mmap {
            fd: 0,
            pgoff: 0,
            pages,
            vstart: 512,
            vmas: vec![Vma { start: 0, end: pages, flags: 0 }],
            ptes: vec![false; pages as usize],
            pmds: HashMap::new(),
        }
    }

    #[test]
    fn a_fault_woken_while_another_request_of_its_block_is_in_flight_is_marked_as_the_kernels_race() {
        use crate::pattern::{MadvAdvice, Op};
        use crate::Input;
        let map = |map| Op::Mmap { map, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: false, populate: false };
        let touch = |map, page: u64| Op::Touch { map, offset: page * PAGE_SIZE };
        // Pages 2 and 4 cached through a MADV_RANDOM mapping: the second mapping's fault at
        // page 1 reads [0+32) as several requests, and fault-around looks at pages 3, 5...
        let random = Op::Madvise { map: 0, offset: 0, len: 8 << 20, advice: MadvAdvice::Random };
        let split = Input::xfs_on_nvme(8 << 20, vec![map(0), random, touch(0, 2), touch(0, 4), map(1), touch(1, 1)]);
        let (t, cov) = crate::coverage(&split, &crate::Policy::BASE);
        assert!(t.windows.iter().any(|w| w.requests.len() > 1), "{t:?}");
        assert!(cov.contains(FAULT_RACE));
        // The same fault on a cold file: its window is one request.
        let cold = Input::xfs_on_nvme(8 << 20, vec![map(1), touch(1, 1)]);
        assert!(!crate::coverage(&cold, &crate::Policy::BASE).1.contains(FAULT_RACE));
    }

    #[test]
    fn a_programs_load_puts_the_reads_recorded_in_flight_back_in_flight_and_marks_what_they_do_not_settle() {
        use crate::pattern::Op;
        use crate::{Input, LoadInFlight};
        // Read-around of [0+32) at the first load, which maps [0+16); the second load, at
        // page 16, finds [16+16) cached.
        let ops = vec![
            Op::Mmap { map: 0, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: false, populate: false },
            Op::Touch { map: 0, offset: 0 },
            Op::Touch { map: 0, offset: 16 * PAGE_SIZE },
        ];
        let input = Input::xfs_on_nvme(8 << 20, ops);
        let sector = |page: u64| input.extents[0].physical / SECTOR_SIZE + page * PAGE_SIZE / SECTOR_SIZE;
        let with = |requests: Vec<(u64, u64)>, completed_after: Vec<(u64, u64)>| {
            let mut i = input.clone();
            i.vm.loads_in_flight = vec![LoadInFlight { op: 2, requests, completed_after }];
            crate::coverage(&i, &crate::Policy::BASE)
        };
        let (plain, cov) = crate::coverage(&input, &crate::Policy::BASE);
        assert!(!cov.contains(LOAD_RACE));
        // Pages [16+16) still read when the second load faulted: fault-around skips them and
        // the fault waits for its folio, a fault the completed read does not take.
        let (late, cov) = with(vec![(sector(16), 128)], vec![]);
        assert_ne!(late, plain);
        assert!(!cov.contains(LOAD_RACE));
        // Completing while the fault ran: the fault's own read (it waits for it), settled.
        let (own, cov) = with(vec![(sector(16), 128)], vec![(sector(16), 128)]);
        assert_eq!(own, late);
        assert!(!cov.contains(LOAD_RACE));
        // Another folio's read, that fault-around looks at: not settled.
        let (_, cov) = with(vec![(sector(16), 8), (sector(20), 8)], vec![(sector(20), 8)]);
        assert!(cov.contains(LOAD_RACE));
        // A read in flight on a folio the model had mapped (page 0): they already part.
        let (_, cov) = with(vec![(sector(0), 8)], vec![]);
        assert!(cov.contains(LOAD_RACE));
    }

    #[test]
    fn madvise_splits_and_merges_vmas() {
        let mut a = area(100);
        a.update_flags(10, 20, |f| f | VM_RAND_READ);
        assert_eq!(
            a.vmas,
            vec![
                Vma { start: 0, end: 10, flags: 0 },
                Vma { start: 10, end: 20, flags: VM_RAND_READ },
                Vma { start: 20, end: 100, flags: 0 }
            ]
        );
        a.update_flags(15, 30, |f| f | VM_RAND_READ);
        assert_eq!(a.vmas.len(), 3);
        assert_eq!(a.vmas[1], Vma { start: 10, end: 30, flags: VM_RAND_READ });
        a.update_flags(0, 100, |f| f & !VM_RAND_READ);
        assert_eq!(a.vmas, vec![Vma { start: 0, end: 100, flags: 0 }]);
        assert_eq!(a.vma_of(99).end, 100);
    }
}
