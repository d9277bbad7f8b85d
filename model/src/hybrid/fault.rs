//! The fault path's readahead as the tree's C: mm/filemap.c's `do_sync_mmap_readahead()`
//! and `do_async_mmap_readahead()`, which the harness takes from the tree's file (with the
//! macros and static functions of the file they use) and compiles beside mm/readahead.c.
//! The model lends them the fault's `struct vm_fault` and VMA; they call the tree's
//! `page_cache_sync_ra()`, `page_cache_async_ra()` and `page_cache_ra_order()` directly,
//! and whatever they leave in `file->f_ra` (`mmap_miss`, the window) is the file's after
//! the call (docs/hybrid.md).

use std::ffi::{c_uint, c_ulong, c_void};

use super::{CFile, CFolio, Frame, InRust, Lends};
use crate::fault::{Pmd, VmFault};
use crate::model::Model;
use crate::pagecache::FolioRef;
use crate::readahead::ReadaheadControl;

/// `struct vm_area_struct`: the VMA a fault is in, as the fault path's readahead reads it.
#[repr(C)]
#[derive(Debug)]
pub struct CVma {
    pub vm_start: c_ulong,
    pub vm_end: c_ulong,
    pub vm_pgoff: c_ulong,
    /// The model's own `VM_*` bits (model/src/fault.rs), which the header names.
    pub vm_flags: c_ulong,
    pub vm_file: *mut CFile,
    /// `struct mm_struct *vm_mm`: NULL (the mmap lock and the page tables are the model's).
    pub vm_mm: *mut c_void,
    /// `const struct vm_operations_struct *vm_ops`: the frame's.
    pub vm_ops: *const CVmOps,
}

impl CVma {
    /// A VMA of `[vm_start, vm_end)` (addresses) at file page `vm_pgoff`, the frame to
    /// fill in its file and operations.
    pub(super) fn new(vm_start: u64, vm_end: u64, vm_pgoff: u64, vm_flags: u64) -> CVma {
        CVma {
            vm_start,
            vm_end,
            vm_pgoff,
            vm_flags,
            vm_file: std::ptr::null_mut(),
            vm_mm: std::ptr::null_mut(),
            vm_ops: std::ptr::null(),
        }
    }
}

/// The header's `RADIFF_PMD_TABLE` and `RADIFF_PMD_HUGE`.
const PMD_TABLE: c_ulong = 1;
const PMD_HUGE: c_ulong = 2;

/// `pmd_t`: 0 for none, else the model's [`crate::fault::Pmd`] (`PMD_TABLE`: a page table, `PMD_HUGE`: a huge mapping).
#[repr(C)]
#[derive(Debug, Default)]
pub struct CPmd {
    pub pmd: c_ulong,
}

/// `struct vm_operations_struct`, its one member the C calls.
#[repr(C)]
#[derive(Debug)]
pub struct CVmOps {
    pub map_pages: Option<MapPagesFn>,
}

/// `vm_fault_t (*map_pages)(struct vm_fault *, pgoff_t start_pgoff, pgoff_t end_pgoff)`.
pub type MapPagesFn = unsafe extern "C" fn(*mut CVmFault, c_ulong, c_ulong) -> c_uint;
/// `vm_fault_t (*)(struct vm_fault *)`: mm/memory.c's `do_fault_around()` (static) and
/// `finish_fault()`.
pub type VmFaultFn = unsafe extern "C" fn(*mut CVmFault) -> c_uint;

/// `struct vm_fault`, the members the fault path's readahead and fault-around read.
#[repr(C)]
#[derive(Debug)]
pub struct CVmFault {
    pub vma: *mut CVma,
    pub pgoff: c_ulong,
    pub address: c_ulong,
    /// `enum fault_flag`'s bits.
    pub flags: c_uint,
    /// The PMD the faulting address is under: the frame's.
    pub pmd: *mut CPmd,
    /// `pgtable_t prealloc_pte`: what `pte_alloc_one()` gave (the model's page table is
    /// installed by its `filemap_map_pmd()`), or NULL.
    pub prealloc_pte: *mut c_void,
    /// `pte_t *pte`, `spinlock_t *ptl`: where `filemap_map_pages()` stands in the frame's
    /// page table (`Frame::ptes`), and its lock (none).
    pub pte: *mut u8,
    pub ptl: *mut c_void,
    /// `struct page *page`, `*cow_page`: the page `->fault` found, in the lent folio (a read
    /// fault copies none); `pte_t orig_pte`, never read (no FAULT_FLAG_ORIG_PTE_VALID).
    pub page: *mut u8,
    pub cow_page: *mut u8,
    pub orig_pte: u8,
}

impl CVmFault {
    pub(super) fn new(pgoff: u64, address: u64, flags: c_uint) -> CVmFault {
        CVmFault {
            vma: std::ptr::null_mut(),
            pgoff,
            address,
            flags,
            pmd: std::ptr::null_mut(),
            prealloc_pte: std::ptr::null_mut(),
            pte: std::ptr::null_mut(),
            ptl: std::ptr::null_mut(),
            page: std::ptr::null_mut(),
            cow_page: std::ptr::null_mut(),
            orig_pte: 0,
        }
    }
}

/// `static struct file *do_sync_mmap_readahead(struct vm_fault *)` (mm/filemap.c): the
/// file it pinned (the fault lock dropped), or NULL.
pub type SyncMmapRaFn = unsafe extern "C" fn(*mut CVmFault) -> *mut CFile;
/// `static struct file *do_async_mmap_readahead(struct vm_fault *, struct folio *)`.
pub type AsyncMmapRaFn = unsafe extern "C" fn(*mut CVmFault, *mut CFolio) -> *mut CFile;
/// `enum fault_flag`'s bits the model's faults carry (include/linux/mm_types.h).
const FAULT_FLAG_ALLOW_RETRY: c_uint = 1 << 2;
const FAULT_FLAG_KILLABLE: c_uint = 1 << 4;
const FAULT_FLAG_TRIED: c_uint = 1 << 5;
const FAULT_FLAG_USER: c_uint = 1 << 6;
const FAULT_FLAG_VMA_LOCK: c_uint = 1 << 12;

impl Model<'_> {
    /// The fault's VMA and `struct vm_fault` as the C sees them (its pointers are the
    /// frame's, set by `call_c`): a user fault that may retry, FAULT_FLAG_TRIED on the retry.
    fn c_fault(&self, vmf: &VmFault) -> (CVma, CVmFault) {
        let map = self.mm[vmf.map].as_ref().expect("a fault in a mapping");
        let vma = CVma::new(
            (map.vstart + vmf.vma.start) << crate::model::PAGE_SHIFT,
            (map.vstart + vmf.vma.end) << crate::model::PAGE_SHIFT,
            map.pgoff + vmf.vma.start,
            vmf.vma.flags as u64,
        );
        let mut flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE | FAULT_FLAG_USER;
        if vmf.tried {
            flags |= FAULT_FLAG_TRIED;
        }
        if vmf.vma_lock {
            flags |= FAULT_FLAG_VMA_LOCK;
        }
        let c_vmf = CVmFault::new(vmf.pgoff, vmf.vpn << crate::model::PAGE_SHIFT, flags);
        (vma, c_vmf)
    }

    /// Runs `call` (one of the fault path's C functions) for the fault `vmf`, with the
    /// fault's VMA and `struct vm_fault` in the frame: whether it dropped the fault lock
    /// (returned a file).
    fn call_fault(
        &mut self,
        function: &'static str,
        vmf: &VmFault,
        call: impl FnOnce(&mut Frame) -> *mut CFile,
    ) -> bool {
        let fd = self.mm[vmf.map].as_ref().expect("a fault in a mapping").fd;
        let (vma, c_vmf) = self.c_fault(vmf);
        let mut ractl = ReadaheadControl::new(fd, vmf.pgoff);
        let mut fpin = false;
        self.call_c(function, &mut ractl, |fr| {
            fr.vma = CVma { vm_file: fr.vma.vm_file, vm_ops: fr.vma.vm_ops, ..vma };
            fr.vmf = CVmFault { vma: fr.vmf.vma, pmd: fr.vmf.pmd, ..c_vmf };
            fpin = !call(fr).is_null();
        });
        fpin
    }

    /// The C's `do_sync_mmap_readahead()`, when the hybrid has it: whether it dropped the
    /// fault lock.
    pub(crate) fn c_do_sync_mmap_readahead(&mut self, vmf: &VmFault) -> Option<bool> {
        let f = self.c.and_then(|c| c.do_sync_mmap_readahead)?;
        // SAFETY: the frame's objects follow the header; the VMA's file is the frame's.
        Some(self.call_fault("do_sync_mmap_readahead", vmf, |fr| unsafe { f(&mut fr.vmf) }))
    }

    /// The C's `do_async_mmap_readahead()` on the cached `folio`, when the hybrid has it.
    pub(crate) fn c_do_async_mmap_readahead(&mut self, vmf: &VmFault, folio: FolioRef) -> Option<bool> {
        let f = self.c.and_then(|c| c.do_async_mmap_readahead)?;
        Some(self.call_fault("do_async_mmap_readahead", vmf, |fr| {
            let folio = fr.lend_cached(folio);
            // SAFETY: as above; the folio is the frame's.
            unsafe { f(&mut fr.vmf, folio) }
        }))
    }

    /// The C's `do_fault_around()` (mm/memory.c) for the fault `vmf`, when the hybrid has
    /// it: what `->map_pages` returned. Its `->map_pages` is the tree's
    /// `filemap_map_pages()` when the hybrid has it, else the model's ([`cb_map_pages`],
    /// which keeps `mmap_miss` in the model's file itself).
    pub(crate) fn c_do_fault_around(&mut self, vmf: &mut VmFault) -> Option<u32> {
        let f = self.c.and_then(|c| c.do_fault_around)?;
        // The f_ra is the tree's filemap_map_pages()'s, when it is called from here.
        let lends_ra = self.c.is_some_and(|c| c.filemap_map_pages.is_some());
        // SAFETY: the frame's objects follow the header.
        Some(self.call_on_fault("do_fault_around", vmf, lends_ra, |fr| unsafe { f(&mut fr.vmf) }))
    }

    /// The C's `finish_fault()` (mm/memory.c) for the fault `vmf`, whose folio `->fault`
    /// found, when the hybrid has it: what it returned.
    pub(crate) fn c_finish_fault(&mut self, vmf: &mut VmFault) -> Option<u32> {
        let f = self.c.and_then(|c| c.finish_fault)?;
        let folio = vmf.folio.expect("finish_fault without a folio");
        let page = (vmf.pgoff - folio.index) as usize;
        Some(self.call_on_fault("finish_fault", vmf, false, |fr| {
            let folio = fr.lend_cached(folio);
            // SAFETY: the page lies in the lent folio's pages (`folio_page()`); the frame's
            // objects follow the header.
            unsafe {
                fr.vmf.page = std::ptr::addr_of_mut!((*folio).page).add(page);
                f(&mut fr.vmf)
            }
        }))
    }

    /// Runs `call` (fault-around's C, or `finish_fault()`) for the fault `vmf`, with its
    /// VMA, `struct vm_fault`, PMD (a page table preallocated where it is none, as
    /// `do_fault_around()` does) and `->map_pages` in the frame; the file's `f_ra` is lent
    /// and taken back when `lends_ra` (the tree's `filemap_map_pages()` keeps `mmap_miss`).
    pub(super) fn call_on_fault(
        &mut self,
        function: &'static str,
        vmf: &mut VmFault,
        lends_ra: bool,
        call: impl FnOnce(&mut Frame) -> c_uint,
    ) -> c_uint {
        let map_pages = self.c.and_then(|c| c.filemap_map_pages);
        let area = self.mm[vmf.map].as_ref().expect("a fault in a mapping");
        let pmd = match area.pmd(vmf.vpn) {
            None => 0,
            Some(Pmd::Table) => PMD_TABLE,
            Some(Pmd::Huge) => PMD_HUGE,
        };
        let (vma, mut c_vmf) = self.c_fault(vmf);
        if pmd == 0 {
            // pte_alloc_one()'s page: the model installs its own (pmd_install()); never read.
            c_vmf.prealloc_pte = std::ptr::NonNull::<c_void>::dangling().as_ptr();
        }
        let mut ractl = ReadaheadControl::new(area.fd, vmf.pgoff);
        let rust_vmf: *mut VmFault = vmf;
        let mut ret = 0;
        self.call_c_on(function, &mut ractl, if lends_ra { Lends::File } else { Lends::NoRa }, |fr| {
            fr.vma = CVma { vm_file: fr.vma.vm_file, vm_ops: fr.vma.vm_ops, ..vma };
            fr.vmf = CVmFault { vma: fr.vmf.vma, pmd: fr.vmf.pmd, ..c_vmf };
            fr.pmd = CPmd { pmd };
            fr.fault = rust_vmf;
            if map_pages.is_some() {
                fr.vm_ops.map_pages = map_pages;
            }
            ret = call(fr);
        });
        ret
    }
}

/// `->map_pages` of the frame's VMA: the model's `filemap_map_pages()` on the fault the
/// C's `do_fault_around()` was called for.
pub(super) unsafe extern "C" fn cb_map_pages(vmf: *mut CVmFault, start: c_ulong, end: c_ulong) -> c_uint {
    // The kernel's way to its state: the VMA's file's mapping.
    let ctx = (*(*(*(*(*vmf).vma).vm_file).f_mapping).radiff).ctx;
    let _in_rust = InRust::on(ctx);
    let fr = Frame::of(ctx);
    fr.model().filemap_map_pages(&mut *fr.fault, start, end)
}

/// `fault_around_pages` (mm/memory.c's static), as the model holds it.
pub(super) unsafe extern "C" fn cb_fault_around_pages(ctx: *mut c_void) -> c_ulong {
    let _in_rust = InRust::on(ctx);
    Frame::of(ctx).model().fault_around_pages()
}
