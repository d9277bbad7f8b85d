//! The running part: boots VMs through the [`Lab`] and gathers their figures and traces
//! (a point on every variant, N runs each; every scenario for `--all`).

use radiff_model::Trace;

use super::all::{render_all, PointOutcome};
use super::stats::{rows, Cell, Sample};
use crate::error::Result;
use crate::run::Lab;
use crate::scenario::{Point, Scenario};
use crate::summary::Figures;
use crate::vm::Accel;

/// What the runs of one scenario point produced.
pub(super) struct PointRuns {
    pub cells: Vec<Cell>,
    /// The first run's trace of each variant, for the picture.
    pub traces: Vec<(String, Trace)>,
    /// (variant, release, accelerator) of every run.
    pub envs: Vec<(String, String, Accel)>,
}

/// Runs `point` on each variant `runs` times. The variants take turns (A B A B, not
/// A A B B) so that a change in the host's load over time falls on all of them alike.
pub(super) fn run_point(lab: &Lab, scenario: &Scenario, point: &Point, variants: &[String], runs: usize, progress: &dyn Fn(&str)) -> Result<PointRuns> {
    let mut cells: Vec<Cell> = variants.iter().map(|v| Cell { point: point.label.clone(), variant: v.clone(), samples: Vec::new() }).collect();
    let mut traces = Vec::new();
    let mut envs = Vec::new();
    let at = point.label.as_deref().map(|l| format!(" [{l}]")).unwrap_or_default();
    progress(&format!("report: {}{at} on {}, {runs} run{} each", scenario.name, variants.join(", "), if runs == 1 { "" } else { "s" }));
    let task = crate::cli::Task::start(format!("report {}{at}", scenario.name));
    for run in 1..=runs {
        for (variant, cell) in variants.iter().zip(&mut cells) {
            task.count(format!("{variant}, run {run} of {runs}"), envs.len() as u64, Some((runs * variants.len()) as u64));
            let out = lab.run(scenario, point, variant, &format!("radiff report {}{at} on {variant}", scenario.name))?;
            cell.samples.push(Sample { figures: Figures::of(&out.capture.trace), pattern_ns: out.env.pattern_ns });
            envs.push((variant.clone(), out.env.release.clone(), out.accel));
            if run == 1 {
                traces.push((variant.clone(), out.capture.trace));
            }
        }
    }
    Ok(PointRuns { cells, traces, envs })
}

/// `--all`: every scenario point whose scenario runs both `a` and `b`, on both. A failed
/// run is reported with the others rather than stopping the rest; returns the text and
/// whether any run failed.
pub(super) fn all(lab: &Lab, a: &str, b: &str, runs: usize, progress: &dyn Fn(&str)) -> Result<(String, bool)> {
    let scenarios = crate::scenario::load_all(&crate::repo_root().join("scenarios"))?;
    let pair = [a.to_string(), b.to_string()];
    let mut outcomes = Vec::new();
    let mut skipped = Vec::new();
    for scenario in &scenarios {
        if scenario.variants.as_ref().is_some_and(|listed| !pair.iter().all(|v| listed.contains(v))) {
            skipped.push(scenario.name.clone());
            continue;
        }
        for point in &scenario.points {
            let result = run_point(lab, scenario, point, &pair, runs, progress).map(|r| {
                let mut rows = rows(&r.cells).into_iter();
                (rows.next().expect("a row per variant"), rows.next().expect("a row per variant"))
            });
            if let Err(e) = &result {
                progress(&format!("report: {} failed: {e}", scenario.name));
            }
            outcomes.push(PointOutcome { scenario: scenario.name.clone(), point: point.label.clone(), rows: result.map_err(|e| e.to_string()) });
        }
    }
    let failed = outcomes.iter().any(|o| o.rows.is_err());
    Ok((render_all(a, b, &outcomes, &skipped), failed))
}
