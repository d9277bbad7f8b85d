//! The model's answers to the C: `struct radiff_ops`, the table of calls radiff's header
//! makes into the model (model/c/radiff_kernel.h), and the callbacks behind its page
//! cache, folio flags, readahead batch and tracepoints; the file systems', fadvise's and the
//! fault path's are in their own modules.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};

use super::*;

/// `struct radiff_ops`, in the header's order.
#[repr(C)]
pub struct COps {
    pub(super) alloc_folio: unsafe extern "C" fn(*mut c_void, c_uint) -> *mut CFolio,
    pub(super) add_folio: unsafe extern "C" fn(*mut c_void, *mut CFolio, c_ulong) -> c_int,
    pub(super) load: unsafe extern "C" fn(*mut c_void, c_ulong) -> *mut CFolio,
    pub(super) next_miss: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong) -> c_ulong,
    pub(super) prev_miss: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong) -> c_ulong,
    pub(super) folio_flag: unsafe extern "C" fn(*mut c_void, *mut CFolio, c_ulong, c_int),
    pub(super) remove_folio: unsafe extern "C" fn(*mut c_void, *mut CFolio),
    pub(super) readahead: unsafe extern "C" fn(*mut c_void, *mut CReadaheadControl),
    pub(super) trace_sync_ra: unsafe extern "C" fn(*mut c_void, c_ulong, *mut CFileRaState, c_ulong),
    pub(super) trace_async_ra: unsafe extern "C" fn(*mut c_void, c_ulong, *mut CFileRaState, c_ulong),
    pub(super) trace_ra_unbounded: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong, c_ulong),
    pub(super) trace_ra_order: unsafe extern "C" fn(*mut c_void, c_ulong, *mut CFileRaState),
    pub(super) bug: unsafe extern "C" fn(*mut c_void, *const c_char, c_int),
    pub(super) invalidate: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong, *mut c_ulong) -> c_ulong,
    pub(super) plug: unsafe extern "C" fn(*mut c_void, c_int),
    pub(super) map_blocks: unsafe extern "C" fn(*mut c_void, c_ulong, c_uint, *mut std::ffi::c_ulonglong) -> c_uint,
    pub(super) bio_alloc: unsafe extern "C" fn(*mut c_void, std::ffi::c_ulonglong, c_uint, c_int) -> *mut CBio,
    pub(super) bio_add_folio: unsafe extern "C" fn(*mut c_void, *mut CBio, *mut CFolio, usize, usize) -> c_int,
    pub(super) submit_bio: unsafe extern "C" fn(*mut c_void, *mut CBio),
    pub(super) read_full_folio: unsafe extern "C" fn(*mut c_void, *mut CFolio),
    pub(super) fault_around_pages: unsafe extern "C" fn(*mut c_void) -> c_ulong,
    pub(super) find: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong) -> *mut CFolio,
    pub(super) pte_table: unsafe extern "C" fn(*mut c_void, c_ulong) -> *mut u8,
    pub(super) set_ptes: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong),
    pub(super) pmd_install: unsafe extern "C" fn(*mut c_void),
    pub(super) set_pmd: unsafe extern "C" fn(*mut c_void, *mut CFolio) -> c_uint,
    pub(super) trace_map_pages: unsafe extern "C" fn(*mut c_void, c_ulong, c_ulong),
    pub(super) xas_step: unsafe extern "C" fn(*mut c_void, *mut crate::xarray::CXas, c_int) -> c_int,
    pub(super) folio_trylock: unsafe extern "C" fn(*mut c_void, *mut CFolio) -> c_int,
    pub(super) folio_wait: unsafe extern "C" fn(*mut c_void, *mut CFolio),
    pub(super) read_folio: unsafe extern "C" fn(*mut c_void, *mut super::CFile, *mut CFolio) -> c_int,
}

pub(super) static OPS: COps = COps {
    alloc_folio: cb_alloc_folio,
    add_folio: cb_add_folio,
    load: cb_load,
    next_miss: cb_next_miss,
    prev_miss: cb_prev_miss,
    folio_flag: cb_folio_flag,
    remove_folio: cb_remove_folio,
    readahead: cb_readahead,
    trace_sync_ra: cb_trace_sync_ra,
    trace_async_ra: cb_trace_async_ra,
    trace_ra_unbounded: cb_trace_ra_unbounded,
    trace_ra_order: cb_trace_ra_order,
    bug: cb_bug,
    invalidate: fadvise::cb_invalidate,
    plug: fs::cb_plug,
    map_blocks: fs::cb_map_blocks,
    bio_alloc: fs::cb_bio_alloc,
    bio_add_folio: fs::cb_bio_add_folio,
    submit_bio: fs::cb_submit_bio,
    read_full_folio: fs::cb_read_full_folio,
    fault_around_pages: fault::cb_fault_around_pages,
    find: map::cb_find,
    pte_table: map::cb_pte_table,
    set_ptes: map::cb_set_ptes,
    pmd_install: map::cb_pmd_install,
    set_pmd: map::cb_set_pmd,
    trace_map_pages: map::cb_trace_map_pages,
    xas_step: cb_xas_step,
    folio_trylock: read::cb_folio_trylock,
    folio_wait: read::cb_folio_wait,
    read_folio: read::cb_read_folio,
};

unsafe extern "C" fn cb_alloc_folio(ctx: *mut c_void, order: c_uint) -> *mut CFolio {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    if !f.model().ractl_alloc_folio(order) {
        return std::ptr::null_mut();
    }
    f.lend(0, order, PG_LOCKED, false)
}

unsafe extern "C" fn cb_add_folio(ctx: *mut c_void, folio: *mut CFolio, index: c_ulong) -> c_int {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let folio = &mut *folio;
    let m = f.model();
    if m.filemap_add_folio(index, folio.order, folio.flags & PG_READAHEAD != 0).is_err() {
        return -EEXIST;
    }
    folio.index = index;
    folio.mapping = &mut f.mapping;
    if folio.flags & PG_DROPBEHIND != 0 {
        m.cache.set_dropbehind(index);
    }
    0
}

unsafe extern "C" fn cb_load(ctx: *mut c_void, index: c_ulong) -> *mut CFolio {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let m = f.model();
    m.cache.folio_at(index).map_or(std::ptr::null_mut(), |folio| f.lend_cached(folio))
}

/// A step of a tree's own miss walk on the model's xarray (`xas_next()` for `up` 1,
/// `xas_prev()` otherwise): 1 when the slot it lands on holds an entry.
unsafe extern "C" fn cb_xas_step(ctx: *mut c_void, xas: *mut crate::xarray::CXas, up: c_int) -> c_int {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    // SAFETY: the C's cursor, alive for its walk, which this step moves.
    let xas = unsafe { &mut *xas };
    crate::xarray::XArray::new(&m.cache).step(xas, up == 1) as c_int
}

unsafe extern "C" fn cb_next_miss(ctx: *mut c_void, index: c_ulong, max_scan: c_ulong) -> c_ulong {
    let _in_rust = InRust::on(ctx);
    Frame::of(ctx).model().page_cache_next_miss(index, max_scan)
}

unsafe extern "C" fn cb_prev_miss(ctx: *mut c_void, index: c_ulong, max_scan: c_ulong) -> c_ulong {
    let _in_rust = InRust::on(ctx);
    Frame::of(ctx).model().page_cache_prev_miss(index, max_scan)
}

unsafe extern "C" fn cb_folio_flag(ctx: *mut c_void, folio: *mut CFolio, flag: c_ulong, set: c_int) {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    let head = (*folio).index;
    match (flag, set != 0) {
        // folio_mark_uptodate(): a file system's C read the folio without I/O (a hole).
        (PG_UPTODATE, true) => m.cache.set_uptodate(head),
        (PG_READAHEAD, true) => m.cache.set_readahead(head),
        (PG_READAHEAD, false) => m.cache.clear_readahead(head),
        (PG_DROPBEHIND, true) => m.cache.set_dropbehind(head),
        // folio_test_clear_dropbehind() (filemap_end_dropbehind()).
        (PG_DROPBEHIND, false) => {
            m.cache.test_clear_dropbehind(head);
        }
        _ => {}
    }
}

unsafe extern "C" fn cb_remove_folio(ctx: *mut c_void, folio: *mut CFolio) {
    let _in_rust = InRust::on(ctx);
    Frame::of(ctx).model().cache.remove_folio((*folio).index);
}

/// `mapping->a_ops->readahead(rac)` inside read_pages() (which holds the model's plug:
/// `f2fs::cb_plug`): the model's file system reads the batch and consumes every folio.
unsafe extern "C" fn cb_readahead(ctx: *mut c_void, rac: *mut CReadaheadControl) {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let m = f.model();
    let rac = &mut *rac;
    // ->readahead may grow the window (readahead_expand()): the model's file_ra_state is
    // the C's for the length of the call.
    let c = m.c.expect("a callback of the C");
    m.files[f.fd].ra = c.ra_model(rac.ra);
    let mut r = ReadaheadControl {
        fd: f.fd,
        index: rac._index,
        nr_pages: rac._nr_pages as u64,
        may_shrink: false,
        dropbehind: rac.dropbehind,
    };
    m.aops_readahead(&mut r);
    rac._index = r.index + r.nr_pages;
    rac._nr_pages = 0;
    rac._batch_count = 0;
    c.set_ra(rac.ra, &m.files[f.fd].ra);
}

unsafe extern "C" fn cb_trace_sync_ra(ctx: *mut c_void, index: c_ulong, ra: *mut CFileRaState, req: c_ulong) {
    trace_ra(ctx, Trigger::Sync, index, ra, req);
}

unsafe extern "C" fn cb_trace_async_ra(ctx: *mut c_void, index: c_ulong, ra: *mut CFileRaState, req: c_ulong) {
    trace_ra(ctx, Trigger::Async, index, ra, req);
}

/// `trace_page_cache_sync_ra()` or `_async_ra()`: a window opens.
unsafe fn trace_ra(ctx: *mut c_void, trigger: Trigger, index: c_ulong, ra: *mut CFileRaState, req: c_ulong) {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let m = f.model();
    let ra = m.c.expect("a callback of the C").ra_model(ra);
    m.rec.open(trigger, index, req, &ra, m.op, f.fd as u32);
}

unsafe extern "C" fn cb_trace_ra_unbounded(ctx: *mut c_void, index: c_ulong, nr_to_read: c_ulong, lookahead: c_ulong) {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    m.rec.submit(Submit::Unbounded { index, nr_to_read, lookahead_size: lookahead });
}

unsafe extern "C" fn cb_trace_ra_order(ctx: *mut c_void, index: c_ulong, ra: *mut CFileRaState) {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    let ra = m.c.expect("a callback of the C").ra_model(ra);
    m.rec.submit(Submit::Order { index, size: ra.size, async_size: ra.async_size, order: ra.order });
}

unsafe extern "C" fn cb_bug(ctx: *mut c_void, file: *const c_char, line: c_int) {
    let _in_rust = InRust::on(ctx);
    // The C traps right after; the guard reports the trap with this.
    let file =
        if file.is_null() { String::new() } else { std::ffi::CStr::from_ptr(file).to_string_lossy().into_owned() };
    Frame::of(ctx).bug = Some((file, line));
}
