//! The read path's walk of the page cache as the tree's C: mm/filemap.c's
//! `filemap_get_read_batch()`, taken from the tree's file beside the fault path's
//! functions. The model lends it the file's mapping; the C walks the model's cache
//! through the header's xarray cursor (one `xa_load()` per index it looks at) and fills a
//! `struct folio_batch` with folios the model lent, which the model reads back as its own
//! batch (docs/hybrid.md).

use std::ffi::{c_uchar, c_ulong};

use super::{CAddressSpace, CFolio};
use crate::filemap::FOLIO_BATCH_SIZE;
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

/// The first page of each folio the C put in its batch, in its order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadBatch {
    heads: [u64; FOLIO_BATCH_SIZE],
    nr: usize,
}

impl ReadBatch {
    pub(crate) fn heads(&self) -> &[u64] {
        &self.heads[..self.nr]
    }
}

impl Model<'_> {
    /// The C's `filemap_get_read_batch()` on file `fd` from page `index` to `max`, when the
    /// hybrid has it: the folios of the batch, as their first pages. A batch the C filled
    /// past `FOLIO_BATCH_SIZE` is cut there (what `folio_batch_add()` allows); a crash
    /// leaves the batch it had made.
    pub(crate) fn c_filemap_get_read_batch(&mut self, fd: usize, index: u64, max: u64) -> Option<ReadBatch> {
        // After a crash of the C the prediction has failed; the port's walk ends the run
        // (an empty batch would send filemap_get_pages() round its -EEXIST retry for ever).
        let f = self.c.and_then(|c| c.filemap_get_read_batch).filter(|_| self.crash.is_none())?;
        let mut batch =
            CFolioBatch { nr: 0, i: 0, percpu_pvec_drained: false, folios: [std::ptr::null_mut(); FOLIO_BATCH_SIZE] };
        let mut out = ReadBatch { heads: [0; FOLIO_BATCH_SIZE], nr: 0 };
        let mut ractl = ReadaheadControl::new(fd, index);
        self.call_c_on("filemap_get_read_batch", &mut ractl, false, |fr| {
            // SAFETY: the frame's mapping follows the header; the batch lives across the call.
            unsafe { f(&mut fr.mapping, index, max, &mut batch) };
            for &folio in batch.folios.iter().take(usize::from(batch.nr).min(FOLIO_BATCH_SIZE)) {
                if folio.is_null() {
                    break;
                }
                // SAFETY: a folio the frame lent, alive until the frame's next call.
                out.heads[out.nr] = unsafe { (*folio).index };
                out.nr += 1;
            }
        });
        Some(out)
    }
}
