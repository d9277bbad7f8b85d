//! `radiff report`: checks the arguments, runs, prints the Markdown and the summary, writes
//! the picture. The only part of the report that prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use radiff_model::trace::PAGE_SIZE;

use super::markdown::{environment, markdown, Heading};
use super::picture::{page_range, picture};
use super::runs::{all, run_points};
use super::sentences::summary;
use super::stats::rows;
use crate::error::{Error, Result};
use crate::scenario::Scenario;

/// What `radiff report` is asked (see `radiff report --help`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The scenario file (none with `all`).
    pub scenario: Option<PathBuf>,
    /// Every scenario on two variants, listing only what changed.
    pub all: bool,
    /// The variants, the first the baseline (none: the scenario's).
    pub variants: Vec<String>,
    /// Runs per variant, at least 1; the table shows medians.
    pub runs: usize,
    /// Where to draw the windows of each variant's first run as SVG.
    pub svg: Option<PathBuf>,
    /// The pages the SVG shows, `A..B` (none: the first 4096).
    pub pages: Option<String>,
}

/// `radiff report ...` (see `radiff report --help`).
pub fn report_command(args: &Options) -> Result<ExitCode> {
    // clap checks the rest (a scenario or --all, --pages with --svg, ...); --all compares
    // exactly two.
    if args.all && args.variants.len() != 2 {
        return Err(Error::Other("--all compares two variants: give --variants A,B".into()));
    }
    let runs = args.runs;
    let lab = crate::run::Lab::open()?;
    for name in &args.variants {
        lab.kernels.variant(name)?;
    }
    let progress: &(dyn Fn(&str) + Sync) = &crate::progress::progress;
    if args.all {
        let names = &args.variants;
        let (text, failed) = all(&lab, &names[0], &names[1], runs, progress)?;
        crate::progress::output(&text);
        return Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS });
    }
    let path = args.scenario.as_deref().unwrap_or(Path::new(""));
    let scenario = Scenario::load(path)?;
    let variants = match args.variants.is_empty() {
        false => args.variants.clone(),
        true => scenario.variants(&lab.kernels.names())?,
    };
    // Check the range before hours of runs, not after.
    let pages = page_range(args.pages.as_deref(), scenario.file_size.div_ceil(PAGE_SIZE))?;
    let mut cells = Vec::new();
    let mut traces = Vec::new();
    let mut envs = Vec::new();
    let points: Vec<_> = scenario.points.iter().map(|point| (&scenario, point)).collect();
    for (point, r) in scenario.points.iter().zip(run_points(&lab, &points, &variants, runs, false, progress)?) {
        let r = r?;
        cells.extend(r.cells);
        envs.extend(r.envs);
        traces.push((point.label.clone(), r.traces));
    }
    let rows = rows(&cells);
    let heading = Heading {
        title: format!("{}: {}", scenario.name, scenario.description),
        environment: environment(&envs, lab.vcpus()),
        variants: variants.clone(),
    };
    crate::progress::output(&format!(
        "{}\n{}\n",
        markdown(&heading, &rows),
        summary(&scenario.description, &variants, &rows)
    ));
    if let Some(file) = &args.svg {
        let (range, what) = pages;
        let first_run = if runs > 1 { format!("; traces of the first of {runs} runs") } else { String::new() };
        let svg = picture(&heading.title, &format!("{what}{first_run}; {}", heading.environment), range, &traces);
        crate::files::write(file, svg.as_bytes())?;
        progress(&format!("wrote {} ({} KiB)", file.display(), svg.len().div_ceil(1024)));
    }
    Ok(ExitCode::SUCCESS)
}
