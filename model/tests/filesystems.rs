//! How each file system's ->readahead turns folios into requests where the file's
//! layout gets in the way: extent breaks inside a large folio, unwritten extents, holes,
//! the end of the file, fadvise hints.

mod common;

use common::*;
use radiff_model::*;

fn sequential(size: u64, reads: &[(u64, u64)]) -> Vec<Op> {
    let _ = size;
    reads.iter().map(|&(offset, len)| Op::Read { fd: 0, offset, len }).collect()
}

/// 16 KiB, 16 KiB, 16 KiB, 16 KiB then 64 KiB and 128 KiB reads from 0: the third async
/// window is [24, 48) with folios (24, order 3) and (32, order 4).
fn ramp(fs: FsKind, mapping: MappingLimits, extents: Vec<Extent>) -> Input {
    let reads = [(0, 16384), (16384, 16384), (32768, 16384), (49152, 16384), (65536, 65536), (131072, 131072)];
    Input {
        fs,
        file_size: MIB,
        extents,
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping,
        ops: sequential(MIB, &reads),
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    }
}

fn requests(w: &Window) -> Vec<(u64, u64, &str)> {
    w.requests.iter().map(|r| (r.sector, r.sectors, r.rwbs.as_str())).collect()
}

#[test]
fn ext4_reads_a_folio_across_an_extent_break_block_by_block() {
    // The break at page 40 falls inside the order-4 folio [32, 48).
    let input = ramp(FsKind::Ext4, MappingLimits::ext4(), two_extents(MIB, 40 * 4096));
    let trace = predict(&input, &Policy::BASE);
    let w = &trace.windows[2];
    assert_eq!(w.folios, vec![Folio { index: 24, order: 3 }, Folio { index: 32, order: 4 }]);
    let a = DISK_OFFSET >> 9;
    let b = (DISK_OFFSET + 40 * 4096 + 64 * MIB) >> 9;
    // ext4_mpage_readpages() sends [24, 32) as a readahead bio; the folio at 32 is
    // "confused" and block_read_full_folio() submits one plain read per block: those of
    // pages 32..39 back-merge into the plugged request, those of 40..47 make a new one.
    assert_eq!(requests(w), vec![(a + 24 * 8, 128, "RA"), (b, 64, "R")]);
}

#[test]
fn xfs_splits_the_same_folio_into_two_readahead_bios() {
    let input = ramp(FsKind::Xfs, MappingLimits::xfs(), two_extents(MIB, 40 * 4096));
    let trace = predict(&input, &Policy::BASE);
    let w = &trace.windows[2];
    assert_eq!(w.folios, vec![Folio { index: 24, order: 3 }, Folio { index: 32, order: 4 }]);
    let a = DISK_OFFSET >> 9;
    let b = (DISK_OFFSET + 40 * 4096 + 64 * MIB) >> 9;
    // iomap: one bio per mapping, the folio at 32 in both.
    assert_eq!(requests(w), vec![(a + 24 * 8, 128, "RA"), (b, 64, "RA")]);
}

#[test]
fn contiguous_extents_merge_back_into_one_request() {
    // Two extents that follow each other on disk (as XFS's maximum extent length would
    // cut them): iomap submits a bio per extent, the plug merges them.
    for fs in [FsKind::Xfs, FsKind::Ext4] {
        let mut extents = one_extent(MIB);
        let tail = Extent { logical: 40 * 4096, physical: DISK_OFFSET + 40 * 4096, length: MIB - 40 * 4096, flags: 0 };
        extents[0].length = 40 * 4096;
        extents.push(tail);
        let input = ramp(fs, MappingLimits::for_fs(fs), extents);
        let one = ramp(fs, MappingLimits::for_fs(fs), one_extent(MIB));
        assert_eq!(predict(&input, &Policy::BASE), predict(&one, &Policy::BASE), "{fs:?}");
    }
}

#[test]
fn unwritten_extents_and_holes_are_cached_without_io() {
    for fs in [FsKind::Xfs, FsKind::Ext4, FsKind::F2fs] {
        let extents = vec![
            Extent { logical: 0, physical: DISK_OFFSET, length: 8 * 4096, flags: 0 },
            Extent { logical: 8 * 4096, physical: DISK_OFFSET + 8 * 4096, length: 8 * 4096, flags: 0x800 },
            // [16, 24) is a hole.
            Extent { logical: 24 * 4096, physical: DISK_OFFSET + 24 * 4096, length: MIB - 24 * 4096, flags: 0 },
        ];
        let input = Input {
            fs,
            file_size: MIB,
            extents,
            queue: QueueLimits::nvme_qemu(128, 512),
            mapping: MappingLimits::for_fs(fs),
            ops: vec![Op::Read { fd: 0, offset: 0, len: 128 * 1024 }],
            folio_pfns: Vec::new(),
            other_files: Vec::new(),
            vm: Default::default(),
        };
        let trace = predict(&input, &Policy::BASE);
        let pages: u64 = trace.folios().map(|f| f.pages()).sum();
        assert!(pages >= 32, "{fs:?}");
        let mut read: Vec<(u64, u64)> = trace.requests().map(|r| (r.sector, r.sectors)).collect();
        read.sort();
        let a = DISK_OFFSET >> 9;
        // Only [0, 8) and [24, ...) are read.
        assert_eq!(read[0], (a, 64), "{fs:?}");
        assert!(read[1..].iter().all(|&(s, _)| s >= a + 24 * 8), "{fs:?}: {read:?}");
    }
}

#[test]
fn the_last_folio_is_read_to_the_end_of_its_block() {
    // A file of 10000 bytes: three pages, the last one holding 1808 bytes.
    for fs in [FsKind::Xfs, FsKind::Ext4, FsKind::F2fs] {
        let input = Input {
            fs,
            file_size: 10000,
            extents: one_extent(12288),
            queue: QueueLimits::nvme_qemu(128, 512),
            mapping: MappingLimits::for_fs(fs),
            ops: vec![Op::Read { fd: 0, offset: 0, len: 20000 }],
            folio_pfns: Vec::new(),
            other_files: Vec::new(),
            vm: Default::default(),
        };
        let trace = predict(&input, &Policy::BASE);
        assert_eq!(trace.windows.len(), 1);
        let w = &trace.windows[0];
        // req_count counts pages past EOF: last_index = DIV_ROUND_UP(20000, 4096) = 5.
        assert_eq!((w.index, w.req_count), (0, 5));
        assert_eq!(w.submits[0], Submit::Order { index: 0, size: 16, async_size: 11, order: 0 }, "{fs:?}");
        // Sync windows start at order 0; page_cache_ra_order() stops at the last page.
        assert_eq!(w.folios, (0..3).map(|index| Folio { index, order: 0 }).collect::<Vec<_>>());
        assert_eq!(requests(w), vec![(DISK_OFFSET >> 9, 24, "RA")], "{fs:?}");
    }
}

#[test]
fn fadvise_random_reads_only_what_is_asked_and_willneed_reads_ahead_without_a_window() {
    let input = Input {
        fs: FsKind::Xfs,
        file_size: 4 * MIB,
        extents: one_extent(4 * MIB),
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping: MappingLimits::xfs(),
        ops: vec![
            Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Random },
            Op::Read { fd: 0, offset: 0, len: 65536 },
            Op::Fadvise { fd: 0, offset: MIB, len: 3 * MIB, advice: Advice::Willneed },
            Op::Read { fd: 0, offset: MIB, len: 4096 },
        ],
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    };
    let trace = predict(&input, &Policy::BASE);
    // FMODE_RANDOM: force_page_cache_ra() of the 16 pages asked, order 0, no marker.
    assert_eq!(trace.windows.len(), 1);
    let w = &trace.windows[0];
    assert_eq!((w.trigger, w.index, w.req_count), (Trigger::Sync, 0, 16));
    assert_eq!(w.submits[0], Submit::Unbounded { index: 0, nr_to_read: 16, lookahead_size: 0 });
    // WILLNEED: force_page_cache_ra() caps at max(io_pages, ra_pages) = 128 pages and
    // opens no window; its events join the last one. The read then finds its page cached.
    assert_eq!(w.submits[1], Submit::Unbounded { index: 256, nr_to_read: 128, lookahead_size: 0 });
    assert_eq!(w.folios.len(), 16 + 128);
    assert_eq!(requests(w)[1], ((DISK_OFFSET + MIB) >> 9, 1024, "RA"));
}

#[test]
fn dontneed_drops_whole_folios_only() {
    let input = Input {
        fs: FsKind::Xfs,
        file_size: 4 * MIB,
        extents: one_extent(4 * MIB),
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping: MappingLimits::xfs(),
        ops: vec![
            Op::Read { fd: 0, offset: 0, len: 4096 },
            Op::Read { fd: 0, offset: 4096, len: MIB },
            // Pages [1, 20]: "First and last FULL page!"
            Op::Fadvise { fd: 0, offset: 4096, len: 20 * 4096, advice: Advice::Dontneed },
        ],
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    };
    let mut sim = Simulation::new(&input, &Policy::BASE, &ModelConfig::default());
    sim.step();
    sim.step();
    let before = sim.cache().folios();
    sim.step();
    let after = sim.cache().folios();
    let dropped: Vec<_> = before.iter().filter(|f| !after.contains(f)).map(|f| (f.index, f.order)).collect();
    // The sync window's order-0 folios 1..3 and the first async window's order-2 folios
    // [4, 20) lie inside; the folio [20, 24) crosses the end and stays.
    assert_eq!(dropped, vec![(1, 0), (2, 0), (3, 0), (4, 2), (8, 2), (12, 2), (16, 2)]);
}

#[test]
fn dontneed_keeps_folios_under_io_only_when_io_is_slower_than_the_next_call() {
    let input = Input {
        fs: FsKind::Xfs,
        file_size: 4 * MIB,
        extents: one_extent(4 * MIB),
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping: MappingLimits::xfs(),
        ops: vec![
            Op::Read { fd: 0, offset: 0, len: 4096 },
            Op::Read { fd: 0, offset: 4096, len: 65536 },
            Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Dontneed },
        ],
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    };
    let left = |io_completion| {
        let mut sim = Simulation::new(&input, &Policy::BASE, &ModelConfig { io_completion, ..Default::default() });
        while sim.step() {}
        sim.cache().folios().iter().map(|f| f.index).collect::<Vec<_>>()
    };
    assert_eq!(left(IoCompletion::BeforeNextOp), Vec::<u64>::new());
    assert_eq!(left(IoCompletion::AtIssue), Vec::<u64>::new());
    // The read of pages 1..=16 ends by starting the window [24, 32) at page 16, and never
    // waits on it: under WhenWaited it is still locked, and find_lock_entries() skips it.
    assert_eq!(left(IoCompletion::WhenWaited), vec![24]);
}
