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
    pub(super) boots: std::sync::atomic::AtomicUsize,
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
            boots: Default::default(),
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
