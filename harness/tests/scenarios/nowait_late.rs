//! The late completion of issue 53, in a real guest: an RWF_NOWAIT read that starts an
//! async window and then looks up that window's first folio, on a drive QEMU throttles so
//! that the folio's read is still in flight (`harness/tests/fixtures/nowait_late_device.yaml`).
//! The guest records the read stopping at the folio (4 KiB of 8), and the model, following
//! the record, stops there too: the model check passes with no race marked. The same
//! reads unthrottled (`scenarios/nowait_8k_in_first_window.yaml`) read on.

use std::path::Path;

use radiff::run::Lab;
use radiff::scenario::Scenario;

pub fn scenario(root: &Path) -> radiff::Result<Scenario> {
    Scenario::load(&root.join("harness/tests/fixtures/nowait_late_device.yaml"))
}

pub fn trial(lab: &Lab, scenario: &Scenario) -> Result<(), String> {
    let out = lab.run(scenario, &scenario.points[0], "base", "nowait_late").map_err(|e| e.to_string())?;
    let first = out.env.nowait_returned.first().copied();
    if first != Some(radiff_model::NowaitReturned { op: 1, bytes: 4096 }) {
        return Err(format!(
            "the first NOWAIT read (op 1, pages 1-2) should stop at page 2, locked by the throttled drive's read: the guest recorded {:?} ({})",
            out.env.nowait_returned,
            out.dir.display()
        ));
    }
    // The base's own model: the port, or on a base that moved the hybrid of its C.
    let expectation = lab.kernels.variant("base").map_err(|e| e.to_string())?.model.clone();
    let cache = radiff::cache::Cache::from_env();
    let (predictor, why) =
        radiff::hybrid::choose::predictor(&lab.kernels, &cache, "base", &expectation).map_err(|e| e.to_string())?;
    let predictor = predictor.ok_or_else(|| format!("the base has no model to check: {}", why.unwrap_or_default()))?;
    let checked = radiff::model_check::check_with(scenario, &out.env, &out.capture, &predictor);
    let races: Vec<&str> = checked.races().map(|m| m.id).collect();
    if !races.is_empty() {
        return Err(format!("races marked: {races:?} ({})", out.dir.display()));
    }
    if let Some(d) = &checked.divergence {
        return Err(radiff::compare::render(d, &scenario.name, "cargo test --test scenarios -- nowait_late"));
    }
    Ok(())
}
