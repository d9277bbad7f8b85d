//! The files host and guest exchange through the shared folder: `spec.json` ([`GuestSpec`]) in,
//! `env.json` ([`GuestEnv`]) and `status.json` ([`Status`]) out. Both sides import this
//! module; it imports neither.

use radiff_model::{Extent, FsKind, Op, QueueLimits, ThpMode, VmSettings};
use serde::{Deserialize, Serialize};

/// The name of file `f` of the scenario in the guest's mount: `data`, then `data1`, ...
/// (the trace names a file only by it in `mm_khugepaged_collapse_file`).
pub fn file_name(f: usize) -> String {
    if f == 0 {
        "data".to_string()
    } else {
        format!("data{f}")
    }
}

/// Where the guest mounts the scenario's file system.
pub const GUEST_MNT: &str = "/tmp/radiff-mnt";

/// File `f`'s path in the guest, as a program step's `{file}` becomes.
pub fn guest_path(f: usize) -> String {
    format!("{GUEST_MNT}/{}", file_name(f))
}

/// A program a `program:` or `fio:` step runs in the guest ([`radiff_model::Op::Program`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Program {
    /// The command line, `{file}`s already the guest's paths; an argument `{job}` is the
    /// path of the job file the guest writes from `job`.
    pub argv: Vec<String>,
    /// fio's job file, its `filename` set to the scenario's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// What the step said, for messages (`fio: scenarios/jobs/x.fio`, `program: dd ...`).
    pub label: String,
    /// Where the step is (`scenarios/x.yaml:16`), which the program's errors name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub at: String,
}

/// Which device the guest looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Nvme,
    Ufs,
}

/// What the guest is asked to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Task {
    /// Make the file system and write the file with direct writes of `write_size`.
    Prepare { mkfs_args: Vec<String>, write_size: u64, extent_size: Option<u64> },
    /// Apply the queue settings, trace the ops, report.
    Run {
        queue: QueueSettings,
        #[serde(default)]
        vm: VmRequest,
        fds: u32,
        ops: Vec<Op>,
        trace_buffer_kb: u64,
        /// The programs `Op::Program` runs, by index.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        programs: Vec<Program>,
        /// How long a program may run before the guest kills it, seconds.
        #[serde(default)]
        program_timeout_s: u64,
    },
}

/// The fault path's settings the scenario asks for (`vm:`); `None` leaves the kernel's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VmRequest {
    /// `/sys/kernel/debug/fault_around_bytes`.
    pub fault_around_bytes: Option<u64>,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub thp_enabled: Option<ThpMode>,
}

/// Queue settings the scenario asks for; `None` leaves the kernel's value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSettings {
    pub read_ahead_kb: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub rotational: Option<bool>,
    /// Always written: the kernel's own default depends on the guest's vCPUs (one hardware
    /// queue gets `mq-deadline`, several `none`), and trials boot one where `radiff run`
    /// boots two.
    #[serde(default)]
    pub scheduler: Scheduler,
}

/// `/sys/block/DEVICE/queue/scheduler`: the I/O schedulers the model knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// No scheduler: requests are issued in the order the plug made them.
    #[default]
    None,
    /// mq-deadline: a plugged batch is dispatched upward from the last read's position.
    MqDeadline,
}

impl Scheduler {
    /// The name sysfs uses.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::None => "none",
            Scheduler::MqDeadline => "mq-deadline",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestSpec {
    pub device: DeviceKind,
    /// The disk's PCI address (`0000:00:10.0`, [`crate::vm::disk_pci_address`]) when a boot
    /// has several: each point of a batch reads its own. `None`: the one disk of `device`'s kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    pub fs: FsKind,
    /// The first file's size (its write and extent sizes are in `Task::Prepare`).
    pub file_size: u64,
    pub task: Task,
    /// The scenario's files after the first (`data1`, `data2`, ... beside `data`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_files: Vec<GuestFile>,
}

/// One more file of the scenario, as the guest writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestFile {
    pub size: u64,
    pub write_size: u64,
    pub extent_size: Option<u64>,
}

/// What the guest measured of a file after the first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEnv {
    pub ino: u64,
    pub file_size: u64,
    pub extents: Vec<Extent>,
}

/// What the guest saw: the environment a prediction needs, and figures for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestEnv {
    /// `uname -r`.
    pub release: String,
    /// The block device, e.g. `nvme0n1`, and its `major:minor`.
    pub device: String,
    pub dev: String,
    /// The file's inode number, as ftrace prints it (hex in the events).
    pub ino: u64,
    pub file_size: u64,
    pub queue: QueueLimits,
    /// The fault path's settings as the guest read them back after applying `vm:` (the
    /// kernel's defaults where a file could not be read and the scenario set nothing:
    /// `vm_unread` says which).
    #[serde(default)]
    pub vm: VmSettings,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vm_unread: Vec<String>,
    /// The address each `Op::Mmap` got, in op order: fault-around ranges are aligned in
    /// the page table (do_fault_around()), so where a mapping starts (its address modulo
    /// `fault_around_bytes`, and modulo 2 MiB for PMDs) decides which file pages they
    /// cover. XFS and ext4 align mappings of 2 MiB or more to 2 MiB
    /// (thp_get_unmapped_area); f2fs does not. The guest runs without address-space
    /// randomisation ([`crate::guest::reexec_without_aslr`]), so the addresses repeat from run to run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub map_addresses: Vec<u64>,
    pub extents: Vec<Extent>,
    /// Wall time of the access pattern inside the guest, nanoseconds.
    pub pattern_ns: u64,
    /// Bytes the reads returned (short reads show here).
    pub bytes_read: u64,
    /// What each RWF_NOWAIT read returned (0 for EAGAIN), by the index of its op: the
    /// model follows where each stopped ([`radiff_model::VmSettings::nowait_returned`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nowait_returned: Vec<radiff_model::NowaitReturned>,
    /// The files after the first (`ino`, `file_size` and `extents` above are the first's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_files: Vec<FileEnv>,
    /// Ring-buffer accounting after the run: a trace with overruns is refused.
    pub trace_entries: u64,
    pub trace_overrun: u64,
    pub trace_dropped: u64,
    pub cpus: u32,
}

impl GuestEnv {
    /// The inode of each file, by file index.
    pub fn inos(&self) -> Vec<u64> {
        std::iter::once(self.ino).chain(self.other_files.iter().map(|f| f.ino)).collect()
    }

    /// The extents of every file (for telling the file system's own blocks from the files').
    pub fn all_extents(&self) -> Vec<Extent> {
        self.extents.iter().chain(self.other_files.iter().flat_map(|f| f.extents.iter())).copied().collect()
    }
}

/// The guest's last word: `ok` once everything was written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub step: String,
    pub ok: bool,
    pub error: Option<String>,
}

/// A file the batch loop writes in a point's folder before the point starts: the host's
/// watchdog times the point from when it appears.
pub const POINT_STARTED: &str = "started";
/// The point's time in the guest (seconds, from its start to its process's exit).
pub const POINT_TIME: &str = "guest-time";
/// The exit code of a point that failed at a program step (the program exited non-zero,
/// was not found, or ran past its timeout) after saving its trace: the kernel and the
/// point's disk are as any point leaves them, so the batch goes on to its next point.
pub const EXIT_PROGRAM_FAILED: i32 = 3;
