//! The kernel's knobs the guest sets and reads back: the queue's, the fault path's (`vm:`).

use std::io::Write;
use std::path::Path;

use radiff_model::{QueueLimits, ThpMode, VmSettings};

use crate::wire::{QueueSettings, VmRequest};

use super::{GResult, Guest};

pub(super) const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
pub(super) const DEBUGFS: &str = "/sys/kernel/debug";
pub(super) const FAULT_AROUND_BYTES: &str = "/sys/kernel/debug/fault_around_bytes";

/// Applies the scenario's `vm:` settings and reads both back: a value the kernel refuses,
/// does not keep, or a missing file for a setting the scenario names is an error naming
/// the setting. A setting the scenario leaves alone and the guest cannot read keeps the
/// model's default and is listed (second value).
/// khugepaged's scan period (mm/khugepaged.c scan_sleep_millisecs_store()).
pub(super) const KHUGEPAGED_SLEEP: &str = "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs";

pub(super) fn apply_vm(g: &mut Guest, vm: &VmRequest) -> GResult<(VmSettings, Vec<String>)> {
    let mut got = VmSettings::default();
    let mut unread = Vec::new();
    if !Path::new(FAULT_AROUND_BYTES).exists() && !is_mounted("debugfs") {
        // virtme-ng's init does not mount debugfs.
        std::fs::create_dir_all(DEBUGFS).ok();
        if let Err(e) =
            nix::mount::mount(Some("debugfs"), DEBUGFS, Some("debugfs"), nix::mount::MsFlags::empty(), None::<&str>)
        {
            if vm.fault_around_bytes.is_some() {
                return Err(format!(
                    "vm.fault_around_bytes: cannot mount debugfs on {DEBUGFS}: {e} (is CONFIG_DEBUG_FS set?)"
                ));
            }
        }
    }
    if let Some(v) = vm.fault_around_bytes {
        std::fs::write(FAULT_AROUND_BYTES, v.to_string())
            .map_err(|e| format!("vm.fault_around_bytes: the kernel refused {v} in {FAULT_AROUND_BYTES}: {e}"))?;
    }
    match read_sys(FAULT_AROUND_BYTES)
        .and_then(|t| t.parse::<u64>().map_err(|_| format!("{FAULT_AROUND_BYTES}: not a number: {t}")))
    {
        Ok(v) => got.fault_around_bytes = v,
        Err(e) if vm.fault_around_bytes.is_some() => return Err(format!("vm.fault_around_bytes: {e}")),
        Err(e) => unread.push(format!("fault_around_bytes ({e})")),
    }
    if let Some(want) = vm.fault_around_bytes {
        if got.fault_around_bytes != want {
            return Err(format!(
                "vm.fault_around_bytes: the kernel did not keep {want}: it reads back {}",
                got.fault_around_bytes
            ));
        }
    }
    // Unless the scenario names a THP mode, the guest runs with `never`: that stops
    // khugepaged, which otherwise collapses file mappings at times of its own (see below).
    // Nothing on the read or fault path of a regular file reads the mode in 7.3.4.
    if vm.thp_enabled.is_some() || Path::new(THP_ENABLED).exists() {
        let mode = vm.thp_enabled.unwrap_or(ThpMode::Never);
        let name = thp_name(mode);
        std::fs::write(THP_ENABLED, name).map_err(|e| format!("vm.thp_enabled: the kernel refused `{name}` in {THP_ENABLED}: {e} (is CONFIG_TRANSPARENT_HUGEPAGE set?)"))?;
    }
    match read_sys(THP_ENABLED).and_then(|t| parse_thp(&t).ok_or_else(|| format!("{THP_ENABLED}: no [mode] in `{t}`")))
    {
        Ok(mode) => got.thp_enabled = mode,
        Err(e) if vm.thp_enabled.is_some() => return Err(format!("vm.thp_enabled: {e}")),
        Err(e) => unread.push(format!("thp_enabled ({e})")),
    }
    if let Some(want) = vm.thp_enabled {
        if got.thp_enabled != want {
            return Err(format!(
                "vm.thp_enabled: the kernel did not keep `{}`: it reads back `{}`",
                thp_name(want),
                thp_name(got.thp_enabled)
            ));
        }
    }
    // khugepaged collapses a regular file's mapping into PMD folios when it scans (7.3.4's
    // file_thp_enabled() lets it for any file whose mapping takes PMD folios), reading the
    // missing pages with page_cache_sync_readahead() from collapse_file(): seen as `sync
    // @32 req 480` windows in a few runs in thirty of a mapping scenario. It scans when its
    // timer fires (scan_sleep_millisecs, 10 s by default), and at once when an mm joins its
    // empty list (__khugepaged_enter()'s wakeup: the file's mapping would be that mm).
    // Its timing is not the program's, so it is parked: an anonymous MADV_HUGEPAGE region
    // puts this process on its list now (and keeps it there: never unmapped), and the scan
    // period goes to u32::MAX ms (the write wakes it once, now, before the file is mapped;
    // with work on its list it then sleeps that long). The model does not port khugepaged.
    if got.thp_enabled != ThpMode::Never && Path::new(KHUGEPAGED_SLEEP).exists() {
        let len = std::num::NonZeroUsize::new(4 << 20).expect("4 MiB");
        // SAFETY: a new private anonymous mapping the kernel places; never read, written
        // or unmapped (it must stay for the whole run).
        let anon = unsafe {
            nix::sys::mman::mmap_anonymous(
                None,
                len,
                nix::sys::mman::ProtFlags::PROT_READ,
                nix::sys::mman::MapFlags::MAP_PRIVATE | nix::sys::mman::MapFlags::MAP_ANONYMOUS,
            )
        }
        .map_err(|e| format!("an anonymous mapping to hold khugepaged: {e}"))?;
        // SAFETY: advice on the mapping just made.
        unsafe { nix::sys::mman::madvise(anon, len.get(), nix::sys::mman::MmapAdvise::MADV_HUGEPAGE) }
            .map_err(|e| format!("MADV_HUGEPAGE on an anonymous mapping (to hold khugepaged): {e}"))?;
        std::fs::write(KHUGEPAGED_SLEEP, u32::MAX.to_string()).map_err(|e| format!("{KHUGEPAGED_SLEEP}: {e}"))?;
        let _ = writeln!(
            g.log,
            "khugepaged parked: scan_sleep_millisecs {}",
            read_sys(KHUGEPAGED_SLEEP).unwrap_or_default()
        );
    }
    let _ = writeln!(
        g.log,
        "vm: fault_around_bytes {} thp_enabled {}{}",
        got.fault_around_bytes,
        thp_name(got.thp_enabled),
        if unread.is_empty() { String::new() } else { format!(" (unread, defaults: {})", unread.join("; ")) }
    );
    Ok((got, unread))
}

pub(super) fn thp_name(mode: ThpMode) -> &'static str {
    match mode {
        ThpMode::Always => "always",
        ThpMode::Madvise => "madvise",
        ThpMode::Never => "never",
    }
}

/// `always [madvise] never` -> Madvise.
pub(super) fn parse_thp(text: &str) -> Option<ThpMode> {
    let active = text.split_whitespace().find(|w| w.starts_with('['))?.trim_matches(['[', ']']);
    match active {
        "always" => Some(ThpMode::Always),
        "madvise" => Some(ThpMode::Madvise),
        "never" => Some(ThpMode::Never),
        _ => None,
    }
}

pub(super) fn is_mounted(fstype: &str) -> bool {
    std::fs::read_to_string("/proc/mounts")
        .map(|m| m.lines().any(|l| l.split_whitespace().nth(2) == Some(fstype)))
        .unwrap_or(false)
}

pub(super) fn read_sys(path: &str) -> GResult<String> {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).map_err(|e| format!("{path}: {e}"))
}

pub(super) fn write_file(path: &Path, value: &str) -> GResult<()> {
    std::fs::write(path, value).map_err(|e| format!("writing `{value}` to {}: {e}", path.display()))
}

fn write_setting(queue: &str, name: &str, value: &str) -> GResult<()> {
    std::fs::write(format!("{queue}/{name}"), value).map_err(|e| {
        let what = if name == "scheduler" {
            format!("this kernel offers: {}", read_sys(&format!("{queue}/scheduler")).unwrap_or_default())
        } else {
            format!(
                "this device's max_hw_sectors_kb is {}",
                read_sys(&format!("{queue}/max_hw_sectors_kb")).unwrap_or_default()
            )
        };
        format!("the kernel refused {name}={value} ({e}); {what}")
    })
}

/// Applies the scenario's queue settings to `/sys/block/DEVICE/queue` and reads the queue
/// back: a value the kernel did not keep is an error naming it.
pub(super) fn apply_queue(device: &str, settings: &QueueSettings) -> GResult<QueueLimits> {
    // max_sectors_kb first: on some devices writing it resets read_ahead_kb.
    let queue = format!("/sys/block/{device}/queue");
    if let Some(v) = settings.max_sectors_kb {
        write_setting(&queue, "max_sectors_kb", &v.to_string())?;
    }
    if let Some(v) = settings.read_ahead_kb {
        write_setting(&queue, "read_ahead_kb", &v.to_string())?;
    }
    if let Some(v) = settings.rotational {
        write_setting(&queue, "rotational", if v { "1" } else { "0" })?;
    }
    write_setting(&queue, "scheduler", settings.scheduler.name())?;
    let limits = read_queue(&queue)?;
    if limits.scheduler != settings.scheduler.name() {
        return Err(format!(
            "the kernel did not keep scheduler={}: it reads back {}",
            settings.scheduler.name(),
            limits.scheduler
        ));
    }
    for (name, want, got) in [
        ("max_sectors_kb", settings.max_sectors_kb, limits.max_sectors_kb),
        ("read_ahead_kb", settings.read_ahead_kb, limits.read_ahead_kb),
        ("rotational", settings.rotational.map(u64::from), limits.rotational as u64),
    ] {
        if let Some(want) = want {
            if want != got {
                return Err(format!(
                    "the kernel did not keep {name}={want}: it reads back {got} (max_hw_sectors_kb is {})",
                    limits.max_hw_sectors_kb
                ));
            }
        }
    }
    Ok(limits)
}

fn read_queue(queue: &str) -> GResult<QueueLimits> {
    let num = |name: &str| -> GResult<u64> {
        let text = read_sys(&format!("{queue}/{name}"))?;
        text.parse().map_err(|_| format!("{queue}/{name}: not a number: {text}"))
    };
    let scheduler = read_sys(&format!("{queue}/scheduler"))?;
    let active = scheduler
        .split_whitespace()
        .find(|s| s.starts_with('['))
        .map(|s| s.trim_matches(['[', ']']).to_string())
        .unwrap_or(scheduler);
    Ok(QueueLimits {
        read_ahead_kb: num("read_ahead_kb")?,
        max_sectors_kb: num("max_sectors_kb")?,
        max_hw_sectors_kb: num("max_hw_sectors_kb")?,
        max_segments: num("max_segments")?,
        max_segment_size: num("max_segment_size")?,
        logical_block_size: num("logical_block_size")?,
        physical_block_size: num("physical_block_size")?,
        optimal_io_size: num("optimal_io_size")?,
        minimum_io_size: num("minimum_io_size")?,
        virt_boundary_mask: num("virt_boundary_mask").unwrap_or(0),
        // Not in sysfs; 0 is the block layer's default (see QueueLimits::seg_boundary_mask).
        seg_boundary_mask: 0,
        rotational: num("rotational")? != 0,
        nr_requests: num("nr_requests")?,
        scheduler: active,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thp_mode_is_the_bracketed_word() {
        assert_eq!(parse_thp("always [madvise] never"), Some(ThpMode::Madvise));
        assert_eq!(parse_thp("[always] madvise never"), Some(ThpMode::Always));
        assert_eq!(parse_thp("always madvise [never]"), Some(ThpMode::Never));
        assert_eq!(parse_thp("always madvise never"), None);
    }
}
