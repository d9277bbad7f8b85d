//! The boots of a test run: the points its selected trials need, planned into boots by
//! [`super::plan_boots`], each boot run once, by the first trial that needs one of its
//! points, in this process (`cargo test`) or in the test run ([`SharedRun`], under
//! cargo-nextest, where every trial is a process). tests/scenarios.rs declares the trials
//! and asks this for their runs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use super::{plan_boots, Found, Job, Lab, RunOutput, SharedRun};
use crate::scenario::{Point, Scenario};

/// The owned form of a [`Job`] a trial needs: `point` of `scenario` on `variant`, known
/// by its trial name ([`Scenario::trial_name`]).
#[derive(Clone)]
pub struct Need {
    pub scenario: Scenario,
    pub point: Point,
    pub variant: String,
}

impl Need {
    pub fn new(scenario: &Scenario, point: &Point, variant: &str) -> Need {
        Need { scenario: scenario.clone(), point: point.clone(), variant: variant.to_string() }
    }

    pub fn key(&self) -> String {
        self.scenario.trial_name(&self.variant, &self.point)
    }
}

/// A run as a trial gets it: shared by the trials that read it.
pub type SharedResult = std::result::Result<Arc<RunOutput>, String>;

/// A point's result as its boot gave it; `None`: the trial runs the point alone (another
/// process's boot failed there, or that process died before it published).
type BootResult = Option<SharedResult>;

/// The boots of a test run, each known by the points it runs.
pub struct Schedule {
    boot_of: HashMap<String, Arc<Boot>>,
    shared: Option<SharedRun>,
}

/// One planned boot: the points of one variant, its cost ([`super::point_cost`]s and a
/// boot), and its results once run.
struct Boot {
    variant: String,
    needs: Vec<Need>,
    cost: f64,
    results: OnceLock<HashMap<String, BootResult>>,
}

impl Schedule {
    /// The boots of `needs` (each point once, whoever needs it), shared through `shared`
    /// with the test run's other processes, if given.
    pub fn new<'a>(needs: impl Iterator<Item = &'a Need>, shared: Option<SharedRun>) -> Schedule {
        let mut seen = HashSet::new();
        let needs: Vec<&Need> = needs.filter(|n| seen.insert(n.key())).collect();
        let points: Vec<(&str, &Scenario)> = needs.iter().map(|n| (n.variant.as_str(), &n.scenario)).collect();
        let mut boot_of = HashMap::new();
        for planned in plan_boots(&points) {
            let boot = Arc::new(Boot {
                variant: planned.variant,
                needs: planned.points.iter().map(|i| needs[*i].clone()).collect(),
                cost: planned.cost,
                results: OnceLock::new(),
            });
            for need in &boot.needs {
                boot_of.insert(need.key(), boot.clone());
            }
        }
        Schedule { boot_of, shared }
    }

    /// The boot that runs point `key`: a number for it (the same for every point of the
    /// boot) and its cost; `None` if no boot has it.
    pub fn boot(&self, key: &str) -> Option<(usize, f64)> {
        self.boot_of.get(key).map(|b| (Arc::as_ptr(b) as usize, b.cost))
    }

    /// Point `key`'s run, from its boot (run now if no trial ran it yet); `None` if no boot
    /// has it, or if its boot left it to the trial to run alone.
    pub fn result(&self, lab: &Lab, key: &str, who: &str) -> Option<SharedResult> {
        let boot = self.boot_of.get(key)?;
        match boot.results(self, lab, who).get(key) {
            Some(result) => result.clone(),
            None => Some(Err(format!("{key}: not in its boot"))),
        }
    }

    /// The test run's shared batches, when its trials are processes of their own.
    pub fn shared(&self) -> Option<&SharedRun> {
        self.shared.as_ref()
    }

    /// Settles the test run's shared batch `id` of `points` points: takes it (`run`) if no
    /// process holds it; while another does, boots the plan's costliest boot that no process
    /// has taken yet, so no trial slot waits idle; with none left, waits for it.
    pub fn settle_shared(
        &self,
        shared: &SharedRun,
        lab: &Lab,
        id: &str,
        points: usize,
        run: &dyn Fn() -> Vec<crate::Result<RunOutput>>,
        who: &str,
    ) -> crate::Result<Found> {
        loop {
            match shared.try_batch(id, points, run)? {
                Some(found) => return Ok(found),
                None if self.help_another(shared, lab, who) => continue,
                None => return shared.batch(id, points, run),
            }
        }
    }

    /// The release the guest saw in a finished run of one of `variant`'s boots, and the
    /// run's folder. In a shared test run (where this process may have run none of them)
    /// it settles the variant's costliest boot first, booting it if no process has: a boot
    /// the matrix needs anyway.
    pub fn release_of(&self, lab: &Lab, variant: &str) -> Option<(String, std::path::PathBuf)> {
        let of_variant = || self.boot_of.values().filter(|b| b.variant == variant);
        if self.shared.is_some() {
            let costliest = of_variant()
                .max_by(|a, b| a.cost.total_cmp(&b.cost).then_with(|| b.needs[0].key().cmp(&a.needs[0].key())))?;
            costliest.results(self, lab, &format!("kernel_boots::{variant}"));
        }
        let ran = of_variant().filter_map(|b| b.results.get());
        ran.flat_map(|results| results.values())
            .find_map(|r| r.as_ref()?.as_ref().ok().map(|out| (out.env.release.clone(), out.dir.clone())))
    }

    /// Runs the costliest boot that no process of the test run has taken; whether there was
    /// one.
    fn help_another(&self, shared: &SharedRun, lab: &Lab, who: &str) -> bool {
        let mut boots: Vec<&Arc<Boot>> = self.boot_of.values().collect();
        boots.sort_by(|a, b| b.cost.total_cmp(&a.cost).then_with(|| a.needs[0].key().cmp(&b.needs[0].key())));
        boots.dedup_by(|a, b| Arc::ptr_eq(a, b));
        for boot in boots {
            let id = boot.id();
            if shared.taken(&id) {
                continue;
            }
            if let Ok(Some(Found::Ran(_))) =
                shared.try_batch(&id, boot.needs.len(), || boot.run(lab, &format!("{who} (meanwhile)")))
            {
                return true;
            }
        }
        false
    }
}

impl Boot {
    /// Each point's result: the boot run once in this process (`cargo test`), or once in
    /// the test run ([`Boot::shared`]).
    fn results(&self, schedule: &Schedule, lab: &Lab, who: &str) -> &HashMap<String, BootResult> {
        self.results.get_or_init(|| match &schedule.shared {
            Some(shared) => self.shared(schedule, shared, lab, who),
            None => self.keyed(self.run(lab, who)).into_iter().map(|(k, r)| (k, Some(r))).collect(),
        })
    }

    fn run(&self, lab: &Lab, who: &str) -> Vec<crate::Result<RunOutput>> {
        let kernel = match lab.kernel(&self.variant, who) {
            Ok(k) => k,
            Err(e) => return self.needs.iter().map(|_| Err(crate::Error::Other(e.to_string()))).collect(),
        };
        let jobs: Vec<Job> =
            self.needs.iter().map(|n| Job { scenario: &n.scenario, point: &n.point, name: &self.variant }).collect();
        lab.run_batch(&kernel, &jobs)
    }

    fn keyed(&self, results: Vec<crate::Result<RunOutput>>) -> HashMap<String, SharedResult> {
        self.needs.iter().zip(results).map(|(n, r)| (n.key(), r.map(Arc::new).map_err(|e| e.to_string()))).collect()
    }

    fn id(&self) -> String {
        SharedRun::batch_id(&self.needs.iter().map(Need::key).collect::<Vec<_>>())
    }

    /// The boot once in the test run ([`Schedule::settle_shared`]): run here if this
    /// process takes it first, else the runs another process published.
    fn shared(&self, schedule: &Schedule, shared: &SharedRun, lab: &Lab, who: &str) -> HashMap<String, BootResult> {
        let run = || self.run(lab, who);
        let found = schedule.settle_shared(shared, lab, &self.id(), self.needs.len(), &run, who);
        match found {
            Ok(Found::Ran(results)) => self.keyed(results).into_iter().map(|(k, r)| (k, Some(r))).collect(),
            // A point that failed in another process runs alone here (its error is its own).
            Ok(Found::Published(runs)) => self
                .needs
                .iter()
                .zip(runs)
                .map(|(need, run)| (need.key(), run.and_then(|r| r.ok()).map(|r| Ok(Arc::new(r)))))
                .collect(),
            Ok(Found::Abandoned(pid)) => {
                crate::progress::progress(&format!(
                    "{who}: the process that took this batch ({pid}) ended before it published; each trial runs its own point"
                ));
                self.needs.iter().map(|need| (need.key(), None)).collect()
            }
            Err(e) => self
                .needs
                .iter()
                .map(|need| (need.key(), Some(Err(format!("{who}: the test run's shared batch: {e}")))))
                .collect(),
        }
    }
}
