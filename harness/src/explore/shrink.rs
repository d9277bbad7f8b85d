//! Shrinking: from a scenario that fires a detector to a minimal one that still fires it,
//! by delta debugging over the generated struct, as property testing shrinks: drop steps,
//! make the file smaller, make numbers rounder and settings the defaults, keeping each
//! change that still fires and is simpler by [`cost`], until no change helps.

use radiff_model::FsKind;

use super::generate::{Gen, GenDevice, GenStep, GenTouch, Start, DEFAULT_FAULT_AROUND, FILE_SIZES};
use radiff_model::ThpMode;

/// How complex a scenario is, compared lexicographically: steps, file size, a count of
/// numbers that are not round and settings that are not the defaults, then the sizes. Every accepted
/// shrink lowers it, so shrinking ends.
pub fn cost(g: &Gen) -> (usize, u64, u64, u64) {
    let mut odd = 0u64;
    let round = |n: u64| n.is_power_of_two() as u64 ^ 1;
    // An offset costs 1, 2 when it is neither a power of two nor whole MiB.
    let offset = |at: &Start| match *at {
        Start::At(0) | Start::Continue => 0,
        Start::At(o) => 1 + (!o.is_power_of_two() && o % (1 << 20) != 0) as u64,
    };
    odd += (g.device != GenDevice::Nvme { transfer_limit: 512 << 10 }) as u64 * 2;
    odd += (g.fs != FsKind::Xfs) as u64 * 2;
    odd += (g.write_size != 1 << 20) as u64;
    odd += (g.read_ahead_kb != 128) as u64;
    odd += (g.max_sectors_kb != 512) as u64;
    odd += (g.fault_around != DEFAULT_FAULT_AROUND) as u64;
    odd += (g.thp != ThpMode::Always) as u64;
    odd += (g.files.max(1) as u64 - 1) * 2;
    for s in &g.steps {
        odd += match s {
            GenStep::Read { at, size } => round(*size) + offset(at),
            GenStep::Sequential { at, size, len } => round(*size) + offset(at) + len.is_some() as u64,
            GenStep::Random { count, min, max, align, .. } => {
                round(*min)
                    + round(*max)
                    + (min != max) as u64
                    + (*align != 4096) as u64
                    + (count.trailing_zeros() < 4) as u64
                    + (*count > 16) as u64 * 64u64.min(count / 16)
            }
            GenStep::Interleaved { streams, size, separate_fds } => {
                round(*size) + (*streams - 2) as u64 + *separate_fds as u64
            }
            GenStep::Fadvise { range, .. } => {
                1 + range.map_or(0, |(o, l)| 1 + (o % 4096 != 0) as u64 + (l % 4096 != 0) as u64)
            }
            GenStep::FailAlloc { times, min_order } => *times as u64 + (*min_order != 4) as u64,
            GenStep::Map { shared, advice, order, exec } => {
                (!shared) as u64
                    + *exec as u64
                    + advice.is_some() as u64
                    + match order {
                        GenTouch::Sequential => 0,
                        GenTouch::Backward => 1,
                        GenTouch::Stride { stride } => 1 + round(*stride),
                        GenTouch::Random { count, .. } => {
                            2 + (count.trailing_zeros() < 4) as u64 + (*count > 16) as u64 * 64u64.min(count / 16)
                        }
                    }
            }
            GenStep::Readahead { at, size } => round(*size) + (*at != 0) as u64,
            GenStep::Alternate { size } => round(*size),
            GenStep::Splice { at, size, pipe, sendfile } => {
                round(*size)
                    + matches!(at, Start::At(o) if *o != 0) as u64
                    + (*pipe != 64 * 1024) as u64
                    + *sendfile as u64
            }
            GenStep::ReadWith { at, size, .. } => round(*size) + matches!(at, Start::At(o) if *o != 0) as u64,
        };
    }
    let bytes: u64 = g
        .steps
        .iter()
        .map(|s| match s {
            GenStep::Read { size, .. } | GenStep::Sequential { size, .. } | GenStep::Interleaved { size, .. } => *size,
            GenStep::Random { max, count, .. } => *max + count,
            GenStep::Fadvise { .. } | GenStep::FailAlloc { .. } => 0,
            GenStep::Map { order: GenTouch::Random { count, .. }, .. } => count * 4096,
            GenStep::Map { .. } => 0,
            GenStep::Readahead { size, .. } | GenStep::Alternate { size } => *size,
            GenStep::Splice { size, .. } | GenStep::ReadWith { size, .. } => *size,
        })
        .sum();
    (g.steps.len(), g.file_size, odd, bytes)
}

fn pow2_floor(n: u64) -> u64 {
    1 << (63 - n.max(1).leading_zeros())
}

/// Edits that make one step simpler (each leaves other kinds of steps alone).
pub(super) const STEP_EDITS: &[fn(&mut GenStep)] = &[
    |s| match s {
        GenStep::Read { size, .. } | GenStep::Sequential { size, .. } | GenStep::Interleaved { size, .. } => {
            *size = pow2_floor(*size)
        }
        GenStep::Random { min, max, .. } => {
            *min = pow2_floor(*min);
            *max = pow2_floor(*max);
        }
        GenStep::Readahead { size, .. } | GenStep::Alternate { size } => *size = pow2_floor(*size),
        GenStep::Splice { size, .. } | GenStep::ReadWith { size, .. } => *size = pow2_floor(*size),
        GenStep::Map { order: GenTouch::Stride { stride }, .. } => *stride = pow2_floor(*stride),
        GenStep::Map { .. } | GenStep::Fadvise { .. } => {}
        GenStep::FailAlloc { times, .. } => *times = (*times / 2).max(1),
    },
    |s| match s {
        GenStep::Read { at, .. } | GenStep::Sequential { at, .. } => *at = Start::At(0),
        GenStep::Random { min, max, .. } => *max = *min,
        GenStep::Interleaved { streams, .. } => *streams = 2,
        GenStep::Readahead { at, .. } => *at = 0,
        GenStep::Splice { at, .. } | GenStep::ReadWith { at, .. } => *at = Start::At(0),
        GenStep::Map { order, .. } => *order = GenTouch::Sequential,
        GenStep::Fadvise { range, .. } => *range = None,
        GenStep::Alternate { .. } => {}
        GenStep::FailAlloc { min_order, .. } => *min_order = 4,
    },
    |s| match s {
        GenStep::Read { at, .. } | GenStep::Sequential { at, .. } => *at = Start::Continue,
        GenStep::Random { min, max, .. } => *min = *max,
        GenStep::Interleaved { separate_fds, .. } => *separate_fds = false,
        GenStep::Map { advice, .. } => *advice = None,
        GenStep::Splice { sendfile, .. } => *sendfile = false,
        GenStep::Readahead { .. }
        | GenStep::Fadvise { .. }
        | GenStep::Alternate { .. }
        | GenStep::ReadWith { .. }
        | GenStep::FailAlloc { .. } => {}
    },
    |s| match s {
        GenStep::Sequential { len, .. } => *len = None,
        GenStep::Random { count, .. } => *count = (*count / 2).max(16),
        GenStep::Map { order: GenTouch::Random { count, .. }, .. } => *count = (*count / 2).max(16),
        GenStep::Map { shared, .. } => *shared = true,
        GenStep::Splice { pipe, .. } => *pipe = 64 * 1024,
        _ => {}
    },
    |s| {
        if let GenStep::Random { align, min, max, .. } = s {
            *align = 4096;
            *min = (*min).max(4096);
            *max = (*max).max(*min);
        }
    },
    |s| {
        if let GenStep::Read { size, .. } | GenStep::Sequential { size, .. } | GenStep::Interleaved { size, .. } = s {
            *size = pow2_floor(*size / 2).max(4096);
        }
    },
    // Rounder offsets: a power of two, or whole MiB.
    |s| {
        if let GenStep::Read { at: Start::At(o), .. } | GenStep::Sequential { at: Start::At(o), .. } = s {
            *o = if *o > 0 { pow2_floor(*o) } else { 0 };
        }
    },
    |s| {
        if let GenStep::Read { at: Start::At(o), .. } | GenStep::Sequential { at: Start::At(o), .. } = s {
            *o = *o / (1 << 20) * (1 << 20);
        }
    },
];

/// Simpler neighbours of `g`, most promising first.
pub fn candidates(g: &Gen) -> Vec<Gen> {
    let mut out = Vec::new();
    let mut with = |f: &dyn Fn(&mut Gen)| {
        let mut c = g.clone();
        f(&mut c);
        c.fix();
        if c != *g {
            out.push(c);
        }
    };
    // Fewer steps.
    if g.steps.len() > 1 {
        for i in 0..g.steps.len() {
            with(&|c: &mut Gen| {
                c.steps.remove(i);
            });
        }
    }
    // A smaller file.
    for &size in FILE_SIZES.iter().filter(|&&s| s < g.file_size) {
        with(&|c: &mut Gen| c.file_size = size);
    }
    // Default settings.
    with(&|c: &mut Gen| c.fs = FsKind::Xfs);
    with(&|c: &mut Gen| {
        c.device = GenDevice::Nvme { transfer_limit: 512 << 10 };
        c.max_sectors_kb = c.max_sectors_kb.min(512);
    });
    with(&|c: &mut Gen| c.write_size = 1 << 20);
    with(&|c: &mut Gen| c.read_ahead_kb = 128);
    with(&|c: &mut Gen| c.max_sectors_kb = 512.min(c.device.max_kb()));
    with(&|c: &mut Gen| c.fault_around = DEFAULT_FAULT_AROUND);
    with(&|c: &mut Gen| c.thp = ThpMode::Always);
    // Rounder steps.
    for i in 0..g.steps.len() {
        for edit in STEP_EDITS {
            with(&|c: &mut Gen| edit(&mut c.steps[i]));
        }
    }
    out
}

/// Shrinks `g`, which fires (`fires(g)` is true), to a scenario that still fires and has
/// no simpler neighbour that does. `fires` is called at most `budget` times. Returns the
/// shrunk scenario and how many calls it took.
pub fn shrink(g: &Gen, mut fires: impl FnMut(&Gen) -> bool, budget: usize) -> (Gen, usize) {
    let mut cur = g.clone();
    let mut calls = 0;
    'outer: loop {
        for c in candidates(&cur) {
            if cost(&c) >= cost(&cur) {
                continue;
            }
            if calls == budget {
                break 'outer;
            }
            calls += 1;
            if fires(&c) {
                cur = c;
                continue 'outer;
            }
        }
        break;
    }
    (cur, calls)
}
