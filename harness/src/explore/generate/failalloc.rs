//! The allocation-failure family of the grammar: a `fail_alloc` step among a scenario's
//! reads, so that readahead's large folios fail where it stands (page_cache_ra_order()'s
//! fall back; with 64 KiB blocks, page_cache_ra_unbounded()'s stop and
//! filemap_create_folio()'s -ENOMEM).

use radiff_model::pattern::SplitMix64;

use super::{pick, Gen, GenStep, MAX_STEPS};

/// One scenario without a mapping in this many gets a `fail_alloc` step (from a generator
/// of its own, so the scenarios of a seed stay what they were before it existed).
pub const FAIL_ALLOC_ONE_IN: u64 = 5;

/// The family's draw: a `fail_alloc` of 1 to 4 allocations of order 4 (most often) to 9,
/// before a step drawn at random, in a scenario with room for one more step. Scenarios with a mapping are left alone: the scenario
/// check refuses fail_alloc with mappings on blocks whose folios it can fail (a failed
/// fault is VM_FAULT_OOM), and the grammar does not tell the two apart.
pub(super) fn fail_alloc_family(seed: u64, index: u64, g: &mut Gen) {
    let mut rng = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x6661_696c)).next_u64());
    if rng.below(FAIL_ALLOC_ONE_IN) != 0
        || g.steps.is_empty()
        || g.steps.len() >= MAX_STEPS
        || g.steps.iter().any(|s| matches!(s, GenStep::Map { .. }))
    {
        return;
    }
    let at = rng.below(g.steps.len() as u64) as usize;
    let step = GenStep::FailAlloc { times: 1 + rng.below(4) as u32, min_order: pick(&mut rng, &[4, 4, 4, 5, 9]) };
    g.steps.insert(at, step);
}
