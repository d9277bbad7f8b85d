//! The fault path's readahead as the tree's C: mm/filemap.c's `do_sync_mmap_readahead()`
//! and `do_async_mmap_readahead()`, which the harness takes from the tree's file (with the
//! macros and static functions of the file they use) and compiles beside mm/readahead.c.
//! The model lends them the fault's `struct vm_fault` and VMA; they call the tree's
//! `page_cache_sync_ra()`, `page_cache_async_ra()` and `page_cache_ra_order()` directly,
//! and whatever they leave in `file->f_ra` (`mmap_miss`, the window) is the file's after
//! the call (docs/hybrid.md).

use std::ffi::{c_uint, c_ulong};

use super::{CFile, CFolio, Frame};
use crate::fault::VmFault;
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
}

/// `struct vm_fault`, the members the fault path's readahead reads.
#[repr(C)]
#[derive(Debug)]
pub struct CVmFault {
    pub vma: *mut CVma,
    pub pgoff: c_ulong,
    pub address: c_ulong,
    /// `enum fault_flag`'s bits.
    pub flags: c_uint,
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
        let vma = CVma {
            vm_start: (map.vstart + vmf.vma.start) << crate::model::PAGE_SHIFT,
            vm_end: (map.vstart + vmf.vma.end) << crate::model::PAGE_SHIFT,
            vm_pgoff: map.pgoff + vmf.vma.start,
            vm_flags: vmf.vma.flags as u64,
            vm_file: std::ptr::null_mut(),
        };
        let mut flags = FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE | FAULT_FLAG_USER;
        if vmf.tried {
            flags |= FAULT_FLAG_TRIED;
        }
        if vmf.vma_lock {
            flags |= FAULT_FLAG_VMA_LOCK;
        }
        let c_vmf = CVmFault {
            vma: std::ptr::null_mut(),
            pgoff: vmf.pgoff,
            address: vmf.vpn << crate::model::PAGE_SHIFT,
            flags,
        };
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
            fr.vma = CVma { vm_file: fr.vma.vm_file, ..vma };
            fr.vmf = CVmFault { vma: fr.vmf.vma, ..c_vmf };
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
        let dropbehind = self.cache.test_dropbehind(folio.index);
        Some(self.call_fault("do_async_mmap_readahead", vmf, |fr| {
            let folio = fr.lend_cached(folio, dropbehind);
            // SAFETY: as above; the folio is the frame's.
            unsafe { f(&mut fr.vmf, folio) }
        }))
    }
}
