//! block/ of Linux 7.3.4: from the bios a file system submits to the requests the device
//! sees (`block_rq_issue`): splitting to the queue limits (blk-merge.c), merging into
//! the plugged request (blk_attempt_plug_merge), and issue at `blk_finish_plug()`.
//!
//! The model assumes what radiff's guests have: blk-mq with scheduler `none`, one
//! device per plug, no `chunk_sectors`, no integrity, no inline encryption, `nomerges` 0,
//! the default `seg_boundary_mask` (4 GiB - 1) and enough tags that no submission sleeps.

use crate::config::FolioMemory;
use crate::input::QueueLimits;
use crate::model::Model;
use crate::trace::{Request, SECTOR_SIZE};

/// `BIO_MAX_VECS` (include/linux/bio.h).
pub const BIO_MAX_VECS: u64 = 256;

/// `BLK_MAX_REQUEST_COUNT` (block/blk.h).
const BLK_MAX_REQUEST_COUNT: usize = 32;
/// `BLK_PLUG_FLUSH_SIZE` (block/blk.h).
const BLK_PLUG_FLUSH_SIZE: u64 = 128 * 1024;

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
    /// From sysfs values; zeroes (an unset field) get the kernel's defaults.
    pub fn from_queue(q: &QueueLimits) -> Self {
        let logical_block_size = q.logical_block_size.max(512);
        let physical_block_size = q.physical_block_size.max(logical_block_size);
        // BLK_DEF_MAX_SECTORS_CAP is 2560 sectors.
        let max_sectors = if q.max_sectors_kb > 0 { q.max_sectors_kb * 2 } else { (q.max_hw_sectors_kb * 2).clamp(8, 2560) };
        let max_segments = if q.max_segments > 0 { q.max_segments } else { 128 };
        let max_segment_size = match q.max_segment_size {
            0 if q.virt_boundary_mask != 0 => u32::MAX as u64,
            0 => 65536,
            n => n,
        };
        let seg_boundary_mask = 0xFFFF_FFFF;
        let seg_size = if seg_boundary_mask > max_segment_size - 1 { max_segment_size } else { seg_boundary_mask + 1 };
        Limits {
            max_sectors,
            max_segments,
            max_segment_size,
            logical_block_size,
            physical_block_size,
            virt_boundary_mask: q.virt_boundary_mask,
            seg_boundary_mask,
            max_fast_segment_size: seg_size.min(4096),
        }
    }
}

/// A `struct bio_vec`: `len` bytes of physically contiguous memory starting `offset`
/// bytes into its first page (folios are page aligned, so 0 except after a split).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bvec {
    pub offset: u64,
    pub len: u64,
}

/// A read bio as a file system builds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bio {
    /// `bi_iter.bi_sector`.
    pub sector: u64,
    pub bvecs: Vec<Bvec>,
    /// `bi_max_vecs`.
    pub max_vecs: u64,
    /// REQ_RAHEAD.
    pub rahead: bool,
    /// REQ_NOMERGE: set on the front part of a split.
    pub nomerge: bool,
}

impl Bio {
    /// `bio_alloc()` for a read of up to `nr_vecs` bio_vecs at `sector`.
    pub fn new(sector: u64, nr_vecs: u64, rahead: bool) -> Self {
        Bio { sector, bvecs: Vec::new(), max_vecs: nr_vecs.clamp(1, BIO_MAX_VECS), rahead, nomerge: false }
    }

    /// `bi_iter.bi_size`.
    pub fn size(&self) -> u64 {
        self.bvecs.iter().map(|b| b.len).sum()
    }

    /// `bio_end_sector()`.
    pub fn end_sector(&self) -> u64 {
        self.sector + self.size() / SECTOR_SIZE
    }

    /// `bio_add_folio()` of `len` bytes from the start of a folio: merged into the last
    /// bio_vec when the memory is contiguous (`bvec_try_merge_page()`), else a new bio_vec
    /// if there is room ("if (bio->bi_vcnt >= bio->bi_max_vecs) return 0;").
    pub fn add_folio(&mut self, len: u64, memory: FolioMemory) -> bool {
        if memory == FolioMemory::Contiguous {
            if let Some(last) = self.bvecs.last_mut() {
                last.len += len;
                return true;
            }
        }
        if self.bvecs.len() as u64 >= self.max_vecs {
            return false;
        }
        self.bvecs.push(Bvec { offset: 0, len });
        true
    }

    /// `bio_add_folio_nofail()`: the first folio of a new bio.
    pub fn add_folio_nofail(&mut self, len: u64) {
        self.bvecs.push(Bvec { offset: 0, len });
    }

    /// `bio_split()`: the first `bytes` bytes, leaving the rest in `self`.
    fn split_front(&mut self, bytes: u64) -> Bio {
        let mut front = Vec::new();
        let mut left = bytes;
        let mut rest = Vec::new();
        for bv in self.bvecs.drain(..) {
            if left >= bv.len {
                left -= bv.len;
                front.push(bv);
            } else if left > 0 {
                front.push(Bvec { offset: bv.offset, len: left });
                rest.push(Bvec { offset: bv.offset + left, len: bv.len - left });
                left = 0;
            } else {
                rest.push(bv);
            }
        }
        let split = Bio { sector: self.sector, bvecs: front, max_vecs: self.max_vecs, rahead: self.rahead, nomerge: self.nomerge };
        self.sector += bytes / SECTOR_SIZE;
        self.bvecs = rest;
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
    /// First bio_vec of the first bio and last bio_vec of the last bio, for the virt
    /// boundary gap check of a merge (`bio_will_gap()`).
    pub first_bvec: Bvec,
    pub last_bvec: Bvec,
}

impl Rq {
    /// `blk_fill_rwbs()` for a read request: 'R', then 'A' for REQ_RAHEAD.
    pub fn rwbs(&self) -> String {
        if self.rahead { "RA".into() } else { "R".into() }
    }
}

/// `struct blk_plug`: requests held back until `blk_finish_plug()`.
#[derive(Clone, Debug, Default)]
pub struct Plug {
    pub mq_list: Vec<Rq>,
}

/// `__bvec_gap_to_prev()` / `bvec_gap_to_prev()` (block/blk.h).
fn bvec_gap_to_prev(lim: &Limits, prev: &Bvec, offset: u64) -> bool {
    lim.virt_boundary_mask != 0 && ((offset & lim.virt_boundary_mask) != 0 || ((prev.offset + prev.len) & lim.virt_boundary_mask) != 0)
}

/// `get_max_segment_size()` (block/blk.h), with the physical address taken as the offset
/// into the folio: folios are naturally aligned and never cross `seg_boundary_mask`.
fn get_max_segment_size(lim: &Limits, paddr: u64, len: u64) -> u64 {
    let mask = lim.seg_boundary_mask;
    len.min((mask - (mask & paddr)).min(lim.max_segment_size - 1) + 1)
}

/// `bvec_split_segs()`, Linux 7.3.4 block/blk-merge.c: add as much of `bv` as fits in
/// `max_segs` segments and `max_bytes`; true if the bio must be split inside it.
fn bvec_split_segs(lim: &Limits, bv: &Bvec, nsegs: &mut u64, bytes: &mut u64, max_segs: u64, max_bytes: u64) -> bool {
    let max_len = max_bytes - *bytes;
    let mut len = bv.len.min(max_len);
    let mut total_len = 0;
    while len > 0 && *nsegs < max_segs {
        let seg_size = get_max_segment_size(lim, bv.offset + total_len, len);
        *nsegs += 1;
        total_len += seg_size;
        len -= seg_size;
        if (bv.offset + total_len) & lim.virt_boundary_mask != 0 {
            break;
        }
    }
    *bytes += total_len;
    len > 0 || bv.len > max_len
}

/// `bio_split_io_at()`, Linux 7.3.4 block/blk-merge.c: where the bio must be split to fit
/// `max_bytes` and the segment limits. Returns `(split_sectors, nr_segs)`, split_sectors 0
/// when it fits; nr_segs counts the segments of what stays in the (front) bio.
pub fn bio_split_io_at(bio: &Bio, lim: &Limits, max_bytes: u64) -> (u64, u64) {
    let mut nsegs = 0;
    let mut bytes = 0;
    let mut prev: Option<Bvec> = None;
    let mut split = false;
    for bv in &bio.bvecs {
        // "If the queue doesn't support SG gaps and adding this offset would create a gap,
        // disallow it."
        if let Some(p) = &prev {
            if bvec_gap_to_prev(lim, p, bv.offset) {
                split = true;
                break;
            }
        }
        if nsegs < lim.max_segments && bytes + bv.len <= max_bytes && bv.offset + bv.len <= lim.max_fast_segment_size {
            nsegs += 1;
            bytes += bv.len;
        } else if bvec_split_segs(lim, bv, &mut nsegs, &mut bytes, lim.max_segments, max_bytes) {
            split = true;
            break;
        }
        prev = Some(*bv);
    }
    if !split {
        return (0, nsegs);
    }
    // "Round down the split size so that each bio is properly block size aligned"; a zero
    // result is -EINVAL in the kernel (the bio fails), which sane limits never produce.
    let bytes = bytes / lim.logical_block_size * lim.logical_block_size;
    (bytes / SECTOR_SIZE, nsegs)
}

/// `get_max_io_size()`, Linux 7.3.4 block/blk-merge.c: `max_sectors`, with the end
/// aligned to the physical block size when the bio starts unaligned.
pub fn get_max_io_size(sector: u64, lim: &Limits) -> u64 {
    let pbs = lim.physical_block_size / SECTOR_SIZE;
    let lbs = lim.logical_block_size / SECTOR_SIZE;
    let max_sectors = lim.max_sectors;
    let start = sector & (pbs - 1);
    let end = (start + max_sectors) & !(pbs - 1);
    if end > start {
        return end - start;
    }
    max_sectors & !(lbs - 1)
}

/// `bio_may_need_split()` (block/blk.h): only a bio of one small bio_vec skips the walk.
fn bio_may_need_split(bio: &Bio, lim: &Limits) -> bool {
    match bio.bvecs.as_slice() {
        [bv] => bv.offset + bv.len > lim.max_fast_segment_size,
        _ => true,
    }
}

impl Model<'_> {
    /// `blk_start_plug()`.
    pub(crate) fn blk_start_plug(&mut self) {
        debug_assert!(self.plug.is_none(), "nested plug");
        self.plug = Some(Plug::default());
    }

    /// `blk_finish_plug()`: issue the plugged requests in the order they were made
    /// (`rq_list_add_tail()` to `mq_list`, dispatched from its head).
    pub(crate) fn blk_finish_plug(&mut self) {
        if let Some(plug) = self.plug.take() {
            for rq in plug.mq_list {
                self.blk_mq_start_request(&rq);
            }
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
                let mut front = bio.split_front(split_sectors * SECTOR_SIZE);
                front.nomerge = true;
                (front, nr_segs, Some(bio))
            } else {
                (bio, nr_segs, None)
            }
        };
        if !bio.nomerge && self.blk_attempt_plug_merge(&bio, nr_segs) {
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
        };
        if self.plug.is_some() {
            self.blk_add_rq_to_plug(rq);
        } else {
            // No plug (->read_folio from filemap_read()): blk_mq_try_issue_directly().
            self.blk_mq_start_request(&rq);
        }
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
                for rq in std::mem::take(&mut plug.mq_list) {
                    self.blk_mq_start_request(&rq);
                }
            }
        }
        self.plug.as_mut().unwrap().mq_list.push(rq);
    }

    /// `blk_attempt_plug_merge()`, Linux 7.3.4 block/blk-merge.c: merge into the plug's
    /// tail request (`plug->mq_list.tail`), back or front, within `max_sectors` and
    /// `max_segments` and without a virt boundary gap.
    fn blk_attempt_plug_merge(&mut self, bio: &Bio, nr_segs: u64) -> bool {
        let lim = self.limits;
        let Some(rq) = self.plug.as_mut().and_then(|p| p.mq_list.last_mut()) else { return false };
        // blk_rq_merge_ok(): rq_mergeable()
        if rq.nomerge {
            return false;
        }
        let bio_sectors = bio.size() / SECTOR_SIZE;
        let first = bio.bvecs[0];
        let last = *bio.bvecs.last().unwrap();
        if rq.sector + rq.sectors == bio.sector {
            // ll_back_merge_fn(): req_gap_back_merge() → bio_will_gap(q, rq, rq->biotail, bio)
            if lim.virt_boundary_mask != 0 && ((rq.first_bvec.offset & lim.virt_boundary_mask) != 0 || bvec_gap_to_prev(&lim, &rq.last_bvec, first.offset)) {
                return false;
            }
            if rq.sectors + bio_sectors > lim.max_sectors || rq.nr_segs + nr_segs > lim.max_segments {
                return false;
            }
            rq.sectors += bio_sectors;
            rq.nr_segs += nr_segs;
            rq.last_bvec = last;
            true
        } else if rq.sector.wrapping_sub(bio_sectors) == bio.sector {
            // ll_front_merge_fn(): req_gap_front_merge() → bio_will_gap(q, NULL, bio, rq->bio)
            if lim.virt_boundary_mask != 0 && ((first.offset & lim.virt_boundary_mask) != 0 || bvec_gap_to_prev(&lim, &last, rq.first_bvec.offset)) {
                return false;
            }
            if rq.sectors + bio_sectors > lim.max_sectors || rq.nr_segs + nr_segs > lim.max_segments {
                return false;
            }
            rq.sector = bio.sector;
            rq.sectors += bio_sectors;
            rq.nr_segs += nr_segs;
            rq.first_bvec = first;
            // The request keeps the flags of the bio it was made from.
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvme(max_sectors_kb: u64) -> Limits {
        // The QEMU NVMe disk, with a virt boundary to exercise that split too.
        Limits::from_queue(&QueueLimits { virt_boundary_mask: 4095, ..QueueLimits::nvme_qemu(128, max_sectors_kb) })
    }

    fn pages(n: u64) -> Bio {
        let mut bio = Bio::new(0, n, true);
        for _ in 0..n {
            assert!(bio.add_folio(4096, FolioMemory::Scattered));
        }
        bio
    }

    #[test]
    fn a_bio_within_the_limits_is_not_split() {
        let lim = nvme(512);
        assert_eq!(bio_split_io_at(&pages(128), &lim, get_max_io_size(0, &lim) * 512), (0, 128));
        let mut big = Bio::new(0, 1, true);
        big.add_folio_nofail(512 * 1024);
        assert_eq!(bio_split_io_at(&big, &lim, get_max_io_size(0, &lim) * 512), (0, 1));
    }

    #[test]
    fn max_sectors_splits_inside_a_large_folio() {
        let lim = nvme(256);
        let mut bio = Bio::new(0, 2, true);
        bio.add_folio_nofail(64 * 1024);
        assert!(bio.add_folio(512 * 1024, FolioMemory::Scattered));
        assert_eq!(bio_split_io_at(&bio, &lim, get_max_io_size(0, &lim) * 512), (512, 2));
    }

    #[test]
    fn max_segments_splits_scattered_pages() {
        let lim = Limits { max_segments: 4, ..nvme(512) };
        assert_eq!(bio_split_io_at(&pages(6), &lim, get_max_io_size(0, &lim) * 512), (32, 4));
    }

    #[test]
    fn max_segment_size_counts_segments_of_a_large_bvec() {
        let lim = Limits { virt_boundary_mask: 0, max_segment_size: 65536, max_segments: 4, max_fast_segment_size: 4096, ..nvme(1024) };
        let mut bio = Bio::new(0, 1, true);
        bio.add_folio_nofail(512 * 1024);
        // 4 segments of 64 KiB fit, then the segment limit splits the folio.
        assert_eq!(bio_split_io_at(&bio, &lim, get_max_io_size(0, &lim) * 512), (512, 4));
    }

    #[test]
    fn a_full_bio_refuses_another_folio() {
        let mut bio = pages(3);
        assert!(!bio.add_folio(4096, FolioMemory::Scattered));
        assert!(bio.add_folio(4096, FolioMemory::Contiguous));
        assert_eq!(bio.bvecs.len(), 3);
    }

    #[test]
    fn get_max_io_size_aligns_to_the_physical_block() {
        let lim = Limits { physical_block_size: 4096, ..nvme(512) };
        assert_eq!(get_max_io_size(0, &lim), 1024);
        assert_eq!(get_max_io_size(3, &lim), 1021);
    }
}
