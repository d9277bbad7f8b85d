//! The checks of `reads:`: each step against the files it reads and the mappings live at
//! that point, one function per step kind that needs more than a line or two.

use std::collections::BTreeMap;

use radiff_model::{pattern, Op, ReadHow, SizeRange, Step, TouchOrder};

use super::bounds::{MAX_MAPS, MAX_OPS, MAX_STREAMS, MAX_TOUCHES};
use super::schema::{OrderName, RwfFlag, SpliceVia, StepFile, StreamsFile};
use super::sections::{At, Files};
use super::size::{Size, SizeOrRange};
use super::PAGE;
use crate::error::{Error, Result};
use crate::wire::Program;
use crate::yaml;

/// Live mappings: map -> (length, the step that made it).
type Maps = BTreeMap<u32, (u64, usize)>;

/// Step `i` of `reads:`, being checked: where its errors point, and the files it may read.
struct StepAt<'a> {
    at: &'a At<'a>,
    i: usize,
    files: &'a Files,
}

impl StepAt<'_> {
    /// The step's line in the file (a program's place; errors find it through
    /// [`At::err_item`]): looked up when asked, since a lookup reads the text from its start.
    fn line(&self) -> usize {
        yaml::line_of_item(self.at.text, "reads", self.i)
    }

    fn bad(&self, message: String) -> Error {
        self.at.err_item("reads", self.i, format!("reads[{}]: {message}", self.i))
    }

    /// The file a step names (`file:`), as its index, and that file's size.
    fn pick(&self, name: &Option<String>) -> Result<(u32, u64)> {
        let file_size = self.files.defs[0].size;
        let names: Vec<&str> =
            if self.files.named { self.files.defs.iter().map(|f| f.name.as_str()).collect() } else { Vec::new() };
        match (name, names.is_empty()) {
            (None, true) => Ok((0, file_size)),
            (Some(n), true) => Err(self.bad(format!(
                "`file: {n}`: this scenario has one file (`file:`); name files with `files:` to read several"
            ))),
            (None, false) if names.len() == 1 => Ok((0, file_size)),
            (None, false) => {
                Err(self.bad(format!("say which file the step reads: `file:` one of {}", names.join(", "))))
            }
            (Some(n), false) => match names.iter().position(|f| f == n) {
                Some(f) => Ok((f as u32, self.files.defs[f].size)),
                None => Err(self.bad(format!("unknown file `{n}`; the scenario's files: {}", names.join(", ")))),
            },
        }
    }

    /// Descriptor `fd` of the file a step names, and that file's size.
    fn fd_on(&self, name: &Option<String>, fd: u32) -> Result<(u32, u64)> {
        let (file, file_size) = self.pick(name)?;
        Ok((self.fd_in(file, fd)?, file_size))
    }

    /// Descriptor `fd` of file `file`.
    fn fd_in(&self, file: u32, fd: u32) -> Result<u32> {
        if fd >= pattern::FDS_PER_FILE {
            return Err(self.bad(format!("fd {fd}: a file has descriptors 0 to {}", pattern::FDS_PER_FILE - 1)));
        }
        Ok(pattern::fd_of(file, fd))
    }
}

/// `reads:`, checked step by step; the programs its `program:` and `fio:` steps run go to
/// `programs` (a step `Step::Program { program }` runs `programs[program]`).
pub(super) fn steps(
    at: &At,
    reads: Vec<StepFile>,
    files: &Files,
    programs: &mut Vec<crate::wire::Program>,
) -> Result<Vec<Step>> {
    if reads.is_empty() {
        return Err(at.err(&["reads"], "`reads` is empty: give at least one step".into()));
    }
    let mut steps = Vec::new();
    let mut maps: Maps = BTreeMap::new();
    for (i, step) in reads.into_iter().enumerate() {
        let s = StepAt { at, i, files };
        let step = match step {
            StepFile::Read { offset, size, fd, file, flags, direct } => {
                let (fd, file_size) = s.fd_on(&file, fd)?;
                if size.0 == 0 || offset.0.saturating_add(size.0) > file_size {
                    return Err(
                        s.bad(format!("a read of {size} at {offset} does not fit in the {} file", Size(file_size)))
                    );
                }
                match read_how(&s, &flags, direct, &[offset.0, size.0, offset.0 + size.0], size.0)? {
                    Some(how) => Step::ReadWith { fd, offset: offset.0, size: size.0, how },
                    None => Step::Read { fd, offset: offset.0, size: size.0 },
                }
            }
            StepFile::Sequential { from, size, to, fd, file, flags, direct } => {
                let (fd, file_size) = s.fd_on(&file, fd)?;
                let end = to.map(|t| t.0).unwrap_or(file_size);
                if size.0 == 0 || from.0 >= end || end > file_size {
                    return Err(s.bad(format!(
                        "sequential reads of {size} from {from} to {}: need size > 0 and from < to <= file size ({})",
                        Size(end),
                        Size(file_size)
                    )));
                }
                match read_how(&s, &flags, direct, &[from.0, size.0, end], size.0)? {
                    Some(how) => Step::SequentialWith { fd, from: from.0, size: size.0, to: to.map(|t| t.0), how },
                    None => Step::Sequential { fd, from: from.0, size: size.0, to: to.map(|t| t.0) },
                }
            }
            StepFile::Random { count, size, seed, align, from, to, fd, file } => {
                random(&s, count, size, seed, align, from, to, fd, file)?
            }
            StepFile::Interleaved(streams) => interleaved(&s, "interleaved", streams)?,
            StepFile::Threads(streams) => {
                let step = interleaved(&s, "threads", streams)?;
                let sizes: Vec<u64> = files.defs.iter().map(|f| f.size).collect();
                let program = super::program::threads(&step, &sizes).map_err(|m| s.bad(m))?;
                programs.push(Program { at: format!("{}:{}", at.path.display(), s.line()), ..program });
                Step::Program { program: programs.len() as u32 - 1 }
            }
            StepFile::Fadvise { advice, offset, len, fd, file } => {
                let (fd, file_size) = s.fd_on(&file, fd)?;
                if offset.0.saturating_add(len.0) > file_size {
                    return Err(s.bad(format!("fadvise range {offset} + {len} is past the {} file", Size(file_size))));
                }
                Step::Fadvise { fd, offset: offset.0, len: len.0, advice }
            }
            StepFile::Readahead { offset, size, fd, file } => {
                let (fd, file_size) = s.fd_on(&file, fd)?;
                if size.0 == 0 || offset.0.saturating_add(size.0) > file_size {
                    return Err(s.bad(format!(
                        "readahead: `size` {size} at `offset` {offset} must be more than 0 and end inside the {} file",
                        Size(file_size)
                    )));
                }
                Step::Readahead { fd, offset: offset.0, size: size.0 }
            }
            StepFile::Mmap { map, offset, size, shared, fd, file, exec, populate } => {
                let step = mmap(&s, &mut maps, map, offset, size, shared, fd, file)?;
                with_mmap_flags(step, exec, populate)
            }
            StepFile::Madvise { map, advice, offset, size } => {
                let len_of = mapped(&maps, map, "madvise").map_err(|m| s.bad(m))?;
                let start = offset.map(|o| o.0).unwrap_or(0);
                let len = size.map(|s| s.0).unwrap_or(len_of.saturating_sub(start));
                if start % PAGE != 0 || len % PAGE != 0 || len == 0 || start.saturating_add(len) > len_of {
                    return Err(s.bad(format!(
                        "madvise: `offset` {} and `size` {} (bytes inside map {map}) must be multiples of 4 KiB inside its {}; leave them out for the whole mapping",
                        Size(start),
                        Size(len),
                        Size(len_of)
                    )));
                }
                Step::Madvise { map, offset: start, len, advice }
            }
            StepFile::Touch { map, maps: list, order, stride, count, seed, pages, from, to } => {
                let (list, from, to, range_pages) = touch_range(&s, &maps, map, list, from, to)?;
                let order = touch_order(&s, order, stride, count, seed, pages, range_pages)?;
                Step::Touch { maps: list, from, to, order }
            }
            StepFile::Munmap { map } => {
                mapped(&maps, map, "munmap").map_err(|m| s.bad(m))?;
                maps.remove(&map);
                Step::Munmap { map }
            }
            StepFile::Splice { offset, size, pipe, via, fd, file } => splice(&s, offset, size, pipe, via, fd, file)?,
            StepFile::FailAlloc { times, min_order } => fail_alloc(&s, times, min_order)?,
            StepFile::Program { argv } => {
                let program = super::program::program(&argv, &files.names()).map_err(|m| s.bad(m))?;
                programs.push(Program { at: format!("{}:{}", at.path.display(), s.line()), ..program });
                Step::Program { program: programs.len() as u32 - 1 }
            }
            StepFile::Fio { job, file } => {
                let program = super::program::fio_step(at.path, &job, file.as_deref(), &files.names());
                let program = program.map_err(|m| s.bad(format!("fio: {m}")))?;
                programs.push(Program { at: format!("{}:{}", at.path.display(), s.line()), ..program });
                Step::Program { program: programs.len() as u32 - 1 }
            }
        };
        steps.push(step);
    }
    check_counts(at, &steps, files)?;
    Ok(steps)
}

/// The ops the steps expand into, at most [`MAX_OPS`], of them touches at most
/// [`MAX_TOUCHES`]: counted without expanding, the error at the step that goes over.
fn check_counts(at: &At, steps: &[Step], files: &Files) -> Result<()> {
    let sizes: Vec<u64> = files.defs.iter().map(|f| f.size).collect();
    let (mut ops, mut touches) = (0u64, 0u64);
    for (i, (step, n)) in steps.iter().zip(pattern::op_counts(steps, &sizes)).enumerate() {
        ops = ops.saturating_add(n);
        if ops > MAX_OPS {
            return Err(at.err_item("reads", i, format!("reads[{i}]: the steps up to this one make {ops} reads and touches; at most {MAX_OPS} (pattern::MAX_OPS: what the guest runs within its timeout and the model expands)")));
        }
        if matches!(step, Step::Touch { .. }) {
            touches = touches.saturating_add(n);
            if touches > MAX_TOUCHES {
                return Err(at.err_item(
                    "reads",
                    i,
                    format!("reads[{i}]: the touch steps up to this one load {touches} pages; at most {MAX_TOUCHES}"),
                ));
            }
        }
    }
    Ok(())
}

/// The bytes the steps may bring in, once expanded (expanded once, here): what reads and
/// readahead(2) ask for, and for a mapping what its touches can fault in (at most the
/// whole mapping).
pub(super) fn expanded_bytes(steps: &[Step], sizes: &[u64]) -> u64 {
    let mut touched: BTreeMap<u32, u64> = BTreeMap::new();
    let mut read_bytes: u64 = 0;
    for op in pattern::expand_files(steps, sizes) {
        match op {
            Op::Read { len, .. } | Op::Readahead { len, .. } | Op::Splice { len, .. } | Op::ReadWith { len, .. } => {
                read_bytes += len
            }
            Op::Mmap { map, len, .. } => {
                touched.insert(map, len);
            }
            Op::Touch { map, .. } => {
                if let Some(left) = touched.get_mut(&map) {
                    let page = PAGE.min(*left);
                    *left -= page;
                    read_bytes += page;
                }
            }
            _ => {}
        }
    }
    read_bytes
}

#[allow(
    clippy::too_many_arguments,
    reason = "one argument per field of the step's YAML mapping, as the schema names them"
)]
fn random(
    s: &StepAt,
    count: u64,
    size: SizeOrRange,
    seed: u64,
    align: Option<Size>,
    from: Size,
    to: Option<Size>,
    fd: u32,
    file: Option<String>,
) -> Result<Step> {
    let (fd, file_size) = s.fd_on(&file, fd)?;
    let align = align.map(|a| a.0).unwrap_or(4096);
    let end = to.map(|t| t.0).unwrap_or(file_size);
    let SizeOrRange(min, max) = size;
    if align == 0 || min == 0 || min > max || min % align != 0 || max % align != 0 {
        return Err(s.bad(format!(
            "random sizes {}..{} must be multiples of align ({}), smallest first",
            Size(min),
            Size(max),
            Size(align)
        )));
    }
    if !from.0.is_multiple_of(align) || end > file_size || from.0.saturating_add(max) > end {
        return Err(s.bad(format!(
            "random reads of up to {} in [{from}, {}) do not fit in the {} file",
            Size(max),
            Size(end),
            Size(file_size)
        )));
    }
    Ok(Step::Random { fd, count, size: SizeRange { min, max, align }, seed, from: from.0, to: to.map(|t| t.0) })
}

/// The streams of an `interleaved:` (or, named `what`, a `threads:`) step, checked.
fn interleaved(s: &StepAt, what: &str, streams: StreamsFile) -> Result<Step> {
    let StreamsFile { streams, size, starts, to, separate_fds, file, files } = streams;
    // The file of each stream: `files:` (one each), or `file:` for all.
    let stream_files: Vec<(u32, u64)> = match (file, files) {
        (Some(_), Some(_)) => {
            return Err(s.bad(format!(
                "{what}: give `file:` (every stream on one file) or `files:` (one per stream), not both"
            )))
        }
        (None, Some(list)) => {
            if list.len() as u64 > MAX_STREAMS {
                return Err(s.bad(format!("{what}: `files` names {} streams: at most {MAX_STREAMS}", list.len())));
            }
            if streams.is_some_and(|n| n as usize != list.len()) {
                return Err(s.bad(format!(
                    "{what}: `streams` {} but `files` names {}: one file per stream",
                    streams.unwrap_or(0),
                    list.len()
                )));
            }
            list.into_iter().map(|n| s.pick(&Some(n))).collect::<Result<_>>()?
        }
        (file, None) => {
            if let Some(n) = streams.filter(|&n| u64::from(n) > MAX_STREAMS) {
                return Err(s.bad(format!(
                    "{what}: `streams` {n}: at most {MAX_STREAMS} (a file has {} descriptors)",
                    pattern::FDS_PER_FILE
                )));
            }
            let one = s.pick(&file)?;
            vec![one; streams.unwrap_or(0) as usize]
        }
    };
    let streams = stream_files.len();
    let shared_file = stream_files.iter().all(|f| f.0 == stream_files[0].0);
    let end_of = |f: u64| to.map(|t| t.0).unwrap_or(f);
    let starts: Vec<u64> = match starts {
        Some(s) => s.into_iter().map(|s| s.0).collect(),
        None if shared_file => {
            (0..streams as u64).map(|i| end_of(stream_files[0].1) / streams.max(1) as u64 * i / 4096 * 4096).collect()
        }
        None => vec![0; streams],
    };
    let mut ok = streams >= 2 && starts.len() == streams && size.0 > 0;
    for (k, &(f, fsize)) in stream_files.iter().enumerate() {
        // Streams of one file start at increasing offsets below its end.
        let end = end_of(fsize);
        let earlier = (0..k).filter(|&j| stream_files[j].0 == f).map(|j| starts.get(j).copied().unwrap_or(0)).max();
        ok &= end <= fsize && starts.get(k).is_some_and(|&s| s < end && earlier.is_none_or(|e| e < s));
    }
    if !ok {
        return Err(s.bad(format!("{what}: need streams >= 2 (or `files:` naming 2 or more), size > 0, and `starts`: one offset per stream, increasing among the streams of one file, below the file's end (or `to`)")));
    }
    let mut next_fd: BTreeMap<u32, u32> = BTreeMap::new();
    let mut fds = Vec::new();
    for &(f, _) in &stream_files {
        let n = next_fd.entry(f).or_insert(0);
        fds.push(s.fd_in(f, *n)?);
        if separate_fds {
            *n += 1;
        }
    }
    Ok(Step::Interleaved { fds, size: size.0, starts, to: to.map(|t| t.0) })
}

#[allow(
    clippy::too_many_arguments,
    reason = "one argument per field of the step's YAML mapping, as the schema names them"
)]
fn mmap(
    s: &StepAt,
    maps: &mut Maps,
    map: u32,
    offset: Size,
    size: Option<Size>,
    shared: bool,
    fd: u32,
    file: Option<String>,
) -> Result<Step> {
    let (fd, file_size) = s.fd_on(&file, fd)?;
    if map >= MAX_MAPS {
        return Err(s.bad(format!(
            "mmap: map {map}: number mappings 0 to {} (the model and the guest keep a table of them)",
            MAX_MAPS - 1
        )));
    }
    if let Some(&(_, at)) = maps.get(&map) {
        return Err(s.bad(format!("mmap: map {map} is still mapped (by reads[{at}]): `munmap: {{map: {map}}}` it first, or pick another `map` number")));
    }
    let mappable = file_size.div_ceil(PAGE) * PAGE;
    if !offset.0.is_multiple_of(PAGE) || offset.0 >= mappable {
        return Err(
            s.bad(format!("mmap: `offset` {offset} must be a multiple of 4 KiB inside the {} file", Size(file_size)))
        );
    }
    let len = size.map(|s| s.0).unwrap_or(mappable - offset.0);
    if len == 0 || !len.is_multiple_of(PAGE) || offset.0.saturating_add(len) > mappable {
        return Err(s.bad(format!(
            "mmap: `size` {} at {offset} must be a multiple of 4 KiB, more than 0, and end inside the {} file (touching a page past its end is SIGBUS); leave it out to map to the end",
            Size(len),
            Size(file_size)
        )));
    }
    maps.insert(map, (len, s.i));
    Ok(Step::Mmap { map, fd, offset: offset.0, len, shared, exec: false, populate: false })
}

/// A touch's mappings and range: `(maps, from, to, pages in the range)`.
fn touch_range(
    s: &StepAt,
    maps: &Maps,
    map: Option<u32>,
    list: Option<Vec<u32>>,
    from: Option<Size>,
    to: Option<Size>,
) -> Result<(Vec<u32>, u64, Option<u64>, u64)> {
    let list = match (map, list) {
        (Some(_), Some(_)) => return Err(s.bad("touch: give `map: N` or `maps: [N, ...]`, not both".into())),
        (Some(m), None) => vec![m],
        (None, Some(l)) if l.is_empty() => return Err(s.bad("touch: `maps` is empty".into())),
        (None, Some(l)) => l,
        (None, None) => vec![0],
    };
    let mut shortest = u64::MAX;
    for (k, &m) in list.iter().enumerate() {
        if list[..k].contains(&m) {
            return Err(s.bad(format!("touch: map {m} is listed twice in `maps`")));
        }
        shortest = shortest.min(mapped(maps, m, "touch").map_err(|e| s.bad(e))?);
    }
    let from = from.map(|f| f.0).unwrap_or(0);
    if !from.is_multiple_of(PAGE) || to.is_some_and(|t| t.0 % PAGE != 0) {
        return Err(s.bad(format!(
            "touch: `from` and `to` are bytes inside the mapping, multiples of 4 KiB (from {})",
            Size(from)
        )));
    }
    let end = to.map(|t| t.0).unwrap_or(shortest);
    if from >= end || end > shortest {
        return Err(s.bad(format!(
            "touch: [`from` {}, `to` {}) must be a non-empty range inside the mapping{} ({} long); `to` defaults to its end",
            Size(from),
            Size(end),
            if list.len() > 1 { "s (the shortest)" } else { "" },
            Size(shortest)
        )));
    }
    Ok((list, from, to.map(|t| t.0), (end - from) / PAGE))
}

/// A touch's order: `order:` with the keys it takes, or `pages: [...]`.
fn touch_order(
    s: &StepAt,
    order: Option<OrderName>,
    stride: Option<Size>,
    count: Option<u64>,
    seed: Option<u64>,
    pages: Option<Vec<u64>>,
    range_pages: u64,
) -> Result<TouchOrder> {
    let o = match (order, pages) {
        (Some(_), Some(_)) => return Err(s.bad("touch: `pages: [...]` is an order of its own; remove `order:`".into())),
        (None, None) => {
            return Err(
                s.bad("touch: say the `order:` (sequential, backward, stride, random) or list `pages: [...]`".into())
            )
        }
        (None, Some(p)) => {
            if stride.is_some() || count.is_some() || seed.is_some() {
                return Err(s.bad("touch: `stride`, `count` and `seed` do not go with `pages: [...]`".into()));
            }
            if p.is_empty() {
                return Err(s.bad("touch: `pages` is empty".into()));
            }
            if let Some(bad_page) = p.iter().find(|&&q| q >= range_pages) {
                return Err(s.bad(format!(
                    "touch: page {bad_page} of `pages` is out of range: the range has {range_pages} pages (0 to {})",
                    range_pages - 1
                )));
            }
            return Ok(TouchOrder::Pages { pages: p });
        }
        (Some(o), None) => o,
    };
    let unused = |key: &str, given: bool| -> Result<()> {
        if given {
            Err(s.bad(format!("touch: `{key}` does not go with `order: {}`", format!("{o:?}").to_lowercase())))
        } else {
            Ok(())
        }
    };
    Ok(match o {
        OrderName::Sequential | OrderName::Backward => {
            unused("stride", stride.is_some())?;
            unused("count", count.is_some())?;
            unused("seed", seed.is_some())?;
            if o == OrderName::Sequential {
                TouchOrder::Sequential
            } else {
                TouchOrder::Backward
            }
        }
        OrderName::Stride => {
            unused("count", count.is_some())?;
            unused("seed", seed.is_some())?;
            let Some(Size(stride)) = stride else {
                return Err(s.bad("touch: `order: stride` needs `stride:` (a multiple of 4 KiB)".into()));
            };
            if stride == 0 || stride % PAGE != 0 {
                return Err(s.bad(format!("touch: `stride` {} must be a multiple of 4 KiB, more than 0", Size(stride))));
            }
            TouchOrder::Stride { stride }
        }
        OrderName::Random => {
            unused("stride", stride.is_some())?;
            let Some(count) = count.filter(|&c| c > 0) else {
                return Err(s.bad("touch: `order: random` needs `count:` (touches, more than 0)".into()));
            };
            TouchOrder::Random { count, seed: seed.unwrap_or(0) }
        }
    })
}

/// `mmap:`'s `exec:` and `populate:` (PROT_EXEC, MAP_POPULATE) on the checked step.
fn with_mmap_flags(step: Step, exec: bool, populate: bool) -> Step {
    match step {
        Step::Mmap { map, fd, offset, len, shared, .. } => Step::Mmap { map, fd, offset, len, shared, exec, populate },
        other => other,
    }
}

/// The length of live mapping `map`, or why `step` cannot use it.
fn mapped(maps: &Maps, map: u32, step: &str) -> std::result::Result<u64, String> {
    match maps.get(&map) {
        Some(&(len, _)) => Ok(len),
        None => Err(format!(
            "{step}: map {map} is not mapped here: no earlier `mmap` step made it (or it was unmapped); add `- mmap: {{map: {map}}}` before this step{}",
            if maps.is_empty() { String::new() } else { format!(" (mapped now: {})", maps.keys().map(|m| m.to_string()).collect::<Vec<_>>().join(", ")) }
        )),
    }
}

/// The default pipe: `PIPE_DEF_BUFFERS` (16) pages.
pub(super) const DEFAULT_PIPE: u64 = 64 * 1024;

/// The largest pipe a scenario may ask for: `/proc/sys/fs/pipe-max-size`'s default (1 MiB).
const MAX_PIPE: u64 = 1024 * 1024;

/// `splice:`: `size` bytes (default: to the end of the file) from `offset` through a pipe
/// of `pipe` bytes, a power of two from 4 KiB to 1 MiB (what F_SETPIPE_SZ gives exactly).
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per field of the step's YAML mapping, as the schema names them"
)]
fn splice(
    s: &StepAt,
    offset: Size,
    size: Option<Size>,
    pipe: Option<Size>,
    via: Option<SpliceVia>,
    fd: u32,
    file: Option<String>,
) -> Result<Step> {
    let (fd, file_size) = s.fd_on(&file, fd)?;
    let len = size.map(|z| z.0).unwrap_or(file_size.saturating_sub(offset.0));
    if len == 0 || offset.0.saturating_add(len) > file_size {
        return Err(s.bad(format!(
            "splice: `size` {} at `offset` {offset} must be more than 0 and end inside the {} file",
            Size(len),
            Size(file_size)
        )));
    }
    let pipe = pipe.map(|p| p.0).unwrap_or(DEFAULT_PIPE);
    if !pipe.is_power_of_two() || !(PAGE..=MAX_PIPE).contains(&pipe) {
        return Err(s.bad(format!("splice: `pipe` {} must be a power of two from 4 KiB to 1 MiB (F_SETPIPE_SZ rounds other sizes up; default 64 KiB)", Size(pipe))));
    }
    Ok(Step::Splice { fd, offset: offset.0, size: len, pipe, sendfile: via == Some(SpliceVia::Sendfile) })
}

/// The largest O_DIRECT read (each read of a `sequential:` step): 32 pages. The model
/// places the guest's buffer one page per bio_vec (model/src/direct.rs); at most 32
/// segments and 128 KiB per request split nothing on the devices radiff emulates (NVMe
/// with MDTS >= 128 KiB allows more segments; see docs/scenarios.md), so the requests do
/// not depend on how the guest's buffer lies in physical memory.
pub(super) const MAX_DIRECT_READ: u64 = 128 * 1024;

/// `flags:` and `direct:` of a read step: `None` for a plain pread(2). `bounds` are the
/// offsets that must be aligned for O_DIRECT (start, size, end); `size` is each read's.
fn read_how(s: &StepAt, flags: &[RwfFlag], direct: bool, bounds: &[u64], size: u64) -> Result<Option<ReadHow>> {
    let mut how = ReadHow { direct, ..ReadHow::default() };
    for (k, flag) in flags.iter().enumerate() {
        if flags[..k].contains(flag) {
            return Err(s.bad(format!("`flags` lists {} twice", format!("{flag:?}").to_lowercase())));
        }
        match flag {
            RwfFlag::Nowait => how.nowait = true,
            RwfFlag::Dontcache => how.dontcache = true,
        }
    }
    if direct && !flags.is_empty() {
        return Err(s.bad("`direct: true` does not go with `flags:` (RWF_NOWAIT or RWF_DONTCACHE on an O_DIRECT read takes iomap's own paths, which the model does not port)".into()));
    }
    if direct {
        if let Some(bad) = bounds.iter().find(|&&b| b % PAGE != 0) {
            return Err(s.bad(format!("`direct: true`: O_DIRECT needs the offset, size and end aligned to the logical block size; radiff asks for multiples of 4 KiB (the page its aligned buffer and the model use), and {} is not", Size(*bad))));
        }
        if size > MAX_DIRECT_READ {
            return Err(s.bad(format!("`direct: true`: each O_DIRECT read may be at most {} ({} asked): larger ones split by segment count, which depends on where the guest's buffer lies in memory", Size(MAX_DIRECT_READ), Size(size))));
        }
    }
    Ok((!flags.is_empty() || direct).then_some(how))
}

/// The lowest `fail_alloc` `min_order` (and its default): above every order the guest's
/// task allocates on the read path besides page-cache folios (page tables 0, kernel stacks
/// 2, SLUB's slab pages at most PAGE_ALLOC_COSTLY_ORDER, 3, whenever a slab cache grows),
/// so that the folios readahead allocates are the only ones fail_page_alloc can fail.
pub(super) const FAIL_ALLOC_MIN_ORDER: u32 = 4;

/// The most allocations one `fail_alloc` may fail: each is a folio readahead would have
/// added, and the scenarios fail a few.
pub(super) const MAX_FAIL_TIMES: u32 = 4096;

/// `fail_alloc: {times, min_order}`: the task's next `times` page allocations of order
/// `min_order` (4 to MAX_PAGECACHE_ORDER, 9; default 4) or more fail; `times: 0` disarms.
fn fail_alloc(s: &StepAt, times: u32, min_order: Option<u32>) -> Result<Step> {
    let min_order = min_order.unwrap_or(FAIL_ALLOC_MIN_ORDER);
    if !(FAIL_ALLOC_MIN_ORDER..=radiff_model::input::MAX_PAGECACHE_ORDER).contains(&min_order) {
        return Err(s.bad(format!(
            "fail_alloc: `min_order` {min_order} must be from {FAIL_ALLOC_MIN_ORDER} to {} (MAX_PAGECACHE_ORDER): below {FAIL_ALLOC_MIN_ORDER}, slab pages and kernel stacks the task allocates would fail too, at points no scenario controls",
            radiff_model::input::MAX_PAGECACHE_ORDER
        )));
    }
    if times > MAX_FAIL_TIMES {
        return Err(s.bad(format!("fail_alloc: `times` {times}: at most {MAX_FAIL_TIMES}")));
    }
    Ok(Step::FailAlloc { times, min_order })
}

/// What `fail_alloc` steps need of the rest of the scenario, checked once it is parsed:
/// no `vm.thp_enabled: always` (the guest's own anonymous memory would then fault in
/// order-9 folios, which fail_page_alloc counts), and with a file system block that makes
/// the mapping's minimum folio order `min_order` or more, no mappings (a fault whose folio
/// allocation fails is VM_FAULT_OOM, which the guest does not survive).
pub(super) fn check_fail_alloc(
    at: &At,
    steps: &[Step],
    thp: Option<radiff_model::ThpMode>,
    block_size: Option<u64>,
) -> Result<()> {
    let mapping_min_order = block_size.map_or(0, |b| (b / PAGE).trailing_zeros());
    let maps = steps.iter().any(|s| matches!(s, Step::Mmap { .. }));
    for (i, step) in steps.iter().enumerate() {
        let Step::FailAlloc { times, min_order } = *step else { continue };
        let line = yaml::line_of_item(at.text, "reads", i);
        if times > 0 && thp == Some(radiff_model::ThpMode::Always) {
            return Err(Error::input(at.path, line, format!("reads[{i}]: fail_alloc with `vm.thp_enabled: always`: the guest's own memory would fault in order-9 folios that fail_page_alloc counts; use madvise or never")));
        }
        if times > 0 && maps && min_order <= mapping_min_order {
            return Err(Error::input(
                at.path,
                line,
                format!("reads[{i}]: fail_alloc `min_order` {min_order} with the file system's blocks (minimum folio order {mapping_min_order}) and a mapping: a fault whose folio allocation fails is VM_FAULT_OOM; raise min_order above {mapping_min_order} or drop the mmap steps"),
            ));
        }
    }
    Ok(())
}
