//! Interleaved streams on one descriptor: each stream meets the PG_readahead folio the
//! other one's window left, without valid readahead state, and `page_cache_async_ra()`
//! sizes its window from the page cache ("start = page_cache_next_miss(ractl->mapping,
//! index + 1, max_pages);"), a scan that starts inside the large folio that holds the mark.

mod common;

use common::*;
use radiff_model::pattern::expand;
use radiff_model::*;

/// 2 streams of 32 KiB reads on one fd over an 8 MiB XFS file on NVMe, read_ahead_kb 256
/// (max_pages 64): `radiff explore --seed 1 --variants base` found it
/// (scenarios/explore_next_miss_lag.yaml).
fn two_streams() -> Input {
    let size = 8 * MIB;
    let ops =
        expand(&[Step::Interleaved { fds: vec![0, 0], size: 32 << 10, starts: vec![0, size / 2], to: None }], size);
    Input {
        fs: FsKind::Xfs,
        file_size: size,
        extents: one_extent(size),
        queue: QueueLimits::nvme_qemu(256, 512),
        mapping: MappingLimits::xfs(),
        ops,
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    }
}

#[test]
fn an_async_window_of_interleaved_streams_starts_where_the_xarray_walk_reports_the_hole() {
    let trace = predict(&two_streams(), &Policy::BASE);
    // The first stream's window [112, 128) is one order-4 folio, marked at 112; the other
    // stream's window has replaced the readahead state since.
    let marked = trace
        .windows
        .iter()
        .position(|w| w.submits.iter().any(|s| matches!(s, Submit::Order { index: 112, size: 16, .. })))
        .expect("a window [112, 128)");
    assert!(trace.windows[marked].folios.iter().any(|f| f.index == 112 && f.order == 4));
    let w = trace
        .windows
        .iter()
        .skip(marked + 1)
        .find(|w| w.trigger == Trigger::Async && w.index == 112)
        .expect("the read at 112 hits the mark");
    // The scan from 113 starts one page into the folio: xas_descend() leaves xa_offset on
    // the head (112) with xa_index 113, xas_next() moves both, and at the end of the leaf
    // __xas_next() resumes past index 128 without looking at it: the hole at 128 is
    // reported as 129. "ra->size = start - index; ra->size += req_count;" gives
    // 129 - 112 + 8 = 25 and get_next_ra_size() 50 (<= max_pages / 2: doubled).
    match w.submits[0] {
        Submit::Order { index, size, .. } => assert_eq!((index, size), (129, 50), "{w:?}"),
        other => panic!("{other:?}"),
    }
    assert!(w.folios.iter().all(|f| f.index >= 129));
    // Page 128 stays uncached until the stream reads it: a sync window there.
    let next = trace.windows.iter().find(|x| x.index == 128).expect("a window at 128");
    assert_eq!(next.trigger, Trigger::Sync);
}
