//! Inputs shared by the integration tests.
#![allow(dead_code, reason = "each test binary uses its own part of these inputs")]

use radiff_model::pattern::expand;
use radiff_model::*;

pub const MIB: u64 = 1 << 20;

/// Where the test files start on the disk (any 4 KiB-aligned offset would do).
pub const DISK_OFFSET: u64 = 1 << 30;

/// A file in one extent.
pub fn one_extent(size: u64) -> Vec<Extent> {
    vec![Extent { logical: 0, physical: DISK_OFFSET, length: size, flags: 0 }]
}

/// A file in two extents that break at `at` bytes, the second 64 MiB further on the disk.
pub fn two_extents(size: u64, at: u64) -> Vec<Extent> {
    vec![
        Extent { logical: 0, physical: DISK_OFFSET, length: at, flags: 0 },
        Extent { logical: at, physical: DISK_OFFSET + at + 64 * MIB, length: size - at, flags: 0 },
    ]
}

/// Seed 000's headline access: a 4 KiB pread at 0, then `read` byte preads from 4096 to EOF.
pub fn seed000_ops(size: u64, read: u64) -> Vec<Op> {
    expand(
        &[Step::Read { fd: 0, offset: 0, size: 4096 }, Step::Sequential { fd: 0, from: 4096, size: read, to: None }],
        size,
    )
}

/// Seed 000's rig: XFS on the QEMU NVMe disk, read_ahead_kb 128, a 512 MiB file.
pub fn seed000(max_sectors_kb: u64, read: u64) -> Input {
    let size = 512 * MIB;
    let mut queue = QueueLimits::nvme_qemu(128, max_sectors_kb);
    if max_sectors_kb > 512 {
        // nvme mdts=9: 2 MiB transfers; nvme_max_drv_segments() = 4096 / 8 + 1, capped by
        // NVME_MAX_SEGS = 256.
        queue.max_hw_sectors_kb = 2048;
        queue.max_segments = 256;
    }
    Input {
        fs: FsKind::Xfs,
        file_size: size,
        extents: one_extent(size),
        queue,
        mapping: MappingLimits::xfs(),
        ops: seed000_ops(size, read),
        folio_pfns: Vec::new(),
        vm: Default::default(),
        other_files: Vec::new(),
    }
}

/// The QEMU UFS logical unit as the rig showed it.
pub fn ufs(read_ahead_kb: u64) -> QueueLimits {
    QueueLimits::ufs_qemu(read_ahead_kb)
}

pub fn policy(variant: &str) -> Policy {
    Policy::for_variant(variant).unwrap()
}

pub fn order_submits(trace: &Trace) -> Vec<(u64, u64, u64, u32)> {
    trace
        .windows
        .iter()
        .flat_map(|w| &w.submits)
        .filter_map(|s| match *s {
            Submit::Order { index, size, async_size, order } => Some((index, size, async_size, order)),
            Submit::Unbounded { .. } => None,
        })
        .collect()
}

pub fn readahead_requests(trace: &Trace) -> usize {
    trace.requests().filter(|r| r.rwbs == "RA").count()
}

/// Folios added per order, padded to `n` orders.
pub fn orders(trace: &Trace, n: usize) -> Vec<u64> {
    let mut o = trace.folio_orders();
    o.resize(n.max(o.len()), 0);
    o
}
