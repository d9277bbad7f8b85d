//! The lab: what every run shares, from the kernels it has built to the guest program.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Job, RunOutput};
use crate::cache::Cache;
use crate::error::{tail, Error, Result};
use crate::kernels::{Builder, Kernels};
use crate::scenario::{Point, Scenario};

/// Virtual CPUs of a guest that runs a scenario when it has the host to itself (`radiff
/// run`, `report`, `bisect`). Test trials run guests side by side and give each fewer
/// ([`Lab::with_vcpus`]): under TCG, two guests of two vCPUs on a 2-core host put four
/// vCPU threads on two cores, and a halted vCPU's timer wakeup came so late that a guest
/// stalled at boot (RCU stall reports, then the VM timeout). Traces do not depend on it:
/// every trial gave the same trace with one vCPU as with two, once the guest set the I/O
/// scheduler itself (left alone, one hardware queue got `mq-deadline` and two `none`, and
/// a batch's requests came in another order: docs/scenarios.md, "The I/O scheduler").
pub const VM_CPUS: u32 = 2;

/// The most guests [`Lab::side_by_side`] runs at once, whatever the cores: each holds its
/// scenario's files in its page cache (up to a few GiB of the host's memory).
pub const MAX_LANES: usize = 4;

/// (guests at once, vCPUs each) on a host of `cores` cores: one guest of [`VM_CPUS`] per
/// [`VM_CPUS`] cores, at least two guests of one vCPU where there are two cores, at most
/// [`MAX_LANES`]; one guest of [`VM_CPUS`] on one core.
pub fn side_by_side_on(cores: usize) -> (usize, u32) {
    if cores < 2 {
        return (1, VM_CPUS);
    }
    let lanes = (cores / VM_CPUS as usize).clamp(2, MAX_LANES);
    (lanes, (cores / lanes).clamp(1, VM_CPUS as usize) as u32)
}

/// Everything a run needs that outlives it: the cache, the kernels and the guest program.
/// Shared by all trials of a test run; kernels are built once, and a failed build is
/// reported once (later callers are told which caller saw it fail).
pub struct Lab {
    pub cache: Cache,
    pub kernels: Kernels,
    pub guest: PathBuf,
    /// Each variant's build, once. Held across a build: a caller that wants another variant
    /// waits for it (builds share one tree and build directory, and wait for each other's
    /// lock anyway), and one that wants the same variant gets its result, not a second build.
    built: Mutex<HashMap<String, std::result::Result<PathBuf, String>>>,
    /// Serialises image preparation within this process: held across the preparing boot
    /// (and the base kernel's build, if it is needed first), so two trials never prepare
    /// at once; the per-image file lock does the same across processes.
    pub(super) images: Mutex<()>,
    pub(super) vcpus: u32,
    /// How many of a command's boots run at once ([`Lab::side_by_side`]); 1 unless asked.
    lanes: usize,
    pub(super) boots: std::sync::atomic::AtomicUsize,
    /// The guest program the guests run ([`Lab::guest_program`]), copied once.
    guest_copy: std::sync::OnceLock<std::result::Result<PathBuf, String>>,
}

impl Lab {
    /// A lab on `cache` and `kernels` booting the guest program `guest`, without checking
    /// the host: for tests that build one on purpose; commands use [`Lab::open`] or
    /// [`Lab::open_with`].
    pub fn new(cache: Cache, kernels: Kernels, guest: PathBuf) -> Lab {
        Lab {
            cache,
            kernels,
            guest,
            built: Mutex::new(HashMap::new()),
            images: Mutex::new(()),
            vcpus: VM_CPUS,
            lanes: 1,
            boots: Default::default(),
            guest_copy: Default::default(),
        }
    }

    /// The lab of this repository (`kernels/kernels.yaml`) in the cache `$RADIFF_CACHE`
    /// names, once the host has what runs need ([`Lab::check_host`]).
    pub fn open() -> Result<Lab> {
        Lab::open_with(Cache::from_env(), Kernels::load(&crate::repo_root())?)
    }

    /// The lab of `kernels` in `cache` (a tree built in place, a cold cache), with the guest
    /// program next to radiff ([`guest_binary`]), once the host has what runs need
    /// ([`Lab::check_host`]).
    pub fn open_with(cache: Cache, kernels: Kernels) -> Result<Lab> {
        let lab = Lab::new(cache, kernels, guest_binary()?);
        lab.check_host()?;
        Ok(lab)
    }

    /// Whether this host has what runs need (QEMU, virtme-ng, the kernel source): one
    /// error naming each missing part, before any build or boot ([`crate::host::preflight`]).
    pub fn check_host(&self) -> Result<()> {
        crate::host::preflight(&self.cache, &self.kernels)
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

    /// The same lab for a command whose boots do not depend on each other (review's runs
    /// on the kernels): on a host of two cores or more, [`side_by_side_on`] guests at once,
    /// each with the vCPUs that leaves it (one on two cores, as the test trials run them).
    pub fn side_by_side(self) -> Lab {
        let (lanes, vcpus) = side_by_side_on(std::thread::available_parallelism().map_or(1, |n| n.get()));
        Lab { lanes, ..self.with_vcpus(vcpus) }
    }

    /// How many boots of a command run at once (1 unless [`Lab::side_by_side`]).
    pub fn lanes(&self) -> usize {
        self.lanes
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
        let builder = Builder::new(&self.kernels, &self.cache);
        let result = self.kernels.variant(variant).and_then(|v| builder.build(v)).map(|b| b.bzimage);
        let stored = match &result {
            Ok(path) => Ok(path.clone()),
            Err(e) => {
                Err(format!("build of `{variant}` failed; its error is shown with {who}:\n{}", tail(&e.to_string(), 6)))
            }
        };
        built.insert(variant.to_string(), stored);
        result
    }

    /// Runs `point` of `scenario` on `variant` and parses the trace.
    pub fn run(&self, scenario: &Scenario, point: &Point, variant: &str, who: &str) -> Result<RunOutput> {
        let kernel = self.kernel(variant, who)?;
        self.run_kernel(scenario, point, variant, &kernel)
    }

    /// The guest program as the guests run it: a copy of [`Lab::guest`], one per build of
    /// it ([`stable_copy`]), found or made once for the lab. A guest reads its program over 9p while it
    /// runs, so a `cargo build` that rewrites `target/*/radiff-guest` meanwhile would
    /// change the file under it (a guest segfaulted in ld.so so); the copy never changes.
    pub(super) fn guest_program(&self) -> Result<PathBuf> {
        self.guest_copy
            .get_or_init(|| stable_copy(&self.cache, &self.guest).map_err(|e| e.to_string()))
            .clone()
            .map_err(Error::Other)
    }

    /// Runs `point` of `scenario` on the bzImage `kernel`, keeping the run's folder under
    /// `runs/SCENARIO/NAME/`: a batch of one.
    pub fn run_kernel(&self, scenario: &Scenario, point: &Point, name: &str, kernel: &Path) -> Result<RunOutput> {
        self.run_batch(kernel, &[Job { scenario, point, name }]).pop().expect("one result per job")
    }
}

/// Where the guest program is: `$RADIFF_GUEST`, else next to the running executable
/// (or its parent, for test binaries in `target/*/deps/`).
pub fn guest_binary() -> Result<PathBuf> {
    if let Some(path) = &crate::settings::get().guest {
        return Ok(path.clone());
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
    Err(Error::Other(format!(
        "radiff-guest not found near {}: run `cargo build --bins` (or set RADIFF_GUEST)",
        exe.display()
    )))
}

/// `program` copied to `NAME-KEY` in [`copies_dir`], executable, unless that copy is
/// there: KEY from the file's identity, size and modification time (a rebuild changes
/// them; the test build's guest is about 100 MB, not worth reading to name it), put in
/// place by rename, whole. Copies over a day old are removed as a new one is made.
fn stable_copy(cache: &Cache, program: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(program).map_err(|e| Error::io(program, e))?;
    let identity = [meta.dev(), meta.ino(), meta.size(), meta.mtime() as u64, meta.mtime_nsec() as u64];
    let name = program.file_name().map_or("guest".into(), |n| n.to_string_lossy().into_owned());
    let dir = copies_dir(cache, program)?;
    let copy = dir.join(format!("{name}-{}", crate::cache::key(identity.map(u64::to_le_bytes))));
    if copy.is_file() {
        return Ok(copy);
    }
    let staged = dir.join(format!(".{name}.{}", std::process::id()));
    std::fs::copy(program, &staged).map_err(|e| Error::io(&staged, e))?;
    std::fs::set_permissions(&staged, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(|e| Error::io(&staged, e))?;
    std::fs::rename(&staged, &copy).map_err(|e| Error::io(&copy, e))?;
    let day = std::time::Duration::from_secs(24 * 3600);
    let copies = format!("{name}-");
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let old = entry.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
        if entry.file_name().to_string_lossy().starts_with(&copies) && old.is_some_and(|age| age > day) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(copy)
}

/// Where the copies of `program` go: `.guest-copies/` beside it (cargo's target folder,
/// which `cargo clean` empties, so a copy costs the cache nothing: a cache short of room
/// fails at the step that needs the room, its image or its run), else the cache's `guest/`
/// when that folder cannot be written (an installed radiff).
fn copies_dir(cache: &Cache, program: &Path) -> Result<PathBuf> {
    let beside = program.parent().unwrap_or(Path::new(".")).join(".guest-copies");
    match std::fs::create_dir_all(&beside) {
        Ok(()) => Ok(beside),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem) => {
            cache.dir("guest")
        }
        Err(e) => Err(Error::io(&beside, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_run_a_copy_of_the_program_that_a_rebuild_does_not_change() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache { root: tmp.path().join("cache") };
        let program = tmp.path().join("radiff-guest");
        std::fs::write(&program, b"first build").unwrap();
        let copy = stable_copy(&cache, &program).unwrap();
        assert_ne!(copy, program);
        assert_eq!(copy.parent(), Some(tmp.path().join(".guest-copies").as_path()), "beside the program");
        assert!(!cache.root.exists(), "nothing in the cache while the program's folder can be written");
        assert_eq!(std::fs::read(&copy).unwrap(), b"first build");
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&copy).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(stable_copy(&cache, &program).unwrap(), copy, "the same build: the same copy");
        // A rebuild (a new file, as the linker writes it): a new copy beside, the first
        // one untouched.
        std::fs::remove_file(&program).unwrap();
        std::fs::write(&program, b"second build").unwrap();
        let second = stable_copy(&cache, &program).unwrap();
        assert_ne!(second, copy);
        assert_eq!(std::fs::read(&copy).unwrap(), b"first build");
        assert_eq!(std::fs::read(&second).unwrap(), b"second build");
        let e = stable_copy(&cache, &tmp.path().join("missing")).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
    }

    #[test]
    fn side_by_side_runs_two_guests_of_one_vcpu_on_two_cores_and_vm_cpus_each_on_more() {
        assert_eq!(side_by_side_on(1), (1, VM_CPUS), "one core: one guest at a time, as before");
        assert_eq!(side_by_side_on(2), (2, 1));
        assert_eq!(side_by_side_on(3), (2, 1));
        assert_eq!(side_by_side_on(4), (2, 2));
        assert_eq!(side_by_side_on(8), (4, 2));
        assert_eq!(side_by_side_on(64), (MAX_LANES, VM_CPUS));
    }
}
