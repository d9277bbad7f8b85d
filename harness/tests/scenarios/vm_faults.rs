//! The test-only fault-test kernel: a panic and a hang inside a batch's reads, and the
//! batch goes on past them in a fresh boot.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libtest_mimic::{Failed, Trial};
use radiff::compare;
use radiff::run::{Job, RunOutput};
use radiff::scenario::Scenario;

use super::{lab, test_variant_kernel, SCHEDULE};

pub fn trials(root: &Path) -> radiff::Result<Vec<Trial>> {
    let faults = Arc::new(
        ["fault_none", "fault_panic", "fault_hang", "fault_none"]
            .iter()
            .map(|n| Scenario::load(&root.join("harness/tests/fixtures").join(format!("{n}.yaml"))))
            .collect::<radiff::Result<Vec<_>>>()?,
    );
    let mut trials = Vec::new();
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
    Ok(trials)
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
            let kernel = test_variant_kernel(lab, "fault-test")?;
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
