//! Several files in one scenario: each has its own page cache, extents and i_size; the
//! device is shared. Two files read in alternation must each see what it sees alone.

mod common;

use common::*;
use radiff_model::pattern::{expand_files, fd_of, FDS_PER_FILE};
use radiff_model::*;

const KIB: u64 = 1 << 10;

fn input(files: &[(u64, Vec<Extent>)], steps: &[Step], ra_kb: u64) -> Input {
    let sizes: Vec<u64> = files.iter().map(|f| f.0).collect();
    Input {
        fs: FsKind::Xfs,
        file_size: files[0].0,
        extents: files[0].1.clone(),
        queue: QueueLimits::nvme_qemu(ra_kb, 512),
        mapping: MappingLimits::xfs(),
        ops: expand_files(steps, &sizes),
        folio_pfns: Vec::new(),
        vm: Default::default(),
        other_files: files[1..]
            .iter()
            .map(|(size, extents)| FileInput { file_size: *size, extents: extents.clone() })
            .collect(),
    }
}

/// The windows of file `f` in `trace`, renumbered as file 0.
fn windows_of(trace: &Trace, f: u32) -> Vec<Window> {
    trace.windows.iter().filter(|w| w.file == f).map(|w| Window { file: 0, ..w.clone() }).collect()
}

#[test]
fn two_files_read_in_alternation_each_read_as_alone() {
    let (a_size, b_size) = (8 * MIB, 6 * MIB);
    let a_extents = one_extent(a_size);
    // File b elsewhere on the disk, in two extents.
    let b_extents: Vec<Extent> =
        two_extents(b_size, 2 * MIB).into_iter().map(|e| Extent { physical: e.physical + 256 * MIB, ..e }).collect();
    let (a, b) = (fd_of(0, 0), fd_of(1, 0));
    let both = input(
        &[(a_size, a_extents.clone()), (b_size, b_extents.clone())],
        &[
            Step::Read { fd: a, offset: 0, size: 4 * KIB },
            Step::Read { fd: b, offset: 0, size: 4 * KIB },
            Step::Interleaved { fds: vec![a, b], size: 128 * KIB, starts: vec![4 * KIB, 4 * KIB], to: None },
        ],
        128,
    );
    let alone_a = input(
        &[(a_size, a_extents)],
        &[
            Step::Read { fd: 0, offset: 0, size: 4 * KIB },
            Step::Sequential { fd: 0, from: 4 * KIB, size: 128 * KIB, to: None },
        ],
        128,
    );
    let alone_b = input(
        &[(b_size, b_extents)],
        &[
            Step::Read { fd: 0, offset: 0, size: 4 * KIB },
            Step::Sequential { fd: 0, from: 4 * KIB, size: 128 * KIB, to: None },
        ],
        128,
    );
    let policy = Policy::for_variant("base").unwrap();
    let trace = predict(&both, &policy);
    assert!(trace.windows.iter().any(|w| w.file == 1), "file b's windows are marked as file 1");
    assert_eq!(windows_of(&trace, 0), predict(&alone_a, &policy).windows, "file a");
    assert_eq!(windows_of(&trace, 1), predict(&alone_b, &policy).windows, "file b");
    // The two files take turns: the window list alternates once both are streaming.
    let files: Vec<u32> = trace.windows.iter().map(|w| w.file).collect();
    assert!(files.windows(2).filter(|p| p[0] != p[1]).count() > 10, "{files:?}");
}

#[test]
fn a_second_file_has_its_own_page_cache() {
    // The same range of two files: the second read must miss (its own sync window) even
    // though file 0 has the range cached.
    let size = 4 * MIB;
    let b = fd_of(1, 0);
    let inp = input(
        &[
            (size, one_extent(size)),
            (size, one_extent(size).into_iter().map(|e| Extent { physical: e.physical + 64 * MIB, ..e }).collect()),
        ],
        &[Step::Read { fd: 0, offset: 0, size: 64 * KIB }, Step::Read { fd: b, offset: 0, size: 64 * KIB }],
        128,
    );
    let trace = predict(&inp, &Policy::for_variant("base").unwrap());
    let syncs: Vec<(u32, u64)> =
        trace.windows.iter().filter(|w| w.trigger == Trigger::Sync).map(|w| (w.file, w.index)).collect();
    assert_eq!(syncs, vec![(0, 0), (1, 0)]);
    let sectors: Vec<u64> =
        trace.windows.iter().filter(|w| w.file == 1).flat_map(|w| w.requests.iter().map(|r| r.sector)).collect();
    assert!(
        sectors.iter().all(|&s| s * 512 >= DISK_OFFSET + 64 * MIB),
        "file b's reads go to its own extents: {sectors:?}"
    );
    assert_eq!(FDS_PER_FILE, b);
}
