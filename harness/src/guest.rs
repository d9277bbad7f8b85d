//! The guest side: what `radiff-guest` does inside the VM (the files it exchanges with
//! the host are in [`crate::wire`]).
//!
//! In: `spec.json` ([`GuestSpec`]). Out: `status.json` (updated at every step, so a
//! crash leaves the last step it reached), `guest.log`, `env.json` ([`GuestEnv`]) and
//! `trace.txt` (the raw ftrace text, also written when the run failed part-way).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use radiff_model::{Extent, FsKind, Op, QueueLimits, ThpMode, VmSettings};

use crate::wire::{DeviceKind, FileEnv, GuestEnv, GuestFile, GuestSpec, QueueSettings, Status, Task, VmRequest};

/// Where file `f` of the scenario is in the guest's mount: `data`, then `data1`, ...
fn file_path(f: usize) -> PathBuf {
    if f == 0 { Path::new(MNT).join(FILE_NAME) } else { Path::new(MNT).join(format!("{FILE_NAME}{f}")) }
}

const MNT: &str = "/tmp/radiff-mnt";
const FILE_NAME: &str = "data";
const TRACING: &str = "/sys/kernel/tracing";

/// The events radiff records.
pub const EVENTS: [&str; 7] = [
    "readahead:page_cache_sync_ra",
    "readahead:page_cache_async_ra",
    "readahead:page_cache_ra_order",
    "readahead:page_cache_ra_unbounded",
    "filemap:mm_filemap_add_to_page_cache",
    "filemap:mm_filemap_fault",
    "filemap:mm_filemap_map_pages",
];
pub const BLOCK_EVENT: &str = "block:block_rq_issue";

type GResult<T> = std::result::Result<T, String>;

struct Guest {
    out: PathBuf,
    log: File,
    status: Status,
}

impl Guest {
    fn step(&mut self, step: &str) {
        self.status.step = step.to_string();
        // Seconds since the guest booted, so the log shows where a slow run spent its time.
        let uptime = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
        let uptime = uptime.split_whitespace().next().unwrap_or("?");
        let _ = writeln!(self.log, "[{uptime:>8}] {step}");
        self.save();
    }

    fn save(&self) {
        if let Ok(json) = serde_json::to_vec_pretty(&self.status) {
            let _ = std::fs::write(self.out.join("status.json"), json);
        }
    }
}

/// Makes the guest's address space the same on every run: if address-space randomisation
/// is on for this process, turns it off (personality ADDR_NO_RANDOMIZE, as `setarch -R`
/// does) and executes the program again with the same arguments. Where `mmap` puts a
/// mapping decides its fault-around ranges (see [`GuestEnv::map_addresses`]); with
/// randomisation a mapping the file system does not align to 2 MiB (f2fs) would start at
/// a different page-table offset on every run. Returns (having changed nothing) when the
/// personality cannot be changed or the program cannot be executed again.
pub fn reexec_without_aslr() {
    use std::os::unix::process::CommandExt;
    const ADDR_NO_RANDOMIZE: nix::libc::c_ulong = 0x0040000;
    // SAFETY: personality(0xffffffff) only reads the persona.
    let current = unsafe { nix::libc::personality(0xffff_ffff) };
    if current < 0 || current as nix::libc::c_ulong & ADDR_NO_RANDOMIZE != 0 {
        return;
    }
    // SAFETY: sets a flag of this process's persona; it applies from the next exec.
    if unsafe { nix::libc::personality(current as nix::libc::c_ulong | ADDR_NO_RANDOMIZE) } < 0 {
        return;
    }
    let err = std::process::Command::new("/proc/self/exe").args(std::env::args_os().skip(1)).exec();
    eprintln!("radiff-guest: cannot run again without address-space randomisation: {err}");
}

/// The guest program's body: runs `spec.json` from `out`, writes the results there.
/// Returns the process exit code.
pub fn main(out: &Path) -> i32 {
    let log = match File::create(out.join("guest.log")) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("radiff-guest: cannot write to {}: {e}", out.display());
            return 1;
        }
    };
    let mut guest = Guest { out: out.to_path_buf(), log, status: Status::default() };
    let result = (|| -> GResult<()> {
        guest.step("reading spec.json");
        let text = std::fs::read_to_string(out.join("spec.json")).map_err(|e| format!("spec.json: {e}"))?;
        let spec: GuestSpec = serde_json::from_str(&text).map_err(|e| format!("spec.json: {e}"))?;
        match &spec.task {
            Task::Prepare { mkfs_args, write_size, extent_size } => prepare(&mut guest, &spec, mkfs_args, *write_size, *extent_size),
            Task::Run { queue, vm, fds, ops, trace_buffer_kb } => run(&mut guest, &spec, queue, vm, *fds, ops, *trace_buffer_kb),
        }
    })();
    match result {
        Ok(()) => {
            guest.status.ok = true;
            guest.step("done");
            0
        }
        Err(message) => {
            let _ = writeln!(guest.log, "error: {message}");
            eprintln!("radiff-guest: error at step `{}`: {message}", guest.status.step);
            guest.status.error = Some(message);
            guest.save();
            1
        }
    }
}

/// Where a batch keeps its points: `BATCH/0`, `BATCH/1`, ... (each a run folder with its
/// `spec.json`), run in that order.
pub fn batch_points(batch: &Path) -> Vec<PathBuf> {
    let mut points: Vec<(usize, PathBuf)> = std::fs::read_dir(batch)
        .map(|d| d.filter_map(|e| e.ok()).filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path()))).collect())
        .unwrap_or_default();
    points.sort();
    points.into_iter().map(|(_, p)| p).collect()
}

/// A file the batch loop writes in a point's folder before the point starts: the host's
/// watchdog times the point from when it appears.
pub const POINT_STARTED: &str = "started";
/// The point's time in the guest (seconds, from its start to its process's exit).
pub const POINT_TIME: &str = "guest-time";

/// `radiff-guest --batch BATCH`: runs every point of one boot in turn, each as a process
/// of its own (`radiff-guest BATCH/N`, as a boot of its own runs it: the same address
/// space, so mappings land where they would alone) on its own disk. Between points the
/// loop unmounts the last point's file system and puts back the settings a point may
/// change outside its disk (fault_around_bytes, the THP mode, khugepaged's scan period),
/// as the boot had them; each point drops the caches and resets the tracer itself. The
/// kernel log (the console) gets a line as each point begins and ends. The first point
/// that fails ends the batch: the host runs the rest in a fresh boot.
pub fn batch(batch: &Path) -> i32 {
    let points = batch_points(batch);
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    // debugfs as a point mounts it (virtme-ng's init does not), so the boot's values can be read.
    if !Path::new(FAULT_AROUND_BYTES).exists() && !is_mounted("debugfs") {
        std::fs::create_dir_all(DEBUGFS).ok();
        let _ = nix::mount::mount(Some("debugfs"), DEBUGFS, Some("debugfs"), nix::mount::MsFlags::empty(), None::<&str>);
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
            Ok(status) => status.code().unwrap_or(128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)),
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
        if code != 0 {
            return code;
        }
    }
    0
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
    std::fs::read_to_string("/proc/mounts").map(|m| m.lines().any(|l| l.split_whitespace().nth(1) == Some(dir))).unwrap_or(false)
}

fn prepare(g: &mut Guest, spec: &GuestSpec, mkfs_args: &[String], write_size: u64, extent_size: Option<u64>) -> GResult<()> {
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
        return Err(format!("mkfs.{} failed: {}{}", spec.fs.name(), String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)));
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
        .open(&path)
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

fn run(g: &mut Guest, spec: &GuestSpec, settings: &QueueSettings, vm: &VmRequest, fds: u32, ops: &[Op], buffer_kb: u64) -> GResult<()> {
    let device = find_device(spec.device, spec.disk.as_deref())?;
    let dev_path = format!("/dev/{device}");
    let mut env = GuestEnv {
        release: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        dev: read_sys(&format!("/sys/block/{device}/dev"))?,
        device: device.clone(),
        cpus: std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1),
        ..GuestEnv::default()
    };
    mount(g, &dev_path, spec.fs)?;
    g.step("applying queue settings");
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
    env.queue = read_queue(&queue)?;
    for (name, want, got) in [
        ("max_sectors_kb", settings.max_sectors_kb, env.queue.max_sectors_kb),
        ("read_ahead_kb", settings.read_ahead_kb, env.queue.read_ahead_kb),
        ("rotational", settings.rotational.map(u64::from), env.queue.rotational as u64),
    ] {
        if let Some(want) = want {
            if want != got {
                return Err(format!(
                    "the kernel did not keep {name}={want}: it reads back {got} (max_hw_sectors_kb is {})",
                    env.queue.max_hw_sectors_kb
                ));
            }
        }
    }
    g.step("applying vm settings");
    (env.vm, env.vm_unread) = apply_vm(g, vm)?;
    g.step("measuring the files");
    let sizes: Vec<u64> = std::iter::once(spec.file_size).chain(spec.other_files.iter().map(|f| f.size)).collect();
    for (f, &want) in sizes.iter().enumerate() {
        let path = file_path(f);
        let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.len() != want {
            return Err(format!("{} has {} bytes, the scenario says {want}: the image is stale; delete it from the cache", path.display(), meta.len()));
        }
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let measured = FileEnv { ino: meta.ino(), file_size: meta.len(), extents: fiemap(&file)? };
        if f == 0 {
            (env.ino, env.file_size, env.extents) = (measured.ino, measured.file_size, measured.extents);
        } else {
            env.other_files.push(measured);
        }
    }
    g.step("dropping caches");
    nix::unistd::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| format!("drop_caches: {e}"))?;
    g.step("starting the trace");
    let tracing = tracing_dir()?;
    tracing_setup(&tracing, buffer_kb)?;
    write_file(&tracing.join("tracing_on"), "1")?;
    // Opened with tracing on, as `xfs_io -c pread` would: reading the evicted inode back is
    // part of a cold-cache run (a metadata read the comparison then sets aside, counted).
    g.step("opening the files");
    // The descriptors the ops use, each on its file (pattern::file_of), in fd order.
    let mut files: Vec<Option<File>> = (0..fds).map(|_| None).collect();
    for op in ops {
        let Some(fd) = op.fd().map(|fd| fd as usize) else { continue };
        if fd >= files.len() {
            return Err(format!("an op uses fd {fd}, the spec opens {fds}"));
        }
        if files[fd].is_none() {
            let path = file_path(radiff_model::pattern::file_of(fd as u32) as usize);
            files[fd] = Some(File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?);
        }
    }
    g.step("running the access pattern");
    let max_len = ops.iter().map(|op| match op { Op::Read { len, .. } => *len, _ => 0 }).max().unwrap_or(0);
    let buf = AlignedBuf::new(max_len.max(4096) as usize);
    let mut maps = Maps::default();
    let inflight_path = format!("/sys/block/{device}/inflight");
    let inflight = File::open(&inflight_path).map_err(|e| format!("{inflight_path}: {e}"))?;
    let started = Instant::now();
    let mut pattern_result = Ok(());
    for op in ops {
        if let Err(e) = do_op(&files, &mut maps, op, &buf, &mut env.bytes_read) {
            pattern_result = Err(e);
            break;
        }
        // A load gives the device no time: the next touch would race the reads this one's
        // fault issued (whether fault-around maps an async window's folios or finds them
        // locked ran both ways on one kernel, run to run). Waiting for the device to go
        // idle after each touch makes the trace exact; the model assumes the same
        // (IoCompletion::BeforeNextOp completes reads before the next op, touch or call).
        if matches!(op, Op::Touch { .. }) {
            if let Err(e) = wait_idle(&inflight, &inflight_path) {
                pattern_result = Err(e);
                break;
            }
        }
    }
    env.pattern_ns = started.elapsed().as_nanos() as u64;
    env.map_addresses = std::mem::take(&mut maps.addresses);
    // Mappings still there at the end are unmapped with tracing on: munmap does no I/O.
    drop(maps);
    write_file(&tracing.join("tracing_on"), "0")?;
    g.step("saving the trace");
    let (entries, overrun, dropped) = ring_stats(&tracing)?;
    env.trace_entries = entries;
    env.trace_overrun = overrun;
    env.trace_dropped = dropped;
    copy_trace(&tracing.join("trace"), &g.out.join("trace.txt"))?;
    let json = serde_json::to_vec_pretty(&env).map_err(|e| e.to_string())?;
    std::fs::write(g.out.join("env.json"), json).map_err(|e| format!("env.json: {e}"))?;
    pattern_result?;
    // A loss is the host's to report: it counts lost events from the trace's text
    // (ftrace::Lost) and checks these counters too (run.rs), never taking a shorter trace.
    if overrun > 0 || dropped > 0 {
        let _ = writeln!(g.log, "the trace ring buffer lost events (overrun {overrun}, dropped {dropped}) with buffer_size_kb={buffer_kb}");
    }
    Ok(())
}

const THP_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
const DEBUGFS: &str = "/sys/kernel/debug";
const FAULT_AROUND_BYTES: &str = "/sys/kernel/debug/fault_around_bytes";

/// Applies the scenario's `vm:` settings and reads both back: a value the kernel refuses,
/// does not keep, or a missing file for a setting the scenario names is an error naming
/// the setting. A setting the scenario leaves alone and the guest cannot read keeps the
/// model's default and is listed (second value).
/// khugepaged's scan period (mm/khugepaged.c scan_sleep_millisecs_store()).
const KHUGEPAGED_SLEEP: &str = "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs";

fn apply_vm(g: &mut Guest, vm: &VmRequest) -> GResult<(VmSettings, Vec<String>)> {
    let mut got = VmSettings::default();
    let mut unread = Vec::new();
    if !Path::new(FAULT_AROUND_BYTES).exists() && !is_mounted("debugfs") {
        // virtme-ng's init does not mount debugfs.
        std::fs::create_dir_all(DEBUGFS).ok();
        if let Err(e) = nix::mount::mount(Some("debugfs"), DEBUGFS, Some("debugfs"), nix::mount::MsFlags::empty(), None::<&str>) {
            if vm.fault_around_bytes.is_some() {
                return Err(format!("vm.fault_around_bytes: cannot mount debugfs on {DEBUGFS}: {e} (is CONFIG_DEBUG_FS set?)"));
            }
        }
    }
    if let Some(v) = vm.fault_around_bytes {
        std::fs::write(FAULT_AROUND_BYTES, v.to_string()).map_err(|e| format!("vm.fault_around_bytes: the kernel refused {v} in {FAULT_AROUND_BYTES}: {e}"))?;
    }
    match read_sys(FAULT_AROUND_BYTES).and_then(|t| t.parse::<u64>().map_err(|_| format!("{FAULT_AROUND_BYTES}: not a number: {t}"))) {
        Ok(v) => got.fault_around_bytes = v,
        Err(e) if vm.fault_around_bytes.is_some() => return Err(format!("vm.fault_around_bytes: {e}")),
        Err(e) => unread.push(format!("fault_around_bytes ({e})")),
    }
    if let Some(want) = vm.fault_around_bytes {
        if got.fault_around_bytes != want {
            return Err(format!("vm.fault_around_bytes: the kernel did not keep {want}: it reads back {}", got.fault_around_bytes));
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
    match read_sys(THP_ENABLED).and_then(|t| parse_thp(&t).ok_or_else(|| format!("{THP_ENABLED}: no [mode] in `{t}`"))) {
        Ok(mode) => got.thp_enabled = mode,
        Err(e) if vm.thp_enabled.is_some() => return Err(format!("vm.thp_enabled: {e}")),
        Err(e) => unread.push(format!("thp_enabled ({e})")),
    }
    if let Some(want) = vm.thp_enabled {
        if got.thp_enabled != want {
            return Err(format!("vm.thp_enabled: the kernel did not keep `{}`: it reads back `{}`", thp_name(want), thp_name(got.thp_enabled)));
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
            nix::sys::mman::mmap_anonymous(None, len, nix::sys::mman::ProtFlags::PROT_READ, nix::sys::mman::MapFlags::MAP_PRIVATE | nix::sys::mman::MapFlags::MAP_ANONYMOUS)
        }
        .map_err(|e| format!("an anonymous mapping to hold khugepaged: {e}"))?;
        // SAFETY: advice on the mapping just made.
        unsafe { nix::sys::mman::madvise(anon, len.get(), nix::sys::mman::MmapAdvise::MADV_HUGEPAGE) }
            .map_err(|e| format!("MADV_HUGEPAGE on an anonymous mapping (to hold khugepaged): {e}"))?;
        std::fs::write(KHUGEPAGED_SLEEP, u32::MAX.to_string()).map_err(|e| format!("{KHUGEPAGED_SLEEP}: {e}"))?;
        let _ = writeln!(g.log, "khugepaged parked: scan_sleep_millisecs {}", read_sys(KHUGEPAGED_SLEEP).unwrap_or_default());
    }
    let _ = writeln!(g.log, "vm: fault_around_bytes {} thp_enabled {}{}", got.fault_around_bytes, thp_name(got.thp_enabled), if unread.is_empty() { String::new() } else { format!(" (unread, defaults: {})", unread.join("; ")) });
    Ok((got, unread))
}

fn thp_name(mode: ThpMode) -> &'static str {
    match mode {
        ThpMode::Always => "always",
        ThpMode::Madvise => "madvise",
        ThpMode::Never => "never",
    }
}

/// `always [madvise] never` -> Madvise.
fn parse_thp(text: &str) -> Option<ThpMode> {
    let active = text.split_whitespace().find(|w| w.starts_with('['))?.trim_matches(['[', ']']);
    match active {
        "always" => Some(ThpMode::Always),
        "madvise" => Some(ThpMode::Madvise),
        "never" => Some(ThpMode::Never),
        _ => None,
    }
}

fn is_mounted(fstype: &str) -> bool {
    std::fs::read_to_string("/proc/mounts").map(|m| m.lines().any(|l| l.split_whitespace().nth(2) == Some(fstype))).unwrap_or(false)
}

/// Waits until `/sys/block/DEV/inflight` (open as `f`) reads "0 0": no request of the
/// device in flight. Gives up after 30 s, an error that names the file.
fn wait_idle(f: &File, path: &str) -> GResult<()> {
    let started = Instant::now();
    let mut buf = [0u8; 64];
    loop {
        let n = f.read_at(&mut buf, 0).map_err(|e| format!("{path}: {e}"))?;
        let text = std::str::from_utf8(&buf[..n]).unwrap_or_default();
        if text.split_whitespace().all(|v| v == "0") {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("{path} still reads `{}` after 30 s: the device does not complete its reads", text.trim()));
        }
        std::thread::yield_now();
    }
}

/// The scenario's mappings, by map number; nothing else in the guest touches them.
#[derive(Default)]
struct Maps {
    /// (address, length, offset in the file).
    live: Vec<Option<(std::ptr::NonNull<std::ffi::c_void>, usize, u64)>>,
    /// The address of every mapping made, in order.
    addresses: Vec<u64>,
}

impl Maps {
    fn get(&self, map: u32) -> GResult<(std::ptr::NonNull<std::ffi::c_void>, usize, u64)> {
        self.live.get(map as usize).copied().flatten().ok_or_else(|| format!("map {map} is not mapped"))
    }
}

impl Drop for Maps {
    fn drop(&mut self) {
        for (addr, len, _) in self.live.drain(..).flatten() {
            // SAFETY: a mapping this process made with this length, unmapped once.
            let _ = unsafe { nix::sys::mman::munmap(addr, len) };
        }
    }
}

fn do_op(files: &[Option<File>], maps: &mut Maps, op: &Op, buf: &AlignedBuf, bytes_read: &mut u64) -> GResult<()> {
    let file = |fd: u32| files.get(fd as usize).and_then(Option::as_ref).ok_or_else(|| format!("fd {fd} is not open"));
    match *op {
        Op::Read { fd, offset, len } => {
            let file = file(fd)?;
            let data = buf.slice_mut(len as usize);
            let n = file.read_at(data, offset).map_err(|e| format!("pread({len} at {offset}): {e}"))?;
            if n as u64 != len {
                return Err(format!("pread({len} at {offset}) returned {n} bytes"));
            }
            // Check one word: the image holds each word's own offset.
            let want = offset.to_le_bytes();
            let skip = ((8 - offset % 8) % 8) as usize;
            if n >= skip + 8 {
                let got = &data[skip..skip + 8];
                if got != (offset + skip as u64).to_le_bytes() {
                    return Err(format!("pread at {offset} returned wrong data {got:?} (expected {want:?})"));
                }
            }
            *bytes_read += n as u64;
        }
        Op::Fadvise { fd, offset, len, advice } => {
            use nix::fcntl::PosixFadviseAdvice as A;
            let advice = match advice {
                radiff_model::Advice::Normal => A::POSIX_FADV_NORMAL,
                radiff_model::Advice::Random => A::POSIX_FADV_RANDOM,
                radiff_model::Advice::Sequential => A::POSIX_FADV_SEQUENTIAL,
                radiff_model::Advice::Willneed => A::POSIX_FADV_WILLNEED,
                radiff_model::Advice::Dontneed => A::POSIX_FADV_DONTNEED,
                radiff_model::Advice::Noreuse => A::POSIX_FADV_NOREUSE,
            };
            nix::fcntl::posix_fadvise(file(fd)?.as_raw_fd(), offset as i64, len as i64, advice).map_err(|e| format!("posix_fadvise: {e}"))?;
        }
        Op::Readahead { fd, offset, len } => {
            // nix has no wrapper for readahead(2).
            // SAFETY: a plain system call on an fd this process owns; no memory is passed.
            let r = unsafe { nix::libc::readahead(file(fd)?.as_raw_fd(), offset as i64, len as usize) };
            if r != 0 {
                return Err(format!("readahead({offset}, {len}): {}", std::io::Error::last_os_error()));
            }
        }
        Op::Mmap { map, fd, offset, len, shared } => {
            use nix::sys::mman::{MapFlags, ProtFlags};
            let length = std::num::NonZeroUsize::new(len as usize).ok_or("mmap of 0 bytes")?;
            let flags = if shared { MapFlags::MAP_SHARED } else { MapFlags::MAP_PRIVATE };
            // SAFETY: a new read-only mapping of a file this process owns, at an address
            // the kernel picks; it is only read through `Op::Touch` and unmapped once.
            let addr = unsafe { nix::sys::mman::mmap(None, length, ProtFlags::PROT_READ, flags, file(fd)?, offset as i64) }
                .map_err(|e| format!("mmap({len} bytes at {offset}, {}): {e}", if shared { "MAP_SHARED" } else { "MAP_PRIVATE" }))?;
            let slot = map as usize;
            if maps.live.len() <= slot {
                maps.live.resize(slot + 1, None);
            }
            if maps.live[slot].is_some() {
                return Err(format!("map {map} is already mapped"));
            }
            maps.live[slot] = Some((addr, len as usize, offset));
            maps.addresses.push(addr.as_ptr() as u64);
        }
        Op::Madvise { map, offset, len, advice } => {
            use nix::sys::mman::MmapAdvise as M;
            let (addr, size, _) = maps.get(map)?;
            if offset + len > size as u64 {
                return Err(format!("madvise of [{offset}, +{len}) outside map {map} ({size} bytes)"));
            }
            let advise = match advice {
                radiff_model::MadvAdvice::Normal => M::MADV_NORMAL,
                radiff_model::MadvAdvice::Random => M::MADV_RANDOM,
                radiff_model::MadvAdvice::Sequential => M::MADV_SEQUENTIAL,
                radiff_model::MadvAdvice::Willneed => M::MADV_WILLNEED,
                radiff_model::MadvAdvice::Hugepage => M::MADV_HUGEPAGE,
                radiff_model::MadvAdvice::Nohugepage => M::MADV_NOHUGEPAGE,
            };
            // SAFETY: a page-aligned range inside a live mapping of this process (checked above).
            let at = unsafe { std::ptr::NonNull::new_unchecked(addr.as_ptr().cast::<u8>().add(offset as usize).cast()) };
            // SAFETY: as above; these advices change no contents.
            unsafe { nix::sys::mman::madvise(at, len as usize, advise) }.map_err(|e| format!("madvise(map {map} + {offset}, {len}, {advice:?}): {e}"))?;
        }
        Op::Touch { map, offset } => {
            let (addr, size, file_offset) = maps.get(map)?;
            if offset + 8 > size as u64 {
                return Err(format!("touch at {offset} outside map {map} ({size} bytes)"));
            }
            // SAFETY: an aligned u64 inside a live PROT_READ mapping of the file, whose
            // pages lie inside the file (the scenario checked the range); a volatile read,
            // so the compiler neither removes nor merges the load.
            let got = unsafe { std::ptr::read_volatile(addr.as_ptr().cast::<u8>().add(offset as usize).cast::<u64>()) };
            // The image holds each 8-byte word's own file offset (little-endian).
            let want = file_offset + offset;
            if got != want {
                return Err(format!("touch of map {map} at {offset} (file offset {want}) read {got:#x}, expected {want:#x}"));
            }
        }
        Op::Munmap { map } => {
            let (addr, size, _) = maps.get(map)?;
            maps.live[map as usize] = None;
            // SAFETY: the whole of a live mapping this process made, unmapped once.
            unsafe { nix::sys::mman::munmap(addr, size) }.map_err(|e| format!("munmap(map {map}): {e}"))?;
        }
    }
    Ok(())
}

/// The device under test: the NVMe namespace, or the UFS logical unit (a SCSI disk whose
/// vendor is QEMU; scsi_debug's disks are skipped); with `pci`, the one below that PCI
/// device (`/sys/block/NAME` resolves to `/sys/devices/pci0000:00/PCI/...`).
fn find_device(kind: DeviceKind, pci: Option<&str>) -> GResult<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/block")
        .map_err(|e| format!("/sys/block: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let below = |name: &str, pci: &str| {
        std::fs::canonicalize(format!("/sys/block/{name}")).map(|p| p.to_string_lossy().contains(&format!("/{pci}/"))).unwrap_or(false)
    };
    let found = names.iter().find(|name| {
        let kind_ok = match kind {
            DeviceKind::Nvme => name.starts_with("nvme"),
            DeviceKind::Ufs => {
                name.starts_with("sd") && read_sys(&format!("/sys/block/{name}/device/vendor")).map(|v| v == "QEMU").unwrap_or(false)
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
        nix::sys::stat::mknod(Path::new("/dev").join(name).as_path(), nix::sys::stat::SFlag::S_IFBLK, nix::sys::stat::Mode::from_bits_truncate(0o600), devnum)
            .map_err(|e| format!("mknod /dev/{name}: {e}"))?;
    }
    Ok(name.clone())
}

fn mount(g: &mut Guest, dev: &str, fs: FsKind) -> GResult<()> {
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
    nix::mount::mount(Some(dev), MNT, Some(fs.name()), nix::mount::MsFlags::MS_NOATIME, data).map_err(|e| format!("mount {dev} on {MNT} as {}: {e}", fs.name()))
}

fn read_sys(path: &str) -> GResult<String> {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).map_err(|e| format!("{path}: {e}"))
}

fn write_file(path: &Path, value: &str) -> GResult<()> {
    std::fs::write(path, value).map_err(|e| format!("writing `{value}` to {}: {e}", path.display()))
}

fn write_setting(queue: &str, name: &str, value: &str) -> GResult<()> {
    std::fs::write(format!("{queue}/{name}"), value).map_err(|e| {
        let hw = read_sys(&format!("{queue}/max_hw_sectors_kb")).unwrap_or_default();
        format!("the kernel refused {name}={value} ({e}); this device's max_hw_sectors_kb is {hw}")
    })
}

fn read_queue(queue: &str) -> GResult<QueueLimits> {
    let num = |name: &str| -> GResult<u64> {
        let text = read_sys(&format!("{queue}/{name}"))?;
        text.parse().map_err(|_| format!("{queue}/{name}: not a number: {text}"))
    };
    let scheduler = read_sys(&format!("{queue}/scheduler"))?;
    let active = scheduler.split_whitespace().find(|s| s.starts_with('[')).map(|s| s.trim_matches(['[', ']']).to_string()).unwrap_or(scheduler);
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

fn tracing_dir() -> GResult<PathBuf> {
    let dir = PathBuf::from(TRACING);
    if !dir.join("trace").exists() {
        std::fs::create_dir_all(&dir).ok();
        nix::mount::mount(Some("tracefs"), TRACING, Some("tracefs"), nix::mount::MsFlags::empty(), None::<&str>)
            .map_err(|e| format!("mount tracefs on {TRACING}: {e} (is CONFIG_FTRACE set?)"))?;
    }
    Ok(dir)
}

fn tracing_setup(dir: &Path, buffer_kb: u64) -> GResult<()> {
    write_file(&dir.join("tracing_on"), "0")?;
    write_file(&dir.join("current_tracer"), "nop")?;
    write_file(&dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
    write_file(&dir.join("trace"), "")?;
    write_file(&dir.join("set_event"), "")?;
    let mut set = File::options().append(true).open(dir.join("set_event")).map_err(|e| format!("set_event: {e}"))?;
    for event in EVENTS.iter().chain([&BLOCK_EVENT]) {
        writeln!(set, "{event}").map_err(|e| format!("enabling {event}: {e} (is the tracepoint in this kernel?)"))?;
    }
    Ok(())
}

/// Sums `entries`, `overrun` and `dropped events` over `per_cpu/cpu*/stats`.
fn ring_stats(dir: &Path) -> GResult<(u64, u64, u64)> {
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

fn copy_trace(from: &Path, to: &Path) -> GResult<()> {
    let input = BufReader::with_capacity(1 << 20, File::open(from).map_err(|e| format!("{}: {e}", from.display()))?);
    let mut output = BufWriter::with_capacity(1 << 20, File::create(to).map_err(|e| format!("{}: {e}", to.display()))?);
    for line in input.split(b'\n') {
        let line = line.map_err(|e| format!("{}: {e}", from.display()))?;
        output.write_all(&line).and_then(|_| output.write_all(b"\n")).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    output.flush().map_err(|e| format!("{}: {e}", to.display()))
}

const FS_IOC_FIEMAP: u64 = 0xC020_660B;
const FIEMAP_FLAG_SYNC: u32 = 1;
const FIEMAP_EXTENT_LAST: u32 = 1;

/// The file's extents (FS_IOC_FIEMAP), in bytes.
fn fiemap(file: &File) -> GResult<Vec<Extent>> {
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

/// A page-aligned buffer, as O_DIRECT needs.
struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len.max(4096), 4096).expect("buffer layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for a {len}-byte buffer");
        AlignedBuf { ptr, layout }
    }

    #[allow(clippy::mut_from_ref)]
    fn slice_mut(&self, len: usize) -> &mut [u8] {
        assert!(len <= self.layout.size());
        // SAFETY: ptr is valid for layout.size() bytes; the guest is single-threaded and
        // never holds two slices at once.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
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
