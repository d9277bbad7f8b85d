//! The page-fault path (model/src/fault.rs): expectations derived by reading Linux
//! 7.3.4's mm/filemap.c, mm/memory.c and arch/x86/mm/fault.c, each test saying how.
//!
//! Common setting: XFS on NVMe (large folios up to order 9), read_ahead_kb 128 (ra_pages
//! 32), fault_around_bytes 64 KiB (16 pages) unless said, one mapping of the whole file at
//! offset 0 (its address congruent to 0 modulo 2 MiB), I/O complete before the next touch.

mod common;

use common::*;
use radiff_model::pattern::expand;
use radiff_model::*;

fn input(file_size: u64, fault_around_bytes: u64, steps: &[Step]) -> Input {
    Input {
        fs: FsKind::Xfs,
        file_size,
        extents: one_extent(file_size),
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping: MappingLimits::xfs(),
        ops: expand(steps, file_size),
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: VmSettings { fault_around_bytes, ..Default::default() },
    }
}

/// The expectations below were derived for a loop of loads that gives the device no time
/// between touches (`Touches::Race`), which exercises the paths where fault-around meets
/// folios still under read; radiff's guest waits for the device between touches
/// (`Touches::WaitIdle`, the default), see `waiting_for_the_device_between_touches_maps_the_async_window`.
fn predict(input: &Input, policy: &Policy) -> Trace {
    predict_with(input, policy, &ModelConfig { touches: Touches::Race, ..Default::default() })
}

fn map_all(size: u64) -> Step {
    Step::Mmap { map: 0, fd: 0, offset: 0, len: size, shared: false, exec: false, populate: false }
}

fn touch(order: TouchOrder) -> Step {
    Step::Touch { maps: vec![0], from: 0, to: None, order }
}

fn madvise(size: u64, advice: MadvAdvice) -> Step {
    Step::Madvise { map: 0, offset: 0, len: size, advice }
}

/// (trigger, index, req_count) of each window.
fn shape(trace: &Trace) -> Vec<(Trigger, u64, u64)> {
    trace.windows.iter().map(|w| (w.trigger, w.index, w.req_count)).collect()
}

fn orders(w: &Window) -> Vec<(u64, u32)> {
    w.folios.iter().map(|f| (f.index, f.order)).collect()
}

fn order_submit(w: &Window) -> Option<(u64, u64, u64, u32)> {
    w.submits.iter().find_map(|s| match *s {
        Submit::Order { index, size, async_size, order } => Some((index, size, async_size, order)),
        Submit::Unbounded { .. } => None,
    })
}

use Trigger::{Async, Fault, FaultAround, Sync};

/// Sequential touch of an 8 MiB file (2048 pages).
///
/// Touch 0: the first try (VMA lock) faults around [0, 15] and finds nothing (no event);
/// filemap_fault (event) finds no folio: do_sync_mmap_readahead counts mmap_miss 1 and
/// reads around: ra->start = max(0, 0 - 32 / 2) = 0, size 32, async_size 8, order 0:
/// page_cache_ra_order adds 32 order-0 folios, PG_readahead on 32 - 8 = 24; the fault
/// sleeps on folio 0 (all reads complete), the lock was dropped, so VM_FAULT_RETRY |
/// VM_FAULT_MAJOR, and the retry under the mmap_lock has FAULT_FLAG_TRIED: fault-around
/// maps [0, 15] (event) and the page, no ->fault.
/// Touch 16: fault-around maps [16, 31] but 24 (PG_readahead), page 16 is mapped: one
/// event, mmap_miss 1 -> 0. Touch 24: fault-around finds uptodate folios (event) but skips
/// 24; filemap_fault (event) finds it: do_async_mmap_readahead -> page_cache_async_ra(24,
/// req ra_pages): index == expected 24: start 32, size max(32, get_next_ra_size(32, 32))
/// = 32, order 0 + 2 = 2, align 1 << min(2, ffs(32) - 1) = 4: eight order-2 folios, the
/// first marked, their read in flight (no fault sleeps until touch 32); VM_FAULT_RETRY
/// without MAJOR, so the mmap_lock retry is a first try: fault-around maps 24 (event).
/// Touch 32: fault-around skips the marked folio and the locked ones (no event); the fault
/// runs the async window (order 4: two folios of 16), sleeps on folio 32 (everything
/// completes) and retries: fault-around maps [32, 47]. Touch 48: fault-around only. 64:
/// fault-around finds only the marked folio (no event), async order 6 clamped to ilog2(32)
/// = 5, and from 96 on every 32 pages: Fault, Async (order ra->order 5 + 2 = 7, clamped to
/// 5), FaultAround (which maps the whole order-5 folio: it lies in one page table); the
/// folio faulted at 96 + 64 j is still locked (its fault sleeps and completes the next
/// window), at 128 + 64 j it is not. The window at 1984 reads [2016, 2048) up to the last
/// page, so no marker, and no fault slept since: touch 2016 finds it locked, faults, sleeps
/// and retries (fault-around maps [2016, 2031]: the folio ends at i_size's page, so no
/// PMD and only the range), then 2032 is fault-around only.
#[test]
fn sequential_touch_reads_around_then_ramps_up_asynchronously() {
    let size = 8 * MIB;
    let trace = predict(&input(size, 65536, &[map_all(size), touch(TouchOrder::Sequential)]), &Policy::BASE);
    let s = shape(&trace);
    assert_eq!(
        s[..18],
        [
            (Fault, 0, 1),
            (FaultAround, 0, 16),
            (FaultAround, 16, 16),
            (FaultAround, 16, 16),
            (Fault, 24, 1),
            (Async, 24, 32),
            (FaultAround, 16, 16),
            (Fault, 32, 1),
            (Async, 32, 32),
            (FaultAround, 32, 16),
            (FaultAround, 48, 16),
            (Fault, 64, 1),
            (Async, 64, 32),
            (FaultAround, 64, 16),
            (FaultAround, 80, 16),
            (Fault, 96, 1),
            (Async, 96, 32),
            (FaultAround, 96, 16),
        ]
    );
    let w = &trace.windows;
    assert_eq!(order_submit(&w[0]), Some((0, 32, 8, 0)));
    assert_eq!(orders(&w[0]), (0..32).map(|i| (i, 0)).collect::<Vec<_>>());
    assert!(!w[0].requests.is_empty());
    assert_eq!(
        w[5].ra,
        RaState { start: 0, size: 32, async_size: 8, order: 0, ra_pages: 32, mmap_miss: 0, prev_pos: -1 }
    );
    assert_eq!(order_submit(&w[5]), Some((32, 32, 32, 2)));
    assert_eq!(orders(&w[5]), (0..8).map(|i| (32 + 4 * i, 2)).collect::<Vec<_>>());
    assert_eq!(order_submit(&w[8]), Some((64, 32, 32, 4)));
    assert_eq!(orders(&w[8]), vec![(64, 4), (80, 4)]);
    assert_eq!(order_submit(&w[12]), Some((96, 32, 32, 6)));
    assert_eq!(orders(&w[12]), vec![(96, 5)]);
    assert_eq!(order_submit(&w[16]), Some((128, 32, 32, 7)));
    for w in [&w[1], &w[2], &w[4]] {
        assert!(w.folios.is_empty() && w.requests.is_empty() && w.submits.is_empty());
    }
    // From 128 to 1984: Fault, Async, FaultAround every 32 pages.
    let steady: Vec<_> =
        (128..=1984).step_by(32).flat_map(|k| [(Fault, k, 1), (Async, k, 32), (FaultAround, k, 16)]).collect();
    assert_eq!(s[18..18 + steady.len()], steady[..]);
    assert_eq!(s[18 + steady.len()..], [(Fault, 2016, 1), (FaultAround, 2016, 16), (FaultAround, 2032, 16)]);
    assert_eq!(trace.folios().map(Folio::pages).sum::<u64>(), 2048);
}

/// Touches 512 pages apart in a 256 MiB mapping: every touch is a major fault on an
/// uncached page, and fault-around never maps a faulting page on a first try (the retry
/// has FAULT_FLAG_TRIED, which keeps mmap_miss), so mmap_miss counts 1, 2, ...: read-around
/// for the first MMAP_LOTSAMISS = 100 faults, none from the 101st ("if (mmap_miss >
/// MMAP_LOTSAMISS) return fpin;"), where filemap_fault reads the one folio itself.
#[test]
fn read_around_stops_once_mmap_miss_passes_lotsamiss() {
    let size = 256 * MIB;
    let pages: Vec<u64> = (0..128).map(|i| i * 512).collect();
    let trace = predict(
        &input(size, 65536, &[map_all(size), touch(TouchOrder::Pages { pages: pages.clone() })]),
        &Policy::BASE,
    );
    let faults: Vec<&Window> = trace.windows.iter().filter(|w| w.trigger == Fault).collect();
    assert_eq!(faults.len(), 128);
    for (i, (w, &p)) in faults.iter().zip(&pages).enumerate() {
        assert_eq!(w.index, p);
        if i < 100 {
            assert_eq!(order_submit(w), Some((p.saturating_sub(16), 32, 8, 0)), "touch {i}");
            assert_eq!(w.folios.len(), 32);
        } else {
            assert_eq!(w.submits, vec![], "touch {i}");
            assert_eq!(orders(w), vec![(p, 0)]);
            assert_eq!(w.requests.len(), 1);
        }
    }
    // After each fault, the retry's fault-around maps [p, p + 15].
    assert_eq!(trace.windows.iter().filter(|w| w.trigger == FaultAround).count(), 128);
}

/// Random touches: read-around for at most the first faults; once mmap_miss is past 100 a
/// hit (a fault-around that maps the faulting page on a first try) takes one off, a miss
/// adds one, and with about 5 % of the file cached, misses win: late faults read one page.
#[test]
fn random_touches_stop_reading_around() {
    let size = 256 * MIB;
    let trace = predict(
        &input(size, 65536, &[map_all(size), touch(TouchOrder::Random { count: 1000, seed: 7 })]),
        &Policy::BASE,
    );
    let faults: Vec<&Window> = trace.windows.iter().filter(|w| w.trigger == Fault).collect();
    let read_arounds = faults.iter().filter(|w| order_submit(w).is_some()).count();
    assert!((100..120).contains(&read_arounds), "{read_arounds}");
    assert!(faults[faults.len() / 2..].iter().all(|w| w.submits.is_empty() && w.folios.len() <= 1));
}

/// MADV_RANDOM: do_sync_mmap_readahead returns at "(vm_flags & (VM_RAND_READ | VM_EXEC))
/// == VM_RAND_READ": filemap_fault creates the folio (order 0, FGP_CREAT | FGP_FOR_MMAP),
/// reads it with ->read_folio (one 8-sector request), the dropped lock gives a major
/// retry, whose fault-around maps it. Page 0: no folio near (no first event); page 1: the
/// first try's fault-around finds folio 0 (event), then the same.
#[test]
fn madv_random_reads_single_pages() {
    let size = 8 * MIB;
    let trace = predict(
        &input(
            size,
            65536,
            &[map_all(size), madvise(size, MadvAdvice::Random), touch(TouchOrder::Stride { stride: 4096 })],
        ),
        &Policy::BASE,
    );
    let s = shape(&trace);
    assert_eq!(
        s[..6],
        [
            (Fault, 0, 1),
            (FaultAround, 0, 16),
            (FaultAround, 0, 16),
            (Fault, 1, 1),
            (FaultAround, 0, 16),
            (FaultAround, 0, 16)
        ]
    );
    for w in trace.windows.iter().filter(|w| w.trigger == Fault) {
        assert_eq!(w.submits, vec![]);
        assert_eq!(orders(w), vec![(w.index, 0)]);
        assert_eq!(w.requests.iter().map(|r| r.sectors).collect::<Vec<_>>(), vec![8]);
    }
    assert_eq!(trace.windows.iter().filter(|w| w.trigger == Fault).count(), 2048);
    assert!(!trace.windows.iter().any(|w| matches!(w.trigger, Sync | Async)));
}

/// MADV_SEQUENTIAL: do_sync_mmap_readahead calls page_cache_sync_ra(ra_pages): index 0 is
/// an initial window, get_init_ra_size(32, 32) = 32 pages, async_size 32 >> 1 = 16 (size
/// is not above req_count); the async window at 16 ramps up as on the read path.
#[test]
fn madv_sequential_uses_page_cache_sync_ra() {
    let size = 8 * MIB;
    let trace = predict(
        &input(size, 65536, &[map_all(size), madvise(size, MadvAdvice::Sequential), touch(TouchOrder::Sequential)]),
        &Policy::BASE,
    );
    let s = shape(&trace);
    assert_eq!(
        s[..7],
        [
            (Fault, 0, 1),
            (Sync, 0, 32),
            (FaultAround, 0, 16),
            (FaultAround, 16, 16),
            (Fault, 16, 1),
            (Async, 16, 32),
            (FaultAround, 16, 16)
        ]
    );
    assert_eq!(order_submit(&trace.windows[1]), Some((0, 32, 16, 0)));
    assert_eq!(order_submit(&trace.windows[5]), Some((32, 32, 32, 2)));
    // VM_SEQ_READ leaves mmap_miss alone.
    assert!(trace.windows.iter().all(|w| w.ra.mmap_miss == 0));
}

/// MADV_HUGEPAGE (64 MiB file): do_sync_mmap_readahead's force_thp_readahead: thp_order =
/// min(9, get_order(2 MiB)) = 9, ra->size 2 * 512, async_size 512: two order-9 folios, the
/// second marked (mark 1024 - 512). The major retry's fault-around finds folio 0 inside
/// i_size with no page table yet: do_set_pmd maps it (VM_HUGEPAGE, address and offset
/// agree modulo 2 MiB), and filemap_map_pages returns before its event. Page 512: the
/// marked folio is skipped by fault-around (no event), filemap_fault's async readahead:
/// expected round_down(0 + 1024 - 512, 512) = 512: start 1024, size max(1024,
/// get_next_ra_size(1024, 32)) = 1024, order 11 clamped to 9, align 1 << min(11, 5) keeps
/// the end; the minor retry's fault-around maps a PMD. Then every 1024 pages. The window
/// at 14336 reads [15360, 16384) without a marker, and no fault sleeps after it (those at
/// 1024 + 2048 j find their folio locked and sleep, those at 2048 j do not), so touch 15360
/// finds folio 15360 locked: a fault that sleeps and retries (a PMD). Its second folio ends at the file's
/// end, and filemap_map_pages maps a PMD only if "file_end >= folio_next_index(folio)"
/// with file_end the last page (16383 < 16384); skipping filemap_map_pmd() also skips
/// installing the preallocated page table, so with that PMD still none
/// pte_offset_map_lock() finds no table: fault-around maps nothing and emits nothing,
/// and touch 15872 faults (finish_fault() maps the folio with a PMD). The kernel was seen
/// doing so on an 8 MiB file (explore, seed 1: `fault @1536` twice, no fault-around).
#[test]
fn madv_hugepage_reads_pmd_folios_and_maps_pmds() {
    let size = 64 * MIB;
    let trace = predict(
        &input(size, 65536, &[map_all(size), madvise(size, MadvAdvice::Hugepage), touch(TouchOrder::Sequential)]),
        &Policy::BASE,
    );
    let mut want = vec![(Fault, 0, 1), (Fault, 512, 1), (Async, 512, 32)];
    for k in (1024..=14336).step_by(1024) {
        want.extend([(Fault, k, 1), (Async, k, 32)]);
    }
    want.push((Fault, 15360, 1));
    want.push((Fault, 15872, 1));
    assert_eq!(shape(&trace), want);
    let w = &trace.windows;
    assert_eq!(order_submit(&w[0]), Some((0, 1024, 512, 9)));
    assert_eq!(orders(&w[0]), vec![(0, 9), (512, 9)]);
    assert_eq!(w[2].ra.size, 1024);
    assert_eq!(order_submit(&w[2]), Some((1024, 1024, 1024, 11)));
    assert_eq!(orders(&w[2]), vec![(1024, 9), (1536, 9)]);
    assert!(trace.folios().all(|f| f.order == 9));
    assert_eq!(trace.folios().count(), 32);
}

/// fault_around_bytes 4096: fault_around_pages 1, should_fault_around() false: no
/// FaultAround window. Touch 0 reads around and retries with FAULT_FLAG_TRIED, so
/// filemap_fault runs twice for it; touches 1..23 each fault once (the folio is there:
/// mmap_miss 1 -> 0 at touch 1); touch 24 (PG_readahead) runs the async window and, the
/// lock dropped, faults again. From 32 on the folios are large and finish_fault maps the
/// whole folio: touch 32 maps 32..35, the next fault is at 36.
#[test]
fn fault_around_of_one_page_means_no_fault_around() {
    let size = 8 * MIB;
    let trace = predict(&input(size, 4096, &[map_all(size), touch(TouchOrder::Sequential)]), &Policy::BASE);
    assert!(!trace.windows.iter().any(|w| w.trigger == FaultAround));
    let s = shape(&trace);
    let mut want = vec![(Fault, 0, 1), (Fault, 0, 1)];
    want.extend((1..24).map(|p| (Fault, p, 1)));
    want.extend([(Fault, 24, 1), (Async, 24, 32), (Fault, 24, 1)]);
    want.extend((25..32).map(|p| (Fault, p, 1)));
    want.extend([(Fault, 32, 1), (Async, 32, 32), (Fault, 32, 1), (Fault, 36, 1)]);
    assert_eq!(s[..want.len()], want[..]);
}

/// A page that is mapped takes no fault: touching the file twice faults only the first time.
#[test]
fn a_second_pass_takes_no_fault() {
    let size = MIB;
    let once = predict(&input(size, 65536, &[map_all(size), touch(TouchOrder::Sequential)]), &Policy::BASE);
    let twice = predict(
        &input(size, 65536, &[map_all(size), touch(TouchOrder::Sequential), touch(TouchOrder::Backward)]),
        &Policy::BASE,
    );
    assert_eq!(once, twice);
}

/// After munmap the page tables are gone, the page cache is not: a new mapping faults
/// again, but only fault-around (everything is cached and uptodate): one event per 16
/// pages up to 96, where the folios are of order 5 and each fault-around maps a whole one
/// (inside i_size, the VMA and a page table), except the last, 224..255, which ends at
/// the file's last page and is mapped 16 pages at a time (file_end 255 < its next index 256).
#[test]
fn munmap_keeps_the_page_cache() {
    let size = MIB;
    let steps = [
        map_all(size),
        touch(TouchOrder::Sequential),
        Step::Munmap { map: 0 },
        map_all(size),
        touch(TouchOrder::Sequential),
    ];
    let trace = predict(&input(size, 65536, &steps), &Policy::BASE);
    let first = predict(&input(size, 65536, &steps[..2]), &Policy::BASE);
    let rest = &shape(&trace)[first.windows.len()..];
    let want: Vec<_> =
        (0..96).step_by(16).chain((96..224).step_by(32)).chain([224, 240]).map(|p| (FaultAround, p, 16)).collect();
    assert_eq!(rest, want);
}

/// Recording coverage changes nothing and reaches the fault path's branches.
#[test]
fn coverage_of_the_fault_path() {
    let size = 8 * MIB;
    let input = input(size, 65536, &[map_all(size), touch(TouchOrder::Sequential)]);
    let (trace, cov) =
        coverage_with(&input, &Policy::BASE, &ModelConfig { touches: Touches::Race, ..Default::default() });
    assert_eq!(trace, predict(&input, &Policy::BASE));
    for id in [
        "do_sync_mmap_readahead: read-around",
        "do_async_mmap_readahead: PG_readahead: page_cache_async_ra",
        "filemap_map_pages: mm_filemap_map_pages",
        "next_uptodate_folio: PG_readahead: skip",
        "do_user_addr_fault: VMA lock: VM_FAULT_RETRY, major: FAULT_FLAG_TRIED",
        "do_user_addr_fault: VMA lock: VM_FAULT_RETRY, minor",
        "filemap_map_folio_range: the whole folio",
    ] {
        assert!(cov.contains(id), "{id}");
    }
}

/// The measured address decides fault-around's ranges: a mapping whose first page sits at
/// page-table slot 7 (f2fs maps without 2 MiB alignment). Touch 0: pte_off 7, vma_off 0:
/// from_pte = max(ALIGN_DOWN(7, 16), 7 - min(7, 0)) = 7, to_pte = min(7 + 16, 512, 7 +
/// 2048) - 1 = 22: file pages [0, 15]. Touch 16: pte_off 23: from_pte = max(16, 7) = 16,
/// to_pte 31: file pages [16 - 7, 16 + 8] = [9, 24].
#[test]
fn the_mapping_address_aligns_fault_around() {
    let size = 8 * MIB;
    let mut input = input(size, 65536, &[map_all(size), touch(TouchOrder::Sequential)]);
    input.vm.mmap_addrs = vec![0x7f00_0000_0000 + 7 * 4096];
    let trace = predict(&input, &Policy::BASE);
    assert_eq!(shape(&trace)[..3], [(Fault, 0, 1), (FaultAround, 0, 16), (FaultAround, 9, 16)]);
}

/// Two mappings through two fds, touched in turns (map 0 page i, then map 1 page i): each
/// fault reads ahead through its own `struct file`. Map 1's first fault (file page 1024)
/// reads around [1008, 1040) with PG_readahead on 1032 (map 1's page 8, step 8); that
/// fault's async window on fd 1 (ra start 1008, size 32, async 8, order 0) reads [1040,
/// 1072) in order-2 folios, marked at 1040 (step 16: locked, a fault that runs fd 1's next
/// window, ra order 2). Map 0 reaches its marker 24 at step 24, with fd 0's state (order
/// 0, not fd 1's 2), and 32 at step 32.
#[test]
fn two_mappings_touched_in_turns_keep_their_own_readahead_state() {
    let size = 8 * MIB;
    let half = size / 2;
    let steps = [
        Step::Mmap { map: 0, fd: 0, offset: 0, len: half, shared: true, exec: false, populate: false },
        Step::Mmap { map: 1, fd: 1, offset: half, len: half, shared: true, exec: false, populate: false },
        Step::Touch { maps: vec![0, 1], from: 0, to: None, order: TouchOrder::Sequential },
    ];
    let trace = predict(&input(size, 65536, &steps), &Policy::BASE);
    let first: Vec<_> = trace.windows.iter().filter(|w| w.trigger == Fault).take(4).map(|w| w.index).collect();
    assert_eq!(first, vec![0, 1024, 1032, 1040]);
    let asyncs: Vec<_> =
        trace.windows.iter().filter(|w| w.trigger == Async).map(|w| (w.index, w.ra.size, w.ra.order)).take(4).collect();
    assert_eq!(asyncs, vec![(1032, 32, 0), (1040, 32, 2), (24, 32, 0), (32, 32, 2)]);
}

/// Waiting for the device between touches (radiff's guest, the default `Touches::WaitIdle`):
/// at touch 32 the async window issued at touch 24 ([32, 64) in order-2 folios, the first
/// marked PG_readahead) has been read, so fault-around finds uptodate folios in [32, 47]
/// (the event `around [32+16)`, skipping the marked folio 32) before the fault on 32 runs
/// the next async window. A loop of loads (`Touches::Race`) finds them still locked:
/// next_uptodate_folio() skips every one, no event, and the fault comes first.
#[test]
fn waiting_for_the_device_between_touches_maps_the_async_window() {
    let size = 8 * MIB;
    let input = input(size, 65536, &[map_all(size), touch(TouchOrder::Sequential)]);
    let around_then_fault = |t: &Trace| shape(t).windows(2).any(|w| w == [(FaultAround, 32, 16), (Fault, 32, 1)]);
    let settled = predict_with(&input, &Policy::BASE, &ModelConfig::default());
    assert!(around_then_fault(&settled), "{:?}", &shape(&settled)[..12]);
    let raced = predict(&input, &Policy::BASE);
    assert!(!around_then_fault(&raced), "{:?}", &shape(&raced)[..12]);
}
