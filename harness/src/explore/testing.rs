//! The end-to-end explore trials tests/scenarios.rs runs on the kernels: what the
//! repository's tests call, not a radiff command.

use std::time::Duration;

use super::cover::explore_unknown;
use super::{confirm, explore, generate, Options};
use crate::run::Lab;

/// An end-to-end explore on `base`: the model's search over seed 1's first 400 scenarios,
/// then one confirmation on the kernel of the finding of seed 000's class the search found
/// by itself (trimmed windows after a read smaller than the sequential reads that follow;
/// any first finding if there were none, which fails). Fails unless the kernel confirmed
/// it; a model bug fails it with its diff.
pub fn on_base(lab: &crate::run::Lab) -> std::result::Result<(), String> {
    let out = lab.cache.dir("explore-trial").map_err(|e| e.to_string())?;
    // A fixed number of scenarios (not a time budget), so that the trial finds and
    // confirms the same thing on every machine. At most 12 findings shrunk per detector
    // (one of each shape of steps first), not all 185 of the search: shrinking is model
    // calls on one thread, 33 s for all of them and 3 s for these 72 in a test build.
    let o = Options {
        budget: Duration::from_secs(600),
        max_scenarios: Some(400),
        seed: 1,
        out,
        confirm: Some(0),
        shrink_per_detector: 12,
        ..Options::default()
    };
    let mut log = |line: &str| crate::progress::progress(line);
    let report = explore(&o, Some(lab), &mut log).map_err(|e| e.to_string())?;
    let seed_000 = report.findings.iter().find(|f| {
        f.hit.detector == "trimmed-window"
            && matches!(f.gen.steps.as_slice(), [generate::GenStep::Read { size: a, .. }, generate::GenStep::Sequential { size: b, .. }] if a < b)
    });
    let Some(f) = seed_000.or(report.findings.first()) else {
        return Err(format!("explore found nothing in {} scenarios", report.search.scenarios));
    };
    log(&format!("explore: confirming {} ({}) on the kernel", f.name(), f.signature()));
    let c = confirm::confirm(lab, f, &o).map_err(|e| e.to_string())?;
    c.write(&o.out, &o).map_err(|e| e.to_string())?;
    if seed_000.is_none() {
        return Err(format!(
            "the search did not find seed 000's class (trimmed windows after a small first read); it found:\n{}",
            report.markdown
        ));
    }
    if c.status.is_confirmed() {
        log(&format!("explore: {}: {}", f.name(), c.status.text()));
        Ok(())
    } else {
        Err(format!("{}: {}", f.name(), c.status.text()))
    }
}

/// A run of [`explore_unknown`] for `cargo test`: seed 000's v1 kernel explored as if the
/// model had no policy for it, with seed 1's first 50 scenarios (the seed whose first base
/// anomaly is a trimmed window v1's policy changes: the unit test
/// `the_anomalies_hold_a_trimmed_window_that_seed_000s_patch_changes` checks that on the
/// model), the first scenario to run only and two shrinking candidates at
/// most. The kernels must show a change of requests or folios there (the model's v1
/// policy predicts one, and the scenario trials check that policy against the v1 kernel),
/// and the scenario must be written as YAML that loads.
pub fn on_unknown_variant(lab: &Lab) -> std::result::Result<(), String> {
    let out = lab.cache.dir("explore-trial-unknown").map_err(|e| e.to_string())?;
    // Shrinking the anomalies is bounded by model calls alone (not time, which would make
    // the scenario depend on the machine's speed).
    let o = Options {
        seed: 1,
        max_scenarios: Some(50),
        confirm: Some(1),
        shrink_budget: 2,
        shrink_per_detector: 2,
        shrink_time: Some(Duration::from_secs(3600)),
        budget: Duration::from_secs(900),
        out,
        ..Options::default()
    };
    let mut log = |line: &str| crate::progress::progress(line);
    let r = explore_unknown(lab, "async-align-v1", &o, &mut log).map_err(|e| e.to_string())?;
    let Some(first) = r.ran.first() else {
        return Err(format!("nothing ran:\n{}", r.markdown));
    };
    // A base-model bug is reported (explore's job), not this trial's failure: the scenario
    // trials hold the model to the kernel.
    if let Some(bug) = &first.model_bug {
        log(&format!("explore (unknown variant): {}: reported as a model bug:\n{bug}", first.name));
    }
    if first.hit.is_none() {
        return Err(format!(
            "{}: the v1 kernel changes nothing on the first scenario run:\n{}",
            first.name, r.markdown
        ));
    }
    let Some((_, best, _)) = r.shrunk.first() else { return Err(format!("no change reported:\n{}", r.markdown)) };
    let path = o.out.join(format!("{}.yaml", best.name));
    let s = crate::scenario::Scenario::load(&path).map_err(|e| format!("the written finding does not load: {e}"))?;
    if !r.markdown.contains("branches")
        || !r.markdown.contains("async-align-v1 changes requests or folios on 1 of them")
    {
        return Err(format!("the report does not give the coverage and the change:\n{}", r.markdown));
    }
    // The change was repeated by both kernels, and the report names the base decision of
    // the first window where they part, in kernel lines: v1 changes page_cache_async_ra()'s
    // end alignment, so that is where a window it changes was decided.
    if r.races.iter().any(|(n, _)| *n == first.name) {
        return Err(format!("{}: the change did not repeat on a second run:\n{}", first.name, r.markdown));
    }
    if !r.markdown.contains(&format!("- `{}`: `page_cache_async_ra()` ", first.name)) {
        return Err(format!("the report does not say which changed functions {} reached:\n{}", first.name, r.markdown));
    }
    if !r.markdown.contains("page_cache_async_ra: aligned_end < end: trimmed  (mm/readahead.c:") {
        return Err(format!(
            "the report does not name the end alignment as the decision where the kernels part:\n{}",
            r.markdown
        ));
    }
    log(&format!(
        "explore (unknown variant): {} written; {}",
        s.path.display(),
        best.hit.as_ref().map_or("", |h| h.key.as_str())
    ));
    Ok(())
}

/// A variant-change hit of variant `v` made from its figures (`(figure, base, variant)`),
/// for the unit tests of what decides on hits.
pub fn variant_hit(figures: &[(super::detect::Figure, f64, f64)], requests_differ: bool) -> super::detect::Hit {
    use super::detect::{Change, VariantChange};
    let changes = figures.iter().map(|&(f, base, variant)| Change::new(f, base, variant)).collect();
    VariantChange { variant: "v".into(), changes, requests_differ }.hit()
}
