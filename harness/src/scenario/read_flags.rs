//! The checks of a read step's `flags:` and `direct:` against the rest of the scenario
//! (file system, device, mappings), made once every step has parsed.

use radiff_model::{FsKind, Step};

use super::sections::At;
use super::size::Size;
use crate::error::{Error, Result};
use crate::yaml;

/// The checks of `flags:` and `direct:` that need the rest of the scenario: the file
/// system (f2fs sets no FOP_DONTCACHE in 7.3.4, so preadv2(RWF_DONTCACHE) is -EOPNOTSUPP;
/// f2fs_should_use_dio() may turn an O_DIRECT read into a buffered one), the device's
/// logical block size, and mappings (dropbehind of a mapped folio is not modelled).
pub(super) fn check_reads_with(at: &At, steps: &[Step], fs: FsKind, logical_block_size: Option<u64>) -> Result<()> {
    let mapped = steps.iter().any(|s| matches!(s, Step::Mmap { .. }));
    for (i, step) in steps.iter().enumerate() {
        let (how, bounds) = match step {
            Step::ReadWith { how, offset, size, .. } => (how, vec![*offset, *size]),
            Step::SequentialWith { how, from, size, to, .. } => (how, vec![*from, *size, to.unwrap_or(0)]),
            _ => continue,
        };
        let bad =
            |m: String| Error::input(at.path, yaml::line_of_item(at.text, "reads", i), format!("reads[{i}]: {m}"));
        if how.dontcache && fs == FsKind::F2fs {
            return Err(bad("`flags: [dontcache]`: f2fs does not set FOP_DONTCACHE in Linux 7.3.4, so preadv2(RWF_DONTCACHE) fails with EOPNOTSUPP (kiocb_set_rw_flags()); XFS and ext4 support it".into()));
        }
        if how.dontcache && mapped {
            return Err(bad("`flags: [dontcache]` in a scenario with mappings: a mapped folio with PG_dropbehind stays cached (filemap_end_dropbehind()), which the model does not track; read without mappings".into()));
        }
        if how.direct && fs == FsKind::F2fs {
            return Err(bad("`direct: true` on f2fs: f2fs_should_use_dio() may send an O_DIRECT read through the page cache, which the model does not port; use xfs or ext4".into()));
        }
        let lbs = logical_block_size.unwrap_or(512);
        if let Some(b) = bounds.iter().find(|&&b| how.direct && b % lbs != 0) {
            return Err(bad(format!("`direct: true`: {} is not a multiple of the device's logical block size ({}): O_DIRECT would fail with EINVAL", Size(*b), Size(lbs))));
        }
    }
    Ok(())
}
