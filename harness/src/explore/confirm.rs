//! Confirming a finding on the real kernels, as a trial does: run its scenario in the VM
//! on each variant it concerns, normalise the kernel's trace, predict with the model on
//! what the guest measured, compare, and run the same detector on the kernel's trace.

use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use radiff_model::{Input, Trace};

use super::detect::{self, Hit};
use super::{comment, context, figures_line, policies, Finding, Options};
use crate::compare;
use crate::error::{Error, Result};
use crate::model_check::{self, Predictor};
use crate::run::{Job, Lab};
use crate::scenario::Scenario;

/// The outcome of a confirmation.
#[derive(Clone, Debug)]
pub enum Status {
    /// The kernel fires the same detector and the model equals the kernel.
    Confirmed { kernel_key: String },
    /// The model and the kernel differ, and a second run of the kernel gave the first
    /// run's trace again: the model is wrong here (the diff, rendered).
    ModelBug { diff: String },
    /// The model and the kernel differ, but two runs of the same kernel differ too, or the
    /// model gives the kernel's trace when requests complete at issue
    /// (`completion_explains`): a race the model cannot decide (the model's diff against
    /// the first run, and why it is a race).
    KernelRace { diff: String, runs: String },
    /// Model and kernel agree, but the kernel's trace does not fire the detector (only
    /// possible where the synthesised measurement differs from the guest's: extents,
    /// queue limits).
    NotReproduced,
    /// The VM run failed (its error): neither confirmed nor refuted.
    Failed { error: String },
}

impl Status {
    pub fn is_confirmed(&self) -> bool {
        matches!(self, Status::Confirmed { .. })
    }

    pub fn is_model_bug(&self) -> bool {
        matches!(self, Status::ModelBug { .. })
    }

    pub fn short(&self) -> &'static str {
        match self {
            Status::Confirmed { .. } => "confirmed",
            Status::ModelBug { .. } => "**model bug**",
            Status::KernelRace { .. } => "kernel race",
            Status::NotReproduced => "not reproduced",
            Status::Failed { .. } => "run failed",
        }
    }

    pub fn text(&self) -> String {
        match self {
            Status::Confirmed { kernel_key } => {
                format!("confirmed: the kernel fires it too [{kernel_key}], and the model equals the kernel")
            }
            Status::ModelBug { diff } => format!(
                "MODEL BUG: the model and the kernel differ, and a second run of the kernel repeats the first\n{diff}"
            ),
            Status::KernelRace { diff, runs } => {
                format!("KERNEL RACE: the model and the kernel differ where the kernel's trace depends on timing (not a model bug)\n{runs}\nthe model against the first run:\n{diff}")
            }
            Status::NotReproduced => {
                "not reproduced: the model equals the kernel, but the kernel's trace does not fire the detector".into()
            }
            Status::Failed { error } => format!("the run failed: {error}"),
        }
    }
}

/// A finding run on the kernels.
#[derive(Clone, Debug)]
pub struct Confirmation {
    pub finding: Finding,
    pub status: Status,
    /// "base: N reads, ...; V: ..." from the model on what the guest measured.
    pub model_figures: String,
    pub kernel_figures: String,
    /// The kernel's hit, when it fired.
    pub kernel_hit: Option<Hit>,
    /// Wall time of the disk image's preparation, when it had to be prepared.
    pub image_time: Option<Duration>,
    /// Wall time of each VM run.
    pub run_times: Vec<Duration>,
    /// Wall time of the whole confirmation.
    pub wall: Duration,
}

/// Whether the disk image `f`'s scenario needs is already prepared (then confirming it
/// costs only its runs).
pub fn image_ready(lab: &Lab, f: &Finding, o: &Options) -> bool {
    f.gen
        .scenario(Path::new("explore"), &f.name(), "", &f.variants(&o.variants[0]))
        .is_ok_and(|s| crate::run::image_ready(&lab.cache, &s))
}

/// A finding on its way through [`confirm_group`].
struct Pending<'a> {
    f: &'a Finding,
    name: String,
    variants: Vec<String>,
    policies: Vec<(String, Predictor)>,
    scenario: Option<Scenario>,
    image_time: Option<Duration>,
    run_times: Vec<Duration>,
    /// Per variant, once its first run is in: what the model was given, its trace, and
    /// the kernel's trace (normalised).
    runs: Vec<Option<(Input, Trace, Trace)>>,
    /// Per variant: the model's diff against the kernel's first run, when they differ.
    diffs: Vec<Option<String>>,
    bug: Option<String>,
    race: Option<String>,
    /// The first error (then it is [`Status::Failed`]).
    error: Option<String>,
}

impl Pending<'_> {
    fn fail(&mut self, e: impl std::fmt::Display) {
        self.error.get_or_insert_with(|| e.to_string());
    }

    fn ok(&self) -> bool {
        self.error.is_none()
    }
}

/// Runs `f`'s scenario on the kernels (the first variant of `o.variants`, and the compared
/// one for a variant change) and judges it: [`confirm_group`] of one, a failed run an
/// error.
pub fn confirm(lab: &Lab, f: &Finding, o: &Options) -> Result<Confirmation> {
    let c = confirm_group(lab, &[f], o, &mut |_| {}).pop().expect("one confirmation per finding");
    match &c.status {
        Status::Failed { error } => Err(Error::Other(error.clone())),
        _ => Ok(c),
    }
}

/// The variants `findings` run on, each once, in the order they first appear (the first
/// of `o.variants`, then the compared ones): one batch of runs each.
pub fn variants_of(findings: &[Vec<String>]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for v in findings.iter().flatten() {
        if !all.contains(v) {
            all.push(v.clone());
        }
    }
    all
}

/// A finding about to be confirmed on `variants`: nothing run yet.
impl<'a> Pending<'a> {
    fn new(f: &'a Finding, variants: Vec<String>) -> Self {
        let n = variants.len();
        Pending {
            f,
            name: f.name(),
            policies: Vec::new(),
            variants,
            scenario: None,
            image_time: None,
            run_times: Vec::new(),
            runs: vec![None; n],
            diffs: vec![None; n],
            bug: None,
            race: None,
            error: None,
        }
    }
}

/// Confirms `findings` together, each as [`confirm`] would alone: their disk images
/// prepared first (timed, for [`super::Costs`]); then each variant's kernel boots once
/// for all the findings that run on it ([`Lab::run_batch`], up to
/// [`crate::run::BATCH_POINTS`] to a boot); then the second runs that tell a model bug
/// from a kernel race (where the model and the kernel differ), again one batch per
/// kernel. A failed run (or image, or build) makes its finding [`Status::Failed`] and
/// leaves the others alone. A run's folder is `runs/NAME/VARIANT/`, the second run's
/// `runs/NAME/VARIANT-again/`. `progress` gets a line as each run starts. Each
/// confirmation's `wall` is its image's preparation and its runs' walls (a batched
/// run's own time and its share of its boot's).
pub fn confirm_group(
    lab: &Lab,
    findings: &[&Finding],
    o: &Options,
    progress: &mut dyn FnMut(&str),
) -> Vec<Confirmation> {
    let mut pending: Vec<Pending> = findings.iter().map(|f| Pending::new(f, f.variants(&o.variants[0]))).collect();
    // The scenarios and their images.
    for p in &mut pending {
        let scenario = policies(&p.variants).and_then(|pol| {
            p.policies = pol;
            p.f.gen.scenario(&lab.cache.dir("explore")?, &p.name, "", &p.variants)
        });
        match scenario {
            Ok(s) => {
                if !crate::run::image_ready(&lab.cache, &s) {
                    let t = Instant::now();
                    match lab.image(&s, &format!("explore {}", p.name)) {
                        Ok(_) => p.image_time = Some(t.elapsed()),
                        Err(e) => p.fail(e),
                    }
                }
                p.scenario = Some(s);
            }
            Err(e) => p.fail(e),
        }
    }
    let variants = variants_of(&pending.iter().map(|p| p.variants.clone()).collect::<Vec<_>>());
    // The first runs: one batch per kernel.
    for variant in &variants {
        let who: Vec<(usize, usize)> = pending
            .iter()
            .enumerate()
            .filter(|(_, p)| p.ok())
            .filter_map(|(k, p)| Some((k, p.variants.iter().position(|v| v == variant)?)))
            .collect();
        let results = run_on(lab, &pending, &who, variant, variant, progress);
        for ((k, vi), result) in who.into_iter().zip(results) {
            let p = &mut pending[k];
            let out = match result {
                Ok(out) => out,
                Err(e) => {
                    p.fail(e);
                    continue;
                }
            };
            p.run_times.push(out.wall);
            let scenario = p.scenario.as_ref().expect("a finding that runs has its scenario");
            let checked = model_check::check_with(scenario, &out.env, &out.capture, &p.policies[vi].1);
            if let Some(d) = &checked.divergence {
                let rerun = rerun(o, &p.name, variant);
                p.diffs[vi] = Some(compare::render(d, &format!("{}::{variant}", p.name), &rerun));
            }
            p.runs[vi] = Some((checked.input, checked.model, checked.kernel));
        }
    }
    // Where the model and the kernel differ, does the kernel repeat itself? One batch per
    // kernel again, before calling it the model's fault.
    for variant in &variants {
        let who: Vec<(usize, usize)> = pending
            .iter()
            .enumerate()
            .filter(|(_, p)| p.ok())
            .filter_map(|(k, p)| {
                Some((k, p.variants.iter().position(|v| v == variant).filter(|&vi| p.diffs[vi].is_some())?))
            })
            .collect();
        if who.is_empty() {
            continue;
        }
        let results = run_on(lab, &pending, &who, variant, &format!("{variant}~again"), progress);
        for ((k, vi), result) in who.into_iter().zip(results) {
            let p = &mut pending[k];
            let again = match result {
                Ok(out) => out,
                Err(e) => {
                    p.fail(e);
                    continue;
                }
            };
            p.run_times.push(again.wall);
            let (second, _) = again.normalised();
            let first = &p.runs[vi].as_ref().expect("a second run follows a first").2;
            let text = p.diffs[vi].clone().expect("a second run where they differ");
            if let Some(r) = compare::compare(first, &second) {
                let rerun = rerun(o, &p.name, variant);
                let mut text =
                    compare::render_between(&r, &format!("{}::{variant}", p.name), &rerun, ("first run", "second run"));
                if let Some(why) = race_marked(&p.runs[vi].as_ref().expect("a first run").0, &p.policies[vi].1) {
                    text = format!("{why}\n{text}");
                }
                p.race.get_or_insert(text);
            } else if let Some(why) =
                completion_explains(&p.runs[vi].as_ref().expect("a first run").0, &p.policies[vi].1, first)
            {
                p.race.get_or_insert(why);
            } else if let Some(why) = race_marked(&p.runs[vi].as_ref().expect("a first run").0, &p.policies[vi].1) {
                p.race.get_or_insert(why);
            }
            p.bug.get_or_insert(text);
        }
    }
    pending.into_iter().map(|p| judge(p, o)).collect()
}

/// The command that runs finding `name` again on `variant`: its scenario in `candidates/`,
/// which explore writes for every finding before it confirms any (the copy a confirmation
/// writes goes to a folder that depends on its verdict, unknown when a diff is rendered).
pub(super) fn rerun(o: &Options, name: &str, variant: &str) -> String {
    format!("radiff run {} --variant {variant}", o.out.join("candidates").join(format!("{name}.yaml")).display())
}

/// Why the kernel's `trace`, which the model's default completion timing does not give,
/// is still a race: the model gives it when every request completes as it is issued
/// (`IoCompletion::AtIssue`). Then the trace depends on when the guest's requests complete
/// (a splice's `prev_pos`, set after each folio, is one such place), and two runs that
/// agree only went the same way twice.
fn completion_explains(input: &Input, predictor: &Predictor, trace: &Trace) -> Option<String> {
    let at_issue = predictor.predict_with(
        input,
        &radiff_model::ModelConfig { io_completion: radiff_model::IoCompletion::AtIssue, ..Default::default() },
    );
    compare::compare(trace, &at_issue).is_none().then(|| {
        "the two runs of the kernel agree, but the model gives their trace when every request completes as it is issued \
         (IoCompletion::AtIssue) and another by default: the trace depends on when requests complete, a race in the guest"
            .to_string()
    })
}

/// Why the kernel's trace is a race here: the model marks a shape where the kernel races
/// ([`compare::RACE_MARKS`]). Where the
/// two kernel runs agree, they only went the same way twice; where they differ, it says why.
fn race_marked(input: &Input, predictor: &Predictor) -> Option<String> {
    let (_, coverage, _) = predictor.run(input);
    let mark = compare::races_marked(&coverage).next()?;
    Some(format!("the model marks a shape where the kernel races (`{}`): {}, run to run", mark.id, mark.why))
}

/// Runs `who` (finding index, variant index) of `pending` on `variant`'s kernel in one
/// batch, each in the run folder `name` of its scenario; a build that fails fails each.
fn run_on(
    lab: &Lab,
    pending: &[Pending],
    who: &[(usize, usize)],
    variant: &str,
    name: &str,
    progress: &mut dyn FnMut(&str),
) -> Vec<Result<crate::run::RunOutput>> {
    let Some(&(first, _)) = who.first() else { return Vec::new() };
    let again = if name == variant { "" } else { " (again)" };
    let kernel = match lab.kernel(variant, &format!("explore {} on {variant}", pending[first].name)) {
        Ok(k) => k,
        Err(e) => return who.iter().map(|_| Err(Error::Other(e.to_string()))).collect(),
    };
    let jobs: Vec<Job> = who
        .iter()
        .map(|&(k, _)| {
            let scenario = pending[k].scenario.as_ref().expect("a finding that runs has its scenario");
            Job { scenario, point: &scenario.points[0], name }
        })
        .collect();
    lab.run_batch_announced(&kernel, &jobs, &mut |i| {
        progress(&format!("explore: {} on {variant}{again}", pending[who[i].0].name))
    })
}

/// A finding's confirmation from its runs.
fn judge(p: Pending, o: &Options) -> Confirmation {
    let wall = p.image_time.unwrap_or_default() + p.run_times.iter().sum::<Duration>();
    let failed = |error: String, p: Pending| Confirmation {
        finding: p.f.clone(),
        status: Status::Failed { error },
        model_figures: String::new(),
        kernel_figures: String::new(),
        kernel_hit: None,
        image_time: p.image_time,
        run_times: p.run_times,
        wall,
    };
    if let Some(e) = p.error.clone() {
        return failed(e, p);
    }
    let Some(runs) = p.runs.iter().map(Option::as_ref).collect::<Option<Vec<_>>>().filter(|r| !r.is_empty()) else {
        return failed("no variant to run".into(), p);
    };
    let figures = |traces: Vec<&Trace>| {
        p.variants.iter().zip(traces).map(|(v, t)| format!("{v}: {}", figures_line(t))).collect::<Vec<_>>().join("; ")
    };
    let kernels: Vec<&Trace> = runs.iter().map(|r| &r.2).collect();
    let f = p.f;
    let kernel_hit = match &f.variant {
        Some(v) => detect::variant_change(kernels[0], kernels[1], v),
        None => detect::run_all(kernels[0], &context(&runs[0].0), &o.thresholds)
            .into_iter()
            .find(|h| h.detector == f.hit.detector),
    };
    let status = match (p.bug.clone(), &kernel_hit) {
        (Some(diff), _) if p.race.is_some() => Status::KernelRace { diff, runs: p.race.clone().unwrap_or_default() },
        (Some(diff), _) => Status::ModelBug { diff },
        (None, Some(h)) => Status::Confirmed { kernel_key: h.key.clone() },
        (None, None) => Status::NotReproduced,
    };
    Confirmation {
        finding: f.clone(),
        status,
        model_figures: figures(runs.iter().map(|r| &r.1).collect()),
        kernel_figures: figures(kernels.clone()),
        kernel_hit,
        image_time: p.image_time,
        run_times: p.run_times.clone(),
        wall,
    }
}

impl Confirmation {
    /// Writes the finding's scenario to `dir` (confirmed: `NAME.yaml`; a model bug:
    /// `model-bugs/NAME.yaml` with the diff in its comment; not reproduced:
    /// `not-reproduced/NAME.yaml`).
    pub fn write(&self, dir: &Path, o: &Options) -> Result<()> {
        let f = &self.finding;
        let mut c = comment(f, o, &self.model_figures, Some(&self.kernel_figures));
        // Each status: its lines in the comment, and the folder of DIR it is written to.
        let folder = match &self.status {
            Status::Confirmed { kernel_key } => {
                let _ = writeln!(
                    c,
                    "The kernel's trace fires {} [{kernel_key}]; the model equals the kernel.",
                    f.hit.detector
                );
                None
            }
            Status::ModelBug { diff } => {
                let _ = writeln!(
                    c,
                    "MODEL BUG: the model and the kernel differ (a second run of the kernel repeats the first):"
                );
                for line in diff.lines() {
                    let _ = writeln!(c, "  {line}");
                }
                Some("model-bugs")
            }
            Status::KernelRace { diff, runs } => {
                let _ = writeln!(c, "KERNEL RACE: two runs of the same kernel differ, or the model gives the kernel's trace under another completion timing or marks the shape as a race, so the model (which equals one outcome or none) cannot be judged here:");
                for line in runs.lines().chain(std::iter::once("the model against the first run:")).chain(diff.lines())
                {
                    let _ = writeln!(c, "  {line}");
                }
                Some("races")
            }
            Status::NotReproduced => {
                let _ = writeln!(c, "Not reproduced: the kernel's trace does not fire {}.", f.hit.detector);
                Some("not-reproduced")
            }
            Status::Failed { error } => {
                let _ = writeln!(c, "The run on the kernel failed:");
                for line in error.lines() {
                    let _ = writeln!(c, "  {line}");
                }
                Some("failed")
            }
        };
        let path = folder.map_or_else(|| dir.to_path_buf(), |d| dir.join(d)).join(format!("{}.yaml", f.name()));
        let text = f.gen.yaml(&c, &f.variants(&o.variants[0]));
        crate::cache::write_atomic(&path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use crate::model_check::Predictor;
    use radiff_model::{predict_with, Input, IoCompletion, ModelConfig, Op, Policy, QueueLimits};

    fn input(ops: Vec<Op>) -> Input {
        let mut input = Input::xfs_on_nvme(8 << 20, ops);
        input.queue = QueueLimits::nvme_qemu(4, 512);
        input
    }

    fn at_issue(input: &Input) -> radiff_model::Trace {
        predict_with(input, &Policy::BASE, &ModelConfig { io_completion: IoCompletion::AtIssue, ..Default::default() })
    }

    #[test]
    fn a_kernel_trace_the_model_gives_when_requests_complete_at_issue_is_a_race_not_a_model_bug() {
        // A splice whose async mark lies in its own sync window: its prev_pos there depends
        // on completion (model/tests/splice_timing.rs). The kernel's trace as the model
        // gives it at issue differs from the default prediction, and is explained.
        let splice = input(vec![Op::Splice { fd: 0, offset: 0, len: 128 << 10, pipe: 64 << 10, sendfile: false }]);
        let kernel = at_issue(&splice);
        assert!(
            crate::compare::compare(&kernel, &radiff_model::predict(&splice, &Policy::BASE)).is_some(),
            "the default and at-issue predictions should differ here"
        );
        let why = super::completion_explains(&splice, &Predictor::Port(Policy::BASE), &kernel)
            .expect("explained by completion timing");
        assert!(why.contains("IoCompletion::AtIssue"), "{why}");
        // A kernel trace neither timing gives (another scenario's) is not explained.
        let other = at_issue(&input(vec![Op::Read { fd: 0, offset: 0, len: 1 << 20 }]));
        assert!(super::completion_explains(&splice, &Predictor::Port(Policy::BASE), &other).is_none());
    }

    #[test]
    fn a_shape_the_model_marks_as_the_kernels_race_is_a_race() {
        use radiff_model::MadvAdvice;
        let map = |map| Op::Mmap { map, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: false, populate: false };
        let touch = |map, page: u64| Op::Touch { map, offset: page * 4096 };
        // Pages cached at random through one mapping split the second mapping's fault window.
        let random = Op::Madvise { map: 0, offset: 0, len: 8 << 20, advice: MadvAdvice::Random };
        let split = Input::xfs_on_nvme(8 << 20, vec![map(0), random, touch(0, 2), touch(0, 4), map(1), touch(1, 1)]);
        let why = super::race_marked(&split, &Predictor::Port(Policy::BASE))
            .expect("a fault woken with its block's reads in flight");
        assert!(why.contains(radiff_model::fault::FAULT_RACE), "{why}");
        assert!(
            super::race_marked(&Input::xfs_on_nvme(8 << 20, vec![map(1), touch(1, 1)]), &Predictor::Port(Policy::BASE))
                .is_none(),
            "a cold file"
        );
    }
}
