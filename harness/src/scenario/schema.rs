//! The scenario file's schema, as serde reads it: every key a YAML file may hold, before
//! any check. `parse` turns these into a checked [`super::Scenario`].

use radiff_model::{Advice, FsKind, MadvAdvice, ThpMode};
use serde::Deserialize;

use super::size::{Size, SizeOrRange};
use crate::wire::{DeviceKind, Scheduler};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioFile {
    pub(super) description: String,
    pub(super) device: DeviceFile,
    pub(super) filesystem: FsKind,
    #[serde(default)]
    pub(super) mkfs: MkfsFile,
    pub(super) file: Option<OneFile>,
    pub(super) files: Option<Vec<ListedFile>>,
    #[serde(default)]
    pub(super) queue: QueueFile,
    pub(super) reads: Vec<StepFile>,
    pub(super) variants: Option<Vec<String>>,
    #[serde(default)]
    pub(super) matrix: MatrixFile,
    #[serde(default)]
    pub(super) vm: VmFile,
    pub(super) known_divergence: Option<String>,
    pub(super) model_refuses: Option<String>,
    pub(super) trace_buffer_kb: Option<u64>,
    pub(super) timeout_s: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeviceFile {
    pub(super) kind: DeviceKind,
    pub(super) size: Size,
    pub(super) transfer_limit: Option<Size>,
    pub(super) optimal_io_size: Option<Size>,
    pub(super) logical_block_size: Option<Size>,
    pub(super) iops_limit: Option<u64>,
}

/// `file:`: the one file of a scenario that reads one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OneFile {
    pub(super) size: Size,
    pub(super) write_size: Option<Size>,
    pub(super) extent_size: Option<Size>,
}

/// An item of `files:`: one of several files, named so that steps can say which they read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListedFile {
    pub(super) name: String,
    pub(super) size: Size,
    pub(super) write_size: Option<Size>,
    pub(super) extent_size: Option<Size>,
}

/// `mkfs:`: how the file system is made (default: mkfs's own choices).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct MkfsFile {
    pub(super) block_size: Option<Size>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct QueueFile {
    pub(super) read_ahead_kb: Option<u64>,
    pub(super) max_sectors_kb: Option<u64>,
    pub(super) rotational: Option<bool>,
    pub(super) scheduler: Option<Scheduler>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct VmFile {
    pub(super) fault_around_bytes: Option<Size>,
    pub(super) thp_enabled: Option<ThpMode>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct MatrixFile {
    pub(super) read_ahead_kb: Option<Vec<u64>>,
    pub(super) max_sectors_kb: Option<Vec<u64>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum StepFile {
    Read {
        offset: Size,
        size: Size,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
        /// preadv2(2)'s RWF_ flags (default none: pread(2)).
        #[serde(default)]
        flags: Vec<RwfFlag>,
        /// Through an O_DIRECT descriptor of the file.
        #[serde(default)]
        direct: bool,
    },
    Sequential {
        #[serde(default = "zero")]
        from: Size,
        size: Size,
        to: Option<Size>,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
        #[serde(default)]
        flags: Vec<RwfFlag>,
        #[serde(default)]
        direct: bool,
    },
    Random {
        count: u64,
        size: SizeOrRange,
        #[serde(default)]
        seed: u64,
        align: Option<Size>,
        #[serde(default = "zero")]
        from: Size,
        to: Option<Size>,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Interleaved(StreamsFile),
    /// The streams of `interleaved:`, each read by a thread of its own, all at once.
    Threads(StreamsFile),
    Fadvise {
        advice: Advice,
        #[serde(default = "zero")]
        offset: Size,
        #[serde(default = "zero")]
        len: Size,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Readahead {
        offset: Size,
        size: Size,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Mmap {
        #[serde(default)]
        map: u32,
        #[serde(default = "zero")]
        offset: Size,
        size: Option<Size>,
        #[serde(default = "yes")]
        shared: bool,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
        /// PROT_EXEC as well as PROT_READ (VM_EXEC).
        #[serde(default)]
        exec: bool,
        /// MAP_POPULATE.
        #[serde(default)]
        populate: bool,
    },
    Madvise {
        #[serde(default)]
        map: u32,
        advice: MadvAdvice,
        offset: Option<Size>,
        size: Option<Size>,
    },
    Touch {
        map: Option<u32>,
        maps: Option<Vec<u32>>,
        order: Option<OrderName>,
        stride: Option<Size>,
        count: Option<u64>,
        seed: Option<u64>,
        pages: Option<Vec<u64>>,
        from: Option<Size>,
        to: Option<Size>,
    },
    Munmap {
        #[serde(default)]
        map: u32,
    },
    Splice {
        #[serde(default = "zero")]
        offset: Size,
        size: Option<Size>,
        pipe: Option<Size>,
        via: Option<SpliceVia>,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    /// Arms fail_page_alloc for the steps after it (see `steps::fail_alloc`).
    FailAlloc {
        times: u32,
        min_order: Option<u32>,
    },
    /// Runs a program in the guest; `{file}` / `{file:NAME}` in `argv` are the file's path.
    Program {
        argv: Vec<String>,
    },
    /// Runs a fio job file (`scenarios/jobs/NAME.fio`) on the scenario's file (`file:` of
    /// several).
    Fio {
        job: String,
        file: Option<String>,
    },
}

/// A `flags:` item of `read:` and `sequential:`: a preadv2(2) flag.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum RwfFlag {
    /// RWF_NOWAIT.
    Nowait,
    /// RWF_DONTCACHE.
    Dontcache,
}

/// `splice`'s `via:`: the system call that moves the file into the pipe.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum SpliceVia {
    Splice,
    Sendfile,
}

/// `touch`'s `order:` (`pages: [...]` is its own order, written without `order:`).
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum OrderName {
    Sequential,
    Backward,
    Stride,
    Random,
}

fn zero() -> Size {
    Size(0)
}

fn yes() -> bool {
    true
}

/// The streams of an `interleaved:` or a `threads:` step.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StreamsFile {
    pub(super) streams: Option<u32>,
    pub(super) size: Size,
    pub(super) starts: Option<Vec<Size>>,
    pub(super) to: Option<Size>,
    #[serde(default)]
    pub(super) separate_fds: bool,
    pub(super) file: Option<String>,
    pub(super) files: Option<Vec<String>>,
}
