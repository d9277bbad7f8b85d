//! f2fs's `->readahead` and `->read_folio` as the tree's C: fs/f2fs/data.c's
//! `f2fs_readahead()` and `f2fs_read_data_folio()`, which the harness takes from the tree's
//! file with the static functions they call (`f2fs_mpage_readpages()`,
//! `f2fs_read_single_page()`, ...). The model answers `f2fs_map_blocks()` from the file's
//! extents and lends the C its bios: each `bio_add_folio()` goes to the model's bio, each
//! submission to its block layer, as the Rust port's do (docs/hybrid.md).
//!
//! The C reaches them two ways: the C `read_pages()` calls the mapping's `a_ops`, which for
//! an f2fs file is this table's (never the model's `->readahead`: no call into the C from
//! inside one); the model's own `read_pages()` and `filemap_read_folio()` call them through
//! [`Model::c_f2fs_readahead`] and [`Model::c_f2fs_read_folio`].

use std::ffi::{c_int, c_uint, c_ulong, c_ulonglong, c_void};

use super::{CAops, CFile, CFolio, CReadaheadControl, Frame, InRust};
use crate::block::Bio;
use crate::input::FsKind;
use crate::model::{Model, BLOCK_SIZE};
use crate::readahead::ReadaheadControl;

/// `static void f2fs_readahead(struct readahead_control *)`.
pub type F2fsReadaheadFn = unsafe extern "C" fn(*mut CReadaheadControl);
/// `static int f2fs_read_data_folio(struct file *, struct folio *)`.
pub type ReadFolioFn = unsafe extern "C" fn(*mut CFile, *mut CFolio) -> c_int;

/// `struct bvec_iter` as the header defines it.
#[repr(C)]
#[derive(Debug, Default)]
pub struct CBvecIter {
    pub bi_sector: c_ulonglong,
    pub bi_size: c_uint,
}

/// `struct bio` as the header defines it: the model's bio `radiff_id` of the frame.
#[repr(C)]
#[derive(Debug)]
pub struct CBio {
    pub bi_bdev: *mut c_void,
    pub bi_iter: CBvecIter,
    pub radiff_id: c_ulong,
}

/// The bios of one call into the C: the model's, and the C's view of each (boxed: the C
/// keeps pointers to them).
#[derive(Default)]
pub(crate) struct Bios {
    model: Vec<Option<Bio>>,
    #[allow(clippy::vec_box, reason = "the C keeps pointers to each bio while more are made")]
    lent: Vec<Box<CBio>>,
}

impl Bios {
    pub(crate) fn clear(&mut self) {
        self.model.clear();
        self.lent.clear();
    }
}

/// The a_ops of an f2fs file whose `->readahead` and `->read_folio` run as C, when the
/// table has both.
pub(crate) fn f2fs_aops(c: &super::CReadahead) -> Option<CAops> {
    Some(CAops { read_folio: c.f2fs_read_data_folio? as *const c_void, readahead: c.f2fs_readahead? as *const c_void })
}

/// `blk_start_plug()` and `blk_finish_plug()` of the C (`read_pages()`): the model's plug;
/// at its finish the model decides when the reads submitted under it complete, as its own
/// `read_pages()` does.
pub(super) unsafe extern "C" fn cb_plug(ctx: *mut c_void, start: c_int) {
    let _in_rust = InRust::enter();
    let m = Frame::of(ctx).model();
    if start != 0 {
        m.blk_start_plug();
    } else {
        m.blk_finish_plug();
        m.end_io_submission();
    }
}

/// `f2fs_map_blocks()` for a read: the blocks from `lblk` written and contiguous on the
/// device, at most `len`, from `*pblk`.
pub(super) unsafe extern "C" fn cb_map_blocks(
    ctx: *mut c_void,
    lblk: c_ulong,
    len: c_uint,
    pblk: *mut c_ulonglong,
) -> c_uint {
    let _in_rust = InRust::enter();
    let m = Frame::of(ctx).model();
    let Some(first) = m.layout.block(lblk) else { return 0 };
    *pblk = first;
    m.layout.contiguous_blocks(lblk, len as u64) as c_uint
}

pub(super) unsafe extern "C" fn cb_bio_alloc(
    ctx: *mut c_void,
    sector: c_ulonglong,
    nr_vecs: c_uint,
    rahead: c_int,
) -> *mut CBio {
    let _in_rust = InRust::enter();
    let f = Frame::of(ctx);
    let bio = f.model().bio_alloc(sector, nr_vecs as u64, rahead != 0);
    let id = f.bios.model.len();
    f.bios.model.push(Some(bio));
    f.bios.lent.push(Box::new(CBio {
        bi_bdev: std::ptr::null_mut(),
        bi_iter: CBvecIter { bi_sector: sector, bi_size: 0 },
        radiff_id: id as c_ulong,
    }));
    &mut **f.bios.lent.last_mut().expect("just pushed") as *mut CBio
}

pub(super) unsafe extern "C" fn cb_bio_add_folio(
    ctx: *mut c_void,
    bio: *mut CBio,
    folio: *mut CFolio,
    len: usize,
    off: usize,
) -> c_int {
    let _in_rust = InRust::enter();
    let f = Frame::of(ctx);
    let m = f.model();
    let Some(cached) = m.cache.folio_at((*folio).index) else { return 0 };
    let phys = m.cache.folio_phys(&cached);
    let Some(Some(b)) = f.bios.model.get_mut((*bio).radiff_id as usize) else { return 0 };
    if !b.bio_add_folio(phys, len as u64, off as u64) {
        return 0;
    }
    (*bio).bi_iter.bi_size += len as c_uint;
    m.folio_under_io(&cached);
    1
}

pub(super) unsafe extern "C" fn cb_submit_bio(ctx: *mut c_void, bio: *mut CBio) {
    let _in_rust = InRust::enter();
    let f = Frame::of(ctx);
    if let Some(b) = f.bios.model.get_mut((*bio).radiff_id as usize).and_then(Option::take) {
        f.model().submit_bio(b);
    }
}

impl Model<'_> {
    /// Whether f2fs's `->readahead` and `->read_folio` are the tree's C here.
    pub(crate) fn f2fs_runs_as_c(&self) -> bool {
        self.input.fs == FsKind::F2fs && self.c.and_then(f2fs_aops).is_some()
    }

    /// The C's `f2fs_readahead()` on `ractl`, when the hybrid has it: it reads and consumes
    /// the batch (which it may grow: `readahead_expand()`).
    pub(crate) fn c_f2fs_readahead(&mut self, ractl: &mut ReadaheadControl) -> bool {
        if !self.f2fs_runs_as_c() {
            return false;
        }
        let Some(f) = self.c.and_then(|c| c.f2fs_readahead) else { return false };
        // SAFETY: the frame's objects follow the header (see CReadahead's contract).
        self.call_c("f2fs_readahead", ractl, |fr| unsafe { f(&mut fr.rac) });
        true
    }

    /// The C's `f2fs_read_data_folio()` on the cached `folio`, when the hybrid has it.
    pub(crate) fn c_f2fs_read_folio(&mut self, fd: usize, folio: crate::pagecache::FolioRef) -> bool {
        if !self.f2fs_runs_as_c() {
            return false;
        }
        let Some(f) = self.c.and_then(|c| c.f2fs_read_data_folio) else { return false };
        let dropbehind = self.cache.test_dropbehind(folio.index);
        let mut ractl = ReadaheadControl::new(fd, folio.index);
        self.call_c("f2fs_read_data_folio", &mut ractl, |fr| {
            let folio = fr.lend_cached(folio, dropbehind);
            // SAFETY: as above; the folio is the frame's.
            unsafe { f(&mut fr.file, folio) };
        });
        true
    }
}

/// `BLOCK_SIZE` is the page: f2fs's blocks are 4 KiB here (include/linux/f2fs_fs.h:
/// "F2FS_BLKSIZE PAGE_SIZE").
const _: () = assert!(BLOCK_SIZE == crate::trace::PAGE_SIZE);
