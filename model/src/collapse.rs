//! MADV_COLLAPSE on a file mapping, Linux 7.3.4 mm/khugepaged.c: which 2 MiB ranges
//! collapse, the readahead `collapse_file()` makes for their missing pages, the order-9
//! folio that replaces their small folios, and the PMD that maps it.
//!
//! | kernel file | ported here |
//! |---|---|
//! | mm/khugepaged.c | `madvise_collapse()`, `collapse_single_pmd()`, `collapse_scan_file()`, `collapse_file()`, `retract_page_tables()`, `try_collapse_pte_mapped_thp()` |
//! | mm/huge_memory.c, include/linux/huge_mm.h | what `collapse_possible(vma, vm_flags, TVA_FORCED_COLLAPSE)` asks of a file VMA: `vma_thp_disabled()`, `file_thp_enabled()`, `thp_vma_suitable_order()` |
//!
//! What the trace shows of it: `collapse_file()` ends in `mm_khugepaged_collapse_file` (a
//! [`Trigger::Collapse`] window with the result, the index its loop stopped at and
//! HPAGE_PMD_NR); the `page_cache_sync_readahead()` calls it made for missing pages open
//! `Sync` windows before it. The order-9 folio goes into the page cache by `xas_store()`,
//! not `__filemap_add_folio()`: no `mm_filemap_add_to_page_cache`, so it is not a folio of
//! the trace (and takes no measured pfn). A range whose folio is already of PMD order ends
//! in the scan (SCAN_PTE_MAPPED_HUGEPAGE) without `collapse_file()`: no event.
//!
//! Assumptions (beyond the fault path's, [`crate::fault`]): the guest drained nothing
//! by hand, but `lru_add_drain_all()` puts every folio on the LRU before the scan, and
//! the `lru_add_drain()` after each readahead those it just added (the task does not move
//! between CPUs in between); nobody else holds a folio of the range (no pipe keeps spliced
//! pages: the guest drains its pipes), none is dirty or under writeback (the guest only
//! reads); one NUMA node; the order-9 allocation succeeds unless an armed fail_page_alloc
//! fails it (the guest has 2 GiB, mostly free, and the scenario check refuses `fail_alloc`
//! with a collapse, untried). Waiting for the folio at `index` after the readahead
//! (`filemap_lock_folio()`) completes what the model's I/O completion says it does (see
//! [`crate::IoCompletion`]); the `folio_trylock()` of each later folio succeeds only on an
//! uptodate folio, the model's "not locked". On the real kernel that is exact where each
//! of the readahead's windows is one request: a later request of the same window may still
//! be in flight when the task wakes for the first, and then the kernel gives
//! SCAN_PAGE_LOCK or not, run to run. The model marks such a window (coverage id
//! `collapse_file: a readahead of several requests: the kernel races`, and a note when
//! explaining); the scenario check and explore's grammar keep those shapes out (see
//! docs/scenarios.md).

use crate::coverage::cover;

/// The coverage id that marks a collapse whose readahead window is several requests: the
/// kernel races there (SCAN_PAGE_LOCK or not, run to run), so no trial checks it exactly.
pub const COLLAPSE_RACE: &str = "collapse_file: a readahead of several requests: the kernel races";
use crate::fault::{Pmd, HPAGE_PMD_ORDER, PTRS_PER_PTE, VM_NOHUGEPAGE};
use crate::model::Model;
use crate::readahead::ReadaheadControl;
use crate::trace::{ScanResult, Trigger};

/// `HPAGE_PMD_NR`.
const HPAGE_PMD_NR: u64 = 1 << HPAGE_PMD_ORDER;

/// `madvise_collapse()`'s return value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollapseErrno {
    /// 0: every PMD range of the call collapsed (or was already PMD-mapped).
    Ok,
    /// -EINVAL: `collapse_possible()` refused the VMA.
    Einval,
    /// `madvise_collapse_errno(last_fail)`: some range did not collapse.
    Failed(ScanResult),
}

impl Model<'_> {
    /// MADV_COLLAPSE over pages `[start, end)` of mapping `map`: `madvise_walk_vmas()`
    /// calls `madvise_collapse()` once per VMA of the range with the VMA's part of it.
    pub(crate) fn madvise_collapse_range(&mut self, map: usize, start: u64, end: u64) {
        let Some(area) = self.mm.get(map).and_then(Option::as_ref) else { return };
        let pieces: Vec<(u64, u64)> = area
            .vmas
            .iter()
            .filter(|v| v.start < end && start < v.end)
            .map(|v| (v.start.max(start), v.end.min(end)))
            .collect();
        for (s, e) in pieces {
            self.madvise_collapse(map, s, e);
        }
    }

    /// `madvise_collapse()`, mm/khugepaged.c (Linux 7.3.4), on pages `[start, end)` of
    /// mapping `map` inside one VMA: "if (!collapse_possible(vma, vma->vm_flags,
    /// TVA_FORCED_COLLAPSE)) return -EINVAL;", then `collapse_single_pmd()` on each
    /// 2 MiB-aligned range inside the call (start rounded up, end rounded down to
    /// `HPAGE_PMD_SIZE`), going on after the results the kernel lists as ones where
    /// "continuing OK" and stopping at any other.
    pub(crate) fn madvise_collapse(&mut self, map: usize, start: u64, end: u64) -> CollapseErrno {
        let area = self.mm[map].as_ref().expect("a live mapping");
        let vma = area.vma_of(start);
        let (vm_start, vm_end, vm_pgoff) = (area.vstart + vma.start, area.vstart + vma.end, area.pgoff + vma.start);
        let vstart = area.vstart;
        if !self.collapse_possible(vma.flags, vm_start, vm_end, vm_pgoff) {
            cover!(self.rec, "madvise_collapse: !collapse_possible: -EINVAL");
            return CollapseErrno::Einval;
        }
        let hstart = (vstart + start).div_ceil(HPAGE_PMD_NR) * HPAGE_PMD_NR;
        let hend = (vstart + end) / HPAGE_PMD_NR * HPAGE_PMD_NR;
        if hstart >= hend {
            cover!(self.rec, "madvise_collapse: no aligned 2 MiB inside the range");
            return CollapseErrno::Ok;
        }
        // "lru_add_drain_all();": every folio is on the LRU for the scan (an assumption
        // of the module: nothing to do in the model).
        let (mut thps, mut last_fail) = (0, ScanResult::Fail);
        let mut addr = hstart;
        while addr < hend {
            let result = self.collapse_single_pmd(map, addr - vstart);
            match result {
                ScanResult::Succeed | ScanResult::PmdMapped => thps += 1,
                ScanResult::NoPteTable
                | ScanResult::PteNonPresent
                | ScanResult::PteUffd
                | ScanResult::LackReferencedPage
                | ScanResult::PageNull
                | ScanResult::PageCount
                | ScanResult::PageLock
                | ScanResult::PageCompound
                | ScanResult::PageLru
                | ScanResult::DelPageLru => last_fail = result,
                _ => {
                    // "default: last_fail = result; /* Other error, exit */"
                    cover!(self.rec, "madvise_collapse: other error: exit");
                    last_fail = result;
                    break;
                }
            }
            addr += HPAGE_PMD_NR;
        }
        if thps == (hend - hstart) / HPAGE_PMD_NR {
            CollapseErrno::Ok
        } else {
            CollapseErrno::Failed(last_fail)
        }
    }

    /// `collapse_possible(vma, vm_flags, TVA_FORCED_COLLAPSE)` for a file VMA
    /// `[vm_start, vm_end)` (virtual pages) mapping file pages from `vm_pgoff`:
    /// `__thp_vma_allowable_orders()` with PMD order only. `vma_thp_disabled()`:
    /// "if (vm_flags & VM_NOHUGEPAGE) return true;" (forced_collapse overrides the rest);
    /// `thp_vma_suitable_order(vma, vma->vm_end - HPAGE_PMD_SIZE, PMD_ORDER)`; and, since
    /// MADV_COLLAPSE bypasses the sysfs tuneables, `file_thp_enabled()`: a regular file
    /// whose mapping takes PMD folios ("if (!mapping_pmd_folio_support(...)) return false;").
    fn collapse_possible(&mut self, vm_flags: u32, vm_start: u64, vm_end: u64, vm_pgoff: u64) -> bool {
        if vm_flags & VM_NOHUGEPAGE != 0 {
            cover!(self.rec, "collapse_possible: VM_NOHUGEPAGE");
            return false;
        }
        let suitable =
            vm_start.wrapping_sub(vm_pgoff).is_multiple_of(HPAGE_PMD_NR) && vm_end >= vm_start + HPAGE_PMD_NR && {
                let haddr = (vm_end - HPAGE_PMD_NR) / HPAGE_PMD_NR * HPAGE_PMD_NR;
                haddr >= vm_start && haddr + HPAGE_PMD_NR <= vm_end
            };
        if !suitable {
            cover!(self.rec, "collapse_possible: !thp_vma_suitable_order");
            return false;
        }
        // mapping_pmd_folio_support(): "mapping_max_folio_order(mapping) >= PMD_ORDER".
        if self.max_order() < HPAGE_PMD_ORDER {
            cover!(self.rec, "collapse_possible: !file_thp_enabled");
            return false;
        }
        true
    }

    /// `collapse_single_pmd()`, mm/khugepaged.c (Linux 7.3.4), for a file VMA: the scan
    /// of the range at mapping page `page` (2 MiB-aligned in virtual memory), then, when
    /// the range holds one PMD-order folio ("if (result == SCAN_PTE_MAPPED_HUGEPAGE)"),
    /// `try_collapse_pte_mapped_thp(mm, addr, !cc->is_khugepaged)` maps it;
    /// SCAN_PMD_MAPPED counts as success. (The retry after writeback is for dirty folios,
    /// which the guest never has.)
    fn collapse_single_pmd(&mut self, map: usize, page: u64) -> ScanResult {
        let area = self.mm[map].as_ref().expect("a live mapping");
        let (fd, pgoff) = (area.fd, area.pgoff + page);
        let mut result = self.collapse_scan_file(fd, pgoff);
        if result == ScanResult::PteMappedHugepage {
            result = self.try_collapse_pte_mapped_thp(map, page);
            if result == ScanResult::PmdMapped {
                result = ScanResult::Succeed;
            }
        }
        result
    }

    /// `collapse_scan_file()`, mm/khugepaged.c (Linux 7.3.4): every folio of file pages
    /// `[start, start + HPAGE_PMD_NR)`; one of PMD order stops the scan with
    /// SCAN_PTE_MAPPED_HUGEPAGE. The LRU and reference checks pass (the module's
    /// assumptions), and MADV_COLLAPSE allows any number of missing pages
    /// (`collapse_max_ptes_none()`: "if (!cc->is_khugepaged) return HPAGE_PMD_NR;"), so
    /// otherwise it is `collapse_file()`. (`trace_mm_khugepaged_scan_file` is not read.)
    fn collapse_scan_file(&mut self, fd: usize, start: u64) -> ScanResult {
        if self.cache.folios_in(start, start + HPAGE_PMD_NR).iter().any(|f| f.order == HPAGE_PMD_ORDER) {
            cover!(self.rec, "collapse_scan_file: a PMD-order folio: SCAN_PTE_MAPPED_HUGEPAGE");
            return ScanResult::PteMappedHugepage;
        }
        self.collapse_file(fd, start)
    }

    /// `collapse_file()`, mm/khugepaged.c (Linux 7.3.4), for a regular file: allocate the
    /// order-9 folio (`alloc_charge_folio()`), then for each index of the range: a missing
    /// page is read ("page_cache_sync_readahead(mapping, &file->f_ra, file, index, end -
    /// index);") and waited for ("folio = filemap_lock_folio(mapping, index);", SCAN_FAIL
    /// if the readahead did not add it); a present folio must be unlocked
    /// ("folio_trylock(folio)", else SCAN_PAGE_LOCK) and uptodate. On success the small
    /// folios are replaced by the new one ("xas_store(&xas, new_folio);"), the page tables
    /// of the range are retracted (`retract_page_tables()`), and MADV_COLLAPSE's result is
    /// SCAN_PTE_MAPPED_HUGEPAGE ("if (cc && !cc->is_khugepaged) result =
    /// SCAN_PTE_MAPPED_HUGEPAGE;"). Emits `mm_khugepaged_collapse_file` with the index the
    /// loop stopped at (`end` on success: the copy loop leaves it there).
    fn collapse_file(&mut self, fd: usize, start: u64) -> ScanResult {
        let end = start + HPAGE_PMD_NR;
        // "pgoff_t index = 0": an allocation failure reports index 0.
        let mut index = 0;
        let result = 'out: {
            // alloc_charge_folio(): "if (!folio) { ... return SCAN_ALLOC_HUGE_PAGE_FAIL; }"
            if !self.alloc_folio(HPAGE_PMD_ORDER) {
                cover!(self.rec, "collapse_file: SCAN_ALLOC_HUGE_PAGE_FAIL");
                break 'out ScanResult::AllocHugePageFail;
            }
            index = start;
            let mut pagelist = Vec::new();
            while index < end {
                let folio = match self.cache.folio_at(index) {
                    None => {
                        cover!(self.rec, "collapse_file: missing page: page_cache_sync_readahead");
                        let mut ractl = ReadaheadControl::new(fd, index);
                        let before = self.rec.windows.len();
                        self.page_cache_sync_ra(&mut ractl, end - index);
                        // The plug holds the window's requests until the wait below flushes
                        // them: those recorded now were issued before (by read_pages()'s
                        // nested plug they were not).
                        self.blk_flush_plug();
                        let requests: usize = self.rec.windows[before..].iter().map(|w| w.requests.len()).sum();
                        if requests > 1 {
                            // A later request of the window may still be in flight when the
                            // task wakes for the first: the kernel's trylock races it.
                            cover!(self.rec, "collapse_file: a readahead of several requests: the kernel races");
                            self.rec.note(|| format!("collapse_file: the readahead at {index} issued {requests} requests: on the kernel, SCAN_PAGE_LOCK or not, run to run"));
                        }
                        // filemap_lock_folio(): sleeps on the folio its read locked.
                        let Some(folio) = self.cache.folio_at(index) else {
                            cover!(self.rec, "collapse_file: no folio after the readahead: SCAN_FAIL");
                            break 'out ScanResult::Fail;
                        };
                        if !folio.uptodate {
                            self.fault_wait_locked(folio.index);
                        }
                        self.cache.folio_at(index).expect("just looked up")
                    }
                    Some(folio) if !folio.uptodate => {
                        // A folio whose folio_trylock() fails ends the scan with
                        // SCAN_PAGE_LOCK: it is locked by its read.
                        cover!(self.rec, "collapse_file: folio_trylock failed: SCAN_PAGE_LOCK");
                        break 'out ScanResult::PageLock;
                    }
                    Some(folio) => folio,
                };
                if folio.order == HPAGE_PMD_ORDER {
                    // "if (is_pmd_order(folio_order(folio))) { result = SCAN_PTE_MAPPED_HUGEPAGE;"
                    break 'out ScanResult::PteMappedHugepage;
                }
                pagelist.push(folio);
                // "index += folio_nr_pages(folio);": a large folio that began before the
                // range cannot be (folios are naturally aligned, none above PMD order).
                index = folio.next_index();
            }
            cover!(self.rec, "collapse_file: collapsed");
            for folio in &pagelist {
                self.try_to_unmap(folio.index, folio.next_index());
                self.cache.remove_folio(folio.index);
            }
            // The new folio's memory is never read into (it is uptodate from birth), so its
            // pfn decides no bio: 0.
            self.cache.add_folio(start, HPAGE_PMD_ORDER, false, 0).expect("the range was just emptied");
            self.cache.set_uptodate(start);
            self.retract_page_tables(start);
            // The copy loop ends with index at end.
            index = end;
            ScanResult::PteMappedHugepage
        };
        self.rec.open_event(Trigger::Collapse(result), index, HPAGE_PMD_NR, self.op, fd as u32);
        result
    }

    /// The live mappings of the current file (`mapping->i_mmap`).
    fn mappings_of_file(&mut self) -> impl Iterator<Item = &mut crate::fault::Mmap> {
        let file = self.cur_file;
        self.mm.iter_mut().flatten().filter(move |area| crate::pattern::file_of(area.fd as u32) as usize == file)
    }

    /// `try_to_unmap()`, mm/rmap.c (Linux 7.3.4), of the folio at file pages `[first,
    /// next)`: its PTEs go from every mapping of the file.
    fn try_to_unmap(&mut self, first: u64, next: u64) {
        for area in self.mappings_of_file() {
            for p in first.max(area.pgoff)..next.min(area.pgoff + area.pages) {
                area.ptes[(p - area.pgoff) as usize] = false;
            }
        }
    }

    /// `retract_page_tables()`, mm/khugepaged.c (Linux 7.3.4): every VMA of the file that
    /// maps file page `pgoff` at a 2 MiB-aligned address and holds the whole PMD ("if (addr
    /// & ~HPAGE_PMD_MASK || vma->vm_end < addr + HPAGE_PMD_SIZE) continue;") loses the page
    /// table there, if it has one (`find_pmd_or_thp_or_none() == SCAN_SUCCEED`); the
    /// file's VMAs have no anon_vma (read-only mappings), so all are retractable.
    fn retract_page_tables(&mut self, pgoff: u64) {
        for area in self.mappings_of_file() {
            if pgoff < area.pgoff || pgoff >= area.pgoff + area.pages {
                continue;
            }
            let page = pgoff - area.pgoff;
            let vma = area.vma_of(page);
            let addr = area.vstart + page;
            if !addr.is_multiple_of(HPAGE_PMD_NR) || area.vstart + vma.end < addr + HPAGE_PMD_NR {
                continue;
            }
            if area.pmds.get(addr / PTRS_PER_PTE) == Some(Pmd::Table) {
                area.pmds.remove(addr / PTRS_PER_PTE);
            }
        }
    }

    /// `try_collapse_pte_mapped_thp(mm, addr, install_pmd = true)`, mm/khugepaged.c (Linux
    /// 7.3.4), at mapping page `page` (2 MiB-aligned in virtual memory): already
    /// PMD-mapped is SCAN_PMD_MAPPED; the folio there must be of PMD order
    /// (SCAN_PAGE_COMPOUND, or SCAN_PAGE_NULL without one); a page table is emptied and
    /// removed (its PTEs can only map that folio's pages: the model's cache has no other),
    /// then `set_huge_pmd()` maps the whole folio ("step 5: install pmd entry").
    fn try_collapse_pte_mapped_thp(&mut self, map: usize, page: u64) -> ScanResult {
        let area = self.mm[map].as_ref().expect("a live mapping");
        let haddr = area.vstart + page;
        let vma = area.vma_of(page);
        if area.vstart + vma.start > haddr || area.vstart + vma.end < haddr + HPAGE_PMD_NR {
            return ScanResult::VmaCheck;
        }
        // "result = find_pmd_or_thp_or_none(mm, haddr, &pmd);": a PMD already huge ends it
        // with SCAN_PMD_MAPPED.
        if area.pmd(haddr) == Some(Pmd::Huge) {
            cover!(self.rec, "try_collapse_pte_mapped_thp: SCAN_PMD_MAPPED");
            return ScanResult::PmdMapped;
        }
        let pgoff = area.pgoff + page;
        let Some(folio) = self.cache.folio_at(pgoff) else { return ScanResult::PageNull };
        if folio.order != HPAGE_PMD_ORDER {
            return ScanResult::PageCompound;
        }
        cover!(self.rec, "try_collapse_pte_mapped_thp: set_huge_pmd");
        let area = self.mm[map].as_mut().expect("a live mapping");
        area.pmds.insert(haddr / PTRS_PER_PTE, Pmd::Huge);
        for p in page..page + HPAGE_PMD_NR {
            area.ptes[p as usize] = true;
        }
        ScanResult::PmdMapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::{MadvAdvice, Op};
    use crate::{predict, Input, Policy, Trace, Window};

    const MIB: u64 = 1 << 20;

    fn map(len: u64) -> Op {
        Op::Mmap { map: 0, fd: 0, offset: 0, len, shared: true, exec: false, populate: false }
    }

    fn collapse(offset: u64, len: u64) -> Op {
        Op::Madvise { map: 0, offset, len, advice: MadvAdvice::Collapse }
    }

    fn touch(offset: u64) -> Op {
        Op::Touch { map: 0, offset }
    }

    fn line(w: &Window) -> (Trigger, u64, u64, usize) {
        (w.trigger, w.index, w.req_count, w.requests.len())
    }

    fn trace(ops: Vec<Op>) -> Trace {
        predict(&Input::xfs_on_nvme(4 * MIB, ops), &Policy::BASE)
    }

    #[test]
    fn a_cold_range_is_read_window_by_window_then_collapses_and_later_touches_take_no_fault() {
        // What Linux 7.3.4 did (`collapse_probe` runs, read_ahead_kb 128, max_sectors_kb
        // 512): four sync windows of one 512 KiB request each, then the collapse event.
        let t = trace(vec![map(4 * MIB), collapse(0, 2 * MIB), touch(0), touch(MIB), touch(2 * MIB - 4096)]);
        let lines: Vec<_> = t.windows.iter().map(line).collect();
        let done = Trigger::Collapse(ScanResult::PteMappedHugepage);
        assert_eq!(
            lines,
            vec![
                (Trigger::Sync, 0, 512, 1),
                (Trigger::Sync, 128, 384, 1),
                (Trigger::Sync, 256, 256, 1),
                (Trigger::Sync, 384, 128, 1),
                (done, 512, 512, 0)
            ]
        );
        assert!(t.requests().all(|r| r.sectors == 1024), "{:?}", t.requests().collect::<Vec<_>>());
        assert_eq!(
            t.windows[3].submits,
            vec![crate::Submit::Unbounded { index: 384, nr_to_read: 128, lookahead_size: 0 }],
            "contig_count <= req_count: do_page_cache_ra()"
        );
    }

    #[test]
    fn a_partly_cached_range_reads_only_what_is_missing_with_the_faults_ra_state() {
        // The kernel: the fault at 2 MiB read around it (16 pages past the collapsed
        // folio), then the collapse of [2 MiB, 4 MiB) read from page 528 with that f_ra.
        let t =
            trace(vec![map(4 * MIB), collapse(0, 2 * MIB), touch(2 * MIB), collapse(2 * MIB, 2 * MIB), touch(3 * MIB)]);
        let lines: Vec<_> = t.windows.iter().map(line).collect();
        let done = Trigger::Collapse(ScanResult::PteMappedHugepage);
        let tail = &lines[5..];
        assert_eq!(tail[0], (Trigger::Fault, 512, 1, 1));
        assert_eq!(tail[1].0, Trigger::FaultAround);
        assert_eq!(
            tail[2..].iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(),
            vec![(Trigger::Sync, 528), (Trigger::Sync, 656), (Trigger::Sync, 784), (Trigger::Sync, 912), (done, 1024)]
        );
        assert_eq!(
            (t.windows[7].ra.size, t.windows[7].ra.async_size, t.windows[7].ra.mmap_miss),
            (32, 8, 1),
            "the fault's read-around state"
        );
    }

    #[test]
    fn a_second_collapse_of_a_collapsed_range_makes_no_event_and_an_unaligned_call_only_its_aligned_part() {
        let once = trace(vec![map(4 * MIB), collapse(0, 2 * MIB)]);
        let twice = trace(vec![map(4 * MIB), collapse(0, 2 * MIB), collapse(0, 2 * MIB)]);
        assert_eq!(once, twice, "SCAN_PTE_MAPPED_HUGEPAGE in the scan, then SCAN_PMD_MAPPED");
        let unaligned = trace(vec![map(4 * MIB), collapse(MIB, 2 * MIB)]);
        assert!(unaligned.windows.is_empty(), "no 2 MiB-aligned range inside [1 MiB, 3 MiB)");
        let inner = trace(vec![map(4 * MIB), collapse(4096, 4 * MIB - 4096)]);
        assert_eq!(
            inner.windows.last().map(|w| (w.trigger, w.index)),
            Some((Trigger::Collapse(ScanResult::PteMappedHugepage), 1024)),
            "only [2 MiB, 4 MiB)"
        );
    }

    #[test]
    fn nohugepage_or_a_mapping_without_pmd_folios_is_einval_and_reads_nothing() {
        let no = Op::Madvise { map: 0, offset: 0, len: 4 * MIB, advice: MadvAdvice::Nohugepage };
        assert!(trace(vec![map(4 * MIB), no, collapse(0, 2 * MIB)]).windows.is_empty());
        let mut f2fs = Input::xfs_on_nvme(4 * MIB, vec![map(4 * MIB), collapse(0, 2 * MIB)]);
        f2fs.mapping = crate::MappingLimits::f2fs();
        assert!(predict(&f2fs, &Policy::BASE).windows.is_empty());
    }

    #[test]
    fn a_folio_still_under_read_fails_the_trylock_when_reads_complete_only_when_waited() {
        // IoCompletion::WhenWaited: the window's later folios are still locked when the
        // task wakes for the first one: SCAN_PAGE_LOCK at the first of them.
        let config = crate::ModelConfig { io_completion: crate::IoCompletion::WhenWaited, ..Default::default() };
        let t = crate::predict_with(
            &Input::xfs_on_nvme(4 * MIB, vec![map(4 * MIB), collapse(0, 2 * MIB)]),
            &Policy::BASE,
            &config,
        );
        assert_eq!(t.windows.last().map(|w| (w.trigger, w.index)), Some((Trigger::Collapse(ScanResult::PageLock), 1)));
    }

    #[test]
    fn a_window_split_by_cached_pages_is_marked_as_the_kernels_race() {
        // The ext4 probe's shape: a fault at page 600 read 584..615 around it, so the
        // collapse's window from 512 reads 512..583 and 616..639: two requests.
        let id = COLLAPSE_RACE;
        assert!(crate::Coverage::of(&[id]).is_ok(), "COLLAPSE_RACE names the id `cover!` records");
        let split = Input::xfs_on_nvme(4 * MIB, vec![map(4 * MIB), touch(600 * 4096), collapse(0, 4 * MIB)]);
        let (t, cov) = crate::coverage(&split, &Policy::BASE);
        let w = t.windows.iter().find(|w| w.trigger == Trigger::Sync && w.index == 512).expect("a window at 512");
        assert_eq!(w.requests.len(), 2);
        assert!(cov.contains(id));
        let cold = Input::xfs_on_nvme(4 * MIB, vec![map(4 * MIB), collapse(0, 4 * MIB)]);
        assert!(!crate::coverage(&cold, &Policy::BASE).1.contains(id), "a cold range: one request a window");
    }
}
