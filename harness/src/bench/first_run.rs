//! `radiff bench --first-run DIR`: where the minutes of a first run went. `scripts/first-run`
//! runs the README's two commands (`./setup`, `cargo test`) in a fresh clone with an empty
//! cache and leaves in DIR what this reads:
//! - `run.log`: every line both printed, as `EPOCH_SECONDS TEXT`, with the script's own
//!   `== setup`, `== setup exit N`, `== cargo test`, `== cargo test exit N`;
//! - `boots.log`: `$RADIFF_BOOT_LOG`, a line a VM boot ([`crate::boot_log`]);
//! - `cache/kernels/*/build.log` (and `*.partial/` for a build that failed): each kernel
//!   build's first and last lines (when, how long), make's V=2 reason on every step, and
//!   ccache's stats log beside it (which objects the compiler really compiled).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::kernels::{is_compile, step_and_reason, BUILDING, BUILT, CCACHE_LOG};

/// A stretch of the run: what, from when, to when (epoch seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub what: String,
    pub start: f64,
    pub end: f64,
}

impl Span {
    fn secs(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }
}

/// A test binary `cargo test` ran: its span and its `test result:` line's counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Binary {
    pub span: Span,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

/// What run.log says: the two commands, setup's steps, cargo's compile, the test binaries
/// and the images the trials prepared.
#[derive(Debug, Default, PartialEq)]
pub struct RunLog {
    pub setup: Option<Span>,
    pub setup_exit: Option<i32>,
    pub setup_steps: Vec<Span>,
    pub test: Option<Span>,
    pub test_exit: Option<i32>,
    pub compile: Option<Span>,
    pub binaries: Vec<Binary>,
    /// Each image prepared: its scenario and seconds.
    pub images: Vec<(String, f64)>,
}

/// A stamped line: `EPOCH TEXT`.
fn stamped(line: &str) -> Option<(f64, &str)> {
    let (at, text) = line.split_once(' ').unwrap_or((line, ""));
    Some((at.parse().ok()?, text))
}

/// Reads run.log's text (see the module's doc).
pub fn parse_run_log(text: &str) -> RunLog {
    let mut log = RunLog::default();
    let mut last = 0.0;
    for (at, line) in text.lines().filter_map(stamped) {
        last = at;
        let trimmed = line.trim();
        if line == "== setup" {
            log.setup = Some(Span { what: "./setup".into(), start: at, end: at });
        } else if let Some(code) = line.strip_prefix("== setup exit ") {
            close(&mut log.setup, at);
            close_last(&mut log.setup_steps, at);
            log.setup_exit = code.trim().parse().ok();
        } else if line == "== cargo test" {
            log.test = Some(Span { what: "cargo test".into(), start: at, end: at });
            log.compile = Some(Span { what: "compile".into(), start: at, end: at });
        } else if let Some(code) = line.strip_prefix("== cargo test exit ") {
            close(&mut log.test, at);
            close(&mut log.compile, at);
            if let Some(b) = log.binaries.last_mut() {
                b.span.end = at;
            }
            log.test_exit = code.trim().parse().ok();
        } else if let Some(step) = line.strip_prefix("setup: ") {
            close_last(&mut log.setup_steps, at);
            log.setup_steps.push(Span { what: step.to_string(), start: at, end: at });
        } else if let Some(what) = trimmed.strip_prefix("Running ").or_else(|| trimmed.strip_prefix("Doc-tests ")) {
            if log.binaries.is_empty() {
                close(&mut log.compile, at);
            }
            if let Some(b) = log.binaries.last_mut() {
                b.span.end = at;
            }
            let what = what.split(" (").next().unwrap_or(what).to_string();
            log.binaries.push(Binary { span: Span { what, start: at, end: at }, passed: 0, failed: 0, ignored: 0 });
        } else if let Some(result) = trimmed.strip_prefix("test result: ") {
            if let Some(b) = log.binaries.last_mut() {
                b.passed = count_before(result, "passed");
                b.failed = count_before(result, "failed");
                b.ignored = count_before(result, "ignored");
            }
        } else if let Some((scenario, secs)) = prepared(line) {
            log.images.push((scenario, secs));
        }
    }
    // A run cut short (the script killed): what was open ends at the last line.
    for span in [&mut log.setup, &mut log.test, &mut log.compile] {
        if let Some(s) = span.as_mut().filter(|s| s.end == s.start) {
            s.end = last;
        }
    }
    log
}

/// Ends an open span at `at`.
fn close(span: &mut Option<Span>, at: f64) {
    if let Some(s) = span.as_mut().filter(|s| s.end == s.start) {
        s.end = at;
    }
}

/// Ends the last of `spans` at `at`.
fn close_last(spans: &mut [Span], at: f64) {
    if let Some(s) = spans.last_mut() {
        s.end = at;
    }
}

/// The number before `word` in a `test result:` line ("3 passed; 0 failed; 2 ignored").
fn count_before(result: &str, word: &str) -> u64 {
    let words: Vec<&str> = result.split([' ', ';', '.']).filter(|w| !w.is_empty()).collect();
    words.windows(2).find(|w| w[1] == word).and_then(|w| w[0].parse().ok()).unwrap_or(0)
}

/// `radiff: prepared IMAGE for SCENARIO ... in N s: ...` (run/image.rs): the image's
/// folder name and its seconds.
fn prepared(line: &str) -> Option<(String, f64)> {
    let rest = line.split("radiff: prepared ").nth(1)?;
    let (image, rest) = rest.split_once(" in ")?;
    let secs = rest.split_once(" s:")?.0.parse().ok()?;
    let folder = Path::new(image).parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
    Some((folder.unwrap_or_else(|| image.to_string()), secs))
}

/// A kernel build, from its folder in the cache.
#[derive(Clone, Debug, PartialEq)]
pub struct Build {
    pub span: Span,
    /// Whether it ended with a bzImage (its last line is [`BUILT`]).
    pub done: bool,
    /// kbuild's `CC` steps.
    pub objects: u64,
    /// Why those steps ran, most first: "new" (no object yet), a changed file relative to
    /// the tree, "flags" (a changed command line).
    pub reasons: Vec<(String, u64)>,
    /// ccache: compiles it answered from the cache, and compiles it ran.
    pub hits: u64,
    pub misses: u64,
}

/// Reads a build log's text (and its ccache stats log's, if any) into a [`Build`];
/// `end_if_unfinished` is when a log without its last line stopped (its file's mtime).
pub fn parse_build(log: &str, ccache: &str, end_if_unfinished: f64) -> Option<Build> {
    let first = log.lines().next()?.strip_prefix(BUILDING)?.trim();
    let (name_tree, from) = first.rsplit_once(" from ")?;
    let (name, tree) = name_tree.split_once(" in ").unwrap_or((name_tree, ""));
    let start = from.trim().parse::<f64>().ok()? / 1000.0;
    let built = log.lines().rev().find_map(|l| l.strip_prefix(BUILT)).and_then(|l| {
        let secs = l.trim().rsplit_once(" in ")?.1.strip_suffix(" s")?;
        secs.parse::<f64>().ok()
    });
    let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
    let mut objects = 0;
    for line in log.lines().filter(|l| is_compile(l)) {
        objects += 1;
        let (_, Some(why)) = step_and_reason(line) else { continue };
        for reason in reasons_of(why.trim(), tree) {
            *reasons.entry(reason).or_default() += 1;
        }
    }
    let mut reasons: Vec<(String, u64)> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let (hits, misses) = ccache_counts(ccache);
    Some(Build {
        span: Span { what: name.to_string(), start, end: built.map_or(end_if_unfinished, |s| start + s) },
        done: built.is_some(),
        objects,
        reasons,
        hits,
        misses,
    })
}

/// A V=2 reason (after "- due to") as the files or causes it names, relative to `tree`.
fn reasons_of(why: &str, tree: &str) -> Vec<String> {
    if why == "target missing" {
        return vec!["new".into()];
    }
    if why == "command line change" {
        return vec!["flags".into()];
    }
    match why.strip_prefix(':') {
        Some(files) => files
            .split_whitespace()
            .map(|f| match (tree.is_empty(), f.strip_prefix(tree)) {
                (false, Some(rest)) => rest.trim_start_matches('/').to_string(),
                _ => f.to_string(),
            })
            .collect(),
        None => vec![why.to_string()],
    }
}

/// ccache's stats log: (compiles answered from the cache, compiles run).
fn ccache_counts(text: &str) -> (u64, u64) {
    let (mut hits, mut misses) = (0, 0);
    for line in text.lines().map(str::trim) {
        match line {
            "direct_cache_hit" | "preprocessed_cache_hit" => hits += 1,
            "cache_miss" => misses += 1,
            _ => {}
        }
    }
    (hits, misses)
}

/// Every build in `cache/kernels/` (done or `.partial`), by start.
fn builds(cache: &Path) -> Vec<Build> {
    let dirs = crate::files::entries(&cache.join("kernels")).unwrap_or_default();
    let mut builds: Vec<Build> = dirs
        .iter()
        .filter_map(|dir| {
            let log = crate::files::read_text(&dir.join("build.log")).ok()?;
            let ccache = crate::files::read_text(&dir.join(CCACHE_LOG)).unwrap_or_default();
            parse_build(&log, &ccache, crate::files::modified_secs(&dir.join("build.log"))?)
        })
        .collect();
    builds.sort_by(|a, b| a.span.start.total_cmp(&b.span.start));
    builds
}

/// The seconds build `me` of `builds` shared with each of the others, and their names.
fn overlaps(me: usize, builds: &[Build]) -> Vec<(String, f64)> {
    let span = &builds[me].span;
    builds
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != me)
        .map(|(_, o)| o)
        .map(|o| (o.span.what.clone(), (span.end.min(o.span.end) - span.start.max(o.span.start)).max(0.0)))
        .filter(|(_, s)| *s >= 1.0)
        .collect()
}

/// Seconds as `M:SS` past the run's start.
fn clock(at: f64, zero: f64) -> String {
    let s = (at - zero).max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

/// `radiff bench --first-run DIR`: the breakdown of the run scripts/first-run left in DIR.
pub fn first_run_command(dir: &Path) -> Result<String> {
    let run_log = dir.join("run.log");
    let text = crate::files::read_text(&run_log).map_err(|e| {
        Error::Other(format!(
            "{e}\n  fix: give the folder scripts/first-run wrote (it holds run.log, boots.log and cache/)"
        ))
    })?;
    let boots = crate::files::read_text_if_any(&dir.join("boots.log"))?.unwrap_or_default();
    Ok(render(&parse_run_log(&text), &builds(&dir.join("cache")), &boots))
}

/// The breakdown as printed.
pub fn render(log: &RunLog, builds: &[Build], boots: &str) -> String {
    let mut out = String::new();
    let zero = log.setup.as_ref().or(log.test.as_ref()).map_or(0.0, |s| s.start);
    let total = log.setup.iter().chain(&log.test).map(Span::secs).fold(0.0, |a, b| a + b);
    let exit = |code: Option<i32>| code.map_or("did not end".to_string(), |c| format!("exit {c}"));
    let _ = writeln!(out, "first run: {:.1} min in all (M:SS below is time since it began)", total / 60.0);
    if let Some(setup) = &log.setup {
        let _ = writeln!(out, "{:<58} {:>6.0} s  ({})", "./setup", setup.secs(), exit(log.setup_exit));
        for step in log.setup_steps.iter().filter(|s| s.secs() >= 1.0) {
            let _ = writeln!(out, "  {:<56} {:>6.0} s", shorten(&step.what, 56), step.secs());
        }
    }
    if let Some(test) = &log.test {
        let _ = writeln!(out, "{:<58} {:>6.0} s  ({})", "cargo test", test.secs(), exit(log.test_exit));
        if let Some(c) = &log.compile {
            let _ = writeln!(out, "  {:<56} {:>6.0} s", "compiling (cargo, before the first test binary)", c.secs());
        }
        for b in &log.binaries {
            let counts = format!("{} passed, {} failed, {} ignored", b.passed, b.failed, b.ignored);
            let _ = writeln!(
                out,
                "  {:<56} {:>6.0} s  {}-{}  {counts}",
                shorten(&b.span.what, 56),
                b.span.secs(),
                clock(b.span.start, zero),
                clock(b.span.end, zero)
            );
        }
    }
    render_builds(&mut out, builds, zero);
    let image_secs = log.images.iter().map(|(_, s)| s).fold(0.0, |a, b| a + b);
    let _ = writeln!(out, "images: {} prepared, {image_secs:.0} s in all", log.images.len());
    for (scenario, secs) in log.images.iter().filter(|(_, s)| *s >= 30.0) {
        let _ = writeln!(out, "  {scenario:<56} {secs:>6.0} s");
    }
    let wall = super::summed_ms(boots, super::WALL).as_secs_f64();
    let pattern = super::summed_ms(boots, super::PATTERN).as_secs_f64();
    let _ = writeln!(
        out,
        "boots: {}, {wall:.0} s of VM wall in all; the guests' access patterns {pattern:.0} s of it",
        super::boots_per_kernel(boots)
    );
    out
}

/// The kernel builds' lines of [`render`].
fn render_builds(out: &mut String, builds: &[Build], zero: f64) {
    // From +0.0: an empty f64 sum is -0.0, printed "-0".
    let secs = builds.iter().map(|b| b.span.secs()).fold(0.0, |a, b| a + b);
    let _ = writeln!(out, "kernel builds: {}, {secs:.0} s in all", builds.len());
    for (k, b) in builds.iter().enumerate() {
        let reasons: Vec<String> = b.reasons.iter().take(3).map(|(r, n)| format!("{n} {r}")).collect();
        let beside: Vec<String> = overlaps(k, builds).iter().map(|(o, s)| format!("{o} {s:.0} s")).collect();
        let _ = writeln!(
            out,
            "  {:<22} {:>6.0} s  {}-{}  {} objects{} (ccache: {} compiled, {} from the cache){}{}",
            b.span.what,
            b.span.secs(),
            clock(b.span.start, zero),
            clock(b.span.end, zero),
            b.objects,
            match reasons.is_empty() {
                true => String::new(),
                false => format!(": {}", reasons.join(", ")),
            },
            b.misses,
            b.hits,
            match b.done {
                true => "",
                false => "; did not finish",
            },
            match beside.is_empty() {
                true => String::new(),
                false => format!("; beside {}", beside.join(", ")),
            }
        );
    }
}

/// `text` cut to `n` characters, with an ellipsis when cut.
fn shorten(text: &str, n: usize) -> String {
    match text.chars().count() > n {
        true => format!("{}...", text.chars().take(n - 3).collect::<String>()),
        false => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
