//! ftrace in the guest: the tracer set up, its ring buffer's counters, the trace copied out.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::sysfs::write_file;
use super::{GResult, BLOCK_EVENT, EVENTS, TRACING};

pub(super) fn tracing_dir() -> GResult<PathBuf> {
    let dir = PathBuf::from(TRACING);
    if !dir.join("trace").exists() {
        std::fs::create_dir_all(&dir).ok();
        nix::mount::mount(Some("tracefs"), TRACING, Some("tracefs"), nix::mount::MsFlags::empty(), None::<&str>)
            .map_err(|e| format!("mount tracefs on {TRACING}: {e} (is CONFIG_FTRACE set?)"))?;
    }
    Ok(dir)
}

/// Whether this kernel has the readahead windows' tracepoints: a Linux before them
/// (Debian's 6.12; [`crate::kernels::Tracing::Flat`]) has no `events/readahead`, and its
/// runs record the rest.
pub(super) fn has_windows(dir: &Path) -> bool {
    dir.join("events/readahead").is_dir()
}

/// Sets the tracer up with every event of [`EVENTS`] the kernel has: all of them, or all
/// but the readahead windows' where [`has_windows`] is false.
pub(super) fn tracing_setup(dir: &Path, buffer_kb: u64) -> GResult<()> {
    write_file(&dir.join("tracing_on"), "0")?;
    // Context on while the pattern runs (the last point's copy turned it off): an oops's
    // ftrace_dump_on_oops prints each event with its task, CPU and time.
    write_file(&dir.join("options/context-info"), "1")?;
    write_file(&dir.join("current_tracer"), "nop")?;
    write_file(&dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
    write_file(&dir.join("trace"), "")?;
    write_file(&dir.join("set_event"), "")?;
    let mut set = File::options().append(true).open(dir.join("set_event")).map_err(|e| format!("set_event: {e}"))?;
    let windows = has_windows(dir);
    for event in EVENTS.iter().chain([&BLOCK_EVENT]).filter(|e| windows || !e.starts_with("readahead:")) {
        writeln!(set, "{event}").map_err(|e| format!("enabling {event}: {e} (is the tracepoint in this kernel?)"))?;
    }
    Ok(())
}

/// Sums `entries`, `overrun` and `dropped events` over `per_cpu/cpu*/stats`.
pub(super) fn ring_stats(dir: &Path) -> GResult<(u64, u64, u64)> {
    let (mut entries, mut overrun, mut dropped) = (0, 0, 0);
    let per_cpu = dir.join("per_cpu");
    for cpu in std::fs::read_dir(&per_cpu).map_err(|e| format!("{}: {e}", per_cpu.display()))? {
        let stats = cpu.map_err(|e| e.to_string())?.path().join("stats");
        let text = std::fs::read_to_string(&stats).map_err(|e| format!("{}: {e}", stats.display()))?;
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else { continue };
            let value: u64 = value.trim().parse().unwrap_or(0);
            match key.trim() {
                "entries" => entries += value,
                "overrun" => overrun += value,
                "dropped events" => dropped += value,
                _ => {}
            }
        }
    }
    Ok((entries, overrun, dropped))
}

/// Copies the trace to `to` with `options/context-info` off (see
/// [`crate::ftrace::CONTEXT_OFF`]): its first lines that mark, the entries header made
/// from the ring buffer's counters `entries` and `overrun` (read after tracing stopped),
/// and [`crate::ftrace::NO_WINDOWS`] where the kernel has no readahead tracepoints.
pub(super) fn copy_trace(dir: &Path, to: &Path, entries: u64, overrun: u64) -> GResult<()> {
    write_file(&dir.join("options/context-info"), "0")?;
    let from = dir.join("trace");
    let input = BufReader::with_capacity(1 << 20, File::open(&from).map_err(|e| format!("{}: {e}", from.display()))?);
    let mut output = BufWriter::with_capacity(1 << 20, File::create(to).map_err(|e| format!("{}: {e}", to.display()))?);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let header = format!(
        "{}\n# entries-in-buffer/entries-written: {entries}/{}   #P:{cpus}\n",
        crate::ftrace::CONTEXT_OFF,
        entries + overrun
    );
    let windowless = if has_windows(dir) { String::new() } else { format!("{}\n", crate::ftrace::NO_WINDOWS) };
    output.write_all((header + &windowless).as_bytes()).map_err(|e| format!("{}: {e}", to.display()))?;
    for line in input.split(b'\n') {
        let line = line.map_err(|e| format!("{}: {e}", from.display()))?;
        output.write_all(&line).and_then(|_| output.write_all(b"\n")).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    output.flush().map_err(|e| format!("{}: {e}", to.display()))
}
