//! The end-to-end explore trial on `base`, one of the VM trials of tests/scenarios.rs.

use std::time::Duration;

use super::{confirm, explore, generate, Options};

/// An end-to-end explore on `base`: the model's search over seed 1's first 400 scenarios,
/// then one confirmation on the kernel of the finding of seed 000's class the search found
/// by itself (trimmed windows after a read smaller than the sequential reads that follow;
/// any first finding if there were none, which fails). Fails unless the kernel confirmed
/// it; a model bug fails it with its diff.
pub fn trial(lab: &crate::run::Lab) -> std::result::Result<(), String> {
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
