//! The collapse family of the grammar: MADV_COLLAPSE over a mapping-family scenario's
//! mapping, and the queue settings that keep it exact.

use radiff_model::pattern::SplitMix64;
use radiff_model::{Advice, MadvAdvice};

use super::{Gen, GenStep};

/// One mapping-family scenario in this many collapses a mapping (its first mapping drawn
/// without advice: the whole mapping, so its 2 MiB-aligned part).
pub const COLLAPSE_ONE_IN: u64 = 4;

/// The collapse family, from a generator of its own (so the scenarios of a seed stay what
/// they were before it existed): `madvise: {advice: collapse}` right after the mapping is
/// made, before its touches.
pub(super) fn collapse_family(seed: u64, index: u64, g: &mut Gen) {
    let mut rng = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x636f_6c6c)).next_u64());
    if rng.below(COLLAPSE_ONE_IN) != 0 {
        return;
    }
    if let Some(GenStep::Map { advice, .. }) = g.steps.iter_mut().find(|s| matches!(s, GenStep::Map { advice: None, .. })) {
        *advice = Some(MadvAdvice::Collapse);
    }
}

/// What the scenario check asks of a scenario that collapses (scenario/steps.rs,
/// `check_collapse()`): each of the collapse's readahead windows one request, so the window's
/// bound (`read_ahead_kb`, doubled by `fadvise: sequential`) at most `max_sectors_kb`;
/// `read_ahead_kb` comes down to it. Part of [`Gen::fix`], so shrinking keeps it.
pub(super) fn fix(g: &mut Gen) {
    if !g.steps.iter().any(|s| matches!(s, GenStep::Map { advice: Some(MadvAdvice::Collapse), .. })) {
        return;
    }
    let factor = if g.steps.iter().any(|s| matches!(s, GenStep::Fadvise { advice: Advice::Sequential })) { 2 } else { 1 };
    g.read_ahead_kb = g.read_ahead_kb.min(g.max_sectors_kb / factor);
}
