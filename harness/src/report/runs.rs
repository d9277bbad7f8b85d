//! The running part: boots VMs through the [`Lab`] and gathers their figures and traces
//! (points on every variant, N runs each; every scenario for `--all`), each kernel once
//! per boot of up to [`BATCH_POINTS`] runs ([`plan`]).

use radiff_model::Trace;

use super::all::{render_all, PointOutcome};
use super::plan::{plan, run_name, runs_per_boot, PlannedRun};
use super::stats::{rows, Cell, Sample};
use crate::error::{Error, Result};
use crate::run::{Job, Lab, BATCH_POINTS};
use crate::scenario::{Point, Scenario};
use crate::vm::Accel;

/// What the runs of one scenario point produced.
pub struct PointRuns {
    pub cells: Vec<Cell>,
    /// The first run's trace of each variant, for the picture.
    pub traces: Vec<(String, Trace)>,
    /// (variant, release, accelerator) of every run.
    pub envs: Vec<(String, String, Accel)>,
}

/// What one run left: its figures, its environment, and its trace if it is a first run.
struct Done {
    sample: Sample,
    env: (String, String, Accel),
    trace: Option<Trace>,
}

/// " [LABEL]" for a point with a label.
fn at(point: &Point) -> String {
    point.label.as_deref().map(|l| format!(" [{l}]")).unwrap_or_default()
}

/// Runs each of `points` on each variant `runs` times, booting each kernel once per boot
/// of `plan` (up to [`BATCH_POINTS`] runs; the variants take turns boot by boot), the
/// lab's [`Lab::lanes`] boots at once (each variant's runs then cut into that many boots
/// at least, so that the lanes share the work). Prints `report: NAME[ [POINT]] on
/// VARIANT, run K of N` as the guest starts each run. Returns each point's runs, or the
/// first error among them. With `keep_going` false the first failed run ends the report
/// (no boot starts after it; its error is returned once the boots running settled);
/// otherwise a point's failure is printed (`report: NAME failed: ...`), its remaining
/// runs are left out, and the other points go on.
pub fn run_points(
    lab: &Lab,
    points: &[(&Scenario, &Point)],
    variants: &[String],
    runs: usize,
    keep_going: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<Result<PointRuns>>> {
    let lanes = lab.lanes().max(1);
    let boots = plan(points.len(), variants.len(), runs, runs_per_boot(points.len() * runs, lanes, BATCH_POINTS));
    let state = std::sync::Mutex::new(Progress {
        done: points.iter().map(|_| variants.iter().map(|_| (0..runs).map(|_| None).collect()).collect()).collect(),
        failed: points.iter().map(|_| None).collect(),
        first_error: None,
        next: 0,
    });
    // A bar over all the report's runs, moved as the guest starts each.
    let bar = Bar {
        task: crate::progress::Task::start("report"),
        total: (points.len() * variants.len() * runs) as u64,
        started: std::sync::atomic::AtomicU64::new(0),
    };
    let shared = Lanes { lab, points, variants, runs, keep_going, progress, boots: &boots, state: &state, bar: &bar };
    std::thread::scope(|s| {
        for _ in 1..lanes.min(boots.len()) {
            s.spawn(|| shared.run_lane());
        }
        shared.run_lane();
    });
    let state = state.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = state.first_error {
        return Err(e);
    }
    Ok(points
        .iter()
        .zip(state.done)
        .zip(state.failed)
        .map(|(((_, point), runs_done), failed)| match failed {
            Some(e) => Err(e),
            None => Ok(gather(point, variants, runs_done)),
        })
        .collect())
}

/// What [`run_points`]' lanes share: the runs made, each point's failure, the error that
/// ends the report (`keep_going` false), and the next boot of the plan to start.
struct Progress {
    done: Vec<Vec<Vec<Option<Done>>>>,
    failed: Vec<Option<Error>>,
    first_error: Option<Error>,
    next: usize,
}

/// The report's bar: runs started of `total`.
struct Bar {
    task: crate::progress::Task,
    total: u64,
    started: std::sync::atomic::AtomicU64,
}

/// What [`run_points`]' lanes are given: its arguments, the plan's boots, what they share
/// and the bar.
struct Lanes<'a> {
    lab: &'a Lab,
    points: &'a [(&'a Scenario, &'a Point)],
    variants: &'a [String],
    runs: usize,
    keep_going: bool,
    progress: &'a (dyn Fn(&str) + Sync),
    boots: &'a [Vec<PlannedRun>],
    state: &'a std::sync::Mutex<Progress>,
    bar: &'a Bar,
}

impl Lanes<'_> {
    /// One lane of [`run_points`]: takes the plan's next boot (leaving out the runs of
    /// points that failed) until none is left or the report ends, boots it and records its
    /// runs.
    fn run_lane(&self) {
        let Lanes { lab, points, variants, runs, keep_going, progress, boots, state, bar } = *self;
        let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let boot: Vec<PlannedRun> = {
                let mut st = lock();
                if st.first_error.is_some() || st.next >= boots.len() {
                    return;
                }
                st.next += 1;
                boots[st.next - 1].iter().filter(|r| st.failed[r.point].is_none()).copied().collect()
            };
            let Some(first) = boot.first() else { continue };
            let variant = &variants[first.variant];
            let line = |r: &PlannedRun| {
                let (scenario, point) = points[r.point];
                format!("report: {}{} on {variant}, run {} of {runs}", scenario.name, at(point), r.run)
            };
            let names: Vec<String> = boot.iter().map(|r| run_name(variant, r.run, runs)).collect();
            let results: Vec<Result<crate::run::RunOutput>> = match lab.kernel(
                variant,
                &format!("radiff report {}{} on {variant}", points[first.point].0.name, at(points[first.point].1)),
            ) {
                Ok(kernel) => {
                    let jobs: Vec<Job> = boot
                        .iter()
                        .zip(&names)
                        .map(|(r, name)| Job { scenario: points[r.point].0, point: points[r.point].1, name })
                        .collect();
                    lab.run_batch_announced(&kernel, &jobs, &mut |i| {
                        let said = line(&boot[i]);
                        progress(&said);
                        let started = bar.started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        bar.task.count(said.trim_start_matches("report: ").to_string(), started, Some(bar.total));
                    })
                }
                Err(e) if !keep_going => {
                    lock().first_error.get_or_insert(e);
                    return;
                }
                Err(e) => {
                    let text = e.to_string();
                    boot.iter()
                        .map(|r| {
                            progress(&line(r));
                            Err(Error::Other(text.clone()))
                        })
                        .collect()
                }
            };
            let mut st = lock();
            for (r, result) in boot.iter().zip(results) {
                match result {
                    Ok(out) => {
                        st.done[r.point][r.variant][r.run - 1] = Some(Done {
                            sample: Sample::of(
                                &out.capture.trace,
                                out.env.pattern_ns,
                                out.capture.programs.iter().any(|p| p.ra.raced()),
                            ),
                            env: (variant.clone(), out.env.release.clone(), out.accel),
                            trace: (r.run == 1).then_some(out.capture.trace),
                        });
                    }
                    Err(e) if !keep_going => {
                        st.first_error.get_or_insert(e);
                    }
                    Err(e) => {
                        if st.failed[r.point].is_none() {
                            progress(&format!("report: {} failed: {e}", points[r.point].0.name));
                            st.failed[r.point] = Some(e);
                        }
                    }
                }
            }
        }
    }
}

/// One point's runs, `done[variant][run - 1]` (all made), as the figures want them: a
/// cell per variant with its samples in run order, the first run's traces, and the
/// environments in the order the runs took turns (run 1 of each variant, then run 2, ...).
fn gather(point: &Point, variants: &[String], done: Vec<Vec<Option<Done>>>) -> PointRuns {
    let runs = done.first().map_or(0, Vec::len);
    let mut cells: Vec<Cell> =
        variants.iter().map(|v| Cell { point: point.label.clone(), variant: v.clone(), samples: Vec::new() }).collect();
    let mut traces = Vec::new();
    let mut envs = Vec::new();
    let mut done: Vec<std::vec::IntoIter<Option<Done>>> = done.into_iter().map(Vec::into_iter).collect();
    for _ in 0..runs {
        for ((variant, cell), runs) in variants.iter().zip(&mut cells).zip(&mut done) {
            let d = runs.next().flatten().expect("every run of a point that did not fail was made");
            cell.samples.push(d.sample);
            envs.push(d.env);
            if let Some(trace) = d.trace {
                traces.push((variant.clone(), trace));
            }
        }
    }
    PointRuns { cells, traces, envs }
}

/// `--all`: every scenario point whose scenario runs both `a` and `b`, on both. A failed
/// run is reported with the others rather than stopping the rest; returns the text and
/// whether any run failed.
pub(super) fn all(
    lab: &Lab,
    a: &str,
    b: &str,
    runs: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(String, bool)> {
    let scenarios = crate::scenario::load_all(&crate::repo_root().join("scenarios"))?;
    let pair = [a.to_string(), b.to_string()];
    let mut points = Vec::new();
    let mut skipped = Vec::new();
    for scenario in &scenarios {
        if scenario.variants.as_ref().is_some_and(|listed| !pair.iter().all(|v| listed.contains(v))) {
            skipped.push(scenario.name.clone());
            continue;
        }
        points.extend(scenario.points.iter().map(|point| (scenario, point)));
    }
    let results = run_points(lab, &points, &pair, runs, true, progress)?;
    let outcomes: Vec<PointOutcome> = points
        .iter()
        .zip(results)
        .map(|((scenario, point), result)| {
            let rows = result.map(|r| {
                let mut rows = rows(&r.cells).into_iter();
                (rows.next().expect("a row per variant"), rows.next().expect("a row per variant"))
            });
            PointOutcome {
                scenario: scenario.name.clone(),
                point: point.label.clone(),
                rows: rows.map_err(|e| e.to_string()),
            }
        })
        .collect();
    let failed = outcomes.iter().any(|o| o.rows.is_err());
    Ok((render_all(a, b, &outcomes, &skipped), failed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{sample, trace};

    /// Whatever order the boots made them in, a point's runs come out as the variants'
    /// turns made them before batching: samples in run order, the first runs' traces,
    /// the environments run 1 of each variant, then run 2.
    #[test]
    fn a_points_runs_are_gathered_as_the_variants_took_turns() {
        let d = |v: &str, windows: u64, run: usize| {
            Some(Done {
                sample: sample(&trace(windows, 8, 0), 100 * run as u64),
                env: (v.into(), format!("7.3.{run}"), Accel::Tcg),
                trace: (run == 1).then(|| trace(windows, 8, 0)),
            })
        };
        let point = Point { label: Some("max_sectors_kb=512".into()), queue: Default::default() };
        let variants = ["base".to_string(), "v1".to_string()];
        let r =
            gather(&point, &variants, vec![vec![d("base", 1, 1), d("base", 2, 2)], vec![d("v1", 3, 1), d("v1", 4, 2)]]);
        assert_eq!(r.cells.len(), 2);
        assert_eq!((r.cells[1].variant.as_str(), r.cells[1].point.as_deref()), ("v1", Some("max_sectors_kb=512")));
        assert_eq!(r.cells[0].samples, vec![sample(&trace(1, 8, 0), 100), sample(&trace(2, 8, 0), 200)]);
        assert_eq!(r.cells[1].samples[1].pattern_ns, 200_000_000);
        assert_eq!(r.traces, vec![("base".to_string(), trace(1, 8, 0)), ("v1".to_string(), trace(3, 8, 0))]);
        let envs: Vec<(&str, &str)> = r.envs.iter().map(|(v, r, _)| (v.as_str(), r.as_str())).collect();
        assert_eq!(envs, vec![("base", "7.3.1"), ("v1", "7.3.1"), ("base", "7.3.2"), ("v1", "7.3.2")]);
    }
}
