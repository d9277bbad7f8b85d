//! The `radiff` command line.

use std::process::ExitCode;

use radiff::cache::Cache;
use radiff::cli::{lab, options, progress};
use radiff::scenario::Scenario;
use radiff::summary::{self, Figures};
use radiff::kernels::{Builder, Kernels};
use radiff::{repo_root, Error, Result};

const USAGE: &str = "\
usage: radiff <command> [args]

  kernels build [VARIANT...]   build the base and each variant (all by default), cached
  kernels list                 each variant, its patches, whether built, where
  run SCENARIO.yaml [--variant V]...
                               run a scenario in a VM on each variant (all by default)
                               and print what the kernel did
  report SCENARIO.yaml [--variants A,B,...] [--runs N] [--svg FILE]
                               a Markdown table for a changelog: per variant, device reads,
                               bytes, folios by order, windows, guest time (median of N)
  report --all --variants A,B  every scenario on two variants; lists only what changed
  check --tree DIR --scenario FILE [--point P] [--against snapshot|model]
                               build DIR as checked out, run the scenario, compare: exit 0
                               same, 1 differs, 125 does not build (for git bisect run)
  bisect --tree DIR --good A --bad B --scenario FILE
                               git bisect with `radiff check`; prints the first bad commit
  bisect --variant V --scenario FILE [--point P]
                               the first patch of V's series that changes the trace
  explore [--variants base[,V...]] [--budget 10m] [--seed N] [--out DIR] [--confirm K]
                               the model searches generated scenarios for anomalies, shrinks
                               them, and confirms the top K on the kernels
  bench [--cold yes] [--scenario NAME]
                               time the whole matrix: builds, images, runs, the model
                               (--cold: in a fresh cache, building everything)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("radiff: error: {err}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(args: &[String]) -> Result<ExitCode> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["kernels", "build", names @ ..] => kernels_build(names),
        ["kernels", "list"] => {
            let kernels = Kernels::load(&repo_root())?;
            let cache = Cache::from_env();
            print!("{}", Builder::new(&kernels, &cache, &progress).list()?);
            Ok(ExitCode::SUCCESS)
        }
        ["run", rest @ ..] => run(rest),
        ["report", rest @ ..] => radiff::report::main(rest),
        ["check", rest @ ..] => radiff::bisect::check_main(rest),
        ["bench", rest @ ..] => radiff::bench::main(rest),
        ["bisect", rest @ ..] => radiff::bisect::bisect_main(rest),
        ["explore", rest @ ..] => radiff::explore::main(rest),
        ["help" | "--help" | "-h"] | [] => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(Error::Other(format!("unknown command `{}`\n{USAGE}", words.join(" ")))),
    }
}

fn kernels_build(names: &[&str]) -> Result<ExitCode> {
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
    println!("{:<24} {:>10}  {}", "variant", "time", "bzImage");
    for b in &rows {
        let how = if b.compiled { format!("{:.1} s", b.elapsed.as_secs_f64()) } else { "cached".to_string() };
        println!("{:<24} {:>10}  {}", b.variant, how, b.bzimage.display());
    }
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

fn run(args: &[&str]) -> Result<ExitCode> {
    let (words, opts) = options(args, &["variant"])?;
    let [path] = words.as_slice() else {
        return Err(Error::Other("usage: radiff run SCENARIO.yaml [--variant V]...".into()));
    };
    let scenario = Scenario::load(std::path::Path::new(path))?;
    let lab = lab()?;
    let known = lab.kernels.names();
    let mut variants = scenario.variants(&known)?;
    let chosen: Vec<&str> = opts.iter().map(|(_, v)| *v).collect();
    if !chosen.is_empty() {
        for name in &chosen {
            lab.kernels.variant(name)?;
        }
        variants.retain(|v| chosen.contains(&v.as_str()));
    }
    println!("{}: {}", scenario.name, scenario.description);
    for point in &scenario.points {
        for variant in &variants {
            let who = format!("{} on {variant}", scenario.name);
            let out = lab.run(&scenario, point, variant, &who)?;
            let figures = Figures::of(&out.capture.trace);
            let label = point.label.as_deref().map(|l| format!(" [{l}]")).unwrap_or_default();
            println!("\n{variant}{label}: kernel {}, {:?}, run {:.1} s wall, pattern {:.3} s in the guest", out.env.release, out.accel, out.wall.as_secs_f64(), out.env.pattern_ns as f64 / 1e9);
            print!("{}", summary::short(&figures));
            for (why, n) in &out.capture.filtered {
                println!("  filtered out:  {n} {why}");
            }
            println!("  trace:         {}", out.dir.join("trace.json").display());
            println!("  console log:   {}", out.dir.join("console.log").display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
