//! The words a finding is written with: its figures, its YAML comment.

use std::fmt::Write;

use radiff_model::Trace;

use super::{policies, predict_scenario, scenario_of, Finding, Options};
use crate::error::Result;

/// "3329 reads, 524288 KiB, 9721 folios (516 o0, ...)"
pub fn figures_line(t: &Trace) -> String {
    let f = crate::summary::Figures::of(t);
    format!("{} reads, {}, {} folios ({})", f.data_reads, crate::summary::kib(f.bytes_read), f.folios, f.orders_line())
}

/// The leading comment of a finding's YAML.
pub fn comment(f: &Finding, o: &Options, model: &str, kernel: Option<&str>) -> String {
    let mut s = String::new();
    // Scenario files in scenarios/ start with "# Seed " (the mail they reproduce) or
    // "# Found by `radiff explore" (the search that made them).
    let _ = writeln!(
        s,
        "Found by `radiff explore --seed {} --variants {}` (its scenario {}, shrunk), {}.",
        o.seed,
        o.variants.join(","),
        f.index,
        if kernel.is_some() { "then run on the kernel" } else { "the model alone: not run on a kernel" }
    );
    let _ = writeln!(s, "{}: {}", f.hit.detector, f.hit.detail);
    let _ = writeln!(s, "Model: {model}");
    if let Some(k) = kernel {
        let _ = writeln!(s, "Kernel: {k}");
    }
    let _ = writeln!(s, "Rerun once copied to scenarios/: cargo test -- scenario_{}", f.name());
    s
}

/// The model's figures of a finding, per variant it runs on: "base: ...; V: ...".
pub fn model_figures(f: &Finding, o: &Options) -> Result<String> {
    let variants = f.variants(&o.variants[0]);
    let pol = policies(&variants)?;
    let s = scenario_of(&f.gen, &[])?;
    let (_, traces) = predict_scenario(&s, &pol);
    Ok(variants.iter().zip(&traces).map(|(v, t)| format!("{v}: {}", figures_line(t))).collect::<Vec<_>>().join("; "))
}
