//! The hybrid's C in worker processes: a tree's compiled object is loaded only in a child
//! of radiff, confined before it loads (rlimits, seccomp: its pipe, memory and exit), which
//! runs the hybrid model on each input it reads and writes back the trace. A crash, a loop
//! or a forbidden system call ends the worker, never radiff (docs/trust.md).
//!
//! The worker is the running program itself (`/proc/self/exe`: radiff, or a test binary
//! that links this library), started with [`ENV_SO`] set: a hook in `.init_array` sees it
//! before `main` and serves instead, so the worker always runs the same model as radiff.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use radiff_model::hybrid::Crash;
use radiff_model::{Coverage, Input, ModelConfig, Policy, Trace};
use serde::{Deserialize, Serialize};

/// The object a worker loads; set only in the worker's environment.
pub const ENV_SO: &str = "RADIFF_HYBRID_WORKER_SO";
/// The limit on one call into the C, in milliseconds, for the worker's watchdog.
const ENV_LIMIT_MS: &str = "RADIFF_HYBRID_WORKER_LIMIT_MS";

/// The worker's address space: the model's largest scenarios use a few hundred MiB.
const MEMORY_LIMIT: u64 = 4 << 30;
/// What the worker may write to its standard error (a file radiff reads when it dies).
const STDERR_LIMIT: u64 = 1 << 20;
/// The largest reply radiff reads.
const REPLY_LIMIT: usize = 1 << 30;
/// How long radiff waits for a reply beyond the worker's own limit on one call into the C:
/// a worker that neither answers nor dies by then is killed.
const BACKSTOP: Duration = Duration::from_secs(30);

/// What a worker says once it has loaded the object and confined itself.
#[derive(Serialize, Deserialize)]
struct Hello {
    /// The kernel functions the object defines that the model calls, in the model's order.
    functions: Vec<String>,
}

/// One prediction asked of a worker.
#[derive(Serialize, Deserialize)]
struct Request {
    input: Input,
    policy: Policy,
    config: ModelConfig,
}

/// A worker's answer.
#[derive(Serialize, Deserialize)]
struct Reply {
    trace: Trace,
    /// Indexes of the model's branches taken.
    coverage: Vec<usize>,
    crash: Option<WireCrash>,
    /// The worker's CPU time for this prediction, in nanoseconds.
    cpu_ns: u64,
}

#[derive(Serialize, Deserialize)]
struct WireCrash {
    function: String,
    signal: i32,
    bug: Option<(String, i32)>,
    op: Option<usize>,
    syscall: Option<i64>,
}

/// What a worker predicted: the hybrid's trace (up to a crash), the Rust model's branches,
/// and the crash, if the C crashed or the worker died.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub trace: Trace,
    pub coverage: Coverage,
    pub crash: Option<Crash>,
    /// The worker's CPU time for the prediction (radiff's own is not in it).
    pub cpu: Duration,
}

/// The workers of one compiled object: one per thread that predicts at once, each kept for
/// many predictions; a worker whose C crashed is not used again.
pub struct Workers {
    so: PathBuf,
    idle: Mutex<Vec<Worker>>,
    functions: std::sync::OnceLock<Vec<String>>,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers").field("so", &self.so).finish_non_exhaustive()
    }
}

impl Workers {
    /// Workers for the object `so` (none started until the first prediction).
    pub fn new(so: &Path) -> Workers {
        Workers { so: so.to_path_buf(), idle: Mutex::new(Vec::new()), functions: Default::default() }
    }

    /// The kernel functions the object defines that the model calls as C, as a worker that
    /// loaded it says (one is started if none has been); why not, when none starts.
    pub fn functions(&self) -> Result<Vec<String>, String> {
        if self.functions.get().is_none() {
            let w = self.start()?;
            self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(w);
        }
        Ok(self.functions.get().cloned().unwrap_or_default())
    }

    fn start(&self) -> Result<Worker, String> {
        let (w, hello) = Worker::start(&self.so)?;
        let _ = self.functions.set(hello.functions);
        Ok(w)
    }

    /// The object the workers load.
    pub fn object(&self) -> &Path {
        &self.so
    }

    /// The hybrid's prediction of `input` in a worker.
    pub fn run(&self, input: &Input, policy: &Policy, config: &ModelConfig) -> Outcome {
        let request = serde_json::to_vec(&Request { input: input.clone(), policy: *policy, config: *config })
            .expect("a model input serialises");
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut worker = match idle {
            Some(w) => w,
            None => match self.start() {
                Ok(w) => w,
                Err(why) => return died(format!("did not start: {why}"), None),
            },
        };
        match worker.ask(&request) {
            Ok(reply) => {
                let crashed = reply.crash.is_some();
                let outcome = outcome(reply);
                if crashed {
                    // The C's state after a crash is not to be trusted: a new worker next time.
                    worker.stop();
                } else {
                    self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(worker);
                }
                outcome
            }
            Err(why) => {
                let (signal, tail) = worker.stop();
                died(format!("{why}{tail}"), signal)
            }
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for mut w in self.idle.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
            w.stop();
        }
    }
}

pub use radiff_model::hybrid::WORKER;

fn died(why: String, signal: Option<i32>) -> Outcome {
    Outcome {
        trace: Trace::default(),
        coverage: Coverage::default(),
        crash: Some(Crash { function: WORKER, signal: signal.unwrap_or(0), bug: None, op: None, note: Some(why) }),
        cpu: Duration::ZERO,
    }
}

fn outcome(reply: Reply) -> Outcome {
    let mut coverage = Coverage::default();
    for i in reply.coverage.into_iter().filter(|&i| i < radiff_model::BRANCHES.len()) {
        coverage.hit(i);
    }
    let crash = reply.crash.map(|c| {
        // The name as the model's table has it (a static string); anything else is the worker's.
        let function = radiff_model::hybrid::functions::runs_as_c_named(&c.function).map_or(WORKER, |f| f.name);
        let note = c.syscall.map(|nr| {
            format!(
                "the C made a system call ({}), which radiff's worker forbids: the call was not made and the worker was stopped",
                super::seccomp::syscall_name(nr)
            )
        });
        Crash { function, signal: c.signal, bug: c.bug, op: c.op, note }
    });
    Outcome { trace: reply.trace, coverage, crash, cpu: Duration::from_nanos(reply.cpu_ns) }
}

/// One worker process and its pipe.
struct Worker {
    child: Child,
    to: std::process::ChildStdin,
    from: std::process::ChildStdout,
    stderr: std::fs::File,
}

impl Worker {
    /// Starts a worker on `so` and waits for its hello.
    fn start(so: &Path) -> Result<(Worker, Hello), String> {
        // The hook must be linked into this program for its copy to serve.
        std::hint::black_box(&WORKER_HOOK);
        let stderr = tempfile::tempfile().map_err(|e| format!("a file for its standard error: {e}"))?;
        let err = stderr.try_clone().map_err(|e| e.to_string())?;
        let mut child = Command::new("/proc/self/exe")
            .env_clear()
            .env(ENV_SO, so)
            .env(ENV_LIMIT_MS, super::watchdog::call_limit().as_millis().to_string())
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("/proc/self/exe: {e}"))?;
        let to = child.stdin.take().expect("piped");
        let from = child.stdout.take().expect("piped");
        for fd in [to.as_raw_fd(), from.as_raw_fd()] {
            // SAFETY: fcntl on a descriptor this process owns.
            unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK) };
        }
        let mut w = Worker { child, to, from, stderr };
        let deadline = Instant::now() + BACKSTOP;
        match w.receive(deadline) {
            Ok(hello) => Ok((w, hello)),
            Err(why) => {
                let (signal, tail) = w.stop();
                let signal = signal.map_or(String::new(), |s| format!(" (signal {s})"));
                Err(format!("the worker on {} {why}{signal}{tail}", so.display()))
            }
        }
    }

    fn ask(&mut self, request: &[u8]) -> Result<Reply, String> {
        let deadline = Instant::now() + BACKSTOP + super::watchdog::call_limit();
        let mut framed = (request.len() as u32).to_le_bytes().to_vec();
        framed.extend_from_slice(request);
        io_until(self.to.as_raw_fd(), libc::POLLOUT, deadline, &mut Io::Write(&framed))?;
        self.receive(deadline)
    }

    /// One frame from the worker: its length, then its JSON.
    fn receive<T: serde::de::DeserializeOwned>(&mut self, deadline: Instant) -> Result<T, String> {
        let mut len = [0u8; 4];
        io_until(self.from.as_raw_fd(), libc::POLLIN, deadline, &mut Io::Read(&mut len))?;
        let len = u32::from_le_bytes(len) as usize;
        if len > REPLY_LIMIT {
            return Err(format!("answered with {len} bytes, more than radiff reads"));
        }
        let mut body = vec![0u8; len];
        io_until(self.from.as_raw_fd(), libc::POLLIN, deadline, &mut Io::Read(&mut body))?;
        serde_json::from_slice(&body).map_err(|e| format!("answered what radiff cannot read: {e}"))
    }

    /// Ends the worker and reaps it: the signal that ended it, if one did, and the tail of
    /// what it wrote to its standard error.
    fn stop(&mut self) -> (Option<i32>, String) {
        use std::os::unix::process::ExitStatusExt;
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        let mut text = String::new();
        let _ = std::io::Seek::rewind(&mut self.stderr);
        let _ = (&self.stderr).take(STDERR_LIMIT).read_to_string(&mut text);
        let tail: Vec<&str> = text.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        let tail = if tail.is_empty() { String::new() } else { format!("; it said: {}", tail.join(" | ")) };
        // A signal the worker's handler caught outside the C ends it with 128 + the signal.
        let signal = status.and_then(|s| s.signal().or(s.code().filter(|c| (129..160).contains(c)).map(|c| c - 128)));
        (signal.filter(|&s| s != libc::SIGKILL), tail)
    }
}

enum Io<'a> {
    Write(&'a [u8]),
    Read(&'a mut [u8]),
}

/// Writes or reads all of `io` on the non-blocking `fd` by `deadline`.
fn io_until(fd: RawFd, events: libc::c_short, deadline: Instant, io: &mut Io) -> Result<(), String> {
    let mut done = 0;
    let total = match io {
        Io::Write(b) => b.len(),
        Io::Read(b) => b.len(),
    };
    while done < total {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "did not answer within {} s and was killed",
                (BACKSTOP + super::watchdog::call_limit()).as_secs()
            ));
        }
        let mut p = libc::pollfd { fd, events, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("poll: {}", std::io::Error::last_os_error()));
        }
        if r <= 0 {
            continue;
        }
        // SAFETY: reads into / writes from the live buffer's remaining part.
        let n = unsafe {
            match io {
                Io::Write(b) => libc::write(fd, b[done..].as_ptr().cast(), total - done),
                Io::Read(b) => libc::read(fd, b[done..].as_mut_ptr().cast(), total - done),
            }
        };
        match n {
            0 => return Err("ended without answering".into()),
            n if n < 0 => {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => {}
                    std::io::ErrorKind::BrokenPipe => return Err("ended without answering".into()),
                    _ => return Err(e.to_string()),
                }
            }
            n => done += n as usize,
        }
    }
    Ok(())
}

// --- the worker's side --------------------------------------------------------------------

/// Runs before `main` in every program that links this module: serves as a worker when
/// [`ENV_SO`] is set, else does nothing.
#[used]
#[link_section = ".init_array"]
static WORKER_HOOK: extern "C" fn() = hook;

extern "C" fn hook() {
    if let Some(so) = std::env::var_os(ENV_SO) {
        let code = match serve(Path::new(&so)) {
            Ok(()) => 0,
            Err(why) => {
                let _ = writeln!(std::io::stderr(), "radiff's hybrid worker: {why}");
                3
            }
        };
        // SAFETY: ends the process without running anything of the program's main.
        unsafe { libc::_exit(code) };
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) {
    let r = libc::rlimit { rlim_cur: value, rlim_max: value };
    // SAFETY: a valid resource and limit.
    unsafe { libc::setrlimit(resource, &r) };
}

/// The worker: confined, loads `so`, then answers requests on standard input until it ends.
fn serve(so: &Path) -> Result<(), String> {
    set_limit(libc::RLIMIT_AS, MEMORY_LIMIT);
    set_limit(libc::RLIMIT_CORE, 0);
    set_limit(libc::RLIMIT_FSIZE, STDERR_LIMIT);
    // SAFETY: closes every descriptor but the pipe and standard error.
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if let Some(ms) = std::env::var(ENV_LIMIT_MS).ok().and_then(|v| v.parse().ok()) {
        super::watchdog::set_call_limit(Duration::from_millis(ms));
    }
    // What needs the calls the filters take away: the crash handler and the watchdog.
    super::load::install_crash_handler();
    super::watchdog::start();
    super::seccomp::loading().install().map_err(|e| format!("seccomp (loading): {e}"))?;
    let loaded = super::load::Loaded::open(so).map_err(|e| e.to_string())?;
    let c = loaded.table(None).map_err(|e| e.to_string())?;
    super::seccomp::serving().install().map_err(|e| format!("seccomp (serving): {e}"))?;
    // SAFETY: the pipe's two ends, owned by this process for its life: never closed (the
    // filter has no close, nor debug builds' fcntl check of a descriptor being closed).
    let (mut input, mut output) = unsafe {
        (
            std::mem::ManuallyDrop::new(std::fs::File::from_raw_fd(0)),
            std::mem::ManuallyDrop::new(std::fs::File::from_raw_fd(1)),
        )
    };
    let send = |output: &mut std::mem::ManuallyDrop<std::fs::File>, body: Vec<u8>| -> Result<(), String> {
        output.write_all(&(body.len() as u32).to_le_bytes()).map_err(|e| e.to_string())?;
        output.write_all(&body).map_err(|e| e.to_string())
    };
    let hello = Hello { functions: c.functions().into_iter().map(str::to_string).collect() };
    send(&mut output, serde_json::to_vec(&hello).map_err(|e| e.to_string())?)?;
    loop {
        let mut len = [0u8; 4];
        match input.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(format!("reading a request: {e}")),
        }
        let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
        input.read_exact(&mut body).map_err(|e| format!("reading a request: {e}"))?;
        let request: Request = serde_json::from_slice(&body).map_err(|e| format!("a request: {e}"))?;
        let t = thread_cpu();
        let (trace, coverage, crash) =
            radiff_model::coverage_hybrid(&request.input, &request.policy, &request.config, &c);
        let cpu_ns = (thread_cpu() - t).as_nanos() as u64;
        let crashed = crash.is_some();
        let reply = Reply {
            trace,
            coverage: coverage.indexes().collect(),
            crash: crash.map(|c| WireCrash {
                function: c.function.to_string(),
                signal: c.signal,
                bug: c.bug,
                op: c.op,
                syscall: (c.signal == libc::SIGSYS).then(super::load::last_forbidden_syscall),
            }),
            cpu_ns,
        };
        send(&mut output, serde_json::to_vec(&reply).map_err(|e| e.to_string())?)?;
        if crashed {
            // What the C left behind is not to be trusted: radiff starts another worker.
            return Ok(());
        }
    }
}

/// The CPU time this thread has used.
pub fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
