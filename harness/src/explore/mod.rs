//! `radiff explore`: the model searches for readahead anomalies and patch regressions by
//! itself, then the real kernel proves them.
//!
//! 1. [`generate`] draws scenarios from a seeded grammar over the scenario schema; each is
//!    rendered to YAML and parsed like any scenario file.
//! 2. [`predict_scenario`] predicts each with the model on every variant named, from a
//!    synthesised measurement (one contiguous extent, the queue the device kind gives).
//! 3. [`detect`] runs the detectors on the predicted traces.
//! 4. Findings are grouped by signature (detector, the pattern that fired it, the shape of
//!    the steps); the strongest of each group is [`shrink`]ed to a minimal scenario that
//!    still fires the same detector.
//! 5. [`confirm`] runs as many as the budget leaves time for on the real kernels, in
//!    groups that boot each kernel once (see [`explore`] for the order): confirmed when
//!    the kernel fires the same detector and the model equals the kernel; a difference
//!    the kernel repeats in a second run is a model bug, one it does not (two runs of one
//!    kernel differ) a kernel race.
//!
//! `--budget` bounds the whole run ([`Options::plan`]); Ctrl-C ([`catch_interrupt`]) stops
//! it at the next scenario or group of confirmations and writes what it has.

pub mod cause;
pub mod confirm;
pub mod cover;
pub mod detect;
pub mod directed;
pub mod generate;
pub mod shrink;
pub mod testing;

mod describe;
mod interrupt;
mod markdown;
mod options;
mod policy;
mod schedule;
mod search;
mod throughput;
mod triage;
mod unknown;

#[cfg(test)]
mod detect_tests;
#[cfg(test)]
mod family_tests;
#[cfg(test)]
mod tests;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use radiff_model::{Extent, Input, QueueLimits};

use crate::error::Result;
use crate::model_check::Predictor;
use crate::scenario::Scenario;
use crate::wire::DeviceKind;

pub use describe::{comment, figures_line, model_figures};
pub use interrupt::{catch_interrupt, interrupted};
pub use markdown::markdown;
pub use options::{all_cores, Options, SEARCH_SHARE, SHRINK_SHARE};
pub use policy::{policies, policies_in, without_policy, without_policy_in};
pub use schedule::{pick_group, Costs, Queued, GUESS_IMAGE, GUESS_RUN};
use search::by_detector;
pub use search::{context, detect_all, fires, predict_scenario, scenario_of, search, signature, Finding, SearchResult};
pub use throughput::{model_throughput, throughput_of};
pub use triage::{changes_requests, is_worse, shrink_findings};

/// The queue limits the guest would measure for `scenario`'s first point, synthesised
/// from the device kind: QEMU NVMe with the scenario's transfer limit (max_segments
/// max_hw_sectors_kb / 4 + 1, as nvme_max_drv_segments() gives), or QEMU UFS.
pub fn queue_limits(scenario: &Scenario) -> QueueLimits {
    let q = &scenario.points[0].queue;
    let ra = q.read_ahead_kb.unwrap_or(128);
    let hw = scenario.device.transfer_limit / 1024;
    let mut limits = match scenario.device.kind {
        DeviceKind::Nvme => {
            let mut l = QueueLimits::nvme_qemu(ra, q.max_sectors_kb.unwrap_or(hw.min(1280)));
            l.max_hw_sectors_kb = hw;
            l.max_segments = hw / 4 + 1;
            if let Some(lbs) = scenario.device.logical_block_size {
                l.logical_block_size = lbs;
                l.physical_block_size = lbs;
                l.minimum_io_size = lbs;
            }
            if let Some(o) = scenario.device.optimal_io_size {
                l.optimal_io_size = o;
            }
            l
        }
        DeviceKind::Ufs => {
            let mut l = QueueLimits::ufs_qemu(ra);
            l.max_sectors_kb = q.max_sectors_kb.unwrap_or(hw);
            l
        }
    };
    if let Some(r) = q.rotational {
        limits.rotational = r;
    }
    limits.scheduler = q.scheduler.name().to_string();
    limits
}

/// Where the synthesised extent puts the file on the device (any place will do: the model
/// does not depend on it beyond sector numbers).
pub const SYNTHETIC_PHYSICAL: u64 = 64 << 20;

/// What a guest would measure of `scenario`, made up without a VM: each file in one
/// contiguous extent, the next file 64 MiB after the end of the one before; the queue and
/// vm settings the scenario gives the kernel.
pub fn synthetic_env(scenario: &Scenario) -> crate::wire::GuestEnv {
    let sizes = scenario.file_sizes();
    let mut at = SYNTHETIC_PHYSICAL;
    let mut extents: Vec<Vec<Extent>> = Vec::new();
    for &size in &sizes {
        let length = size.div_ceil(4096) * 4096;
        extents.push(vec![Extent { logical: 0, physical: at, length, flags: 0 }]);
        at += length + (64 << 20);
    }
    crate::wire::GuestEnv {
        file_size: scenario.file_size,
        extents: extents[0].clone(),
        queue: queue_limits(scenario),
        vm: synthetic_vm(scenario),
        other_files: sizes[1..]
            .iter()
            .zip(&extents[1..])
            .map(|(&file_size, e)| crate::wire::FileEnv { ino: 0, file_size, extents: e.clone() })
            .collect(),
        ..Default::default()
    }
}

/// The model's input for `scenario` on the [`synthetic_env`] (no folio addresses: the
/// model's assumption): [`crate::run::model_input`], as for a run.
pub fn synthetic_input(scenario: &Scenario) -> Input {
    crate::run::model_input(scenario, &synthetic_env(scenario), &[])
}

/// The vm settings a scenario's `vm:` gives the kernel, as it keeps them: mm/memory.c
/// fault_around_bytes_set() stores "rounddown_pow_of_two(max(val, PAGE_SIZE))"; the mappings'
/// addresses are left to the model's assumption.
fn synthetic_vm(scenario: &Scenario) -> radiff_model::VmSettings {
    let default = radiff_model::VmSettings::default();
    radiff_model::VmSettings {
        fault_around_bytes: scenario.vm.fault_around_bytes.map_or(default.fault_around_bytes, |b| {
            let b = b.max(4096);
            1 << (63 - b.leading_zeros())
        }),
        thp_enabled: scenario.vm.thp_enabled.unwrap_or(default.thp_enabled),
        ..default
    }
}

/// `radiff explore`.
pub fn explore_command(o: &Options) -> Result<ExitCode> {
    catch_interrupt()?;
    if let Some(v) = without_policy(&o.variants)? {
        let lab = crate::run::Lab::open()?;
        let report = cover::explore_unknown_command(&lab, &v, o)?;
        crate::progress::output(&report.markdown);
        let bugs = report.ran.iter().any(|p| p.model_bug.is_some());
        return Ok(if report.interrupted {
            ExitCode::from(130)
        } else if bugs {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    let report = explore(o, None, &mut |line| crate::progress::progress(line))?;
    crate::progress::output(&report.markdown);
    Ok(if report.interrupted {
        ExitCode::from(130)
    } else if report.model_bugs > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What an explore run produced.
#[derive(Debug, Default)]
pub struct Report {
    pub search: SearchResult,
    /// Wall time of shrinking.
    pub shrink_time: Duration,
    pub findings: Vec<Finding>,
    /// In the order they ran.
    pub confirmations: Vec<confirm::Confirmation>,
    /// Wall time of the confirmations.
    pub confirm_time: Duration,
    pub model_bugs: usize,
    /// The findings' root causes ([`cause::causes`]), most findings first.
    pub causes: Vec<cause::Cause>,
    /// Each cause's decisions in the base's kernel lines (plain when the source is not there).
    pub cause_lines: Vec<Vec<String>>,
    /// Whether Ctrl-C stopped the run.
    pub interrupted: bool,
    /// How each variant the hybrid models was modelled ([`hybrid_lines`]).
    pub hybrids: Vec<String>,
    pub markdown: String,
}

/// A line for each of `pol`'s kernels that the hybrid models: the variant, and its label
/// (which tree's C ran, which functions it changes).
pub fn hybrid_lines(pol: &[(String, Predictor)]) -> Vec<String> {
    pol.iter().filter_map(|(v, p)| Some(format!("{v}: {}", p.hybrid_said()?))).collect()
}

/// The whole explore: search, shrink, write candidates, then confirm on the kernels (with
/// `lab`, or `crate::run::Lab::open()` when needed and not given) as many findings as the
/// budget leaves time for (at most `o.confirm`), and write and summarise.
///
/// Confirmations go in groups of up to [`crate::run::BATCH_POINTS`] findings
/// ([`pick_group`]): each kernel boots once for a group's runs, then once more for the
/// second runs that tell a model bug from a kernel race ([`confirm::confirm_group`]).
/// They go in the findings' order, except that a finding whose disk image is already
/// prepared goes before one whose image would have to be made, and that a finding whose
/// estimated cost (its runs at the mean run time so far, and the image's preparation)
/// does not fit in what is left of the budget is left for the next run. Each
/// confirmation is written, and summary.md rewritten, after each group; Ctrl-C stops the
/// confirmations between groups.
pub fn explore(o: &Options, lab: Option<&crate::run::Lab>, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    let started = Instant::now();
    let pol = policies(&o.variants)?;
    let hybrids = hybrid_lines(&pol);
    for h in &hybrids {
        progress(&format!("explore: {h}"));
    }
    let mut report = Report { search: search(o, &pol), hybrids, ..Default::default() };
    progress(&search_line(&report.search, o));
    let shrinking = Instant::now();
    report.findings = shrink_findings(&report.search, o, &pol, progress);
    report.shrink_time = shrinking.elapsed();
    report.causes = cause::causes(&report.findings, &pol, &o.thresholds);
    report.cause_lines = place_causes(&report.causes, progress);
    write_candidates(&report.findings, o)?;
    let want = o.confirm.unwrap_or(usize::MAX);
    if want > 0 && !report.findings.is_empty() && !interrupted() {
        let owned;
        let lab = match lab {
            Some(l) => l,
            None => {
                owned = crate::run::Lab::open()?;
                &owned
            }
        };
        confirm_findings(&mut report, lab, o, started, want, progress)?;
    }
    report.interrupted = interrupted();
    if report.interrupted {
        progress("explore: interrupted (Ctrl-C): writing what was confirmed so far");
    }
    report.markdown = markdown(&report, o);
    crate::cache::write_atomic(&o.out.join("summary.md"), report.markdown.as_bytes())?;
    Ok(report)
}

/// Each cause's decisions in the base's lines; plain decisions when the base's source
/// cannot be read (said once).
fn place_causes(causes: &[cause::Cause], progress: &mut dyn FnMut(&str)) -> Vec<Vec<String>> {
    let root = crate::repo_root();
    let cache = crate::cache::Cache::from_env();
    let tree = crate::kernels::Kernels::load(&root)
        .and_then(|k| crate::port::base_files(&crate::kernels::Builder::new(&k, &cache)));
    let tree = match tree {
        Ok(t) => t,
        Err(e) => {
            progress(&format!("explore: causes without kernel lines: {e}"));
            return causes.iter().map(|c| c.lines(None)).collect();
        }
    };
    match crate::explain::Placer::new(&root, tree.as_ref()) {
        Ok(mut placer) => causes.iter().map(|c| c.lines(Some(&mut placer))).collect(),
        Err(e) => {
            progress(&format!("explore: causes without kernel lines: {e}"));
            causes.iter().map(|c| c.lines(None)).collect()
        }
    }
}

/// The progress line that sums up the search `r`.
fn search_line(r: &SearchResult, o: &Options) -> String {
    format!(
        "explore: seed {}: {} scenarios in {:.1} s ({:.0}/s), {} firing, {} signatures ({}){}",
        o.seed,
        r.scenarios,
        r.elapsed.as_secs_f64(),
        r.rate(),
        r.firing,
        r.groups.len(),
        by_detector(r.groups.values()),
        if r.invalid.is_empty() {
            String::new()
        } else {
            format!(", {} generated scenarios invalid: {}", r.invalid.len(), r.invalid[0])
        }
    )
}

/// Writes each finding, shrunk, as scenario YAML in `o.out`/candidates.
fn write_candidates(findings: &[Finding], o: &Options) -> Result<()> {
    let candidates = o.out.join("candidates");
    crate::files::make_dir(&candidates)?;
    for f in findings {
        let text = f.gen.yaml(&comment(f, o, &model_figures(f, o)?, None), &f.variants(&o.variants[0]));
        let path = candidates.join(format!("{}.yaml", f.name()));
        crate::files::write(&path, text)?;
    }
    Ok(())
}

/// Confirms `report`'s findings on the kernels of `lab`, group by group, until `want` are
/// confirmed, the queue is empty, the budget (counted from `started`) leaves too little
/// for another, or Ctrl-C; writes each confirmation and summary.md after each group.
fn confirm_findings(
    report: &mut Report,
    lab: &crate::run::Lab,
    o: &Options,
    started: Instant,
    want: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let confirming = Instant::now();
    let mut queue: Vec<&Finding> = report.findings.iter().collect();
    let mut costs = Costs::default();
    let task = crate::progress::Task::start("explore: confirmations");
    while report.confirmations.len() < want && !queue.is_empty() && !interrupted() {
        let left = o.budget.saturating_sub(started.elapsed());
        let queued: Vec<Queued> = queue
            .iter()
            .map(|f| {
                let ready = confirm::image_ready(lab, f, o);
                Queued {
                    ready,
                    estimate: costs.estimate(f.variants(&o.variants[0]).len() as u32, ready),
                    name: f.name(),
                }
            })
            .collect();
        let max = (want - report.confirmations.len()).min(crate::run::BATCH_POINTS);
        let picked = pick_group(&queued, left, max);
        if picked.is_empty() {
            progress(&format!(
                "explore: {} s left, too little for another confirmation (a run takes about {} s)",
                left.as_secs(),
                costs.per_run().as_secs()
            ));
            break;
        }
        let ahead = announce_group(report.confirmations.len(), &queue, &queued, &picked, left, progress);
        let group: Vec<&Finding> = picked.iter().map(|&i| queue[i]).collect();
        let mut taken = picked.clone();
        taken.sort_unstable();
        for i in taken.into_iter().rev() {
            queue.remove(i);
        }
        if group.len() > 1 {
            progress(&format!("explore: {} findings in one boot per kernel, about {} s", group.len(), ahead.as_secs()));
        }
        let names: Vec<String> = group.iter().map(|f| f.name()).collect();
        task.count(
            format!("on the kernels: {}", names.join(", ")),
            report.confirmations.len() as u64,
            Some(want.min(report.findings.len()) as u64),
        );
        for c in confirm::confirm_group(lab, &group, o, progress) {
            costs.record(c.run_times.len() as u32, c.run_times.iter().sum(), c.image_time);
            progress(&format!("explore: {}: {} ({:.0} s)", c.finding.name(), c.status.text(), c.wall.as_secs_f64()));
            if c.status.is_model_bug() {
                report.model_bugs += 1;
            }
            c.write(&o.out, o)?;
            report.confirmations.push(c);
            task.count(
                format!("{} confirmed or refuted", report.confirmations.len()),
                report.confirmations.len() as u64,
                Some(want.min(report.findings.len()) as u64),
            );
        }
        report.confirm_time = confirming.elapsed();
        report.interrupted = interrupted();
        report.markdown = markdown(report, o);
        crate::cache::write_atomic(&o.out.join("summary.md"), report.markdown.as_bytes())?;
    }
    report.confirm_time = confirming.elapsed();
    Ok(())
}

/// Says what the group `picked` (indices into `queue` and `queued`) confirms, each with
/// its estimate and what is left of the budget before it, the first numbered after the
/// `confirmed` so far; returns the sum of their estimates.
fn announce_group(
    confirmed: usize,
    queue: &[&Finding],
    queued: &[Queued],
    picked: &[usize],
    left: Duration,
    progress: &mut dyn FnMut(&str),
) -> Duration {
    let mut ahead = Duration::ZERO;
    for (n, &i) in picked.iter().enumerate() {
        let (f, q) = (queue[i], &queued[i]);
        progress(&format!(
            "explore: confirmation {}: {} ({}) on the kernel, about {} s of {} s left{}",
            confirmed + n + 1,
            q.name,
            f.signature(),
            q.estimate.as_secs(),
            left.saturating_sub(ahead).as_secs(),
            if q.ready { "" } else { " (its disk image is prepared first)" }
        ));
        ahead += q.estimate;
    }
    ahead
}
