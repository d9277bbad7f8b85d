//! Kernel variants as policies over the base algorithm: each patch the model knows is a
//! named switch at the place in the algorithm where the patch changes the kernel.

use serde::{Deserialize, Serialize};

/// How `page_cache_async_ra()` aligns the end of a new window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AsyncAlign {
    /// Linux 7.3.4: round the end down to `1 << min(ra->order, ffs(max_pages) - 1)`.
    Base,
    /// Seed 000 v1: halve that alignment until the trim keeps at least half of the window.
    KeepHalf,
    /// Seed 000 v2 (the design agreed in the thread): no alignment in
    /// `page_cache_async_ra()`; `page_cache_ra_order()` aligns the end after clamping
    /// `new_order`, stepping `new_order` down until the trim keeps at least half of the window.
    InRaOrder,
    /// No end-of-window alignment at all, as before 18ebe55a9236 ("mm/readahead: terminate
    /// async readahead on natural boundary"). No kernel variant uses it: radiff's own tests
    /// predict with it to check that a model missing the alignment fails them.
    Unaligned,
}

/// A kernel variant, as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Policy {
    pub async_align: AsyncAlign,
    /// Seed 001: with readahead disabled, `page_cache_sync_ra()` reads the whole request
    /// instead of one page.
    pub sync_ra_when_disabled: bool,
    /// Seed 003: f2fs expands each readahead to the extent that holds it
    /// (`readahead_expand()` in `f2fs_mpage_readpages()`).
    pub f2fs_extent_ra: bool,
}

impl Policy {
    pub const BASE: Policy =
        Policy { async_align: AsyncAlign::Base, sync_ra_when_disabled: false, f2fs_extent_ra: false };

    /// The policy for a variant of `kernels/variants/`, by its directory name.
    pub fn for_variant(name: &str) -> Option<Policy> {
        let base = Policy::BASE;
        Some(match name {
            "base" => base,
            "async-align-v1" => Policy { async_align: AsyncAlign::KeepHalf, ..base },
            "async-align-v2" => Policy { async_align: AsyncAlign::InRaOrder, ..base },
            "sync-ra-when-disabled" => Policy { sync_ra_when_disabled: true, ..base },
            "f2fs-extent-ra" => Policy { f2fs_extent_ra: true, ..base },
            _ => return None,
        })
    }

    /// Every variant name the model has a policy for.
    pub const KNOWN: [&'static str; 5] =
        ["base", "async-align-v1", "async-align-v2", "sync-ra-when-disabled", "f2fs-extent-ra"];
}
