//! What the repository's own tests share (tests/*.rs and the unit tests): no radiff
//! command calls it.

use radiff_model::Input;

/// A 4 KiB read, then sixteen 1 MiB reads of a 64 MiB XFS file on QEMU NVMe with
/// read_ahead_kb 128: a stream whose async windows the alignment of
/// page_cache_async_ra() decides, for examples and tests of explaining.
pub fn example_stream() -> Input {
    use radiff_model::Op;
    let mut ops = vec![Op::Read { fd: 0, offset: 0, len: 4096 }];
    ops.extend((0..16).map(|i| Op::Read { fd: 0, offset: 4096 + (i << 20), len: 1 << 20 }));
    Input::xfs_on_nvme(64 << 20, ops)
}
