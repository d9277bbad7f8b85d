//! The file systems' `->readahead` and `->read_folio` as the tree's C: fs/f2fs/data.c's
//! `f2fs_readahead()` and `f2fs_read_data_folio()`, fs/ext4/readpage.c's `ext4_readahead()`
//! and `ext4_read_folio()`, which the harness takes from the tree's files with the static
//! functions they call (`f2fs_mpage_readpages()`, `ext4_mpage_readpages()`, ...). The model
//! answers their block mapping (`f2fs_map_blocks()`, `ext4_map_blocks()`) from the file's
//! extents and lends the C its bios: each `bio_add_folio()` goes to the model's bio, each
//! submission to its block layer, as the Rust port's do (docs/hybrid.md). XFS's (iomap)
//! stays the Rust port.
//!
//! The C reaches them two ways: the C `read_pages()` calls the mapping's `a_ops`, which for
//! such a file is this table's (never the model's `->readahead`: no call into the C from
//! inside one); the model's own `read_pages()` and `filemap_read_folio()` call them through
//! [`Model::c_fs_readahead`] and [`Model::c_fs_read_folio`].

use std::ffi::{c_int, c_uint, c_ulong, c_ulonglong, c_void};

use super::{CAops, CFile, CFolio, CReadaheadControl, Frame, InRust};
use crate::block::Bio;
use crate::input::FsKind;
use crate::model::{Model, BLOCK_SIZE};
use crate::pagecache::FolioRef;
use crate::readahead::ReadaheadControl;

/// `void ->readahead(struct readahead_control *)` (`f2fs_readahead()`, `ext4_readahead()`).
pub type ReadaheadFn = unsafe extern "C" fn(*mut CReadaheadControl);
/// `int ->read_folio(struct file *, struct folio *)`.
pub type ReadFolioFn = unsafe extern "C" fn(*mut CFile, *mut CFolio) -> c_int;

/// `struct bvec_iter` as the header defines it.
#[repr(C)]
#[derive(Debug, Default)]
pub struct CBvecIter {
    pub bi_sector: c_ulonglong,
    pub bi_size: c_uint,
}

/// `struct bio` as the header defines it: the model's bio `radiff_id` of the frame. The C
/// may set `bi_sector` and `REQ_RAHEAD` after `bio_alloc()` (ext4 does): the model's bio
/// takes them at each `bio_add_folio()` and at the submission.
#[repr(C)]
#[derive(Debug)]
pub struct CBio {
    pub bi_bdev: *mut c_void,
    pub bi_opf: c_uint,
    pub bi_iter: CBvecIter,
    pub bi_end_io: *mut c_void,
    pub radiff_id: c_ulong,
    pub bi_vcnt: u16,
}

/// `struct super_block`: the members ext4's read path reads.
#[repr(C)]
#[derive(Debug)]
pub struct CSuperBlock {
    pub s_bdev: *mut c_void,
    pub s_maxbytes: i64,
}

/// The header's `REQ_RAHEAD`.
const REQ_RAHEAD: c_uint = 1 << 19;

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

/// The a_ops of a `fs` file whose `->readahead` and `->read_folio` run as C, when the table
/// has both.
pub(crate) fn fs_aops(c: &super::CReadahead, fs: FsKind) -> Option<CAops> {
    let (read_folio, readahead) = match fs {
        FsKind::F2fs => (c.f2fs_read_data_folio?, c.f2fs_readahead?),
        FsKind::Ext4 => (c.ext4_read_folio?, c.ext4_readahead?),
        FsKind::Xfs => return None,
    };
    Some(CAops { read_folio: read_folio as *const c_void, readahead: readahead as *const c_void, ..CAops::NONE })
}

/// `blk_start_plug()` and `blk_finish_plug()` of the C (`read_pages()`): the model's plug;
/// at its finish the model decides when the reads submitted under it complete, as its own
/// `read_pages()` does.
pub(super) unsafe extern "C" fn cb_plug(ctx: *mut c_void, start: c_int) {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    if start != 0 {
        m.blk_start_plug();
    } else {
        m.blk_finish_plug();
        m.end_io_submission();
    }
}

/// A block mapping for a read: the blocks from `lblk` written and contiguous on the
/// device, at most `len`, from `*pblk`.
pub(super) unsafe extern "C" fn cb_map_blocks(
    ctx: *mut c_void,
    lblk: c_ulong,
    len: c_uint,
    pblk: *mut c_ulonglong,
) -> c_uint {
    let _in_rust = InRust::on(ctx);
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
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let bio = f.model().bio_alloc(sector, nr_vecs as u64, rahead != 0);
    let id = f.bios.model.len();
    f.bios.model.push(Some(bio));
    f.bios.lent.push(Box::new(CBio {
        bi_bdev: std::ptr::null_mut(),
        bi_opf: if rahead != 0 { REQ_RAHEAD } else { 0 },
        bi_iter: CBvecIter { bi_sector: sector, bi_size: 0 },
        bi_end_io: std::ptr::null_mut(),
        radiff_id: id as c_ulong,
        bi_vcnt: 0,
    }));
    &mut **f.bios.lent.last_mut().expect("just pushed") as *mut CBio
}

/// The model's bio behind `bio`, with the sector and REQ_RAHEAD the C gave it.
unsafe fn model_bio(f: &mut Frame, bio: *mut CBio) -> Option<&mut Bio> {
    let b = f.bios.model.get_mut((*bio).radiff_id as usize)?.as_mut()?;
    b.sector = (*bio).bi_iter.bi_sector;
    b.rahead = (*bio).bi_opf & REQ_RAHEAD != 0;
    Some(b)
}

pub(super) unsafe extern "C" fn cb_bio_add_folio(
    ctx: *mut c_void,
    bio: *mut CBio,
    folio: *mut CFolio,
    len: usize,
    off: usize,
) -> c_int {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    let m = f.model();
    let Some(cached) = m.cache.folio_at((*folio).index) else { return 0 };
    let phys = m.cache.folio_phys(&cached);
    let Some(b) = model_bio(f, bio) else { return 0 };
    if !b.bio_add_folio(phys, len as u64, off as u64) {
        return 0;
    }
    (*bio).bi_iter.bi_size += len as c_uint;
    m.folio_under_io(&cached);
    1
}

pub(super) unsafe extern "C" fn cb_submit_bio(ctx: *mut c_void, bio: *mut CBio) {
    let _in_rust = InRust::on(ctx);
    let f = Frame::of(ctx);
    if model_bio(f, bio).is_none() {
        return;
    }
    if let Some(b) = f.bios.model.get_mut((*bio).radiff_id as usize).and_then(Option::take) {
        f.model().submit_bio(b);
    }
}

/// `block_read_full_folio()` (ext4's "confused" folio): the model's, block by block.
pub(super) unsafe extern "C" fn cb_read_full_folio(ctx: *mut c_void, folio: *mut CFolio) {
    let _in_rust = InRust::on(ctx);
    let m = Frame::of(ctx).model();
    if let Some(cached) = m.cache.folio_at((*folio).index) {
        m.block_read_full_folio(&cached);
    }
}

impl Model<'_> {
    /// Whether the file system's `->readahead` and `->read_folio` are the tree's C here.
    pub(crate) fn fs_runs_as_c(&self) -> bool {
        self.c.is_some_and(|c| fs_aops(c, self.input.fs).is_some())
    }

    /// The C's `->readahead` on `ractl`, when the hybrid has the file system's: it reads and
    /// consumes the batch (which it may grow: `readahead_expand()`).
    pub(crate) fn c_fs_readahead(&mut self, ractl: &mut ReadaheadControl) -> bool {
        let Some(aops) = self.c.and_then(|c| fs_aops(c, self.input.fs)) else { return false };
        // SAFETY: fs_aops() made it of the table's ReadaheadFn.
        let f = unsafe { std::mem::transmute::<*const c_void, ReadaheadFn>(aops.readahead) };
        // SAFETY: the frame's objects follow the header (see CReadahead's contract).
        self.call_c(self.fs_function("readahead"), ractl, |fr| unsafe { f(&mut fr.rac) });
        true
    }

    /// The C's `->read_folio` on the cached `folio`, when the hybrid has the file system's;
    /// `fd` is any descriptor of the call (neither reads its `struct file`).
    pub(crate) fn c_fs_read_folio(&mut self, fd: usize, folio: FolioRef) -> bool {
        let Some(aops) = self.c.and_then(|c| fs_aops(c, self.input.fs)) else { return false };
        // SAFETY: fs_aops() made it of the table's ReadFolioFn.
        let f = unsafe { std::mem::transmute::<*const c_void, ReadFolioFn>(aops.read_folio) };
        let mut ractl = ReadaheadControl::new(fd, folio.index);
        self.call_c(self.fs_function("read_folio"), &mut ractl, |fr| {
            let folio = fr.lend_cached(folio);
            // SAFETY: as above; the folio is the frame's.
            unsafe { f(&mut fr.file, folio) };
        });
        true
    }

    /// The kernel's name of the file system's `->readahead` or `->read_folio`.
    fn fs_function(&self, op: &str) -> &'static str {
        match (self.input.fs, op) {
            (FsKind::F2fs, "readahead") => "f2fs_readahead",
            (FsKind::F2fs, _) => "f2fs_read_data_folio",
            (FsKind::Ext4, "readahead") => "ext4_readahead",
            (FsKind::Ext4, _) => "ext4_read_folio",
            (FsKind::Xfs, _) => "iomap_readahead",
        }
    }
}

/// `BLOCK_SIZE` is the page: f2fs's and ext4's blocks are 4 KiB here.
const _: () = assert!(BLOCK_SIZE == crate::trace::PAGE_SIZE);
