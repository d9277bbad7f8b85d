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
    /// `virt_boundary_mask`: NVMe sets 4095 (PRP lists) when the controller lacks SGL
    /// support; 7.3.4's nvme_pci_get_virt_boundary() gives 0 for I/O queues of a
    /// controller with SGLs (QEMU's reports them). 0 where there is none.
    pub virt_boundary_mask: u64,
    /// `seg_boundary_mask`: a segment may not cross an address where these bits roll
    /// over. sysfs does not show it; 0 means the kernel's default `BLK_SEG_BOUNDARY_MASK`
    /// (4 GiB - 1), which is what ufshcd (no `dma_boundary` in its scsi_host_template, so
    /// scsi_host_alloc() sets 0xffffffff), nvme-pci and null_blk have. scsi_debug sets
    /// `PAGE_SIZE - 1` (4095, every page its own segment) unless loaded with
    /// `clustering=1`, which the guest can read in /sys/module/scsi_debug/parameters/clustering.
    #[serde(default)]
    pub seg_boundary_mask: u64,
    pub rotational: bool,
    pub nr_requests: u64,
    /// The active I/O scheduler: `none` (radiff's guests set it unless a scenario asks for
    /// `mq-deadline`, the kernel's default for a disk with one hardware queue). The model
    /// orders dispatch for `mq-deadline` and treats any other as `none` (see `block`).
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
    /// The page frame number of each folio the kernel added to the file's page cache, in
    /// the order it added them (from mm_filemap_add_to_page_cache). Empty when unknown:
    /// the model then assumes `ModelConfig::folio_memory`.
    ///
    /// The model gives the n-th folio it adds the n-th pfn (the folio's physical address
    /// is `pfn << 12`), and the assumption to the folios past the end of the list; see
    /// [`crate::FolioMemory`].
    #[serde(default)]
    pub folio_pfns: Vec<u64>,
    /// The memory-management settings the fault path reads.
    #[serde(default)]
    pub vm: VmSettings,
    /// The scenario's files after the first (`file_size` and `extents` are file 0's), on
    /// the same file system; file `f` is read through descriptors
    /// [`crate::pattern::fd_of`]`(f, n)`. Each has its own page cache; the device, the
    /// queue and the order in which folios take `folio_pfns` are shared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_files: Vec<FileInput>,
}

/// One more file of the scenario: its size and FIEMAP extents (sorted, covering it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInput {
    pub file_size: u64,
    pub extents: Vec<Extent>,
}

impl Input {
    /// An XFS file of `file_size` bytes in one extent at 1 GiB on the device, behind QEMU
    /// NVMe's queue (read_ahead_kb 128, max_sectors_kb 512), running `ops`: the plain case
    /// examples, benches and tests start from.
    pub fn xfs_on_nvme(file_size: u64, ops: Vec<crate::pattern::Op>) -> Input {
        Input {
            fs: FsKind::Xfs,
            file_size,
            extents: vec![Extent { logical: 0, physical: 1 << 30, length: file_size, flags: 0 }],
            queue: QueueLimits::nvme_qemu(128, 512),
            mapping: MappingLimits::xfs(),
            ops,
            folio_pfns: Vec::new(),
            other_files: Vec::new(),
            vm: VmSettings::default(),
        }
    }

    /// Number of files (at least 1).
    pub fn nr_files(&self) -> usize {
        1 + self.other_files.len()
    }

    /// File `f`'s size.
    pub fn size_of(&self, f: usize) -> u64 {
        if f == 0 {
            self.file_size
        } else {
            self.other_files[f - 1].file_size
        }
    }

    /// File `f`'s extents.
    pub fn extents_of(&self, f: usize) -> &[Extent] {
        if f == 0 {
            &self.extents
        } else {
            &self.other_files[f - 1].extents
        }
    }
}

/// Settings of the guest's memory management that the page-fault path reads, as the
/// guest set them (scenario `vm:`) or found them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmSettings {
    /// `/sys/kernel/debug/fault_around_bytes` (mm/memory.c `fault_around_pages` << PAGE_SHIFT).
    pub fault_around_bytes: u64,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`. Linux 7.3.4 reads it nowhere on the
    /// fault path of a regular file (see `crate::fault`); kept so a trace can say what it was.
    pub thp_enabled: ThpMode,
    /// The address each `Op::Mmap` returned, in the order of the ops (the guest measures
    /// them). The virtual address decides which page table a page is in (fault-around
    /// never crosses one, `finish_fault()` and `filemap_map_folio_range()` map a large
    /// folio only inside one) and whether a PMD can map a folio. Empty or short: the model
    /// assumes what `thp_get_unmapped_area()` gives a mapping that spans an aligned 2 MiB
    /// of the file, an address congruent to the file offset modulo 2 MiB (see
    /// `crate::fault`).
    #[serde(default)]
    pub mmap_addrs: Vec<u64>,
    /// The block requests a program's load found in flight as it faulted, by the index of
    /// its `Op::Touch` in `ops` (only loads that found some: the guest records faults and
    /// requests on one clock). The model puts their folios back in flight before the
    /// fault (see `crate::fault`, `reads_in_flight_at_load`). Empty for radiff's own
    /// touches, which wait for the device to go idle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads_in_flight: Vec<LoadInFlight>,
    /// What each RWF_NOWAIT read returned in the guest, by the index of its
    /// `Op::ReadWith` in `ops`: whether the folios its own readahead had just submitted
    /// were still locked when the read looked them up is the device's doing, and the
    /// bytes it returned say where it stopped (see `crate::filemap`, `filemap_update_page`).
    /// Empty without a run (the model then takes every such folio as still locked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nowait_returned: Vec<NowaitReturned>,
}

/// What the RWF_NOWAIT read `ops[op]` returned: `bytes` read (0 for -EAGAIN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NowaitReturned {
    pub op: usize,
    pub bytes: u64,
}

/// The block requests in flight when the load of `ops[op]` (an `Op::Touch`) faulted:
/// `(first sector, sectors)` each; `completed_after` are those of them that completed
/// before the faulting task's next traced event (perhaps while the fault still ran).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadInFlight {
    pub op: usize,
    pub requests: Vec<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed_after: Vec<(u64, u64)>,
}

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThpMode {
    Always,
    Madvise,
    Never,
}

impl Default for VmSettings {
    /// Linux 7.3.4's defaults in radiff's kernels: mm/memory.c "fault_around_pages
    /// __read_mostly = 65536 >> PAGE_SHIFT", and CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS=y
    /// (kernels/config.fragment).
    fn default() -> Self {
        VmSettings {
            fault_around_bytes: 65536,
            thp_enabled: ThpMode::Always,
            mmap_addrs: Vec::new(),
            loads_in_flight: Vec::new(),
            nowait_returned: Vec::new(),
        }
    }
}

/// `MAX_PAGECACHE_ORDER` on x86_64 with CONFIG_TRANSPARENT_HUGEPAGE (include/linux/pagemap.h,
/// Linux 7.3.4): "min(MAX_XAS_ORDER, PREFERRED_MAX_PAGECACHE_ORDER)", MAX_XAS_ORDER being
/// XA_CHUNK_SHIFT * 2 - 1 = 11 and PREFERRED_MAX_PAGECACHE_ORDER HPAGE_PMD_ORDER = 9.
pub const MAX_PAGECACHE_ORDER: u32 = 9;

impl MappingLimits {
    /// XFS, Linux 7.3.4, 4 KiB blocks: xfs_inode_alloc() calls
    /// "mapping_set_folio_min_order(VFS_I(ip)->i_mapping, M_IGEO(mp)->min_folio_order)",
    /// which is `mapping_set_folio_order_range(mapping, min, MAX_PAGECACHE_ORDER)`, with
    /// min_folio_order 0 when the block size is at most the page size.
    pub fn xfs() -> Self {
        MappingLimits { large_folios: true, min_order: 0, max_order: MAX_PAGECACHE_ORDER }
    }

    /// ext4, Linux 7.3.4, 4 KiB blocks, data=ordered, no `encrypt` feature:
    /// ext4_set_inode_mapping_order() sets `[s_min_folio_order, s_max_folio_order]` on
    /// regular files, where s_min_folio_order = get_order(blocksize) = 0 and
    /// ext4_set_max_mapping_order() gives "EXT4_MAX_PAGECACHE_ORDER(sb)" =
    /// umin(MAX_PAGECACHE_ORDER, 11 + s_blocksize_bits - PAGE_SHIFT) = 9. With
    /// data=journal (mount or inode flag) max = min = 0, and with the encrypt feature
    /// ext4_check_large_folio() leaves s_max_folio_order 0: use [`MappingLimits::order0`].
    pub fn ext4() -> Self {
        MappingLimits { large_folios: true, min_order: 0, max_order: MAX_PAGECACHE_ORDER.min(11) }
    }

    /// f2fs, Linux 7.3.4: f2fs_iget() enables large folios
    /// ("mapping_set_folio_min_order(inode->i_mapping, 0)") only for immutable,
    /// uncompressed, non-quota regular files; radiff's files are ordinary, and the real
    /// kernel was measured to add only order-0 folios for them.
    pub fn f2fs() -> Self {
        Self::order0()
    }

    /// A mapping without large folio support (`mapping_large_folio_support()` false).
    pub fn order0() -> Self {
        MappingLimits { large_folios: false, min_order: 0, max_order: 0 }
    }

    /// The limits radiff's kernels give a regular file on `fs` (formatted with defaults).
    pub fn for_fs(fs: FsKind) -> Self {
        match fs {
            FsKind::Xfs => Self::xfs(),
            FsKind::Ext4 => Self::ext4(),
            FsKind::F2fs => Self::f2fs(),
        }
    }
}

impl MappingLimits {
    /// The limits of a regular file on `fs` made with blocks of `block_size` bytes
    /// (`None`: the default, 4 KiB). XFS, Linux 7.3.4 xfs_ialloc_setup_geometry():
    /// "if (mp->m_sb.sb_blocksize > PAGE_SIZE) igeo->min_folio_order =
    /// mp->m_sb.sb_blocklog - PAGE_SHIFT;", which xfs_inode_alloc() sets on the mapping with
    /// mapping_set_folio_min_order() (the range up to MAX_PAGECACHE_ORDER). The harness
    /// refuses a block size on ext4 and f2fs.
    pub fn for_fs_block(fs: FsKind, block_size: Option<u64>) -> Self {
        let mut limits = Self::for_fs(fs);
        if let Some(b) = block_size.filter(|&b| fs == FsKind::Xfs && b > 4096) {
            limits.min_order = b.trailing_zeros() - 12;
        }
        limits
    }
}

impl QueueLimits {
    /// Limits of the kind the QEMU NVMe disk (mdts 7: 512 KiB transfers) shows, with the
    /// given `read_ahead_kb` and `max_sectors_kb`: for examples and tests; the harness
    /// passes what the guest measured.
    pub fn nvme_qemu(read_ahead_kb: u64, max_sectors_kb: u64) -> Self {
        QueueLimits {
            read_ahead_kb,
            max_sectors_kb,
            max_hw_sectors_kb: 512,
            // nvme_max_drv_segments(): max_hw_sectors / 8 + 1.
            max_segments: 129,
            max_segment_size: 4294967295,
            logical_block_size: 512,
            physical_block_size: 512,
            optimal_io_size: 0,
            minimum_io_size: 512,
            // QEMU's controller reports SGL support (NVME_CTRL_SGLS_BYTE_ALIGNED), so
            // nvme_pci_get_virt_boundary() returns 0.
            virt_boundary_mask: 0,
            seg_boundary_mask: 0,
            rotational: false,
            nr_requests: 1023,
            scheduler: "none".into(),
        }
    }

    /// The QEMU UFS logical unit as the guest showed it: 4 KiB logical blocks, 1 MiB
    /// transfers, SG_ALL (128) segments of at most PRDT_DATA_BYTE_COUNT_MAX (256 KiB),
    /// rotational; for examples and tests, like [`QueueLimits::nvme_qemu`].
    pub fn ufs_qemu(read_ahead_kb: u64) -> Self {
        QueueLimits {
            read_ahead_kb,
            max_sectors_kb: 1024,
            max_hw_sectors_kb: 1024,
            max_segments: 128,
            max_segment_size: 262144,
            logical_block_size: 4096,
            physical_block_size: 4096,
            optimal_io_size: 0,
            minimum_io_size: 4096,
            virt_boundary_mask: 0,
            seg_boundary_mask: 0,
            rotational: true,
            nr_requests: 64,
            scheduler: "none".into(),
        }
    }
}
