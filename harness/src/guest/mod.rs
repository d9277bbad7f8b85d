//! The guest side: what `radiff-guest` does inside the VM (the files it exchanges with
//! the host are in [`crate::wire`]).
//!
//! In: `spec.json` ([`GuestSpec`]). Out: `status.json` (updated at every step, so a
//! crash leaves the last step it reached), `guest.log`, `env.json` ([`crate::wire::GuestEnv`]) and
//! `trace.txt` (the raw ftrace text, also written when the run failed part-way).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::wire::{GuestSpec, Status, Task};

mod batch;
mod failalloc;
mod prepare;
mod program;
mod run;
mod sysfs;
mod tracing;

pub use batch::{batch, batch_points};
use prepare::prepare;
use run::run;

/// Where file `f` of the scenario is in the guest's mount: `data`, then `data1`, ...
fn file_path(f: usize) -> PathBuf {
    Path::new(MNT).join(crate::wire::file_name(f))
}

const MNT: &str = crate::wire::GUEST_MNT;
const TRACING: &str = "/sys/kernel/tracing";

/// The events radiff records.
pub const EVENTS: [&str; 8] = [
    "readahead:page_cache_sync_ra",
    "readahead:page_cache_async_ra",
    "readahead:page_cache_ra_order",
    "readahead:page_cache_ra_unbounded",
    "filemap:mm_filemap_add_to_page_cache",
    "filemap:mm_filemap_fault",
    "filemap:mm_filemap_map_pages",
    "huge_memory:mm_khugepaged_collapse_file",
];
pub const BLOCK_EVENT: &str = "block:block_rq_issue";

type GResult<T> = std::result::Result<T, String>;

struct Guest {
    out: PathBuf,
    log: File,
    status: Status,
    /// The point failed at a program step (see [`crate::wire::EXIT_PROGRAM_FAILED`]).
    program_failed: bool,
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
/// mapping decides its fault-around ranges (see [`crate::wire::GuestEnv::map_addresses`]); with
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

/// The guest program run on one point alone (not `--batch`): runs `spec.json` from `out`, writes the results there.
/// Returns the process exit code.
pub fn run_alone(out: &Path) -> i32 {
    let log = match File::create(out.join("guest.log")) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("radiff-guest: cannot write to {}: {e}", out.display());
            return 1;
        }
    };
    let mut guest = Guest { out: out.to_path_buf(), log, status: Status::default(), program_failed: false };
    let result = (|| -> GResult<()> {
        guest.step("reading spec.json");
        let text = std::fs::read_to_string(out.join("spec.json")).map_err(|e| format!("spec.json: {e}"))?;
        let spec: GuestSpec = serde_json::from_str(&text).map_err(|e| format!("spec.json: {e}"))?;
        match &spec.task {
            Task::Prepare { mkfs_args, write_size, extent_size } => {
                prepare(&mut guest, &spec, mkfs_args, *write_size, *extent_size)
            }
            Task::Run { .. } => run(&mut guest, &spec),
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
            if guest.program_failed {
                crate::wire::EXIT_PROGRAM_FAILED
            } else {
                1
            }
        }
    }
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

    #[allow(clippy::mut_from_ref, reason = "the buffer is the guest's one scratch area, never lent twice (see SAFETY)")]
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
