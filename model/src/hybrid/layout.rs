//! Where the Rust mirrors of the header's structs put each member, for the harness to
//! check against gcc's layout of model/c/radiff_kernel.h.

use super::*;

/// Where the Rust mirrors above put each member of the header's structs they hold: (the
/// C struct, the member, its offset, its size), every member the model reads or writes,
/// and, as member `(end)`, where the kernel's own members end (the room for a tree's begins)
/// in the two structs a tree may grow. The harness checks each against gcc's layout of
/// model/c/radiff_kernel.h.
pub fn mirror_layout() -> Vec<(&'static str, &'static str, usize, usize)> {
    fn size<T, F>(_: impl Fn(&T) -> &F) -> usize {
        std::mem::size_of::<F>()
    }
    macro_rules! members {
        ($out:ident, $c:literal, $t:ty: $($m:ident),*) => {
            $( $out.push(($c, stringify!($m), std::mem::offset_of!($t, $m), size(|s: &$t| &s.$m))); )*
        };
    }
    let mut out = Vec::new();
    // struct file_ra_state is the tree's: the model reads it through radiff_ra_load().
    members!(out, "radiff_ra", CRadiffRa: start, size, async_size, ra_pages, order, mmap_miss, prev_pos);
    out.push(("radiff_ra", "(end)", std::mem::size_of::<CRadiffRa>(), 0));
    members!(out, "readahead_control", CReadaheadControl: file, mapping, ra, _index, _nr_pages, _batch_count, dropbehind, _workingset, _pflags);
    out.push(("readahead_control", "(end)", std::mem::offset_of!(CReadaheadControl, radiff_extra), 0));
    members!(out, "folio", CFolio: index, order, flags, mapping, radiff, page, radiff_pages);
    out.push(("folio", "(end)", std::mem::size_of::<CFolio>(), 0));
    members!(out, "folio_batch", super::read::CFolioBatch: nr, i, percpu_pvec_drained, folios);
    members!(out, "kiocb", super::read::CKiocb: ki_filp, ki_pos, ki_flags, ki_waitq);
    members!(out, "iov_iter", super::read::CIovIter: count);
    members!(out, "backing_dev_info", CBdi: ra_pages, io_pages);
    members!(out, "inode", CInode: i_mode, i_size, i_mapping, radiff_bdi, i_blkbits, i_sb);
    members!(out, "super_block", CSuperBlock: s_bdev, s_maxbytes);
    members!(out, "address_space_operations", CAops: read_folio, readahead, is_partially_uptodate);
    members!(out, "address_space", CAddressSpace: host, i_pages, invalidate_lock, gfp_mask, flags, a_ops, radiff, radiff_min_order, radiff_max_order);
    members!(out, "file_operations", super::CFileOperations: fadvise);
    members!(out, "file", CFile: f_mode, f_mapping, f_inode, radiff_fd, f_lock, f_op);
    // `f_ra` is the last member, the tree's struct, which may take less than the room.
    out.push(("file", "f_ra", std::mem::offset_of!(CFile, f_ra), 0));
    members!(out, "vm_area_struct", CVma: vm_start, vm_end, vm_pgoff, vm_flags, vm_file, vm_mm, vm_ops);
    members!(out, "vm_fault", CVmFault: vma, pgoff, address, flags, pmd, prealloc_pte, pte, ptl, page, cow_page, orig_pte);
    members!(out, "vm_operations_struct", super::CVmOps: map_pages);
    members!(out, "radiff_env", CEnv: ops, ctx, cache, cache_pages, pool, pool_len, pool_used);
    members!(out, "radiff_ops", COps: alloc_folio, add_folio, load, next_miss, prev_miss, folio_flag, remove_folio, readahead, trace_sync_ra, trace_async_ra, trace_ra_unbounded, trace_ra_order, bug, invalidate, plug, map_blocks, bio_alloc, bio_add_folio, submit_bio, read_full_folio, fault_around_pages, find, pte_table, set_ptes, pmd_install, set_pmd, trace_map_pages, xas_step, folio_trylock, folio_wait, read_folio);
    members!(out, "bvec_iter", CBvecIter: bi_sector, bi_size);
    members!(out, "bio", CBio: bi_bdev, bi_opf, bi_iter, bi_end_io, radiff_id, bi_vcnt);
    out
}

/// The header's constants the Rust mirrors use, with their values here: the page cache's
/// bytes as the C reads them, and the folio flags the model lends. The harness checks each
/// against the header.
#[allow(clippy::unnecessary_cast, reason = "c_ulong is u64 on 64-bit hosts only")]
pub fn mirror_constants() -> Vec<(&'static str, u64)> {
    let mut out: Vec<(&'static str, u64)> =
        crate::pagecache::SLOT_BITS.iter().map(|&(name, bits)| (name, u64::from(bits))).collect();
    out.extend([
        ("RADIFF_PG_READAHEAD", PG_READAHEAD as u64),
        ("RADIFF_PG_DROPBEHIND", PG_DROPBEHIND as u64),
        ("RADIFF_PG_LOCKED", PG_LOCKED as u64),
        ("RADIFF_PG_UPTODATE", PG_UPTODATE as u64),
        ("IOCB_NOWAIT", super::read::IOCB_NOWAIT as u64),
        ("IOCB_DONTCACHE", super::read::IOCB_DONTCACHE as u64),
        ("RADIFF_FOLIO_ALIGN", std::mem::align_of::<CFolio>() as u64),
        ("MAX_PAGECACHE_ORDER", u64::from(crate::input::MAX_PAGECACHE_ORDER)),
    ]);
    out
}
