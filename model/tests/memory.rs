//! Where folios sit in physical memory decides the requests of a device whose segment
//! limit binds: the QEMU UFS disk (128 segments) reading order-0 f2fs folios. The guest
//! measures each folio's pfn (`Input::folio_pfns`); these cases are the ones the real
//! kernel showed for one 1 MiB f2fs window: 1064 + 984, 1040 + 1008 or 2048 sectors.

mod common;

use common::*;
use radiff_model::*;

/// f2fs on the UFS disk: a 2 MiB file in one extent, read as two 1 MiB preads. With
/// read_ahead_kb 1024 that is two windows of 256 order-0 folios: [0, 256) (sync) and
/// [256, 512) (async, at page 128), each read by f2fs as one bio of 256 bio_vecs at most.
fn f2fs_on_ufs(read_ahead_kb: u64, folio_pfns: Vec<u64>) -> Input {
    let size = 2 * MIB;
    Input {
        fs: FsKind::F2fs,
        file_size: size,
        extents: one_extent(size),
        queue: ufs(read_ahead_kb),
        mapping: MappingLimits::f2fs(),
        ops: vec![Op::Read { fd: 0, offset: 0, len: MIB }, Op::Read { fd: 0, offset: MIB, len: MIB }],
        folio_pfns,
        vm: Default::default(),
        other_files: Vec::new(),
    }
}

/// Order-0 pages in runs of the given lengths: each run is contiguous in memory, and no
/// run touches another (they are 64 pages apart, in descending order).
fn runs(lengths: &[u64]) -> Vec<u64> {
    let mut pfns = Vec::new();
    for (i, &len) in lengths.iter().enumerate() {
        let start = 0x80000 - 64 * i as u64;
        assert!(len <= 32);
        pfns.extend(start..start + len);
    }
    pfns
}

/// `pairs` contiguous pairs, then single pages, `n` pages in all.
fn pairs_then_singles(pairs: usize, n: usize) -> Vec<u64> {
    let mut lengths = vec![2; pairs];
    lengths.resize(n - pairs, 1);
    lengths
}

/// A window's requests as (sector, sectors), and their segments.
type WindowRequests = (Vec<(u64, u64)>, Vec<u64>);

/// (sector, sectors) of each window's requests, and their segments.
fn requests(ex: &Explained) -> Vec<WindowRequests> {
    ex.trace
        .windows
        .iter()
        .zip(&ex.notes)
        .map(|(w, n)| (w.requests.iter().map(|r| (r.sector, r.sectors)).collect(), n.segments.clone()))
        .collect()
}

const START: u64 = DISK_OFFSET >> 9;

#[test]
fn ufs_requests_follow_the_measured_memory_of_order_0_folios() {
    let window_sectors = 2048;
    let w1 = START + window_sectors;
    // Window 0 with 5 contiguous pairs first, window 1 with 2: f2fs merges each pair into
    // one bio_vec; bio_split_rw() cuts each 256-page bio after 128 segments, 133 and 130
    // pages, and the remainder (REQ_NOMERGE on the front) is a request of its own.
    let mut lengths = pairs_then_singles(5, 256);
    lengths.extend(pairs_then_singles(2, 256));
    let ex = explain(&f2fs_on_ufs(1024, runs(&lengths)), &Policy::BASE, &ModelConfig::default());
    assert_eq!(ex.trace.folios().count(), 512);
    assert!(ex.trace.folios().all(|f| f.order == 0));
    assert_eq!(
        requests(&ex),
        vec![
            (vec![(START, 1064), (START + 1064, 984)], vec![128, 123]),
            (vec![(w1, 1040), (w1 + 1040, 1008)], vec![128, 126])
        ]
    );

    // Every page in a pair: 128 segments, each window one 2048-sector request.
    let ex = explain(&f2fs_on_ufs(1024, runs(&[2; 256])), &Policy::BASE, &ModelConfig::default());
    assert_eq!(requests(&ex), vec![(vec![(START, 2048)], vec![128]), (vec![(w1, 2048)], vec![128])]);

    // Nothing measured: the Scattered assumption, 128 pages a request.
    let ex = explain(&f2fs_on_ufs(1024, Vec::new()), &Policy::BASE, &ModelConfig::default());
    assert_eq!(
        requests(&ex),
        vec![
            (vec![(START, 1024), (START + 1024, 1024)], vec![128, 128]),
            (vec![(w1, 1024), (w1 + 1024, 1024)], vec![128, 128])
        ]
    );
    // Measured pages none of which touch another give the same.
    let ex_scattered = explain(&f2fs_on_ufs(1024, runs(&[1; 512])), &Policy::BASE, &ModelConfig::default());
    assert_eq!(ex_scattered.trace, ex.trace);
}

#[test]
fn long_runs_are_cut_into_max_segment_size_segments() {
    // Window 0: its first 32 pages in one run, then 7 runs of 32 (128 KiB each): 8 bio_vecs,
    // 8 segments. Window 1: 256 contiguous pages, one bio_vec of 1 MiB and four
    // segments of 256 KiB (PRDT_DATA_BYTE_COUNT_MAX).
    let mut pfns = runs(&[32; 8]);
    pfns.extend(0x100000..0x100000 + 256);
    let ex = explain(&f2fs_on_ufs(1024, pfns), &Policy::BASE, &ModelConfig::default());
    assert_eq!(requests(&ex), vec![(vec![(START, 2048)], vec![8]), (vec![(START + 2048, 2048)], vec![4])]);
}

#[test]
fn windows_of_128_pages_are_one_request_whatever_the_memory() {
    // read_ahead_kb 512, 128 KiB preads: windows ramp up to 128 pages, which never need
    // more than 128 segments: one request per window, whatever the memory.
    let mut input = f2fs_on_ufs(512, Vec::new());
    input.ops = (0..16).map(|i| Op::Read { fd: 0, offset: i * 131072, len: 131072 }).collect();
    let base = explain(&input, &Policy::BASE, &ModelConfig::default());
    let windows: Vec<(u64, u64)> =
        base.trace.windows.iter().map(|w| (w.folios.len() as u64, w.requests.len() as u64)).collect();
    assert_eq!(windows, vec![(64, 1), (128, 1), (128, 1), (128, 1), (64, 1)]);
    assert!(base.trace.windows.iter().all(|w| w.requests[0].sectors == w.folios.len() as u64 * 8));
    // Pages per segment: single pages, pairs, one 256 KiB segment of contiguous memory.
    for (pfns, per_segment) in [(runs(&[1; 512]), 1), (runs(&[2; 256]), 2), ((0x100000..0x100000 + 512).collect(), 64)]
    {
        input.folio_pfns = pfns;
        let ex = explain(&input, &Policy::BASE, &ModelConfig::default());
        assert_eq!(ex.trace, base.trace);
        let segments: Vec<Vec<u64>> = ex.notes.iter().map(|n| n.segments.clone()).collect();
        let expected: Vec<Vec<u64>> =
            ex.trace.windows.iter().map(|w| vec![w.folios.len() as u64 / per_segment]).collect();
        assert_eq!(segments, expected);
    }
}

#[test]
fn folios_past_the_measured_ones_take_the_assumption_and_the_notes_say_so() {
    // 300 folios measured, all in pairs; the model adds 512.
    let measured = runs(&[2; 150]);
    let input = f2fs_on_ufs(1024, measured.clone());
    for folio_memory in [FolioMemory::Scattered, FolioMemory::Contiguous] {
        let config = ModelConfig { folio_memory, ..Default::default() };
        let ex = explain(&input, &Policy::BASE, &config);
        // The same as measuring the assumed addresses of the rest.
        let mut full = measured.clone();
        full.extend(ex.trace.folios().enumerate().skip(300).map(|(n, f)| folio_memory.assumed_pfn(n as u64, f.index)));
        assert_eq!(ex.trace, predict_with(&f2fs_on_ufs(1024, full), &Policy::BASE, &config));
        let notes: Vec<&String> =
            ex.notes.iter().flat_map(|n| &n.steps).filter(|s| s.starts_with("folio_pfns")).collect();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("the kernel added 300 folios; this one (index 300, order 0)"), "{}", notes[0]);
        // The note is in window 1, which added the folio at 300.
        assert!(ex.notes[1].steps.contains(notes[0]));
    }
    // Window 0: pairs, one request; window 1: 22 pairs, then Scattered.
    let ex = explain(&input, &Policy::BASE, &ModelConfig::default());
    assert_eq!(requests(&ex)[0], (vec![(START, 2048)], vec![128]));
    assert_eq!(requests(&ex)[1].1, vec![128, 106]); // 22 pairs + 106 singles = 150 pages, then 106

    // More pfns than folios: noted at the end.
    let ex = explain(&f2fs_on_ufs(1024, runs(&[1; 600])), &Policy::BASE, &ModelConfig::default());
    assert_eq!(
        ex.notes.last().unwrap().steps.last().unwrap(),
        "folio_pfns: the kernel added 600 folios, the model 512"
    );
    // Notes never change the trace.
    assert_eq!(ex.trace, predict(&f2fs_on_ufs(1024, runs(&[1; 600])), &Policy::BASE));
}

/// pfns for `folios` (in the order they were added), naturally aligned, each one right
/// after the previous in memory when `adjacent(n)`, else 4 MiB further on.
fn place(folios: &[Folio], adjacent: impl Fn(usize) -> bool) -> Vec<u64> {
    let mut next = 1u64 << 20;
    folios
        .iter()
        .enumerate()
        .map(|(n, f)| {
            if !adjacent(n) {
                next += 1024;
            }
            let pfn = next.next_multiple_of(f.pages());
            next = pfn + f.pages();
            pfn
        })
        .collect()
}

#[test]
fn xfs_on_nvme_does_not_depend_on_memory() {
    // Seed 000's headline: large folios, and order-0 pages in at most 128-page
    // (512 KiB) requests, which never need more than NVMe's 129 segments.
    let mut input = seed000(512, MIB);
    let trace = predict(&input, &Policy::BASE);
    let folios: Vec<Folio> = trace.folios().copied().collect();
    for adjacent in [|_: usize| false, |n: usize| !n.is_multiple_of(3), |_: usize| true] {
        input.folio_pfns = place(&folios, adjacent);
        assert_eq!(predict(&input, &Policy::BASE), trace);
    }
}
