//! A variant's change against the base as data: each figure that changed, its direction
//! and whether that is worse, rendered once into the hit's key ([`VariantChange::key`]).

use radiff_model::Trace;

use super::{fmt_num, Hit};
use crate::summary::Figures;

/// A figure a variant change is judged on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Figure {
    DeviceReads,
    BytesRead,
    Folios,
    PagesPerFolio,
    Windows,
    /// Pages brought into the page cache (the one figure that repeats where tasks race:
    /// `review`'s kernels only).
    PagesIn,
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::DeviceReads => "device reads",
            Figure::BytesRead => "bytes read",
            Figure::Folios => "folios",
            Figure::PagesPerFolio => "pages per folio",
            Figure::Windows => "windows",
            Figure::PagesIn => "pages brought in",
        }
    }

    /// Whether more of it is worse (more reads or bytes; fewer pages per folio is worse).
    fn more_is_worse(self) -> bool {
        self != Figure::PagesPerFolio
    }

    /// Whether it counts the device's requests (not the page cache's folios or windows).
    fn of_requests(self) -> bool {
        matches!(self, Figure::DeviceReads | Figure::BytesRead)
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One figure of a variant against the base.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub figure: Figure,
    pub base: f64,
    pub variant: f64,
    /// True when the variant's value is worse (more reads or bytes, smaller folios).
    pub worse: bool,
}

impl Change {
    /// `figure` from `base` to `variant`, worse or not by the figure's direction.
    pub fn new(figure: Figure, base: f64, variant: f64) -> Change {
        let worse = if figure.more_is_worse() { variant > base } else { variant < base };
        Change { figure, base, variant, worse }
    }
}

/// The figures a variant change is judged on: data reads, bytes read, folios, mean folio
/// size (pages) and windows, with which direction is worse.
pub fn changes(base: &Trace, variant: &Trace) -> Vec<Change> {
    let (a, b) = (Figures::of(base), Figures::of(variant));
    let pages = |f: &Figures| {
        let total: u64 = f.folio_orders.iter().map(|(o, n)| n << o).sum();
        if f.folios == 0 {
            0.0
        } else {
            total as f64 / f.folios as f64
        }
    };
    let rows = [
        (Figure::DeviceReads, a.data_reads as f64, b.data_reads as f64),
        (Figure::BytesRead, a.bytes_read as f64, b.bytes_read as f64),
        (Figure::Folios, a.folios as f64, b.folios as f64),
        (Figure::PagesPerFolio, pages(&a), pages(&b)),
        (Figure::Windows, a.windows as f64, b.windows as f64),
    ];
    rows.iter().filter(|r| r.1 != r.2).map(|&(figure, x, y)| Change::new(figure, x, y)).collect()
}

/// Whether two traces differ in their device requests or their folios (what a variant
/// change is).
pub fn requests_or_folios_differ(a: &Trace, b: &Trace) -> bool {
    a.requests().ne(b.requests()) || a.folios().ne(b.folios())
}

/// What changed between the base's trace and a variant's: the figures, and whether the
/// device's requests differ (they may with the same totals).
#[derive(Clone, Debug, PartialEq)]
pub struct VariantChange {
    pub variant: String,
    pub changes: Vec<Change>,
    pub requests_differ: bool,
}

/// What a [`VariantChange`]'s key says, without its values: each figure but the windows
/// with its direction (`true`: more), the figures it is worse on, and, where no such figure
/// changed, whether the requests (else only the folios) differ.
type Pattern = (Vec<(Figure, bool)>, Vec<Figure>, Option<bool>);

impl VariantChange {
    /// Worse on some figure.
    pub fn is_worse(&self) -> bool {
        self.changes.iter().any(|c| c.worse)
    }

    /// Whether the device's requests change, not only the folios: more or fewer reads or
    /// bytes, or other requests for the same totals.
    pub fn changes_requests(&self) -> bool {
        let (directions, _, other) = self.pattern();
        directions.iter().any(|(f, _)| f.of_requests()) || other == Some(true)
    }

    /// Whether `other` changed the same figures the same ways (its values may differ).
    pub fn same_pattern(&self, other: &VariantChange) -> bool {
        self.variant == other.variant && self.pattern() == other.pattern()
    }

    fn pattern(&self) -> Pattern {
        let directions: Vec<(Figure, bool)> = self
            .changes
            .iter()
            .filter(|c| c.figure != Figure::Windows)
            .map(|c| (c.figure, c.variant > c.base))
            .collect();
        let worse = self.changes.iter().filter(|c| c.worse).map(|c| c.figure).collect();
        let other = directions.is_empty().then_some(self.requests_differ);
        (directions, worse, other)
    }

    /// The hit's key, the one place it is written: `v1: device reads fewer, pages per folio
    /// more; worse on windows`, or `v1: same totals, other requests`.
    pub fn key(&self) -> String {
        let (directions, worse, other) = self.pattern();
        let said: Vec<String> =
            directions.iter().map(|(f, more)| format!("{f} {}", if *more { "more" } else { "fewer" })).collect();
        let said = match other {
            None => said.join(", "),
            Some(true) => "same totals, other requests".to_string(),
            Some(false) => "same totals, other folios".to_string(),
        };
        let worse: Vec<&str> = worse.iter().map(|f| f.name()).collect();
        let worse = if worse.is_empty() { String::new() } else { format!("; worse on {}", worse.join(", ")) };
        format!("{}: {said}{worse}", self.variant)
    }

    /// The variant-change hit this is: its key rendered, its strength the largest relative
    /// change of a figure.
    pub fn hit(self) -> Hit {
        let detail: Vec<String> = self
            .changes
            .iter()
            .map(|c| format!("{} {} -> {}", c.figure, fmt_num(c.base), fmt_num(c.variant)))
            .collect();
        let strength =
            self.changes.iter().map(|c| (c.variant - c.base).abs() / c.base.abs().max(1.0)).fold(0.0, f64::max);
        Hit {
            detector: "variant-change",
            key: self.key(),
            strength,
            detail: format!(
                "{} against base: {}",
                self.variant,
                if detail.is_empty() { "requests or folios differ, totals equal".into() } else { detail.join(", ") }
            ),
            change: Some(self),
        }
    }
}

/// Variant change: any difference in device requests or folios between the base's trace
/// and a variant's, with its direction on each figure. The key lists the directions
/// (`device reads fewer, pages per folio more`), so findings group by what changed how.
pub fn variant_change(base: &Trace, variant: &Trace, name: &str) -> Option<Hit> {
    if !requests_or_folios_differ(base, variant) {
        return None;
    }
    let requests_differ = base.requests().ne(variant.requests());
    Some(VariantChange { variant: name.to_string(), changes: changes(base, variant), requests_differ }.hit())
}
