//! The command line: one clap definition for every subcommand, and its conversion into
//! each command's own options.
//!
//! Only the binary (and the tests that parse command lines) imports this module; it imports
//! the library, never the other way round. It stays in the library, not under src/bin/, so
//! that `tests/cli.rs` can parse the README's command lines with [`Cli`] directly.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::bisect::{Against, BisectOptions, CheckOptions, Search};
use crate::error::{Error, Result};

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
    /// Each window of a run with the decisions that made it, in the base's kernel lines.
    Explain(ExplainArgs),
    /// From a patch mail to a reply: what it changes, where better or worse, run on both kernels.
    ///
    /// Exit status: 0 with a Tested-by (the model followed the patch, searched, and the kernels
    /// ran all it found: nothing worse); 1 when the kernels show something worse; 2 on bad input;
    /// 3 when nothing is worse but there is not enough evidence for a Tested-by (the reply says
    /// what it could not look at and what would give it).
    Review(ReviewArgs),
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
    /// The model's ported kernel functions in the base (and in each variant named) against
    /// the port: `changed:` with a diff, `gone:`; exit 0 when the base matches the port.
    PortCheck {
        /// Variants whose patched functions to list, against the base.
        #[arg(value_name = "VARIANT")]
        variants: Vec<String>,
    },
    /// The Rust port against a tree's own mm/readahead.c run as C in the model (the hybrid),
    /// on every scenario of scenarios/ and N generated ones: each scenario where they part,
    /// as a reproducer; exit 0 when they agree everywhere.
    HybridCheck {
        /// The kernel tree whose mm/readahead.c to run (default: the configured base).
        #[arg(long, value_name = "DIR")]
        tree: Option<PathBuf>,
        /// A variant whose patches to apply to the tree first.
        #[arg(long, value_name = "V")]
        variant: Option<String>,
        /// The model policy to compare with (default: the variant's name, else base).
        #[arg(long, value_name = "POLICY")]
        policy: Option<String>,
        /// Generated scenarios (explore's grammar) besides the repository's.
        #[arg(long, value_name = "N", default_value_t = 1000)]
        count: u64,
        /// The generator's seed.
        #[arg(long, value_name = "S", default_value_t = 0)]
        seed: u64,
        /// Scenarios where the two part shown in full.
        #[arg(long, value_name = "N", default_value_t = 3)]
        show: usize,
    },
    /// Write the port ledger (model/ledger.txt) from a tree of the kernel
    /// the model ports and model/src's doc comments.
    Ledger {
        /// The kernel source tree (the ported version, unpacked).
        #[arg(long, value_name = "DIR")]
        tree: PathBuf,
        /// Write it; without, print it and how it differs from the repository's.
        #[arg(long)]
        write: bool,
    },
}

/// A variant name: trimmed, not empty (`--variants a,,b` is a mistake, not two variants).
fn variant_name(text: &str) -> std::result::Result<String, String> {
    match text.trim() {
        "" => Err("an empty variant name".into()),
        name => Ok(name.to_string()),
    }
}

/// A name for a new variant folder: letters, digits, `.`, `_` and `-`, not `base`.
fn new_variant_name(text: &str) -> std::result::Result<String, String> {
    let name = variant_name(text)?;
    if name == "base" || name.starts_with('.') || !name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(format!(
            "`{name}` cannot name a variant folder: use letters, digits, `.`, `_` and `-` (and not `base`)"
        ));
    }
    Ok(name)
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

impl From<AgainstArg> for Against {
    fn from(a: AgainstArg) -> Against {
        match a {
            AgainstArg::Snapshot => Against::Snapshot,
            AgainstArg::Model => Against::Model,
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

/// "10m", "30s", "1h", "90" (seconds), "500ms".
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("`{text}` is not a duration: write 30s, 10m or 1h"))?;
    Ok(match unit.trim() {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" | "min" => Duration::from_secs(n * 60),
        "h" => Duration::from_secs(n * 3600),
        other => return Err(format!("`{text}`: unknown unit `{other}`; use ms, s, m or h")),
    })
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
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10m")]
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
    /// Threads the model's search runs on (default: every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// Set a detector's threshold (repeatable; --help lists them).
    #[arg(long, value_name = "NAME=VALUE", value_parser = threshold, long_help = crate::explore::detect::thresholds_help())]
    pub threshold: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// A raw patch mail (replies and all, in any transfer encoding, the patch inline or
    /// attached), an mbox of a series, a folder of kernels/variants/, or `-`: the mail on
    /// standard input (`b4 am -o - MSGID | radiff review -`).
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    /// Wall time of the whole review, builds included: 30s, 10m, 1h.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10m")]
    pub budget: Duration,
    /// Make the variant under this name (default: from the subject; without it, a variant
    /// that holds the same diff is reused).
    #[arg(long, value_name = "NAME", value_parser = new_variant_name)]
    pub name: Option<String>,
    /// The review's folder (default: review-VARIANT).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The seed of the search's generated scenarios.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Leave the variant folder the review makes in kernels/variants/ (by default it is the
    /// review's alone and removed when the review ends; its patches stay in DIR/variant/).
    #[arg(long)]
    pub keep: bool,
}

impl ReviewArgs {
    /// The review's options.
    pub fn options(&self) -> crate::review::Options {
        crate::review::Options {
            path: self.path.clone(),
            name: self.name.clone(),
            budget: self.budget,
            out: self.out.clone(),
            seed: self.seed,
            keep: self.keep,
        }
    }
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
    /// Then the trials as `cargo test --test scenarios` and `cargo nextest run --test
    /// scenarios` run them: each one's boots per kernel and wall time.
    #[arg(long, conflicts_with = "model_only")]
    pub harnesses: bool,
    /// Only where a first run's minutes went: the folder `scripts/first-run` wrote (its
    /// run.log, boots.log and cache/).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["cold", "scenario", "model_only", "harnesses"])]
    pub first_run: Option<std::path::PathBuf>,
}

impl ReportArgs {
    /// What `radiff report ARGS` asks.
    pub fn options(&self) -> crate::report::Options {
        crate::report::Options {
            scenario: self.scenario.clone(),
            all: self.all,
            variants: self.variants.clone(),
            runs: usize::try_from(self.runs).unwrap_or(usize::MAX),
            svg: self.svg.clone(),
            pages: self.pages.clone(),
        }
    }
}

impl CheckArgs {
    /// What `radiff check ARGS` asks.
    pub fn options(&self) -> CheckOptions {
        CheckOptions {
            tree: self.tree.clone(),
            scenario: self.scenario.clone(),
            point: self.point.clone(),
            against: self.against.into(),
            record: self.record.clone(),
        }
    }
}

impl BisectArgs {
    /// What `radiff bisect ARGS` asks: a tree between two commits, or a variant's series.
    pub fn options(&self) -> Result<BisectOptions> {
        let search = match (&self.tree, &self.variant, &self.good, &self.bad) {
            (Some(tree), None, Some(good), Some(bad)) => {
                Search::Tree { tree: tree.clone(), good: good.clone(), bad: bad.clone() }
            }
            (None, Some(variant), _, _) => Search::Series { variant: variant.clone() },
            _ => return Err(Error::Other("give either --tree DIR --good A --bad B, or --variant V".into())),
        };
        Ok(BisectOptions {
            search,
            scenario: self.scenario.clone(),
            point: self.point.clone(),
            against: self.against.into(),
        })
    }
}

impl ExploreArgs {
    /// What `radiff explore ARGS` asks (clap parsed and checked each option).
    pub fn options(&self) -> Result<crate::explore::Options> {
        let mut o = crate::explore::Options {
            variants: self.variants.clone(),
            budget: self.budget,
            seed: self.seed,
            out: self.out.clone(),
            confirm: self.confirm,
            max_scenarios: self.scenarios,
            threads: self.threads.map_or_else(crate::explore::all_cores, |n| n as usize),
            ..crate::explore::Options::default()
        };
        for t in &self.threshold {
            o.thresholds.set(t).map_err(Error::Other)?;
        }
        if o.variants.is_empty() {
            return Err(Error::Other("--variants names no variant".into()));
        }
        Ok(o)
    }
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A run's folder: runs/SCENARIO/VARIANT[/POINT] (in the cache, or a path).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: std::path::PathBuf,
    /// Only this window (0-based, as trials number them).
    #[arg(long, value_name = "N")]
    pub window: Option<usize>,
}

impl ExplainArgs {
    /// What `radiff explain ARGS` asks.
    pub fn options(&self) -> crate::explain::Options {
        crate::explain::Options { run_dir: self.run_dir.clone(), window: self.window }
    }
}

impl BenchArgs {
    /// What `radiff bench ARGS` asks.
    pub fn options(&self) -> crate::bench::Options {
        crate::bench::Options {
            cold: self.cold,
            scenario: self.scenario.clone(),
            model_only: self.model_only,
            harnesses: self.harnesses,
            first_run: self.first_run.clone(),
        }
    }
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

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_help() {
        for args in [
            &["report", "--help"][..],
            &["run", "--help"],
            &["check", "--help"],
            &["bisect", "--help"],
            &["explore", "--help"],
            &["bench", "--help"],
            &["kernels", "build", "--help"],
            &["kernels", "list", "--help"],
            &["--help"],
        ] {
            assert_eq!(err(args).kind(), ErrorKind::DisplayHelp, "{args:?}");
        }
        let help = err(&["report", "--help"]).to_string();
        assert!(help.contains("--runs <N>") && help.contains("--all"), "{help}");
    }

    #[test]
    fn switches_take_no_value() {
        assert!(matches!(
            parse(&["bench", "--cold"]).unwrap().command,
            Command::Bench(BenchArgs { cold: true, model_only: false, .. })
        ));
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
        let Command::Kernels(KernelsCommand::Build { variants }) =
            parse(&["kernels", "build", "base", "v1"]).unwrap().command
        else {
            panic!()
        };
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
    fn durations_and_options_parse() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("3 weeks").is_err());
        let parse = |args: &[&str]| match Cli::try_parse_from(["radiff", "explore"].iter().chain(args))
            .map_err(|e| e.to_string())?
            .command
        {
            Command::Explore(a) => a.options().map_err(|e| e.to_string()),
            other => panic!("{other:?}"),
        };
        let o = parse(&[
            "--variants",
            "base,async-align-v1",
            "--budget",
            "1m",
            "--seed",
            "7",
            "--confirm",
            "0",
            "--threshold",
            "trim_ratio=0.4",
        ])
        .unwrap();
        assert_eq!(o.variants, vec!["base", "async-align-v1"]);
        assert_eq!((o.budget, o.seed, o.confirm), (Duration::from_secs(60), 7, Some(0)));
        assert_eq!(o.thresholds.get("trim_ratio"), 0.4);
        assert!(parse(&["--threshold", "nope=1"]).is_err());
    }

    #[test]
    fn options_that_go_together() {
        assert_eq!(err(&["report"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["report", "--all"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["report", "--all", "s.yaml", "--variants", "a,b"]).kind(), ErrorKind::ArgumentConflict);
        assert_eq!(err(&["report", "s.yaml", "--pages", "0..8"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(
            err(&["report", "--all", "--variants", "a,b", "--svg", "x.svg"]).kind(),
            ErrorKind::ArgumentConflict
        );
        assert!(parse(&["report", "--all", "--variants", "a,b"]).is_ok());
        assert_eq!(err(&["check", "--tree", "t"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(
            err(&["check", "--tree", "t", "--scenario", "s", "--against", "kernel"]).kind(),
            ErrorKind::InvalidValue
        );
        let Command::Check(c) =
            parse(&["check", "--tree", "t", "--scenario", "s", "--record", "steps.json"]).unwrap().command
        else {
            panic!()
        };
        assert_eq!(c.record.as_deref(), Some(std::path::Path::new("steps.json")));
        let Command::Check(c) = parse(&["check", "--tree", "t", "--scenario", "s"]).unwrap().command else { panic!() };
        assert_eq!(c.record, None, "a check run by hand records nothing");
        assert_eq!(err(&["check", "--tree", "t", "--scenario", "s", "--record"]).kind(), ErrorKind::InvalidValue);
        assert_eq!(err(&["bisect", "--scenario", "s"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(
            err(&["bisect", "--scenario", "s", "--tree", "t", "--good", "a"]).kind(),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            err(&["bisect", "--scenario", "s", "--variant", "v", "--tree", "t", "--good", "a", "--bad", "b"]).kind(),
            ErrorKind::ArgumentConflict
        );
        assert!(parse(&["bisect", "--scenario", "s", "--variant", "v"]).is_ok());
        assert_eq!(err(&["run"]).kind(), ErrorKind::MissingRequiredArgument);
        assert_eq!(err(&["run", "a.yaml", "b.yaml"]).kind(), ErrorKind::UnknownArgument);
    }

    #[test]
    fn a_review_name_must_make_one_folder() {
        let name = |n: &str| match parse(&["review", "mail.txt", "--name", n]).map(|c| c.command) {
            Ok(Command::Review(r)) => Ok(r.name.unwrap()),
            Ok(_) => unreachable!(),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(name("keep-half_v2.1"), Ok("keep-half_v2.1".to_string()));
        for bad in ["a/b", "base", "../x", "two words"] {
            let e = name(bad).unwrap_err();
            assert!(e.contains("cannot name a variant folder"), "{bad}: {e}");
        }
    }
}
