//! Fault-around's `->map_pages` as the tree's C: mm/filemap.c's `filemap_map_pages()`,
//! taken from the tree's file with its static helpers (`next_uptodate_folio()`,
//! `filemap_map_pmd()`, `filemap_map_folio_range()`, `filemap_map_order0_folio()`). The
//! model answers its walk of the page cache (`xas_next_entry()`), the fault's page table
//! (a copy of its 512 entries the C reads and writes, each mapping it makes told to the
//! model), the PMD (`pmd_install()`, `do_set_pmd()`) and its tracepoint; the file's
//! `mmap_miss` is lent in `f_ra` (docs/hybrid.md).

use std::ffi::{c_uint, c_ulong, c_void};

use super::{CFolio, Frame, InRust};
use crate::fault::{VmFault, VM_FAULT_FALLBACK};
use crate::model::Model;

impl Model<'_> {
    /// The C's `filemap_map_pages()` over `[start, end]` for the fault `vmf`, when the
    /// hybrid has it: what it returned.
    pub(crate) fn c_filemap_map_pages(&mut self, vmf: &mut VmFault, start: u64, end: u64) -> Option<u32> {
        let f = self.c.and_then(|c| c.filemap_map_pages)?;
        // SAFETY: the frame's objects follow the header.
        Some(self.call_on_fault("filemap_map_pages", vmf, true, |fr| unsafe { f(&mut fr.vmf, start, end) }))
    }
}

/// The fault the frame's fault-around runs for.
///
/// # Safety
/// The frame is a fault-around's ([`Model::call_on_fault`]), whose fault outlives the call.
unsafe fn fault<'f>(fr: &Frame) -> &'f mut VmFault {
    assert!(!fr.fault.is_null(), "a page table op from C that runs for no fault");
    &mut *fr.fault
}

/// `xas_next_entry()`'s lookup: the first cached folio with a page in `[index, max]`.
pub(super) unsafe extern "C" fn cb_find(ctx: *mut c_void, index: c_ulong, max: c_ulong) -> *mut CFolio {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let m = f.model();
    let found = m.cache.next_present(index, max).and_then(|at| m.cache.folio_at(at));
    found.map_or(std::ptr::null_mut(), |folio| f.lend_cached(folio))
}

/// `pte_offset_map_lock()`'s table: the model's page table holding `vpn`, copied into the frame.
pub(super) unsafe extern "C" fn cb_pte_table(ctx: *mut c_void, vpn: c_ulong) -> *mut u8 {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    f.model().page_table(fault(f), vpn, &mut f.ptes);
    f.ptes.as_mut_ptr()
}

/// `set_pte_range()`: `nr` pages mapped from virtual page `vpn`.
pub(super) unsafe extern "C" fn cb_set_ptes(ctx: *mut c_void, vpn: c_ulong, nr: c_ulong) {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    f.model().set_pte_range(fault(f), vpn, nr);
}

/// `pmd_install()`: the fault's PMD gets its page table.
pub(super) unsafe extern "C" fn cb_pmd_install(ctx: *mut c_void) {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    f.model().pmd_install(fault(f));
}

/// `do_set_pmd()`: the model's, on the cached folio the C lent.
pub(super) unsafe extern "C" fn cb_set_pmd(ctx: *mut c_void, folio: *mut CFolio) -> c_uint {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let m = f.model();
    match m.cache.folio_at((*folio).index) {
        Some(cached) if cached.index == (*folio).index => m.do_set_pmd(fault(f), cached),
        _ => VM_FAULT_FALLBACK,
    }
}

/// `trace_mm_filemap_map_pages()`.
pub(super) unsafe extern "C" fn cb_trace_map_pages(ctx: *mut c_void, start: c_ulong, end: c_ulong) {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    f.model().trace_mm_filemap_map_pages(f.fd, start, end);
}
