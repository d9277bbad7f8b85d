//! One run: a scenario point on a variant's kernel, in a VM, to a parsed trace.
//!
//! The parts: `lab` (what runs share: the kernels built, the guest program), `image` (the
//! disk images), `batch` (which points go to which boot), `boot` (one boot of a batch),
//! `console` (what a boot's console says), `schedule` (the boots of a test run), `shared`
//! (batches shared by a test run's processes), `nextest` (what a process cargo-nextest
//! started knows of its run).

mod batch;
mod boot;
mod console;
mod image;
mod lab;
mod nextest;
mod schedule;
mod shared;

use std::path::{Path, PathBuf};
use std::time::Duration;

use radiff_model::pattern;

use crate::ftrace::Capture;
use crate::scenario::{Point, Scenario};
use crate::vm::{Accel, Disk};
use crate::wire::{DeviceKind, GuestEnv};

pub use batch::{balanced_batches, batches, plan_boots, point_cost, PlannedBoot, BATCH_POINTS, BOOT_COST};
pub use boot::{remove_stale_batches, run_dir};
pub use console::{console_of_point, ftrace_dump, kernel_panic, read_status, STATUS_FILE};
pub use image::{image_key, image_ready, PREPARE_CPUS};
pub use lab::{guest_binary, side_by_side_on, Lab, MAX_LANES, VM_CPUS};
pub use nextest::{selection_of, NextestRun, Selection};
pub use schedule::{Need, Schedule, SharedResult};
pub use shared::{Found, SharedRun};

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

impl RunOutput {
    /// The kernel's trace as it is compared: [`crate::compare::normalise`]d on the extents
    /// of every file of the run, with the steps that removed something.
    pub fn normalised(&self) -> (radiff_model::Trace, Vec<(&'static str, u64)>) {
        crate::compare::normalise(&self.capture.trace, &self.env.all_extents())
    }
}

/// One point of a batch: `point` of `scenario`, its run folder named `name` (the variant,
/// or a name of the caller's) under `runs/SCENARIO/`.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    pub scenario: &'a Scenario,
    pub point: &'a Point,
    pub name: &'a str,
}

/// The scenario's disk on `image`; `throttled`: with its `iops_limit` (runs, not the
/// image's preparation).
fn disk(scenario: &Scenario, image: &Path, throttled: bool) -> Disk {
    match scenario.device.kind {
        DeviceKind::Nvme => Disk::Nvme {
            image: image.to_path_buf(),
            mdts: scenario.device.mdts(),
            logical_block_size: scenario.device.logical_block_size,
            opt_io_size: scenario.device.optimal_io_size,
            min_io_size: None,
            iops_limit: scenario.device.iops_limit.filter(|_| throttled),
        },
        DeviceKind::Ufs => Disk::Ufs { image: image.to_path_buf() },
    }
}

/// Enough for the whole file in the page cache plus the guest and the trace buffers (per
/// vCPU: the main trace's, and the programs' calls' of the same size), so that reclaim
/// never changes what readahead does.
fn memory_mb(scenario: &Scenario) -> u64 {
    let buffers = if scenario.programs.is_empty() { 1 } else { 2 };
    let trace_mb = scenario.trace_buffer_kb * u64::from(lab::VM_CPUS) * buffers / 1024;
    ((total_size(scenario) >> 20) + trace_mb + 1024).max(2048)
}

/// Bytes of all the scenario's files.
fn total_size(scenario: &Scenario) -> u64 {
    scenario.file_sizes().iter().sum()
}

/// The files after the first, as the guest writes them.
fn guest_files(scenario: &Scenario) -> Vec<crate::wire::GuestFile> {
    scenario
        .other_files
        .iter()
        .map(|f| crate::wire::GuestFile { size: f.size, write_size: f.write_size, extent_size: f.extent_size })
        .collect()
}

/// What the model is given for a run: the scenario's reads on the file the guest measured
/// (its size and extents) behind the queue the guest measured, with the fault path's
/// settings the guest read back (`vm`), with the folios in the
/// physical pages the kernel put them in (`pfns`, from the trace; empty if unknown).
///
/// The one builder of the model's input: a caller without a VM (explore) passes the
/// [`GuestEnv`] it has, made up (`file_size`, `extents`, `queue`, `vm`, `other_files`; the
/// rest `..Default::default()`), and no pfns.
pub fn model_input(scenario: &Scenario, env: &GuestEnv, pfns: &[u64]) -> radiff_model::Input {
    radiff_model::Input {
        folio_pfns: pfns.to_vec(),
        // The guest reports the mappings' addresses apart from the vm settings it read back.
        // ... and what its RWF_NOWAIT reads returned.
        vm: radiff_model::VmSettings {
            mmap_addrs: env.map_addresses.clone(),
            nowait_returned: env.nowait_returned.clone(),
            ..env.vm.clone()
        },
        fs: scenario.fs,
        file_size: env.file_size,
        extents: env.extents.clone(),
        queue: env.queue.clone(),
        mapping: radiff_model::MappingLimits::for_fs_block(scenario.fs, scenario.block_size),
        ops: pattern::expand_files(&scenario.steps, &scenario.file_sizes()),
        other_files: env
            .other_files
            .iter()
            .map(|f| radiff_model::FileInput { file_size: f.file_size, extents: f.extents.clone() })
            .collect(),
    }
}

/// [`model_input`] for a run that has its capture: the pfns it measured, and the calls its
/// programs made in place of each `Op::Program` ([`crate::calls::splice_programs`]).
pub fn model_input_with(scenario: &Scenario, env: &GuestEnv, capture: &Capture) -> radiff_model::Input {
    let mut input = model_input(scenario, env, &capture.pfns);
    if !capture.programs.is_empty() {
        let spliced = crate::calls::splice_programs(&input.ops, &input.vm.mmap_addrs, &capture.programs);
        input.ops = spliced.ops;
        input.vm.mmap_addrs = spliced.mmap_addrs;
        input.vm.loads_in_flight = spliced.loads_in_flight;
        // The scenario's own NOWAIT reads move past the programs' calls before them.
        let own = input
            .vm
            .nowait_returned
            .iter()
            .filter_map(|r| spliced.moved.get(r.op).map(|&op| radiff_model::NowaitReturned { op, bytes: r.bytes }));
        input.vm.nowait_returned = own.chain(spliced.nowait_returned).collect();
        input.vm.nowait_returned.sort_by_key(|r| r.op);
    }
    input
}
