//! The hybrid's C in worker processes (a room of its own, below the hybrid and the model
//! check that use it): a tree's compiled object is loaded only in a child
//! of radiff, confined before it loads (rlimits, seccomp: its pipe, memory and exit), which
//! runs the hybrid model on each input it reads and writes back the trace. A crash, a loop
//! or a forbidden system call ends the worker, never radiff (docs/trust.md).
//!
//! The worker is the running program itself (`/proc/self/exe`: radiff, or a test binary
//! that links this library), started with [`ENV_SO`] set: a hook in `.init_array` sees it
//! before `main` and serves instead, so the worker always runs the same model as radiff.

pub mod codec;
pub mod load;
pub mod seccomp;
pub mod symbols;
pub mod watchdog;

use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use radiff_model::hybrid::Crash;
use radiff_model::{Coverage, Input, ModelConfig, Policy, Trace};
use serde::{Deserialize, Serialize};

use crate::process::Helper;
use crate::settings::{ENV_WORKER_LIMIT_MS, ENV_WORKER_ONLY, ENV_WORKER_SO};

/// The worker's address space: the model's largest scenarios use a few hundred MiB.
const MEMORY_LIMIT: u64 = 4 << 30;
/// What the worker may write to its standard error (a file radiff reads when it dies).
const STDERR_LIMIT: u64 = 1 << 20;
/// The lines of its standard error a worker that died is reported with.
const STDERR_LINES: usize = 5;
/// The size radiff asks for each of a worker's pipes.
const PIPE_SIZE: libc::c_int = 1 << 20;
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

/// One prediction asked of a worker: this as JSON (its input without the operations),
/// then the operations' bytes (codec.rs).
#[derive(Serialize, Deserialize)]
struct Request {
    input: Input,
    policy: Policy,
    config: ModelConfig,
    /// Whether the Rust model's branches are wanted (recording them costs a fifth more).
    coverage: bool,
}

/// A worker's answer: this as JSON, then the trace (codec.rs).
#[derive(Serialize, Deserialize)]
struct Reply {
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
    /// The functions the workers run as C, when not all the object has.
    only: Option<Vec<String>>,
    idle: Mutex<Vec<Worker>>,
    functions: std::sync::OnceLock<Vec<String>>,
    boundary: Mutex<Boundary>,
    /// The folio limits the tree gives each file system's files where they are not the
    /// port's ([`crate::hybrid::mapping`]): an input on that file system is given them.
    mappings: Vec<(radiff_model::FsKind, radiff_model::MappingLimits)>,
}

/// What the process boundary costs the predictions asked of some [`Workers`]: radiff's
/// wall time from sending each to holding its trace, and the workers' own CPU time for
/// predicting them (the rest of the wall time is the boundary: the input and the trace
/// made into bytes and back, the pipe, the wake-ups).
#[derive(Clone, Copy, Debug, Default)]
pub struct Boundary {
    pub wall: Duration,
    pub predicting: Duration,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers").field("so", &self.so).finish_non_exhaustive()
    }
}

impl Workers {
    /// Workers for the object `so` (none started until the first prediction).
    pub fn new(so: &Path) -> Workers {
        Workers::running(so, None)
    }

    /// Workers for the same object that run only `functions` of it as C (the model's Rust
    /// port for the others).
    pub fn only(&self, functions: Vec<String>) -> Workers {
        Workers::running(&self.so, Some(functions)).with_mappings(self.mappings.clone())
    }

    /// These workers, giving an input on each file system of `mappings` its limits.
    pub fn with_mappings(mut self, mappings: Vec<(radiff_model::FsKind, radiff_model::MappingLimits)>) -> Workers {
        self.mappings = mappings;
        self
    }

    fn running(so: &Path, only: Option<Vec<String>>) -> Workers {
        Workers {
            so: so.to_path_buf(),
            only,
            idle: Mutex::new(Vec::new()),
            functions: Default::default(),
            boundary: Default::default(),
            mappings: Vec::new(),
        }
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
        let (w, hello) = Worker::start(&self.so, self.only.as_deref())?;
        let _ = self.functions.set(hello.functions);
        Ok(w)
    }

    /// The hybrid's prediction of `input` in a worker, with the Rust model's branches.
    pub fn run(&self, input: &Input, policy: &Policy, config: &ModelConfig) -> Outcome {
        self.ask(input, policy, config, true)
    }

    /// The hybrid's prediction of `input` in a worker, without the branches (an empty
    /// [`Outcome::coverage`]).
    pub fn predict(&self, input: &Input, policy: &Policy, config: &ModelConfig) -> Outcome {
        self.ask(input, policy, config, false)
    }

    /// What the boundary has cost the predictions asked so far.
    pub fn boundary(&self) -> Boundary {
        *self.boundary.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ask(&self, input: &Input, policy: &Policy, config: &ModelConfig, coverage: bool) -> Outcome {
        let started = Instant::now();
        let outcome = self.ask_worker(input, policy, config, coverage);
        let mut b = self.boundary.lock().unwrap_or_else(|e| e.into_inner());
        b.wall += started.elapsed();
        b.predicting += outcome.cpu;
        outcome
    }

    fn ask_worker(&self, input: &Input, policy: &Policy, config: &ModelConfig, coverage: bool) -> Outcome {
        let mut rest = codec::without_ops(input);
        if let Some((_, limits)) = self.mappings.iter().find(|(fs, _)| *fs == input.fs) {
            rest.mapping = *limits;
        }
        let head = Request { input: rest, policy: *policy, config: *config, coverage };
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut worker = match idle {
            Some(w) => w,
            None => match self.start() {
                Ok(w) => w,
                Err(why) => return died(format!("did not start: {why}"), None),
            },
        };
        match worker.ask(&head, &input.ops) {
            Ok((reply, trace)) => {
                let crashed = reply.crash.is_some();
                let outcome = outcome(reply, trace);
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

fn outcome(reply: Reply, trace: Trace) -> Outcome {
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
                seccomp::syscall_name(nr)
            )
        });
        Crash { function, signal: c.signal, bug: c.bug, op: c.op, note }
    });
    Outcome { trace, coverage, crash, cpu: Duration::from_nanos(reply.cpu_ns) }
}

/// One worker process and its pipe.
struct Worker {
    /// What is sent and received, kept: a trace is often megabytes, and a buffer made anew
    /// each time costs the page faults of zeroing it.
    buf: Vec<u8>,
    helper: Helper,
}

impl Worker {
    /// Starts a worker on `so` and waits for its hello.
    fn start(so: &Path, only: Option<&[String]>) -> Result<(Worker, Hello), String> {
        // The hook must be linked into this program for its copy to serve.
        std::hint::black_box(&WORKER_HOOK);
        let limit = watchdog::call_limit().as_millis().to_string();
        let mut env = vec![(ENV_WORKER_SO, so.as_os_str()), (ENV_WORKER_LIMIT_MS, limit.as_ref())];
        let only = only.map(|o| o.join(","));
        if let Some(o) = &only {
            env.push((ENV_WORKER_ONLY, o.as_ref()));
        }
        let helper = Helper::start(&env)?;
        for fd in [helper.to.as_raw_fd(), helper.from.as_raw_fd()] {
            // SAFETY: fcntl on a descriptor this process owns. A pipe of 1 MiB (the
            // default most a user may ask) holds a large trace in one go, where 64 KiB
            // made the two processes take turns a dozen times for it.
            unsafe {
                libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK);
                libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_SIZE);
            }
        }
        let mut w = Worker { buf: Vec::new(), helper };
        let deadline = Instant::now() + BACKSTOP;
        let hello = w
            .receive(deadline)
            .and_then(|()| serde_json::from_slice(&w.buf).map_err(|e| format!("said what radiff cannot read: {e}")));
        match hello {
            Ok(hello) => Ok((w, hello)),
            Err(why) => {
                let (signal, tail) = w.stop();
                let signal = signal.map_or(String::new(), |s| format!(" (signal {s})"));
                Err(format!("the worker on {} {why}{signal}{tail}", so.display()))
            }
        }
    }

    /// Sends the request (its JSON head, then the operations' bytes, each a frame) and reads
    /// the reply and the trace.
    fn ask(&mut self, head: &Request, ops: &[radiff_model::Op]) -> Result<(Reply, Trace), String> {
        let deadline = Instant::now() + BACKSTOP + watchdog::call_limit();
        self.buf.clear();
        frame(&mut self.buf, |b| serde_json::to_writer(b, head).expect("a model input serialises"));
        frame(&mut self.buf, |b| b.extend_from_slice(codec::ops_bytes(ops)));
        io_until(self.helper.to.as_raw_fd(), libc::POLLOUT, deadline, &mut Io::Write(&self.buf))?;
        self.receive(deadline)?;
        let reply: Reply =
            serde_json::from_slice(&self.buf).map_err(|e| format!("answered what radiff cannot read: {e}"))?;
        self.receive(deadline)?;
        let trace = codec::decode_trace(&self.buf).map_err(|e| format!("answered what radiff cannot read: {e}"))?;
        Ok((reply, trace))
    }

    /// One frame from the worker, its length then its bytes, into [`Worker::buf`].
    fn receive(&mut self, deadline: Instant) -> Result<(), String> {
        let mut len = [0u8; 4];
        io_until(self.helper.from.as_raw_fd(), libc::POLLIN, deadline, &mut Io::Read(&mut len))?;
        let len = u32::from_le_bytes(len) as usize;
        if len > REPLY_LIMIT {
            return Err(format!("answered with {len} bytes, more than radiff reads"));
        }
        self.buf.resize(len, 0);
        io_until(self.helper.from.as_raw_fd(), libc::POLLIN, deadline, &mut Io::Read(&mut self.buf))
    }

    /// Ends the worker and reaps it: the signal that ended it, if one did, and the tail of
    /// what it wrote to its standard error.
    fn stop(&mut self) -> (Option<i32>, String) {
        let (signal, tail) = self.helper.stop(STDERR_LINES);
        let tail =
            if tail.trim().is_empty() { String::new() } else { format!("; it said: {}", tail.replace('\n', " | ")) };
        (signal, tail)
    }
}

/// Appends a frame to `buf`: the length of what `write` appends, then it.
fn frame(buf: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    write(buf);
    let len = u32::try_from(buf.len() - at - 4).expect("a frame under 4 GiB");
    buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
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
                (BACKSTOP + watchdog::call_limit()).as_secs()
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
/// [`ENV_SO`] is set (its allocator tuned, [`keep_freed_memory`]), else does nothing.
#[used]
#[link_section = ".init_array"]
static WORKER_HOOK: extern "C" fn() = hook;

extern "C" fn hook() {
    if let Some(so) = &crate::settings::get().hybrid_worker {
        keep_freed_memory();
        let code = match serve(so) {
            Ok(()) => 0,
            Err(why) => {
                eprintln!("radiff's hybrid worker: {why}");
                3
            }
        };
        // SAFETY: ends the process without running anything of the program's main.
        unsafe { libc::_exit(code) };
    }
}

/// The allocator keeps what a prediction frees for the next one (radiff's `main` and each
/// worker call this; never the guest's program, whose heap decides where the kernel maps
/// the scenario's file, and so which pages fault-around takes: the snapshots hold them):
/// by default glibc gives the top of the heap back to the kernel once 128 KiB
/// of it is free and maps each large block anew, so each prediction (which makes and drops
/// a model of many megabytes) took its memory from the kernel again, page fault by page
/// fault. `radiff kernels hybrid-check --count 2000 --seed 81`, one core, medians of three
/// runs each in turn: the Rust port 1013 -> 1099 predictions a second, the hybrid 404 -> 426;
/// the kernel's share of the whole run's CPU halved.
pub fn keep_freed_memory() {
    // SAFETY: mallopt() before any thread starts; each value is in the range glibc takes.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
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
    if let Some(ms) = crate::settings::get().hybrid_worker_limit_ms.as_deref().and_then(|v| v.parse().ok()) {
        watchdog::set_call_limit(Duration::from_millis(ms));
    }
    // The object's functions by address, for where a crash happened: read before the
    // filters (std's read asks statx, which they refuse).
    let object = crate::files::read_bytes(so).map(|b| symbols::functions(&b)).unwrap_or_default();
    // What needs the calls the filters take away: the crash handler and the watchdog.
    load::install_crash_handler();
    watchdog::end_with_parent();
    watchdog::start();
    seccomp::loading().install().map_err(|e| format!("seccomp (loading): {e}"))?;
    let loaded = load::Loaded::open(so).map_err(|e| e.to_string())?;
    let base = loaded.base();
    let only: Option<Vec<&str>> = crate::settings::get().hybrid_worker_only.as_deref().map(|o| o.split(',').collect());
    let c = loaded.table(only.as_deref()).map_err(|e| e.to_string())?;
    seccomp::serving().install().map_err(|e| format!("seccomp (serving): {e}"))?;
    // The pipe's two ends, 0 and 1, used as raw descriptors for the process's life: never
    // closed (the filter has no close).
    let mut out = Vec::new();
    let hello = Hello { functions: c.functions().into_iter().map(str::to_string).collect() };
    frame(&mut out, |b| serde_json::to_writer(b, &hello).expect("a list of names serialises"));
    write_all(1, &out)?;
    // One frame into `buf`; false at the end of the input (radiff is done with us).
    let read_frame = |buf: &mut Vec<u8>| -> Result<bool, String> {
        let mut len = [0u8; 4];
        if !read_exact(0, &mut len)? {
            return Ok(false);
        }
        buf.resize(u32::from_le_bytes(len) as usize, 0);
        if !read_exact(0, buf)? {
            return Err("a request cut short".into());
        }
        Ok(true)
    };
    let mut buf = Vec::new();
    loop {
        if !read_frame(&mut buf)? {
            return Ok(());
        }
        let mut request: Request = serde_json::from_slice(&buf).map_err(|e| format!("a request: {e}"))?;
        if !read_frame(&mut buf)? {
            return Err("a request without its operations".into());
        }
        // SAFETY: the bytes radiff's codec::ops_bytes wrote in this same executable (our
        // parent started us from /proc/self/exe).
        request.input.ops = unsafe { codec::ops_from_bytes(&buf) }?;
        let t = thread_cpu();
        let (input, policy, config) = (&request.input, &request.policy, &request.config);
        let (trace, coverage, crash) = if request.coverage {
            radiff_model::coverage_hybrid(input, policy, config, &c)
        } else {
            match radiff_model::predict_hybrid(input, policy, config, &c) {
                Ok(trace) => (trace, Coverage::default(), None),
                // The trace up to the crash: the run again, as far as it goes.
                Err(_) => radiff_model::coverage_hybrid(input, policy, config, &c),
            }
        };
        let cpu_ns = (thread_cpu() - t).as_nanos() as u64;
        let crashed = crash.is_some();
        let reply = Reply {
            coverage: coverage.indexes().collect(),
            crash: crash.map(|c| WireCrash {
                // The function of the tree's C the crash was in, where the model called
                // another that reached it (BUG()'s own is the header's: the one called).
                function: load::crash_pc()
                    .and_then(|pc| symbols::function_at(&object, base, pc))
                    .filter(|f| radiff_model::hybrid::functions::runs_as_c_named(f).is_some())
                    .unwrap_or(c.function)
                    .to_string(),
                signal: c.signal,
                bug: c.bug,
                op: c.op,
                syscall: (c.signal == libc::SIGSYS).then(load::last_forbidden_syscall),
            }),
            cpu_ns,
        };
        out.clear();
        frame(&mut out, |b| serde_json::to_writer(b, &reply).expect("a reply serialises"));
        frame(&mut out, |b| codec::encode_trace(&trace, b));
        write_all(1, &out)?;
        // Freed while radiff reads the reply, not before it is sent.
        trace.recycle_windows();
        if crashed {
            // What the C left behind is not to be trusted: radiff starts another worker.
            return Ok(());
        }
    }
}

/// Reads all of `buf` from `fd`; false at its end before the first byte.
fn read_exact(fd: RawFd, buf: &mut [u8]) -> Result<bool, String> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: reads into the live buffer's remaining part.
        let n = unsafe { libc::read(fd, buf[done..].as_mut_ptr().cast(), buf.len() - done) };
        match n {
            0 if done == 0 => return Ok(false),
            0 => return Err("the pipe ended mid-frame".into()),
            n if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            n if n < 0 => return Err(format!("reading: {}", std::io::Error::last_os_error())),
            n => done += n as usize,
        }
    }
    Ok(true)
}

/// Writes all of `buf` to `fd`.
fn write_all(fd: RawFd, buf: &[u8]) -> Result<(), String> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: writes from the live buffer's remaining part.
        let n = unsafe { libc::write(fd, buf[done..].as_ptr().cast(), buf.len() - done) };
        match n {
            n if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            n if n <= 0 => return Err(format!("writing: {}", std::io::Error::last_os_error())),
            n => done += n as usize,
        }
    }
    Ok(())
}

/// The CPU time this thread has used.
pub fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
