//! The splice family of the grammar: scenarios that splice the file into a pipe.

use radiff_model::pattern::SplitMix64;

use super::{
    draw_fadvise, draw_from, draw_read, draw_sequential, draw_steps, pick, Gen, GenStep, Production, KIB, MIB,
    READ_SIZES,
};

/// Pipe sizes a splice draws: F_SETPIPE_SZ's powers of two, the default (64 KiB) twice.
const PIPE_SIZES: &[u64] = &[4 * KIB, 16 * KIB, 64 * KIB, 64 * KIB, 256 * KIB, MIB];

fn draw_splice(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    GenStep::Splice {
        at: draw_from(rng, g),
        size: pick(rng, READ_SIZES) * (1 + rng.below(8)),
        pipe: pick(rng, PIPE_SIZES),
        sendfile: rng.below(2) == 0,
    }
}

/// The productions of the splice family: splices of the file into a pipe, among reads
/// and hints that share its file_ra_state.
pub const SPLICE_PRODUCTIONS: &[Production] = &[
    Production { name: "splice", weight: 3, draw: draw_splice },
    Production { name: "read", weight: 1, draw: draw_read },
    Production { name: "sequential", weight: 1, draw: draw_sequential },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];

/// One scenario in this many of those in neither the mapping nor the two-file family is
/// of the splice family (its own generator, as for [`super::MMAP_ONE_IN`]).
pub const SPLICE_ONE_IN: u64 = 6;

/// The splice family's draw, when its own generator picks scenario `index` of `seed`.
pub(super) fn splice_family(seed: u64, index: u64, g: &mut Gen) {
    let mut family = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x7370_6c63)).next_u64());
    if family.below(SPLICE_ONE_IN) != 0 {
        return;
    }
    g.steps.clear();
    let n = 1 + family.below(3) as usize;
    draw_steps(&mut family, g, SPLICE_PRODUCTIONS, n);
    if !g.steps.iter().any(|s| matches!(s, GenStep::Splice { .. })) {
        let step = draw_splice(&mut family, g);
        g.steps.push(step);
    }
}
