//! Branch coverage of the ported read path: which decisions of the kernel functions a
//! prediction took, for picking a small set of scenarios that reaches all of them
//! (`radiff explore` on a patch the model has no policy for).
//!
//! Every decision of `page_cache_sync_ra()`, `page_cache_async_ra()`,
//! `page_cache_ra_order()`, `page_cache_ra_unbounded()`, `do_page_cache_ra()`,
//! `force_page_cache_ra()`, `readahead_expand()`, `ractl_max_pages()`, the ranges of
//! `get_init_ra_size()` / `get_next_ra_size()`, the buffered read path of mm/filemap.c and
//! the cases of `generic_fadvise()`, and of the fault path (`crate::fault`: `filemap_fault()`,
//! `do_sync_mmap_readahead()`, `do_async_mmap_readahead()`, `filemap_map_pages()`,
//! `do_fault_around()`, `finish_fault()`, `do_set_pmd()`, x86's retry, madvise, GUP's populate, MADV_COLLAPSE) has a stable id, `"<kernel function>: <condition>"`,
//! listed in [`BRANCHES`]. Where a comparison decides, its three sides are separate ids
//! (`"... req_count < max_pages"`, `"... == ..."`, `"... > ..."`), so that a set reaching
//! every id also reaches the boundary values.
//!
//! The ported functions record with `cover!` and `cover_cmp!`, which look the id up in
//! [`BRANCHES`] at compile time (an id missing from the table does not compile) and cost
//! one test of an `Option` when not recording, as `Recorder::note` does. Recording never
//! changes what the model predicts.
//!
//! ```
//! use radiff_model::*;
//! let input = Input {
//!     fs: FsKind::Xfs,
//!     file_size: 1 << 20,
//!     extents: vec![Extent { logical: 0, physical: 1 << 30, length: 1 << 20, flags: 0 }],
//!     queue: QueueLimits::nvme_qemu(128, 512),
//!     mapping: MappingLimits::xfs(),
//!     ops: vec![Op::Read { fd: 0, offset: 0, len: 4096 }],
//!     folio_pfns: Vec::new(),
//!     other_files: Vec::new(),
//!     vm: VmSettings::default(),
//! };
//! let (trace, cov) = coverage(&input, &Policy::BASE);
//! assert_eq!(trace, predict(&input, &Policy::BASE));
//! assert!(cov.contains("page_cache_sync_ra: index == 0"));
//! assert!(!cov.contains("page_cache_async_ra: index == expected"));
//! ```

/// One branch of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Branch {
    /// `"<kernel function>: <condition>"`.
    pub id: &'static str,
    /// The model policy (a variant of `kernels/variants/`) whose lines it belongs to;
    /// `None` for Linux 7.3.4's own branches.
    pub only: Option<&'static str>,
}

const fn b(id: &'static str) -> Branch {
    Branch { id, only: None }
}

const fn v(policy: &'static str, id: &'static str) -> Branch {
    Branch { id, only: Some(policy) }
}

/// Every branch the model records, in the order of the kernel functions.
pub const BRANCHES: &[Branch] = &[
    // mm/readahead.c
    b("get_init_ra_size: newsize < max / 32"),
    b("get_init_ra_size: newsize == max / 32"),
    b("get_init_ra_size: max / 32 < newsize < max / 4"),
    b("get_init_ra_size: newsize == max / 4"),
    b("get_init_ra_size: newsize > max / 4"),
    b("get_next_ra_size: cur < max / 16"),
    b("get_next_ra_size: cur == max / 16"),
    b("get_next_ra_size: max / 16 < cur < max / 2"),
    b("get_next_ra_size: cur == max / 2"),
    b("get_next_ra_size: cur > max / 2"),
    b("ractl_max_pages: req_size < ra_pages"),
    b("ractl_max_pages: req_size == ra_pages"),
    b("ractl_max_pages: req_size > ra_pages"),
    b("ractl_max_pages: io_pages < ra_pages"),
    b("ractl_max_pages: io_pages == ra_pages"),
    b("ractl_max_pages: io_pages > ra_pages"),
    b("ractl_max_pages: req_size > ra_pages && io_pages > ra_pages: up to io_pages"),
    b("ractl_max_pages: req_size < io_pages"),
    b("ractl_max_pages: req_size == io_pages"),
    b("ractl_max_pages: req_size > io_pages"),
    b("read_pages: nr_pages == 0"),
    b("read_pages: ->readahead"),
    b("page_cache_ra_unbounded: lookahead_size < nr_to_read"),
    b("page_cache_ra_unbounded: lookahead_size == nr_to_read"),
    b("page_cache_ra_unbounded: lookahead_size > nr_to_read"),
    b("page_cache_ra_unbounded: index unaligned to min_nrpages"),
    b("page_cache_ra_unbounded: page already present"),
    b("page_cache_ra_unbounded: allocation failed: stop"),
    b("page_cache_ra_unbounded: filemap_add_folio -EEXIST"),
    b("page_cache_ra_unbounded: folio added"),
    b("page_cache_ra_unbounded: folio added with PG_readahead"),
    b("do_page_cache_ra: i_size == 0"),
    b("do_page_cache_ra: index > end_index"),
    b("do_page_cache_ra: index == end_index"),
    b("do_page_cache_ra: nr_to_read < end_index - index"),
    b("do_page_cache_ra: nr_to_read == end_index - index"),
    b("do_page_cache_ra: nr_to_read > end_index - index"),
    b("force_page_cache_ra: io_pages < ra_pages"),
    b("force_page_cache_ra: io_pages == ra_pages"),
    b("force_page_cache_ra: io_pages > ra_pages"),
    b("force_page_cache_ra: nr_to_read < max_pages"),
    b("force_page_cache_ra: nr_to_read == max_pages"),
    b("force_page_cache_ra: nr_to_read > max_pages"),
    b("force_page_cache_ra: nr_to_read == 0"),
    b("force_page_cache_ra: chunk < 2 MiB"),
    b("force_page_cache_ra: chunk == 2 MiB"),
    b("force_page_cache_ra: more than one chunk"),
    b("ra_alloc_folio: folio holds mark: PG_readahead"),
    b("ra_alloc_folio: -ENOMEM"),
    b("ra_alloc_folio: -EEXIST"),
    b("page_cache_ra_order: !mapping_large_folio_support"),
    b("page_cache_ra_order: new_order < max_order"),
    b("page_cache_ra_order: new_order == max_order"),
    b("page_cache_ra_order: new_order > max_order"),
    b("page_cache_ra_order: new_order < ilog2(ra->size)"),
    b("page_cache_ra_order: new_order == ilog2(ra->size)"),
    b("page_cache_ra_order: new_order > ilog2(ra->size)"),
    b("page_cache_ra_order: ra->size == 0"),
    b("page_cache_ra_order: new_order < min_order"),
    b("page_cache_ra_order: limit < index + ra->size - 1"),
    b("page_cache_ra_order: limit == index + ra->size - 1"),
    b("page_cache_ra_order: limit > index + ra->size - 1"),
    b("page_cache_ra_order: index unaligned to order: smaller folio"),
    b("page_cache_ra_order: past EOF: order - 1"),
    b("page_cache_ra_order: folio of new_order"),
    b("page_cache_ra_order: folio of order 0"),
    b("page_cache_ra_order: ra_alloc_folio failed: fallback"),
    b("page_cache_ra_order: fallback: ra->size > index - start"),
    b("page_cache_ra_order: fallback: nothing left"),
    v("async-align-v2", "ra_order_shrink: ra->size == 0"),
    v("async-align-v2", "ra_order_shrink: trim keeps less than half: new_order - 1"),
    v("async-align-v2", "ra_order_shrink: end aligned: no trim"),
    v("async-align-v2", "ra_order_shrink: window shrunk"),
    v("async-align-v2", "ra_order_shrink: aligned_end <= start"),
    b("page_cache_sync_ra: FMODE_RANDOM"),
    b("page_cache_sync_ra: ra_pages == 0 forced read"),
    b("page_cache_sync_ra: ra_pages == 0: req_count = 1"),
    v("sync-ra-when-disabled", "page_cache_sync_ra: ra_pages == 0: whole request"),
    b("page_cache_sync_ra: do_forced_ra"),
    b("page_cache_sync_ra: index == 0"),
    b("page_cache_sync_ra: req_count < max_pages"),
    b("page_cache_sync_ra: req_count == max_pages"),
    b("page_cache_sync_ra: req_count > max_pages"),
    b("page_cache_sync_ra: prev_pos == -1"),
    b("page_cache_sync_ra: index == prev_index"),
    b("page_cache_sync_ra: index == prev_index + 1"),
    b("page_cache_sync_ra: index > prev_index + 1"),
    b("page_cache_sync_ra: index < prev_index"),
    b("page_cache_sync_ra: initial window"),
    b("page_cache_sync_ra: ra->size < req_count"),
    b("page_cache_sync_ra: ra->size == req_count"),
    b("page_cache_sync_ra: ra->size > req_count"),
    b("page_cache_sync_ra: contig_count < req_count"),
    b("page_cache_sync_ra: contig_count == req_count"),
    b("page_cache_sync_ra: contig_count > req_count"),
    b("page_cache_sync_ra: small random read"),
    b("page_cache_sync_ra: miss == ULONG_MAX: cached from the beginning"),
    b("page_cache_sync_ra: contig_count + req_count < max_pages"),
    b("page_cache_sync_ra: contig_count + req_count == max_pages"),
    b("page_cache_sync_ra: contig_count + req_count > max_pages"),
    b("page_cache_async_ra: ra_pages == 0"),
    b("page_cache_async_ra: index == expected"),
    b("page_cache_async_ra: index != expected"),
    b("page_cache_async_ra: next miss == 0"),
    b("page_cache_async_ra: start - index < max_pages"),
    b("page_cache_async_ra: start - index == max_pages"),
    b("page_cache_async_ra: start - index > max_pages"),
    b("page_cache_async_ra: ra->order < ffs(max_pages) - 1"),
    b("page_cache_async_ra: ra->order == ffs(max_pages) - 1"),
    b("page_cache_async_ra: ra->order > ffs(max_pages) - 1"),
    v("async-align-v1", "page_cache_async_ra: keep half: align >>= 1"),
    b("page_cache_async_ra: aligned_end == end"),
    b("page_cache_async_ra: aligned_end < end: trimmed"),
    b("page_cache_async_ra: aligned_end <= ra->start: not trimmed"),
    v("async-align-v2", "page_cache_async_ra: may_shrink"),
    // Linux 7.3.4's own function, but only seed 003's f2fs patch calls it on the paths the
    // model ports (erofs, netfs, btrfs, squashfs and orangefs do in the kernel; XFS, ext4
    // and f2fs do not): reachable under that policy alone.
    v("f2fs-extent-ra", "readahead_expand: leading edge"),
    v("f2fs-extent-ra", "readahead_expand: leading edge: folio present"),
    v("f2fs-extent-ra", "readahead_expand: leading edge: -EEXIST"),
    v("f2fs-extent-ra", "readahead_expand: trailing edge"),
    v("f2fs-extent-ra", "readahead_expand: trailing edge: folio present"),
    v("f2fs-extent-ra", "readahead_expand: trailing edge: -EEXIST"),
    v("f2fs-extent-ra", "readahead_expand: window covers the range"),
    // mm/filemap.c
    b("page_cache_next_miss: miss"),
    b("page_cache_next_miss: wrapped to 0"),
    b("page_cache_next_miss: max_scan without a miss"),
    b("page_cache_prev_miss: miss"),
    b("page_cache_prev_miss: below 0: ULONG_MAX"),
    b("page_cache_prev_miss: max_scan without a miss"),
    b("filemap_get_read_batch: index > max"),
    b("filemap_get_read_batch: no folio"),
    b("filemap_get_read_batch: batch full"),
    b("filemap_get_read_batch: folio not uptodate"),
    b("filemap_get_read_batch: PG_readahead"),
    b("filemap_get_read_batch: folio holds max"),
    b("filemap_create_folio: allocation failed: -ENOMEM"),
    b("filemap_create_folio: -EEXIST"),
    b("filemap_create_folio: ->read_folio"),
    b("filemap_get_pages: batch empty: page_cache_sync_ra"),
    b("filemap_get_pages: still empty: filemap_create_folio"),
    b("filemap_get_pages: PG_readahead: filemap_readahead"),
    b("filemap_get_pages: not uptodate, after others: -EAGAIN"),
    b("filemap_get_pages: not uptodate, alone: filemap_update_page"),
    b("filemap_get_pages: uptodate"),
    b("filemap_read: count == 0"),
    b("filemap_read: pos >= s_maxbytes"),
    b("filemap_read: ki_pos >= i_size"),
    b("filemap_read: AOP_TRUNCATED_PAGE: retry"),
    b("filemap_read: end_offset < folio"),
    b("filemap_read: read ends in i_size"),
    b("filemap_read: read ends at i_size"),
    // RWF_NOWAIT, RWF_DONTCACHE (mm/filemap.c, mm/readahead.c) and O_DIRECT reads
    // (fs/iomap/direct-io.c; crate::direct)
    b("filemap_create_folio: IOCB_NOWAIT: -EAGAIN"),
    b("filemap_create_folio: IOCB_DONTCACHE: dropbehind"),
    b("filemap_update_page: IOCB_NOWAIT, folio locked: -EAGAIN"),
    b("filemap_update_page: IOCB_NOWAIT, the kernel's read went on: folio uptodate"),
    b("filemap_read: IOCB_NOWAIT: the kernel returned what the model cannot follow: the kernel races"),
    b("filemap_read: -EAGAIN"),
    b("filemap_end_dropbehind_read: dropbehind: removed"),
    b("ractl_alloc_folio: dropbehind"),
    b("iomap_dio_read_simple: -ENOTBLK"),
    b("__iomap_dio_read_simple: not one mapped extent: -ENOTBLK"),
    b("__iomap_dio_read_simple: one bio"),
    b("__iomap_dio_rw: mapped extent: bios under the plug"),
    b("__iomap_dio_rw: hole or unwritten: zeroed, no I/O"),
    // mm/filemap.c, filemap_splice_read() (crate::splice)
    b("filemap_splice_read: *ppos >= s_maxbytes"),
    b("filemap_splice_read: *ppos >= i_size"),
    b("filemap_splice_read: folio_pos >= end_offset"),
    b("filemap_splice_read: pipe full"),
    // mm/fadvise.c
    b("generic_fadvise: len == 0 or past LLONG_MAX"),
    b("generic_fadvise: POSIX_FADV_NORMAL"),
    b("generic_fadvise: POSIX_FADV_RANDOM"),
    b("generic_fadvise: POSIX_FADV_SEQUENTIAL"),
    b("generic_fadvise: POSIX_FADV_WILLNEED"),
    b("generic_fadvise: POSIX_FADV_NOREUSE"),
    b("generic_fadvise: POSIX_FADV_DONTNEED"),
    b("generic_fadvise: DONTNEED: partial last page"),
    b("generic_fadvise: DONTNEED: end_index == 0"),
    b("generic_fadvise: DONTNEED: end_index < start_index"),
    b("generic_fadvise: DONTNEED: folio kept (partial or under I/O)"),
    b("generic_fadvise: DONTNEED: folio mapped: kept"),
    b("generic_fadvise: DONTNEED: folio removed"),
    // arch/x86/mm/fault.c
    b("do_user_addr_fault: page mapped: no fault"),
    b("do_user_addr_fault: VMA lock: done"),
    b("do_user_addr_fault: VMA lock: VM_FAULT_RETRY, major: FAULT_FLAG_TRIED"),
    b("do_user_addr_fault: VMA lock: VM_FAULT_RETRY, minor"),
    b("do_user_addr_fault: mmap_lock: VM_FAULT_RETRY: FAULT_FLAG_TRIED"),
    // mm/memory.c
    b("should_fault_around: fault_around_pages == 1"),
    b("do_read_fault: fault-around mapped the page"),
    b("do_fault_around: from clamped to the VMA start"),
    b("do_fault_around: to clamped to the VMA end"),
    b("do_fault_around: to clamped to the page table"),
    b("do_set_pmd: VM_NOHUGEPAGE"),
    b("do_set_pmd: !thp_vma_suitable_order"),
    b("do_set_pmd: folio not of PMD order"),
    b("do_set_pmd: PMD mapped"),
    b("finish_fault: folio past i_size: one page"),
    b("finish_fault: do_set_pmd"),
    b("finish_fault: folio beyond the VMA or page table: one page"),
    b("finish_fault: PTE changed"),
    b("finish_fault: PTEs of the folio not none: fallback"),
    b("finish_fault: the whole folio"),
    b("finish_fault: one page"),
    // mm/filemap.c: the fault half
    b("filemap_fault: __filemap_get_folio created the folio"),
    b("filemap_fault: index >= max_idx: VM_FAULT_SIGBUS"),
    b("filemap_fault: folio in the page cache"),
    b("filemap_fault: FAULT_FLAG_TRIED: no async readahead"),
    b("filemap_fault: no folio: VM_FAULT_MAJOR"),
    b("filemap_fault: page_not_uptodate: ->read_folio"),
    b("filemap_fault: VM_FAULT_RETRY"),
    b("filemap_fault: VM_FAULT_LOCKED"),
    b("lock_folio_maybe_drop_mmap: folio locked: wait"),
    b("fault: woke on one request with others in flight: the kernel races"),
    b("fault: a program's load met a read in flight on a folio it looks at: the kernel races"),
    b("do_sync_mmap_readahead: VM_HUGEPAGE: force_thp_readahead"),
    b("do_sync_mmap_readahead: VM_HUGEPAGE without large folios"),
    b("do_sync_mmap_readahead: VM_RAND_READ: no readahead"),
    b("do_sync_mmap_readahead: ra_pages == 0"),
    b("do_sync_mmap_readahead: VM_SEQ_READ: page_cache_sync_ra"),
    b("do_sync_mmap_readahead: mmap_miss++"),
    b("do_sync_mmap_readahead: mmap_miss > MMAP_LOTSAMISS: no readahead"),
    b("do_sync_mmap_readahead: force_thp_readahead: two folios"),
    b("do_sync_mmap_readahead: read-around from 0"),
    b("do_sync_mmap_readahead: read-around"),
    b("do_async_mmap_readahead: VM_RAND_READ or ra_pages == 0"),
    b("do_async_mmap_readahead: mmap_miss--"),
    b("do_async_mmap_readahead: folio locked: mmap_miss kept"),
    b("do_async_mmap_readahead: PG_readahead: page_cache_async_ra"),
    b("maybe_unlock_mmap_for_io: fault lock dropped"),
    b("maybe_unlock_mmap_for_io: FAULT_FLAG_TRIED: lock kept"),
    b("filemap_map_pages: end_pgoff clamped to file_end"),
    b("filemap_map_pages: no uptodate folio: no event"),
    b("filemap_map_pages: no page table: no event"),
    b("filemap_map_pages: PMD mapped: no event"),
    b("filemap_map_pages: mmap_miss--"),
    b("filemap_map_pages: mm_filemap_map_pages"),
    b("next_uptodate_folio: folio locked: skip"),
    b("next_uptodate_folio: PG_readahead: skip"),
    b("filemap_map_pmd: do_set_pmd"),
    b("filemap_map_folio_range: the whole folio"),
    b("filemap_map_folio_range: part of the folio"),
    // mm/madvise.c, mm/khugepaged.c
    b("hugepage_madvise: MADV_HUGEPAGE"),
    b("hugepage_madvise: MADV_NOHUGEPAGE"),
    b("madvise_update_vma: VMA split"),
    b("madvise_vma_behavior: MADV_NORMAL"),
    b("madvise_vma_behavior: MADV_SEQUENTIAL"),
    b("madvise_vma_behavior: MADV_RANDOM"),
    // mm/khugepaged.c: MADV_COLLAPSE (crate::collapse)
    b("madvise_collapse: !collapse_possible: -EINVAL"),
    b("madvise_collapse: no aligned 2 MiB inside the range"),
    b("madvise_collapse: other error: exit"),
    b("collapse_possible: VM_NOHUGEPAGE"),
    b("collapse_possible: !thp_vma_suitable_order"),
    b("collapse_possible: !file_thp_enabled"),
    b("collapse_scan_file: a PMD-order folio: SCAN_PTE_MAPPED_HUGEPAGE"),
    b("collapse_file: SCAN_ALLOC_HUGE_PAGE_FAIL"),
    b("collapse_file: missing page: page_cache_sync_readahead"),
    b("collapse_file: no folio after the readahead: SCAN_FAIL"),
    b("collapse_file: folio_trylock failed: SCAN_PAGE_LOCK"),
    b("collapse_file: a readahead of several requests: the kernel races"),
    b("collapse_file: collapsed"),
    b("try_collapse_pte_mapped_thp: SCAN_PMD_MAPPED"),
    b("try_collapse_pte_mapped_thp: set_huge_pmd"),
    b("madvise_willneed: vfs_fadvise(POSIX_FADV_WILLNEED)"),
    // PROT_EXEC mappings (mm/filemap.c)
    b("do_sync_mmap_readahead: VM_EXEC: window ends at the VMA's end"),
    b("do_sync_mmap_readahead: VM_EXEC: read from the fault, no async part"),
    // MAP_POPULATE, MADV_POPULATE_READ (mm/gup.c, mm/madvise.c)
    b("madvise_populate: MADV_POPULATE_READ"),
    b("__mm_populate: VM_FAULT_RETRY at the first page: again from it"),
    b("__get_user_pages_locked: retry the page with FOLL_TRIED"),
    b("__get_user_pages: PMD mapped: to the PMD's end"),
    b("__get_user_pages: faultin_page: VM_FAULT_RETRY: -EBUSY"),
    b("__get_user_pages: faultin_page: done: look the page up again"),
];

/// Index of `id` in [`BRANCHES`]; used in const context, so an id missing from the table
/// fails to compile.
pub const fn index(id: &str) -> usize {
    let mut i = 0;
    while i < BRANCHES.len() {
        if str_eq(BRANCHES[i].id, id) {
            return i;
        }
        i += 1;
    }
    panic!("a branch id recorded by the model is missing from coverage::BRANCHES")
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const WORDS: usize = BRANCHES.len().div_ceil(64);

/// The set of branches one or more predictions took.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coverage {
    bits: [u64; WORDS],
}

impl std::fmt::Debug for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.ids()).finish()
    }
}

impl Coverage {
    /// Records branch `i` of [`BRANCHES`].
    #[inline]
    pub fn hit(&mut self, i: usize) {
        self.bits[i / 64] |= 1 << (i % 64);
    }

    /// Whether branch `i` of [`BRANCHES`] was taken.
    pub fn has(&self, i: usize) -> bool {
        self.bits[i / 64] >> (i % 64) & 1 == 1
    }

    /// Whether the branch `id` was taken (false for an id the model does not have).
    pub fn contains(&self, id: &str) -> bool {
        BRANCHES.iter().position(|b| b.id == id).is_some_and(|i| self.has(i))
    }

    /// A set of the given ids; None names an id the model does not have.
    pub fn of(ids: &[&str]) -> Result<Coverage, String> {
        let mut c = Coverage::default();
        for id in ids {
            let i = BRANCHES.iter().position(|b| b.id == *id).ok_or_else(|| format!("no branch `{id}`"))?;
            c.hit(i);
        }
        Ok(c)
    }

    /// Indexes in [`BRANCHES`] of the branches taken.
    pub fn indexes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..BRANCHES.len()).filter(|&i| self.has(i))
    }

    /// The ids of the branches taken, in table order.
    pub fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.indexes().map(|i| BRANCHES[i].id)
    }

    /// Number of branches taken.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds every branch of `other`.
    pub fn union(&mut self, other: &Coverage) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }

    /// The branches of `self` that are not in `other`.
    pub fn minus(&self, other: &Coverage) -> Coverage {
        let mut c = *self;
        for (a, b) in c.bits.iter_mut().zip(&other.bits) {
            *a &= !b;
        }
        c
    }

    /// Every branch of Linux 7.3.4 (those of no policy: `Branch::only` is None).
    pub fn base() -> Coverage {
        let mut c = Coverage::default();
        for (i, br) in BRANCHES.iter().enumerate() {
            if br.only.is_none() {
                c.hit(i);
            }
        }
        c
    }
}

/// Records a branch: `cover!(self.rec, "page_cache_async_ra: index == expected")`.
macro_rules! cover {
    ($rec:expr, $id:literal) => {
        $rec.cover(const { $crate::coverage::index($id) })
    };
}

/// Records which side of a comparison was taken: `cover_cmp!(self.rec,
/// "page_cache_sync_ra: req_count", "max_pages", req_count, max_pages)` records
/// `"page_cache_sync_ra: req_count < max_pages"`, `"... == ..."` or `"... > ..."`. The
/// values are only evaluated when recording.
macro_rules! cover_cmp {
    ($rec:expr, $lhs:literal, $rhs:literal, $a:expr, $b:expr) => {
        if $rec.covering() {
            let (a, b) = ($a, $b);
            $rec.cover(if a < b {
                const { $crate::coverage::index(concat!($lhs, " < ", $rhs)) }
            } else if a == b {
                const { $crate::coverage::index(concat!($lhs, " == ", $rhs)) }
            } else {
                const { $crate::coverage::index(concat!($lhs, " > ", $rhs)) }
            })
        }
    };
}

pub(crate) use cover;
pub(crate) use cover_cmp;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_named_after_a_kernel_function() {
        for (i, b) in BRANCHES.iter().enumerate() {
            assert_eq!(index(b.id), i, "`{}` is listed twice", b.id);
            let (function, condition) =
                b.id.split_once(": ").unwrap_or_else(|| panic!("`{}`: not `function: condition`", b.id));
            assert!(function.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "`{}`", b.id);
            assert!(!condition.is_empty());
        }
    }

    /// Every id the sources record (`cover!` and both sides of `cover_cmp!`) is in the
    /// table (the compiler checks it too), and every id of the table is recorded somewhere.
    #[test]
    fn the_table_lists_every_id_the_sources_record_and_nothing_else() {
        let sources = [
            include_str!("readahead.rs"),
            include_str!("readahead/order.rs"),
            include_str!("filemap.rs"),
            include_str!("fadvise.rs"),
            include_str!("fs.rs"),
            include_str!("fault.rs"),
            include_str!("fault/around.rs"),
            include_str!("fault/mmap_ra.rs"),
            include_str!("splice.rs"),
            include_str!("gup.rs"),
            include_str!("direct.rs"),
            include_str!("collapse.rs"),
        ];
        let mut recorded: Vec<String> = Vec::new();
        for src in sources {
            let text: String = src.split_whitespace().collect::<Vec<_>>().join(" ");
            for part in text.split("cover!(").skip(1) {
                recorded.push(literals(part)[0].clone());
            }
            for part in text.split("cover_cmp!(").skip(1) {
                let l = literals(part);
                for op in ["<", "==", ">"] {
                    recorded.push(format!("{} {op} {}", l[0], l[1]));
                }
            }
        }
        for id in &recorded {
            assert!(BRANCHES.iter().any(|b| b.id == id), "`{id}` is recorded but missing from BRANCHES");
        }
        for b in BRANCHES {
            assert!(recorded.iter().any(|id| id == b.id), "`{}` is in BRANCHES but nothing records it", b.id);
        }
    }

    /// The string literals at the start of a macro's arguments, up to the closing `)`.
    fn literals(args: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = args;
        while let Some(start) = rest.find('"') {
            let before = &rest[..start];
            if before.contains(')') && !out.is_empty() {
                break;
            }
            let end = rest[start + 1..].find('"').expect("closing quote") + start + 1;
            out.push(rest[start + 1..end].to_string());
            rest = &rest[end + 1..];
            if out.len() == 2 {
                break;
            }
        }
        out
    }

    #[test]
    fn sets_union_and_difference() {
        let a = Coverage::of(&["page_cache_sync_ra: index == 0", "filemap_read: count == 0"]).unwrap();
        let b = Coverage::of(&["filemap_read: count == 0", "generic_fadvise: POSIX_FADV_RANDOM"]).unwrap();
        let mut u = a;
        u.union(&b);
        assert_eq!(u.len(), 3);
        assert_eq!(a.minus(&b).ids().collect::<Vec<_>>(), vec!["page_cache_sync_ra: index == 0"]);
        assert!(Coverage::of(&["no such branch"]).is_err());
        assert!(Coverage::base().len() < BRANCHES.len());
    }
}
