//! Batches: a scenario gives the same trace alone as in a batch, and `radiff report
//! --runs 2` boots each kernel once.

use std::path::Path;
use std::sync::Mutex;

use libtest_mimic::{Failed, Trial};
use radiff::cache::Cache;
use radiff::compare;
use radiff::kernels::Kernels;
use radiff::run::{Job, Lab, Need};
use radiff::scenario::Scenario;
use radiff::summary;

use super::{lab, progress, shared_run, Needs};

pub fn trials(root: &Path, needs: &mut Needs) -> radiff::Result<Vec<Trial>> {
    let mut trials = Vec::new();
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
    Ok(trials)
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
