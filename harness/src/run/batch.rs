//! The plan: which points of a batch each boot runs.

use std::path::{Path, PathBuf};

use radiff_model::pattern;

use super::{Job, Lab, RunOutput};
use crate::error::Result;
use crate::scenario::Scenario;

/// Points one boot runs at most. Each has a disk of its own (a PCI slot, see
/// [`crate::vm::MAX_DISKS`]); more points a boot would also wait longer for its first result.
pub const BATCH_POINTS: usize = 8;

impl Lab {
    /// Runs every job on the bzImage `kernel`, [`BATCH_POINTS`] to a boot: one guest runs
    /// them one after another, each on a disk of its own (its image attached from the
    /// start, `snapshot=on`), with caches dropped, its file system mounted afresh, its own
    /// trace and its own run folder (`runs/SCENARIO/NAME[/POINT]/`, as a run alone has it;
    /// `console.log` there is the whole boot's). A point that fails (a guest error, a
    /// panic, its scenario's timeout, counted from when it started) gets the error; the
    /// points after it run in a fresh boot, or in the same one where it failed at a
    /// program step (the guest goes on: [`crate::wire::EXIT_PROGRAM_FAILED`]). Results
    /// come back in the jobs' order.
    pub fn run_batch(&self, kernel: &Path, jobs: &[Job]) -> Vec<Result<RunOutput>> {
        self.run_batch_announced(kernel, jobs, &mut |_| {})
    }

    /// [`Lab::run_batch`], calling `started(i)` once for each job `i`: as the guest starts
    /// it (seen within a second of its start), or, for a job the guest never started (its
    /// disk image or its boot failed), as it settles. `radiff report` prints its progress
    /// line for each run there.
    pub fn run_batch_announced(
        &self,
        kernel: &Path,
        jobs: &[Job],
        started: &mut dyn FnMut(usize),
    ) -> Vec<Result<RunOutput>> {
        let mut announced = vec![false; jobs.len()];
        let mut once = |i: usize| {
            if !std::mem::replace(&mut announced[i], true) {
                started(i);
            }
        };
        let mut results: Vec<Option<Result<RunOutput>>> = jobs.iter().map(|_| None).collect();
        let mut pending = Vec::new();
        for (i, job) in jobs.iter().enumerate() {
            match self.image(job.scenario, job.name) {
                Ok(image) => pending.push((i, image)),
                Err(e) => {
                    once(i);
                    results[i] = Some(Err(e));
                }
            }
        }
        let costs: Vec<f64> = pending.iter().map(|(i, _)| point_cost(jobs[*i].scenario)).collect();
        for bin in balanced_batches(&costs, BATCH_POINTS) {
            let mut rest: Vec<(usize, PathBuf)> = bin.iter().map(|k| pending[*k].clone()).collect();
            while !rest.is_empty() {
                // Every boot settles at least its first point, so this ends.
                for (i, result) in self.boot_batch(kernel, jobs, &rest, &mut once) {
                    once(i);
                    results[i] = Some(result);
                }
                rest.retain(|(i, _)| results[*i].is_none());
            }
        }
        results.into_iter().map(|r| r.expect("every job settled")).collect()
    }
}

/// A rough guess of a point's time in a TCG guest, seconds: its mount and trace dump
/// (about a second) and the pages its reads, readahead calls and touches ask for (about
/// 40000 a second: the headline's 131072 pages take about 3 s). Only for putting the
/// heavy points of a test run into different boots and starting them first.
pub fn point_cost(scenario: &Scenario) -> f64 {
    let pages: u64 = pattern::expand(&scenario.steps, scenario.file_size)
        .iter()
        .map(|op| match op {
            radiff_model::Op::Read { len, .. } | radiff_model::Op::Readahead { len, .. } => len.div_ceil(4096),
            _ => 1,
        })
        .sum();
    1.0 + pages as f64 / 40_000.0
}

/// What a boot costs besides its points (booting and rebooting, one vCPU under TCG), in
/// the units of [`point_cost`].
pub const BOOT_COST: f64 = 8.0;

/// Points of the given costs split into the fewest boots of at most `max` points, their
/// costs as even as can be (the costliest first, each to the boot with the least so
/// far): each boot's point indices, in their original order.
pub fn balanced_batches(costs: &[f64], max: usize) -> Vec<Vec<usize>> {
    let count = costs.len().div_ceil(max.max(1));
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|a, b| costs[*b].total_cmp(&costs[*a]).then(a.cmp(b)));
    let mut bins: Vec<(f64, Vec<usize>)> = vec![(0.0, Vec::new()); count];
    for i in order {
        let bin = bins
            .iter_mut()
            .filter(|b| b.1.len() < max)
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .expect("room for every point");
        bin.0 += costs[i];
        bin.1.push(i);
    }
    bins.into_iter()
        .map(|(_, mut b)| {
            b.sort();
            b
        })
        .collect()
}

/// One boot of a plan: the points of one variant it runs (indices into the planner's
/// list, in that list's order) and its cost ([`BOOT_COST`] plus each point's
/// [`point_cost`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedBoot {
    pub variant: String,
    pub points: Vec<usize>,
    pub cost: f64,
}

/// The one plan of which point goes to which boot: the points (each a variant and the
/// scenario whose point it is) grouped by variant, each variant's cut into the fewest
/// boots of at most [`BATCH_POINTS`] with even costs ([`balanced_batches`]), the costliest
/// boot first, so that the last boots to end are short ones. `cargo test`'s trials and
/// `radiff bench` both boot what this plans; `radiff report`'s repeated runs take turns
/// between variants instead (report/plan.rs).
pub fn plan_boots(points: &[(&str, &Scenario)]) -> Vec<PlannedBoot> {
    let mut by_variant: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, (variant, _)) in points.iter().enumerate() {
        match by_variant.iter_mut().find(|(v, _)| v == variant) {
            Some((_, list)) => list.push(i),
            None => by_variant.push((variant, vec![i])),
        }
    }
    let mut boots = Vec::new();
    for (variant, list) in by_variant {
        let costs: Vec<f64> = list.iter().map(|i| point_cost(points[*i].1)).collect();
        for bin in balanced_batches(&costs, BATCH_POINTS) {
            boots.push(PlannedBoot {
                variant: variant.to_string(),
                points: bin.iter().map(|k| list[*k]).collect(),
                cost: BOOT_COST + bin.iter().map(|k| costs[*k]).sum::<f64>(),
            });
        }
    }
    boots.sort_by(|a, b| b.cost.total_cmp(&a.cost));
    boots
}

/// `n` items cut into the fewest batches of at most `max`, as even as can be (their
/// index ranges, in order): 28 points of 8 at most are 4 batches of 7.
pub fn batches(n: usize, max: usize) -> Vec<std::ops::Range<usize>> {
    let count = n.div_ceil(max.max(1));
    (0..count).map(|k| (n * k / count)..(n * (k + 1) / count)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heavy_points_go_to_different_boots() {
        // 9 points, two heavy: two boots, one heavy point each.
        let mut costs = vec![1.0; 9];
        costs[2] = 50.0;
        costs[3] = 40.0;
        let b = balanced_batches(&costs, 8);
        assert_eq!(b.len(), 2);
        assert!(b.iter().all(|bin| bin.contains(&2) != bin.contains(&3)), "{b:?}");
        assert_eq!(b.iter().map(Vec::len).sum::<usize>(), 9);
        assert!(b.iter().all(|bin| bin.windows(2).all(|w| w[0] < w[1])), "in the points' order: {b:?}");
        assert_eq!(balanced_batches(&[1.0; 8], 8), vec![(0..8).collect::<Vec<_>>()]);
        assert!(balanced_batches(&[], 8).is_empty());
        for n in 1..30 {
            let b = balanced_batches(&vec![1.0; n], 8);
            assert_eq!(b.len(), n.div_ceil(8));
            assert!(b.iter().all(|bin| !bin.is_empty() && bin.len() <= 8));
        }
    }

    fn scenario(read: &str) -> Scenario {
        let text = format!(
            "description: d\ndevice: {{kind: nvme, size: 4 GiB}}\nfilesystem: xfs\nfile: {{size: 1 GiB}}\nreads:\n  - sequential: {{from: 0, size: {read}}}\n"
        );
        Scenario::parse(std::path::Path::new("scenarios/t.yaml"), &text).unwrap()
    }

    #[test]
    fn one_plan_groups_points_by_variant_into_even_boots_the_costliest_first() {
        let (small, big) = (scenario("4 KiB"), scenario("1 GiB"));
        // 10 points on base (one heavy), 2 on v: base in 2 boots, v in 1.
        let mut points: Vec<(&str, &Scenario)> = vec![("base", &small); 9];
        points.insert(4, ("base", &big));
        points.push(("v", &small));
        points.push(("v", &small));
        let boots = plan_boots(&points);
        assert_eq!(boots.len(), 3, "{boots:?}");
        assert!(boots.windows(2).all(|w| w[0].cost >= w[1].cost), "the costliest first: {boots:?}");
        assert_eq!(boots[0].variant, "base");
        assert!(boots[0].points.contains(&4), "the heavy point's boot costs most: {boots:?}");
        let mut all: Vec<usize> = boots.iter().flat_map(|b| b.points.clone()).collect();
        all.sort();
        assert_eq!(all, (0..12).collect::<Vec<_>>(), "every point once");
        for b in &boots {
            assert!(b.points.iter().all(|i| points[*i].0 == b.variant), "one variant a boot: {b:?}");
            assert!(b.points.windows(2).all(|w| w[0] < w[1]) && b.points.len() <= BATCH_POINTS);
            let cost = BOOT_COST + b.points.iter().map(|i| point_cost(points[*i].1)).sum::<f64>();
            assert!((b.cost - cost).abs() < 1e-9, "{b:?}");
        }
        assert_eq!(boots.iter().filter(|b| b.variant == "v").count(), 1);
        assert!(plan_boots(&[]).is_empty());
    }

    #[test]
    fn points_are_cut_into_the_fewest_even_batches() {
        assert_eq!(batches(28, 8), vec![0..7, 7..14, 14..21, 21..28]);
        assert_eq!(batches(8, 8), vec![0..8]);
        assert_eq!(batches(9, 8), vec![0..4, 4..9]);
        assert_eq!(batches(1, 8), vec![0..1]);
        assert!(batches(0, 8).is_empty());
        for n in 1..40 {
            let b = batches(n, 8);
            assert_eq!(b.iter().map(|r| r.len()).sum::<usize>(), n);
            assert!(b.iter().all(|r| (1..=8).contains(&r.len())), "{n}: {b:?}");
            assert_eq!(b.len(), n.div_ceil(8));
        }
    }
}
