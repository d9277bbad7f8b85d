//! Read faults that are not loads: `MAP_POPULATE` and `MADV_POPULATE_READ` fault the pages
//! of a range in through `__get_user_pages()` (mm/gup.c, Linux 7.3.4), under the mmap_lock,
//! never the VMA lock, with retry flags of their own.
//!
//! | kernel | ported here |
//! |---|---|
//! | mm/gup.c | `__mm_populate()`, `populate_vma_page_range()`, `faultin_page_range()`, `__get_user_pages_locked()`, `__get_user_pages()`, `follow_page_mask()` (whether a page is mapped), `faultin_page()` |
//! | mm/madvise.c | `madvise_populate()` |
//!
//! The two differ only in how a fault that dropped the mmap_lock (VM_FAULT_RETRY: it slept
//! on a folio under read I/O, or issued I/O) is retried:
//! * `__mm_populate()` (MAP_POPULATE) calls `populate_vma_page_range()` again from the page
//!   that returned VM_FAULT_RETRY, without FOLL_TRIED: the retried fault is a first try
//!   again (async readahead on PG_readahead, `mmap_miss` counted, the lock may drop again);
//! * `__get_user_pages_locked()` (MADV_POPULATE_READ) retries that one page with
//!   FOLL_TRIED (FAULT_FLAG_TRIED: no async readahead, the lock is kept), then goes on
//!   without it.
//!
//! Timing: the pages are faulted one after the other in one system call, as a loop of loads
//! would be (`Touches::Race` in [`crate::config`]): a read one fault issued stays in flight
//! until a later fault sleeps on one of its folios. Whether fault-around finds an async
//! window's folios still locked when the populate reaches them is a race (see
//! [`crate::IoCompletion`]), so exact scenarios populate ranges that reach no async window
//! the same call issued.

use crate::coverage::cover;
use crate::fault::{Pmd, VmFault, PTRS_PER_PTE, VM_FAULT_RETRY};
use crate::model::Model;

impl Model<'_> {
    /// `__mm_populate(start, len, ignore_errors = 1)`, mm/gup.c, after `mmap()` with
    /// MAP_POPULATE (`vm_mmap_pgoff()`: "if (populate) mm_populate(ret, populate);") over the
    /// whole mapping `map`: each VMA's pages by `populate_vma_page_range()`, which stops at a
    /// fault that dropped the lock; the loop then starts again at that page.
    pub(crate) fn mm_populate(&mut self, map: usize) {
        let Some(area) = self.mm.get(map).and_then(Option::as_ref) else { return };
        let end = area.pages;
        let mut nstart = 0;
        while nstart < end {
            let vma = self.mm[map].as_ref().unwrap().vma_of(nstart);
            let nend = end.min(vma.end);
            let done = self.populate_vma_page_range(map, nstart, nend);
            if done == 0 {
                cover!(self.rec, "__mm_populate: VM_FAULT_RETRY at the first page: again from it");
            }
            nstart += done;
        }
    }

    /// `populate_vma_page_range()`, mm/gup.c: `__get_user_pages()` on pages `[start, end)`
    /// of the mapping with FOLL_TOUCH | FOLL_FORCE (a read: the mapping is not writable)
    /// | FOLL_UNLOCKABLE. Returns the pages done before a fault dropped the lock (all of
    /// them when none did).
    fn populate_vma_page_range(&mut self, map: usize, start: u64, end: u64) -> u64 {
        self.get_user_pages(map, start, end - start, false).0
    }

    /// `madvise_populate()` for MADV_POPULATE_READ, mm/madvise.c: `faultin_page_range()`
    /// over pages `[start, end)` of mapping `map` until all are done (each call returns the
    /// pages it did; `locked` is 1 again before the next).
    pub(crate) fn madvise_populate(&mut self, map: usize, start: u64, end: u64) {
        let mut start = start;
        while start < end {
            let pages = self.faultin_page_range(map, start, end);
            // The model's faults never fail, so every call does at least one page.
            start += pages.max(1);
        }
    }

    /// `faultin_page_range()`, mm/gup.c: `__get_user_pages_locked()` with FOLL_TOUCH |
    /// FOLL_HWPOISON | FOLL_UNLOCKABLE | FOLL_MADV_POPULATE, no pages array.
    fn faultin_page_range(&mut self, map: usize, start: u64, end: u64) -> u64 {
        self.get_user_pages_locked(map, start, end - start)
    }

    /// `__get_user_pages_locked()`, mm/gup.c, with FOLL_UNLOCKABLE: `__get_user_pages()`;
    /// when a fault dropped the lock, the page it stopped at is done again alone with
    /// FOLL_TRIED ("ret = __get_user_pages(mm, start, 1, flags | FOLL_TRIED, pages,
    /// locked);"), then the rest without. Returns the pages done.
    fn get_user_pages_locked(&mut self, map: usize, mut start: u64, mut nr_pages: u64) -> u64 {
        let mut pages_done = 0;
        loop {
            let (ret, locked) = self.get_user_pages(map, start, nr_pages, false);
            nr_pages -= ret;
            pages_done += ret;
            if nr_pages == 0 || locked {
                return pages_done;
            }
            start += ret;
            loop {
                cover!(self.rec, "__get_user_pages_locked: retry the page with FOLL_TRIED");
                let (ret, locked) = self.get_user_pages(map, start, 1, true);
                if !locked {
                    continue; // "goto retry"
                }
                if ret != 1 {
                    return pages_done;
                }
                break;
            }
            nr_pages -= 1;
            pages_done += 1;
            if nr_pages == 0 {
                return pages_done;
            }
            start += 1;
        }
    }

    /// `__get_user_pages()`, mm/gup.c, without a pages array: for each page of `[start,
    /// start + nr_pages)` of the mapping, `follow_page_mask()`; a page with no PTE is
    /// faulted in (`faultin_page()`) and looked up again ("goto retry"); a PMD-mapped page
    /// moves on to the end of its PMD ("page_increm = 1 + (~(start >> PAGE_SHIFT) &
    /// page_mask)"). Stops at a fault that returned VM_FAULT_RETRY (`faultin_page()`'s
    /// -EBUSY: "*locked = 0"). Returns the pages done and whether the lock is still held.
    fn get_user_pages(&mut self, map: usize, start: u64, nr_pages: u64, tried: bool) -> (u64, bool) {
        let mut i = 0;
        while i < nr_pages {
            let page = start + i;
            let area = self.mm[map].as_ref().unwrap();
            let vpn = area.vstart + page;
            // follow_page_mask(): a PMD that maps a folio, or a PTE.
            if area.pmd(vpn) == Some(Pmd::Huge) {
                cover!(self.rec, "__get_user_pages: PMD mapped: to the PMD's end");
                i += (PTRS_PER_PTE - vpn % PTRS_PER_PTE).min(nr_pages - i);
                continue;
            }
            if area.mapped(page) {
                i += 1;
                continue;
            }
            if self.faultin_page(map, page, tried) & VM_FAULT_RETRY != 0 {
                cover!(self.rec, "__get_user_pages: faultin_page: VM_FAULT_RETRY: -EBUSY");
                return (i, false);
            }
            cover!(self.rec, "__get_user_pages: faultin_page: done: look the page up again");
        }
        (i, true)
    }

    /// `faultin_page()`, mm/gup.c: `handle_mm_fault()` with FAULT_FLAG_ALLOW_RETRY |
    /// FAULT_FLAG_KILLABLE (FOLL_UNLOCKABLE), FAULT_FLAG_TRIED when `tried` (FOLL_TRIED),
    /// under the mmap_lock. Returns the fault's `vm_fault_t`.
    fn faultin_page(&mut self, map: usize, page: u64, tried: bool) -> u32 {
        let area = self.mm[map].as_ref().unwrap();
        let mut vmf = VmFault {
            map,
            vma: area.vma_of(page),
            pgoff: area.pgoff + page,
            vpn: area.vstart + page,
            tried,
            vma_lock: false,
            folio: None,
        };
        self.handle_mm_fault(&mut vmf)
    }
}
