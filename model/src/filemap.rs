//! mm/filemap.c of Linux 7.3.4: the buffered read path (`filemap_read()`) that decides
//! when readahead runs, and the page cache lookups readahead uses.

use crate::config::IoCompletion;
use crate::coverage::cover;
use crate::model::{Model, PAGE_SHIFT};
use crate::pagecache::{Eexist, FolioRef};
use crate::readahead::ReadaheadControl;
use crate::trace::PAGE_SIZE;
use crate::xarray::{ScanEnd, XArray};

/// `FOLIO_BATCH_SIZE` (include/linux/folio_batch.h), the header's too (the hybrid's
/// `struct folio_batch`).
pub(crate) const FOLIO_BATCH_SIZE: usize = 31;

/// `struct folio_batch`: up to `FOLIO_BATCH_SIZE` folios, kept on the stack (the model
/// makes tens of thousands of them per run).
#[derive(Clone, Copy)]
pub(crate) struct FolioBatch {
    folios: [FolioRef; FOLIO_BATCH_SIZE],
    nr: usize,
}

impl FolioBatch {
    pub(crate) fn new() -> Self {
        FolioBatch {
            folios: [FolioRef { index: 0, order: 0, readahead: false, uptodate: false }; FOLIO_BATCH_SIZE],
            nr: 0,
        }
    }

    /// `folio_batch_add()`: returns the space left.
    pub(crate) fn add(&mut self, folio: FolioRef) -> usize {
        self.folios[self.nr] = folio;
        self.nr += 1;
        FOLIO_BATCH_SIZE - self.nr
    }

    pub(crate) fn as_slice(&self) -> &[FolioRef] {
        &self.folios[..self.nr]
    }
}

/// The coverage id that marks an RWF_NOWAIT read whose recorded return the model cannot
/// follow: the kernel's read stopped before a folio the model finds uptodate (one whose
/// read the model took as complete, the kernel met still locked), or went past where the
/// model must stop. Where the kernel went on past a folio its own readahead had just
/// submitted, the model follows it (`filemap_update_page()`); this is the rest.
pub const NOWAIT_RACE: &str =
    "filemap_read: IOCB_NOWAIT: the kernel returned what the model cannot follow: the kernel races";

/// Why `filemap_get_pages()` returned no folios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GetPagesError {
    /// `AOP_TRUNCATED_PAGE`: look again from the same index.
    Retry,
    /// `-EAGAIN` under IOCB_NOWAIT: the read would have to wait for (or start) a read of a
    /// folio; `filemap_read()` returns what it has read so far.
    Again,
    /// -ENOMEM: filemap_create_folio() could not allocate its folio (only an
    /// `Op::FailAlloc` makes it fail); the read ends ("if (error < 0) break;").
    Enomem,
}

impl Model<'_> {
    /// `filemap_add_folio()`, Linux 7.3.4 mm/filemap.c: insert a new, locked, not uptodate
    /// folio; the `mm_filemap_add_to_page_cache` tracepoint fires on success.
    ///
    /// The folio's memory: the n-th folio added gets the n-th measured pfn
    /// (`Input::folio_pfns`), or where `ModelConfig::folio_memory` puts it once the
    /// measured ones run out (see [`crate::FolioMemory`]).
    pub(crate) fn filemap_add_folio(&mut self, index: u64, order: u32, readahead: bool) -> Result<(), Eexist> {
        let n = self.nr_added;
        let input = self.input;
        let measured = &input.folio_pfns;
        let pfn = match measured.get(n) {
            Some(&pfn) => pfn,
            None => self.config.folio_memory.assumed_pfn(n as u64, index),
        };
        self.cache.add_folio(index, order, readahead, pfn)?;
        self.nr_added += 1;
        self.rec.folio(index, order);
        if n == measured.len() && n > 0 {
            let memory = self.config.folio_memory;
            self.rec.note(|| format!("folio_pfns: the kernel added {n} folios; this one (index {index}, order {order}) and those after it are placed as {memory:?}"));
        }
        Ok(())
    }

    /// `page_cache_next_miss()`, Linux 7.3.4 mm/filemap.c: the first index in
    /// `[index, index + max_scan)` whose slot the xarray walk finds empty, else
    /// `index + max_scan` (the first `xas_next()` of a fresh xa_state loads `index` itself).
    /// Started inside a large folio, the walk reports a hole late or steps over it: see
    /// [`crate::xarray`].
    pub(crate) fn page_cache_next_miss(&mut self, index: u64, max_scan: u64) -> u64 {
        let (miss, end) = XArray::new(&self.cache).next_miss(index, max_scan);
        match end {
            ScanEnd::Miss => cover!(self.rec, "page_cache_next_miss: miss"),
            ScanEnd::Wrapped => cover!(self.rec, "page_cache_next_miss: wrapped to 0"),
            ScanEnd::MaxScan => cover!(self.rec, "page_cache_next_miss: max_scan without a miss"),
        }
        let cache = &self.cache;
        self.rec.note(|| {
            let hole = (index..index.saturating_add(max_scan)).find(|&i| !cache.present(i)).unwrap_or(index.saturating_add(max_scan));
            if hole == miss || end == ScanEnd::Wrapped {
                format!("page_cache_next_miss({index}, {max_scan}) = {miss}")
            } else {
                format!("page_cache_next_miss({index}, {max_scan}) = {miss}, not the first hole {hole}: the xarray walk started inside a large folio")
            }
        });
        miss
    }

    /// `page_cache_prev_miss()`, Linux 7.3.4 mm/filemap.c: the highest index in
    /// `(index - max_scan, index]` whose slot the xarray walk finds empty, else
    /// `index - max_scan`; `ULONG_MAX` when the walk runs below 0. Started inside a large
    /// folio, the walk looks below the index it reports: see [`crate::xarray`].
    pub(crate) fn page_cache_prev_miss(&mut self, index: u64, max_scan: u64) -> u64 {
        let (miss, end) = XArray::new(&self.cache).prev_miss(index, max_scan);
        match end {
            ScanEnd::Miss => cover!(self.rec, "page_cache_prev_miss: miss"),
            ScanEnd::Wrapped => cover!(self.rec, "page_cache_prev_miss: below 0: ULONG_MAX"),
            ScanEnd::MaxScan => cover!(self.rec, "page_cache_prev_miss: max_scan without a miss"),
        }
        let cache = &self.cache;
        self.rec.note(|| {
            let low = index.checked_sub(max_scan);
            let hole = (low.map_or(0, |l| l + 1)..=index).rev().find(|&i| !cache.present(i)).or(low).unwrap_or(u64::MAX);
            if hole == miss {
                format!("page_cache_prev_miss({index}, {max_scan}) = {miss}")
            } else {
                format!("page_cache_prev_miss({index}, {max_scan}) = {miss}, not the last hole {hole}: the xarray walk started inside a large folio")
            }
        });
        miss
    }

    /// `filemap_get_read_batch()`, Linux 7.3.4 mm/filemap.c: the folios from `index`
    /// on, stopping after the first one that is not uptodate or has PG_readahead, after
    /// the one that holds `max`, at a missing page, or after `FOLIO_BATCH_SIZE` folios.
    fn filemap_get_read_batch(&mut self, fd: usize, index: u64, max: u64, batch: &mut FolioBatch) {
        batch.nr = 0;
        if self.c_filemap_get_read_batch(fd, index, max, batch) {
            return;
        }
        if index > max {
            cover!(self.rec, "filemap_get_read_batch: index > max");
            return;
        }
        let mut i = index;
        while let Some(folio) = self.cache.folio_at(i) {
            if batch.add(folio) == 0 || !folio.uptodate || folio.readahead {
                if self.rec.covering() {
                    if batch.nr == FOLIO_BATCH_SIZE {
                        cover!(self.rec, "filemap_get_read_batch: batch full");
                    }
                    if !folio.uptodate {
                        cover!(self.rec, "filemap_get_read_batch: folio not uptodate");
                    }
                    if folio.readahead {
                        cover!(self.rec, "filemap_get_read_batch: PG_readahead");
                    }
                }
                return;
            }
            // "xas_advance(&xas, folio_next_index(folio) - 1);": the walk moves to the folio's
            // last page and stops once that is at or past max.
            if folio.next_index() > max {
                cover!(self.rec, "filemap_get_read_batch: folio holds max");
                return;
            }
            i = folio.next_index();
        }
        cover!(self.rec, "filemap_get_read_batch: no folio");
    }

    /// `filemap_create_folio()`, Linux 7.3.4 mm/filemap.c: readahead left no folio at
    /// the read position; add one of the minimum order and read it with `->read_folio`.
    fn filemap_create_folio(&mut self, pos: u64, batch: &mut FolioBatch) -> Result<(), GetPagesError> {
        // "if (iocb->ki_flags & (IOCB_NOWAIT | IOCB_WAITQ)) return -EAGAIN;"
        if self.ki_flags.nowait {
            cover!(self.rec, "filemap_create_folio: IOCB_NOWAIT: -EAGAIN");
            return Err(GetPagesError::Again);
        }
        let min_order = self.min_order();
        let index = (pos >> (PAGE_SHIFT + min_order)) << min_order;
        // "folio = filemap_alloc_folio(mapping_gfp_mask(mapping), min_order, NULL);", -ENOMEM
        // when it fails.
        if !self.alloc_folio(min_order) {
            cover!(self.rec, "filemap_create_folio: allocation failed: -ENOMEM");
            return Err(GetPagesError::Enomem);
        }
        if self.filemap_add_folio(index, min_order, false).is_err() {
            cover!(self.rec, "filemap_create_folio: -EEXIST");
            return Err(GetPagesError::Retry); // -EEXIST becomes AOP_TRUNCATED_PAGE
        }
        // "if (iocb->ki_flags & IOCB_DONTCACHE) __folio_set_dropbehind(folio);" (before the
        // add in the kernel; nothing reads the flag in between).
        if self.ki_flags.dontcache {
            cover!(self.rec, "filemap_create_folio: IOCB_DONTCACHE: dropbehind");
            self.cache.set_dropbehind(index);
        }
        cover!(self.rec, "filemap_create_folio: ->read_folio");
        let folio = self.cache.folio_at(index).unwrap();
        self.filemap_read_folio(folio);
        batch.nr = 0;
        batch.add(self.cache.folio_at(index).unwrap());
        Ok(())
    }

    /// `filemap_read_folio()`, Linux 7.3.4 mm/filemap.c: `->read_folio`, then wait for
    /// the folio to be unlocked (so it is uptodate when this returns).
    fn filemap_read_folio(&mut self, folio: FolioRef) {
        self.aops_read_folio(folio);
        self.end_io_submission();
        self.folio_wait_locked(folio.index);
    }

    /// The reader sleeps until the read of the folio at `head` has completed.
    pub(crate) fn folio_wait_locked(&mut self, head: u64) {
        self.cache.set_uptodate(head);
    }

    /// `filemap_update_page()`, Linux 7.3.4 mm/filemap.c, for a folio that is not
    /// uptodate: it is locked by its read, so the reader drops the folio, waits for its
    /// lock and returns `AOP_TRUNCATED_PAGE`, to look it up again: the usual wait for a
    /// readahead submitted earlier. The model's reads always succeed, so the
    /// `->read_folio` retry after locking is never needed.
    ///
    /// Under IOCB_NOWAIT, "if (!folio_trylock(folio)) {" fails with -EAGAIN rather than
    /// wait (the invalidate lock's trylock before it has no other taker in the guest).
    /// Whether the folio is still locked by its read is the device's doing: where the
    /// guest recorded what the read returned ([`crate::VmSettings::nowait_returned`]) and
    /// the kernel's read went past the folio's first byte, its read had completed when the
    /// kernel looked (the trylock took an unlocked, uptodate folio), and the model
    /// completes it and looks again, as [`Model::folio_wait_locked`] does for a read that
    /// waits; otherwise (no record: a read in flight for the whole system call, as
    /// everywhere in the model) -EAGAIN.
    fn filemap_update_page(&mut self, folio: FolioRef) -> GetPagesError {
        if self.ki_flags.nowait {
            if !self.read_done_at_trylock(folio.index) {
                cover!(self.rec, "filemap_update_page: IOCB_NOWAIT, folio locked: -EAGAIN");
                return GetPagesError::Again;
            }
            cover!(self.rec, "filemap_update_page: IOCB_NOWAIT, the kernel's read went on: folio uptodate");
        }
        self.folio_wait_locked(folio.index);
        GetPagesError::Retry
    }

    /// Whether a reader's "folio_trylock(folio)" of the folio at `head`, locked by its read,
    /// takes it ([`Model::filemap_update_page`]): only under IOCB_NOWAIT, where the guest
    /// recorded that the kernel's read went past the folio's first byte.
    pub(crate) fn read_done_at_trylock(&self, head: u64) -> bool {
        self.ki_flags.nowait && self.nowait_end().is_some_and(|end| end > head << PAGE_SHIFT)
    }

    /// Where the kernel's RWF_NOWAIT read of the current op ended (its offset plus the
    /// bytes the guest recorded it returned); `None` without a record.
    pub(crate) fn nowait_end(&self) -> Option<u64> {
        let returned = self.input.vm.nowait_returned.iter().find(|r| r.op == self.op)?;
        match self.input.ops.get(self.op)? {
            crate::Op::ReadWith { offset, .. } => Some(offset + returned.bytes),
            _ => None,
        }
    }

    /// `filemap_readahead()`, Linux 7.3.4 mm/filemap.c: the batch ended at a folio with
    /// PG_readahead: `page_cache_async_ra()` with `req_count = last_index - folio->index`.
    fn filemap_readahead(&mut self, fd: usize, folio: FolioRef, last_index: u64) {
        let mut ractl = ReadaheadControl::new(fd, folio.index);
        // "if (iocb->ki_flags & IOCB_DONTCACHE) ractl.dropbehind = 1;"
        ractl.dropbehind = self.ki_flags.dontcache;
        self.page_cache_async_ra(&mut ractl, folio, last_index - folio.index);
    }

    /// `filemap_get_pages()`, Linux 7.3.4 mm/filemap.c: the folios for the next part of a
    /// read at `pos` with `count` bytes left, starting readahead on the way, into `batch`.
    /// `need_uptodate` (a splice's, not a read's) is the C's: the port's
    /// `filemap_update_page()` does not look at partly uptodate folios.
    pub(crate) fn filemap_get_pages(
        &mut self,
        fd: usize,
        pos: u64,
        count: u64,
        batch: &mut FolioBatch,
        need_uptodate: bool,
    ) -> Result<(), GetPagesError> {
        if let Some(got) = self.c_filemap_get_pages(fd, pos, count, batch, need_uptodate) {
            return got;
        }
        let index = pos >> PAGE_SHIFT;
        // "last_index" is the index of the folio beyond the end of the read.
        let min_nrbytes = PAGE_SIZE << self.min_order();
        let last_index = ((pos + count).div_ceil(min_nrbytes) * min_nrbytes) >> PAGE_SHIFT;
        self.filemap_get_read_batch(fd, index, last_index - 1, batch);
        if batch.nr == 0 {
            cover!(self.rec, "filemap_get_pages: batch empty: page_cache_sync_ra");
            let mut ractl = ReadaheadControl::new(fd, index);
            // IOCB_NOWAIT runs this under memalloc_noio_save(), which changes only how
            // allocations reclaim; "if (iocb->ki_flags & IOCB_DONTCACHE) ractl.dropbehind = 1;"
            ractl.dropbehind = self.ki_flags.dontcache;
            self.page_cache_sync_ra(&mut ractl, last_index - index);
            self.filemap_get_read_batch(fd, index, last_index - 1, batch);
        }
        if batch.nr == 0 {
            cover!(self.rec, "filemap_get_pages: still empty: filemap_create_folio");
            return self.filemap_create_folio(pos, batch);
        }
        let folio = batch.folios[batch.nr - 1];
        if folio.readahead {
            cover!(self.rec, "filemap_get_pages: PG_readahead: filemap_readahead");
            self.filemap_readahead(fd, folio, last_index);
        }
        if !folio.uptodate {
            if batch.nr > 1 {
                cover!(self.rec, "filemap_get_pages: not uptodate, after others: -EAGAIN");
                // -EAGAIN: return the uptodate folios before it; the next call starts at it.
                batch.nr -= 1;
                return Ok(());
            }
            // Alone: wait for it. With one folio in the batch, "--fbatch->nr" leaves none
            // and AOP_TRUNCATED_PAGE sends filemap_get_pages() back to "retry".
            cover!(self.rec, "filemap_get_pages: not uptodate, alone: filemap_update_page");
            return Err(self.filemap_update_page(folio));
        }
        cover!(self.rec, "filemap_get_pages: uptodate");
        Ok(())
    }

    /// `filemap_read()`, Linux 7.3.4 mm/filemap.c: `pread(fd, len, pos)` through the page
    /// cache. Returns the bytes read. `ra->prev_pos` becomes the end of what was read.
    pub(crate) fn filemap_read(&mut self, fd: usize, pos: u64, len: u64) -> u64 {
        if let Some(read) = self.c_filemap_read(fd, pos, len) {
            return read;
        }
        if len == 0 {
            cover!(self.rec, "filemap_read: count == 0");
            return 0; // generic_file_read_iter(): "if (!iov_iter_count(iter)) return 0;"
        }
        // "iov_iter_truncate(iter, inode->i_sb->s_maxbytes - iocb->ki_pos)": each file
        // system's own (crate::sb).
        let s_maxbytes = crate::sb::s_maxbytes(self.input.fs);
        if pos >= s_maxbytes {
            cover!(self.rec, "filemap_read: pos >= s_maxbytes");
            return 0;
        }
        let mut ki_pos = pos;
        let mut count = len.min(s_maxbytes - pos);
        let mut last_pos = self.files[fd].ra.prev_pos;
        let mut already_read = 0;
        let mut batch = FolioBatch::new();
        loop {
            if ki_pos >= self.isize {
                cover!(self.rec, "filemap_read: ki_pos >= i_size");
                break;
            }
            match self.filemap_get_pages(fd, ki_pos, count, &mut batch, false) {
                Ok(()) => {}
                Err(GetPagesError::Retry) => {
                    cover!(self.rec, "filemap_read: AOP_TRUNCATED_PAGE: retry");
                    continue; // filemap_get_pages()'s "goto retry"
                }
                Err(GetPagesError::Again) => {
                    cover!(self.rec, "filemap_read: -EAGAIN");
                    break; // "if (error < 0) break;"
                }
                // "if (error < 0) break;": the read returns what it has (or the error).
                Err(GetPagesError::Enomem) => break,
            };
            if self.rec.covering() {
                if self.isize < ki_pos + count {
                    cover!(self.rec, "filemap_read: read ends at i_size");
                } else {
                    cover!(self.rec, "filemap_read: read ends in i_size");
                }
            }
            let end_offset = self.isize.min(ki_pos + count);
            for &folio in batch.as_slice() {
                let fpos = folio.index << PAGE_SHIFT;
                let fsize = PAGE_SIZE << folio.order;
                if end_offset < fpos {
                    cover!(self.rec, "filemap_read: end_offset < folio");
                    break;
                }
                let offset = ki_pos & (fsize - 1);
                let bytes = (end_offset - ki_pos).min(fsize - offset);
                already_read += bytes;
                ki_pos += bytes;
                count -= bytes;
                last_pos = ki_pos as i64;
            }
            // put_folios: every folio of the batch, copied from or not.
            for &folio in batch.as_slice() {
                self.filemap_end_dropbehind_read(folio);
            }
            if count == 0 || ki_pos >= self.isize {
                break;
            }
        }
        self.files[fd].ra.prev_pos = last_pos;
        already_read
    }

    /// `filemap_end_dropbehind_read()`, Linux 7.3.4 mm/filemap.c, for every folio a read
    /// copied from, whatever the read's own flags: a folio with PG_dropbehind (an
    /// RWF_DONTCACHE read brought it in) leaves the page cache. It is clean, not under
    /// writeback, and unlocked (uptodate, in the batch), so "folio_trylock()" succeeds and
    /// `filemap_end_dropbehind()` clears the flag; the scenario parser refuses RWF_DONTCACHE
    /// in a scenario with mappings, so "!folio_mapped(folio)" holds and
    /// `folio_unmap_invalidate()` removes it (`filemap_release_folio()` frees a clean
    /// folio's private state).
    fn filemap_end_dropbehind_read(&mut self, folio: FolioRef) {
        if !self.cache.test_dropbehind(folio.index) {
            return;
        }
        if self.cache.test_clear_dropbehind(folio.index) {
            cover!(self.rec, "filemap_end_dropbehind_read: dropbehind: removed");
            self.cache.remove_folio(folio.index);
        }
    }

    /// After `->readahead` or `->read_folio` submitted the reads of `self.io_folios`:
    /// when do they complete? See [`IoCompletion`].
    pub(crate) fn end_io_submission(&mut self) {
        match self.config.io_completion {
            IoCompletion::AtIssue => {
                for &head in &self.io_folios {
                    self.cache.set_uptodate(head);
                }
            }
            IoCompletion::BeforeNextOp => self.inflight.extend_from_slice(&self.io_folios),
            IoCompletion::WhenWaited => {}
        }
        self.io_folios.clear();
    }
}
