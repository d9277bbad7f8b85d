//! `struct file_ra_state` between the model and the C: the tree's own layout, which the
//! model keeps as bytes per descriptor and reads and writes only through the object's
//! generated `radiff_ra_load()` and `radiff_ra_store()` (docs/hybrid.md).

use std::ffi::c_ulong;

use super::CReadahead;
use crate::readahead::FileRaState;

/// `struct file_ra_state` as the C lays it out: the tree's own members, which the model
/// never reads itself (it asks the object's `radiff_ra_load()` and `radiff_ra_store()`, made
/// for the tree's struct), in the room the header allows (`RADIFF_RA_SIZE`). The model
/// keeps each open file's bytes from one call to the next ([`crate::model::File::ra_raw`]),
/// so a member a tree adds keeps its value.
pub type RaRaw = [u64; 8];

/// The room for a tree's `struct file_ra_state`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CFileRaState {
    pub raw: RaRaw,
}

/// The header's `struct radiff_ra`: the members of `struct file_ra_state` the model holds,
/// each as wide as the model holds it (the tree's may be narrower: the C converts).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CRadiffRa {
    pub start: c_ulong,
    pub size: c_ulong,
    pub async_size: c_ulong,
    pub ra_pages: c_ulong,
    pub order: c_ulong,
    pub mmap_miss: c_ulong,
    pub prev_pos: i64,
}

impl CRadiffRa {
    pub(super) fn of(ra: &FileRaState) -> Self {
        CRadiffRa {
            start: ra.start,
            size: ra.size,
            async_size: ra.async_size,
            ra_pages: ra.ra_pages,
            order: ra.order as c_ulong,
            mmap_miss: ra.mmap_miss,
            prev_pos: ra.prev_pos,
        }
    }

    pub(super) fn model(&self) -> FileRaState {
        FileRaState {
            start: self.start,
            size: self.size,
            async_size: self.async_size,
            ra_pages: self.ra_pages,
            order: self.order as u32,
            mmap_miss: self.mmap_miss,
            prev_pos: self.prev_pos,
        }
    }
}

/// The object's `void radiff_ra_load(const struct file_ra_state *, struct radiff_ra *)`.
pub type RaLoadFn = unsafe extern "C" fn(*const CFileRaState, *mut CRadiffRa);
/// The object's `void radiff_ra_store(struct file_ra_state *, const struct radiff_ra *)`.
pub type RaStoreFn = unsafe extern "C" fn(*mut CFileRaState, *const CRadiffRa);

impl CReadahead {
    /// The model's view of the C's `ra`.
    ///
    /// # Safety
    /// `ra` points to a `struct file_ra_state` of the tree's layout (a frame's, or the C's).
    pub(super) unsafe fn ra_model(&self, ra: *const CFileRaState) -> FileRaState {
        let mut m = CRadiffRa::default();
        (self.radiff_ra_load)(ra, &mut m);
        m.model()
    }

    /// Sets the members of the C's `ra` the model holds, keeping the rest.
    ///
    /// # Safety
    /// As [`CReadahead::ra_model`].
    pub(super) unsafe fn set_ra(&self, ra: *mut CFileRaState, from: &FileRaState) {
        (self.radiff_ra_store)(ra, &CRadiffRa::of(from));
    }
}
