//! Seed 001 (mm/readahead: improve randread performance with readahead disabled): with
//! read_ahead_kb 0, 7.3.4 reads one page per `page_cache_sync_ra()`; the patch reads the
//! whole request. Checked against an independent account of which pages each read finds
//! missing (with readahead off, a page is cached exactly when an earlier read covered it).

mod common;

use std::collections::BTreeSet;

use common::*;
use radiff_model::pattern::expand;
use radiff_model::*;

fn random_reads(read_ahead_kb: u64, seed: u64) -> Input {
    let size = 512 * MIB;
    let ops = expand(
        &[Step::Random {
            fd: 0,
            count: 1500,
            size: SizeRange { min: 4096, max: 128 * 1024, align: 4096 },
            seed,
            from: 0,
            to: None,
        }],
        size,
    );
    Input {
        fs: FsKind::Xfs,
        file_size: size,
        extents: one_extent(size),
        queue: QueueLimits::nvme_qemu(read_ahead_kb, 512),
        mapping: MappingLimits::xfs(),
        ops,
        folio_pfns: Vec::new(),
        other_files: Vec::new(),
        vm: Default::default(),
    }
}

/// One read: its first page, last_index, and the runs (start, pages) it finds missing.
type ReadAccount = (u64, u64, Vec<(u64, u64)>);

/// For each read, what it finds missing.
fn missing_runs(input: &Input) -> Vec<ReadAccount> {
    let mut cached = BTreeSet::new();
    let mut out = Vec::new();
    for op in &input.ops {
        let Op::Read { offset, len, .. } = *op else { continue };
        let (first, last_index) = (offset / 4096, (offset + len).div_ceil(4096));
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for page in first..last_index {
            if cached.insert(page) {
                match runs.last_mut() {
                    Some((start, n)) if *start + *n == page => *n += 1,
                    _ => runs.push((page, 1)),
                }
            }
        }
        out.push((first, last_index, runs));
    }
    out
}

fn sector(page: u64) -> u64 {
    (DISK_OFFSET >> 9) + page * 8
}

#[test]
fn base_reads_one_page_per_sync_readahead() {
    let input = random_reads(0, 7);
    let trace = predict(&input, &Policy::BASE);
    let mut windows = trace.windows.iter();
    let mut total = 0;
    for (_, last_index, runs) in missing_runs(&input) {
        for (start, n) in runs {
            for page in start..start + n {
                let w = windows.next().expect("a window per missing page");
                // The tracepoint prints req_count before "req_count = 1;".
                assert_eq!(
                    (w.trigger, w.index, w.req_count, w.ra.ra_pages),
                    (Trigger::Sync, page, last_index - page, 0)
                );
                assert_eq!(w.submits, vec![Submit::Unbounded { index: page, nr_to_read: 1, lookahead_size: 0 }]);
                assert_eq!(w.folios, vec![Folio { index: page, order: 0 }]);
                assert_eq!(w.requests, vec![Request { sector: sector(page), sectors: 8, rwbs: "RA".into() }]);
                total += 1;
            }
        }
    }
    assert!(windows.next().is_none());
    assert!(total > 20000, "{total} pages read");
    assert!(trace.requests().all(|r| r.sectors == 8));
}

#[test]
fn the_patch_reads_each_request_whole() {
    let input = random_reads(0, 7);
    let trace = predict(&input, &policy("sync-ra-when-disabled"));
    let mut windows = trace.windows.iter();
    let mut whole = 0;
    for (first, last_index, runs) in missing_runs(&input) {
        let Some(&(start, _)) = runs.first() else { continue };
        let w = windows.next().expect("a window per read with a missing page");
        assert_eq!((w.trigger, w.index, w.req_count), (Trigger::Sync, start, last_index - start));
        assert_eq!(
            w.submits,
            vec![Submit::Unbounded { index: start, nr_to_read: last_index - start, lookahead_size: 0 }]
        );
        let requests: Vec<Request> =
            runs.iter().map(|&(p, n)| Request { sector: sector(p), sectors: n * 8, rwbs: "RA".into() }).collect();
        assert_eq!(w.requests, requests);
        if runs == [(first, last_index - first)] {
            whole += 1;
        }
    }
    assert!(windows.next().is_none());
    // Most reads find nothing of theirs cached (this file is small enough that a sixth
    // overlap an earlier read): one request the size of the read.
    assert!(whole > 1200, "{whole} whole reads");
}

#[test]
fn with_readahead_enabled_the_patch_changes_nothing() {
    let input = random_reads(128, 11);
    assert_eq!(predict(&input, &policy("sync-ra-when-disabled")), predict(&input, &Policy::BASE));
}
