//! The `radiff` binary's command line, run as a user runs it: help, usage errors and their
//! exit codes (clap's: 0 for help, 2 for a usage error), no VM involved.

use std::process::{Command, Output};

fn radiff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_radiff")).args(args).output().expect("radiff runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn report_help_prints_help() {
    let o = radiff(&["report", "--help"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("Usage: radiff report") && out.contains("--runs <N>") && out.contains("--all"), "{out}");
}

#[test]
fn every_subcommand_has_help() {
    for cmd in ["kernels", "run", "report", "check", "bisect", "explore", "bench"] {
        let o = radiff(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {:?}", text(&o));
        assert!(text(&o).0.contains(&format!("Usage: radiff {cmd}")), "{cmd}: {:?}", text(&o));
    }
    let o = radiff(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).0.contains("explore"));
}

#[test]
fn a_switch_with_a_value_is_a_usage_error() {
    let o = radiff(&["bench", "--cold", "false"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("unexpected argument 'false'"), "{err}");
}

#[test]
fn a_repeated_option_is_a_usage_error() {
    let o = radiff(&["explore", "--seed", "1", "--seed", "2"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be used multiple times"), "{err}");
}

#[test]
fn misspellings_get_a_suggestion() {
    let o = radiff(&["explor"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("tip: some similar subcommands exist") && err.contains("'explore'"), "{err}");
    let o = radiff(&["explore", "--budjet", "1m"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("similar argument exists: '--budget'"), "{err}");
}

#[test]
fn a_bad_duration_is_a_usage_error() {
    let o = radiff(&["explore", "--budget", "3 weeks"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--budget") && err.contains("unknown unit"), "{err}");
}

/// Every `radiff ...` command line in the README's shell blocks parses.
#[test]
fn the_readme_examples_parse() {
    use clap::Parser;
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).expect("README.md");
    let mut in_block = false;
    let mut seen = 0;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_block = !in_block && matches!(line.trim_start_matches('`'), "sh" | "text" | "console");
            continue;
        }
        let line = line.trim().trim_start_matches("$ ");
        if !in_block || !line.starts_with("radiff ") {
            continue;
        }
        let words = line.split(" #").next().unwrap_or_default().split_whitespace().filter(|w| *w != "[VARIANT...]");
        if let Err(e) = radiff::cli::Cli::try_parse_from(words) {
            panic!("README: `{line}`:\n{e}");
        }
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} radiff command lines found in README.md");
}

/// With stderr not a terminal (a pipe, as in CI), progress is plain `radiff: ...` lines
/// with no terminal escape codes, and the command's output goes to stdout alone.
#[test]
fn progress_to_a_pipe_is_plain_lines() {
    let out = tempfile::tempdir().expect("a temporary folder");
    let o = radiff(&[
        "explore",
        "--confirm",
        "0",
        "--budget",
        "3s",
        "--scenarios",
        "100",
        "--out",
        out.path().to_str().expect("a UTF-8 path"),
    ]);
    let (stdout, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{err}");
    assert!(!err.contains('\x1b') && !err.contains('\r'), "escape codes or redrawn lines on a pipe: {err:?}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines.iter().any(|l| l.starts_with("radiff: explore: seed 0: ") && l.contains(" scenarios in ")),
        "the search's lasting line: {err}"
    );
    assert!(lines.iter().all(|l| l.starts_with("radiff: ")), "every progress line is plain: {err}");
    assert!(!stdout.contains("radiff: "), "progress stays off stdout: {stdout}");
}
