//! Branch coverage: what a hand-made input reaches, and that recording never changes a prediction.

mod common;

use common::*;
use radiff_model::pattern::expand;
use radiff_model::*;

#[test]
fn seed000_reaches_the_sync_and_async_branches_it_should() {
    let input = seed000(512, MIB);
    let (trace, cov) = coverage(&input, &Policy::BASE);
    assert_eq!(trace, predict(&input, &Policy::BASE));
    for id in [
        "page_cache_sync_ra: index == 0",
        "page_cache_sync_ra: initial window",
        "page_cache_sync_ra: prev_pos == -1",
        "page_cache_async_ra: index == expected",
        "page_cache_async_ra: aligned_end < end: trimmed",
        "filemap_get_pages: PG_readahead: filemap_readahead",
        "read_pages: ->readahead",
    ] {
        assert!(cov.contains(id), "{id} not reached: {cov:?}");
    }
    assert!(!cov.contains("page_cache_sync_ra: ra_pages == 0 forced read"));
    assert!(!cov.contains("generic_fadvise: POSIX_FADV_WILLNEED"));
    for id in cov.ids() {
        assert!(BRANCHES.iter().any(|b| b.id == id));
    }
}

#[test]
fn readahead_disabled_and_fadvise_reach_their_branches() {
    let size = 8 * MIB;
    let steps = [
        Step::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Willneed },
        Step::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Dontneed },
        Step::Read { fd: 0, offset: MIB, size: 65536 },
    ];
    let input = Input {
        fs: FsKind::Xfs,
        file_size: size,
        extents: one_extent(size),
        queue: QueueLimits::nvme_qemu(0, 512),
        mapping: MappingLimits::xfs(),
        ops: expand(&steps, size),
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    };
    let (trace, cov) = coverage(&input, &Policy::BASE);
    assert_eq!(trace, predict(&input, &Policy::BASE));
    for id in [
        "generic_fadvise: POSIX_FADV_WILLNEED",
        "generic_fadvise: POSIX_FADV_DONTNEED",
        "page_cache_sync_ra: ra_pages == 0 forced read",
        "page_cache_sync_ra: ra_pages == 0: req_count = 1",
    ] {
        assert!(cov.contains(id), "{id} not reached: {cov:?}");
    }
    let (_, v) = coverage(&input, &policy("sync-ra-when-disabled"));
    assert!(v.contains("page_cache_sync_ra: ra_pages == 0: whole request"));
}

/// explain()'s notes carry, per window, the branches that decided it: the sync window's
/// go through page_cache_sync_ra(), the trimmed async window's through the end alignment of
/// page_cache_async_ra(); explaining never changes the prediction.
#[test]
fn each_window_notes_the_decisions_that_made_it() {
    let input = seed000(512, MIB);
    let ex = explain(&input, &Policy::BASE, &ModelConfig::default());
    assert_eq!(ex.trace, predict(&input, &Policy::BASE));
    assert_eq!(ex.notes.len(), ex.trace.windows.len());
    let sync = ex.trace.windows.iter().position(|w| w.trigger == Trigger::Sync).expect("a sync window");
    assert!(ex.notes[sync].functions().contains(&"page_cache_sync_ra"), "{:?}", ex.notes[sync].decisions);
    let trimmed = ex
        .notes
        .iter()
        .position(|n| n.decisions.iter().any(|d| d == "page_cache_async_ra: aligned_end < end: trimmed"))
        .expect("a trimmed window");
    assert_eq!(ex.trace.windows[trimmed].trigger, Trigger::Async);
    assert!(!ex.notes[trimmed].functions().contains(&"page_cache_sync_ra"), "{:?}", ex.notes[trimmed].decisions);
    for d in ex.notes.iter().flat_map(|n| &n.decisions) {
        assert!(BRANCHES.iter().any(|b| b.id == d), "{d}");
    }
}
