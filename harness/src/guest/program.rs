//! Program steps in the guest: the program run with the kernel's syscall tracepoints on,
//! recorded in a trace instance of their own (`calls.txt`, read by [`crate::calls`]).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::sysfs::write_file;
use super::GResult;
use crate::wire::Program;

/// The trace instance the calls go to: apart from the main trace, whose lines carry no
/// task, and whose snapshots stay as they were.
const INSTANCE: &str = "instances/radiff-calls";

/// The instance of the syscall tracepoints, set up and off.
pub(super) struct Calls {
    dir: PathBuf,
}

impl Calls {
    /// Makes (or empties) the instance, with every call of [`crate::calls::CALLS`] at entry
    /// and exit, forks, the page faults ([`crate::calls::FAULT_EVENTS`]) and the block
    /// requests' issue and completion of every task, the task's thread group id on each
    /// line, and the global clock (lines of two CPUs in the order they happened: a fault
    /// after a completion on the other CPU). Tracing stays off until [`Calls::run`].
    pub(super) fn setup(tracing: &Path, buffer_kb: u64) -> GResult<Calls> {
        let dir = tracing.join(INSTANCE);
        if !dir.exists() {
            std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        write_file(&dir.join("tracing_on"), "0")?;
        write_file(&dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
        write_file(&dir.join("trace_clock"), "global")?;
        write_file(&dir.join("trace"), "")?;
        write_file(&dir.join("options/record-tgid"), "1")?;
        write_file(&dir.join("set_event"), "")?;
        let mut events: Vec<String> = vec!["sched:sched_process_fork".into()];
        for call in crate::calls::CALLS {
            events.push(format!("syscalls:sys_enter_{call}"));
            events.push(format!("syscalls:sys_exit_{call}"));
        }
        events.extend(crate::calls::FAULT_EVENTS.iter().map(|e| e.to_string()));
        // The readahead calls with their tasks, for the check of each decision where the
        // tasks' calls overlap (crate::calls::ra).
        // None on a kernel without them (crate::kernels::Tracing::Flat).
        if super::tracing::has_windows(tracing) {
            events.extend(super::EVENTS.iter().filter(|e| e.starts_with("readahead:")).map(|e| e.to_string()));
        }
        events.push("filemap:mm_filemap_add_to_page_cache".into());
        events.push("filemap:mm_filemap_delete_from_page_cache".into());
        for event in &events {
            std::fs::OpenOptions::new()
                .append(true)
                .open(dir.join("set_event"))
                .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{event}\n").as_bytes()))
                .map_err(|e| {
                    format!("enabling {event}: {e} (is CONFIG_FTRACE_SYSCALLS set? see kernels/config.fragment)")
                })?;
        }
        Ok(Calls { dir })
    }

    /// Runs program `n` with its calls traced: every task's (the block completions come in
    /// whichever task the interrupt finds; [`crate::calls`] keeps the program's, its
    /// threads' and its children's), markers around it naming the program's pid. Its output goes to `program-N.out`/`.err` in `out`. A
    /// program still running after `timeout` is killed.
    pub(super) fn run(&self, out: &Path, n: u32, program: &Program, timeout: Duration) -> GResult<()> {
        let mut argv = program.argv.clone();
        if let Some(job) = &program.job {
            let path = out.join(format!("program-{n}.fio"));
            std::fs::write(&path, job).map_err(|e| format!("{}: {e}", path.display()))?;
            for a in argv.iter_mut().filter(|a| a.as_str() == "{job}") {
                *a = path.display().to_string();
            }
        }
        let (out_path, err_path) = (out.join(format!("program-{n}.out")), out.join(format!("program-{n}.err")));
        let stdout = File::create(&out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
        let stderr = File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
        self.mark(&format!("radiff program {n} start"))?;
        write_file(&self.dir.join("tracing_on"), "1")?;
        let spawned = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(out)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                write_file(&self.dir.join("tracing_on"), "0")?;
                return Err(not_started(&argv[0], &e));
            }
        };
        let pid = child.id();
        let status = wait_or_kill(&mut child, timeout).map_err(|e| format!("waiting for `{}`: {e}", argv[0]));
        write_file(&self.dir.join("tracing_on"), "0")?;
        self.mark(&format!("radiff program {n} pid {pid} end"))?;
        outcome(&program.label, status?, timeout, &err_path)
    }

    /// A line in the instance's trace (tracing on or off).
    fn mark(&self, text: &str) -> GResult<()> {
        let on = std::fs::read_to_string(self.dir.join("tracing_on")).unwrap_or_default();
        write_file(&self.dir.join("tracing_on"), "1")?;
        let marked = write_file(&self.dir.join("trace_marker"), text);
        write_file(&self.dir.join("tracing_on"), on.trim())?;
        marked
    }

    /// Copies the instance's trace to `to` (with each line's task, pid and tgid) and
    /// refuses a ring buffer that lost events.
    pub(super) fn save(&self, to: &Path) -> GResult<()> {
        let (_, overrun, dropped) = super::tracing::ring_stats(&self.dir)?;
        let from = self.dir.join("trace");
        let mut text = String::new();
        File::open(&from)
            .and_then(|mut f| f.read_to_string(&mut text))
            .map_err(|e| format!("{}: {e}", from.display()))?;
        std::fs::write(to, text).map_err(|e| format!("{}: {e}", to.display()))?;
        if overrun > 0 || dropped > 0 {
            return Err(format!("the programs' calls overflowed their trace buffer (overrun {overrun}, dropped {dropped}): raise `trace_buffer_kb`"));
        }
        Ok(())
    }
}

/// Why a program did not start: for one the guest cannot find, its name and the Debian
/// package that has it.
fn not_started(name: &str, e: &std::io::Error) -> String {
    if e.kind() != std::io::ErrorKind::NotFound {
        return format!("program `{name}` did not start: {e}");
    }
    let package = match Path::new(name).file_name().and_then(|n| n.to_str()).unwrap_or(name) {
        "fio" => "fio".to_string(),
        "dd" | "cat" | "cp" | "head" | "tail" | "sha256sum" | "md5sum" => "coreutils".to_string(),
        "python3" => "python3".to_string(),
        "xfs_io" => "xfsprogs".to_string(),
        "strace" => "strace".to_string(),
        "vmtouch" => "vmtouch".to_string(),
        other => {
            return format!(
                "program `{name}` not found in the guest, which runs the host's root file system: install it on the host (its Debian package is the one `dpkg -S bin/{other}` or `apt-file search bin/{other}` names), or give its absolute path in `argv`"
            )
        }
    };
    format!(
        "program `{name}` not found in the guest, which runs the host's root file system: install it on the host (Debian package: {package}; `apt-get install {package}`)"
    )
}

/// Waits for `child` until `timeout`, then kills it: its exit status, `None` if killed.
fn wait_or_kill(child: &mut std::process::Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A program's end as the run's result: success, or an error with its exit status (or
/// the timeout that killed it) and the end of its stderr (`err`).
fn outcome(label: &str, status: Option<ExitStatus>, timeout: Duration, err: &Path) -> GResult<()> {
    let tail = tail_of(err, 10);
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(format!("{label}: exited with {s}; the end of its stderr:\n{tail}")),
        None => Err(format!(
            "{label}: still running after {} s (3/4 of the scenario's timeout, `timeout_s`): killed; the end of its stderr:\n{tail}",
            timeout.as_secs_f64()
        )),
    }
}

/// The last `n` lines of a file, or a note that it is empty or unreadable.
fn tail_of(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return "  (empty)".into();
    }
    lines[lines.len().saturating_sub(n)..].iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_names_itself_and_its_package() {
        let e = std::io::Error::from(std::io::ErrorKind::NotFound);
        let m = not_started("fio", &e);
        assert!(m.contains("`fio` not found") && m.contains("apt-get install fio"), "{m}");
        let m = not_started("frobnicate", &e);
        assert!(m.contains("dpkg -S bin/frobnicate"), "{m}");
    }

    #[test]
    fn a_missing_program_found_by_running_it() {
        let program = Program {
            argv: vec!["radiff-no-such-program".into()],
            job: None,
            label: "program: x".into(),
            at: String::new(),
        };
        let spawned = Command::new(&program.argv[0]).spawn();
        let m = not_started(&program.argv[0], &spawned.unwrap_err());
        assert!(m.contains("`radiff-no-such-program` not found"), "{m}");
    }

    fn run_sh(script: &str, timeout: Duration) -> String {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("err");
        let stderr = File::create(&err).unwrap();
        let mut child = Command::new("sh").args(["-c", script]).stderr(stderr).spawn().unwrap();
        let status = wait_or_kill(&mut child, timeout).unwrap();
        match outcome("program: sh", status, timeout, &err) {
            Ok(()) => "ok".into(),
            Err(e) => e,
        }
    }

    #[test]
    fn a_failing_program_gives_its_exit_status_and_the_end_of_its_stderr() {
        let e = run_sh("echo first >&2; echo boom >&2; exit 3", Duration::from_secs(10));
        assert!(e.starts_with("program: sh: exited with exit status: 3;"), "{e}");
        assert!(e.ends_with("  first\n  boom"), "{e}");
        assert_eq!(run_sh("true", Duration::from_secs(10)), "ok");
    }

    #[test]
    fn a_program_past_its_timeout_is_killed_and_said_so() {
        let started = Instant::now();
        let e = run_sh("echo waiting >&2; sleep 30", Duration::from_millis(300));
        assert!(started.elapsed() < Duration::from_secs(10), "killed, not waited for");
        assert!(e.contains("still running after 0.3 s") && e.contains("killed") && e.contains("  waiting"), "{e}");
    }
}
