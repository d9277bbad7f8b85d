//! One run: a scenario point on a variant's kernel, in a VM, to a parsed trace.
//!
//! Disk images are prepared once per (device, file system, file, layout), by the base
//! kernel, and every variant reads the same image through a throwaway overlay.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use radiff_model::pattern;

use crate::cache::{self, Cache};
use crate::error::{tail, Error, Result};
use crate::ftrace::{self, Capture, Filter};
use crate::guest;
use crate::wire::{DeviceKind, GuestEnv, GuestSpec, Status, Task};
use crate::kernels::{Builder, Kernels};
use crate::scenario::{Point, Scenario};
use crate::vm::{self, Accel, Boot, Disk};

/// Virtual CPUs of a guest that runs a scenario when it has the host to itself (`radiff
/// run`, `report`, `bisect`). Test trials run guests side by side and give each fewer
/// ([`Lab::with_vcpus`]): under TCG, two guests of two vCPUs on a 2-core host put four
/// vCPU threads on two cores, and a halted vCPU's timer wakeup came so late that a guest
/// stalled at boot (RCU stall reports, then the VM timeout). Traces do not depend on it:
/// every trial gave the same trace with one vCPU as with two.
pub const VM_CPUS: u32 = 2;

/// Virtual CPUs of the guest that prepares a disk image (mkfs and the writes), as every
/// cached image was made.
pub const PREPARE_CPUS: u32 = 2;

/// Bumped when images are laid out differently, so old ones are not reused.
const IMAGE_RECIPE: &str = "radiff-image-2";

/// Everything a run needs that outlives it: the cache, the kernels and the guest program.
/// Shared by all trials of a test run; kernels are built once, and a failed build is
/// reported once (later callers are told which caller saw it fail).
pub struct Lab {
    pub cache: Cache,
    pub kernels: Kernels,
    pub guest: PathBuf,
    pub progress: &'static (dyn Fn(&str) + Sync),
    built: Mutex<HashMap<String, std::result::Result<PathBuf, String>>>,
    images: Mutex<()>,
    vcpus: u32,
    boots: std::sync::atomic::AtomicUsize,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// The run's folder: spec.json, console.log, trace.txt, trace.json, env.json.
    pub dir: PathBuf,
    pub capture: Capture,
    pub env: GuestEnv,
    pub accel: Accel,
    /// Wall time of the run: alone, its boot's (boot, mount, pattern, trace dump, reboot);
    /// in a batch, its own time in the guest plus an equal share of what the boot spent
    /// outside the points (booting, rebooting), so the points of a boot sum to its wall.
    pub wall: Duration,
    /// Points the run's boot ran (1: a boot of its own) and that boot's wall time.
    pub boot_points: usize,
    pub boot_wall: Duration,
}

/// One point of a batch: `point` of `scenario`, its run folder named `name` (the variant,
/// or a name of the caller's) under `runs/SCENARIO/`.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    pub scenario: &'a Scenario,
    pub point: &'a Point,
    pub name: &'a str,
}

/// Points one boot runs at most. Each has a disk of its own (a PCI slot, see
/// [`vm::MAX_DISKS`]); more points a boot would also wait longer for its first result.
pub const BATCH_POINTS: usize = 8;

/// How long a batch's guest may take to start its first point (boot, virtme-ng's init):
/// about 8 s on an idle 2-core host under TCG. A guest that has not started by then is
/// booted again, as a boot that stalled (see vm.rs).
const BOOT_ALLOWANCE: Duration = Duration::from_secs(150);

impl Lab {
    pub fn new(cache: Cache, kernels: Kernels, guest: PathBuf, progress: &'static (dyn Fn(&str) + Sync)) -> Lab {
        Lab { cache, kernels, guest, progress, built: Mutex::new(HashMap::new()), images: Mutex::new(()), vcpus: VM_CPUS, boots: Default::default() }
    }

    /// The lab of this repository (`kernels/kernels.yaml`) in the cache `$RADIFF_CACHE`
    /// names, once the host has what runs need ([`Lab::check_host`]).
    pub fn open() -> Result<Lab> {
        let kernels = Kernels::load(&crate::repo_root())?;
        let lab = Lab::new(Cache::from_env(), kernels, guest_binary()?, &crate::progress::progress);
        lab.check_host()?;
        Ok(lab)
    }

    /// Whether this host has what runs need (QEMU, virtme-ng, the kernel source): one
    /// error naming each missing part, before any build or boot ([`crate::host::check`]).
    pub fn check_host(&self) -> Result<()> {
        crate::host::check(&self.cache, &self.kernels)
    }

    /// The same lab, booting scenario guests with `vcpus` virtual CPUs (at least one).
    pub fn with_vcpus(mut self, vcpus: u32) -> Lab {
        self.vcpus = vcpus.max(1);
        self
    }

    /// Virtual CPUs of the guests that run scenarios.
    pub fn vcpus(&self) -> u32 {
        self.vcpus
    }

    /// Guests booted so far to run scenario points (a boot that stalled and was made
    /// again counts twice).
    pub fn boots(&self) -> usize {
        self.boots.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The bzImage of `variant`, building it if needed (once per `Lab`). `who` names the
    /// caller, so that later callers of a failed build know where its error was shown.
    pub fn kernel(&self, variant: &str, who: &str) -> Result<PathBuf> {
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(result) = built.get(variant) {
            return result.clone().map_err(Error::Other);
        }
        let builder = Builder::new(&self.kernels, &self.cache, self.progress);
        let result = self.kernels.variant(variant).and_then(|v| builder.build(v)).map(|b| b.bzimage);
        let stored = match &result {
            Ok(path) => Ok(path.clone()),
            Err(e) => Err(format!("build of `{variant}` failed; its error is shown with {who}:\n{}", tail(&e.to_string(), 6))),
        };
        built.insert(variant.to_string(), stored);
        result
    }

    /// The prepared disk image for `scenario`, making it (with the base kernel) if needed.
    ///
    /// An image is prepared in `images/KEY.partial/` and renamed to `images/KEY/` once the
    /// guest has written it and it is on disk: a prepared image appears whole or not at
    /// all, and one cut short (a full disk, a kill) is made again by the next run.
    pub fn image(&self, scenario: &Scenario, who: &str) -> Result<PathBuf> {
        let _serial = self.images.lock().unwrap_or_else(|p| p.into_inner());
        let key = image_key(scenario);
        let images = self.cache.dir("images")?;
        let dir = images.join(&key);
        let image = dir.join("disk.img");
        let ready = dir.join("ready");
        let _lock = cache::lock(&self.cache.dir("locks")?.join(format!("image-{key}.lock")))?;
        if ready.is_file() && image.is_file() {
            return Ok(image);
        }
        let kernel = self.kernel("base", who)?;
        let during = || format!("preparing the disk image for {} ({})", scenario.name, scenario.path.display());
        let partial = images.join(format!("{key}.partial"));
        for stale in [&dir, &partial] {
            // An image radiff stopped preparing (before `.partial`, or in it).
            if stale.exists() {
                std::fs::remove_dir_all(stale).map_err(|e| Error::io(stale, e).during(during))?;
            }
        }
        std::fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e).during(during))?;
        // The guest writes the file and the file system's metadata: fail at once, not half
        // way, when the cache cannot hold even the files.
        let need = total_size(scenario);
        if let Some(free) = cache::free_bytes(&partial).filter(|&free| free < need) {
            return Err(Error::NoSpace {
                path: partial,
                during: Some(format!("{}: the image needs more than its {} MiB of files, {} MiB are free", during(), need >> 20, free >> 20)),
                source: std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
            });
        }
        let partial_image = partial.join("disk.img");
        (self.progress)(&format!(
            "preparing {} for {}: {} on {:?}, {} in {} direct writes",
            image.display(),
            scenario.name,
            scenario.fs.name(),
            scenario.device.kind,
            match scenario.other_files.len() {
                0 => format!("a {} file", crate::scenario::Size(scenario.file_size)),
                n => format!("{} files of {} in all", n + 1, crate::scenario::Size(total_size(scenario))),
            },
            crate::scenario::Size(scenario.write_size)
        ));
        let file = std::fs::File::create(&partial_image).map_err(|e| Error::io(&partial_image, e).during(during))?;
        file.set_len(scenario.device.size).map_err(|e| Error::io(&partial_image, e).during(during))?;
        drop(file);
        let spec = GuestSpec {
            device: scenario.device.kind,
            disk: None,
            fs: scenario.fs,
            file_size: scenario.file_size,
            task: Task::Prepare { mkfs_args: Vec::new(), write_size: scenario.write_size, extent_size: scenario.extent_size },
            other_files: guest_files(scenario),
        };
        let disk = disk(scenario, &partial_image);
        let timeout = Duration::from_secs(300 + 300 * (total_size(scenario) >> 30));
        // While the guest works: its step and how much of the image it has written so far
        // (the blocks the image file has, of the files' bytes).
        let preparing = Instant::now();
        let task = crate::progress::Task::start(format!("preparing the image for {}", scenario.name));
        let mut tick = |step: &str| task.bytes(step, allocated(&partial_image).min(need), Some(need));
        self.boot_guest(&partial, &kernel, disk, false, &spec, memory_mb(scenario), timeout, &mut tick).map_err(|e| no_space(e, &partial, scenario.write_size.max(1 << 20) + (1 << 20), during))?;
        drop(task);
        let write_ready = || -> std::io::Result<()> {
            std::fs::File::open(&partial_image)?.sync_all()?;
            std::fs::write(partial.join("ready"), b"")
        };
        write_ready().map_err(|e| Error::io(&partial, e).during(during))?;
        std::fs::rename(&partial, &dir).map_err(|e| Error::io(&dir, e).during(during))?;
        (self.progress)(&format!(
            "prepared {} in {:.0} s: {:.1} MiB written on a {} device",
            image.display(),
            preparing.elapsed().as_secs_f64(),
            allocated(&image) as f64 / (1 << 20) as f64,
            crate::scenario::Size(scenario.device.size)
        ));
        Ok(image)
    }

    /// Runs `point` of `scenario` on `variant` and parses the trace.
    pub fn run(&self, scenario: &Scenario, point: &Point, variant: &str, who: &str) -> Result<RunOutput> {
        let kernel = self.kernel(variant, who)?;
        self.run_kernel(scenario, point, variant, &kernel)
    }

    /// Runs `point` of `scenario` on the bzImage `kernel`, keeping the run's folder under
    /// `runs/SCENARIO/NAME/`: a batch of one.
    pub fn run_kernel(&self, scenario: &Scenario, point: &Point, name: &str, kernel: &Path) -> Result<RunOutput> {
        self.run_batch(kernel, &[Job { scenario, point, name }]).pop().expect("one result per job")
    }

    /// Runs every job on the bzImage `kernel`, [`BATCH_POINTS`] to a boot: one guest runs
    /// them one after another, each on a disk of its own (its image attached from the
    /// start, `snapshot=on`), with caches dropped, its file system mounted afresh, its own
    /// trace and its own run folder (`runs/SCENARIO/NAME[/POINT]/`, as a run alone has it;
    /// `console.log` there is the whole boot's). A point that fails (a guest error, a
    /// panic, its scenario's timeout, counted from when it started) gets the error; the
    /// points after it run in a fresh boot. Results come back in the jobs' order.
    pub fn run_batch(&self, kernel: &Path, jobs: &[Job]) -> Vec<Result<RunOutput>> {
        self.run_batch_announced(kernel, jobs, &mut |_| {})
    }

    /// [`Lab::run_batch`], calling `started(i)` once for each job `i`: as the guest starts
    /// it (seen within a second of its start), or, for a job the guest never started (its
    /// disk image or its boot failed), as it settles. `radiff report` prints its progress
    /// line for each run there.
    pub fn run_batch_announced(&self, kernel: &Path, jobs: &[Job], started: &mut dyn FnMut(usize)) -> Vec<Result<RunOutput>> {
        let mut announced = vec![false; jobs.len()];
        let mut once = |i: usize| {
            if !std::mem::replace(&mut announced[i], true) {
                started(i);
            }
        };
        let mut results: Vec<Option<Result<RunOutput>>> = jobs.iter().map(|_| None).collect();
        let mut pending = Vec::new();
        for (i, job) in jobs.iter().enumerate() {
            match self.image(job.scenario, job.name) {
                Ok(image) => pending.push((i, image)),
                Err(e) => {
                    once(i);
                    results[i] = Some(Err(e));
                }
            }
        }
        let costs: Vec<f64> = pending.iter().map(|(i, _)| point_cost(jobs[*i].scenario)).collect();
        for bin in balanced_batches(&costs, BATCH_POINTS) {
            let mut rest: Vec<(usize, PathBuf)> = bin.iter().map(|k| pending[*k].clone()).collect();
            while !rest.is_empty() {
                // Every boot settles at least its first point, so this ends.
                for (i, result) in self.boot_batch(kernel, jobs, &rest, &mut once) {
                    once(i);
                    results[i] = Some(result);
                }
                rest.retain(|(i, _)| results[*i].is_none());
            }
        }
        results.into_iter().map(|r| r.expect("every job settled")).collect()
    }

    /// One boot of a batch: runs `points` (job index, image) in order and settles those it
    /// reached: every point that finished, and the one that failed (or, if the boot never
    /// reached a point, the first). The rest are left for the next boot. `started` is
    /// called with a point's job index when the guest is seen to start it.
    fn boot_batch(&self, kernel: &Path, jobs: &[Job], points: &[(usize, PathBuf)], started: &mut dyn FnMut(usize)) -> Vec<(usize, Result<RunOutput>)> {
        let first = points[0].0;
        match self.boot_batch_inner(kernel, jobs, points, started) {
            Ok(settled) => settled,
            Err(e) => vec![(first, Err(e))],
        }
    }

    fn boot_batch_inner(&self, kernel: &Path, jobs: &[Job], points: &[(usize, PathBuf)], started_point: &mut dyn FnMut(usize)) -> Result<Vec<(usize, Result<RunOutput>)>> {
        static BATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let runs = self.cache.dir("runs")?;
        // Each point's run folder, locked (in one order, once each) for the whole boot.
        let finals: Vec<PathBuf> = points.iter().map(|(i, _)| run_dir(&runs, &jobs[*i])).collect();
        let mut lock_paths: Vec<PathBuf> = finals
            .iter()
            .map(|d| Ok(self.cache.dir("locks")?.join(format!("run-{}.lock", cache::key([d.to_string_lossy().as_bytes()])))))
            .collect::<Result<_>>()?;
        lock_paths.sort();
        lock_paths.dedup();
        let _locks = lock_paths.iter().map(|p| cache::lock(p)).collect::<Result<Vec<_>>>()?;
        remove_stale_batches(&runs.join("_batch"));
        let batch = runs.join("_batch").join(format!("{}-{}", std::process::id(), BATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        if batch.exists() {
            std::fs::remove_dir_all(&batch).map_err(|e| Error::io(&batch, e))?;
        }
        let mut disks = Vec::new();
        for (n, (i, image)) in points.iter().enumerate() {
            let job = &jobs[*i];
            let dir = batch.join(n.to_string());
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            let spec = run_spec(job.scenario, job.point, Some(vm::disk_pci_address(n)));
            cache::write_atomic(&dir.join("spec.json"), &serde_json::to_vec_pretty(&spec).map_err(|e| Error::Other(e.to_string()))?)?;
            disks.push(disk(job.scenario, image));
        }
        let timeouts: Vec<Duration> = points.iter().map(|(i, _)| jobs[*i].scenario.timeout).collect();
        let boot = Boot {
            kernel: kernel.to_path_buf(),
            disks,
            snapshot: true,
            shared: batch.clone(),
            command: format!("{} --batch {}", self.guest.display(), batch.display()),
            cpus: self.vcpus,
            memory_mb: points.iter().map(|(i, _)| memory_mb(jobs[*i].scenario)).max().unwrap_or(2048),
            timeout: BOOT_ALLOWANCE + timeouts.iter().sum::<Duration>(),
        };
        // The watchdog: each point has its scenario's timeout from when it starts; a guest
        // that starts no point within BOOT_ALLOWANCE stalled at boot and boots again.
        let started = Instant::now();
        let mut attempt = 1;
        let (booted, watch) = loop {
            let mut watch = Watch::new(points.len());
            self.boots.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let booted = vm::boot_watched(&self.cache, &boot, || {
                let overran = watch.overran(&batch, &timeouts);
                for (n, (i, _)) in points.iter().enumerate() {
                    if watch.starts[n].is_some() {
                        started_point(*i);
                    }
                }
                overran
            });
            // A kernel that panicked before the first point is the boot's trouble, not a
            // point's: booted again, as a boot that stalled.
            let boot_panic = !batch.join("0").join(guest::POINT_STARTED).exists() && kernel_panic(&std::fs::read_to_string(batch.join("console.log")).unwrap_or_default()).is_some();
            if (watch.stalled || boot_panic) && attempt < STALL_ATTEMPTS {
                let kind = if boot_panic { "boot-panic" } else { "boot-stall" };
                let kept = batch.join(format!("console.{kind}-{attempt}.log"));
                let _ = std::fs::rename(batch.join("console.log"), &kept);
                let what = if boot_panic { "the kernel panicked before the guest started its first point".to_string() } else { format!("the guest started no point within {} s (a boot that stalled)", BOOT_ALLOWANCE.as_secs()) };
                crate::progress::progress(&format!("{what}; its log is {}; booting again ({} of {STALL_ATTEMPTS})", kept.display(), attempt + 1));
                attempt += 1;
                continue;
            }
            break (booted, watch);
        };
        let boot_wall = started.elapsed();
        let console_path = batch.join("console.log");
        let console = std::fs::read_to_string(&console_path).unwrap_or_default();
        let point_walls = watch.point_walls(Instant::now());
        let overhead = boot_wall.saturating_sub(point_walls.iter().flatten().sum()) / points.len() as u32;
        let (accel, exit_code, mut boot_error) = match booted {
            Ok(b) => (b.accel, b.exit_code, None),
            Err(e) => (Accel::Tcg, None, Some(e)),
        };
        let mut settled = Vec::new();
        for (n, (i, _)) in points.iter().enumerate() {
            let job = &jobs[*i];
            let from = batch.join(n.to_string());
            let status: Option<Status> = std::fs::read_to_string(from.join("status.json")).ok().and_then(|t| serde_json::from_str(&t).ok());
            let began = from.join(guest::POINT_STARTED).exists();
            if !began && n > 0 {
                break; // the next boot's
            }
            // The point's folder is finished where the guest wrote it (the boot's console
            // and command joined, the trace parsed and saved), then renamed to its run
            // folder: a run folder appears whole or not at all, never half-written.
            let dir = &finals[n];
            // The boot's console and command, and the consoles of boots that stalled or
            // crashed before it (`console.boot-stall-1.log`, `console.qemu-crash-1.log`).
            let kept = std::fs::read_dir(&batch).into_iter().flatten().flatten().map(|e| e.file_name().to_string_lossy().into_owned());
            for name in kept.filter(|n| n == "vng.cmd" || (n.starts_with("console.") && n.ends_with(".log"))) {
                let _ = std::fs::copy(batch.join(&name), from.join(&name));
            }
            let _ = std::fs::remove_file(from.join(guest::POINT_STARTED));
            if status.as_ref().is_some_and(|s| s.ok) {
                let wall = point_walls[n].unwrap_or_default() + overhead;
                let result = self.finish_run(job.scenario, &from, dir, accel, wall, points.len(), boot_wall);
                match publish(&from, dir, &batch.join(format!("replaced-{n}"))) {
                    Ok(()) => settled.push((*i, result)),
                    Err(e) => settled.push((*i, Err(e))),
                }
                continue;
            }
            // This point failed (or the boot did before it): it gets the error, the rest wait.
            let slice = console_of_point(&console, n + 1);
            let step = status.as_ref().map_or("(the guest program never started)".to_string(), |s| s.step.clone());
            let error = if watch.overran_point == Some(n) {
                Error::VmTimeout {
                    after: timeouts[n],
                    dir: dir.clone(),
                    last_step: Some(step),
                    timeout_source: Some(timeout_source(job.scenario)),
                    console_tail: tail(&slice, 25),
                }
            } else if let Some(panic) = kernel_panic(&slice) {
                // The trace the guest never saved, as the kernel dumped it (ftrace_dump_on_oops).
                if let Some(dump) = ftrace_dump(&slice).filter(|_| !from.join("trace.txt").exists()) {
                    let _ = std::fs::write(from.join("trace.txt"), dump);
                }
                Error::Guest { dir: dir.clone(), message: format!("the kernel panicked at step `{step}`:\n{panic}"), console_tail: tail(&slice, 10) }
            } else if let Some(Status { error: Some(e), .. }) = &status {
                Error::Guest { dir: dir.clone(), message: format!("at step `{step}`: {e}"), console_tail: tail(&slice, 20) }
            } else if watch.stalled {
                Error::Guest {
                    dir: dir.clone(),
                    message: format!("the guest started no point within {} s, in {STALL_ATTEMPTS} boots (boots that stalled)", BOOT_ALLOWANCE.as_secs()),
                    console_tail: tail(&slice, 20),
                }
            } else {
                match boot_error.take() {
                    Some(Error::VmTimeout { after, console_tail, .. }) => {
                        Error::VmTimeout { after, dir: dir.clone(), last_step: Some(step), timeout_source: None, console_tail }
                    }
                    Some(e) if !began => e,
                    Some(e) => Error::Guest { dir: dir.clone(), message: format!("at step `{step}` the VM failed: {e}"), console_tail: tail(&slice, 20) },
                    None => Error::Guest { dir: dir.clone(), message: format!("the guest stopped at step `{step}` (exit code {exit_code:?})"), console_tail: tail(&slice, 20) },
                }
            };
            // A point that met a full file system (its folder, or the image QEMU writes) is
            // NoSpace, naming the folder.
            let error = no_space(error, dir, 1 << 20, || format!("running {} on {}", job.scenario.name, job.name));
            // What the failed point left (console, partial trace) is kept in its run folder.
            match publish(&from, dir, &batch.join(format!("replaced-{n}"))) {
                Ok(()) => settled.push((*i, Err(error))),
                Err(e) => settled.push((*i, Err(Error::Other(format!("{error}\n(and its folder could not be kept: {e}; it is {})", from.display()))))),
            }
            break;
        }
        let _ = std::fs::remove_dir_all(&batch);
        Ok(settled)
    }

    /// Reads a finished point's results in `staged` (the guest's folder, renamed to `dir`
    /// afterwards): env.json, the trace (lost events are an error), trace.json written
    /// there. Errors and the output name the files as they will be in `dir`.
    #[allow(clippy::too_many_arguments)]
    fn finish_run(&self, scenario: &Scenario, staged: &Path, dir: &Path, accel: Accel, wall: Duration, boot_points: usize, boot_wall: Duration) -> Result<RunOutput> {
        let dir = dir.to_path_buf();
        let read = |name: &str| std::fs::read_to_string(staged.join(name)).map_err(|e| Error::io(&dir.join(name), e));
        let env_path = dir.join("env.json");
        let env: GuestEnv = serde_json::from_str(&read("env.json")?).map_err(|e| Error::Json { file: env_path.clone(), source: e })?;
        let trace_path = dir.join("trace.txt");
        let text = read("trace.txt")?;
        let filter = Filter::new(&env.dev, env.inos()).ok_or_else(|| Error::Trace { file: env_path.clone(), line: 0, message: format!("bad device number `{}`", env.dev) })?;
        let capture = match ftrace::parse(&text, &filter) {
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
        let json = serde_json::to_vec_pretty(&capture).map_err(|e| Error::Json { file: dir.join("trace.json"), source: e })?;
        cache::write_atomic(&staged.join("trace.json"), &json).map_err(|e| e.during(|| format!("saving the trace of {}", scenario.name)))?;
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

    /// Boots `kernel` with the guest program on `spec`; a guest that did not report success
    /// is an error that keeps everything in `dir`. `tick` is given the guest's step once a
    /// second while it runs.
    #[allow(clippy::too_many_arguments)]
    fn boot_guest(&self, dir: &Path, kernel: &Path, disk: Disk, snapshot: bool, spec: &GuestSpec, memory_mb: u64, timeout: Duration, tick: &mut dyn FnMut(&str)) -> Result<Accel> {
        let spec_path = dir.join("spec.json");
        cache::write_atomic(&spec_path, &serde_json::to_vec_pretty(spec).map_err(|e| Error::Json { file: spec_path.clone(), source: e })?)?;
        let _ = std::fs::remove_file(dir.join("status.json"));
        let boot = Boot {
            kernel: kernel.to_path_buf(),
            disks: vec![disk],
            snapshot,
            shared: dir.to_path_buf(),
            command: format!("{} {}", self.guest.display(), dir.display()),
            cpus: if snapshot { self.vcpus } else { PREPARE_CPUS },
            memory_mb,
            timeout,
        };
        let status_path = dir.join("status.json");
        let booted = vm::boot_watched(&self.cache, &boot, || {
            let status = std::fs::read_to_string(&status_path).ok().and_then(|t| serde_json::from_str::<Status>(&t).ok());
            tick(status.as_ref().map_or("booting the kernel", |s| s.step.as_str()));
            false
        })?;
        let status: Status = std::fs::read_to_string(&status_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Status { step: "(the guest program never started)".into(), ok: false, error: None });
        if !status.ok {
            let message = match status.error {
                Some(e) => format!("at step `{}`: {e}", status.step),
                None => format!("the guest stopped at step `{}` (exit code {:?})", status.step, booted.exit_code),
            };
            return Err(Error::Guest { dir: dir.to_path_buf(), message, console_tail: crate::process::log_tail(&booted.console, 20) });
        }
        Ok(booted.accel)
    }
}

/// A guest that failed (or could not report) where the folder it writes to, or the image
/// QEMU writes, has less than `room` bytes left: the guest's writes to the folder, or
/// QEMU's to the image (`werror=report`: an I/O error in the guest instead of a VM paused
/// for ever), met a full file system.
fn no_space(err: Error, dir: &Path, room: u64, during: impl FnOnce() -> String) -> Error {
    let said = err.to_string().contains("No space left on device");
    match err {
        Error::Guest { .. } | Error::VmTimeout { .. } if said || cache::free_bytes(dir).is_some_and(|free| free < room) => Error::NoSpace {
            path: dir.to_path_buf(),
            during: Some(format!("{} ({})", during(), err.to_string().lines().next().unwrap_or_default())),
            source: std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
        },
        other => other.during(during),
    }
}

/// Puts the finished folder `staged` in place as the run folder `dir`, replacing an earlier
/// run's: the old folder is first moved aside to `aside` (in the batch's folder, removed
/// with it), so `dir` is always a whole run's folder or absent, never half of one.
fn publish(staged: &Path, dir: &Path, aside: &Path) -> Result<()> {
    let parent = dir.parent().expect("a run folder has a parent");
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    if dir.exists() {
        std::fs::rename(dir, aside).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::rename(staged, dir).map_err(|e| Error::io(dir, e))
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

/// A rough guess of a point's time in a TCG guest, seconds: its mount and trace dump
/// (about a second) and the pages its reads, readahead calls and touches ask for (about
/// 40000 a second: the headline's 131072 pages take about 3 s). Only for putting the
/// heavy points of a test run into different boots and starting them first.
pub fn point_cost(scenario: &Scenario) -> f64 {
    let pages: u64 = pattern::expand(&scenario.steps, scenario.file_size)
        .iter()
        .map(|op| match op {
            radiff_model::Op::Read { len, .. } | radiff_model::Op::Readahead { len, .. } => len.div_ceil(4096),
            _ => 1,
        })
        .sum();
    1.0 + pages as f64 / 40_000.0
}

/// What a boot costs besides its points (booting and rebooting, one vCPU under TCG), in
/// the units of [`point_cost`].
pub const BOOT_COST: f64 = 8.0;

/// Points of the given costs split into the fewest boots of at most `max` points, their
/// costs as even as can be (the costliest first, each to the boot with the least so
/// far): each boot's point indices, in their original order.
pub fn balanced_batches(costs: &[f64], max: usize) -> Vec<Vec<usize>> {
    let count = costs.len().div_ceil(max.max(1));
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|a, b| costs[*b].total_cmp(&costs[*a]).then(a.cmp(b)));
    let mut bins: Vec<(f64, Vec<usize>)> = vec![(0.0, Vec::new()); count];
    for i in order {
        let bin = bins.iter_mut().filter(|b| b.1.len() < max).min_by(|x, y| x.0.total_cmp(&y.0)).expect("room for every point");
        bin.0 += costs[i];
        bin.1.push(i);
    }
    bins.into_iter().map(|(_, mut b)| {
        b.sort();
        b
    }).collect()
}

/// `n` items cut into the fewest batches of at most `max`, as even as can be (their
/// index ranges, in order): 28 points of 8 at most are 4 batches of 7.
pub fn batches(n: usize, max: usize) -> Vec<std::ops::Range<usize>> {
    let count = n.div_ceil(max.max(1));
    (0..count).map(|k| (n * k / count)..(n * (k + 1) / count)).collect()
}

/// A run's folder: `runs/SCENARIO/NAME[/POINT]/`.
fn run_dir(runs: &Path, job: &Job) -> PathBuf {
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
        },
        other_files: guest_files(scenario),
    }
}

/// Where a scenario's timeout comes from, for an error that names it.
fn timeout_source(scenario: &Scenario) -> String {
    format!("{} s, the timeout of {} (`timeout_s`; default 240 s plus 120 s per GiB of file)", scenario.timeout.as_secs(), scenario.path.display())
}

/// Which point of a batch runs and whether it overran its timeout, asked once a second
/// while the VM runs: a point starts when its folder gets [`guest::POINT_STARTED`].
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

/// Boots of one batch when the guest stalls before its first point.
const STALL_ATTEMPTS: u32 = 3;

impl Watch {
    fn new(points: usize) -> Watch {
        Watch { points, boot_started: Instant::now(), current: None, starts: vec![None; points], overran_point: None, stalled: false, task: crate::progress::Task::start("VM") }
    }

    /// What the boot is doing: `point N of M: STEP`, the step as the running point's guest
    /// last wrote it to its `status.json`.
    fn status(&self, batch: &Path) -> String {
        let Some((n, _)) = self.current else { return "booting the kernel (no point started yet)".into() };
        let dir = batch.join(n.to_string());
        let step = std::fs::read_to_string(dir.join("status.json")).ok().and_then(|t| serde_json::from_str::<Status>(&t).ok()).map_or_else(|| "starting".to_string(), |s| s.step);
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
            if batch.join(n.to_string()).join(guest::POINT_STARTED).exists() {
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

/// The console lines of the `n`-th point of a boot (1-based): from the guest's line
/// `radiff-guest: point N of M begins` to the next point's (the whole console if there is
/// no such line: the boot did not get that far).
pub fn console_of_point(console: &str, n: usize) -> String {
    let begins = |k: usize| console.find(&format!("radiff-guest: point {k} of "));
    let Some(start) = begins(n) else { return console.to_string() };
    let start = console[..start].rfind('\n').map_or(0, |p| p + 1);
    let end = begins(n + 1).map_or(console.len(), |e| console[..e].rfind('\n').map_or(e, |p| p + 1));
    console[start..end.max(start)].to_string()
}

/// The kernel's report of an oops or panic in a console, if it made one: the lines from
/// the first `kernel BUG at`, `BUG: `, `Oops: `, `general protection fault` or `Kernel
/// panic` to the end of its call trace (`</TASK>` or `---[ end trace`; at most 40), then
/// the `Kernel panic - not syncing` line. The trace buffer's dump is left out.
pub fn kernel_panic(console: &str) -> Option<String> {
    let lines: Vec<&str> = console.lines().map(|l| l.trim_end_matches('\r')).collect();
    let starts = ["kernel BUG at", "BUG: ", "Oops: ", "general protection fault", "Kernel panic - not syncing"];
    let first = lines.iter().position(|l| starts.iter().any(|s| l.contains(s)))?;
    let report_end = lines[first..]
        .iter()
        .position(|l| l.contains("</TASK>") || l.contains("---[ end trace") || l.contains("Dumping ftrace buffer:") || l.contains("Kernel panic - not syncing"))
        .map_or(lines.len() - 1, |k| first + k);
    let mut quoted: Vec<&str> = lines[first..=report_end.min(first + 39)].iter().copied().filter(|l| !l.contains("Dumping ftrace buffer:")).collect();
    if let Some(panic) = lines[first..].iter().find(|l| l.contains("Kernel panic - not syncing")) {
        if quoted.last() != Some(panic) {
            quoted.push(panic);
        }
    }
    Some(quoted.join("\n"))
}

/// The trace buffer as the kernel dumped it on the console at an oops
/// (`ftrace_dump_on_oops`: the lines between `Dumping ftrace buffer:` and the closing
/// dashes), without the console's timestamps: the partial trace of a run that panicked.
pub fn ftrace_dump(console: &str) -> Option<String> {
    let strip = |l: &str| -> String {
        let l = l.trim_end_matches('\r');
        match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
            Some((_, rest)) => rest.to_string(),
            None => l.to_string(),
        }
    };
    let mut lines = console.lines().map(strip).skip_while(|l| !l.contains("Dumping ftrace buffer:")).skip(1);
    let mut out = String::from("# the trace buffer as the kernel dumped it on the console at the oops (ftrace_dump_on_oops)\n");
    let first = lines.next()?;
    if !first.starts_with("----") {
        out.push_str(&first);
        out.push('\n');
    }
    for l in lines {
        if l.starts_with("----") {
            break;
        }
        out.push_str(&l);
        out.push('\n');
    }
    Some(out)
}

/// How to give a scenario's trace more room.
fn lost_fix(scenario: &Scenario, suggest_kb: u64) -> String {
    format!(
        "raise `trace_buffer_kb` in {} (now {} KiB per CPU; try `trace_buffer_kb: {suggest_kb}`)",
        scenario.path.display(),
        scenario.trace_buffer_kb
    )
}

/// A run folder's name for a variant or matrix point: vng refuses some characters in
/// `--rwdir` (`~`) and reads `=` as GUEST=HOST, so anything but letters, digits, `.`, `_`
/// and `-` becomes `-`.
fn folder_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' }).collect()
}

fn disk(scenario: &Scenario, image: &Path) -> Disk {
    match scenario.device.kind {
        DeviceKind::Nvme => Disk::Nvme {
            image: image.to_path_buf(),
            mdts: scenario.device.mdts(),
            logical_block_size: scenario.device.logical_block_size,
            opt_io_size: scenario.device.optimal_io_size,
            min_io_size: None,
        },
        DeviceKind::Ufs => Disk::Ufs { image: image.to_path_buf() },
    }
}

/// Enough for the whole file in the page cache plus the guest and the trace buffer, so
/// that reclaim never changes what readahead does.
fn memory_mb(scenario: &Scenario) -> u64 {
    let trace_mb = scenario.trace_buffer_kb * 2 / 1024;
    ((total_size(scenario) >> 20) + trace_mb + 1024).max(2048)
}

/// Bytes a file takes on disk (its blocks: what was written of a sparse image so far).
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map_or(0, |m| m.blocks() * 512)
}

/// Bytes of all the scenario's files.
fn total_size(scenario: &Scenario) -> u64 {
    scenario.file_sizes().iter().sum()
}

/// The files after the first, as the guest writes them.
fn guest_files(scenario: &Scenario) -> Vec<crate::wire::GuestFile> {
    scenario.other_files.iter().map(|f| crate::wire::GuestFile { size: f.size, write_size: f.write_size, extent_size: f.extent_size }).collect()
}

/// Images depend on the device's shape, the file system and the file's layout, not on
/// the queue settings or the reads.
/// Whether the disk image `s` needs is already prepared in `cache` (then using it costs
/// nothing); [`Lab::image`] makes it.
pub fn image_ready(cache: &Cache, s: &Scenario) -> bool {
    cache.root.join("images").join(image_key(s)).join("ready").is_file()
}

pub fn image_key(s: &Scenario) -> String {
    let parts = [
        IMAGE_RECIPE.to_string(),
        format!("{:?}", s.device.kind),
        s.device.size.to_string(),
        format!("{:?}", s.device.logical_block_size),
        s.fs.name().to_string(),
        s.file_size.to_string(),
        s.write_size.to_string(),
        format!("{:?}", s.extent_size),
    ];
    // More files: their sizes and layouts too (a one-file scenario's key is unchanged).
    let more = s.other_files.iter().map(|f| format!("{}/{}/{:?}", f.size, f.write_size, f.extent_size));
    let parts: Vec<String> = parts.into_iter().chain(more).collect();
    format!("{}-{}-{}", s.fs.name(), format!("{:?}", s.device.kind).to_lowercase(), cache::key(parts))
}

/// Where the guest program is: `$RADIFF_GUEST`, else next to the running executable
/// (or its parent, for test binaries in `target/*/deps/`).
pub fn guest_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("RADIFF_GUEST") {
        return Ok(path.into());
    }
    let exe = std::env::current_exe().map_err(|e| Error::Other(format!("cannot find the running executable: {e}")))?;
    let mut dir = exe.parent();
    while let Some(d) = dir {
        let candidate = d.join("radiff-guest");
        if candidate.is_file() {
            return Ok(candidate);
        }
        if d.file_name().is_some_and(|n| n == "target") {
            break;
        }
        dir = d.parent();
    }
    Err(Error::Other(format!("radiff-guest not found near {}: run `cargo build --bins` (or set RADIFF_GUEST)", exe.display())))
}

/// What the model is given for a run: the scenario's reads on the file the guest measured
/// (its size and extents) behind the queue the guest measured, with the fault path's
/// settings the guest read back (`vm`), with the folios in the
/// physical pages the kernel put them in (`pfns`, from the trace; empty if unknown).
pub fn model_input(scenario: &Scenario, env: &GuestEnv, pfns: &[u64]) -> radiff_model::Input {
    radiff_model::Input {
        folio_pfns: pfns.to_vec(),
        // The guest reports the mappings' addresses apart from the vm settings it read back.
        vm: radiff_model::VmSettings { mmap_addrs: env.map_addresses.clone(), ..env.vm.clone() },
        fs: scenario.fs,
        file_size: env.file_size,
        extents: env.extents.clone(),
        queue: env.queue.clone(),
        mapping: radiff_model::MappingLimits::for_fs(scenario.fs),
        ops: pattern::expand_files(&scenario.steps, &scenario.file_sizes()),
        other_files: env.other_files.iter().map(|f| radiff_model::FileInput { file_size: f.file_size, extents: f.extents.clone() }).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_run_folder_replaces_the_old_one_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let (staged, dir, aside) = (tmp.path().join("batch/0"), tmp.path().join("runs/s/base"), tmp.path().join("batch/replaced-0"));
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
        let names = [format!("{gone}-0"), format!("{}-3", child.id()), format!("{}-1", std::process::id()), "notes".to_string()];
        for n in &names {
            std::fs::create_dir_all(tmp.path().join(n).join("0")).unwrap();
        }
        remove_stale_batches(tmp.path());
        let left: Vec<bool> = names.iter().map(|n| tmp.path().join(n).exists()).collect();
        child.kill().unwrap();
        let _ = child.wait();
        assert_eq!(left, [false, true, true, true], "{names:?}");
    }

    #[test]
    fn heavy_points_go_to_different_boots() {
        // 9 points, two heavy: two boots, one heavy point each.
        let mut costs = vec![1.0; 9];
        costs[2] = 50.0;
        costs[3] = 40.0;
        let b = balanced_batches(&costs, 8);
        assert_eq!(b.len(), 2);
        assert!(b.iter().all(|bin| bin.contains(&2) != bin.contains(&3)), "{b:?}");
        assert_eq!(b.iter().map(Vec::len).sum::<usize>(), 9);
        assert!(b.iter().all(|bin| bin.windows(2).all(|w| w[0] < w[1])), "in the points' order: {b:?}");
        assert_eq!(balanced_batches(&[1.0; 8], 8), vec![(0..8).collect::<Vec<_>>()]);
        assert!(balanced_batches(&[], 8).is_empty());
        for n in 1..30 {
            let b = balanced_batches(&vec![1.0; n], 8);
            assert_eq!(b.len(), n.div_ceil(8));
            assert!(b.iter().all(|bin| !bin.is_empty() && bin.len() <= 8));
        }
    }

    #[test]
    fn points_are_cut_into_the_fewest_even_batches() {
        assert_eq!(batches(28, 8), vec![0..7, 7..14, 14..21, 21..28]);
        assert_eq!(batches(8, 8), vec![0..8]);
        assert_eq!(batches(9, 8), vec![0..4, 4..9]);
        assert_eq!(batches(1, 8), vec![0..1]);
        assert!(batches(0, 8).is_empty());
        for n in 1..40 {
            let b = batches(n, 8);
            assert_eq!(b.iter().map(|r| r.len()).sum::<usize>(), n);
            assert!(b.iter().all(|r| (1..=8).contains(&r.len())), "{n}: {b:?}");
            assert_eq!(b.len(), n.div_ceil(8));
        }
    }

    /// A real console (fault-test kernel, a BUG() in page_cache_sync_ra(), oops=panic,
    /// ftrace_dump_on_oops), cut short.
    const PANIC: &str = "[    3.4] radiff-guest: point 1 of 2 begins: /r/_batch/1-0/0
[    3.5] XFS (nvme0n1): Ending clean mount
[    3.6] radiff-guest: point 1 of 2 ended with exit code 0 after 0.8 s
[    4.1] radiff-guest: point 2 of 2 begins: /r/_batch/1-0/1
[    4.9] ------------[ cut here ]------------
[    4.9] kernel BUG at mm/readahead.c:594!
[    4.9] Oops: invalid opcode: 0000 [#1] SMP
[    4.9] RIP: 0010:0xffffffff810faae8
[    4.9] Call Trace:
[    4.9]  <TASK>
[    4.9]  ? 0xffffffff810f21b3
[    4.9]  </TASK>
[    4.9] Dumping ftrace buffer:
[    4.9] ---------------------------------
[    4.9] radiff-g-80        0..... 46306us : page_cache_sync_ra: dev=259:1 ino=83 index=1 req_count=1
[    4.9] radiff-g-80        0..... 47737us : page_cache_sync_ra: dev=259:1 ino=83 index=1000 req_count=3
[    4.9] ---------------------------------
[    4.9] ---[ end trace 0000000000000000 ]---
[    4.9] RIP: 0010:0xffffffff810faae8
[    4.9] Kernel panic - not syncing: Fatal exception
[    4.9] Dumping ftrace buffer:
[    4.9]    (ftrace buffer empty)
";

    #[test]
    fn a_points_console_runs_from_its_line_to_the_next_points() {
        let first = console_of_point(PANIC, 1);
        assert!(first.starts_with("[    3.4] radiff-guest: point 1 of 2 begins"));
        assert!(first.ends_with("exit code 0 after 0.8 s\n"), "{first}");
        let second = console_of_point(PANIC, 2);
        assert!(second.starts_with("[    4.1] radiff-guest: point 2 of 2 begins"));
        assert!(second.contains("Kernel panic"));
        assert!(!second.contains("point 1 of 2"));
        // A point the boot never reached: the whole console (it may say why).
        assert_eq!(console_of_point(PANIC, 3), PANIC);
        assert_eq!(console_of_point("no markers\n", 1), "no markers\n");
    }

    #[test]
    fn the_panic_is_quoted_without_the_trace_dump() {
        let quoted = kernel_panic(PANIC).expect("a panic");
        assert_eq!(
            quoted,
            "[    4.9] kernel BUG at mm/readahead.c:594!\n[    4.9] Oops: invalid opcode: 0000 [#1] SMP\n[    4.9] RIP: 0010:0xffffffff810faae8\n\
             [    4.9] Call Trace:\n[    4.9]  <TASK>\n[    4.9]  ? 0xffffffff810f21b3\n[    4.9]  </TASK>\n[    4.9] Kernel panic - not syncing: Fatal exception"
        );
        assert_eq!(kernel_panic(&console_of_point(PANIC, 1)), None);
        assert_eq!(kernel_panic("[ 1.0] sysrq: Resetting\n"), None);
        // A panic without an oops before it is quoted alone.
        assert_eq!(kernel_panic("[ 1.0] x\n[ 2.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n").as_deref(), Some("[ 2.0] Kernel panic - not syncing: VFS: Unable to mount root fs"));
    }

    #[test]
    fn the_dumped_trace_is_kept_without_console_stamps() {
        let dump = ftrace_dump(PANIC).expect("a dump");
        let lines: Vec<&str> = dump.lines().collect();
        assert_eq!(lines.len(), 3, "{dump}");
        assert!(lines[0].starts_with("# the trace buffer as the kernel dumped it"));
        assert_eq!(lines[2], "radiff-g-80        0..... 47737us : page_cache_sync_ra: dev=259:1 ino=83 index=1000 req_count=3");
        assert_eq!(ftrace_dump("[ 1.0] nothing\n"), None);
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
        std::fs::write(batch.join("0").join(guest::POINT_STARTED), b"").unwrap();
        assert!(!watch.overran(batch, &timeouts), "point 1 has an hour");
        assert_eq!(watch.current.map(|c| c.0), Some(0));
        std::fs::write(batch.join("1").join(guest::POINT_STARTED), b"").unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(!watch.overran(batch, &timeouts), "point 2 is seen to start now");
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(watch.status(batch), "point 2 of 2: starting", "no status.json yet");
        std::fs::write(batch.join("1").join("status.json"), r#"{"step": "running the access pattern", "ok": false, "error": null}"#).unwrap();
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
}
