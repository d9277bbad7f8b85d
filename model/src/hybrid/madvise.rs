//! mm/madvise.c's `madvise_willneed()` as the tree's C: the harness takes it from the
//! tree's file with the file's own `struct madvise_behavior` (and what that uses), and the
//! header's shim fills that struct from the VMA and the range the model gives it. The C
//! computes the file offset from the VMA and calls `vfs_fadvise()`, that is the tree's
//! `generic_fadvise()` in mm/fadvise.c's unit, on the frame's file (docs/hybrid.md).

use std::ffi::{c_long, c_ulong};

use super::fault::CVma;
use crate::fault::Vma;
use crate::model::{Model, PAGE_SHIFT};
use crate::readahead::ReadaheadControl;

/// `radiff_shim_madvise_willneed(vma, start, end)`: the tree's `madvise_willneed()` on
/// `[start, end)` (addresses) of `vma`, under the mmap read lock.
pub type MadviseWillneedFn = unsafe extern "C" fn(*mut CVma, c_ulong, c_ulong) -> c_long;

impl Model<'_> {
    /// The C's `madvise_willneed()` on pages `[start, end)` of mapping `map`, all in its
    /// VMA `vma`, when the hybrid has it.
    pub(crate) fn c_madvise_willneed(&mut self, map: usize, vma: Vma, start: u64, end: u64) -> bool {
        let Some(f) = self.c.and_then(|c| c.madvise_willneed) else { return false };
        let area = self.mm[map].as_ref().expect("madvise in a mapping");
        let c_vma = CVma::new(
            (area.vstart + vma.start) << PAGE_SHIFT,
            (area.vstart + vma.end) << PAGE_SHIFT,
            area.pgoff + vma.start,
            vma.flags as u64,
        );
        let (from, to) = ((area.vstart + start) << PAGE_SHIFT, (area.vstart + end) << PAGE_SHIFT);
        let mut ractl = ReadaheadControl::new(area.fd, 0);
        self.call_c("madvise_willneed", &mut ractl, |fr| {
            fr.vma = CVma { vm_file: fr.vma.vm_file, vm_ops: fr.vma.vm_ops, ..c_vma };
            // SAFETY: the frame's VMA and file follow the header; the file's f_op is the
            // frame's (no ->fadvise).
            unsafe { f(&mut fr.vma, from, to) };
        });
        true
    }
}
