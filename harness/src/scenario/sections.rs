//! The checks of a scenario's sections other than `reads:` (see `steps.rs`): one function
//! per section, each returning the checked value or an error at the line of its key.

use std::path::Path;
use std::time::Duration;

use radiff_model::FsKind;

use super::bounds::{MAX_DEVICE_SIZE, MAX_POINTS, MAX_READ_AHEAD_KB, MAX_TIMEOUT_S, MAX_TRACE_BUFFER_KB};
use super::schema::{DeviceFile, ListedFile, MatrixFile, MkfsFile, OneFile, QueueFile, VmFile};
use super::size::Size;
use super::{Device, FileDef, Point, PAGE, UFS_TRANSFER_LIMIT};
use crate::error::{Error, Result};
use crate::wire::{DeviceKind, QueueSettings, VmRequest};
use crate::yaml;

/// The scenario file being parsed: where its errors point.
pub(super) struct At<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl At<'_> {
    /// An error at the line of `keys` (`["device", "size"]`).
    pub(super) fn err(&self, keys: &[&str], message: String) -> Error {
        Error::input(self.path, yaml::line_of(self.text, keys), message)
    }

    /// An error at the line of item `index` of the list under `key`.
    pub(super) fn err_item(&self, key: &str, index: usize, message: String) -> Error {
        Error::input(self.path, yaml::line_of_item(self.text, key, index), message)
    }
}

/// The scenario's name: its file stem, which names test trials.
pub(super) fn name(path: &Path) -> Result<String> {
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(Error::input(
            path,
            0,
            "scenario file names may use only letters, digits, `_` and `-` (they name test trials)",
        ));
    }
    Ok(name)
}

/// `device:`.
pub(super) fn device(at: &At, d: DeviceFile) -> Result<Device> {
    if d.size.0 > MAX_DEVICE_SIZE {
        return Err(at.err(
            &["device", "size"],
            format!(
                "device.size {}: at most {} (the guest's memory holds the files: see MAX_DEVICE_SIZE)",
                d.size,
                Size(MAX_DEVICE_SIZE)
            ),
        ));
    }
    let transfer_limit = match (d.kind, d.transfer_limit) {
        (DeviceKind::Nvme, None) => 512 << 10,
        (DeviceKind::Nvme, Some(Size(t))) => {
            if t < 8192 || !t.is_power_of_two() || t > (4096 << 15) {
                return Err(at.err(&["device", "transfer_limit"], format!("device.transfer_limit {}: NVMe's limit is 4 KiB times a power of two (MDTS), from 8 KiB to 128 MiB", Size(t))));
            }
            t
        }
        (DeviceKind::Ufs, None) => UFS_TRANSFER_LIMIT,
        (DeviceKind::Ufs, Some(_)) => {
            return Err(at.err(
                &["device", "transfer_limit"],
                "device.transfer_limit: QEMU's UFS device has a fixed limit (1 MiB); remove the key".into(),
            ))
        }
    };
    for (key, value) in [("optimal_io_size", d.optimal_io_size), ("logical_block_size", d.logical_block_size)] {
        if let Some(Size(v)) = value {
            if d.kind == DeviceKind::Ufs {
                return Err(
                    at.err(&["device", key], format!("device.{key}: QEMU's UFS device cannot set it; remove the key"))
                );
            }
            if v > d.size.0 {
                return Err(
                    at.err(&["device", key], format!("device.{key} {}: larger than the device ({})", Size(v), d.size))
                );
            }
            if v == 0 || v % 512 != 0 {
                return Err(
                    at.err(&["device", key], format!("device.{key} {}: must be a multiple of 512 bytes", Size(v)))
                );
            }
        }
    }
    if d.iops_limit.is_some_and(|n| n == 0 || d.kind == DeviceKind::Ufs) {
        return Err(at.err(
            &["device", "iops_limit"],
            "device.iops_limit: requests a second of an NVMe device, at least 1 (UFS: remove the key)".into(),
        ));
    }
    Ok(Device {
        iops_limit: d.iops_limit,
        kind: d.kind,
        size: d.size.0,
        transfer_limit,
        optimal_io_size: d.optimal_io_size.map(|s| s.0),
        logical_block_size: d.logical_block_size.map(|s| s.0),
    })
}

/// `mkfs:`: the block size, checked against what the file system and the kernel accept.
///
/// Only XFS takes a block larger than the page: 7.3.4's xfs_fs_fill_super() mounts
/// `sb_blocksize > PAGE_SIZE` on a V5 (crc) file system up to
/// `mapping_max_folio_size_supported()` (2 MiB with CONFIG_TRANSPARENT_HUGEPAGE), and
/// mkfs.xfs makes blocks up to 64 KiB. f2fs's block is the page ("#define F2FS_BLKSIZE
/// PAGE_SIZE /* support only block == page */"). 7.3.4's ext4 mounts large blocks
/// (s_min_folio_order = get_order(blocksize)), but the model's ext4_mpage_readpages() is a
/// port for blocks of one page (model/src/fs.rs), so radiff refuses it rather than guess.
pub(super) fn mkfs(at: &At, mkfs: &MkfsFile, fs: FsKind, device: &Device) -> Result<Option<u64>> {
    let Some(Size(b)) = mkfs.block_size else { return Ok(None) };
    if fs != FsKind::Xfs {
        return Err(at.err(
            &["mkfs", "block_size"],
            format!(
                "mkfs.block_size: radiff sets the block size of XFS only; {}: remove the key",
                if fs == FsKind::F2fs {
                    "f2fs's block is the page (F2FS_BLKSIZE), always 4 KiB"
                } else {
                    "the model ports ext4's reads for 4 KiB blocks only"
                }
            ),
        ));
    }
    if !(PAGE..=64 << 10).contains(&b) || !b.is_power_of_two() {
        return Err(at.err(
            &["mkfs", "block_size"],
            format!(
                "mkfs.block_size {}: XFS takes a power of two from 4 KiB (the page) to 64 KiB (mkfs.xfs's largest)",
                Size(b)
            ),
        ));
    }
    if let Some(l) = device.logical_block_size.filter(|&l| l > b) {
        return Err(at.err(
            &["mkfs", "block_size"],
            format!("mkfs.block_size {}: smaller than the device's logical block size ({})", Size(b), Size(l)),
        ));
    }
    // mkfs.xfs: "Filesystem must be larger than 300MB."
    if device.size < 300 << 20 {
        return Err(at.err(
            &["device", "size"],
            format!(
                "device.size {}: mkfs.xfs with `mkfs:` settings needs a device larger than 300 MiB",
                Size(device.size)
            ),
        ));
    }
    Ok(Some(b))
}

/// The checked files: every file in order, and whether they have names (`files:`).
pub(super) struct Files {
    pub(super) defs: Vec<FileDef>,
    pub(super) named: bool,
    /// Their sizes together, bytes.
    pub(super) total: u64,
}

impl Files {
    /// The names of the scenario's files (`files:`), empty for one `file:`.
    pub(super) fn names(&self) -> Vec<String> {
        if self.named {
            self.defs.iter().map(|f| f.name.clone()).collect()
        } else {
            Vec::new()
        }
    }
}

/// `file:` or `files:`, checked against the file system and the device.
pub(super) fn files(
    at: &At,
    file: Option<OneFile>,
    files: Option<Vec<ListedFile>>,
    fs: FsKind,
    device: &Device,
) -> Result<Files> {
    // Each file: how errors name it (`file`, `files[1]`), its keys, and its `name:`.
    let defs: Vec<(String, OneFile, Option<String>)> = match (file, files) {
        (Some(_), Some(_)) => {
            return Err(
                at.err(&["files"], "give `file:` (one file) or `files:` (a list of named files), not both".into())
            )
        }
        (None, None) => {
            return Err(at.err(
                &["description"],
                "no file: add `file: {size: 64 MiB}` (or `files:` with a `name:` for each)".into(),
            ))
        }
        (Some(f), None) => vec![("file".to_string(), f, None)],
        (None, Some(list)) => listed_files(at, list)?,
    };
    let mut files: Vec<FileDef> = Vec::new();
    let mut total: u64 = 0;
    for (what, f, name) in &defs {
        // `file:`'s errors point at the key, `files:`' at the file's item.
        let line_err = |k: &'static str, message: String| -> Error {
            match name {
                None => at.err(&["file", k], message),
                Some(_) => at.err_item("files", files.len(), message),
            }
        };
        let size = f.size.0;
        if size == 0 {
            return Err(line_err("size", format!("{what}.size must be more than 0")));
        }
        if size > MAX_DEVICE_SIZE {
            return Err(line_err(
                "size",
                format!(
                    "{what}.size {}: at most {}, the largest device (the guest's memory holds the files)",
                    Size(size),
                    Size(MAX_DEVICE_SIZE)
                ),
            ));
        }
        let write_size = f.write_size.map(|s| s.0).unwrap_or(1 << 20);
        if write_size == 0 || write_size % 4096 != 0 || write_size > 64 << 20 {
            return Err(line_err(
                "write_size",
                format!(
                    "{what}.write_size {}: direct writes need a multiple of 4 KiB, at most 64 MiB",
                    Size(write_size)
                ),
            ));
        }
        if let Some(Size(e)) = f.extent_size.filter(|e| e.0 > MAX_DEVICE_SIZE) {
            return Err(line_err(
                "extent_size",
                format!("{what}.extent_size {}: at most {}, the largest device", Size(e), Size(MAX_DEVICE_SIZE)),
            ));
        }
        if let Some(Size(e)) = f.extent_size {
            if fs != FsKind::Xfs {
                return Err(line_err(
                    "extent_size",
                    format!(
                        "{what}.extent_size: only XFS takes an extent size hint; {} lays out the file itself",
                        fs.name()
                    ),
                ));
            }
            if e == 0 || e % 4096 != 0 {
                return Err(line_err(
                    "extent_size",
                    format!("{what}.extent_size {}: must be a multiple of 4 KiB", Size(e)),
                ));
            }
        }
        total += size;
        files.push(FileDef {
            name: name.clone().unwrap_or_default(),
            size,
            write_size,
            extent_size: f.extent_size.map(|s| s.0),
        });
    }
    if total + total / 4 + (64 << 20) > device.size {
        return Err(at.err(
            &["device", "size"],
            format!(
                "device.size {} is too small for {}: leave a quarter of the data plus 64 MiB for the file system",
                Size(device.size),
                if files.len() == 1 {
                    format!("a {} file", Size(total))
                } else {
                    format!("{} files of {} in all", files.len(), Size(total))
                }
            ),
        ));
    }
    Ok(Files { defs: files, named: defs[0].2.is_some(), total })
}

/// `files:`: 1 to 8 files, each with a name of its own.
fn listed_files(at: &At, list: Vec<ListedFile>) -> Result<Vec<(String, OneFile, Option<String>)>> {
    if list.is_empty() || list.len() > 8 {
        return Err(at.err(&["files"], format!("`files:` lists {} files: give 1 to 8", list.len())));
    }
    let mut defs: Vec<(String, OneFile, Option<String>)> = Vec::new();
    for (i, f) in list.into_iter().enumerate() {
        let ok = !f.name.is_empty()
            && f.name.len() <= 32
            && f.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok {
            return Err(at.err_item(
                "files",
                i,
                format!("files[{i}]: name `{}`: use 1 to 32 letters, digits, `_` or `-`", f.name),
            ));
        }
        if defs.iter().any(|(_, _, n)| n.as_deref() == Some(f.name.as_str())) {
            return Err(at.err_item("files", i, format!("files[{i}]: `{}` is named twice", f.name)));
        }
        defs.push((
            format!("files[{i}]"),
            OneFile { size: f.size, write_size: f.write_size, extent_size: f.extent_size },
            Some(f.name),
        ));
    }
    Ok(defs)
}

/// `queue:` and `matrix:`: the points of the scenario, each a set of queue settings.
pub(super) fn points(at: &At, queue: &QueueFile, matrix: &MatrixFile, transfer_limit: u64) -> Result<Vec<Point>> {
    let max_kb = transfer_limit >> 10;
    let check_queue = |keys: &[&str], q: &QueueSettings| -> Result<()> {
        if let Some(r) = q.read_ahead_kb.filter(|&r| r > MAX_READ_AHEAD_KB) {
            return Err(at.err(keys, format!("read_ahead_kb {r}: at most {MAX_READ_AHEAD_KB} (1 GiB; a larger window is beyond any device radiff runs)")));
        }
        if let Some(m) = q.max_sectors_kb {
            if m < 4 || m > max_kb {
                return Err(at.err(keys, format!("max_sectors_kb {m}: the device's transfer limit allows 4 to {max_kb} (raise device.transfer_limit for NVMe)")));
            }
        }
        Ok(())
    };
    let base_queue = QueueSettings {
        read_ahead_kb: queue.read_ahead_kb,
        max_sectors_kb: queue.max_sectors_kb,
        rotational: queue.rotational,
        scheduler: queue.scheduler.unwrap_or_default(),
    };
    check_queue(&["queue", "max_sectors_kb"], &QueueSettings { read_ahead_kb: None, ..base_queue.clone() })?;
    check_queue(&["queue", "read_ahead_kb"], &base_queue)?;
    let mut points = vec![Point { label: None, queue: base_queue.clone() }];
    for (key, values) in [("max_sectors_kb", &matrix.max_sectors_kb), ("read_ahead_kb", &matrix.read_ahead_kb)] {
        let Some(values) = values else { continue };
        if values.is_empty() {
            return Err(at.err(&["matrix", key], format!("matrix.{key} is empty")));
        }
        if points.len().saturating_mul(values.len()) > MAX_POINTS {
            return Err(at.err(
                &["matrix", key],
                format!(
                    "matrix.{key}: {} points in all; at most {MAX_POINTS} (each point runs every variant)",
                    points.len().saturating_mul(values.len())
                ),
            ));
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
    Ok(points)
}

/// `vm:`: the fault path's settings.
pub(super) fn vm(at: &At, vm: &VmFile) -> Result<VmRequest> {
    let fault_around_bytes = match vm.fault_around_bytes {
        None => None,
        Some(Size(b)) => {
            // mm/memory.c fault_around_bytes_set(): above PTRS_PER_PTE (512) pages is
            // -EINVAL; anything else is rounded down to a power of two of pages (at
            // least one), so only those read back as written.
            if !(PAGE..=512 * PAGE).contains(&b) || !b.is_power_of_two() {
                return Err(at.err(
                    &["vm", "fault_around_bytes"],
                    format!("vm.fault_around_bytes {}: must be a power of two from 4 KiB to 2 MiB (PTRS_PER_PTE pages; the kernel rounds other values down)", Size(b)),
                ));
            }
            Some(b)
        }
    };
    Ok(VmRequest { fault_around_bytes, thp_enabled: vm.thp_enabled })
}

/// `trace_buffer_kb:` and `timeout_s:`, or their defaults: a buffer for the events of
/// `read_bytes` bytes read, a timeout that grows with the `total` bytes of the files.
pub(super) fn budget(
    at: &At,
    trace_buffer_kb: Option<u64>,
    timeout_s: Option<u64>,
    read_bytes: u64,
    total: u64,
) -> Result<(u64, Duration)> {
    // About 64 ring-buffer bytes per event and at most one folio event per page read,
    // doubled for windows and requests; at least 16 MiB.
    let default_kb = (read_bytes / 4096 * 128 / 1024).max(16 << 10);
    let trace_buffer_kb = match trace_buffer_kb {
        Some(kb) if kb > MAX_TRACE_BUFFER_KB => {
            return Err(at.err(&["trace_buffer_kb"], format!("trace_buffer_kb {kb}: at most {MAX_TRACE_BUFFER_KB} (2 GiB; the guest's memory holds the buffer twice)")));
        }
        Some(kb) => kb,
        None if default_kb > MAX_TRACE_BUFFER_KB => {
            return Err(at.err(&["reads"], format!("the steps read {} in all: their trace needs a buffer of {default_kb} KiB, more than the {MAX_TRACE_BUFFER_KB} KiB the guest can hold; read less", Size(read_bytes))));
        }
        None => default_kb,
    };
    if let Some(t) = timeout_s.filter(|&t| t > MAX_TIMEOUT_S) {
        return Err(at.err(&["timeout_s"], format!("timeout_s {t}: at most {MAX_TIMEOUT_S} (a day)")));
    }
    let timeout = Duration::from_secs(timeout_s.unwrap_or(240 + 120 * (total >> 30)));
    Ok((trace_buffer_kb, timeout))
}
