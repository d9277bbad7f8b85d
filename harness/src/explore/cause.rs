//! Root causes: findings whose anomalous windows were decided by the same path of kernel
//! decisions are one cause, however different their figures.
//!
//! A finding's anomalous window is the first window at which its detector fires on the
//! trace cut there (for a variant change: the first decision where the variant's path
//! leaves the base's, [`crate::explain::first_parting`]). Its path is the distinct
//! decisions the model took in that window in the functions that open and size windows
//! ([`DECIDING`]), in the order of `radiff_model::coverage::BRANCHES`, without the sides
//! of a comparison (`x < y`, `x == y`, `x > y`: values, not paths) but for a count cut to
//! the limit (`... > max_pages`). The read path's
//! bookkeeping around them, which every window takes, does not tell causes apart.
//! Findings with the same detector and path are one cause; the one with the fewest steps
//! reproduces it.

use std::collections::BTreeMap;

use radiff_model::coverage::BRANCHES;
use radiff_model::{explain, Explained, ModelConfig, Trace};

use crate::model_check::Predictor;

use super::detect::{self, Thresholds};
use super::search::{context, scenario_of, Finding};
use super::synthetic_input;
use crate::explain::{first_parting, Placer};

/// One root cause and the findings it explains.
#[derive(Clone, Debug, PartialEq)]
pub struct Cause {
    pub detector: &'static str,
    /// The variant of a variant change.
    pub variant: Option<String>,
    /// The decisions that make it (the key).
    pub path: Vec<String>,
    /// Indices into the findings, the reproducer (fewest steps, then strongest) first.
    pub findings: Vec<usize>,
    /// The reproducer's anomalous window.
    pub window: usize,
}

/// The kernel functions that open a readahead window and size it: their decisions key a
/// cause (a variant policy's own branches do too). The functions they call to fill the
/// window (page_cache_ra_order(), page_cache_ra_unbounded(), ...) are how it is carried
/// out, and differ with the cache's contents, not with the cause.
pub const DECIDING: &[&str] = &[
    "page_cache_sync_ra",
    "page_cache_async_ra",
    "force_page_cache_ra",
    "do_sync_mmap_readahead",
    "do_async_mmap_readahead",
    "generic_fadvise",
];

/// Whether `id` is one side of a three-way comparison (`f: a < b` with `f: a == b` and
/// `f: a > b` also in [`BRANCHES`]).
pub fn is_comparison_side(id: &str) -> bool {
    for op in [" < ", " == ", " > "] {
        if let Some((left, right)) = id.split_once(op) {
            return [" < ", " == ", " > "].iter().all(|o| BRANCHES.iter().any(|b| b.id == format!("{left}{o}{right}")));
        }
    }
    false
}

/// Whether `id` keys a cause: a decision of [`DECIDING`] (or a policy's own), not the side
/// of a comparison, except a count above the limit (`... > max_pages`): the window was cut
/// to the limit, which is a path (a hint that reads one chunk of what it asked), not a value.
pub fn keys_a_cause(id: &str) -> bool {
    let branch = BRANCHES.iter().find(|b| b.id == id);
    let deciding = DECIDING.contains(&crate::port::lines::function_of(id)) || branch.is_some_and(|b| b.only.is_some());
    deciding && (!is_comparison_side(id) || id.ends_with(" > max_pages"))
}

/// What groups findings into one cause: the detector, the variant, the decision path.
type CauseKey = (&'static str, Option<String>, Vec<String>);

/// The causes of `findings`, most findings first. A finding whose scenario no longer
/// parses has no cause and is left out.
pub fn causes(findings: &[Finding], policies: &[(String, Predictor)], t: &Thresholds) -> Vec<Cause> {
    let keyed = keys_a_cause;
    let mut by_key: BTreeMap<CauseKey, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        let Some((window, path)) = anomaly(f, policies, t, &keyed) else { continue };
        by_key.entry((f.hit.detector, f.variant.clone(), path)).or_default().push((i, window));
    }
    let mut out: Vec<Cause> = by_key
        .into_iter()
        .map(|((detector, variant, path), mut members)| {
            members.sort_by(|&(a, _), &(b, _)| {
                findings[a]
                    .gen
                    .steps
                    .len()
                    .cmp(&findings[b].gen.steps.len())
                    .then(findings[b].hit.strength.total_cmp(&findings[a].hit.strength))
            });
            Cause { detector, variant, path, findings: members.iter().map(|m| m.0).collect(), window: members[0].1 }
        })
        .collect();
    out.sort_by(|a, b| b.findings.len().cmp(&a.findings.len()).then(a.detector.cmp(b.detector)));
    out
}

impl Cause {
    /// One sentence from the decisions' names: "trimmed-window: page_cache_async_ra: index
    /// == expected; then page_cache_async_ra: aligned_end < end: trimmed".
    pub fn sentence(&self) -> String {
        let what = match &self.variant {
            Some(v) => format!("{} ({v})", self.detector),
            None => self.detector.to_string(),
        };
        if self.path.is_empty() {
            return format!("{what}: no mm/readahead.c decision in the window (the read path alone)");
        }
        format!("{what}: {}", self.path.join("; then "))
    }

    /// The path with each decision's kernel lines, one per line.
    pub fn lines(&self, placer: Option<&mut Placer>) -> Vec<String> {
        match placer {
            Some(p) => self.path.iter().map(|d| p.line(d)).collect(),
            None => self.path.clone(),
        }
    }
}

/// Where `other` first parts from the base (`base`, explained on `input`) and the decisions
/// there: where both are ports, the two paths' first differing decisions (else the base's
/// keyed decisions in that window); for the hybrid, whose C records no decisions, the
/// base's keyed decisions in the first window whose requests or folios differ.
pub fn parting_from(
    base: &Explained,
    input: &radiff_model::Input,
    other: &Predictor,
    keyed: &dyn Fn(&str) -> bool,
) -> Option<(usize, Vec<String>)> {
    let Some(p) = other.port() else {
        let window = crate::compare::compare(&base.trace, &other.predict(input))?.window;
        let window = decided_at(base, window);
        return Some((window, key_of(base, window, keyed)));
    };
    let other = explain(input, p, &ModelConfig::default());
    let parting = first_parting(base, &other)?;
    let mut path: Vec<String> = parting.base.iter().chain(parting.other.iter()).cloned().collect();
    if path.is_empty() {
        path = key_of(base, parting.window, keyed);
    }
    Some((parting.window, path))
}

/// The finding's anomalous window and the keyed decisions there.
fn anomaly(
    f: &Finding,
    policies: &[(String, Predictor)],
    t: &Thresholds,
    keyed: &dyn Fn(&str) -> bool,
) -> Option<(usize, Vec<String>)> {
    let s = scenario_of(&f.gen, &[]).ok()?;
    let input = synthetic_input(&s);
    let config = ModelConfig::default();
    let base = explain(&input, policies[0].1.port()?, &config);
    if let Some(v) = &f.variant {
        let (_, p) = policies.iter().find(|(n, _)| n == v)?;
        return parting_from(&base, &input, p, keyed);
    }
    let window = first_firing_window(&base, f.hit.detector, &input, t);
    Some((window, key_of(&base, window, keyed)))
}

/// The first window at which `detector` fires on the trace cut after it; the last window
/// when it fires only on the whole.
pub fn first_firing_window(e: &Explained, detector: &str, input: &radiff_model::Input, t: &Thresholds) -> usize {
    let ctx = context(input);
    // One trace grown a window at a time: each window is copied once, not once per cut.
    let mut cut = Trace { windows: Vec::with_capacity(e.trace.windows.len()) };
    for (w, window) in e.trace.windows.iter().enumerate() {
        cut.windows.push(window.clone());
        if detect::run_all(&cut, &ctx, t).iter().any(|h| h.detector == detector) {
            return w;
        }
    }
    e.trace.windows.len().saturating_sub(1)
}

/// The base's window whose decisions stand for a parting at window `w`: `w` itself, or,
/// where the base's trace ends before `w` (the other kernel went on reading where the base
/// stopped, as a hint whose base chunk was cut to the limit), the base's last window,
/// whose decisions ended it.
fn decided_at(base: &Explained, w: usize) -> usize {
    w.min(base.notes.len().saturating_sub(1))
}

/// The distinct keyed decisions of window `w`, in [`BRANCHES`] order.
fn key_of(e: &Explained, w: usize, keyed: &dyn Fn(&str) -> bool) -> Vec<String> {
    let Some(note) = e.notes.get(w) else { return Vec::new() };
    BRANCHES
        .iter()
        .filter(|b| keyed(b.id) && note.decisions.iter().any(|d| d == b.id))
        .map(|b| b.id.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sides_of_a_comparison_are_values_and_a_labelled_branch_is_a_path() {
        assert!(is_comparison_side("page_cache_sync_ra: req_count < max_pages"));
        assert!(is_comparison_side("page_cache_sync_ra: req_count == max_pages"));
        assert!(!is_comparison_side("page_cache_sync_ra: index == 0"));
        assert!(!is_comparison_side("page_cache_async_ra: aligned_end < end: trimmed"));
        assert!(keys_a_cause("page_cache_async_ra: aligned_end < end: trimmed"));
        assert!(!keys_a_cause("filemap_get_read_batch: PG_readahead"));
        assert!(!keys_a_cause("get_next_ra_size: cur > max / 2"));
        assert!(!keys_a_cause("force_page_cache_ra: nr_to_read < max_pages"));
        assert!(keys_a_cause("force_page_cache_ra: nr_to_read > max_pages"));
        assert!(keys_a_cause("page_cache_async_ra: keep half: align >>= 1"));
    }

    #[test]
    fn a_parting_past_the_bases_last_window_takes_that_windows_decisions() {
        // A WILLNEED of a whole 8 MiB file: the base reads one chunk, cut to the limit.
        let text = "description: t\ndevice: {kind: nvme, size: 1 GiB}\nfilesystem: xfs\nfile: {size: 8 MiB, write_size: 1 MiB}\nqueue: {read_ahead_kb: 128, max_sectors_kb: 512}\nreads:\n  - fadvise: {advice: willneed}\n";
        let s = crate::scenario::Scenario::parse(std::path::Path::new("t.yaml"), text).unwrap();
        let base = explain(&synthetic_input(&s), &radiff_model::Policy::BASE, &ModelConfig::default());
        assert_eq!(base.notes.len(), 1, "{:?}", base.trace);
        assert_eq!((decided_at(&base, 0), decided_at(&base, 5)), (0, 0));
        let path = key_of(&base, decided_at(&base, 5), &keys_a_cause);
        assert!(path.iter().any(|d| d == "force_page_cache_ra: nr_to_read > max_pages"), "{path:?}");
    }
}
