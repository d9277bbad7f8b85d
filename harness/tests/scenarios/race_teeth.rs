//! The teeth of the check of racing readers (issue 52, docs/concurrency.md): a test-only
//! kernel (harness/tests/variants/race-teeth) whose page_cache_async_ra(), at a marked
//! folio its file_ra_state did not expect with more than a window's pages cached after it,
//! opens a window past them where the base's returns. On `fio_four_jobs` (each job its own
//! open) that is a job reaching the mark of another job's window, and only that: each
//! decision checked against the base's model parts at the first, naming its job and the
//! job whose folio it was made on. The base kernel's run of the same scenario passes
//! (`scenario_fio_four_jobs::base`).

use std::path::Path;

use radiff::run::Lab;
use radiff::scenario::Scenario;
use radiff_model::Policy;

pub const NAME: &str = "race_teeth::the_base_model_parts_where_a_job_met_anothers_window::race-teeth";

pub fn scenario(root: &Path) -> radiff::Result<Scenario> {
    Scenario::load(&root.join("scenarios/fio_four_jobs.yaml"))
}

pub fn trial(lab: &Lab, scenario: &Scenario) -> Result<(), String> {
    let kernel = super::test_variant_kernel(lab, "race-teeth")?;
    let out = lab.run_kernel(scenario, &scenario.points[0], "race-teeth", &kernel).map_err(|e| e.to_string())?;
    let input = radiff::run::model_input_with(scenario, &out.env, &out.capture);
    let checked = radiff::decisions::check(&input, &Policy::BASE, &out.capture.trace, &out.capture.programs);
    let Some(parted) = &checked.parted else {
        return Err(format!(
            "every decision equals the base's model on the race-teeth kernel ({}; run folder {})",
            checked.line(),
            out.dir.display()
        ));
    };
    let text = parted.render(NAME, "cargo test --test scenarios -- race_teeth");
    eprintln!("{NAME}: parts as it should:\n{text}");
    // The other job: the one whose window's folio the call was made on, or one in flight.
    let Some(other) = parted.folio_by.filter(|&p| p != parted.pid).or(parted.overlapping.first().copied()) else {
        return Err(format!("the decision that parts names no other task:\n{text}"));
    };
    for needle in [format!("pid {}", parted.pid), format!("pid {other}")] {
        if !text.contains(&needle) {
            return Err(format!("the failure does not name `{needle}`:\n{text}"));
        }
    }
    // The kernel opened a window where the model opens none.
    let opened = |w: &radiff_model::Window| !w.submits.is_empty();
    match &parted.model {
        m if opened(&parted.kernel) && !m.as_ref().is_some_and(opened) => Ok(()),
        m => Err(format!(
            "the kernel should have opened a window where the model opens none (kernel {:?}, model {m:?}):\n{text}",
            parted.kernel
        )),
    }
}
