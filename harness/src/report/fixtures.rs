//! Hand-made traces, runs and a heading shared by the report's unit tests.

use radiff_model::{Folio, RaState, Request, Submit, Trace, Trigger, Window};

use super::markdown::Heading;
use super::stats::{Cell, Sample};
use crate::summary::Figures;

/// A trace of `windows` windows, each one data read of `sectors` and one folio of
/// `order`, plus one metadata read in the first window.
pub(super) fn trace(windows: u64, sectors: u64, order: u32) -> Trace {
    let mut t = Trace {
        windows: (0..windows)
            .map(|i| Window {
                file: 0,
                trigger: if i == 0 { Trigger::Sync } else { Trigger::Async },
                index: i << order,
                req_count: 256,
                ra: RaState::default(),
                submits: vec![Submit::Order { index: i << order, size: 1 << order, async_size: 1 << order, order }],
                folios: vec![Folio { index: i << order, order }],
                requests: vec![Request { sector: 1000 + i * sectors, sectors, rwbs: "RA".into() }],
            })
            .collect(),
    };
    t.windows[0].requests.push(Request { sector: 8, sectors: 8, rwbs: "RM".into() });
    t
}

pub(super) fn sample(t: &Trace, ms: u64) -> Sample {
    Sample::of(t, ms * 1_000_000, false)
}

/// base: 40 windows of 4-page (o2) folios read as 32 KiB; v1: 10 windows of 16-page
/// (o4) folios read as 128 KiB: the same 1.25 MiB in a quarter of the reads.
pub(super) fn cells(runs_ms: &[(u64, u64)]) -> Vec<Cell> {
    let (base, v1) = (trace(40, 64, 2), trace(10, 256, 4));
    vec![
        Cell { point: None, variant: "base".into(), samples: runs_ms.iter().map(|&(b, _)| sample(&base, b)).collect() },
        Cell {
            point: None,
            variant: "async-align-v1".into(),
            samples: runs_ms.iter().map(|&(_, v)| sample(&v1, v)).collect(),
        },
    ]
}

pub(super) fn heading() -> Heading {
    Heading {
        title: "t: test reads".into(),
        environment: "kernel 7.3.4+ under QEMU TCG, 2 vCPUs".into(),
        variants: vec!["base".into(), "async-align-v1".into()],
    }
}

/// An mmap-like trace: `faults` fault windows of 32 pages each (read-around, one
/// 128 KiB read, order-2 folios), each followed by `arounds` fault-around ranges of 16
/// pages.
pub(super) fn fault_trace(faults: u64, arounds: u64) -> Trace {
    let mut windows = Vec::new();
    for i in 0..faults {
        let mut w = Window::open(Trigger::Fault, i * 32, 1, RaState::default());
        w.submits.push(Submit::Order { index: i * 32, size: 32, async_size: 8, order: 2 });
        w.folios = (0..8).map(|k| Folio { index: i * 32 + 4 * k, order: 2 }).collect();
        w.requests.push(Request { sector: 1000 + i * 256, sectors: 256, rwbs: "RA".into() });
        windows.push(w);
        for k in 0..arounds {
            windows.push(Window::open(Trigger::FaultAround, i * 32 + 16 * (k % 2), 16, RaState::default()));
        }
    }
    Trace { windows }
}

/// Figures written by hand: data reads, metadata reads, bytes, windows and folios by
/// order (the folio total is their sum); no faults.
pub(super) fn figures(
    data_reads: u64,
    metadata_reads: u64,
    bytes_read: u64,
    windows: u64,
    orders: &[(u32, u64)],
) -> Figures {
    Figures {
        data_reads,
        metadata_reads,
        bytes_read,
        windows,
        folio_orders: orders.iter().copied().collect(),
        folios: orders.iter().map(|(_, n)| n).sum(),
        ..Figures::default()
    }
}

/// A cell of runs of the same figures, one per guest time (in milliseconds).
pub(super) fn cell_of(point: Option<&str>, variant: &str, f: &Figures, times_ms: &[u64]) -> Cell {
    Cell {
        point: point.map(str::to_string),
        variant: variant.into(),
        samples: times_ms
            .iter()
            .map(|ms| Sample {
                figures: f.clone(),
                pattern_ns: ms * 1_000_000,
                raced: false,
                pages: Default::default(),
            })
            .collect(),
    }
}
