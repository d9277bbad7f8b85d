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
