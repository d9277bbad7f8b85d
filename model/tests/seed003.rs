//! Seed 003 (f2fs: adjust readahead window based on extent length): in
//! f2fs_mpage_readpages(), map max(nr_pages, bdi->ra_pages) blocks from the window's
//! start and `readahead_expand()` the window to what maps contiguously.

mod common;

use common::*;
use radiff_model::pattern::expand;
use radiff_model::*;

/// A file in extents of `pages` pages, each 1 MiB past the end of the previous one on disk.
fn scattered(size: u64, pages: u64) -> Vec<Extent> {
    let len = pages * 4096;
    (0..size / len)
        .map(|i| Extent { logical: i * len, physical: DISK_OFFSET + i * (len + MIB), length: len, flags: 0 })
        .collect()
}

fn f2fs(size: u64, extent_pages: u64, ops: Vec<Op>) -> Input {
    Input {
        fs: FsKind::F2fs,
        file_size: size,
        extents: scattered(size, extent_pages),
        queue: ufs(128),
        mapping: MappingLimits::f2fs(),
        ops,
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    }
}

fn read(fd: u32, page: u64, pages: u64) -> Op {
    Op::Read { fd, offset: page * 4096, len: pages * 4096 }
}

#[test]
fn a_small_window_grows_to_bdi_ra_pages_inside_the_extent() {
    let input = f2fs(64 * MIB, 512, vec![read(0, 0, 1), read(0, 1, 1)]);
    let base = predict(&input, &Policy::BASE);
    assert_eq!(base.windows[0].folios.len(), 4);
    let ex = explain(&input, &policy("f2fs-extent-ra"), &ModelConfig::default());
    let w = &ex.trace.windows[0];
    // get_init_ra_size(1, 32) = 4 pages, then max(4, ra_pages 32) = 32 contiguous blocks.
    assert_eq!(
        w.submits,
        vec![
            Submit::Order { index: 0, size: 4, async_size: 3, order: 0 },
            Submit::Unbounded { index: 0, nr_to_read: 4, lookahead_size: 3 }
        ]
    );
    assert_eq!(w.folios, (0..32).map(|index| Folio { index, order: 0 }).collect::<Vec<_>>());
    // Order-0 pages in bios of bio_max_segs(max_nr_pages = 4) vecs, merged in the plug.
    assert_eq!(w.requests, vec![Request { sector: DISK_OFFSET >> 9, sectors: 256, rwbs: "RA".into() }]);
    assert_eq!(ex.notes[0].segments, vec![32]);
    // readahead_expand() grew ra->size and ra->async_size by the 28 pages it added.
    assert_eq!((ex.notes[0].ra_after.size, ex.notes[0].ra_after.async_size), (32, 31));
    // So the next read's async readahead at page 1 is at the expected index and the
    // new window starts after the expanded one.
    let w = &ex.trace.windows[1];
    assert_eq!((w.trigger, w.index, w.ra.size, w.ra.async_size), (Trigger::Async, 1, 32, 31));
    assert!(matches!(w.submits[0], Submit::Order { index: 32, .. }));
}

#[test]
fn the_expansion_stops_at_the_end_of_the_extent_and_at_a_cached_page() {
    // 16-page extents. fd 1 reads page 10: a random read (do_page_cache_ra of 1 page),
    // which the patch expands to the end of the extent, [10, 16).
    let input = f2fs(4 * MIB, 16, vec![read(1, 10, 1), read(0, 0, 1)]);
    let trace = predict(&input, &policy("f2fs-extent-ra"));
    let pages = |w: &Window| w.folios.iter().map(|f| f.index).collect::<Vec<_>>();
    assert_eq!(pages(&trace.windows[0]), (10..16).collect::<Vec<_>>());
    // fd 0 at page 0: the window of 4 grows toward min(32, 16) pages but stops at page 10.
    assert_eq!(pages(&trace.windows[1]), (0..10).collect::<Vec<_>>());
    assert_eq!(trace.windows[1].requests, vec![Request { sector: DISK_OFFSET >> 9, sectors: 80, rwbs: "RA".into() }]);
}

#[test]
fn f2fs_adds_only_order_0_folios_and_requests_respect_the_segment_limit() {
    // Sequential 512 KiB reads over 2 MiB extents, read_ahead_kb 2048 (512-page windows).
    let size = 32 * MIB;
    let mut input = f2fs(size, 512, expand(&[Step::Sequential { fd: 0, from: 0, size: 512 * 1024, to: None }], size));
    input.queue = ufs(2048);
    for variant in ["base", "f2fs-extent-ra"] {
        let ex = explain(&input, &policy(variant), &ModelConfig::default());
        assert_eq!(orders(&ex.trace, 1), vec![(size / 4096)], "{variant}");
        for (w, note) in ex.trace.windows.iter().zip(&ex.notes) {
            for (r, &segs) in w.requests.iter().zip(&note.segments) {
                // Scattered order-0 pages: one segment each, 128 at most: 512 KiB.
                assert!(segs <= 128 && r.sectors <= 2048, "{variant}: {r:?} with {segs} segments");
                assert_eq!(r.sectors, segs * 8);
            }
        }
        // Every request stays inside one extent: they are 1 MiB apart on the disk.
        for r in ex.trace.requests() {
            let first = (r.sector * 512 - DISK_OFFSET) / (3 * MIB);
            let last = ((r.sector + r.sectors) * 512 - 1 - DISK_OFFSET) / (3 * MIB);
            assert_eq!(first, last, "{r:?}");
        }
    }
}

#[test]
fn other_file_systems_ignore_the_f2fs_patch() {
    for (fs, mapping) in [(FsKind::Xfs, MappingLimits::xfs()), (FsKind::Ext4, MappingLimits::ext4())] {
        let mut input = f2fs(16 * MIB, 16, vec![read(1, 10, 1), read(0, 0, 1), read(0, 1, 300)]);
        input.fs = fs;
        input.mapping = mapping;
        assert_eq!(predict(&input, &policy("f2fs-extent-ra")), predict(&input, &Policy::BASE), "{fs:?}");
    }
}
