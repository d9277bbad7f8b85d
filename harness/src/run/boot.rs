//! One boot of a batch: its watchdog (what [`crate::vm::boot_with`] asks whether to stop
//! or boot again), error classes, published run folders.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use radiff_model::pattern;

use super::console::{console_of_point, ftrace_dump, kernel_panic, lost_fix, read_status};
use super::{disk, guest_files, memory_mb, Job, Lab, RunOutput};
use crate::cache;
use crate::error::{tail, Error, Result};
use crate::ftrace::{self, Filter};
use crate::scenario::{Point, Scenario};
use crate::vm::{self, Accel, Boot};
use crate::wire::{GuestEnv, GuestSpec, Status, Task};

/// How long a batch's guest may take to start its first point (boot, virtme-ng's init):
/// about 8 s on an idle 2-core host under TCG. A guest that has not started by then is
/// booted again, as a boot that stalled (see vm.rs).
const BOOT_ALLOWANCE: Duration = Duration::from_secs(150);

impl Lab {
    /// One boot of a batch: runs `points` (job index, image) in order and settles those it
    /// reached: every point that finished, and the one that failed (or, if the boot never
    /// reached a point, the first), and past a point that failed at a program step, those
    /// the guest went on to. The rest are left for the next boot. `started` is
    /// called with a point's job index when the guest is seen to start it.
    pub(super) fn boot_batch(
        &self,
        kernel: &Path,
        jobs: &[Job],
        points: &[(usize, PathBuf)],
        started: &mut dyn FnMut(usize),
    ) -> Vec<(usize, Result<RunOutput>)> {
        let first = points[0].0;
        match self.boot_batch_inner(kernel, jobs, points, started) {
            Ok(settled) => settled,
            Err(e) => vec![(first, Err(e))],
        }
    }

    fn boot_batch_inner(
        &self,
        kernel: &Path,
        jobs: &[Job],
        points: &[(usize, PathBuf)],
        started_point: &mut dyn FnMut(usize),
    ) -> Result<Vec<(usize, Result<RunOutput>)>> {
        let runs = self.cache.dir("runs")?;
        // Each point's run folder, locked (in one order, once each) for the whole boot.
        let finals: Vec<PathBuf> = points.iter().map(|(i, _)| run_dir(&runs, &jobs[*i])).collect();
        let _locks = self.lock_run_folders(&finals)?;
        let batch = new_batch_folder(&runs)?;
        let disks = stage_points(&batch, jobs, points)?;
        let timeouts: Vec<Duration> = points.iter().map(|(i, _)| jobs[*i].scenario.timeout).collect();
        let boot = Boot {
            kernel: kernel.to_path_buf(),
            disks,
            snapshot: true,
            shared: batch.clone(),
            command: format!("{} --batch {}", self.guest_program()?.display(), batch.display()),
            cpus: self.vcpus,
            memory_mb: points.iter().map(|(i, _)| memory_mb(jobs[*i].scenario)).max().unwrap_or(2048),
            timeout: BOOT_ALLOWANCE + timeouts.iter().sum::<Duration>(),
        };
        let started = Instant::now();
        let labels: Vec<String> =
            points.iter().map(|(i, _)| format!("{}/{}", jobs[*i].scenario.name, jobs[*i].name)).collect();
        let (booted, watch) = self.boot_watchdog(&boot, &batch, points, &timeouts, &labels, started_point);
        let boot_wall = started.elapsed();
        let console_path = batch.join("console.log");
        let console = std::fs::read_to_string(&console_path).unwrap_or_default();
        let point_walls = watch.point_walls(Instant::now());
        let overhead = boot_wall.saturating_sub(point_walls.iter().flatten().sum()) / points.len() as u32;
        let (accel, exit_code, boot_error) = match booted {
            Ok(b) => (b.accel, b.exit_code, None),
            Err(e) => (Accel::Tcg, None, Some(e)),
        };
        let mut ended = Ended { watch, console, exit_code, boot_error };
        let mut settled = Vec::new();
        for (n, (i, _)) in points.iter().enumerate() {
            let job = &jobs[*i];
            let from = batch.join(n.to_string());
            let status = read_status(&from);
            let began = from.join(crate::wire::POINT_STARTED).exists();
            if !began && n > 0 {
                break; // the next boot's
            }
            // The point's folder is finished where the guest wrote it (the boot's console
            // and command joined, the trace parsed and saved), then renamed to its run
            // folder: a run folder appears whole or not at all, never half-written.
            let dir = &finals[n];
            keep_boot_logs(&batch, &from);
            let _ = std::fs::remove_file(from.join(crate::wire::POINT_STARTED));
            if status.as_ref().is_some_and(|s| s.ok) {
                let wall = point_walls[n].unwrap_or_default() + overhead;
                let result = self.finish_run(job.scenario, &from, dir, accel, wall, points.len(), boot_wall);
                match publish(&from, dir, &batch.join(format!("replaced-{n}"))) {
                    Ok(()) => settled.push((*i, result)),
                    Err(e) => settled.push((*i, Err(e))),
                }
                continue;
            }
            // This point failed (or the boot did before it): it gets the error; the rest wait
            // for a fresh boot, unless the guest went on to the next (a program step failed).
            let error = ended.point_error(n, job, timeouts[n], &from, dir, status.as_ref(), began);
            // A point that met a full file system (its folder, or the image QEMU writes) is
            // NoSpace, naming the folder.
            let error = no_space(error, dir, 1 << 20, || format!("running {} on {}", job.scenario.name, job.name));
            // What the failed point left (console, partial trace) is kept in its run folder.
            match publish(&from, dir, &batch.join(format!("replaced-{n}"))) {
                Ok(()) => settled.push((*i, Err(error))),
                Err(e) => settled.push((
                    *i,
                    Err(Error::Other(format!(
                        "{error}\n(and its folder could not be kept: {e}; it is {})",
                        from.display()
                    ))),
                )),
            }
        }
        let _ = std::fs::remove_dir_all(&batch);
        Ok(settled)
    }

    /// Locks the run folders `finals` (in one order, once each), for as long as the locks live.
    fn lock_run_folders(&self, finals: &[PathBuf]) -> Result<Vec<cache::Lock>> {
        let mut lock_paths: Vec<PathBuf> = finals
            .iter()
            .map(|d| {
                Ok(self.cache.dir("locks")?.join(format!("run-{}.lock", cache::key([d.to_string_lossy().as_bytes()]))))
            })
            .collect::<Result<_>>()?;
        lock_paths.sort();
        lock_paths.dedup();
        lock_paths.iter().map(|p| cache::lock(p)).collect::<Result<Vec<_>>>()
    }

    /// Boots `boot` under the watchdog ([`BatchWatch`]): each point has its scenario's
    /// timeout from when it starts, and a guest that starts no point within
    /// BOOT_ALLOWANCE, or whose kernel panicked before the first point, is the boot's own
    /// trouble, booted again by [`vm::boot_with`]. The last boot's result and its watch.
    fn boot_watchdog(
        &self,
        boot: &Boot,
        batch: &Path,
        points: &[(usize, PathBuf)],
        timeouts: &[Duration],
        labels: &[String],
        started_point: &mut dyn FnMut(usize),
    ) -> (Result<vm::Booted>, Watch) {
        let mut watcher = BatchWatch {
            lab: self,
            kernel: &boot.kernel,
            batch,
            points,
            timeouts,
            labels,
            started_point,
            watch: Watch::new(points.len()),
            started: std::time::SystemTime::now(),
        };
        let booted = vm::boot_with(&self.cache, boot, &mut watcher);
        (booted, watcher.watch)
    }

    /// Reads a finished point's results in `staged` (the guest's folder, renamed to `dir`
    /// afterwards): env.json, the trace (lost events are an error), trace.json written
    /// there. Errors and the output name the files as they will be in `dir`.
    #[allow(
        clippy::too_many_arguments,
        reason = "a point's run: its job, folders and outcome each come from a different stage of the boot"
    )]
    fn finish_run(
        &self,
        scenario: &Scenario,
        staged: &Path,
        dir: &Path,
        accel: Accel,
        wall: Duration,
        boot_points: usize,
        boot_wall: Duration,
    ) -> Result<RunOutput> {
        let dir = dir.to_path_buf();
        let read = |name: &str| std::fs::read_to_string(staged.join(name)).map_err(|e| Error::io(dir.join(name), e));
        let env_path = dir.join("env.json");
        let env: GuestEnv =
            serde_json::from_str(&read("env.json")?).map_err(|e| Error::Json { file: env_path.clone(), source: e })?;
        let trace_path = dir.join("trace.txt");
        let text = read("trace.txt")?;
        let filter = Filter::new(&env.dev, env.inos()).ok_or_else(|| Error::Trace {
            file: env_path.clone(),
            line: 0,
            message: format!("bad device number `{}`", env.dev),
        })?;
        let mut capture = match ftrace::parse(&text, &filter) {
            Ok(capture) => capture,
            Err(ftrace::ParseError::Lost(lost)) => {
                return Err(Error::LostEvents {
                    dir,
                    message: format!(
                        "{lost}; the guest's per_cpu stats: overrun {}, dropped {}, entries {}",
                        env.trace_overrun, env.trace_dropped, env.trace_entries
                    ),
                    fix: lost_fix(scenario, lost.suggest_kb(scenario.trace_buffer_kb)),
                })
            }
            Err(e) => return Err(Error::Trace { file: trace_path.clone(), line: e.line(), message: e.to_string() }),
        };
        // Cross-check: the ring buffer's own counters, read in the guest after the run.
        if env.trace_overrun > 0 || env.trace_dropped > 0 {
            return Err(Error::LostEvents {
                dir,
                message: format!(
                    "the guest's per_cpu stats say the ring buffer lost events (overrun {}, dropped {}), though the trace's text shows no loss",
                    env.trace_overrun, env.trace_dropped
                ),
                fix: lost_fix(scenario, scenario.trace_buffer_kb * 4),
            });
        }
        if !scenario.programs.is_empty() {
            let paths: Vec<String> = (0..scenario.file_sizes().len()).map(crate::wire::guest_path).collect();
            let calls = read("calls.txt")?;
            capture.programs = crate::calls::parse_traced(
                &calls,
                &paths,
                &scenario.file_sizes(),
                Some(&crate::calls::ra::RaFiles {
                    major: filter.major,
                    minor: filter.minor,
                    inos: filter.inos.clone(),
                }),
            )
            .map_err(|message| Error::Trace { file: dir.join("calls.txt"), line: 0, message })?;
        }
        let json =
            serde_json::to_vec_pretty(&capture).map_err(|e| Error::Json { file: dir.join("trace.json"), source: e })?;
        cache::write_atomic(&staged.join("trace.json"), &json)
            .map_err(|e| e.during(|| format!("saving the trace of {}", scenario.name)))?;
        Ok(RunOutput { dir, capture, env, accel, wall, boot_points, boot_wall })
    }

    /// Boots `variant`'s kernel with no disk and returns what `uname -r` printed in the
    /// guest, and the wall time of the boot.
    pub fn boot_release(&self, variant: &str, who: &str) -> Result<(String, Duration)> {
        let kernel = self.kernel(variant, who)?;
        let dir = self.cache.dir("runs")?.join("_boot").join(variant);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let boot = Boot {
            kernel,
            disks: Vec::new(),
            snapshot: false,
            shared: dir.clone(),
            command: format!("uname -r > {}/release", dir.display()),
            cpus: self.vcpus,
            memory_mb: 1024,
            timeout: Duration::from_secs(180),
        };
        let booted = vm::boot(&self.cache, &boot)?;
        let release = std::fs::read_to_string(dir.join("release")).map_err(|_| Error::Guest {
            dir: dir.clone(),
            message: format!("the guest wrote no release (exit code {:?})", booted.exit_code),
            console_tail: crate::process::log_tail(&booted.console, 20),
        })?;
        Ok((release.trim().to_string(), booted.elapsed))
    }
}

/// A guest that failed (or could not report) where the folder it writes to, or the image
/// QEMU writes, has less than `room` bytes left: the guest's writes to the folder, or
/// QEMU's to the image (`werror=report`: an I/O error in the guest instead of a VM paused
/// for ever), met a full file system.
pub(super) fn no_space(err: Error, dir: &Path, room: u64, during: impl FnOnce() -> String) -> Error {
    let said = err.to_string().contains("No space left on device");
    match err {
        Error::Guest { .. } | Error::VmTimeout { .. }
            if said || cache::free_bytes(dir).is_some_and(|free| free < room) =>
        {
            Error::NoSpace {
                path: dir.to_path_buf(),
                during: Some(format!("{} ({})", during(), err.to_string().lines().next().unwrap_or_default())),
                source: std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
            }
        }
        other => other.during(during),
    }
}

/// Puts the finished folder `staged` in place as the run folder `dir`, replacing an earlier
/// run's: the old folder is first moved aside to `aside` (in the batch's folder, removed
/// with it), so `dir` is always a whole run's folder or absent, never half of one.
fn publish(staged: &Path, dir: &Path, aside: &Path) -> Result<()> {
    cache::put_in_place(staged, dir, &[], Some(aside))
}

/// Removes the batch folders under `runs/_batch/` (`PID-N`) that a process no longer
/// running left behind (killed mid-boot); those of running processes are theirs.
pub fn remove_stale_batches(batches: &Path) {
    let Ok(entries) = std::fs::read_dir(batches) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.split_once('-').and_then(|(pid, _)| pid.parse::<i32>().ok()) else { continue };
        if pid == std::process::id() as i32 {
            continue;
        }
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) == Err(nix::errno::Errno::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A fresh folder for one boot of a batch, `runs/_batch/PID-N/`, once the batch folders
/// of processes that are gone are removed.
fn new_batch_folder(runs: &Path) -> Result<PathBuf> {
    static BATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    remove_stale_batches(&runs.join("_batch"));
    let batch = runs.join("_batch").join(format!(
        "{}-{}",
        std::process::id(),
        BATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    if batch.exists() {
        std::fs::remove_dir_all(&batch).map_err(|e| Error::io(&batch, e))?;
    }
    Ok(batch)
}

/// Each point's folder in `batch` (`0/`, `1/`, ...) with the guest's spec.json; the disks
/// of the points, in order.
fn stage_points(batch: &Path, jobs: &[Job], points: &[(usize, PathBuf)]) -> Result<Vec<vm::Disk>> {
    let mut disks = Vec::new();
    for (n, (i, image)) in points.iter().enumerate() {
        let job = &jobs[*i];
        let dir = batch.join(n.to_string());
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let spec = run_spec(job.scenario, job.point, Some(vm::disk_pci_address(n)));
        cache::write_atomic(
            &dir.join("spec.json"),
            &serde_json::to_vec_pretty(&spec).map_err(|e| Error::Other(e.to_string()))?,
        )?;
        disks.push(disk(job.scenario, image, true));
    }
    Ok(disks)
}

/// Copies into a point's folder `from` the boot's console and command, and the consoles of
/// boots that stalled or crashed before it (`console.boot-stall-1.log`,
/// `console.qemu-crash-1.log`).
fn keep_boot_logs(batch: &Path, from: &Path) {
    let kept =
        std::fs::read_dir(batch).into_iter().flatten().flatten().map(|e| e.file_name().to_string_lossy().into_owned());
    for name in kept.filter(|n| n == "vng.cmd" || (n.starts_with("console.") && n.ends_with(".log"))) {
        let _ = std::fs::copy(batch.join(&name), from.join(&name));
    }
}

/// How a boot of a batch ended, for the error of the point it failed at.
struct Ended {
    watch: Watch,
    console: String,
    exit_code: Option<i32>,
    /// The VM's own error, given to the first point that fails.
    boot_error: Option<Error>,
}

impl Ended {
    /// The error of point `n` (`job`, its folder `from`, to be published as `dir`), which
    /// failed or which the boot failed before: a timeout, a kernel panic (its dumped trace
    /// kept as the point's trace.txt), the guest's error, a boot that stalled, or the VM's.
    #[allow(
        clippy::too_many_arguments,
        reason = "a point's run: its job, folders and outcome each come from a different stage of the boot"
    )]
    fn point_error(
        &mut self,
        n: usize,
        job: &Job,
        timeout: Duration,
        from: &Path,
        dir: &Path,
        status: Option<&Status>,
        began: bool,
    ) -> Error {
        let dir = dir.to_path_buf();
        let exit_code = self.exit_code;
        let slice = console_of_point(&self.console, n + 1);
        let step = status.map_or("(the guest program never started)".to_string(), |s| s.step.clone());
        if self.watch.overran_point == Some(n) {
            Error::VmTimeout {
                after: timeout,
                dir,
                last_step: Some(step),
                timeout_source: Some(timeout_source(job.scenario)),
                console_tail: tail(&slice, 25),
            }
        } else if let Some(panic) = kernel_panic(&slice) {
            // The trace the guest never saved, as the kernel dumped it (ftrace_dump_on_oops).
            if let Some(dump) = ftrace_dump(&slice).filter(|_| !from.join("trace.txt").exists()) {
                let _ = std::fs::write(from.join("trace.txt"), dump);
            }
            Error::Guest {
                dir,
                message: format!("the kernel panicked at step `{step}`:\n{panic}"),
                console_tail: tail(&slice, 10),
            }
        } else if let Some(Status { error: Some(e), .. }) = status {
            Error::Guest { dir, message: format!("at step `{step}`: {e}"), console_tail: tail(&slice, 20) }
        } else if self.watch.stalled {
            Error::Guest {
                dir,
                message: format!(
                    "the guest started no point within {} s, in {} boots (boots that stalled)",
                    BOOT_ALLOWANCE.as_secs(),
                    vm::BOOT_ATTEMPTS
                ),
                console_tail: tail(&slice, 20),
            }
        } else {
            match self.boot_error.take() {
                Some(Error::VmTimeout { after, console_tail, .. }) => {
                    Error::VmTimeout { after, dir, last_step: Some(step), timeout_source: None, console_tail }
                }
                Some(e) if !began => e,
                Some(e) => Error::Guest {
                    dir,
                    message: format!("at step `{step}` the VM failed: {e}"),
                    console_tail: tail(&slice, 20),
                },
                None => Error::Guest {
                    dir,
                    message: format!("the guest stopped at step `{step}` (exit code {exit_code:?})"),
                    console_tail: tail(&slice, 20),
                },
            }
        }
    }
}

/// A run's folder: `runs/SCENARIO/NAME[/POINT]/`.
pub fn run_dir(runs: &Path, job: &Job) -> PathBuf {
    let mut dir = runs.join(&job.scenario.name).join(folder_name(job.name));
    if let Some(label) = &job.point.label {
        dir = dir.join(folder_name(label));
    }
    dir
}

/// What the guest is asked to do for `point` of `scenario`, on the disk at PCI `disk`.
fn run_spec(scenario: &Scenario, point: &Point, disk: Option<String>) -> GuestSpec {
    GuestSpec {
        device: scenario.device.kind,
        disk,
        fs: scenario.fs,
        file_size: scenario.file_size,
        task: Task::Run {
            queue: point.queue.clone(),
            vm: scenario.vm,
            fds: pattern::fd_count(&scenario.steps),
            ops: pattern::expand_files(&scenario.steps, &scenario.file_sizes()),
            trace_buffer_kb: scenario.trace_buffer_kb,
            programs: scenario.programs.clone(),
            // Three quarters of the scenario's: the rest is for the trace and the host's watchdog.
            program_timeout_s: scenario.timeout.as_secs() * 3 / 4,
        },
        other_files: guest_files(scenario),
    }
}

/// Where a scenario's timeout comes from, for an error that names it.
fn timeout_source(scenario: &Scenario) -> String {
    format!(
        "{} s, the timeout of {} (`timeout_s`; default 240 s plus 120 s per GiB of file)",
        scenario.timeout.as_secs(),
        scenario.path.display()
    )
}

/// Which point of a batch runs and whether it overran its timeout, asked once a second
/// while the VM runs: a point starts when its folder gets [`crate::wire::POINT_STARTED`].
struct Watch {
    points: usize,
    boot_started: Instant,
    current: Option<(usize, Instant)>,
    /// When each point was seen to start (to a second: the host's clock, not the guest's,
    /// which under TCG runs fast when its TSC calibration failed).
    starts: Vec<Option<Instant>>,
    overran_point: Option<usize>,
    stalled: bool,
    /// The boot's progress: which point runs and the step its guest reports.
    task: crate::progress::Task,
}

impl Watch {
    fn new(points: usize) -> Watch {
        Watch {
            points,
            boot_started: Instant::now(),
            current: None,
            starts: vec![None; points],
            overran_point: None,
            stalled: false,
            task: crate::progress::Task::start("VM"),
        }
    }

    /// What the boot is doing: `point N of M: STEP`, the step as the running point's guest
    /// last wrote it to its `status.json`.
    fn status(&self, batch: &Path) -> String {
        let Some((n, _)) = self.current else { return "booting the kernel (no point started yet)".into() };
        let dir = batch.join(n.to_string());
        let step = read_status(&dir).map_or_else(|| "starting".to_string(), |s| s.step);
        format!("point {} of {}: {step}", n + 1, self.points)
    }

    /// Each point's time on the host: from its start to the next one's (or the boot's end).
    fn point_walls(&self, end: Instant) -> Vec<Option<Duration>> {
        (0..self.points)
            .map(|n| {
                let start = self.starts[n]?;
                let next = self.starts[n + 1..].iter().flatten().next().copied().unwrap_or(end);
                Some(next.saturating_duration_since(start))
            })
            .collect()
    }

    fn overran(&mut self, batch: &Path, timeouts: &[Duration]) -> bool {
        let now = Instant::now();
        let from = self.current.map_or(0, |(n, _)| n + 1);
        for n in from..self.points {
            if batch.join(n.to_string()).join(crate::wire::POINT_STARTED).exists() {
                self.current = Some((n, now));
                self.starts[n] = Some(now);
            }
        }
        let message = self.status(batch);
        match (self.current, self.points) {
            (_, 1) => self.task.status(message),
            (current, points) => self.task.count(message, current.map_or(0, |(n, _)| n as u64), Some(points as u64)),
        }
        match self.current {
            Some((n, since)) if now.duration_since(since) > timeouts[n] => {
                self.overran_point = Some(n);
                true
            }
            None if now.duration_since(self.boot_started) > BOOT_ALLOWANCE => {
                self.stalled = true;
                true
            }
            _ => false,
        }
    }
}

/// A batch's side of its boots ([`vm::Watcher`]): the point watchdog, the boots counted
/// and logged ([`crate::boot_log::log_boot`]), and a boot's own trouble named.
struct BatchWatch<'a> {
    lab: &'a Lab,
    kernel: &'a Path,
    batch: &'a Path,
    points: &'a [(usize, PathBuf)],
    timeouts: &'a [Duration],
    labels: &'a [String],
    started_point: &'a mut dyn FnMut(usize),
    watch: Watch,
    started: std::time::SystemTime,
}

impl vm::Watcher for BatchWatch<'_> {
    fn begin(&mut self) {
        self.watch = Watch::new(self.points.len());
        self.lab.boots.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.started = std::time::SystemTime::now();
    }

    fn stop(&mut self) -> bool {
        let overran = self.watch.overran(self.batch, self.timeouts);
        for (n, (i, _)) in self.points.iter().enumerate() {
            if self.watch.starts[n].is_some() {
                (self.started_point)(*i);
            }
        }
        overran
    }

    fn ended(&mut self, console: &str) -> Option<vm::Trouble> {
        crate::boot_log::log_boot(self.kernel, self.batch, self.labels, self.started);
        let first_started = self.batch.join("0").join(crate::wire::POINT_STARTED).exists();
        boot_trouble(first_started, console, self.watch.stalled)
    }
}

/// A batch's boot's own trouble, worth another boot: a kernel that panicked before the
/// first point started (not a point's doing), or a guest that started none in time.
fn boot_trouble(first_started: bool, console: &str, stalled: bool) -> Option<vm::Trouble> {
    if !first_started && kernel_panic(console).is_some() {
        Some(vm::Trouble {
            kind: "boot-panic",
            what: "the kernel panicked before the guest started its first point".to_string(),
        })
    } else if stalled {
        Some(vm::Trouble {
            kind: "boot-stall",
            what: format!("the guest started no point within {} s (a boot that stalled)", BOOT_ALLOWANCE.as_secs()),
        })
    } else {
        None
    }
}

/// A run folder's name for a variant or matrix point: vng refuses some characters in
/// `--rwdir` (`~`) and reads `=` as GUEST=HOST, so anything but letters, digits, `.`, `_`
/// and `-` becomes `-`.
fn folder_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_run_folder_replaces_the_old_one_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let (staged, dir, aside) =
            (tmp.path().join("batch/0"), tmp.path().join("runs/s/base"), tmp.path().join("batch/replaced-0"));
        std::fs::create_dir_all(&staged).unwrap();
        std::fs::write(staged.join("trace.txt"), "new").unwrap();
        // No earlier run: the folder appears with the staged files.
        publish(&staged, &dir, &aside).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("trace.txt")).unwrap(), "new");
        assert!(!staged.exists());
        // An earlier run's folder with a file the new run lacks: none of it is left.
        std::fs::write(dir.join("trace.json"), "old").unwrap();
        std::fs::create_dir_all(&staged).unwrap();
        std::fs::write(staged.join("trace.txt"), "newer").unwrap();
        publish(&staged, &dir, &aside).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("trace.txt")).unwrap(), "newer");
        assert!(!dir.join("trace.json").exists(), "a file of the earlier run was left in the new run's folder");
        assert!(aside.join("trace.json").exists(), "the old folder goes aside, into the batch folder that is removed");
    }

    #[test]
    fn only_batch_folders_of_processes_that_are_gone_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let gone = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            c.wait().unwrap();
            c.id()
        };
        let names = [
            format!("{gone}-0"),
            format!("{}-3", child.id()),
            format!("{}-1", std::process::id()),
            "notes".to_string(),
        ];
        for n in &names {
            std::fs::create_dir_all(tmp.path().join(n).join("0")).unwrap();
        }
        remove_stale_batches(tmp.path());
        let left: Vec<bool> = names.iter().map(|n| tmp.path().join(n).exists()).collect();
        child.kill().unwrap();
        let _ = child.wait();
        assert_eq!(left, [false, true, true, true], "{names:?}");
    }

    /// The watchdog times each point from when its folder gets `started`, with the
    /// point's own timeout; before any point, the boot allowance.
    #[test]
    fn the_watchdog_times_each_point_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let batch = dir.path();
        for n in 0..2 {
            std::fs::create_dir_all(batch.join(n.to_string())).unwrap();
        }
        let timeouts = [Duration::from_secs(3600), Duration::ZERO];
        let mut watch = Watch::new(2);
        assert!(!watch.overran(batch, &timeouts), "no point yet, within the allowance");
        std::fs::write(batch.join("0").join(crate::wire::POINT_STARTED), b"").unwrap();
        assert!(!watch.overran(batch, &timeouts), "point 1 has an hour");
        assert_eq!(watch.current.map(|c| c.0), Some(0));
        std::fs::write(batch.join("1").join(crate::wire::POINT_STARTED), b"").unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(!watch.overran(batch, &timeouts), "point 2 is seen to start now");
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(watch.status(batch), "point 2 of 2: starting", "no status.json yet");
        std::fs::write(
            batch.join("1").join("status.json"),
            r#"{"step": "running the access pattern", "ok": false, "error": null}"#,
        )
        .unwrap();
        std::fs::write(batch.join("0").join("status.json"), r#"{"step": "done", "ok": true, "error": null}"#).unwrap();
        assert_eq!(watch.status(batch), "point 2 of 2: running the access pattern", "the running point's step");
        assert!(watch.overran(batch, &timeouts), "point 2 has no time at all");
        assert_eq!(watch.overran_point, Some(1));
        assert!(!watch.stalled);
        let mut stalled = Watch::new(2);
        assert_eq!(stalled.status(batch), "booting the kernel (no point started yet)");
        stalled.boot_started -= BOOT_ALLOWANCE + Duration::from_secs(1);
        let empty = tempfile::tempdir().unwrap();
        assert!(stalled.overran(empty.path(), &timeouts));
        assert!(stalled.stalled && stalled.overran_point.is_none());
    }

    #[test]
    fn a_panic_before_the_first_point_or_a_stall_is_the_boots_own_trouble() {
        let panic = "[    1.2] Kernel panic - not syncing: VFS: Unable to mount root fs\n";
        let kind = |t: Option<vm::Trouble>| t.map(|t| t.kind);
        assert_eq!(kind(boot_trouble(false, panic, false)), Some("boot-panic"));
        // A panic once a point started is that point's, not the boot's.
        assert_eq!(kind(boot_trouble(true, panic, false)), None);
        assert_eq!(kind(boot_trouble(false, "booting\n", true)), Some("boot-stall"));
        assert_eq!(kind(boot_trouble(false, "booting\n", false)), None);
        let what = boot_trouble(false, "", true).unwrap().what;
        assert!(what.contains(&format!("{} s", BOOT_ALLOWANCE.as_secs())), "{what}");
    }
}
