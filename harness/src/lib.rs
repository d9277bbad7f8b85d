//! radiff: runs readahead scenarios on real kernels and diffs the traces against the model.
//!
//! One module per edge: `kernels` builds (make, patch, git), `vm` boots (virtme-ng,
//! QEMU), `guest` runs inside the VM, `ftrace` parses, `compare` diffs and renders;
//! `process` is the only place that starts host processes.

pub mod bench;
pub mod bisect;
pub mod boot_log;
pub mod cache;
pub mod calls;
pub mod cli;
pub mod compare;
pub mod decisions;
pub mod error;
pub mod explain;
pub mod explore;
pub mod files;
pub mod ftrace;
pub mod guest;
pub mod host;
pub mod hybrid;
pub mod hybrid_check;
pub mod kernels;
pub mod mail;
pub mod model_check;
pub mod port;
pub mod process;
pub mod progress;
pub mod report;
pub mod review;
pub mod run;
pub mod scenario;
pub mod settings;
pub mod summary;
pub mod svg;
pub mod testing;
pub mod verdict;
pub mod vm;
pub mod wire;
pub mod worker;
pub mod yaml;

pub use error::{Error, Result};

/// The repository root (where `kernels/` and `scenarios/` are): `$RADIFF_ROOT`, else the
/// workspace this crate was built from.
pub fn repo_root() -> std::path::PathBuf {
    match &settings::get().root {
        Some(dir) => dir.clone(),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("harness/ has a parent").to_path_buf(),
    }
}
