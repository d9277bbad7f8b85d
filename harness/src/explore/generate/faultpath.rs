//! The fault-path families of the grammar: PROT_EXEC mappings, XFS blocks larger than the
//! page.

use radiff_model::pattern::SplitMix64;
use radiff_model::FsKind;

use super::{pick, Gen, GenStep, KIB};

/// One mapping-family scenario in this many maps its file PROT_EXEC too (VM_EXEC's
/// read-around), and one XFS scenario in this many has blocks larger than the page.
pub const EXEC_ONE_IN: u64 = 3;
pub const LARGE_BLOCKS_ONE_IN: u64 = 4;

/// The fault-path family: PROT_EXEC on a mapping-family scenario's mappings, from a
/// generator of its own (so the scenarios of a seed stay what they were before it existed).
/// MAP_POPULATE and MADV_POPULATE_READ are not drawn: over the whole file a populate reaches
/// the async windows it starts itself, a race by construction (model/src/gup.rs).
pub(super) fn exec_family(seed: u64, index: u64, g: &mut Gen) {
    let mut rng = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x6578_6563)).next_u64());
    if rng.below(EXEC_ONE_IN) != 0 {
        return;
    }
    for step in &mut g.steps {
        if let GenStep::Map { exec, .. } = step {
            *exec = true;
        }
    }
}

/// The large-block family: XFS made with 16 or 64 KiB blocks (mkfs.block_size), from a
/// generator of its own.
pub(super) fn large_block_family(seed: u64, index: u64, g: &mut Gen) {
    let mut rng = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x6c62_7300)).next_u64());
    if g.fs == FsKind::Xfs && rng.below(LARGE_BLOCKS_ONE_IN) == 0 {
        g.block_size = Some(pick(&mut rng, &[16 * KIB, 64 * KIB]));
    }
}
