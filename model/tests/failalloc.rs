//! Allocation failure (`Op::FailAlloc`, mm/fail_page_alloc.c as the guest arms it) on the
//! read path: page_cache_ra_order()'s fall back to order-0 readahead, and
//! page_cache_ra_unbounded()'s stop at the first failed allocation, which is not the
//! -EEXIST skip.

use radiff_model::*;

const MIB: u64 = 1 << 20;

fn xfs(block: Option<u64>, ops: Vec<Op>) -> Input {
    let mut input = Input::xfs_on_nvme(16 * MIB, ops);
    input.mapping = MappingLimits::for_fs_block(FsKind::Xfs, block);
    input
}

/// 4 KiB, 64 KiB reads to 1 MiB (the window ramps up to large folios), then `arm`, then
/// 64 KiB reads to 4 MiB.
fn ramp_then(arm: Option<Op>) -> Vec<Op> {
    let mut steps = vec![
        Step::Read { fd: 0, offset: 0, size: 4096 },
        Step::Sequential { fd: 0, from: 4096, size: 64 << 10, to: Some(MIB) },
    ];
    if let Some(Op::FailAlloc { times, min_order }) = arm {
        steps.push(Step::FailAlloc { times, min_order });
    }
    steps.push(Step::Sequential { fd: 0, from: MIB, size: 64 << 10, to: Some(4 * MIB) });
    pattern::expand(&steps, 16 * MIB)
}

/// The windows that submitted with page_cache_ra_order() and then fell back to
/// page_cache_ra_unbounded() in the same call.
fn fallbacks(trace: &Trace) -> Vec<&Window> {
    trace
        .windows
        .iter()
        .filter(|w| {
            w.submits
                .windows(2)
                .any(|s| matches!(s[0], Submit::Order { .. }) && matches!(s[1], Submit::Unbounded { .. }))
        })
        .collect()
}

#[test]
fn a_failed_large_folio_falls_back_to_order_0_readahead_of_the_rest_of_the_window() {
    let plain = predict(&xfs(None, ramp_then(None)), &Policy::BASE);
    assert!(fallbacks(&plain).is_empty(), "no fallback without fail_alloc");
    let failing = predict(&xfs(None, ramp_then(Some(Op::FailAlloc { times: 2, min_order: 4 }))), &Policy::BASE);
    let fell = fallbacks(&failing);
    assert_eq!(fell.len(), 2, "each of the 2 failed allocations makes one window fall back");
    for w in &fell {
        let (Submit::Order { index, size, .. }, Submit::Unbounded { index: from, nr_to_read, .. }) =
            (w.submits[0], w.submits[1])
        else {
            unreachable!()
        };
        // The first folio of the window was the one to fail: the fallback reads the whole
        // window from its start, in folios of the mapping's minimum order (0).
        assert_eq!((from, nr_to_read), (index, size), "{w:?}");
        assert!(w.folios.iter().all(|f| f.order == 0), "{w:?}");
        assert_eq!(w.folios.iter().map(Folio::pages).sum::<u64>(), size);
    }
    // The same windows without failure had large folios there.
    let first = fell[0].index;
    let same = plain
        .windows
        .iter()
        .find(|w| w.index == first && w.trigger == fell[0].trigger)
        .expect("the window without failure");
    assert!(same.folios.iter().any(|f| f.order >= 4), "{same:?}");
    // Allocations of orders below min_order never fail.
    let low = predict(&xfs(None, ramp_then(Some(Op::FailAlloc { times: 2, min_order: 9 }))), &Policy::BASE);
    assert_eq!(low, plain, "no folio of order 9 in this ramp: nothing fails");
}

fn large_block_ops(times: u32) -> Vec<Op> {
    vec![
        Op::FailAlloc { times, min_order: 4 },
        Op::Readahead { fd: 0, offset: MIB, len: MIB },
        Op::FailAlloc { times: 0, min_order: 4 },
        Op::Readahead { fd: 0, offset: 4 * MIB, len: MIB },
    ]
}

#[test]
fn page_cache_ra_unbounded_stops_at_the_first_failed_allocation() {
    // 64 KiB blocks: minimum folio order 4, so readahead(2)'s order-4 folios can fail.
    let input = xfs(Some(64 << 10), large_block_ops(1));
    let trace = predict(&input, &Policy::BASE);
    let submits: Vec<Submit> = trace.windows.iter().flat_map(|w| w.submits.clone()).collect();
    let [Submit::Unbounded { index: first, nr_to_read: n1, .. }, Submit::Unbounded { index: second, nr_to_read: n2, .. }] =
        submits[..]
    else {
        panic!("two page_cache_ra_unbounded() calls: {trace:?}")
    };
    // The first call's first allocation failed: "if (!folio) break;", nothing added (an
    // -EEXIST would have skipped one folio and added the rest).
    assert!(!trace.folios().any(|f| (first..first + n1).contains(&f.index)), "{trace:?}");
    // Disarmed, the second call adds its whole window, in 16-page folios.
    let later: Vec<&Folio> = trace.folios().filter(|f| (second..second + n2).contains(&f.index)).collect();
    assert_eq!(later.len() as u64, n2 / 16);
    assert!(later.iter().all(|f| f.order == 4));
    let plain = predict(&xfs(Some(64 << 10), large_block_ops(0)), &Policy::BASE);
    assert_eq!(plain.folios().count() as u64, (n1 + n2) / 16, "nothing armed: both windows whole");
}

#[test]
fn a_read_whose_own_folio_cannot_be_allocated_returns_nothing_and_the_next_read_tries_again() {
    // 64 KiB blocks. Times 2: page_cache_ra_order()'s first folio and the fallback's first
    // fail, filemap_create_folio() gets its block. Times 3: it fails too (-ENOMEM).
    let ops = |times| {
        vec![
            Op::FailAlloc { times, min_order: 4 },
            Op::Read { fd: 0, offset: 0, len: 64 << 10 },
            Op::FailAlloc { times: 0, min_order: 4 },
            Op::Read { fd: 0, offset: 0, len: 64 << 10 },
        ]
    };
    let two = predict(&xfs(Some(64 << 10), ops(2)), &Policy::BASE);
    let w = &two.windows[0];
    assert_eq!((w.trigger, w.submits.len()), (Trigger::Sync, 2), "{w:?}");
    assert_eq!(w.folios, vec![Folio { index: 0, order: 4 }], "filemap_create_folio()'s one block: {w:?}");
    assert_eq!(two.windows.len(), 1, "the second read finds its block cached: {two:?}");
    let three = predict(&xfs(Some(64 << 10), ops(3)), &Policy::BASE);
    assert!(three.windows[0].folios.is_empty(), "{three:?}");
    assert_eq!(three.windows[1].trigger, Trigger::Sync, "the second read starts over: {three:?}");
    assert!(!three.windows[1].folios.is_empty());
}
