//! Loading a compiled mm/readahead.c (`dlopen`) and building the model's table of its
//! kernel functions.

use std::ffi::{CStr, CString};
use std::path::Path;

use radiff_model::hybrid::{CAops, EnterFn};
use radiff_model::CReadahead;

use crate::error::{Error, Result};

/// The kernel functions of mm/readahead.c the model can run as C, in the model's order.
pub const FUNCTIONS: [&str; 5] = [
    "page_cache_sync_ra",
    "page_cache_async_ra",
    "force_page_cache_ra",
    "page_cache_ra_order",
    "page_cache_ra_unbounded",
];

/// A loaded shared object. It stays loaded for the life of the process: tables built from
/// it may be anywhere (explore's threads), and a tree's C is small.
pub struct Loaded {
    handle: *mut libc::c_void,
}

// SAFETY: a dlopen handle may be used from any thread (dlsym is thread-safe).
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dlopen error".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

impl Loaded {
    /// `dlopen()`s `so`, resolving every symbol now (a helper the header lacks is an
    /// error here, not a crash later).
    pub fn open(so: &Path) -> Result<Loaded> {
        let c = CString::new(so.as_os_str().as_encoded_bytes()).map_err(|e| Error::Other(e.to_string()))?;
        // SAFETY: loading a shared object radiff compiled from its own header; its
        // constructors are none (the header defines none and the kernel file has none).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(Error::Other(format!("dlopen {}: {}", so.display(), dlerror())));
        }
        Ok(Loaded { handle })
    }

    /// The address of `name`, if the object defines it.
    pub fn symbol(&self, name: &str) -> Option<*mut libc::c_void> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// The model's table: the functions of `only` (all of [`FUNCTIONS`] when `None`) that
    /// the object defines. An object without the header's `radiff_enter` or
    /// `radiff_aops` was not compiled by radiff: an error.
    pub fn table(&self, only: Option<&[&str]>) -> Result<CReadahead> {
        let need = |n: &str| {
            self.symbol(n).ok_or_else(|| Error::Other(format!("the hybrid object has no {n}: not built by radiff")))
        };
        let enter = need("radiff_enter")?;
        let aops = need("radiff_aops")?;
        let want = |n: &str| only.is_none_or(|o| o.contains(&n));
        let get = |n: &str| if want(n) { self.symbol(n) } else { None };
        // SAFETY: each symbol is the header's declaration of that kernel function, whose
        // C signature the model's type spells out (model/src/hybrid.rs).
        unsafe {
            Ok(CReadahead {
                page_cache_sync_ra: get("page_cache_sync_ra").map(|p| std::mem::transmute(p)),
                page_cache_async_ra: get("page_cache_async_ra").map(|p| std::mem::transmute(p)),
                force_page_cache_ra: get("force_page_cache_ra").map(|p| std::mem::transmute(p)),
                page_cache_ra_order: get("page_cache_ra_order").map(|p| std::mem::transmute(p)),
                page_cache_ra_unbounded: get("page_cache_ra_unbounded").map(|p| std::mem::transmute(p)),
                radiff_enter: std::mem::transmute::<*mut libc::c_void, EnterFn>(enter),
                radiff_aops: aops as *const CAops,
            })
        }
    }
}
