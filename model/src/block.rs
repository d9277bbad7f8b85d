//! block/ of Linux 7.3.4: from the bios a file system builds (bio.c: `bio_add_folio()`
//! merging physically contiguous folios into one bio_vec) to the requests the device sees
//! (`block_rq_issue`): splitting to the queue limits (blk-merge.c), merging into the
//! plugged request (blk_attempt_plug_merge), and issue at `blk_finish_plug()`.
//!
//! Segments are counted on physical addresses, as the kernel does: each folio's comes
//! from `Input::folio_pfns` or the [`crate::FolioMemory`] assumption.
//!
//! Requests form in the plug (`blk_attempt_plug_merge()`) and are issued when it is
//! flushed. With no I/O scheduler (`none`, which radiff's guests set unless a scenario
//! asks for another) they are issued in the order they were made. With `mq-deadline`
//! (the kernel's default for a disk with one hardware queue) a flushed batch is inserted
//! into the scheduler and dispatched from the last dispatched read's position upward, then
//! from its oldest request: see [`deadline_dispatch_order`]. The model knows that position
//! only from the reads it issues itself (from sector 0): the file system's own reads (an
//! inode at open, f2fs's node pages) move it too, unseen. The elevator's own merges
//! (`dd_insert_request()`'s insert merge) add nothing: one reader that plugs each batch
//! leaves it nothing the plug did not merge. The model also assumes one device per plug,
//! no `chunk_sectors`, no integrity, no inline encryption, `nomerges` 0, no Xen, no
//! KMSAN, SPARSEMEM_VMEMMAP (x86_64), page cache folios that are not ZONE_DEVICE memory,
//! and enough tags that no submission sleeps. Every bio_vec starts page aligned and is a multiple of 4 KiB long,
//! so `dma_alignment` (at most 4095) never matters: neither `bio_split_io_at()`'s
//! "-EINVAL" nor `bio_may_need_split()`'s alignment test can fire.

mod split;
pub use split::*;

use crate::input::QueueLimits;
use crate::model::Model;
use crate::trace::{Request, PAGE_SIZE, SECTOR_SIZE};

/// `BIO_MAX_VECS` (include/linux/bio.h).
pub const BIO_MAX_VECS: u64 = 256;

/// `BIO_INLINE_VECS` (block/bio.c): bios of up to this many bio_vecs keep them inline.
const BIO_INLINE_VECS: u64 = 4;

/// `BIO_MAX_SIZE` (include/linux/blk_types.h): UINT_MAX, the largest `bi_size`.
pub const BIO_MAX_SIZE: u64 = u32::MAX as u64;

/// `BLK_SEG_BOUNDARY_MASK` (include/linux/blkdev.h): the default `seg_boundary_mask`.
pub const BLK_SEG_BOUNDARY_MASK: u64 = 0xFFFF_FFFF;

/// `BLK_MAX_SEGMENT_SIZE` (include/linux/blkdev.h): the default `max_segment_size`.
const BLK_MAX_SEGMENT_SIZE: u64 = 65536;

/// `PAGE_MASK`.
const PAGE_MASK: u64 = !(PAGE_SIZE - 1);

/// `BLK_MAX_REQUEST_COUNT` (block/blk.h).
const BLK_MAX_REQUEST_COUNT: usize = 32;
/// `BLK_PLUG_FLUSH_SIZE` (block/blk.h).
const BLK_PLUG_FLUSH_SIZE: u64 = 128 * 1024;

/// `bio_max_segs()` (include/linux/bio.h): "min(nr_segs, BIO_MAX_VECS)".
pub fn bio_max_segs(nr_segs: u64) -> u64 {
    nr_segs.min(BIO_MAX_VECS)
}

/// `biovec_slab(nr_vecs)->nr_vecs` (block/bio.c): the slab a bio's bio_vecs come from
/// when there are more than `BIO_INLINE_VECS` ("biovec-16", "-64", "-128", "-max").
fn biovec_slab(nr_vecs: u64) -> u64 {
    match nr_vecs {
        0..=16 => 16,
        17..=64 => 64,
        65..=128 => 128,
        _ => BIO_MAX_VECS,
    }
}

/// The queue limits the split and merge code reads (`struct queue_limits`), in bytes and
/// sectors as the kernel keeps them, made from what sysfs showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `max_sectors` (max_sectors_kb * 2).
    pub max_sectors: u64,
    pub max_segments: u64,
    pub max_segment_size: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub virt_boundary_mask: u64,
    pub seg_boundary_mask: u64,
    /// `max_fast_segment_size`: "min_t(unsigned int, seg_size, PAGE_SIZE)" in blk_validate_limits().
    pub max_fast_segment_size: u64,
}

impl Limits {
    /// From sysfs values; zeroes (an unset field) get the kernel's defaults, as
    /// `blk_validate_limits()` gives them.
    pub fn from_queue(q: &QueueLimits) -> Self {
        let logical_block_size = q.logical_block_size.max(512);
        let physical_block_size = q.physical_block_size.max(logical_block_size);
        // BLK_DEF_MAX_SECTORS_CAP is 2560 sectors.
        let max_sectors =
            if q.max_sectors_kb > 0 { q.max_sectors_kb * 2 } else { (q.max_hw_sectors_kb * 2).clamp(8, 2560) };
        let max_segments = if q.max_segments > 0 { q.max_segments } else { 128 };
        let max_segment_size = match q.max_segment_size {
            0 if q.virt_boundary_mask != 0 => u32::MAX as u64,
            0 => BLK_MAX_SEGMENT_SIZE,
            n => n,
        };
        // "if (!lim->seg_boundary_mask) lim->seg_boundary_mask = BLK_SEG_BOUNDARY_MASK;"
        let seg_boundary_mask = if q.seg_boundary_mask == 0 { BLK_SEG_BOUNDARY_MASK } else { q.seg_boundary_mask };
        let seg_size = if seg_boundary_mask > max_segment_size - 1 { max_segment_size } else { seg_boundary_mask + 1 };
        Limits {
            max_sectors,
            max_segments,
            max_segment_size,
            logical_block_size,
            physical_block_size,
            virt_boundary_mask: q.virt_boundary_mask,
            seg_boundary_mask,
            max_fast_segment_size: seg_size.min(PAGE_SIZE),
        }
    }
}

/// A `struct bio_vec`: `len` bytes of physically contiguous memory starting `offset`
/// bytes after the start of the page at physical address `page` (`bv_page`, as
/// `page_to_phys()` gives it). `bio_add_folio()` makes `offset` less than a page and
/// merging only grows `len`; the rest of a bio_vec split in the middle is what
/// `mp_bvec_iter_bvec()` shows, the same page with the bytes already done added to
/// `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bvec {
    pub page: u64,
    pub offset: u64,
    pub len: u64,
}

impl Bvec {
    /// `bvec_phys()` (include/linux/bvec.h): "page_to_phys(bvec->bv_page) + bvec->bv_offset".
    pub fn phys(&self) -> u64 {
        self.page + self.offset
    }
}

/// `bvec_try_merge_page()`, Linux 7.3.4 block/bio.c: append `len` bytes at `off` into the
/// page at physical address `page` to `bv` if they start where `bv` ends in physical
/// memory ("if (vec_end_addr + 1 != page_addr + off) return false;"). Of its other
/// conditions, `xen_biovec_phys_mergeable()` and CONFIG_KMSAN do not apply, and when the
/// two are in different pages, "bv->bv_page + bv_end / PAGE_SIZE != page + off / PAGE_SIZE"
/// compares `struct page` pointers, which with SPARSEMEM_VMEMMAP is pfn arithmetic: it
/// holds whenever the addresses meet.
pub fn bvec_try_merge_page(bv: &mut Bvec, page: u64, len: u64, off: u64) -> bool {
    let bv_end = bv.offset + bv.len;
    let vec_end_addr = bv.page + bv_end - 1;
    let page_addr = page;
    if vec_end_addr + 1 != page_addr + off {
        return false;
    }
    if (vec_end_addr & PAGE_MASK) != ((page_addr + off) & PAGE_MASK)
        && bv.page / PAGE_SIZE + bv_end / PAGE_SIZE != page / PAGE_SIZE + off / PAGE_SIZE
    {
        return false;
    }
    bv.len += len;
    true
}

/// A read bio as a file system builds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bio {
    /// `bi_iter.bi_sector`.
    pub sector: u64,
    pub bvecs: Vec<Bvec>,
    /// `bi_max_vecs`.
    pub max_vecs: u64,
    /// `bi_iter.bi_size`.
    pub size: u64,
    /// REQ_RAHEAD.
    pub rahead: bool,
    /// REQ_NOMERGE: set on the front part of a split.
    pub nomerge: bool,
    /// REQ_SYNC: a direct read's bio (iomap_dio_bio_iter(): "bio_opf = REQ_SYNC | REQ_IDLE").
    pub sync: bool,
}

impl Bio {
    /// `bio_alloc_bioset()`, Linux 7.3.4 block/bio.c, for a read at `sector` with room for
    /// `nr_vecs` bio_vecs (callers pass `bio_max_segs()` of what they need, as the file
    /// systems do): up to `BIO_INLINE_VECS` are inline; more come from the smallest
    /// biovec slab that holds them, and the bio gets all of it ("Upgrade nr_vecs to take
    /// full advantage of the allocation."). Allocations do not fail here.
    pub fn new(sector: u64, nr_vecs: u64, rahead: bool) -> Self {
        let nr_vecs = nr_vecs.clamp(1, BIO_MAX_VECS);
        let max_vecs = if nr_vecs > BIO_INLINE_VECS { biovec_slab(nr_vecs) } else { nr_vecs };
        Bio { sector, bvecs: Vec::new(), max_vecs, size: 0, rahead, nomerge: false, sync: false }
    }

    /// `bi_iter.bi_size`.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// `bio_end_sector()`.
    pub fn end_sector(&self) -> u64 {
        self.sector + self.size / SECTOR_SIZE
    }

    /// `bio_add_page()`, Linux 7.3.4 block/bio.c: `len` bytes at `off` into the page at
    /// physical address `page`, merged into the last bio_vec when they continue it in
    /// physical memory (`bvec_try_merge_page()`, tried even when the bio is full), else a
    /// new bio_vec if there is room ("if (bio->bi_vcnt >= bio->bi_max_vecs) return 0;").
    /// Page cache pages are never ZONE_DEVICE, so the pgmap checks pass.
    pub fn bio_add_page(&mut self, page: u64, len: u64, off: u64) -> bool {
        if len == 0 || self.size > BIO_MAX_SIZE - len {
            return false;
        }
        if let Some(bv) = self.bvecs.last_mut() {
            if bvec_try_merge_page(bv, page, len, off) {
                self.size += len;
                return true;
            }
        }
        if self.bvecs.len() as u64 >= self.max_vecs {
            return false;
        }
        self.__bio_add_page(page, len, off);
        true
    }

    /// `__bio_add_page()`: a new bio_vec, room or not.
    pub fn __bio_add_page(&mut self, page: u64, len: u64, off: u64) {
        self.bvecs.push(Bvec { page, offset: off, len });
        self.size += len;
    }

    /// `bio_add_folio()`: `len` bytes from byte `off` of the folio whose first byte is at
    /// physical address `folio`: "bio_add_page(bio, folio_page(folio, nr), len, off % PAGE_SIZE)".
    pub fn bio_add_folio(&mut self, folio: u64, len: u64, off: u64) -> bool {
        if len > BIO_MAX_SIZE {
            return false;
        }
        self.bio_add_page(folio + off / PAGE_SIZE * PAGE_SIZE, len, off % PAGE_SIZE)
    }

    /// `bio_add_folio_nofail()`: the first folio of a new bio.
    pub fn bio_add_folio_nofail(&mut self, folio: u64, len: u64, off: u64) {
        self.__bio_add_page(folio + off / PAGE_SIZE * PAGE_SIZE, len, off % PAGE_SIZE);
    }

    /// `bio_split()`: the first `bytes` bytes (their bio_vecs in `front`, emptied
    /// first), leaving the rest in `self`.
    fn split_front(&mut self, bytes: u64, mut front: Vec<Bvec>) -> Bio {
        front.clear();
        let mut left = bytes;
        // The bio_vecs wholly in the front part, then the one the split cuts, if any.
        let mut whole = 0;
        for bv in self.bvecs.iter_mut() {
            if left >= bv.len {
                left -= bv.len;
                front.push(*bv);
                whole += 1;
            } else {
                if left > 0 {
                    front.push(Bvec { len: left, ..*bv });
                    *bv = Bvec { offset: bv.offset + left, len: bv.len - left, ..*bv };
                }
                break;
            }
        }
        self.bvecs.drain(..whole);
        let split = Bio {
            sector: self.sector,
            bvecs: front,
            max_vecs: self.max_vecs,
            size: bytes,
            rahead: self.rahead,
            nomerge: self.nomerge,
            sync: self.sync,
        };
        self.sector += bytes / SECTOR_SIZE;
        self.size -= bytes;
        split
    }
}

/// A request in the plug (or issued without one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rq {
    pub sector: u64,
    pub sectors: u64,
    /// `nr_phys_segments`.
    pub nr_segs: u64,
    /// REQ_NOMERGE in `cmd_flags` (from a split's front bio): `rq_mergeable()` is false.
    pub nomerge: bool,
    /// REQ_RAHEAD of the first bio: the 'A' of rwbs.
    pub rahead: bool,
    /// First bio_vec of the first bio and last bio_vec of the last bio
    /// (`bio_get_first_bvec(rq->bio)`, `bio_get_last_bvec(rq->biotail)`), for the virt
    /// boundary gap check of a merge (`bio_will_gap()`).
    pub first_bvec: Bvec,
    pub last_bvec: Bvec,
    /// REQ_SYNC of the first bio: the 'S' of rwbs.
    pub sync: bool,
}

impl Rq {
    /// `blk_fill_rwbs()` for a read request: 'R', then 'A' for REQ_RAHEAD, then 'S' for
    /// REQ_SYNC.
    pub fn rwbs(&self) -> crate::trace::Rwbs {
        use crate::trace::Rwbs;
        const FLAGS: [Rwbs; 4] = [Rwbs::ascii("R"), Rwbs::ascii("RA"), Rwbs::ascii("RS"), Rwbs::ascii("RAS")];
        FLAGS[self.rahead as usize | (self.sync as usize) << 1]
    }
}

/// `struct blk_plug`: requests held back until `blk_finish_plug()`.
#[derive(Clone, Debug, Default)]
pub struct Plug {
    pub mq_list: Vec<Rq>,
}

/// The order in which `mq-deadline` (Linux 7.3.4 block/mq-deadline.c) dispatches reads
/// inserted together, given as indices into `sectors` (their start sectors, oldest first),
/// when the last read it dispatched started at `latest_pos`.
///
/// `__dd_dispatch_request()` takes `deadline_next_request()`, the lowest-sectored request
/// at or above `latest_pos` (`deadline_from_pos()`; of equal sectors the oldest, as
/// `elv_rb_add()` puts an equal key to the right); if there is none, the oldest request
/// (`deadline_fifo_request()`). `dd_start_request()` then sets `latest_pos` to the
/// dispatched request's start. Whether it is within a batch (`fifo_batch`) only decides
/// which of the two paths picks `next_rq`; both pick the same. Not modelled: a request
/// whose `read_expire` (500 ms) passed before it was dispatched, other priorities than
/// best effort, and writes.
pub fn deadline_dispatch_order(sectors: &[u64], latest_pos: u64) -> Vec<usize> {
    let mut pending: Vec<usize> = (0..sectors.len()).collect();
    let mut order = Vec::with_capacity(sectors.len());
    let mut pos = latest_pos;
    while !pending.is_empty() {
        let at = pending
            .iter()
            .enumerate()
            .filter(|&(_, &i)| sectors[i] >= pos)
            .min_by_key(|&(k, &i)| (sectors[i], k))
            .map_or(0, |(k, _)| k);
        let i = pending.remove(at);
        pos = sectors[i];
        order.push(i);
    }
    order
}

impl Model<'_> {
    /// `blk_start_plug()`: "If this is a nested plug, don't actually assign it." (only
    /// madvise_do_behavior()'s plug around MADV_POPULATE_READ holds one while readahead
    /// plugs: the inner one is counted, so that its finish issues nothing).
    pub(crate) fn blk_start_plug(&mut self) {
        if self.plug.is_some() {
            self.nested_plugs += 1;
            return;
        }
        self.plug = Some(Plug { mq_list: std::mem::take(&mut self.spare_rqs) });
    }

    /// `blk_finish_plug()`: issue the plugged requests in the order they were made
    /// (`rq_list_add_tail()` to `mq_list`, dispatched from its head); a nested plug's
    /// finish does nothing ("if (plug == current->plug)").
    pub(crate) fn blk_finish_plug(&mut self) {
        if self.nested_plugs > 0 {
            self.nested_plugs -= 1;
            return;
        }
        if let Some(plug) = self.plug.take() {
            self.dispatch(&plug.mq_list);
            self.spare_rqs = plug.mq_list;
            self.spare_rqs.clear();
        }
    }

    /// `blk_flush_plug(current->plug, true)` from `sched_submit_work()`: a task that sleeps
    /// with a plug issues its requests first (through kblockd, before it can be woken by
    /// their completion); the plug stays.
    pub(crate) fn blk_flush_plug(&mut self) {
        if let Some(plug) = self.plug.as_mut() {
            let batch = std::mem::take(&mut plug.mq_list);
            self.dispatch_and_keep(batch);
        }
    }

    /// A batch of requests leaves the plug (`blk_mq_flush_plug_list()`) or one is issued
    /// without it: in their order with no scheduler (`blk_mq_issue_direct()`,
    /// `nvme_queue_rqs()`), in [`deadline_dispatch_order`] under `mq-deadline`
    /// (`blk_mq_dispatch_list()` inserts the whole batch, then runs the queue).
    fn dispatch(&mut self, batch: &[Rq]) {
        if self.input.queue.scheduler != "mq-deadline" {
            for rq in batch {
                self.blk_mq_start_request(rq);
            }
            return;
        }
        let sectors: Vec<u64> = batch.iter().map(|rq| rq.sector).collect();
        for i in deadline_dispatch_order(&sectors, self.deadline_latest_pos) {
            self.deadline_latest_pos = batch[i].sector;
            self.blk_mq_start_request(&batch[i]);
        }
    }

    /// [`Model::dispatch`] of the plug's requests, taken out of it: the plug keeps the
    /// emptied list (dispatching adds nothing to it).
    fn dispatch_and_keep(&mut self, mut batch: Vec<Rq>) {
        self.dispatch(&batch);
        batch.clear();
        if let Some(plug) = self.plug.as_mut() {
            plug.mq_list = batch;
        }
    }

    /// [`Bio::new`], its bio_vec list one an earlier bio left (emptied).
    pub(crate) fn bio_alloc(&mut self, sector: u64, nr_vecs: u64, rahead: bool) -> Bio {
        let mut bio = Bio::new(sector, nr_vecs, rahead);
        if let Some(bvecs) = self.spare_bvecs.pop() {
            bio.bvecs = bvecs;
        }
        bio
    }

    /// Keeps a submitted bio's bio_vec list for [`Model::bio_alloc`].
    fn bio_free(&mut self, mut bvecs: Vec<Bvec>) {
        if self.spare_bvecs.len() < 8 {
            bvecs.clear();
            self.spare_bvecs.push(bvecs);
        }
    }

    /// `blk_mq_start_request()`: where `block_rq_issue` fires.
    fn blk_mq_start_request(&mut self, rq: &Rq) {
        self.rec.request(Request { sector: rq.sector, sectors: rq.sectors, rwbs: rq.rwbs() }, rq.nr_segs);
    }

    /// `submit_bio()` → `blk_mq_submit_bio()`, Linux 7.3.4 block/blk-mq.c, for every part
    /// of a split: the front is handled at once, the remainder goes back on
    /// `current->bio_list` ("bio_list_add_head" for a split) and is submitted right after.
    pub(crate) fn submit_bio(&mut self, bio: Bio) {
        let mut bio = Some(bio);
        while let Some(b) = bio.take() {
            bio = self.blk_mq_submit_bio(b);
        }
    }

    /// `blk_mq_submit_bio()`, Linux 7.3.4: split to the limits, try to merge into the
    /// plug's last request, else make a request. Returns the remainder of a split.
    fn blk_mq_submit_bio(&mut self, mut bio: Bio) -> Option<Bio> {
        let lim = self.limits;
        // __bio_split_to_limits() → bio_split_rw(); a bio that needs no walk has one segment.
        let (bio, nr_segs, remainder) = if !bio_may_need_split(&bio, &lim) {
            (bio, 1, None)
        } else {
            let max_bytes = get_max_io_size(bio.sector, &lim) * SECTOR_SIZE;
            let (split_sectors, nr_segs) = bio_split_io_at(&bio, &lim, max_bytes);
            if split_sectors > 0 {
                // bio_submit_split(): "bio->bi_opf |= REQ_NOMERGE" on the front part.
                let spare = self.spare_bvecs.pop().unwrap_or_default();
                let mut front = bio.split_front(split_sectors * SECTOR_SIZE, spare);
                front.nomerge = true;
                (front, nr_segs, Some(bio))
            } else {
                (bio, nr_segs, None)
            }
        };
        if !bio.nomerge && self.blk_attempt_plug_merge(&bio, nr_segs) {
            self.bio_free(bio.bvecs);
            return remainder;
        }
        let rq = Rq {
            sector: bio.sector,
            sectors: bio.size() / SECTOR_SIZE,
            nr_segs,
            nomerge: bio.nomerge,
            rahead: bio.rahead,
            first_bvec: bio.bvecs[0],
            last_bvec: *bio.bvecs.last().unwrap(),
            sync: bio.sync,
        };
        if self.plug.is_some() {
            self.blk_add_rq_to_plug(rq);
        } else {
            // No plug (->read_folio from filemap_read()): blk_mq_try_issue_directly(), or
            // under a scheduler blk_mq_insert_request() and a run of the queue.
            self.dispatch(std::slice::from_ref(&rq));
        }
        self.bio_free(bio.bvecs);
        remainder
    }

    /// `blk_add_rq_to_plug()`, Linux 7.3.4 block/blk-mq.c: flush first when the plug holds
    /// `BLK_MAX_REQUEST_COUNT` requests or when "blk_rq_bytes(last) >= BLK_PLUG_FLUSH_SIZE",
    /// where `last = rq_list_peek(&plug->mq_list)` is the list's head, its oldest request.
    /// A flush never removes a merge candidate (only the newest request is one, and it
    /// is the one being added), so it changes neither the requests nor their order.
    fn blk_add_rq_to_plug(&mut self, rq: Rq) {
        let plug = self.plug.as_mut().unwrap();
        if let Some(head) = plug.mq_list.first() {
            if plug.mq_list.len() >= BLK_MAX_REQUEST_COUNT || head.sectors * SECTOR_SIZE >= BLK_PLUG_FLUSH_SIZE {
                let batch = std::mem::take(&mut plug.mq_list);
                self.dispatch_and_keep(batch);
            }
        }
        self.plug.as_mut().unwrap().mq_list.push(rq);
    }

    /// `blk_attempt_plug_merge()`, Linux 7.3.4 block/blk-merge.c: merge into the plug's
    /// tail request (`plug->mq_list.tail`) if `blk_rq_merge_ok()`, back
    /// (`bio_attempt_back_merge()` → `ll_back_merge_fn()`) or front
    /// (`bio_attempt_front_merge()` → `ll_front_merge_fn()`) as `blk_try_merge()` says.
    ///
    /// Both check the virt boundary gap (`req_gap_back_merge()` / `req_gap_front_merge()`),
    /// then `max_sectors` (`blk_rq_get_max_sectors()`), then `ll_new_hw_segment()`:
    /// "req->nr_phys_segments + nr_phys_segs > blk_rq_get_max_segments(req)", and on
    /// success "req->nr_phys_segments += nr_phys_segs". 7.3.4 does not count one segment
    /// less when the request's last bio_vec and the bio's first are physically contiguous
    /// (`biovec_phys_mergeable()` only feeds `phys_gap_bit`): `nr_phys_segments` is the sum
    /// of the bios' segments, even if `blk_rq_map_sg()` later maps fewer. A merge refused
    /// for size or segments marks the request REQ_NOMERGE (`req_set_nomerge()`).
    fn blk_attempt_plug_merge(&mut self, bio: &Bio, nr_segs: u64) -> bool {
        let lim = self.limits;
        let Some(rq) = self.plug.as_mut().and_then(|p| p.mq_list.last_mut()) else { return false };
        // blk_rq_merge_ok(): rq_mergeable(); bio_mergeable() was checked by the caller.
        if rq.nomerge {
            return false;
        }
        let bio_sectors = bio.size() / SECTOR_SIZE;
        let first = bio.bvecs[0];
        let last = *bio.bvecs.last().unwrap();
        if rq.sector + rq.sectors == bio.sector {
            // ll_back_merge_fn(): req_gap_back_merge() → bio_will_gap(q, req, req->biotail, bio)
            if bio_will_gap(&lim, &rq.first_bvec, &rq.last_bvec, &first) {
                return false;
            }
            if !ll_new_hw_segment(&lim, rq, bio_sectors, nr_segs) {
                return false;
            }
            rq.sectors += bio_sectors;
            rq.last_bvec = last;
            true
        } else if rq.sector.wrapping_sub(bio_sectors) == bio.sector {
            // ll_front_merge_fn(): req_gap_front_merge() → bio_will_gap(q, NULL, bio, req->bio)
            if bio_will_gap(&lim, &first, &last, &rq.first_bvec) {
                return false;
            }
            if !ll_new_hw_segment(&lim, rq, bio_sectors, nr_segs) {
                return false;
            }
            rq.sector = bio.sector;
            rq.sectors += bio_sectors;
            rq.first_bvec = first;
            // The request keeps the flags of the bio it was made from.
            true
        } else {
            false
        }
    }
}

/// The size check of `ll_back_merge_fn()` / `ll_front_merge_fn()` ("blk_rq_sectors(req) +
/// bio_sectors(bio) > blk_rq_get_max_sectors(req, ...)": `max_sectors`, no chunk_sectors)
/// and `ll_new_hw_segment()`, Linux 7.3.4 block/blk-merge.c, which adds the bio's segments
/// to the request's if the sum stays within `max_segments` (`blk_rq_get_max_segments()`).
/// Either failure is `req_set_nomerge()`.
fn ll_new_hw_segment(lim: &Limits, rq: &mut Rq, bio_sectors: u64, nr_phys_segs: u64) -> bool {
    if rq.sectors + bio_sectors > lim.max_sectors || rq.nr_segs + nr_phys_segs > lim.max_segments {
        rq.nomerge = true;
        return false;
    }
    rq.nr_segs += nr_phys_segs;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = PAGE_SIZE;

    fn nvme(max_sectors_kb: u64) -> Limits {
        // The QEMU NVMe disk, with a virt boundary to exercise that split too.
        Limits::from_queue(&QueueLimits { virt_boundary_mask: 4095, ..QueueLimits::nvme_qemu(128, max_sectors_kb) })
    }

    /// The QEMU UFS disk: 128 segments (SG_ALL) of at most 256 KiB
    /// (PRDT_DATA_BYTE_COUNT_MAX), 1 MiB requests, 4 KiB logical blocks.
    fn ufs() -> Limits {
        Limits::from_queue(&QueueLimits::ufs_qemu(128))
    }

    /// A bio of order-0 pages at the given pfns, as f2fs builds it (`bio_add_folio()`,
    /// a new bio_vec unless the page continues the last one).
    fn bio_of(pfns: &[u64]) -> Bio {
        let mut bio = Bio::new(0, bio_max_segs(pfns.len() as u64), true);
        for &pfn in pfns {
            assert!(bio.bio_add_folio(pfn * PAGE, PAGE, 0));
        }
        bio
    }

    /// `n` pages no two of which are adjacent in memory.
    fn scattered(n: u64) -> Vec<u64> {
        (0..n).map(|i| 1000 + 3 * i).collect()
    }

    fn max_bytes(lim: &Limits) -> u64 {
        get_max_io_size(0, lim) * SECTOR_SIZE
    }

    #[test]
    fn deadline_dispatches_upward_from_its_last_position_then_from_the_oldest() {
        // A batch in file order whose middle is where the last read started: the part at or
        // above it goes first, then the oldest request, and upward from there.
        assert_eq!(deadline_dispatch_order(&[100, 130, 160, 210, 240, 270], 200), vec![3, 4, 5, 0, 1, 2]);
        // Entirely above or entirely below: in sector order.
        assert_eq!(deadline_dispatch_order(&[300, 400, 500], 200), vec![0, 1, 2]);
        assert_eq!(deadline_dispatch_order(&[10, 20, 30], 200), vec![0, 1, 2]);
        // A batch made backward (not in sector order) is sorted from the position.
        assert_eq!(deadline_dispatch_order(&[500, 400, 300], 0), vec![2, 1, 0]);
        // Wrapping goes to the oldest, not the lowest: here 400, then 500, then 300.
        assert_eq!(deadline_dispatch_order(&[400, 300, 500], 450), vec![2, 0, 1]);
        // A request exactly at the position counts as above it; equal sectors go oldest first.
        assert_eq!(deadline_dispatch_order(&[50, 200, 200], 200), vec![1, 2, 0]);
        assert!(deadline_dispatch_order(&[], 7).is_empty());
    }

    #[test]
    fn a_bio_within_the_limits_is_not_split() {
        let lim = nvme(512);
        assert_eq!(bio_split_io_at(&bio_of(&scattered(128)), &lim, max_bytes(&lim)), (0, 128));
        let mut big = Bio::new(0, 1, true);
        big.bio_add_folio_nofail(1 << 30, 512 * 1024, 0);
        assert_eq!(bio_split_io_at(&big, &lim, max_bytes(&lim)), (0, 1));
    }

    #[test]
    fn max_sectors_splits_inside_a_large_folio() {
        let lim = nvme(256);
        let mut bio = Bio::new(0, 2, true);
        bio.bio_add_folio_nofail(1 << 30, 64 * 1024, 0);
        assert!(bio.bio_add_folio(2 << 30, 512 * 1024, 0));
        assert_eq!(bio_split_io_at(&bio, &lim, max_bytes(&lim)), (512, 2));
    }

    #[test]
    fn max_segments_splits_scattered_pages() {
        let lim = Limits { max_segments: 4, ..nvme(512) };
        assert_eq!(bio_split_io_at(&bio_of(&scattered(6)), &lim, max_bytes(&lim)), (32, 4));
    }

    #[test]
    fn max_segment_size_counts_segments_of_a_large_bvec() {
        let lim = Limits {
            virt_boundary_mask: 0,
            max_segment_size: 65536,
            max_segments: 4,
            max_fast_segment_size: 4096,
            ..nvme(1024)
        };
        let mut bio = Bio::new(0, 1, true);
        bio.bio_add_folio_nofail(1 << 30, 512 * 1024, 0);
        // 4 segments of 64 KiB fit, then the segment limit splits the folio.
        assert_eq!(bio_split_io_at(&bio, &lim, max_bytes(&lim)), (512, 4));
    }

    #[test]
    fn bio_alloc_bioset_rounds_the_vecs_up_to_the_slab() {
        let vecs = |n| Bio::new(0, bio_max_segs(n), true).max_vecs;
        assert_eq!(
            [1, 4, 5, 16, 17, 64, 65, 128, 129, 256, 1000].map(vecs),
            [1, 4, 16, 16, 64, 64, 128, 128, 256, 256, 256]
        );
    }

    #[test]
    fn physically_contiguous_folios_share_a_bvec() {
        // Pages 10..18 are contiguous in memory (8 pages), the rest scattered: the 7 pages
        // that continue the one before them merge into its bio_vec.
        let mut pfns = scattered(256);
        for k in 11..18 {
            pfns[k] = pfns[10] + (k as u64 - 10);
        }
        let bio = bio_of(&pfns);
        assert_eq!(bio.bvecs.len(), 256 - 7);
        assert_eq!(bio.bvecs[10], Bvec { page: pfns[10] * PAGE, offset: 0, len: 8 * PAGE });
        assert_eq!(bio.size(), 256 * PAGE);
        // One more contiguous pair, pages 100 and 101: 248 bio_vecs; a run of three, 247.
        pfns[101] = pfns[100] + 1;
        assert_eq!(bio_of(&pfns).bvecs.len(), 248);
        pfns[102] = pfns[100] + 2;
        assert_eq!(bio_of(&pfns).bvecs.len(), 247);
        // Pages in descending addresses never merge: a bio_vec only grows at its end.
        let down: Vec<u64> = (0..8).rev().map(|i| 5000 + i).collect();
        assert_eq!(bio_of(&down).bvecs.len(), 8);
    }

    #[test]
    fn a_full_bio_still_takes_a_folio_that_continues_its_last_bvec() {
        let mut bio = bio_of(&scattered(3));
        assert_eq!(bio.max_vecs, 3);
        let last = bio.bvecs[2].page / PAGE;
        assert!(!bio.bio_add_folio((last + 2) * PAGE, PAGE, 0));
        assert!(bio.bio_add_folio((last + 1) * PAGE, PAGE, 0));
        assert_eq!((bio.bvecs.len(), bio.bvecs[2].len), (3, 2 * PAGE));
    }

    #[test]
    fn bvec_try_merge_page_within_and_across_pages() {
        let mut bv = Bvec { page: 7 * PAGE, offset: 0, len: 2048 };
        // Not where the bio_vec ends.
        assert!(!bvec_try_merge_page(&mut bv, 7 * PAGE, 1024, 3072));
        assert!(!bvec_try_merge_page(&mut bv, 8 * PAGE, 2048, 0));
        // The rest of the same page, then the next page.
        assert!(bvec_try_merge_page(&mut bv, 7 * PAGE, 2048, 2048));
        assert!(bvec_try_merge_page(&mut bv, 8 * PAGE, PAGE, 0));
        assert_eq!(bv, Bvec { page: 7 * PAGE, offset: 0, len: 2 * PAGE });
        // bio_add_folio() of a large folio's second half: bv_page is its page 4.
        let mut bio = Bio::new(0, 2, true);
        bio.bio_add_folio_nofail(64 * PAGE, 4 * PAGE, 4 * PAGE);
        assert_eq!(bio.bvecs[0], Bvec { page: 68 * PAGE, offset: 0, len: 4 * PAGE });
    }

    #[test]
    fn bio_add_page_stops_at_bio_max_size() {
        let mut bio = Bio::new(0, 2, true);
        bio.bio_add_folio_nofail(0, BIO_MAX_SIZE - PAGE + 1, 0);
        // Contiguous or not, a page would take bi_size past UINT_MAX.
        assert!(!bio.bio_add_page(BIO_MAX_SIZE + 1, PAGE, 0));
        assert!(!bio.bio_add_page(1 << 40, PAGE, 0));
        assert!(bio.bio_add_page(1 << 40, PAGE - 1, 0));
    }

    #[test]
    fn segments_of_a_ufs_bio_follow_physical_contiguity() {
        let lim = ufs();
        // 256 scattered pages (1 MiB): 128 segments fit, so 128 pages go in the front.
        assert_eq!(bio_split_io_at(&bio_of(&scattered(256)), &lim, max_bytes(&lim)), (1024, 128));
        // Pages 0..9 in 5 contiguous pairs: the first 128 segments hold 133 pages.
        let mut pfns = scattered(256);
        for k in (1..10).step_by(2) {
            pfns[k] = pfns[k - 1] + 1;
        }
        let bio = bio_of(&pfns);
        assert_eq!(bio.bvecs.len(), 251);
        assert_eq!(bio_split_io_at(&bio, &lim, max_bytes(&lim)), (133 * 8, 128));
        // 128 contiguous pairs: 128 segments, the whole 1 MiB in one request.
        let pairs: Vec<u64> = (0..256).map(|i| 1000 + 3 * (i / 2) * 2 + i % 2).collect();
        assert_eq!(bio_split_io_at(&bio_of(&pairs), &lim, max_bytes(&lim)), (0, 128));
    }

    #[test]
    fn max_segment_size_and_seg_boundary_cut_contiguous_memory() {
        let lim = ufs();
        // 1 MiB of contiguous pages: one bio_vec, four 256 KiB segments.
        let run: Vec<u64> = (0..256).map(|i| 4096 + i).collect();
        let bio = bio_of(&run);
        assert_eq!(bio.bvecs.len(), 1);
        assert_eq!(bio_split_io_at(&bio, &lim, max_bytes(&lim)), (0, 4));
        // The same run across a 4 GiB boundary, 2 pages before it: 2 + 256 KiB + ...
        let base = (1u64 << 20) - 2; // pfn of 4 GiB - 8 KiB
        let run: Vec<u64> = (0..256).map(|i| base + i).collect();
        assert_eq!(bio_split_io_at(&bio_of(&run), &lim, max_bytes(&lim)), (0, 5));
        // scsi_debug without clustering: seg_boundary_mask 4095, a segment per page.
        let dbg = Limits::from_queue(&QueueLimits {
            max_sectors_kb: 1024,
            max_segments: 128,
            max_segment_size: 65536,
            seg_boundary_mask: 4095,
            ..Default::default()
        });
        assert_eq!(dbg.max_fast_segment_size, 4096);
        let run: Vec<u64> = (0..16).map(|i| 4096 + i).collect();
        assert_eq!(bio_split_io_at(&bio_of(&run), &dbg, max_bytes(&dbg)), (0, 16));
        assert_eq!(bio_split_io_at(&bio_of(&run), &Limits { max_segments: 10, ..dbg }, max_bytes(&dbg)), (80, 10));
    }

    #[test]
    fn biovec_phys_mergeable_needs_adjacency_within_a_segment_boundary() {
        let lim = ufs();
        let a = Bvec { page: 10 * PAGE, offset: 0, len: 2 * PAGE };
        assert!(biovec_phys_mergeable(&lim, &a, &Bvec { page: 12 * PAGE, offset: 0, len: PAGE }));
        assert!(!biovec_phys_mergeable(&lim, &a, &Bvec { page: 13 * PAGE, offset: 0, len: PAGE }));
        let below = Bvec { page: (1 << 32) - PAGE, offset: 0, len: PAGE };
        assert!(!biovec_phys_mergeable(&lim, &below, &Bvec { page: 1 << 32, offset: 0, len: PAGE }));
    }

    #[test]
    fn ll_new_hw_segment_adds_the_bios_segments_without_merging_across_them() {
        let lim = ufs();
        let bv = Bvec { page: 10 * PAGE, offset: 0, len: PAGE };
        let mut rq = Rq {
            sector: 0,
            sectors: 800,
            nr_segs: 100,
            nomerge: false,
            rahead: true,
            first_bvec: bv,
            last_bvec: bv,
            sync: false,
        };
        // A bio of 28 segments fits, even when its first page continues the request's
        // last one: nr_phys_segments is the sum, 128.
        assert!(ll_new_hw_segment(&lim, &mut rq, 224, 28));
        assert_eq!((rq.nr_segs, rq.nomerge), (128, false));
        // One more segment does not, and the request takes no more merges.
        assert!(!ll_new_hw_segment(&lim, &mut rq, 8, 1));
        assert_eq!((rq.nr_segs, rq.nomerge), (128, true));
        let mut rq = Rq { nr_segs: 1, nomerge: false, sectors: 2040, ..rq };
        assert!(!ll_new_hw_segment(&lim, &mut rq, 16, 1), "over max_sectors");
        assert!(rq.nomerge);
    }

    #[test]
    fn bio_will_gap_only_with_a_virt_boundary() {
        let nv = nvme(512);
        let a = Bvec { page: 10 * PAGE, offset: 0, len: 2048 };
        let far = Bvec { page: 50 * PAGE, offset: 2048, len: 2048 };
        let next = Bvec { page: 10 * PAGE, offset: 2048, len: 2048 };
        // a ends mid-page: a gap unless the next bio_vec continues it in memory.
        assert!(bio_will_gap(&nv, &a, &a, &far));
        assert!(!bio_will_gap(&nv, &a, &a, &next));
        // A request that starts mid-page never takes a bio at its back.
        assert!(bio_will_gap(&nv, &far, &a, &next));
        assert!(!bio_will_gap(&ufs(), &far, &a, &far));
    }

    #[test]
    fn get_max_io_size_aligns_to_the_physical_block() {
        let lim = Limits { physical_block_size: 4096, ..nvme(512) };
        assert_eq!(get_max_io_size(0, &lim), 1024);
        assert_eq!(get_max_io_size(3, &lim), 1021);
    }
}
