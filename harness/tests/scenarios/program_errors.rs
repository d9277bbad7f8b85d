//! A program step that fails, in a real guest: one that exits non-zero, one the guest
//! cannot find, one past its scenario's timeout, each with its error as `radiff run` shows
//! it (the library's [`radiff::run::Lab::run_batch`], which `radiff run` calls), then a
//! program that passes. One boot: the guest goes on past a point whose program failed.

use std::path::Path;

use radiff::run::{Job, Lab, RunOutput};
use radiff::scenario::Scenario;

/// The fixtures, in the batch's order: the three failures, then the point that passes.
pub const FIXTURES: [&str; 4] = ["program_exits_3", "program_not_found", "program_past_timeout", "program_ok"];

pub fn scenarios(root: &Path) -> radiff::Result<Vec<Scenario>> {
    FIXTURES.iter().map(|n| Scenario::load(&root.join("harness/tests/fixtures").join(format!("{n}.yaml")))).collect()
}

/// Runs the four points in one batch on the base kernel and checks each one's outcome.
pub fn trial(lab: &Lab, scenarios: &[Scenario], who: &str) -> Result<(), String> {
    let kernel = lab.kernel("base", who).map_err(|e| e.to_string())?;
    let jobs: Vec<Job> =
        scenarios.iter().map(|s| Job { scenario: s, point: &s.points[0], name: "program-errors" }).collect();
    let started = std::time::Instant::now();
    let results = lab.run_batch(&kernel, &jobs);
    eprintln!("{who}: 4 points in {:.1} s", started.elapsed().as_secs_f64());
    let mut failures = Vec::new();
    for ((scenario, result), check) in scenarios.iter().zip(&results).zip([exits_3 as Check, not_found, past_timeout]) {
        if let Err(e) = failed_with(scenario, result).and_then(|(dir, message)| check(scenario, dir, message)) {
            failures.push(format!("{}: {e}", scenario.name));
        }
    }
    match &results[3] {
        Ok(out) => one_boot(out).unwrap_or_else(|e| failures.push(format!("program_ok: {e}"))),
        Err(e) => failures.push(format!("program_ok: the point after the failing programs failed: {e}")),
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n\n"))
    }
}

type Check = fn(&Scenario, &Path, &str) -> Result<(), String>;

/// The guest's error of a failed point: its run folder and message (printed as `radiff
/// run` prints the whole error).
fn failed_with<'a>(scenario: &Scenario, result: &'a radiff::Result<RunOutput>) -> Result<(&'a Path, &'a str), String> {
    let err = match result {
        Ok(out) => return Err(format!("the run succeeded (folder {}): it should fail", out.dir.display())),
        Err(e) => e,
    };
    eprintln!("program_errors: {} failed as it should:\n{err}\n", scenario.name);
    match err {
        radiff::Error::Guest { dir, message, .. } => Ok((dir, message)),
        other => Err(format!("expected the guest's error, got: {other}")),
    }
}

/// `FILE:LINE: ` of the scenario's program step, as the error starts its program's part.
fn step_at(scenario: &Scenario) -> String {
    let text = std::fs::read_to_string(&scenario.path).unwrap_or_default();
    let line = text.lines().position(|l| l.trim_start().starts_with("- program:")).map_or(0, |n| n + 1);
    format!("{}:{line}: ", scenario.path.display())
}

fn contains_all(message: &str, needles: &[&str]) -> Result<(), String> {
    match needles.iter().find(|n| !message.contains(**n)) {
        Some(n) => Err(format!("the error does not say `{n}`:\n{message}")),
        None => Ok(()),
    }
}

fn exits_3(scenario: &Scenario, dir: &Path, message: &str) -> Result<(), String> {
    let at = step_at(scenario);
    contains_all(
        message,
        &[
            "at step `running program 0 (program: sh -c",
            &format!("{at}program: sh -c"),
            "exited with exit status: 3; the end of its stderr:\n  first line\n  boom: the last line",
        ],
    )?;
    let err = std::fs::read_to_string(dir.join("program-0.err")).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !err.contains("boom: the last line") {
        return Err(format!("{}/program-0.err does not hold the program's stderr:\n{err}", dir.display()));
    }
    Ok(())
}

fn not_found(scenario: &Scenario, _dir: &Path, message: &str) -> Result<(), String> {
    let at = step_at(scenario);
    contains_all(
        message,
        &[
            &format!("{at}program `radiff-no-such-program` not found in the guest"),
            "install it on the host",
            "`dpkg -S bin/radiff-no-such-program`",
        ],
    )
}

fn past_timeout(scenario: &Scenario, _dir: &Path, message: &str) -> Result<(), String> {
    let at = step_at(scenario);
    let killed_at = scenario.timeout.as_secs() * 3 / 4;
    contains_all(
        message,
        &[
            &format!("{at}program: sh -c"),
            &format!("still running after {killed_at} s (3/4 of the scenario's timeout, `timeout_s`): killed"),
            "the end of its stderr:\n  waiting for ever",
        ],
    )
}

/// The point after the failures ran in their boot, and its program's calls were recorded.
fn one_boot(out: &RunOutput) -> Result<(), String> {
    eprintln!(
        "program_errors: program_ok passed in a boot of {} points ({:.1} s); {}",
        out.boot_points,
        out.boot_wall.as_secs_f64(),
        out.capture.programs.first().map_or("no program recorded".into(), |p| p.summary())
    );
    if out.boot_points != 4 {
        return Err(format!(
            "its boot ran {} points: the guest should go on past a failed program, all 4 in one boot",
            out.boot_points
        ));
    }
    match out.capture.programs.first() {
        Some(p) if p.calls.get("read").is_some_and(|n| *n > 0) && p.unfollowable.is_none() => Ok(()),
        other => Err(format!("dd's reads were not recorded: {other:?}")),
    }
}
