//! Faults that are not plain loads of a PROT_READ mapping, and blocks larger than the
//! page: expectations derived by reading Linux 7.3.4's mm/filemap.c
//! (do_sync_mmap_readahead()'s VM_EXEC branch), mm/gup.c (`__mm_populate()`,
//! `__get_user_pages_locked()`), mm/madvise.c (`madvise_do_behavior()`'s plug) and
//! fs/xfs/libxfs/xfs_ialloc.c (min_folio_order), each test saying how.
//!
//! Common setting: XFS on NVMe, read_ahead_kb 128 (ra_pages 32), fault_around_bytes
//! 64 KiB, the guest waiting for the device after each touch (the default `ModelConfig`).

mod common;

use common::*;
use radiff_model::pattern::expand;
use radiff_model::*;

fn input(file_size: u64, mapping: MappingLimits, steps: &[Step]) -> Input {
    Input {
        fs: FsKind::Xfs,
        file_size,
        extents: one_extent(file_size),
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping,
        ops: expand(steps, file_size),
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: VmSettings { fault_around_bytes: 65536, ..Default::default() },
    }
}

fn mmap(offset: u64, len: u64, exec: bool, populate: bool) -> Step {
    Step::Mmap { map: 0, fd: 0, offset, len, shared: true, exec, populate }
}

fn touch_pages(pages: Vec<u64>) -> Step {
    Step::Touch { maps: vec![0], from: 0, to: None, order: TouchOrder::Pages { pages } }
}

fn madvise(offset: u64, len: u64, advice: MadvAdvice) -> Step {
    Step::Madvise { map: 0, offset, len, advice }
}

/// The `page_cache_ra_order()` submissions, in order: (index, size, async_size).
fn order_submits(trace: &Trace) -> Vec<(u64, u64, u64)> {
    trace
        .windows
        .iter()
        .flat_map(|w| &w.submits)
        .filter_map(|s| match *s {
            Submit::Order { index, size, async_size, .. } => Some((index, size, async_size)),
            Submit::Unbounded { .. } => None,
        })
        .collect()
}

/// A fault at page 100 of a PROT_EXEC mapping of the whole file: "ra->start =
/// round_down(vmf->pgoff, 1UL << ra->order)" with exec_folio_order() 0 gives 100 (read-around
/// would start at 100 - 32 / 2 = 84), "ra->size = ra_end - ra->start" 32, "ra->async_size =
/// 0".
#[test]
fn an_exec_fault_reads_from_the_faulting_page_with_no_async_part() {
    let size = 8 * MIB;
    let exec = predict(
        &input(size, MappingLimits::xfs(), &[mmap(0, size, true, false), touch_pages(vec![100])]),
        &Policy::BASE,
    );
    assert_eq!(order_submits(&exec), vec![(100, 32, 0)]);
    let plain = predict(
        &input(size, MappingLimits::xfs(), &[mmap(0, size, false, false), touch_pages(vec![100])]),
        &Policy::BASE,
    );
    assert_eq!(order_submits(&plain), vec![(84, 32, 8)], "PROT_READ reads around the fault");
}

/// "ra_end = min(ra_end, end)" with end = vma_end_pgoff(): a mapping of 110 pages faulted at
/// page 100 reads pages 100 to 109 only.
#[test]
fn an_exec_window_ends_at_the_vmas_end() {
    let size = 8 * MIB;
    let trace = predict(
        &input(size, MappingLimits::xfs(), &[mmap(0, 110 * 4096, true, false), touch_pages(vec![100])]),
        &Policy::BASE,
    );
    assert_eq!(order_submits(&trace), vec![(100, 10, 0)]);
}

/// "if ((vm_flags & (VM_RAND_READ | VM_EXEC)) == VM_RAND_READ) return fpin;": MADV_RANDOM
/// stops the read of a PROT_READ mapping's fault but not a PROT_EXEC one's.
#[test]
fn madv_random_does_not_stop_an_exec_mappings_read() {
    let size = 8 * MIB;
    let steps = |exec| [mmap(0, size, exec, false), madvise(0, size, MadvAdvice::Random), touch_pages(vec![100])];
    assert_eq!(
        order_submits(&predict(&input(size, MappingLimits::xfs(), &steps(true)), &Policy::BASE)),
        vec![(100, 32, 0)]
    );
    assert_eq!(
        order_submits(&predict(&input(size, MappingLimits::xfs(), &steps(false)), &Policy::BASE)),
        vec![],
        "PROT_READ under MADV_RANDOM reads only the page"
    );
}

/// "if (!(vm_flags & (VM_SEQ_READ | VM_EXEC)))" guards the mmap_miss count: 300 touches
/// 256 pages apart (each a miss: no window reaches the next) stop the read-around of a
/// PROT_READ mapping past MMAP_LOTSAMISS (100) misses, never an exec mapping's.
#[test]
fn exec_misses_never_stop_reading() {
    let size = 300 * MIB;
    let pages: Vec<u64> = (0..300).map(|i| i * 256).collect();
    let stop = "do_sync_mmap_readahead: mmap_miss > MMAP_LOTSAMISS: no readahead";
    let (exec, cov) = coverage(
        &input(size, MappingLimits::xfs(), &[mmap(0, size, true, false), touch_pages(pages.clone())]),
        &Policy::BASE,
    );
    assert!(!cov.contains(stop));
    assert_eq!(order_submits(&exec).len(), 300, "every miss reads a window");
    let (plain, cov) =
        coverage(&input(size, MappingLimits::xfs(), &[mmap(0, size, false, false), touch_pages(pages)]), &Policy::BASE);
    assert!(cov.contains(stop));
    assert_eq!(order_submits(&plain).len(), 100, "misses 1 to 100 read around, the rest do not");
}

/// MAP_POPULATE of 32 pages at offset 0: the fault at 0 reads around [0, 32) (async 8,
/// PG_readahead on 24), sleeps on folio 0 with the lock dropped (VM_FAULT_RETRY), and
/// `__mm_populate()` starts `populate_vma_page_range()` again at page 0. Fault-around maps
/// the rest but page 24 (PG_readahead: next_uptodate_folio() skips it), whose fault starts
/// the async window [32, 64). Every page is mapped when mmap() returns: the touches after
/// it open no window.
#[test]
fn map_populate_maps_the_whole_mapping_in_the_mmap_call() {
    let size = 8 * MIB;
    let len = 32 * 4096;
    let steps =
        [mmap(0, len, false, true), Step::Touch { maps: vec![0], from: 0, to: None, order: TouchOrder::Sequential }];
    let (trace, cov) = coverage(&input(size, MappingLimits::xfs(), &steps), &Policy::BASE);
    assert!(cov.contains("__mm_populate: VM_FAULT_RETRY at the first page: again from it"));
    assert_eq!(order_submits(&trace), vec![(0, 32, 8), (32, 32, 32)]);
    let populate_alone = predict(&input(size, MappingLimits::xfs(), &steps[..1]), &Policy::BASE);
    assert_eq!(trace, populate_alone, "the touches take no fault");
    let faults = trace.windows.iter().filter(|w| w.trigger == Trigger::Fault).map(|w| w.index).collect::<Vec<_>>();
    assert_eq!(faults, vec![0, 24]);
}

/// MADV_POPULATE_READ of pages [16, 24) of a 64-page mapping: the fault at 16 reads around
/// [0, 32) and returns VM_FAULT_RETRY; `__get_user_pages_locked()` does page 16 again with
/// FOLL_TRIED, then the rest without. The async window that page 24's fault would start is
/// out of the range, so the call issues one request; its read waits in
/// madvise_do_behavior()'s plug until the fault sleeps on folio 16 (`blk_flush_plug()`
/// from schedule()), which is where the kernel's trace shows it.
#[test]
fn madv_populate_read_retries_the_page_with_foll_tried() {
    let size = 8 * MIB;
    let steps = [mmap(0, 64 * 4096, false, false), madvise(16 * 4096, 8 * 4096, MadvAdvice::PopulateRead)];
    let (trace, cov) = coverage(&input(size, MappingLimits::xfs(), &steps), &Policy::BASE);
    assert!(cov.contains("madvise_populate: MADV_POPULATE_READ"));
    assert!(cov.contains("__get_user_pages_locked: retry the page with FOLL_TRIED"));
    assert_eq!(order_submits(&trace), vec![(0, 32, 8)]);
    let fault = trace.windows.iter().find(|w| w.trigger == Trigger::Fault).expect("a fault");
    assert_eq!((fault.index, fault.requests.len()), (16, 1));
}

/// Reaching PG_readahead inside MADV_POPULATE_READ: page 24's fault starts the async
/// window [32, 64) with the plug held and nothing sleeps after it, so its request is
/// issued at blk_finish_plug() when the call ends, after every window of the call: the
/// async window has no request of its own (measured on 7.3.4: mmap_populate, window 12).
#[test]
fn an_async_window_inside_madv_populate_read_is_issued_when_the_call_ends() {
    let size = 8 * MIB;
    let steps = [mmap(0, 64 * 4096, false, false), madvise(16 * 4096, 16 * 4096, MadvAdvice::PopulateRead)];
    let trace = predict(&input(size, MappingLimits::xfs(), &steps), &Policy::BASE);
    let async_at = trace.windows.iter().position(|w| w.trigger == Trigger::Async).expect("an async window");
    assert_eq!(trace.windows[async_at].index, 24);
    assert!(trace.windows[async_at].requests.is_empty());
    let later: usize = trace.windows[async_at + 1..].iter().map(|w| w.requests.len()).sum();
    assert_eq!(later, 1, "the async window's request comes after it");
}

/// xfs_ialloc_setup_geometry(): "igeo->min_folio_order = mp->m_sb.sb_blocklog - PAGE_SHIFT"
/// for blocks larger than the page; other file systems keep their limits.
#[test]
fn the_block_size_gives_xfs_its_minimum_folio_order() {
    assert_eq!(MappingLimits::for_fs_block(FsKind::Xfs, Some(16384)).min_order, 2);
    assert_eq!(MappingLimits::for_fs_block(FsKind::Xfs, Some(65536)).min_order, 4);
    assert_eq!(MappingLimits::for_fs_block(FsKind::Xfs, Some(4096)), MappingLimits::xfs());
    assert_eq!(MappingLimits::for_fs_block(FsKind::Xfs, None), MappingLimits::xfs());
    assert_eq!(MappingLimits::for_fs_block(FsKind::Ext4, None), MappingLimits::ext4());
}

/// With 16 KiB blocks every folio is at least order 2 at an index that is a multiple of 4:
/// page_cache_ra_unbounded() rounds its index down ("index = mapping_align_index(mapping,
/// index)") and page_cache_ra_order() never goes below min_order; a 4 KiB read at page 1
/// starts its window at page 0, and a fault at page 101 reads around from 84 (85 rounded
/// down to a block).
#[test]
fn sixteen_kib_blocks_align_every_folio_to_the_block() {
    let size = 8 * MIB;
    let lbs = MappingLimits::for_fs_block(FsKind::Xfs, Some(16384));
    let reads = [
        Step::Read { fd: 0, offset: 4096, size: 4096 },
        Step::Sequential { fd: 0, from: 8192, size: 20480, to: Some(2 * MIB) },
    ];
    let trace = predict(&input(size, lbs, &reads), &Policy::BASE);
    assert_eq!(trace.windows[0].folios[0].index, 0);
    for f in trace.windows.iter().flat_map(|w| &w.folios) {
        assert!(f.order >= 2 && f.index % 4 == 0, "folio {} order {}", f.index, f.order);
    }
    let fault = predict(&input(size, lbs, &[mmap(0, size, false, false), touch_pages(vec![101])]), &Policy::BASE);
    let first = fault.windows.iter().flat_map(|w| &w.folios).next().expect("a folio");
    assert_eq!((first.index, first.order >= 2), (84, true));
}
