//! Building a variant: the tree's lock, the patches, make through ccache, and the kernel's
//! directory in the cache.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::source::{git_rev, BaseId};
use super::tree::{apply_patch, record_base, reset_tree, BASE_TAG};
use super::{Base, Builder, Built, Variant};
use crate::cache;
use crate::error::{Error, Result};
use crate::process::{log_tail, require_tool, Cmd, Outcome};

/// Says (on progress and in the build `log`) that `variant`'s tree is traced flat, when
/// `tracing` says it is.
fn say_tracing(tracing: super::Tracing, variant: &str, log: &Path) -> Result<()> {
    if tracing == super::Tracing::Windows {
        return Ok(());
    }
    let line = format!(
        "{variant}: its tree has no {} (a Linux before the readahead tracepoints): its runs record the folios added, the faults and the device's requests, no readahead window",
        super::tracepoints::READAHEAD_H
    );
    crate::progress::progress(&line);
    crate::files::append_line(log, &format!("# radiff: {line}"))
}

impl Builder<'_> {
    /// Builds `variant` unless the cache has it. Safe to call from several threads or
    /// processes at once: the work tree and build directory are locked.
    pub fn build(&self, variant: &Variant) -> Result<Built> {
        let started = Instant::now();
        let base = self.base_id()?;
        let dir = self.kernel_dir_for(&base, variant)?;
        let image = dir.join("bzImage");
        if image.is_file() {
            return Ok(Built {
                variant: variant.name.clone(),
                bzimage: image,
                compiled: false,
                elapsed: started.elapsed(),
            });
        }
        if let Some(same) = self.reuse_same_key(&dir, variant)? {
            return Ok(Built {
                variant: variant.name.clone(),
                bzimage: same,
                compiled: false,
                elapsed: started.elapsed(),
            });
        }
        for tool in ["make", "gcc", "flex", "bison", "bc", "patch", "git", "tar", "xz"] {
            require_tool(tool)?;
        }
        let _lock = match &crate::settings::get().tree_locked {
            // `radiff bisect` holds this tree's lock for the whole bisection and runs
            // `radiff check` in it: the check must not wait for its own parent.
            Some(name) if *name == base.tree_name => None,
            _ => Some(self.lock_tree_named(&base.tree_name)?),
        };
        let lock = _lock.as_ref();
        if image.is_file() {
            // Another process built it while this one waited for the lock.
            return Ok(Built {
                variant: variant.name.clone(),
                bzimage: image,
                compiled: false,
                elapsed: started.elapsed(),
            });
        }
        let (tree, recorded) = self.unpack_tree(&base)?;
        // A fresh unpack is recorded in git (for undoing patches; about 45 s of one core)
        // while the base compiles: the build never writes into the source tree. A variant
        // with patches waits for the record first; the scope joins it on every path, so it
        // never outlives the lock.
        let (result, reset) = std::thread::scope(|scope| {
            let mut recording = (!recorded).then(|| {
                crate::progress::progress("recording the base tree in git, so patches can always be undone (once; meanwhile the build starts)");
                scope.spawn(|| record_base(&tree))
            });
            let mut wait = || {
                recording
                    .take()
                    .map_or(Ok(()), |handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            };
            let result = match variant.patches.is_empty() {
                true => self.build_locked(&base, &tree, variant, &dir, lock),
                false => wait().and_then(|()| self.build_locked(&base, &tree, variant, &dir, lock)),
            };
            let reset = wait().and_then(|()| match &self.kernels.base {
                Base::InPlace { .. } => Ok(()),
                Base::Debian { .. } => reset_tree(&tree, BASE_TAG),
                Base::Git { tree: source, rev } => git_rev(source, rev).and_then(|sha| reset_tree(&tree, &sha)),
            });
            (result, reset)
        });
        let during = || format!("building kernel `{}`", variant.name);
        let bzimage = result.map_err(|e| e.during(during))?;
        reset.map_err(|e| e.during(during))?;
        crate::progress::progress(&format!(
            "built {} in {:.0} s: {}",
            variant.name,
            started.elapsed().as_secs_f64(),
            bzimage.display()
        ));
        Ok(Built { variant: variant.name.clone(), bzimage, compiled: true, elapsed: started.elapsed() })
    }

    /// A kernel of the same key (the same base, config and patches) built under another
    /// name, copied into `dir` (the name is not in the kernel: `radiff review` of a mail
    /// renamed, a variant renamed); `None` when there is none.
    fn reuse_same_key(&self, dir: &Path, variant: &Variant) -> Result<Option<PathBuf>> {
        let Some(key) = dir.file_name().and_then(|n| n.to_str()).and_then(|n| n.rsplit('-').next()) else {
            return Ok(None);
        };
        let kernels = self.cache.root.join("kernels");
        let Ok(entries) = std::fs::read_dir(&kernels) else { return Ok(None) };
        let suffix = format!("-{key}");
        let same = entries.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(&suffix)) && p.join("bzImage").is_file()
        });
        let Some(same) = same else { return Ok(None) };
        let partial = cache::begin_partial(dir)?;
        for file in ["config", "bzImage", "build.log"] {
            let from = same.join(file);
            if from.is_file() {
                std::fs::copy(&from, partial.join(file)).map_err(|e| Error::io(partial.join(file), e))?;
            }
        }
        let series: String = variant.patches.iter().map(|p| format!("{}\n", p.display())).collect();
        std::fs::write(partial.join("series"), series.as_bytes()).map_err(|e| Error::io(partial.join("series"), e))?;
        cache::put_in_place(&partial, dir, &["config", "series", "bzImage"], None)?;
        crate::progress::progress(&format!(
            "{}: the same kernel as {} (same base, config and patches): copied, not built",
            variant.name,
            same.display()
        ));
        Ok(Some(dir.join("bzImage")))
    }

    /// Builds into `NAME-KEY.partial/` beside the kernel's directory and renames it into
    /// place when the bzImage, its config and series are all written: a kernel's directory
    /// appears whole or not at all. A failed build leaves `.partial` with its log (the
    /// error names it); the next build starts it afresh.
    pub(super) fn build_locked(
        &self,
        base: &BaseId,
        tree: &Path,
        variant: &Variant,
        dir: &Path,
        lock: Option<&cache::Lock>,
    ) -> Result<PathBuf> {
        let started = Instant::now();
        let config_text =
            std::fs::read_to_string(&self.kernels.config).map_err(|e| Error::io(&self.kernels.config, e))?;
        // One build directory per tree, whatever the config: a changed fragment is an
        // incremental rebuild too (kbuild recompiles what depends on the changed options).
        let build = self.cache.dir("build")?.join(&base.tree_name);
        // Patches first: one that does not apply should cost (and leave) nothing else;
        // then the tracepoints and the fragment's options, as the patched tree defines them.
        variant.patches.iter().try_for_each(|patch| apply_patch(tree, &variant.name, patch))?;
        let tracing = super::check_tree(tree, &variant.name)?;
        super::kconfig::check_tree(tree, &variant.name, &self.kernels.config, &config_text)?;
        std::fs::create_dir_all(&build).map_err(|e| Error::io(&build, e))?;
        let partial = cache::begin_partial(dir)?;
        let log = partial.join("build.log");
        // The first and last lines say when and how long (`radiff bench --first-run` reads
        // them, with make's V=2 reasons and ccache's stats log beside it).
        crate::files::append_line(&log, &build_log_start(&variant.name, tree))?;
        say_tracing(tracing, &variant.name, &log)?;
        if let Some(named) = super::runs_in_build(&variant.patches)? {
            let line = format!(
                "{}: {named}; the build runs confined (no network; it writes only to its tree, build folder and ccache)",
                variant.name
            );
            crate::progress::progress(&line);
            crate::files::append_line(&log, &format!("# radiff: {line}"))?;
        }
        self.configure(tree, &build, &config_text, &log).map_err(|e| no_space_in_build(e, &build, &log))?;
        let jobs = std::thread::available_parallelism().map(|n| n.get() + 1).unwrap_or(3);
        // What a patch may have changed runs confined: the tree, its build folder, ccache's
        // and the staging folder (ccache's stats log) are all it may write.
        let ccache = self.cache.dir("ccache")?;
        let writable = [tree, build.as_path(), ccache.as_path(), partial.as_path()];
        let make_cmd = || -> Result<Cmd> {
            // V=2: each step says why it ran ("- due to: include/linux/pagemap.h").
            let make = Cmd::new("make")
                .arg("-C")
                .arg(tree)
                .arg(format!("O={}", build.display()))
                .arg(format!("-j{jobs}"))
                .arg("V=2");
            let make = self
                .with_ccache(make)?
                .env("CCACHE_STATSLOG", partial.join(CCACHE_LOG))
                .arg("bzImage")
                .confined(&writable);
            Ok(match lock {
                Some(lock) => make.holding(lock),
                None => make,
            })
        };
        // Held to the end of the build (the piggy.o remake below is a make too).
        let _slot = self.make_slot(jobs)?;
        let removed = begin_make(&build)?;
        if removed > 0 {
            crate::files::append_line(
                &log,
                &format!(
                    "# radiff: removed {removed} objects and .cmd files the make stopped before this one was writing"
                ),
            )?;
        }
        let make = make_cmd()?;
        crate::progress::progress(&format!(
            "building {} in {} ({}; log {})",
            variant.name,
            build.display(),
            make.display(),
            log.display()
        ));
        let outcome = self.make_bzimage(&variant.name, &build, &log, make, &make_cmd)?;
        match outcome {
            Outcome::Exited(status) if status.success() => {}
            Outcome::Exited(status) => {
                let err = Error::Build {
                    variant: variant.name.clone(),
                    log: log.clone(),
                    tail: format!("{}\n(make: {status})", log_tail(&log, 30)),
                };
                return Err(no_space_in_build(err, &build, &log));
            }
            Outcome::TimedOut(after) => {
                return Err(Error::Build {
                    variant: variant.name.clone(),
                    log: log.clone(),
                    tail: format!(
                        "{}\n(killed after {} s; set RADIFF_BUILD_TIMEOUT to allow longer)",
                        log_tail(&log, 30),
                        after.as_secs()
                    ),
                })
            }
        }
        if stale_piggy(&build) {
            self.remake_piggy(&variant.name, &build, &log, make_cmd()?)?;
        }
        crate::files::append_line(
            &log,
            &format!("{BUILT} {} in {:.1} s", variant.name, started.elapsed().as_secs_f64()),
        )?;
        let image = build.join("arch/x86/boot/bzImage");
        let copy =
            |from: &Path, to: &str| std::fs::copy(from, partial.join(to)).map_err(|e| Error::io(partial.join(to), e));
        copy(&build.join(".config"), "config")?;
        let series: String = variant.patches.iter().map(|p| format!("{}\n", p.display())).collect();
        std::fs::write(partial.join("series"), series.as_bytes()).map_err(|e| Error::io(partial.join("series"), e))?;
        copy(&image, "bzImage")?;
        // On disk before the rename makes them the kernel (a crash must not leave a
        // renamed directory with an empty bzImage). A directory already at `dir` was left by
        // a radiff that built in place (before `.partial`) and was stopped: it is removed.
        cache::put_in_place(&partial, dir, &["config", "series", "bzImage"], None)?;
        Ok(dir.join("bzImage"))
    }

    /// Runs `make` (the build's make, [`MAKE_RUNNING`] marked) with a progress line, and
    /// makes once more with `make_cmd` where it stopped at a half-written `.cmd` file
    /// ([`broken_cmd_files`]); the mark goes when make ended by itself.
    fn make_bzimage(
        &self,
        name: &str,
        build: &Path,
        log: &Path,
        make: Cmd,
        make_cmd: &dyn Fn() -> Result<Cmd>,
    ) -> Result<Outcome> {
        // Where the build is: kbuild's last step and the objects compiled so far (its total
        // is not known before make has walked the tree).
        let task = crate::progress::Task::start(format!("building {name}"));
        let run = |make: Cmd| {
            make.run_logged(log, self.timeout, Duration::from_secs(10), |_elapsed| {
                task.count(last_make_step(log), compiled(log), None);
            })
        };
        let mut outcome = run(make)?;
        // A `.cmd` file left half-written where no mark says so (a make stopped before
        // radiff marked its makes): make names it at its syntax error; it goes, once.
        if matches!(&outcome, Outcome::Exited(status) if !status.success()) {
            let broken = broken_cmd_files(&crate::files::read_text(log).unwrap_or_default(), build);
            if !broken.is_empty() {
                for path in &broken {
                    crate::files::remove_file(path)?;
                }
                let names: Vec<String> = broken.iter().map(|p| p.display().to_string()).collect();
                crate::files::append_line(
                    log,
                    &format!("# radiff: removed half-written {}; making again", names.join(", ")),
                )?;
                outcome = run(make_cmd()?)?;
            }
        }
        drop(task);
        if let Outcome::Exited(_) = outcome {
            // make ended by itself (kbuild deletes a target whose command failed).
            let _ = std::fs::remove_file(build.join(MAKE_RUNNING));
        }
        Ok(outcome)
    }

    /// A slot to run make in: one make for every [`CORES_PER_MAKE`] cores (one on a
    /// machine of fewer), across the threads and processes using this cache. Builds of
    /// different trees (the base's, a bisection's) would otherwise run their `make -jN`
    /// side by side, each taking twice as long, so that neither kernel's trials can start
    /// until both are done.
    fn make_slot(&self, jobs: usize) -> Result<cache::Lock> {
        let slots = (jobs.saturating_sub(1) / CORES_PER_MAKE).max(1);
        let locks = self.cache.dir("locks")?;
        for n in 0..slots {
            if let Some(slot) = cache::try_lock(&locks.join(format!("make-{n}.lock")))? {
                return Ok(slot);
            }
        }
        let mine = locks.join(format!("make-{}.lock", std::process::id() as usize % slots));
        cache::lock_or_wait(&mine, |path| {
            crate::progress::progress(&format!(
                "waiting for another kernel build to finish ({}: one make at a time for every {CORES_PER_MAKE} cores)",
                path.display()
            ))
        })
    }

    /// Compiles through ccache, kept in the cache: a variant that touches a widely included
    /// header (async-align-v2 changes include/linux/pagemap.h) recompiles most of the kernel
    /// once, and the builds after it, with the header restored, then hit the cache instead
    /// of recompiling it all again.
    ///
    /// Depend mode: on a miss ccache takes the headers from the compiler's own `-MMD` file
    /// (kbuild passes `-Wp,-MMD,...`) instead of running the preprocessor a second time; a
    /// cold base build took 1158 s with it and 1311 s without, on 2 cores.
    pub(super) fn with_ccache(&self, make: Cmd) -> Result<Cmd> {
        if crate::process::find_in_path("ccache").is_none() {
            crate::progress::progress(
                "ccache not found (./setup installs it): switching between variants that touch headers will recompile",
            );
            return Ok(make);
        }
        Ok(make
            .arg("CC=ccache gcc")
            .env("CCACHE_DIR", self.cache.dir("ccache")?)
            .env("CCACHE_BASEDIR", &self.cache.root)
            .env("CCACHE_MAXSIZE", "8G")
            .env("CCACHE_COMPRESS", "1")
            .env("CCACHE_DEPEND", "1"))
    }
}

/// ccache served piggy.o from an earlier build: piggy.S only names the payload
/// (`.incbin "arch/x86/boot/compressed/vmlinux.bin.lz4"`) and its lengths, so two kernels
/// whose compressed payloads are as long hash alike, and the bzImage would boot the other
/// kernel (measured: a variant's bzImage booted the fault-test kernel). piggy.o is made
/// again by `make` without ccache.
impl Builder<'_> {
    fn remake_piggy(&self, name: &str, build: &Path, log: &Path, make: Cmd) -> Result<()> {
        crate::progress::progress(&format!(
            "{name}: piggy.o did not hold this build's compressed kernel (a ccache hit on piggy.S); making it again without ccache"
        ));
        let piggy = build.join("arch/x86/boot/compressed/piggy.o");
        std::fs::remove_file(&piggy).map_err(|e| Error::io(&piggy, e))?;
        let again = make.env("CCACHE_DISABLE", "1").run_logged(log, self.timeout, Duration::from_secs(10), |_| {})?;
        if !matches!(again, Outcome::Exited(status) if status.success()) || stale_piggy(build) {
            return Err(Error::Build {
                variant: name.to_string(),
                log: log.to_path_buf(),
                tail: format!(
                    "{}\n(piggy.o still does not hold arch/x86/boot/compressed/vmlinux.bin.*)",
                    log_tail(log, 30)
                ),
            });
        }
        Ok(())
    }
}

/// The file in a build directory that says a make is running there, or ran and was
/// stopped (killed with radiff, by the timeout, by a crash): removed when make ends by
/// itself.
pub const MAKE_RUNNING: &str = ".radiff-make-running";

/// Before a make in `build`: where the make before it was stopped, removes what it was
/// writing (objects, archives, `.cmd` and dependency files modified since it began), then
/// marks this make as running. A killed compiler or fixdep leaves files half-written: a
/// truncated `.cmd` file is a syntax error in every later make of the tree (seen: "***
/// unterminated call to function 'wildcard'"), and a truncated object newer than its
/// sources looks up to date. ccache makes their recompiling cheap. Returns how many files
/// it removed. Symbolic links (the build's `source`) are not followed.
fn begin_make(build: &Path) -> Result<usize> {
    let marker = build.join(MAKE_RUNNING);
    let mut removed = 0;
    if let Ok(since) = std::fs::metadata(&marker).and_then(|m| m.modified()) {
        let mut dirs = vec![build.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let kind = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
                let path = entry.path();
                if kind.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let written = matches!(path.extension().and_then(|e| e.to_str()), Some("o" | "a" | "cmd" | "d"));
                if !kind.is_file() || !written {
                    continue;
                }
                let modified = entry.metadata().and_then(|m| m.modified()).map_err(|e| Error::io(&path, e))?;
                if modified >= since {
                    crate::files::remove_file(&path)?;
                    removed += 1;
                }
            }
        }
    }
    crate::files::write(&marker, format!("{}\n", std::process::id()))?;
    Ok(removed)
}

/// The `.cmd` files under `build` that make stopped at as syntax errors in `log` (kbuild
/// includes each target's `.cmd` file: "arch/x86/entry/vdso/.vma.o.cmd:5: *** unterminated
/// call to function 'wildcard': missing ')'.  Stop."), each once.
fn broken_cmd_files(log: &str, build: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for line in log.lines() {
        let Some((at, _)) = line.trim_start().split_once(": *** ") else { continue };
        let Some((file, number)) = at.rsplit_once(':') else { continue };
        if !file.ends_with(".cmd") || number.parse::<u64>().is_err() || file.starts_with('/') || file.contains("..") {
            continue;
        }
        let path = build.join(file);
        if path.is_file() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// Whether the build's `arch/x86/boot/compressed/piggy.o` lacks the compressed kernel that
/// the same build wrote beside it (`vmlinux.bin.lz4`, or another compressor's suffix): then
/// the bzImage linked from it holds another build's kernel.
fn stale_piggy(build: &Path) -> bool {
    let dir = build.join("arch/x86/boot/compressed");
    let payload = std::fs::read_dir(&dir).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinux.bin.")))
            .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
    });
    let (Some(payload), Ok(piggy)) = (payload, std::fs::read(dir.join("piggy.o"))) else { return false };
    let Ok(payload) = std::fs::read(payload) else { return false };
    !contains(&piggy, &payload)
}

/// Whether `needle` stands in `haystack` as one run of bytes.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(head) = needle.get(..needle.len().min(64)) else { return false };
    if needle.is_empty() {
        return true;
    }
    haystack.windows(head.len()).enumerate().any(|(i, w)| w == head && haystack[i..].starts_with(needle))
}

/// A failed build step, told as a full file system when it was one: the log says so
/// (gcc, ld, make: "No space left on device"), or the file system of the build directory
/// or of the log has (next to) nothing left; the log may itself have been cut short by it.
fn no_space_in_build(err: Error, build: &Path, log: &Path) -> Error {
    let Error::Build { variant, log: kept, .. } = &err else { return err };
    let said = log_tail(log, 200).contains("No space left on device");
    let full = [build, log].into_iter().find(|p| crate::cache::nearly_full(p));
    if !said && full.is_none() {
        return err;
    }
    Error::NoSpace {
        path: full.unwrap_or(build).to_path_buf(),
        during: Some(format!("building kernel `{variant}` (make's log: {})", kept.display())),
        source: std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
    }
}

/// The cores a kernel make needs to itself before a second may run beside it
/// ([`Builder::make_slot`]).
pub const CORES_PER_MAKE: usize = 4;

/// A kernel directory's ccache stats log (`CCACHE_STATSLOG`): a `# SOURCE` line per
/// compile, then its counters (`direct_cache_hit`, `cache_miss`, ...).
pub const CCACHE_LOG: &str = "ccache.log";
/// How a build log's first line starts: `# radiff: building NAME in TREE from EPOCH_MS`.
pub const BUILDING: &str = "# radiff: building";
/// How a finished build log's last line starts: `# radiff: built NAME in SECONDS s`.
pub const BUILT: &str = "# radiff: built";

/// The build log's first line, [`BUILDING`].
fn build_log_start(name: &str, tree: &Path) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{BUILDING} {name} in {} from {}", tree.display(), now.as_millis())
}

/// A build log's line as kbuild's step and make V=2's reason for it (the text after
/// "- due to", if any): ("CC      mm/readahead.o", Some(": include/linux/pagemap.h")).
pub fn step_and_reason(line: &str) -> (&str, Option<&str>) {
    match line.split_once(" - due to") {
        Some((step, why)) => (step, Some(why)),
        None => (line, None),
    }
}

/// Whether a build log's line is a compile (kbuild's `CC`): an object compiled.
pub fn is_compile(line: &str) -> bool {
    line.split_whitespace().next() == Some("CC")
}

/// The objects compiled so far, as a build log counts them (kbuild's `CC` lines).
pub(super) fn compiled(log: &Path) -> u64 {
    std::fs::read_to_string(log).map_or(0, |text| text.lines().filter(|l| is_compile(l)).count() as u64)
}

/// The last kbuild step in a build log ("CC mm/readahead.o"), for progress lines.
pub(super) fn last_make_step(log: &Path) -> String {
    let tail = log_tail(log, 5);
    tail.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(BUILDING) && !l.starts_with(BUILT))
        .map(|l| step_and_reason(l).0.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "starting".into())
}

/// The release a bzImage reports (`uname -r` once booted), read from the version string
/// its setup header points to (Documentation/arch/x86/boot.rst: `kernel_version` at 0x20e
/// holds the string's offset minus 0x200).
pub fn bzimage_release(path: &Path) -> Result<String> {
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let bad = || Error::Other(format!("{} is not a bzImage (no version string in its setup header)", path.display()));
    if data.len() < 0x210 || &data[0x202..0x206] != b"HdrS" {
        return Err(bad());
    }
    let offset = u16::from_le_bytes([data[0x20e], data[0x20f]]) as usize + 0x200;
    let text = data.get(offset..).ok_or_else(bad)?;
    let end = text.iter().position(|&b| b == 0 || b == b' ').ok_or_else(bad)?;
    String::from_utf8(text[..end].to_vec()).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cmd_file_make_stopped_at_is_named_and_nothing_else() {
        let build = tempfile::tempdir().unwrap();
        let cmd = build.path().join("arch/x86/entry/vdso/.vma.o.cmd");
        std::fs::create_dir_all(cmd.parent().unwrap()).unwrap();
        std::fs::write(&cmd, "savedcmd_vma.o := gcc\n$(wildcard ./tools/ob").unwrap();
        let log = "  DESCEND objtool\n\
            arch/x86/entry/vdso/.vma.o.cmd:5: *** unterminated call to function 'wildcard': missing ')'.  Stop.\n\
            make[5]: *** [scripts/Makefile.build:556: arch/x86/entry/vdso] Error 2\n\
            arch/x86/entry/vdso/.vma.o.cmd:5: *** unterminated call to function 'wildcard': missing ')'.  Stop.\n\
            mm/.gone.o.cmd:2: *** missing separator.  Stop.\n\
            ../../etc/.x.cmd:1: *** missing separator.  Stop.\n\
            mm/filemap.c:10: error: expected ';'\n";
        assert_eq!(broken_cmd_files(log, build.path()), vec![cmd]);
        assert!(broken_cmd_files("make: *** [Makefile:260: __sub-make] Error 2\n", build.path()).is_empty());
    }

    #[test]
    fn a_make_that_was_stopped_leaves_nothing_half_written_for_the_next() {
        let build = tempfile::tempdir().unwrap();
        let b = build.path();
        let file = |rel: &str, age_s: u64| {
            let path = b.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
            let when = std::time::SystemTime::now() - Duration::from_secs(age_s);
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
            path
        };
        // A first make: nothing was stopped, nothing is removed; it is marked as running.
        assert_eq!(begin_make(b).unwrap(), 0);
        let marker = b.join(MAKE_RUNNING);
        std::fs::File::options()
            .write(true)
            .open(&marker)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        // Before it began: kept. While it ran (then it was killed): its outputs go.
        let kept = [file("mm/filemap.o", 3600), file("mm/.filemap.o.cmd", 3600), file("mm/built-in.a", 3600)];
        let half = [
            file("arch/x86/entry/vdso/.vma.o.cmd", 10),
            file("kernel/fork.o", 10),
            file("kernel/.fork.o.d", 10),
            file("kernel/built-in.a", 10),
        ];
        let other = file("include/generated/utsversion.h", 10);
        assert_eq!(begin_make(b).unwrap(), half.len());
        assert!(kept.iter().all(|p| p.exists()) && other.exists());
        assert!(half.iter().all(|p| !p.exists()));
        // A make that ended by itself removes the mark: the next removes nothing.
        std::fs::remove_file(&marker).unwrap();
        file("kernel/exit.o", 0);
        assert_eq!(begin_make(b).unwrap(), 0);
        assert!(marker.exists());
    }

    #[test]
    fn a_piggy_o_without_this_builds_payload_is_stale() {
        let build = tempfile::tempdir().unwrap();
        let dir = build.path().join("arch/x86/boot/compressed");
        std::fs::create_dir_all(&dir).unwrap();
        let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(dir.join("vmlinux.bin.lz4"), &payload).unwrap();
        let mut piggy = b"ELF header and the rest".to_vec();
        piggy.extend(&payload);
        piggy.extend(b"trailer");
        std::fs::write(dir.join("piggy.o"), &piggy).unwrap();
        assert!(!stale_piggy(build.path()), "piggy.o holds the payload");
        let mut other = payload.clone();
        other[4000] ^= 1;
        std::fs::write(dir.join("vmlinux.bin.lz4"), &other).unwrap();
        assert!(stale_piggy(build.path()), "one byte of the payload differs from piggy.o's");
        assert!(contains(b"abcdef", b"cde") && !contains(b"abcdef", b"cdx") && contains(b"abc", b""));
    }

    #[test]
    fn a_build_log_counts_its_compiled_objects() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        assert_eq!(compiled(&log), 0, "no log yet");
        std::fs::write(&log, "  SYNC    include/config/auto.conf\n  CC      mm/readahead.o\n  CC      mm/filemap.o\n  AR      mm/built-in.a\n  LD      vmlinux\n# CC in a comment\n").unwrap();
        assert_eq!(compiled(&log), 2);
        assert_eq!(last_make_step(&log), "# CC in a comment");
        // make V=2's reason is not part of the step; radiff's own lines are not steps.
        std::fs::write(&log, "# radiff: building base in /t from 1\n  CC      mm/readahead.o - due to: /t/mm/readahead.c\n# radiff: built base in 1.0 s\n").unwrap();
        assert_eq!(last_make_step(&log), "CC mm/readahead.o");
        assert_eq!(compiled(&log), 1);
    }

    #[test]
    fn one_make_runs_at_a_time_on_a_machine_of_fewer_than_8_cores_and_two_on_8() {
        use std::time::Duration;
        let dir = tempfile::tempdir().unwrap();
        let cache = crate::cache::Cache { root: dir.path().to_path_buf() };
        let kernels = super::super::Kernels::load(&crate::repo_root()).unwrap();
        let builder = Builder::new(&kernels, &cache);
        // -j3: 2 cores.
        let first = builder.make_slot(3).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let (tx, builder) = (tx.clone(), &builder);
            s.spawn(move || {
                let slot = builder.make_slot(3).unwrap();
                tx.send(()).unwrap();
                drop(slot);
            });
            assert!(rx.recv_timeout(Duration::from_millis(500)).is_err(), "a second make began beside the first");
            drop(first);
            rx.recv_timeout(Duration::from_secs(20)).expect("the second make begins once the first is done");
        });
        // -j9: 8 cores, two slots; a third waits.
        let (a, b) = (builder.make_slot(9).unwrap(), builder.make_slot(9).unwrap());
        std::thread::scope(|s| {
            let builder = &builder;
            s.spawn(move || {
                let slot = builder.make_slot(9).unwrap();
                tx.send(()).unwrap();
                drop(slot);
            });
            assert!(rx.recv_timeout(Duration::from_millis(500)).is_err(), "a third make began beside two on 8 cores");
            drop((a, b));
            rx.recv_timeout(Duration::from_secs(20)).expect("the third make begins once a slot is free");
        });
    }
}
