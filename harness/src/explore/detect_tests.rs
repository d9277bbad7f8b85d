//! Tests of the explore detectors on hand-made traces.

use radiff_model::{Advice, Folio, Op, RaState, Request, Submit, Trace, Trigger, Window};

use super::detect::{self, Context, Thresholds};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

// ---- detectors on hand-made traces ----

fn window(trigger: Trigger, index: u64, size: u64, order: u32, request_pages: u64) -> Window {
    let folios = (0..size >> order).map(|i| Folio { index: index + (i << order), order }).collect();
    let requests = (0..size / request_pages)
        .map(|i| Request { sector: (index + i * request_pages) * 8, sectors: request_pages * 8, rwbs: "RA".into() })
        .collect();
    Window {
        file: 0,
        trigger,
        index,
        req_count: 16,
        ra: RaState::default(),
        submits: vec![Submit::Order { index, size, async_size: size, order }],
        folios,
        requests,
    }
}

/// Windows back to back from page 0 with these sizes (the first sync, then async).
fn chain(sizes: &[u64], order: u32, request_pages: u64) -> Trace {
    let mut index = 0;
    let mut windows = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let trigger = if i == 0 { Trigger::Sync } else { Trigger::Async };
        windows.push(window(trigger, index, size, order.min(size.trailing_zeros()), request_pages.min(size)));
        index += size;
    }
    Trace { windows }
}

pub(super) fn sequential_ops(read: u64, total: u64) -> Vec<Op> {
    (0..total / read).map(|i| Op::Read { fd: 0, offset: i * read, len: read }).collect()
}

fn ctx(ops: &[Op]) -> Context<'_> {
    Context {
        ops,
        file_size: 64 * MIB,
        ra_pages: 32,
        max_sectors_kb: 512,
        max_order: 9,
        found_streams: Default::default(),
    }
}

#[test]
fn streams_follow_reads_that_continue_each_other() {
    let mut ops = sequential_ops(64 * KIB, 4 * MIB);
    // A second stream interleaved with the first, and a lone read.
    let other: Vec<Op> = sequential_ops(64 * KIB, 2 * MIB)
        .into_iter()
        .map(|op| match op {
            Op::Read { fd, offset, len } => Op::Read { fd, offset: offset + 32 * MIB, len },
            op => op,
        })
        .collect();
    ops = ops
        .into_iter()
        .zip(other.into_iter().chain(std::iter::repeat_n(Op::Read { fd: 0, offset: 60 * MIB, len: 4096 }, 32)))
        .flat_map(|(a, b)| [a, b])
        .collect();
    let s = detect::streams(&ops, &Thresholds::default());
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!((s[0].start, s[0].end, s[0].reads), (0, 4 * MIB, 64));
    assert_eq!((s[1].start, s[1].end, s[1].reads), (32 * MIB, 34 * MIB, 32));
    // A re-read of the first stream's range is left out; the common read size counts.
    let mut again = sequential_ops(64 * KIB, 4 * MIB);
    again.insert(0, Op::Read { fd: 0, offset: 8 * MIB, len: MIB });
    again.push(Op::Read { fd: 0, offset: 4 * MIB, len: MIB });
    again.extend(sequential_ops(MIB, 4 * MIB));
    let s = detect::streams(&again, &Thresholds::default());
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!((s[0].start, s[0].end, s[0].reads, s[0].read_size), (0, 5 * MIB, 65, 64 * KIB));
    // Reads far apart in time, or under FADV_RANDOM, make no stream.
    let far: Vec<Op> = sequential_ops(64 * KIB, 4 * MIB)
        .into_iter()
        .flat_map(|op| {
            std::iter::once(op).chain(std::iter::repeat_n(Op::Read { fd: 1, offset: 60 * MIB, len: 4096 }, 9))
        })
        .collect();
    assert!(detect::streams(&far, &Thresholds::default()).is_empty());
    let mut random = vec![Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Random }];
    random.extend(sequential_ops(64 * KIB, 4 * MIB));
    assert!(detect::streams(&random, &Thresholds::default()).is_empty());
    random[0] = Op::Fadvise { fd: 1, offset: 0, len: 0, advice: Advice::Random };
    assert_eq!(detect::streams(&random, &Thresholds::default()).len(), 1);
}

#[test]
fn trimmed_window_fires_on_windows_cut_below_half_and_not_on_steady_ones() {
    let ops = sequential_ops(MIB, 16 * MIB);
    let t = Thresholds::default();
    let trimmed = chain(&[4, 64, 16, 64, 16, 64, 16, 64, 16], 2, 16);
    let hit = detect::trimmed_window(&trimmed, &ctx(&ops), &t).expect("fires");
    assert_eq!(hit.detector, "trimmed-window");
    assert_eq!(hit.key, "~64->~16 pages");
    assert!(hit.detail.starts_with("4 of 9 windows"), "{}", hit.detail);
    let steady = chain(&[4, 64, 64, 64, 64, 64, 64, 64, 64], 2, 16);
    assert_eq!(detect::trimmed_window(&steady, &ctx(&ops), &t), None);
    // A window cut short by the end of the file is not trimmed.
    let short = Context { file_size: (4 + 64 + 16) * 4096, ..ctx(&ops) };
    assert_eq!(detect::trimmed_window(&chain(&[4, 64, 16], 2, 16), &short, &t), None);
    // One trimmed window is below the default count.
    assert_eq!(detect::trimmed_window(&chain(&[4, 64, 16, 64, 64], 2, 16), &ctx(&ops), &t), None);
}

#[test]
fn order_collapse_fires_when_the_steady_state_stays_at_order_0() {
    let ops = sequential_ops(128 * KIB, 8 * MIB);
    let t = Thresholds::default();
    let collapsed = chain(&[32; 64], 0, 32);
    let hit = detect::order_collapse(&collapsed, &ctx(&ops), &t).expect("fires");
    assert_eq!(hit.key, "o0 of o5");
    let healthy = chain(&[32; 64], 5, 32);
    assert_eq!(detect::order_collapse(&healthy, &ctx(&ops), &t), None);
    // Ramping up in the first half only does not fire.
    let mut ramp = chain(&[32; 64], 5, 32);
    ramp.windows[..20].iter_mut().for_each(|w| w.folios.iter_mut().for_each(|f| f.order = 0));
    assert_eq!(detect::order_collapse(&ramp, &ctx(&ops), &t), None);
    // No large folios (f2fs): never.
    assert_eq!(detect::order_collapse(&collapsed, &Context { max_order: 0, ..ctx(&ops) }, &t), None);
}

#[test]
fn fragmentation_fires_on_page_sized_requests_for_large_windows() {
    let ops = sequential_ops(256 * KIB, 8 * MIB);
    let t = Thresholds::default();
    let hit = detect::fragmentation(&chain(&[64; 32], 0, 1), &ctx(&ops), &t).expect("fires");
    assert_eq!(hit.key, "~4 KiB for ~256 KiB");
    assert_eq!(detect::fragmentation(&chain(&[64; 32], 0, 64), &ctx(&ops), &t), None);
    // Requests at max_sectors_kb are what the queue allows.
    let small_msk = Context { max_sectors_kb: 16, ..ctx(&ops) };
    assert_eq!(detect::fragmentation(&chain(&[64; 32], 0, 4), &small_msk, &t), None);
}

#[test]
fn amplification_counts_distinct_bytes_and_willneed() {
    let t = Thresholds::default();
    let trace = chain(&[512], 0, 128);
    let small = vec![Op::Read { fd: 0, offset: 0, len: 64 * KIB }, Op::Read { fd: 0, offset: 0, len: 64 * KIB }];
    assert_eq!(detect::amplification(&trace, &ctx(&small), &t), None, "a small program is below the minimum");
    let t = t.with("amplification_min_program_bytes", 0.0);
    let hit = detect::amplification(&trace, &ctx(&small), &t).expect("fires");
    assert_eq!(hit.key, "x32");
    assert_eq!(hit.strength, 32.0);
    let whole = vec![Op::Read { fd: 0, offset: 0, len: 2 * MIB }];
    assert_eq!(detect::amplification(&trace, &ctx(&whole), &t), None);
    let willneed = vec![Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Willneed }, small[0]];
    assert_eq!(detect::amplification(&trace, &ctx(&willneed), &t), None);
    assert_eq!(
        detect::distinct_bytes_read(
            &[Op::Read { fd: 0, offset: 0, len: 8192 }, Op::Read { fd: 1, offset: 4096, len: 8192 }],
            1 << 20
        ),
        12288
    );
}

/// The device read 2 MiB. amplification() gives up early when even the program's longest
/// range puts the ratio below 4; at the threshold and with scattered reads it counts.
#[test]
fn amplification_s_early_bound_never_hides_what_the_exact_count_finds() {
    let t = Thresholds::default().with("amplification_min_program_bytes", 0.0);
    let trace = chain(&[512], 0, 128);
    let reads = |n: u64, len: u64, stride: u64| -> Vec<Op> {
        (0..n).map(|i| Op::Read { fd: 0, offset: i * stride, len }).collect()
    };
    // One 512 KiB read: x4.0 exactly, at the threshold: fires.
    assert_eq!(detect::amplification(&trace, &ctx(&reads(1, 512 * KIB, 0)), &t).map(|h| h.strength), Some(4.0));
    // Eight 64 KiB reads 256 KiB apart: the longest range bounds the ratio at x32, the
    // union (512 KiB) gives x4: fires.
    let scattered = reads(8, 64 * KIB, 256 * KIB);
    assert_eq!(detect::amplification(&trace, &ctx(&scattered), &t).map(|h| h.strength), Some(4.0));
    // Sixteen such reads: the bound lets it count, the union (1 MiB) gives x2: none.
    assert_eq!(detect::amplification(&trace, &ctx(&reads(16, 64 * KIB, 256 * KIB)), &t), None);
    // One 1 MiB read: the bound alone (x2) says none.
    assert_eq!(detect::amplification(&trace, &ctx(&reads(1, MIB, 0)), &t), None);
}

#[test]
fn touches_are_page_reads_of_their_mapping_and_madv_random_ends_a_stream() {
    let map = |offset| Op::Mmap { map: 0, fd: 0, offset, len: 4 * MIB, shared: true, exec: false, populate: false };
    let touches = |n: u64| (0..n).map(|p| Op::Touch { map: 0, offset: p * 4096 });
    // Mapped from 1 MiB: 512 sequential touches are a stream over [1 MiB, 3 MiB).
    let ops: Vec<Op> = std::iter::once(map(MIB)).chain(touches(512)).collect();
    let s = detect::streams(&ops, &Thresholds::default());
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].start, s[0].end, s[0].reads, s[0].read_size), (MIB, 3 * MIB, 512, 4096));
    assert_eq!(detect::distinct_bytes_read(&ops, 8 * MIB), 2 * MIB);
    // Under MADV_RANDOM they are not a stream.
    let random: Vec<Op> = [map(0), Op::Madvise { map: 0, offset: 0, len: 0, advice: radiff_model::MadvAdvice::Random }]
        .into_iter()
        .chain(touches(512))
        .collect();
    assert!(detect::streams(&random, &Thresholds::default()).is_empty());
    // readahead(2) and MADV_WILLNEED ranges count as asked for.
    let asked = [
        map(0),
        Op::Readahead { fd: 0, offset: 0, len: MIB },
        Op::Madvise { map: 0, offset: 2 * MIB, len: MIB, advice: radiff_model::MadvAdvice::Willneed },
    ];
    assert_eq!(detect::distinct_bytes_read(&asked, 8 * MIB), 2 * MIB);
}

#[test]
fn variant_change_names_its_direction_on_each_figure() {
    let base = chain(&[4, 64, 16, 64, 16], 2, 16);
    let v1 = chain(&[4, 64, 64, 32], 4, 32);
    let hit = detect::variant_change(&base, &v1, "async-align-v1").expect("fires");
    assert_eq!(hit.key, "async-align-v1: device reads fewer, folios fewer, pages per folio more");
    assert!(hit.detail.contains("device reads 11 -> 6"), "{}", hit.detail);
    assert_eq!(detect::variant_change(&base, &base, "v"), None);
    let worse = detect::variant_change(&v1, &base, "v").unwrap();
    assert!(worse.key.ends_with("; worse on device reads, folios, pages per folio, windows"), "{}", worse.key);
}
