//! Preparing a disk: the device found, the file system made and mounted, the files written.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use radiff_model::{Extent, FsKind};

use crate::wire::{DeviceKind, GuestFile, GuestSpec};

use super::sysfs::read_sys;
use super::{file_path, AlignedBuf, GResult, Guest, MNT};

pub(super) fn prepare(
    g: &mut Guest,
    spec: &GuestSpec,
    mkfs_args: &[String],
    write_size: u64,
    extent_size: Option<u64>,
) -> GResult<()> {
    let device = find_device(spec.device, spec.disk.as_deref())?;
    let dev_path = format!("/dev/{device}");
    g.step(&format!("mkfs.{} {dev_path}", spec.fs.name()));
    let mut cmd = std::process::Command::new(format!("mkfs.{}", spec.fs.name()));
    cmd.args(match spec.fs {
        FsKind::Xfs => vec!["-f", "-q"],
        FsKind::Ext4 => vec!["-F", "-q"],
        FsKind::F2fs => vec!["-f", "-q"],
    });
    cmd.args(mkfs_args).arg(&dev_path);
    let output = cmd.output().map_err(|e| format!("mkfs.{}: {e}", spec.fs.name()))?;
    if !output.status.success() {
        return Err(format!(
            "mkfs.{} failed: {}{}",
            spec.fs.name(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    mount(g, &dev_path, spec.fs)?;
    let first = GuestFile { size: spec.file_size, write_size, extent_size };
    for (f, file) in std::iter::once(&first).chain(&spec.other_files).enumerate() {
        write_data(g, spec.fs, &file_path(f), file)?;
    }
    g.step("umount");
    nix::mount::umount(MNT).map_err(|e| format!("umount {MNT}: {e}"))?;
    Ok(())
}

/// Writes one file of the scenario with direct writes of its `write_size`.
fn write_data(g: &mut Guest, fs: FsKind, path: &Path, spec: &GuestFile) -> GResult<()> {
    let (write_size, extent_size) = (spec.write_size, spec.extent_size);
    g.step(&format!("writing {} bytes to {} with O_DIRECT writes of {write_size}", spec.size, path.display()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .custom_flags(nix::libc::O_DIRECT)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(extsize) = extent_size {
        set_xfs_extsize(&file, extsize)?;
    }
    if fs != FsKind::F2fs {
        // One allocation for the whole file, so its layout does not depend on how the
        // writes interleave with the allocator's other work: every machine that prepares
        // this image gets the same extents. (f2fs allocates on write whatever is asked.)
        nix::fcntl::fallocate(file.as_raw_fd(), nix::fcntl::FallocateFlags::empty(), 0, spec.size as i64)
            .map_err(|e| format!("fallocate {} bytes: {e}", spec.size))?;
    }
    let buf = AlignedBuf::new(write_size as usize);
    let mut pos = 0;
    while pos < spec.size {
        let len = write_size.min(spec.size - pos) as usize;
        // Contents: each 8-byte word holds its own file offset, so a wrong read is visible.
        let data = buf.slice_mut(len);
        for (i, word) in data.chunks_mut(8).enumerate() {
            let v = (pos + 8 * i as u64).to_le_bytes();
            word.copy_from_slice(&v[..word.len()]);
        }
        file.write_all_at(data, pos).map_err(|e| format!("write at {pos}: {e}"))?;
        pos += len as u64;
    }
    file.sync_all().map_err(|e| format!("fsync: {e}"))?;
    Ok(())
}

/// The device under test: the NVMe namespace, or the UFS logical unit (a SCSI disk whose
/// vendor is QEMU; scsi_debug's disks are skipped); with `pci`, the one below that PCI
/// device (`/sys/block/NAME` resolves to `/sys/devices/pci0000:00/PCI/...`).
pub(super) fn find_device(kind: DeviceKind, pci: Option<&str>) -> GResult<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/block")
        .map_err(|e| format!("/sys/block: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let below = |name: &str, pci: &str| {
        std::fs::canonicalize(format!("/sys/block/{name}"))
            .map(|p| p.to_string_lossy().contains(&format!("/{pci}/")))
            .unwrap_or(false)
    };
    let found = names.iter().find(|name| {
        let kind_ok = match kind {
            DeviceKind::Nvme => name.starts_with("nvme"),
            DeviceKind::Ufs => {
                name.starts_with("sd")
                    && read_sys(&format!("/sys/block/{name}/device/vendor")).map(|v| v == "QEMU").unwrap_or(false)
            }
        };
        kind_ok && pci.is_none_or(|pci| below(name, pci))
    });
    let name = found.ok_or_else(|| match pci {
        Some(pci) => format!("no {kind:?} disk at PCI {pci} in /sys/block (have: {})", names.join(" ")),
        None => format!("no {kind:?} disk in /sys/block (have: {})", names.join(" ")),
    })?;
    if !Path::new("/dev").join(name).exists() {
        // devtmpfs is not always mounted by the guest's init.
        let dev = read_sys(&format!("/sys/block/{name}/dev"))?;
        let (major, minor) = dev.split_once(':').ok_or("bad dev")?;
        let devnum = nix::sys::stat::makedev(major.parse().unwrap_or(0), minor.parse().unwrap_or(0));
        nix::sys::stat::mknod(
            Path::new("/dev").join(name).as_path(),
            nix::sys::stat::SFlag::S_IFBLK,
            nix::sys::stat::Mode::from_bits_truncate(0o600),
            devnum,
        )
        .map_err(|e| format!("mknod /dev/{name}: {e}"))?;
    }
    Ok(name.clone())
}

pub(super) fn mount(g: &mut Guest, dev: &str, fs: FsKind) -> GResult<()> {
    g.step(&format!("mounting {dev} ({}) on {MNT}", fs.name()));
    std::fs::create_dir_all(MNT).map_err(|e| format!("{MNT}: {e}"))?;
    // noatime: an atime update would make the file system write its log during the run.
    // Not read-only: on a read-only mount XFS no longer reads the file's inode cluster
    // during the run, and whether it does would then depend on its buffer cache's shrinker.
    // ext4: noinit_itable, or ext4lazyinit zeroes the inode tables of a fresh file system
    // in the background after mount, and its writes land in some runs' traces and not others.
    // no_prefetch_block_bitmaps: otherwise the same thread reads every group's block bitmap,
    // starting at a random time 0 to 5 s after mount (ext4_li_request_new), so a trace had
    // those metadata reads or not by chance (measured: 1 or 6 metadata reads, two runs of one
    // image); with both options ext4 registers no lazyinit work at all.
    let data = if fs == FsKind::Ext4 { Some("noinit_itable,no_prefetch_block_bitmaps") } else { None };
    nix::mount::mount(Some(dev), MNT, Some(fs.name()), nix::mount::MsFlags::MS_NOATIME, data)
        .map_err(|e| format!("mount {dev} on {MNT} as {}: {e}", fs.name()))
}

const FS_IOC_FIEMAP: u64 = 0xC020_660B;
const FIEMAP_FLAG_SYNC: u32 = 1;
const FIEMAP_EXTENT_LAST: u32 = 1;

/// The file's extents (FS_IOC_FIEMAP), in bytes.
pub(super) fn fiemap(file: &File) -> GResult<Vec<Extent>> {
    const BATCH: usize = 256;
    // struct fiemap (32 bytes) followed by BATCH struct fiemap_extent (56 bytes each).
    let mut buf = vec![0u64; (32 + 56 * BATCH) / 8];
    let mut extents = Vec::new();
    let mut start = 0u64;
    loop {
        buf.iter_mut().for_each(|w| *w = 0);
        buf[0] = start;
        buf[1] = u64::MAX - start;
        // fm_flags (u32) | fm_mapped_extents (u32) in word 2; fm_extent_count | reserved in word 3.
        buf[2] = FIEMAP_FLAG_SYNC as u64;
        buf[3] = BATCH as u64;
        // SAFETY: buf is a properly sized, aligned struct fiemap with room for BATCH extents.
        let rc = unsafe { nix::libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, buf.as_mut_ptr()) };
        if rc < 0 {
            return Err(format!("FIEMAP: {}", std::io::Error::last_os_error()));
        }
        let mapped = (buf[2] >> 32) as usize;
        if mapped == 0 {
            break;
        }
        let mut last = false;
        for i in 0..mapped {
            let base = (32 + 56 * i) / 8;
            let flags = (buf[base + 5] & 0xffff_ffff) as u32;
            extents.push(Extent { logical: buf[base], physical: buf[base + 1], length: buf[base + 2], flags });
            last |= flags & FIEMAP_EXTENT_LAST != 0;
        }
        let end = extents.last().map(|e| e.logical + e.length).unwrap_or(0);
        if last || end <= start {
            break;
        }
        start = end;
    }
    Ok(extents)
}

/// Sets XFS's extent size hint (FS_IOC_FSSETXATTR, fsx_extsize) before the file is written.
fn set_xfs_extsize(file: &File, extsize: u64) -> GResult<()> {
    const FS_IOC_FSGETXATTR: u64 = 0x801C_581F;
    const FS_IOC_FSSETXATTR: u64 = 0x401C_5820;
    const FS_XFLAG_EXTSIZE: u32 = 0x800;
    // struct fsxattr: xflags, extsize, nextents, projid, cowextsize (u32 each), pad[8].
    let mut attr = [0u32; 7];
    // SAFETY: attr is a 28-byte struct fsxattr.
    if unsafe { nix::libc::ioctl(file.as_raw_fd(), FS_IOC_FSGETXATTR as _, attr.as_mut_ptr()) } < 0 {
        return Err(format!("FS_IOC_FSGETXATTR: {}", std::io::Error::last_os_error()));
    }
    attr[0] |= FS_XFLAG_EXTSIZE;
    attr[1] = extsize as u32;
    // SAFETY: as above.
    if unsafe { nix::libc::ioctl(file.as_raw_fd(), FS_IOC_FSSETXATTR as _, attr.as_ptr()) } < 0 {
        return Err(format!("FS_IOC_FSSETXATTR extsize={extsize}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}
