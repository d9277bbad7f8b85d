//! The `--all` view: two variants over every scenario, only what changed, then what did
//! not, what was not run and what failed.

use std::fmt::Write;

use super::stats::{differences, percent, Row};

/// The outcome of one scenario point in `--all`.
#[derive(Clone, Debug)]
pub struct PointOutcome {
    pub scenario: String,
    pub point: Option<String>,
    /// The rows of the two variants, or why they could not be had.
    pub rows: std::result::Result<(Row, Row), String>,
}

impl PointOutcome {
    fn name(&self) -> String {
        match &self.point {
            Some(p) => format!("{} ({p})", self.scenario),
            None => self.scenario.clone(),
        }
    }
}

/// The `--all` report: a table of what changed, then the points that did not change,
/// the scenarios not run, and the runs that failed.
pub fn render_all(a: &str, b: &str, outcomes: &[PointOutcome], skipped: &[String]) -> String {
    let mut s = String::new();
    let runs = outcomes.iter().filter_map(|o| o.rows.as_ref().ok()).map(|(r, _)| r.runs()).max().unwrap_or(1);
    let runs = if runs > 1 { format!("median of {runs} runs") } else { "one run each".into() };
    let _ = writeln!(s, "{b} against {a}, every scenario that runs both ({runs}); only what changed:\n");
    let mut changed = 0;
    let mut unchanged = Vec::new();
    let mut table = String::new();
    for o in outcomes {
        let Ok((ra, rb)) = &o.rows else { continue };
        let diffs = differences(ra, rb);
        if diffs.is_empty() {
            unchanged.push(o.name());
            continue;
        }
        changed += 1;
        for d in diffs {
            let _ = writeln!(
                table,
                "| {} | {} | {} | {} | {} |",
                o.name(),
                d.col.name(),
                d.col.format(d.a),
                d.col.format(d.b),
                percent(d.a, d.b)
            );
        }
    }
    if table.is_empty() {
        let _ = writeln!(s, "(nothing changed)");
    } else {
        let _ = writeln!(s, "| scenario | figure | {a} | {b} | change |\n|:--|:--|--:|--:|--:|");
        s.push_str(&table);
    }
    let ran = changed + unchanged.len();
    let _ = writeln!(s, "\nChanged: {changed} of {ran} scenario points.");
    let faults =
        outcomes.iter().filter_map(|o| o.rows.as_ref().ok()).any(|(ra, rb)| ra.has_faults() || rb.has_faults());
    let figures =
        if faults { "windows, faults, fault-around ranges and folio orders" } else { "windows and folio orders" };
    let _ =
        write!(s, "Unchanged (device reads, metadata reads, bytes, {figures} all equal): {} of {ran}", unchanged.len());
    if unchanged.is_empty() {
        s.push_str(".\n");
    } else {
        let _ = writeln!(s, ": {}.", unchanged.join(", "));
    }
    let _ = writeln!(
        s,
        "Guest time is not compared here; `radiff report SCENARIO.yaml --variants {a},{b} --runs N` gives it."
    );
    if !skipped.is_empty() {
        let _ = writeln!(s, "Not run (their `variants:` do not list both): {}.", skipped.join(", "));
    }
    for o in outcomes {
        if let Err(e) = &o.rows {
            let _ = writeln!(s, "Failed: {}: {}", o.name(), e.lines().next().unwrap_or(""));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::*;
    use crate::report::*;

    #[test]
    fn all_lists_only_what_changed_and_counts_the_rest() {
        let changed = rows(&cells(&[(250, 180)]));
        // Equal figures with different times: unchanged (time is not compared).
        let mut same = cells(&[(250, 180)]);
        same[1].samples = vec![Sample { pattern_ns: 1, ..same[0].samples[0].clone() }];
        let same = rows(&same);
        assert!(differences(&same[0], &same[1]).is_empty());
        let d = differences(&changed[0], &changed[1]);
        let cols: Vec<Col> = d.iter().map(|d| d.col).collect();
        assert_eq!(
            cols,
            vec![Col::DataReads, Col::Windows, Col::Folios, Col::Order(2), Col::Order(4)],
            "bytes and metadata reads are equal"
        );
        let pair = |r: &[Row]| Ok((r[0].clone(), r[1].clone()));
        let outcomes = vec![
            PointOutcome { scenario: "1mib_after_4k".into(), point: None, rows: pair(&changed) },
            PointOutcome { scenario: "random_4k".into(), point: None, rows: pair(&same) },
            PointOutcome {
                scenario: "2mib_limit".into(),
                point: Some("max_sectors_kb=2048".into()),
                rows: pair(&same),
            },
            PointOutcome {
                scenario: "random_64k".into(),
                point: None,
                rows: Err("the VM did not finish within 240 s\nmore".into()),
            },
        ];
        let text = render_all("base", "async-align-v1", &outcomes, &["f2fs_512k_reads_ufs".into()]);
        let expected = "\
async-align-v1 against base, every scenario that runs both (one run each); only what changed:

| scenario | figure | base | async-align-v1 | change |
|:--|:--|--:|--:|--:|
| 1mib_after_4k | device reads | 40 | 10 | -75% |
| 1mib_after_4k | windows | 40 | 10 | -75% |
| 1mib_after_4k | folios | 40 | 10 | -75% |
| 1mib_after_4k | order-2 folios | 40 | 0 | -100% |
| 1mib_after_4k | order-4 folios | 0 | 10 | new |

Changed: 1 of 3 scenario points.
Unchanged (device reads, metadata reads, bytes, windows and folio orders all equal): 2 of 3: random_4k, 2mib_limit (max_sectors_kb=2048).
Guest time is not compared here; `radiff report SCENARIO.yaml --variants base,async-align-v1 --runs N` gives it.
Not run (their `variants:` do not list both): f2fs_512k_reads_ufs.
Failed: random_64k: the VM did not finish within 240 s
";
        assert_eq!(text, expected, "\n{text}");
    }

    #[test]
    fn all_names_faults_among_the_unchanged_figures_only_when_there_are_some() {
        let faulting = rows(&[
            Cell { point: None, variant: "base".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "v1".into(), samples: vec![sample(&fault_trace(4, 3), 100)] },
        ]);
        let outcomes = vec![PointOutcome {
            scenario: "mmap_seq_8mib".into(),
            point: None,
            rows: Ok((faulting[0].clone(), faulting[1].clone())),
        }];
        let text = render_all("base", "v1", &outcomes, &[]);
        assert!(text.contains("| mmap_seq_8mib | fault-around ranges | 8 | 12 | +50% |\n| mmap_seq_8mib | fault-around pages | 128 | 192 | +50% |\n"), "{text}");
        assert!(text.contains("Unchanged (device reads, metadata reads, bytes, windows, faults, fault-around ranges and folio orders all equal): 0 of 1."), "{text}");
    }
}
