//! Every scenario on every variant as a test trial: run on the real kernel in a VM,
//! predict with the model, compare, and check the kernel's trace against its snapshot.
//!
//! Trials are named `scenario_<file stem>::<variant>[::<matrix point>]`, so
//! `cargo test -- scenario_1mib_after_4k` runs one scenario on every variant.
//! Listing (`cargo test -- --list`) only parses YAML; kernels are built and VMs booted
//! inside the trials, each kernel once per test run. Under cargo-nextest (a process per
//! trial) the run's processes share their batches through the cache
//! ([`radiff::run::SharedRun`]), planned from the run's partition.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use libtest_mimic::{Arguments, Failed, Trial};
use radiff::cache::Cache;
use radiff::compare;
use radiff::kernels::Kernels;
use radiff::kernels::ModelExpectation;
use radiff::run::{model_input, Job, Lab, Need, RunOutput, Schedule};
use radiff::scenario::{self, Point, Scenario};
use radiff::summary;
use radiff::verdict::{self, Failure, TrialRun, Verdict};
use radiff::vm;
use radiff_model::{predict, Policy};

#[path = "scenarios/program_errors.rs"]
mod program_errors;

fn progress(line: &str) {
    eprintln!("radiff: {line}");
}

fn lab() -> Result<&'static Lab, Failed> {
    static LAB: OnceLock<Result<Lab, String>> = OnceLock::new();
    LAB.get_or_init(|| {
        let kernels = Kernels::load(&radiff::repo_root()).map_err(|e| e.to_string())?;
        let lab = Lab::new(Cache::from_env(), kernels, PathBuf::from(env!("CARGO_BIN_EXE_radiff-guest")));
        // No QEMU, virtme-ng or kernel source: every trial fails at once saying which.
        lab.check_host().map_err(|e| e.to_string())?;
        Ok(lab.with_vcpus(*VCPUS.get().unwrap_or(&1)))
    })
    .as_ref()
    .map_err(|e| Failed::from(e.clone()))
}

/// Virtual CPUs per guest: the host's cores shared among the trials that run at once
/// (`--test-threads`, else one per core, as libtest-mimic and nextest run them).
static VCPUS: OnceLock<u32> = OnceLock::new();

fn main() -> ExitCode {
    let args = Arguments::from_args();
    // A new or changed snapshot is shown by the trial's own message (the totals, then the
    // window lines that changed), not by insta printing thousands of window lines; set
    // INSTA_OUTPUT=diff to see insta's own diff as well. Set before any thread starts.
    if std::env::var_os("INSTA_OUTPUT").is_none() {
        std::env::set_var("INSTA_OUTPUT", "summary");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Under cargo-nextest each trial is a process of its own: its share of the cores is by
    // nextest's threads, and its batches are shared with the run's other processes.
    let nextest = radiff::run::NextestRun::from_env();
    let threads = args.test_threads.or(nextest.as_ref().and_then(|n| n.threads));
    let _ = VCPUS.set((cores / threads.unwrap_or(cores).max(1)).max(1) as u32);
    let root = radiff::repo_root();
    let (trials, needs) = match trials(&root) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(101);
        }
    };
    // One boot per kernel (and per BATCH_POINTS points): the runs the selected trials need,
    // grouped by variant, in the trials' order.
    if !args.list {
        let (selected, shared) = match &nextest {
            Some(run) => nextest_selection(run, &trials),
            None => (trials.iter().filter(|t| !args.is_filtered_out(t)).map(|t| t.name()).collect(), None),
        };
        let schedule = Schedule::new(selected.iter().filter_map(|name| needs.get(*name)).flatten(), shared);
        let trials = order(&schedule, trials, &needs);
        let _ = SCHEDULE.set(schedule);
        return libtest_mimic::run(&args, trials).exit_code();
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// The trials the nextest run `run` selects of this binary, as every process of the run
/// computes them (its partition of the sorted names), and the cache folder of its shared
/// batches. A selection not known here plans nothing: each trial runs its own points.
fn nextest_selection<'a>(
    run: &radiff::run::NextestRun,
    trials: &'a [Trial],
) -> (Vec<&'a str>, Option<radiff::run::SharedRun>) {
    let names: Vec<&str> = trials.iter().map(|t| t.name()).collect();
    let Some(chosen) = run.selection.select(&names) else {
        if let radiff::run::Selection::Unknown(why) = &run.selection {
            progress(&format!("each trial runs its own points: {why}"));
        }
        return (Vec::new(), None);
    };
    match radiff::run::SharedRun::open(&Cache::from_env(), &run.id) {
        Ok(shared) => (names.into_iter().zip(chosen).filter(|(_, c)| *c).map(|(n, _)| n).collect(), Some(shared)),
        Err(e) => {
            progress(&format!("each trial runs its own points: {e}"));
            (Vec::new(), None)
        }
    }
}

/// The boots of this test run ([`radiff::run::Schedule`]), set before any trial starts.
static SCHEDULE: OnceLock<Schedule> = OnceLock::new();

/// The order to start trials in: the first trial of each boot, the costliest boot first
/// (beside the other long trials), then the rest, whose runs are then made or being made,
/// and `kernel_boots::*` last, to find their kernels' boots done. Two threads thus never
/// wait on one boot while another waits to start.
fn order(schedule: &Schedule, trials: Vec<Trial>, needs: &Needs) -> Vec<Trial> {
    let mut first_of_boot = std::collections::HashSet::new();
    // Trials that run no batch but share one run of theirs (the vm_faults trials' fault
    // batch): the first starts early, the others come with the batches' other trials,
    // when it is done, rather than hold a second thread waiting for it.
    let mut first_of_shared = std::collections::HashSet::new();
    let mut keyed: Vec<((bool, i64, String), Trial)> = trials
        .into_iter()
        .map(|t| {
            let name = t.name().to_string();
            let boot = needs.get(&name).and_then(|n| n.first()).and_then(|n| schedule.boot(&n.key()));
            let cost = boot.map_or_else(|| other_trial_cost(&name), |(_, cost)| cost);
            let first = match boot {
                Some((id, _)) => first_of_boot.insert(id),
                None => name.strip_prefix("vm_faults::").is_none() || first_of_shared.insert("vm_faults"),
            };
            // Last of all: the trials that read a kernel's release off its boots.
            let last = name.starts_with("kernel_boots::");
            ((!first || last, if last { i64::MAX } else { -(cost * 1000.0) as i64 }, name), t)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, t)| t).collect()
}

/// A rough guess (seconds on one vCPU) of the trials that run no batch, to start the
/// long ones early.
fn other_trial_cost(name: &str) -> f64 {
    match name.split("::").next().unwrap_or("") {
        "explore" => 90.0,
        "bisect" => 60.0,
        "vm_faults" => 40.0,
        "batch" => 30.0,
        "program_errors" => 60.0,
        _ => 10.0,
    }
}

type Needs = HashMap<String, Vec<Need>>;

fn trials(root: &Path) -> radiff::Result<(Vec<Trial>, Needs)> {
    let kernels = Kernels::load(root)?;
    let known = kernels.names();
    let mut trials = Vec::new();
    let mut needs: Needs = HashMap::new();
    for (path, loaded) in scenario::load_each(&root.join("scenarios"))? {
        // A file that does not load fails its own trial; every other scenario still runs.
        let (scenario, variants) = match loaded.and_then(|s| s.variants(&known).map(|v| (s, v))) {
            Ok(loaded) => loaded,
            Err(e) => {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
                let message = format!("{e}\n(every other scenario still runs)");
                trials.push(Trial::test(format!("scenario_{stem}::load"), move || Err(Failed::from(message))));
                continue;
            }
        };
        for point in &scenario.points {
            for variant in &variants {
                let name = scenario.trial_name(variant, point);
                let mut need = vec![Need::new(&scenario, point, variant)];
                // A variant without a model policy is shown against the base kernel's run, and
                // a program's calls are checked against the ones it made on base.
                let programs = !scenario.programs.is_empty() && variant != "base";
                if programs || kernels.variant(variant)?.model.policy().is_none() {
                    need.push(Need::new(&scenario, point, "base"));
                }
                needs.insert(name.clone(), need);
                let (s, p, v, n) = (scenario.clone(), point.clone(), variant.clone(), name.clone());
                trials.push(Trial::test(name, move || trial(&s, &p, &v, &n)));
            }
        }
    }
    // Every kernel boots and reports the release it was built as.
    for variant in &known {
        let v = variant.clone();
        trials.push(Trial::test(format!("kernel_boots::{variant}"), move || kernel_boots(&v)));
    }
    // A patch the model has no policy for, and one declared `model: base`, checked on the
    // headline's runs of the seed variants (shared with their own trials: no extra boot).
    let (h1, h2) = (headline_for_bisect(root)?, headline_for_bisect(root)?);
    let p = &h1.points[0];
    needs.insert(
        "unknown_patch::the_hybrid_checks_a_patch_without_a_policy".into(),
        ["async-align-v1", "sync-ra-when-disabled", "f2fs-extent-ra", "base"]
            .iter()
            .map(|v| Need::new(&h1, p, v))
            .collect(),
    );
    needs.insert(
        "unknown_patch::model_base_fails_at_the_first_window".into(),
        vec![Need::new(&h1, p, "async-align-v1")],
    );
    trials.push(Trial::test("unknown_patch::the_hybrid_checks_a_patch_without_a_policy", move || {
        the_hybrid_checks_a_patch_without_a_policy(&h1)
    }));
    trials.push(Trial::test("unknown_patch::model_base_fails_at_the_first_window", move || {
        model_base_fails_at_the_first_window(&h2)
    }));
    // The model's search finds seed 000's class by itself and the kernel confirms it.
    trials.push(Trial::test("explore::finds_and_confirms_a_trimmed_window::base", || {
        let lab = lab()?;
        radiff::explore::testing::on_base(lab).map_err(Failed::from)
    }));
    // A patch without a model policy: the base model's branch-covering set, run on both
    // kernels, finds where seed 000's v1 changes the device's requests.
    trials.push(Trial::test("explore::unknown_patch_changes_are_found_on_the_kernels::async-align-v1", || {
        let lab = lab()?;
        radiff::explore::testing::on_unknown_variant(lab).map_err(Failed::from)
    }));
    // A guest that halts instead of rebooting is stopped at once, not at its timeout.
    trials.push(Trial::test("vm_halt_is_seen::base", halted_guest_is_stopped));
    // A ring buffer too small for the scenario's events: the run fails saying so.
    let tiny = Scenario::load(&root.join("harness/tests/fixtures/tiny_trace_buffer.yaml"))?;
    trials.push(Trial::test("lost_events::tiny_trace_buffer::base", move || lost_events_fail_the_run(&tiny)));
    // A program that exits non-zero, one the guest cannot find, one past its timeout: each
    // its error, and the guest goes on to the next point in the same boot.
    let programs = program_errors::scenarios(root)?;
    trials.push(Trial::test("program_errors::exit_missing_timeout_in_one_boot::base", move || {
        let lab = lab()?;
        program_errors::trial(lab, &programs, "program_errors").map_err(Failed::from)
    }));
    // A scenario gives the same trace in a boot of its own as in a batch (after a scenario
    // that changes fault_around_bytes, before one on another file system).
    let batched: Vec<Scenario> = ["mmap_fault_around_4k", "1mib_after_4k", "mmap_seq_ext4"]
        .iter()
        .map(|n| Scenario::load(&root.join("scenarios").join(format!("{n}.yaml"))))
        .collect::<radiff::Result<_>>()?;
    trials.push(Trial::test("batch::alone_equals_batched::1mib_after_4k::base", move || {
        alone_equals_batched(&batched, 1, "base")
    }));
    // `radiff report --runs 2` on two variants boots each kernel once, and every run gives
    // the figures of the scenario's own run (shared with its trials in a whole test run).
    let reported = Scenario::load(&root.join("scenarios/random_4k.yaml"))?;
    let name = "batch::report_runs_boot_each_kernel_once::scenario_random_4k";
    needs.insert(name.into(), REPORT_VARIANTS.iter().map(|v| Need::new(&reported, &reported.points[0], v)).collect());
    trials.push(Trial::test(name, move || report_runs_are_batched(&reported, name)));
    // The test-only fault-test kernel: a panic and a hang inside a batch's reads.
    let faults = Arc::new(
        ["fault_none", "fault_panic", "fault_hang", "fault_none"]
            .iter()
            .map(|n| Scenario::load(&root.join("harness/tests/fixtures").join(format!("{n}.yaml"))))
            .collect::<radiff::Result<Vec<_>>>()?,
    );
    for (name, check) in [
        ("vm_faults::panic_in_readahead::fault-test", panic_in_readahead as fn(&FaultBatch) -> Result<(), String>),
        ("vm_faults::hang_in_readahead::fault-test", hang_in_readahead),
        ("vm_faults::the_batch_goes_on_in_a_fresh_boot::fault-test", batch_goes_on),
    ] {
        let f = faults.clone();
        trials.push(Trial::test(name, move || {
            fault_batch(&f).and_then(check).map_err(|e| Failed::from(format!("{name}: {e}")))
        }));
    }
    // Bisecting names the patch (in a series) and the commit (in a tree) that changed a trace.
    let (h1, h2) = (headline_for_bisect(root)?, headline_for_bisect(root)?);
    trials.push(Trial::test("bisect::series_names_seed_000", move || bisect_series(&h1)));
    trials.push(Trial::test("bisect::tree_names_seed_000", move || bisect_tree(&h2)));
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    Ok((trials, needs))
}

fn headline_for_bisect(root: &Path) -> radiff::Result<Scenario> {
    Scenario::load(&root.join("scenarios/1mib_after_4k.yaml"))
}

/// [a neutral change, seed 000's patch, another neutral change].
fn bisect_patches() -> Vec<PathBuf> {
    let root = radiff::repo_root();
    let seed = std::fs::read_dir(root.join("kernels/variants/async-align-v1")).unwrap().next().unwrap().unwrap().path();
    vec![
        root.join("harness/tests/bisect/0001-mm-filemap-a-neutral-comment.patch"),
        seed,
        root.join("harness/tests/bisect/0003-mm-readahead-another-neutral-comment.patch"),
    ]
}

fn bisect_series(scenario: &Scenario) -> Result<(), Failed> {
    let lab = lab()?;
    let variant = radiff::kernels::Variant {
        name: "bisect-test".into(),
        patches: bisect_patches(),
        model: radiff::kernels::ModelExpectation::SameName("async-align-v1".into()),
    };
    let found =
        radiff::bisect::bisect_series(lab, &variant, scenario, &scenario.points[0]).map_err(|e| e.to_string())?;
    eprintln!("bisect::series_names_seed_000:\n{}", found.describe());
    match &found.patch {
        Some((2, _)) => Ok(()),
        _ => Err(format!("expected patch #2 (seed 000), got:\n{}", found.describe()).into()),
    }
}

fn bisect_tree(scenario: &Scenario) -> Result<(), Failed> {
    let lab = lab()?;
    let root = radiff::repo_root();
    if !matches!(lab.kernels.base, radiff::kernels::Base::Debian { .. }) {
        return Err(
            "this trial builds its test repository in radiff's Debian work tree; unset RADIFF_KERNEL_TREE".into()
        );
    }
    // The base kernel first, so that the tree's build directory is warm.
    lab.kernel("base", "bisect::tree_names_seed_000").map_err(|e| e.to_string())?;
    let builder = radiff::kernels::Builder::new(&lab.kernels, &lab.cache);
    // A repository made from the base source: commits [neutral, seed 000, neutral] on
    // top of the base, in radiff's own work tree (so every step builds incrementally).
    let (tree, commits) = {
        let _lock = builder.lock_tree().map_err(|e| e.to_string())?;
        let tree = builder.work_tree().map_err(|e| e.to_string())?;
        let mut commits = Vec::new();
        for patch in bisect_patches() {
            // Fixed dates: the same commits, hence the same kernels' cache keys, every run
            // on a tree (no rebuild of the two kernels the bisection builds).
            let git = |args: &[&str]| {
                let cmd = radiff::process::Cmd::new("git").arg("-C").arg(&tree).args(args.iter().copied());
                cmd.env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
                    .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
                    .read()
            };
            radiff::process::Cmd::new("patch")
                .dir(&tree)
                .args(["-p1", "--batch", "--forward", "-s", "-i"])
                .arg(&patch)
                .read()
                .map_err(|e| e.to_string())?;
            // The mail's subject (a raw mail may only have "[PATCH] ..." as its first line).
            let text = std::fs::read_to_string(&patch).map_err(|e| e.to_string())?;
            let subject = text
                .lines()
                .find_map(|l| l.strip_prefix("Subject: "))
                .or_else(|| text.lines().find(|l| l.starts_with("[PATCH")))
                .unwrap_or("a patch")
                .to_string();
            git(&["-c", "user.name=radiff", "-c", "user.email=radiff@localhost", "commit", "-q", "-a", "-m", &subject])
                .map_err(|e| e.to_string())?;
            commits.push(git(&["rev-parse", "HEAD"]).map_err(|e| e.to_string())?.trim().to_string());
        }
        (tree, commits)
    };
    let result =
        radiff::bisect::bisect_tree(&root, &tree, "radiff-base", &commits[2], &scenario.path, None, "snapshot");
    // Leave the work tree at the base for every other build.
    {
        let _lock = builder.lock_tree().map_err(|e| e.to_string())?;
        builder.work_tree().map_err(|e| e.to_string())?;
    }
    let found = result.map_err(|e| e.to_string())?;
    eprintln!("bisect::tree_names_seed_000:\n{}", found.describe());
    // git names seed 000's commit, and its own check recorded the change.
    let changed = found.first_check().is_some_and(|s| matches!(s.result, Ok(radiff::bisect::Verdict::Changed(_))));
    if found.first_bad != commits[1] || !changed {
        return Err(format!(
            "expected seed 000's commit {} first, its check recording a change; got:\n{}",
            &commits[1][..12],
            found.describe()
        )
        .into());
    }
    Ok(())
}

fn kernel_boots(variant: &str) -> Result<(), Failed> {
    let lab = lab()?;
    let who = format!("kernel_boots::{variant}");
    let kernel = lab.kernel(variant, &who).map_err(|e| e.to_string())?;
    let want = radiff::kernels::bzimage_release(&kernel).map_err(|e| e.to_string())?;
    // A boot of this kernel that the matrix already made says its release (the guest
    // records `uname -r` in every run's env.json): no boot of its own. Otherwise (this
    // trial alone, or before any of the variant's batches ended) a boot with no disk.
    let (got, how) = match release_from_a_batch(variant) {
        Some((release, dir)) => (release, format!("its batch's run {}", dir.display())),
        None => {
            let (got, wall) = lab.boot_release(variant, &who).map_err(|e| e.to_string())?;
            (got, format!("a boot of its own, {:.1} s", wall.as_secs_f64()))
        }
    };
    eprintln!("{who}: {} booted ({how}), uname -r: {got}", kernel.display());
    if got != want {
        return Err(format!("{who}: the guest says `{got}`, the bzImage {} says `{want}`", kernel.display()).into());
    }
    Ok(())
}

/// The release the guest saw in a finished run of one of `variant`'s boots, and the run's
/// folder ([`Schedule::release_of`]).
fn release_from_a_batch(variant: &str) -> Option<(String, std::path::PathBuf)> {
    SCHEDULE.get()?.release_of(lab().ok()?, variant)
}

/// The kernel has no ACPI, so virtme-ng-init's power-off halts the guest; radiff's guest
/// command reboots first. With the reboot's trigger covered by /dev/null, the guest halts,
/// and the boot must end with the command's status, promptly: a hang would run into the
/// timeout and fail as `VmTimeout`. The same boot checks that a TCG guest's CPU has
/// neither ERMS nor FSRM (vm.rs's `TCG_CPU`: the guest copies 8 bytes a `rep` iteration).
fn halted_guest_is_stopped() -> Result<(), Failed> {
    let lab = lab()?;
    let who = "vm_halt_is_seen::base";
    let kernel = lab.kernel("base", who).map_err(|e| e.to_string())?;
    let dir = lab.cache.dir("runs").map_err(|e| e.to_string())?.join("_halt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let boot = vm::Boot {
        kernel,
        disks: Vec::new(),
        snapshot: false,
        shared: dir.clone(),
        command: "grep -owE 'erms|fsrm' /proc/cpuinfo | sort -u > cpu-flags; mount --bind /dev/null /proc/sysrq-trigger; exit 7"
            .into(),
        cpus: 1,
        memory_mb: 1024,
        timeout: Duration::from_secs(180),
    };
    let booted = vm::boot(&lab.cache, &boot).map_err(|e| format!("{who}: {e}"))?;
    let console = std::fs::read_to_string(&booted.console).map_err(|e| format!("{}: {e}", booted.console.display()))?;
    eprintln!("{who}: ended in {:.1} s, exit code {:?}", booted.elapsed.as_secs_f64(), booted.exit_code);
    if !console.contains("System halted") {
        return Err(format!("{who}: the guest did not halt; its console is {}", booted.console.display()).into());
    }
    if booted.exit_code != Some(7) {
        return Err(format!(
            "{who}: exit code {:?}, the command exited with 7; see {}",
            booted.exit_code,
            dir.display()
        )
        .into());
    }
    let flags = std::fs::read_to_string(dir.join("cpu-flags")).map_err(|e| format!("{who}: cpu-flags: {e}"))?;
    if booted.accel == vm::Accel::Tcg && !flags.trim().is_empty() {
        return Err(format!("{who}: the TCG guest's CPU has {} (see {})", flags.trim(), dir.display()).into());
    }
    Ok(())
}

/// A scenario whose `trace_buffer_kb` (8) cannot hold its events: the run is an error that
/// counts the lost events from the trace's text and says how to fix it, never a shorter
/// trace; its folder keeps the console log and the partial trace.
fn lost_events_fail_the_run(scenario: &Scenario) -> Result<(), Failed> {
    let lab = lab()?;
    let who = "lost_events::tiny_trace_buffer::base";
    let err = match lab.run(scenario, &scenario.points[0], "base", who) {
        Ok(out) => {
            return Err(format!(
                "{who}: the run succeeded with {} events in an {} KiB buffer (folder {}): a lost event went unseen",
                out.capture.events,
                scenario.trace_buffer_kb,
                out.dir.display()
            )
            .into())
        }
        Err(e) => e,
    };
    eprintln!("{who}: the run failed as it should:\n{err}");
    let radiff::Error::LostEvents { dir, message, fix } = &err else {
        return Err(format!("{who}: expected the lost-events error, got: {err}").into());
    };
    for (what, text, needle) in [
        ("message", message, "the ftrace ring buffer lost at least "),
        ("message", message, "entries-in-buffer/entries-written"),
        ("fix", fix, "raise `trace_buffer_kb` in "),
        ("fix", fix, "(now 8 KiB per CPU; try `trace_buffer_kb: "),
    ] {
        if !text.contains(needle) {
            return Err(format!("{who}: the {what} does not say `{needle}`:\n{err}").into());
        }
    }
    for kept in ["console.log", "trace.txt", "env.json"] {
        let path = dir.join(kept);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if len == 0 {
            return Err(
                format!("{who}: the run folder does not keep {kept} (or it is empty): {}", path.display()).into()
            );
        }
    }
    Ok(())
}

/// `scenarios[at]` alone (a boot of its own) and in a batch with the others (one boot,
/// in that order) gives the same trace: requests, folios and windows. Two runs on one
/// kernel, so this also shows a trace repeats.
fn alone_equals_batched(scenarios: &[Scenario], at: usize, variant: &str) -> Result<(), Failed> {
    let lab = lab()?;
    let s = &scenarios[at];
    let who = format!("batch::alone_equals_batched::{}::{variant}", s.name);
    let kernel = lab.kernel(variant, &who).map_err(|e| e.to_string())?;
    let alone = lab
        .run_kernel(s, &s.points[0], &format!("{variant}~alone"), &kernel)
        .map_err(|e| format!("{who}: alone: {e}"))?;
    let jobs: Vec<Job> =
        scenarios.iter().map(|s| Job { scenario: s, point: &s.points[0], name: "base~batched" }).collect();
    let mut results = lab.run_batch(&kernel, &jobs);
    let batched = results.swap_remove(at).map_err(|e| format!("{who}: batched: {e}"))?;
    eprintln!(
        "{who}: alone {:.1} s in a boot of its own; batched, point {} of a boot of {} ({:.1} s in all); folders {} and {}",
        alone.wall.as_secs_f64(),
        at + 1,
        batched.boot_points,
        batched.boot_wall.as_secs_f64(),
        alone.dir.display(),
        batched.dir.display()
    );
    if batched.boot_points != scenarios.len() {
        return Err(format!(
            "{who}: the batch ran in {} boots, not one: a point failed ({:?})",
            scenarios.len() - batched.boot_points + 1,
            results.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect::<Vec<_>>()
        )
        .into());
    }
    match compare::compare(&alone.capture.trace, &batched.capture.trace) {
        None => Ok(()),
        Some(d) => {
            let text = compare::render(&d, &who, &format!("cargo test --test scenarios -- --exact {who}"));
            Err(format!("the scenario's trace alone and in a batch differ (kernel = alone, model = batched):\n{text}")
                .into())
        }
    }
}

/// The variants of [`report_runs_are_batched`].
const REPORT_VARIANTS: [&str; 2] = ["base", "async-align-v1"];

/// `radiff report SCENARIO --runs 2 --variants base,async-align-v1` (its running part,
/// `radiff::report::run_points`, on a lab of its own that counts its boots): each kernel
/// boots once for both its runs; a progress line per run; each run has a folder of its
/// own; every run's figures are those of the scenario's run on that kernel in a boot of
/// its own (or in the matrix's batch, which `batch::alone_equals_batched` shows is the
/// same).
fn report_runs_are_batched(scenario: &Scenario, who: &str) -> Result<(), Failed> {
    let shared = lab()?;
    let kernels = Kernels::load(&radiff::repo_root()).map_err(|e| e.to_string())?;
    let own = Lab::new(Cache::from_env(), kernels, shared.guest.clone()).with_vcpus(shared.vcpus());
    let variants: Vec<String> = REPORT_VARIANTS.iter().map(|v| v.to_string()).collect();
    let point = &scenario.points[0];
    let started = std::time::SystemTime::now();
    let lines = Mutex::new(Vec::new());
    let record = |line: &str| {
        progress(line);
        lines.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_string());
    };
    let mut results = radiff::report::run_points(&own, &[(scenario, point)], &variants, 2, false, &record)
        .map_err(|e| format!("{who}: {e}"))?;
    let runs = results.pop().expect("one point").map_err(|e| format!("{who}: {e}"))?;
    let mut failures = Vec::new();
    if own.boots() != 2 {
        failures.push(format!("4 runs on 2 kernels took {} boots, not 2 (one per kernel)", own.boots()));
    }
    let expected: Vec<String> = variants
        .iter()
        .flat_map(|v| (1..=2).map(move |k| format!("report: {} on {v}, run {k} of 2", scenario.name)))
        .collect();
    let lines = lines.into_inner().unwrap_or_else(|p| p.into_inner());
    if lines != expected {
        failures.push(format!("progress lines {lines:?}, expected {expected:?}"));
    }
    for (variant, cell) in variants.iter().zip(&runs.cells) {
        let alone = shared_run(scenario, point, variant, who)?;
        let want = summary::Figures::of(&alone.capture.trace);
        if cell.variant != *variant || cell.samples.len() != 2 {
            failures.push(format!(
                "{variant}: the cell is {}'s with {} samples, not {variant}'s with 2",
                cell.variant,
                cell.samples.len()
            ));
        }
        for (k, sample) in cell.samples.iter().enumerate() {
            if sample.figures != want {
                failures.push(format!(
                    "{variant}, run {}: figures {:?}, the run alone gives {want:?}",
                    k + 1,
                    sample.figures
                ));
            }
            let trace = own
                .cache
                .root
                .join("runs")
                .join(&scenario.name)
                .join(format!("{variant}-run-{}", k + 1))
                .join("trace.json");
            let fresh = std::fs::metadata(&trace).and_then(|m| m.modified()).is_ok_and(|t| t >= started);
            if !fresh {
                failures.push(format!(
                    "{variant}, run {}: no fresh {} (each run's own folder)",
                    k + 1,
                    trace.display()
                ));
            }
        }
    }
    if failures.is_empty() {
        eprintln!("{who}: 4 runs in {} boots, each run's figures those of the run alone", own.boots());
        Ok(())
    } else {
        Err(format!("{who}:\n{}", failures.join("\n")).into())
    }
}

/// The fault trials' batch on the test-only `fault-test` kernel: [no fault, panic, hang,
/// no fault], each run's result (the error as the trial sees it).
struct FaultBatch {
    results: Vec<radiff::Result<RunOutput>>,
    /// How long this process took to settle it (under nextest, reading another's runs).
    wall: Duration,
}

fn fault_batch(scenarios: &[Scenario]) -> Result<&'static FaultBatch, String> {
    static BATCH: OnceLock<Result<FaultBatch, String>> = OnceLock::new();
    BATCH
        .get_or_init(|| {
            let lab = lab().map_err(|e| format!("{e:?}"))?;
            let root = radiff::repo_root();
            let dir = root.join("harness/tests/variants/fault-test");
            let mut patches: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            patches.sort();
            let variant =
                radiff::kernels::Variant { name: "fault-test".into(), patches, model: ModelExpectation::None };
            let builder = radiff::kernels::Builder::new(&lab.kernels, &lab.cache);
            let kernel = builder.build(&variant).map_err(|e| e.to_string())?.bzimage;
            let names = ["fault-test~before", "fault-test", "fault-test", "fault-test~after"];
            let jobs: Vec<Job> =
                scenarios.iter().zip(names).map(|(s, name)| Job { scenario: s, point: &s.points[0], name }).collect();
            let started = std::time::Instant::now();
            let run = || lab.run_batch(&kernel, &jobs);
            // Under nextest each fault trial is a process: the batch boots once in the test
            // run, and the others read its runs and errors; if its publisher died, or a run
            // folder changed since, this process runs the batch itself.
            let shared = SCHEDULE.get().and_then(|s| s.shared().map(|shared| (s, shared)));
            let results = match shared {
                None => run(),
                Some((schedule, shared)) => {
                    let id = radiff::run::SharedRun::batch_id(
                        &jobs.iter().map(|j| format!("vm_faults {}/{}", j.scenario.name, j.name)).collect::<Vec<_>>(),
                    );
                    match schedule
                        .settle_shared(shared, lab, &id, jobs.len(), &run, "vm_faults")
                        .map_err(|e| e.to_string())?
                    {
                        radiff::run::Found::Ran(results) => results,
                        radiff::run::Found::Published(found) if found.iter().all(Option::is_some) => {
                            found.into_iter().flatten().collect()
                        }
                        _ => lab.run_batch(&kernel, &jobs),
                    }
                }
            };
            Ok(FaultBatch { results, wall: started.elapsed() })
        })
        .as_ref()
        .map_err(|e| e.clone())
}

/// A BUG() in page_cache_sync_ra(): the run fails at once, quoting the panic from the
/// console; the run folder keeps the console and the trace as the kernel dumped it.
fn panic_in_readahead(batch: &FaultBatch) -> Result<(), String> {
    let err = match &batch.results[1] {
        Ok(out) => {
            return Err(format!(
                "the run succeeded (folder {}): the fault-test kernel did not panic",
                out.dir.display()
            ))
        }
        Err(e) => e,
    };
    eprintln!("vm_faults::panic_in_readahead: the run failed as it should:\n{err}");
    let radiff::Error::Guest { dir, message, .. } = err else {
        return Err(format!("expected a guest error quoting the panic, got: {err}"));
    };
    for needle in [
        "the kernel panicked at step `running the access pattern`",
        "kernel BUG at mm/readahead.c",
        "Kernel panic - not syncing",
    ] {
        if !message.contains(needle) {
            return Err(format!("the error does not say `{needle}`:\n{err}"));
        }
    }
    let console = std::fs::read_to_string(dir.join("console.log"))
        .map_err(|e| format!("{}: {e}", dir.join("console.log").display()))?;
    if !console.contains("kernel BUG at mm/readahead.c") {
        return Err(format!("{}/console.log does not hold the panic", dir.display()));
    }
    let trace = std::fs::read_to_string(dir.join("trace.txt"))
        .map_err(|e| format!("the run folder keeps no partial trace: {}: {e}", dir.join("trace.txt").display()))?;
    if !trace.contains("page_cache_sync_ra") {
        return Err(format!(
            "{}/trace.txt (the kernel's dump) has no page_cache_sync_ra event:\n{trace}",
            dir.display()
        ));
    }
    // Within a minute: the panic's time against the boot's end, from the console's stamps.
    let at = |needle: &str| {
        console
            .lines()
            .rev()
            .find(|l| l.contains(needle))
            .and_then(|l| l.strip_prefix('[')?.split_once(']')?.0.trim().parse::<f64>().ok())
    };
    let (Some(bug), Some(end)) = (at("kernel BUG at"), at("Kernel panic - not syncing")) else {
        return Err(format!("{}/console.log lacks a stamped `kernel BUG at` or `Kernel panic` line", dir.display()));
    };
    eprintln!("vm_faults::panic_in_readahead: BUG at {bug} s, panic at {end} s of the boot; folder {}", dir.display());
    if !(bug..bug + 60.0).contains(&end) {
        return Err(format!("the panic ({end} s) should follow the BUG ({bug} s) within a minute of the boot's clock"));
    }
    Ok(())
}

/// A read that never returns: stopped at the scenario's own timeout, counted from when the
/// point started, naming the timeout and the last step; the console kept.
fn hang_in_readahead(batch: &FaultBatch) -> Result<(), String> {
    let err = match &batch.results[2] {
        Ok(out) => {
            return Err(format!("the run succeeded (folder {}): the fault-test kernel did not hang", out.dir.display()))
        }
        Err(e) => e,
    };
    eprintln!("vm_faults::hang_in_readahead: the run failed as it should:\n{err}");
    let radiff::Error::VmTimeout { after, dir, last_step, .. } = err else {
        return Err(format!("expected the VM timeout, got: {err}"));
    };
    // The fixture's timeout_s (short: the guest sleeps until it, and a lane with it).
    const TIMEOUT_S: u64 = 5;
    if *after != Duration::from_secs(TIMEOUT_S) {
        return Err(format!("stopped after {} s, the scenario's timeout_s is {TIMEOUT_S}", after.as_secs()));
    }
    if last_step.as_deref() != Some("running the access pattern") {
        return Err(format!("the last step is {last_step:?}, expected `running the access pattern`"));
    }
    let text = err.to_string();
    let within = format!("within {TIMEOUT_S} s");
    for needle in
        [within.as_str(), "fault_hang.yaml", "`timeout_s`", "the guest's last step: `running the access pattern`"]
    {
        if !text.contains(needle) {
            return Err(format!("the error does not say `{needle}`:\n{text}"));
        }
    }
    let console = dir.join("console.log");
    if !std::fs::read_to_string(&console).is_ok_and(|c| c.contains("radiff-guest: point 1 of ")) {
        return Err(format!("{} is missing or not the hung boot's", console.display()));
    }
    Ok(())
}

/// The points around the faults: the first ran in the boot that panicked, the last in a
/// boot of its own after the hang's; both pass with the same trace.
fn batch_goes_on(batch: &FaultBatch) -> Result<(), String> {
    let before = batch.results[0].as_ref().map_err(|e| format!("the point before the faults failed: {e}"))?;
    let after = batch.results[3].as_ref().map_err(|e| format!("the point after the faults failed: {e}"))?;
    eprintln!(
        "vm_faults::the_batch_goes_on_in_a_fresh_boot: 4 points in {:.1} s; before: a boot of {} points ({:.1} s), after: a boot of {} ({:.1} s)",
        batch.wall.as_secs_f64(),
        before.boot_points,
        before.boot_wall.as_secs_f64(),
        after.boot_points,
        after.boot_wall.as_secs_f64()
    );
    if before.boot_points != 4 || after.boot_points != 1 {
        return Err(format!("expected boots of 4 points (the panic ends it), then 2 (the hang ends it), then 1; the first point's boot had {}, the last's {}", before.boot_points, after.boot_points));
    }
    match compare::compare(&before.capture.trace, &after.capture.trace) {
        None => Ok(()),
        Some(d) => Err(compare::render(&d, "vm_faults::the_batch_goes_on_in_a_fresh_boot", "")),
    }
}

/// A variant without a model policy is checked against the hybrid (its own mm/readahead.c
/// running as C in the model) where its patch changes only functions of that file: seed
/// 000's v1 (whose kernel the base model does not predict on the headline) and seed 001's
/// patch pass with model == kernel. A patch to a function the hybrid does not run as C
/// (f2fs-extent-ra's f2fs_mpage_readpages) gets no model check, says why, and shows its
/// trace against the base kernel's.
fn the_hybrid_checks_a_patch_without_a_policy(headline: &Scenario) -> Result<(), Failed> {
    let point = &headline.points[0];
    for (variant, base_model_parts) in [("async-align-v1", true), ("sync-ra-when-disabled", false)] {
        let who = format!("unknown_patch::the_hybrid_checks_a_patch_without_a_policy ({variant})");
        let out = shared_run(headline, point, variant, &who)?;
        let v = check(headline, point, variant, &ModelExpectation::None, &out, &who)?;
        if let Err(e) = v.render() {
            return Err(format!("{who}: should pass with model == kernel on the hybrid:\n{e}").into());
        }
        let ran =
            format!("model: the hybrid: mm/readahead.c and mm/fadvise.c of {variant} ran as C (the tree changes ");
        if !v.summary.contains(&ran) {
            return Err(format!("{who}: the summary does not say `{ran}`:\n{}", v.summary).into());
        }
        // The check is the C's: the base's Rust model parts from this kernel where the patch acts.
        let base = radiff::model_check::check(headline, &out.env, &out.capture, &Policy::BASE);
        if base.divergence.is_some() != base_model_parts {
            return Err(format!(
                "{who}: expected the base model to {} this kernel on the headline",
                if base_model_parts { "part from" } else { "equal" }
            )
            .into());
        }
    }
    let who = "unknown_patch::the_hybrid_checks_a_patch_without_a_policy (f2fs-extent-ra)";
    let out = shared_run(headline, point, "f2fs-extent-ra", who)?;
    let notes = check(headline, point, "f2fs-extent-ra", &ModelExpectation::None, &out, who)?
        .render()
        .map_err(|e| format!("{who}: should pass on its snapshot alone:\n{e}"))?;
    eprint!("{notes}");
    for want in [
        "No model check: variant `f2fs-extent-ra` has no model policy and the hybrid cannot model it",
        "f2fs_mpage_readpages() in fs/f2fs/data.c",
        "trace equals the base kernel's",
    ] {
        if !notes.contains(want) {
            return Err(format!("{who}: the notes do not say `{want}`:\n{notes}").into());
        }
    }
    Ok(())
}

/// A variant declared `model: base` (a patch that must not change behaviour) whose kernel
/// does change it fails at the first window where the base model and the kernel part:
/// seed 000's v1 kernel, checked against the base policy, must fail where the base and v1
/// models first differ.
fn model_base_fails_at_the_first_window(headline: &Scenario) -> Result<(), Failed> {
    let point = &headline.points[0];
    let who = "unknown_patch::model_base_fails_at_the_first_window";
    let out = shared_run(headline, point, "async-align-v1", who)?;
    let file = radiff::repo_root().join("kernels/variants/async-align-v1").join(radiff::kernels::VARIANT_FILE);
    let declared = ModelExpectation::Declared { policy: "base".into(), file, line: 1 };
    let input = model_input(headline, &out.env, &out.capture.pfns);
    let v1 = Policy::for_variant("async-align-v1").expect("a known policy");
    let first = compare::compare(&predict(&input, &Policy::BASE), &predict(&input, &v1))
        .ok_or_else(|| {
            format!("{who}: the base and v1 models agree on the headline; this test needs a scenario where they part")
        })?
        .window;
    let v = check(headline, point, "async-align-v1", &declared, &out, who)?;
    let diverged = v.failures.iter().find_map(|f| match f {
        Failure::Diverged { divergence, text } => Some((divergence.window, text)),
        _ => None,
    });
    let declared_line = format!(
        "{who}: checked against the model's `base` policy, as kernels/variants/async-align-v1/variant.yaml:1 says\n"
    );
    match (diverged, v.render()) {
        (_, Ok(notes)) => Err(format!("{who}: passed, but the v1 kernel changes the base behaviour:\n{notes}").into()),
        (Some((window, text)), Err(_)) if window == first && text.starts_with(&declared_line) => {
            eprintln!(
                "{who}: fails as it should, at window {first}:\n{}",
                text.lines().take(8).collect::<Vec<_>>().join("\n")
            );
            Ok(())
        }
        (_, Err(e)) => {
            Err(format!("{who}: expected a failure at window {first} naming variant.yaml, got:\n{e}").into())
        }
    }
}

/// One run of each (scenario, point, variant) per test process, shared by the trials that
/// need it: a variant without a model policy compares its trace with the base kernel's,
/// and waits for (or makes) the base run instead of booting base again.
fn shared_run(scenario: &Scenario, point: &Point, variant: &str, who: &str) -> Result<Arc<RunOutput>, String> {
    type Cell = Arc<OnceLock<Result<Arc<RunOutput>, String>>>;
    static RUNS: OnceLock<Mutex<HashMap<String, Cell>>> = OnceLock::new();
    let key = scenario.trial_name(variant, point);
    let lab = lab().map_err(|e| format!("{e:?}"))?;
    // From its boot; else (no boot has it, or its boot left it to the trial) alone, below.
    if let Some(result) = SCHEDULE.get().and_then(|s| s.result(lab, &key, who)) {
        return result;
    }
    let cell: Cell =
        RUNS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_default().clone();
    cell.get_or_init(|| lab.run(scenario, point, variant, who).map(Arc::new).map_err(|e| e.to_string())).clone()
}

fn trial(scenario: &Scenario, point: &Point, variant: &str, name: &str) -> Result<(), Failed> {
    let lab = lab()?;
    let expectation = lab.kernels.variant(variant).map_err(|e| e.to_string())?.model.clone();
    let out = shared_run(scenario, point, variant, name)?;
    let mut v = check(scenario, point, variant, &expectation, &out, name)?;
    if v.differs_from_snapshot_alone() {
        // A change is claimed only when a second run repeats it (a race otherwise).
        eprintln!("{name}: the trace differs from its snapshot; running the point again in a boot of its own");
        let kernel = lab.kernel(variant, name).map_err(|e| e.to_string())?;
        let again = lab
            .run_kernel(scenario, point, &format!("{variant}~again"), &kernel)
            .map_err(|e| format!("{name}: the second run: {e}"))?;
        let second = check(scenario, point, variant, &expectation, &again, name)?;
        v = v.after_second_run(&out.dir, second, &again.dir);
    }
    let notes = v.render()?;
    eprint!("{notes}");
    Ok(())
}

/// The verdict of one trial on its run ([`radiff::verdict::judge`]), its account printed;
/// without a model policy it shows the difference from the base kernel's run of the point.
fn check(
    scenario: &Scenario,
    point: &Point,
    variant: &str,
    expectation: &ModelExpectation,
    out: &RunOutput,
    name: &str,
) -> Result<Verdict, String> {
    let lab = lab().map_err(|e| format!("{e:?}"))?;
    let run = TrialRun { scenario, point, variant, name, out };
    let v = verdict::judge(lab, &run, expectation, || shared_run(scenario, point, "base", name))?;
    if let Some(known) = &v.known {
        eprintln!("{known}");
    }
    eprintln!("{}", v.summary);
    Ok(v)
}
