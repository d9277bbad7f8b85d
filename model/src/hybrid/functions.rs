//! The one table of the kernel functions the hybrid runs as its tree's C: the entries the
//! model calls (each a field of [`CReadahead`], a symbol the harness looks up, a name
//! `hybrid-check` prints) and the static functions the C calls itself. The harness's
//! symbol list and port-check's verdicts derive from it (harness/src/hybrid).

use std::ffi::c_void;

use super::read::{FilemapReadFn, GetPagesFn, GetReadBatchFn};
use super::{
    AsyncMmapRaFn, AsyncRaFn, CAops, EnterFn, ForceRaFn, GenericFadviseFn, GuardFn, MadviseWillneedFn, MapPagesFn,
    RaInitFn, RaLoadFn, RaOrderFn, RaStoreFn, RaUnboundedFn, ReadFolioFn, ReadaheadFn, SyncMmapRaFn, SyncRaFn,
    VmFaultFn,
};

/// A kernel function that runs as C: its name and the tree's file that defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CFunction {
    pub name: &'static str,
    pub file: &'static str,
}

/// The table: each entry the model calls, with its C type and its file, once. From it,
/// [`CReadahead`]'s fields, [`ENTRIES`], [`CReadahead::functions`] and
/// [`CReadahead::from_symbols`].
macro_rules! entries {
    ($( $(#[$doc:meta])* $name:ident: $ty:ty, $file:literal; )*) => {
        /// A tree's C as loaded: the kernel functions the model calls in place of its port
        /// (each `None` keeps the Rust port of that function), the header's
        /// `radiff_enter`, `radiff_aops` and crash guard.
        ///
        /// The functions are called with the model's structs and must follow the header's
        /// contract; the harness builds this table from a shared object it compiled from
        /// the header and loaded (and keeps loaded for as long as the table lives).
        #[derive(Clone, Copy, Debug)]
        pub struct CReadahead {
            $( $(#[$doc])* pub $name: Option<$ty>, )*
            pub radiff_enter: EnterFn,
            /// The object's converters between the tree's `struct file_ra_state` and the
            /// model's `struct radiff_ra`.
            pub radiff_ra_load: RaLoadFn,
            pub radiff_ra_store: RaStoreFn,
            pub radiff_aops: *const CAops,
            /// The header's crash guard; `None` runs the C unguarded (a crash ends the process).
            pub radiff_guard: Option<GuardFn>,
        }

        /// The kernel functions the model calls as C, in the model's order.
        pub const ENTRIES: &[CFunction] = &[$( CFunction { name: stringify!($name), file: $file } ),*];

        impl CReadahead {
            /// The kernel functions the table has, by name.
            pub fn functions(&self) -> Vec<&'static str> {
                let mut out = Vec::new();
                $( if self.$name.is_some() { out.push(stringify!($name)); } )*
                out
            }

            /// The table of the entries `symbol` finds by name (the harness's loader reads
            /// each from the object's `radiff_entry_NAME`), with the header's
            /// `radiff_enter`, `radiff_aops` and guard.
            ///
            /// # Safety
            /// Each address `symbol` gives is the C function of that name, compiled from
            /// radiff's header, whose signature the entry's type spells out; it stays
            /// loaded for as long as the table lives.
            pub unsafe fn from_symbols(
                symbol: impl Fn(&str) -> Option<*mut c_void>,
                radiff_enter: EnterFn,
                ra: (RaLoadFn, RaStoreFn),
                radiff_aops: *const CAops,
                radiff_guard: Option<GuardFn>,
            ) -> CReadahead {
                CReadahead {
                    $( $name: symbol(stringify!($name))
                        .map(|p| std::mem::transmute::<*mut c_void, $ty>(p)), )*
                    radiff_enter,
                    radiff_ra_load: ra.0,
                    radiff_ra_store: ra.1,
                    radiff_aops,
                    radiff_guard,
                }
            }
        }
    };
}

entries! {
    page_cache_sync_ra: SyncRaFn, "mm/readahead.c";
    page_cache_async_ra: AsyncRaFn, "mm/readahead.c";
    force_page_cache_ra: ForceRaFn, "mm/readahead.c";
    page_cache_ra_order: RaOrderFn, "mm/readahead.c";
    page_cache_ra_unbounded: RaUnboundedFn, "mm/readahead.c";
    /// Called for each descriptor before the first system call, on a zeroed `f_ra`, as
    /// `do_dentry_open()` calls it after `init_file()`'s memset.
    file_ra_state_init: RaInitFn, "mm/readahead.c";
    /// Called for every fadvise(2), readahead(2) and madvise(MADV_WILLNEED) of a file, as
    /// the file system's ->fadvise does (f2fs's SEQUENTIAL is its own: the Rust port).
    generic_fadvise: GenericFadviseFn, "mm/fadvise.c";
    /// Called where a fault finds no folio (`filemap_fault()`), taken from the tree's
    /// mm/filemap.c with the file's macros and static functions it uses.
    do_sync_mmap_readahead: SyncMmapRaFn, "mm/filemap.c";
    /// Called where a fault finds a folio.
    do_async_mmap_readahead: AsyncMmapRaFn, "mm/filemap.c";
    /// Called for each batch of cached folios the read path looks up (`filemap_get_pages()`),
    /// taken from the tree's mm/filemap.c as the fault path's functions are.
    filemap_get_read_batch: GetReadBatchFn, "mm/filemap.c";
    /// Called for every read() through the page cache, taken from the tree's mm/filemap.c
    /// with the static functions it calls (the batch's walk among them).
    filemap_read: FilemapReadFn, "mm/filemap.c";
    /// Called for each batch of a splice (`filemap_splice_read()`, which stays the Rust
    /// port), and of a read where `filemap_read()` is not C: `filemap_read()`'s own, so a
    /// tree's change to it is followed on both paths.
    filemap_get_pages: GetPagesFn, "mm/filemap.c";
    /// Fault-around's `->map_pages` (`do_fault_around()` calls it): maps the cached
    /// folios around a read fault, taken from the tree's mm/filemap.c with its static helpers.
    filemap_map_pages: MapPagesFn, "mm/filemap.c";
    /// An f2fs file's `->readahead`, taken from the tree's fs/f2fs/data.c with the static
    /// functions it calls: the C `read_pages()` calls it through the mapping's a_ops.
    f2fs_readahead: ReadaheadFn, "fs/f2fs/data.c";
    /// An f2fs file's `->read_folio`.
    f2fs_read_data_folio: ReadFolioFn, "fs/f2fs/data.c";
    /// An ext4 file's `->readahead`, from the tree's fs/ext4/readpage.c.
    ext4_readahead: ReadaheadFn, "fs/ext4/readpage.c";
    /// An ext4 file's `->read_folio`.
    ext4_read_folio: ReadFolioFn, "fs/ext4/readpage.c";
    /// Called for MADV_WILLNEED on each VMA of the range (`madvise_walk_vmas()`), taken
    /// from the tree's mm/madvise.c with its `struct madvise_behavior`, through the
    /// header's shim.
    madvise_willneed: MadviseWillneedFn, "mm/madvise.c";
    /// Called for each read fault when `fault_around_pages` > 1, taken from the tree's
    /// mm/memory.c; its `->map_pages` is the model's `filemap_map_pages()`.
    do_fault_around: VmFaultFn, "mm/memory.c";
    /// Called after `->fault` found the folio (`do_read_fault()`): maps it, by a PMD, the
    /// whole folio or its one page, taken from the tree's mm/memory.c.
    finish_fault: VmFaultFn, "mm/memory.c";
}

/// The static functions the entries' C calls itself, not exported and never called by the
/// model: a tree that changes one runs it as C with its file.
pub const STATICS: &[CFunction] = &[
    CFunction { name: "do_page_cache_ra", file: "mm/readahead.c" },
    CFunction { name: "read_pages", file: "mm/readahead.c" },
    CFunction { name: "ractl_alloc_folio", file: "mm/readahead.c" },
    CFunction { name: "ra_alloc_folio", file: "mm/readahead.c" },
    CFunction { name: "get_init_ra_size", file: "mm/readahead.c" },
    CFunction { name: "get_next_ra_size", file: "mm/readahead.c" },
    CFunction { name: "ractl_max_pages", file: "mm/readahead.c" },
    CFunction { name: "f2fs_mpage_readpages", file: "fs/f2fs/data.c" },
    CFunction { name: "f2fs_read_single_page", file: "fs/f2fs/data.c" },
    CFunction { name: "ext4_mpage_readpages", file: "fs/ext4/readpage.c" },
    CFunction { name: "next_uptodate_folio", file: "mm/filemap.c" },
    CFunction { name: "filemap_map_pmd", file: "mm/filemap.c" },
    CFunction { name: "filemap_map_folio_range", file: "mm/filemap.c" },
    CFunction { name: "filemap_map_order0_folio", file: "mm/filemap.c" },
    CFunction { name: "vmf_pte_changed", file: "mm/memory.c" },
    // mm/readahead.c's miss walks, taken from the tree's mm/filemap.c into its unit.
    CFunction { name: "page_cache_next_miss", file: "mm/filemap.c" },
    CFunction { name: "page_cache_prev_miss", file: "mm/filemap.c" },
    CFunction { name: "pte_range_none", file: "mm/memory.c" },
    // filemap_read()'s own (filemap_get_pages() is an entry: a splice calls it).
    CFunction { name: "filemap_readahead", file: "mm/filemap.c" },
    CFunction { name: "filemap_create_folio", file: "mm/filemap.c" },
    CFunction { name: "filemap_update_page", file: "mm/filemap.c" },
    CFunction { name: "filemap_read_folio", file: "mm/filemap.c" },
    CFunction { name: "filemap_range_uptodate", file: "mm/filemap.c" },
    CFunction { name: "filemap_end_dropbehind_read", file: "mm/filemap.c" },
    CFunction { name: "filemap_end_dropbehind", file: "mm/filemap.c" },
];

/// Every function the hybrid runs as C: the entries, then the statics.
pub fn runs_as_c() -> impl Iterator<Item = &'static CFunction> {
    ENTRIES.iter().chain(STATICS)
}

/// The function of that name, if it runs as C.
pub fn runs_as_c_named(name: &str) -> Option<&'static CFunction> {
    runs_as_c().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn enter(_: *mut super::super::CEnv) {}
    unsafe extern "C" fn ra_load(_: *const super::super::CFileRaState, _: *mut super::super::CRadiffRa) {}
    unsafe extern "C" fn ra_store(_: *mut super::super::CFileRaState, _: *const super::super::CRadiffRa) {}

    #[test]
    fn a_table_built_from_symbols_has_the_entries_found_and_names_them_in_the_tables_order() {
        // Any non-null address stands for a symbol: the table is never called here.
        let found = ["file_ra_state_init", "page_cache_sync_ra"];
        let symbol = |n: &str| found.contains(&n).then_some(enter as *mut c_void);
        // SAFETY: nothing in the table is called.
        let c = unsafe { CReadahead::from_symbols(symbol, enter, (ra_load, ra_store), std::ptr::null(), None) };
        assert_eq!(c.functions(), ["page_cache_sync_ra", "file_ra_state_init"]);
        assert!(c.page_cache_async_ra.is_none());
    }

    #[test]
    fn every_function_runs_as_c_once_entries_first() {
        let names: Vec<&str> = runs_as_c().map(|f| f.name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert_eq!(names[..ENTRIES.len()], ENTRIES.iter().map(|f| f.name).collect::<Vec<_>>()[..]);
        assert_eq!(runs_as_c_named("read_pages").map(|f| f.file), Some("mm/readahead.c"));
        assert_eq!(runs_as_c_named("filemap_get_pages").map(|f| f.file), Some("mm/filemap.c"));
        assert_eq!(runs_as_c_named("filemap_splice_read"), None);
    }
}
