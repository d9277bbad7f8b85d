//! Reports for a patch's changelog: figures per variant and matrix point (median and
//! spread of N runs, change against the first variant), a summary sentence, an SVG of
//! the windows, and a regression view over every scenario (`--all`).
//!
//! One part per edge. The pure parts are tested without a VM: `stats` (runs, rows,
//! medians, spreads, changes, differences), `markdown` (the tables and the environment
//! line), `sentences` (the summary paragraph), `all` (the `--all` view),
//! `picture` (the page range and the SVG) and `plan` (which runs go to which boot, and
//! the folders of repeated runs). `runs` boots the VMs through the
//! [`Lab`](crate::run::Lab), each kernel once per boot of up to
//! [`BATCH_POINTS`](crate::run::BATCH_POINTS) runs; `command` checks the arguments and is
//! the only part that prints. Everything a caller uses is re-exported here.

mod all;
mod command;
#[cfg(test)]
mod fixtures;
mod markdown;
mod picture;
mod plan;
mod runs;
mod sentences;
mod stats;

pub use all::{render_all, PointOutcome};
pub use command::{report_command, Options};
pub use markdown::{environment, markdown, Heading, FAULTS_NOTE};
pub use picture::{page_range, picture};
pub use runs::{run_points, PointRuns};
pub use sentences::summary;
pub use stats::{differences, percent, rows, Cell, Col, Difference, Row, Sample, Stat, FAULT_COLS, IQR_FROM};

// The tests below cross parts: a matrix's table and sentences, and the fault columns in
// the table, the sentences and the differences.

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::*;

    #[test]
    fn the_table_has_a_point_column_for_a_matrix_and_compares_within_a_point() {
        let mut c = cells(&[(250, 180)]);
        let mut d = cells(&[(100, 100)]);
        for x in &mut c {
            x.point = Some("max_sectors_kb=1024".into());
        }
        for x in &mut d {
            x.point = Some("max_sectors_kb=2048".into());
        }
        // At 2048 the variant's reads are those of base: no change there.
        d[1].samples = d[0].samples.clone();
        let rows = rows(&[c, d].concat());
        let md = markdown(&heading(), &rows);
        assert!(md.contains("| point | variant | device reads |"), "{md}");
        assert!(md.contains("| max_sectors_kb=1024 | async-align-v1 | 10 (-75%) | 1 (0%) | 1.2 MiB (0%) | 10 (-75%) | 0.180 s (-28%) |"), "{md}");
        assert!(md.contains("| max_sectors_kb=2048 | base | 40 | 1 | 1.2 MiB | 40 | 0.100 s |"), "{md}");
        assert!(
            md.contains(
                "| max_sectors_kb=2048 | async-align-v1 | 40 (0%) | 1 (0%) | 1.2 MiB (0%) | 40 (0%) | 0.100 s (0%) |"
            ),
            "{md}"
        );
        assert!(md.contains("\nOne run each; (change against base)."), "{md}");
        let text = summary("test reads", &heading().variants, &rows);
        assert!(
            text.contains(
                "test reads at max_sectors_kb=1024: async-align-v1 issues 75% fewer device reads than base (10 vs 40)"
            ),
            "{text}"
        );
        assert!(text.contains("test reads at max_sectors_kb=2048: async-align-v1 issues as many device reads as base (40) for the same 1.2 MiB; its reads take as long in the guest (0.100 s, one run each); it adds the same folios (40)."), "{text}");
    }

    #[test]
    fn fault_columns_only_when_a_run_faulted() {
        // base: 4 faults and 8 ranges over 128 pages; v1: 2 faults, 6 ranges, over 96.
        let fault_cells = vec![
            Cell { point: None, variant: "base".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "async-align-v1".into(), samples: vec![sample(&fault_trace(2, 3), 100)] },
        ];
        let rows = rows(&fault_cells);
        assert!(rows.iter().all(Row::has_faults));
        assert_eq!(
            (rows[0].median(Col::Faults), rows[0].median(Col::FaultArounds), rows[0].median(Col::FaultAroundPages)),
            (4.0, 8.0, 128.0)
        );
        let md = markdown(&heading(), &rows);
        let expected = "\
t: test reads
kernel 7.3.4+ under QEMU TCG, 2 vCPUs

| variant | device reads | metadata reads | bytes read | windows | faults | fault-around ranges | fault-around pages | guest time |
|:--|--:|--:|--:|--:|--:|--:|--:|--:|
| base | 4 | 0 | 0.5 MiB | 0 | 4 | 8 | 128 | 0.100 s |
| async-align-v1 | 2 (-50%) | 0 (0%) | 0.2 MiB (-50%) | 0 (0%) | 2 (-50%) | 6 (-25%) | 96 (-25%) | 0.100 s (0%) |

| variant | folios | order 2 |
|:--|--:|--:|
| base | 32 | 32 |
| async-align-v1 | 16 (-50%) | 16 (-50%) |

One run each; (change against base). Device reads are data reads; metadata reads (REQ_META) are counted apart. \
Guest time is the wall time of the reads inside the guest. Windows are those of page_cache_sync_ra/page_cache_async_ra \
calls; faults are mm_filemap_fault events (a fault retried after readahead dropped the mmap lock counts twice); \
fault-around ranges are mm_filemap_map_pages events, and fault-around pages the pages those ranges cover (the event \
does not say how many it mapped).
";
        assert_eq!(md, expected, "\n{md}");
        let text = summary("touches", &heading().variants, &rows);
        assert!(
            text.contains("(2 vs 4) and reads 50% fewer bytes (0.2 MiB vs 0.5 MiB); it takes 50% fewer faults (2 vs 4) and 25% fewer fault-around ranges (6 vs 8, over 96 pages vs 128); its reads take"),
            "{text}"
        );
        let cols: Vec<Col> = differences(&rows[0], &rows[1]).iter().map(|d| d.col).collect();
        assert_eq!(
            cols,
            vec![
                Col::DataReads,
                Col::Bytes,
                Col::Faults,
                Col::FaultArounds,
                Col::FaultAroundPages,
                Col::Folios,
                Col::Order(2)
            ]
        );

        // A variant that did not fault beside one that did shows 0, and equal faults say so.
        let mixed = crate::report::rows(&[
            Cell { point: None, variant: "base".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "async-align-v1".into(), samples: vec![sample(&fault_trace(4, 2), 100)] },
            Cell { point: None, variant: "pread".into(), samples: vec![sample(&trace(4, 256, 2), 100)] },
        ]);
        assert!(mixed.iter().all(Row::has_faults));
        let md = markdown(&heading(), &mixed);
        assert!(md.contains("| pread | 4 (0%) | 1 (new) | 0.5 MiB (0%) | 4 (new) | 0 (-100%) | 0 (-100%) | 0 (-100%) | 0.100 s (0%) |"), "{md}");
        let text = summary("touches", &heading().variants, &mixed);
        assert!(
            text.contains("it takes as many faults (4) and as many fault-around ranges (8, over 128 pages);"),
            "{text}"
        );

        // Pread runs alone: no fault column, no fault words (the_markdown_table has the text).
        let pread = crate::report::rows(&cells(&[(250, 180)]));
        assert!(!pread.iter().any(Row::has_faults));
        let (md, text) = (markdown(&heading(), &pread), summary("x", &heading().variants, &pread));
        assert!(!md.contains("fault") && !text.contains("fault"), "{md}{text}");
    }
}
