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
        "## radiff explore --seed {} --variants {} --budget {} s\n\n{} scenarios in {:.1} s ({:.0}/s), {} firing a detector, {} signatures; {} findings after shrinking ({:.0} s); {} run on the kernels in {:.0} s: {} confirmed, {} model bugs, {} kernel races (two runs of one kernel differ, or the trace depends on when requests complete, or the model marks the shape as a race){}.\n",
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
    for h in &report.hybrids {
        let _ = writeln!(s, "Modelled by {h}.\n");
    }
    s.push_str(&causes(report, o));
    if !report.confirmations.is_empty() {
        let _ = writeln!(s, "| cause | status | finding | scenario | model | kernel | VM s | rerun |\n|---|---|---|---|---|---|---|---|");
        let mut rows: Vec<&confirm::Confirmation> = report.confirmations.iter().collect();
        rows.sort_by_key(|c| (!c.status.is_model_bug(), cause_rank(report, &c.finding.name())));
        for c in rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} [{}] | `{}.yaml`: {} | {} | {} | {:.0} | `cargo test -- scenario_{}` |",
                cause_of(report, &c.finding.name()),
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
        let _ = writeln!(s, "Not confirmed (model only; YAML in `{}`):\n\n| cause | finding | scenario | model | group |\n|---|---|---|---|---|", o.out.join("candidates").display());
        let mut rest = rest;
        rest.sort_by_key(|f| cause_rank(report, &f.name()));
        for f in rest {
            let _ = writeln!(
                s,
                "| {} | {} [{}] | `{}.yaml`: {} | {} | {} scenarios |",
                cause_of(report, &f.name()),
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

/// The root causes, most findings first: the sentence, how many shapes, the reproducer,
/// what the kernels said of its findings, and the decisions in kernel lines.
fn causes(report: &Report, o: &Options) -> String {
    let mut s = String::new();
    if report.causes.is_empty() {
        return s;
    }
    let _ = writeln!(s, "### Root causes: {} for {} findings\n", report.causes.len(), report.findings.len());
    for (n, (c, lines)) in report.causes.iter().zip(&report.cause_lines).enumerate() {
        let lead = &report.findings[c.findings[0]];
        let names: std::collections::BTreeSet<String> = c.findings.iter().map(|&i| report.findings[i].name()).collect();
        let kernel: Vec<&str> = report
            .confirmations
            .iter()
            .filter(|k| names.contains(&k.finding.name()))
            .map(|k| k.status.short())
            .collect();
        let kernel = if kernel.is_empty() {
            "not run on the kernels".to_string()
        } else {
            format!("on the kernels: {}", kernel.join(", "))
        };
        let _ = writeln!(
            s,
            "{}. **{}**\n   {} finding{} ({} scenarios); reproducer `{}.yaml` ({}), window {}: `radiff run {}/candidates/{}.yaml`; {}",
            n + 1,
            c.sentence(),
            c.findings.len(),
            if c.findings.len() == 1 { "" } else { "s" },
            c.findings.iter().map(|&i| report.findings[i].group_size).sum::<u64>(),
            lead.name(),
            lead.gen.describe(),
            c.window,
            o.out.display(),
            lead.name(),
            kernel
        );
        for l in lines {
            let _ = writeln!(s, "   - {l}");
        }
    }
    let _ = writeln!(s);
    s
}

/// The 0-based number of the cause the finding called `name` belongs to (`usize::MAX`: none).
fn cause_rank(report: &Report, name: &str) -> usize {
    report
        .causes
        .iter()
        .position(|c| c.findings.iter().any(|&i| report.findings.get(i).is_some_and(|f| f.name() == name)))
        .unwrap_or(usize::MAX)
}

/// The cause's number as the summary lists it, or `-`.
fn cause_of(report: &Report, name: &str) -> String {
    match cause_rank(report, name) {
        usize::MAX => "-".to_string(),
        n => (n + 1).to_string(),
    }
}
