//! The preadv2-flags family of the grammar: scenarios with RWF_NOWAIT, RWF_DONTCACHE or
//! O_DIRECT reads among plain reads and hints (one kind per scenario).
//!
//! Only what is exact in a guest (docs/scenarios.md, "preadv2 flags and O_DIRECT reads"):
//! a NOWAIT read is drawn right after a plain read of the same range (so every folio it
//! meets is cached and uptodate; a NOWAIT read of a cold range races its own reads), and
//! never in a scenario with DONTCACHE reads (whose folios a plain read drops). No mappings
//! (DONTCACHE with mappings is refused), and XFS or ext4 (f2fs has no FOP_DONTCACHE and
//! may turn O_DIRECT reads into buffered ones).

use radiff_model::pattern::SplitMix64;
use radiff_model::{FsKind, ReadHow};

use super::{
    draw_fadvise, draw_from, draw_read, draw_sequential, draw_steps, pick, Gen, GenStep, Production, KIB, READ_SIZES,
};
use crate::scenario::Size;

/// The largest O_DIRECT read the scenario parser takes (scenario::steps::MAX_DIRECT_READ).
const MAX_DIRECT: u64 = 128 * KIB;

/// [`GenStep::kind`] of a [`GenStep::ReadWith`].
pub(super) fn kind(how: ReadHow) -> &'static str {
    if how.direct {
        "read-direct"
    } else if how.nowait {
        "read-nowait"
    } else {
        "read-dontcache"
    }
}

/// [`Gen::fix`] of a [`GenStep::ReadWith`]: a page multiple inside the file, an O_DIRECT
/// one at most [`MAX_DIRECT`].
pub(super) fn fix(size: &mut u64, how: ReadHow, file: u64) {
    let most = if how.direct { file.min(MAX_DIRECT) } else { file };
    *size = (*size).clamp(4096, most) / 4096 * 4096;
}

/// The step's YAML item.
pub(super) fn yaml(from: u64, size: u64, how: ReadHow) -> String {
    let with = if how.direct {
        "direct: true"
    } else if how.nowait {
        "flags: [nowait]"
    } else {
        "flags: [dontcache]"
    };
    format!("read: {{offset: {}, size: {}, {with}}}", Size(from), Size(size))
}

/// [`GenStep::yaml_items`] of a step that is not a mapping: its one item, except that a
/// NOWAIT read is exact only on a cached range, so a plain read of the range comes first.
pub(super) fn yaml_items(step: &GenStep, from: u64, to: Option<u64>) -> Vec<String> {
    match step {
        GenStep::ReadWith { size, how, .. } if how.nowait => {
            vec![format!("read: {{offset: {}, size: {}}}", Size(from), Size(*size)), step.yaml(from, to)]
        }
        _ => vec![step.yaml(from, to)],
    }
}

/// The step in words.
pub(super) fn describe(from: u64, size: u64, how: ReadHow) -> String {
    let what = if how.direct {
        "an O_DIRECT read"
    } else if how.nowait {
        "a read and again with RWF_NOWAIT,"
    } else {
        "an RWF_DONTCACHE read"
    };
    format!("{what} of {} at {}", Size(size), Size(from))
}

fn draw_with(rng: &mut SplitMix64, g: &Gen, how: ReadHow) -> GenStep {
    let size = pick(rng, READ_SIZES);
    let size = if how.direct { size.min(MAX_DIRECT) } else { size };
    GenStep::ReadWith { at: draw_from(rng, g), size, how }
}

fn draw_nowait(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    draw_with(rng, g, ReadHow { nowait: true, ..ReadHow::default() })
}

fn draw_dontcache(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    draw_with(rng, g, ReadHow { dontcache: true, ..ReadHow::default() })
}

fn draw_direct(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    draw_with(rng, g, ReadHow { direct: true, ..ReadHow::default() })
}

/// The productions of the family, one table per kind of flagged read.
const NOWAIT_PRODUCTIONS: &[Production] = &[
    Production { name: "read-nowait", weight: 3, draw: draw_nowait },
    Production { name: "read", weight: 1, draw: draw_read },
    Production { name: "sequential", weight: 1, draw: draw_sequential },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];
const DONTCACHE_PRODUCTIONS: &[Production] = &[
    Production { name: "read-dontcache", weight: 3, draw: draw_dontcache },
    Production { name: "read", weight: 1, draw: draw_read },
    Production { name: "sequential", weight: 1, draw: draw_sequential },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];
const DIRECT_PRODUCTIONS: &[Production] = &[
    Production { name: "read-direct", weight: 3, draw: draw_direct },
    Production { name: "read", weight: 1, draw: draw_read },
    Production { name: "sequential", weight: 1, draw: draw_sequential },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];

/// One scenario in this many of those the other families left alone is of this family.
const RWF_ONE_IN: u64 = 6;

/// Draws one step of a family.
type DrawStep = fn(&mut SplitMix64, &Gen) -> GenStep;

/// The family's draw, when its own generator picks scenario `index` of `seed`: a
/// one-file scenario without mappings or splices, on XFS or ext4.
pub(super) fn rwf_family(seed: u64, index: u64, g: &mut Gen) {
    let mut family = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x7277_6600)).next_u64());
    if family.below(RWF_ONE_IN) != 0 {
        return;
    }
    if g.files != 1
        || g.steps.iter().any(|s| matches!(s, GenStep::Map { .. } | GenStep::Splice { .. } | GenStep::Alternate { .. }))
    {
        return;
    }
    if g.fs == FsKind::F2fs {
        g.fs = pick(&mut family, &[FsKind::Xfs, FsKind::Ext4]);
    }
    let (productions, draw): (&[Production], DrawStep) = match family.below(3) {
        0 => (NOWAIT_PRODUCTIONS, draw_nowait),
        1 => (DONTCACHE_PRODUCTIONS, draw_dontcache),
        _ => (DIRECT_PRODUCTIONS, draw_direct),
    };
    g.steps.clear();
    let n = 1 + family.below(3) as usize;
    draw_steps(&mut family, g, productions, n);
    if !g.steps.iter().any(|s| matches!(s, GenStep::ReadWith { .. })) {
        let step = draw(&mut family, g);
        g.steps.push(step);
    }
}
