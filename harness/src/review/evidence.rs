//! The cases a review weighs: the repository's scenario points and the search's smallest
//! findings, what the model predicts of each on base and on the patch, and what the two
//! kernels did, each run twice.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use radiff_model::{explain, ModelConfig, Policy, Trace};

use super::questions::Hinted;
use crate::explore::detect::{changes, requests_or_folios_differ, Change, Figure};
use crate::model_check::Predictor;
use crate::run::Lab;
use crate::scenario::Scenario;
use crate::summary::{page_count, Figures, Pages};

/// Where a case comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A scenario of `scenarios/`.
    Repository,
    /// The search's smallest finding of its kind (`key`: the detector's grouping key).
    Found { key: String },
    /// The generated covering set, run where the model cannot follow the patch
    /// ([`super::covering`]).
    Covering,
}

/// One scenario point, weighed.
#[derive(Clone, Debug)]
pub struct Case {
    /// `SCENARIO` or `SCENARIO (POINT)`.
    pub name: String,
    pub scenario: Scenario,
    pub point: usize,
    pub origin: Origin,
    /// Its file in the review folder (found cases), or in `scenarios/`.
    pub file: PathBuf,
    /// The model's traces on base and on the patch (on one contiguous extent).
    pub model: Option<(Trace, Trace)>,
    /// The model's traces on base and on the patch with the case's hints left out
    /// ([`crate::review::questions::without_hints`]), where it gives some: what the hint
    /// detectors weigh the hints against.
    pub unhinted: Option<(Trace, Trace)>,
    /// Where the model's two traces part, and the base's decisions there.
    pub parting: Option<(usize, Vec<String>)>,
    /// What the kernels did.
    pub runs: Option<KernelRuns>,
    /// What the kernels did with the case's hints left out, where the model's hint
    /// detectors fire on it ([`Case::hints_fire_on_model`]): what the kernels check them on.
    pub unhinted_runs: Option<KernelRuns>,
    /// Why it was not run on the kernels, when it was not.
    pub not_run: Option<String>,
    /// Whether it is of the patch's reach: the kernels were to run it (the model says it
    /// changes, or the model cannot say and the patch can reach it).
    pub wanted: bool,
}

/// The kernels' runs of a case: each kernel's figures per run and its first run's trace.
#[derive(Clone, Debug)]
pub struct KernelRuns {
    pub base: Vec<Figures>,
    pub patch: Vec<Figures>,
    pub base_trace: Trace,
    pub patch_trace: Trace,
    /// Where some run's tasks' readahead raced (threads, fio jobs on one file), the pages
    /// each run of base and of the patch brought in: then only they repeat, and only they
    /// are compared ([`crate::summary::raced_snapshot`], as the trials' snapshots).
    pub raced: Option<(Vec<Pages>, Vec<Pages>)>,
}

impl KernelRuns {
    /// Why the runs cannot be trusted to repeat: two runs of one kernel that differ (where
    /// the tasks raced, in the pages they brought in).
    pub fn race(&self) -> Option<String> {
        if let Some((base, patch)) = &self.raced {
            for (name, runs) in [("base", base), ("the patch", patch)] {
                if let Some(other) = runs.iter().skip(1).find(|p| **p != runs[0]) {
                    return Some(format!(
                        "two runs of {name} differ in the pages brought in, the one figure that repeats where tasks race: {} vs {} pages",
                        page_count(&runs[0]),
                        page_count(other)
                    ));
                }
            }
            return None;
        }
        for (name, runs) in [("base", &self.base), ("the patch", &self.patch)] {
            if let Some(other) = runs.iter().skip(1).find(|f| **f != runs[0]) {
                return Some(format!("two runs of {name} differ: {}", differing(&runs[0], other)));
            }
        }
        None
    }
}

/// The figures that differ between two runs, `device reads 35 vs 36, ...`; `request sizes`
/// when only the sizes do.
fn differing(a: &Figures, b: &Figures) -> String {
    let figures = [
        ("device reads", a.data_reads, b.data_reads),
        ("metadata reads", a.metadata_reads, b.metadata_reads),
        ("bytes read", a.bytes_read, b.bytes_read),
        ("windows", a.windows, b.windows),
        ("folios", a.folios, b.folios),
        ("faults", a.faults, b.faults),
    ];
    let mut parts: Vec<String> =
        figures.iter().filter(|f| f.1 != f.2).map(|(name, x, y)| format!("{name} {x} vs {y}")).collect();
    if a.read_sizes != b.read_sizes {
        parts.push(format!("request sizes {} vs {}", a.sizes_line(3), b.sizes_line(3)));
    }
    if a.folio_orders != b.folio_orders {
        parts.push(format!("folio orders {} vs {}", a.orders_line(), b.orders_line()));
    }
    parts.join(", ")
}

impl Case {
    /// A case not yet predicted nor run.
    pub fn new(name: String, scenario: Scenario, point: usize, origin: Origin, file: PathBuf) -> Case {
        Case {
            name,
            scenario,
            point,
            origin,
            file,
            model: None,
            unhinted: None,
            parting: None,
            runs: None,
            unhinted_runs: None,
            not_run: None,
            wanted: false,
        }
    }

    /// Base's trace and the patch's: the kernels' first runs where they ran, else the model's.
    fn traces(&self) -> Option<(&Trace, &Trace)> {
        match (&self.runs, &self.model) {
            (Some(r), _) => Some((&r.base_trace, &r.patch_trace)),
            (None, Some((a, b))) => Some((a, b)),
            (None, None) => None,
        }
    }

    /// What changed, base against patch, from the kernels where they ran, else the model;
    /// where the kernels' tasks raced, the pages brought in alone.
    pub fn changes(&self) -> Vec<Change> {
        if let Some((base, patch)) = self.raced_pages() {
            return match base == patch {
                true => Vec::new(),
                false => vec![Change::new(Figure::PagesIn, page_count(base) as f64, page_count(patch) as f64)],
            };
        }
        match self.traces() {
            Some((a, b)) if requests_or_folios_differ(a, b) => changes(a, b),
            _ => Vec::new(),
        }
    }

    /// Whether the model can predict this case only from a run's recorded calls (a program
    /// step's), and has none yet: [`record_programs`] runs it on base.
    pub fn needs_recording(&self) -> bool {
        self.model.is_none() && !self.scenario.programs.is_empty()
    }

    /// Whether the kernels (or, not run, the model) show a change of requests or folios;
    /// where the kernels' tasks raced, of the pages brought in.
    pub fn changed(&self) -> bool {
        if let Some((base, patch)) = self.raced_pages() {
            return base != patch;
        }
        self.traces().is_some_and(|(a, b)| requests_or_folios_differ(a, b))
    }

    /// The pages base's first run and the patch's brought in, where the kernels ran it and
    /// its tasks raced.
    pub fn raced_pages(&self) -> Option<(&Pages, &Pages)> {
        let (base, patch) = self.runs.as_ref()?.raced.as_ref()?;
        Some((base.first()?, patch.first()?))
    }

    pub fn worse(&self) -> bool {
        self.changes().iter().any(|c| c.worse)
    }

    /// The largest relative change of a figure the device or the page cache pays for
    /// (reads, bytes, folios, pages per folio: how strongly the case shows the patch). The
    /// count of readahead windows is left out: a patch that routes a hint through
    /// page_cache_sync_ra() turns 0 windows into 64 for the same reads, and made that case
    /// the headline over one whose reads grew 3.5 times.
    pub fn strength(&self) -> f64 {
        self.changes()
            .iter()
            .filter(|c| c.figure != Figure::Windows)
            .map(|c| (c.variant - c.base).abs() / c.base.abs().max(1.0))
            .fold(0.0, f64::max)
    }

    /// Whether something weighed it: the model predicted it, or the kernels ran it.
    pub fn weighed(&self) -> bool {
        self.model.is_some() || self.runs.is_some()
    }

    /// Whether the kernels ran it twice each without a race and it changed there.
    pub fn shown_by_kernels(&self) -> bool {
        self.runs.as_ref().is_some_and(|r| r.race().is_none()) && self.changed()
    }

    /// Whether the model's hint detectors fire on this case (the patch ignores its hints
    /// where base heeds them, or they reset its stream): then the kernels run it with its
    /// hints left out too ([`Case::unhinted_single`]).
    pub fn hints_fire_on_model(&self) -> bool {
        use super::questions::{hints_ignored, hints_reset};
        self.model_hinted()
            .is_some_and(|(base, patch)| hints_ignored(base, patch).is_some() || hints_reset(base, patch).is_some())
    }

    /// The model's traces of base and of the patch with the case's hints and without them,
    /// where it predicted both.
    pub fn model_hinted(&self) -> Option<(Hinted<'_>, Hinted<'_>)> {
        let (Some((a, b)), Some((a0, b0))) = (&self.model, &self.unhinted) else { return None };
        Some((Hinted { with: a, without: a0 }, Hinted { with: b, without: b0 }))
    }

    /// How many pages base's first run and the patch's brought in, where the kernels ran it
    /// and its tasks raced ([`Case::raced_pages`]).
    pub fn raced_page_counts(&self) -> Option<(u64, u64)> {
        self.raced_pages().map(|(x, y)| (page_count(x), page_count(y)))
    }

    /// [`Case::single`] with its hint steps left out ([`super::questions::is_hint_step`]).
    pub fn unhinted_single(&self) -> Scenario {
        let mut s = self.single();
        s.steps.retain(|step| !super::questions::is_hint_step(step));
        s
    }

    /// The model's input for this case's point (one contiguous extent per file).
    pub fn input(&self) -> radiff_model::Input {
        crate::explore::synthetic_input(&self.single())
    }

    /// The scenario with this case's point only.
    pub fn single(&self) -> Scenario {
        let mut s = self.scenario.clone();
        s.points = vec![self.scenario.points[self.point].clone()];
        s
    }
}

/// The repository's scenario points as cases (not yet predicted).
pub fn repository(scenarios: &[Scenario]) -> Vec<Case> {
    let mut out = Vec::new();
    for s in scenarios {
        for (i, p) in s.points.iter().enumerate() {
            let name = match &p.label {
                Some(l) => format!("{} ({l})", s.name),
                None => s.name.clone(),
            };
            out.push(Case::new(name, s.clone(), i, Origin::Repository, s.path.clone()));
        }
    }
    out
}

/// What one case on the kernels is guessed to cost before any has run (its share of a
/// boot, an image): a program's recording on base, or a case's runs.
const GUESS_CASE: Duration = Duration::from_secs(40);

/// Predicts `cases` on base (the port under `base`) and on the patch (`patch`), and where a
/// prediction changes, where the two part; a case the model cannot take (a program's calls
/// are known only from a run) is left unpredicted.
pub fn predict(cases: &mut [Case], base: &Policy, patch: &Predictor) {
    for c in cases.iter_mut().filter(|c| c.scenario.programs.is_empty()) {
        let input = c.input();
        predict_on(c, &input, base, patch);
    }
}

/// Predicts `c` on `input` on base and on the patch, and where they part.
fn predict_on(c: &mut Case, input: &radiff_model::Input, base: &Policy, patch: &Predictor) {
    let explained = explain(input, base, &ModelConfig::default());
    let other = patch.predict(input);
    if requests_or_folios_differ(&explained.trace, &other) {
        c.parting = crate::explore::cause::parting_from(&explained, input, patch, &crate::explore::cause::keys_a_cause);
    }
    c.model = Some((explained.trace, other));
    // A program's own hints (fio's fadvise_hint) cannot be left out of its run: only a
    // scenario's hint steps are weighed.
    let steps = c.scenario.programs.is_empty();
    c.unhinted = super::questions::without_hints(&input.ops).filter(|_| steps).map(|ops| {
        let without = radiff_model::Input { ops, ..input.clone() };
        (radiff_model::predict(&without, base), patch.predict(&without))
    });
}

/// The program cases, which the model can predict only from their calls: each runs once on
/// base (batched, a boot per [`crate::run::BATCH_POINTS`]) to record them, and
/// [`predict_recorded`] judges them from those runs. A case whose recording would not fit
/// before `deadline` is left to the kernels; so is one whose run failed (it is not among
/// the runs returned). Touches only the lab: review runs it while the search runs on the
/// model.
pub fn record_programs(
    lab: &Lab,
    cases: &[Case],
    deadline: Instant,
    progress: &(dyn Fn(&str) + Sync),
) -> crate::error::Result<Vec<(usize, crate::run::RunOutput)>> {
    let todo: Vec<usize> = cases.iter().enumerate().filter(|(_, c)| c.needs_recording()).map(|(i, _)| i).collect();
    let mut recorded = Vec::new();
    if todo.is_empty() {
        return Ok(recorded);
    }
    let kernel = lab.kernel("base", "radiff review")?;
    for chunk in todo.chunks(crate::run::BATCH_POINTS) {
        let left = deadline.saturating_duration_since(Instant::now());
        if GUESS_CASE * chunk.len() as u32 > left {
            progress(&format!(
                "review: {} program scenario(s) left to the kernels: recording their calls first would not fit in the {} s left",
                chunk.len(),
                left.as_secs()
            ));
            break;
        }
        let singles: Vec<Scenario> = chunk.iter().map(|&i| cases[i].single()).collect();
        let names: Vec<String> = singles.iter().map(|_| "base".to_string()).collect();
        let jobs: Vec<crate::run::Job> = singles
            .iter()
            .zip(&names)
            .map(|(s, name)| crate::run::Job { scenario: s, point: &s.points[0], name })
            .collect();
        let listed: Vec<&str> = chunk.iter().map(|&i| cases[i].name.as_str()).collect();
        progress(&format!("review: recording the calls of {} on base, for the model", listed.join(", ")));
        for (&i, result) in chunk.iter().zip(lab.run_batch(&kernel, &jobs)) {
            match result {
                Ok(out) => recorded.push((i, out)),
                Err(e) => progress(&format!(
                    "review: recording {} failed, the kernels decide it: {}",
                    cases[i].name,
                    e.to_string().lines().next().unwrap_or("")
                )),
            }
        }
    }
    Ok(recorded)
}

/// The program cases [`record_programs`] ran: where the model under `base` equals the run,
/// both models predict on the run's own input (its calls, its layout) and the case is
/// judged like any predicted one (a program makes the same calls on every kernel: the
/// trials check it). A run the model does not follow leaves its case to the kernels.
pub fn predict_recorded(
    cases: &mut [Case],
    recorded: Vec<(usize, crate::run::RunOutput)>,
    base: &Policy,
    patch: &Predictor,
    progress: &dyn Fn(&str),
) {
    for (i, out) in recorded {
        let single = cases[i].single();
        let check = crate::model_check::check_with(&single, &out.env, &out.capture, &Predictor::Port(*base));
        if check.divergence.is_some() || check.crash.is_some() {
            progress(&format!(
                "review: the model does not follow {}'s run on base: the kernels decide it",
                cases[i].name
            ));
            continue;
        }
        predict_on(&mut cases[i], &check.input, base, patch);
    }
}

/// Whether the patch can change what the kernel does on `case` when the model cannot say:
/// a change confined to one file system's directory (fs/f2fs/, fs/xfs/, fs/ext4/) runs only
/// on that file system.
pub fn reachable(case: &Case, changed_files: &[String]) -> bool {
    changed_files.iter().any(|f| match f.strip_prefix("fs/").and_then(|r| r.split('/').next()) {
        Some(dir) if f.matches('/').count() > 1 => case.scenario.fs.name() == dir,
        _ => true,
    })
}

/// Runs `cases` on base and on `variant`, twice each, in groups that boot each kernel once
/// per run, while the estimate of the next group fits in `left` (the first group always
/// runs: a review without kernels says nothing). A case left out says why.
pub fn run(
    lab: &Lab,
    variant: &str,
    cases: &mut [&mut Case],
    deadline: Instant,
    progress: &(dyn Fn(&str) + Sync),
) -> crate::error::Result<()> {
    const GROUP: usize = 4;
    const RUNS: usize = 2;
    let pair = ["base".to_string(), variant.to_string()];
    let mut per_case: Option<Duration> = None;
    let mut i = 0;
    while i < cases.len() {
        let end = (i + GROUP).min(cases.len());
        let left = deadline.saturating_duration_since(Instant::now());
        let guess = per_case.unwrap_or(GUESS_CASE) * (end - i) as u32;
        if i > 0 && guess > left {
            for c in cases[i..].iter_mut() {
                c.not_run = Some(format!(
                    "the budget: about {} s left, the next group needs about {} s",
                    left.as_secs(),
                    guess.as_secs()
                ));
            }
            progress(&format!("review: {} case(s) left for the model alone: the budget is spent", cases.len() - i));
            break;
        }
        let started = Instant::now();
        let mut singles: Vec<Scenario> = cases[i..end].iter().map(|c| c.single()).collect();
        // A case the model's hint detectors fire on runs again without its hints, beside it.
        let unhinted: Vec<usize> = (i..end).filter(|&k| cases[k].hints_fire_on_model()).collect();
        singles.extend(unhinted.iter().map(|&k| cases[k].unhinted_single()));
        let points: Vec<(&Scenario, &crate::scenario::Point)> = singles.iter().map(|s| (s, &s.points[0])).collect();
        let mut results = crate::report::run_points(lab, &points, &pair, RUNS, true, progress)?;
        let rest = results.split_off(end - i);
        for (c, r) in cases[i..end].iter_mut().zip(results) {
            match r {
                Ok(r) => c.runs = Some(kernel_runs(r)),
                Err(e) => c.not_run = Some(format!("its run failed: {}", e.to_string().lines().next().unwrap_or(""))),
            }
        }
        for (&k, r) in unhinted.iter().zip(rest) {
            match r {
                Ok(r) => cases[k].unhinted_runs = Some(kernel_runs(r)),
                Err(e) => progress(&format!(
                    "review: {} without its hints failed on the kernels, its hints are judged on the model: {}",
                    cases[k].name,
                    e.to_string().lines().next().unwrap_or("")
                )),
            }
        }
        per_case = Some(started.elapsed() / (end - i) as u32);
        i = end;
        let ran: Vec<&&mut Case> = cases[..end].iter().filter(|c| c.runs.is_some()).collect();
        progress(&format!(
            "review: so far on the kernels: {} of {} cases run, {} changed, {} worse, {} race(s)",
            ran.len(),
            cases.len(),
            ran.iter().filter(|c| c.shown_by_kernels()).count(),
            ran.iter().filter(|c| c.shown_by_kernels() && c.worse()).count(),
            ran.iter().filter(|c| c.runs.as_ref().is_some_and(|r| r.race().is_some())).count()
        ));
    }
    Ok(())
}

fn kernel_runs(r: crate::report::PointRuns) -> KernelRuns {
    let figures = |k: usize| r.cells[k].samples.iter().map(|s| s.figures.clone()).collect::<Vec<_>>();
    let pages = |k: usize| r.cells[k].samples.iter().map(|s| s.pages.clone()).collect::<Vec<_>>();
    let raced = r.cells.iter().flat_map(|c| &c.samples).any(|s| s.raced);
    let (base, patch) = (figures(0), figures(1));
    let raced = raced.then(|| (pages(0), pages(1)));
    let mut traces = r.traces.into_iter().map(|(_, t)| t);
    KernelRuns {
        base,
        patch,
        base_trace: traces.next().unwrap_or_default(),
        patch_trace: traces.next().unwrap_or_default(),
        raced,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::FsKind;

    fn case(fs: FsKind) -> Case {
        let mut s = Scenario::parse(
            std::path::Path::new("t.yaml"),
            "description: t\ndevice: {kind: nvme, size: 1 GiB}\nfilesystem: xfs\nfile: {size: 1 MiB}\nreads:\n  - read: {offset: 0, size: 4 KiB}\n",
        )
        .unwrap();
        s.fs = fs;
        repository(&[s]).remove(0)
    }

    #[test]
    fn a_change_inside_one_file_systems_directory_reaches_only_that_file_system() {
        let f2fs = ["fs/f2fs/data.c".to_string()];
        assert!(reachable(&case(FsKind::F2fs), &f2fs));
        assert!(!reachable(&case(FsKind::Xfs), &f2fs));
        assert!(reachable(&case(FsKind::Xfs), &["mm/readahead.c".to_string()]));
        assert!(reachable(&case(FsKind::Xfs), &["fs/f2fs/data.c".to_string(), "mm/filemap.c".to_string()]));
        assert!(reachable(&case(FsKind::Ext4), &["fs/mpage.c".to_string()]), "fs/mpage.c serves every file system");
    }

    #[test]
    fn two_runs_of_one_kernel_that_differ_are_a_race() {
        let f = |reads| Figures { data_reads: reads, ..Default::default() };
        let runs = |b: Vec<Figures>| KernelRuns {
            base: b,
            patch: vec![f(3), f(3)],
            base_trace: Trace::default(),
            patch_trace: Trace::default(),
            raced: None,
        };
        assert_eq!(runs(vec![f(1), f(1)]).race(), None);
        assert_eq!(runs(vec![f(1), f(2)]).race().unwrap(), "two runs of base differ: device reads 1 vs 2");
    }

    #[test]
    fn where_tasks_raced_only_the_pages_brought_in_are_compared_between_runs_and_kernels() {
        let f = |reads| Figures { data_reads: reads, ..Default::default() };
        let pages = |end: u64| crate::summary::Pages::from([(0, vec![(0, end)])]);
        let runs = |b: [u64; 2], p: [u64; 2]| KernelRuns {
            // Figures that differ from run to run, as the scheduler leaves them.
            base: vec![f(1), f(2)],
            patch: vec![f(3), f(4)],
            base_trace: Trace::default(),
            patch_trace: Trace::default(),
            raced: Some((b.iter().map(|&e| pages(e)).collect(), p.iter().map(|&e| pages(e)).collect())),
        };
        assert_eq!(runs([16, 16], [16, 16]).race(), None, "the pages repeat");
        assert_eq!(
            runs([16, 12], [16, 16]).race().unwrap(),
            "two runs of base differ in the pages brought in, the one figure that repeats where tasks race: 16 vs 12 pages"
        );
        let mut c = case(FsKind::Xfs);
        c.runs = Some(runs([16, 16], [16, 16]));
        assert!(
            !c.changed() && c.changes().is_empty(),
            "the same pages on both kernels: unchanged whatever the figures"
        );
        c.runs = Some(runs([16, 16], [32, 32]));
        assert!(c.changed() && c.shown_by_kernels());
        assert_eq!(c.changes(), vec![Change::new(Figure::PagesIn, 16.0, 32.0)]);
        assert!(c.worse(), "more pages brought in");
    }
}
