//! Batches shared by the processes of one test run through the cache (cargo-nextest runs
//! each trial in a process of its own): the first process to take a batch boots it and
//! publishes its runs; the batch's other trials find them there.
//!
//! Per test run (`runs/_shared/RUN/`, RUN its id) and batch (ID, a key of its points):
//! `ID.lock` (held while the batch is settled), `ID.started` (the taker's pid, written
//! before its boot) and `ID.done` (written last, whole, by rename: each point's run folder
//! and a key of its trace, or that it failed). A process that takes the lock then finds:
//! - `done`: the runs, each used only if its folder still holds the trace the key names;
//! - `started` without `done`: its taker died (the lock went with it): run your points alone;
//! - neither: it is the first: it boots the batch and publishes.
//!
//! A run folder appears whole by rename ([`crate::cache::put_in_place`]), so a taker killed
//! mid-batch leaves some new folders and some of an earlier run, and no `done`: nothing it
//! left is read. A later test run has another id and never reads this one's markers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::RunOutput;
use crate::cache::{self, Cache, Lock};
use crate::error::{Error, Result};
use crate::vm::Accel;

/// The folder of one test run's shared batches.
pub struct SharedRun {
    dir: PathBuf,
    run: String,
}

/// How a batch stood when this process took it.
#[derive(Debug)]
pub enum Found {
    /// This process was the first: it ran the batch, and these are its results.
    Ran(Vec<Result<RunOutput>>),
    /// Another process of this test run ran it: each point's run, or its error there;
    /// `None` where its folder changed since (run that point alone).
    Published(Vec<Option<Result<RunOutput>>>),
    /// The process that took it first ended without finishing it (its pid): run your
    /// points alone.
    Abandoned(String),
}

/// What `ID.done` says of one point.
#[derive(Debug, Serialize, Deserialize)]
struct Mark {
    /// The run folder and [`trace_key`] of its trace; `None`: the point failed.
    published: Option<(PathBuf, String)>,
    error: Option<Failure>,
    kvm: bool,
    wall: Duration,
    boot_points: usize,
    boot_wall: Duration,
}

/// A point's error as published: the same error in every process that reads it (a trial
/// that expects a panic or a timeout checks its fields).
#[derive(Debug, Serialize, Deserialize)]
enum Failure {
    Guest {
        dir: PathBuf,
        message: String,
        console_tail: String,
    },
    VmTimeout {
        after: Duration,
        dir: PathBuf,
        last_step: Option<String>,
        timeout_source: Option<String>,
        console_tail: String,
    },
    Other(String),
}

impl Failure {
    fn of(e: &Error) -> Failure {
        match e {
            Error::Guest { dir, message, console_tail } => {
                Failure::Guest { dir: dir.clone(), message: message.clone(), console_tail: console_tail.clone() }
            }
            Error::VmTimeout { after, dir, last_step, timeout_source, console_tail } => Failure::VmTimeout {
                after: *after,
                dir: dir.clone(),
                last_step: last_step.clone(),
                timeout_source: timeout_source.clone(),
                console_tail: console_tail.clone(),
            },
            other => Failure::Other(other.to_string()),
        }
    }

    fn error(&self) -> Error {
        match self {
            Failure::Guest { dir, message, console_tail } => {
                Error::Guest { dir: dir.clone(), message: message.clone(), console_tail: console_tail.clone() }
            }
            Failure::VmTimeout { after, dir, last_step, timeout_source, console_tail } => Error::VmTimeout {
                after: *after,
                dir: dir.clone(),
                last_step: last_step.clone(),
                timeout_source: timeout_source.clone(),
                console_tail: console_tail.clone(),
            },
            Failure::Other(text) => Error::Other(text.clone()),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Done {
    run: String,
    points: Vec<Mark>,
}

impl SharedRun {
    /// The shared batches of test run `run` in `cache` (`runs/_shared/RUN/`). Folders of
    /// other runs untouched for a day are removed.
    pub fn open(cache: &Cache, run: &str) -> Result<SharedRun> {
        let all = cache.dir("runs")?.join("_shared");
        let name: String = run.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        let dir = all.join(&name);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        for entry in std::fs::read_dir(&all).into_iter().flatten().flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > Duration::from_secs(86400));
            if old && entry.file_name() != name.as_str() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        Ok(SharedRun { dir, run: run.to_string() })
    }

    /// A batch's id: a key of its points' names (the same in every process that plans alike).
    pub fn batch_id(points: &[String]) -> String {
        cache::key(points)
    }

    /// Settles batch `id` of `points` points: waits while another process holds it, then
    /// finds it done or abandoned, or runs it (`run`, whose results go in the jobs' order)
    /// and publishes.
    pub fn batch(&self, id: &str, points: usize, run: impl FnOnce() -> Vec<Result<RunOutput>>) -> Result<Found> {
        let lock = cache::lock(&self.dir.join(format!("{id}.lock")))?;
        self.settle(lock, id, points, run)
    }

    /// [`SharedRun::batch`] if no other process holds it now; `None` if one does.
    pub fn try_batch(
        &self,
        id: &str,
        points: usize,
        run: impl FnOnce() -> Vec<Result<RunOutput>>,
    ) -> Result<Option<Found>> {
        match cache::try_lock(&self.dir.join(format!("{id}.lock")))? {
            Some(lock) => self.settle(lock, id, points, run).map(Some),
            None => Ok(None),
        }
    }

    /// Whether batch `id` was taken in this run (settled or being settled).
    pub fn taken(&self, id: &str) -> bool {
        self.dir.join(format!("{id}.started")).exists()
    }

    fn settle(
        &self,
        _lock: Lock,
        id: &str,
        points: usize,
        run: impl FnOnce() -> Vec<Result<RunOutput>>,
    ) -> Result<Found> {
        let (started, done) = (self.dir.join(format!("{id}.started")), self.dir.join(format!("{id}.done")));
        if done.exists() {
            let text = crate::files::read_text(&done)?;
            let marker: Done =
                serde_json::from_str(&text).map_err(|e| Error::Json { file: done.clone(), source: e })?;
            if marker.run != self.run || marker.points.len() != points {
                return Ok(Found::Abandoned(format!("{} is not this batch's", done.display())));
            }
            return Ok(Found::Published(marker.points.iter().map(load).collect()));
        }
        if started.exists() {
            let pid = std::fs::read_to_string(&started).unwrap_or_default();
            return Ok(Found::Abandoned(pid.trim().to_string()));
        }
        cache::write_atomic(&started, std::process::id().to_string().as_bytes())?;
        let results = run();
        let marks = results.iter().map(mark).collect();
        let text = serde_json::to_vec_pretty(&Done { run: self.run.clone(), points: marks })
            .map_err(|e| Error::Other(e.to_string()))?;
        cache::write_atomic(&done, &text)?;
        Ok(Found::Ran(results))
    }
}

/// A key of a run folder's trace and guest environment, as published.
fn trace_key(dir: &Path) -> Option<String> {
    let trace = std::fs::read(dir.join("trace.json")).ok()?;
    let env = std::fs::read(dir.join("env.json")).ok()?;
    Some(cache::key([trace, env]))
}

fn mark(result: &Result<RunOutput>) -> Mark {
    match result {
        Ok(out) => Mark {
            published: trace_key(&out.dir).map(|key| (out.dir.clone(), key)),
            error: None,
            kvm: out.accel == Accel::Kvm,
            wall: out.wall,
            boot_points: out.boot_points,
            boot_wall: out.boot_wall,
        },
        Err(e) => Mark {
            published: None,
            error: Some(Failure::of(e)),
            kvm: false,
            wall: Duration::ZERO,
            boot_points: 0,
            boot_wall: Duration::ZERO,
        },
    }
}

/// A published point's run, if its folder still holds what was published, or its error.
fn load(mark: &Mark) -> Option<Result<RunOutput>> {
    match &mark.error {
        Some(f) => Some(Err(f.error())),
        None => load_run(mark).map(Ok),
    }
}

fn load_run(mark: &Mark) -> Option<RunOutput> {
    let (dir, key) = mark.published.as_ref()?;
    // Read once, checked and parsed from the same bytes.
    let trace = std::fs::read(dir.join("trace.json")).ok()?;
    let env = std::fs::read(dir.join("env.json")).ok()?;
    if cache::key([&trace, &env]) != *key {
        return None;
    }
    Some(RunOutput {
        dir: dir.clone(),
        capture: serde_json::from_slice(&trace).ok()?,
        env: serde_json::from_slice(&env).ok()?,
        accel: if mark.kvm { Accel::Kvm } else { Accel::Tcg },
        wall: mark.wall,
        boot_points: mark.boot_points,
        boot_wall: mark.boot_wall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A run folder as a batch publishes it: trace.json and env.json, appearing by rename.
    fn publish_run(dir: &Path, trace: &crate::ftrace::Capture) -> RunOutput {
        let staged = dir.with_extension("staged");
        std::fs::create_dir_all(&staged).unwrap();
        std::fs::write(staged.join("trace.json"), serde_json::to_vec(trace).unwrap()).unwrap();
        std::fs::write(staged.join("env.json"), serde_json::to_vec(&crate::wire::GuestEnv::default()).unwrap())
            .unwrap();
        cache::put_in_place(&staged, dir, &[], None).unwrap();
        RunOutput {
            dir: dir.to_path_buf(),
            capture: trace.clone(),
            env: Default::default(),
            accel: Accel::Tcg,
            wall: Duration::from_secs(3),
            boot_points: 2,
            boot_wall: Duration::from_secs(9),
        }
    }

    fn capture(events: u64) -> crate::ftrace::Capture {
        crate::ftrace::Capture { events, ..Default::default() }
    }

    #[test]
    fn the_first_process_runs_the_batch_and_the_others_find_its_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache { root: tmp.path().to_path_buf() };
        let shared = SharedRun::open(&cache, "run-1").unwrap();
        let id = SharedRun::batch_id(&["a".into(), "b".into()]);
        let (a, b) = (tmp.path().join("runs/s/a"), tmp.path().join("runs/s/b"));
        let found = shared
            .batch(&id, 2, || vec![Ok(publish_run(&a, &capture(7))), Err(Error::Other("a panic".into()))])
            .unwrap();
        assert!(matches!(&found, Found::Ran(r) if r.len() == 2), "{found:?}");
        // Another trial of the batch: the run, not a second boot; the failed point is its own.
        let found = shared.batch(&id, 2, || panic!("booted twice")).unwrap();
        let Found::Published(runs) = found else { panic!("{found:?}") };
        let run = runs[0].as_ref().unwrap().as_ref().unwrap();
        assert_eq!((run.capture.events, run.boot_points, run.wall), (7, 2, Duration::from_secs(3)));
        assert!(
            matches!(&runs[1], Some(Err(Error::Other(m))) if m == "a panic"),
            "a failed point's error is published: {:?}",
            runs[1]
        );
        // A folder replaced since (another run, of this test run or not): not used.
        publish_run(&a, &capture(8));
        let Found::Published(runs) = shared.batch(&id, 2, || panic!("booted twice")).unwrap() else { panic!() };
        assert!(runs[0].is_none(), "a run folder that changed after its batch was published was used");
        // Another test run (a later `cargo nextest run`) never finds this one's runs.
        let later = SharedRun::open(&cache, "run-2").unwrap();
        let mut booted = false;
        assert!(matches!(
            later
                .batch(&id, 2, || {
                    booted = true;
                    vec![Ok(publish_run(&a, &capture(9))), Ok(publish_run(&b, &capture(1)))]
                })
                .unwrap(),
            Found::Ran(_)
        ));
        assert!(booted);
    }

    /// The errors a fault trial checks field by field come back as they were.
    #[test]
    fn a_published_panic_or_timeout_is_the_same_error_in_another_process() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache { root: tmp.path().to_path_buf() };
        let shared = SharedRun::open(&cache, "run-1").unwrap();
        let id = SharedRun::batch_id(&["p".into(), "h".into()]);
        let dir = tmp.path().join("runs/s/p");
        let panic = Error::Guest {
            dir: dir.clone(),
            message: "the kernel panicked".into(),
            console_tail: "Kernel panic".into(),
        };
        let hang = Error::VmTimeout {
            after: Duration::from_secs(20),
            dir,
            last_step: Some("running the access pattern".into()),
            timeout_source: Some("s.yaml:3".into()),
            console_tail: "tail".into(),
        };
        let texts = (panic.to_string(), hang.to_string());
        shared.batch(&id, 2, || vec![Err(panic), Err(hang)]).unwrap();
        let Found::Published(runs) = shared.batch(&id, 2, || panic!("booted twice")).unwrap() else { panic!() };
        let errors: Vec<String> = runs.iter().map(|r| r.as_ref().unwrap().as_ref().unwrap_err().to_string()).collect();
        assert_eq!(errors, vec![texts.0, texts.1]);
        assert!(matches!(&runs[1], Some(Err(Error::VmTimeout { after, .. })) if *after == Duration::from_secs(20)));
    }

    /// A fake publisher, a process of its own (flock(1) holding the batch's lock, as a trial
    /// does): it marks the batch started, publishes the first of two run folders and is
    /// killed (SIGKILL) before the second and the done marker. The waiting trial gets the lock
    /// when the publisher dies, is told to run its points alone, and reads nothing.
    #[test]
    fn a_publisher_killed_mid_batch_leaves_the_others_to_run_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache { root: tmp.path().to_path_buf() };
        let shared = SharedRun::open(&cache, "run-1").unwrap();
        let id = SharedRun::batch_id(&["a".into(), "b".into()]);
        let (a, b) = (tmp.path().join("runs/s/a"), tmp.path().join("runs/s/b"));
        // An earlier test run's folder for the second point.
        publish_run(&b, &capture(1));
        publish_run(&a, &capture(1));
        let staged = tmp.path().join("runs/_batch/0");
        std::fs::create_dir_all(&staged).unwrap();
        std::fs::write(staged.join("trace.json"), serde_json::to_vec(&capture(5)).unwrap()).unwrap();
        std::fs::write(staged.join("env.json"), "{}").unwrap();
        let ready = tmp.path().join("ready");
        let script = format!(
            "echo $$ > {started}; rm -rf {a}; mv {staged} {a}; touch {ready}; exec sleep 600",
            started = shared.dir.join(format!("{id}.started")).display(),
            a = a.display(),
            staged = staged.display(),
            ready = ready.display()
        );
        let mut publisher = Command::new("flock")
            .arg(shared.dir.join(format!("{id}.lock")))
            .args(["sh", "-c", &script])
            .spawn()
            .unwrap();
        let t = std::time::Instant::now();
        while !ready.exists() {
            assert!(t.elapsed() < Duration::from_secs(20), "the fake publisher did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            shared.try_batch(&id, 2, || panic!("ran while the publisher holds it")).unwrap().is_none(),
            "the lock is held"
        );
        assert!(shared.taken(&id));
        let waiter = {
            let id = id.clone();
            std::thread::spawn(move || shared.batch(&id, 2, || panic!("the waiter booted the batch")))
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!waiter.is_finished(), "the waiter did not wait for the publisher");
        // flock(1) runs the script as its child (the pid it wrote), which holds the lock too;
        // kill both, as a trial process dies whole.
        let pid: i32 = std::fs::read_to_string(tmp.path().join("runs/_shared/run-1").join(format!("{id}.started")))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
        publisher.kill().unwrap();
        let _ = publisher.wait();
        let found = waiter.join().unwrap().unwrap();
        assert!(matches!(found, Found::Abandoned(_)), "expected the batch abandoned, got {found:?}");
    }
}
