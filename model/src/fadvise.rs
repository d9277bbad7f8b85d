//! mm/fadvise.c of Linux 7.3.4: `posix_fadvise()` hints and what they do to a file's
//! readahead state and to the page cache.

use crate::coverage::cover;
use crate::input::FsKind;
use crate::model::{Model, PAGE_SHIFT};
use crate::pattern::Advice;
use crate::readahead::ReadaheadControl;
use crate::trace::PAGE_SIZE;

impl Model<'_> {
    /// `generic_fadvise()`, Linux 7.3.4 mm/fadvise.c (XFS's `xfs_file_fadvise()` only takes
    /// a lock around it; f2fs's `f2fs_file_fadvise()` sets `ra_pages = bdi->ra_pages *
    /// seq_file_ra_mul` for SEQUENTIAL, and seq_file_ra_mul defaults to MIN_RA_MUL = 2, the
    /// same as here).
    ///
    /// The hybrid runs the tree's C in its place, except for f2fs's SEQUENTIAL:
    /// `f2fs_file_fadvise()` handles it itself and returns before `generic_fadvise()`, so a
    /// tree's change to generic_fadvise() does not reach it.
    pub(crate) fn generic_fadvise(&mut self, fd: usize, offset: u64, len: u64, advice: Advice) {
        let f2fs_own = self.input.fs == FsKind::F2fs && advice == Advice::Sequential;
        if !f2fs_own && self.c_generic_fadvise(fd, offset, len, advice) {
            return;
        }
        // "Len == 0 means "as much as possible"."
        let endbyte = match offset.checked_add(len) {
            Some(end) if len != 0 && end <= i64::MAX as u64 => end - 1,
            _ => {
                cover!(self.rec, "generic_fadvise: len == 0 or past LLONG_MAX");
                i64::MAX as u64
            }
        };
        match advice {
            Advice::Normal => cover!(self.rec, "generic_fadvise: POSIX_FADV_NORMAL"),
            Advice::Random => cover!(self.rec, "generic_fadvise: POSIX_FADV_RANDOM"),
            Advice::Sequential => cover!(self.rec, "generic_fadvise: POSIX_FADV_SEQUENTIAL"),
            Advice::Willneed => cover!(self.rec, "generic_fadvise: POSIX_FADV_WILLNEED"),
            Advice::Noreuse => cover!(self.rec, "generic_fadvise: POSIX_FADV_NOREUSE"),
            Advice::Dontneed => cover!(self.rec, "generic_fadvise: POSIX_FADV_DONTNEED"),
        }
        match advice {
            Advice::Normal => {
                let file = &mut self.files[fd];
                file.ra.ra_pages = self.bdi.ra_pages;
                file.random = false;
                file.noreuse = false;
            }
            Advice::Random => self.files[fd].random = true,
            Advice::Sequential => {
                let file = &mut self.files[fd];
                file.ra.ra_pages = self.bdi.ra_pages * 2;
                file.random = false;
            }
            Advice::Willneed => {
                // "First and last PARTIAL page!"
                let start_index = offset >> PAGE_SHIFT;
                let end_index = endbyte >> PAGE_SHIFT;
                let nrpages = match (end_index - start_index).wrapping_add(1) {
                    0 => u64::MAX,
                    n => n,
                };
                self.force_page_cache_readahead(fd, start_index, nrpages);
            }
            Advice::Noreuse => self.files[fd].noreuse = true,
            Advice::Dontneed => self.fadvise_dontneed(offset, endbyte),
        }
    }

    /// `force_page_cache_readahead()`, Linux 7.3.4 mm/internal.h.
    fn force_page_cache_readahead(&mut self, fd: usize, index: u64, nr_to_read: u64) {
        let mut ractl = ReadaheadControl::new(fd, index);
        self.force_page_cache_ra(&mut ractl, nr_to_read);
    }

    /// The POSIX_FADV_DONTNEED case of `generic_fadvise()`: invalidate the folios that lie
    /// entirely in the range ("First and last FULL page!"); `mapping_try_invalidate()` →
    /// `find_lock_entries()` omits folios that begin before the start or end after the end,
    /// and folios it cannot lock: those under read I/O.
    fn fadvise_dontneed(&mut self, offset: u64, endbyte: u64) {
        let start_index = (offset + (PAGE_SIZE - 1)) >> PAGE_SHIFT;
        let mut end_index = endbyte >> PAGE_SHIFT;
        if endbyte & (PAGE_SIZE - 1) != PAGE_SIZE - 1 && endbyte != self.isize.wrapping_sub(1) {
            cover!(self.rec, "generic_fadvise: DONTNEED: partial last page");
            if end_index == 0 {
                cover!(self.rec, "generic_fadvise: DONTNEED: end_index == 0");
                return;
            }
            end_index -= 1;
        }
        if end_index < start_index {
            cover!(self.rec, "generic_fadvise: DONTNEED: end_index < start_index");
            return;
        }
        // When a folio failed to go, the kernel drains every CPU's LRU cache and invalidates
        // the range again: the model has no LRU caches, and a second pass evicts nothing
        // the first kept.
        self.mapping_try_invalidate(start_index, end_index);
    }

    /// `mapping_try_invalidate()`, Linux 7.3.4 mm/truncate.c, on the folios of
    /// `[start_index, end_index]` (inclusive): those that lie entirely in the range, are
    /// not locked (not under read I/O) and not mapped are removed. Returns how many were
    /// removed and how many `mapping_evict_folio()` refused (`*nr_failed`: the mapped
    /// ones; `find_lock_entries()` skips the others before they count).
    pub(crate) fn mapping_try_invalidate(&mut self, start_index: u64, end_index: u64) -> (u64, u64) {
        let (mut evicted, mut failed) = (0, 0);
        for folio in self.cache.folios_in(start_index, end_index.saturating_add(1)) {
            if folio.next_index() - 1 > end_index || !folio.uptodate {
                cover!(self.rec, "generic_fadvise: DONTNEED: folio kept (partial or under I/O)");
                continue;
            }
            // mapping_evict_folio(): "The refcount will be elevated if any page in the folio
            // is mapped".
            if self.folio_mapped(&folio) {
                cover!(self.rec, "generic_fadvise: DONTNEED: folio mapped: kept");
                failed += 1;
                continue;
            }
            cover!(self.rec, "generic_fadvise: DONTNEED: folio removed");
            self.cache.remove_folio(folio.index);
            evicted += 1;
        }
        (evicted, failed)
    }
}
