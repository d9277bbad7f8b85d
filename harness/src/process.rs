//! Host processes: the one place that starts them, times them out and kills them.
//!
//! Every long-running child (a kernel build, a VM) runs in its own process group with
//! its output in a log file, so a timeout can kill the whole group and the log survives.

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::error::{tail, Error, Result};

/// How a logged child ended.
#[derive(Debug)]
pub enum Outcome {
    Exited(ExitStatus),
    TimedOut(Duration),
}

/// A command to run: program, arguments, working directory and extra environment.
#[derive(Clone, Debug)]
pub struct Cmd {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub dir: Option<PathBuf>,
    pub env: Vec<(OsString, OsString)>,
    /// A lock's file descriptor the child (and its children) hold too: see [`Cmd::holding`].
    pub hold: Option<std::os::fd::RawFd>,
    /// Run inside bubblewrap, with only these folders writable: see [`Cmd::confined`].
    pub confine: Option<Vec<PathBuf>>,
}

/// git, as radiff runs it everywhere: `git ARGS` (a clone, which names its own paths).
pub fn git() -> Cmd {
    Cmd::new("git")
}

/// git in the repository `dir`: `git -C DIR ARGS`.
pub fn git_in(dir: &Path) -> Cmd {
    git().arg("-C").arg(dir)
}

impl Cmd {
    pub fn new(program: impl Into<OsString>) -> Cmd {
        Cmd { program: program.into(), args: Vec::new(), dir: None, env: Vec::new(), hold: None, confine: None }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Cmd {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Cmd {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Cmd {
        self.dir = Some(dir.into());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Cmd {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The child holds `lock` as well, for as long as it or any process it starts lives:
    /// if radiff dies (SIGKILL) while a build runs, the compilers still running keep the
    /// build directory locked until they have exited, so the next run never builds in
    /// the same directory beside them.
    pub fn holding(mut self, lock: &crate::cache::Lock) -> Cmd {
        self.hold = Some(lock.raw_fd());
        self
    }

    /// Runs the command inside bubblewrap (`bwrap`): no network, the host's files read-only
    /// but `writable` (which must exist), a `/tmp` of its own. For what a patch may have
    /// changed: a kernel tree's Makefiles, Kconfig and scripts run in a build
    /// (docs/trust.md).
    pub fn confined(mut self, writable: &[&Path]) -> Cmd {
        self.confine = Some(writable.iter().map(|p| p.to_path_buf()).collect());
        self
    }

    /// The program and arguments that run: bwrap's, then the command's, when confined.
    fn argv(&self) -> (OsString, Vec<OsString>) {
        let Some(writable) = &self.confine else { return (self.program.clone(), self.args.clone()) };
        let mut args: Vec<OsString> = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
            .into_iter()
            .map(OsString::from)
            .collect();
        // Not --new-session: the command stays in radiff's process group for its timeout.
        args.extend(["--unshare-net", "--unshare-ipc", "--die-with-parent"].map(OsString::from));
        for dir in writable {
            args.extend([OsString::from("--bind"), dir.clone().into(), dir.clone().into()]);
        }
        if let Some(dir) = &self.dir {
            args.extend([OsString::from("--chdir"), dir.clone().into()]);
        }
        args.push("--".into());
        args.push(self.program.clone());
        args.extend(self.args.iter().cloned());
        ("bwrap".into(), args)
    }

    /// The command as a user would type it, for error messages and "rerun with" hints.
    pub fn display(&self) -> String {
        let mut parts = vec![self.program.to_string_lossy().into_owned()];
        parts.extend(self.args.iter().map(|a| shell_quote(&a.to_string_lossy())));
        let cmd = parts.join(" ");
        match &self.dir {
            Some(dir) => format!("(cd {} && {cmd})", dir.display()),
            None => cmd,
        }
    }

    fn expression(&self) -> duct::Expression {
        let (program, args) = self.argv();
        let mut expr = duct::cmd(program, args).unchecked();
        if let Some(dir) = &self.dir {
            expr = expr.dir(dir);
        }
        for (k, v) in &self.env {
            expr = expr.env(k, v);
        }
        expr
    }

    /// Runs to completion and returns stdout; a non-zero exit is an error carrying
    /// stdout and stderr.
    pub fn read(&self) -> Result<String> {
        let output = self
            .expression()
            .stdout_capture()
            .stderr_capture()
            .run()
            .map_err(|err| spawn_error(&self.argv().0, err))?;
        if !output.status.success() {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            return Err(Error::Command {
                command: self.display(),
                status: output.status.to_string(),
                output: tail(&text, 40),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Runs to completion; returns the exit status and stdout+stderr interleaved.
    pub fn output(&self) -> Result<(ExitStatus, String)> {
        let output = self
            .expression()
            .stderr_to_stdout()
            .stdout_capture()
            .run()
            .map_err(|err| spawn_error(&self.argv().0, err))?;
        Ok((output.status, String::from_utf8_lossy(&output.stdout).into_owned()))
    }

    /// Runs with stdout and stderr appended to `log`, in a process group of its own.
    /// `tick` is called about every `period` with the elapsed time; after `timeout` the
    /// whole group is killed.
    pub fn run_logged(
        &self,
        log: &Path,
        timeout: Duration,
        period: Duration,
        tick: impl FnMut(Duration),
    ) -> Result<Outcome> {
        self.run_logged_until(log, timeout, period, tick, || false)
    }

    /// [`Cmd::run_logged`], and once a second asks `done`: when it says yes, the command's
    /// process group is killed and its (killed) exit status returned, for a command that
    /// has finished its work but would not exit by itself.
    pub fn run_logged_until(
        &self,
        log: &Path,
        timeout: Duration,
        period: Duration,
        mut tick: impl FnMut(Duration),
        mut done: impl FnMut() -> bool,
    ) -> Result<Outcome> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(|e| Error::io(log, e))?;
        let hold = self.hold;
        let handle = self
            .expression()
            .stdin_null()
            .stderr_to_stdout()
            .stdout_file(file)
            .before_spawn(move |cmd| {
                cmd.process_group(0);
                // SAFETY: between fork and exec the closure calls only prctl and dup, both
                // async-signal-safe, and allocates nothing.
                unsafe {
                    cmd.pre_exec(move || {
                        // The child dies with radiff (even by SIGKILL) instead of running on
                        // unseen; a SIGINT or SIGTERM also stops its whole group
                        // ([`stop_children_on_signals`]).
                        nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGKILL);
                        if let Some(fd) = hold {
                            // A copy without close-on-exec: the lock is shared with the child.
                            if nix::libc::dup(fd) < 0 {
                                return Err(std::io::Error::last_os_error());
                            }
                        }
                        Ok(())
                    })
                };
                Ok(())
            })
            .start()
            .map_err(|err| spawn_error(&self.argv().0, err))?;
        let pgid = handle.pids()[0] as i32;
        let _running = Running::register(pgid);
        let started = Instant::now();
        let mut next_tick = started + period;
        let mut next_ask = started + Duration::from_secs(1);
        loop {
            if let Some(output) = handle.try_wait().map_err(|e| Error::Spawn {
                action: "wait for",
                command: self.display(),
                source: e,
            })? {
                return Ok(Outcome::Exited(output.status));
            }
            let now = Instant::now();
            if now >= next_ask {
                if done() {
                    kill_group(pgid);
                    let output = handle.wait().map_err(|e| Error::Spawn {
                        action: "wait for",
                        command: self.display(),
                        source: e,
                    })?;
                    return Ok(Outcome::Exited(output.status));
                }
                next_ask = now + Duration::from_secs(1);
            }
            if now.duration_since(started) > timeout {
                kill_group(pgid);
                let _ = handle.wait();
                return Ok(Outcome::TimedOut(timeout));
            }
            if now >= next_tick {
                tick(now.duration_since(started));
                next_tick = now + period;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The process groups of the logged children running now (0: a free slot), for
/// [`stop_children_on_signals`]' handler, which may only read atomics.
static RUNNING: [std::sync::atomic::AtomicI32; 32] = [const { std::sync::atomic::AtomicI32::new(0) }; 32];

/// A child's group in [`RUNNING`] while it runs.
struct Running(Option<usize>);

impl Running {
    fn register(pgid: i32) -> Running {
        use std::sync::atomic::Ordering::SeqCst;
        Running(RUNNING.iter().position(|slot| slot.compare_exchange(0, pgid, SeqCst, SeqCst).is_ok()))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            RUNNING[i].store(0, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

extern "C" fn stop_children(signal: nix::libc::c_int) {
    for slot in &RUNNING {
        let pgid = slot.load(std::sync::atomic::Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill(2) is async-signal-safe.
            unsafe { nix::libc::kill(-pgid, nix::libc::SIGKILL) };
        }
    }
    // End as the signal would have: default action, raised again.
    // SAFETY: signal(2) and raise(3) are async-signal-safe.
    unsafe {
        nix::libc::signal(signal, nix::libc::SIG_DFL);
        nix::libc::raise(signal);
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP stop every logged child (a build's make and its
/// compilers, a VM) before radiff ends: each runs in a process group of its own, which a
/// Ctrl-C on the terminal does not reach. Children are also killed when radiff dies by
/// SIGKILL (`PR_SET_PDEATHSIG`). A half-done build leaves nothing the next run reuses.
pub fn stop_children_on_signals() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(SigHandler::Handler(stop_children), SaFlags::empty(), SigSet::empty());
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only reads atomics and calls async-signal-safe functions.
        let _ = unsafe { sigaction(signal, &action) };
    }
}

fn kill_group(pgid: i32) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
}

fn spawn_error(program: &OsString, err: std::io::Error) -> Error {
    let name = program.to_string_lossy().into_owned();
    if err.kind() == std::io::ErrorKind::NotFound {
        Error::MissingTool { package: package_of(&name).to_string(), tool: name }
    } else {
        Error::Spawn { action: "start", command: name, source: err }
    }
}

/// The Debian package that installs a tool radiff runs.
pub fn package_of(tool: &str) -> &'static str {
    match tool.rsplit('/').next().unwrap_or(tool) {
        "make" => "make",
        "gcc" | "cc" => "gcc",
        "flex" => "flex",
        "bison" => "bison",
        "bc" => "bc",
        "patch" => "patch",
        "bwrap" => "bubblewrap",
        "git" => "git",
        "tar" => "tar",
        "xz" => "xz-utils",
        "cpio" => "cpio",
        "qemu-system-x86_64" => "qemu-system-x86 (from bookworm-backports: QEMU >= 8.2 for UFS)",
        "qemu-img" => "qemu-utils",
        "vng" => "virtme-ng (pip; ./setup installs it into the cache's venv)",
        "mkfs.xfs" | "xfs_io" => "xfsprogs",
        "mkfs.ext4" => "e2fsprogs",
        "mkfs.f2fs" => "f2fs-tools",
        "udevadm" => "udev",
        _ => "(unknown: see ./setup)",
    }
}

/// Fails with a `MissingTool` error naming the package when `tool` is not on PATH.
pub fn require_tool(tool: &str) -> Result<PathBuf> {
    find_in_path(tool)
        .ok_or_else(|| Error::MissingTool { tool: tool.to_string(), package: package_of(tool).to_string() })
}

pub fn find_in_path(tool: &str) -> Option<PathBuf> {
    if tool.contains('/') {
        let p = PathBuf::from(tool);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&crate::settings::get().path).map(|dir| dir.join(tool)).find(|p| p.is_file())
}

/// The last `n` lines of a log file (empty when it cannot be read).
pub fn log_tail(path: &Path, n: usize) -> String {
    let Ok(mut file) = std::fs::File::open(path) else { return String::new() };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(64 * 1024);
    let mut buf = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut buf).is_err() {
        return String::new();
    }
    tail(&String::from_utf8_lossy(&buf), n)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// This program started again as a helper (a hybrid worker, worker/): `/proc/self/exe`,
/// with only `env` for its environment, a pipe on its standard input and output, and its
/// standard error in an unnamed file radiff reads when it stops.
pub struct Helper {
    child: std::process::Child,
    pub to: std::process::ChildStdin,
    pub from: std::process::ChildStdout,
    stderr: std::fs::File,
}

impl Helper {
    pub fn start(env: &[(&str, &std::ffi::OsStr)]) -> std::result::Result<Helper, String> {
        use std::process::{Command, Stdio};
        let stderr = tempfile::tempfile().map_err(|e| format!("a file for its standard error: {e}"))?;
        let err = stderr.try_clone().map_err(|e| e.to_string())?;
        let mut child = Command::new("/proc/self/exe")
            .env_clear()
            .envs(env.iter().copied())
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("/proc/self/exe: {e}"))?;
        let to = child.stdin.take().expect("piped");
        let from = child.stdout.take().expect("piped");
        Ok(Helper { child, to, from, stderr })
    }

    /// Kills the helper and reaps it: the signal that ended it (a helper whose own handler
    /// caught a signal ends with 128 + it; radiff's SIGKILL is not reported), and the last
    /// `lines` of its standard error.
    pub fn stop(&mut self, lines: usize) -> (Option<i32>, String) {
        use std::os::unix::process::ExitStatusExt;
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        let mut text = String::new();
        let _ = self.stderr.seek(SeekFrom::Start(0));
        let _ = (&self.stderr).take(1 << 20).read_to_string(&mut text);
        let signal = status.and_then(|s| s.signal().or(s.code().filter(|c| (129..160).contains(c)).map(|c| c - 128)));
        (signal.filter(|&s| s != libc::SIGKILL), tail(&text, lines))
    }
}
