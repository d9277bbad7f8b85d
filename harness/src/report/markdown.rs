//! The Markdown tables of a report (requests, bytes, windows, faults, time; folios by
//! order) and the line that says where the runs ran.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::stats::{baseline, percent, Col, Row, Stat, FAULT_COLS, IQR_FROM};
use crate::vm::Accel;

/// A cell of the Markdown table: the median, its spread when the runs differ, and the
/// change against the baseline's median (none on the baseline itself).
fn cell_text(col: Col, stat: &Stat, base: Option<&Stat>) -> String {
    let mut s = col.format(stat.median);
    let (lo, hi) = stat.spread();
    if stat.n > 1 && lo != hi {
        let _ = write!(s, " [{}-{}]", col.plain(lo), col.plain(hi));
    }
    if let Some(b) = base {
        let _ = write!(s, " ({})", percent(b.median, stat.median));
    }
    s
}

/// What a report is about, besides its rows.
#[derive(Clone, Debug)]
pub struct Heading {
    /// `1mib_after_4k: 1 MiB reads after ...`
    pub title: String,
    /// Where the runs ran: kernel releases, QEMU's accelerator.
    pub environment: String,
    /// The variants in order; the first is the baseline.
    pub variants: Vec<String>,
}

/// The Markdown for a changelog's notes: a table of requests, bytes, windows (faults and
/// fault-around when there are) and time, a table of folios by order, and a line saying
/// how to read them. No line starts with `#`, which `git commit` would take for a comment.
pub fn markdown(h: &Heading, rows: &[Row]) -> String {
    let first = h.variants.first().map(String::as_str).unwrap_or("");
    let with_point = rows.iter().any(|r| r.point.is_some());
    let table = |out: &mut String, cols: &[Col], names: &[String]| {
        let mut head = String::from("|");
        let mut rule = String::from("|");
        if with_point {
            head.push_str(" point |");
            rule.push_str(":--|");
        }
        head.push_str(" variant |");
        rule.push_str(":--|");
        for name in names {
            let _ = write!(head, " {name} |");
            rule.push_str("--:|");
        }
        let _ = writeln!(out, "{head}\n{rule}");
        for row in rows {
            let base = baseline(rows, row, first).filter(|b| !std::ptr::eq(*b, row));
            let mut line = String::from("|");
            if with_point {
                let _ = write!(line, " {} |", row.point.as_deref().unwrap_or(""));
            }
            let _ = write!(line, " {} |", row.variant);
            for col in cols {
                let stat = row.stats.get(col).copied().unwrap_or(Stat::of(&[]));
                let _ = write!(line, " {} |", cell_text(*col, &stat, base.and_then(|b| b.stats.get(col))));
            }
            let _ = writeln!(out, "{line}");
        }
    };
    let mut s = String::new();
    let _ = writeln!(s, "{}", h.title);
    let _ = writeln!(s, "{}\n", h.environment);
    let faults = rows.iter().any(Row::has_faults);
    let mut cols = vec![Col::DataReads, Col::MetadataReads, Col::Bytes, Col::Windows];
    if faults {
        cols.extend(FAULT_COLS);
    }
    cols.push(Col::Time);
    let names: Vec<String> = cols.iter().map(|c| c.name()).collect();
    table(&mut s, &cols, &names);
    s.push('\n');
    let mut cols = vec![Col::Folios];
    let orders: BTreeSet<u32> = rows
        .iter()
        .flat_map(|r| r.stats.keys())
        .filter_map(|c| if let Col::Order(o) = c { Some(*o) } else { None })
        .collect();
    cols.extend(orders.iter().map(|&o| Col::Order(o)));
    let names: Vec<String> =
        cols.iter().map(|c| if let Col::Order(o) = c { format!("order {o}") } else { c.name() }).collect();
    table(&mut s, &cols, &names);
    let runs: BTreeSet<usize> = rows.iter().map(Row::runs).collect();
    let runs_text = match runs.iter().collect::<Vec<_>>().as_slice() {
        [1] => "One run each".to_string(),
        [n] => format!("Median of {n} runs each"),
        _ => format!("Median of {} runs", runs.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" to ")),
    };
    let spread = match runs.iter().max() {
        Some(&n) if n >= IQR_FROM => "; [interquartile range] where the runs differ",
        Some(&n) if n > 1 => "; [min-max] where the runs differ",
        _ => "",
    };
    let _ = write!(
        s,
        "\n{runs_text}{spread}; (change against {first}). Device reads are data reads; metadata reads (REQ_META) are counted apart. Guest time is the wall time of the reads inside the guest."
    );
    if faults {
        s.push_str(FAULTS_NOTE);
    }
    s.push('\n');
    s
}

/// How to read the fault columns, after the table's line when it has them.
pub const FAULTS_NOTE: &str = " Windows are those of page_cache_sync_ra/page_cache_async_ra calls; faults are \
mm_filemap_fault events (a fault retried after readahead dropped the mmap lock counts twice); fault-around \
ranges are mm_filemap_map_pages events, and fault-around pages the pages those ranges cover (the event does \
not say how many it mapped).";

/// "kernel 7.3.4+ under QEMU TCG, 2 vCPUs": the releases named per variant when they differ.
pub fn environment(runs: &[(String, String, Accel)], cpus: u32) -> String {
    let releases: BTreeSet<&str> = runs.iter().map(|(_, r, _)| r.as_str()).collect();
    let kernel = if releases.len() == 1 {
        format!("kernel {}", releases.iter().next().unwrap_or(&""))
    } else {
        let mut seen = Vec::new();
        for (v, r, _) in runs {
            let item = format!("{v} {r}");
            if !seen.contains(&item) {
                seen.push(item);
            }
        }
        format!("kernels {}", seen.join(", "))
    };
    let accels: BTreeSet<String> = runs.iter().map(|(_, _, a)| format!("{a:?}").to_uppercase()).collect();
    format!("{kernel} under QEMU {}, {cpus} vCPUs", accels.into_iter().collect::<Vec<_>>().join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::*;
    use crate::report::*;

    #[test]
    fn the_markdown_table() {
        let rows = rows(&cells(&[(250, 180), (240, 200), (260, 170)]));
        let md = markdown(&heading(), &rows);
        let expected = "\
t: test reads
kernel 7.3.4+ under QEMU TCG, 2 vCPUs

| variant | device reads | metadata reads | bytes read | windows | guest time |
|:--|--:|--:|--:|--:|--:|
| base | 40 | 1 | 1.2 MiB | 40 | 0.250 s [0.240-0.260] |
| async-align-v1 | 10 (-75%) | 1 (0%) | 1.2 MiB (0%) | 10 (-75%) | 0.180 s [0.170-0.200] (-28%) |

| variant | folios | order 2 | order 4 |
|:--|--:|--:|--:|
| base | 40 | 40 | 0 |
| async-align-v1 | 10 (-75%) | 0 (-100%) | 10 (new) |

Median of 3 runs each; [min-max] where the runs differ; (change against base). Device reads are data reads; metadata reads (REQ_META) are counted apart. Guest time is the wall time of the reads inside the guest.
";
        assert_eq!(md, expected, "\n{md}");
        assert!(md.lines().all(|l| !l.starts_with('#')));
    }

    #[test]
    fn the_environment_line() {
        let runs =
            vec![("base".to_string(), "7.3.4+".to_string(), Accel::Tcg), ("v1".into(), "7.3.4+".into(), Accel::Tcg)];
        assert_eq!(environment(&runs, 2), "kernel 7.3.4+ under QEMU TCG, 2 vCPUs");
        let runs =
            vec![("base".to_string(), "7.3.4".to_string(), Accel::Kvm), ("v1".into(), "7.3.4-v1".into(), Accel::Kvm)];
        assert_eq!(environment(&runs, 2), "kernels base 7.3.4, v1 7.3.4-v1 under QEMU KVM, 2 vCPUs");
    }

    const NOTE: &str = "Device reads are data reads; metadata reads (REQ_META) are counted apart. Guest time is the wall time of the reads inside the guest.";

    fn two(title: &str) -> Heading {
        Heading {
            title: title.into(),
            environment: "kernel 7.3.4 under QEMU KVM, 2 vCPUs".into(),
            variants: vec!["base".into(), "v1".into()],
        }
    }

    #[test]
    fn one_run_each_shows_no_spread_and_the_baseline_no_change() {
        let base = figures(100, 2, 100 * 131072, 50, &[(0, 10), (2, 90)]);
        let v1 = figures(25, 2, 100 * 131072, 10, &[(2, 40), (4, 5)]);
        let rows = rows(&[cell_of(None, "base", &base, &[1500]), cell_of(None, "v1", &v1, &[1200])]);
        let want = format!(
            "\
s: reads
kernel 7.3.4 under QEMU KVM, 2 vCPUs

| variant | device reads | metadata reads | bytes read | windows | guest time |
|:--|--:|--:|--:|--:|--:|
| base | 100 | 2 | 12.5 MiB | 50 | 1.500 s |
| v1 | 25 (-75%) | 2 (0%) | 12.5 MiB (0%) | 10 (-80%) | 1.200 s (-20%) |

| variant | folios | order 0 | order 2 | order 4 |
|:--|--:|--:|--:|--:|
| base | 100 | 10 | 90 | 0 |
| v1 | 45 (-55%) | 0 (-100%) | 40 (-56%) | 5 (new) |

One run each; (change against base). {NOTE}
"
        );
        assert_eq!(markdown(&two("s: reads"), &rows), want);
    }

    #[test]
    fn five_runs_show_the_interquartile_range_and_equal_runs_no_spread() {
        let f = figures(8, 0, 1 << 20, 2, &[(2, 64)]);
        let rows = rows(&[cell_of(None, "base", &f, &[100, 110, 120, 130, 1000]), cell_of(None, "v1", &f, &[90; 5])]);
        let md = markdown(&two("t"), &rows);
        assert!(md.contains("| base | 8 | 0 | 1.0 MiB | 2 | 0.120 s [0.110-0.130] |\n"), "{md}");
        assert!(md.contains("| v1 | 8 (0%) | 0 (0%) | 1.0 MiB (0%) | 2 (0%) | 0.090 s (-25%) |\n"), "{md}");
        assert!(
            md.contains(&format!(
                "\nMedian of 5 runs each; [interquartile range] where the runs differ; (change against base). {NOTE}\n"
            )),
            "{md}"
        );
    }

    #[test]
    fn rows_of_different_run_counts_say_so() {
        let f = figures(8, 0, 1 << 20, 2, &[(2, 64)]);
        let rows = rows(&[cell_of(None, "base", &f, &[100, 200]), cell_of(None, "v1", &f, &[100, 100, 100])]);
        let md = markdown(&two("t"), &rows);
        assert!(md.contains("| base | 8 | 0 | 1.0 MiB | 2 | 0.150 s [0.100-0.200] |\n"), "{md}");
        assert!(
            md.contains(&format!(
                "\nMedian of 2 to 3 runs; [min-max] where the runs differ; (change against base). {NOTE}\n"
            )),
            "{md}"
        );
    }

    #[test]
    fn a_row_without_the_first_variant_at_its_point_shows_no_change() {
        let f = figures(1, 0, 4096, 1, &[(0, 1)]);
        let rows = rows(&[
            cell_of(Some("p1"), "base", &f, &[1]),
            cell_of(Some("p1"), "v1", &f, &[1]),
            cell_of(Some("p2"), "v1", &f, &[1]),
        ]);
        let md = markdown(&two("t"), &rows);
        assert!(md.contains("| p1 | v1 | 1 (0%) | 0 (0%) | 0.0 MiB (0%) | 1 (0%) | 0.001 s (0%) |\n"), "{md}");
        assert!(md.contains("| p2 | v1 | 1 | 0 | 0.0 MiB | 1 | 0.001 s |\n"), "{md}");
        assert!(md.contains("| p2 | v1 | 1 | 1 |\n"), "the folio table too: {md}");
    }

    #[test]
    fn the_environment_names_every_accelerator_and_each_variant_once() {
        let runs =
            vec![("base".to_string(), "7.3.4".to_string(), Accel::Tcg), ("v1".into(), "7.3.4".into(), Accel::Kvm)];
        assert_eq!(environment(&runs, 4), "kernel 7.3.4 under QEMU KVM/TCG, 4 vCPUs");
        let runs: Vec<_> = [("base", "r1"), ("v1", "r2"), ("base", "r1"), ("v1", "r2")]
            .iter()
            .map(|(v, r)| (v.to_string(), r.to_string(), Accel::Tcg))
            .collect();
        assert_eq!(environment(&runs, 1), "kernels base r1, v1 r2 under QEMU TCG, 1 vCPUs");
    }
}
