//! The most a scenario may ask for: each count and size is checked against these where
//! its section is parsed, before anything is allocated or built, so a typo in a count is
//! an error at its line, not a host or guest out of memory.

pub use radiff_model::pattern::MAX_OPS;

/// The most touches one scenario may make (each is a page fault or a load in the guest).
pub const MAX_TOUCHES: u64 = 1 << 20;

/// The largest device. The guest gets the files' size plus twice the trace buffer plus
/// 1 GiB of memory (run.rs `memory_mb`: the files are read into its page cache), so the
/// device bounds the VM's memory; the largest in `scenarios/` is 3 GiB, the explore
/// generator's 1 GiB. 16 GiB keeps the VM below 18 GiB.
pub const MAX_DEVICE_SIZE: u64 = 16 << 30;

/// The largest `trace_buffer_kb` (and default, which grows with the bytes the steps read):
/// ftrace allocates it per CPU in the guest's memory, which is sized with twice it. The
/// default of the largest scenarios is below 128 MiB; 2 GiB holds a trace of 32 Mi events
/// of 64 bytes, several for each of [`MAX_OPS`] ops.
pub const MAX_TRACE_BUFFER_KB: u64 = 2 << 20;

/// The longest `timeout_s`: a day. The default is 4 minutes plus 2 a GiB of files.
pub const MAX_TIMEOUT_S: u64 = 24 * 3600;

/// The most `interleaved` streams: each is a stream the readahead state of its
/// descriptor follows; a file has [`radiff_model::pattern::FDS_PER_FILE`] descriptors. The
/// scenarios and the explore generator use 2 to 4.
pub const MAX_STREAMS: u64 = 64;

/// The highest `map:` number plus one: the model and the guest keep a table of mappings
/// indexed by it. The scenarios use 0 and 1.
pub const MAX_MAPS: u32 = 64;

/// The largest `read_ahead_kb` (1 GiB): the kernel takes any value, but a window beyond
/// the largest device is meaningless and the model's window arithmetic is in pages of u64.
/// The scenarios use at most 1024.
pub const MAX_READ_AHEAD_KB: u64 = 1 << 20;

/// The most matrix points: each is a run of every variant (a VM boot's worth of work).
/// The scenarios have at most 2.
pub const MAX_POINTS: usize = 64;

#[cfg(test)]
mod s_maxbytes_tests {
    use radiff_model::{sb::s_maxbytes, FsKind};

    /// Issue 24's "s_maxbytes for ext4 and f2fs": the model clamps reads at each file
    /// system's own s_maxbytes (radiff_model::sb), and no scenario comes near it: a file
    /// fits its device, so every read a scenario may make ends below the smallest of them.
    /// If the device bound ever grows past f2fs's ~3.9 TiB, this fails, and the clamp
    /// starts to decide reads.
    #[test]
    fn no_scenario_read_reaches_any_file_systems_s_maxbytes() {
        for fs in [FsKind::Xfs, FsKind::Ext4, FsKind::F2fs] {
            assert!(
                super::MAX_DEVICE_SIZE < s_maxbytes(fs),
                "{fs:?}: s_maxbytes {} <= MAX_DEVICE_SIZE",
                s_maxbytes(fs)
            );
        }
    }
}
