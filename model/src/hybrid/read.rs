//! The read path's walk of the page cache as the tree's C: mm/filemap.c's
//! `filemap_get_read_batch()`, taken from the tree's file beside the fault path's
//! functions. The model lends it the file's mapping; the C walks the model's cache
//! through the header's xarray cursor (one `xa_load()` per index it looks at, read from
//! the cache's bytes the model lends, `radiff_view_load()`) and fills a `struct
//! folio_batch` with the folios it lent, which the model reads back as its own batch
//! (docs/hybrid.md).

use std::ffi::{c_uchar, c_ulong};

use super::{CAddressSpace, CFolio, Lends};
use crate::filemap::{FolioBatch, FOLIO_BATCH_SIZE};
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

impl CFolioBatch {
    /// An empty batch, as `folio_batch_init()` leaves it.
    pub(super) fn new() -> CFolioBatch {
        CFolioBatch { nr: 0, i: 0, percpu_pvec_drained: false, folios: [std::ptr::null_mut(); FOLIO_BATCH_SIZE] }
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
            // The frame's batch, kept from call to call: only its counts start anew.
            let cb = &mut fr.read_batch;
            (cb.nr, cb.i, cb.percpu_pvec_drained) = (0, 0, false);
            // SAFETY: the frame's mapping and batch follow the header.
            unsafe { f(&mut fr.mapping, index, max, cb) };
            // SAFETY: the call has returned; the model is not otherwise borrowed.
            let cache = &unsafe { fr.model() }.cache;
            for &folio in fr.read_batch.folios.iter().take(usize::from(fr.read_batch.nr).min(FOLIO_BATCH_SIZE)) {
                if folio.is_null() {
                    break;
                }
                // SAFETY: a folio the frame lent, alive until the frame's next call.
                if let Some(cached) = cache.folio_at(unsafe { (*folio).index }) {
                    batch.add(cached);
                }
            }
        });
        true
    }
}
