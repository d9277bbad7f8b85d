//! The statistics of a report: figures per run ([`Sample`]), runs per variant and point
//! ([`Cell`]), and per column their median and spread ([`Row`], [`Stat`]); the change
//! between two medians ([`percent`]) and what differs between two rows ([`differences`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::summary::Figures;

/// Median and spread of one figure over N runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation between the sorted values).
    pub q1: f64,
    pub q3: f64,
}

/// From this many runs on, the spread shown is the interquartile range; below, min-max
/// (quartiles of three or four values say little more than the extremes).
pub const IQR_FROM: usize = 5;

impl Stat {
    /// The statistics of `values`; an empty slice gives zeros with `n` 0.
    pub fn of(values: &[f64]) -> Stat {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| -> f64 {
            if v.is_empty() {
                return 0.0;
            }
            let h = (v.len() - 1) as f64 * p;
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(v.len() - 1);
            v[lo] + (h - lo as f64) * (v[hi] - v[lo])
        };
        Stat { n: v.len(), median: q(0.5), min: q(0.0), max: q(1.0), q1: q(0.25), q3: q(0.75) }
    }

    /// The spread shown: (low, high), min-max or the interquartile range.
    pub fn spread(&self) -> (f64, f64) {
        if self.n >= IQR_FROM {
            (self.q1, self.q3)
        } else {
            (self.min, self.max)
        }
    }
}

/// A column of the report: one number per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Col {
    /// Read requests with data (the device reads a changelog quotes).
    DataReads,
    /// Metadata reads (REQ_META): the file system's own, shown so nothing is hidden.
    MetadataReads,
    /// Bytes of the data reads.
    Bytes,
    Windows,
    /// `mm_filemap_fault` events: a column only when some run of the report has faults
    /// or fault-around (see [`rows`]), so a pread report keeps its columns.
    Faults,
    /// `mm_filemap_map_pages` events (fault-around ranges).
    FaultArounds,
    /// Pages the fault-around ranges cover (not all of them mapped: the event does not say).
    FaultAroundPages,
    Folios,
    /// Folios of this order.
    Order(u32),
    /// Wall time of the access pattern in the guest.
    Time,
}

impl Col {
    pub fn name(self) -> String {
        match self {
            Col::DataReads => "device reads".into(),
            Col::MetadataReads => "metadata reads".into(),
            Col::Bytes => "bytes read".into(),
            Col::Windows => "windows".into(),
            Col::Faults => "faults".into(),
            Col::FaultArounds => "fault-around ranges".into(),
            Col::FaultAroundPages => "fault-around pages".into(),
            Col::Folios => "folios".into(),
            Col::Order(o) => format!("order-{o} folios"),
            Col::Time => "guest time".into(),
        }
    }

    /// The value without its unit (spreads are shown this way, after the median).
    pub(super) fn plain(self, v: f64) -> String {
        match self {
            Col::Bytes => format!("{:.1}", v / (1u64 << 20) as f64),
            Col::Time => format!("{:.3}", v / 1e9),
            _ if v.fract() == 0.0 => format!("{v:.0}"),
            _ => format!("{v:.1}"),
        }
    }

    /// The value with its unit: `3328`, `512.0 MiB`, `2.541 s`.
    pub fn format(self, v: f64) -> String {
        match self {
            Col::Bytes => format!("{} MiB", self.plain(v)),
            Col::Time => format!("{} s", self.plain(v)),
            _ => self.plain(v),
        }
    }
}

/// One run's figures: those of the trace and the guest time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    pub figures: Figures,
    pub pattern_ns: u64,
    /// Whether its programs' tasks' readahead raced: then only [`Sample::pages`] repeats
    /// ([`crate::summary::raced_snapshot`]).
    pub raced: bool,
    /// The pages each file brought in.
    pub pages: crate::summary::Pages,
}

impl Sample {
    /// The sample of a run with `trace`, `pattern_ns` of guest time, whose tasks raced or not.
    pub fn of(trace: &radiff_model::Trace, pattern_ns: u64, raced: bool) -> Sample {
        Sample { figures: Figures::of(trace), pattern_ns, raced, pages: crate::summary::pages_brought_in(trace) }
    }

    pub fn value(&self, col: Col) -> f64 {
        let f = &self.figures;
        (match col {
            Col::DataReads => f.data_reads,
            Col::MetadataReads => f.metadata_reads,
            Col::Bytes => f.bytes_read,
            Col::Windows => f.windows,
            Col::Faults => f.faults,
            Col::FaultArounds => f.fault_arounds,
            Col::FaultAroundPages => f.fault_around_pages,
            Col::Folios => f.folios,
            Col::Order(o) => f.folio_orders.get(&o).copied().unwrap_or(0),
            Col::Time => self.pattern_ns,
        }) as f64
    }
}

/// The runs of one variant at one matrix point.
#[derive(Clone, Debug)]
pub struct Cell {
    pub point: Option<String>,
    pub variant: String,
    pub samples: Vec<Sample>,
}

/// One row of the report: a variant at a point, each column over its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub point: Option<String>,
    pub variant: String,
    pub stats: BTreeMap<Col, Stat>,
}

impl Row {
    pub fn median(&self, col: Col) -> f64 {
        self.stats.get(&col).map_or(0.0, |s| s.median)
    }

    pub fn runs(&self) -> usize {
        self.stats.get(&Col::DataReads).map_or(0, |s| s.n)
    }

    /// True when the row has the fault columns (some run of its report faulted).
    pub fn has_faults(&self) -> bool {
        self.stats.contains_key(&Col::Faults)
    }
}

/// The fault columns, in the order the table shows them.
pub const FAULT_COLS: [Col; 3] = [Col::Faults, Col::FaultArounds, Col::FaultAroundPages];

/// Rows of `cells`, in their order. Every row has a column for every folio order seen in
/// any run of any cell, so that an order a variant never uses shows as 0, not as a gap;
/// and the fault columns when any run of any cell has a fault or a fault-around range
/// (then a variant without them shows 0), none otherwise.
pub fn rows(cells: &[Cell]) -> Vec<Row> {
    let samples = || cells.iter().flat_map(|c| c.samples.iter());
    let orders: BTreeSet<u32> = samples().flat_map(|s| s.figures.folio_orders.keys().copied()).collect();
    let faults = samples().any(|s| s.figures.faults > 0 || s.figures.fault_arounds > 0);
    let mut cols = vec![Col::DataReads, Col::MetadataReads, Col::Bytes, Col::Windows];
    if faults {
        cols.extend(FAULT_COLS);
    }
    cols.push(Col::Folios);
    cols.extend(orders.iter().map(|&o| Col::Order(o)));
    cols.push(Col::Time);
    cells
        .iter()
        .map(|c| Row {
            point: c.point.clone(),
            variant: c.variant.clone(),
            stats: cols
                .iter()
                .map(|&col| (col, Stat::of(&c.samples.iter().map(|s| s.value(col)).collect::<Vec<_>>())))
                .collect(),
        })
        .collect()
}

/// The change from `base` to `v` in percent: `-69%`, `+0.3%`, `0%`, `new` (from 0).
pub fn percent(base: f64, v: f64) -> String {
    if v == base {
        return "0%".into();
    }
    if base == 0.0 {
        return "new".into();
    }
    let p = (v - base) / base * 100.0;
    let sign = if p < 0.0 { '-' } else { '+' };
    format!("{sign}{}%", magnitude(p.abs()))
}

/// A percentage's size with as many decimals as make it mean something.
pub(super) fn magnitude(p: f64) -> String {
    if (99.5..100.0).contains(&p) {
        // Not "100": that would read as "all gone" when some are left.
        return (1..=4).map(|d| format!("{p:.d$}")).find(|s| !s.starts_with("100")).unwrap_or_else(|| "99.9999".into());
    }
    if p >= 9.5 {
        format!("{p:.0}")
    } else if p >= 0.95 {
        format!("{p:.1}")
    } else if p >= 0.005 {
        format!("{p:.2}")
    } else {
        "<0.01".into()
    }
}

/// The row each row is compared with: the first variant's at the same point.
pub(super) fn baseline<'a>(rows: &'a [Row], row: &Row, first: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.point == row.point && r.variant == first)
}

/// One figure that differs between two variants at one scenario point.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub col: Col,
    pub a: f64,
    pub b: f64,
}

/// What differs between `a` and `b` in device reads (data and metadata), bytes, windows,
/// faults and fault-around (when the rows have them) and folios (total and each order);
/// guest time is left out, as it differs run to run.
pub fn differences(a: &Row, b: &Row) -> Vec<Difference> {
    let cols: BTreeSet<Col> = a.stats.keys().chain(b.stats.keys()).copied().filter(|c| *c != Col::Time).collect();
    cols.into_iter().map(|col| Difference { col, a: a.median(col), b: b.median(col) }).filter(|d| d.a != d.b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::*;

    #[test]
    fn median_and_spread() {
        let s = Stat::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.n, s.median, s.min, s.max), (3, 2.0, 1.0, 3.0));
        assert_eq!(s.spread(), (1.0, 3.0), "min-max below five runs");
        let s = Stat::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.median, 2.5, "even counts take the mean of the middle two");
        // Eight runs: quartiles by linear interpolation (h = 7 * 0.25 = 1.75).
        let s = Stat::of(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 1000.0]);
        assert_eq!((s.median, s.q1, s.q3), (45.0, 27.5, 62.5));
        assert_eq!(s.spread(), (27.5, 62.5), "the interquartile range from five runs on, ignoring the outlier");
        assert_eq!(Stat::of(&[7.0]).spread(), (7.0, 7.0));
        assert_eq!(Stat::of(&[]).n, 0);
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(3329.0, 1032.0), "-69%");
        assert_eq!(percent(1000.0, 1003.0), "+0.30%");
        assert_eq!(percent(100.0, 104.0), "+4.0%");
        assert_eq!(percent(7.0, 7.0), "0%");
        assert_eq!(percent(0.0, 1019.0), "new");
        assert_eq!(percent(516.0, 0.0), "-100%");
        assert_eq!(percent(768.0, 3.0), "-99.6%", "not -100% while some are left");
        assert_eq!(percent(100000.0, 1.0), "-99.999%");
        assert_eq!(percent(536870912.0, 536870912.0 + 4096.0), "+<0.01%");
    }

    #[test]
    fn rows_aggregate_runs_and_share_folio_orders() {
        let rows = rows(&cells(&[(250, 180), (240, 200), (260, 170)]));
        assert_eq!(rows.len(), 2);
        let (b, v) = (&rows[0], &rows[1]);
        assert_eq!((b.median(Col::DataReads), b.median(Col::MetadataReads), b.median(Col::Windows)), (40.0, 1.0, 40.0));
        assert_eq!(b.median(Col::Bytes), (40 * 64 * 512) as f64);
        assert_eq!(v.median(Col::Bytes), b.median(Col::Bytes));
        // Both rows have a column for orders 2 and 4, zero where the variant has none.
        assert_eq!((b.median(Col::Order(2)), b.median(Col::Order(4))), (40.0, 0.0));
        assert_eq!((v.median(Col::Order(2)), v.median(Col::Order(4))), (0.0, 10.0));
        let t = b.stats[&Col::Time];
        assert_eq!((t.median, t.min, t.max, t.n), (250e6, 240e6, 260e6, 3));
        assert_eq!(b.runs(), 3);
    }

    #[test]
    fn two_runs_interpolate_their_quartiles_and_order_does_not_matter() {
        let s = Stat::of(&[10.0, 0.0]);
        assert_eq!((s.n, s.min, s.q1, s.median, s.q3, s.max), (2, 0.0, 2.5, 5.0, 7.5, 10.0));
        assert_eq!(s.spread(), (0.0, 10.0));
        assert_eq!(Stat::of(&[5.0, -1.0, 3.0]), Stat::of(&[-1.0, 3.0, 5.0]));
        assert_eq!(Stat::of(&[]), Stat { n: 0, median: 0.0, min: 0.0, max: 0.0, q1: 0.0, q3: 0.0 });
        assert_eq!(Stat::of(&[]).spread(), (0.0, 0.0));
    }

    #[test]
    fn the_spread_is_min_max_below_five_runs_and_the_interquartile_range_from_five() {
        let four = Stat::of(&[1.0, 2.0, 3.0, 100.0]);
        assert_eq!(four.spread(), (1.0, 100.0));
        let five = Stat::of(&[100.0, 4.0, 3.0, 2.0, 1.0]);
        assert_eq!((five.q1, five.median, five.q3), (2.0, 3.0, 4.0));
        assert_eq!(five.spread(), (2.0, 4.0), "IQR_FROM is {IQR_FROM}");
    }

    #[test]
    fn columns_have_names_and_units() {
        assert_eq!(Col::Bytes.format(536870912.0), "512.0 MiB");
        assert_eq!(Col::Bytes.format(1.5 * 1048576.0), "1.5 MiB");
        assert_eq!(Col::Bytes.plain(536870912.0), "512.0");
        assert_eq!(Col::Time.format(2_541_000_000.0), "2.541 s");
        assert_eq!(Col::DataReads.format(3328.0), "3328");
        assert_eq!(Col::Windows.format(2.5), "2.5", "the median of an even count can be a half");
        assert_eq!(Col::Order(3).name(), "order-3 folios");
        assert_eq!(Col::FaultAroundPages.name(), "fault-around pages");
    }

    #[test]
    fn a_sample_gives_each_column_its_own_figure() {
        let f = Figures {
            data_reads: 1,
            metadata_reads: 2,
            bytes_read: 3,
            windows: 4,
            faults: 5,
            fault_arounds: 6,
            fault_around_pages: 7,
            folios: 8,
            folio_orders: [(2, 9)].into_iter().collect(),
            ..Figures::default()
        };
        let s = Sample { figures: f, pattern_ns: 10, raced: false, pages: Default::default() };
        let cols = [
            Col::DataReads,
            Col::MetadataReads,
            Col::Bytes,
            Col::Windows,
            Col::Faults,
            Col::FaultArounds,
            Col::FaultAroundPages,
            Col::Folios,
            Col::Order(2),
            Col::Time,
        ];
        let got: Vec<f64> = cols.iter().map(|&c| s.value(c)).collect();
        assert_eq!(got, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(s.value(Col::Order(5)), 0.0, "an order the run has no folio of");
    }

    #[test]
    fn rows_have_the_columns_in_table_order_and_fault_columns_only_with_faults() {
        let f = figures(4, 1, 4096, 2, &[(9, 1), (0, 3)]);
        let mut around = f.clone();
        around.fault_arounds = 1;
        around.fault_around_pages = 16;
        let keys = |r: &Row| r.stats.keys().copied().collect::<Vec<_>>();
        let plain = rows(&[cell_of(None, "base", &f, &[1])]);
        assert_eq!(
            keys(&plain[0]),
            [
                Col::DataReads,
                Col::MetadataReads,
                Col::Bytes,
                Col::Windows,
                Col::Folios,
                Col::Order(0),
                Col::Order(9),
                Col::Time
            ]
        );
        assert!(!plain[0].has_faults());
        // A fault-around range without a fault is enough; the variant without shows 0.
        let both = rows(&[cell_of(None, "base", &f, &[1]), cell_of(None, "v1", &around, &[1])]);
        let want = [
            Col::DataReads,
            Col::MetadataReads,
            Col::Bytes,
            Col::Windows,
            Col::Faults,
            Col::FaultArounds,
            Col::FaultAroundPages,
            Col::Folios,
            Col::Order(0),
            Col::Order(9),
            Col::Time,
        ];
        assert_eq!(keys(&both[0]), want);
        assert_eq!(keys(&both[1]), want);
        assert_eq!((both[0].median(Col::FaultAroundPages), both[1].median(Col::FaultAroundPages)), (0.0, 16.0));
        // A cell without runs has a row of empty statistics.
        let empty = rows(&[Cell { point: None, variant: "base".into(), samples: vec![] }]);
        assert_eq!((empty[0].runs(), empty[0].median(Col::DataReads)), (0, 0.0));
        assert!(rows(&[]).is_empty());
    }

    #[test]
    fn percentages_at_their_edges() {
        assert_eq!(percent(1000.0, 5.0), "-99.5%");
        assert_eq!(percent(10000.0, 1.0), "-99.99%", "99.99 rounds to 100.0 with one decimal");
        assert_eq!(percent(100.0, 250.0), "+150%");
        assert_eq!(percent(100.0, 109.0), "+9.0%");
        assert_eq!(percent(1000.0, 1005.0), "+0.50%");
        assert_eq!(percent(0.0, 0.0), "0%");
        assert_eq!(magnitude(0.001), "<0.01");
    }

    #[test]
    fn differences_leave_time_out_and_count_a_missing_order_as_zero() {
        let stat = |v: f64| Stat::of(&[v]);
        let row = |variant: &str, cols: &[(Col, f64)]| Row {
            point: None,
            variant: variant.into(),
            stats: cols.iter().map(|&(c, v)| (c, stat(v))).collect(),
        };
        let a = row("a", &[(Col::DataReads, 10.0), (Col::Windows, 3.0), (Col::Order(2), 4.0), (Col::Time, 1.0)]);
        let b = row("b", &[(Col::DataReads, 10.0), (Col::Windows, 5.0), (Col::Order(4), 1.0), (Col::Time, 2.0)]);
        assert_eq!(
            differences(&a, &b),
            [
                Difference { col: Col::Windows, a: 3.0, b: 5.0 },
                Difference { col: Col::Order(2), a: 4.0, b: 0.0 },
                Difference { col: Col::Order(4), a: 0.0, b: 1.0 },
            ]
        );
        assert!(differences(&a, &a).is_empty());
    }

    #[test]
    fn the_baseline_is_the_first_variant_at_the_same_point() {
        let f = figures(1, 0, 4096, 1, &[(0, 1)]);
        let rows = rows(&[
            cell_of(Some("p1"), "base", &f, &[1]),
            cell_of(Some("p1"), "v1", &f, &[1]),
            cell_of(Some("p2"), "v1", &f, &[1]),
        ]);
        assert_eq!(baseline(&rows, &rows[1], "base").map(|r| r.point.as_deref()), Some(Some("p1")));
        assert!(baseline(&rows, &rows[2], "base").is_none(), "no base at p2");
    }
}
