//! The boot log `radiff bench` reads: a line for each boot of the test processes it
//! starts, written as the boot ends (`$RADIFF_BOOT_LOG`). Apart from the run path, which
//! only calls [`log_boot`], and from bench.rs, which reads the lines.

use std::path::Path;

/// Appends `KERNEL POINTS SCENARIO/RUN,... START WALL PATTERN` (the kernel's folder name,
/// the points' run folders, when the boot started in ms since the epoch, how long it took
/// in ms, and the sum of its points' pattern times in ms, as the guests measured them in
/// the boot's folder `batch`) to the file `$RADIFF_BOOT_LOG` names, if it does, as the
/// boot ends: how `radiff bench` counts the boots of test processes it starts, which
/// trials each boot served, how busy the boots kept the host and how much of it was the
/// guests' access patterns (one short O_APPEND write a boot, so processes that boot at
/// once never mix their lines).
pub fn log_boot(kernel: &Path, batch: &Path, labels: &[String], started: std::time::SystemTime) {
    let Some(log) = &crate::settings::get().boot_log else { return };
    let pattern_ms = pattern_ms(batch, labels.len());
    let name = kernel.parent().and_then(|d| d.file_name()).unwrap_or_default().to_string_lossy().into_owned();
    let start = started.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
    let wall = started.elapsed().unwrap_or_default().as_millis();
    let line = format!("{name} {} {} {start} {wall} {pattern_ms}", labels.len(), labels.join(","));
    if let Err(e) = crate::files::append_line(log, &line) {
        crate::progress::progress(&format!("cannot log a boot: {e}"));
    }
}

/// The sum of the pattern times (ms) of the first `points` points of the boot's folder
/// `batch` that wrote their env.json, for [`log_boot`].
fn pattern_ms(batch: &Path, points: usize) -> u64 {
    let ns: u64 = (0..points)
        .filter_map(|n| crate::files::read_text(&batch.join(n.to_string()).join("env.json")).ok())
        .filter_map(|text| serde_json::from_str::<crate::wire::GuestEnv>(&text).ok())
        .map(|env| env.pattern_ns)
        .sum();
    ns / 1_000_000
}
