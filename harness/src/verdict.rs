//! A trial's verdict as data: what it checked, what failed and what it only shows, decided
//! from one run of the kernel (the model check, the race marks, the port's explanation, a
//! known divergence, the no-policy path, the snapshot) and rendered in one place.

use std::path::PathBuf;

use crate::compare::{self, Divergence, RaceMark};
use crate::kernels::ModelExpectation;
use crate::model_check::{self, Predictor};
use crate::run::{Lab, RunOutput};
use crate::scenario::{Point, Scenario};
use crate::summary;

/// Why a trial fails.
#[derive(Clone, Debug)]
pub enum Failure {
    /// The model marks a shape of this run where the kernel races, so no run is exact.
    Race(&'static RaceMark),
    /// The kernel and the model part; `text` is the rendered divergence with what explains
    /// it (the declared policy, a moved base's port, the decisions in kernel lines).
    Diverged { divergence: Divergence, text: String },
    /// The scenario says `known_divergence` but the kernel and the model now agree.
    AgreesDespiteKnownDivergence { path: PathBuf, reason: String },
    /// The kernel's trace differs from its snapshot: the review text.
    Snapshot(String),
    /// The trial has no snapshot yet: what to do.
    NoSnapshot(String),
    /// The hybrid's C crashed on this run's input.
    Crashed(String),
    /// A program made other calls on this kernel than on the base kernel.
    ProgramCalls(String),
    /// A program's populating call (MAP_POPULATE, MADV_POPULATE_READ, MADV_COLLAPSE) began
    /// with block requests in flight.
    LoadRace(String),
    /// Where a program's tasks overlapped, a readahead decision the kernel made is not the
    /// model's for the state it recorded ([`crate::decisions`]).
    Decision(String),
    /// The scenario says `model_refuses` but the model followed every call (`got` none)
    /// or refused for another reason.
    RefusalChanged { path: PathBuf, expected: String, got: Option<String> },
}

/// One trial's outcome on its run.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The trial's name.
    pub name: String,
    /// The command that reruns just this trial.
    pub rerun: String,
    /// Why it fails; empty when it passes.
    pub failures: Vec<Failure>,
    /// What the trial shows without judging it: which checks ran when the model did not,
    /// and how the trace differs from the base kernel's.
    pub shown: Option<String>,
    /// A divergence the scenario marks as known: shown, not failed.
    pub known: Option<String>,
    /// The trial's one-line account: figures, time, what was filtered and normalised, and
    /// the run folder.
    pub summary: String,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Whether the run's only failure is a trace that differs from its snapshot: a claim
    /// that the kernel changed, which a second run must repeat before it is made
    /// ([`Verdict::after_second_run`]).
    pub fn differs_from_snapshot_alone(&self) -> bool {
        !self.failures.is_empty() && self.failures.iter().all(|f| matches!(f, Failure::Snapshot(_)))
    }

    /// The verdict of a trial whose first run (`self`, its folder `first`) differed from its
    /// snapshot alone, given a second run of the same point in a boot of its own (`second`,
    /// its folder `second_dir`). Where the second run passes, the difference did not repeat:
    /// it is a race, told with the first run's difference, and the trial passes on the
    /// second. Where it fails too, the trial fails with the second run's failures, saying
    /// whether the first run differed the same way (a change that repeats) or otherwise
    /// (the trace races as well).
    pub fn after_second_run(
        self,
        first: &std::path::Path,
        mut second: Verdict,
        second_dir: &std::path::Path,
    ) -> Verdict {
        let first_diff: Vec<String> = self.failures.iter().map(|f| self.failure_text(f)).collect();
        let folders = format!("first run {}, second {}", first.display(), second_dir.display());
        if second.passed() {
            let note = format!(
                "{}: race: the first run's trace differed from its snapshot and a second run, in a boot of its own, \
                 equalled it; the difference did not repeat, so it is timing, not this kernel ({folders}). The first run's difference:\n{}",
                self.name,
                first_diff.join("\n")
            );
            second.shown = Some(format!("{}{note}", second.shown.take().unwrap_or_default()));
            return second;
        }
        let second_diff: Vec<String> = second.failures.iter().map(|f| second.failure_text(f)).collect();
        let how = if second.differs_from_snapshot_alone() && second_diff == first_diff {
            "the same way: the change repeats".to_string()
        } else {
            format!("otherwise, so the trace races too; the first run's difference:\n{}", first_diff.join("\n"))
        };
        second.failures.push(Failure::Snapshot(format!(
            "{}: this is the second run; the first, in another boot, differed from the snapshot {how} ({folders})\n",
            self.name
        )));
        second
    }

    /// The text a trial prints: `Ok` with what it shows when it passes, `Err` with every
    /// failure otherwise.
    pub fn render(&self) -> Result<String, String> {
        if self.passed() {
            return Ok(self.shown.clone().unwrap_or_default());
        }
        let mut failures: Vec<String> = self.failures.iter().map(|f| self.failure_text(f)).collect();
        if let Some(text) = &self.shown {
            // The only check that can fail here is the snapshot's: say so, with the difference.
            failures.push(format!("{text}(this trial fails only on its snapshot: review the kernel's trace with `cargo insta review`, then `cargo insta accept`)"));
        }
        Err(failures.join("\n"))
    }

    fn failure_text(&self, f: &Failure) -> String {
        let name = &self.name;
        match f {
            Failure::Race(mark) => {
                format!("{name}: {}, run to run, so no trial can check it exactly; {}\n", mark.why, mark.avoid)
            }
            Failure::Diverged { text, .. } => text.clone(),
            Failure::AgreesDespiteKnownDivergence { path, reason } => format!(
                "{}: marked as a known divergence ({reason}) but kernel and model now agree: remove `known_divergence`",
                path.display()
            ),
            Failure::Snapshot(text)
            | Failure::NoSnapshot(text)
            | Failure::Crashed(text)
            | Failure::Decision(text)
            | Failure::ProgramCalls(text) => text.clone(),
            Failure::LoadRace(text) => {
                format!("{name}: {text}, run to run, so no trial can check it exactly; {LOAD_RACE_AVOID}\n")
            }
            Failure::RefusalChanged { path, expected, got } => refusal_changed(path, expected, got.as_deref()),
        }
    }
}

impl Verdict {
    /// Adds what the model check found: races, a crash of the hybrid's C, windows only
    /// timing separates (to `report`), a divergence (failed, or shown when known).
    fn model_checked(
        &mut self,
        lab: &Lab,
        t: &TrialRun,
        checked: &model_check::ModelCheck,
        predictor: &Predictor,
        expectation: &ModelExpectation,
        report: &mut String,
    ) {
        let (scenario, name) = (t.scenario, t.name);
        // Exact: the guest waits for the device between touches, so the fault path's
        // trace does not depend on when reads complete (radiff_model::Touches).
        self.failures.extend(checked.races().map(Failure::Race));
        if let Some(crash) = &checked.crash {
            self.failures.push(Failure::Crashed(format!(
                "{name}: the hybrid's C crashed: {crash}; the kernel's trace is kept in {} (the model's stops at that call)\n",
                t.out.dir.display()
            )));
        }
        for w in &checked.timed {
            report.push_str(&format!(
                "{name}: window {}: ra.prev_pos {} (model {}) not compared: a splice records prev_pos after each folio, so where its reader had got to depends on which reads had completed (docs/scenarios.md, splice)\n",
                w.window, w.kernel, w.model
            ));
        }
        match &checked.divergence {
            None => {
                if let Some(reason) = &scenario.known_divergence {
                    self.failures.push(Failure::AgreesDespiteKnownDivergence {
                        path: scenario.path.clone(),
                        reason: reason.clone(),
                    });
                }
            }
            Some(d) => {
                let ported = predictor.port_ran(&checked.coverage).map(|ran| port_ran_line(name, &ran));
                let text = divergence_text(lab, &checked.input, predictor, expectation, d, name, &self.rerun);
                let text = format!("{}{text}", ported.unwrap_or_default());
                match &scenario.known_divergence {
                    Some(reason) => self.known = Some(format!("{name}: known divergence ({reason}):\n{text}")),
                    None => self.failures.push(Failure::Diverged { divergence: d.clone(), text }),
                }
            }
        }
    }
}

/// Where a trial's run comes from, and how it is rerun.
pub struct TrialRun<'a> {
    pub scenario: &'a Scenario,
    pub point: &'a Point,
    pub variant: &'a str,
    pub name: &'a str,
    pub out: &'a RunOutput,
}

/// The checks of one trial on its run: the kernel's trace against the model's policy (or,
/// without one, shown against the base kernel's, which `base_run` gives) and against its
/// snapshot.
pub fn judge(
    lab: &Lab,
    t: &TrialRun,
    expectation: &ModelExpectation,
    base_run: impl FnOnce() -> Result<std::sync::Arc<RunOutput>, String>,
) -> Result<Verdict, String> {
    // The base kernel's run of the same point, fetched at most once (a program's calls and
    // the no-model path both compare with it).
    let (mut base_run, mut base) = (Some(base_run), None);
    let mut base_run = move || -> Result<std::sync::Arc<RunOutput>, String> {
        if base.is_none() {
            base = Some(base_run.take().expect("fetched once")()?);
        }
        Ok(base.clone().expect("fetched above"))
    };
    let (scenario, variant, name, out) = (t.scenario, t.variant, t.name, t.out);
    let (predictor, no_model) = crate::hybrid::choose::predictor(&lab.kernels, &lab.cache, variant, expectation)
        .map_err(|e| format!("{name}: {e}"))?;
    let profile = if cfg!(debug_assertions) { "" } else { "--release " };
    let rerun = format!("cargo test {profile}--test scenarios -- --exact {name}");
    let mut v = Verdict {
        name: name.to_string(),
        rerun: rerun.clone(),
        failures: Vec::new(),
        shown: None,
        known: None,
        summary: String::new(),
    };
    let mut program_lines = String::new();
    let refused = programs(scenario, out, &mut program_lines);
    v.failures.extend(refusal_check(scenario, refused.as_deref()));
    v.failures.extend(load_race(scenario, out).map(Failure::LoadRace));
    // The kernel's trace is normalised once: by the model check where there is one.
    let checked = match (&predictor, &refused) {
        (Some(p), None) => Some(model_check::check_with(scenario, &out.env, &out.capture, p)),
        _ => None,
    };
    let (own_kernel, steps) = match &checked {
        Some(c) => (None, c.normalised.clone()),
        None => {
            let (kernel, steps) = out.normalised();
            (Some(kernel), steps)
        }
    };
    let mut report = String::new();
    for (why, n) in &out.capture.filtered {
        report.push_str(&format!("filtered: {n} {why}\n"));
    }
    for (step, n) in &steps {
        report.push_str(&format!("normalised: {n} x {step}\n"));
    }
    report.push_str(&program_lines);

    if let Some(said) = predictor.as_ref().and_then(Predictor::hybrid_said) {
        report.push_str(&format!("model: {said}\n"));
    }
    match (&predictor, refused) {
        (_, Some(why)) => v.decisions_checked(scenario, out, predictor.as_ref(), &why, &mut report),
        (Some(predictor), None) => {
            let checked = checked.as_ref().expect("checked above for a predictor and no refused program");
            v.model_checked(lab, t, checked, predictor, expectation, &mut report);
        }
        (None, None) if variant == "base" => {
            // The base with its model check off (`model: none`): its snapshot alone.
            let said = match expectation {
                ModelExpectation::BaseOff { said } => said.clone(),
                _ => "kernels/".to_string(),
            };
            v.shown = Some(format!("{name}: checks run: the kernel's trace against its snapshot. No model check: {said} says `model: none` for this base\n"));
        }
        (None, None) => {
            // No model check: show, never hide, how this kernel's trace differs from the
            // base kernel's on the same point (the same disk image).
            let kernel = own_kernel.expect("normalised above: no model check ran");
            let base = base_run()?;
            let (base_kernel, _) = base.normalised();
            let text = match compare::compare(&base_kernel, &kernel) {
                None => format!("{name}: the {variant} kernel's trace equals the base kernel's on this point (device requests, folios and windows)\n"),
                Some(d) => compare::render_between(&d, name, &rerun, ("base kernel", &format!("{variant} kernel"))),
            };
            let why = match (expectation, &no_model) {
                (ModelExpectation::BaseOff { said }, _) => format!("{said} says `model: none` for this base"),
                (ModelExpectation::Off { .. }, Some(said)) => said.clone(),
                (_, why) => format!(
                    "variant `{variant}` has no model policy and the hybrid cannot model it{}; to name a policy, {}, in kernels/variants/{variant}/{}",
                    why.as_deref().map(|w| format!(": {w}")).unwrap_or_default(),
                    crate::kernels::model_help(),
                    crate::kernels::VARIANT_FILE
                ),
            };
            v.shown = Some(format!(
                "{name}: checks run: the kernel's trace against its snapshot, and against the base kernel's (shown, not judged). \
                 No model check: {why}\n{text}"
            ));
        }
    }

    if !scenario.programs.is_empty() && variant != "base" {
        let ops = |o: &RunOutput| crate::run::model_input_with(scenario, &o.env, &o.capture).ops;
        // This run's input is the model check's, where one ran.
        let own = checked.map_or_else(|| ops(out), |c| c.input.ops);
        if let Some(text) = calls_differ(&ops(base_run()?.as_ref()), &own, variant) {
            v.failures.push(Failure::ProgramCalls(format!("{name}: {text}; {SAME_CALLS}\n")));
        }
    }
    let snap = snapshot_of(scenario, t.point, variant, out);
    v.failures.extend(check_snapshot(&snap, name, &rerun));

    v.summary = summary_line(name, out, &report);
    Ok(v)
}

/// The trial's one-line account: figures, time, what was filtered and normalised, and the
/// run folder.
fn summary_line(name: &str, out: &RunOutput, report: &str) -> String {
    let boot = if out.boot_points > 1 {
        format!(", one of {} points of a {:.1} s boot", out.boot_points, out.boot_wall.as_secs_f64())
    } else {
        String::new()
    };
    format!(
        "{name}: {} in {:.1} s ({:?}{boot}); {}run folder {}",
        summary::short(&summary::Figures::of(&out.capture.trace)).trim_end(),
        out.wall.as_secs_f64(),
        out.accel,
        report,
        out.dir.display()
    )
}

impl Verdict {
    /// Where the model cannot replay a program's calls in order (`why`): the readahead
    /// decisions checked one by one ([`crate::decisions`]), said in `report` and in what the
    /// trial shows; a decision that parts fails the trial.
    fn decisions_checked(
        &mut self,
        scenario: &Scenario,
        out: &RunOutput,
        predictor: Option<&Predictor>,
        why: &str,
        report: &mut String,
    ) {
        let name = &self.name;
        let checks = match decisions_of(scenario, out, predictor) {
            Ok(c) => {
                report.push_str(&format!("decisions: {}\n", c.line()));
                if let Some(p) = &c.parted {
                    self.failures.push(Failure::Decision(p.render(name, &self.rerun)));
                }
                format!("its snapshot, and each readahead decision against the model ({})", c.line())
            }
            Err(not) => format!("its snapshot only ({not})"),
        };
        self.shown = Some(format!(
            "{name}: checks run: the kernel's trace against {checks}. The model cannot replay the calls in order: {why}\n"
        ));
    }
}

/// The readahead decisions of the run's programs checked one by one ([`crate::decisions`]),
/// or why they were not.
fn decisions_of(
    scenario: &Scenario,
    out: &RunOutput,
    predictor: Option<&Predictor>,
) -> Result<crate::decisions::Checked, String> {
    let policy = match predictor {
        Some(Predictor::Port(policy)) => policy,
        Some(Predictor::Hybrid { .. }) => {
            return Err("the hybrid's C is not asked one decision at a time yet: the decisions are not checked".into())
        }
        None => return Err("no model for this kernel".into()),
    };
    if out.capture.programs.iter().all(|p| p.ra.calls.is_empty()) {
        return Err("no readahead call of the programs is in the calls' trace".into());
    }
    let input = crate::run::model_input_with(scenario, &out.env, &out.capture);
    Ok(crate::decisions::check(&input, policy, &out.capture.trace, &out.capture.programs))
}

/// What a program whose calls differ between kernels must do.
const SAME_CALLS: &str = "a program must make the same calls on every kernel for their traces to compare (fix its seeds, avoid time-based choices; docs/scenarios.md, Programs)";

/// Where the model's input from a program's calls on `variant`'s kernel (`theirs`) first
/// differs from the base kernel's (`base`), said in a sentence; `None` when they are equal.
pub fn calls_differ(base: &[radiff_model::Op], theirs: &[radiff_model::Op], variant: &str) -> Option<String> {
    if base == theirs {
        return None;
    }
    let i = base.iter().zip(theirs).take_while(|(a, b)| a == b).count();
    let show = |o: Option<&radiff_model::Op>| o.map_or("nothing".to_string(), |o| format!("{o:?}"));
    Some(format!(
        "the programs' calls differ from the base kernel's at op {i} of {} (base: {}; {variant}: {})",
        base.len().max(theirs.len()),
        show(base.get(i)),
        show(theirs.get(i))
    ))
}

/// The snapshot of a run: its trace as [`compare::normalise_for_snapshot`] leaves it, or
/// where its programs' tasks' readahead raced, what repeats of it
/// ([`summary::raced_snapshot`]).
pub fn snapshot_of(scenario: &Scenario, point: &Point, variant: &str, out: &RunOutput) -> summary::TrialSnapshot {
    let (trace, step) = compare::normalise_for_snapshot(&out.capture.trace, &out.env.queue);
    let raced = out.capture.programs.iter().any(|p| p.ra.raced());
    summary::trial_snapshot(scenario, point, variant, &out.env, &trace, step, raced)
}

/// What a program whose populating call raced its reads can do instead.
const LOAD_RACE_AVOID: &str = "the model's calls begin with every read complete; give the device time before the call (a sleep) (docs/scenarios.md, Programs)";

/// The first program whose populating call raced its reads, said: `program 0 (python3:
/// ...): its reads raced: ...`.
fn load_race(scenario: &Scenario, out: &RunOutput) -> Option<String> {
    let label = |program: u32| scenario.programs.get(program as usize).map_or("?", |p| p.label.as_str());
    out.capture
        .programs
        .iter()
        .find_map(|p| p.raced.as_ref().map(|r| format!("program {} ({}): {r}", p.program, label(p.program))))
}

/// The failure when `scenario` says `model_refuses` and the model's refusal (`refused`, the
/// first program's reason) does not contain it.
fn refusal_check(scenario: &Scenario, refused: Option<&str>) -> Option<Failure> {
    let expected = scenario.model_refuses.as_ref()?;
    if refused.is_some_and(|why| why.contains(expected.as_str())) {
        return None;
    }
    Some(Failure::RefusalChanged {
        path: scenario.path.clone(),
        expected: expected.clone(),
        got: refused.map(str::to_string),
    })
}

/// What a trial says when a scenario's `model_refuses` no longer holds.
fn refusal_changed(path: &std::path::Path, expected: &str, got: Option<&str>) -> String {
    let what = match got {
        None => "the model followed every call of its programs".to_string(),
        Some(why) => format!("the model refused for another reason: {why}"),
    };
    format!(
        "{}: says `model_refuses: \"{expected}\"`, but {what}: the program or the calls' reading changed; update or remove `model_refuses`",
        path.display()
    )
}

/// Adds a line per program step to `report` (what it called); returns the first program
/// whose calls the model cannot follow, and why: that run checks its snapshot alone.
fn programs(scenario: &Scenario, out: &RunOutput, report: &mut String) -> Option<String> {
    let label = |program: u32| scenario.programs.get(program as usize).map_or("?", |p| p.label.as_str());
    for p in &out.capture.programs {
        report.push_str(&format!("program {} ({}): {}\n", p.program, label(p.program), p.summary()));
    }
    out.capture
        .programs
        .iter()
        .find_map(|p| p.unfollowable.as_ref().map(|why| format!("program {} ({}): {why}", p.program, label(p.program))))
}

/// The line that names, of the functions the tree changes that stay 7.3.4's Rust port,
/// those the model went through (`ran`).
fn port_ran_line(name: &str, ran: &[String]) -> String {
    match ran {
        [] => format!("{name}: the model went through none of the functions this tree changes that stay 7.3.4's Rust port (of those it counts branches of)\n"),
        _ => format!(
            "{name}: the model went through {} as 7.3.4's Rust port, which this tree changes and the hybrid could not run as its C: where the two part may be theirs\n",
            ran.iter().map(|f| format!("{f}()")).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A divergence as a failing trial shows it: the declared policy first, then on a base
/// whose ported functions moved what moved, the diff, and the decisions in kernel lines.
fn divergence_text(
    lab: &Lab,
    input: &radiff_model::Input,
    predictor: &Predictor,
    expectation: &ModelExpectation,
    d: &Divergence,
    name: &str,
    rerun: &str,
) -> String {
    let root = crate::repo_root();
    let policy = match predictor {
        Predictor::Port(policy) => policy,
        // The hybrid: the C's decisions are not the port's, so no port lines explain them.
        Predictor::Hybrid { label, .. } => {
            return format!("{name}: checked against the hybrid model: {label}\n{}", compare::render(d, name, rerun));
        }
    };
    let declared = match expectation {
        ModelExpectation::Declared { policy, file, line } => {
            let file = file.strip_prefix(&root).unwrap_or(file);
            format!("{name}: checked against the model's `{policy}` policy, as {}:{line} says\n", file.display())
        }
        _ => String::new(),
    };
    let moved = crate::port::explain_divergence(&root, &lab.kernels, &lab.cache, input, policy, d.window)
        .map(|why| format!("{name}: {}\n", why.replace('\n', &format!("\n{name}: "))))
        .unwrap_or_default();
    let decided = crate::explain::decisions_at(&root, &lab.kernels, &lab.cache, input, policy, d.window)
        .map(|why| format!("{name}: {}\n", why.trim_end().replace('\n', &format!("\n{name}: "))))
        .unwrap_or_default();
    format!("{declared}{moved}{}{decided}", compare::render(d, name, rerun))
}

/// Checks the kernel's trace against `harness/snapshots/STEM.snap` with insta (which writes a
/// pending `.snap.new` outside CI); on a difference, the message shows the totals before
/// and after, then the window lines that changed.
pub fn check_snapshot(snap: &summary::TrialSnapshot, name: &str, rerun: &str) -> Option<Failure> {
    let dir = crate::repo_root().join(summary::SNAPSHOT_DIR);
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(&dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(snap.description.as_str());
    settings.set_info(&snap.info);
    let stem = snap.stem.as_str();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(stem, snap.contents.as_str()))
    }));
    if result.is_ok() {
        return None;
    }
    let said = |what: String| {
        format!("{name}: the kernel's trace {what}review with `cargo insta review`, rerun with `{rerun}`")
    };
    Some(match crate::files::read_text(&dir.join(format!("{stem}.snap"))) {
        Ok(old) => Failure::Snapshot(said(format!("differs from {}/{stem}.snap:\n{}", summary::SNAPSHOT_DIR, summary::snapshot_review(summary::snapshot_body(&old), &snap.contents, 40)))),
        Err(_) => Failure::NoSnapshot(said(format!("has no snapshot: {}/{stem}.snap is missing; a run outside CI writes it as `.snap.new` for `cargo insta review`\n", summary::SNAPSHOT_DIR))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::Op;

    #[test]
    fn a_programs_calls_that_differ_between_kernels_are_named_at_the_first_op() {
        let read = |offset| Op::Read { fd: 0, offset, len: 4096 };
        let base = vec![read(0), read(4096), read(8192)];
        assert_eq!(calls_differ(&base, &base, "v"), None);
        let other = vec![read(0), read(12288), read(8192)];
        let text = calls_differ(&base, &other, "v").unwrap();
        assert!(text.starts_with("the programs' calls differ from the base kernel's at op 1 of 3"), "{text}");
        assert!(text.contains("offset: 4096") && text.contains("v: Read { fd: 0, offset: 12288"), "{text}");
        let shorter = calls_differ(&base, &base[..2], "v").unwrap();
        assert!(shorter.contains("at op 2 of 3") && shorter.ends_with("v: nothing)"), "{shorter}");
    }

    fn verdict(failures: Vec<Failure>) -> Verdict {
        Verdict {
            name: "scenario_s::base".to_string(),
            rerun: String::new(),
            failures,
            shown: None,
            known: None,
            summary: String::new(),
        }
    }

    #[test]
    fn a_snapshot_difference_that_a_second_run_does_not_repeat_is_a_race_and_passes() {
        let diff =
            || Failure::Snapshot("scenario_s::base: the kernel's trace differs: -13 around [64+16)\n".to_string());
        let first = verdict(vec![diff()]);
        assert!(first.differs_from_snapshot_alone());
        let (a, b) = (std::path::Path::new("/runs/1"), std::path::Path::new("/runs/2"));
        let v = first.clone().after_second_run(a, verdict(vec![]), b);
        assert!(v.passed());
        let shown = v.render().unwrap();
        assert!(
            shown.starts_with("scenario_s::base: race: the first run's trace differed from its snapshot"),
            "{shown}"
        );
        assert!(shown.contains("first run /runs/1, second /runs/2") && shown.ends_with("around [64+16)\n"), "{shown}");

        // The same difference twice is a change: it fails, saying it repeated.
        let v = first.clone().after_second_run(a, verdict(vec![diff()]), b);
        let text = v.render().unwrap_err();
        assert!(text.contains("differed from the snapshot the same way: the change repeats"), "{text}");
        // Another difference the second time: it fails, and both are told.
        let other = Failure::Snapshot("scenario_s::base: the kernel's trace differs: -14 around [80+16)\n".to_string());
        let text = first.after_second_run(a, verdict(vec![other]), b).render().unwrap_err();
        assert!(
            text.contains("[80+16)") && text.contains("otherwise, so the trace races too") && text.contains("[64+16)"),
            "{text}"
        );

        // A missing snapshot, or a model divergence beside the snapshot, is not rerun.
        assert!(!verdict(vec![Failure::NoSnapshot("none".into())]).differs_from_snapshot_alone());
        assert!(!verdict(vec![diff(), Failure::ProgramCalls("calls".into())]).differs_from_snapshot_alone());
        assert!(!verdict(vec![]).differs_from_snapshot_alone());
    }

    #[test]
    fn a_scenario_that_says_the_model_refuses_fails_when_it_follows_or_refuses_otherwise() {
        let path = crate::repo_root().join("scenarios/threads_one_fd.yaml");
        let mut s = Scenario::load(&path).unwrap();
        s.model_refuses = Some("two tasks' calls overlapping".into());
        let expected = s.model_refuses.clone().unwrap();
        let overlapping = format!("program 0 (python3): pread64 by pid 7 while pid 8's lseek on the file had not returned: {expected} on the scenario's files");
        assert!(refusal_check(&s, Some(&overlapping)).is_none());
        let text = |f: Option<Failure>| match f {
            Some(Failure::RefusalChanged { path, expected, got }) => refusal_changed(&path, &expected, got.as_deref()),
            other => panic!("{other:?}"),
        };
        let followed = text(refusal_check(&s, None));
        assert!(followed.starts_with(&format!("{}: says `model_refuses:", path.display())), "{followed}");
        assert!(followed.contains("the model followed every call"), "{followed}");
        let other = text(refusal_check(&s, Some("program 0 (python3): write by pid 7: a write to the file")));
        assert!(other.contains("refused for another reason: program 0 (python3): write"), "{other}");
        let mut plain = s.clone();
        plain.model_refuses = None;
        assert!(refusal_check(&plain, None).is_none());
    }
}
