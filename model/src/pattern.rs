//! Access patterns: the steps a scenario names, expanded into the exact system calls.
//!
//! The guest and the model expand the same steps with the same function, so both
//! see the same offsets, including those of seeded random reads.

use serde::{Deserialize, Serialize};

/// How many descriptors one file may have: a scenario's file `f` is read through the
/// descriptors `f * FDS_PER_FILE ..` (`Op::Read { fd: 64, .. }` reads file 1 through
/// its first descriptor). With one file, fd numbers are the scenario's own.
pub const FDS_PER_FILE: u32 = 64;

/// The file (index among the scenario's files) descriptor `fd` is open on.
pub fn file_of(fd: u32) -> u32 {
    fd / FDS_PER_FILE
}

/// Descriptor `n` of file `file`.
pub fn fd_of(file: u32, n: u32) -> u32 {
    file * FDS_PER_FILE + n
}

/// A system call the guest makes on one of the scenario's files. Reads are `pread(2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum Op {
    /// `pread(fds[fd], buf, len, offset)`.
    Read { fd: u32, offset: u64, len: u64 },
    /// `posix_fadvise(fds[fd], offset, len, advice)`.
    Fadvise { fd: u32, offset: u64, len: u64, advice: Advice },
    /// `readahead(fds[fd], offset, len)` (mm/readahead.c: ksys_readahead()).
    Readahead { fd: u32, offset: u64, len: u64 },
    /// `maps[map] = mmap(NULL, len, PROT_READ, MAP_SHARED or MAP_PRIVATE, fds[fd], offset)`.
    /// `offset` and `len` are page multiples; the mapping stays until `Munmap` or the end.
    /// `exec` adds PROT_EXEC, `populate` MAP_POPULATE.
    Mmap {
        map: u32,
        fd: u32,
        offset: u64,
        len: u64,
        shared: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        exec: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        populate: bool,
    },
    /// `madvise(maps[map] + offset, len, advice)`; `offset` and `len` are bytes inside the
    /// mapping, page multiples.
    Madvise { map: u32, offset: u64, len: u64, advice: MadvAdvice },
    /// One load of the first byte of the page at byte `offset` of mapping `map` (not of the
    /// file: the file offset is the mapping's `offset` plus this).
    Touch { map: u32, offset: u64 },
    /// `munmap(maps[map], its len)`.
    Munmap { map: u32 },
    /// `len` bytes from `offset` into a pipe of `pipe` bytes (F_SETPIPE_SZ), one
    /// `splice(fds[fd], &pos, pipe, NULL, left, 0)` (or, with `sendfile`,
    /// `sendfile(pipe, fds[fd], &pos, left)`) at a time, the pipe drained after each,
    /// until `len` bytes have gone through or a call returns 0.
    Splice { fd: u32, offset: u64, len: u64, pipe: u64, sendfile: bool },
    /// Arms fail_page_alloc for the process (debugfs `fail_page_alloc`, `task-filter`
    /// with `/proc/thread-self/make-it-fail`): its next `times` page allocations of order
    /// `min_order` or more fail, every other allocation succeeds; `times` 0 disarms.
    /// Replaces what an earlier one armed. No system call on the scenario's files.
    FailAlloc { times: u32, min_order: u32 },
    /// A read that is not a plain `pread(2)`: `preadv2(fds[fd], buf, len, offset, flags)`
    /// with the RWF_ flags of `how`, or (`how.direct`) a `pread(2)` through an O_DIRECT
    /// descriptor of the same file, its own `struct file` (and so its own `file_ra_state`).
    ReadWith { fd: u32, offset: u64, len: u64, how: ReadHow },
    /// Program `program` of the scenario runs here (a `program:` or `fio:` step). The
    /// guest runs it; the harness replaces this op by the calls the kernel recorded it
    /// making before the model runs. The model itself does nothing for it.
    Program { program: u32 },
}

/// How an [`Op::ReadWith`] reads: `preadv2(2)` flags, or O_DIRECT. `direct` goes with
/// neither flag (the scenario parser refuses it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReadHow {
    /// RWF_NOWAIT (IOCB_NOWAIT): return -EAGAIN rather than wait for a folio's read.
    #[serde(default, skip_serializing_if = "is_false")]
    pub nowait: bool,
    /// RWF_DONTCACHE (IOCB_DONTCACHE): folios this read brings in are dropped after it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dontcache: bool,
    /// Through an O_DIRECT descriptor of the file (the page cache is bypassed).
    #[serde(default, skip_serializing_if = "is_false")]
    pub direct: bool,
}

impl Op {
    /// The descriptor the call is made on; `None` for the calls on a mapping (madvise,
    /// a touch, munmap).
    pub fn fd(&self) -> Option<u32> {
        match *self {
            Op::Read { fd, .. } | Op::Fadvise { fd, .. } | Op::Readahead { fd, .. } | Op::Mmap { fd, .. } => Some(fd),
            Op::Splice { fd, .. } => Some(fd),
            Op::ReadWith { fd, .. } => Some(fd),
            Op::Madvise { .. } | Op::Touch { .. } | Op::Munmap { .. } => None,
            Op::FailAlloc { .. } | Op::Program { .. } => None,
        }
    }
}

/// `madvise(2)` advice values radiff issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MadvAdvice {
    /// MADV_NORMAL: clears VM_SEQ_READ and VM_RAND_READ.
    Normal,
    /// MADV_RANDOM: VM_RAND_READ.
    Random,
    /// MADV_SEQUENTIAL: VM_SEQ_READ.
    Sequential,
    /// MADV_WILLNEED: madvise_willneed() -> vfs_fadvise(POSIX_FADV_WILLNEED) on the file range.
    Willneed,
    /// MADV_HUGEPAGE: VM_HUGEPAGE.
    Hugepage,
    /// MADV_NOHUGEPAGE: VM_NOHUGEPAGE.
    Nohugepage,
    /// MADV_POPULATE_READ: madvise_populate() -> faultin_page_range(): read faults on every
    /// page of the range that is not mapped (GUP, FOLL_UNLOCKABLE, retries FOLL_TRIED).
    PopulateRead,
    /// MADV_COLLAPSE: madvise_collapse() (mm/khugepaged.c) on the 2 MiB-aligned part of the
    /// range: each PMD range of the file collapses into one order-9 folio (collapse_file()
    /// reads missing pages with page_cache_sync_readahead()) and is mapped by a PMD.
    Collapse,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The order in which a `Touch` step loads the pages of `[from, to)` of a mapping.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TouchOrder {
    /// Every page, first to last.
    Sequential,
    /// Every page, last to first.
    Backward,
    /// One page every `stride` bytes from `from` (stride a page multiple).
    Stride { stride: u64 },
    /// `count` pages drawn uniformly (with repeats) from `[from, to)` by a generator
    /// seeded with `seed` (the same [`SplitMix64`] as random reads).
    Random { count: u64, seed: u64 },
    /// These pages, by page number inside `[from, to)` (0 = the page at `from`), in this order.
    Pages { pages: Vec<u64> },
}

/// `posix_fadvise` advice values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Advice {
    Normal,
    Random,
    Sequential,
    Willneed,
    Dontneed,
    Noreuse,
}

/// Sizes of random reads: multiples of `align` from `min` to `max`, inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SizeRange {
    pub min: u64,
    pub max: u64,
    pub align: u64,
}

/// One step of a scenario's access pattern. Offsets and sizes are bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// One read.
    Read { fd: u32, offset: u64, size: u64 },
    /// Reads of `size` from `from` until `to` (end of file when `None`); the last one may be short.
    Sequential { fd: u32, from: u64, size: u64, to: Option<u64> },
    /// `count` reads at random `align`ed offsets inside `[from, to)`, sizes drawn from `size`,
    /// from a generator seeded with `seed`. A read never crosses `to`.
    Random { fd: u32, count: u64, size: SizeRange, seed: u64, from: u64, to: Option<u64> },
    /// Sequential streams of `size` reads, stream `i` through `fds[i]` from `starts[i]`,
    /// taking turns one read each. A stream ends where the next stream of the same file
    /// starts, the last of each file at `to` (end of that file when `None`). Streams on
    /// one shared descriptor repeat its number in `fds`.
    Interleaved { fds: Vec<u32>, size: u64, starts: Vec<u64>, to: Option<u64> },
    /// One `posix_fadvise` call; `len` 0 means to the end of the file.
    Fadvise { fd: u32, offset: u64, len: u64, advice: Advice },
    /// One `readahead(2)` call.
    Readahead { fd: u32, offset: u64, size: u64 },
    /// Maps `[offset, offset + len)` of the file through `fds[fd]` as mapping `map`
    /// (`exec`: PROT_EXEC too; `populate`: MAP_POPULATE).
    Mmap {
        map: u32,
        fd: u32,
        offset: u64,
        len: u64,
        shared: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        exec: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        populate: bool,
    },
    /// One `madvise` call on `[offset, offset + len)` of mapping `map` (bytes inside it).
    Madvise { map: u32, offset: u64, len: u64, advice: MadvAdvice },
    /// Loads pages of `[from, to)` (bytes inside the mapping; `to` `None` = its end) in
    /// `order`. With several `maps`, the mappings take turns, one page each, in the order
    /// listed, each following `order` over its own range, until every one is done.
    Touch { maps: Vec<u32>, from: u64, to: Option<u64>, order: TouchOrder },
    /// Unmaps mapping `map`.
    Munmap { map: u32 },
    /// One [`Op::Splice`]: `size` bytes from `offset` through a pipe of `pipe` bytes.
    Splice { fd: u32, offset: u64, size: u64, pipe: u64, sendfile: bool },
    /// [`Step::Read`] made as an [`Op::ReadWith`].
    ReadWith { fd: u32, offset: u64, size: u64, how: ReadHow },
    /// [`Step::Sequential`] made of [`Op::ReadWith`]s.
    SequentialWith { fd: u32, from: u64, size: u64, to: Option<u64>, how: ReadHow },
    /// One [`Op::FailAlloc`]: the next `times` allocations of order `min_order` or more fail.
    FailAlloc { times: u32, min_order: u32 },
    /// One [`Op::Program`]: program `program` of the scenario runs in the guest.
    Program { program: u32 },
}

/// splitmix64: small, fast and fixed forever, so a seed names the same reads in every
/// radiff version (changing it would change every random scenario's trace).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by rejection so there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SplitMix64::below(0)");
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// The number of file descriptors the steps use (highest fd index + 1, at least 1).
pub fn fd_count(steps: &[Step]) -> u32 {
    let mut n = 1;
    for step in steps {
        let top = match step {
            Step::Read { fd, .. }
            | Step::Sequential { fd, .. }
            | Step::Random { fd, .. }
            | Step::Fadvise { fd, .. }
            | Step::Readahead { fd, .. }
            | Step::Mmap { fd, .. }
            | Step::Splice { fd, .. }
            | Step::ReadWith { fd, .. }
            | Step::SequentialWith { fd, .. } => *fd + 1,
            Step::Madvise { .. } | Step::Touch { .. } | Step::Munmap { .. } => 0,
            Step::FailAlloc { .. } | Step::Program { .. } => 0,
            Step::Interleaved { fds, .. } => fds.iter().map(|fd| fd + 1).max().unwrap_or(0),
        };
        n = n.max(top);
    }
    n
}

/// The number of mappings the steps use (highest map index + 1; 0 without mmap steps).
pub fn map_count(steps: &[Step]) -> u32 {
    let mut n = 0;
    for step in steps {
        let top = match step {
            Step::Mmap { map, .. } | Step::Madvise { map, .. } | Step::Munmap { map } => *map + 1,
            Step::Touch { maps, .. } => maps.iter().map(|m| m + 1).max().unwrap_or(0),
            _ => 0,
        };
        n = n.max(top);
    }
    n
}

/// The byte offsets inside a mapping that a `Touch` over `[from, to)` loads, in order.
pub fn touch_offsets(order: &TouchOrder, from: u64, to: u64) -> Vec<u64> {
    const PAGE: u64 = 4096;
    let first = from / PAGE;
    let end = to.div_ceil(PAGE);
    let pages = end.saturating_sub(first);
    match order {
        TouchOrder::Sequential => (first..end).map(|p| p * PAGE).collect(),
        TouchOrder::Backward => (first..end).rev().map(|p| p * PAGE).collect(),
        TouchOrder::Stride { stride } => {
            (from..to).step_by((*stride).max(PAGE) as usize).map(|o| o / PAGE * PAGE).collect()
        }
        TouchOrder::Random { count, seed } => {
            let mut rng = SplitMix64::new(*seed);
            (0..*count).map(|_| (first + rng.below(pages.max(1))) * PAGE).collect()
        }
        TouchOrder::Pages { pages } => pages.iter().map(|p| (first + p) * PAGE).collect(),
    }
}

/// The most operations (system calls and touches) one scenario may expand into. Each is
/// one `Op` in the spec the host sends (about 40 bytes of JSON), one system call or page
/// fault in the guest, whose run must end within its timeout, and a step of the model.
/// The largest scenarios in `scenarios/` expand into fewer than 2^18 ops and the explore
/// generator's into fewer than 2^16 (1024 random reads or 4096 touches of 4 KiB pages over
/// its 1 GiB device at most); 2^22 leaves room sixteen times over the largest while a
/// mistyped count (4000000000) is refused before anything is expanded.
pub const MAX_OPS: u64 = 1 << 22;

/// The pages a `Touch` over `[from, to)` loads: the length of [`touch_offsets`], counted
/// without building it (saturating).
pub fn touch_count(order: &TouchOrder, from: u64, to: u64) -> u64 {
    const PAGE: u64 = 4096;
    match order {
        TouchOrder::Sequential | TouchOrder::Backward => to.div_ceil(PAGE).saturating_sub(from / PAGE),
        TouchOrder::Stride { stride } => to.saturating_sub(from).div_ceil((*stride).max(PAGE)),
        TouchOrder::Random { count, .. } => *count,
        TouchOrder::Pages { pages } => pages.len() as u64,
    }
}

/// Where each stream of an interleaved step (descriptors `fds`, `starts`) ends: where the
/// next one of its file starts, the last at `to` or its file's end (`size_of` a
/// descriptor's file).
pub fn stream_ends(fds: &[u32], starts: &[u64], to: Option<u64>, size_of: impl Fn(u32) -> u64) -> Vec<u64> {
    (0..starts.len())
        .map(|i| {
            let file = file_of(fds[i]);
            let end = to.unwrap_or(size_of(fds[i]));
            (i + 1..starts.len()).find(|&j| file_of(fds[j]) == file).map_or(end, |j| starts[j])
        })
        .collect()
}

/// How many ops [`expand_files`] makes of `steps`, counted without expanding them
/// (saturating, so a count near `u64::MAX` stays a large number).
pub fn op_count(steps: &[Step], file_sizes: &[u64]) -> u64 {
    op_counts(steps, file_sizes).into_iter().fold(0, u64::saturating_add)
}

/// [`op_count`] step by step: how many ops each step makes.
pub fn op_counts(steps: &[Step], file_sizes: &[u64]) -> Vec<u64> {
    let size_of = |fd: u32| file_sizes.get(file_of(fd) as usize).copied().unwrap_or(0);
    let mut lens: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    let mut counts = Vec::with_capacity(steps.len());
    for step in steps {
        let n = match step {
            Step::Sequential { fd, from, size, to } | Step::SequentialWith { fd, from, size, to, .. } => {
                to.unwrap_or(size_of(*fd)).saturating_sub(*from).div_ceil((*size).max(1))
            }
            Step::Random { count, .. } => *count,
            Step::Interleaved { fds, size, starts, to } => stream_ends(fds, starts, *to, size_of)
                .iter()
                .zip(starts)
                .map(|(limit, start)| limit.saturating_sub(*start).div_ceil((*size).max(1)))
                .fold(0, u64::saturating_add),
            Step::Mmap { map, len, .. } => {
                lens.insert(*map, *len);
                1
            }
            Step::Touch { maps, from, to, order } => maps
                .iter()
                .map(|m| touch_count(order, *from, to.unwrap_or_else(|| lens.get(m).copied().unwrap_or(0))))
                .fold(0, u64::saturating_add),
            Step::Read { .. }
            | Step::Fadvise { .. }
            | Step::Readahead { .. }
            | Step::Madvise { .. }
            | Step::Munmap { .. } => 1,
            Step::Splice { .. } | Step::ReadWith { .. } => 1,
            Step::FailAlloc { .. } | Step::Program { .. } => 1,
        };
        counts.push(n);
    }
    counts
}

/// Expands steps into system calls for a file of `file_size` bytes.
/// Steps must have been validated (sizes > 0, ranges inside the file).
/// A `Touch` without `to` runs to the end of the mapping made by the last `Mmap` step
/// before it with that map index.
pub fn expand(steps: &[Step], file_size: u64) -> Vec<Op> {
    expand_files(steps, &[file_size])
}

/// [`expand`] for several files: `file_sizes[f]` is file `f`'s size (see [`file_of`]).
///
/// Panics when the steps make more than [`MAX_OPS`] ops (the scenario parser refuses
/// them first), before allocating any.
pub fn expand_files(steps: &[Step], file_sizes: &[u64]) -> Vec<Op> {
    let count = op_count(steps, file_sizes);
    assert!(count <= MAX_OPS, "the steps make {count} ops, more than pattern::MAX_OPS ({MAX_OPS})");
    let size_of = |fd: u32| file_sizes.get(file_of(fd) as usize).copied().unwrap_or(0);
    let mut ops = Vec::with_capacity(count as usize);
    let mut lens: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    for step in steps {
        match step {
            Step::Read { fd, offset, size } => ops.push(Op::Read { fd: *fd, offset: *offset, len: *size }),
            Step::Sequential { fd, from, size, to } => {
                let end = to.unwrap_or(size_of(*fd));
                let mut pos = *from;
                while pos < end {
                    let len = (*size).min(end - pos);
                    ops.push(Op::Read { fd: *fd, offset: pos, len });
                    pos += len;
                }
            }
            Step::Random { fd, count, size, seed, from, to } => {
                let end = to.unwrap_or(size_of(*fd));
                let mut rng = SplitMix64::new(*seed);
                let sizes = (size.max - size.min) / size.align + 1;
                for _ in 0..*count {
                    let len = size.min + rng.below(sizes) * size.align;
                    let slots = (end - from - len) / size.align + 1;
                    let offset = from + rng.below(slots) * size.align;
                    ops.push(Op::Read { fd: *fd, offset, len });
                }
            }
            Step::Interleaved { fds, size, starts, to } => {
                let mut pos: Vec<u64> = starts.clone();
                let limits = stream_ends(fds, starts, *to, size_of);
                loop {
                    let mut any = false;
                    for i in 0..pos.len() {
                        if pos[i] < limits[i] {
                            let len = (*size).min(limits[i] - pos[i]);
                            ops.push(Op::Read { fd: fds[i], offset: pos[i], len });
                            pos[i] += len;
                            any = true;
                        }
                    }
                    if !any {
                        break;
                    }
                }
            }
            Step::Fadvise { fd, offset, len, advice } => {
                ops.push(Op::Fadvise { fd: *fd, offset: *offset, len: *len, advice: *advice })
            }
            Step::Readahead { fd, offset, size } => ops.push(Op::Readahead { fd: *fd, offset: *offset, len: *size }),
            Step::Mmap { map, fd, offset, len, shared, exec, populate } => {
                lens.insert(*map, *len);
                ops.push(Op::Mmap {
                    map: *map,
                    fd: *fd,
                    offset: *offset,
                    len: *len,
                    shared: *shared,
                    exec: *exec,
                    populate: *populate,
                })
            }
            Step::Madvise { map, offset, len, advice } => {
                ops.push(Op::Madvise { map: *map, offset: *offset, len: *len, advice: *advice })
            }
            Step::Touch { maps, from, to, order } => {
                let lists: Vec<Vec<u64>> = maps
                    .iter()
                    .map(|m| touch_offsets(order, *from, to.unwrap_or_else(|| lens.get(m).copied().unwrap_or(0))))
                    .collect();
                let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
                for i in 0..longest {
                    for (m, list) in maps.iter().zip(&lists) {
                        if let Some(&offset) = list.get(i) {
                            ops.push(Op::Touch { map: *m, offset });
                        }
                    }
                }
            }
            Step::Munmap { map } => ops.push(Op::Munmap { map: *map }),
            Step::Splice { fd, offset, size, pipe, sendfile } => {
                ops.push(Op::Splice { fd: *fd, offset: *offset, len: *size, pipe: *pipe, sendfile: *sendfile })
            }
            Step::ReadWith { fd, offset, size, how } => {
                ops.push(Op::ReadWith { fd: *fd, offset: *offset, len: *size, how: *how })
            }
            Step::SequentialWith { fd, from, size, to, how } => {
                let end = to.unwrap_or(size_of(*fd));
                let mut pos = *from;
                while pos < end {
                    let len = (*size).min(end - pos);
                    ops.push(Op::ReadWith { fd: *fd, offset: pos, len, how: *how });
                    pos += len;
                }
            }
            Step::FailAlloc { times, min_order } => ops.push(Op::FailAlloc { times: *times, min_order: *min_order }),
            Step::Program { program } => ops.push(Op::Program { program: *program }),
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_count_is_the_length_of_the_expansion() {
        let steps = vec![
            Step::Sequential { fd: 0, from: 4096, size: 8192, to: Some(4096 + 20480) },
            Step::Random {
                fd: 0,
                count: 7,
                size: SizeRange { min: 4096, max: 8192, align: 4096 },
                seed: 1,
                from: 0,
                to: None,
            },
            Step::Interleaved { fds: vec![0, 1], size: 65536, starts: vec![0, 1 << 19], to: None },
            Step::Mmap { map: 0, fd: 0, offset: 0, len: 1 << 20, shared: true, exec: false, populate: false },
            Step::Touch { maps: vec![0], from: 0, to: None, order: TouchOrder::Stride { stride: 12288 } },
            Step::Touch { maps: vec![0], from: 4096, to: Some(40960), order: TouchOrder::Backward },
            Step::Munmap { map: 0 },
        ];
        assert_eq!(op_count(&steps, &[1 << 20]), expand(&steps, 1 << 20).len() as u64);
    }

    #[test]
    fn expanding_more_than_max_ops_panics_before_allocating() {
        let step = Step::Random {
            fd: 0,
            count: 1 << 63,
            size: SizeRange { min: 4096, max: 4096, align: 4096 },
            seed: 0,
            from: 0,
            to: None,
        };
        assert_eq!(op_count(std::slice::from_ref(&step), &[1 << 20]), 1 << 63);
        let started = std::time::Instant::now();
        assert!(std::panic::catch_unwind(|| expand(std::slice::from_ref(&step), 1 << 20)).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn sequential_reads_cover_the_range_and_end_short() {
        let ops = expand(&[Step::Sequential { fd: 0, from: 4096, size: 8192, to: Some(4096 + 20480) }], 1 << 20);
        let lens: Vec<u64> = ops
            .iter()
            .map(|op| match op {
                Op::Read { len, .. } => *len,
                _ => 0,
            })
            .collect();
        assert_eq!(lens, vec![8192, 8192, 4096]);
        assert_eq!(ops[0], Op::Read { fd: 0, offset: 4096, len: 8192 });
    }

    #[test]
    fn random_reads_are_aligned_inside_the_range_and_repeatable() {
        let step = Step::Random {
            fd: 0,
            count: 500,
            size: SizeRange { min: 4096, max: 131072, align: 4096 },
            seed: 7,
            from: 0,
            to: None,
        };
        let a = expand(std::slice::from_ref(&step), 8 << 20);
        let b = expand(std::slice::from_ref(&step), 8 << 20);
        assert_eq!(a, b);
        let mut sizes = std::collections::BTreeSet::new();
        for op in &a {
            let Op::Read { offset, len, .. } = *op else { panic!("not a read") };
            assert_eq!(offset % 4096, 0);
            assert_eq!(len % 4096, 0);
            assert!((4096..=131072).contains(&len));
            assert!(offset + len <= 8 << 20);
            sizes.insert(len);
        }
        assert!(sizes.len() > 20, "sizes should spread over the range, got {sizes:?}");
    }

    #[test]
    fn interleaved_streams_take_turns_and_stop_at_the_next_start() {
        let ops = expand(&[Step::Interleaved { fds: vec![0, 0], size: 4096, starts: vec![0, 8192], to: None }], 16384);
        let offsets: Vec<u64> = ops
            .iter()
            .map(|op| match op {
                Op::Read { offset, .. } => *offset,
                _ => 0,
            })
            .collect();
        assert_eq!(offsets, vec![0, 8192, 4096, 12288]);
    }

    #[test]
    fn streams_of_two_files_each_run_to_their_own_end() {
        let (a, b) = (fd_of(0, 0), fd_of(1, 0));
        assert_eq!((file_of(a), file_of(b), b), (0, 1, FDS_PER_FILE));
        let ops = expand_files(
            &[Step::Interleaved { fds: vec![a, b], size: 4096, starts: vec![0, 0], to: None }],
            &[8192, 16384],
        );
        let reads: Vec<(u32, u64)> = ops
            .iter()
            .map(|op| match op {
                Op::Read { fd, offset, .. } => (*fd, *offset / 4096),
                _ => (99, 0),
            })
            .collect();
        assert_eq!(reads, vec![(a, 0), (b, 0), (a, 1), (b, 1), (b, 2), (b, 3)]);
        let seq = expand_files(&[Step::Sequential { fd: b, from: 0, size: 8192, to: None }], &[4096, 16384]);
        assert_eq!(seq.len(), 2, "file 1's size bounds a sequential read of file 1: {seq:?}");
    }

    #[test]
    fn touches_follow_their_order_and_maps_take_turns() {
        let steps = vec![
            Step::Mmap { map: 0, fd: 0, offset: 0, len: 4 * 4096, shared: true, exec: false, populate: false },
            Step::Mmap { map: 1, fd: 0, offset: 8 * 4096, len: 2 * 4096, shared: false, exec: false, populate: false },
            Step::Touch { maps: vec![0, 1], from: 0, to: None, order: TouchOrder::Backward },
        ];
        let ops = expand(&steps, 1 << 20);
        let touches: Vec<(u32, u64)> = ops
            .iter()
            .filter_map(|op| match op {
                Op::Touch { map, offset } => Some((*map, *offset / 4096)),
                _ => None,
            })
            .collect();
        assert_eq!(touches, vec![(0, 3), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)]);
        assert_eq!(map_count(&steps), 2);
        assert_eq!(
            touch_offsets(&TouchOrder::Stride { stride: 3 * 4096 }, 4096, 8 * 4096),
            vec![4096, 4 * 4096, 7 * 4096]
        );
        assert_eq!(touch_offsets(&TouchOrder::Pages { pages: vec![2, 0] }, 4096, 8 * 4096), vec![3 * 4096, 4096]);
        let r = touch_offsets(&TouchOrder::Random { count: 100, seed: 3 }, 0, 16 * 4096);
        assert_eq!(r.len(), 100);
        assert!(r.iter().all(|o| o % 4096 == 0 && *o < 16 * 4096));
        assert_eq!(r, touch_offsets(&TouchOrder::Random { count: 100, seed: 3 }, 0, 16 * 4096));
    }

    #[test]
    fn splitmix_matches_its_reference_sequence() {
        // First outputs of splitmix64 seeded with 0, as published with the algorithm.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220a8397b1dcdaf);
        assert_eq!(rng.next_u64(), 0x6e789e6aa1b965f4);
    }
}
