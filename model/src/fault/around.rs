//! Fault-around (mm/memory.c `do_fault_around()`, mm/filemap.c `filemap_map_pages()` and
//! the helpers that map a folio's pages or a PMD): what a read fault maps around the
//! faulting page without I/O. Part of [`super`]'s fault path.

use super::*;

impl Model<'_> {
    /// `do_fault_around()`, mm/memory.c: `->map_pages` over the `fault_around_pages`
    /// naturally aligned virtual pages around the fault, clamped to the VMA and the page table.
    pub(super) fn do_fault_around(&mut self, vmf: &mut VmFault) -> u32 {
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
    pub(super) fn next_uptodate_folio(&mut self, xa_index: &mut u64, end_pgoff: u64) -> Option<(FolioRef, u64)> {
        let max_idx = self.isize.div_ceil(PAGE_SIZE);
        let mut i = *xa_index;
        while let Some(at) = self.cache.next_present(i, end_pgoff) {
            let folio = self.cache.folio_at(at).expect("a present page is in a folio");
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
        // The walk ends past end_pgoff.
        *xa_index = i.max(end_pgoff.saturating_add(1));
        None
    }

    /// `filemap_map_pages()`, mm/filemap.c: map the uptodate folios of
    /// `[start_pgoff, end_pgoff]` (end clamped to the last page of the file); a PMD-sized
    /// folio first found may be mapped by a PMD instead. Emits `mm_filemap_map_pages`
    /// unless no folio was found or a PMD was mapped. Decrements `mmap_miss` for each folio
    /// that mapped the faulting page (first try, no VM_SEQ_READ).
    pub(crate) fn filemap_map_pages(&mut self, vmf: &mut VmFault, start_pgoff: u64, end_pgoff: u64) -> u32 {
        if let Some(ret) = self.c_filemap_map_pages(vmf, start_pgoff, end_pgoff) {
            return ret;
        }
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
        self.trace_mm_filemap_map_pages(fd, start_pgoff, end_pgoff);
        ret
    }

    /// The `mm_filemap_map_pages` event: a fault-around of `[start_pgoff, end_pgoff]` of `fd`'s file.
    pub(crate) fn trace_mm_filemap_map_pages(&mut self, fd: usize, start_pgoff: u64, end_pgoff: u64) {
        self.rec.open_event(Trigger::FaultAround, start_pgoff, end_pgoff - start_pgoff + 1, self.op, fd as u32);
    }

    /// The page table under the PMD that holds virtual page `vpn` of the fault's mapping,
    /// for the C: its `PTRS_PER_PTE` entries, 1 where a page is mapped, into `out`.
    pub(crate) fn page_table(&self, vmf: &VmFault, vpn: u64, out: &mut Vec<u8>) {
        let area = self.mm[vmf.map].as_ref().unwrap();
        let base = align_down(vpn, PTRS_PER_PTE);
        // The part of the table the mapping covers, copied; none elsewhere.
        let (first, last) = (base.max(area.vstart), (base + PTRS_PER_PTE).min(area.vstart + area.pages));
        out.clear();
        out.resize(PTRS_PER_PTE as usize, 0);
        if first < last {
            let mapped = &area.ptes[(first - area.vstart) as usize..(last - area.vstart) as usize];
            let at = (first - base) as usize;
            for (entry, &m) in out[at..at + mapped.len()].iter_mut().zip(mapped) {
                *entry = u8::from(m);
            }
        }
    }

    /// `set_pte_range()`, mm/memory.c, as the model keeps it: virtual pages `[vpn, vpn + nr)`
    /// mapped (those of the fault's mapping: a PTE outside it has no page to map).
    pub(crate) fn set_pte_range(&mut self, vmf: &VmFault, vpn: u64, nr: u64) {
        let area = self.area(vmf);
        let end = area.vstart + area.pages;
        for v in vpn.max(area.vstart)..(vpn + nr).min(end) {
            area.set_pte(v);
        }
    }

    /// `pmd_install()`, mm/memory.c: the preallocated page table under the fault's PMD.
    pub(crate) fn pmd_install(&mut self, vmf: &VmFault) {
        let vpn = vmf.vpn;
        self.area(vmf).pmds.insert_if_none(vpn / PTRS_PER_PTE, Pmd::Table);
    }

    /// `filemap_map_pmd()`, mm/filemap.c: with no page table yet, a PMD-sized folio is
    /// mapped by `do_set_pmd()`; otherwise the preallocated page table is installed
    /// (`do_fault_around()` preallocated it). True when a PMD maps the range.
    pub(super) fn filemap_map_pmd(&mut self, vmf: &mut VmFault, folio: FolioRef) -> bool {
        let pmd = self.mm[vmf.map].as_ref().unwrap().pmd(vmf.vpn);
        if pmd == Some(Pmd::Huge) {
            return true;
        }
        if pmd.is_none() && folio.order >= HPAGE_PMD_ORDER && self.do_set_pmd(vmf, folio) == 0 {
            cover!(self.rec, "filemap_map_pmd: do_set_pmd");
            return true;
        }
        self.pmd_install(vmf);
        false
    }

    /// `do_set_pmd()`, mm/memory.c: map a PMD-order folio with one PMD entry, if THP is not
    /// disabled for the VMA (`vma_thp_disabled(..., forced_collapse = true)`: VM_NOHUGEPAGE),
    /// the VMA's start and file offset agree modulo 2 MiB and it holds the whole PMD
    /// (`thp_vma_suitable_order()`), and the PMD is still none.
    pub(crate) fn do_set_pmd(&mut self, vmf: &mut VmFault, folio: FolioRef) -> u32 {
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
        self.set_pte_range(vmf, haddr, HPAGE_PMD_NR);
        cover!(self.rec, "do_set_pmd: PMD mapped");
        0
    }

    /// `filemap_map_folio_range()`, mm/filemap.c: map `nr_pages` pages of a large folio
    /// from its page `start` at virtual page `addr`, or the whole folio when it lies inside
    /// i_size, the VMA and one page table; pages with a PTE are skipped. VM_FAULT_NOPAGE
    /// when the faulting page got its PTE here.
    pub(super) fn filemap_map_folio_range(
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
    pub(super) fn folio_within_vma(&self, vmf: &VmFault, folio: FolioRef) -> bool {
        let pgoff_vma_start = self.vma_start_pgoff(vmf);
        let vma_pglen = vmf.vma.end - vmf.vma.start;
        if folio.index < pgoff_vma_start || folio.index >= pgoff_vma_start + vma_pglen {
            return false;
        }
        let addr = self.vm_start(vmf) + (folio.index - pgoff_vma_start);
        self.vm_end(vmf) - addr >= folio.nr_pages()
    }

    /// `filemap_map_order0_folio()`, mm/filemap.c: one PTE, unless there is one.
    pub(super) fn filemap_map_order0_folio(&mut self, vmf: &mut VmFault, addr: u64) -> u32 {
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
}
