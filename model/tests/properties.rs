//! Properties of the model over random scenarios: file systems, layouts with holes,
//! unwritten and discontiguous extents, queue limits, several fds, fadvise hints, and
//! every timing and memory assumption.

use proptest::prelude::*;
use radiff_model::*;

const PAGE: u64 = 4096;

fn fs_and_mapping() -> impl Strategy<Value = (FsKind, MappingLimits)> {
    prop_oneof![
        Just((FsKind::Xfs, MappingLimits::xfs())),
        Just((FsKind::Ext4, MappingLimits::ext4())),
        Just((FsKind::F2fs, MappingLimits::f2fs())),
        (0u32..=9).prop_map(|max| (
            FsKind::Xfs,
            if max == 0 {
                MappingLimits::order0()
            } else {
                MappingLimits { large_folios: true, min_order: 0, max_order: max }
            }
        )),
        (1u32..=9).prop_map(|max| (FsKind::Ext4, MappingLimits { large_folios: true, min_order: 0, max_order: max })),
    ]
}

/// Extents covering `pages` pages, broken at random places; each piece is placed right
/// after the previous one on disk or elsewhere, and is sometimes unwritten or a hole.
fn layout(pages: u64) -> impl Strategy<Value = Vec<Extent>> {
    let breaks = proptest::collection::btree_set(1..pages.max(2), 0..6);
    let kinds = proptest::collection::vec((0u8..8, 0u64..64), 7);
    (breaks, kinds).prop_map(move |(breaks, kinds)| {
        let mut cuts: Vec<u64> = breaks.into_iter().filter(|&b| b < pages).collect();
        cuts.insert(0, 0);
        cuts.push(pages);
        let mut extents = Vec::new();
        let mut disk = 1 << 30;
        for (i, w) in cuts.windows(2).enumerate() {
            let (kind, jump) = kinds[i];
            let (start, end) = (w[0] * PAGE, w[1] * PAGE);
            if kind >= 2 {
                disk += jump * 1024 * 1024;
            }
            match kind {
                7 => {} // hole
                _ => extents.push(Extent {
                    logical: start,
                    physical: disk,
                    length: end - start,
                    flags: if kind == 6 { 0x800 } else { 0 },
                }),
            }
            disk += end - start;
        }
        extents
    })
}

fn queue() -> impl Strategy<Value = QueueLimits> {
    (
        prop::sample::select(vec![0u64, 4, 16, 128, 512, 2048]),
        prop::sample::select(vec![4u64, 32, 128, 256, 512, 1024]),
        prop::sample::select(vec![2u64, 4, 16, 128, 256]),
        prop::sample::select(vec![4096u64, 65536, 4294967295]),
        any::<bool>(),
        prop::sample::select(vec![(512u64, 512u64), (512, 4096), (4096, 4096)]),
    )
        .prop_map(|(ra, ms, segs, seg_size, virt, (lbs, pbs))| QueueLimits {
            read_ahead_kb: ra,
            max_sectors_kb: ms,
            max_hw_sectors_kb: 2048,
            max_segments: segs,
            max_segment_size: seg_size,
            logical_block_size: lbs,
            physical_block_size: pbs,
            virt_boundary_mask: if virt { 4095 } else { 0 },
            scheduler: if virt == (lbs == 512) { "none".into() } else { "mq-deadline".into() },
            ..Default::default()
        })
}

fn op(size: u64, dontneed: bool) -> impl Strategy<Value = Op> {
    let advice = if dontneed {
        prop::sample::select(vec![
            Advice::Normal,
            Advice::Random,
            Advice::Sequential,
            Advice::Willneed,
            Advice::Noreuse,
            Advice::Dontneed,
        ])
    } else {
        prop::sample::select(vec![
            Advice::Normal,
            Advice::Random,
            Advice::Sequential,
            Advice::Willneed,
            Advice::Noreuse,
        ])
    };
    prop_oneof![
        8 => (0u32..3, 0..size + PAGE, 1u64..(2 << 20)).prop_map(|(fd, offset, len)| Op::Read { fd, offset, len }),
        8 => (0u32..3, 0..size / PAGE + 1, 1u64..64).prop_map(|(fd, page, pages)| Op::Read { fd, offset: page * PAGE, len: pages * PAGE }),
        1 => (0u32..3, 0..size, 0..size, advice).prop_map(|(fd, offset, len, advice)| Op::Fadvise { fd, offset, len, advice }),
        1 => (0u32..3, 0..size / PAGE + 1, 1u64..512, prop::sample::select(vec![1u64, 16, 64]), any::<bool>())
            .prop_map(|(fd, page, pages, pipe, sendfile)| Op::Splice { fd, offset: page * PAGE, len: pages * PAGE, pipe: pipe * PAGE, sendfile }),
    ]
}

/// Sequential runs make readahead ramp up; random reads and hints break it.
fn ops(size: u64, dontneed: bool) -> impl Strategy<Value = Vec<Op>> {
    let run = (0u32..3, 0..size, 1u64..(1 << 20), 1usize..24).prop_map(move |(fd, from, len, n)| {
        (0..n as u64).map(|i| Op::Read { fd, offset: from + i * len, len }).collect::<Vec<_>>()
    });
    proptest::collection::vec(prop_oneof![3 => op(size, dontneed).prop_map(|o| vec![o]), 1 => run], 1..12)
        .prop_map(|v| v.concat())
}

fn input(dontneed: bool) -> impl Strategy<Value = Input> {
    (fs_and_mapping(), 1u64..2048, 0u64..PAGE, queue()).prop_flat_map(move |((fs, mapping), pages, tail, queue)| {
        let file_size = (pages * PAGE - tail).max(1);
        (layout(pages), ops(file_size, dontneed)).prop_map(move |(extents, ops)| Input {
            fs,
            file_size,
            extents,
            queue: queue.clone(),
            mapping,
            ops,
            folio_pfns: Vec::new(),
            other_files: Vec::new(),
            vm: Default::default(),
        })
    })
}

/// Clears every window's `ra.prev_pos` when `input` splices: the one field that depends on
/// completion timing there (model/tests/splice_timing.rs).
fn without_splice_prev_pos(input: &Input, trace: &mut Trace) {
    if input.ops.iter().any(|op| matches!(op, Op::Splice { .. })) {
        for w in &mut trace.windows {
            w.ra.prev_pos = 0;
        }
    }
}

fn config() -> impl Strategy<Value = ModelConfig> {
    (
        prop::sample::select(vec![IoCompletion::AtIssue, IoCompletion::BeforeNextOp, IoCompletion::WhenWaited]),
        prop::sample::select(vec![FolioMemory::Scattered, FolioMemory::Contiguous]),
    )
        .prop_map(|(io_completion, folio_memory)| ModelConfig {
            io_completion,
            folio_memory,
            ..Default::default()
        })
}

fn any_policy() -> impl Strategy<Value = Policy> {
    prop::sample::select(Policy::KNOWN.to_vec()).prop_map(|name| Policy::for_variant(name).unwrap())
}

/// Device byte ranges the file's written extents occupy, adjacent ones joined.
fn mapped_on_disk(input: &Input) -> Vec<(u64, u64)> {
    joined(input.extents.iter().filter(|e| e.flags & 0x800 == 0).map(|e| (e.physical, e.physical + e.length)).collect())
}

/// `ranges` sorted, with ranges that touch made one.
fn joined(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort();
    let mut joined: Vec<(u64, u64)> = Vec::new();
    for (s, e) in ranges {
        match joined.last_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => joined.push((s, e)),
        }
    }
    joined
}

/// Places the folios of `folios` (in the order they were added) in physical memory:
/// `kinds[n % len]` says where folio n goes: 0 somewhere new, 1 and 2 right after the
/// last folio placed that way (if its alignment allows), 3 right below the last folio
/// placed that way (descending addresses, as per-CPU page lists often hand them out).
/// Naturally aligned, and no two folios overlap.
fn place(folios: &[Folio], kinds: &[u8]) -> Vec<u64> {
    let (mut up, mut down) = (1u64 << 20, 1u64 << 30);
    folios
        .iter()
        .enumerate()
        .map(|(n, f)| {
            let pages = f.pages();
            match kinds[n % kinds.len()] {
                3 => {
                    down = (down - pages) / pages * pages;
                    down
                }
                kind => {
                    if kind == 0 {
                        up += 1024;
                    }
                    let pfn = up.next_multiple_of(pages);
                    up = pfn + pages;
                    pfn
                }
            }
        })
        .collect()
}

/// The file page whose block is at device byte `pos`, if a written extent holds it.
fn page_at_disk(input: &Input, pos: u64) -> Option<u64> {
    input
        .extents
        .iter()
        .find(|e| e.flags & 0x800 == 0 && e.physical <= pos && pos < e.physical + e.length)
        .map(|e| (e.logical + pos - e.physical) / PAGE)
}

/// The fewest segments the memory behind `[start, end)` of the device can be mapped in,
/// given `max_segment_size` and a 4 GiB `seg_boundary_mask`: each maximal physically
/// contiguous run cut greedily, as get_max_segment_size() cuts (which is optimal).
fn fewest_segments(input: &Input, cache: &radiff_model::pagecache::PageCache, start: u64, end: u64) -> u64 {
    let max_seg = input.queue.max_segment_size;
    let mask = 0xFFFF_FFFFu64;
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut pos = start;
    while pos < end {
        let page = page_at_disk(input, pos).expect("a request outside the file");
        let folio = cache.folio_at(page).expect("a request for a page with no folio");
        let phys = cache.folio_phys(&folio) + (page - folio.index) * PAGE + pos % PAGE;
        let len = (PAGE - pos % PAGE).min(end - pos);
        match runs.last_mut() {
            Some(run) if run.0 + run.1 == phys => run.1 += len,
            _ => runs.push((phys, len)),
        }
        pos += len;
    }
    let mut segments = 0;
    for (mut paddr, mut len) in runs {
        while len > 0 {
            let seg = len.min((mask - (mask & paddr)).min(max_seg - 1) + 1);
            segments += 1;
            paddr += seg;
            len -= seg;
        }
    }
    segments
}

/// Device ranges read, adjacent ones joined.
fn ranges_read(trace: &Trace) -> Vec<(u64, u64)> {
    joined(trace.requests().map(|r| (r.sector, r.sector + r.sectors)).collect())
}

fn without_requests(trace: &Trace) -> Trace {
    let mut t = trace.clone();
    for w in &mut t.windows {
        w.requests.clear();
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// A folio is only added where the page cache holds none (the windows of the trace
    /// never overlap what is cached), every page a read returns is cached and uptodate
    /// when the read returns, and folios are naturally aligned, within the mapping's orders.
    #[test]
    fn folios_never_overlap_and_reads_leave_their_pages_cached(input in input(true), policy in any_policy(), config in config()) {
        let mut sim = Simulation::new(&input, &policy, &config);
        let mut seen = 0;
        loop {
            let before: Vec<(u64, u64)> = sim.cache().folios().iter().map(|f| (f.index, f.next_index())).collect();
            let op = sim.next_op();
            if !sim.step() {
                break;
            }
            let added: Vec<Folio> = sim.windows().iter().flat_map(|w| &w.folios).skip(seen).copied().collect();
            seen += added.len();
            let mut now: Vec<(u64, u64)> = before.clone();
            for f in &added {
                let (start, end) = (f.index, f.index + f.pages());
                prop_assert_eq!(start % f.pages(), 0);
                prop_assert!(f.order <= input.mapping.max_order);
                prop_assert!(now.iter().all(|&(s, e)| end <= s || e <= start), "folio {:?} added over a cached one at op {}", f, op);
                now.push((start, end));
            }
            if let Op::Read { offset, len, .. } = input.ops[op] {
                let end = (offset + len).min(input.file_size);
                let mut page = offset / PAGE;
                while offset < end && page * PAGE < end {
                    let folio = sim.cache().folio_at(page);
                    prop_assert!(folio.is_some_and(|f| f.uptodate), "page {} of read {} is {:?}", page, op, folio);
                    page += 1;
                }
            }
        }
    }

    /// Requests fit the queue limits and read only written extents of the file; each is
    /// as many sectors as its segments allow.
    #[test]
    fn requests_fit_the_queue_limits(input in input(true), policy in any_policy(), config in config()) {
        let ex = explain(&input, &policy, &config);
        let disk = mapped_on_disk(&input);
        let lbs = input.queue.logical_block_size / 512;
        for (w, note) in ex.trace.windows.iter().zip(&ex.notes) {
            prop_assert_eq!(w.requests.len(), note.segments.len());
            for (r, &segs) in w.requests.iter().zip(&note.segments) {
                prop_assert!(r.sectors > 0 && r.sectors <= input.queue.max_sectors_kb * 2, "{:?} over max_sectors_kb {}", r, input.queue.max_sectors_kb);
                prop_assert!(segs >= 1 && segs <= input.queue.max_segments, "{:?} has {} segments", r, segs);
                prop_assert_eq!(r.sector % lbs, 0);
                prop_assert_eq!(r.sectors % lbs, 0);
                let (start, end) = (r.sector * 512, (r.sector + r.sectors) * 512);
                prop_assert!(disk.iter().any(|&(s, e)| s <= start && end <= e), "{:?} outside the file's written extents {:?}", r, disk);
                prop_assert!(r.rwbs == "RA" || r.rwbs == "R");
            }
        }
    }

    /// Reads do not depend on when I/O completes (see config::IoCompletion); a hint to
    /// drop pages only sees the difference for folios still under I/O. A splice records a
    /// `prev_pos` that may (filemap_splice_read() sets it after each folio), and nothing
    /// else: the windows, their folios and requests are the same.
    #[test]
    fn completion_timing_does_not_change_reads(input in input(false), policy in any_policy(), memory in prop::sample::select(vec![FolioMemory::Scattered, FolioMemory::Contiguous])) {
        let mut traces: Vec<Trace> = [IoCompletion::AtIssue, IoCompletion::BeforeNextOp, IoCompletion::WhenWaited]
            .into_iter()
            .map(|io_completion| predict_with(&input, &policy, &ModelConfig { io_completion, folio_memory: memory, ..Default::default() }))
            .collect();
        for t in &mut traces {
            without_splice_prev_pos(&input, t);
        }
        prop_assert_eq!(&traces[0], &traces[1]);
        prop_assert_eq!(&traces[0], &traces[2]);
    }

    /// A trace predicted into vectors another trace gave back (`Trace::recycle`, as the
    /// search does) is the trace predicted into new ones.
    #[test]
    fn recycled_window_vectors_give_the_same_trace(input in input(true), other in input(true), policy in any_policy()) {
        let fresh = predict(&input, &policy);
        predict(&other, &policy).recycle();
        let reused = predict(&input, &policy);
        prop_assert_eq!(&fresh, &reused);
        fresh.recycle();
        reused.recycle();
        prop_assert_eq!(predict(&input, &policy), predict(&input, &policy));
    }

    /// mq-deadline changes the order in which a batch's requests reach the device, never
    /// what they are: each window has the same requests as with no scheduler.
    #[test]
    fn the_scheduler_only_reorders_requests(input in input(true), policy in any_policy()) {
        let mut none = input.clone();
        none.queue.scheduler = "none".into();
        let mut deadline = input;
        deadline.queue.scheduler = "mq-deadline".into();
        let (a, b) = (predict(&none, &policy), predict(&deadline, &policy));
        prop_assert_eq!(a.windows.len(), b.windows.len());
        for (x, y) in a.windows.iter().zip(&b.windows) {
            let (mut rx, mut ry) = (x.requests.clone(), y.requests.clone());
            rx.sort_by_key(|r| (r.sector, r.sectors));
            ry.sort_by_key(|r| (r.sector, r.sectors));
            prop_assert_eq!(rx, ry);
            let (mut x, mut y) = (x.clone(), y.clone());
            x.requests.clear();
            y.requests.clear();
            prop_assert_eq!(x, y);
        }
    }

    #[test]
    fn completion_before_the_next_call_is_completion_at_issue(input in input(true), policy in any_policy()) {
        let mut at_issue = predict_with(&input, &policy, &ModelConfig { io_completion: IoCompletion::AtIssue, ..Default::default() });
        let mut before_next = predict(&input, &policy);
        without_splice_prev_pos(&input, &mut at_issue);
        without_splice_prev_pos(&input, &mut before_next);
        prop_assert_eq!(before_next, at_issue);
    }

    /// A variant that does not touch a path leaves it alone.
    #[test]
    fn variants_only_change_their_own_path(input in input(true), config in config()) {
        let base = predict_with(&input, &Policy::BASE, &config);
        if input.fs != FsKind::F2fs {
            prop_assert_eq!(&predict_with(&input, &Policy { f2fs_extent_ra: true, ..Policy::BASE }, &config), &base);
        }
        if input.queue.read_ahead_kb > 0 {
            prop_assert_eq!(&predict_with(&input, &Policy { sync_ra_when_disabled: true, ..Policy::BASE }, &config), &base);
        } else {
            // No async readahead without ra_pages: the alignment variants never run.
            for async_align in [AsyncAlign::KeepHalf, AsyncAlign::InRaOrder] {
                prop_assert_eq!(&predict_with(&input, &Policy { async_align, ..Policy::BASE }, &config), &base);
            }
            prop_assert!(base.windows.iter().all(|w| w.trigger != Trigger::Async));
        }
        // Deterministic.
        prop_assert_eq!(&predict_with(&input, &Policy::BASE, &config), &base);
    }
    /// With measured memory, every request still fits the queue: at most `max_sectors`,
    /// and at most `max_segments` segments, counting segments of physically contiguous
    /// memory (the model's count is never below the fewest the request's memory can be
    /// mapped in, which is what blk_rq_map_sg() gives the driver). Memory changes how the
    /// reads are cut into requests, never the windows, the folios or what is read.
    #[test]
    fn measured_memory_keeps_requests_within_the_limits_counted_physically(input in input(false), policy in any_policy(), kinds in proptest::collection::vec(0u8..4, 1..48)) {
        let base = predict(&input, &policy);
        let folios: Vec<Folio> = base.folios().copied().collect();
        let input = Input { folio_pfns: place(&folios, &kinds), ..input };
        let mut sim = Simulation::new(&input, &policy, &ModelConfig::default());
        while sim.step() {}
        let cache = sim.cache().clone();
        let ex = sim.finish();
        prop_assert_eq!(without_requests(&ex.trace), without_requests(&base));
        prop_assert_eq!(ranges_read(&ex.trace), ranges_read(&base));
        prop_assert!(ex.notes.iter().flat_map(|n| &n.steps).all(|s| !s.starts_with("folio_pfns")));
        for (w, note) in ex.trace.windows.iter().zip(&ex.notes) {
            prop_assert_eq!(w.requests.len(), note.segments.len());
            for (r, &segs) in w.requests.iter().zip(&note.segments) {
                prop_assert!(r.sectors <= input.queue.max_sectors_kb * 2, "{:?} over max_sectors_kb {}", r, input.queue.max_sectors_kb);
                prop_assert!(segs <= input.queue.max_segments, "{:?} has {} segments", r, segs);
                let fewest = fewest_segments(&input, &cache, r.sector * 512, (r.sector + r.sectors) * 512);
                prop_assert!(fewest >= 1 && fewest <= segs, "{:?}: {} segments counted, its memory needs {}", r, segs, fewest);
            }
        }
    }

    /// Measuring the addresses an assumption would give is the same as assuming it.
    #[test]
    fn measured_pfns_equal_to_an_assumption_give_its_trace(input in input(true), policy in any_policy(), memory in prop::sample::select(vec![FolioMemory::Scattered, FolioMemory::Contiguous])) {
        let config = ModelConfig { folio_memory: memory, ..Default::default() };
        let assumed = predict_with(&input, &policy, &config);
        let pfns = assumed.folios().enumerate().map(|(n, f)| memory.assumed_pfn(n as u64, f.index)).collect();
        let measured = Input { folio_pfns: pfns, ..input.clone() };
        prop_assert_eq!(&predict(&measured, &policy), &assumed);
        // Measured pfns win over the assumption.
        let other = if memory == FolioMemory::Scattered { FolioMemory::Contiguous } else { FolioMemory::Scattered };
        prop_assert_eq!(&predict_with(&measured, &policy, &ModelConfig { folio_memory: other, ..Default::default() }), &assumed);
    }
}
