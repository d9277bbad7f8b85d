//! Scenarios: `scenarios/*.yaml` parsed, checked and expanded into runs.
//!
//! The schema is documented in README.md ("Writing a scenario"). Every error names the
//! file, the line and the key.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use radiff_model::{pattern, Advice, FsKind, MadvAdvice, SizeRange, Step, ThpMode, TouchOrder};
use serde::{Deserialize, Deserializer};

use crate::error::{Error, Result};
use crate::wire::{DeviceKind, QueueSettings, VmRequest};
use crate::yaml;

/// A byte count written with a unit: `4 KiB`, `1 MiB`, `512MiB`, `2 GiB`, or a bare number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);

impl Size {
    pub fn parse(text: &str) -> std::result::Result<Size, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let number: u64 = number.parse().map_err(|_| format!("`{text}` is not a size: write a number and a unit, like `4 KiB` or `1 MiB`"))?;
        let mult = match unit.trim() {
            "" | "B" => 1,
            "KiB" | "K" | "k" => 1 << 10,
            "MiB" | "M" | "m" => 1 << 20,
            "GiB" | "G" | "g" => 1 << 30,
            other => {
                return Err(format!(
                    "`{text}`: unknown unit `{other}`; use B, KiB, MiB or GiB (binary units; `KB`/`MB` are ambiguous)"
                ))
            }
        };
        number.checked_mul(mult).map(Size).ok_or_else(|| format!("`{text}` is too large"))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1 << 30 && b % (1 << 30) == 0 {
            write!(f, "{} GiB", b >> 30)
        } else if b >= 1 << 20 && b % (1 << 20) == 0 {
            write!(f, "{} MiB", b >> 20)
        } else if b >= 1 << 10 && b % (1 << 10) == 0 {
            write!(f, "{} KiB", b >> 10)
        } else {
            write!(f, "{b} B")
        }
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Size, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(Size(n)),
            Raw::Text(t) => Size::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// A size or a range of sizes: `64 KiB` or `4 KiB..128 KiB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeOrRange(pub u64, pub u64);

impl<'de> Deserialize<'de> for SizeOrRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<SizeOrRange, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Int(n) => return Ok(SizeOrRange(n, n)),
            Raw::Text(t) => t,
        };
        match text.split_once("..") {
            Some((a, b)) => {
                let a = Size::parse(a).map_err(serde::de::Error::custom)?;
                let b = Size::parse(b).map_err(serde::de::Error::custom)?;
                Ok(SizeOrRange(a.0, b.0))
            }
            None => Size::parse(&text).map(|s| SizeOrRange(s.0, s.0)).map_err(serde::de::Error::custom),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    description: String,
    device: DeviceFile,
    filesystem: FsKind,
    file: Option<FileFile>,
    files: Option<Vec<NamedFileFile>>,
    #[serde(default)]
    queue: QueueFile,
    reads: Vec<StepFile>,
    variants: Option<Vec<String>>,
    #[serde(default)]
    matrix: MatrixFile,
    #[serde(default)]
    vm: VmFile,
    known_divergence: Option<String>,
    trace_buffer_kb: Option<u64>,
    timeout_s: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceFile {
    kind: DeviceKind,
    size: Size,
    transfer_limit: Option<Size>,
    optimal_io_size: Option<Size>,
    logical_block_size: Option<Size>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFile {
    size: Size,
    write_size: Option<Size>,
    extent_size: Option<Size>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedFileFile {
    name: String,
    size: Size,
    write_size: Option<Size>,
    extent_size: Option<Size>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct QueueFile {
    read_ahead_kb: Option<u64>,
    max_sectors_kb: Option<u64>,
    rotational: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct VmFile {
    fault_around_bytes: Option<Size>,
    thp_enabled: Option<ThpMode>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    read_ahead_kb: Option<Vec<u64>>,
    max_sectors_kb: Option<Vec<u64>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum StepFile {
    Read {
        offset: Size,
        size: Size,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Sequential {
        #[serde(default = "zero")]
        from: Size,
        size: Size,
        to: Option<Size>,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Random {
        count: u64,
        size: SizeOrRange,
        #[serde(default)]
        seed: u64,
        align: Option<Size>,
        #[serde(default = "zero")]
        from: Size,
        to: Option<Size>,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Interleaved {
        streams: Option<u32>,
        size: Size,
        starts: Option<Vec<Size>>,
        to: Option<Size>,
        #[serde(default)]
        separate_fds: bool,
        file: Option<String>,
        files: Option<Vec<String>>,
    },
    Fadvise {
        advice: Advice,
        #[serde(default = "zero")]
        offset: Size,
        #[serde(default = "zero")]
        len: Size,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Readahead {
        offset: Size,
        size: Size,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Mmap {
        #[serde(default)]
        map: u32,
        #[serde(default = "zero")]
        offset: Size,
        size: Option<Size>,
        #[serde(default = "yes")]
        shared: bool,
        #[serde(default)]
        fd: u32,
        file: Option<String>,
    },
    Madvise {
        #[serde(default)]
        map: u32,
        advice: MadvAdvice,
        offset: Option<Size>,
        size: Option<Size>,
    },
    Touch {
        map: Option<u32>,
        maps: Option<Vec<u32>>,
        order: Option<OrderName>,
        stride: Option<Size>,
        count: Option<u64>,
        seed: Option<u64>,
        pages: Option<Vec<u64>>,
        from: Option<Size>,
        to: Option<Size>,
    },
    Munmap {
        #[serde(default)]
        map: u32,
    },
}

/// `touch`'s `order:` (`pages: [...]` is its own order, written without `order:`).
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum OrderName {
    Sequential,
    Backward,
    Stride,
    Random,
}

fn zero() -> Size {
    Size(0)
}

fn yes() -> bool {
    true
}

const PAGE: u64 = 4096;

/// The most touches one scenario may make (each is a page fault or a load in the guest).
pub const MAX_TOUCHES: u64 = 1 << 20;

/// The device under test.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    pub kind: DeviceKind,
    pub size: u64,
    /// The largest transfer the device accepts, bytes (NVMe: 4 KiB << mdts; UFS: fixed).
    pub transfer_limit: u64,
    pub optimal_io_size: Option<u64>,
    pub logical_block_size: Option<u64>,
}

impl Device {
    /// NVMe's MDTS: the transfer limit as a power of two of the 4 KiB memory page.
    pub fn mdts(&self) -> u8 {
        (self.transfer_limit / 4096).trailing_zeros() as u8
    }
}

/// QEMU's UFS logical unit reports max_hw_sectors_kb 1024 (FACTS.md).
pub const UFS_TRANSFER_LIMIT: u64 = 1 << 20;

/// One point of a scenario's matrix: the queue settings of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// `max_sectors_kb=1024` for matrix points, `None` when the scenario has no matrix.
    pub label: Option<String>,
    pub queue: QueueSettings,
}

/// A file of a scenario with several (`files:`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileDef {
    pub name: String,
    pub size: u64,
    pub write_size: u64,
    pub extent_size: Option<u64>,
}

/// A checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file stem: `1mib_after_4k`.
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub device: Device,
    pub fs: FsKind,
    /// The first (or only) file's size, write size and extent size hint.
    pub file_size: u64,
    pub write_size: u64,
    pub extent_size: Option<u64>,
    /// `files:`: the names of all files, in order (file `f` is `files[f]`; steps read it
    /// through descriptors `pattern::fd_of(f, n)`); empty for a scenario with one `file:`.
    pub file_names: Vec<String>,
    /// `files:` after the first, which is `file_size`/`write_size`/`extent_size`.
    pub other_files: Vec<FileDef>,
    pub steps: Vec<Step>,
    /// `None`: every variant in `kernels/`.
    pub variants: Option<Vec<String>>,
    pub variants_line: usize,
    pub points: Vec<Point>,
    /// `vm:`: the fault path's settings, applied before the reads (defaults: the kernel's).
    pub vm: VmRequest,
    pub known_divergence: Option<String>,
    pub trace_buffer_kb: u64,
    pub timeout: Duration,
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Scenario::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Scenario> {
        let raw: ScenarioFile = yaml::parse(path, text)?;
        let err = |keys: &[&str], message: String| Error::input(path, yaml::line_of(text, keys), message);
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(Error::input(path, 0, "scenario file names may use only letters, digits, `_` and `-` (they name test trials)"));
        }

        // The device.
        let d = raw.device;
        let transfer_limit = match (d.kind, d.transfer_limit) {
            (DeviceKind::Nvme, None) => 512 << 10,
            (DeviceKind::Nvme, Some(Size(t))) => {
                if t < 8192 || !t.is_power_of_two() || t > (4096 << 15) {
                    return Err(err(&["device", "transfer_limit"], format!("device.transfer_limit {}: NVMe's limit is 4 KiB times a power of two (MDTS), from 8 KiB to 128 MiB", Size(t))));
                }
                t
            }
            (DeviceKind::Ufs, None) => UFS_TRANSFER_LIMIT,
            (DeviceKind::Ufs, Some(_)) => {
                return Err(err(&["device", "transfer_limit"], "device.transfer_limit: QEMU's UFS device has a fixed limit (1 MiB); remove the key".into()))
            }
        };
        for (key, value) in [("optimal_io_size", d.optimal_io_size), ("logical_block_size", d.logical_block_size)] {
            if let Some(Size(v)) = value {
                if d.kind == DeviceKind::Ufs {
                    return Err(err(&["device", key], format!("device.{key}: QEMU's UFS device cannot set it; remove the key")));
                }
                if v == 0 || v % 512 != 0 {
                    return Err(err(&["device", key], format!("device.{key} {}: must be a multiple of 512 bytes", Size(v))));
                }
            }
        }
        let device = Device {
            kind: d.kind,
            size: d.size.0,
            transfer_limit,
            optimal_io_size: d.optimal_io_size.map(|s| s.0),
            logical_block_size: d.logical_block_size.map(|s| s.0),
        };

        // The files.
        // Each file: how errors name it (`file`, `files[1]`), its keys, and its `name:`.
        let defs: Vec<(String, FileFile, Option<String>)> = match (raw.file, raw.files) {
            (Some(_), Some(_)) => return Err(err(&["files"], "give `file:` (one file) or `files:` (a list of named files), not both".into())),
            (None, None) => return Err(err(&["description"], "no file: add `file: {size: 64 MiB}` (or `files:` with a `name:` for each)".into())),
            (Some(f), None) => vec![("file".to_string(), f, None)],
            (None, Some(list)) => {
                if list.is_empty() || list.len() > 8 {
                    return Err(err(&["files"], format!("`files:` lists {} files: give 1 to 8", list.len())));
                }
                let mut defs: Vec<(String, FileFile, Option<String>)> = Vec::new();
                for (i, f) in list.into_iter().enumerate() {
                    let ok = !f.name.is_empty() && f.name.len() <= 32 && f.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !ok {
                        return Err(Error::input(path, yaml::line_of_item(text, "files", i), format!("files[{i}]: name `{}`: use 1 to 32 letters, digits, `_` or `-`", f.name)));
                    }
                    if defs.iter().any(|(_, _, n)| n.as_deref() == Some(f.name.as_str())) {
                        return Err(Error::input(path, yaml::line_of_item(text, "files", i), format!("files[{i}]: `{}` is named twice", f.name)));
                    }
                    defs.push((format!("files[{i}]"), FileFile { size: f.size, write_size: f.write_size, extent_size: f.extent_size }, Some(f.name)));
                }
                defs
            }
        };
        let mut files: Vec<FileDef> = Vec::new();
        let mut total: u64 = 0;
        for (what, f, name) in &defs {
            // `file:`'s errors point at the key, `files:`' at the file's item.
            let line_err = |k: &'static str, message: String| -> Error {
                match name {
                    None => err(&["file", k], message),
                    Some(_) => Error::input(path, yaml::line_of_item(text, "files", files.len()), message),
                }
            };
            let size = f.size.0;
            if size == 0 {
                return Err(line_err("size", format!("{what}.size must be more than 0")));
            }
            let write_size = f.write_size.map(|s| s.0).unwrap_or(1 << 20);
            if write_size == 0 || write_size % 4096 != 0 || write_size > 64 << 20 {
                return Err(line_err("write_size", format!("{what}.write_size {}: direct writes need a multiple of 4 KiB, at most 64 MiB", Size(write_size))));
            }
            if let Some(Size(e)) = f.extent_size {
                if raw.filesystem != FsKind::Xfs {
                    return Err(line_err("extent_size", format!("{what}.extent_size: only XFS takes an extent size hint; {} lays out the file itself", raw.filesystem.name())));
                }
                if e == 0 || e % 4096 != 0 {
                    return Err(line_err("extent_size", format!("{what}.extent_size {}: must be a multiple of 4 KiB", Size(e))));
                }
            }
            total += size;
            files.push(FileDef { name: name.clone().unwrap_or_default(), size, write_size, extent_size: f.extent_size.map(|s| s.0) });
        }
        let file_size = files[0].size;
        if total + total / 4 + (64 << 20) > device.size {
            return Err(err(
                &["device", "size"],
                format!(
                    "device.size {} is too small for {}: leave a quarter of the data plus 64 MiB for the file system",
                    Size(device.size),
                    if files.len() == 1 { format!("a {} file", Size(total)) } else { format!("{} files of {} in all", files.len(), Size(total)) }
                ),
            ));
        }
        let file_names: Vec<String> = if defs[0].2.is_some() { files.iter().map(|f| f.name.clone()).collect() } else { Vec::new() };
        let sizes: Vec<u64> = files.iter().map(|f| f.size).collect();

        // The queue and its matrix.
        let max_kb = transfer_limit >> 10;
        let check_queue = |keys: &[&str], q: &QueueSettings| -> Result<()> {
            if let Some(m) = q.max_sectors_kb {
                if m < 4 || m > max_kb {
                    return Err(err(keys, format!("max_sectors_kb {m}: the device's transfer limit allows 4 to {max_kb} (raise device.transfer_limit for NVMe)")));
                }
            }
            Ok(())
        };
        let base_queue = QueueSettings { read_ahead_kb: raw.queue.read_ahead_kb, max_sectors_kb: raw.queue.max_sectors_kb, rotational: raw.queue.rotational };
        check_queue(&["queue", "max_sectors_kb"], &base_queue)?;
        let mut points = vec![Point { label: None, queue: base_queue.clone() }];
        for (key, values) in [("max_sectors_kb", &raw.matrix.max_sectors_kb), ("read_ahead_kb", &raw.matrix.read_ahead_kb)] {
            let Some(values) = values else { continue };
            if values.is_empty() {
                return Err(err(&["matrix", key], format!("matrix.{key} is empty")));
            }
            let mut next = Vec::new();
            for point in &points {
                for &v in values {
                    let mut queue = point.queue.clone();
                    match key {
                        "max_sectors_kb" => queue.max_sectors_kb = Some(v),
                        _ => queue.read_ahead_kb = Some(v),
                    }
                    check_queue(&["matrix", key], &queue)?;
                    let label = match &point.label {
                        Some(l) => format!("{l},{key}={v}"),
                        None => format!("{key}={v}"),
                    };
                    next.push(Point { label: Some(label), queue });
                }
            }
            points = next;
        }

        // The reads.
        if raw.reads.is_empty() {
            return Err(err(&["reads"], "`reads` is empty: give at least one step".into()));
        }
        let mut steps = Vec::new();
        // Live mappings: map -> (length, the step that made it).
        let mut maps: BTreeMap<u32, (u64, usize)> = BTreeMap::new();
        for (i, step) in raw.reads.into_iter().enumerate() {
            let line = yaml::line_of_item(text, "reads", i);
            let bad = |message: String| Error::input(path, line, format!("reads[{i}]: {message}"));
            // The file a step names (`file:`), as its index, and that file's size.
            let pick = |name: &Option<String>| -> Result<(u32, u64)> {
                match (name, file_names.is_empty()) {
                    (None, true) => Ok((0, file_size)),
                    (Some(n), true) => Err(bad(format!("`file: {n}`: this scenario has one file (`file:`); name files with `files:` to read several"))),
                    (None, false) if file_names.len() == 1 => Ok((0, file_size)),
                    (None, false) => Err(bad(format!("say which file the step reads: `file:` one of {}", file_names.join(", ")))),
                    (Some(n), false) => match file_names.iter().position(|f| f == n) {
                        Some(f) => Ok((f as u32, sizes[f])),
                        None => Err(bad(format!("unknown file `{n}`; the scenario's files: {}", file_names.join(", ")))),
                    },
                }
            };
            let fd_in = |file: u32, fd: u32| -> Result<u32> {
                if fd >= pattern::FDS_PER_FILE {
                    return Err(bad(format!("fd {fd}: a file has descriptors 0 to {}", pattern::FDS_PER_FILE - 1)));
                }
                Ok(pattern::fd_of(file, fd))
            };
            let step = match step {
                StepFile::Read { offset, size, fd, file } => {
                    let (file, file_size) = pick(&file)?;
                    let fd = fd_in(file, fd)?;
                    if size.0 == 0 || offset.0 + size.0 > file_size {
                        return Err(bad(format!("a read of {size} at {offset} does not fit in the {} file", Size(file_size))));
                    }
                    Step::Read { fd, offset: offset.0, size: size.0 }
                }
                StepFile::Sequential { from, size, to, fd, file } => {
                    let (file, file_size) = pick(&file)?;
                    let fd = fd_in(file, fd)?;
                    let end = to.map(|t| t.0).unwrap_or(file_size);
                    if size.0 == 0 || from.0 >= end || end > file_size {
                        return Err(bad(format!("sequential reads of {size} from {from} to {}: need size > 0 and from < to <= file size ({})", Size(end), Size(file_size))));
                    }
                    Step::Sequential { fd, from: from.0, size: size.0, to: to.map(|t| t.0) }
                }
                StepFile::Random { count, size, seed, align, from, to, fd, file } => {
                    let (file, file_size) = pick(&file)?;
                    let fd = fd_in(file, fd)?;
                    let align = align.map(|a| a.0).unwrap_or(4096);
                    let end = to.map(|t| t.0).unwrap_or(file_size);
                    let SizeOrRange(min, max) = size;
                    if align == 0 || min == 0 || min > max || min % align != 0 || max % align != 0 {
                        return Err(bad(format!("random sizes {}..{} must be multiples of align ({}), smallest first", Size(min), Size(max), Size(align))));
                    }
                    if from.0 % align != 0 || end > file_size || from.0 + max > end {
                        return Err(bad(format!("random reads of up to {} in [{from}, {}) do not fit in the {} file", Size(max), Size(end), Size(file_size))));
                    }
                    Step::Random { fd, count, size: SizeRange { min, max, align }, seed, from: from.0, to: to.map(|t| t.0) }
                }
                StepFile::Interleaved { streams, size, starts, to, separate_fds, file, files } => {
                    // The file of each stream: `files:` (one each), or `file:` for all.
                    let stream_files: Vec<(u32, u64)> = match (file, files) {
                        (Some(_), Some(_)) => return Err(bad("interleaved: give `file:` (every stream on one file) or `files:` (one per stream), not both".into())),
                        (None, Some(list)) => {
                            if streams.is_some_and(|n| n as usize != list.len()) {
                                return Err(bad(format!("interleaved: `streams` {} but `files` names {}: one file per stream", streams.unwrap_or(0), list.len())));
                            }
                            list.into_iter().map(|n| pick(&Some(n))).collect::<Result<_>>()?
                        }
                        (file, None) => {
                            let one = pick(&file)?;
                            vec![one; streams.unwrap_or(0) as usize]
                        }
                    };
                    let streams = stream_files.len();
                    let shared_file = stream_files.iter().all(|f| f.0 == stream_files[0].0);
                    let end_of = |f: u64| to.map(|t| t.0).unwrap_or(f);
                    let starts: Vec<u64> = match starts {
                        Some(s) => s.into_iter().map(|s| s.0).collect(),
                        None if shared_file => (0..streams as u64).map(|i| end_of(stream_files[0].1) / streams.max(1) as u64 * i / 4096 * 4096).collect(),
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
                        return Err(bad(format!(
                            "interleaved: need streams >= 2 (or `files:` naming 2 or more), size > 0, and `starts`: one offset per stream, increasing among the streams of one file, below the file's end (or `to`)"
                        )));
                    }
                    let mut next_fd: BTreeMap<u32, u32> = BTreeMap::new();
                    let mut fds = Vec::new();
                    for &(f, _) in &stream_files {
                        let n = next_fd.entry(f).or_insert(0);
                        fds.push(fd_in(f, *n)?);
                        if separate_fds {
                            *n += 1;
                        }
                    }
                    Step::Interleaved { fds, size: size.0, starts, to: to.map(|t| t.0) }
                }
                StepFile::Fadvise { advice, offset, len, fd, file } => {
                    let (file, file_size) = pick(&file)?;
                    let fd = fd_in(file, fd)?;
                    if offset.0 + len.0 > file_size {
                        return Err(bad(format!("fadvise range {offset} + {len} is past the {} file", Size(file_size))));
                    }
                    Step::Fadvise { fd, offset: offset.0, len: len.0, advice }
                }
                StepFile::Readahead { offset, size, fd, file } => {
                    let (file, file_size) = pick(&file)?;
                    let fd = fd_in(file, fd)?;
                    if size.0 == 0 || offset.0 + size.0 > file_size {
                        return Err(bad(format!("readahead: `size` {size} at `offset` {offset} must be more than 0 and end inside the {} file", Size(file_size))));
                    }
                    Step::Readahead { fd, offset: offset.0, size: size.0 }
                }
                StepFile::Mmap { map, offset, size, shared, fd, file } => {
                    let (file, file_size) = pick(&file)?;
                    let fd = fd_in(file, fd)?;
                    if let Some(&(_, at)) = maps.get(&map) {
                        return Err(bad(format!("mmap: map {map} is still mapped (by reads[{at}]): `munmap: {{map: {map}}}` it first, or pick another `map` number")));
                    }
                    let mappable = file_size.div_ceil(PAGE) * PAGE;
                    if offset.0 % PAGE != 0 || offset.0 >= mappable {
                        return Err(bad(format!("mmap: `offset` {offset} must be a multiple of 4 KiB inside the {} file", Size(file_size))));
                    }
                    let len = size.map(|s| s.0).unwrap_or(mappable - offset.0);
                    if len == 0 || len % PAGE != 0 || offset.0 + len > mappable {
                        return Err(bad(format!(
                            "mmap: `size` {} at {offset} must be a multiple of 4 KiB, more than 0, and end inside the {} file (touching a page past its end is SIGBUS); leave it out to map to the end",
                            Size(len),
                            Size(file_size)
                        )));
                    }
                    maps.insert(map, (len, i));
                    Step::Mmap { map, fd, offset: offset.0, len, shared }
                }
                StepFile::Madvise { map, advice, offset, size } => {
                    let len_of = mapped(&maps, map, "madvise").map_err(&bad)?;
                    let start = offset.map(|o| o.0).unwrap_or(0);
                    let len = size.map(|s| s.0).unwrap_or(len_of.saturating_sub(start));
                    if start % PAGE != 0 || len % PAGE != 0 || len == 0 || start + len > len_of {
                        return Err(bad(format!(
                            "madvise: `offset` {} and `size` {} (bytes inside map {map}) must be multiples of 4 KiB inside its {}; leave them out for the whole mapping",
                            Size(start),
                            Size(len),
                            Size(len_of)
                        )));
                    }
                    Step::Madvise { map, offset: start, len, advice }
                }
                StepFile::Touch { map, maps: list, order, stride, count, seed, pages, from, to } => {
                    let list = match (map, list) {
                        (Some(_), Some(_)) => return Err(bad("touch: give `map: N` or `maps: [N, ...]`, not both".into())),
                        (Some(m), None) => vec![m],
                        (None, Some(l)) if l.is_empty() => return Err(bad("touch: `maps` is empty".into())),
                        (None, Some(l)) => l,
                        (None, None) => vec![0],
                    };
                    let mut shortest = u64::MAX;
                    for (k, &m) in list.iter().enumerate() {
                        if list[..k].contains(&m) {
                            return Err(bad(format!("touch: map {m} is listed twice in `maps`")));
                        }
                        shortest = shortest.min(mapped(&maps, m, "touch").map_err(&bad)?);
                    }
                    let from = from.map(|f| f.0).unwrap_or(0);
                    if from % PAGE != 0 || to.is_some_and(|t| t.0 % PAGE != 0) {
                        return Err(bad(format!("touch: `from` and `to` are bytes inside the mapping, multiples of 4 KiB (from {})", Size(from))));
                    }
                    let end = to.map(|t| t.0).unwrap_or(shortest);
                    if from >= end || end > shortest {
                        return Err(bad(format!(
                            "touch: [`from` {}, `to` {}) must be a non-empty range inside the mapping{} ({} long); `to` defaults to its end",
                            Size(from),
                            Size(end),
                            if list.len() > 1 { "s (the shortest)" } else { "" },
                            Size(shortest)
                        )));
                    }
                    let range_pages = (end - from) / PAGE;
                    let order = match (order, pages) {
                        (Some(_), Some(_)) => return Err(bad("touch: `pages: [...]` is an order of its own; remove `order:`".into())),
                        (None, None) => return Err(bad("touch: say the `order:` (sequential, backward, stride, random) or list `pages: [...]`".into())),
                        (None, Some(p)) => {
                            if stride.is_some() || count.is_some() || seed.is_some() {
                                return Err(bad("touch: `stride`, `count` and `seed` do not go with `pages: [...]`".into()));
                            }
                            if p.is_empty() {
                                return Err(bad("touch: `pages` is empty".into()));
                            }
                            if let Some(bad_page) = p.iter().find(|&&q| q >= range_pages) {
                                return Err(bad(format!("touch: page {bad_page} of `pages` is out of range: the range has {range_pages} pages (0 to {})", range_pages - 1)));
                            }
                            TouchOrder::Pages { pages: p }
                        }
                        (Some(o), None) => {
                            let unused = |key: &str, given: bool| -> Result<()> {
                                if given {
                                    Err(bad(format!("touch: `{key}` does not go with `order: {}`", format!("{o:?}").to_lowercase())))
                                } else {
                                    Ok(())
                                }
                            };
                            match o {
                                OrderName::Sequential | OrderName::Backward => {
                                    unused("stride", stride.is_some())?;
                                    unused("count", count.is_some())?;
                                    unused("seed", seed.is_some())?;
                                    if o == OrderName::Sequential { TouchOrder::Sequential } else { TouchOrder::Backward }
                                }
                                OrderName::Stride => {
                                    unused("count", count.is_some())?;
                                    unused("seed", seed.is_some())?;
                                    let Some(Size(stride)) = stride else {
                                        return Err(bad("touch: `order: stride` needs `stride:` (a multiple of 4 KiB)".into()));
                                    };
                                    if stride == 0 || stride % PAGE != 0 {
                                        return Err(bad(format!("touch: `stride` {} must be a multiple of 4 KiB, more than 0", Size(stride))));
                                    }
                                    TouchOrder::Stride { stride }
                                }
                                OrderName::Random => {
                                    unused("stride", stride.is_some())?;
                                    let Some(count) = count.filter(|&c| c > 0) else {
                                        return Err(bad("touch: `order: random` needs `count:` (touches, more than 0)".into()));
                                    };
                                    TouchOrder::Random { count, seed: seed.unwrap_or(0) }
                                }
                            }
                        }
                    };
                    Step::Touch { maps: list, from, to: to.map(|t| t.0), order }
                }
                StepFile::Munmap { map } => {
                    mapped(&maps, map, "munmap").map_err(&bad)?;
                    maps.remove(&map);
                    Step::Munmap { map }
                }
            };
            steps.push(step);
        }
        let touches = pattern::expand_files(&steps, &sizes).iter().filter(|op| matches!(op, radiff_model::Op::Touch { .. })).count() as u64;
        if touches > MAX_TOUCHES {
            return Err(err(&["reads"], format!("the touch steps load {touches} pages; at most {MAX_TOUCHES}")));
        }

        // The fault path's settings.
        let fault_around_bytes = match raw.vm.fault_around_bytes {
            None => None,
            Some(Size(b)) => {
                // mm/memory.c fault_around_bytes_set(): above PTRS_PER_PTE (512) pages is
                // -EINVAL; anything else is rounded down to a power of two of pages (at
                // least one), so only those read back as written.
                if !(PAGE..=512 * PAGE).contains(&b) || !b.is_power_of_two() {
                    return Err(err(
                        &["vm", "fault_around_bytes"],
                        format!("vm.fault_around_bytes {}: must be a power of two from 4 KiB to 2 MiB (PTRS_PER_PTE pages; the kernel rounds other values down)", Size(b)),
                    ));
                }
                Some(b)
            }
        };
        let vm = VmRequest { fault_around_bytes, thp_enabled: raw.vm.thp_enabled };

        // Bytes the steps may bring in: what reads and readahead(2) ask for, and for a
        // mapping what its touches can fault in (at most the whole mapping).
        let mut touched: BTreeMap<u32, u64> = BTreeMap::new();
        let mut read_bytes: u64 = 0;
        for op in pattern::expand_files(&steps, &sizes) {
            match op {
                radiff_model::Op::Read { len, .. } | radiff_model::Op::Readahead { len, .. } => read_bytes += len,
                radiff_model::Op::Mmap { map, len, .. } => {
                    touched.insert(map, len);
                }
                radiff_model::Op::Touch { map, .. } => {
                    if let Some(left) = touched.get_mut(&map) {
                        let page = PAGE.min(*left);
                        *left -= page;
                        read_bytes += page;
                    }
                }
                _ => {}
            }
        }
        // About 64 ring-buffer bytes per event and at most one folio event per page read,
        // doubled for windows and requests; at least 16 MiB.
        let trace_buffer_kb = raw.trace_buffer_kb.unwrap_or((read_bytes / 4096 * 128 / 1024).max(16 << 10));
        let timeout = Duration::from_secs(raw.timeout_s.unwrap_or(240 + 120 * (total >> 30)));
        let variants_line = yaml::line_of(text, &["variants"]);
        Ok(Scenario {
            name,
            path: path.to_path_buf(),
            description: raw.description,
            device,
            fs: raw.filesystem,
            file_size,
            write_size: files[0].write_size,
            extent_size: files[0].extent_size,
            file_names,
            other_files: files[1..].to_vec(),
            steps,
            variants: raw.variants,
            variants_line,
            points,
            vm,
            known_divergence: raw.known_divergence,
            trace_buffer_kb,
            timeout,
        })
    }

    /// Every file's size, by file index.
    pub fn file_sizes(&self) -> Vec<u64> {
        std::iter::once(self.file_size).chain(self.other_files.iter().map(|f| f.size)).collect()
    }

    /// The test trial's name: `scenario_<stem>::<variant>[::<point>]`.
    pub fn trial_name(&self, variant: &str, point: &Point) -> String {
        match &point.label {
            Some(label) => format!("scenario_{}::{variant}::{label}", self.name),
            None => format!("scenario_{}::{variant}", self.name),
        }
    }

    /// The point named `label` (`None`: the first point).
    pub fn point(&self, label: Option<&str>) -> Result<&Point> {
        match label {
            None => Ok(&self.points[0]),
            Some(l) => self.points.iter().find(|p| p.label.as_deref() == Some(l)).ok_or_else(|| {
                let known: Vec<&str> = self.points.iter().filter_map(|p| p.label.as_deref()).collect();
                Error::Other(format!("{}: no matrix point `{l}`; points: {}", self.path.display(), if known.is_empty() { "none (no matrix)".to_string() } else { known.join(", ") }))
            }),
        }
    }

    /// The variants this scenario runs on, checked against `known` (from `kernels/`).
    pub fn variants(&self, known: &[String]) -> Result<Vec<String>> {
        match &self.variants {
            None => Ok(known.to_vec()),
            Some(names) => {
                for name in names {
                    if !known.contains(name) {
                        return Err(Error::input(&self.path, self.variants_line, format!("unknown variant `{name}`; known variants: {}", known.join(", "))));
                    }
                }
                Ok(names.clone())
            }
        }
    }
}

/// The length of live mapping `map`, or why `step` cannot use it.
fn mapped(maps: &BTreeMap<u32, (u64, usize)>, map: u32, step: &str) -> std::result::Result<u64, String> {
    match maps.get(&map) {
        Some(&(len, _)) => Ok(len),
        None => Err(format!(
            "{step}: map {map} is not mapped here: no earlier `mmap` step made it (or it was unmapped); add `- mmap: {{map: {map}}}` before this step{}",
            if maps.is_empty() { String::new() } else { format!(" (mapped now: {})", maps.keys().map(|m| m.to_string()).collect::<Vec<_>>().join(", ")) }
        )),
    }
}

/// Every `scenarios/*.yaml`, sorted by name. Finding none is an error.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(Error::Other(format!("no scenario (*.yaml) in {}", dir.display())));
    }
    Ok(found)
}

/// Every scenario file under `dir`, each loaded on its own: a bad file is its own error and
/// stops none of the others (the test trials list each bad file as a failing trial).
pub fn load_each(dir: &Path) -> Result<Vec<(PathBuf, Result<Scenario>)>> {
    Ok(discover(dir)?.into_iter().map(|path| {
        let loaded = Scenario::load(&path);
        (path, loaded)
    }).collect())
}

/// Parses every scenario; collects all errors rather than stopping at the first.
pub fn load_all(dir: &Path) -> Result<Vec<Scenario>> {
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for path in discover(dir)? {
        match Scenario::load(&path) {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Other(errors.join("\n")));
    }
    Ok(scenarios)
}

/// Names of matrix keys → values, for summaries.
pub fn describe_queue(q: &QueueSettings) -> BTreeMap<&'static str, String> {
    let mut m = BTreeMap::new();
    if let Some(v) = q.read_ahead_kb {
        m.insert("read_ahead_kb", v.to_string());
    }
    if let Some(v) = q.max_sectors_kb {
        m.insert("max_sectors_kb", v.to_string());
    }
    if let Some(v) = q.rotational {
        m.insert("rotational", (v as u8).to_string());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
description: test
device:
  kind: nvme
  size: 1 GiB
  transfer_limit: 2 MiB
filesystem: xfs
file:
  size: 512 MiB
queue:
  read_ahead_kb: 128
  max_sectors_kb: 512
reads:
  - read: {offset: 0, size: 4 KiB}
  - sequential: {from: 4 KiB, size: 1 MiB}
matrix:
  max_sectors_kb: [1024, 2048]
";

    fn parse(text: &str) -> Result<Scenario> {
        Scenario::parse(Path::new("scenarios/t.yaml"), text)
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_good_scenario_expands_its_matrix() {
        let s = parse(GOOD).unwrap();
        assert_eq!(s.name, "t");
        assert_eq!(s.device.mdts(), 9);
        assert_eq!(s.file_size, 512 << 20);
        assert_eq!(s.write_size, 1 << 20, "the default write size");
        let labels: Vec<_> = s.points.iter().map(|p| p.label.clone().unwrap()).collect();
        assert_eq!(labels, vec!["max_sectors_kb=1024", "max_sectors_kb=2048"]);
        assert_eq!(s.points[1].queue.max_sectors_kb, Some(2048));
        assert_eq!(s.points[1].queue.read_ahead_kb, Some(128));
        assert_eq!(s.steps[1], Step::Sequential { fd: 0, from: 4096, size: 1 << 20, to: None });
    }

    #[test]
    fn sizes_take_binary_units_and_refuse_ambiguous_ones() {
        assert_eq!(Size::parse("4 KiB"), Ok(Size(4096)));
        assert_eq!(Size::parse("512MiB"), Ok(Size(512 << 20)));
        assert_eq!(Size::parse("2G"), Ok(Size(2 << 30)));
        assert_eq!(Size::parse("100"), Ok(Size(100)));
        assert!(Size::parse("4 KB").unwrap_err().contains("unknown unit `KB`"));
        assert!(Size::parse("lots").unwrap_err().contains("not a size"));
        assert_eq!(Size(3 << 20).to_string(), "3 MiB");
    }

    #[test]
    fn a_misspelt_key_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("  read_ahead_kb: 128", "  read_ahaed_kb: 128"));
        assert!(e.starts_with("scenarios/t.yaml:10: "), "{e}");
        assert!(e.contains("unknown field `read_ahaed_kb`"), "{e}");
    }

    #[test]
    fn a_wrong_unit_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("size: 512 MiB", "size: 512 MB"));
        assert!(e.starts_with("scenarios/t.yaml:8: "), "{e}");
        assert!(e.contains("unknown unit `MB`"), "{e}");
    }

    #[test]
    fn an_unknown_file_system_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("filesystem: xfs", "filesystem: btrfs"));
        assert!(e.starts_with("scenarios/t.yaml:6: "), "{e}");
        assert!(e.contains("btrfs") && e.contains("xfs"), "{e}");
    }

    #[test]
    fn max_sectors_kb_above_the_device_limit_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("transfer_limit: 2 MiB", "transfer_limit: 512 KiB"));
        // The queue's 512 fits; the matrix's 1024 does not.
        assert!(e.starts_with("scenarios/t.yaml:16: "), "{e}");
        assert!(e.contains("max_sectors_kb 1024") && e.contains("4 to 512"), "{e}");
        let e = error(&GOOD.replace("max_sectors_kb: 512", "max_sectors_kb: 4096"));
        assert!(e.starts_with("scenarios/t.yaml:11: "), "{e}");
    }

    #[test]
    fn a_read_past_the_file_is_an_error_at_its_step() {
        let e = error(&GOOD.replace("- read: {offset: 0, size: 4 KiB}", "- read: {offset: 512 MiB, size: 4 KiB}"));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: "), "{e}");
        assert!(e.contains("does not fit"), "{e}");
    }

    #[test]
    fn a_file_bigger_than_the_disk_is_an_error() {
        let e = error(&GOOD.replace("size: 1 GiB", "size: 600 MiB"));
        assert!(e.starts_with("scenarios/t.yaml:4: ") && e.contains("too small"), "{e}");
    }

    #[test]
    fn a_transfer_limit_that_is_not_a_power_of_two_pages_is_an_error() {
        let e = error(&GOOD.replace("transfer_limit: 2 MiB", "transfer_limit: 3 MiB"));
        assert!(e.starts_with("scenarios/t.yaml:5: ") && e.contains("MDTS"), "{e}");
    }

    #[test]
    fn ufs_refuses_nvme_only_settings() {
        let e = error(&GOOD.replace("kind: nvme", "kind: ufs"));
        assert!(e.contains("UFS") && e.contains("transfer_limit"), "{e}");
    }

    #[test]
    fn random_sizes_must_be_aligned_ranges() {
        let e = error(&GOOD.replace("  - sequential: {from: 4 KiB, size: 1 MiB}", "  - random: {count: 5, size: 6 KiB..4 KiB}"));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: "), "{e}");
        let ok = parse(&GOOD.replace("  - sequential: {from: 4 KiB, size: 1 MiB}", "  - random: {count: 5, size: 4 KiB..128 KiB, seed: 9}")).unwrap();
        assert!(matches!(ok.steps[1], Step::Random { count: 5, seed: 9, size: SizeRange { min: 4096, max: 131072, align: 4096 }, .. }));
    }

    #[test]
    fn unknown_variants_are_errors_at_their_line() {
        let s = parse(&format!("{GOOD}variants: [base, async-align-v9]\n")).unwrap();
        let e = s.variants(&["base".into(), "async-align-v1".into()]).unwrap_err().to_string();
        assert_eq!(e, "scenarios/t.yaml:17: unknown variant `async-align-v9`; known variants: base, async-align-v1");
    }

    /// GOOD with `steps` as its reads (one step per line, already indented) and `extra`
    /// top-level text; the first step is at line 13.
    fn with_steps(steps: &str, extra: &str) -> String {
        let start = GOOD.find("reads:\n").unwrap() + "reads:\n".len();
        let end = GOOD.find("matrix:").unwrap();
        format!("{}{steps}{}{extra}", &GOOD[..start], &GOOD[end..])
    }

    #[test]
    fn mapping_steps_parse_with_their_defaults() {
        let s = parse(&with_steps(
            "  - readahead: {offset: 1 MiB, size: 2 MiB, fd: 1}
  - mmap: {size: 8 MiB}
  - mmap: {map: 1, offset: 64 MiB, shared: false}
  - madvise: {advice: sequential}
  - madvise: {map: 1, advice: hugepage, offset: 2 MiB, size: 2 MiB}
  - touch: {order: sequential}
  - touch: {maps: [0, 1], order: backward, from: 4 KiB, to: 1 MiB}
  - touch: {map: 1, order: stride, stride: 64 KiB}
  - touch: {map: 1, order: random, count: 100, seed: 5}
  - touch: {map: 1, pages: [0, 5, 2]}
  - munmap: {map: 1}
  - mmap: {map: 1, size: 4 KiB}
",
            "vm: {fault_around_bytes: 4 KiB, thp_enabled: madvise}\n",
        ))
        .unwrap();
        assert_eq!(s.steps[0], Step::Readahead { fd: 1, offset: 1 << 20, size: 2 << 20 });
        assert_eq!(s.steps[1], Step::Mmap { map: 0, fd: 0, offset: 0, len: 8 << 20, shared: true });
        assert_eq!(s.steps[2], Step::Mmap { map: 1, fd: 0, offset: 64 << 20, len: 448 << 20, shared: false }, "size defaults to the end of the file");
        assert_eq!(s.steps[3], Step::Madvise { map: 0, offset: 0, len: 8 << 20, advice: MadvAdvice::Sequential }, "the whole mapping");
        assert_eq!(s.steps[4], Step::Madvise { map: 1, offset: 2 << 20, len: 2 << 20, advice: MadvAdvice::Hugepage });
        assert_eq!(s.steps[5], Step::Touch { maps: vec![0], from: 0, to: None, order: TouchOrder::Sequential });
        assert_eq!(s.steps[6], Step::Touch { maps: vec![0, 1], from: 4096, to: Some(1 << 20), order: TouchOrder::Backward });
        assert_eq!(s.steps[7], Step::Touch { maps: vec![1], from: 0, to: None, order: TouchOrder::Stride { stride: 65536 } });
        assert_eq!(s.steps[8], Step::Touch { maps: vec![1], from: 0, to: None, order: TouchOrder::Random { count: 100, seed: 5 } });
        assert_eq!(s.steps[9], Step::Touch { maps: vec![1], from: 0, to: None, order: TouchOrder::Pages { pages: vec![0, 5, 2] } });
        assert_eq!(s.steps[10], Step::Munmap { map: 1 });
        assert_eq!(s.vm, VmRequest { fault_around_bytes: Some(4096), thp_enabled: Some(ThpMode::Madvise) });
        assert_eq!(parse(GOOD).unwrap().vm, VmRequest::default(), "no `vm:`: the kernel's settings");
        // A file that is not a page multiple maps to its last (partial) page.
        let odd = parse(&with_steps("  - mmap: {offset: 4 KiB}\n", "").replace("size: 512 MiB", "size: 10000")).unwrap();
        assert_eq!(odd.steps[0], Step::Mmap { map: 0, fd: 0, offset: 4096, len: 8192, shared: true });
    }

    #[test]
    fn touching_or_advising_no_mapping_is_an_error_at_its_step() {
        let e = error(&with_steps("  - touch: {map: 0, order: sequential}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: touch: map 0 is not mapped here"), "{e}");
        assert!(e.contains("add `- mmap: {map: 0}` before this step"), "{e}");
        let e = error(&with_steps("  - mmap: {}\n  - madvise: {map: 2, advice: random}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: madvise: map 2 is not mapped here") && e.contains("mapped now: 0"), "{e}");
        let e = error(&with_steps("  - mmap: {}\n  - munmap: {}\n  - touch: {maps: [0], order: backward}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:15: reads[2]: touch: map 0 is not mapped here") && e.contains("or it was unmapped"), "{e}");
        let e = error(&with_steps("  - munmap: {map: 3}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: munmap: map 3"), "{e}");
        let e = error(&with_steps("  - mmap: {}\n  - mmap: {}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: mmap: map 0 is still mapped (by reads[0])"), "{e}");
    }

    const TWO_FILES: &str = "\
description: two files
device:
  kind: nvme
  size: 1 GiB
filesystem: xfs
files:
  - {name: a, size: 64 MiB}
  - {name: b, size: 32 MiB, write_size: 256 KiB}
reads:
";

    #[test]
    fn two_files_parse_and_each_step_reads_the_file_it_names() {
        let s = parse(&format!("{TWO_FILES}  - read: {{file: b, offset: 0, size: 4 KiB}}\n  - interleaved: {{files: [a, b], size: 128 KiB}}\n  - sequential: {{file: a, fd: 1, size: 1 MiB}}\n")).unwrap();
        assert_eq!(s.file_names, vec!["a", "b"]);
        assert_eq!(s.file_sizes(), vec![64 << 20, 32 << 20]);
        assert_eq!(s.other_files[0].write_size, 256 << 10);
        let b0 = pattern::fd_of(1, 0);
        assert_eq!(s.steps[0], Step::Read { fd: b0, offset: 0, size: 4096 });
        assert_eq!(s.steps[1], Step::Interleaved { fds: vec![0, b0], size: 128 << 10, starts: vec![0, 0], to: None });
        assert_eq!(s.steps[2], Step::Sequential { fd: 1, from: 0, size: 1 << 20, to: None });
        // Two streams on one file with separate descriptors, one on the other file.
        let s = parse(&format!("{TWO_FILES}  - interleaved: {{files: [a, a, b], starts: [0, 32 MiB, 0], size: 64 KiB, separate_fds: true}}\n")).unwrap();
        assert_eq!(s.steps[0], Step::Interleaved { fds: vec![0, 1, b0], size: 64 << 10, starts: vec![0, 32 << 20, 0], to: None });
        // One `file:` still works as before, and the image key of a one-file scenario is unchanged by the `files` support.
        assert!(parse(GOOD).unwrap().file_names.is_empty());
    }

    #[test]
    fn a_step_naming_an_unknown_file_or_none_of_several_is_an_error_at_its_step() {
        let e = error(&format!("{TWO_FILES}  - read: {{file: c, offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:10: reads[0]: unknown file `c`; the scenario's files: a, b"), "{e}");
        let e = error(&format!("{TWO_FILES}  - read: {{offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:10: reads[0]: say which file the step reads: `file:` one of a, b"), "{e}");
        // b is 32 MiB: a read at 40 MiB fits a but not b.
        let e = error(&format!("{TWO_FILES}  - read: {{file: b, offset: 40 MiB, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:10: reads[0]: a read of 4 KiB at 40 MiB does not fit in the 32 MiB file"), "{e}");
        let e = error(&format!("{TWO_FILES}  - interleaved: {{files: [a, b], streams: 3, size: 4 KiB}}\n"));
        assert!(e.contains("`streams` 3 but `files` names 2"), "{e}");
        let e = error(&format!("{TWO_FILES}  - interleaved: {{files: [a, a], size: 4 KiB, starts: [0, 0]}}\n"));
        assert!(e.contains("increasing among the streams of one file"), "{e}");
        let e = error(&with_steps("  - read: {file: a, offset: 0, size: 4 KiB}\n", ""));
        assert!(e.contains("this scenario has one file"), "{e}");
        let e = error(&format!("{TWO_FILES}  - read: {{file: a, fd: 64, offset: 0, size: 4 KiB}}\n"));
        assert!(e.contains("fd 64: a file has descriptors 0 to 63"), "{e}");
    }

    #[test]
    fn files_are_checked_at_their_line() {
        let dup = TWO_FILES.replace("name: b", "name: a");
        let e = error(&format!("{dup}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:8: files[1]: `a` is named twice"), "{e}");
        let bad = TWO_FILES.replace("name: b", "name: b/c");
        let e = error(&format!("{bad}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:8: files[1]: name `b/c`"), "{e}");
        let big = TWO_FILES.replace("size: 32 MiB", "size: 900 MiB");
        let e = error(&format!("{big}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.contains("too small for 2 files of 964 MiB in all"), "{e}");
        let both = TWO_FILES.replace("files:\n", "file: {size: 1 MiB}\nfiles:\n");
        let e = error(&format!("{both}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.contains("give `file:` (one file) or `files:`"), "{e}");
    }

    #[test]
    fn a_touch_outside_its_mapping_is_an_error_at_its_step() {
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - touch: {order: sequential, to: 2 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: [`from` 0 B, `to` 2 MiB) must be a non-empty range inside the mapping (1 MiB long)"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - touch: {order: sequential, from: 1 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: [`from` 1 MiB, `to` 1 MiB)"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - mmap: {map: 1, size: 64 KiB}\n  - touch: {maps: [0, 1], order: sequential, to: 128 KiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:15: reads[2]: touch:") && e.contains("mappings (the shortest) (64 KiB long)"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - touch: {order: sequential, from: 100}\n", ""));
        assert!(e.contains("multiples of 4 KiB"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - madvise: {advice: willneed, offset: 512 KiB, size: 1 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: madvise: `offset` 512 KiB and `size` 1 MiB (bytes inside map 0) must be multiples of 4 KiB inside its 1 MiB"), "{e}");
    }

    #[test]
    fn an_mmap_past_the_file_or_unaligned_is_an_error_at_its_step() {
        let e = error(&with_steps("  - mmap: {offset: 510 MiB, size: 4 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: mmap: `size` 4 MiB at 510 MiB must be a multiple of 4 KiB, more than 0, and end inside the 512 MiB file"), "{e}");
        let e = error(&with_steps("  - mmap: {offset: 1000}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: mmap: `offset` 1000 B must be a multiple of 4 KiB"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 6 KiB}\n", ""));
        assert!(e.contains("`size` 6 KiB at 0 B must be a multiple of 4 KiB"), "{e}");
        let e = error(&with_steps("  - readahead: {offset: 511 MiB, size: 2 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: readahead:") && e.contains("end inside the 512 MiB file"), "{e}");
    }

    #[test]
    fn touch_orders_are_checked_at_their_step() {
        let touch = |t: &str| error(&with_steps(&format!("  - mmap: {{size: 1 MiB}}\n  - touch: {t}\n"), ""));
        let e = touch("{pages: [0, 256]}");
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: page 256 of `pages` is out of range: the range has 256 pages (0 to 255)"), "{e}");
        let e = touch("{order: stride, stride: 6 KiB}");
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: `stride` 6 KiB must be a multiple of 4 KiB"), "{e}");
        assert!(touch("{order: stride}").contains("needs `stride:`"));
        assert!(touch("{order: random}").contains("needs `count:`"));
        assert!(touch("{order: sequential, count: 5}").contains("`count` does not go with `order: sequential`"));
        assert!(touch("{order: sequential, pages: [1]}").contains("remove `order:`"));
        assert!(touch("{}").contains("say the `order:`"));
        assert!(touch("{map: 0, maps: [0]}").contains("not both"));
        let e = touch("{order: sideways}");
        assert!(e.starts_with("scenarios/t.yaml:14: ") && e.contains("sideways"), "{e}");
        let e = touch("{order: sequential, stripe: 1}");
        assert!(e.starts_with("scenarios/t.yaml:14: ") && e.contains("unknown field `stripe`"), "{e}");
    }

    #[test]
    fn vm_values_out_of_range_are_errors_at_their_line() {
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  fault_around_bytes: 48 KiB\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: vm.fault_around_bytes 48 KiB: must be a power of two from 4 KiB to 2 MiB"), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  fault_around_bytes: 4 MiB\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("2 MiB"), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  fault_around_bytes: 2 KiB\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: "), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  thp_enabled: sometimes\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("sometimes") && e.contains("madvise"), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  swappiness: 1\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("unknown field `swappiness`"), "{e}");
        assert_eq!(parse(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm: {fault_around_bytes: 2 MiB}\n")).unwrap().vm.fault_around_bytes, Some(2 << 20));
    }

    #[test]
    fn every_scenario_in_the_repository_parses() {
        let scenarios = load_all(&crate::repo_root().join("scenarios")).unwrap();
        assert!(scenarios.len() >= 12);
        for s in &scenarios {
            assert!(!s.description.is_empty());
            let text = std::fs::read_to_string(&s.path).unwrap();
            assert!(
                text.starts_with("# Seed ") || text.starts_with("# Found by `radiff explore") || text.starts_with("# Issue "),
                "{}: say which mail and measurement it reproduces (`# Seed ...`), which search found it (`# Found by `radiff explore ...`), or which issue it shows (`# Issue N: ...`)",
                s.path.display()
            );
        }
    }
}
