//! radiff's model of Linux readahead: predicts, for a scenario's reads on a file, the
//! trace the kernel produces (windows, folios and their orders, device requests).
//!
//! Pure and deterministic: no files, processes, environment or clocks. Follows
//! Linux 7.3.4; each ported function keeps its kernel name and its doc comment names the
//! kernel file it comes from:
//!
//! | module | kernel |
//! |---|---|
//! | [`readahead`] | mm/readahead.c: `file_ra_state`, sync/async readahead, `page_cache_ra_order()`, `page_cache_ra_unbounded()`, `readahead_expand()` |
//! | [`filemap`] | mm/filemap.c: `filemap_read()` → `filemap_get_pages()`, `page_cache_next_miss()`/`prev_miss()` |
//! | [`fadvise`] | mm/fadvise.c: `generic_fadvise()` |
//! | [`fail_page_alloc`](mod@fail_page_alloc) | mm/fail_page_alloc.c as the guest arms it (`Op::FailAlloc`): which folio allocation fails |
//! | [`fault`] | the page-fault path: mm/filemap.c `filemap_fault()`, `do_sync_mmap_readahead()`, `do_async_mmap_readahead()`, `filemap_map_pages()`; mm/memory.c `do_read_fault()`, `do_fault_around()`, `finish_fault()`; arch/x86/mm/fault.c's retry; mm/madvise.c |
//! | [`gup`] | mm/gup.c and mm/madvise.c: MAP_POPULATE and MADV_POPULATE_READ, read faults taken by `__get_user_pages()` |
//! | [`coverage`](mod@coverage) | the decisions of the functions above, as branch ids, for branch coverage |
//! | [`fs`] | fs/iomap (XFS), fs/ext4/readpage.c, fs/f2fs/data.c: folios to bios |
//! | [`block`] | block/blk-merge.c, blk-mq.c: bio splitting, plug merging, issue order |
//! | [`pagecache`] | the page cache the model keeps (the xarray of folios) |
//! | [`xarray`] | lib/xarray.c: the `xas_next()`/`xas_prev()` walk of `page_cache_next_miss()`/`prev_miss()` |
//! | [`config`] | assumptions about timing and memory the inputs cannot give |
//!
//! The variants of [`Policy`] switch the lines the seed patches change: seed 000 v1 in
//! `page_cache_async_ra()`, seed 000 v2 in `page_cache_ra_order()`, seed 001 in
//! `page_cache_sync_ra()`, seed 003 in `f2fs_mpage_readpages()`.
//!
//! What the model assumes besides [`ModelConfig`]: 4 KiB pages and file system blocks;
//! every folio allocation succeeds at any order unless an `Op::FailAlloc` armed fail_page_alloc
//! (see [`fail_page_alloc`](mod@fail_page_alloc)), and nothing is reclaimed; the file has no
//! inline data and no compression, encryption or verity; blk-mq with `none` or
//! `mq-deadline` and no merging beyond the plug (see `block`), no `chunk_sectors`, `nomerges` 0, enough tags;
//! the guest's only I/O on the device is the scenario's (metadata reads, `RM`, are not
//! predicted). On the fault path ([`fault`]): the mappings' virtual addresses as measured
//! (else congruent to the file offset modulo 2 MiB), reads in flight across the loads that
//! follow the fault that issued them (see [`IoCompletion`]), no reclaim (no `workingset`
//! folio), and nothing else faulting or holding locks.
//!
//! ```
//! use radiff_model::*;
//! let input = Input {
//!     fs: FsKind::Xfs,
//!     file_size: 1 << 20,
//!     extents: vec![Extent { logical: 0, physical: 1 << 30, length: 1 << 20, flags: 0 }],
//!     queue: QueueLimits::nvme_qemu(128, 512),
//!     mapping: MappingLimits::xfs(),
//!     ops: vec![Op::Read { fd: 0, offset: 0, len: 4096 }],
//!     folio_pfns: Vec::new(), // not measured: FolioMemory::Scattered
//!     vm: VmSettings::default(),
//!     other_files: Vec::new(),
//! };
//! let trace = predict(&input, &Policy::BASE);
//! assert_eq!(trace.windows[0].trigger, Trigger::Sync);
//! assert_eq!(trace.windows[0].folios.len(), 4); // get_init_ra_size(1, 32) = 4 pages
//!
//! // What the model decided, for debugging a divergence:
//! let ex = explain(&input, &Policy::BASE, &ModelConfig::default());
//! assert!(ex.notes[0].steps[0].starts_with("sync: initial window"));
//! ```

pub mod block;
pub mod collapse;
pub mod config;
pub mod coverage;
pub mod decide;
pub mod direct;
pub mod fadvise;
pub mod fail_page_alloc;
pub mod fault;
pub mod filemap;
pub mod fs;
pub mod gup;
pub mod hybrid;
pub mod input;
pub mod model;
mod op_requests;
pub mod pagecache;
pub mod pattern;
pub mod readahead;
pub mod sb;
pub mod splice;
pub mod trace;
pub mod variant;
pub mod xarray;

pub use config::{FolioMemory, IoCompletion, ModelConfig, Touches};
pub use coverage::{Branch, Coverage, BRANCHES};
pub use decide::{decide, Decided, Decision};
pub use hybrid::CReadahead;
pub use input::{
    Extent, FileInput, FsKind, Input, LoadInFlight, MappingLimits, NowaitReturned, QueueLimits, ThpMode, VmSettings,
};
pub use model::{Explained, Simulation, WindowNote};
pub use pattern::{Advice, MadvAdvice, Op, ReadHow, SizeRange, Step, TouchOrder};
pub use trace::{Folio, RaState, Request, ScanResult, Submit, Trace, Trigger, Window};
pub use variant::{AsyncAlign, Policy};

/// The trace Linux 7.3.4 with the variant `policy` produces for `input`, under the
/// default assumptions ([`ModelConfig::default()`]).
pub fn predict(input: &Input, policy: &Policy) -> Trace {
    predict_with(input, policy, &ModelConfig::default())
}

/// [`predict`] under explicit assumptions.
pub fn predict_with(input: &Input, policy: &Policy, config: &ModelConfig) -> Trace {
    let mut m = model::Model::new(input, *policy, *config, false);
    m.run();
    Trace { windows: m.rec.windows }
}

/// [`predict_with`], plus the model's notes on every window (the system call that opened
/// it, `file_ra_state` after the call, and each decision with its values), for debugging
/// a divergence from the kernel.
pub fn explain(input: &Input, policy: &Policy, config: &ModelConfig) -> Explained {
    Simulation::new(input, policy, config).finish()
}

/// [`predict`], plus the branches of the ported kernel functions the prediction took
/// (see [`coverage`](mod@coverage)); the trace is the one [`predict`] gives.
pub fn coverage(input: &Input, policy: &Policy) -> (Trace, Coverage) {
    coverage_with(input, policy, &ModelConfig::default())
}

/// [`coverage()`] under explicit assumptions.
pub fn coverage_with(input: &Input, policy: &Policy, config: &ModelConfig) -> (Trace, Coverage) {
    let mut m = model::Model::new(input, *policy, *config, false);
    m.rec.coverage = Some(Coverage::default());
    m.run();
    (Trace { windows: m.rec.windows }, m.rec.coverage.unwrap_or_default())
}

/// [`predict_hybrid`], plus the branches of the Rust model the prediction took (those of
/// the functions that ran as C are not recorded), and the trace up to a crash of the C.
pub fn coverage_hybrid(
    input: &Input,
    policy: &Policy,
    config: &ModelConfig,
    c: &CReadahead,
) -> (Trace, Coverage, Option<hybrid::Crash>) {
    let mut m = model::Model::new(input, *policy, *config, false);
    m.c = Some(c);
    m.rec.coverage = Some(Coverage::default());
    m.run();
    (Trace { windows: m.rec.windows }, m.rec.coverage.unwrap_or_default(), m.crash)
}

/// [`predict_with`] by the hybrid model: the kernel functions `c` has (a tree's own
/// mm/readahead.c, compiled and loaded by the harness) run as that C in place of their
/// Rust port; everything else is the Rust model (see [`hybrid`]). A C function that
/// crashed (where the table has a guard) is an error saying which and how; the run stops
/// at that system call.
pub fn predict_hybrid(
    input: &Input,
    policy: &Policy,
    config: &ModelConfig,
    c: &CReadahead,
) -> Result<Trace, hybrid::Crash> {
    let mut m = model::Model::new(input, *policy, *config, false);
    m.c = Some(c);
    m.run();
    match m.crash {
        Some(crash) => Err(crash),
        None => Ok(Trace { windows: m.rec.windows }),
    }
}
