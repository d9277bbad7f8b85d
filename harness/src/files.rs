//! The user's files outside the cache (scenarios, fio jobs, kernels/, a review's or an
//! explore's folder, a bisect's log): every read and write names its path in its error.
//! The cache has its own room (cache.rs, staged writes), and so do the kernel trees
//! (kernels/, port/files.rs), the run folders (run/), the VM (vm.rs), the compiler's
//! objects (hybrid/compile.rs) and the guest (guest/); tests/house.rs keeps std::fs there.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// `text` as a path below a folder: relative and made of plain names only (no leading `/`,
/// no `..`, no `.`, no empty name), or why not. Every path radiff takes from a tree's or a
/// mail's text goes through this before it is joined to a folder radiff writes in.
pub fn below(text: &str) -> std::result::Result<&Path, String> {
    use std::path::Component;
    let path = Path::new(text);
    let plain = !text.is_empty()
        && !text.contains('\0')
        && !text.split('/').any(|name| name.is_empty() || name == "." || name == "..")
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(path)
    } else {
        Err(format!("`{text}` is not a path inside the folder (absolute, `..`, or an empty name)"))
    }
}

/// `rel` ([`below`]) joined to `root`, and, where it exists, checked to lie inside `root`
/// once symbolic links are followed; why not, otherwise.
pub fn inside(root: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
    let path = root.join(below(rel)?);
    match (path.canonicalize(), root.canonicalize()) {
        (Ok(real), Ok(top)) if !real.starts_with(&top) => {
            Err(format!("`{rel}` in {} is a symbolic link to {}, outside it", root.display(), real.display()))
        }
        _ => Ok(path),
    }
}

/// The text of `path`.
pub fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// The bytes of `path` (a mail, which may be in any charset).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// All of standard input (`radiff review -`).
pub fn read_stdin() -> Result<Vec<u8>> {
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut raw)
        .map_err(|e| Error::io(Path::new("standard input"), e))?;
    Ok(raw)
}

/// The text of `path`, or `None` when there is none; any other error is an error.
pub fn read_text_if_any(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Writes `data` to `path` (its folder must exist: see [`make_dir`]).
pub fn write(path: &Path, data: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, data).map_err(|e| Error::io(path, e))
}

/// Appends `line` and a newline to `path`, making it if it is not there: one O_APPEND
/// write, so that processes appending at once never mix their lines.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
    f.write_all(format!("{line}\n").as_bytes()).map_err(|e| Error::io(path, e))
}

/// Makes folder `dir` and its parents.
pub fn make_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// Removes file `path`; one that is not there is no error.
pub fn remove_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

/// Removes folder `dir` and what it holds, as far as it can (for cleaning up after a
/// failure, where a second error would hide the first).
pub fn remove_dir_quietly(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// The entries of folder `dir`, sorted by path.
pub fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        found.push(entry.map_err(|e| Error::io(dir, e))?.path());
    }
    found.sort();
    Ok(found)
}

/// When `path` was last written, in seconds since the epoch; `None` if it cannot be read.
pub fn modified_secs(path: &Path) -> Option<f64> {
    let at = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Some(at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs_f64())
}

/// A symbolic link at `link` to `target`.
pub fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link).map_err(|e| Error::io(link, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_names_its_path_and_a_missing_file_is_none_where_asked() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a/b.txt");
        let e = write(&f, "x").unwrap_err().to_string();
        assert!(e.contains("a/b.txt"), "{e}");
        make_dir(&d.path().join("a")).unwrap();
        write(&f, "x\n").unwrap();
        append_line(&f, "y").unwrap();
        assert_eq!(read_text(&f).unwrap(), "x\ny\n");
        assert_eq!(read_text_if_any(&d.path().join("none")).unwrap(), None);
        assert!(read_text(&d.path().join("none")).unwrap_err().to_string().contains("none"));
        assert_eq!(entries(&d.path().join("a")).unwrap(), vec![f.clone()]);
        remove_file(&f).unwrap();
        remove_file(&f).unwrap();
        symlink(Path::new("a"), &d.path().join("l")).unwrap();
        assert_eq!(std::fs::read_link(d.path().join("l")).unwrap(), Path::new("a"));
    }

    #[test]
    fn a_path_below_a_folder_is_relative_and_of_plain_names_only() {
        assert_eq!(below("mm/readahead.c"), Ok(Path::new("mm/readahead.c")));
        assert_eq!(below("linux/pagemap.h"), Ok(Path::new("linux/pagemap.h")));
        for bad in ["/etc/shadow", "../x", "a/../../x", "a/./b", "a//b", "", ".", "a/", "x\0y"] {
            assert!(below(bad).is_err(), "{bad:?} was taken");
        }
    }

    #[test]
    fn a_symbolic_link_out_of_the_folder_is_refused_and_one_within_is_not() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("canary"), "canary").unwrap();
        std::fs::create_dir(root.path().join("mm")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("canary"), root.path().join("mm/out.c")).unwrap();
        std::fs::write(root.path().join("mm/real.c"), "x").unwrap();
        std::os::unix::fs::symlink("real.c", root.path().join("mm/in.c")).unwrap();
        let why = inside(root.path(), "mm/out.c").unwrap_err();
        assert!(why.contains("symbolic link") && why.contains("canary"), "{why}");
        assert_eq!(inside(root.path(), "mm/in.c"), Ok(root.path().join("mm/in.c")));
        assert_eq!(inside(root.path(), "mm/new.c"), Ok(root.path().join("mm/new.c")), "a file not yet made");
        assert!(inside(root.path(), "/etc/shadow").is_err());
    }
}
