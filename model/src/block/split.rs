//! Splitting a bio to the queue's limits (block/blk-merge.c `bio_split_io_at()` and the
//! segment, gap and size helpers it uses). Part of [`super`].

use super::*;

/// `__bvec_gap_to_prev()` (block/blk.h).
pub(super) fn __bvec_gap_to_prev(lim: &Limits, bprv: &Bvec, offset: u64) -> bool {
    (offset & lim.virt_boundary_mask) != 0 || ((bprv.offset + bprv.len) & lim.virt_boundary_mask) != 0
}

/// `bvec_gap_to_prev()` (block/blk.h): would a bio_vec at `offset` after `bprv` leave a
/// gap the device's virt boundary forbids?
pub(super) fn bvec_gap_to_prev(lim: &Limits, bprv: &Bvec, offset: u64) -> bool {
    lim.virt_boundary_mask != 0 && __bvec_gap_to_prev(lim, bprv, offset)
}

/// `biovec_phys_mergeable()`, Linux 7.3.4 block/blk.h: `vec2` starts where `vec1` ends in
/// physical memory and both lie within one `seg_boundary_mask` segment (CONFIG_KMSAN,
/// ZONE_DEVICE and Xen do not apply). In 7.3.4 only `bio_will_gap()` and the
/// request's `phys_gap_bit` use it: it does not change `nr_phys_segments`.
pub fn biovec_phys_mergeable(lim: &Limits, vec1: &Bvec, vec2: &Bvec) -> bool {
    let mask = lim.seg_boundary_mask;
    let addr1 = vec1.phys();
    let addr2 = vec2.phys();
    if addr1 + vec1.len != addr2 {
        return false;
    }
    (addr1 | mask) == ((addr2 + vec2.len - 1) | mask)
}

/// `bio_will_gap()`, Linux 7.3.4 block/blk-merge.c: would putting a bio whose first
/// bio_vec is `next_first` after one whose last is `prev_last` leave a virt boundary gap?
/// `first` is the first bio_vec of the request (back merge) or of the earlier bio (front
/// merge): "Don't merge if the 1st bio starts with non-zero offset".
pub(super) fn bio_will_gap(lim: &Limits, first: &Bvec, prev_last: &Bvec, next_first: &Bvec) -> bool {
    if lim.virt_boundary_mask == 0 {
        return false;
    }
    if first.offset & lim.virt_boundary_mask != 0 {
        return true;
    }
    if biovec_phys_mergeable(lim, prev_last, next_first) {
        return false;
    }
    __bvec_gap_to_prev(lim, prev_last, next_first.offset)
}

/// `get_max_segment_size()` (block/blk.h): how much of `len` bytes at physical address
/// `paddr` one segment takes, within `seg_boundary_mask` and `max_segment_size`.
pub fn get_max_segment_size(lim: &Limits, paddr: u64, len: u64) -> u64 {
    let mask = lim.seg_boundary_mask;
    len.min((mask - (mask & paddr)).min(lim.max_segment_size - 1) + 1)
}

/// `bvec_split_segs()`, Linux 7.3.4 block/blk-merge.c: add as much of `bv` as fits in
/// `max_segs` segments and `max_bytes`; true if the bio must be split inside it.
pub(super) fn bvec_split_segs(
    lim: &Limits,
    bv: &Bvec,
    nsegs: &mut u64,
    bytes: &mut u64,
    max_segs: u64,
    max_bytes: u64,
) -> bool {
    let max_len = max_bytes - *bytes;
    let mut len = bv.len.min(max_len);
    let mut total_len = 0;
    while len > 0 && *nsegs < max_segs {
        let seg_size = get_max_segment_size(lim, bv.phys() + total_len, len);
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

/// `bio_split_alignment()`, Linux 7.3.4 block/blk-merge.c, for a read: the logical block
/// size (`zone_write_granularity` only applies to writes).
pub(super) fn bio_split_alignment(lim: &Limits) -> u64 {
    lim.logical_block_size
}

/// `bio_split_io_at()`, Linux 7.3.4 block/blk-merge.c: where the bio must be split to fit
/// `max_bytes` and the segment limits. Returns `(split_sectors, nr_segs)`, split_sectors 0
/// when it fits; nr_segs counts the segments of what stays in the (front) bio.
///
/// Each (multi-page) bio_vec is at least one segment: a bio_vec within one page and
/// `max_fast_segment_size` is one, a longer one is cut by `bvec_split_segs()` where
/// `seg_boundary_mask` or `max_segment_size` says. Two bio_vecs are never counted as one
/// segment (within a bio, `bio_add_page()` has merged every physically adjacent pair).
pub fn bio_split_io_at(bio: &Bio, lim: &Limits, max_bytes: u64) -> (u64, u64) {
    let mut nsegs = 0;
    let mut bytes = 0;
    let mut prev: Option<Bvec> = None;
    let mut split = false;
    for bv in &bio.bvecs {
        // A queue without SG gaps takes no bvec that would leave a gap after the previous
        // one.
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
    let align = bio_split_alignment(lim);
    let bytes = bytes / align * align;
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
pub(super) fn bio_may_need_split(bio: &Bio, lim: &Limits) -> bool {
    match bio.bvecs.as_slice() {
        [bv] => bv.offset + bv.len > lim.max_fast_segment_size,
        _ => true,
    }
}
