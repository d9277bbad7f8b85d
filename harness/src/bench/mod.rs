//! `radiff bench`: what the whole matrix costs (kernel builds, image preparation, VM runs,
//! model predictions), warm or cold, printed as a table.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use radiff_model::{predict, Policy};

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::kernels::{Builder, Kernels};
use crate::progress::progress;
use crate::run::{image_key, model_input_with, Lab};
use crate::scenario;

pub mod first_run;

/// One row of the table.
struct Row {
    phase: &'static str,
    what: String,
    wall: Duration,
    note: String,
}

/// The headline case (seed 000): its scenario file, and the most its prediction may take.
pub const HEADLINE: &str = "1mib_after_4k";
pub const HEADLINE_TARGET: Duration = Duration::from_millis(1);
/// The mmap headline case (issue 12): a sequential touch of an 8 MiB mapping, one load a
/// page, through the fault path.
pub const MMAP_HEADLINE: &str = "mmap_seq_8mib";

/// The model's throughput: how long the headline case takes to predict (the best of a
/// few, from the input `radiff explore` synthesises), its scenarios per second, and
/// `radiff explore`'s own mix (seed 1's first 2000 scenarios generated, parsed,
/// predicted on base and judged).
pub struct ModelFigures {
    pub headline: Duration,
    /// The same for [`MMAP_HEADLINE`].
    pub mmap_headline: Duration,
    pub mix_base: f64,
    pub mix_two: f64,
    /// The search on base on one thread, and on [`ModelFigures::threads`] (every core).
    pub search_one: f64,
    pub search_all: f64,
    pub threads: usize,
    /// The search on base and the base's own C as the hybrid (its workers), on one thread
    /// and on every core; then one prediction at a time on one core, the Rust port's rate
    /// and the hybrid's with every file it compiles as C (hybrid-check's measure); or why
    /// there is none (no kernel source, no gcc).
    pub hybrid: std::result::Result<HybridFigures, String>,
}

/// [`ModelFigures::hybrid`].
#[derive(Clone, Debug)]
pub struct HybridFigures {
    pub search_one: f64,
    pub search_all: f64,
    /// Predictions a second on one core: the Rust port's, the hybrid's.
    pub port: f64,
    pub c: f64,
    /// The same with mm/readahead.c's C alone, as a patch to that file alone runs
    /// (`hybrid::choose`: the other files' functions are the port's).
    pub c_readahead: f64,
    /// The functions that ran as C.
    pub functions: Vec<String>,
    /// The search on one thread with the base's C in workers, as it is ([`Self::search_one`]),
    /// and as it would be without the process boundary: each prediction's wait replaced by
    /// the worker's own CPU time for it (what the same C cost in radiff's process before the
    /// workers, issue 54).
    pub search_unbounded: f64,
}

/// The hybrid with every file as C predicts at least this share of the Rust port's rate
/// (issue 51).
pub const HYBRID_SHARE_TARGET: f64 = 0.5;

/// The search with the C in workers runs at least this share of its rate without the
/// process boundary (issue 54).
pub const BOUNDARY_TARGET: f64 = 0.8;

/// The shortest of `n` predictions of `input`: the cost of the model, not of the machine's
/// other work. Each prediction is timed with its trace given back
/// ([`radiff_model::Trace::recycle`]), as the search gives back the traces it has judged
/// (before, the timing held its drop).
fn best_prediction(input: &radiff_model::Input, policy: &Policy, n: usize) -> std::time::Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(predict(input, policy)).recycle();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

pub fn model_figures(repo: &std::path::Path) -> Result<ModelFigures> {
    let path = repo.join("scenarios").join(format!("{HEADLINE}.yaml"));
    let s = scenario::Scenario::load(&path)?;
    let input = crate::explore::synthetic_input(&s);
    let policy = Policy::for_variant("base").ok_or_else(|| Error::Other("no base policy".into()))?;
    std::hint::black_box(predict(&input, &policy));
    let headline = best_prediction(&input, &policy, 20);
    let s = scenario::Scenario::load(&repo.join("scenarios").join(format!("{MMAP_HEADLINE}.yaml")))?;
    let mmap_input = crate::explore::synthetic_input(&s);
    std::hint::black_box(predict(&mmap_input, &policy));
    let mmap_headline = best_prediction(&mmap_input, &policy, 20);
    let threads = crate::explore::all_cores();
    let mix_base = crate::explore::model_throughput(&["base".into()], 1, 2000, threads)?;
    let mix_two = crate::explore::model_throughput(&["base".into(), "async-align-v1".into()], 1, 2000, threads)?;
    let search_one = crate::explore::model_throughput(&["base".into()], 1, 2000, 1)?;
    let hybrid = hybrid_search(repo, threads);
    Ok(ModelFigures { headline, mmap_headline, mix_base, mix_two, search_one, search_all: mix_base, threads, hybrid })
}

/// The search's rate on base beside the base's own C (every file the hybrid compiles) run in
/// the hybrid's workers (hybrid/, worker/): on one thread, and on `threads`; and one
/// prediction at a time, the port's and the hybrid's, on one core.
fn hybrid_search(repo: &std::path::Path, threads: usize) -> std::result::Result<HybridFigures, String> {
    let kernels = crate::kernels::Kernels::load(repo).map_err(|e| e.to_string())?;
    let cache = Cache::from_env();
    let base = crate::port::base_files(&crate::kernels::Builder::new(&kernels, &cache)).map_err(|e| e.to_string())?;
    let hybrid = match crate::hybrid::make(&cache, base.as_ref()).map_err(|e| e.to_string())? {
        crate::hybrid::Made::Ready(h) => h,
        crate::hybrid::Made::DoesNotCompile { error, .. } => return Err(error.first_error),
    };
    let functions = hybrid.workers.functions()?;
    let checked = crate::hybrid_check::check::check(
        &[],
        2000,
        1,
        1,
        &Policy::BASE,
        &hybrid.workers,
        crate::hybrid_check::check::Compare::Windows,
    );
    let n = (checked.files + checked.generated) as f64;
    let per_core = |t: Duration| n / t.as_secs_f64().max(1e-9);
    let (port, c_rate) = (per_core(checked.rust_time), per_core(checked.hybrid_time));
    let readahead_c =
        crate::hybrid::unit::entries_of(crate::hybrid::READAHEAD_C).into_iter().map(String::from).collect();
    let alone = crate::hybrid_check::check::check(
        &[],
        2000,
        1,
        1,
        &Policy::BASE,
        &hybrid.workers.only(readahead_c),
        crate::hybrid_check::check::Compare::Windows,
    );
    let c_readahead = n / alone.hybrid_time.as_secs_f64().max(1e-9);
    // Workers of their own for the one-thread search, whose boundary is then its alone.
    let one = std::sync::Arc::new(hybrid.workers.only(functions.clone()));
    let c = |c| crate::model_check::Predictor::Hybrid {
        policy: Policy::BASE,
        c,
        label: "base's C".into(),
        port: Vec::new(),
    };
    let pol =
        |c| [("base".to_string(), crate::model_check::Predictor::Port(Policy::BASE)), ("base-as-c".to_string(), c)];
    const SEARCHED: u64 = 2000;
    let search_one = crate::explore::throughput_of(&pol(c(one.clone())), 1, SEARCHED, 1);
    let b = one.boundary();
    let wall = SEARCHED as f64 / search_one.max(1e-9);
    let unbounded = wall - b.wall.as_secs_f64() + b.predicting.as_secs_f64();
    let search_unbounded = SEARCHED as f64 / unbounded.max(1e-9);
    let search_all = crate::explore::throughput_of(&pol(c(hybrid.workers)), 1, SEARCHED, threads);
    Ok(HybridFigures { search_one, search_all, port, c: c_rate, c_readahead, functions, search_unbounded })
}

impl ModelFigures {
    pub fn lines(&self) -> String {
        format!(
            "model: headline case ({HEADLINE}) predicts in {:.2} ms ({:.0} scenarios/s; target <= {} ms: {}); mmap headline ({MMAP_HEADLINE}) in {:.3} ms ({:.0} scenarios/s); radiff explore's mix: {:.0} scenarios/s on base, {:.0}/s on base,async-align-v1\nsearch (seed 1's first 2000 scenarios on base): {:.0} scenarios/s on 1 thread, {:.0}/s on {} threads: x{:.2}",
            self.headline.as_secs_f64() * 1e3,
            1.0 / self.headline.as_secs_f64().max(1e-9),
            HEADLINE_TARGET.as_millis(),
            if self.headline <= HEADLINE_TARGET { "met" } else { "MISSED" },
            self.mmap_headline.as_secs_f64() * 1e3,
            1.0 / self.mmap_headline.as_secs_f64().max(1e-9),
            self.mix_base,
            self.mix_two,
            self.search_one,
            self.search_all,
            self.threads,
            self.search_all / self.search_one.max(1e-9)
        ) + &match &self.hybrid {
            Ok(h) => format!(
                "\nhybrid (seed 1's first 2000 scenarios on base and the base's own C in workers): {:.0} scenarios/s on 1 thread, {:.0}/s on {} threads; two Rust ports (base,async-align-v1): {:.0}/s: x{:.2}\nhybrid, one prediction at a time on one core (hybrid-check's measure, seed 1's first 2000): the Rust port {:.0}/s, the base's C {:.0}/s ({} as C): {:.2} of the port's rate (target >= {HYBRID_SHARE_TARGET}: {}); with mm/readahead.c's C alone (a patch to that file alone): {:.0}/s, {:.2} of the port's\nthe workers' boundary (issue 54): the one-thread search above, {:.0}/s, against {:.0}/s with each prediction's wait replaced by the worker's own CPU time for it (the C in radiff's process, as before the workers): x{:.2} (target >= {BOUNDARY_TARGET}: {})",
                h.search_one,
                h.search_all,
                self.threads,
                self.mix_two,
                h.search_all / self.mix_two.max(1e-9),
                h.port,
                h.c,
                h.functions.join(", "),
                h.c / h.port.max(1e-9),
                if h.c >= HYBRID_SHARE_TARGET * h.port { "met" } else { "MISSED" },
                h.c_readahead,
                h.c_readahead / h.port.max(1e-9),
                h.search_one,
                h.search_unbounded,
                h.search_one / h.search_unbounded.max(1e-9),
                if h.search_one >= BOUNDARY_TARGET * h.search_unbounded { "met" } else { "MISSED" }
            ),
            Err(why) => format!("\nhybrid: not measured: {why}"),
        }
    }
}

/// What `radiff bench` is asked.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// In a fresh cache, building every kernel and making every image.
    pub cold: bool,
    /// Only the scenario of this name.
    pub scenario: Option<String>,
    /// The model's throughput alone, no VM.
    pub model_only: bool,
    /// Then the trial binary under `cargo test` and under `cargo nextest run` (`harnesses`).
    pub harnesses: bool,
    /// Only the breakdown of the first run scripts/first-run left in this folder.
    pub first_run: Option<PathBuf>,
}

/// A batch of the matrix: its cost, its variant, that variant's kernel and its points.
type Batch<'a> = (f64, String, PathBuf, Vec<(&'a scenario::Scenario, &'a scenario::Point)>);

/// A run that ended: its trial name, its variant, its scenario and what it produced.
type Done<'a> = (String, String, &'a scenario::Scenario, Result<crate::run::RunOutput>);

/// What the runs add up to beyond their rows.
struct Tally {
    model_total: Duration,
    pattern_total: Duration,
    failed: Vec<String>,
}

/// `radiff bench [--cold] [--scenario NAME] [--model-only]`.
pub fn bench_command(args: &Options) -> Result<ExitCode> {
    if let Some(dir) = &args.first_run {
        crate::progress::output(&first_run::first_run_command(dir)?);
        return Ok(ExitCode::SUCCESS);
    }
    let cold = args.cold;
    let only: Option<&str> = args.scenario.as_deref();
    let repo = crate::repo_root();
    let model = model_figures(&repo)?;
    if args.model_only {
        crate::progress::output(&format!("{}\n", model.lines()));
        return Ok(ExitCode::SUCCESS);
    }
    let warm_cache = Cache::from_env();
    let cache = if cold { cold_cache(&warm_cache)? } else { warm_cache };
    let kernels = Kernels::load(&repo)?;
    let lab = Lab::open_with(cache.clone(), kernels.clone())?;
    let started = Instant::now();
    let mut rows = Vec::new();

    build_kernels(&kernels, &cache, &mut rows)?;
    let scenarios = chosen_scenarios(&repo, only)?;
    prepare_images(&lab, &cache, &scenarios, &mut rows)?;

    // The matrix as `cargo test` runs it: one boot per kernel and per BATCH_POINTS points,
    // as many boots at once as the host has cores, one vCPU each.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let lab = lab.with_vcpus(1);
    let batches = plan_batches(&lab, &kernels, &scenarios)?;
    let (done, matrix_wall) = run_batches(&lab, batches, threads);
    let tally = tally_runs(done, &mut rows);
    let total = started.elapsed();

    let mut out = table(&rows, &tally, &model, &lab, cold, threads, total, matrix_wall);
    let mut passed = tally.failed.is_empty();
    if args.harnesses {
        let (text, ok) = harnesses(&repo, &cache, matrix_wall)?;
        out.push_str(&text);
        passed &= ok;
    }
    crate::progress::output(&out);
    Ok(if passed { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Builds every kernel variant, a row each (compiled or cached).
fn build_kernels(kernels: &Kernels, cache: &Cache, rows: &mut Vec<Row>) -> Result<()> {
    let builder = Builder::new(kernels, cache);
    let task = crate::progress::Task::start("bench: builds");
    for (k, variant) in kernels.variants.iter().enumerate() {
        task.count(variant.name.clone(), k as u64, Some(kernels.variants.len() as u64));
        let t = Instant::now();
        let built = builder.build(variant)?;
        rows.push(Row {
            phase: "build",
            what: variant.name.clone(),
            wall: t.elapsed(),
            note: if built.compiled { "compiled".into() } else { "cached".into() },
        });
    }

    drop(task);
    Ok(())
}

/// The repository's scenarios, or only the one named `only`; none is an error.
fn chosen_scenarios(repo: &std::path::Path, only: Option<&str>) -> Result<Vec<scenario::Scenario>> {
    let scenarios: Vec<_> =
        scenario::load_all(&repo.join("scenarios"))?.into_iter().filter(|s| only.is_none_or(|o| s.name == o)).collect();
    if scenarios.is_empty() {
        return Err(Error::Other(format!("no scenario named `{}`", only.unwrap_or(""))));
    }
    Ok(scenarios)
}

/// Makes each image the scenarios need once, a row each (prepared or cached).
fn prepare_images(lab: &Lab, cache: &Cache, scenarios: &[scenario::Scenario], rows: &mut Vec<Row>) -> Result<()> {
    let mut images = BTreeSet::new();
    let task = crate::progress::Task::start("bench: images");
    let image_count = scenarios.iter().map(image_key).collect::<BTreeSet<_>>().len() as u64;
    for s in scenarios {
        if images.insert(image_key(s)) {
            task.count(s.name.clone(), images.len() as u64 - 1, Some(image_count));
            let t = Instant::now();
            let existed = crate::run::image_ready(cache, s);
            lab.image(s, "radiff bench")?;
            rows.push(Row {
                phase: "image",
                what: image_key(s),
                wall: t.elapsed(),
                note: if existed { "cached".into() } else { "prepared".into() },
            });
        }
    }

    drop(task);
    Ok(())
}

/// The scenarios' points on their variants, in boots as [`crate::run::plan_boots`] plans
/// them (the costliest first).
fn plan_batches<'a>(lab: &Lab, kernels: &Kernels, scenarios: &'a [scenario::Scenario]) -> Result<Vec<Batch<'a>>> {
    let mut points: Vec<(String, &scenario::Scenario, &scenario::Point)> = Vec::new();
    for s in scenarios {
        for variant in s.variants(&kernels.names())? {
            points.extend(s.points.iter().map(|p| (variant.clone(), s, p)));
        }
    }
    let planned: Vec<(&str, &scenario::Scenario)> = points.iter().map(|(v, s, _)| (v.as_str(), *s)).collect();
    // Each kernel built (or found) once, in the order the variants come.
    let mut kernels_built: Vec<(&str, PathBuf)> = Vec::new();
    for (variant, _) in &planned {
        if !kernels_built.iter().any(|(v, _)| v == variant) {
            kernels_built.push((variant, lab.kernel(variant, "radiff bench")?));
        }
    }
    let mut batches = Vec::new();
    for boot in crate::run::plan_boots(&planned) {
        let kernel =
            kernels_built.iter().find(|(v, _)| *v == boot.variant).map(|(_, k)| k.clone()).expect("built above");
        let runs = boot.points.iter().map(|i| (points[*i].1, points[*i].2)).collect::<Vec<_>>();
        batches.push((boot.cost, boot.variant, kernel, runs));
    }
    Ok(batches)
}

/// Boots the batches, `threads` at a time; the runs sorted by trial name, and the matrix's
/// wall time.
fn run_batches<'a>(lab: &Lab, batches: Vec<Batch<'a>>, threads: usize) -> (Vec<Done<'a>>, Duration) {
    // A bar over the runs: each batch's points count when its boot ends.
    let total_runs: usize = batches.iter().map(|b| b.3.len()).sum();
    let task = crate::progress::Task::start("bench: runs");
    task.count(format!("{} boots, {threads} at a time", batches.len()), 0, Some(total_runs as u64));
    let queue = std::sync::Mutex::new(batches.into_iter());
    let done = std::sync::Mutex::new(Vec::new());
    let matrix_started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let Some((_, variant, kernel, points)) = queue.lock().unwrap_or_else(|p| p.into_inner()).next() else {
                    break;
                };
                let jobs: Vec<crate::run::Job> =
                    points.iter().map(|(s, p)| crate::run::Job { scenario: s, point: p, name: &variant }).collect();
                let results = lab.run_batch(&kernel, &jobs);
                let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
                for ((s, p), r) in points.iter().zip(results) {
                    done.push((s.trial_name(&variant, p), variant.clone(), *s, r));
                }
                task.count(
                    format!("{} points on {variant} done", points.len()),
                    done.len() as u64,
                    Some(total_runs as u64),
                );
            });
        }
    });
    let matrix_wall = matrix_started.elapsed();
    drop(task);
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by(|a, b| a.0.cmp(&b.0));
    (done, matrix_wall)
}

/// A row for each run that ended, with the model's time for its input; the failed ones
/// are listed instead.
fn tally_runs(done: Vec<Done>, rows: &mut Vec<Row>) -> Tally {
    let mut model_total = Duration::ZERO;
    let mut pattern_total = Duration::ZERO;
    let mut failed = Vec::new();
    for (name, variant, s, result) in done {
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                failed.push(format!("{name}: {e}"));
                continue;
            }
        };
        let pattern = Duration::from_nanos(out.env.pattern_ns);
        pattern_total += pattern;
        let note = match Policy::for_variant(&variant) {
            Some(policy) => {
                let input = model_input_with(s, &out.env, &out.capture);
                let best = best_prediction(&input, &policy, 5);
                model_total += best;
                format!(
                    "guest pattern {:.2} s; model {:.2} ms; boot of {} points",
                    pattern.as_secs_f64(),
                    best.as_secs_f64() * 1e3,
                    out.boot_points
                )
            }
            None => format!(
                "guest pattern {:.2} s; no model policy; boot of {} points",
                pattern.as_secs_f64(),
                out.boot_points
            ),
        };
        rows.push(Row { phase: "run", what: name, wall: out.wall, note });
    }
    Tally { model_total, pattern_total, failed }
}

/// The printed table: the rows, then the matrix's sums, the batches, the model and the
/// failed runs.
#[allow(clippy::too_many_arguments, reason = "each argument is one measured figure of the bench's table")]
fn table(
    rows: &[Row],
    tally: &Tally,
    model: &ModelFigures,
    lab: &Lab,
    cold: bool,
    threads: usize,
    total: Duration,
    matrix_wall: Duration,
) -> String {
    let Tally { model_total, pattern_total, failed } = tally;
    let mut out = String::new();
    let _ = writeln!(out, "{:<6} {:<62} {:>9}  ", "phase", "what", "wall s");
    for r in rows {
        let _ = writeln!(out, "{:<6} {:<62} {:>9.1}  {}", r.phase, r.what, r.wall.as_secs_f64(), r.note);
    }
    let sum = |p: &str| rows.iter().filter(|r| r.phase == p).map(|r| r.wall).sum::<Duration>();
    out.push('\n');
    let _ = writeln!(out, "{} matrix: builds {:.0} s, images {:.0} s, runs {:.0} s ({} runs), model {:.1} ms in all; total {:.1} min (machine: {} CPUs)",
        if cold { "cold" } else { "warm" },
        sum("build").as_secs_f64(),
        sum("image").as_secs_f64(),
        sum("run").as_secs_f64(),
        rows.iter().filter(|r| r.phase == "run").count(),
        model_total.as_secs_f64() * 1e3,
        total.as_secs_f64() / 60.0,
        threads);
    let _ = writeln!(
        out,
        "batches: {} boots for {} runs, {threads} at a time, one vCPU each; sum of the guest's pattern times {:.1} s; matrix wall {:.1} s; ratio {:.2} (wall / pattern sum; {:.2} per core)",
        lab.boots(),
        rows.iter().filter(|r| r.phase == "run").count(),
        pattern_total.as_secs_f64(),
        matrix_wall.as_secs_f64(),
        matrix_wall.as_secs_f64() / pattern_total.as_secs_f64().max(1e-9),
        matrix_wall.as_secs_f64() * threads as f64 / pattern_total.as_secs_f64().max(1e-9)
    );
    let runs = rows.iter().filter(|r| r.phase == "run").count();
    let vm = sum("run").as_secs_f64() / runs.max(1) as f64;
    let _ = writeln!(out, "{}", model.lines());
    let _ = writeln!(
        out,
        "VM: {vm:.1} s a run ({:.2} scenarios/s); the model's mix is {:.0}x faster",
        1.0 / vm.max(1e-9),
        model.mix_base * vm
    );
    if !failed.is_empty() {
        let _ = writeln!(out, "failed runs ({}):\n{}", failed.len(), failed.join("\n"));
    }
    out
}

/// A fresh cache for a cold measurement, sharing only what `./setup` downloads (the source
/// tarball and virtme-ng): kernels, trees, images are all made anew.
fn cold_cache(warm: &Cache) -> Result<Cache> {
    let root = warm.root.join(format!("bench-cold-{}", std::process::id()));
    crate::files::make_dir(&root)?;
    for shared in ["source", "venv"] {
        let from: PathBuf = warm.root.join(shared);
        if from.exists() {
            crate::files::symlink(&from, &root.join(shared))?;
        }
    }
    progress(&format!("cold bench in {} (delete it afterwards)", root.display()));
    Ok(Cache { root })
}

/// The trial binary as users run it, one harness after the other on a warm cache: `cargo
/// test --test scenarios` (one process, batches planned in it) and `cargo nextest run
/// --test scenarios` (a process per trial, batches shared through the cache). For each:
/// its wall time, its boots of scenario points per kernel (counted through
/// `$RADIFF_BOOT_LOG`) and its wall against the in-process matrix's `matrix_wall`; and
/// whether both passed.
fn harnesses(repo: &std::path::Path, cache: &Cache, matrix_wall: Duration) -> Result<(String, bool)> {
    let mut out = String::new();
    let mut passed = true;
    let mut cargo_wall = None;
    for (k, harness) in
        [&["test", "--test", "scenarios"][..], &["nextest", "run", "--test", "scenarios", "--no-fail-fast"]]
            .into_iter()
            .enumerate()
    {
        let log = cache.dir("runs")?.join(format!("_bench-boots-{}-{k}.log", std::process::id()));
        crate::files::remove_file(&log)?;
        let command = format!("cargo {}", harness.join(" "));
        let task = crate::progress::Task::start("bench: harnesses");
        task.status(command.clone());
        let started = Instant::now();
        let (status, output) = crate::process::Cmd::new("cargo")
            .args(harness.iter().copied())
            .dir(repo)
            .env("RADIFF_BOOT_LOG", &log)
            .output()?;
        let wall = started.elapsed();
        drop(task);
        let boots = crate::files::read_text_if_any(&log)?.unwrap_or_default();
        crate::files::remove_file(&log)?;
        let ratio = match cargo_wall {
            None => format!("{:.2}x the in-process matrix", wall.as_secs_f64() / matrix_wall.as_secs_f64().max(1e-9)),
            Some(first) => format!("{:.2}x cargo test", wall.as_secs_f64() / Duration::as_secs_f64(&first).max(1e-9)),
        };
        cargo_wall.get_or_insert(wall);
        let summary = output
            .lines()
            .rev()
            .find(|l| l.contains("test result:") || l.contains("Summary ["))
            .unwrap_or("(no summary line)")
            .trim()
            .to_string();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let busy = summed_ms(&boots, WALL).as_secs_f64();
        let share = 100.0 * busy / (wall.as_secs_f64() * cores as f64).max(1e-9);
        let pattern = summed_ms(&boots, PATTERN).as_secs_f64();
        let _ = writeln!(
            out,
            "{command}: wall {:.1} s ({ratio}); {}, {busy:.1} s of boots ({share:.0} % of {cores} cores' wall); the guests' pattern times {pattern:.1} s, wall {:.2}x that; {summary}",
            wall.as_secs_f64(),
            boots_per_kernel(&boots),
            wall.as_secs_f64() / pattern.max(1e-9)
        );
        if !status.success() {
            passed = false;
            let _ =
                writeln!(out, "{command} failed (exit {status}); its last lines:\n{}", crate::error::tail(&output, 20));
        }
    }
    Ok((out, passed))
}

/// `N boots (VARIANT n, ...)` from a boot log's lines `KERNEL-DIR POINTS` (the folder
/// `VARIANT-KEY`), the variants in name order.
pub(crate) fn boots_per_kernel(log: &str) -> String {
    let mut per: std::collections::BTreeMap<&str, usize> = Default::default();
    for line in log.lines() {
        let dir = line.split_whitespace().next().unwrap_or("");
        *per.entry(dir.rsplit_once('-').map_or(dir, |(variant, _)| variant)).or_default() += 1;
    }
    let list: Vec<String> = per.iter().map(|(v, n)| format!("{v} {n}")).collect();
    format!("{} boots ({})", per.values().sum::<usize>(), list.join(", "))
}

/// The column of a boot log's lines `KERNEL POINTS LABELS START WALL PATTERN` (see
/// [`crate::boot_log::log_boot`]) that holds the boot's wall (ms): how long a guest ran, one
/// core each.
pub(crate) const WALL: usize = 4;
/// The column holding the sum of the boot's points' pattern times (ms): how long the
/// guests ran access patterns, the part of a test run that is not overhead.
pub(crate) const PATTERN: usize = 5;

/// Column `column` of a boot log's lines summed, as milliseconds; lines without it (from
/// before that column was logged) count none.
pub(crate) fn summed_ms(log: &str, column: usize) -> Duration {
    log.lines()
        .filter_map(|line| line.split_whitespace().nth(column)?.parse::<u64>().ok())
        .map(Duration::from_millis)
        .sum()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn boots_are_counted_per_variant_from_the_boot_log() {
        let log = "base-6d63804bf1280d11 8 a/base,b/base 1796169027000 41500 20100\nasync-align-v1-67ff0803888adbbd 7 a/async-align-v1 1796169030000 30250 12000\nbase-6d63804bf1280d11 1 c/base 1796169090000 9000\n";
        assert_eq!(super::boots_per_kernel(log), "3 boots (async-align-v1 1, base 2)");
        assert_eq!(super::summed_ms(log, super::WALL), Duration::from_millis(41500 + 30250 + 9000));
        assert_eq!(super::boots_per_kernel(""), "0 boots ()");
        assert_eq!(super::summed_ms("base-6d63804bf1280d11 1 c/base\n", super::WALL), Duration::ZERO);
        // The third line is from before the pattern column: it counts no pattern time.
        assert_eq!(super::summed_ms(log, super::PATTERN), Duration::from_millis(20100 + 12000));
    }
}
