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
use crate::guest::{DeviceKind, GuestEnv, GuestSpec, Status, Task};
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
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// The run's folder: spec.json, console.log, trace.txt, trace.json, env.json.
    pub dir: PathBuf,
    pub capture: Capture,
    pub env: GuestEnv,
    pub accel: Accel,
    /// Wall time of the boot (boot, mount, pattern, trace dump, reboot).
    pub wall: Duration,
}

impl Lab {
    pub fn new(cache: Cache, kernels: Kernels, guest: PathBuf, progress: &'static (dyn Fn(&str) + Sync)) -> Lab {
        Lab { cache, kernels, guest, progress, built: Mutex::new(HashMap::new()), images: Mutex::new(()), vcpus: VM_CPUS }
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
            fs: scenario.fs,
            file_size: scenario.file_size,
            task: Task::Prepare { mkfs_args: Vec::new(), write_size: scenario.write_size, extent_size: scenario.extent_size },
            other_files: guest_files(scenario),
        };
        let disk = disk(scenario, &partial_image);
        let timeout = Duration::from_secs(300 + 300 * (total_size(scenario) >> 30));
        self.boot_guest(&partial, &kernel, disk, false, &spec, memory_mb(scenario), timeout).map_err(|e| no_space(e, &partial, scenario.write_size.max(1 << 20) + (1 << 20), during))?;
        let write_ready = || -> std::io::Result<()> {
            std::fs::File::open(&partial_image)?.sync_all()?;
            std::fs::write(partial.join("ready"), b"")
        };
        write_ready().map_err(|e| Error::io(&partial, e).during(during))?;
        std::fs::rename(&partial, &dir).map_err(|e| Error::io(&dir, e).during(during))?;
        Ok(image)
    }

    /// Runs `point` of `scenario` on `variant` and parses the trace.
    pub fn run(&self, scenario: &Scenario, point: &Point, variant: &str, who: &str) -> Result<RunOutput> {
        let kernel = self.kernel(variant, who)?;
        self.run_kernel(scenario, point, variant, &kernel)
    }

    /// Runs `point` of `scenario` on the bzImage `kernel`, keeping the run's folder under
    /// `runs/SCENARIO/NAME/`.
    pub fn run_kernel(&self, scenario: &Scenario, point: &Point, name: &str, kernel: &Path) -> Result<RunOutput> {
        let image = self.image(scenario, name)?;
        let mut dir = self.cache.dir("runs")?.join(&scenario.name).join(folder_name(name));
        if let Some(label) = &point.label {
            dir = dir.join(folder_name(label));
        }
        let _lock = cache::lock(&self.cache.dir("locks")?.join(format!("run-{}.lock", cache::key([dir.to_string_lossy().as_bytes()]))))?;
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let spec = GuestSpec {
            device: scenario.device.kind,
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
        };
        let started = Instant::now();
        let during = || format!("running {} on {name}", scenario.name);
        let accel = self
            .boot_guest(&dir, kernel, disk(scenario, &image), true, &spec, memory_mb(scenario), scenario.timeout)
            .map_err(|e| no_space(e, &dir, 1 << 20, during))?;
        let wall = started.elapsed();
        let env_path = dir.join("env.json");
        let env: GuestEnv = serde_json::from_str(&cache::read(&env_path)?).map_err(|e| Error::Json { file: env_path.clone(), source: e })?;
        let trace_path = dir.join("trace.txt");
        let text = cache::read(&trace_path)?;
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
        cache::write_atomic(&dir.join("trace.json"), &json).map_err(|e| e.during(during))?;
        Ok(RunOutput { dir, capture, env, accel, wall })
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
            disk: None,
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
    /// is an error that keeps everything in `dir`.
    #[allow(clippy::too_many_arguments)]
    fn boot_guest(&self, dir: &Path, kernel: &Path, disk: Disk, snapshot: bool, spec: &GuestSpec, memory_mb: u64, timeout: Duration) -> Result<Accel> {
        let spec_path = dir.join("spec.json");
        cache::write_atomic(&spec_path, &serde_json::to_vec_pretty(spec).map_err(|e| Error::Json { file: spec_path.clone(), source: e })?)?;
        let _ = std::fs::remove_file(dir.join("status.json"));
        let boot = Boot {
            kernel: kernel.to_path_buf(),
            disk: Some(disk),
            snapshot,
            shared: dir.to_path_buf(),
            command: format!("{} {}", self.guest.display(), dir.display()),
            cpus: if snapshot { self.vcpus } else { PREPARE_CPUS },
            memory_mb,
            timeout,
        };
        let booted = vm::boot(&self.cache, &boot)?;
        let status_path = dir.join("status.json");
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

/// Bytes of all the scenario's files.
fn total_size(scenario: &Scenario) -> u64 {
    scenario.file_sizes().iter().sum()
}

/// The files after the first, as the guest writes them.
fn guest_files(scenario: &Scenario) -> Vec<crate::guest::GuestFile> {
    scenario.other_files.iter().map(|f| crate::guest::GuestFile { size: f.size, write_size: f.write_size, extent_size: f.extent_size }).collect()
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
