//! Every scenario on every variant as a test trial: run on the real kernel in a VM,
//! predict with the model, compare, and check the kernel's trace against its snapshot.
//!
//! Trials are named `scenario_<file stem>::<variant>[::<matrix point>]`, so
//! `cargo test -- scenario_1mib_after_4k` runs one scenario on every variant.
//! Listing (`cargo test -- --list`) only parses YAML; kernels are built and VMs booted
//! inside the trials, each kernel once per test run. Under cargo-nextest (a process per
//! trial) the run's processes share their batches through the cache
//! ([`radiff::run::SharedRun`]), planned from the run's partition.
//!
//! The trials beside the matrix (bisect, the fault-test kernel, batches, a patch without a
//! policy, the guest machine's own) live in `scenarios/`, one file each, but run in this
//! process: they share its boots and runs, which a test binary of their own could not.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

use libtest_mimic::{Arguments, Failed, Trial};
use radiff::cache::Cache;
use radiff::kernels::{Kernels, ModelExpectation};
use radiff::run::{Lab, Need, RunOutput, Schedule};
use radiff::scenario::{self, Point, Scenario};
use radiff::verdict::{self, TrialRun, Verdict};

#[path = "scenarios/batch.rs"]
mod batch;
#[path = "scenarios/bisect.rs"]
mod bisect;
#[path = "scenarios/boots.rs"]
mod boots;
#[path = "scenarios/nowait_late.rs"]
mod nowait_late;
#[path = "scenarios/program_errors.rs"]
mod program_errors;
#[path = "scenarios/race_teeth.rs"]
mod race_teeth;
#[path = "scenarios/unknown_patch.rs"]
mod unknown_patch;
#[path = "scenarios/vm_faults.rs"]
mod vm_faults;

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

/// Why the base is not Linux 7.3.4 as radiff ports it: its tree changes ported functions
/// (`radiff kernels port-check`). `None` for the port's own kernel, and where that cannot
/// be told (the tree not there yet): those trials then run, and say what they find.
fn moved_base(kernels: &Kernels) -> Option<String> {
    use radiff::hybrid::Choice;
    let cache = radiff::cache::Cache::from_env();
    match &*radiff::hybrid::choose::choose(kernels, &cache, "base") {
        Choice::Hybrid { changed, .. } => Some(format!(
            "the base tree changes {} of the functions radiff ports from Linux 7.3.4 (`radiff kernels port-check`)",
            changed.len()
        )),
        Choice::Not(why) => Some(format!("the base tree moved from Linux 7.3.4: {why}")),
        Choice::Port | Choice::Failed(_) => None,
    }
}

fn trials(root: &Path) -> radiff::Result<(Vec<Trial>, Needs)> {
    let kernels = Kernels::load(root)?;
    let known = kernels.names();
    let mut trials = Vec::new();
    let mut needs: Needs = HashMap::new();
    let cache = Cache::from_env();
    let base = radiff::port::base_files(&radiff::kernels::Builder::new(&kernels, &cache)).ok();
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
        // What the base's kernel refuses (its tree says so) runs nowhere: ignored, saying why.
        let refused = base.as_deref().and_then(|tree| radiff::port::refuses::refused(tree, &scenario).ok().flatten());
        if let Some(why) = &refused {
            eprintln!("the trials of {} are ignored: {why}", path.display());
        }
        for point in &scenario.points {
            for variant in &variants {
                let name = scenario.trial_name(variant, point);
                if refused.is_some() {
                    trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true));
                    continue;
                }
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
    // The trials that hold radiff to Linux 7.3.4's own figures run where the base is that
    // kernel; on a base that moved from the port they cannot, and say so.
    let moved = moved_base(&kernels);
    let of_7_3_4 = |t: Trial| t.with_ignored_flag(moved.is_some());
    if let Some(why) = &moved {
        eprintln!(
            "explore::finds_and_confirms_a_trimmed_window, program_errors::exit_missing_timeout_in_one_boot and \
             lost_events::tiny_trace_buffer are ignored: they hold radiff to Linux 7.3.4's own figures (seed 000's \
             trimmed window, a program's reads named by its syscall events, an 8 KiB trace buffer that overflows), \
             and {why}"
        );
    }
    // The trials beside the matrix: in this process, to share its boots and runs.
    trials.extend(boots::trials(root, &known, of_7_3_4)?);
    trials.extend(unknown_patch::trials(root, &mut needs)?);
    // The model's search finds seed 000's class by itself and the kernel confirms it.
    trials.push(of_7_3_4(Trial::test("explore::finds_and_confirms_a_trimmed_window::base", || {
        let lab = lab()?;
        radiff::explore::testing::on_base(lab).map_err(Failed::from)
    })));
    // A patch without a model policy: the base model's branch-covering set, run on both
    // kernels, finds where seed 000's v1 changes the device's requests.
    trials.push(Trial::test("explore::unknown_patch_changes_are_found_on_the_kernels::async-align-v1", || {
        let lab = lab()?;
        radiff::explore::testing::on_unknown_variant(lab).map_err(Failed::from)
    }));
    // A program that exits non-zero, one the guest cannot find, one past its timeout: each
    // its error, and the guest goes on to the next point in the same boot.
    let programs = program_errors::scenarios(root)?;
    trials.push(of_7_3_4(Trial::test("program_errors::exit_missing_timeout_in_one_boot::base", move || {
        let lab = lab()?;
        program_errors::trial(lab, &programs, "program_errors").map_err(Failed::from)
    })));
    // An RWF_NOWAIT read whose own async window completes late on a throttled drive.
    let late = nowait_late::scenario(root)?;
    trials.push(Trial::test(
        "nowait_late::the_device_is_late_and_the_model_stops_where_the_kernel_did::base",
        move || nowait_late::trial(lab()?, &late).map_err(Failed::from),
    ));
    // Racing readers on a kernel that differs only where a window meets another task's
    // readahead in flight: the base model's decisions part there.
    let racing = race_teeth::scenario(root)?;
    trials.push(Trial::test(race_teeth::NAME, move || race_teeth::trial(lab()?, &racing).map_err(Failed::from)));
    trials.extend(batch::trials(root, &mut needs)?);
    trials.extend(vm_faults::trials(root)?);
    trials.extend(bisect::trials(root)?);
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    Ok((trials, needs))
}

/// The kernel of a test-only variant, `harness/tests/variants/NAME` (its patches in name
/// order, no model policy): built, or found built, by the lab's builder.
fn test_variant_kernel(lab: &Lab, name: &str) -> Result<PathBuf, String> {
    let dir = radiff::repo_root().join("harness/tests/variants").join(name);
    let mut patches: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    patches.sort();
    let variant = radiff::kernels::Variant { name: name.into(), patches, model: ModelExpectation::None };
    let builder = radiff::kernels::Builder::new(&lab.kernels, &lab.cache);
    Ok(builder.build(&variant).map_err(|e| e.to_string())?.bzimage)
}

/// The headline scenario, which the bisect and unknown-patch trials run on.
fn headline(root: &Path) -> radiff::Result<Scenario> {
    Scenario::load(&root.join("scenarios/1mib_after_4k.yaml"))
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
