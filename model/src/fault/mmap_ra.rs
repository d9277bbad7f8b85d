//! The fault path's readahead and locking (mm/filemap.c `do_sync_mmap_readahead()`,
//! `do_async_mmap_readahead()`, `lock_folio_maybe_drop_mmap()`, mm/internal.h
//! `maybe_unlock_mmap_for_io()`): what a read fault asks of readahead, and when it drops
//! the fault lock. Part of [`super`]'s fault path.

use super::*;

impl Model<'_> {
    /// `maybe_unlock_mmap_for_io()`, mm/internal.h: on a first try that may retry
    /// (FAULT_FLAG_ALLOW_RETRY without FAULT_FLAG_TRIED), pin the file and drop the fault
    /// lock (VMA lock or mmap_lock); the fault then ends in VM_FAULT_RETRY.
    pub(super) fn maybe_unlock_mmap_for_io(&mut self, vmf: &VmFault, fpin: bool) -> bool {
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
    pub(super) fn woken_with_other_requests_in_flight(&self, head: u64) -> bool {
        // The requests (start sector, sectors) that read some of the folio at `index`.
        let requests_of = |index: u64| -> Vec<(u64, u64)> {
            let pages = self.cache.folio_at(index).map_or(1, |f| 1u64 << f.order);
            let sectors: Vec<u64> = (index..index + pages)
                .filter_map(|i| self.layout.block(i * PAGE_SIZE / BLOCK_SIZE))
                .map(|b| b * BLOCK_SIZE / SECTOR_SIZE)
                .collect();
            // Reads in flight were issued by the current system call (each ends with every
            // read complete: Touches::WaitIdle), so by its windows.
            let mut found: Vec<(u64, u64)> = Vec::new();
            for &s in &sectors {
                self.rec.op_requests.holding(s, &mut found);
            }
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
    pub(super) fn lock_folio_maybe_drop_mmap(&mut self, vmf: &VmFault, folio: FolioRef, fpin: bool) -> bool {
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
    pub(super) fn do_sync_mmap_readahead(&mut self, vmf: &VmFault) -> bool {
        if let Some(fpin) = self.c_do_sync_mmap_readahead(vmf) {
            return fpin;
        }
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
    pub(super) fn exec_read_around(&mut self, vmf: &VmFault, fpin: bool) -> bool {
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
    pub(super) fn do_async_mmap_readahead(&mut self, vmf: &VmFault, folio: FolioRef) -> bool {
        if let Some(fpin) = self.c_do_async_mmap_readahead(vmf, folio) {
            return fpin;
        }
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
    pub(super) fn filemap_get_folio_for_mmap(&mut self, index: u64) -> (FolioRef, bool) {
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
}
