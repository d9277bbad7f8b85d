//! The grammar: a seeded generator of scenarios over what the scenario schema can say.
//!
//! A generated scenario is a [`Gen`]: a small struct that renders to YAML text in the
//! repository's schema ([`Gen::yaml`]) and is then parsed by
//! [`crate::scenario::Scenario::parse`], so every scenario the search predicts is one a
//! trial can replay, checked by the same code.
//!
//! The grammar is context free over steps: a scenario is a setting (device, file system,
//! file, queue) and 1 to [`MAX_STEPS`] steps, each drawn independently from
//! [`PRODUCTIONS`]. Each production draws its own numbers from generic tables (sizes,
//! counts, advice); nothing here names a whole access pattern. A new step kind (mmap,
//! madvise, readahead(2), several files) joins as a [`GenStep`] variant, its rendering in
//! [`GenStep::yaml`], and one more entry in [`PRODUCTIONS`].

use std::fmt::Write;
use std::path::Path;

use radiff_model::pattern::SplitMix64;
use radiff_model::{Advice, FsKind, MadvAdvice, ThpMode};

use crate::scenario::{Scenario, Size};

mod collapse;
pub mod failalloc;
mod faultpath;
mod render;
mod rwf;
mod splice;

pub use collapse::COLLAPSE_ONE_IN;
use faultpath::{exec_family, large_block_family};
pub use faultpath::{EXEC_ONE_IN, LARGE_BLOCKS_ONE_IN};
use render::on_first_file;
pub use render::{advice_name, madv_name, thp_name};
pub use splice::{SPLICE_ONE_IN, SPLICE_PRODUCTIONS};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// At most this many steps in a generated scenario.
pub const MAX_STEPS: usize = 4;

/// The device of a generated scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenDevice {
    /// QEMU NVMe with this transfer limit (bytes).
    Nvme { transfer_limit: u64 },
    /// QEMU UFS (fixed 1 MiB transfer limit).
    Ufs,
}

impl GenDevice {
    /// The largest `max_sectors_kb` the device allows.
    pub fn max_kb(self) -> u64 {
        match self {
            GenDevice::Nvme { transfer_limit } => transfer_limit / KIB,
            GenDevice::Ufs => crate::scenario::UFS_TRANSFER_LIMIT / KIB,
        }
    }
}

/// Where a step starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Start {
    /// An absolute byte offset.
    At(u64),
    /// Where the previous step's last read ended (0 for the first step).
    Continue,
}

/// One generated step. Offsets and sizes are bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GenStep {
    /// One read.
    Read { at: Start, size: u64 },
    /// Sequential reads of `size` from `at` to the end of the file, or `len` bytes.
    Sequential { at: Start, size: u64, len: Option<u64> },
    /// `count` random reads of sizes `min..=max` (multiples of `align`).
    Random { count: u64, min: u64, max: u64, align: u64, seed: u64 },
    /// `streams` interleaved streams of `size` reads, evenly spaced (the schema's default starts).
    Interleaved { streams: u32, size: u64, separate_fds: bool },
    /// One fadvise over the whole file, or over `range` (offset, length in bytes; either
    /// end may fall inside a page).
    Fadvise { advice: Advice, range: Option<(u64, u64)> },
    /// The whole file mapped (a mapping of its own), `madvise`d over all of it when
    /// `advice` says, and its pages touched in `order`.
    /// `exec`: PROT_EXEC too (the fault-path family decides it, see [`generate`]).
    Map { shared: bool, advice: Option<MadvAdvice>, order: GenTouch, exec: bool },
    /// One `readahead(2)` of `size` at `at`.
    Readahead { at: u64, size: u64 },
    /// Two files read in alternation, `size` at a time, each from its start to its end
    /// through a descriptor of its own (the two-file family's step; see [`Gen::files`]).
    Alternate { size: u64 },
    /// `size` bytes from `at` spliced into a pipe of `pipe` bytes (sendfile(2) when
    /// `sendfile`), the pipe drained after each call.
    Splice { at: Start, size: u64, pipe: u64, sendfile: bool },
    /// A read of `size` at `at` with preadv2 flags or O_DIRECT (`how`; see generate/rwf.rs).
    ReadWith { at: Start, size: u64, how: radiff_model::ReadHow },
    /// `fail_alloc`: the next `times` allocations of order `min_order` or more fail ([`failalloc`]).
    FailAlloc { times: u32, min_order: u32 },
}

/// The order a [`GenStep::Map`] touches its mapping's pages in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenTouch {
    Sequential,
    Backward,
    /// One page every `stride` bytes.
    Stride {
        stride: u64,
    },
    /// `count` pages drawn at random.
    Random {
        count: u64,
        seed: u64,
    },
}

/// A generated scenario.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gen {
    pub device: GenDevice,
    pub fs: FsKind,
    pub file_size: u64,
    pub write_size: u64,
    pub read_ahead_kb: u64,
    pub max_sectors_kb: u64,
    pub steps: Vec<GenStep>,
    /// `vm.fault_around_bytes` ([`DEFAULT_FAULT_AROUND`] is the kernel's default and is not
    /// written to the YAML).
    pub fault_around: u64,
    /// `vm.thp_enabled` (`Always`, radiff's kernels' default, is not written).
    pub thp: ThpMode,
    /// 1, or 2 for the two-file family: files `a` and `b` of `file_size` and
    /// `write_size` each; steps other than [`GenStep::Alternate`] read `a`.
    pub files: u32,
    /// `mkfs.block_size` (XFS only; `None`: mkfs's default, not written).
    pub block_size: Option<u64>,
}

/// mm/memory.c's default fault_around_bytes (64 KiB).
pub const DEFAULT_FAULT_AROUND: u64 = 64 * KIB;

/// A step production: its name (shown in signatures) and how it draws a step.
pub struct Production {
    pub name: &'static str,
    /// Relative weight among productions.
    pub weight: u64,
    pub draw: fn(&mut SplitMix64, &Gen) -> GenStep,
}

/// Every step production, with its weight.
pub const PRODUCTIONS: &[Production] = &[
    Production { name: "read", weight: 3, draw: draw_read },
    Production { name: "sequential", weight: 4, draw: draw_sequential },
    Production { name: "random", weight: 2, draw: draw_random },
    Production { name: "interleaved", weight: 2, draw: draw_interleaved },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];

/// The productions of a scenario of the mapping family (see [`generate`]).
pub const MMAP_PRODUCTIONS: &[Production] = &[
    Production { name: "mmap", weight: 5, draw: draw_map },
    Production { name: "readahead", weight: 1, draw: draw_readahead },
    Production { name: "read", weight: 1, draw: draw_read },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];

/// One scenario in this many is of the mapping family (drawn from a generator of its own,
/// so the other scenarios of a seed are the ones they were before the family existed).
pub const MMAP_ONE_IN: u64 = 4;

/// The productions of the two-file family: two files read in alternation, among steps on
/// the first file.
pub const TWO_FILE_PRODUCTIONS: &[Production] = &[
    Production { name: "alternate", weight: 3, draw: draw_alternate },
    Production { name: "read", weight: 1, draw: draw_read },
    Production { name: "sequential", weight: 1, draw: draw_sequential },
    Production { name: "random", weight: 1, draw: draw_random },
    Production { name: "fadvise", weight: 1, draw: draw_fadvise },
];

/// One scenario in this many of those outside the mapping family is of the two-file
/// family (its own generator, as for [`MMAP_ONE_IN`]).
pub const TWO_FILES_ONE_IN: u64 = 6;

/// `fault_around_bytes` values, the default most often.
pub const FAULT_AROUND: &[u64] = &[4 * KIB, 16 * KIB, 64 * KIB, 64 * KIB, 64 * KIB, 256 * KIB];

/// Read sizes the grammar draws from: powers of two and a few in between, 4 KiB to 4 MiB.
pub const READ_SIZES: &[u64] = &[
    4 * KIB,
    8 * KIB,
    12 * KIB,
    16 * KIB,
    32 * KIB,
    48 * KIB,
    64 * KIB,
    96 * KIB,
    128 * KIB,
    192 * KIB,
    256 * KIB,
    384 * KIB,
    512 * KIB,
    768 * KIB,
    MIB,
    3 * MIB / 2,
    2 * MIB,
    3 * MIB,
    4 * MIB,
];

/// File sizes: few and small, so disk images are reused and confirming on a VM is cheap.
pub const FILE_SIZES: &[u64] = &[8 * MIB, 32 * MIB, 128 * MIB];

/// Sizes of the O_DIRECT writes that lay out the file.
pub const WRITE_SIZES: &[u64] = &[64 * KIB, MIB, 2 * MIB];

/// `read_ahead_kb` values, the kernel's default (128) most often.
pub const READ_AHEAD_KB: &[u64] = &[0, 4, 32, 128, 128, 128, 256, 512, 1024, 2048];

/// `max_sectors_kb` values (those above the device's limit are not drawn).
pub const MAX_SECTORS_KB: &[u64] = &[32, 64, 128, 256, 512, 1024, 2048];

/// Device size: large enough for the largest file (see `Scenario::parse`).
pub const DEVICE_SIZE: u64 = 1 << 30;

fn pick<T: Copy>(rng: &mut SplitMix64, table: &[T]) -> T {
    table[rng.below(table.len() as u64) as usize]
}

/// A page-aligned offset in the first `limit` bytes, or 0, or the start of a page near it.
fn draw_offset(rng: &mut SplitMix64, limit: u64) -> u64 {
    match rng.below(3) {
        0 => 0,
        1 => pick(rng, READ_SIZES).min(limit / 2) / 4096 * 4096,
        _ => rng.below((limit / 4096).max(1)) * 4096,
    }
}

fn draw_from(rng: &mut SplitMix64, g: &Gen) -> Start {
    if rng.below(2) == 0 {
        Start::Continue
    } else {
        Start::At(draw_offset(rng, g.file_size / 2))
    }
}

fn draw_read(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    GenStep::Read { at: draw_from(rng, g), size: pick(rng, READ_SIZES) }
}

fn draw_sequential(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    let len = match rng.below(3) {
        0 => Some(g.file_size / [2, 4, 8][rng.below(3) as usize]),
        _ => None,
    };
    GenStep::Sequential { at: draw_from(rng, g), size: pick(rng, READ_SIZES), len }
}

fn draw_random(rng: &mut SplitMix64, _: &Gen) -> GenStep {
    let align = pick(rng, &[4 * KIB, 4 * KIB, 64 * KIB]);
    let a = pick(rng, READ_SIZES).max(align) / align * align;
    let b = if rng.below(2) == 0 { a } else { pick(rng, READ_SIZES).max(align) / align * align };
    let count = pick(rng, &[16, 64, 256, 1024]);
    GenStep::Random { count, min: a.min(b), max: a.max(b), align, seed: rng.below(1000) }
}

fn draw_interleaved(rng: &mut SplitMix64, _: &Gen) -> GenStep {
    GenStep::Interleaved {
        streams: 2 + rng.below(3) as u32,
        size: pick(rng, READ_SIZES),
        separate_fds: rng.below(2) == 0,
    }
}

fn draw_fadvise(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    let advice = pick(
        rng,
        &[Advice::Normal, Advice::Random, Advice::Sequential, Advice::Willneed, Advice::Dontneed, Advice::Noreuse],
    );
    // Half the hints that act on a range (WILLNEED reads it, DONTNEED drops the folios
    // wholly inside it) get one, its ends inside a page or not: generic_fadvise()'s
    // "first and last PARTIAL page" and "first and last FULL page" roundings.
    let range = (matches!(advice, Advice::Willneed | Advice::Dontneed) && rng.below(2) == 0).then(|| {
        let offset = draw_offset(rng, g.file_size / 2) + pick(rng, &[0, 0, 512, 3000]);
        (offset, pick(rng, &[64 * KIB, MIB, 4 * MIB]) + pick(rng, &[0, 0, 100]))
    });
    GenStep::Fadvise { advice, range }
}

fn draw_map(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    let order = match rng.below(6) {
        0 | 1 => GenTouch::Sequential,
        2 => GenTouch::Backward,
        3 => GenTouch::Stride { stride: pick(rng, &[8 * KIB, 64 * KIB, 2 * MIB]) },
        _ => {
            GenTouch::Random { count: pick(rng, &[64, 256, 1024, 4096]).min(g.file_size / 4096), seed: rng.below(1000) }
        }
    };
    let advice = pick(
        rng,
        &[
            None,
            None,
            Some(MadvAdvice::Sequential),
            Some(MadvAdvice::Random),
            Some(MadvAdvice::Hugepage),
            Some(MadvAdvice::Willneed),
            Some(MadvAdvice::Normal),
            Some(MadvAdvice::Nohugepage),
        ],
    );
    GenStep::Map { shared: rng.below(4) != 0, advice, order, exec: false }
}

fn draw_alternate(rng: &mut SplitMix64, _: &Gen) -> GenStep {
    GenStep::Alternate { size: pick(rng, READ_SIZES) }
}

fn draw_readahead(rng: &mut SplitMix64, g: &Gen) -> GenStep {
    GenStep::Readahead { at: draw_offset(rng, g.file_size / 2), size: pick(rng, READ_SIZES) }
}

/// Draws the `index`-th scenario of the search named by `seed`. Each scenario has its
/// own generator (seeded from `seed` and `index`), so scenario N is the same whatever the
/// budget or the order the search runs in.
pub fn generate(seed: u64, index: u64) -> Gen {
    let mut rng = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x5eed)).next_u64());
    let device = match rng.below(4) {
        0 => GenDevice::Ufs,
        1 => GenDevice::Nvme { transfer_limit: 2 * MIB },
        _ => GenDevice::Nvme { transfer_limit: 512 * KIB },
    };
    let fs = pick(&mut rng, &[FsKind::Xfs, FsKind::Xfs, FsKind::Ext4, FsKind::F2fs]);
    let max_kb = device.max_kb();
    let allowed: Vec<u64> = MAX_SECTORS_KB.iter().copied().filter(|&m| m <= max_kb).collect();
    let mut g = Gen {
        device,
        fs,
        file_size: pick(&mut rng, FILE_SIZES),
        write_size: pick(&mut rng, WRITE_SIZES),
        read_ahead_kb: pick(&mut rng, READ_AHEAD_KB),
        max_sectors_kb: pick(&mut rng, &allowed),
        steps: Vec::new(),
        fault_around: DEFAULT_FAULT_AROUND,
        thp: ThpMode::Always,
        files: 1,
        block_size: None,
    };
    let n = 1 + rng.below(MAX_STEPS as u64) as usize;
    draw_steps(&mut rng, &mut g, PRODUCTIONS, n);
    // The mapping family: its own generator decides, and draws its steps and settings.
    let mut family = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x6d6d_6170)).next_u64());
    if family.below(MMAP_ONE_IN) == 0 {
        g.steps.clear();
        let n = 1 + family.below(3) as usize;
        draw_steps(&mut family, &mut g, MMAP_PRODUCTIONS, n);
        if !g.steps.iter().any(|s| matches!(s, GenStep::Map { .. })) {
            let step = draw_map(&mut family, &g);
            g.steps.push(step);
        }
        g.fault_around = pick(&mut family, FAULT_AROUND);
        g.thp = pick(&mut family, &[ThpMode::Always, ThpMode::Always, ThpMode::Madvise, ThpMode::Never]);
        exec_family(seed, index, &mut g);
        collapse::collapse_family(seed, index, &mut g);
    } else {
        // The two-file family, likewise.
        let mut family = SplitMix64::new(seed ^ SplitMix64::new(index.wrapping_add(0x6669_6c65)).next_u64());
        if family.below(TWO_FILES_ONE_IN) == 0 {
            g.steps.clear();
            g.files = 2;
            let n = 1 + family.below(3) as usize;
            draw_steps(&mut family, &mut g, TWO_FILE_PRODUCTIONS, n);
            if !g.steps.iter().any(|s| matches!(s, GenStep::Alternate { .. })) {
                let step = draw_alternate(&mut family, &g);
                g.steps.push(step);
            }
        } else {
            splice::splice_family(seed, index, &mut g);
            rwf::rwf_family(seed, index, &mut g);
        }
    }
    large_block_family(seed, index, &mut g);
    failalloc::fail_alloc_family(seed, index, &mut g);
    g.fix();
    g
}

fn draw_steps(rng: &mut SplitMix64, g: &mut Gen, productions: &[Production], n: usize) {
    let total: u64 = productions.iter().map(|p| p.weight).sum();
    for _ in 0..n {
        let mut r = rng.below(total);
        let production = productions.iter().find(|p| {
            if r < p.weight {
                true
            } else {
                r -= p.weight;
                false
            }
        });
        let step = (production.expect("weights cover the draw").draw)(rng, g);
        g.steps.push(step);
    }
}

impl GenStep {
    /// The production that makes this kind of step.
    pub fn kind(&self) -> &'static str {
        match self {
            GenStep::Read { .. } => "read",
            GenStep::Sequential { .. } => "sequential",
            GenStep::Random { .. } => "random",
            GenStep::Interleaved { separate_fds: false, .. } => "interleaved",
            GenStep::Interleaved { separate_fds: true, .. } => "interleaved-fds",
            GenStep::Fadvise { .. } => "fadvise",
            GenStep::FailAlloc { .. } => "fail-alloc",
            GenStep::Map { order: GenTouch::Sequential, .. } => "mmap-sequential",
            GenStep::Map { order: GenTouch::Backward, .. } => "mmap-backward",
            GenStep::Map { order: GenTouch::Stride { .. }, .. } => "mmap-stride",
            GenStep::Map { order: GenTouch::Random { .. }, .. } => "mmap-random",
            GenStep::Readahead { .. } => "readahead",
            GenStep::Alternate { .. } => "alternate",
            GenStep::Splice { .. } => "splice",
            GenStep::ReadWith { how, .. } => rwf::kind(*how),
        }
    }
}

impl Gen {
    /// Makes every step fit the file: sizes and absolute offsets are clamped so that every
    /// read lies inside it (a shrunk file keeps its steps valid). Idempotent.
    pub fn fix(&mut self) {
        let file = self.file_size;
        for step in &mut self.steps {
            match step {
                GenStep::Read { at, size } => {
                    *size = (*size).clamp(4096, file) / 4096 * 4096;
                    if let Start::At(o) = at {
                        *o = (*o).min(file - *size) / 4096 * 4096;
                    }
                }
                GenStep::Sequential { at, size, len } => {
                    *size = (*size).clamp(4096, file) / 4096 * 4096;
                    if let Start::At(o) = at {
                        if *o >= file {
                            *o = 0;
                        }
                        *o = *o / 4096 * 4096;
                    }
                    if let Some(l) = len {
                        *l = (*l).max(4096) / 4096 * 4096;
                    }
                }
                GenStep::Random { min, max, align, count, .. } => {
                    *max = (*max).min(file / 2) / *align * *align;
                    *min = (*min).min(*max).max(*align) / *align * *align;
                    *max = (*max).max(*min);
                    *count = (*count).max(1);
                }
                GenStep::Interleaved { size, streams, .. } => {
                    *streams = (*streams).clamp(2, 4);
                    *size = (*size).clamp(4096, file / 4) / 4096 * 4096;
                }
                GenStep::Fadvise { range, .. } => {
                    if let Some((offset, len)) = range {
                        // The schema takes a range inside the file.
                        *offset = (*offset).min(file - 1);
                        *len = (*len).clamp(1, file - *offset);
                    }
                }
                GenStep::FailAlloc { .. } => {}
                GenStep::Map { order, .. } => match order {
                    GenTouch::Stride { stride } => *stride = (*stride).clamp(8192, (file / 2).max(8192)) / 4096 * 4096,
                    GenTouch::Random { count, .. } => *count = (*count).clamp(1, file / 4096),
                    _ => {}
                },
                GenStep::Readahead { at, size } => {
                    *size = (*size).clamp(4096, file) / 4096 * 4096;
                    *at = (*at).min(file - *size) / 4096 * 4096;
                }
                GenStep::Alternate { size } => *size = (*size).clamp(4096, file / 4) / 4096 * 4096,
                GenStep::Splice { size, pipe, .. } => {
                    *size = (*size).clamp(4096, file) / 4096 * 4096;
                    *pipe = (*pipe).clamp(4096, MIB).next_power_of_two();
                }
                GenStep::ReadWith { size, how, .. } => rwf::fix(size, *how, file),
            }
        }
        // A second file exactly when a step reads it (shrinking a scenario's alternation
        // away leaves one file).
        self.files = if self.steps.iter().any(|s| matches!(s, GenStep::Alternate { .. })) { 2 } else { 1 };
        self.fault_around = self.fault_around.clamp(4096, 2 * MIB).next_power_of_two();
        collapse::fix(self);
    }

    /// Where each step starts and, for sequential steps, where it stops (`None`: the end of
    /// the file); `Start::Continue` resolved to where the previous step's reads ended.
    pub fn resolved(&self) -> Vec<(u64, Option<u64>)> {
        let file = self.file_size;
        let mut out = Vec::new();
        let mut end = 0;
        for step in &self.steps {
            let (start, to) = match step {
                GenStep::Read { at, size } => {
                    let o = match *at {
                        Start::At(o) => o,
                        Start::Continue => end.min(file - size) / 4096 * 4096,
                    };
                    end = o + size;
                    (o, None)
                }
                GenStep::Sequential { at, len, .. } => {
                    let o = match *at {
                        Start::At(o) => o,
                        Start::Continue if end >= file => 0,
                        Start::Continue => end,
                    };
                    let to = len.map(|l| o + l).filter(|&t| t < file);
                    end = to.unwrap_or(file);
                    (o, to)
                }
                GenStep::Random { .. } => {
                    end = 0;
                    (0, None)
                }
                GenStep::Interleaved { .. } => {
                    end = file;
                    (0, None)
                }
                GenStep::Fadvise { .. } | GenStep::FailAlloc { .. } => (0, None),
                GenStep::Map { .. } => {
                    end = file;
                    (0, None)
                }
                GenStep::Readahead { at, size } => {
                    end = at + size;
                    (*at, None)
                }
                GenStep::Alternate { .. } => {
                    end = file;
                    (0, None)
                }
                GenStep::Splice { at, size, .. } | GenStep::ReadWith { at, size, .. } => {
                    let o = match *at {
                        Start::At(o) => o.min(file - size) / 4096 * 4096,
                        Start::Continue => end.min(file - size) / 4096 * 4096,
                    };
                    end = o + size;
                    (o, None)
                }
            };
            out.push((start, to));
        }
        out
    }

    /// "read+sequential": the kinds of its steps, in order (part of a finding's signature).
    pub fn shape(&self) -> String {
        self.steps.iter().map(GenStep::kind).collect::<Vec<_>>().join("+")
    }

    /// A one-line description (the scenario's `description`).
    pub fn describe(&self) -> String {
        let starts = self.resolved();
        let steps: Vec<String> =
            self.steps.iter().zip(&starts).map(|(s, &(from, to))| s.describe(from, to, self.file_size)).collect();
        let device = match self.device {
            GenDevice::Nvme { transfer_limit } => format!("NVMe ({} limit)", Size(transfer_limit)),
            GenDevice::Ufs => "UFS".into(),
        };
        let mut vm = String::new();
        if self.fault_around != DEFAULT_FAULT_AROUND {
            let _ = write!(vm, ", fault_around_bytes {}", Size(self.fault_around));
        }
        if self.thp != ThpMode::Always {
            let _ = write!(vm, ", THP {}", thp_name(self.thp));
        }
        let blocks = self.block_size.map(|b| format!(" ({} blocks)", Size(b))).unwrap_or_default();
        format!(
            "{}, {}{blocks} on {device}, {}, read_ahead_kb {}, max_sectors_kb {}{vm}",
            steps.join(", then "),
            self.fs.name().to_uppercase().replace("F2FS", "f2fs").replace("EXT4", "ext4"),
            if self.files == 2 {
                format!("two {} files", Size(self.file_size))
            } else {
                format!("{} file", Size(self.file_size))
            },
            self.read_ahead_kb,
            self.max_sectors_kb
        )
    }

    /// The scenario as YAML in the repository's schema, with `variants` and a leading
    /// `comment` (each line prefixed with `# `).
    pub fn yaml(&self, comment: &str, variants: &[String]) -> String {
        let mut s = String::new();
        for line in comment.lines() {
            let _ = writeln!(s, "# {line}");
        }
        let _ = writeln!(s, "description: {}", self.describe());
        let _ = writeln!(s, "device:");
        match self.device {
            GenDevice::Nvme { transfer_limit } => {
                let _ = writeln!(
                    s,
                    "  kind: nvme\n  size: {}\n  transfer_limit: {}",
                    Size(DEVICE_SIZE),
                    Size(transfer_limit)
                );
            }
            GenDevice::Ufs => {
                let _ = writeln!(s, "  kind: ufs\n  size: {}", Size(DEVICE_SIZE));
            }
        }
        let _ = writeln!(s, "filesystem: {}", self.fs.name());
        if let Some(b) = self.block_size {
            let _ = writeln!(s, "mkfs:\n  block_size: {}", Size(b));
        }
        if self.files == 2 {
            let _ = writeln!(s, "files:");
            for name in ["a", "b"] {
                let _ = writeln!(
                    s,
                    "  - {{name: {name}, size: {}, write_size: {}}}",
                    Size(self.file_size),
                    Size(self.write_size)
                );
            }
        } else {
            let _ = writeln!(s, "file:\n  size: {}\n  write_size: {}", Size(self.file_size), Size(self.write_size));
        }
        let _ =
            writeln!(s, "queue:\n  read_ahead_kb: {}\n  max_sectors_kb: {}", self.read_ahead_kb, self.max_sectors_kb);
        if self.fault_around != DEFAULT_FAULT_AROUND || self.thp != ThpMode::Always {
            let _ = writeln!(s, "vm:");
            if self.fault_around != DEFAULT_FAULT_AROUND {
                let _ = writeln!(s, "  fault_around_bytes: {}", Size(self.fault_around));
            }
            if self.thp != ThpMode::Always {
                let _ = writeln!(s, "  thp_enabled: {}", thp_name(self.thp));
            }
        }
        let _ = writeln!(s, "reads:");
        let mut maps = 0;
        for (step, &(from, to)) in self.steps.iter().zip(&self.resolved()) {
            for item in step.yaml_items(from, to, &mut maps) {
                let item = if self.files == 2 { on_first_file(item) } else { item };
                let _ = writeln!(s, "  - {item}");
            }
        }
        if !variants.is_empty() {
            let _ = writeln!(s, "variants: [{}]", variants.join(", "));
        }
        s
    }

    /// The scenario, parsed from its YAML as if it were `DIR/name.yaml`.
    pub fn scenario(&self, dir: &Path, name: &str, comment: &str, variants: &[String]) -> crate::Result<Scenario> {
        Scenario::parse(&dir.join(format!("{name}.yaml")), &self.yaml(comment, variants))
    }
}
