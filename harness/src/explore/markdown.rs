//! The Markdown summary of an explore run, as summary.md holds it.

use std::fmt::Write;

use super::{confirm, model_figures, Finding, Options, Report};

/// The Markdown summary: model bugs first, then confirmed findings, then what was not
/// confirmed, then the candidates the model alone found.
pub fn markdown(report: &Report, o: &Options) -> String {
    let r = &report.search;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## radiff explore --seed {} --variants {} --budget {} s\n\n{} scenarios in {:.1} s ({:.0}/s), {} firing a detector, {} signatures; {} findings after shrinking ({:.0} s); {} run on the kernels in {:.0} s: {} confirmed, {} model bugs, {} kernel races (two runs of one kernel differ){}.\n",
        o.seed,
        o.variants.join(","),
        o.budget.as_secs(),
        r.scenarios,
        r.elapsed.as_secs_f64(),
        r.rate(),
        r.firing,
        r.groups.len(),
        report.findings.len(),
        report.shrink_time.as_secs_f64(),
        report.confirmations.len(),
        report.confirm_time.as_secs_f64(),
        report.confirmations.iter().filter(|c| c.status.is_confirmed()).count(),
        report.model_bugs,
        report.confirmations.iter().filter(|c| matches!(c.status, confirm::Status::KernelRace { .. })).count(),
        if report.interrupted { "; interrupted by Ctrl-C" } else { "" }
    );
    if !report.confirmations.is_empty() {
        let _ = writeln!(s, "| status | finding | scenario | model | kernel | VM s | rerun |\n|---|---|---|---|---|---|---|");
        let mut rows: Vec<&confirm::Confirmation> = report.confirmations.iter().collect();
        rows.sort_by_key(|c| !c.status.is_model_bug());
        for c in rows {
            let _ = writeln!(
                s,
                "| {} | {} [{}] | `{}.yaml`: {} | {} | {} | {:.0} | `cargo test -- scenario_{}` |",
                c.status.short(),
                c.finding.hit.detector,
                c.finding.hit.key.replace('|', "/"),
                c.finding.name(),
                c.finding.gen.describe(),
                c.model_figures,
                c.kernel_figures,
                c.wall.as_secs_f64(),
                c.finding.name()
            );
        }
        let _ = writeln!(s);
    }
    let run: std::collections::BTreeSet<String> = report.confirmations.iter().map(|c| c.finding.name()).collect();
    let rest: Vec<&Finding> = report.findings.iter().filter(|f| !run.contains(&f.name())).collect();
    if !rest.is_empty() {
        let _ = writeln!(s, "Not confirmed (model only; YAML in `{}`):\n\n| finding | scenario | model | group |\n|---|---|---|---|", o.out.join("candidates").display());
        for f in rest {
            let _ = writeln!(
                s,
                "| {} [{}] | `{}.yaml`: {} | {} | {} scenarios |",
                f.hit.detector,
                f.hit.key.replace('|', "/"),
                f.name(),
                f.gen.describe(),
                model_figures(f, o).unwrap_or_else(|e| e.to_string()),
                f.group_size
            );
        }
    }
    s
}
