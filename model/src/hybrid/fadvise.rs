//! mm/fadvise.c's `generic_fadvise()` as the tree's C, in the object beside mm/readahead.c:
//! its POSIX_FADV_WILLNEED reaches the C `force_page_cache_ra()` through the header's
//! `force_page_cache_readahead()`, its DONTNEED evicts through the model's
//! `mapping_try_invalidate()`, and what it does to `file->f_mode` and `file->f_ra` is read
//! back into the model's file after the call (docs/hybrid.md).

use std::ffi::{c_int, c_ulong, c_void};

use super::{Frame, InRust};
use crate::model::Model;
use crate::pattern::Advice;
use crate::readahead::ReadaheadControl;

/// The advice's number, as include/uapi/linux/fadvise.h gives it on x86-64.
pub(crate) fn advice_number(advice: Advice) -> c_int {
    match advice {
        Advice::Normal => 0,
        Advice::Random => 1,
        Advice::Sequential => 2,
        Advice::Willneed => 3,
        Advice::Dontneed => 4,
        Advice::Noreuse => 5,
    }
}

/// `mapping_try_invalidate(mapping, start, end, nr_failed)` (and
/// `invalidate_mapping_pages()`, with `nr_failed` NULL): the model's eviction.
pub(super) unsafe extern "C" fn cb_invalidate(
    ctx: *mut c_void,
    start: c_ulong,
    end: c_ulong,
    nr_failed: *mut c_ulong,
) -> c_ulong {
    let _in_rust = InRust::on(ctx);
    let (evicted, failed) = Frame::of(ctx).model().mapping_try_invalidate(start, end);
    if !nr_failed.is_null() {
        *nr_failed += failed;
    }
    evicted
}

impl Model<'_> {
    /// The C's `generic_fadvise()` on descriptor `fd`, when the hybrid has it. Its return
    /// value is not the model's concern (the scenarios' calls succeed; the kernel's
    /// -EINVAL for an offset or length past 2^63 leaves the file as it was, as here).
    pub(crate) fn c_generic_fadvise(&mut self, fd: usize, offset: u64, len: u64, advice: Advice) -> bool {
        let Some(f) = self.c.and_then(|c| c.generic_fadvise) else { return false };
        let mut ractl = ReadaheadControl::new(fd, 0);
        let advice = advice_number(advice);
        // SAFETY: the frame's file follows the header (see CReadahead's contract); loff_t
        // is the kernel's signed 64 bits.
        self.call_c("generic_fadvise", &mut ractl, |fr| unsafe {
            f(&mut fr.file, offset as i64, len as i64, advice);
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_advice_has_the_number_the_kernel_gives_it_on_x86_64() {
        let header = include_str!("../../c/radiff_kernel.h");
        for (advice, name) in [
            (Advice::Normal, "NORMAL"),
            (Advice::Random, "RANDOM"),
            (Advice::Sequential, "SEQUENTIAL"),
            (Advice::Willneed, "WILLNEED"),
            (Advice::Dontneed, "DONTNEED"),
            (Advice::Noreuse, "NOREUSE"),
        ] {
            let line = format!("#define POSIX_FADV_{name} {}\n", advice_number(advice));
            assert!(header.contains(&line), "the header lacks `{}`", line.trim());
        }
    }
}
