//! Finding the change that changed a trace: `radiff check` (one kernel tree as checked out,
//! with exit codes for `git bisect run`), `radiff bisect --tree` (drives git bisect with
//! it) and `radiff bisect --variant` (the first patch of a series that changes the trace).
//!
//! A check's outcome is a [`Verdict`]; the exit code `git bisect run` reads is derived
//! from it and nothing else. `radiff bisect --tree` learns what each step found from the
//! [`CommitCheck`]s its checks record (`radiff check --record FILE`, one JSON line each) and the
//! first bad commit from git's `refs/bisect/bad`, never from the lines they print.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use radiff_model::{Policy, Trace};
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::compare;
use crate::error::{Error, Result};
use crate::kernels::{Builder, Kernels, Variant, ENV_LOCKED};
use crate::process::Outcome;
use crate::progress::progress;
use crate::run::{guest_binary, Lab, RunOutput};
use crate::scenario::{Point, Scenario};
use crate::summary;

/// What one check found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The trace is the one it is compared with.
    Same,
    /// The trace changed: what changed (a diff against the snapshot, or where the trace
    /// and the model's part).
    Changed(String),
    /// The tree could not be tested (it does not build): why.
    Untestable(String),
}

/// The exit code of a check that could not finish (the VM failed, the scenario is
/// wrong, ...): `git bisect run` aborts on it.
pub const ABORT: u8 = 255;

impl Verdict {
    /// The exit code `git bisect run` reads: 0 good, 1 bad, 125 skip.
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Same => 0,
            Verdict::Changed(_) => 1,
            Verdict::Untestable(_) => 125,
        }
    }

    /// The word a check's line shows.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Changed(_) => "differs",
            Verdict::Untestable(_) => "skip (does not build)",
        }
    }

    /// What changed, or why the tree could not be tested; empty when the trace is the same.
    pub fn detail(&self) -> &str {
        match self {
            Verdict::Same => "",
            Verdict::Changed(s) | Verdict::Untestable(s) => s,
        }
    }
}

/// What a check compares the trace against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// `harness/snapshots/SCENARIO__base[__POINT].snap`: the base kernel's trace.
    Snapshot,
    /// The model's prediction for `base`.
    Model,
}

impl Against {
    /// Its name on the command line (`--against NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Against::Snapshot => "snapshot",
            Against::Model => "model",
        }
    }
}

/// The outcome of one check, with what it cost.
pub struct Checked {
    pub verdict: Verdict,
    pub build: Duration,
    pub run: Duration,
}

/// Builds `tree` as it is checked out (`git bisect run` moves it), runs the scenario and
/// compares. A tree that does not build, lacks the tracepoints radiff records (a commit
/// older than them) or an option the config fragment turns on, is [`Verdict::Untestable`],
/// not a failure.
pub fn check_tree(repo: &Path, tree: &Path, scenario: &Scenario, point: &Point, against: Against) -> Result<Checked> {
    // The host is checked before the build ([`Lab::open_with`]), as every command does.
    let lab = Lab::open_with(Cache::from_env(), Kernels::load(repo)?.in_place(tree))?;
    let started = Instant::now();
    let builder = Builder::new(&lab.kernels, &lab.cache);
    let base = lab.kernels.variant("base")?;
    if let Err(e) = builder.build(base) {
        return match e {
            Error::Build { .. } | Error::Untraceable { .. } | Error::Unconfigurable { .. } => Ok(Checked {
                verdict: Verdict::Untestable(e.to_string()),
                build: started.elapsed(),
                run: Duration::ZERO,
            }),
            e => Err(e),
        };
    }
    let build = started.elapsed();
    let out = lab.run(scenario, point, "base", "radiff check")?;
    let run = started.elapsed() - build;
    let rerun = format!("radiff check --tree {} --scenario {}", tree.display(), scenario.path.display());
    let report = match against {
        Against::Snapshot => snapshot_difference(repo, scenario, point, &out)?,
        Against::Model => crate::model_check::check(scenario, &out.env, &out.capture, &Policy::BASE)
            .divergence
            .map(|d| compare::render(&d, &scenario.name, &rerun)),
    };
    let verdict = match report {
        None => Verdict::Same,
        Some(report) => Verdict::Changed(report),
    };
    Ok(Checked { verdict, build, run })
}

/// A unified diff of the trial's snapshot text against the base snapshot, or `None`
/// when they are the same.
fn snapshot_difference(repo: &Path, scenario: &Scenario, point: &Point, out: &RunOutput) -> Result<Option<String>> {
    let snap = crate::verdict::snapshot_of(scenario, point, "base", out);
    let path = repo.join(summary::SNAPSHOT_DIR).join(format!("{}.snap", snap.stem));
    let file = crate::files::read_text(&path).map_err(|_| {
        Error::Other(format!(
            "{} does not exist: the base snapshot is what a check compares with (or use --against model)",
            path.display()
        ))
    })?;
    let want = summary::snapshot_body(&file).trim_end();
    let got = snap.contents.trim_end();
    if want == got {
        return Ok(None);
    }
    Ok(Some(format!(
        "the trace differs from {} (- snapshot, + this tree):\n{}",
        path.display(),
        summary::snapshot_review(want, got, 40).trim_end()
    )))
}

/// One commit's check as `radiff check --record FILE` appends it to FILE (a JSON line),
/// for `radiff bisect --tree` to read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitCheck {
    /// The commit checked (its full hash).
    pub commit: String,
    /// `%h %s` of the commit.
    pub subject: String,
    /// The verdict, or why the check could not finish (then the bisection stops).
    pub result: std::result::Result<Verdict, String>,
    pub build: Duration,
    pub run: Duration,
}

impl CommitCheck {
    /// `check 1a2b3c4 mm: subject: same; build 10.2 s, run 8.1 s`.
    pub fn line(&self) -> String {
        let word = match &self.result {
            Ok(v) => v.word(),
            Err(_) => "error",
        };
        format!(
            "check {}: {word}; build {:.1} s, run {:.1} s",
            self.subject,
            self.build.as_secs_f64(),
            self.run.as_secs_f64()
        )
    }
}

/// Appends `step` to `file` as one JSON line.
pub fn record_check(file: &Path, step: &CommitCheck) -> Result<()> {
    let line = serde_json::to_string(step)
        .map_err(|e| Error::Other(format!("cannot encode the check of {}: {e}", step.commit)))?;
    crate::files::append_line(file, &line)
}

/// The steps `file` records, in order; none when it does not exist. A line that is not a
/// step is an error at `file:line`.
pub fn read_checks(file: &Path) -> Result<Vec<CommitCheck>> {
    let Some(text) = crate::files::read_text_if_any(file)? else { return Ok(Vec::new()) };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                Error::Other(format!("{}:{}: not a check's record ({e}); `radiff check --record` writes these lines: remove the file and bisect again", file.display(), i + 1))
            })
        })
        .collect()
}

/// What `radiff check` is asked.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The kernel tree to build as checked out.
    pub tree: PathBuf,
    pub scenario: PathBuf,
    /// The scenario's point (its label), when it has several.
    pub point: Option<String>,
    pub against: Against,
    /// Where to append the check's [`CommitCheck`] as one JSON line.
    pub record: Option<PathBuf>,
}

/// `radiff check --tree DIR --scenario FILE [--point LABEL] [--against snapshot|model]
/// [--record FILE]`.
pub fn check_command(args: &CheckOptions) -> Result<ExitCode> {
    let scenario = Scenario::load(&args.scenario)?;
    let point = scenario.point(args.point.as_deref())?;
    let tree = &args.tree;
    let started = Instant::now();
    let result = check_tree(&crate::repo_root(), tree, &scenario, point, args.against);
    let head = crate::process::git_in(tree).args(["log", "-1", "--format=%H%n%h %s"]).read().unwrap_or_default();
    let mut head = head.lines();
    let (commit, subject) = (head.next().unwrap_or("").to_string(), head.next().unwrap_or("").to_string());
    let step = match result {
        Ok(c) => CommitCheck { commit, subject, result: Ok(c.verdict), build: c.build, run: c.run },
        Err(e) => {
            CommitCheck { commit, subject, result: Err(e.to_string()), build: started.elapsed(), run: Duration::ZERO }
        }
    };
    if let Some(file) = &args.record {
        if let Err(e) = record_check(file, &step) {
            progress(&format!("check: error: {e}"));
            return Ok(ExitCode::from(ABORT));
        }
    }
    match &step.result {
        Ok(verdict) => {
            let mut text = format!("{}\n", step.line());
            if let Verdict::Changed(report) = verdict {
                text += &format!("{report}\n");
            }
            crate::progress::output(&text);
            Ok(ExitCode::from(verdict.exit_code()))
        }
        Err(e) => {
            progress(&format!("check: error: {e}"));
            Ok(ExitCode::from(ABORT))
        }
    }
}

/// What `radiff bisect` searches.
#[derive(Clone, Debug)]
pub enum Search {
    /// A kernel git tree between a good and a bad commit.
    Tree { tree: PathBuf, good: String, bad: String },
    /// A variant's patch series.
    Series { variant: String },
}

/// What `radiff bisect` is asked.
#[derive(Clone, Debug)]
pub struct BisectOptions {
    pub search: Search,
    pub scenario: PathBuf,
    /// The scenario's point (its label), when it has several.
    pub point: Option<String>,
    /// What each commit's trace is compared with (a tree's search).
    pub against: Against,
}

/// `radiff bisect --tree DIR --good A --bad B --scenario FILE [...]` or
/// `radiff bisect --variant V --scenario FILE [--point LABEL]`.
pub fn bisect_command(args: &BisectOptions) -> Result<ExitCode> {
    let scenario = Scenario::load(&args.scenario)?;
    let point = scenario.point(args.point.as_deref())?;
    let repo = crate::repo_root();
    match &args.search {
        Search::Tree { tree, good, bad } => {
            let found =
                bisect_tree(&repo, tree, good, bad, &args.scenario, args.point.as_deref(), args.against.name())?;
            crate::progress::output(&found.describe());
            Ok(ExitCode::SUCCESS)
        }
        Search::Series { variant } => {
            let kernels = Kernels::load(&repo)?;
            let variant = kernels.variant(variant)?.clone();
            let lab = Lab::open_with(Cache::from_env(), kernels.clone())?;
            let found = bisect_series(&lab, &variant, &scenario, point)?;
            crate::progress::output(&found.describe());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What `git bisect` found in a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFound {
    /// The first commit whose trace changed (its full hash, git's `refs/bisect/bad`).
    pub first_bad: String,
    /// `%h %s` of it.
    pub subject: String,
    /// Every check git bisect ran, in order.
    pub steps: Vec<CommitCheck>,
}

impl TreeFound {
    /// The check of the first bad commit; none when it is the `--bad` commit itself,
    /// which git does not check.
    pub fn first_check(&self) -> Option<&CommitCheck> {
        self.steps.iter().rev().find(|s| s.commit == self.first_bad)
    }

    /// The first bad commit, each step with its timing, and what changed there.
    pub fn describe(&self) -> String {
        let mut out = format!("first bad commit: {}\n", self.subject);
        out.push_str(&format!("steps ({}):\n", self.steps.len()));
        for s in &self.steps {
            out.push_str(&format!("  {}\n", s.line()));
        }
        match self.first_check().map(|s| &s.result) {
            Some(Ok(Verdict::Changed(report))) => {
                out.push_str("divergence at the first bad commit:\n");
                out.push_str(report.trim_end());
                out.push('\n');
            }
            Some(_) => {}
            None => out.push_str("(the first bad commit is the --bad commit, which git bisect does not check)\n"),
        }
        out
    }
}

/// Runs `git bisect` in `tree` between `good` and `bad` with `radiff check` as the test,
/// and returns the first bad commit with each step's verdict and timing. The tree must be
/// clean; it is left as it was (`git bisect reset`).
pub fn bisect_tree(
    repo: &Path,
    tree: &Path,
    good: &str,
    bad: &str,
    scenario: &Path,
    point: Option<&str>,
    against: &str,
) -> Result<TreeFound> {
    let git = |args: &[&str]| crate::process::git_in(tree).args(args).read();
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])?;
    if !dirty.trim().is_empty() {
        return Err(Error::Other(format!(
            "{} has uncommitted changes; commit or stash them before bisecting:\n{dirty}",
            tree.display()
        )));
    }
    // Hold the tree's lock for the whole bisection; the checks it runs are told so.
    let kernels = Kernels::load(repo)?.in_place(tree);
    let cache = Cache::from_env();
    let builder = Builder::new(&kernels, &cache);
    let (_lock, lock_name) = builder.lock_tree()?;
    let exe = std::env::current_exe().map_err(|e| Error::Other(format!("cannot find radiff itself: {e}")))?;
    let exe = match exe.file_name().and_then(|n| n.to_str()) {
        Some("radiff") => exe,
        // Called from a test binary: the radiff binary sits next to the guest program.
        _ => guest_binary()?.with_file_name("radiff"),
    };
    // One log and one record per tree: the tree's lock keeps them to this bisection.
    let runs = cache.dir("runs")?;
    let log = runs.join(format!("bisect-{lock_name}.log"));
    let record = runs.join(format!("bisect-{lock_name}.steps.json"));
    for f in [&log, &record] {
        crate::files::remove_file(f)?;
    }
    git(&["bisect", "start", bad, good])?;
    let mut run = crate::process::git_in(tree)
        .args(["bisect", "run"])
        .arg(&exe)
        .args(["check", "--tree"])
        .arg(tree)
        .arg("--scenario")
        .arg(scenario)
        .args(["--against", against])
        .arg("--record")
        .arg(&record)
        .env(ENV_LOCKED, &lock_name)
        .env("RADIFF_ROOT", repo);
    if let Some(p) = point {
        run = run.args(["--point", p]);
    }
    progress(&format!("bisecting {good}..{bad} in {} (log {})", tree.display(), log.display()));
    let task = crate::progress::Task::start(format!("bisecting {good}..{bad}"));
    let outcome = run.run_logged(&log, Duration::from_secs(4 * 3600), Duration::from_secs(30), |_| {
        let steps = read_checks(&record).unwrap_or_default();
        let last =
            steps.last().map_or_else(|| "the first check runs".to_string(), |s| format!("the last {}", s.line()));
        task.count(last, steps.len() as u64, None);
    });
    drop(task);
    // git's own record of the first bad commit, read before the reset clears it.
    let first_bad = git(&["rev-parse", "--verify", "--quiet", "refs/bisect/bad"]).map(|s| s.trim().to_string());
    let _ = git(&["bisect", "reset"]);
    let steps = read_checks(&record)?;
    let log_tail = || crate::process::log_tail(&log, 30);
    match outcome? {
        Outcome::Exited(status) if status.success() => {}
        other => {
            let why = match steps.iter().find_map(|s| s.result.as_ref().err().map(|e| (s, e))) {
                Some((s, e)) => format!("the check of {} could not finish: {e}", s.subject),
                None => format!("git bisect run failed ({other:?})"),
            };
            return Err(Error::Other(format!("{why}; git bisect's log, {}:\n{}", log.display(), log_tail())));
        }
    }
    let first_bad = first_bad.ok().filter(|c| !c.is_empty()).ok_or_else(|| {
        Error::Other(format!(
            "git bisect run ended without a first bad commit (refs/bisect/bad); its log, {}:\n{}",
            log.display(),
            log_tail()
        ))
    })?;
    let subject = git(&["log", "-1", "--format=%h %s", &first_bad])?.trim().to_string();
    let found = TreeFound { first_bad, subject, steps };
    if let Some(Ok(v @ (Verdict::Same | Verdict::Untestable(_)))) = found.first_check().map(|s| &s.result) {
        return Err(Error::Other(format!(
            "git names {} the first bad commit, but its check recorded `{}` in {}: the checks and git disagree (a check that is not repeatable?)\n{}",
            found.subject,
            v.word(),
            record.display(),
            found.describe()
        )));
    }
    Ok(found)
}

/// One step of a series bisection: base plus the first `patches` patches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesStep {
    pub patches: usize,
    pub build: Duration,
    pub run: Duration,
    /// Against the base's trace.
    pub verdict: Verdict,
}

/// The result of bisecting a series.
pub struct SeriesFound {
    pub variant: String,
    /// 1-based index of the first patch whose trace differs from the one before it.
    pub patch: Option<(usize, PathBuf)>,
    /// Each kernel built and run, in order (the base first).
    pub steps: Vec<SeriesStep>,
}

impl SeriesFound {
    pub fn describe(&self) -> String {
        let mut s = match &self.patch {
            Some((i, p)) => format!("first patch of `{}` that changes the trace: #{i} {}\n", self.variant, p.display()),
            None => format!("no patch of `{}` changes the trace\n", self.variant),
        };
        for step in &self.steps {
            let k = step.patches;
            let what = match step.verdict {
                Verdict::Same => "same as base",
                Verdict::Changed(_) => "differs from base",
                Verdict::Untestable(_) => "does not build",
            };
            s.push_str(&format!(
                "  base + {k} patch{}: build {:.1} s, run {:.1} s, trace {what}\n",
                if k == 1 { "" } else { "es" },
                step.build.as_secs_f64(),
                step.run.as_secs_f64()
            ));
        }
        if let Some((i, _)) = &self.patch {
            if let Some(step) = self.steps.iter().find(|st| st.patches == *i) {
                s.push_str(&format!("what patch #{i} changes:\n{}\n", step.verdict.detail().trim_end()));
            }
        }
        s
    }
}

/// The first of `1..=n` whose verdict is [`Verdict::Changed`], given that 0 is the
/// base's own and `n` changed: halves the range, and skips a prefix that cannot be tested
/// for its nearest neighbour, as git bisect does. `Err((a, b))` when every prefix left
/// between `a - 1` and `b` is untestable: the change is one of `a..=b`.
fn first_change(
    n: usize,
    verdict_of: &mut dyn FnMut(usize) -> Result<Verdict>,
) -> Result<std::result::Result<usize, (usize, usize)>> {
    let (mut lo, mut hi) = (0, n);
    let mut untestable = Vec::new();
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let Some(k) = (lo + 1..hi).filter(|k| !untestable.contains(k)).min_by_key(|k| k.abs_diff(mid)) else {
            return Ok(Err((lo + 1, hi)));
        };
        match verdict_of(k)? {
            Verdict::Same => lo = k,
            Verdict::Changed(_) => hi = k,
            Verdict::Untestable(_) => untestable.push(k),
        }
    }
    Ok(Ok(hi))
}

/// Binary search over the prefixes of `variant`'s series for the first one whose trace
/// differs from the base's: each prefix is a kernel of its own (cached, built
/// incrementally in the shared tree). A prefix that does not build is skipped.
pub fn bisect_series(lab: &Lab, variant: &Variant, scenario: &Scenario, point: &Point) -> Result<SeriesFound> {
    // The normalised trace of base plus k patches, or the build error when it does not build.
    let trace_of = |k: usize| -> Result<(std::result::Result<Trace, Error>, Duration, Duration)> {
        let prefix = Variant {
            name: format!("{}~{k}", variant.name),
            patches: variant.patches[..k].to_vec(),
            model: variant.model.clone(),
        };
        let started = Instant::now();
        let kernel = if k == 0 {
            lab.kernel("base", "radiff bisect")?
        } else {
            match Builder::new(&lab.kernels, &lab.cache).build(&prefix) {
                Ok(built) => built.bzimage,
                Err(e @ Error::Build { .. }) => return Ok((Err(e), started.elapsed(), Duration::ZERO)),
                Err(e) => return Err(e),
            }
        };
        let build = started.elapsed();
        let out = lab.run_kernel(scenario, point, &prefix.name, &kernel)?;
        let (trace, _) = out.normalised();
        Ok((Ok(trace), build, started.elapsed() - build))
    };
    let (base, build, run) = trace_of(0)?;
    let base = base?;
    let mut steps = vec![SeriesStep { patches: 0, build, run, verdict: Verdict::Same }];
    let rerun = format!("radiff bisect --variant {} --scenario {}", variant.name, scenario.path.display());
    let mut verdict_of = |k: usize| -> Result<Verdict> {
        let (trace, build, run) = trace_of(k)?;
        let verdict = match trace {
            Err(e) => Verdict::Untestable(e.to_string()),
            Ok(t) => match compare::compare(&base, &t) {
                None => Verdict::Same,
                Some(d) => Verdict::Changed(compare::render_between(
                    &d,
                    &scenario.name,
                    &rerun,
                    ("base", &format!("base + {k} patches")),
                )),
            },
        };
        steps.push(SeriesStep { patches: k, build, run, verdict: verdict.clone() });
        Ok(verdict)
    };
    let n = variant.patches.len();
    let first = match verdict_of(n)? {
        Verdict::Same => Ok(None),
        Verdict::Untestable(why) => Err(format!("`{}` with all its {n} patches does not build, so its series cannot be bisected:\n{why}", variant.name)),
        Verdict::Changed(_) => match first_change(n, &mut verdict_of)? {
            Ok(k) => Ok(Some((k, variant.patches[k - 1].clone()))),
            Err((a, b)) => Err(format!(
                "the first patch of `{}` that changes the trace is one of #{a}..=#{b}: base with patches up to #{a}..#{} does not build, so the search cannot tell which",
                variant.name,
                b - 1
            )),
        },
    };
    let mut found = SeriesFound { variant: variant.name.clone(), patch: None, steps };
    match first {
        Ok(patch) => {
            found.patch = patch;
            Ok(found)
        }
        Err(why) => Err(Error::Other(format!("{why}\n{}", found.describe()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(commit: &str, result: std::result::Result<Verdict, String>) -> CommitCheck {
        CommitCheck {
            commit: commit.repeat(40 / commit.len()),
            subject: format!("{commit} a subject"),
            result,
            build: Duration::from_millis(10_250),
            run: Duration::from_millis(8_040),
        }
    }

    #[test]
    fn a_verdict_is_git_bisects_exit_code_and_nothing_else() {
        assert_eq!(Verdict::Same.exit_code(), 0);
        assert_eq!(Verdict::Changed("x".into()).exit_code(), 1);
        assert_eq!(Verdict::Untestable("x".into()).exit_code(), 125);
        assert_ne!(ABORT, 125, "an error must not read as a skip");
        assert_eq!(Verdict::Changed("what".into()).detail(), "what");
        assert_eq!(Verdict::Same.detail(), "");
    }

    #[test]
    fn steps_go_to_the_record_and_come_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("steps.json");
        assert!(read_checks(&file).unwrap().is_empty(), "no record yet: no steps");
        let steps = vec![
            step("aa", Ok(Verdict::Same)),
            step("bb", Ok(Verdict::Changed("device requests differ\n- a\n+ b\n".into()))),
            step("cc", Ok(Verdict::Untestable("build of `base` failed".into()))),
            step("dd", Err("the VM did not finish".into())),
        ];
        for s in &steps {
            record_check(&file, s).unwrap();
        }
        assert_eq!(read_checks(&file).unwrap(), steps);
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 4, "one line per step");
        assert_eq!(steps[0].line(), "check aa a subject: same; build 10.2 s, run 8.0 s");
        assert_eq!(steps[3].line(), "check dd a subject: error; build 10.2 s, run 8.0 s");
    }

    #[test]
    fn a_bad_record_line_is_an_error_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("steps.json");
        record_check(&file, &step("aa", Ok(Verdict::Same))).unwrap();
        std::fs::write(&file, std::fs::read_to_string(&file).unwrap() + "check bb: same\n").unwrap();
        let e = read_checks(&file).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:2: not a check's record", file.display())), "{e}");
        assert!(e.contains("remove the file and bisect again"), "{e}");
    }

    #[test]
    fn the_tree_account_comes_from_the_steps() {
        let steps = vec![
            step("aa", Ok(Verdict::Same)),
            step("bb", Ok(Verdict::Changed("the trace differs:\n-x\n+y\n".into()))),
            step("cc", Ok(Verdict::Untestable("no".into()))),
        ];
        let found = TreeFound { first_bad: "bb".repeat(20), subject: "bb a subject".into(), steps: steps.clone() };
        assert_eq!(
            found.describe(),
            "\
first bad commit: bb a subject
steps (3):
  check aa a subject: same; build 10.2 s, run 8.0 s
  check bb a subject: differs; build 10.2 s, run 8.0 s
  check cc a subject: skip (does not build); build 10.2 s, run 8.0 s
divergence at the first bad commit:
the trace differs:
-x
+y
"
        );
        // The --bad commit itself: git never checked it.
        let found = TreeFound { first_bad: "ee".repeat(20), subject: "ee bad".into(), steps };
        assert!(found.first_check().is_none());
        assert!(
            found.describe().ends_with("(the first bad commit is the --bad commit, which git bisect does not check)\n"),
            "{}",
            found.describe()
        );
    }

    /// `first_change` over prefixes whose verdicts are given; returns its answer and the
    /// prefixes it asked about, in order.
    fn search(verdicts: &[Verdict]) -> (std::result::Result<usize, (usize, usize)>, Vec<usize>) {
        let mut asked = Vec::new();
        let found = first_change(verdicts.len() - 1, &mut |k| {
            asked.push(k);
            Ok(verdicts[k].clone())
        })
        .unwrap();
        (found, asked)
    }

    #[test]
    fn the_series_search_halves_and_skips_what_does_not_build() {
        use Verdict::*;
        let c = || Changed(String::new());
        let u = || Untestable(String::new());
        // Patch 2 of 3 changes the trace (the bisect trial's series): base + 1, then base + 2.
        assert_eq!(search(&[Same, Same, c(), c()]), (Ok(2), vec![1, 2]));
        // Patch 1 of 1: nothing to ask.
        assert_eq!(search(&[Same, c()]), (Ok(1), vec![]));
        // 8 patches, the 6th changes: 4, 6, 5.
        assert_eq!(search(&[Same, Same, Same, Same, Same, Same, c(), c(), c()]), (Ok(6), vec![4, 6, 5]));
        // The middle prefix does not build: its neighbour is asked instead.
        assert_eq!(search(&[Same, Same, u(), Same, c(), c()]), (Ok(4), vec![2, 1, 3, 4]));
        // Nothing between builds: the change is one of a range.
        assert_eq!(search(&[Same, u(), u(), c()]), (Err((1, 3)), vec![1, 2]));
    }
}
