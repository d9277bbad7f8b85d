//! The summary paragraph: one sentence per variant and point, every number from the rows.

use std::fmt::Write;

use super::stats::{baseline, magnitude, Col, Row, Stat};

/// The order most folios have, with its count and the total (ties: the larger order).
fn mode_order(row: &Row) -> Option<(u32, f64, f64)> {
    let total = row.median(Col::Folios);
    row.stats
        .iter()
        .filter_map(|(c, s)| if let Col::Order(o) = c { Some((*o, s.median)) } else { None })
        .filter(|(_, n)| *n > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(o, n)| (o, n, total))
}

/// `69% fewer`, `12% more` (the caller has checked that the values differ).
fn fewer_more(base: f64, v: f64, fewer: &str, more: &str) -> String {
    if base == 0.0 {
        return more.to_string();
    }
    let p = (v - base).abs() / base * 100.0;
    format!("{}% {}", magnitude(p), if v < base { fewer } else { more })
}

/// One sentence comparing `row` with `base`, for a changelog.
fn sentence(row: &Row, base: &Row) -> String {
    let (v, b) = (&row.variant, &base.variant);
    let mut parts = Vec::new();
    let (rv, rb) = (row.median(Col::DataReads), base.median(Col::DataReads));
    let mut reads = if rv == rb {
        format!("{v} issues as many device reads as {b} ({})", Col::DataReads.format(rv))
    } else {
        format!(
            "{v} issues {} device reads than {b} ({} vs {})",
            fewer_more(rb, rv, "fewer", "more"),
            Col::DataReads.format(rv),
            Col::DataReads.format(rb)
        )
    };
    let (mv, mb) = (row.median(Col::MetadataReads), base.median(Col::MetadataReads));
    if mv != mb {
        let _ = write!(
            reads,
            ", and {} metadata reads vs {}",
            Col::MetadataReads.format(mv),
            Col::MetadataReads.format(mb)
        );
    }
    let (bv, bb) = (row.median(Col::Bytes), base.median(Col::Bytes));
    if bv == bb {
        let _ = write!(reads, " for the same {}", Col::Bytes.format(bv));
    } else {
        let _ = write!(
            reads,
            " and reads {} bytes ({} vs {})",
            fewer_more(bb, bv, "fewer", "more"),
            Col::Bytes.format(bv),
            Col::Bytes.format(bb)
        );
    }
    parts.push(reads);
    if row.has_faults() {
        parts.push(faults_part(row, base));
    }
    let (tv, tb) = (
        row.stats.get(&Col::Time).copied().unwrap_or(Stat::of(&[])),
        base.stats.get(&Col::Time).copied().unwrap_or(Stat::of(&[])),
    );
    let n = tv.n.min(tb.n);
    let runs = if n > 1 { format!("median of {n} runs") } else { "one run each".into() };
    // Say so when the medians differ by less than the runs vary: a reviewer should not
    // read a timing difference into noise.
    let (vlo, vhi) = tv.spread();
    let (blo, bhi) = tb.spread();
    let noise = if n > 1 && vlo <= bhi && blo <= vhi { ", within the spread of the runs" } else { "" };
    if tv.median == tb.median {
        parts.push(format!("its reads take as long in the guest ({}, {runs})", Col::Time.format(tv.median)));
    } else {
        parts.push(format!(
            "its reads take {} time in the guest ({} vs {}, {runs}{noise})",
            fewer_more(tb.median, tv.median, "less", "more"),
            Col::Time.format(tv.median),
            Col::Time.format(tb.median)
        ));
    }
    let orders = |r: &Row| -> Vec<(Col, f64)> {
        r.stats.iter().filter(|(c, _)| matches!(c, Col::Order(_))).map(|(c, s)| (*c, s.median)).collect()
    };
    if orders(row) == orders(base) {
        parts.push(format!("it adds the same folios ({})", Col::Folios.format(row.median(Col::Folios))));
    } else {
        let mode = |r: &Row| match mode_order(r) {
            Some((o, k, t)) => format!("mostly order {o} ({} of {})", Col::Folios.format(k), Col::Folios.format(t)),
            None => "none".into(),
        };
        parts.push(format!("its folios are {}, {b}'s {}", mode(row), mode(base)));
    }
    parts.join("; ")
}

/// The faults part of [`sentence`]: faults and fault-around ranges against the base's.
fn faults_part(row: &Row, base: &Row) -> String {
    let fmt = |c: Col, r: &Row| c.format(r.median(c));
    let (fv, fb) = (row.median(Col::Faults), base.median(Col::Faults));
    let mut s = if fv == fb {
        format!("it takes as many faults ({})", fmt(Col::Faults, row))
    } else {
        format!(
            "it takes {} faults ({} vs {})",
            fewer_more(fb, fv, "fewer", "more"),
            fmt(Col::Faults, row),
            fmt(Col::Faults, base)
        )
    };
    let (av, ab) = (row.median(Col::FaultArounds), base.median(Col::FaultArounds));
    let (pv, pb) = (row.median(Col::FaultAroundPages), base.median(Col::FaultAroundPages));
    if av == ab && pv == pb {
        let _ = write!(
            s,
            " and as many fault-around ranges ({}, over {} pages)",
            fmt(Col::FaultArounds, row),
            fmt(Col::FaultAroundPages, row)
        );
    } else {
        let _ = write!(
            s,
            " and {} fault-around ranges ({} vs {}, over {} pages vs {})",
            if av == ab { "as many".to_string() } else { fewer_more(ab, av, "fewer", "more") },
            fmt(Col::FaultArounds, row),
            fmt(Col::FaultArounds, base),
            fmt(Col::FaultAroundPages, row),
            fmt(Col::FaultAroundPages, base)
        );
    }
    s
}

/// The summary paragraph: for each point and each variant after the first, how it
/// compares with the first. Every number comes from `rows`.
pub fn summary(description: &str, variants: &[String], rows: &[Row]) -> String {
    let Some(first) = variants.first() else { return String::new() };
    let mut sentences = Vec::new();
    for row in rows.iter().filter(|r| &r.variant != first) {
        let Some(base) = baseline(rows, row, first) else { continue };
        let at = row.point.as_deref().map(|p| format!(" at {p}")).unwrap_or_default();
        sentences.push(format!("{description}{at}: {}.", sentence(row, base)));
    }
    sentences.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::*;
    use crate::report::*;

    #[test]
    fn the_summary_sentence_comes_from_the_figures() {
        let rows = rows(&cells(&[(250, 180), (240, 200), (260, 170)]));
        let text = summary("1 MiB reads after a 4 KiB read", &heading().variants, &rows);
        assert_eq!(
            text,
            "1 MiB reads after a 4 KiB read: async-align-v1 issues 75% fewer device reads than base (10 vs 40) for the same 1.2 MiB; \
its reads take 28% less time in the guest (0.180 s vs 0.250 s, median of 3 runs); \
its folios are mostly order 4 (10 of 10), base's mostly order 2 (40 of 40)."
        );
        // Overlapping spreads are called out as such.
        let rows = crate::report::rows(&cells(&[(250, 245), (240, 230), (260, 262)]));
        let text = summary("x", &heading().variants, &rows);
        assert!(text.contains("its reads take 2.0% less time in the guest (0.245 s vs 0.250 s, median of 3 runs, within the spread of the runs)"), "{text}");
        // More bytes and more metadata reads are said, with their numbers.
        let mut c = cells(&[(100, 100)]);
        c[1].samples[0].figures.bytes_read += 1 << 20;
        c[1].samples[0].figures.metadata_reads = 3;
        let text = summary("x", &heading().variants, &crate::report::rows(&c));
        assert!(
            text.contains("(10 vs 40), and 3 metadata reads vs 1 and reads 80% more bytes (2.2 MiB vs 1.2 MiB)"),
            "{text}"
        );
    }

    #[test]
    fn more_from_nothing_and_the_larger_order_on_a_tie() {
        let base = figures(0, 1, 0, 0, &[]);
        let v1 = figures(5, 1, 2 << 20, 1, &[(1, 5), (3, 5)]);
        let rows = rows(&[cell_of(None, "base", &base, &[10]), cell_of(None, "v1", &v1, &[10])]);
        let variants = ["base".to_string(), "v1".to_string()];
        assert_eq!(
            summary("x", &variants, &rows),
            "x: v1 issues more device reads than base (5 vs 0) and reads more bytes (2.0 MiB vs 0.0 MiB); \
its reads take as long in the guest (0.010 s, one run each); its folios are mostly order 3 (5 of 10), base's none."
        );
    }

    #[test]
    fn no_sentence_without_variants_or_without_a_baseline_at_the_point() {
        let f = figures(1, 0, 4096, 1, &[(0, 1)]);
        let rows = rows(&[
            cell_of(Some("p1"), "base", &f, &[1]),
            cell_of(Some("p1"), "v1", &f, &[1]),
            cell_of(Some("p2"), "v1", &f, &[1]),
        ]);
        assert_eq!(summary("x", &[], &rows), "");
        let text = summary("x", &["base".to_string(), "v1".to_string()], &rows);
        assert!(text.starts_with("x at p1: v1 issues as many device reads as base (1)"), "{text}");
        assert!(!text.contains("p2"), "{text}");
    }
}
