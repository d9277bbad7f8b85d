//! A run: the access pattern played against the mounted files, with tracing on.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::time::{Duration, Instant};

use radiff_model::Op;

use crate::wire::{FileEnv, GuestEnv, GuestSpec, Task};

use super::prepare::{fiemap, find_device, mount};
use super::sysfs::{apply_queue, apply_vm, read_sys, write_file};
use super::tracing::{copy_trace, ring_stats, tracing_dir, tracing_setup};
use super::{file_path, AlignedBuf, GResult, Guest};

pub(super) fn run(g: &mut Guest, spec: &GuestSpec) -> GResult<()> {
    let Task::Run { queue: settings, vm, fds, ops, trace_buffer_kb: buffer_kb, programs, program_timeout_s } =
        &spec.task
    else {
        return Err("run() was given a task that is not a run".into());
    };
    let (fds, buffer_kb) = (*fds, *buffer_kb);
    let (device, mut env) = set_up(g, spec, settings, vm)?;
    g.step("dropping caches");
    nix::unistd::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| format!("drop_caches: {e}"))?;
    g.step("starting the trace");
    let tracing = tracing_dir()?;
    tracing_setup(&tracing, buffer_kb)?;
    let calls = match programs.is_empty() {
        true => None,
        // As large as the main trace's: it holds every folio added too (calls::ra).
        false => Some(super::program::Calls::setup(&tracing, buffer_kb)?),
    };
    write_file(&tracing.join("tracing_on"), "1")?;
    // Opened with tracing on, as `xfs_io -c pread` would: reading the evicted inode back is
    // part of a cold-cache run (a metadata read the comparison then sets aside, counted).
    g.step("opening the files");
    let files = open_files(fds, ops)?;
    let direct = open_direct_files(fds, ops)?;
    g.step("running the access pattern");
    let max_len = ops
        .iter()
        .map(|op| match op {
            Op::Read { len, .. } | Op::ReadWith { len, .. } => *len,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let buf = AlignedBuf::new(max_len.max(4096) as usize);
    let mut maps = Maps::default();
    let inflight_path = format!("/sys/block/{device}/inflight");
    let inflight = File::open(&inflight_path).map_err(|e| format!("{inflight_path}: {e}"))?;
    let started = Instant::now();
    let mut pattern_result = Ok(());
    // Whether the device has been idle since the last op (nothing can be in flight).
    let mut settled = true;
    for (i, op) in ops.iter().enumerate() {
        // The contract (README, "Writing a scenario"): every read an op started has
        // completed before the next op that is not a pread. readahead(2), fadvise and
        // madvise WILLNEED return with their reads in flight, and so does a pread with
        // its async window; a touch right after one would race them (the hint's folios
        // still locked, fault-around skips them and the load faults), as would a
        // POSIX_FADV_DONTNEED (find_lock_entries() skips a locked folio). A pread is left
        // alone: it waits on the folios it needs and meets the same folios either way
        // (IoCompletion), and waiting would take readahead's overlap out of its time.
        if !settled && !is_read(op) {
            if let Err(e) = wait_idle(&inflight, &inflight_path) {
                pattern_result = Err(e);
                break;
            }
        }
        let done = match *op {
            Op::ReadWith { fd, offset, len, how } => {
                read_with(&files, &direct, fd, offset, len, how, &buf).map(|n| returned(&mut env, i, how, n))
            }
            Op::Program { program } => run_program(g, calls.as_ref(), programs, program, *program_timeout_s),
            _ => do_op(&files, &mut maps, op, &buf, &mut env.bytes_read),
        };
        if let Err(e) = done {
            pattern_result = Err(e);
            break;
        }
        settled = false;
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
            settled = true;
        }
    }
    env.pattern_ns = started.elapsed().as_nanos() as u64;
    // The step an error names is the one it happened at, not the saving that follows.
    let failed_at = pattern_result.is_err().then(|| g.status.step.clone());
    if ops.iter().any(|op| matches!(op, Op::FailAlloc { .. })) {
        let disarmed = super::failalloc::disarm();
        if pattern_result.is_ok() {
            pattern_result = disarmed;
        }
    }
    env.map_addresses = std::mem::take(&mut maps.addresses);
    // Mappings still there at the end are unmapped with tracing on: munmap does no I/O.
    drop(maps);
    write_file(&tracing.join("tracing_on"), "0")?;
    if let Some(calls) = &calls {
        g.step("saving the programs' calls");
        let saved = calls.save(&g.out.join("calls.txt"));
        if pattern_result.is_ok() {
            pattern_result = saved;
        }
    }
    g.step("saving the trace");
    let (overrun, dropped) = save_trace(g, &tracing, &mut env)?;
    if let Some(step) = failed_at {
        g.status.step = step;
    }
    pattern_result?;
    // A loss is the host's to report: it counts lost events from the trace's text
    // (ftrace::Lost) and checks these counters too (run.rs), never taking a shorter trace.
    if overrun > 0 || dropped > 0 {
        let _ = writeln!(
            g.log,
            "the trace ring buffer lost events (overrun {overrun}, dropped {dropped}) with buffer_size_kb={buffer_kb}"
        );
    }
    Ok(())
}

/// Mounts the file system, applies the queue and vm settings and measures the files: the
/// device's name and what the guest saw so far.
fn set_up(
    g: &mut Guest,
    spec: &GuestSpec,
    settings: &crate::wire::QueueSettings,
    vm: &crate::wire::VmRequest,
) -> GResult<(String, GuestEnv)> {
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
    env.queue = apply_queue(&device, settings)?;
    g.step("applying vm settings");
    (env.vm, env.vm_unread) = apply_vm(g, vm)?;
    g.step("measuring the files");
    measure_files(spec, &mut env)?;
    Ok((device, env))
}

/// An `Op::Program`: program `n` of the spec, run with its calls recorded.
fn run_program(
    g: &mut Guest,
    calls: Option<&super::program::Calls>,
    programs: &[crate::wire::Program],
    n: u32,
    timeout_s: u64,
) -> GResult<()> {
    let program = programs.get(n as usize).ok_or_else(|| format!("program {n}: the spec has {}", programs.len()))?;
    let calls = calls.ok_or("a program step without the calls' trace set up")?;
    g.step(&format!("running program {n} ({})", program.label));
    let ran = calls.run(&g.out, n, program, Duration::from_secs(timeout_s.max(1)));
    g.program_failed = ran.is_err();
    // The step's place in its scenario first: `scenarios/x.yaml:16: program: ...: exited ...`.
    ran.map_err(|e| if program.at.is_empty() { e } else { format!("{}: {e}", program.at) })
}

/// Copies the trace to `trace.txt` and writes `env.json` with the ring buffer's counters:
/// both are saved whether or not the pattern failed. Returns (overrun, dropped).
fn save_trace(g: &Guest, tracing: &std::path::Path, env: &mut GuestEnv) -> GResult<(u64, u64)> {
    let (entries, overrun, dropped) = ring_stats(tracing)?;
    env.trace_entries = entries;
    env.trace_overrun = overrun;
    env.trace_dropped = dropped;
    copy_trace(tracing, &g.out.join("trace.txt"), entries, overrun)?;
    let json = serde_json::to_vec_pretty(&env).map_err(|e| e.to_string())?;
    std::fs::write(g.out.join("env.json"), json).map_err(|e| format!("env.json: {e}"))?;
    Ok((overrun, dropped))
}

/// Checks each file's size against the spec (a stale image is an error) and records its
/// inode and extents in `env`.
fn measure_files(spec: &GuestSpec, env: &mut GuestEnv) -> GResult<()> {
    let sizes: Vec<u64> = std::iter::once(spec.file_size).chain(spec.other_files.iter().map(|f| f.size)).collect();
    for (f, &want) in sizes.iter().enumerate() {
        let path = file_path(f);
        let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.len() != want {
            return Err(format!(
                "{} has {} bytes, the scenario says {want}: the image is stale; delete it from the cache",
                path.display(),
                meta.len()
            ));
        }
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let measured = FileEnv { ino: meta.ino(), file_size: meta.len(), extents: fiemap(&file)? };
        if f == 0 {
            (env.ino, env.file_size, env.extents) = (measured.ino, measured.file_size, measured.extents);
        } else {
            env.other_files.push(measured);
        }
    }
    Ok(())
}

/// Opens the descriptors the ops use, each on its file (pattern::file_of), in fd order.
fn open_files(fds: u32, ops: &[Op]) -> GResult<Vec<Option<File>>> {
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
    Ok(files)
}

/// Opens an O_DIRECT descriptor of the file of each fd an `Op::ReadWith { how.direct }`
/// uses: a `struct file` of its own, apart from the buffered one of the same fd number.
fn open_direct_files(fds: u32, ops: &[Op]) -> GResult<Vec<Option<File>>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut files: Vec<Option<File>> = (0..fds).map(|_| None).collect();
    for op in ops {
        let Op::ReadWith { fd, how, .. } = *op else { continue };
        if !how.direct || files.get(fd as usize).is_some_and(Option::is_some) {
            continue;
        }
        let slot = files.get_mut(fd as usize).ok_or_else(|| format!("an op uses fd {fd}, the spec opens {fds}"))?;
        let path = file_path(radiff_model::pattern::file_of(fd) as usize);
        let file = File::options()
            .read(true)
            .custom_flags(nix::libc::O_DIRECT)
            .open(&path)
            .map_err(|e| format!("{} (O_DIRECT): {e}", path.display()))?;
        *slot = Some(file);
    }
    Ok(files)
}

/// An `Op::ReadWith`: preadv2(2) with RWF_NOWAIT / RWF_DONTCACHE, or pread(2) through
/// the fd's O_DIRECT descriptor (into the page-aligned `buf`). A NOWAIT read may return
/// EAGAIN or fewer bytes (that is its point); any other short read is an error.
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per field of Op::ReadWith, plus the open files and the buffer"
)]
fn read_with(
    files: &[Option<File>],
    direct: &[Option<File>],
    fd: u32,
    offset: u64,
    len: u64,
    how: radiff_model::ReadHow,
    buf: &AlignedBuf,
) -> GResult<u64> {
    use nix::libc;
    let table = if how.direct { direct } else { files };
    let file = table
        .get(fd as usize)
        .and_then(Option::as_ref)
        .ok_or_else(|| format!("fd {fd} is not open{}", if how.direct { " with O_DIRECT" } else { "" }))?;
    let data = buf.slice_mut(len as usize);
    let mut flags = 0;
    if how.nowait {
        flags |= libc::RWF_NOWAIT;
    }
    if how.dontcache {
        flags |= libc::RWF_DONTCACHE;
    }
    let iov = libc::iovec { iov_base: data.as_mut_ptr().cast(), iov_len: len as usize };
    // SAFETY: one iovec over `data`, a live buffer of `len` bytes nothing else holds.
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, offset as i64, flags) };
    let call = format!("preadv2({len} at {offset}, {how:?})");
    if n < 0 {
        let e = std::io::Error::last_os_error();
        if how.nowait && e.raw_os_error() == Some(libc::EAGAIN) {
            return Ok(0);
        }
        if how.dontcache && e.raw_os_error() == Some(libc::EOPNOTSUPP) {
            return Err(format!("{call}: {e}: this kernel refuses RWF_DONTCACHE on this file (kiocb_set_rw_flags(): a tree without it in include/uapi/linux/fs.h, before Linux 6.14, or a file system whose file_operations set no FOP_DONTCACHE)"));
        }
        return Err(format!("{call}: {e}"));
    }
    let n = n as u64;
    if n != len && !how.nowait {
        return Err(format!("{call} returned {n} bytes"));
    }
    let skip = (8 - offset % 8) % 8;
    if n >= skip + 8 && data[skip as usize..skip as usize + 8] != (offset + skip).to_le_bytes() {
        return Err(format!("{call} returned wrong data"));
    }
    Ok(n)
}

/// What the `i`-th op, a read of `how`, returned: `n` bytes. Where an RWF_NOWAIT read
/// stopped is the device's doing: the model follows it
/// (radiff_model::VmSettings::nowait_returned).
fn returned(env: &mut GuestEnv, i: usize, how: radiff_model::ReadHow, n: u64) {
    env.bytes_read += n;
    if how.nowait {
        env.nowait_returned.push(radiff_model::NowaitReturned { op: i, bytes: n });
    }
}

/// Whether `op` is a pread(2), which the guest runs without waiting for the device first.
/// A preadv2 with flags or an O_DIRECT read is not: RWF_NOWAIT's outcome depends on
/// what is still in flight, so every such read starts on an idle device.
fn is_read(op: &Op) -> bool {
    matches!(op, Op::Read { .. })
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
            return Err(format!(
                "{path} still reads `{}` after 30 s: the device does not complete its reads",
                text.trim()
            ));
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
        Op::Read { fd, offset, len } => *bytes_read += pread_checked(file(fd)?, offset, len, buf)?,
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
            nix::fcntl::posix_fadvise(file(fd)?.as_raw_fd(), offset as i64, len as i64, advice)
                .map_err(|e| format!("posix_fadvise: {e}"))?;
        }
        Op::Readahead { fd, offset, len } => {
            // nix has no wrapper for readahead(2).
            // SAFETY: a plain system call on an fd this process owns; no memory is passed.
            let r = unsafe { nix::libc::readahead(file(fd)?.as_raw_fd(), offset as i64, len as usize) };
            if r != 0 {
                return Err(format!("readahead({offset}, {len}): {}", std::io::Error::last_os_error()));
            }
        }
        Op::Mmap { map, fd, offset, len, shared, exec, populate } => {
            use nix::sys::mman::{MapFlags, ProtFlags};
            let length = std::num::NonZeroUsize::new(len as usize).ok_or("mmap of 0 bytes")?;
            let mut flags = if shared { MapFlags::MAP_SHARED } else { MapFlags::MAP_PRIVATE };
            if populate {
                flags |= MapFlags::MAP_POPULATE;
            }
            let prot = if exec { ProtFlags::PROT_READ | ProtFlags::PROT_EXEC } else { ProtFlags::PROT_READ };
            // SAFETY: a new read-only mapping of a file this process owns, at an address
            // the kernel picks; it is only read through `Op::Touch` (never executed) and
            // unmapped once.
            let addr =
                unsafe { nix::sys::mman::mmap(None, length, prot, flags, file(fd)?, offset as i64) }.map_err(|e| {
                    format!("mmap({len} bytes at {offset}, {}): {e}", if shared { "MAP_SHARED" } else { "MAP_PRIVATE" })
                })?;
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
                radiff_model::MadvAdvice::PopulateRead => return madvise_populate_read(addr, offset, len),
                radiff_model::MadvAdvice::Collapse => return madvise_collapse(addr, offset, len),
            };
            // SAFETY: a page-aligned range inside a live mapping of this process (checked above).
            let at =
                unsafe { std::ptr::NonNull::new_unchecked(addr.as_ptr().cast::<u8>().add(offset as usize).cast()) };
            // SAFETY: as above; these advices change no contents.
            unsafe { nix::sys::mman::madvise(at, len as usize, advise) }
                .map_err(|e| format!("madvise(map {map} + {offset}, {len}, {advice:?}): {e}"))?;
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
                return Err(format!(
                    "touch of map {map} at {offset} (file offset {want}) read {got:#x}, expected {want:#x}"
                ));
            }
        }
        Op::Munmap { map } => {
            let (addr, size, _) = maps.get(map)?;
            maps.live[map as usize] = None;
            // SAFETY: the whole of a live mapping this process made, unmapped once.
            unsafe { nix::sys::mman::munmap(addr, size) }.map_err(|e| format!("munmap(map {map}): {e}"))?;
        }
        Op::Splice { fd, offset, len, pipe, sendfile } => {
            *bytes_read += splice_through_pipe(file(fd)?, offset, len, pipe, sendfile)?
        }
        Op::ReadWith { .. } => return Err("an Op::ReadWith reached do_op; run() sends it to read_with()".into()),
        Op::Program { .. } => return Err("an Op::Program reached do_op; run() sends it to program::run()".into()),
        Op::FailAlloc { times, min_order } => super::failalloc::arm(times, min_order)?,
    }
    Ok(())
}

/// An `Op::Read`: pread(2) of `len` bytes at `offset`, checking one word of what came back
/// (the image holds each word's own offset). Returns the bytes read.
fn pread_checked(file: &File, offset: u64, len: u64, buf: &AlignedBuf) -> GResult<u64> {
    let data = buf.slice_mut(len as usize);
    let n = match file.read_at(data, offset) {
        // filemap_create_folio() failed under fail_alloc before any byte was read.
        Err(e) if e.raw_os_error() == Some(nix::libc::ENOMEM) && super::failalloc::armed() => 0,
        r => r.map_err(|e| format!("pread({len} at {offset}): {e}"))?,
    };
    // Under fail_alloc a read may end where an allocation failed (the model's does too).
    if n as u64 != len && !super::failalloc::armed() {
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
    Ok(n as u64)
}

/// An `Op::Splice`: `len` bytes of `file` from `offset` into a new pipe of `pipe` bytes
/// with splice(2) (or sendfile(2)), each call asking for the whole rest and the pipe
/// drained after it, until `len` bytes went through. Returns the bytes moved; checks the
/// first word of each call's data (the image holds each word's own offset).
fn splice_through_pipe(file: &File, offset: u64, len: u64, pipe: u64, sendfile: bool) -> GResult<u64> {
    use nix::libc;
    use std::io::Read;
    let (rx, tx) = nix::unistd::pipe().map_err(|e| format!("pipe: {e}"))?;
    if pipe != 65536 {
        // SAFETY: fcntl on a pipe this function owns; F_SETPIPE_SZ takes an int.
        let r = unsafe { libc::fcntl(tx.as_raw_fd(), libc::F_SETPIPE_SZ, pipe as libc::c_int) };
        if r < 0 || r as u64 != pipe {
            return Err(format!("F_SETPIPE_SZ({pipe}) gave {r}: {}", std::io::Error::last_os_error()));
        }
    }
    let mut rx = File::from(rx);
    let mut chunk = vec![0u8; pipe as usize];
    let (mut pos, mut moved) = (offset as i64, 0u64);
    while moved < len {
        let at = pos as u64;
        let left = (len - moved) as usize;
        // SAFETY: plain system calls on descriptors this process owns; `pos` is a live
        // loff_t the kernel updates.
        let n = unsafe {
            if sendfile {
                libc::sendfile64(tx.as_raw_fd(), file.as_raw_fd(), &mut pos, left)
            } else {
                libc::splice(file.as_raw_fd(), &mut pos, tx.as_raw_fd(), std::ptr::null_mut(), left, 0)
            }
        };
        let call = if sendfile { "sendfile" } else { "splice" };
        if n < 0 {
            return Err(format!("{call}({left} at {at}): {}", std::io::Error::last_os_error()));
        }
        if n == 0 {
            return Err(format!("{call}({left} at {at}) returned 0 before the end of the step"));
        }
        let n = n as usize;
        rx.read_exact(&mut chunk[..n]).map_err(|e| format!("reading {n} bytes back from the pipe: {e}"))?;
        let skip = ((8 - at % 8) % 8) as usize;
        if n >= skip + 8 && chunk[skip..skip + 8] != (at + skip as u64).to_le_bytes() {
            return Err(format!("{call} at {at} moved wrong data {:?}", &chunk[skip..skip + 8]));
        }
        moved += n as u64;
    }
    Ok(moved)
}

/// `madvise(addr + offset, len, MADV_POPULATE_READ)` (Linux 5.14; nix 0.29 has no name for it).
fn madvise_populate_read(addr: std::ptr::NonNull<std::ffi::c_void>, offset: u64, len: u64) -> GResult<()> {
    // SAFETY: a page-aligned range inside a live mapping of this process (the caller
    // checked it); MADV_POPULATE_READ only faults pages in and changes no contents.
    let r = unsafe {
        nix::libc::madvise(
            addr.as_ptr().cast::<u8>().add(offset as usize).cast(),
            len as usize,
            nix::libc::MADV_POPULATE_READ,
        )
    };
    if r != 0 {
        return Err(format!("madvise(+{offset}, {len}, MADV_POPULATE_READ): {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// MADV_COLLAPSE (not in nix). Its errors are not the run's: `madvise_collapse()` returns
/// EAGAIN or EINVAL for a range that did not collapse, and the trace's
/// `mm_khugepaged_collapse_file` events say which and why.
fn madvise_collapse(addr: std::ptr::NonNull<std::ffi::c_void>, offset: u64, len: u64) -> GResult<()> {
    // SAFETY: a page-aligned range inside a live mapping of this process (the caller
    // checked it); MADV_COLLAPSE replaces the range's page-cache folios by one of the same
    // contents and changes no contents.
    let r = unsafe {
        nix::libc::madvise(
            addr.as_ptr().cast::<u8>().add(offset as usize).cast(),
            len as usize,
            nix::libc::MADV_COLLAPSE,
        )
    };
    if r != 0 {
        eprintln!("madvise(+{offset}, {len}, MADV_COLLAPSE): {}", std::io::Error::last_os_error());
    }
    Ok(())
}
