//! Which runs of a report go to which boot, and the run folders of repeated runs. Pure:
//! `runs` boots what this plans.

/// One run of a report: run `run` (1-based) of point `point` on variant `variant`
/// (indices into the report's points and variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedRun {
    pub point: usize,
    pub variant: usize,
    pub run: usize,
}

/// The boots of a report over `points` points on `variants` variants, `runs` runs of each,
/// at most `max` runs to a boot, in the order they run. Each boot is one variant's. A
/// variant's runs go run by run (the first run of every point, then the second, ...), cut
/// into the fewest even boots ([`crate::run::batches`]); the variants take turns boot by
/// boot (A B A B, each with the same runs), so that a change in the host's load over time
/// falls on all of them alike.
pub fn plan(points: usize, variants: usize, runs: usize, max: usize) -> Vec<Vec<PlannedRun>> {
    let order: Vec<(usize, usize)> = (1..=runs).flat_map(|run| (0..points).map(move |point| (point, run))).collect();
    let mut boots = Vec::new();
    for range in crate::run::batches(order.len(), max) {
        for variant in 0..variants {
            boots.push(order[range.clone()].iter().map(|&(point, run)| PlannedRun { point, variant, run }).collect());
        }
    }
    boots
}

/// The most runs a boot takes when `lanes` boots run at once and each variant has
/// `per_variant` runs: every variant's runs cut into `lanes` boots at least (so that the
/// lanes share the work whatever each variant costs), at most `max` a boot.
pub fn runs_per_boot(per_variant: usize, lanes: usize, max: usize) -> usize {
    if lanes <= 1 {
        return max;
    }
    max.min(per_variant.div_ceil(lanes)).max(1)
}

/// The run folder's name (under `runs/SCENARIO/`, see [`crate::run::Job`]) of run `run` of
/// `runs` on `variant`: the variant itself for a single run (the folder `radiff run`
/// uses); `VARIANT~run-K` for each of several runs, so that the runs of one boot do not
/// share a folder (on disk `runs/SCENARIO/VARIANT-run-K[/POINT]/`).
pub fn run_name(variant: &str, run: usize, runs: usize) -> String {
    if runs <= 1 {
        variant.to_string()
    } else {
        format!("{variant}~run-{run}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(boot: &[PlannedRun]) -> Vec<(usize, usize)> {
        boot.iter().map(|r| (r.point, r.run)).collect()
    }

    #[test]
    fn three_runs_of_one_point_on_two_variants_boot_each_kernel_once() {
        let boots = plan(1, 2, 3, 8);
        assert_eq!(boots.len(), 2);
        assert!(boots[0].iter().all(|r| r.variant == 0) && boots[1].iter().all(|r| r.variant == 1), "{boots:?}");
        assert_eq!(runs_of(&boots[0]), vec![(0, 1), (0, 2), (0, 3)]);
        assert_eq!(runs_of(&boots[1]), runs_of(&boots[0]));
    }

    #[test]
    fn variants_take_turns_boot_by_boot_and_every_run_is_planned_once() {
        // 4 points x 5 runs = 20 runs a variant: 3 boots of 6-7 each, A B C A B C A B C.
        let boots = plan(4, 3, 5, 8);
        assert_eq!(boots.len(), 9);
        let variants: Vec<usize> = boots.iter().map(|b| b[0].variant).collect();
        assert_eq!(variants, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
        assert!(
            boots.iter().all(|b| (1..=8).contains(&b.len()) && b.iter().all(|r| r.variant == b[0].variant)),
            "{boots:?}"
        );
        assert_eq!(boots.iter().map(Vec::len).collect::<Vec<_>>(), vec![6, 6, 6, 7, 7, 7, 7, 7, 7]);
        // The first boot has every point's first run and one second run: run by run.
        assert_eq!(runs_of(&boots[0]), vec![(0, 1), (1, 1), (2, 1), (3, 1), (0, 2), (1, 2)]);
        let mut all: Vec<PlannedRun> = boots.concat();
        all.sort_by_key(|r| (r.variant, r.point, r.run));
        let expected: Vec<PlannedRun> = (0..3)
            .flat_map(|variant| {
                (0..4).flat_map(move |point| (1..=5).map(move |run| PlannedRun { point, variant, run }))
            })
            .collect();
        assert_eq!(all, expected, "each run exactly once");
        // Nothing to run: no boot.
        assert!(plan(0, 2, 3, 8).is_empty());
        assert!(plan(3, 2, 0, 8).is_empty());
        // The --all view: 30 points, one run, two variants: 4 boots a kernel, not 30.
        let all = plan(30, 2, 1, 8);
        assert_eq!(all.len(), 8);
        assert!(all.iter().all(|b| b.iter().all(|r| r.run == 1)));
    }

    #[test]
    fn two_lanes_cut_each_variants_runs_in_two_boots_that_take_turns() {
        // review: 4 cases, 2 runs each, on base and the patch, two guests at once.
        let per_boot = runs_per_boot(4 * 2, 2, 8);
        assert_eq!(per_boot, 4);
        let boots = plan(4, 2, 2, per_boot);
        let shape: Vec<(usize, Vec<(usize, usize)>)> = boots.iter().map(|b| (b[0].variant, runs_of(b))).collect();
        let run = |k| (0..4).map(|p| (p, k)).collect::<Vec<_>>();
        assert_eq!(shape, vec![(0, run(1)), (1, run(1)), (0, run(2)), (1, run(2))]);
        assert_eq!(runs_per_boot(8, 1, 8), 8, "one lane: as before");
        assert_eq!(runs_per_boot(40, 2, 8), 8, "never more than the batch");
        assert_eq!(runs_per_boot(1, 4, 8), 1);
        assert_eq!(runs_per_boot(0, 2, 8), 1);
    }

    #[test]
    fn repeated_runs_get_folders_of_their_own_and_a_single_run_keeps_the_variants() {
        assert_eq!(run_name("base", 1, 1), "base");
        assert_eq!(run_name("async-align-v1", 1, 3), "async-align-v1~run-1");
        assert_eq!(run_name("async-align-v1", 3, 3), "async-align-v1~run-3");
        // No two runs of a boot share a folder: (point, name) differ within every boot.
        for (points, runs) in [(1, 3), (4, 5), (9, 1), (2, 8)] {
            for boot in plan(points, 2, runs, 8) {
                let folders: std::collections::BTreeSet<(usize, String)> =
                    boot.iter().map(|r| (r.point, run_name(["a", "b"][r.variant], r.run, runs))).collect();
                assert_eq!(folders.len(), boot.len(), "{points} points, {runs} runs: {boot:?}");
            }
        }
    }
}
