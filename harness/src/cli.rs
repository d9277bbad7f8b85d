//! The command line (one clap definition for every subcommand), the lab, and the one
//! progress reporter the library reports through and the binary owns.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::cache::Cache;
use crate::error::Result;
use crate::kernels::Kernels;
use crate::run::{guest_binary, Lab};

/// Differential testing of Linux readahead against real kernels.
#[derive(Debug, Parser)]
#[command(name = "radiff", version, arg_required_else_help = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the kernels (base and patch variants) or list them.
    #[command(subcommand)]
    Kernels(KernelsCommand),
    /// Run a scenario in a VM on each variant (all by default) and print what the kernel did.
    Run(RunArgs),
    /// A Markdown table for a changelog: per variant, device reads, bytes, folios, windows, guest time.
    Report(ReportArgs),
    /// Build a kernel tree as checked out, run a scenario, compare: exit 0 same, 1 differs, 125 does not build.
    Check(CheckArgs),
    /// The first commit (git bisect with `radiff check`) or patch of a series that changes the trace.
    Bisect(BisectArgs),
    /// The model searches generated scenarios for anomalies, shrinks them and confirms the top ones on the kernels.
    Explore(ExploreArgs),
    /// Time the whole matrix: builds, images, runs, the model.
    Bench(BenchArgs),
}

#[derive(Debug, Subcommand)]
pub enum KernelsCommand {
    /// Build the base and each variant (all by default), cached.
    Build {
        /// Variants to build (all by default).
        #[arg(value_name = "VARIANT")]
        variants: Vec<String>,
    },
    /// Each variant, its patches, whether built, where.
    List,
}

/// A variant name: trimmed, not empty (`--variants a,,b` is a mistake, not two variants).
fn variant_name(text: &str) -> std::result::Result<String, String> {
    match text.trim() {
        "" => Err("an empty variant name".into()),
        name => Ok(name.to_string()),
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file.
    #[arg(value_name = "SCENARIO.yaml")]
    pub scenario: PathBuf,
    /// A variant to run on (repeat it or separate names with commas; default: the scenario's, or all).
    #[arg(long = "variant", value_name = "V", value_delimiter = ',', value_parser = variant_name)]
    pub variants: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The scenario file (not with --all).
    #[arg(value_name = "SCENARIO.yaml", required_unless_present = "all", conflicts_with = "all")]
    pub scenario: Option<PathBuf>,
    /// Every scenario on two variants (--variants A,B); lists only what changed.
    #[arg(long, requires = "variants")]
    pub all: bool,
    /// The variants, the first the baseline (repeat or separate with commas; default: the scenario's).
    #[arg(long, value_name = "A,B,...", value_delimiter = ',', value_parser = variant_name)]
    pub variants: Vec<String>,
    /// Runs per variant; the table shows medians.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: u64,
    /// Also draw the windows of each variant's first run as an SVG picture.
    #[arg(long, value_name = "FILE", conflicts_with = "all")]
    pub svg: Option<PathBuf>,
    /// The pages the SVG shows, A..B (default: the first 4096).
    #[arg(long, value_name = "A..B", requires = "svg")]
    pub pages: Option<String>,
}

/// What `radiff check` compares the trace with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AgainstArg {
    /// The base kernel's snapshot.
    Snapshot,
    /// The model's prediction for base.
    Model,
}

impl AgainstArg {
    pub fn name(self) -> &'static str {
        match self {
            AgainstArg::Snapshot => "snapshot",
            AgainstArg::Model => "model",
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The kernel tree to build as checked out.
    #[arg(long, value_name = "DIR")]
    pub tree: PathBuf,
    /// The scenario file.
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    /// The scenario's point (its label), when it has several.
    #[arg(long, value_name = "P")]
    pub point: Option<String>,
    /// What the trace is compared with.
    #[arg(long, value_enum, default_value_t = AgainstArg::Snapshot)]
    pub against: AgainstArg,
    /// Also append this check's verdict to FILE as one JSON line (`radiff bisect --tree`
    /// reads its steps from there).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["tree", "variant"]))]
pub struct BisectArgs {
    /// A kernel git tree to bisect between --good and --bad.
    #[arg(long, value_name = "DIR", requires_all = ["good", "bad"])]
    pub tree: Option<PathBuf>,
    /// The last commit known to give the old trace (with --tree).
    #[arg(long, value_name = "COMMIT", requires = "tree")]
    pub good: Option<String>,
    /// A commit that gives the new trace (with --tree).
    #[arg(long, value_name = "COMMIT", requires = "tree")]
    pub bad: Option<String>,
    /// A variant whose series is searched for the first patch that changes the trace.
    #[arg(long, value_name = "V", conflicts_with = "tree")]
    pub variant: Option<String>,
    /// The scenario file.
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,
    /// The scenario's point (its label), when it has several.
    #[arg(long, value_name = "P")]
    pub point: Option<String>,
    /// What each commit's trace is compared with (with --tree).
    #[arg(long, value_enum, default_value_t = AgainstArg::Snapshot)]
    pub against: AgainstArg,
}

/// A `--threshold NAME=VALUE` that names a threshold and gives it a number.
fn threshold(text: &str) -> std::result::Result<String, String> {
    crate::explore::detect::Thresholds::default().set(text)?;
    Ok(text.to_string())
}

#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The variants to predict, base first (repeat or separate with commas).
    #[arg(long, value_name = "base[,V...]", value_delimiter = ',', value_parser = variant_name, default_value = "base")]
    pub variants: Vec<String>,
    /// Wall time of the whole run: 30s, 10m, 1h (a bare number is seconds).
    #[arg(long, value_name = "DURATION", value_parser = crate::explore::parse_duration, default_value = "10m")]
    pub budget: Duration,
    /// The seed of the generated scenarios.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Stop the search after N scenarios.
    #[arg(long, value_name = "N")]
    pub scenarios: Option<u64>,
    /// Where findings are written.
    #[arg(long, value_name = "DIR", default_value = "explore-findings")]
    pub out: PathBuf,
    /// Confirm at most K findings on the kernels (0: the model alone, no VM).
    #[arg(long, value_name = "K")]
    pub confirm: Option<usize>,
    /// Set a detector's threshold (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = threshold)]
    pub threshold: Vec<String>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// In a fresh cache, building every kernel and making every image.
    #[arg(long)]
    pub cold: bool,
    /// Only the scenario of this name.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// The model's throughput alone, no VM.
    #[arg(long)]
    pub model_only: bool,
}

/// What the library tells the one [`Reporter`] about long work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A line that stays in the log (`radiff: LINE`): a step begun or ended, a warning.
    Line(String),
    /// Where a long task is now, replacing its last status: on a terminal its bar's
    /// message (and the bar's position and length when `done` and `total` are known); in
    /// plain mode a line now and then ([`PLAIN_PERIOD`]).
    Status(Status),
    /// The task ended (its bar goes).
    Done { task: u64 },
}

/// The status of a long task ([`Task`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The task's id, unique in the process.
    pub task: u64,
    /// What the task is ("building base", "VM", "report 1mib_after_4k").
    pub title: String,
    /// Where it is now ("CC mm/readahead.o", "point 3 of 8: running the access pattern").
    pub message: String,
    /// How far, when counted: done so far, of `total` when the total is known.
    pub done: Option<u64>,
    pub total: Option<u64>,
    /// Whether `done` and `total` count bytes (shown as MiB) rather than items.
    pub bytes: bool,
}

impl Status {
    /// The status as one plain line (without `radiff: `): `TITLE: MESSAGE (DONE of TOTAL)`.
    pub fn line(&self) -> String {
        let n = |v: u64| if self.bytes { format!("{} MiB", v >> 20) } else { v.to_string() };
        let counts = match (self.done, self.total) {
            (Some(d), Some(t)) => format!(" ({} of {})", n(d), n(t)),
            (Some(d), None) => format!(" ({} so far)", n(d)),
            _ => String::new(),
        };
        match self.message.is_empty() {
            true => format!("{}{counts}", self.title),
            false => format!("{}: {}{counts}", self.title, self.message),
        }
    }
}

/// A long task that reports where it is ([`Event::Status`]) and ends when dropped
/// ([`Event::Done`]), on every path out of the work that owns it.
#[derive(Debug)]
pub struct Task {
    id: u64,
    title: String,
}

impl Task {
    /// A task named `title`; nothing is shown until its first status.
    pub fn start(title: impl Into<String>) -> Task {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Task { id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed), title: title.into() }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Where the task is, uncounted.
    pub fn status(&self, message: impl Into<String>) {
        event(Event::Status(self.make(message.into(), None, None, false)));
    }

    /// Where the task is and how far: `done` items of `total` (if known).
    pub fn count(&self, message: impl Into<String>, done: u64, total: Option<u64>) {
        event(Event::Status(self.make(message.into(), Some(done), total, false)));
    }

    /// Where the task is and how far: `done` bytes of `total` (if known).
    pub fn bytes(&self, message: impl Into<String>, done: u64, total: Option<u64>) {
        event(Event::Status(self.make(message.into(), Some(done), total, true)));
    }

    /// The status this task would report (for reporters' tests).
    pub fn make(&self, message: String, done: Option<u64>, total: Option<u64>, bytes: bool) -> Status {
        Status { task: self.id, title: self.title.clone(), message, done, total, bytes }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        event(Event::Done { task: self.id });
    }
}

/// Where the library's progress and command output go: the binary installs one
/// ([`set_reporter`]); without one, [`Plain`] lines go to stderr and output to stdout.
pub trait Reporter: Sync + Send {
    /// Progress of long work (builds, images, VM runs, searches).
    fn event(&self, event: &Event);
    /// A command's result text, for stdout.
    fn output(&self, text: &str);
}

static REPORTER: OnceLock<Box<dyn Reporter>> = OnceLock::new();

/// Installs the process's reporter (once; later calls are ignored).
pub fn set_reporter(reporter: Box<dyn Reporter>) {
    let _ = REPORTER.set(reporter);
}

fn reporter() -> &'static dyn Reporter {
    static DEFAULT: OnceLock<Plain> = OnceLock::new();
    match REPORTER.get() {
        Some(r) => r.as_ref(),
        None => DEFAULT.get_or_init(Plain::new),
    }
}

/// Tells the installed [`Reporter`] about long work.
pub fn event(event: Event) {
    reporter().event(&event);
}

/// A lasting line of progress ([`Event::Line`]) through the installed [`Reporter`].
pub fn progress(line: &str) {
    event(Event::Line(line.to_string()));
}

/// A command's result text, through the installed [`Reporter`] (so that it does not
/// interleave with a progress bar drawn on the same terminal).
pub fn output(text: &str) {
    reporter().output(text);
}

/// How often a plain reporter prints a long task's status, at most: CI logs stay short
/// but show that the work goes on.
pub const PLAIN_PERIOD: Duration = Duration::from_secs(20);

/// Progress when stderr is not a terminal (CI, a log file, tests): every lasting line as
/// `radiff: LINE`; a task's status only once it has run [`PLAIN_PERIOD`] since its first
/// status or its last printed one (a task shorter than that prints none); nothing when a
/// task ends.
pub struct Plain {
    lines: std::sync::Mutex<PlainLines>,
}

impl Plain {
    pub fn new() -> Plain {
        Plain { lines: std::sync::Mutex::new(PlainLines::default()) }
    }
}

impl Default for Plain {
    fn default() -> Plain {
        Plain::new()
    }
}

impl Reporter for Plain {
    fn event(&self, event: &Event) {
        let line = self.lines.lock().unwrap_or_else(|p| p.into_inner()).line(event, std::time::Instant::now());
        if let Some(line) = line {
            eprintln!("{line}");
        }
    }

    fn output(&self, text: &str) {
        use std::io::Write;
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

/// What [`Plain`] prints, decided with the time given (a clock of the caller's).
#[derive(Debug, Default)]
pub struct PlainLines {
    /// Each running task's last printed status, or its first status if none was printed.
    since: std::collections::HashMap<u64, std::time::Instant>,
}

impl PlainLines {
    /// The line `event` prints at `now`, if any.
    pub fn line(&mut self, event: &Event, now: std::time::Instant) -> Option<String> {
        match event {
            Event::Line(line) => Some(format!("radiff: {line}")),
            Event::Status(s) => {
                let since = self.since.entry(s.task).or_insert(now);
                if now.duration_since(*since) < PLAIN_PERIOD {
                    return None;
                }
                *since = now;
                Some(format!("radiff: {}", s.line()))
            }
            Event::Done { task } => {
                self.since.remove(task);
                None
            }
        }
    }
}

pub fn lab() -> Result<Lab> {
    let kernels = Kernels::load(&crate::repo_root())?;
    let lab = Lab::new(Cache::from_env(), kernels, guest_binary()?, &progress);
    lab.check_host()?;
    Ok(lab)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> std::result::Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("radiff").chain(args.iter().copied()))
    }

    fn err(args: &[&str]) -> clap::Error {
        parse(args).expect_err("a usage error")
    }

    /// Plain mode: lasting lines always; a task's status first after PLAIN_PERIOD of it
    /// (a short task prints none), then at most once a PLAIN_PERIOD; nothing at its end.
    #[test]
    fn plain_lines_are_rate_limited_per_task() {
        let t0 = std::time::Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut plain = PlainLines::default();
        let (a, b) = (Task::start("VM"), Task::start("report s"));
        let status = |t: &Task, m: &str| Event::Status(t.make(m.into(), None, None, false));
        assert_eq!(plain.line(&Event::Line("built base in 564 s".into()), at(0)).as_deref(), Some("radiff: built base in 564 s"));
        assert_eq!(plain.line(&status(&a, "booting"), at(0)), None, "a task's first status waits");
        assert_eq!(plain.line(&status(&a, "point 1 of 8: mounting"), at(5)), None);
        assert_eq!(plain.line(&status(&b, "base, run 1 of 2"), at(19)), None, "another task has a clock of its own");
        assert_eq!(plain.line(&status(&a, "point 2 of 8: dropping caches"), at(20)).as_deref(), Some("radiff: VM: point 2 of 8: dropping caches"));
        assert_eq!(plain.line(&status(&a, "point 2 of 8: starting the trace"), at(21)), None, "printed a second ago");
        assert_eq!(plain.line(&status(&a, "point 3 of 8"), at(39)), None);
        assert_eq!(plain.line(&status(&a, "point 4 of 8"), at(40)).as_deref(), Some("radiff: VM: point 4 of 8"));
        assert_eq!(plain.line(&Event::Line("a warning".into()), at(40)).as_deref(), Some("radiff: a warning"), "lines are never held back");
        assert_eq!(plain.line(&Event::Done { task: a.id() }, at(41)), None);
        assert_eq!(plain.line(&status(&a, "again"), at(42)), None, "a task that ended starts afresh");
        assert_eq!(plain.line(&status(&b, "base, run 2 of 2"), at(40)).as_deref(), Some("radiff: report s: base, run 2 of 2"));
    }

    #[test]
    fn a_status_line_shows_its_counts() {
        let t = Task::start("building base");
        assert_eq!(t.make("CC mm/readahead.o".into(), Some(812), None, false).line(), "building base: CC mm/readahead.o (812 so far)");
        assert_eq!(t.make("base, run 2".into(), Some(1), Some(6), false).line(), "building base: base, run 2 (1 of 6)");
        assert_eq!(t.make("mkfs".into(), Some(3 << 20), Some(1 << 30), true).line(), "building base: mkfs (3 MiB of 1024 MiB)");
        assert_eq!(t.make(String::new(), None, None, false).line(), "building base");
        assert_ne!(Task::start("x").id(), t.id(), "ids are unique");
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_help() {
        for args in [&["report", "--help"][..], &["run", "--help"], &["check", "--help"], &["bisect", "--help"], &["explore", "--help"], &["bench", "--help"], &["kernels", "build", "--help"], &["kernels", "list", "--help"], &["--help"]] {
            assert_eq!(err(args).kind(), ErrorKind::DisplayHelp, "{args:?}");
        }
        let help = err(&["report", "--help"]).to_string();
        assert!(help.contains("--runs <N>") && help.contains("--all"), "{help}");
    }

    #[test]
    fn switches_take_no_value() {
        assert!(matches!(parse(&["bench", "--cold"]).unwrap().command, Command::Bench(BenchArgs { cold: true, model_only: false, .. })));
        assert!(matches!(parse(&["bench"]).unwrap().command, Command::Bench(BenchArgs { cold: false, .. })));
        assert_eq!(err(&["bench", "--cold", "false"]).kind(), ErrorKind::UnknownArgument);
        assert_eq!(err(&["bench", "--cold=false"]).kind(), ErrorKind::TooManyValues);
        assert_eq!(err(&["report", "--all=yes", "--variants", "a,b"]).kind(), ErrorKind::TooManyValues);
    }

    #[test]
    fn a_repeated_single_value_option_is_an_error() {
        assert_eq!(err(&["explore", "--seed", "1", "--seed", "2"]).kind(), ErrorKind::ArgumentConflict);
        assert_eq!(err(&["report", "s.yaml", "--runs", "1", "--runs", "2"]).kind(), ErrorKind::ArgumentConflict);
        assert_eq!(err(&["bench", "--cold", "--cold"]).kind(), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn list_options_repeat_or_take_commas() {
        let variants = |args: &[&str]| match parse(args).unwrap().command {
            Command::Run(r) => r.variants,
            Command::Report(r) => r.variants,
            Command::Explore(e) => e.variants,
            other => panic!("{other:?}"),
        };
        assert_eq!(variants(&["run", "x.yaml", "--variant", "a", "--variant", "b"]), ["a", "b"]);
        assert_eq!(variants(&["run", "x.yaml", "--variant", "a,b"]), ["a", "b"]);
        assert_eq!(variants(&["run", "x.yaml"]), Vec::<String>::new());
        assert_eq!(variants(&["report", "x.yaml", "--variants", "a,b"]), ["a", "b"]);
        assert_eq!(variants(&["report", "x.yaml", "--variants=a", "--variants", "b,c"]), ["a", "b", "c"]);
        assert_eq!(variants(&["explore", "--variants", "base, async-align-v1"]), ["base", "async-align-v1"]);
        assert_eq!(variants(&["explore"]), ["base"]);
        assert_eq!(err(&["report", "x.yaml", "--variants", "a,,b"]).kind(), ErrorKind::ValueValidation);
        let Command::Kernels(KernelsCommand::Build { variants }) = parse(&["kernels", "build", "base", "v1"]).unwrap().command else { panic!() };
        assert_eq!(variants, ["base", "v1"]);
    }

    #[test]
    fn misspellings_get_a_suggestion() {
        let e = err(&["reprot", "x.yaml"]);
        assert_eq!(e.kind(), ErrorKind::InvalidSubcommand);
        assert!(e.to_string().contains("similar subcommand exists: 'report'"), "{e}");
        let e = err(&["run", "x.yaml", "--variants", "a"]);
        assert_eq!(e.kind(), ErrorKind::UnknownArgument);
        assert!(e.to_string().contains("similar argument exists: '--variant'"), "{e}");
        let e = err(&["explore", "--budjet", "1m"]);
        assert!(e.to_string().contains("--budget"), "{e}");
    }

    #[test]
    fn numbers_and_durations_are_parsed() {
        let budget = |b: &str| match parse(&["explore", "--budget", b]).map(|c| c.command) {
            Ok(Command::Explore(e)) => Ok(e.budget),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.kind()),
        };
        assert_eq!(budget("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(budget("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(budget("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(budget("90"), Ok(Duration::from_secs(90)));
        assert_eq!(budget("3 weeks"), Err(ErrorKind::ValueValidation));
        let Command::Explore(e) = parse(&["explore"]).unwrap().command else { panic!() };
        assert_eq!((e.budget, e.seed, e.confirm, e.scenarios), (Duration::from_secs(600), 0, None, None));
        assert_eq!(err(&["explore", "--seed", "x"]).kind(), ErrorKind::ValueValidation);
        assert_eq!(err(&["explore", "--threshold", "nope=1"]).kind(), ErrorKind::ValueValidation);
        assert_eq!(err(&["report", "s.yaml", "--runs", "0"]).kind(), ErrorKind::ValueValidation);
        let Command::Report(r) = parse(&["report", "s.yaml", "--runs", "3"]).unwrap().command else { panic!() };
        assert_eq!(r.runs, 3);
    }

    #[test]
    fn options_that_go_together() {
        assert_eq!(err(&["report"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["report", "--all"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["report", "--all", "s.yaml", "--variants", "a,b"]).kind(), ErrorKind::ArgumentConflict);
        assert_eq!(err(&["report", "s.yaml", "--pages", "0..8"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["report", "--all", "--variants", "a,b", "--svg", "x.svg"]).kind(), ErrorKind::ArgumentConflict);
        assert!(parse(&["report", "--all", "--variants", "a,b"]).is_ok());
        assert_eq!(err(&["check", "--tree", "t"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["check", "--tree", "t", "--scenario", "s", "--against", "kernel"]).kind(), ErrorKind::InvalidValue);
        let Command::Check(c) = parse(&["check", "--tree", "t", "--scenario", "s", "--record", "steps.json"]).unwrap().command else { panic!() };
        assert_eq!(c.record.as_deref(), Some(std::path::Path::new("steps.json")));
        let Command::Check(c) = parse(&["check", "--tree", "t", "--scenario", "s"]).unwrap().command else { panic!() };
        assert_eq!(c.record, None, "a check run by hand records nothing");
        assert_eq!(err(&["check", "--tree", "t", "--scenario", "s", "--record"]).kind(), ErrorKind::InvalidValue);
        assert_eq!(err(&["bisect", "--scenario", "s"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["bisect", "--scenario", "s", "--tree", "t", "--good", "a"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["bisect", "--scenario", "s", "--variant", "v", "--tree", "t", "--good", "a", "--bad", "b"]).kind(), ErrorKind::ArgumentConflict);
        assert!(parse(&["bisect", "--scenario", "s", "--variant", "v"]).is_ok());
        assert_eq!(err(&["run"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["run", "a.yaml", "b.yaml"]).kind(), ErrorKind::UnknownArgument);
    }
}
