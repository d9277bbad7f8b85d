//! The hybrid model: a tree's own mm/readahead.c (and mm/fadvise.c's `generic_fadvise()`),
//! compiled as C against radiff's header
//! (model/c/radiff_kernel.h), run in place of the Rust port, with every kernel helper
//! the C calls answered by the model's state (docs/hybrid.md).
//!
//! The model stays pure: it is handed a table of C function pointers ([`CReadahead`]);
//! finding, compiling and loading the C is the harness's work. The structs below mirror
//! the header's field for field (`#[repr(C)]`); the header is the contract.

use std::ffi::{c_int, c_uint, c_ulong, c_void};

use crate::model::{Model, BLOCK_SIZE};
use crate::pagecache::FolioRef;
use crate::readahead::{FileRaState, ReadaheadControl};
use crate::trace::{Submit, Trigger};

mod crash;
mod fadvise;
mod fault;
mod fs;
pub mod functions;
mod layout;
mod madvise;
mod map;
mod ops;
mod ra;
mod read;

pub use crash::{Crash, WORKER};
pub use fault::{AsyncMmapRaFn, CPmd, CVmFault, CVmOps, CVma, MapPagesFn, SyncMmapRaFn, VmFaultFn};
pub use layout::{mirror_constants, mirror_layout};
pub use madvise::MadviseWillneedFn;
pub use ops::COps;
use ops::OPS;
pub use ra::{CFileRaState, CRadiffRa, RaLoadFn, RaRaw, RaStoreFn};

pub use fs::{CBio, CBvecIter, CSuperBlock, ReadFolioFn, ReadaheadFn};
pub use functions::{runs_as_c, CFunction, CReadahead, ENTRIES, STATICS};

/// `struct readahead_control`.
#[repr(C)]
#[derive(Debug)]
pub struct CReadaheadControl {
    pub file: *mut CFile,
    pub mapping: *mut CAddressSpace,
    pub ra: *mut CFileRaState,
    pub _index: c_ulong,
    pub _nr_pages: c_uint,
    pub _batch_count: c_uint,
    pub dropbehind: bool,
    pub _workingset: bool,
    pub _pflags: c_ulong,
    /// Room for the members a tree adds to the struct (the harness appends them to the
    /// header's struct; the header asserts they fit in `RADIFF_RAC_SIZE`). Zeroed for each
    /// call, as the kernel's `DEFINE_READAHEAD` leaves members it does not name.
    pub radiff_extra: [u64; 8],
}

impl CReadaheadControl {
    /// `DEFINE_READAHEAD` with nothing named: every member zero, pointers unset.
    fn blank() -> CReadaheadControl {
        CReadaheadControl {
            file: std::ptr::null_mut(),
            mapping: std::ptr::null_mut(),
            ra: std::ptr::null_mut(),
            _index: 0,
            _nr_pages: 0,
            _batch_count: 0,
            dropbehind: false,
            _workingset: false,
            _pflags: 0,
            radiff_extra: [0; 8],
        }
    }
}

/// `struct folio` as the header defines it: the model lends these to the C. Aligned as the
/// header's (`RADIFF_FOLIO_ALIGN`), so that a page's address rounded down is its folio.
#[repr(C, align(1024))]
#[derive(Debug)]
pub struct CFolio {
    pub index: c_ulong,
    pub order: c_uint,
    pub flags: c_ulong,
    pub mapping: *mut CAddressSpace,
    pub radiff: *mut CEnv,
    /// `struct page page` and the pages after it, a byte each: only their addresses are
    /// used (`folio_page()`, `page_folio()`).
    pub page: u8,
    pub radiff_pages: [u8; FOLIO_PAGES - 1],
}

impl CFolio {
    /// A folio of the pool, before the C lends it.
    fn blank() -> CFolio {
        let (mapping, radiff) = (std::ptr::null_mut(), std::ptr::null_mut());
        CFolio { index: 0, order: 0, flags: 0, mapping, radiff, page: 0, radiff_pages: [0; FOLIO_PAGES - 1] }
    }
}

/// `RADIFF_FOLIO_PAGES`: the most pages a folio has (order 9).
const FOLIO_PAGES: usize = 512;

const PG_READAHEAD: c_ulong = 1 << 0;
const PG_DROPBEHIND: c_ulong = 1 << 1;
const PG_LOCKED: c_ulong = 1 << 4;
const PG_UPTODATE: c_ulong = 1 << 5;
const EEXIST: c_int = 17;

#[repr(C)]
#[derive(Debug, Default)]
pub struct CBdi {
    pub ra_pages: c_ulong,
    pub io_pages: c_ulong,
}

#[repr(C)]
#[derive(Debug)]
pub struct CInode {
    pub i_mode: u16,
    pub i_size: i64,
    pub i_mapping: *mut CAddressSpace,
    pub radiff_bdi: *mut CBdi,
    /// The file's block size, 4 KiB where a file system's C reads it (ext4's, f2fs's).
    pub i_blkbits: u8,
    pub i_sb: *mut CSuperBlock,
}

/// `struct address_space_operations`: the header's `radiff_aops`.
#[repr(C)]
#[derive(Debug)]
pub struct CAops {
    pub read_folio: *const c_void,
    pub readahead: *const c_void,
    /// NULL: the model's blocks are the page.
    pub is_partially_uptodate: *const c_void,
}

impl CAops {
    /// No operation of the file system's own: the mapping's a_ops are the model's.
    const NONE: CAops =
        CAops { read_folio: std::ptr::null(), readahead: std::ptr::null(), is_partially_uptodate: std::ptr::null() };
}

#[repr(C)]
#[derive(Debug)]
pub struct CAddressSpace {
    pub host: *mut CInode,
    pub i_pages: c_int,
    pub invalidate_lock: c_int,
    pub gfp_mask: c_uint,
    pub flags: c_ulong,
    pub a_ops: *const CAops,
    pub radiff: *mut CEnv,
    pub radiff_min_order: c_uint,
    pub radiff_max_order: c_uint,
}

#[repr(C)]
#[derive(Debug)]
pub struct CFile {
    pub f_mode: c_uint,
    pub f_mapping: *mut CAddressSpace,
    pub f_inode: *mut CInode,
    pub radiff_fd: c_uint,
    /// `spinlock_t f_lock`: a lock nothing waits on.
    pub f_lock: c_int,
    /// `const struct file_operations *f_op`: [`NO_FADVISE`], whose `->fadvise` is NULL, so
    /// the C's `vfs_fadvise()` (`madvise_willneed()`'s) is the tree's `generic_fadvise()`.
    pub f_op: *const CFileOperations,
    pub f_ra: CFileRaState,
}

/// `struct file_operations`, its one member the C reads.
#[repr(C)]
#[derive(Debug)]
pub struct CFileOperations {
    pub fadvise: Option<unsafe extern "C" fn(*mut CFile, i64, i64, c_int) -> c_int>,
}

/// Every file's operations in the frame: no `->fadvise` of the file system's (the model's
/// own `->fadvise` runs before it calls the C: f2fs's SEQUENTIAL).
pub static NO_FADVISE: CFileOperations = CFileOperations { fadvise: None };

const FMODE_RANDOM: c_uint = 1 << 12;
const FMODE_NOREUSE: c_uint = 1 << 23;
const S_IFREG: u16 = 0o100000;

/// `struct radiff_env`: the call table and the model's context, and the page cache's
/// bytes the C reads itself with the pool it lends their folios from (the header's
/// `radiff_view_load()`; [`Frame::see_cache`]).
#[repr(C)]
#[derive(Debug)]
pub struct CEnv {
    pub ops: *const COps,
    pub ctx: *mut c_void,
    pub cache: *const u8,
    pub cache_pages: c_ulong,
    pub pool: *mut CFolio,
    pub pool_len: c_ulong,
    pub pool_used: c_ulong,
}

/// Folios in a frame's pool, which the C lends from without calling the model: more than
/// a read batch or a fault-around takes (a spent pool sends the C to the model's `load`),
/// and more than most whole read()s look up now that `filemap_read()` is one call (its
/// batches, readahead's walks): hybrid-check's one-core figures, `--count 3000 --seed 1`,
/// alternated, 0.46 of the port's rate with 64, 0.47 with 256, 0.47-0.48 with 512 or 1024.
const POOL: usize = 512;

/// `void page_cache_sync_ra(struct readahead_control *, unsigned long req_count)`.
pub type SyncRaFn = unsafe extern "C" fn(*mut CReadaheadControl, c_ulong);
/// `void page_cache_async_ra(struct readahead_control *, struct folio *, unsigned long)`.
pub type AsyncRaFn = unsafe extern "C" fn(*mut CReadaheadControl, *mut CFolio, c_ulong);
/// `void force_page_cache_ra(struct readahead_control *, unsigned long nr_to_read)`.
pub type ForceRaFn = unsafe extern "C" fn(*mut CReadaheadControl, c_ulong);
/// `file_ra_state_init(ra, mapping)`.
pub type RaInitFn = unsafe extern "C" fn(*mut CFileRaState, *mut CAddressSpace);
/// `void page_cache_ra_order(struct readahead_control *, struct file_ra_state *)`.
pub type RaOrderFn = unsafe extern "C" fn(*mut CReadaheadControl, *mut CFileRaState);
/// `void page_cache_ra_unbounded(struct readahead_control *, unsigned long, unsigned long)`.
pub type RaUnboundedFn = unsafe extern "C" fn(*mut CReadaheadControl, c_ulong, c_ulong);
/// `int generic_fadvise(struct file *, loff_t offset, loff_t len, int advice)` (mm/fadvise.c).
pub type GenericFadviseFn = unsafe extern "C" fn(*mut CFile, i64, i64, c_int) -> c_int;
/// The header's `radiff_enter()`: the context of the C running on this thread.
pub type EnterFn = unsafe extern "C" fn(*mut CEnv);
/// The header's `radiff_guard(body, data)`: runs `body(data)`; 0, or the signal that
/// ended it (the harness's signal handler jumps back through the header's `radiff_crashed`).
pub type GuardFn = unsafe extern "C" fn(unsafe extern "C" fn(*mut c_void), *mut c_void) -> c_int;

// SAFETY: the table holds code addresses and the address of the header's constant
// `radiff_aops`; nothing it points to is written after loading. Each call keeps its
// state in its own frame and the C finds it through a thread-local (`radiff_enter`).
unsafe impl Send for CReadahead {}
unsafe impl Sync for CReadahead {}

thread_local! {
    static IN_RUST: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is in one of the model's callbacks from the C (a signal handler may
/// ask: jumping out of Rust code, which may hold the allocator's lock, is not safe).
pub fn in_callback() -> bool {
    IN_RUST.with(|c| c.get())
}

/// Marks this thread as in a callback from the frame's C while it lives, and then lends
/// that C the cache as the callback left it ([`Frame::see_cache`]).
struct InRust(bool, *mut c_void);

impl InRust {
    /// # Safety
    /// `ctx` is the `env.ctx` of a live frame whose C call is running on this thread.
    unsafe fn on(ctx: *mut c_void) -> InRust {
        InRust(IN_RUST.with(|c| c.replace(true)), ctx)
    }
}

impl Drop for InRust {
    fn drop(&mut self) {
        // SAFETY: as InRust::on's caller promised; the callback's borrows have ended.
        unsafe { Frame::of(self.1).see_cache() };
        IN_RUST.with(|c| c.set(self.0));
    }
}

/// A past call's frame, kept in the model so that the next call into the C (thousands per
/// prediction) allocates neither the frame nor the folios it lends.
#[derive(Default)]
pub(crate) struct Spare(Option<Box<Frame>>);

/// One call from the model into the C: the kernel objects it sees, and the folios the
/// model lent it (taken back when the call returns).
struct Frame {
    model: *mut Model<'static>,
    fd: usize,
    env: CEnv,
    bdi: CBdi,
    inode: CInode,
    mapping: CAddressSpace,
    file: CFile,
    rac: CReadaheadControl,
    /// The fault's VMA and `struct vm_fault`, for the fault path's functions.
    vma: CVma,
    vmf: CVmFault,
    /// The PMD `vmf.pmd` points at, the VMA's operations (`vma.vm_ops`), and the model's
    /// own fault, for `do_fault_around()`'s `->map_pages`.
    pmd: CPmd,
    vm_ops: CVmOps,
    fault: *mut crate::fault::VmFault,
    /// The fault's page table as the C's `filemap_map_pages()` reads and writes it (the
    /// model's own is its [`crate::fault::Mmap`]'s); kept, as the folios are, for the next call.
    ptes: Vec<u8>,
    /// The mapping's a_ops when the file system's run as C (`mapping.a_ops` points here),
    /// the bios the C made, the inode's super block.
    aops: CAops,
    bios: fs::Bios,
    sb: CSuperBlock,
    // Boxed: the C holds pointers to lent folios while the vector grows. The first `lent`
    // are this call's; the rest were a past call's, kept to be lent again.
    #[allow(clippy::vec_box, reason = "the C keeps pointers to each folio while more are lent")]
    folios: Vec<Box<CFolio>>,
    lent: usize,
    /// The folios the C lends itself (`env.pool`), [`POOL`] of them.
    pool: Vec<CFolio>,
    /// `filemap_get_read_batch()`'s `struct folio_batch`.
    read_batch: read::CFolioBatch,
    /// `BUG()` reported by the C before it trapped.
    bug: Option<(String, i32)>,
}

impl Frame {
    /// The frame behind a callback's context.
    ///
    /// # Safety
    /// `ctx` is the `env.ctx` of a live frame whose C call is running on this thread.
    unsafe fn of<'f>(ctx: *mut c_void) -> &'f mut Frame {
        &mut *(ctx as *mut Frame)
    }

    /// # Safety
    /// As [`Frame::of`]; the model is not otherwise borrowed while the C runs.
    unsafe fn model<'f>(&self) -> &'f mut Model<'static> {
        &mut *self.model
    }

    fn lend(&mut self, index: u64, order: u32, flags: c_ulong, cached: bool) -> *mut CFolio {
        let mapping = if cached { &mut self.mapping as *mut CAddressSpace } else { std::ptr::null_mut() };
        let radiff = &mut self.env as *mut CEnv;
        if self.lent == self.folios.len() {
            let pages = [0; FOLIO_PAGES - 1];
            self.folios.push(Box::new(CFolio { index, order, flags, mapping, radiff, page: 0, radiff_pages: pages }));
        } else {
            // The pages are never read: only the members are the call's.
            let f = &mut self.folios[self.lent];
            (f.index, f.order, f.flags, f.mapping, f.radiff) = (index, order, flags, mapping, radiff);
        }
        self.lent += 1;
        &mut *self.folios[self.lent - 1] as *mut CFolio
    }

    /// Lends the C the model's cache as it stands (`env.cache`): its bytes, or none while
    /// a folio with PG_dropbehind is cached (the C then asks the model for each lookup).
    fn see_cache(&mut self) {
        // SAFETY: the frame's call runs, its model live.
        let cache = &unsafe { self.model() }.cache;
        let (bytes, pages) = cache.bytes();
        let plain = !cache.has_dropbehind();
        self.env.cache = if plain { bytes } else { std::ptr::null() };
        self.env.cache_pages = if plain { pages as c_ulong } else { 0 };
    }

    /// Lends the cached `folio` with its flags as the model's cache holds them.
    fn lend_cached(&mut self, folio: FolioRef) -> *mut CFolio {
        // SAFETY: folios are lent while the frame's call runs, its model live.
        let dropbehind = unsafe { self.model() }.cache.test_dropbehind(folio.index);
        let mut flags = 0;
        if folio.readahead {
            flags |= PG_READAHEAD;
        }
        if folio.uptodate {
            flags |= PG_UPTODATE;
        } else {
            flags |= PG_LOCKED;
        }
        if dropbehind {
            flags |= PG_DROPBEHIND;
        }
        self.lend(folio.index, folio.order, flags, true)
    }
}

/// `file->f_mode` of a file with `FMODE_RANDOM` (POSIX_FADV_RANDOM) and `FMODE_NOREUSE`
/// (POSIX_FADV_NOREUSE) as the model keeps them.
fn f_mode(random: bool, noreuse: bool) -> c_uint {
    (if random { FMODE_RANDOM } else { 0 }) | (if noreuse { FMODE_NOREUSE } else { 0 })
}

/// What a call into the C is lent of the model's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lends {
    /// Every object of the frame, and the file's `f_ra`, taken back after the call.
    File,
    /// Every object of the frame; the file's `f_ra` and modes neither lent nor taken back.
    NoRa,
    /// As [`Lends::NoRa`], for a function given only the mapping
    /// (`filemap_get_read_batch()`): the frame's objects the mapping does not lead to are
    /// left as the last call set them ([`Model::renew_frame`]).
    Mapping,
}

/// The body `radiff_guard()` runs: the call `data` holds.
unsafe extern "C" fn guarded_body<F: FnOnce(&mut Frame)>(data: *mut c_void) {
    let (call, frame) = &mut *(data as *mut (Option<F>, *mut Frame));
    if let Some(call) = call.take() {
        call(&mut **frame);
    }
}

impl Model<'_> {
    /// The file system's `sb->s_maxbytes`, as the C reads it (`filemap_read()`).
    fn s_maxbytes(&self) -> i64 {
        i64::try_from(crate::sb::s_maxbytes(self.input.fs)).unwrap_or(i64::MAX)
    }

    /// A frame of the model's state for a call on `ractl`'s file, its pointers unset.
    fn fresh_frame(&mut self, c: &CReadahead, ractl: &ReadaheadControl) -> Frame {
        let mut frame = Frame {
            model: std::ptr::null_mut(),
            fd: 0,
            env: CEnv {
                ops: &OPS,
                ctx: std::ptr::null_mut(),
                cache: std::ptr::null(),
                cache_pages: 0,
                pool: std::ptr::null_mut(),
                pool_len: 0,
                pool_used: 0,
            },
            bdi: CBdi::default(),
            inode: CInode {
                i_mode: S_IFREG,
                i_size: 0,
                i_mapping: std::ptr::null_mut(),
                radiff_bdi: std::ptr::null_mut(),
                i_blkbits: BLOCK_SIZE.trailing_zeros() as u8,
                i_sb: std::ptr::null_mut(),
            },
            mapping: CAddressSpace {
                host: std::ptr::null_mut(),
                i_pages: 0,
                invalidate_lock: 0,
                gfp_mask: 0,
                flags: 0,
                a_ops: std::ptr::null(),
                radiff: std::ptr::null_mut(),
                radiff_min_order: 0,
                radiff_max_order: 0,
            },
            file: CFile {
                f_mode: 0,
                f_mapping: std::ptr::null_mut(),
                f_inode: std::ptr::null_mut(),
                f_lock: 0,
                f_op: &NO_FADVISE,
                f_ra: CFileRaState { raw: Default::default() },
                radiff_fd: 0,
            },
            rac: CReadaheadControl::blank(),
            vma: CVma::new(0, 0, 0, 0),
            vmf: CVmFault::new(0, 0, 0),
            pmd: CPmd::default(),
            vm_ops: CVmOps { map_pages: None },
            fault: std::ptr::null_mut(),
            aops: CAops::NONE,
            bios: Default::default(),
            sb: CSuperBlock { s_bdev: std::ptr::null_mut(), s_maxbytes: self.s_maxbytes() },
            folios: Vec::new(),
            pool: (0..POOL).map(|_| CFolio::blank()).collect(),
            read_batch: read::CFolioBatch::new(),
            ptes: Vec::new(),
            lent: 0,
            bug: None,
        };
        self.renew_frame(&mut frame, c, ractl, true);
        frame
    }

    /// Sets, in place, what a call on `ractl`'s file finds in a frame (a past call's, or a
    /// fresh one): the model's state, and every member the C may have changed; the
    /// folios, bios and page table it lends keep their storage. Its pointers are unset.
    /// Not `whole` (a call given only the mapping, thousands a prediction), only what the
    /// mapping leads to: its inode, bdi, super block and a_ops; the file, the control and
    /// the fault stay as the last call left them, out of the C's reach, and the next whole
    /// call sets them.
    fn renew_frame(&mut self, fr: &mut Frame, c: &CReadahead, ractl: &ReadaheadControl, whole: bool) {
        let fd = ractl.fd;
        fr.model = (self as *mut Model<'_>).cast::<Model<'static>>();
        fr.fd = fd;
        fr.env.ctx = std::ptr::null_mut();
        fr.env.pool_used = 0;
        fr.bdi = CBdi { ra_pages: self.bdi.ra_pages, io_pages: self.bdi.io_pages };
        fr.inode.i_mode = S_IFREG;
        fr.inode.i_size = self.isize as i64;
        fr.inode.i_blkbits = BLOCK_SIZE.trailing_zeros() as u8;
        let m = &mut fr.mapping;
        (m.i_pages, m.invalidate_lock, m.gfp_mask, m.flags) = (0, 0, 0, 0);
        m.a_ops = c.radiff_aops;
        (m.radiff_min_order, m.radiff_max_order) = (self.min_order(), self.max_order());
        fr.aops = fs::fs_aops(c, self.input.fs).unwrap_or(CAops::NONE);
        fr.bios.clear();
        fr.sb = CSuperBlock { s_bdev: std::ptr::null_mut(), s_maxbytes: self.s_maxbytes() };
        fr.lent = 0;
        fr.bug = None;
        if !whole {
            return;
        }
        let f = &mut fr.file;
        f.f_mode = f_mode(self.files[fd].random, self.files[fd].noreuse);
        (f.f_lock, f.f_op, f.radiff_fd) = (0, &NO_FADVISE, fd as c_uint);
        f.f_ra.raw = self.files[fd].ra_raw;
        fr.rac = CReadaheadControl {
            _index: ractl.index,
            _nr_pages: ractl.nr_pages as c_uint,
            dropbehind: ractl.dropbehind,
            ..CReadaheadControl::blank()
        };
        fr.vma = CVma::new(0, 0, 0, 0);
        fr.vmf = CVmFault::new(0, 0, 0);
        fr.pmd = CPmd::default();
        fr.vm_ops = CVmOps { map_pages: Some(fault::cb_map_pages) };
        fr.fault = std::ptr::null_mut();
    }

    /// Runs `call` (one of the C's kernel functions) on `ractl` with the model's state as
    /// its kernel: builds the kernel objects the C sees, lends them for the call, and
    /// takes back `file_ra_state` and the control's window.
    fn call_c<F: FnOnce(&mut Frame)>(&mut self, function: &'static str, ractl: &mut ReadaheadControl, call: F) {
        self.call_c_on(function, ractl, Lends::File, call)
    }

    /// [`Model::call_c`], lending what `lends` says: short of [`Lends::File`], the file's
    /// `f_ra` and modes are neither lent nor taken back, and the control is left as it was.
    fn call_c_on<F: FnOnce(&mut Frame)>(
        &mut self,
        function: &'static str,
        ractl: &mut ReadaheadControl,
        lends: Lends,
        call: F,
    ) {
        let with_file = lends == Lends::File;
        let c = self.c.expect("call_c without C functions");
        if self.crash.is_some() {
            return;
        }
        let fd = ractl.fd;
        // A call the C makes into the model that calls the C again finds no spare frame,
        // and makes its own (none does today: a file system's `a_ops` and `->map_pages`,
        // when they run as C, are called from the C directly).
        let mut frame = match self.c_frame.0.take() {
            Some(mut old) => {
                self.renew_frame(&mut old, c, ractl, lends != Lends::Mapping);
                old
            }
            None => Box::new(self.fresh_frame(c, ractl)),
        };
        let fr: *mut Frame = &mut *frame;
        // SAFETY: every pointer is into the boxed frame, which outlives the call.
        unsafe {
            (*fr).env.ctx = fr as *mut c_void;
            (*fr).env.pool = (*fr).pool.as_mut_ptr();
            (*fr).env.pool_len = (*fr).pool.len() as c_ulong;
            (*fr).see_cache();
            (*fr).inode.i_mapping = &mut (*fr).mapping;
            (*fr).inode.radiff_bdi = &mut (*fr).bdi;
            (*fr).inode.i_sb = &mut (*fr).sb;
            (*fr).mapping.host = &mut (*fr).inode;
            (*fr).mapping.radiff = &mut (*fr).env;
            if self.fs_runs_as_c() {
                (*fr).mapping.a_ops = &(*fr).aops;
            }
            (*fr).file.f_mapping = &mut (*fr).mapping;
            (*fr).file.f_inode = &mut (*fr).inode;
            (*fr).rac.file = &mut (*fr).file;
            (*fr).rac.mapping = &mut (*fr).mapping;
            (*fr).rac.ra = &mut (*fr).file.f_ra;
            (*fr).vma.vm_file = &mut (*fr).file;
            (*fr).vma.vm_ops = &(*fr).vm_ops;
            (*fr).vmf.vma = &mut (*fr).vma;
            (*fr).vmf.pmd = &mut (*fr).pmd;
            if with_file {
                c.set_ra(&mut (*fr).file.f_ra, &self.files[fd].ra);
            }
            (c.radiff_enter)(&mut (*fr).env);
            let signal = match c.radiff_guard {
                Some(guard) => {
                    // A crash jumps back into radiff_guard() over this call's frames, which
                    // own nothing to drop: the frame itself is owned out here.
                    let mut data: (Option<F>, *mut Frame) = (Some(call), fr);
                    guard(guarded_body::<F>, &mut data as *mut (Option<F>, *mut Frame) as *mut c_void)
                }
                None => {
                    call(&mut *fr);
                    0
                }
            };
            (c.radiff_enter)(std::ptr::null_mut());
            if signal != 0 {
                self.crash = Some(Crash { function, signal, bug: (*fr).bug.take(), op: Some(self.op), note: None });
                return;
            }
        }
        if !with_file {
            self.c_frame.0 = Some(frame);
            return;
        }
        // SAFETY: the frame's f_ra, of the tree's layout.
        self.files[fd].ra = unsafe { c.ra_model(&frame.file.f_ra) };
        self.files[fd].ra_raw = frame.file.f_ra.raw;
        // generic_fadvise() sets and clears them: the file's, as the C left them.
        self.files[fd].random = frame.file.f_mode & FMODE_RANDOM != 0;
        self.files[fd].noreuse = frame.file.f_mode & FMODE_NOREUSE != 0;
        ractl.index = frame.rac._index;
        ractl.nr_pages = frame.rac._nr_pages as u64;
        self.c_frame.0 = Some(frame);
    }

    /// The C's `page_cache_sync_ra()`, when the hybrid has it.
    pub(crate) fn c_page_cache_sync_ra(&mut self, ractl: &mut ReadaheadControl, req_count: u64) -> bool {
        let Some(f) = self.c.and_then(|c| c.page_cache_sync_ra) else { return false };
        // SAFETY: the frame's objects follow the header (see CReadahead's contract).
        self.call_c("page_cache_sync_ra", ractl, |fr| unsafe { f(&mut fr.rac, req_count) });
        self.rec.returned(&self.files[ractl.fd].ra);
        true
    }

    /// The C's `page_cache_async_ra()` on the cached `folio`, when the hybrid has it.
    pub(crate) fn c_page_cache_async_ra(&mut self, ractl: &mut ReadaheadControl, folio: FolioRef, req: u64) -> bool {
        let Some(f) = self.c.and_then(|c| c.page_cache_async_ra) else { return false };
        self.call_c("page_cache_async_ra", ractl, |fr| {
            let folio = fr.lend_cached(folio);
            // SAFETY: as above; the folio is the frame's.
            unsafe { f(&mut fr.rac, folio, req) }
        });
        self.rec.returned(&self.files[ractl.fd].ra);
        true
    }

    /// The C's `force_page_cache_ra()`, when the hybrid has it.
    pub(crate) fn c_force_page_cache_ra(&mut self, ractl: &mut ReadaheadControl, nr_to_read: u64) -> bool {
        let Some(f) = self.c.and_then(|c| c.force_page_cache_ra) else { return false };
        // SAFETY: as above.
        self.call_c("force_page_cache_ra", ractl, |fr| unsafe { f(&mut fr.rac, nr_to_read) });
        true
    }

    /// The C's `page_cache_ra_order()`, when the hybrid has it.
    pub(crate) fn c_page_cache_ra_order(&mut self, ractl: &mut ReadaheadControl) -> bool {
        let Some(f) = self.c.and_then(|c| c.page_cache_ra_order) else { return false };
        // SAFETY: as above; ra is the file's, in the frame.
        self.call_c("page_cache_ra_order", ractl, |fr| unsafe { f(&mut fr.rac, fr.rac.ra) });
        true
    }

    /// The C's `file_ra_state_init()` on every descriptor, when the hybrid has it: each
    /// file's `f_ra` zeroed (the tree's members too), then the C sets it up, with that
    /// descriptor's file as the mapping's.
    pub(crate) fn c_open_files(&mut self) {
        let Some(f) = self.c.and_then(|c| c.file_ra_state_init) else { return };
        let first = self.cur_file;
        for fd in 0..self.files.len() {
            self.switch_file(crate::pattern::file_of(fd as u32) as usize);
            self.files[fd].ra = FileRaState::default();
            self.files[fd].ra_raw = RaRaw::default();
            let mut ractl = ReadaheadControl { fd, index: 0, nr_pages: 0, may_shrink: false, dropbehind: false };
            // SAFETY: as above; the state and the mapping are the frame's.
            self.call_c("file_ra_state_init", &mut ractl, |fr| unsafe { f(&mut fr.file.f_ra, &mut fr.mapping) });
            if let Some(crash) = &mut self.crash {
                crash.op = None; // at open, not in a system call
                return;
            }
        }
        self.switch_file(first);
    }

    /// The C's `page_cache_ra_unbounded()`, when the hybrid has it.
    pub(crate) fn c_page_cache_ra_unbounded(&mut self, ractl: &mut ReadaheadControl, nr: u64, lookahead: u64) -> bool {
        let Some(f) = self.c.and_then(|c| c.page_cache_ra_unbounded) else { return false };
        // SAFETY: as above.
        self.call_c("page_cache_ra_unbounded", ractl, |fr| unsafe { f(&mut fr.rac, nr, lookahead) });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Policy;

    #[test]
    fn a_crash_says_in_which_system_call_or_that_it_was_at_open() {
        let c =
            |function, op| Crash { function, signal: 11, bug: Some(("mm/readahead.c".into(), 145)), op, note: None };
        assert_eq!(
            c("page_cache_sync_ra", Some(0)).to_string(),
            "page_cache_sync_ra() crashed with SIGSEGV in system call 0 of the scenario (BUG() at mm/readahead.c:145)"
        );
        let open = c("file_ra_state_init", None).to_string();
        assert!(open.starts_with("file_ra_state_init() crashed with SIGSEGV as a file was opened, before"), "{open}");
        let noted = Crash {
            signal: 31,
            bug: None,
            note: Some("the C made a system call (write)".into()),
            ..c("page_cache_async_ra", Some(1))
        };
        assert_eq!(
            noted.to_string(),
            "page_cache_async_ra() crashed with SIGSYS in system call 1 of the scenario; the C made a system call (write)"
        );
        let died = Crash { function: WORKER, signal: 9, bug: None, op: None, note: Some("did not answer".into()) };
        assert_eq!(died.to_string(), "radiff's hybrid worker did not answer (ended by signal 9)");
    }

    #[test]
    fn file_ra_state_crosses_to_radiff_ra_and_back_unchanged() {
        let ra =
            FileRaState { start: 48, size: 56, async_size: 56, ra_pages: 32, order: 6, mmap_miss: 3, prev_pos: -1 };
        assert_eq!(CRadiffRa::of(&ra).model(), ra);
    }

    fn header_size(name: &str) -> usize {
        let header = include_str!("../c/radiff_kernel.h");
        header
            .lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("the header defines {name}"))
    }

    #[test]
    fn the_struct_readahead_control_the_model_lends_is_the_size_the_header_allows() {
        assert_eq!(std::mem::size_of::<CReadaheadControl>(), header_size("RADIFF_RAC_SIZE"));
    }

    #[test]
    fn the_struct_file_ra_state_the_model_keeps_is_the_size_the_header_allows_and_ends_struct_file() {
        assert_eq!(std::mem::size_of::<CFileRaState>(), header_size("RADIFF_RA_SIZE"));
        // The C's f_ra may be shorter than the model's (a tree's members take less than the
        // room): nothing of struct file may follow it.
        assert_eq!(
            std::mem::offset_of!(CFile, f_ra) + std::mem::size_of::<CFileRaState>(),
            std::mem::size_of::<CFile>()
        );
    }

    #[test]
    fn without_a_table_every_function_is_the_rust_port() {
        let input = crate::Input {
            fs: crate::FsKind::Xfs,
            file_size: 1 << 20,
            extents: vec![crate::Extent { logical: 0, physical: 1 << 30, length: 1 << 20, flags: 0 }],
            queue: crate::QueueLimits::nvme_qemu(128, 512),
            mapping: crate::MappingLimits::xfs(),
            ops: vec![crate::Op::Read { fd: 0, offset: 0, len: 4096 }],
            folio_pfns: Vec::new(),
            vm: Default::default(),
            other_files: Vec::new(),
        };
        let mut m = Model::new(&input, Policy::BASE, Default::default(), false);
        let mut ractl = ReadaheadControl::new(0, 0);
        assert!(!m.c_page_cache_sync_ra(&mut ractl, 1));
        assert!(!m.c_page_cache_ra_order(&mut ractl));
    }
}
