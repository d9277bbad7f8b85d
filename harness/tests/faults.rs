//! Faults on the real thing: the cache's file system fills up during a kernel build, a
//! build is stopped by SIGINT or SIGKILL mid-compile, two builds run at once. Real
//! `radiff`, real make and gcc, a real tmpfs that runs out of room.
//!
//! The shared cache is never written. Each test makes a mount namespace of its own
//! (`unshare --mount`) and in it mounts an overlay over the cache, at the cache's own path,
//! whose writes go to a tmpfs of the size the test wants. The paths stay the same, so
//! kbuild finds its build directory warm and a one-file variant builds in seconds instead
//! of the base's ten minutes; everything the test wrote vanishes with the namespace. The
//! test holds the shared tree's lock meanwhile, so no other build changes what the overlay
//! reads. The variant (`faults-test`, harness/tests/faults/) is never built anywhere else.
//!
//! Needs root (CI runs as root); elsewhere the tests say why they did not run.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use radiff::cache::{self, Cache};
use radiff::kernels::{Builder, Kernels};

const RADIFF: &str = env!("CARGO_BIN_EXE_radiff");
const VARIANT: &str = "faults-test";

/// A repository whose `kernels/` is the real one's (same base, same config, so the same
/// build directory) plus the test variant.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let real = radiff::repo_root();
        let dir = tempfile::tempdir().unwrap();
        let kernels = dir.path().join("kernels");
        let variant = kernels.join("variants").join(VARIANT);
        std::fs::create_dir_all(&variant).unwrap();
        for file in ["kernels.yaml", "config.fragment"] {
            std::fs::copy(real.join("kernels").join(file), kernels.join(file)).unwrap();
        }
        let patch = "0001-mm-readahead-a-neutral-comment.patch";
        std::fs::copy(real.join("harness/tests/faults").join(patch), variant.join(patch)).unwrap();
        Repo { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Where the test variant's kernel appears, and where it is built before that.
    fn kernel_dir(&self, cache: &Cache) -> (PathBuf, PathBuf) {
        let kernels = Kernels::load(self.root()).unwrap();
        let dir = Builder::new(&kernels, cache).kernel_dir(kernels.variant(VARIANT).unwrap()).unwrap();
        let partial = dir.with_file_name(format!("{}.partial", dir.file_name().unwrap().to_string_lossy()));
        (dir, partial)
    }
}

/// The shared cache with the base built (the build directory and work tree the overlay
/// reads; the scenario trials build the same base, so a cold CI pays it once), and a
/// shared lock on its tree, held while the test runs: no build changes what the overlays
/// read, and the fault tests, each writing only to its own overlay, run side by side.
fn shared_cache() -> (Cache, cache::Lock) {
    let cache = Cache::from_env();
    let kernels = Kernels::load(&radiff::repo_root()).unwrap();
    let builder = Builder::new(&kernels, &cache);
    builder.build(kernels.variant("base").unwrap()).unwrap();
    let lock = builder.lock_tree_shared().unwrap();
    (cache, lock)
}

/// A mount namespace in which the cache is an overlay writing to a tmpfs of a set size.
struct Overlay {
    holder: Child,
    upper: tempfile::TempDir,
    cache: PathBuf,
}

impl Overlay {
    /// Mounts the overlay; where mount namespaces cannot be made (not root) the test fails,
    /// saying why: a fault test that did not run never passes.
    fn new(cache: &Cache, size: &str) -> Overlay {
        let upper = tempfile::tempdir().unwrap();
        let holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--", "sleep", "3600"])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let overlay = Overlay { holder, upper, cache: cache.root.clone() };
        // unshare has made the namespace once it has become `sleep`.
        let comm = format!("/proc/{}/comm", overlay.holder.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(&comm).map_or(true, |c| c.trim() != "sleep") {
            if Instant::now() > deadline || std::fs::read_to_string(&comm).is_err() {
                overlay.cannot("unshare --mount did not start (not root?)");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let up = overlay.upper.path().display().to_string();
        let script = format!(
            "set -e; mount -t tmpfs -o size={size} radiff-faults {up}; mkdir {up}/u {up}/w; \
             mount -t overlay radiff-faults -o lowerdir={root},upperdir={up}/u,workdir={up}/w {root}",
            root = overlay.cache.display()
        );
        let out = overlay.sh(&script);
        if !out.status.success() {
            overlay.cannot(&format!(
                "cannot mount a tmpfs and an overlay: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        overlay
    }

    fn cannot(self, why: &str) -> ! {
        panic!("{why}: the fault tests need root (mount namespaces, tmpfs, overlayfs); run them as root, as CI does")
    }

    fn nsenter(&self) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg("--target").arg(self.holder.id().to_string()).arg("--mount").arg("--");
        cmd
    }

    fn sh(&self, script: &str) -> Output {
        self.nsenter().args(["sh", "-c", script]).output().unwrap()
    }

    /// The tmpfs under the overlay gets `size` (more room: the disk was cleaned up).
    fn resize(&self, size: &str) {
        let out = self.sh(&format!("mount -o remount,size={size} {}", self.upper.path().display()));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    fn radiff_cmd(&self, repo: &Repo, args: &[&str]) -> Command {
        self.radiff_in(repo.root(), args)
    }

    /// `radiff ARGS` in the namespace, for the repository at `root`.
    fn radiff_in(&self, root: &Path, args: &[&str]) -> Command {
        let mut cmd = self.nsenter();
        cmd.arg(RADIFF)
            .args(args)
            .env("RADIFF_ROOT", root)
            .env("RADIFF_CACHE", &self.cache)
            .env("RADIFF_GUEST", env!("CARGO_BIN_EXE_radiff-guest"))
            .stdin(Stdio::null());
        cmd
    }

    fn radiff(&self, repo: &Repo, args: &[&str]) -> Output {
        self.run(self.radiff_cmd(repo, args), args)
    }

    fn run(&self, mut cmd: Command, args: &[&str]) -> Output {
        let started = Instant::now();
        let out = cmd.output().unwrap();
        eprintln!(
            "radiff {} in the overlay: {} in {:.1} s",
            args.join(" "),
            out.status,
            started.elapsed().as_secs_f64()
        );
        out
    }

    /// `path` as the namespace sees it.
    fn path(&self, path: &Path) -> PathBuf {
        Path::new(&format!("/proc/{}/root", self.holder.id())).join(path.strip_prefix("/").unwrap())
    }

    /// Processes other than the holder in the namespace.
    fn others(&self) -> Vec<String> {
        let ns = std::fs::read_link(format!("/proc/{}/ns/mnt", self.holder.id())).unwrap();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
            if pid != self.holder.id() && std::fs::read_link(entry.path().join("ns/mnt")).is_ok_and(|n| n == ns) {
                found.push(format!(
                    "{pid} {}",
                    std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default().trim()
                ));
            }
        }
        found
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        // The namespace ends with its last process; the mounts go with it.
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// The figures `radiff run` printed (windows, device, read sizes, bytes read, folios).
fn figures(o: &Output) -> Vec<String> {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .filter(|l| {
            ["windows:", "device:", "read sizes:", "bytes read:", "folios:"]
                .iter()
                .any(|k| l.trim_start().starts_with(k))
        })
        .map(str::to_string)
        .collect()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The tree the overlay builds in, checked out at the base and clean. Each tree that is
/// not is named, with what git said (a change, or why git could not tell: a clone whose
/// alternates are gone).
fn assert_tree_clean(overlay: &Overlay, cache: &Cache) {
    let trees = cache.root.join("trees");
    let out = overlay.sh(&format!(
        "for t in {}/*/; do s=$(git -C \"$t\" status --porcelain --untracked-files=no 2>&1) || s=\"git status failed: $s\"; if [ -n \"$s\" ]; then printf '%s:\\n%s\\n' \"$t\" \"$s\"; fi; done",
        trees.display()
    ));
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "a work tree under {} was left changed or cannot be read (remove a stale one with `rm -rf`):\n{}",
        trees.display(),
        text(&out)
    );
}

/// A built kernel: the directory holds its bzImage (readable, with a version string), and
/// no `.partial` is left.
fn assert_built(overlay: &Overlay, dir: &Path, partial: &Path) {
    let image = overlay.path(&dir.join("bzImage"));
    let release = radiff::kernels::bzimage_release(&image).unwrap_or_else(|e| panic!("{e}"));
    assert!(release.starts_with("7."), "{release}");
    assert!(!overlay.path(partial).exists(), "{} left behind", partial.display());
}

#[test]
fn a_full_cache_while_building_a_kernel_is_enospc_named_and_the_next_run_with_space_builds() {
    let (cache, _lock) = shared_cache();
    let repo = Repo::new();
    let (dir, partial) = repo.kernel_dir(&cache);
    // Room for the patch, the git index and the first objects, not for linking vmlinux.
    let overlay = Overlay::new(&cache, SMALL);
    let out = overlay.radiff(&repo, &["kernels", "build", VARIANT]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("no space left on device (ENOSPC) while building kernel `faults-test`"), "{said}");
    assert!(
        said.contains("fix: free space on the file system holding it, or point RADIFF_CACHE at a larger one"),
        "{said}"
    );
    assert!(
        said.contains(&cache.root.join("build").display().to_string()),
        "the error names the build directory:\n{said}"
    );
    // Nothing half-built is there to be taken for a kernel; the log is kept beside it.
    assert!(!overlay.path(&dir).exists(), "{} appeared though the build failed", dir.display());
    let listed = text(&overlay.radiff(&repo, &["kernels", "list"]));
    assert!(
        listed.lines().any(|l| l.starts_with(VARIANT) && l.contains("not built") && l.contains(".partial/build.log")),
        "{listed}"
    );
    eprintln!("what radiff said:\n{said}");

    overlay.resize("4g");
    let out = overlay.radiff(&repo, &["kernels", "build", VARIANT]);
    assert!(out.status.success(), "{}", text(&out));
    assert_built(&overlay, &dir, &partial);
    assert_tree_clean(&overlay, &cache);
}

/// The tmpfs the build fills: measured, the overlay's first writes (git's index, ccache's
/// stats, the patched file, its object) take about 12 MB; linking takes 100 MB more.
const SMALL: &str = "48m";

/// Waits until the build's log shows the compiler at work.
fn wait_for_compile(overlay: &Overlay, partial: &Path, child: &mut Child) {
    let log = overlay.path(&partial.join("build.log"));
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().any(|l| l.trim_start().starts_with("CC ")) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().map(|mut e| e.read_to_string(&mut err));
            panic!("radiff ended ({status}) before compiling:\n{err}\nlog:\n{text}");
        }
        assert!(Instant::now() < deadline, "no compile step within 180 s; log:\n{text}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_build_stopped_by_sigint_or_sigkill_mid_compile_is_built_again_by_the_next_runs_two_at_once() {
    let (cache, _lock) = shared_cache();
    let repo = Repo::new();
    let (dir, partial) = repo.kernel_dir(&cache);
    let overlay = Overlay::new(&cache, "4g");

    // Ctrl-C: radiff stops make and every compiler with it, and ends as SIGINT says.
    let mut child = overlay.radiff_cmd(&repo, &["kernels", "build", VARIANT]).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_compile(&overlay, &partial, &mut child);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(nix::libc::SIGINT), "{status}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !overlay.others().is_empty() {
        assert!(Instant::now() < deadline, "processes of the stopped build still run: {:?}", overlay.others());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!overlay.path(&dir).exists(), "a stopped build made {}", dir.display());

    // SIGKILL: nothing of radiff's runs after it; make dies with it (PR_SET_PDEATHSIG),
    // and compilers still finishing hold the tree's lock until they are done.
    let mut child = overlay.radiff_cmd(&repo, &["kernels", "build", VARIANT]).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_compile(&overlay, &partial, &mut child);
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(nix::libc::SIGKILL));
    assert!(!overlay.path(&dir).exists(), "a killed build made {}", dir.display());

    // The next runs, two at once on the one cache: one builds, the other waits for the
    // lock and takes the kernel it built; both name the same bzImage.
    let started = Instant::now();
    let a = overlay
        .radiff_cmd(&repo, &["kernels", "build", VARIANT])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let b = overlay
        .radiff_cmd(&repo, &["kernels", "build", VARIANT])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    eprintln!("two builds at once after the kill: {:.1} s", started.elapsed().as_secs_f64());
    assert!(a.status.success() && b.status.success(), "{}\n{}", text(&a), text(&b));
    let rows: Vec<String> = [&a, &b]
        .iter()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout).lines().find(|l| l.starts_with(VARIANT)).unwrap_or_default().to_string()
        })
        .collect();
    let cached = rows.iter().filter(|r| r.contains("cached")).count();
    assert_eq!(cached, 1, "exactly one of the two compiles:\n{rows:?}");
    let image = dir.join("bzImage").display().to_string();
    assert!(rows.iter().all(|r| r.ends_with(&image)), "{rows:?}");
    assert_built(&overlay, &dir, &partial);
    assert_tree_clean(&overlay, &cache);
}

#[test]
fn a_full_cache_while_preparing_an_image_or_running_is_enospc_named_and_the_next_run_with_space_works() {
    let (cache, _lock) = shared_cache();
    let root = radiff::repo_root();
    let fixture = root.join("harness/tests/fixtures/full_cache.yaml");
    let scenario = radiff::scenario::Scenario::load(&fixture).unwrap();
    let image_dir = cache.root.join("images").join(radiff::run::image_key(&scenario));
    let run_dir = cache.root.join("runs/full_cache/base");
    let args = ["run", fixture.to_str().unwrap(), "--variant", "base"];
    let run = |overlay: &Overlay| overlay.run(overlay.radiff_in(&root, &args), &args);
    let overlay = Overlay::new(&cache, "8m");

    // Less room than the image's file: said at once, no VM booted.
    let out = run(&overlay);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("no space left on device (ENOSPC) while preparing the disk image for full_cache"), "{said}");
    assert!(said.contains("the image needs more than its 16 MiB of files"), "{said}");
    assert!(said.contains("fix: free space on the file system holding it"), "{said}");
    assert!(!overlay.path(&image_dir).exists());

    // Room for the file, not for the file system's metadata as well: the guest's writes
    // fail (an I/O error in the guest, not a VM paused by QEMU) and radiff says why.
    overlay.resize("18m");
    let started = Instant::now();
    let out = run(&overlay);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("no space left on device (ENOSPC) while preparing the disk image for full_cache"), "{said}");
    assert!(said.contains("(the guest failed: "), "{said}");
    // At once (a boot: 11 s on an idle host), not at the VM's timeout (300 s): QEMU reported the
    // failed write to the guest instead of pausing the VM.
    assert!(
        started.elapsed() < Duration::from_secs(150),
        "the full image took {:?} to fail (at the VM's timeout: the guest did not get the write's I/O error at once); what radiff said:\n{said}",
        started.elapsed()
    );
    assert!(!overlay.path(&image_dir).exists(), "a half-written image appeared as {}", image_dir.display());
    eprintln!("what radiff said:\n{said}");

    // Room for the image, a run folder too small for the trace: the image is made, the
    // run fails saying so, and no trace is left as if it were the run's.
    overlay.resize("4g");
    let runs = cache.root.join("runs");
    let mounted =
        overlay.sh(&format!("mkdir -p {0} && mount -t tmpfs -o size=160k radiff-faults-runs {0}", runs.display()));
    assert!(mounted.status.success(), "{}", text(&mounted));
    let out = run(&overlay);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("no space left on device (ENOSPC) while running full_cache on base"), "{said}");
    assert!(overlay.path(&image_dir.join("ready")).is_file(), "the image was not made");
    assert!(!overlay.path(&run_dir.join("trace.json")).exists());
    eprintln!("what radiff said:\n{said}");

    // With room, the run works: two `radiff run`s at once on the one cache, from an image
    // not yet made. One prepares it while the other waits; the runs take the run folder in
    // turn; both see the same trace.
    overlay.sh(&format!("mount -o remount,size=64m {}", runs.display()));
    let removed = overlay.sh(&format!("rm -r {}", image_dir.display()));
    assert!(removed.status.success(), "{}", text(&removed));
    let started = Instant::now();
    let a = overlay.radiff_in(&root, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let b = overlay.radiff_in(&root, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    eprintln!("two runs at once, one image prepared: {:.1} s", started.elapsed().as_secs_f64());
    assert!(a.status.success() && b.status.success(), "{}\n{}", text(&a), text(&b));
    let prepared =
        [&a, &b].iter().filter(|o| String::from_utf8_lossy(&o.stderr).contains("radiff: preparing ")).count();
    assert_eq!(prepared, 1, "the image was prepared {prepared} times:\n{}\n{}", text(&a), text(&b));
    assert_eq!(figures(&a).len(), 5, "{}", text(&a));
    assert_eq!(figures(&a), figures(&b));
    assert!(overlay.path(&run_dir.join("trace.json")).is_file());
    assert!(overlay.path(&image_dir.join("ready")).is_file());
}

/// The test binary of the scenario trials (`tests/scenarios.rs`) that cargo built beside
/// this one: what `cargo test` runs. The newest, if cargo kept older builds.
fn scenario_trials_binary() -> Option<PathBuf> {
    let deps = std::env::current_exe().ok()?.parent()?.to_path_buf();
    let built = std::fs::read_dir(&deps).ok()?.flatten().filter_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let meta = e.metadata().ok()?;
        let runnable = name.starts_with("scenarios-")
            && !name.contains('.')
            && meta.is_file()
            && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
        if runnable {
            Some((meta.modified().ok()?, e.path()))
        } else {
            None
        }
    });
    built.max().map(|(_, path)| path)
}

/// [`scenario_trials_binary`], built first with cargo (as `cargo test` would) when this
/// test runs alone; a binary that still cannot be found fails the test.
fn scenario_trials() -> PathBuf {
    if let Some(found) = scenario_trials_binary() {
        return found;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["test", "--no-run", "-q", "-p", "radiff", "--test", "scenarios"]).current_dir(radiff::repo_root());
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    let status = build.status().expect("cargo starts");
    assert!(status.success(), "building the scenario trials' test binary failed ({status})");
    scenario_trials_binary().expect("the scenario trials' test binary, just built, is found")
}

/// Two `radiff run`s and a `cargo test` trial (its test binary, run as cargo runs it) at
/// once on the one shared cache, on the same scenario and kernel, so on the same run
/// folder: they take it in turn (its lock), no temporary file is shared, all three pass,
/// and the two runs print the same figures.
#[test]
fn two_radiff_runs_and_a_test_trial_at_once_on_one_cache_all_pass_alike() {
    const SCENARIO: &str = "random_4k";
    let trials = scenario_trials();
    let root = radiff::repo_root();
    let yaml = root.join("scenarios").join(format!("{SCENARIO}.yaml"));
    let args = ["run", yaml.to_str().unwrap(), "--variant", "base"];
    let spawn =
        |cmd: &mut Command| cmd.current_dir(&root).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    let a = spawn(Command::new(RADIFF).args(args));
    let trial =
        spawn(Command::new(&trials).args([&format!("scenario_{SCENARIO}::base"), "--exact", "--test-threads", "1"]));
    let b = spawn(Command::new(RADIFF).args(args));
    let pids = [a.id(), trial.id(), b.id()];
    let (a, trial, b) =
        (a.wait_with_output().unwrap(), trial.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    eprintln!("two radiff runs and a test trial at once: {:.1} s", started.elapsed().as_secs_f64());
    assert!(a.status.success(), "{}", text(&a));
    assert!(b.status.success(), "{}", text(&b));
    let said = text(&trial);
    assert!(trial.status.success() && said.contains("1 passed"), "the trial, beside two radiff runs:\n{said}");
    assert_eq!(figures(&a).len(), 5, "{}", text(&a));
    assert_eq!(figures(&a), figures(&b));
    // Nothing half-made is left in the run folder's parent: no temporary files, no
    // batch folders of the three processes.
    let runs = Cache::from_env().root.join("runs");
    let leftovers: Vec<String> = std::fs::read_dir(runs.join(SCENARIO))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let batches: Vec<String> = std::fs::read_dir(runs.join("_batch"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let theirs: Vec<&String> =
        batches.iter().filter(|n| pids.iter().any(|p| n.starts_with(&format!("{p}-")))).collect();
    assert!(theirs.is_empty(), "batch folders left by the three: {theirs:?}");
}

/// Two trials of one batch as cargo-nextest runs them: each a process of its own (the
/// scenario trials' binary with `--exact NAME`), with nextest's variables and under a
/// parent whose command line is a `nextest run` filter (what the trials read to plan the
/// run's batches). The first takes the batch, boots it and is killed with its process
/// group (SIGKILL, as nextest kills a timed-out test) before it publishes; the second then
/// finds the batch abandoned, runs its own point, and passes on a trace of its own.
#[test]
fn a_nextest_trial_killed_while_it_runs_its_batch_leaves_the_other_trial_to_run_alone() {
    let trials = scenario_trials();
    let root = radiff::repo_root();
    let run_id = format!(
        "faults-kill-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
    );
    let shared = Cache::from_env().root.join("runs/_shared").join(&run_id);
    // `bash -c 'BINARY --exact NAME; :' run FILTER`: bash stays the trial's parent (the `:`
    // keeps it from exec'ing), and its command line holds `run scenario_random_`.
    let trial = |name: &str| {
        let script = format!("'{}' --exact '{name}' --nocapture; :", trials.display());
        let mut cmd = Command::new("bash");
        cmd.args(["-c", &script, "run", "scenario_random_"])
            .current_dir(&root)
            .env("NEXTEST_RUN_ID", &run_id)
            .env("NEXTEST_EXECUTION_MODE", "process-per-test")
            .env("NEXTEST_TEST_THREADS", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd
    };
    let mut first = trial("scenario_random_4k::base").spawn().unwrap();
    // Killed once its batch is taken and its guest is running the batch's points.
    let t = Instant::now();
    let started = loop {
        let marker = std::fs::read_dir(&shared)
            .into_iter()
            .flatten()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().ends_with(".started"));
        if let Some(m) = marker {
            break m.path();
        }
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first trial ended before it took its batch:\n{}",
            text(&first.wait_with_output().unwrap())
        );
        assert!(t.elapsed() < Duration::from_secs(900), "the first trial took no batch in 15 minutes");
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_secs(5));
    let done = started.with_extension("done");
    assert!(!done.exists(), "the batch was published before the kill: {}", done.display());
    let taken_for =
        started.metadata().and_then(|m| m.modified()).ok().and_then(|m| m.elapsed().ok()).unwrap_or_default();
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(first.id() as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    let killed = first.wait_with_output().unwrap();
    assert_eq!(killed.status.signal(), Some(9), "{}", text(&killed));
    assert!(!done.exists(), "a killed publisher left a done marker");
    // The batch's other trial: told to run alone, passes.
    let second = trial("scenario_random_64k::base").output().unwrap();
    let said = text(&second);
    assert!(said.contains("1 passed"), "the second trial of the batch:\n{said}");
    assert!(
        said.contains("ended before it published; each trial runs its own point"),
        "the second trial did not say it ran alone:\n{said}"
    );
    assert!(!done.exists(), "the second trial published the batch it did not run");
    eprintln!(
        "killed the first trial {:.1} s after it took its batch; the second said:\n{}",
        taken_for.as_secs_f64(),
        said.lines().filter(|l| l.contains("radiff") || l.contains("passed")).collect::<Vec<_>>().join("\n")
    );
    let _ = std::fs::remove_dir_all(&shared);
}
