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

mod around;
mod mmap_ra;
mod pmds;

pub(crate) use pmds::Pmds;

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
    pub(crate) pmds: Pmds,
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
        self.pmds.get(vpn / PTRS_PER_PTE)
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
            pmds: Pmds::default(),
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
                let pieces: Vec<(Vma, u64, u64)> = area
                    .vmas
                    .iter()
                    .filter(|v| v.start < end && start < v.end)
                    .map(|v| (*v, v.start.max(start), v.end.min(end)))
                    .collect();
                // madvise_do_behavior()'s plug holds madvise_walk_vmas() too: every
                // chunk's read_pages() plug nests in it, so the requests of all chunks wait
                // in one plug (merging across chunk ends, flushed at BLK_MAX_REQUEST_COUNT
                // or a large request) until the call ends.
                self.blk_start_plug();
                for (vma, s, e) in pieces {
                    if !self.c_madvise_willneed(map, vma, s, e) {
                        self.madvise_willneed(fd, pgoff, s, e);
                    }
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
    pub(crate) fn fault_around_pages(&self) -> u64 {
        (self.input.vm.fault_around_bytes / PAGE_SIZE).max(1)
    }

    /// `do_read_fault()`, mm/memory.c: fault-around first; `->fault` only if it did not
    /// map the page; then `finish_fault()`.
    fn do_read_fault(&mut self, vmf: &mut VmFault) -> u32 {
        if self.should_fault_around() {
            let ret = match self.c_do_fault_around(vmf) {
                Some(ret) => ret,
                None => self.do_fault_around(vmf),
            };
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
        if let Some(ret) = self.c_finish_fault(vmf) {
            return ret;
        }
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
                self.pmd_install(vmf);
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
            self.set_pte_range(vmf, addr, nr_pages);
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
            pmds: Pmds::default(),
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
