//! Disk images: each prepared once, by the base kernel, and published whole.
//!
//! Disk images are prepared once per (device, file system, file, layout), by the base
//! kernel, and every variant reads the same image through a throwaway overlay.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::boot::no_space;
use super::console::{read_status, STATUS_FILE};
use super::{disk, guest_files, memory_mb, total_size, Lab};
use crate::cache::{self, Cache};
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::vm::{self, Accel, Boot, Disk};
use crate::wire::{GuestSpec, Status, Task};

/// Virtual CPUs of the guest that prepares a disk image (mkfs and the writes), as every
/// cached image was made.
pub const PREPARE_CPUS: u32 = 2;

/// Bumped when images are laid out differently, so old ones are not reused.
const IMAGE_RECIPE: &str = "radiff-image-2";

impl Lab {
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
        // An image radiff stopped preparing (before `.partial`, or in it).
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e).during(during))?;
        }
        let partial = cache::begin_partial(&dir).map_err(|e| e.during(during))?;
        // The guest writes the file and the file system's metadata: fail at once, not half
        // way, when the cache cannot hold even the files.
        let need = total_size(scenario);
        if let Some(free) = cache::free_bytes(&partial).filter(|&free| free < need) {
            return Err(Error::NoSpace {
                path: partial,
                during: Some(format!(
                    "{}: the image needs more than its {} MiB of files, {} MiB are free",
                    during(),
                    need >> 20,
                    free >> 20
                )),
                source: std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
            });
        }
        let partial_image = partial.join("disk.img");
        crate::progress::progress(&format!(
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
            task: Task::Prepare {
                mkfs_args: mkfs_args(scenario),
                write_size: scenario.write_size,
                extent_size: scenario.extent_size,
            },
            other_files: guest_files(scenario),
        };
        let disk = disk(scenario, &partial_image, false);
        let timeout = Duration::from_secs(300 + 300 * (total_size(scenario) >> 30));
        // While the guest works: its step and how much of the image it has written so far
        // (the blocks the image file has, of the files' bytes).
        let preparing = Instant::now();
        let task = crate::progress::Task::start(format!("preparing the image for {}", scenario.name));
        let mut tick = |step: &str| task.bytes(step, allocated(&partial_image).min(need), Some(need));
        self.boot_guest(&partial, &kernel, disk, false, &spec, memory_mb(scenario), timeout, &mut tick)
            .map_err(|e| no_space(e, &partial, scenario.write_size.max(1 << 20) + (1 << 20), during))?;
        drop(task);
        std::fs::write(partial.join("ready"), b"").map_err(|e| Error::io(&partial, e).during(during))?;
        cache::put_in_place(&partial, &dir, &["disk.img"], None).map_err(|e| e.during(during))?;
        crate::progress::progress(&format!(
            "prepared {} in {:.0} s: {:.1} MiB written on a {} device",
            image.display(),
            preparing.elapsed().as_secs_f64(),
            allocated(&image) as f64 / (1 << 20) as f64,
            crate::scenario::Size(scenario.device.size)
        ));
        Ok(image)
    }

    /// Boots `kernel` with the guest program on `spec`; a guest that did not report success
    /// is an error that keeps everything in `dir`. `tick` is given the guest's step once a
    /// second while it runs.
    #[allow(
        clippy::too_many_arguments,
        reason = "a boot's inputs: folder, kernel, disks, limits and progress each come from the caller's own state"
    )]
    fn boot_guest(
        &self,
        dir: &Path,
        kernel: &Path,
        disk: Disk,
        snapshot: bool,
        spec: &GuestSpec,
        memory_mb: u64,
        timeout: Duration,
        tick: &mut dyn FnMut(&str),
    ) -> Result<Accel> {
        let spec_path = dir.join("spec.json");
        cache::write_atomic(
            &spec_path,
            &serde_json::to_vec_pretty(spec).map_err(|e| Error::Json { file: spec_path.clone(), source: e })?,
        )?;
        let _ = std::fs::remove_file(dir.join(STATUS_FILE));
        let boot = Boot {
            kernel: kernel.to_path_buf(),
            disks: vec![disk],
            snapshot,
            shared: dir.to_path_buf(),
            command: format!("{} {}", self.guest_program()?.display(), dir.display()),
            cpus: if snapshot { self.vcpus } else { PREPARE_CPUS },
            memory_mb,
            timeout,
        };
        let booted = vm::boot_watched(&self.cache, &boot, || {
            let status = read_status(dir);
            tick(status.as_ref().map_or("booting the kernel", |s| s.step.as_str()));
            false
        })?;
        let status: Status = read_status(dir).unwrap_or(Status {
            step: "(the guest program never started)".into(),
            ok: false,
            error: None,
        });
        if !status.ok {
            let message = match status.error {
                Some(e) => format!("at step `{}`: {e}", status.step),
                None => format!("the guest stopped at step `{}` (exit code {:?})", status.step, booted.exit_code),
            };
            return Err(Error::Guest {
                dir: dir.to_path_buf(),
                message,
                console_tail: crate::process::log_tail(&booted.console, 20),
            });
        }
        Ok(booted.accel)
    }
}

/// The arguments the guest adds to `mkfs.FS` for the scenario's `mkfs:` (XFS only).
pub(crate) fn mkfs_args(s: &Scenario) -> Vec<String> {
    match s.block_size {
        Some(b) => vec!["-b".into(), format!("size={b}")],
        None => Vec::new(),
    }
}

/// Bytes a file takes on disk (its blocks: what was written of a sparse image so far).
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map_or(0, |m| m.blocks() * 512)
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
    // mkfs's arguments, when the scenario sets any (the keys of the others are unchanged).
    let mkfs = mkfs_args(s);
    let mkfs = (!mkfs.is_empty()).then(|| format!("mkfs {}", mkfs.join(" ")));
    let parts: Vec<String> = parts.into_iter().chain(more).chain(mkfs).collect();
    format!("{}-{}-{}", s.fs.name(), format!("{:?}", s.device.kind).to_lowercase(), cache::key(parts))
}
