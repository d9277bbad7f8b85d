//! The environment radiff reads, read once per process at the boundary: every variable is
//! named here with what it does, and no other module reads the environment (checked by
//! tests/house.rs). Values are taken as they are; each user says what a bad one means.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Set to `none` (or `base`) for one run: what `model:` in kernels.yaml says.
pub const ENV_BASE_MODEL: &str = "RADIFF_BASE_MODEL";
/// Environment overrides of `kernels.yaml`'s base: a developer with an mm-new checkout sets
/// `RADIFF_KERNEL_TREE=~/src/mm` (and optionally `RADIFF_KERNEL_REV=mm-new`).
pub const ENV_TREE: &str = "RADIFF_KERNEL_TREE";
pub const ENV_REV: &str = "RADIFF_KERNEL_REV";
/// Set by radiff for a hybrid worker it starts (worker/): the object it loads, and the
/// limit on one call into its C in milliseconds.
pub const ENV_WORKER_SO: &str = "RADIFF_HYBRID_WORKER_SO";
pub const ENV_WORKER_LIMIT_MS: &str = "RADIFF_HYBRID_WORKER_LIMIT_MS";
/// Set by radiff for a worker that runs only some of the object's functions as C: their
/// names, comma-separated (the others are the Rust port).
pub const ENV_WORKER_ONLY: &str = "RADIFF_HYBRID_WORKER_ONLY";
/// Set by `radiff bisect` for its children: the name of the tree whose lock it holds.
pub const ENV_LOCKED: &str = "RADIFF_TREE_LOCKED";

/// Every environment variable radiff reads.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// `RADIFF_ROOT`: the repository (kernels/, scenarios/) instead of the build's own.
    pub root: Option<PathBuf>,
    /// `RADIFF_CACHE`: the cache folder; else `$XDG_CACHE_HOME/radiff`, else
    /// `$HOME/.cache/radiff`.
    pub cache: Option<PathBuf>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache_home: Option<PathBuf>,
    /// `HOME`: `~/` in kernels.yaml and the default cache.
    pub home: Option<PathBuf>,
    /// `PATH`: where tools are looked up, and what the VM's tools are put before.
    pub path: OsString,
    /// `RADIFF_ACCEL`: `kvm` or `tcg` instead of probing.
    pub accel: Option<String>,
    /// `RADIFF_BASE_MODEL`: `none` or `base` over kernels.yaml's `model:` (empty: unset).
    pub base_model: Option<String>,
    /// `RADIFF_KERNEL_TREE` and `RADIFF_KERNEL_REV`: a git tree for the base over
    /// kernels.yaml's (empty tree: unset; rev defaults to HEAD).
    pub kernel_tree: Option<PathBuf>,
    pub kernel_rev: Option<String>,
    /// `RADIFF_TREE_LOCKED`: the tree a parent `radiff bisect` holds locked for this process.
    pub tree_locked: Option<String>,
    /// `RADIFF_BUILD_TIMEOUT`: seconds a kernel build may take (text; parsed by its user).
    pub build_timeout: Option<String>,
    /// `RADIFF_GUEST`: the guest program, instead of the one beside the executable.
    pub guest: Option<PathBuf>,
    /// `RADIFF_BOOT_LOG`: a file each boot appends its timing line to.
    pub boot_log: Option<PathBuf>,
    /// `RADIFF_HYBRID_WORKER_SO`: this process is a hybrid worker serving that object.
    pub hybrid_worker: Option<PathBuf>,
    /// `RADIFF_HYBRID_WORKER_LIMIT_MS`: its limit on one call into the C (text).
    pub hybrid_worker_limit_ms: Option<String>,
    /// `RADIFF_HYBRID_WORKER_ONLY`: the functions it runs as C, when not all (text).
    pub hybrid_worker_only: Option<String>,
    /// `NEXTEST_RUN_ID`, `NEXTEST_EXECUTION_MODE`, `NEXTEST_TEST_THREADS`: set by nextest.
    pub nextest_run_id: Option<String>,
    pub nextest_execution_mode: Option<String>,
    pub nextest_test_threads: Option<String>,
}

fn text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from)
}

impl Settings {
    /// Reads every variable from this process's environment.
    pub fn from_env() -> Settings {
        Settings {
            root: path("RADIFF_ROOT"),
            cache: path("RADIFF_CACHE"),
            xdg_cache_home: path("XDG_CACHE_HOME"),
            home: path("HOME"),
            path: std::env::var_os("PATH").unwrap_or_default(),
            accel: text("RADIFF_ACCEL"),
            base_model: text(ENV_BASE_MODEL).filter(|v| !v.is_empty()),
            kernel_tree: path(ENV_TREE).filter(|t| !t.as_os_str().is_empty()),
            kernel_rev: text(ENV_REV),
            tree_locked: text(ENV_LOCKED),
            build_timeout: text("RADIFF_BUILD_TIMEOUT"),
            guest: path("RADIFF_GUEST"),
            boot_log: path("RADIFF_BOOT_LOG"),
            hybrid_worker: path(ENV_WORKER_SO),
            hybrid_worker_limit_ms: text(ENV_WORKER_LIMIT_MS),
            hybrid_worker_only: text(ENV_WORKER_ONLY),
            nextest_run_id: text("NEXTEST_RUN_ID"),
            nextest_execution_mode: text("NEXTEST_EXECUTION_MODE"),
            nextest_test_threads: text("NEXTEST_TEST_THREADS"),
        }
    }
}

/// This process's settings, read from the environment on first use.
pub fn get() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(Settings::from_env)
}
