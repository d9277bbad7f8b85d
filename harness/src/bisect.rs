//! Finding the change that changed a trace: `radiff check` (one kernel tree as checked out,
//! with exit codes for `git bisect run`), `radiff bisect --tree` (drives git bisect with
//! it) and `radiff bisect --variant` (the first patch of a series that changes the trace).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use radiff_model::{predict, Policy, Trace};

use crate::cache::{self, Cache};
use crate::cli::{progress, AgainstArg, BisectArgs, CheckArgs};
use crate::compare::{self, normalise};
use crate::error::{Error, Result};
use crate::kernels::{Builder, Kernels, Variant, ENV_LOCKED};
use crate::process::{Cmd, Outcome};
use crate::run::{guest_binary, model_input, Lab, RunOutput};
use crate::scenario::{Point, Scenario};
use crate::summary;

/// `git bisect run` exit codes.
pub const SAME: u8 = 0;
pub const DIFFERS: u8 = 1;
pub const SKIP: u8 = 125;
/// Anything else aborts a bisection: the VM failed, the scenario is wrong, ...
pub const ABORT: u8 = 255;

/// What a check compares the trace against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// `harness/snapshots/SCENARIO__base[__POINT].snap`: the base kernel's trace.
    Snapshot,
    /// The model's prediction for `base`.
    Model,
}

/// The outcome of one check, with what it cost.
pub struct Checked {
    pub verdict: u8,
    /// The divergence, rendered, when the trace differs.
    pub report: String,
    pub build: Duration,
    pub run: Duration,
}

/// Builds `tree` as it is checked out (`git bisect run` moves it), runs the scenario and
/// compares. A tree that does not build is a skip, not a failure.
pub fn check(repo: &Path, tree: &Path, scenario: &Scenario, point: &Point, against: Against) -> Result<Checked> {
    let kernels = Kernels::load(repo)?.in_place(tree);
    let cache = Cache::from_env();
    let started = Instant::now();
    let builder = Builder::new(&kernels, &cache, &progress);
    let base = kernels.variant("base")?;
    if let Err(e) = builder.build(base) {
        return match e {
            Error::Build { .. } => Ok(Checked { verdict: SKIP, report: e.to_string(), build: started.elapsed(), run: Duration::ZERO }),
            e => Err(e),
        };
    }
    let build = started.elapsed();
    let lab = Lab::new(cache, kernels, guest_binary()?, &progress);
    let out = lab.run(scenario, point, "base", "radiff check")?;
    let run = started.elapsed() - build;
    let rerun = format!("radiff check --tree {} --scenario {}", tree.display(), scenario.path.display());
    let report = match against {
        Against::Snapshot => snapshot_difference(repo, scenario, point, &out)?,
        Against::Model => {
            let model = predict(&model_input(scenario, &out.env, &out.capture.pfns), &Policy::BASE);
            let (kernel, _) = normalise(&out.capture.trace, &out.env.all_extents());
            compare::compare(&kernel, &model).map(|d| compare::render(&d, &scenario.name, &rerun))
        }
    };
    Ok(match report {
        None => Checked { verdict: SAME, report: String::new(), build, run },
        Some(report) => Checked { verdict: DIFFERS, report, build, run },
    })
}

/// A unified diff of the trial's snapshot text against the base snapshot, or `None`
/// when they are the same.
fn snapshot_difference(repo: &Path, scenario: &Scenario, point: &Point, out: &RunOutput) -> Result<Option<String>> {
    let snap = summary::trial_snapshot(scenario, point, "base", &out.env, &out.capture.trace);
    let path = repo.join(summary::SNAPSHOT_DIR).join(format!("{}.snap", snap.stem));
    let file = cache::read(&path).map_err(|_| Error::Other(format!("{} does not exist: the base snapshot is what a check compares with (or use --against model)", path.display())))?;
    let want = summary::snapshot_body(&file).trim_end();
    let got = snap.contents.trim_end();
    if want == got {
        return Ok(None);
    }
    Ok(Some(format!("the trace differs from {} (- snapshot, + this tree):\n{}", path.display(), summary::snapshot_review(want, got, 40).trim_end())))
}

impl From<AgainstArg> for Against {
    fn from(a: AgainstArg) -> Against {
        match a {
            AgainstArg::Snapshot => Against::Snapshot,
            AgainstArg::Model => Against::Model,
        }
    }
}

/// `radiff check --tree DIR --scenario FILE [--point LABEL] [--against snapshot|model]`.
pub fn check_main(args: &CheckArgs) -> Result<ExitCode> {
    let scenario = Scenario::load(&args.scenario)?;
    let point = scenario.point(args.point.as_deref())?;
    let tree = &args.tree;
    let checked = match check(&crate::repo_root(), tree, &scenario, point, args.against.into()) {
        Ok(c) => c,
        Err(e) => {
            progress(&format!("check: error: {e}"));
            return Ok(ExitCode::from(ABORT));
        }
    };
    let head = Cmd::new("git").arg("-C").arg(tree).args(["log", "-1", "--format=%h %s"]).read().unwrap_or_default();
    let word = match checked.verdict {
        SAME => "same",
        DIFFERS => "differs",
        _ => "skip (does not build)",
    };
    let mut text = format!("check {}: {word}; build {:.1} s, run {:.1} s\n", head.trim(), checked.build.as_secs_f64(), checked.run.as_secs_f64());
    if !checked.report.is_empty() {
        text += &format!("{}\n", checked.report);
    }
    crate::cli::output(&text);
    Ok(ExitCode::from(checked.verdict))
}

/// `radiff bisect --tree DIR --good A --bad B --scenario FILE [...]` or
/// `radiff bisect --variant V --scenario FILE [--point LABEL]`.
pub fn bisect_main(args: &BisectArgs) -> Result<ExitCode> {
    let scenario = Scenario::load(&args.scenario)?;
    let point = scenario.point(args.point.as_deref())?;
    let repo = crate::repo_root();
    match (&args.tree, &args.variant, &args.good, &args.bad) {
        (Some(tree), None, Some(good), Some(bad)) => {
            let found = bisect_tree(&repo, tree, good, bad, &args.scenario, args.point.as_deref(), args.against.name())?;
            crate::cli::output(&format!("{found}\n"));
            Ok(ExitCode::SUCCESS)
        }
        (None, Some(variant), _, _) => {
            let kernels = Kernels::load(&repo)?;
            let variant = kernels.variant(variant)?.clone();
            let lab = Lab::new(Cache::from_env(), kernels.clone(), guest_binary()?, &progress);
            let found = bisect_series(&lab, &variant, &scenario, point)?;
            crate::cli::output(&format!("{}\n", found.describe()));
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(Error::Other("give either --tree DIR --good A --bad B, or --variant V".into())),
    }
}

/// Runs `git bisect` in `tree` between `good` and `bad` with `radiff check` as the test,
/// and returns its account of the first bad commit with each step's timing. The tree
/// must be clean; it is left as it was (`git bisect reset`).
pub fn bisect_tree(repo: &Path, tree: &Path, good: &str, bad: &str, scenario: &Path, point: Option<&str>, against: &str) -> Result<String> {
    let git = |args: &[&str]| Cmd::new("git").arg("-C").arg(tree).args(args).read();
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])?;
    if !dirty.trim().is_empty() {
        return Err(Error::Other(format!("{} has uncommitted changes; commit or stash them before bisecting:\n{dirty}", tree.display())));
    }
    // Hold the tree's lock for the whole bisection; the checks it runs are told so.
    let kernels = Kernels::load(repo)?.in_place(tree);
    let cache = Cache::from_env();
    let builder = Builder::new(&kernels, &cache, &progress);
    let (_lock, lock_name) = builder.lock_tree()?;
    let exe = std::env::current_exe().map_err(|e| Error::Other(format!("cannot find radiff itself: {e}")))?;
    let exe = match exe.file_name().and_then(|n| n.to_str()) {
        Some("radiff") => exe,
        // Called from a test binary: the radiff binary sits next to the guest program.
        _ => guest_binary()?.with_file_name("radiff"),
    };
    git(&["bisect", "start", bad, good])?;
    let log = cache.dir("runs")?.join("bisect.log");
    let _ = std::fs::remove_file(&log);
    let mut run = Cmd::new("git")
        .arg("-C")
        .arg(tree)
        .args(["bisect", "run"])
        .arg(&exe)
        .args(["check", "--tree"])
        .arg(tree)
        .arg("--scenario")
        .arg(scenario)
        .args(["--against", against])
        .env(ENV_LOCKED, &lock_name)
        .env("RADIFF_ROOT", repo);
    if let Some(p) = point {
        run = run.args(["--point", p]);
    }
    progress(&format!("bisecting {good}..{bad} in {} (log {})", tree.display(), log.display()));
    let outcome = run.run_logged(&log, Duration::from_secs(4 * 3600), Duration::from_secs(30), |t| progress(&format!("bisecting: {} s", t.as_secs())));
    let _ = git(&["bisect", "reset"]);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    match outcome? {
        Outcome::Exited(status) if status.success() => {}
        other => return Err(Error::Other(format!("git bisect run failed ({other:?}); its log, {}:\n{}", log.display(), crate::error::tail(&text, 30)))),
    }
    let first = text
        .lines()
        .find_map(|l| l.strip_suffix(" is the first bad commit"))
        .ok_or_else(|| Error::Other(format!("git bisect named no first bad commit; its log, {}:\n{}", log.display(), crate::error::tail(&text, 30))))?
        .trim()
        .to_string();
    let subject = git(&["log", "-1", "--format=%h %s", &first])?;
    let steps: Vec<&str> = text.lines().filter(|l| l.starts_with("check ")).collect();
    let mut out = format!("first bad commit: {}\n", subject.trim());
    out.push_str(&format!("steps ({}):\n", steps.len()));
    for s in &steps {
        out.push_str(&format!("  {s}\n"));
    }
    // The divergence the first bad commit's check printed, up to the next step.
    if let Some(at) = text.find(&format!("check {}", &subject.trim())) {
        let rest = &text[at..];
        let end = rest[1..].find("\ncheck ").map(|i| i + 1).unwrap_or(rest.len());
        let block: String = rest[..end].lines().skip(1).take_while(|l| !l.starts_with("running ") && !l.starts_with("Bisecting")).collect::<Vec<_>>().join("\n");
        if !block.trim().is_empty() {
            out.push_str("divergence at the first bad commit:\n");
            out.push_str(&block);
            out.push('\n');
        }
    }
    Ok(out)
}

/// The result of bisecting a series.
pub struct SeriesFound {
    pub variant: String,
    /// 1-based index of the first patch whose trace differs from the one before it.
    pub patch: Option<(usize, PathBuf)>,
    /// (number of patches applied, build time, run time, same as the base trace?) per step.
    pub steps: Vec<(usize, Duration, Duration, bool)>,
}

impl SeriesFound {
    pub fn describe(&self) -> String {
        let mut s = match &self.patch {
            Some((i, p)) => format!("first patch of `{}` that changes the trace: #{i} {}\n", self.variant, p.display()),
            None => format!("no patch of `{}` changes the trace\n", self.variant),
        };
        for (k, build, run, same) in &self.steps {
            s.push_str(&format!(
                "  base + {k} patch{}: build {:.1} s, run {:.1} s, trace {}\n",
                if *k == 1 { "" } else { "es" },
                build.as_secs_f64(),
                run.as_secs_f64(),
                if *same { "same as base" } else { "differs from base" }
            ));
        }
        s
    }
}

/// Binary search over the prefixes of `variant`'s series for the first one whose trace
/// differs from the base's: each prefix is a kernel of its own (cached, built
/// incrementally in the shared tree).
pub fn bisect_series(lab: &Lab, variant: &Variant, scenario: &Scenario, point: &Point) -> Result<SeriesFound> {
    let trace_of = |k: usize| -> Result<(Trace, Duration, Duration)> {
        let prefix = Variant { name: format!("{}~{k}", variant.name), patches: variant.patches[..k].to_vec(), model: variant.model.clone() };
        let started = Instant::now();
        let kernel = if k == 0 {
            lab.kernel("base", "radiff bisect")?
        } else {
            Builder::new(&lab.kernels, &lab.cache, lab.progress).build(&prefix)?.bzimage
        };
        let build = started.elapsed();
        let out = lab.run_kernel(scenario, point, &prefix.name, &kernel)?;
        let (trace, _) = normalise(&out.capture.trace, &out.env.all_extents());
        Ok((trace, build, started.elapsed() - build))
    };
    let mut steps = Vec::new();
    let (base, b, r) = trace_of(0)?;
    steps.push((0, b, r, true));
    let n = variant.patches.len();
    let (whole, b, r) = trace_of(n)?;
    steps.push((n, b, r, whole == base));
    let mut found = None;
    if whole != base {
        // trace(lo) is the base's, trace(hi) is not: halve until they are neighbours.
        let (mut lo, mut hi) = (0, n);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let (t, b, r) = trace_of(mid)?;
            let same = t == base;
            steps.push((mid, b, r, same));
            if same {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        found = Some((hi, variant.patches[hi - 1].clone()));
    }
    Ok(SeriesFound { variant: variant.name.clone(), patch: found, steps })
}
