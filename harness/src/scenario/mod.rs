//! Scenarios: `scenarios/*.yaml` parsed, checked and expanded into runs.
//!
//! The schema is documented in README.md ("Writing a scenario"). Every error names the
//! file, the line and the key. `schema.rs` is the file as serde reads it, `sections.rs`
//! and `steps.rs` check it section by section, `size.rs` reads byte counts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use radiff_model::{FsKind, Step};

use crate::error::{Error, Result};
use crate::wire::{DeviceKind, QueueSettings, VmRequest};
use crate::yaml;

mod bounds;
mod collapse;
mod program;
pub use program::THREADS;
mod read_flags;
mod schema;
mod sections;
mod size;
mod steps;

pub use bounds::{
    MAX_DEVICE_SIZE, MAX_MAPS, MAX_OPS, MAX_POINTS, MAX_READ_AHEAD_KB, MAX_STREAMS, MAX_TIMEOUT_S, MAX_TOUCHES,
    MAX_TRACE_BUFFER_KB,
};
use schema::ScenarioFile;
use sections::At;
pub use size::{Size, SizeOrRange};

const PAGE: u64 = 4096;

/// The device under test.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    pub kind: DeviceKind,
    pub size: u64,
    /// The largest transfer the device accepts, bytes (NVMe: 4 KiB << mdts; UFS: fixed).
    pub transfer_limit: u64,
    pub optimal_io_size: Option<u64>,
    pub logical_block_size: Option<u64>,
    /// NVMe only: QEMU throttles the drive to this many requests a second (its leaky
    /// bucket: a request that finds the last one's cost not yet drained waits), so that a
    /// read submitted right after another completes late; for runs only, not the image.
    pub iops_limit: Option<u64>,
}

impl Device {
    /// NVMe's MDTS: the transfer limit as a power of two of the 4 KiB memory page.
    pub fn mdts(&self) -> u8 {
        (self.transfer_limit / 4096).trailing_zeros() as u8
    }
}

/// QEMU's UFS logical unit reports max_hw_sectors_kb 1024 (read back by the guest: every UFS
/// run's env.json has it in its queue limits).
pub const UFS_TRANSFER_LIMIT: u64 = 1 << 20;

/// One point of a scenario's matrix: the queue settings of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// `max_sectors_kb=1024` for matrix points, `None` when the scenario has no matrix.
    pub label: Option<String>,
    pub queue: QueueSettings,
}

/// A file of a scenario with several (`files:`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileDef {
    pub name: String,
    pub size: u64,
    pub write_size: u64,
    pub extent_size: Option<u64>,
}

/// A checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file stem: `1mib_after_4k`.
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub device: Device,
    pub fs: FsKind,
    /// `mkfs: {block_size}`: the file system's block size in bytes, `None` for mkfs's
    /// default (4 KiB on all three).
    pub block_size: Option<u64>,
    /// The first (or only) file's size, write size and extent size hint.
    pub file_size: u64,
    pub write_size: u64,
    pub extent_size: Option<u64>,
    /// `files:`: the names of all files, in order (file `f` is `files[f]`; steps read it
    /// through descriptors `pattern::fd_of(f, n)`); empty for a scenario with one `file:`.
    pub file_names: Vec<String>,
    /// `files:` after the first, which is `file_size`/`write_size`/`extent_size`.
    pub other_files: Vec<FileDef>,
    pub steps: Vec<Step>,
    /// What its `program:` and `fio:` steps run (`Step::Program { program }` is
    /// `programs[program]`).
    pub programs: Vec<crate::wire::Program>,
    /// `None`: every variant in `kernels/`.
    pub variants: Option<Vec<String>>,
    pub variants_line: usize,
    pub points: Vec<Point>,
    /// `vm:`: the fault path's settings, applied before the reads (defaults: the kernel's).
    pub vm: VmRequest,
    pub known_divergence: Option<String>,
    /// `model_refuses:`: the model must refuse to follow a program of this scenario, for
    /// a reason that contains this text (the trial then checks its snapshot alone).
    pub model_refuses: Option<String>,
    pub trace_buffer_kb: u64,
    pub timeout: Duration,
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario> {
        Scenario::parse(path, &crate::files::read_text(path)?)
    }

    /// Parses and checks a scenario, section by section in the order of their errors.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario> {
        let raw: ScenarioFile = yaml::parse(path, text)?;
        let at = At { path, text };
        let name = sections::name(path)?;
        let device = sections::device(&at, raw.device)?;
        let block_size = sections::mkfs(&at, &raw.mkfs, raw.filesystem, &device)?;
        let files = sections::files(&at, raw.file, raw.files, raw.filesystem, &device)?;
        let points = sections::points(&at, &raw.queue, &raw.matrix, device.transfer_limit)?;
        let mut programs = Vec::new();
        let steps = steps::steps(&at, raw.reads, &files, &mut programs)?;
        read_flags::check_reads_with(&at, &steps, raw.filesystem, device.logical_block_size)?;
        let sizes: Vec<u64> = files.defs.iter().map(|f| f.size).collect();
        // A program may read every file once: its share of the default trace buffer.
        let read_bytes = steps::expanded_bytes(&steps, &sizes) + programs.len() as u64 * files.total;
        let vm = sections::vm(&at, &raw.vm)?;
        steps::check_fail_alloc(&at, &steps, vm.thp_enabled, block_size)?;
        collapse::check_collapse(&at, &steps, &points, device.kind, block_size)?;
        let (trace_buffer_kb, timeout) =
            sections::budget(&at, raw.trace_buffer_kb, raw.timeout_s, read_bytes, files.total)?;
        let variants_line = yaml::line_of(text, &["variants"]);
        let file_names: Vec<String> =
            if files.named { files.defs.iter().map(|f| f.name.clone()).collect() } else { Vec::new() };
        let first = &files.defs[0];
        Ok(Scenario {
            name,
            path: path.to_path_buf(),
            description: raw.description,
            device,
            fs: raw.filesystem,
            block_size,
            file_size: first.size,
            write_size: first.write_size,
            extent_size: first.extent_size,
            file_names,
            other_files: files.defs[1..].to_vec(),
            steps,
            programs,
            variants: raw.variants,
            variants_line,
            points,
            vm,
            known_divergence: raw.known_divergence,
            model_refuses: raw.model_refuses,
            trace_buffer_kb,
            timeout,
        })
    }

    /// Every file's size, by file index.
    pub fn file_sizes(&self) -> Vec<u64> {
        std::iter::once(self.file_size).chain(self.other_files.iter().map(|f| f.size)).collect()
    }

    /// The test trial's name: `scenario_<stem>::<variant>[::<point>]`.
    pub fn trial_name(&self, variant: &str, point: &Point) -> String {
        match &point.label {
            Some(label) => format!("scenario_{}::{variant}::{label}", self.name),
            None => format!("scenario_{}::{variant}", self.name),
        }
    }

    /// The point named `label` (`None`: the first point).
    pub fn point(&self, label: Option<&str>) -> Result<&Point> {
        match label {
            None => Ok(&self.points[0]),
            Some(l) => self.points.iter().find(|p| p.label.as_deref() == Some(l)).ok_or_else(|| {
                let known: Vec<&str> = self.points.iter().filter_map(|p| p.label.as_deref()).collect();
                Error::Other(format!(
                    "{}: no matrix point `{l}`; points: {}",
                    self.path.display(),
                    if known.is_empty() { "none (no matrix)".to_string() } else { known.join(", ") }
                ))
            }),
        }
    }

    /// The variants this scenario runs on, checked against `known` (from `kernels/`).
    pub fn variants(&self, known: &[String]) -> Result<Vec<String>> {
        match &self.variants {
            None => Ok(known.to_vec()),
            Some(names) => {
                for name in names {
                    if !known.contains(name) {
                        return Err(Error::input(
                            &self.path,
                            self.variants_line,
                            format!("unknown variant `{name}`; known variants: {}", known.join(", ")),
                        ));
                    }
                }
                Ok(names.clone())
            }
        }
    }
}

/// The most a QEMU UFS request holds of order-0 folios that need not be contiguous, in
/// KiB: one page a segment, its `max_segments` ([`radiff_model::QueueLimits::ufs_qemu`]).
pub fn ufs_segments_kb() -> u64 {
    radiff_model::QueueLimits::ufs_qemu(0).max_segments * PAGE / 1024
}

/// Every `scenarios/*.yaml`, sorted by name. Finding none is an error.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>> {
    let found: Vec<PathBuf> = crate::files::entries(dir)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    if found.is_empty() {
        return Err(Error::Other(format!("no scenario (*.yaml) in {}", dir.display())));
    }
    Ok(found)
}

/// Every scenario file under `dir`, each loaded on its own: a bad file is its own error and
/// stops none of the others (the test trials list each bad file as a failing trial).
pub fn load_each(dir: &Path) -> Result<Vec<(PathBuf, Result<Scenario>)>> {
    Ok(discover(dir)?
        .into_iter()
        .map(|path| {
            let loaded = Scenario::load(&path);
            (path, loaded)
        })
        .collect())
}

/// Parses every scenario; collects all errors rather than stopping at the first.
pub fn load_all(dir: &Path) -> Result<Vec<Scenario>> {
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for path in discover(dir)? {
        match Scenario::load(&path) {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        return Err(Error::Other(errors.join("\n")));
    }
    Ok(scenarios)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Scheduler;
    use radiff_model::{pattern, MadvAdvice, SizeRange, ThpMode, TouchOrder};

    const GOOD: &str = "\
description: test
device:
  kind: nvme
  size: 1 GiB
  transfer_limit: 2 MiB
filesystem: xfs
file:
  size: 512 MiB
queue:
  read_ahead_kb: 128
  max_sectors_kb: 512
reads:
  - read: {offset: 0, size: 4 KiB}
  - sequential: {from: 4 KiB, size: 1 MiB}
matrix:
  max_sectors_kb: [1024, 2048]
";

    fn parse(text: &str) -> Result<Scenario> {
        Scenario::parse(Path::new("scenarios/t.yaml"), text)
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_program_step_gets_a_trace_buffer_for_reading_the_whole_file() {
        let text = "description: d\ndevice: {kind: nvme, size: 4 GiB}\nfilesystem: xfs\nfile: {size: 2 GiB}\nreads:\n  - program: {argv: [dd, 'if={file}', of=/dev/null, bs=512k]}\n";
        let s = parse(text).unwrap();
        // 2 GiB of order-0 folios: 524288 folio events at about 128 ring-buffer bytes each.
        assert_eq!(s.trace_buffer_kb, 65536);
        let s = parse(&text.replace("2 GiB}", "256 MiB}")).unwrap();
        assert_eq!(s.trace_buffer_kb, 16 << 10, "at least the minimum");
    }

    #[test]
    fn the_scheduler_is_none_unless_the_scenario_names_mq_deadline() {
        let s = parse(GOOD).unwrap();
        assert!(
            s.points.iter().all(|p| p.queue.scheduler == Scheduler::None),
            "every point sets `none` when `queue:` names none"
        );
        let s = parse(&GOOD.replace("  max_sectors_kb: 512\n", "  max_sectors_kb: 512\n  scheduler: mq-deadline\n"))
            .unwrap();
        assert!(s.points.iter().all(|p| p.queue.scheduler == Scheduler::MqDeadline), "matrix points keep it");
        let e = error(&GOOD.replace("  max_sectors_kb: 512\n", "  max_sectors_kb: 512\n  scheduler: bfq\n"));
        assert!(e.starts_with("scenarios/t.yaml:12: ") && e.contains("bfq") && e.contains("mq-deadline"), "{e}");
    }

    #[test]
    fn a_good_scenario_expands_its_matrix() {
        let s = parse(GOOD).unwrap();
        assert_eq!(s.name, "t");
        assert_eq!(s.device.mdts(), 9);
        assert_eq!(s.file_size, 512 << 20);
        assert_eq!(s.write_size, 1 << 20, "the default write size");
        let labels: Vec<_> = s.points.iter().map(|p| p.label.clone().unwrap()).collect();
        assert_eq!(labels, vec!["max_sectors_kb=1024", "max_sectors_kb=2048"]);
        assert_eq!(s.points[1].queue.max_sectors_kb, Some(2048));
        assert_eq!(s.points[1].queue.read_ahead_kb, Some(128));
        assert_eq!(s.steps[1], Step::Sequential { fd: 0, from: 4096, size: 1 << 20, to: None });
    }

    #[test]
    fn sizes_take_binary_units_and_refuse_ambiguous_ones() {
        assert_eq!(Size::parse("4 KiB"), Ok(Size(4096)));
        assert_eq!(Size::parse("512MiB"), Ok(Size(512 << 20)));
        assert_eq!(Size::parse("2G"), Ok(Size(2 << 30)));
        assert_eq!(Size::parse("100"), Ok(Size(100)));
        assert!(Size::parse("4 KB").unwrap_err().contains("unknown unit `KB`"));
        assert!(Size::parse("lots").unwrap_err().contains("not a size"));
        assert_eq!(Size(3 << 20).to_string(), "3 MiB");
    }

    #[test]
    fn a_misspelt_key_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("  read_ahead_kb: 128", "  read_ahaed_kb: 128"));
        assert!(e.starts_with("scenarios/t.yaml:10: "), "{e}");
        assert!(e.contains("unknown field `read_ahaed_kb`"), "{e}");
    }

    #[test]
    fn a_wrong_unit_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("size: 512 MiB", "size: 512 MB"));
        assert!(e.starts_with("scenarios/t.yaml:8: "), "{e}");
        assert!(e.contains("unknown unit `MB`"), "{e}");
    }

    #[test]
    fn an_iops_limit_is_an_nvme_drives_and_at_least_one() {
        let limited = GOOD.replace("transfer_limit: 2 MiB", "transfer_limit: 2 MiB\n  iops_limit: 10");
        assert_eq!(parse(&limited).unwrap().device.iops_limit, Some(10));
        let e = error(&limited.replace("iops_limit: 10", "iops_limit: 0"));
        assert!(e.contains("device.iops_limit") && e.contains("at least 1"), "{e}");
    }

    #[test]
    fn an_unknown_file_system_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("filesystem: xfs", "filesystem: btrfs"));
        assert!(e.starts_with("scenarios/t.yaml:6: "), "{e}");
        assert!(e.contains("btrfs") && e.contains("xfs"), "{e}");
    }

    #[test]
    fn max_sectors_kb_above_the_device_limit_is_an_error_at_its_line() {
        let e = error(&GOOD.replace("transfer_limit: 2 MiB", "transfer_limit: 512 KiB"));
        // The queue's 512 fits; the matrix's 1024 does not.
        assert!(e.starts_with("scenarios/t.yaml:16: "), "{e}");
        assert!(e.contains("max_sectors_kb 1024") && e.contains("4 to 512"), "{e}");
        let e = error(&GOOD.replace("max_sectors_kb: 512", "max_sectors_kb: 4096"));
        assert!(e.starts_with("scenarios/t.yaml:11: "), "{e}");
    }

    #[test]
    fn a_read_past_the_file_is_an_error_at_its_step() {
        let e = error(&GOOD.replace("- read: {offset: 0, size: 4 KiB}", "- read: {offset: 512 MiB, size: 4 KiB}"));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: "), "{e}");
        assert!(e.contains("does not fit"), "{e}");
    }

    #[test]
    fn a_file_bigger_than_the_disk_is_an_error() {
        let e = error(&GOOD.replace("size: 1 GiB", "size: 600 MiB"));
        assert!(e.starts_with("scenarios/t.yaml:4: ") && e.contains("too small"), "{e}");
    }

    #[test]
    fn a_transfer_limit_that_is_not_a_power_of_two_pages_is_an_error() {
        let e = error(&GOOD.replace("transfer_limit: 2 MiB", "transfer_limit: 3 MiB"));
        assert!(e.starts_with("scenarios/t.yaml:5: ") && e.contains("MDTS"), "{e}");
    }

    #[test]
    fn ufs_refuses_nvme_only_settings() {
        let e = error(&GOOD.replace("kind: nvme", "kind: ufs"));
        assert!(e.contains("UFS") && e.contains("transfer_limit"), "{e}");
    }

    #[test]
    fn random_sizes_must_be_aligned_ranges() {
        let e = error(
            &GOOD.replace("  - sequential: {from: 4 KiB, size: 1 MiB}", "  - random: {count: 5, size: 6 KiB..4 KiB}"),
        );
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: "), "{e}");
        let ok = parse(&GOOD.replace(
            "  - sequential: {from: 4 KiB, size: 1 MiB}",
            "  - random: {count: 5, size: 4 KiB..128 KiB, seed: 9}",
        ))
        .unwrap();
        assert!(matches!(
            ok.steps[1],
            Step::Random { count: 5, seed: 9, size: SizeRange { min: 4096, max: 131072, align: 4096 }, .. }
        ));
    }

    #[test]
    fn unknown_variants_are_errors_at_their_line() {
        let s = parse(&format!("{GOOD}variants: [base, async-align-v9]\n")).unwrap();
        let e = s.variants(&["base".into(), "async-align-v1".into()]).unwrap_err().to_string();
        assert_eq!(e, "scenarios/t.yaml:17: unknown variant `async-align-v9`; known variants: base, async-align-v1");
    }

    /// GOOD with `steps` as its reads (one step per line, already indented) and `extra`
    /// top-level text; the first step is at line 13.
    fn with_steps(steps: &str, extra: &str) -> String {
        let start = GOOD.find("reads:\n").unwrap() + "reads:\n".len();
        let end = GOOD.find("matrix:").unwrap();
        format!("{}{steps}{}{extra}", &GOOD[..start], &GOOD[end..])
    }

    #[test]
    fn mapping_steps_parse_with_their_defaults() {
        let s = parse(&with_steps(
            "  - readahead: {offset: 1 MiB, size: 2 MiB, fd: 1}
  - mmap: {size: 8 MiB}
  - mmap: {map: 1, offset: 64 MiB, shared: false}
  - madvise: {advice: sequential}
  - madvise: {map: 1, advice: hugepage, offset: 2 MiB, size: 2 MiB}
  - touch: {order: sequential}
  - touch: {maps: [0, 1], order: backward, from: 4 KiB, to: 1 MiB}
  - touch: {map: 1, order: stride, stride: 64 KiB}
  - touch: {map: 1, order: random, count: 100, seed: 5}
  - touch: {map: 1, pages: [0, 5, 2]}
  - munmap: {map: 1}
  - mmap: {map: 1, size: 4 KiB}
",
            "vm: {fault_around_bytes: 4 KiB, thp_enabled: madvise}\n",
        ))
        .unwrap();
        assert_eq!(s.steps[0], Step::Readahead { fd: 1, offset: 1 << 20, size: 2 << 20 });
        assert_eq!(
            s.steps[1],
            Step::Mmap { map: 0, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: false, populate: false }
        );
        assert_eq!(
            s.steps[2],
            Step::Mmap { map: 1, fd: 0, offset: 64 << 20, len: 448 << 20, shared: false, exec: false, populate: false },
            "size defaults to the end of the file"
        );
        assert_eq!(
            s.steps[3],
            Step::Madvise { map: 0, offset: 0, len: 8 << 20, advice: MadvAdvice::Sequential },
            "the whole mapping"
        );
        assert_eq!(s.steps[4], Step::Madvise { map: 1, offset: 2 << 20, len: 2 << 20, advice: MadvAdvice::Hugepage });
        assert_eq!(s.steps[5], Step::Touch { maps: vec![0], from: 0, to: None, order: TouchOrder::Sequential });
        assert_eq!(
            s.steps[6],
            Step::Touch { maps: vec![0, 1], from: 4096, to: Some(1 << 20), order: TouchOrder::Backward }
        );
        assert_eq!(
            s.steps[7],
            Step::Touch { maps: vec![1], from: 0, to: None, order: TouchOrder::Stride { stride: 65536 } }
        );
        assert_eq!(
            s.steps[8],
            Step::Touch { maps: vec![1], from: 0, to: None, order: TouchOrder::Random { count: 100, seed: 5 } }
        );
        assert_eq!(
            s.steps[9],
            Step::Touch { maps: vec![1], from: 0, to: None, order: TouchOrder::Pages { pages: vec![0, 5, 2] } }
        );
        assert_eq!(s.steps[10], Step::Munmap { map: 1 });
        assert_eq!(s.vm, VmRequest { fault_around_bytes: Some(4096), thp_enabled: Some(ThpMode::Madvise) });
        assert_eq!(parse(GOOD).unwrap().vm, VmRequest::default(), "no `vm:`: the kernel's settings");
        // A file that is not a page multiple maps to its last (partial) page.
        let odd =
            parse(&with_steps("  - mmap: {offset: 4 KiB}\n", "").replace("size: 512 MiB", "size: 10000")).unwrap();
        assert_eq!(
            odd.steps[0],
            Step::Mmap { map: 0, fd: 0, offset: 4096, len: 8192, shared: true, exec: false, populate: false }
        );
    }

    #[test]
    fn touching_or_advising_no_mapping_is_an_error_at_its_step() {
        let e = error(&with_steps("  - touch: {map: 0, order: sequential}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: touch: map 0 is not mapped here"), "{e}");
        assert!(e.contains("add `- mmap: {map: 0}` before this step"), "{e}");
        let e = error(&with_steps("  - mmap: {}\n  - madvise: {map: 2, advice: random}\n", ""));
        assert!(
            e.starts_with("scenarios/t.yaml:14: reads[1]: madvise: map 2 is not mapped here")
                && e.contains("mapped now: 0"),
            "{e}"
        );
        let e = error(&with_steps("  - mmap: {}\n  - munmap: {}\n  - touch: {maps: [0], order: backward}\n", ""));
        assert!(
            e.starts_with("scenarios/t.yaml:15: reads[2]: touch: map 0 is not mapped here")
                && e.contains("or it was unmapped"),
            "{e}"
        );
        let e = error(&with_steps("  - munmap: {map: 3}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: munmap: map 3"), "{e}");
        let e = error(&with_steps("  - mmap: {}\n  - mmap: {}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: mmap: map 0 is still mapped (by reads[0])"), "{e}");
    }

    const TWO_FILES: &str = "\
description: two files
device:
  kind: nvme
  size: 1 GiB
filesystem: xfs
files:
  - {name: a, size: 64 MiB}
  - {name: b, size: 32 MiB, write_size: 256 KiB}
reads:
";

    #[test]
    fn two_files_parse_and_each_step_reads_the_file_it_names() {
        let s = parse(&format!("{TWO_FILES}  - read: {{file: b, offset: 0, size: 4 KiB}}\n  - interleaved: {{files: [a, b], size: 128 KiB}}\n  - sequential: {{file: a, fd: 1, size: 1 MiB}}\n")).unwrap();
        assert_eq!(s.file_names, vec!["a", "b"]);
        assert_eq!(s.file_sizes(), vec![64 << 20, 32 << 20]);
        assert_eq!(s.other_files[0].write_size, 256 << 10);
        let b0 = pattern::fd_of(1, 0);
        assert_eq!(s.steps[0], Step::Read { fd: b0, offset: 0, size: 4096 });
        assert_eq!(s.steps[1], Step::Interleaved { fds: vec![0, b0], size: 128 << 10, starts: vec![0, 0], to: None });
        assert_eq!(s.steps[2], Step::Sequential { fd: 1, from: 0, size: 1 << 20, to: None });
        // Two streams on one file with separate descriptors, one on the other file.
        let s = parse(&format!("{TWO_FILES}  - interleaved: {{files: [a, a, b], starts: [0, 32 MiB, 0], size: 64 KiB, separate_fds: true}}\n")).unwrap();
        assert_eq!(
            s.steps[0],
            Step::Interleaved { fds: vec![0, 1, b0], size: 64 << 10, starts: vec![0, 32 << 20, 0], to: None }
        );
        // One `file:` still works as before, and the image key of a one-file scenario is unchanged by the `files` support.
        assert!(parse(GOOD).unwrap().file_names.is_empty());
    }

    #[test]
    fn a_step_naming_an_unknown_file_or_none_of_several_is_an_error_at_its_step() {
        let e = error(&format!("{TWO_FILES}  - read: {{file: c, offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:10: reads[0]: unknown file `c`; the scenario's files: a, b"), "{e}");
        let e = error(&format!("{TWO_FILES}  - read: {{offset: 0, size: 4 KiB}}\n"));
        assert!(
            e.starts_with("scenarios/t.yaml:10: reads[0]: say which file the step reads: `file:` one of a, b"),
            "{e}"
        );
        // b is 32 MiB: a read at 40 MiB fits a but not b.
        let e = error(&format!("{TWO_FILES}  - read: {{file: b, offset: 40 MiB, size: 4 KiB}}\n"));
        assert!(
            e.starts_with("scenarios/t.yaml:10: reads[0]: a read of 4 KiB at 40 MiB does not fit in the 32 MiB file"),
            "{e}"
        );
        let e = error(&format!("{TWO_FILES}  - interleaved: {{files: [a, b], streams: 3, size: 4 KiB}}\n"));
        assert!(e.contains("`streams` 3 but `files` names 2"), "{e}");
        let e = error(&format!("{TWO_FILES}  - interleaved: {{files: [a, a], size: 4 KiB, starts: [0, 0]}}\n"));
        assert!(e.contains("increasing among the streams of one file"), "{e}");
        let e = error(&with_steps("  - read: {file: a, offset: 0, size: 4 KiB}\n", ""));
        assert!(e.contains("this scenario has one file"), "{e}");
        let e = error(&format!("{TWO_FILES}  - read: {{file: a, fd: 64, offset: 0, size: 4 KiB}}\n"));
        assert!(e.contains("fd 64: a file has descriptors 0 to 63"), "{e}");
    }

    #[test]
    fn files_are_checked_at_their_line() {
        let dup = TWO_FILES.replace("name: b", "name: a");
        let e = error(&format!("{dup}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:8: files[1]: `a` is named twice"), "{e}");
        let bad = TWO_FILES.replace("name: b", "name: b/c");
        let e = error(&format!("{bad}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.starts_with("scenarios/t.yaml:8: files[1]: name `b/c`"), "{e}");
        let big = TWO_FILES.replace("size: 32 MiB", "size: 900 MiB");
        let e = error(&format!("{big}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.contains("too small for 2 files of 964 MiB in all"), "{e}");
        let both = TWO_FILES.replace("files:\n", "file: {size: 1 MiB}\nfiles:\n");
        let e = error(&format!("{both}  - read: {{file: a, offset: 0, size: 4 KiB}}\n"));
        assert!(e.contains("give `file:` (one file) or `files:`"), "{e}");
    }

    #[test]
    fn a_touch_outside_its_mapping_is_an_error_at_its_step() {
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - touch: {order: sequential, to: 2 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: [`from` 0 B, `to` 2 MiB) must be a non-empty range inside the mapping (1 MiB long)"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - touch: {order: sequential, from: 1 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: [`from` 1 MiB, `to` 1 MiB)"), "{e}");
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - mmap: {map: 1, size: 64 KiB}\n  - touch: {maps: [0, 1], order: sequential, to: 128 KiB}\n", ""));
        assert!(
            e.starts_with("scenarios/t.yaml:15: reads[2]: touch:")
                && e.contains("mappings (the shortest) (64 KiB long)"),
            "{e}"
        );
        let e = error(&with_steps("  - mmap: {size: 1 MiB}\n  - touch: {order: sequential, from: 100}\n", ""));
        assert!(e.contains("multiples of 4 KiB"), "{e}");
        let e = error(&with_steps(
            "  - mmap: {size: 1 MiB}\n  - madvise: {advice: willneed, offset: 512 KiB, size: 1 MiB}\n",
            "",
        ));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: madvise: `offset` 512 KiB and `size` 1 MiB (bytes inside map 0) must be multiples of 4 KiB inside its 1 MiB"), "{e}");
    }

    #[test]
    fn an_mmap_past_the_file_or_unaligned_is_an_error_at_its_step() {
        let e = error(&with_steps("  - mmap: {offset: 510 MiB, size: 4 MiB}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: mmap: `size` 4 MiB at 510 MiB must be a multiple of 4 KiB, more than 0, and end inside the 512 MiB file"), "{e}");
        let e = error(&with_steps("  - mmap: {offset: 1000}\n", ""));
        assert!(
            e.starts_with("scenarios/t.yaml:13: reads[0]: mmap: `offset` 1000 B must be a multiple of 4 KiB"),
            "{e}"
        );
        let e = error(&with_steps("  - mmap: {size: 6 KiB}\n", ""));
        assert!(e.contains("`size` 6 KiB at 0 B must be a multiple of 4 KiB"), "{e}");
        let e = error(&with_steps("  - readahead: {offset: 511 MiB, size: 2 MiB}\n", ""));
        assert!(
            e.starts_with("scenarios/t.yaml:13: reads[0]: readahead:") && e.contains("end inside the 512 MiB file"),
            "{e}"
        );
    }

    #[test]
    fn touch_orders_are_checked_at_their_step() {
        let touch = |t: &str| error(&with_steps(&format!("  - mmap: {{size: 1 MiB}}\n  - touch: {t}\n"), ""));
        let e = touch("{pages: [0, 256]}");
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: touch: page 256 of `pages` is out of range: the range has 256 pages (0 to 255)"), "{e}");
        let e = touch("{order: stride, stride: 6 KiB}");
        assert!(
            e.starts_with("scenarios/t.yaml:14: reads[1]: touch: `stride` 6 KiB must be a multiple of 4 KiB"),
            "{e}"
        );
        assert!(touch("{order: stride}").contains("needs `stride:`"));
        assert!(touch("{order: random}").contains("needs `count:`"));
        assert!(touch("{order: sequential, count: 5}").contains("`count` does not go with `order: sequential`"));
        assert!(touch("{order: sequential, pages: [1]}").contains("remove `order:`"));
        assert!(touch("{}").contains("say the `order:`"));
        assert!(touch("{map: 0, maps: [0]}").contains("not both"));
        let e = touch("{order: sideways}");
        assert!(e.starts_with("scenarios/t.yaml:14: ") && e.contains("sideways"), "{e}");
        let e = touch("{order: sequential, stripe: 1}");
        assert!(e.starts_with("scenarios/t.yaml:14: ") && e.contains("unknown field `stripe`"), "{e}");
    }

    #[test]
    fn vm_values_out_of_range_are_errors_at_their_line() {
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  fault_around_bytes: 48 KiB\n"));
        assert!(
            e.starts_with(
                "scenarios/t.yaml:17: vm.fault_around_bytes 48 KiB: must be a power of two from 4 KiB to 2 MiB"
            ),
            "{e}"
        );
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  fault_around_bytes: 4 MiB\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("2 MiB"), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  fault_around_bytes: 2 KiB\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: "), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  thp_enabled: sometimes\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("sometimes") && e.contains("madvise"), "{e}");
        let e = error(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm:\n  swappiness: 1\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("unknown field `swappiness`"), "{e}");
        assert_eq!(
            parse(&with_steps("  - read: {offset: 0, size: 4 KiB}\n", "vm: {fault_around_bytes: 2 MiB}\n"))
                .unwrap()
                .vm
                .fault_around_bytes,
            Some(2 << 20)
        );
    }

    #[test]
    fn mkfs_block_size_is_xfs_only_a_power_of_two_to_64_kib_and_keys_its_own_image() {
        let read = "  - read: {offset: 0, size: 4 KiB}\n";
        let lbs = parse(&with_steps(read, "mkfs:\n  block_size: 16 KiB\n")).unwrap();
        assert_eq!(lbs.block_size, Some(16 << 10));
        let plain = parse(&with_steps(read, "")).unwrap();
        assert_eq!(plain.block_size, None);
        assert_ne!(crate::run::image_key(&lbs), crate::run::image_key(&plain), "another file system, another image");
        for (bad, says) in [("12 KiB", "power of two"), ("128 KiB", "64 KiB"), ("2 KiB", "4 KiB")] {
            let e = error(&with_steps(read, &format!("mkfs:\n  block_size: {bad}\n")));
            assert!(e.starts_with(&format!("scenarios/t.yaml:17: mkfs.block_size {bad}: ")) && e.contains(says), "{e}");
        }
        for (fs, says) in [("ext4", "4 KiB blocks only"), ("f2fs", "F2FS_BLKSIZE")] {
            let e = error(
                &with_steps(read, "mkfs:\n  block_size: 16 KiB\n")
                    .replace("filesystem: xfs", &format!("filesystem: {fs}")),
            );
            assert!(
                e.starts_with("scenarios/t.yaml:17: mkfs.block_size: radiff sets the block size of XFS only")
                    && e.contains(says),
                "{e}"
            );
        }
        let e = error(&with_steps(read, "mkfs:\n  inode_size: 512\n"));
        assert!(e.starts_with("scenarios/t.yaml:17: ") && e.contains("unknown field `inode_size`"), "{e}");
    }

    #[test]
    fn exec_populate_and_populate_read_parse_and_bad_values_are_errors_at_their_step() {
        let s = parse(&with_steps("  - mmap: {map: 0, size: 8 MiB, exec: true, populate: true}\n  - madvise: {map: 0, advice: populate_read}\n  - mmap: {map: 1, size: 8 MiB}\n", "")).unwrap();
        assert_eq!(
            s.steps[0],
            Step::Mmap { map: 0, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: true, populate: true }
        );
        assert_eq!(s.steps[1], Step::Madvise { map: 0, offset: 0, len: 8 << 20, advice: MadvAdvice::PopulateRead });
        assert_eq!(
            s.steps[2],
            Step::Mmap { map: 1, fd: 0, offset: 0, len: 8 << 20, shared: true, exec: false, populate: false },
            "PROT_READ, no MAP_POPULATE by default"
        );
        let e = error(&with_steps("  - mmap: {map: 0, populate: maybe}\n", ""));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0].mmap.populate: ") && e.contains("maybe"), "{e}");
        let e = error(&with_steps("  - mmap: {map: 0}\n  - madvise: {map: 0, advice: populate_write}\n", ""));
        assert!(
            e.starts_with("scenarios/t.yaml:14: reads[1].madvise.advice: unknown variant `populate_write`")
                && e.contains("populate_read"),
            "{e}"
        );
    }

    #[test]
    fn every_scenario_in_the_repository_parses() {
        let scenarios = load_all(&crate::repo_root().join("scenarios")).unwrap();
        assert!(scenarios.len() >= 12);
        for s in &scenarios {
            assert!(!s.description.is_empty());
            let text = std::fs::read_to_string(&s.path).unwrap();
            assert!(
                text.starts_with("# Seed ") || text.starts_with("# Found by `radiff explore") || text.starts_with("# Issue "),
                "{}: say which mail and measurement it reproduces (`# Seed ...`), which search found it (`# Found by `radiff explore ...`), or which issue it shows (`# Issue N: ...`)",
                s.path.display()
            );
        }
    }

    #[test]
    fn fail_alloc_arms_the_following_steps_and_bad_values_are_errors_at_their_line() {
        let s = parse(&with_steps("  - fail_alloc: {times: 3}\n  - read: {offset: 0, size: 4 KiB}\n  - fail_alloc: {times: 0, min_order: 9}\n", "")).unwrap();
        assert_eq!(s.steps[0], Step::FailAlloc { times: 3, min_order: 4 }, "min_order defaults to 4");
        assert_eq!(s.steps[2], Step::FailAlloc { times: 0, min_order: 9 });
        assert_eq!(pattern::expand(&s.steps, s.file_size)[0], radiff_model::Op::FailAlloc { times: 3, min_order: 4 });
        let read = "  - read: {offset: 0, size: 4 KiB}\n";
        let e = error(&with_steps(&format!("{read}  - fail_alloc: {{times: 1, min_order: 3}}\n"), ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: fail_alloc: `min_order` 3 must be from 4 to 9"), "{e}");
        let e = error(&with_steps(&format!("{read}  - fail_alloc: {{times: 1, min_order: 10}}\n"), ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: fail_alloc: `min_order` 10"), "{e}");
        let e = error(&with_steps(&format!("{read}  - fail_alloc: {{times: 100000}}\n"), ""));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: fail_alloc: `times` 100000: at most 4096"), "{e}");
        let e = error(&with_steps(&format!("{read}  - fail_alloc: {{times: 1, order: 4}}\n"), ""));
        assert!(e.starts_with("scenarios/t.yaml:14") && e.contains("unknown field `order`"), "{e}");
        let e = error(&with_steps(&format!("{read}  - fail_alloc: {{times: 1}}\n"), "vm: {thp_enabled: always}\n"));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: fail_alloc with `vm.thp_enabled: always`"), "{e}");
        // Disarming is fine whatever the THP mode.
        parse(&with_steps(&format!("{read}  - fail_alloc: {{times: 0}}\n"), "vm: {thp_enabled: always}\n")).unwrap();
        // 64 KiB blocks (minimum folio order 4) with a mapping: a failed fault is VM_FAULT_OOM.
        let mapped = format!("  - fail_alloc: {{times: 1}}\n{read}  - mmap: {{size: 1 MiB}}\n");
        let e = error(&with_steps(&mapped, "mkfs: {block_size: 64 KiB}\n"));
        assert!(e.starts_with("scenarios/t.yaml:13: reads[0]: fail_alloc `min_order` 4 with the file system's blocks (minimum folio order 4) and a mapping"), "{e}");
        parse(&with_steps(&mapped.replace("times: 1}", "times: 1, min_order: 5}"), "mkfs: {block_size: 64 KiB}\n"))
            .unwrap();
        parse(&with_steps(&mapped, "")).unwrap();
    }

    #[test]
    fn collapse_parses_over_any_page_range_and_refuses_windows_of_several_requests() {
        let steps = "  - mmap: {size: 8 MiB}\n  - madvise: {advice: collapse, offset: 1 MiB, size: 4 MiB}\n";
        let s = parse(&with_steps(steps, "")).unwrap();
        assert_eq!(
            s.steps[1],
            Step::Madvise { map: 0, offset: 1 << 20, len: 4 << 20, advice: MadvAdvice::Collapse },
            "the kernel collapses the aligned 2 MiB inside"
        );
        let e = error(&with_steps(steps, "  read_ahead_kb: [128, 2048]\n"));
        assert!(e.starts_with("scenarios/t.yaml:14: reads[1]: madvise `advice: collapse`: read_ahead_kb 2048 is more than max_sectors_kb 1024") && e.contains("SCAN_PAGE_LOCK"), "{e}");
        let seq = format!("  - fadvise: {{advice: sequential}}\n{steps}");
        parse(&with_steps(&seq, "")).unwrap();
        let e = error(&with_steps(&seq, "  read_ahead_kb: [1024]\n"));
        assert!(
            e.starts_with("scenarios/t.yaml:15: reads[2]: madvise `advice: collapse`: 2 x read_ahead_kb 1024"),
            "{e}"
        );
        let e = error(&with_steps(steps, "").replace("  read_ahead_kb: 128\n", ""));
        assert!(e.contains("set `queue.read_ahead_kb` and `queue.max_sectors_kb`"), "{e}");
        let e = error(&with_steps(&format!("  - fail_alloc: {{times: 1}}\n{steps}"), ""));
        assert!(e.contains("not with `fail_alloc`"), "{e}");
        let e = error(&with_steps(steps, "mkfs: {block_size: 16 KiB}\n"));
        assert!(e.contains("not with `mkfs.block_size` 16 KiB"), "{e}");
        let ufs = with_steps(steps, "")
            .replace("  kind: nvme\n  size: 1 GiB\n  transfer_limit: 2 MiB\n", "  kind: ufs\n  size: 1 GiB\n")
            .replace("matrix:\n  max_sectors_kb: [1024, 2048]\n", "");
        parse(&ufs).unwrap();
        let e = error(&ufs.replace("max_sectors_kb: 512", "max_sectors_kb: 1024"));
        assert!(e.contains("max_sectors_kb 1024 on UFS"), "{e}");
        let e = error(&with_steps(
            "  - mmap: {size: 8 MiB}\n  - madvise: {advice: collapse, offset: 1 KiB, size: 4 MiB}\n",
            "",
        ));
        assert!(e.contains("must be multiples of 4 KiB"), "{e}");
    }
}
