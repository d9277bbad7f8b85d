//! mm/readahead.c of Linux 7.3.4: the readahead state machine and the functions that
//! put folios into the page cache and hand them to the file system.
//!
//! Each function keeps its kernel name; the seed patches are switches of [`Policy`](crate::Policy) at
//! the lines they change.

mod order;

use crate::coverage::{cover, cover_cmp};
use crate::model::{Model, PAGE_SHIFT};
use crate::pagecache::FolioRef;
use crate::trace::{RaState, Submit, Trigger};
use crate::variant::AsyncAlign;

/// `struct file_ra_state` (include/linux/fs.h), Linux 7.3.4.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileRaState {
    /// Where the last window started.
    pub start: u64,
    /// Its size in pages.
    pub size: u64,
    /// Pages of it that are asynchronous: PG_readahead goes on the first of them.
    pub async_size: u64,
    /// Maximum window, from the bdi at open (or fadvise).
    pub ra_pages: u64,
    /// Folio order of the last window (`unsigned short`).
    pub order: u32,
    /// Only page faults change it: always 0 for pread.
    pub mmap_miss: u64,
    /// End of the previous read in bytes, -1 before the first.
    pub prev_pos: i64,
}

impl FileRaState {
    /// `file_ra_state_init()`, Linux 7.3.4 mm/readahead.c: a zeroed state with the bdi's
    /// `ra_pages` and `prev_pos` -1.
    pub fn file_ra_state_init(bdi_ra_pages: u64) -> Self {
        FileRaState { ra_pages: bdi_ra_pages, prev_pos: -1, ..Default::default() }
    }

    /// The state a readahead tracepoint printed (`ra`), with the `start` it does not print.
    pub fn entered(ra: &RaState, start: u64) -> Self {
        FileRaState {
            start,
            size: ra.size,
            async_size: ra.async_size,
            ra_pages: ra.ra_pages,
            order: ra.order,
            mmap_miss: ra.mmap_miss,
            prev_pos: ra.prev_pos,
        }
    }

    /// The state as the readahead tracepoints print it (`start` is not printed: 0).
    pub fn traced(&self) -> RaState {
        RaState {
            start: 0,
            size: self.size,
            async_size: self.async_size,
            order: self.order,
            ra_pages: self.ra_pages,
            mmap_miss: self.mmap_miss,
            prev_pos: self.prev_pos,
        }
    }
}

/// `struct readahead_control` (include/linux/pagemap.h), Linux 7.3.4: one call's window
/// of folios, `[index, index + nr_pages)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadaheadControl {
    /// Which `struct file` (its `f_ra`).
    pub fd: usize,
    /// `_index`.
    pub index: u64,
    /// `_nr_pages`.
    pub nr_pages: u64,
    /// Seed 000 v2: set by `page_cache_async_ra()` to tell `page_cache_ra_order()` it may
    /// shrink the window to end on a folio boundary instead of allocating small folios.
    pub may_shrink: bool,
    /// `ractl->dropbehind`: an RWF_DONTCACHE read's readahead; its folios get PG_dropbehind.
    pub dropbehind: bool,
}

impl ReadaheadControl {
    /// `DEFINE_READAHEAD(ractl, file, &file->f_ra, mapping, index)`.
    pub fn new(fd: usize, index: u64) -> Self {
        ReadaheadControl { fd, index, nr_pages: 0, may_shrink: false, dropbehind: false }
    }
}

/// Why `ra_alloc_folio()` added no folio: its `int err`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RaAllocError {
    /// "if (!folio) return -ENOMEM;" (only an armed fail_page_alloc, see
    /// [`crate::fail_page_alloc`]).
    Enomem,
    /// filemap_add_folio() found a folio in the range.
    Eexist,
}

fn round_down(x: u64, align: u64) -> u64 {
    // The kernel's round_down() for a power of two; align 0 gives 0 as "& ~(0 - 1)" does.
    x & !align.wrapping_sub(1)
}

fn round_up(x: u64, align: u64) -> u64 {
    ((x.wrapping_sub(1)) | (align - 1)).wrapping_add(1)
}

/// `ilog2()`. For 0 the kernel's runtime ilog2() gives fls(0) - 1 = -1, which
/// `min_t(unsigned int, new_order, ilog2(ra->size))` reads as UINT_MAX: no clamp.
fn ilog2(x: u64) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        63 - x.leading_zeros()
    }
}

/// `ffs()`: 1-based index of the lowest set bit, 0 for 0.
fn ffs(x: u64) -> u32 {
    if x == 0 {
        0
    } else {
        x.trailing_zeros() + 1
    }
}

/// `get_init_ra_size()`, Linux 7.3.4 mm/readahead.c: the first window for a read of
/// `size` pages: round up to a power of two, then x4 when small, x2 when medium, else max.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size()`, Linux 7.3.4 mm/readahead.c: the next window after one of
/// `ra.size` pages: x4 while small, x2 up to half the maximum, then the maximum.
pub fn get_next_ra_size(ra: &FileRaState, max: u64) -> u64 {
    let cur = ra.size;
    if cur < max / 16 {
        return 4 * cur;
    }
    if cur <= max / 2 {
        return 2 * cur;
    }
    max
}

impl Model<'_> {
    /// Records the range of `get_init_ra_size(size, max)` (coverage only).
    fn cover_init_ra_size(&mut self, size: u64, max: u64) {
        if !self.rec.covering() {
            return;
        }
        let newsize = size.max(1).next_power_of_two();
        if newsize < max / 32 {
            cover!(self.rec, "get_init_ra_size: newsize < max / 32");
        } else if newsize == max / 32 {
            cover!(self.rec, "get_init_ra_size: newsize == max / 32");
        } else if newsize < max / 4 {
            cover!(self.rec, "get_init_ra_size: max / 32 < newsize < max / 4");
        } else if newsize == max / 4 {
            cover!(self.rec, "get_init_ra_size: newsize == max / 4");
        } else {
            cover!(self.rec, "get_init_ra_size: newsize > max / 4");
        }
    }

    /// Records the range of `get_next_ra_size(ra, max)` (coverage only).
    fn cover_next_ra_size(&mut self, cur: u64, max: u64) {
        if !self.rec.covering() {
            return;
        }
        if cur < max / 16 {
            cover!(self.rec, "get_next_ra_size: cur < max / 16");
        } else if cur == max / 16 {
            cover!(self.rec, "get_next_ra_size: cur == max / 16");
        } else if cur < max / 2 {
            cover!(self.rec, "get_next_ra_size: max / 16 < cur < max / 2");
        } else if cur == max / 2 {
            cover!(self.rec, "get_next_ra_size: cur == max / 2");
        } else {
            cover!(self.rec, "get_next_ra_size: cur > max / 2");
        }
    }

    /// `ractl_max_pages()`, Linux 7.3.4 mm/readahead.c: a read larger than the readahead
    /// window may read up to the device's max I/O size (`bdi->io_pages`).
    pub(crate) fn ractl_max_pages(&mut self, ractl: &ReadaheadControl, req_size: u64) -> u64 {
        let mut max_pages = self.files[ractl.fd].ra.ra_pages;
        cover_cmp!(self.rec, "ractl_max_pages: req_size", "ra_pages", req_size, max_pages);
        cover_cmp!(self.rec, "ractl_max_pages: io_pages", "ra_pages", self.bdi.io_pages, max_pages);
        if req_size > max_pages && self.bdi.io_pages > max_pages {
            cover!(self.rec, "ractl_max_pages: req_size > ra_pages && io_pages > ra_pages: up to io_pages");
            cover_cmp!(self.rec, "ractl_max_pages: req_size", "io_pages", req_size, self.bdi.io_pages);
            max_pages = req_size.min(self.bdi.io_pages);
        }
        max_pages
    }

    /// `read_pages()`, Linux 7.3.4 mm/readahead.c: hand the folios of `ractl` to
    /// `->readahead` under a block plug, so their bios can merge into requests that are
    /// issued at `blk_finish_plug()`.
    pub(crate) fn read_pages(&mut self, ractl: &mut ReadaheadControl) {
        if ractl.nr_pages == 0 {
            cover!(self.rec, "read_pages: nr_pages == 0");
            return;
        }
        cover!(self.rec, "read_pages: ->readahead");
        self.blk_start_plug();
        // ->readahead consumes every folio (the file systems the model knows never leave
        // one behind, so read_pages()'s clean-up loop has nothing to remove).
        self.aops_readahead(ractl);
        ractl.index += ractl.nr_pages;
        ractl.nr_pages = 0;
        self.blk_finish_plug();
        self.end_io_submission();
    }

    /// `page_cache_ra_unbounded()`, Linux 7.3.4 mm/readahead.c: add `nr_to_read` folios of
    /// the minimum order from `readahead_index(ractl)`, skipping pages already cached (each
    /// skip sends the batch so far to `read_pages()`), and mark the folio at
    /// `nr_to_read - lookahead_size` with PG_readahead.
    pub(crate) fn page_cache_ra_unbounded(
        &mut self,
        ractl: &mut ReadaheadControl,
        mut nr_to_read: u64,
        lookahead_size: u64,
    ) {
        if self.c_page_cache_ra_unbounded(ractl, nr_to_read, lookahead_size) {
            return;
        }
        let start = ractl.index;
        let min_order = self.min_order();
        let min_nrpages = 1u64 << min_order;
        self.rec.submit(Submit::Unbounded { index: start, nr_to_read, lookahead_size });
        let index = round_down(start, min_nrpages);
        let mut mark = u64::MAX;
        cover_cmp!(self.rec, "page_cache_ra_unbounded: lookahead_size", "nr_to_read", lookahead_size, nr_to_read);
        if index != start {
            cover!(self.rec, "page_cache_ra_unbounded: index unaligned to min_nrpages");
        }
        if lookahead_size <= nr_to_read {
            let ra_folio_index = round_up(start + nr_to_read - lookahead_size, min_nrpages);
            mark = ra_folio_index - index;
        }
        nr_to_read += start - index;
        ractl.index = index;
        let mut i = 0;
        while i < nr_to_read {
            if self.cache.present(index + i) {
                // "Page already present?": the contiguous folios so far are read as one batch
                // before the next one starts.
                cover!(self.rec, "page_cache_ra_unbounded: page already present");
                self.read_pages(ractl);
                ractl.index += min_nrpages;
                i = ractl.index - index;
                continue;
            }
            // "folio = ractl_alloc_folio(ractl, gfp_mask, mapping_min_folio_order(mapping));":
            // the first failed allocation ends the window (the folios added so far are still
            // read below).
            if !self.ractl_alloc_folio(min_order) {
                cover!(self.rec, "page_cache_ra_unbounded: allocation failed: stop");
                self.rec.note(|| format!("unbounded: allocation at page {} failed: stop", index + i));
                break;
            }
            if self.filemap_add_folio(index + i, min_order, i == mark).is_err() {
                cover!(self.rec, "page_cache_ra_unbounded: filemap_add_folio -EEXIST");
                self.read_pages(ractl);
                ractl.index += min_nrpages;
                i = ractl.index - index;
                continue;
            }
            self.ractl_set_dropbehind(ractl, index + i);
            if i == mark {
                cover!(self.rec, "page_cache_ra_unbounded: folio added with PG_readahead");
            } else {
                cover!(self.rec, "page_cache_ra_unbounded: folio added");
            }
            ractl.nr_pages += min_nrpages;
            i += min_nrpages;
        }
        self.read_pages(ractl);
    }

    /// `do_page_cache_ra()`, Linux 7.3.4 mm/readahead.c: clamp to the page holding the
    /// last byte of the file, then `page_cache_ra_unbounded()`.
    pub(crate) fn do_page_cache_ra(
        &mut self,
        ractl: &mut ReadaheadControl,
        mut nr_to_read: u64,
        mut lookahead_size: u64,
    ) {
        let index = ractl.index;
        if self.isize == 0 {
            cover!(self.rec, "do_page_cache_ra: i_size == 0");
            return;
        }
        let end_index = (self.isize - 1) >> PAGE_SHIFT;
        if index > end_index {
            cover!(self.rec, "do_page_cache_ra: index > end_index");
            return;
        }
        if index == end_index {
            cover!(self.rec, "do_page_cache_ra: index == end_index");
        }
        // "if (nr_to_read > end_index - index)": a window that ends exactly on the last
        // page also loses its marker.
        cover_cmp!(self.rec, "do_page_cache_ra: nr_to_read", "end_index - index", nr_to_read, end_index - index);
        if nr_to_read > end_index - index {
            nr_to_read = end_index - index + 1;
            lookahead_size = 0;
        }
        self.page_cache_ra_unbounded(ractl, nr_to_read, lookahead_size);
    }

    /// `force_page_cache_ra()`, Linux 7.3.4 mm/readahead.c: read `nr_to_read` pages (at
    /// most `max(io_pages, ra_pages)`) in 2 MiB chunks, without marking any folio.
    pub(crate) fn force_page_cache_ra(&mut self, ractl: &mut ReadaheadControl, nr_to_read: u64) {
        if self.c_force_page_cache_ra(ractl, nr_to_read) {
            return;
        }
        let max_pages = self.bdi.io_pages.max(self.files[ractl.fd].ra.ra_pages);
        cover_cmp!(
            self.rec,
            "force_page_cache_ra: io_pages",
            "ra_pages",
            self.bdi.io_pages,
            self.files[ractl.fd].ra.ra_pages
        );
        cover_cmp!(self.rec, "force_page_cache_ra: nr_to_read", "max_pages", nr_to_read, max_pages);
        let mut nr_to_read = nr_to_read.min(max_pages);
        if nr_to_read == 0 {
            cover!(self.rec, "force_page_cache_ra: nr_to_read == 0");
        }
        let mut chunks = 0;
        while nr_to_read > 0 {
            let this_chunk = ((2 * 1024 * 1024) >> PAGE_SHIFT).min(nr_to_read);
            chunks += 1;
            if chunks == 2 {
                cover!(self.rec, "force_page_cache_ra: more than one chunk");
            }
            if this_chunk < (2 * 1024 * 1024) >> PAGE_SHIFT {
                cover!(self.rec, "force_page_cache_ra: chunk < 2 MiB");
            } else {
                cover!(self.rec, "force_page_cache_ra: chunk == 2 MiB");
            }
            // ractl->_index has moved past what the previous chunk read.
            self.do_page_cache_ra(ractl, this_chunk, 0);
            nr_to_read -= this_chunk;
        }
    }

    /// `page_cache_sync_ra()`, Linux 7.3.4 mm/readahead.c: the read found no folio at
    /// `readahead_index(ractl)`; start a window there (or read just what was asked).
    pub(crate) fn page_cache_sync_ra(&mut self, ractl: &mut ReadaheadControl, mut req_count: u64) {
        if self.c_page_cache_sync_ra(ractl, req_count) {
            return;
        }
        let fd = ractl.fd;
        let index = ractl.index;
        let mut do_forced_ra = self.files[fd].random;
        let ra = self.files[fd].ra;
        self.rec.open(Trigger::Sync, index, req_count, &ra, self.op, fd as u32);
        if do_forced_ra {
            cover!(self.rec, "page_cache_sync_ra: FMODE_RANDOM");
        }

        // With readahead off the read still goes through forced readahead, of one page
        // (req_count 1). blk_cgroup_congested() is never true here.
        if ra.ra_pages == 0 {
            cover!(self.rec, "page_cache_sync_ra: ra_pages == 0 forced read");
            if !self.policy.sync_ra_when_disabled {
                // 7.3.4: "req_count = 1;". Seed 001 keeps the whole request.
                cover!(self.rec, "page_cache_sync_ra: ra_pages == 0: req_count = 1");
                req_count = 1;
            } else {
                cover!(self.rec, "page_cache_sync_ra: ra_pages == 0: whole request");
            }
            do_forced_ra = true;
        }

        // "be dumb"
        if do_forced_ra {
            cover!(self.rec, "page_cache_sync_ra: do_forced_ra");
            self.rec.note(|| format!("sync: forced readahead of {req_count} pages"));
            self.force_page_cache_ra(ractl, req_count);
            self.rec.returned(&self.files[fd].ra);
            return;
        }

        let max_pages = self.ractl_max_pages(ractl, req_count);
        let prev_index = (ra.prev_pos as u64) >> PAGE_SHIFT;
        if self.rec.covering() {
            if index == 0 {
                cover!(self.rec, "page_cache_sync_ra: index == 0");
            }
            cover_cmp!(self.rec, "page_cache_sync_ra: req_count", "max_pages", req_count, max_pages);
            if ra.prev_pos == -1 {
                cover!(self.rec, "page_cache_sync_ra: prev_pos == -1");
            } else if index < prev_index {
                cover!(self.rec, "page_cache_sync_ra: index < prev_index");
            } else if index == prev_index {
                cover!(self.rec, "page_cache_sync_ra: index == prev_index");
            } else if index == prev_index + 1 {
                cover!(self.rec, "page_cache_sync_ra: index == prev_index + 1");
            } else {
                cover!(self.rec, "page_cache_sync_ra: index > prev_index + 1");
            }
        }
        // "A start of file, oversized read, or sequential cache miss"
        if index == 0 || req_count > max_pages || index.wrapping_sub(prev_index) <= 1 {
            cover!(self.rec, "page_cache_sync_ra: initial window");
            self.cover_init_ra_size(req_count, max_pages);
            let ra = &mut self.files[fd].ra;
            ra.start = index;
            ra.size = get_init_ra_size(req_count, max_pages);
            ra.async_size = if ra.size > req_count { ra.size - req_count } else { ra.size >> 1 };
            let (size, async_size) = (ra.size, ra.async_size);
            cover_cmp!(self.rec, "page_cache_sync_ra: ra->size", "req_count", size, req_count);
            self.rec.note(|| format!("sync: initial window (prev_index {prev_index}, max_pages {max_pages}): size {size} async {async_size}"));
        } else {
            // Look back through the page cache for the pages a sequential stream would have
            // left behind.
            let miss = self.page_cache_prev_miss(index - 1, max_pages);
            let mut contig_count = index.wrapping_sub(miss).wrapping_sub(1);
            cover_cmp!(self.rec, "page_cache_sync_ra: contig_count", "req_count", contig_count, req_count);
            // "Standalone, small random read. Read as is, and do not pollute the readahead state."
            if contig_count <= req_count {
                cover!(self.rec, "page_cache_sync_ra: small random read");
                self.rec.note(|| format!("sync: random read (contig {contig_count} <= req {req_count})"));
                self.do_page_cache_ra(ractl, req_count, 0);
                self.rec.returned(&self.files[fd].ra);
                return;
            }
            // "File cached from the beginning"
            if miss == u64::MAX {
                cover!(self.rec, "page_cache_sync_ra: miss == ULONG_MAX: cached from the beginning");
                contig_count *= 2;
            }
            cover_cmp!(
                self.rec,
                "page_cache_sync_ra: contig_count + req_count",
                "max_pages",
                contig_count + req_count,
                max_pages
            );
            let ra = &mut self.files[fd].ra;
            ra.start = index;
            ra.size = (contig_count + req_count).min(max_pages);
            ra.async_size = 1;
            let size = ra.size;
            self.rec.note(|| format!("sync: cached history of {contig_count} pages: size {size} async 1"));
        }
        // readit:
        let ra = &mut self.files[fd].ra;
        ra.order = 0;
        ractl.index = ra.start;
        self.page_cache_ra_order(ractl);
        self.rec.returned(&self.files[fd].ra);
    }

    /// `page_cache_async_ra()`, Linux 7.3.4 mm/readahead.c: the read reached `folio`,
    /// marked PG_readahead; push the window forward and ramp it up.
    pub(crate) fn page_cache_async_ra(&mut self, ractl: &mut ReadaheadControl, folio: FolioRef, req_count: u64) {
        if self.c_page_cache_async_ra(ractl, folio, req_count) {
            return;
        }
        let fd = ractl.fd;
        let index = ractl.index;
        // "no readahead": returns before the tracepoint and leaves PG_readahead set.
        if self.files[fd].ra.ra_pages == 0 {
            cover!(self.rec, "page_cache_async_ra: ra_pages == 0");
            return;
        }
        // folio_test_writeback(): the model only reads.
        let ra = self.files[fd].ra;
        self.rec.open(Trigger::Async, index, req_count, &ra, self.op, fd as u32);
        self.cache.clear_readahead(folio.index);

        let max_pages = self.ractl_max_pages(ractl, req_count);
        // "It's the expected callback index, assume sequential access."
        let expected = round_down((ra.start + ra.size).wrapping_sub(ra.async_size), folio.nr_pages());
        if index == expected {
            cover!(self.rec, "page_cache_async_ra: index == expected");
            self.cover_next_ra_size(ra.size, max_pages);
            let ra = &mut self.files[fd].ra;
            ra.start += ra.size;
            ra.size = ra.size.max(get_next_ra_size(ra, max_pages));
            let (start, size) = (ra.start, ra.size);
            self.rec.note(|| {
                format!("async: index {index} == expected: start {start} size {size} (max_pages {max_pages})")
            });
        } else {
            // "Hit a marked folio without valid readahead state. E.g. interleaved reads."
            cover!(self.rec, "page_cache_async_ra: index != expected");
            let start = self.page_cache_next_miss(index + 1, max_pages);
            if start == 0 {
                cover!(self.rec, "page_cache_async_ra: next miss == 0");
            } else {
                cover_cmp!(self.rec, "page_cache_async_ra: start - index", "max_pages", start - index, max_pages);
            }
            if start == 0 || start - index > max_pages {
                self.rec.note(|| format!("async: expected {expected}, next miss {start} is too far"));
                self.rec.returned(&self.files[fd].ra);
                return;
            }
            let ra = &mut self.files[fd].ra;
            ra.start = start;
            ra.size = start - index; // "old async_size"
            ra.size += req_count;
            let cur = ra.size;
            ra.size = get_next_ra_size(ra, max_pages);
            let size = ra.size;
            self.cover_next_ra_size(cur, max_pages);
            self.rec.note(|| format!("async: expected {expected}; next miss {start}: size {size}"));
        }
        // readit:
        let policy = self.policy.async_align;
        let ra = &mut self.files[fd].ra;
        ra.order += 2;
        match policy {
            AsyncAlign::Base | AsyncAlign::KeepHalf => {
                cover_cmp!(
                    self.rec,
                    "page_cache_async_ra: ra->order",
                    "ffs(max_pages) - 1",
                    ra.order,
                    ffs(max_pages).wrapping_sub(1)
                );
                let mut align = 1u64 << ra.order.min(ffs(max_pages).wrapping_sub(1));
                let end = ra.start + ra.size;
                let mut aligned_end = round_down(end, align);
                if policy == AsyncAlign::KeepHalf {
                    // Seed 000 v1: "Keep at least half of the window when aligning its end."
                    while aligned_end > ra.start && 2 * (aligned_end - ra.start) < ra.size {
                        cover!(self.rec, "page_cache_async_ra: keep half: align >>= 1");
                        align >>= 1;
                        aligned_end = round_down(end, align);
                    }
                }
                if aligned_end > ra.start {
                    if aligned_end == end {
                        cover!(self.rec, "page_cache_async_ra: aligned_end == end");
                    } else {
                        cover!(self.rec, "page_cache_async_ra: aligned_end < end: trimmed");
                    }
                    ra.size -= end - aligned_end;
                } else {
                    cover!(self.rec, "page_cache_async_ra: aligned_end <= ra->start: not trimmed");
                }
                let (order, size) = (ra.order, ra.size);
                self.rec
                    .note(|| format!("async: order {order}, align {align}: end {end} -> {aligned_end}, size {size}"));
            }
            AsyncAlign::InRaOrder => {
                // Seed 000 v2: no alignment here; page_cache_ra_order() may shrink the window.
                cover!(self.rec, "page_cache_async_ra: may_shrink");
                ractl.may_shrink = true;
            }
            AsyncAlign::Unaligned => {
                // Before 18ebe55a9236 ("terminate async readahead on natural boundary").
            }
        }
        let ra = &mut self.files[fd].ra;
        ra.async_size = ra.size;
        ractl.index = ra.start;
        self.page_cache_ra_order(ractl);
        self.rec.returned(&self.files[fd].ra);
    }

    /// The second half of ractl_alloc_folio() (the first, the allocation that may fail, is
    /// [`Model::ractl_alloc_folio`]): "if (folio && ractl->dropbehind)
    /// __folio_set_dropbehind(folio);". The kernel sets the flag before adding the folio;
    /// nothing looks at it in between, so the model sets it on the folio just added at
    /// `index`.
    fn ractl_set_dropbehind(&mut self, ractl: &ReadaheadControl, index: u64) {
        if ractl.dropbehind {
            cover!(self.rec, "ractl_alloc_folio: dropbehind");
            self.cache.set_dropbehind(index);
        }
    }

    /// `readahead_expand()`, Linux 7.3.4 mm/readahead.c: grow the window of `ractl` to
    /// cover `[new_start, new_start + new_len)` bytes with folios of the minimum order,
    /// stopping at the first cached page; pages added at the end also grow `ra->size` and
    /// `ra->async_size`.
    pub(crate) fn readahead_expand(&mut self, ractl: &mut ReadaheadControl, new_start: u64, new_len: u64) {
        let min_order = self.min_order();
        let min_nrpages = 1u64 << min_order;
        let new_index = new_start >> PAGE_SHIFT;
        // "Expand the leading edge downwards"
        while ractl.index > new_index {
            let index = ractl.index - 1;
            if self.cache.present(index) {
                cover!(self.rec, "readahead_expand: leading edge: folio present");
                return; // "Folio apparently present"
            }
            let index = round_down(index, min_nrpages);
            if self.filemap_add_folio(index, min_order, false).is_err() {
                cover!(self.rec, "readahead_expand: leading edge: -EEXIST");
                return;
            }
            self.ractl_set_dropbehind(ractl, index);
            cover!(self.rec, "readahead_expand: leading edge");
            ractl.nr_pages += min_nrpages;
            ractl.index = index;
        }
        let new_len = new_len.wrapping_add(new_start).wrapping_sub(ractl.index << PAGE_SHIFT);
        let new_nr_pages = new_len.div_ceil(1 << PAGE_SHIFT);
        // "Expand the trailing edge upwards"
        if ractl.nr_pages >= new_nr_pages {
            cover!(self.rec, "readahead_expand: window covers the range");
        }
        while ractl.nr_pages < new_nr_pages {
            let index = ractl.index + ractl.nr_pages;
            if self.cache.present(index) {
                cover!(self.rec, "readahead_expand: trailing edge: folio present");
                return;
            }
            let index = round_down(index, min_nrpages);
            if self.filemap_add_folio(index, min_order, false).is_err() {
                cover!(self.rec, "readahead_expand: trailing edge: -EEXIST");
                return;
            }
            self.ractl_set_dropbehind(ractl, index);
            cover!(self.rec, "readahead_expand: trailing edge");
            ractl.nr_pages += min_nrpages;
            let ra = &mut self.files[ractl.fd].ra;
            ra.size += min_nrpages;
            ra.async_size += min_nrpages;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ra(size: u64) -> FileRaState {
        FileRaState { size, ..Default::default() }
    }

    #[test]
    fn get_init_ra_size_quadruples_small_reads_and_caps_large_ones() {
        // 128 KiB read_ahead_kb: 32 pages.
        assert_eq!(get_init_ra_size(1, 32), 4);
        assert_eq!(get_init_ra_size(3, 32), 8);
        assert_eq!(get_init_ra_size(5, 32), 16);
        assert_eq!(get_init_ra_size(9, 32), 32);
        // A 1 MiB read with io_pages 128.
        assert_eq!(get_init_ra_size(256, 128), 128);
    }

    #[test]
    fn get_next_ra_size_ramps_up_to_the_maximum() {
        assert_eq!(get_next_ra_size(&ra(4), 128), 16);
        assert_eq!(get_next_ra_size(&ra(16), 128), 32);
        assert_eq!(get_next_ra_size(&ra(64), 128), 128);
        // Seed 000: "get_next_ra_size(64, 81) sets ra->size = 81".
        assert_eq!(get_next_ra_size(&ra(64), 81), 81);
        assert_eq!(get_next_ra_size(&ra(40), 81), 80);
    }

    #[test]
    fn kernel_bit_helpers() {
        assert_eq!(ffs(81), 1);
        assert_eq!(ffs(128), 8);
        assert_eq!(ffs(255), 1);
        assert_eq!(ilog2(56), 5);
        assert_eq!(ilog2(128), 7);
        assert_eq!(round_down(104, 64), 64);
        assert_eq!(round_up(5, 4), 8);
        assert_eq!(round_up(8, 4), 8);
        assert_eq!(round_down(7, 0), 0);
    }
}
