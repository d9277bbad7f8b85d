//! The picture of a report: which pages it shows, and the SVG of each point's windows.

use std::ops::Range;

use radiff_model::Trace;

use crate::error::{Error, Result};

/// `A..B` (page indices, B exclusive) clamped to the file's pages; the default is the
/// first 4096 pages. Returns the range and how to describe it in a title.
pub fn page_range(arg: Option<&str>, file_pages: u64) -> Result<(Range<u64>, String)> {
    const DEFAULT: u64 = 4096;
    let file_pages = file_pages.max(1);
    let Some(arg) = arg else {
        return Ok(if file_pages <= DEFAULT {
            (0..file_pages, format!("pages 0..{file_pages}, the whole file"))
        } else {
            (0..DEFAULT, format!("pages 0..{DEFAULT} of {file_pages} (the first {DEFAULT}; choose with --pages A..B)"))
        });
    };
    let bad = || {
        Error::Other(format!(
            "--pages {arg}: give page indices A..B with A < B (4 KiB pages; the file has {file_pages})"
        ))
    };
    let (a, b) = arg.split_once("..").ok_or_else(bad)?;
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    if a >= b || a >= file_pages {
        return Err(bad());
    }
    let b = b.min(file_pages);
    Ok((a..b, format!("pages {a}..{b} of {file_pages}")))
}

/// A matrix point's label (None for a scenario without a matrix) and each variant's trace there.
pub type PointTraces = (Option<String>, Vec<(String, Trace)>);

/// The SVG of a scenario: a section per matrix point, a series per variant.
pub fn picture(title: &str, subtitle: &str, pages: Range<u64>, traces: &[PointTraces]) -> String {
    let sections: Vec<crate::svg::Section> = traces
        .iter()
        .map(|(label, series)| crate::svg::Section {
            label: label.as_deref(),
            series: series.iter().map(|(v, t)| crate::svg::Series { variant: v, trace: t }).collect(),
        })
        .collect();
    crate::svg::render(title, subtitle, pages, &sections)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::*;

    #[test]
    fn page_ranges() {
        assert_eq!(
            page_range(None, 131072).unwrap(),
            (0..4096, "pages 0..4096 of 131072 (the first 4096; choose with --pages A..B)".into())
        );
        assert_eq!(page_range(None, 100).unwrap(), (0..100, "pages 0..100, the whole file".into()));
        assert_eq!(page_range(Some("512..1024"), 131072).unwrap().0, 512..1024);
        assert_eq!(page_range(Some("0..999999"), 131072).unwrap(), (0..131072, "pages 0..131072 of 131072".into()));
        assert!(page_range(Some("9..9"), 131072).is_err());
        assert!(page_range(Some("200000..300000"), 131072).is_err());
        assert!(page_range(Some("x"), 131072).unwrap_err().to_string().contains("A..B"));
    }

    #[test]
    fn a_picture_has_a_section_per_point_and_a_marker_per_window() {
        let traces = vec![
            (
                Some("max_sectors_kb=1024".to_string()),
                vec![("base".to_string(), trace(40, 64, 2)), ("v1".to_string(), trace(10, 256, 4))],
            ),
            (
                Some("max_sectors_kb=2048".to_string()),
                vec![("base".to_string(), trace(40, 64, 2)), ("v1".to_string(), trace(10, 256, 4))],
            ),
        ];
        let (range, what) = page_range(None, 160).unwrap();
        let svg = picture("t: test", &what, range, &traces);
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert!(svg.contains(">pages 0..160, the whole file</text>"), "{svg}");
        assert_eq!(svg.matches(r#"class="legend-entry""#).count(), 2);
        assert!(svg.contains(">max_sectors_kb=1024</text>") && svg.contains(">max_sectors_kb=2048</text>"));
        // base: 40 windows of 4 pages, v1: 10 of 16 pages (all inside 160 pages), twice.
        assert_eq!(svg.matches("<title>base: [").count(), 80);
        assert_eq!(svg.matches("<title>v1: [").count(), 20);
        assert!(svg.contains("<title>v1: [144+16) order 4</title>"), "{svg}");
    }
}
