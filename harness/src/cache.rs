//! The cache outside the repository: kernel sources, build trees, kernels, disk images, runs.
//!
//! Root: `$RADIFF_CACHE`, else `$XDG_CACHE_HOME/radiff`, else `~/.cache/radiff`.
//! Layout (docs/design.md, "Where things live"):
//!   source/    the base source tarball `./setup` fetched
//!   trees/     work trees the variants' patches are applied to (git, so they can be reset)
//!   build/     one shared `O=` build directory per (tree, config)
//!   kernels/   one directory per built variant: bzImage, .config, build.log (make V=2,
//!              its first and last lines say when and how long), ccache.log (ccache's stats)
//!   locks/     a lock per work tree, and make-N.lock: one kernel make per 4 cores
//!   images/    disk images prepared once per (device, file system, file, layout)
//!   runs/      one directory per run: spec, console log, raw trace, trace JSON
//!   guest/     the guest program as guests run it, copied per build, when its own folder
//!              cannot hold the copies (an installed radiff; run/lab.rs)
//!   venv/      virtme-ng

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct Cache {
    pub root: PathBuf,
}

impl Cache {
    /// The cache named by the environment (see the module doc).
    pub fn from_env() -> Cache {
        let s = crate::settings::get();
        let root = if let Some(dir) = &s.cache {
            dir.clone()
        } else if let Some(dir) = &s.xdg_cache_home {
            dir.join("radiff")
        } else {
            s.home.clone().unwrap_or_else(|| "/root".into()).join(".cache/radiff")
        };
        Cache { root }
    }

    pub fn dir(&self, name: &str) -> Result<PathBuf> {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(dir)
    }

    /// virtme-ng's `vng`, from the cache's venv when `./setup` installed it there, else from PATH.
    pub fn vng(&self) -> PathBuf {
        let venv = self.root.join("venv/bin/vng");
        if venv.is_file() {
            venv
        } else {
            PathBuf::from("vng")
        }
    }
}

/// A lock on `path` (created if missing), held until dropped: exclusive ([`lock`]), or
/// shared ([`lock_shared`]).
pub struct Lock(Flock<File>);

impl Lock {
    /// The lock's file descriptor (a child given a copy holds the lock too).
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.0.as_raw_fd()
    }
}

/// An exclusive lock on `path`: blocks while another radiff process (or test trial) holds
/// it, exclusive or shared.
pub fn lock(path: &Path) -> Result<Lock> {
    lock_or_wait(path, |_| {})
}

/// [`lock`], calling `waiting` once with the path if another holder makes it wait.
pub fn lock_or_wait(path: &Path, waiting: impl FnOnce(&Path)) -> Result<Lock> {
    let file = lock_file(path)?;
    let file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(flock) => return Ok(Lock(flock)),
        Err((file, nix::errno::Errno::EWOULDBLOCK)) => file,
        Err((_, errno)) => return Err(Error::io(path, errno.into())),
    };
    waiting(path);
    let flock = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| Error::io(path, errno.into()))?;
    Ok(Lock(flock))
}

/// A shared lock on `path` (created if missing), held until dropped: any number of shared
/// holders at once, none while an exclusive one ([`lock`]) holds it. For readers of what
/// the exclusive holders write.
pub fn lock_shared(path: &Path) -> Result<Lock> {
    let file = lock_file(path)?;
    let flock = Flock::lock(file, FlockArg::LockShared).map_err(|(_, errno)| Error::io(path, errno.into()))?;
    Ok(Lock(flock))
}

/// The file a lock of `path` is held on, created if missing (never emptied).
fn lock_file(path: &Path) -> Result<File> {
    File::options().create(true).truncate(false).write(true).open(path).map_err(|e| Error::io(path, e))
}

/// [`lock`] if no one holds it now; `None` if another holder does (no waiting).
pub fn try_lock(path: &Path) -> Result<Option<Lock>> {
    let file = lock_file(path)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(flock) => Ok(Some(Lock(flock))),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, errno)) => Err(Error::io(path, errno.into())),
    }
}

/// A short content key: the first 16 hex digits of SHA-256 over the parts, each length-prefixed
/// so that ("ab","c") and ("a","bc") differ.
pub fn key<I, B>(parts: I) -> String
where
    I: IntoIterator<Item = B>,
    B: AsRef<[u8]>,
{
    let mut hasher = Sha256::new();
    for part in parts {
        let part = part.as_ref();
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    let digest = hasher.finalize();
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Writes `data` to `path` atomically (temporary file, then rename), creating parents.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    // A name no other writer uses: the whole file name (so `a.json` and `a.txt` differ),
    // the process, and a counter (so two threads of one process differ).
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp.{}.{n}", std::process::id()));
    if let Err(e) = std::fs::write(&tmp, data) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    put_in_place(&tmp, path, &[], None).inspect_err(|_e| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Where `path` is written before it appears: `NAME.partial` beside it (a kernel's
/// directory, a disk image's).
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// Starts `path`'s [`partial_path`] afresh, empty (what a stopped writer left there is
/// removed), and returns it: write there, then [`put_in_place`].
pub fn begin_partial(path: &Path) -> Result<PathBuf> {
    let partial = partial_path(path);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
    }
    std::fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
    Ok(partial)
}

/// The staged write: puts the finished `staged` (a file or a directory, written under
/// another name) in place as `path` by a rename, so that `path` is whole or absent, never
/// half-written. First the files named in `sync` (inside a staged directory) are put on
/// disk, so that a crash cannot leave a renamed directory with an empty file in it. An
/// earlier directory at `path` is moved to `aside` when given (a folder the caller removes
/// later: `path` is absent only for the instant between two renames), else removed; a
/// staged file replaces a file at `path` by the rename itself.
pub fn put_in_place(staged: &Path, path: &Path, sync: &[&str], aside: Option<&Path>) -> Result<()> {
    for file in sync {
        let file = staged.join(file);
        File::open(&file).and_then(|f| f.sync_all()).map_err(|e| Error::io(&file, e))?;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    if staged.is_dir() && path.is_dir() {
        match aside {
            Some(aside) => std::fs::rename(path, aside),
            None => std::fs::remove_dir_all(path),
        }
        .map_err(|e| Error::io(path, e))?;
    }
    std::fs::rename(staged, path).map_err(|e| Error::io(path, e))
}

/// Whether the file system holding `path` (or its nearest existing parent) has less than
/// 1 MiB left for an unprivileged writer: what a write that failed there most likely met.
pub fn nearly_full(path: &Path) -> bool {
    free_bytes(path).is_some_and(|free| free < 1 << 20)
}

/// Bytes an unprivileged writer can still write on the file system holding `path` (or its
/// nearest existing parent).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let mut at = Some(path);
    while let Some(p) = at {
        if let Ok(stat) = nix::sys::statvfs::statvfs(p) {
            #[allow(clippy::unnecessary_cast, reason = "fsblkcnt_t and c_ulong differ by target")]
            return Some((stat.blocks_available() as u64).saturating_mul(stat.fragment_size() as u64));
        }
        at = p.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_writing_one_file_at_once_never_share_a_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.json");
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..50 {
                        write_atomic(path, &vec![b'a' + t; 64 << 10]).unwrap();
                    }
                });
            }
        });
        // Whole, from one writer, and no temp file left behind.
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 64 << 10);
        assert!(data.iter().all(|&b| b == data[0]));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("trace.json")]);
    }

    #[test]
    fn a_staged_directory_replaces_the_old_one_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("kernels/base-1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("build.log"), "old").unwrap();
        let partial = begin_partial(&dir).unwrap();
        assert_eq!(partial, tmp.path().join("kernels/base-1.partial"));
        std::fs::write(partial.join("bzImage"), "new").unwrap();
        put_in_place(&partial, &dir, &["bzImage"], None).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("bzImage")).unwrap(), "new");
        assert!(!dir.join("build.log").exists() && !partial.exists());
    }

    #[test]
    fn a_held_lock_is_not_taken_again_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.lock");
        let held = try_lock(&path).unwrap().expect("free at first");
        // flock locks belong to the open file: a second open of it, even in this process, waits.
        assert!(try_lock(&path).unwrap().is_none());
        drop(held);
        assert!(try_lock(&path).unwrap().is_some());
    }

    #[test]
    fn shared_locks_are_held_together_and_keep_the_exclusive_one_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tree.lock");
        let a = lock_shared(&path).unwrap();
        let b = lock_shared(&path).unwrap();
        assert!(try_lock(&path).unwrap().is_none(), "an exclusive lock while two shared ones are held");
        drop(a);
        assert!(try_lock(&path).unwrap().is_none(), "an exclusive lock while one shared one is held");
        drop(b);
        let exclusive = try_lock(&path).unwrap().expect("free once both are dropped");
        drop(exclusive);
    }

    #[test]
    fn key_separates_parts() {
        assert_ne!(key(["ab", "c"]), key(["a", "bc"]));
        assert_eq!(key(["x"]), key(["x"]));
        assert_eq!(key(["x"]).len(), 16);
    }
}
