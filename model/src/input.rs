//! What the model is given: the file, its extents, the queue, the mapping and the reads.
//!
//! Plain values: the harness fills them from the scenario and from what the guest
//! measured (`radiff::guest` reports the queue limits and the file's extents), and
//! the model never reads anything else.

use serde::{Deserialize, Serialize};

use crate::pattern::Op;

/// The file systems radiff formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    Xfs,
    Ext4,
    F2fs,
}

impl FsKind {
    pub fn name(self) -> &'static str {
        match self {
            FsKind::Xfs => "xfs",
            FsKind::Ext4 => "ext4",
            FsKind::F2fs => "f2fs",
        }
    }
}

/// The request queue's limits as the guest read them from `/sys/block/DEV/queue/`
/// after applying the scenario's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueLimits {
    pub read_ahead_kb: u64,
    pub max_sectors_kb: u64,
    pub max_hw_sectors_kb: u64,
    pub max_segments: u64,
    pub max_segment_size: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub optimal_io_size: u64,
    pub minimum_io_size: u64,
    /// `virt_boundary_mask`: NVMe sets 4095 (PRP lists), 0 where there is none.
    pub virt_boundary_mask: u64,
    pub rotational: bool,
    pub nr_requests: u64,
    /// The active I/O scheduler, `none` on radiff's kernels.
    pub scheduler: String,
}

/// One extent of the file as FIEMAP reports it, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Extent {
    /// Offset in the file.
    pub logical: u64,
    /// Offset on the device (the whole disk: radiff does not partition).
    pub physical: u64,
    pub length: u64,
    /// `fe_flags` (FIEMAP_EXTENT_*); unwritten (0x800) extents read as zeroes without I/O.
    pub flags: u32,
}

/// The address_space's folio limits (`mapping_min_folio_order`, `mapping_max_folio_order`);
/// `large_folios` is `mapping_large_folio_support()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingLimits {
    pub large_folios: bool,
    pub min_order: u32,
    pub max_order: u32,
}

/// Everything one prediction depends on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub fs: FsKind,
    /// i_size in bytes.
    pub file_size: u64,
    /// Sorted by `logical`, covering the file.
    pub extents: Vec<Extent>,
    pub queue: QueueLimits,
    pub mapping: MappingLimits,
    /// The reads and hints in the order the guest issued them.
    pub ops: Vec<Op>,
}
