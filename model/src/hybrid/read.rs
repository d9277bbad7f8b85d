//! The read path as the tree's C: mm/filemap.c's `filemap_read()`, with the static
//! functions it calls (`filemap_get_pages()`, `filemap_update_page()`,
//! `filemap_create_folio()`, ...), and its walk of the page cache, `filemap_get_read_batch()`,
//! which the model's own `filemap_get_pages()` calls where `filemap_read()` is not C (a
//! splice). The walk goes through the header's xarray cursor (one `xa_load()` per index it
//! looks at, read from the cache's bytes the model lends, `radiff_view_load()`) and fills a
//! `struct folio_batch` with the folios it lent, which the model reads back as its own
//! batch; a reader's sleeps on a folio under read, and its `->read_folio` where the file
//! system is the model's, are the model's (docs/hybrid.md).

use std::ffi::{c_int, c_long, c_uchar, c_ulong, c_void};

use super::{CAddressSpace, CFile, CFolio, Frame, InRust, Lends, PG_LOCKED, PG_UPTODATE};
use crate::filemap::{FolioBatch, GetPagesError, FOLIO_BATCH_SIZE};
use crate::model::Model;
use crate::readahead::ReadaheadControl;

/// `struct folio_batch` as the header defines it.
#[repr(C)]
#[derive(Debug)]
pub struct CFolioBatch {
    pub nr: c_uchar,
    pub i: c_uchar,
    pub percpu_pvec_drained: bool,
    pub folios: [*mut CFolio; FOLIO_BATCH_SIZE],
}

/// `static void filemap_get_read_batch(struct address_space *, pgoff_t index, pgoff_t max,
/// struct folio_batch *)` (mm/filemap.c).
pub type GetReadBatchFn = unsafe extern "C" fn(*mut CAddressSpace, c_ulong, c_ulong, *mut CFolioBatch);

/// `struct kiocb` as the header defines it.
#[repr(C)]
#[derive(Debug)]
pub struct CKiocb {
    pub ki_filp: *mut CFile,
    pub ki_pos: i64,
    pub ki_flags: c_int,
    pub ki_waitq: *mut c_void,
}

/// `struct iov_iter` as the header defines it: the bytes the reader still wants.
#[repr(C)]
#[derive(Debug)]
pub struct CIovIter {
    pub count: usize,
}

/// `static int filemap_get_pages(struct kiocb *, size_t count, struct folio_batch *,
/// bool need_uptodate)` (mm/filemap.c).
pub type GetPagesFn = unsafe extern "C" fn(*mut CKiocb, usize, *mut CFolioBatch, bool) -> c_int;

/// The header's `EAGAIN`, the one error of `filemap_get_pages()` its callers tell apart.
const EAGAIN: c_int = 11;

/// The header's `IOCB_NOWAIT` and `IOCB_DONTCACHE`.
pub const IOCB_NOWAIT: c_int = 1 << 3;
pub const IOCB_DONTCACHE: c_int = 1 << 7;

/// `ssize_t filemap_read(struct kiocb *, struct iov_iter *, ssize_t already_read)`
/// (mm/filemap.c).
pub type FilemapReadFn = unsafe extern "C" fn(*mut CKiocb, *mut CIovIter, c_long) -> c_long;

impl CFolioBatch {
    /// An empty batch, as `folio_batch_init()` leaves it.
    pub(super) fn new() -> CFolioBatch {
        CFolioBatch { nr: 0, i: 0, percpu_pvec_drained: false, folios: [std::ptr::null_mut(); FOLIO_BATCH_SIZE] }
    }

    /// Starts the frame's batch anew, as `folio_batch_init()` does: the batch is kept from
    /// call to call, and only its counts start again.
    fn init(&mut self) {
        (self.nr, self.i, self.percpu_pvec_drained) = (0, 0, false);
    }
}

impl Model<'_> {
    /// The C's `filemap_get_read_batch()` on file `fd` from page `index` to `max`, when the
    /// hybrid has it (false when not): `batch` gets the cached folios the C put in its
    /// own, in its order. A batch the C filled past `FOLIO_BATCH_SIZE` is cut there (what
    /// `folio_batch_add()` allows); a crash leaves the batch it had made.
    pub(crate) fn c_filemap_get_read_batch(&mut self, fd: usize, index: u64, max: u64, batch: &mut FolioBatch) -> bool {
        // After a crash of the C the prediction has failed; the port's walk ends the run
        // (an empty batch would send filemap_get_pages() round its -EEXIST retry for ever).
        let Some(f) = self.c.and_then(|c| c.filemap_get_read_batch).filter(|_| self.crash.is_none()) else {
            return false;
        };
        let mut ractl = ReadaheadControl::new(fd, index);
        self.call_c_on("filemap_get_read_batch", &mut ractl, Lends::Mapping, |fr| {
            fr.read_batch.init();
            // SAFETY: the frame's mapping and batch follow the header.
            unsafe { f(&mut fr.mapping, index, max, &mut fr.read_batch) };
            fr.read_back_batch(batch);
        });
        true
    }
}

impl Frame {
    /// The model's own batch of what the C put in the frame's (`read_batch`), in its order:
    /// the model's folio at each index. A batch the C filled past `FOLIO_BATCH_SIZE` is cut
    /// there (what `folio_batch_add()` allows).
    fn read_back_batch(&self, batch: &mut FolioBatch) {
        // SAFETY: the frame's call has returned; the model is not otherwise borrowed.
        let cache = &unsafe { self.model() }.cache;
        for &folio in self.read_batch.folios.iter().take(usize::from(self.read_batch.nr).min(FOLIO_BATCH_SIZE)) {
            if folio.is_null() {
                break;
            }
            // SAFETY: a folio the frame lent, alive until the frame's next call.
            if let Some(cached) = cache.folio_at(unsafe { (*folio).index }) {
                batch.add(cached);
            }
        }
    }
}

impl Model<'_> {
    /// The read's flags as the kiocb carries them.
    fn ki_flags_c(&self) -> c_int {
        (if self.ki_flags.nowait { IOCB_NOWAIT } else { 0 })
            | (if self.ki_flags.dontcache { IOCB_DONTCACHE } else { 0 })
    }

    /// The C's `filemap_get_pages()` for `count` bytes at `pos` of file `fd`, with the
    /// read's flags, when the hybrid has it: `batch` gets the folios the C returned, in
    /// its order. Its own retries (AOP_TRUNCATED_PAGE) stay inside the C; -EAGAIN is
    /// [`GetPagesError::Again`], and any other error ends the read as -ENOMEM does
    /// ("if (error < 0) break;" in both callers).
    pub(crate) fn c_filemap_get_pages(
        &mut self,
        fd: usize,
        pos: u64,
        count: u64,
        batch: &mut FolioBatch,
        need_uptodate: bool,
    ) -> Option<Result<(), GetPagesError>> {
        let f = self.c.and_then(|c| c.filemap_get_pages).filter(|_| self.crash.is_none())?;
        let flags = self.ki_flags_c();
        let mut ractl = ReadaheadControl::new(fd, pos >> crate::model::PAGE_SHIFT);
        let mut err = 0;
        *batch = FolioBatch::new();
        self.call_c("filemap_get_pages", &mut ractl, |fr| {
            fr.read_batch.init();
            let mut iocb =
                CKiocb { ki_filp: &mut fr.file, ki_pos: pos as i64, ki_flags: flags, ki_waitq: std::ptr::null_mut() };
            // SAFETY: the frame's file, mapping and batch follow the header; the kiocb lives
            // for the call.
            err = unsafe { f(&mut iocb, count as usize, &mut fr.read_batch, need_uptodate) };
            fr.read_back_batch(batch);
        });
        Some(match err {
            0 => Ok(()),
            e if e == -EAGAIN => Err(GetPagesError::Again),
            _ => Err(GetPagesError::Enomem),
        })
    }

    /// The C's `filemap_read()` of `len` bytes at `pos` of file `fd`, with the read's
    /// flags (`self.ki_flags`), when the hybrid has it: the bytes it read (none on an
    /// error). The file's `f_ra` is lent and taken back (`ra->prev_pos`).
    pub(crate) fn c_filemap_read(&mut self, fd: usize, pos: u64, len: u64) -> Option<u64> {
        let f = self.c.and_then(|c| c.filemap_read).filter(|_| self.crash.is_none())?;
        let flags = self.ki_flags_c();
        let mut ractl = ReadaheadControl::new(fd, pos >> crate::model::PAGE_SHIFT);
        let mut read = 0;
        self.call_c("filemap_read", &mut ractl, |fr| {
            let mut iocb =
                CKiocb { ki_filp: &mut fr.file, ki_pos: pos as i64, ki_flags: flags, ki_waitq: std::ptr::null_mut() };
            let mut iter = CIovIter { count: len as usize };
            // SAFETY: the frame's file and its objects follow the header; the kiocb and
            // iter live for the call.
            read = unsafe { f(&mut iocb, &mut iter, 0) };
        });
        Some(read.max(0) as u64)
    }
}

/// `folio_trylock()` of a cached folio the C found locked (`filemap_update_page()`): by
/// its read, taken when that read has completed by then (the model completes it,
/// [`Model::read_done_at_trylock`]), else not; by the C itself, not.
pub(super) unsafe extern "C" fn cb_folio_trylock(ctx: *mut c_void, folio: *mut CFolio) -> c_int {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    // SAFETY: a folio the frame lent, alive for the call.
    let folio = unsafe { &mut *folio };
    let Some(cached) = m.cache.folio_at(folio.index) else { return 0 };
    // Uptodate, it is the C's own lock (one task runs): a second trylock fails.
    if cached.uptodate || !m.read_done_at_trylock(cached.index) {
        return 0;
    }
    m.folio_wait_locked(cached.index);
    folio.flags |= PG_UPTODATE | PG_LOCKED;
    1
}

/// A reader sleeps on a folio under read (`folio_wait_locked()`,
/// `folio_put_wait_locked()`): the reads submitted so far are done with as the model's
/// `->read_folio` callers do ([`Model::end_io_submission`]), then the folio's completes.
pub(super) unsafe extern "C" fn cb_folio_wait(ctx: *mut c_void, folio: *mut CFolio) {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    // SAFETY: a folio the frame lent, alive for the call.
    let folio = unsafe { &mut *folio };
    m.end_io_submission();
    if m.cache.folio_at(folio.index).is_some() {
        m.folio_wait_locked(folio.index);
        folio.flags = (folio.flags & !PG_LOCKED) | PG_UPTODATE;
    }
}

/// `mapping->a_ops->read_folio` of a file whose file system is the model's (XFS's iomap,
/// or one whose C the hybrid does not have): the model reads the folio.
pub(super) unsafe extern "C" fn cb_read_folio(ctx: *mut c_void, _file: *mut CFile, folio: *mut CFolio) -> c_int {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    // SAFETY: a folio the frame lent, alive for the call.
    if let Some(cached) = m.cache.folio_at(unsafe { (*folio).index }) {
        m.aops_read_folio(cached);
        m.end_io_submission();
    }
    0
}
