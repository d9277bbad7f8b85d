//! Tests of explore's families of steps beyond plain reads and mappings: splice, preadv2
//! flags and O_DIRECT, allocation failure.

use radiff_model::Op;

use super::generate::{self, GenStep};
use super::*;

// ---- splice ----

/// The splice family takes its own generator too: about one in [`generate::SPLICE_ONE_IN`]
/// of the scenarios in neither other family splices, each parses as a scenario, and its
/// splice expands into one `Op::Splice` with a pipe F_SETPIPE_SZ gives exactly.
#[test]
fn the_splice_family_parses_and_leaves_the_other_families_alone() {
    let mut spliced = 0;
    for i in 0..600 {
        let g = generate::generate(1, i);
        if !g.steps.iter().any(|s| matches!(s, GenStep::Splice { .. })) {
            continue;
        }
        spliced += 1;
        assert!(!g.steps.iter().any(|s| matches!(s, GenStep::Map { .. } | GenStep::Alternate { .. })), "scenario {i}");
        let s = scenario_of(&g, &["base".into()]).unwrap_or_else(|e| panic!("scenario {i}: {e}\n{}", g.yaml("", &[])));
        let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
        for op in ops {
            if let Op::Splice { offset, len, pipe, .. } = op {
                assert!(pipe.is_power_of_two() && (4096..=1 << 20).contains(&pipe), "scenario {i}: pipe {pipe}");
                assert!(len > 0 && offset + len <= g.file_size, "scenario {i}: {len} at {offset}");
            }
        }
    }
    assert!(spliced >= 10, "{spliced} of 600 scenarios splice");
}

// ---- preadv2 flags and O_DIRECT ----

/// The preadv2-flags family (generate/rwf.rs): its scenarios parse, read one file on XFS
/// or ext4 without mappings or splices, keep one kind of flagged read each, and every
/// NOWAIT read comes right after a plain read of the same range (exact only when cached).
#[test]
fn the_rwf_family_parses_and_draws_nowait_reads_only_on_a_range_just_read() {
    let mut kinds = std::collections::HashSet::new();
    for i in 0..1200 {
        let g = generate::generate(1, i);
        if !g.steps.iter().any(|s| matches!(s, GenStep::ReadWith { .. })) {
            continue;
        }
        assert!(g.fs != radiff_model::FsKind::F2fs, "scenario {i}");
        assert!(!g.steps.iter().any(|s| matches!(s, GenStep::Map { .. } | GenStep::Splice { .. } | GenStep::Alternate { .. })), "scenario {i}");
        let s = scenario_of(&g, &["base".into()]).unwrap_or_else(|e| panic!("scenario {i}: {e}\n{}", g.yaml("", &[])));
        let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
        let hows: std::collections::HashSet<_> = ops.iter().filter_map(|op| if let Op::ReadWith { how, .. } = op { Some(*how) } else { None }).collect();
        assert_eq!(hows.len(), 1, "scenario {i}: one kind of flagged read: {hows:?}");
        kinds.extend(hows);
        for (k, op) in ops.iter().enumerate() {
            if let Op::ReadWith { fd, offset, len, how } = *op {
                if how.nowait {
                    assert_eq!(ops.get(k.wrapping_sub(1)), Some(&Op::Read { fd, offset, len }), "scenario {i}: NOWAIT read {k} without the plain read before it");
                }
            }
        }
    }
    assert_eq!(kinds.len(), 3, "nowait, dontcache and direct all drawn: {kinds:?}");
}

// ---- allocation failure ----

/// The allocation-failure family takes its own generator: about one in
/// [`generate::failalloc::FAIL_ALLOC_ONE_IN`] of the scenarios without a mapping gets a `fail_alloc`
/// step, each parses as a scenario (the check refuses fail_alloc where a fault could fail),
/// and the model runs it.
#[test]
fn the_fail_alloc_family_parses_and_never_meets_a_mapping() {
    let mut armed = 0;
    for i in 0..600 {
        let g = generate::generate(1, i);
        if !g.steps.iter().any(|s| matches!(s, GenStep::FailAlloc { .. })) {
            continue;
        }
        armed += 1;
        assert!(!g.steps.iter().any(|s| matches!(s, GenStep::Map { .. })), "scenario {i}");
        let s = scenario_of(&g, &["base".into()]).unwrap_or_else(|e| panic!("scenario {i}: {e}\n{}", g.yaml("", &[])));
        let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
        assert!(ops.iter().any(|op| matches!(op, Op::FailAlloc { times: 1..=4, min_order: 4..=9 })), "scenario {i}");
    }
    assert!(armed >= 20, "{armed} of 600 scenarios fail allocations");
}
