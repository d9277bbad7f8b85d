//! What the model assumes where the kernel's behaviour depends on things no input
//! describes: when I/O completes, and where folios sit in physical memory when the
//! guest did not measure it.
//!
//! Every assumption is a field here with the default believed to match a QEMU guest;
//! the harness can run the model under another assumption to see whether a divergence
//! is a finding or an assumption that does not hold.

use serde::{Deserialize, Serialize};

/// Assumptions of one prediction. `ModelConfig::default()` is what [`crate::predict`] uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelConfig {
    pub io_completion: IoCompletion,
    pub folio_memory: FolioMemory,
    /// Whether the guest waits for the device to go idle after each touch (it does: see
    /// [`IoCompletion`]). `Touches::Race` is a loop of loads that gives the device no time.
    pub touches: Touches,
}

/// What the guest does between two touches (see [`IoCompletion`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Touches {
    /// It waits until `/sys/block/DEV/inflight` reads 0: with `BeforeNextOp`, every read
    /// has completed before the next touch, as before the next system call. The default:
    /// radiff's guest does this.
    #[default]
    WaitIdle,
    /// Loads follow each other at once: reads a fault issued stay in flight through the
    /// touches that follow, until a fault sleeps on a folio or the next system call.
    Race,
}

/// When a read request completes, relative to what the reader does next.
///
/// Linux 7.3.4 has exactly one place in the read path where completion timing shows:
/// `filemap_get_read_batch()` stops at a folio that is not uptodate, and
/// `filemap_get_pages()` then either drops it (`-EAGAIN` when the batch holds more than
/// one folio) or waits for it (`filemap_update_page()`, then `AOP_TRUNCATED_PAGE` and a
/// new lookup from the same index). Either way the reader goes on from the same index
/// and meets the same folios in the same order, with the same `last_index`:
///
/// * a sync readahead happens exactly where the reader finds no folio, and whether a
///   folio exists does not depend on its I/O having completed (folios enter the page
///   cache before their I/O is submitted);
/// * an async readahead happens at the first folio with PG_readahead the reader reaches,
///   and `filemap_get_read_batch()` ends the batch at that folio whether or not it is
///   uptodate (its two checks, not uptodate and readahead, both stop after adding the
///   folio), so `filemap_get_pages()` sees the flag in both cases, before it looks at
///   uptodate;
/// * `req_count` is `last_index - index` (sync) or `last_index - folio->index` (async),
///   and `last_index` is the end of the read, fixed for the whole `filemap_read()`;
/// * `ra->prev_pos` changes only when `filemap_read()` returns.
///
/// So windows, folios and requests of reads do not depend on completion timing (the
/// property tests check that all three settings give the same trace for reads).
///
/// The last premise does not hold for `filemap_splice_read()`, which sets `ra->prev_pos`
/// after each folio it splices: at an async window a splice opened, `prev_pos` is where
/// the reader had got to, which depends on which reads had completed when it looked folios
/// up (a folio under I/O drops out of the batch; the kernel mixes the settings below, one
/// request completed and the next not). Only that field: the windows, folios and requests
/// are the same (the property tests check that too, and model/tests/splice_timing.rs pins
/// the difference). The guest cannot order it, so trials do not compare it there (the
/// harness's `compare_timed()`). What
/// does depend on it is `POSIX_FADV_DONTNEED`: `find_lock_entries()` skips folios it
/// cannot lock, and a folio under read I/O is locked.
///
/// The fault path (`crate::fault`) does depend on it: `next_uptodate_folio()` skips a
/// folio that is locked or not uptodate, so whether fault-around maps a page or the load
/// faults into `filemap_fault()` depends on whether its read has completed, and a fault
/// that finds its folio locked sleeps on it and then returns VM_FAULT_RETRY. Each touch is
/// one op here. A loop of loads gives the device no time, so whether the async window one
/// fault issued is still locked at a later touch is a race (it ran both ways on one
/// kernel, run to run); the guest therefore waits for the device to go idle after each
/// touch, and with `BeforeNextOp` every read has completed before the next op, touch or
/// system call. Within one fault, a fault that sleeps on a folio wakes with every read
/// issued before it complete (one reader's requests complete in order); with
/// `WhenWaited`, only the folio waited on completes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoCompletion {
    /// A request completes as soon as `blk_finish_plug()` has issued it: the reader never
    /// meets a folio under I/O.
    AtIssue,
    /// Requests stay in flight while the system call that issued them runs (the reader
    /// waits on the folios it needs, `filemap_update_page()`), and all have completed
    /// before the guest's next system call. The default: within a `pread` the reader
    /// outruns an emulated NVMe device, and the harness's next call comes after it.
    #[default]
    BeforeNextOp,
    /// A request completes only when a reader waits on one of its folios; readahead that
    /// nobody read is still in flight at a later `POSIX_FADV_DONTNEED`, which then keeps it.
    WhenWaited,
}

/// Where folios sit in physical memory, for folios whose address was not measured.
///
/// The physical address of every folio decides how many bio_vecs and segments a bio
/// needs: `bio_add_folio()` merges a folio into the previous bio_vec when it starts where
/// that one ends (`bvec_try_merge_page()`), and the split and merge code counts segments
/// of physically contiguous memory (`bio_split_io_at()`, `ll_new_hw_segment()`). The page
/// allocator decides the addresses at run time.
///
/// The guest measures them: [`crate::Input::folio_pfns`] holds the pfn of each folio the
/// kernel added, in order, and the model gives the n-th folio it adds the n-th measured
/// pfn. Measured pfns always take precedence; this assumption only places the folios the
/// model adds beyond the measured ones (all of them when `folio_pfns` is empty), and
/// `explain()` notes where that starts. To see whether a divergence is about memory
/// layout, clear `folio_pfns` and predict under each assumption.
///
/// The assumed addresses lie above 2^48, beyond any guest RAM, so they are never
/// adjacent to a measured folio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FolioMemory {
    /// No folio is physically adjacent to any other: every folio is its own bio_vec
    /// (`bvec_try_merge_page()` never merges), so a bio holds at most `BIO_MAX_VECS`
    /// (256) folios and a request at most `max_segments` of them. The n-th folio added
    /// gets pfn `SCATTERED_PFN_BASE + n * 1024`: 4 MiB apart, so folios (at most 2 MiB)
    /// never touch, and naturally aligned like the buddy allocator's blocks, so a folio
    /// never crosses `seg_boundary_mask` (4 GiB - 1).
    /// The default: large folios come from separate buddy allocations, and order-0 pages
    /// of one readahead come from per-CPU lists in no useful order.
    #[default]
    Scattered,
    /// The file's pages sit in physical memory in file order: the folio at index i gets
    /// pfn `CONTIGUOUS_PFN_BASE + i`, so folios next to each other in the file are next to
    /// each other in memory and a bio of consecutive folios is one bio_vec (split only by
    /// `max_segment_size`, and at 4 GiB boundaries). Folios stay naturally aligned. The
    /// opposite bound, for checking whether a divergence on a device with few segments is
    /// about memory layout.
    Contiguous,
}

/// First pfn [`FolioMemory::Scattered`] hands out (physical address 2^48).
pub const SCATTERED_PFN_BASE: u64 = 1 << 36;

/// The pfn [`FolioMemory::Contiguous`] gives file index 0 (physical address 2^49, 4 GiB
/// aligned).
pub const CONTIGUOUS_PFN_BASE: u64 = 1 << 37;

impl FolioMemory {
    /// The pfn this assumption gives the `n`-th folio added to the page cache (counting
    /// from 0, over the whole run), which the model adds at file `index`.
    pub fn assumed_pfn(self, n: u64, index: u64) -> u64 {
        match self {
            FolioMemory::Scattered => SCATTERED_PFN_BASE.wrapping_add(n.wrapping_mul(1024)),
            FolioMemory::Contiguous => CONTIGUOUS_PFN_BASE.wrapping_add(index),
        }
    }
}
