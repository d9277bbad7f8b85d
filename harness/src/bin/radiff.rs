//! The `radiff` command line: parsed by clap (`radiff::cli::Cli`), progress drawn with
//! indicatif on a terminal and as plain `radiff: ...` lines elsewhere.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use clap::Parser;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use radiff::cache::Cache;
use radiff::cli::{Cli, Command, KernelsCommand, RunArgs};
use radiff::kernels::{Builder, Kernels};
use radiff::progress::{self, Event, Reporter};
use radiff::scenario::Scenario;
use radiff::summary::{self, Figures};
use radiff::{repo_root, Result};

fn main() -> ExitCode {
    radiff::worker::keep_freed_memory();
    let cli = Cli::parse();
    // Ctrl-C, SIGTERM, SIGHUP: the running build or VM (in process groups of their own)
    // stops too, and what it left half-done is never reused.
    radiff::process::stop_children_on_signals();
    let terminal = std::io::stderr().is_terminal().then(Terminal::new);
    match &terminal {
        Some(t) => progress::set_reporter(Box::new(t.clone())),
        None => progress::set_reporter(Box::new(progress::Plain::new())),
    }
    let result = dispatch(cli.command);
    if let Some(t) = &terminal {
        t.clear();
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
            progress::output(&Builder::new(&kernels, &cache).list()?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Kernels(KernelsCommand::PortCheck { variants }) => {
            let root = repo_root();
            let kernels = Kernels::load(&root)?;
            let cache = Cache::from_env();
            let mut report = radiff::port::port_check(&root, &kernels, &cache, &variants, radiff::port::Shown::Diffs)?;
            radiff::hybrid::verdict::annotate(&mut report, &kernels, &cache)?;
            let mut text = report.render();
            if !report.base.matches() {
                text.push_str(&radiff::hybrid::choose::base_model_line(&kernels, &cache));
            }
            progress::output(&text);
            Ok(if report.base.matches() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Kernels(KernelsCommand::HybridCheck { tree, variant, policy, count, seed, show }) => {
            let root = repo_root();
            let kernels = Kernels::load(&root)?;
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let o = radiff::hybrid_check::CheckOptions { tree, variant, policy, count, seed, threads, show };
            let (text, agreed) = radiff::hybrid_check::hybrid_check(&root, &kernels, &Cache::from_env(), &o)?;
            progress::output(&text);
            Ok(if agreed { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Kernels(KernelsCommand::Ledger { tree, write }) => {
            progress::output(&radiff::port::make_ledger(&repo_root(), &tree, write)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => run(&args),
        Command::Report(args) => radiff::report::report_command(&args.options()),
        Command::Check(args) => radiff::bisect::check_command(&args.options()),
        Command::Bisect(args) => radiff::bisect::bisect_command(&args.options()?),
        Command::Explore(args) => radiff::explore::explore_command(&args.options()?),
        Command::Review(args) => radiff::review::review_command(&args.options()),
        Command::Bench(args) => radiff::bench::bench_command(&args.options()),
        Command::Explain(args) => {
            let root = repo_root();
            let kernels = Kernels::load(&root)?;
            progress::output(&radiff::explain::explain_command(&root, &kernels, &Cache::from_env(), &args.options())?);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Progress on a terminal: a spinner line (elapsed time, the last lasting line) under the
/// lasting lines, and below it one line per running task ([`progress::Task`]): a bar with its
/// position and length when the task counts towards a known total (a report's runs,
/// bench's runs, explore's confirmations), else a spinner with its count; the task's
/// status is its message; the line goes when the task ends.
#[derive(Clone)]
struct Terminal {
    multi: MultiProgress,
    main: ProgressBar,
    tasks: Arc<Mutex<HashMap<u64, ProgressBar>>>,
    shown: Arc<Once>,
    /// Whether bars tick on their own (not in tests, which draw nowhere).
    ticking: bool,
}

impl Terminal {
    fn new() -> Terminal {
        Terminal::with_target(ProgressDrawTarget::stderr(), true)
    }

    fn with_target(target: ProgressDrawTarget, ticking: bool) -> Terminal {
        let multi = MultiProgress::with_draw_target(target);
        let main = ProgressBar::new_spinner();
        main.set_style(
            ProgressStyle::with_template("{spinner:.green} [{elapsed_precise}] {wide_msg}").expect("a valid template"),
        );
        Terminal { multi, main, tasks: Default::default(), shown: Arc::new(Once::new()), ticking }
    }

    /// Draws `event`; returns the lasting line it printed, if any.
    fn apply(&self, event: &Event) -> Option<String> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::Line(line) => {
                // The spinner appears, above the tasks' lines, with the first lasting line.
                self.shown.call_once(|| {
                    self.multi.insert(0, self.main.clone());
                    if self.ticking {
                        self.main.enable_steady_tick(Duration::from_millis(120));
                    }
                });
                let line = format!("radiff: {line}");
                let _ = self.multi.println(&line);
                self.main.set_message(line.trim_start_matches("radiff: ").to_string());
                Some(line)
            }
            Event::Status(s) => {
                let (template, length) = match (s.total, s.bytes) {
                    (Some(total), false) => {
                        ("  {prefix} [{bar:30.cyan/blue}] {pos}/{len} [{elapsed}] {wide_msg}", Some(total))
                    }
                    (Some(total), true) => {
                        ("  {prefix} [{bar:30.cyan/blue}] {bytes}/{total_bytes} [{elapsed}] {wide_msg}", Some(total))
                    }
                    (None, false) if s.done.is_some() => {
                        ("  {spinner:.green} {prefix} ({pos} so far) [{elapsed}] {wide_msg}", None)
                    }
                    (None, true) if s.done.is_some() => {
                        ("  {spinner:.green} {prefix} ({bytes}) [{elapsed}] {wide_msg}", None)
                    }
                    (None, _) => ("  {spinner:.green} {prefix} [{elapsed}] {wide_msg}", None),
                };
                let style = ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> ");
                let new = !tasks.contains_key(&s.task);
                let bar = tasks.entry(s.task).or_insert_with(|| {
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()).with_prefix(s.title.clone())
                });
                bar.set_style(style);
                match length {
                    Some(total) => bar.set_length(total),
                    None => bar.unset_length(),
                }
                bar.set_position(s.done.unwrap_or(0));
                bar.set_message(s.message.clone());
                if new {
                    // Added once set up: its first drawing is already the task's status.
                    self.multi.add(bar.clone());
                    if self.ticking {
                        bar.enable_steady_tick(Duration::from_millis(120));
                    }
                }
                None
            }
            Event::Done { task } => {
                if let Some(bar) = tasks.remove(task) {
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                }
                None
            }
        }
    }

    /// Everything drawn goes (at the end of the command).
    fn clear(&self) {
        for (_, bar) in self.tasks.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            bar.finish_and_clear();
        }
        self.main.finish_and_clear();
        let _ = self.multi.clear();
    }
}

impl Reporter for Terminal {
    fn event(&self, event: &Event) {
        self.apply(event);
    }

    fn output(&self, text: &str) {
        self.multi.suspend(|| {
            print!("{text}");
            let _ = std::io::stdout().flush();
        });
    }
}

fn kernels_build(names: &[String]) -> Result<ExitCode> {
    let kernels = Kernels::load(&repo_root())?;
    let cache = Cache::from_env();
    let builder = Builder::new(&kernels, &cache);
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
    progress::output(&out);
    Ok(ExitCode::SUCCESS)
}

fn run(args: &RunArgs) -> Result<ExitCode> {
    let scenario = Scenario::load(&args.scenario)?;
    let lab = radiff::run::Lab::open()?;
    let known = lab.kernels.names();
    let mut variants = scenario.variants(&known)?;
    if !args.variants.is_empty() {
        for name in &args.variants {
            lab.kernels.variant(name)?;
        }
        variants.retain(|v| args.variants.contains(v));
    }
    // What the base's kernel refuses, its tree says: an error before any build or boot.
    if let Ok(base) = radiff::port::base_files(&radiff::kernels::Builder::new(&lab.kernels, &lab.cache)) {
        radiff::port::refuses::check(base.as_ref(), &scenario)?;
    }
    progress::output(&format!("{}: {}\n", scenario.name, scenario.description));
    // One boot per variant runs all the matrix's points (a batch); shown point by point.
    let mut runs = std::collections::HashMap::new();
    for variant in &variants {
        let kernel = lab.kernel(variant, &format!("{} on {variant}", scenario.name))?;
        let jobs: Vec<radiff::run::Job> = scenario
            .points
            .iter()
            .map(|point| radiff::run::Job { scenario: &scenario, point, name: variant })
            .collect();
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
            for p in &out.capture.programs {
                let _ = writeln!(text, "  program {}:     {}", p.program, p.summary());
            }
            let _ = writeln!(text, "  trace:         {}", out.dir.join("trace.json").display());
            let _ = writeln!(text, "  console log:   {}", out.dir.join("console.log").display());
            progress::output(&text);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff::progress::Task;

    fn hidden() -> Terminal {
        Terminal::with_target(ProgressDrawTarget::hidden(), false)
    }

    #[test]
    fn lines_last_and_statuses_do_not() {
        let t = hidden();
        let task = Task::start("building base");
        assert_eq!(
            t.apply(&Event::Line("built base in 564 s: /c/bzImage".into())).as_deref(),
            Some("radiff: built base in 564 s: /c/bzImage")
        );
        assert_eq!(t.main.message(), "built base in 564 s: /c/bzImage", "the spinner shows the last lasting line");
        assert_eq!(t.apply(&Event::Status(task.make("CC mm/readahead.o".into(), Some(812), None, false))), None);
        assert_eq!(t.main.message(), "built base in 564 s: /c/bzImage", "a status leaves the spinner's line alone");
        assert_eq!(t.apply(&Event::Done { task: task.id() }), None);
    }

    #[test]
    fn a_counted_task_is_a_bar_and_goes_when_done() {
        let t = hidden();
        let task = Task::start("report s");
        let bar = |t: &Terminal| t.tasks.lock().unwrap().get(&task.id()).cloned();
        t.apply(&Event::Status(task.make("base, run 1 of 3".into(), Some(0), Some(6), false)));
        let b = bar(&t).expect("a bar");
        assert_eq!(
            (b.position(), b.length(), b.message(), b.prefix()),
            (0, Some(6), "base, run 1 of 3".to_string(), "report s".to_string())
        );
        t.apply(&Event::Status(task.make("v1, run 2 of 3".into(), Some(3), Some(6), false)));
        let b = bar(&t).expect("the same bar");
        assert_eq!((b.position(), b.length(), b.message()), (3, Some(6), "v1, run 2 of 3".to_string()));
        assert_eq!(t.tasks.lock().unwrap().len(), 1, "one bar per task");
        // Uncounted: a spinner (no length), its message the status.
        let vm = Task::start("VM");
        t.apply(&Event::Status(vm.make("point 3 of 8: running the access pattern".into(), None, None, false)));
        let v = t.tasks.lock().unwrap().get(&vm.id()).cloned().expect("a spinner");
        assert_eq!((v.length(), v.message()), (None, "point 3 of 8: running the access pattern".to_string()));
        // A total that becomes unknown drops the length.
        t.apply(&Event::Status(task.make("counting".into(), Some(4), None, false)));
        assert_eq!((bar(&t).unwrap().length(), bar(&t).unwrap().position()), (None, 4));
        t.apply(&Event::Done { task: task.id() });
        assert!(bar(&t).is_none(), "the bar went");
        assert!(b.is_finished());
        assert_eq!(t.tasks.lock().unwrap().len(), 1, "the other task's stays");
        t.apply(&Event::Done { task: 999_999 });
        t.clear();
        assert!(t.tasks.lock().unwrap().is_empty());
    }
}
