//! The `radiff` command line: parsed by clap (`radiff::cli::Cli`), progress drawn with
//! indicatif on a terminal and as plain `radiff: ...` lines elsewhere.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use radiff::cache::Cache;
use radiff::cli::{self, lab, progress, Cli, Command, KernelsCommand, Reporter, RunArgs};
use radiff::kernels::{Builder, Kernels};
use radiff::scenario::Scenario;
use radiff::summary::{self, Figures};
use radiff::{repo_root, Result};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Ctrl-C, SIGTERM, SIGHUP: the running build or VM (in process groups of their own)
    // stops too, and what it left half-done is never reused.
    radiff::process::stop_children_on_signals();
    let terminal = std::io::stderr().is_terminal().then(Terminal::new);
    match &terminal {
        Some(t) => cli::set_reporter(Box::new(t.clone())),
        None => cli::set_reporter(Box::new(Plain)),
    }
    let result = dispatch(cli.command);
    if let Some(t) = &terminal {
        t.bar.finish_and_clear();
    }
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("radiff: error: {err}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(command: Command) -> Result<ExitCode> {
    match command {
        Command::Kernels(KernelsCommand::Build { variants }) => kernels_build(&variants),
        Command::Kernels(KernelsCommand::List) => {
            let kernels = Kernels::load(&repo_root())?;
            let cache = Cache::from_env();
            cli::output(&Builder::new(&kernels, &cache, &progress).list()?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => run(&args),
        Command::Report(args) => radiff::report::main(&args),
        Command::Check(args) => radiff::bisect::check_main(&args),
        Command::Bisect(args) => radiff::bisect::bisect_main(&args),
        Command::Explore(args) => radiff::explore::main(&args),
        Command::Bench(args) => radiff::bench::main(&args),
    }
}

/// Progress when stderr is not a terminal (CI, a log file): one plain line each.
struct Plain;

impl Reporter for Plain {
    fn progress(&self, line: &str) {
        eprintln!("radiff: {line}");
    }

    fn output(&self, text: &str) {
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

/// Progress on a terminal: one spinner line (elapsed time, what is going on now) under the
/// lasting lines. Periodic updates (a build's current step, the search's rate, which run
/// of a report) only change the spinner's line; everything else is also printed above it.
#[derive(Clone)]
struct Terminal {
    bar: ProgressBar,
    /// The build log of the kernel being built, to count the objects compiled so far.
    build_log: &'static Mutex<Option<PathBuf>>,
    /// The spinner ticks from the first progress line on.
    ticking: &'static std::sync::Once,
}

impl Terminal {
    fn new() -> Terminal {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner:.green} [{elapsed_precise}] {wide_msg}").expect("a valid template"));
        Terminal { bar, build_log: Box::leak(Box::new(Mutex::new(None))), ticking: Box::leak(Box::new(std::sync::Once::new())) }
    }
}

impl Reporter for Terminal {
    fn progress(&self, line: &str) {
        self.ticking.call_once(|| self.bar.enable_steady_tick(Duration::from_millis(120)));
        let mut log = self.build_log.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(path) = build_log(line) {
            *log = Some(path);
        }
        match periodic(line, log.as_deref()) {
            Some(message) => self.bar.set_message(message),
            None => {
                self.bar.println(format!("radiff: {line}"));
                self.bar.set_message(line.to_string());
            }
        }
        if line.starts_with("built ") {
            *log = None;
        }
    }

    fn output(&self, text: &str) {
        self.bar.suspend(|| {
            print!("{text}");
            let _ = std::io::stdout().flush();
        });
    }
}

/// The log of `building NAME in DIR (make ...; log LOG)`.
fn build_log(line: &str) -> Option<PathBuf> {
    let rest = line.strip_prefix("building ")?;
    let (_, log) = rest.rsplit_once("; log ")?;
    Some(PathBuf::from(log.strip_suffix(')')?))
}

/// The spinner's message for a periodic progress line, `None` for a lasting one: a build's
/// step (with the objects compiled so far, counted in `log`), the search's rate and
/// findings, a report's run.
fn periodic(line: &str, log: Option<&std::path::Path>) -> Option<String> {
    if let Some(rest) = line.strip_prefix("building ") {
        let (name, rest) = rest.split_once(": ")?;
        let (_, step) = rest.split_once(" elapsed, ")?;
        let compiled = log.and_then(|l| std::fs::read_to_string(l).ok()).map(|text| text.lines().filter(|l| l.split_whitespace().next() == Some("CC")).count());
        let mut m = format!("building {name}");
        if let Some(n) = compiled {
            let _ = write!(m, ": {n} objects compiled");
        }
        let _ = write!(m, ", {step}");
        return Some(m);
    }
    if let Some(rest) = line.strip_prefix("explore: ").filter(|l| l.contains(" signatures: ")) {
        // "N scenarios in S s (R/s), ..." without the seconds the spinner shows anyway.
        let (n, rest) = rest.split_once(" scenarios in ")?;
        let (_, rest) = rest.split_once(" s (")?;
        return Some(format!("explore: {n} scenarios ({rest}"));
    }
    if line.starts_with("report: ") && line.contains(", run ") {
        return Some(line.to_string());
    }
    None
}

fn kernels_build(names: &[String]) -> Result<ExitCode> {
    let kernels = Kernels::load(&repo_root())?;
    let cache = Cache::from_env();
    let builder = Builder::new(&kernels, &cache, &progress);
    // Resolve every name before building anything: a typo must not cost a build.
    let variants = if names.is_empty() {
        kernels.variants.iter().collect::<Vec<_>>()
    } else {
        names.iter().map(|n| kernels.variant(n)).collect::<Result<Vec<_>>>()?
    };
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    for variant in variants {
        let built = builder.build(variant)?;
        rows.push(built);
    }
    let mut out = format!("{:<24} {:>10}  {}\n", "variant", "time", "bzImage");
    for b in &rows {
        let how = if b.compiled { format!("{:.1} s", b.elapsed.as_secs_f64()) } else { "cached".to_string() };
        let _ = writeln!(out, "{:<24} {:>10}  {}", b.variant, how, b.bzimage.display());
    }
    let _ = writeln!(out, "total {:.1} s", started.elapsed().as_secs_f64());
    cli::output(&out);
    Ok(ExitCode::SUCCESS)
}

fn run(args: &RunArgs) -> Result<ExitCode> {
    let scenario = Scenario::load(&args.scenario)?;
    let lab = lab()?;
    let known = lab.kernels.names();
    let mut variants = scenario.variants(&known)?;
    if !args.variants.is_empty() {
        for name in &args.variants {
            lab.kernels.variant(name)?;
        }
        variants.retain(|v| args.variants.contains(v));
    }
    cli::output(&format!("{}: {}\n", scenario.name, scenario.description));
    // One boot per variant runs all the matrix's points (a batch); shown point by point.
    let mut runs = std::collections::HashMap::new();
    for variant in &variants {
        let kernel = lab.kernel(variant, &format!("{} on {variant}", scenario.name))?;
        let jobs: Vec<radiff::run::Job> = scenario.points.iter().map(|point| radiff::run::Job { scenario: &scenario, point, name: variant }).collect();
        for (n, result) in lab.run_batch(&kernel, &jobs).into_iter().enumerate() {
            runs.insert((n, variant.clone()), result);
        }
    }
    for (n, point) in scenario.points.iter().enumerate() {
        for variant in &variants {
            let out = runs.remove(&(n, variant.clone())).expect("a run of every point on every variant")?;
            let figures = Figures::of(&out.capture.trace);
            let label = point.label.as_deref().map(|l| format!(" [{l}]")).unwrap_or_default();
            let mut text = format!(
                "\n{variant}{label}: kernel {}, {:?}, run {:.1} s wall, pattern {:.3} s in the guest\n",
                out.env.release,
                out.accel,
                out.wall.as_secs_f64(),
                out.env.pattern_ns as f64 / 1e9
            );
            text += &summary::short(&figures);
            for (why, n) in &out.capture.filtered {
                let _ = writeln!(text, "  filtered out:  {n} {why}");
            }
            let _ = writeln!(text, "  trace:         {}", out.dir.join("trace.json").display());
            let _ = writeln!(text, "  console log:   {}", out.dir.join("console.log").display());
            cli::output(&text);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_progress_lines() {
        assert_eq!(build_log("building base in /c/build/t (make -C t bzImage; log /c/kernels/k/build.log)"), Some(PathBuf::from("/c/kernels/k/build.log")));
        assert_eq!(periodic("building base: 1:05 elapsed, CC mm/readahead.o", None).as_deref(), Some("building base, CC mm/readahead.o"));
        assert_eq!(periodic("built base in 564 s: /c/bzImage", None), None);
        assert_eq!(
            periodic("explore: 1200 scenarios in 2 s (600/s), 3 firing, 2 signatures: trimmed-window 2", None).as_deref(),
            Some("explore: 1200 scenarios (600/s), 3 firing, 2 signatures: trimmed-window 2")
        );
        assert_eq!(periodic("explore: seed 1: 1179 scenarios in 5.0 s (236/s), 283 firing, 316 signatures (fragmentation 59)", None), None);
        assert!(periodic("report: s on base, run 2 of 5", None).is_some());
        assert_eq!(periodic("preparing /c/img for s: xfs on Nvme", None), None);
    }
}
