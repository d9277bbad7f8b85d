//! `radiff-guest --batch`: the points of one boot, run in turn.

use crate::wire::{EXIT_PROGRAM_FAILED, POINT_STARTED, POINT_TIME};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::sysfs::{
    is_mounted, parse_thp, read_sys, thp_name, DEBUGFS, FAULT_AROUND_BYTES, KHUGEPAGED_SLEEP, THP_ENABLED,
};
use super::{MNT, TRACING};

/// Where a batch keeps its points: `BATCH/0`, `BATCH/1`, ... (each a run folder with its
/// `spec.json`), run in that order.
pub fn batch_points(batch: &Path) -> Vec<PathBuf> {
    let mut points: Vec<(usize, PathBuf)> = std::fs::read_dir(batch)
        .map(|d| {
            d.filter_map(|e| e.ok()).filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path()))).collect()
        })
        .unwrap_or_default();
    points.sort();
    points.into_iter().map(|(_, p)| p).collect()
}

/// `radiff-guest --batch BATCH`: runs every point of one boot in turn, each as a process
/// of its own (`radiff-guest BATCH/N`, as a boot of its own runs it: the same address
/// space, so mappings land where they would alone) on its own disk. Between points the
/// loop unmounts the last point's file system and puts back the settings a point may
/// change outside its disk (fault_around_bytes, the THP mode, khugepaged's scan period),
/// as the boot had them; each point drops the caches and resets the tracer itself. The
/// kernel log (the console) gets a line as each point begins and ends. The first point
/// that fails ends the batch (the host runs the rest in a fresh boot), except one that
/// failed at a program step ([`EXIT_PROGRAM_FAILED`]: the program's own error, the point
/// otherwise finished): the batch goes on, and ends with that code.
pub fn batch(batch: &Path) -> i32 {
    let points = batch_points(batch);
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    // debugfs as a point mounts it (virtme-ng's init does not), so the boot's values can be read.
    if !Path::new(FAULT_AROUND_BYTES).exists() && !is_mounted("debugfs") {
        std::fs::create_dir_all(DEBUGFS).ok();
        let _ =
            nix::mount::mount(Some("debugfs"), DEBUGFS, Some("debugfs"), nix::mount::MsFlags::empty(), None::<&str>);
    }
    // In the order they are put back: khugepaged's period before the mode that starts it.
    let knobs: Vec<(&str, String)> = [KHUGEPAGED_SLEEP, FAULT_AROUND_BYTES, THP_ENABLED]
        .into_iter()
        .filter_map(|f| {
            let text = read_sys(f).ok()?;
            // `always [madvise] never` is written back as its bracketed word.
            let value = if f == THP_ENABLED { thp_name(parse_thp(&text)?).to_string() } else { text };
            Some((f, value))
        })
        .collect();
    let mut ended = 0;
    for (i, dir) in points.iter().enumerate() {
        let n = points.len();
        if i > 0 {
            for (file, value) in &knobs {
                let _ = std::fs::write(file, value);
            }
        }
        kmsg(&format!("radiff-guest: point {} of {n} begins: {}", i + 1, dir.display()));
        let _ = std::fs::write(dir.join(POINT_STARTED), b"");
        let started = Instant::now();
        let code = match std::process::Command::new(&exe).arg(dir).status() {
            Ok(status) => {
                status.code().unwrap_or(128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0))
            }
            Err(e) => {
                eprintln!("radiff-guest: cannot run {}: {e}", exe.display());
                127
            }
        };
        let secs = started.elapsed().as_secs_f64();
        let _ = std::fs::write(dir.join(POINT_TIME), format!("{secs:.3}\n"));
        kmsg(&format!("radiff-guest: point {} of {n} ended with exit code {code} after {secs:.1} s", i + 1));
        // The point's tracer off and its file system gone before the next one.
        let _ = std::fs::write(Path::new(TRACING).join("tracing_on"), "0");
        if is_mount_point(MNT) {
            if let Err(e) = nix::mount::umount(MNT) {
                kmsg(&format!("radiff-guest: umount {MNT}: {e}; the rest of the batch goes to a fresh boot"));
                return 1;
            }
        }
        if code == EXIT_PROGRAM_FAILED {
            ended = code;
        } else if code != 0 {
            return code;
        }
    }
    ended
}

/// A line in the kernel log, so that the console shows where each point of a batch begins.
fn kmsg(line: &str) {
    match std::fs::OpenOptions::new().write(true).open("/dev/kmsg") {
        Ok(mut f) => {
            let _ = f.write_all(line.as_bytes());
        }
        Err(_) => eprintln!("{line}"),
    }
}

fn is_mount_point(dir: &str) -> bool {
    std::fs::read_to_string("/proc/mounts")
        .map(|m| m.lines().any(|l| l.split_whitespace().nth(1) == Some(dir)))
        .unwrap_or(false)
}
