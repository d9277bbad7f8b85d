//! Tests of explore's families of steps beyond plain reads and mappings: splice, preadv2
//! flags and O_DIRECT, allocation failure, MADV_COLLAPSE.

use radiff_model::Op;

use super::generate::{self, Gen, GenStep};
use super::*;
use crate::scenario::Scenario;

/// Seed 1's first `n` generated scenarios with a step `has` picks, each parsed as a
/// scenario (one the scenario check refuses fails the test, naming it and its YAML).
fn drawn(n: u64, has: impl Fn(&GenStep) -> bool) -> Vec<(u64, Gen, Scenario)> {
    (0..n)
        .map(|i| (i, generate::generate(1, i)))
        .filter(|(_, g)| g.steps.iter().any(&has))
        .map(|(i, g)| {
            let s =
                scenario_of(&g, &["base".into()]).unwrap_or_else(|e| panic!("scenario {i}: {e}\n{}", g.yaml("", &[])));
            (i, g, s)
        })
        .collect()
}

// ---- splice ----

/// The splice family takes its own generator too: about one in [`generate::SPLICE_ONE_IN`]
/// of the scenarios in neither other family splices, each parses as a scenario, and its
/// splice expands into one `Op::Splice` with a pipe F_SETPIPE_SZ gives exactly.
#[test]
fn the_splice_family_parses_and_leaves_the_other_families_alone() {
    let spliced = drawn(600, |s| matches!(s, GenStep::Splice { .. }));
    for (i, g, s) in &spliced {
        assert!(!g.steps.iter().any(|s| matches!(s, GenStep::Map { .. } | GenStep::Alternate { .. })), "scenario {i}");
        let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
        for op in ops {
            if let Op::Splice { offset, len, pipe, .. } = op {
                assert!(pipe.is_power_of_two() && (4096..=1 << 20).contains(&pipe), "scenario {i}: pipe {pipe}");
                assert!(len > 0 && offset + len <= g.file_size, "scenario {i}: {len} at {offset}");
            }
        }
    }
    assert!(spliced.len() >= 10, "{} of 600 scenarios splice", spliced.len());
}

// ---- preadv2 flags and O_DIRECT ----

/// The preadv2-flags family (generate/rwf.rs): its scenarios parse, read one file on XFS
/// or ext4 without mappings or splices, keep one kind of flagged read each, and every
/// NOWAIT read comes right after a plain read of the same range (exact only when cached).
#[test]
fn the_rwf_family_parses_and_draws_nowait_reads_only_on_a_range_just_read() {
    let mut kinds = std::collections::HashSet::new();
    for (i, g, s) in drawn(1200, |s| matches!(s, GenStep::ReadWith { .. })) {
        assert!(g.fs != radiff_model::FsKind::F2fs, "scenario {i}");
        assert!(
            !g.steps
                .iter()
                .any(|s| matches!(s, GenStep::Map { .. } | GenStep::Splice { .. } | GenStep::Alternate { .. })),
            "scenario {i}"
        );
        let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
        let hows: std::collections::HashSet<_> =
            ops.iter().filter_map(|op| if let Op::ReadWith { how, .. } = op { Some(*how) } else { None }).collect();
        assert_eq!(hows.len(), 1, "scenario {i}: one kind of flagged read: {hows:?}");
        kinds.extend(hows);
        for (k, op) in ops.iter().enumerate() {
            if let Op::ReadWith { fd, offset, len, how } = *op {
                if how.nowait {
                    assert_eq!(
                        ops.get(k.wrapping_sub(1)),
                        Some(&Op::Read { fd, offset, len }),
                        "scenario {i}: NOWAIT read {k} without the plain read before it"
                    );
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
    let armed = drawn(600, |s| matches!(s, GenStep::FailAlloc { .. }));
    for (i, g, s) in &armed {
        assert!(!g.steps.iter().any(|s| matches!(s, GenStep::Map { .. })), "scenario {i}");
        let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
        assert!(ops.iter().any(|op| matches!(op, Op::FailAlloc { times: 1..=4, min_order: 4..=9 })), "scenario {i}");
    }
    assert!(armed.len() >= 20, "{} of 600 scenarios fail allocations", armed.len());
}

// ---- MADV_COLLAPSE ----

/// The model's mark of a collapse whose readahead window is several requests, which the
/// kernel races (model/src/collapse.rs).
const RACE: &str = radiff_model::collapse::COLLAPSE_RACE;

/// The scenarios of the repository with a step `has` accepts, each with the marks of
/// the model's coverage on its synthetic input that are among `marks`.
fn repository_marks(
    has: impl Fn(&radiff_model::Step) -> bool,
    marks: &[&str],
) -> Vec<(std::path::PathBuf, Vec<String>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut out = Vec::new();
    for path in crate::scenario::discover(&dir).unwrap() {
        let s = crate::scenario::Scenario::load(&path).unwrap();
        if !s.steps.iter().any(&has) {
            continue;
        }
        let (_, cov) = radiff_model::coverage(&synthetic_input(&s), &radiff_model::Policy::BASE);
        out.push((path, marks.iter().filter(|m| cov.contains(m)).map(|m| m.to_string()).collect()));
    }
    out
}

/// Every scenario of the repository that collapses reads one request a window on the model
/// (the shapes the scenario check cannot see: pages cached inside a range split a window).
#[test]
fn no_scenario_of_the_repository_collapses_through_a_window_of_several_requests() {
    let seen = repository_marks(
        |st| matches!(st, radiff_model::Step::Madvise { advice: radiff_model::MadvAdvice::Collapse, .. }),
        &[RACE],
    );
    for (path, marked) in &seen {
        assert!(marked.is_empty(), "{}: a collapse window of several requests", path.display());
    }
    assert!(seen.len() >= 2, "{} scenarios collapse", seen.len());
}

/// No scenario of the repository has a fault the model marks as the kernel's race (a fault
/// woken on its own request while another request's folio in its fault-around block is in
/// flight): a trial of one would fail, saying so.
#[test]
fn no_scenario_of_the_repository_faults_while_its_block_is_read_by_other_requests() {
    let seen =
        repository_marks(|st| matches!(st, radiff_model::Step::Touch { .. }), &[radiff_model::fault::FAULT_RACE]);
    for (path, marked) in &seen {
        assert!(marked.is_empty(), "{}: a fault woken with other requests of its block in flight", path.display());
    }
    assert!(seen.len() >= 10, "{} scenarios touch a mapping", seen.len());
}

/// The collapse family (generate/collapse.rs): about one in [`generate::COLLAPSE_ONE_IN`]
/// mapping scenarios collapses a mapping; each parses (so passes the scenario check: its
/// windows are one request), keeps the window within max_sectors_kb after shrinking's
/// default settings too, and the model collapses in some of them.
#[test]
fn the_collapse_family_parses_keeps_windows_to_one_request_and_collapses() {
    let is_collapse = |s: &GenStep| matches!(s, GenStep::Map { advice: Some(radiff_model::MadvAdvice::Collapse), .. });
    let drawn = drawn(1600, is_collapse);
    let mut collapsed = 0;
    for (i, g, s) in &drawn {
        let doubled =
            g.steps.iter().any(|s| matches!(s, GenStep::Fadvise { advice: radiff_model::Advice::Sequential, .. }));
        assert!(
            g.read_ahead_kb * if doubled { 2 } else { 1 } <= g.max_sectors_kb,
            "scenario {i}: {} / {}",
            g.read_ahead_kb,
            g.max_sectors_kb
        );
        assert!(
            is_collapse(&g.steps[0]) && !g.steps[1..].iter().any(is_collapse),
            "scenario {i}: a collapse only as the first step"
        );
        let (trace, cov) = radiff_model::coverage(&synthetic_input(s), &radiff_model::Policy::BASE);
        assert!(!cov.contains(RACE), "scenario {i}: a collapse window of several requests\n{}", g.yaml("", &[]));
        if trace.windows.iter().any(|w| matches!(w.trigger, radiff_model::Trigger::Collapse(_))) {
            collapsed += 1;
        }
        let mut shrunk = g.clone();
        shrunk.read_ahead_kb = 2048;
        shrunk.fix();
        scenario_of(&shrunk, &["base".into()]).unwrap_or_else(|e| panic!("scenario {i} with read_ahead_kb 2048: {e}"));
    }
    assert!(drawn.len() >= 20, "{} of 1600 scenarios collapse", drawn.len());
    assert!(collapsed >= drawn.len() / 4, "the model collapsed in {collapsed} of {}", drawn.len());
}
