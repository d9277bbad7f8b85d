//! The collapse family of the grammar: MADV_COLLAPSE over a mapping-family scenario's
//! mapping, and the queue settings that keep it exact.

use radiff_model::pattern::SplitMix64;
use radiff_model::{Advice, MadvAdvice};

use super::{Gen, GenDevice, GenStep};

/// One mapping-family scenario in this many whose first step maps the file without advice
/// collapses that mapping (the whole mapping, so its 2 MiB-aligned part).
pub const COLLAPSE_ONE_IN: u64 = 2;

/// The collapse family, from a generator of its own (so the scenarios of a seed stay what
/// they were before it existed): `madvise: {advice: collapse}` right after the mapping is
/// made, before its touches. Only as the scenario's first step: on a cold file each of the
/// collapse's windows is one run of missing pages, so one request; pages an earlier step
/// cached inside a range would split a window into several, and then the kernel's
/// trylock races the later request (`crate::scenario`'s check cannot see that shape).
pub(super) fn collapse_family(seed: u64, index: u64, g: &mut Gen) {
    let mut rng = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x636f_6c6c)).next_u64());
    if rng.below(COLLAPSE_ONE_IN) != 0 {
        return;
    }
    if let Some(GenStep::Map { advice: advice @ None, .. }) = g.steps.first_mut() {
        *advice = Some(MadvAdvice::Collapse);
    }
}

/// What the scenario check asks of a scenario that collapses (scenario/steps.rs,
/// `check_collapse()`): each of the collapse's readahead windows one request, so the window's
/// bound (`read_ahead_kb`, doubled by `fadvise: sequential`) at most `max_sectors_kb`;
/// `read_ahead_kb` comes down to it (4 KiB blocks: larger ones are refused), on UFS after `max_sectors_kb` came down to its 128
/// segments of a page; and a collapse only as the first step (a shrink that
/// left one later loses its advice). Part of [`Gen::fix`], so shrinking keeps it.
pub(super) fn fix(g: &mut Gen) {
    let collapses = |s: &GenStep| matches!(s, GenStep::Map { advice: Some(MadvAdvice::Collapse), .. });
    for step in g.steps.iter_mut().skip(1).filter(|s| collapses(s)) {
        if let GenStep::Map { advice, .. } = step {
            *advice = None;
        }
    }
    if !g.steps.first().is_some_and(collapses) {
        return;
    }
    g.block_size = None;
    if matches!(g.device, GenDevice::Ufs) {
        g.max_sectors_kb = g.max_sectors_kb.min(crate::scenario::ufs_segments_kb());
    }
    let factor =
        if g.steps.iter().any(|s| matches!(s, GenStep::Fadvise { advice: Advice::Sequential, .. })) { 2 } else { 1 };
    g.read_ahead_kb = g.read_ahead_kb.min(g.max_sectors_kb / factor);
}
