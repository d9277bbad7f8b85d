//! The base's git work tree: unpacked (or cloned) once, recorded in git so that patches can
//! always be undone, reset to the base after every build, and patched with a dry run first.

use std::path::{Path, PathBuf};

use super::source::{git_rev, BaseId};
use super::{Base, BaseSource, Builder};
use crate::error::{Error, Result};
use crate::process::Cmd;

impl Builder<'_> {
    /// The base's work tree, checked out at the base and clean. Hold [`Builder::lock_tree`]
    /// while using it.
    pub fn work_tree(&self) -> Result<PathBuf> {
        let base = self.base_id()?;
        self.prepare_tree(&base)
    }

    /// Where the base's files are read as it is (by `radiff kernels port-check`): a git
    /// revision of the base, never a work tree that a build may be patching. A Debian tree
    /// that no build has unpacked and recorded yet is, first (under the tree's lock).
    pub fn base_source(&self) -> Result<BaseSource> {
        match &self.kernels.base {
            Base::Debian { .. } => {
                let base = self.base_id()?;
                let tree = self.cache.dir("trees")?.join(&base.tree_name);
                let recorded =
                    tree.join(READY).is_file() && git(&tree, &["rev-parse", "-q", "--verify", BASE_TAG]).is_ok();
                if !recorded {
                    let _lock = self.lock_tree()?;
                    self.prepare_tree(&base)?;
                }
                Ok(BaseSource::Git { dir: tree, rev: BASE_TAG.to_string() })
            }
            Base::Git { tree, rev } => Ok(BaseSource::Git { dir: tree.clone(), rev: rev.clone() }),
            Base::InPlace { tree } => Ok(BaseSource::Dir(tree.clone())),
        }
    }

    /// The work tree for `base`, checked out and clean.
    pub(super) fn prepare_tree(&self, base: &BaseId) -> Result<PathBuf> {
        let (tree, recorded) = self.unpack_tree(base)?;
        if !recorded {
            crate::progress::progress("recording the base tree in git, so patches can always be undone (once)");
            record_base(&tree)?;
        }
        Ok(tree)
    }

    /// The work tree for `base`, and whether its git record of the base exists yet (if it
    /// does, the tree is checked out at the base and clean). It does not only for a Debian
    /// tree just unpacked, or unpacked by a run that stopped before recording it: nothing
    /// writes into a tree before its record.
    pub(super) fn unpack_tree(&self, base: &BaseId) -> Result<(PathBuf, bool)> {
        match &self.kernels.base {
            Base::InPlace { tree } => Ok((tree.clone(), true)),
            Base::Debian { package } => {
                let trees = self.cache.dir("trees")?;
                let tree = trees.join(&base.tree_name);
                if tree.join(READY).is_file() {
                    if git(&tree, &["rev-parse", "-q", "--verify", BASE_TAG]).is_err() {
                        // A tree unpacked before the tag existed: its first commit is the base.
                        let first = git(&tree, &["rev-list", "--max-parents=0", "HEAD"])?;
                        git(&tree, &["tag", BASE_TAG, first.trim()])?;
                    }
                    reset_tree(&tree, BASE_TAG)?;
                    return Ok((tree, true));
                }
                if tree.join(UNPACKED).is_file() {
                    return Ok((tree, false));
                }
                let tarball = self.tarball(package)?;
                let tmp = trees.join(format!("{}.unpacking", base.tree_name));
                let _ = std::fs::remove_dir_all(&tmp);
                std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
                crate::progress::progress(&format!("unpacking {} into {} (once)", tarball.display(), tree.display()));
                // Debian's tarball is xz in many blocks: `-T0` decompresses them on every core
                // (xz 5.4, bookworm's, decompresses on one unless told), 12 s -> 6 s here.
                Cmd::new("tar")
                    .arg("-C")
                    .arg(&tmp)
                    .args(["--strip-components=1", "--use-compress-program=xz -T0", "-xf"])
                    .arg(&tarball)
                    .read()?;
                std::fs::write(tmp.join(UNPACKED), b"").map_err(|e| Error::io(&tmp, e))?;
                crate::cache::put_in_place(&tmp, &tree, &[], None)?;
                Ok((tree, false))
            }
            Base::Git { tree: source, rev } => {
                let trees = self.cache.dir("trees")?;
                let tree = trees.join(&base.tree_name);
                if !tree.join(".git").is_dir() {
                    crate::progress::progress(&format!(
                        "cloning {} (shared, no copy of its objects) into {}",
                        source.display(),
                        tree.display()
                    ));
                    crate::process::git()
                        .args(["clone", "-q", "--shared", "--no-checkout"])
                        .arg(source)
                        .arg(&tree)
                        .read()?;
                }
                reset_tree(&tree, &git_rev(source, rev)?)?;
                Ok((tree, true))
            }
        }
    }
}

/// Marks a Debian work tree as wholly unpacked (its git record may still be missing).
/// Written into the tree before the rename that makes it appear, so a tree without it was
/// never finished. Left out of the record and removed once [`READY`] says the tree is ready.
pub(super) const UNPACKED: &str = ".radiff-unpacked";

/// Marks a Debian work tree whose git record of the base is complete.
pub(super) const READY: &str = ".git/radiff-ready";

/// Records the unpacked, untouched Debian tree as the base commit (tagged [`BASE_TAG`]),
/// so a variant's patches can always be undone with `git checkout` and `git clean`.
/// Starts over if an earlier run stopped partway.
pub(super) fn record_base(tree: &Path) -> Result<()> {
    let dot_git = tree.join(".git");
    if dot_git.exists() {
        std::fs::remove_dir_all(&dot_git).map_err(|e| Error::io(&dot_git, e))?;
    }
    git(tree, &["init", "-q"])?;
    // An automatic gc would repack 90,000 files in the background of a build.
    git(tree, &["config", "gc.auto", "0"])?;
    git(tree, &["add", "-A", "-f"])?;
    git(tree, &["rm", "-q", "--cached", "--", UNPACKED])?;
    git(tree, &["-c", "user.name=radiff", "-c", "user.email=radiff@localhost", "commit", "-q", "-m", "base"])?;
    git(tree, &["tag", BASE_TAG])?;
    std::fs::write(tree.join(READY), b"").map_err(|e| Error::io(tree.join(READY), e))?;
    std::fs::remove_file(tree.join(UNPACKED)).map_err(|e| Error::io(tree.join(UNPACKED), e))
}

pub(super) fn git(dir: &Path, args: &[&str]) -> Result<String> {
    crate::process::git_in(dir).args(args).read()
}

/// The tag that marks the base commit of a work tree radiff unpacked.
pub(super) const BASE_TAG: &str = "radiff-base";

/// Restores the work tree to `base` (a commit), removing whatever patches added; only
/// files that differ are rewritten, so the next build stays incremental.
pub(super) fn reset_tree(tree: &Path, base: &str) -> Result<()> {
    git(tree, &["checkout", "-q", "-f", "--detach", base])?;
    git(tree, &["clean", "-q", "-f", "-d", "-x"])?;
    Ok(())
}

/// The text `patch -p1` gets of a variant's patch file: the mail decoded (quoted-printable,
/// base64, an attachment, CRLF: [`crate::mail::patch_text`]); a plain mail or diff as it is.
pub fn patch_text(patch: &Path) -> Result<String> {
    decoded(patch, &std::fs::read(patch).map_err(|e| Error::io(patch, e))?)
}

fn decoded(patch: &Path, raw: &[u8]) -> Result<String> {
    crate::mail::patch_text(raw)
        .map_err(|why| Error::input(patch, 0, format!("{why}; save the mail as your mail client shows its source")))
}

/// The files `patches` change that a build runs rather than compiles (a Makefile, Kbuild,
/// Kconfig, a script, anything under scripts/ or tools/: any file but C, headers, assembly,
/// Rust and documentation), said in a phrase; `None` when there are none.
pub(crate) fn runs_in_build(patches: &[PathBuf]) -> Result<Option<String>> {
    let mut files = Vec::new();
    for p in patches {
        files.extend(build_runs(&crate::mail::touched_files(&patch_text(p)?)));
    }
    files.sort();
    files.dedup();
    Ok((!files.is_empty()).then(|| format!("its patches change what the build runs: {}", files.join(", "))))
}

/// Of `files` (paths in a tree), those a build runs rather than compiles.
pub(crate) fn build_runs(files: &[String]) -> Vec<String> {
    const COMPILED: [&str; 5] = [".c", ".h", ".S", ".rs", ".lds.S"];
    const DOCS: [&str; 3] = [".rst", ".txt", ".md"];
    files
        .iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            let run_dir = f.starts_with("scripts/") || f.starts_with("tools/");
            let compiled = COMPILED.iter().any(|s| name.ends_with(s));
            let doc = f.starts_with("Documentation/") || DOCS.iter().any(|s| name.ends_with(s));
            run_dir || !(compiled || doc)
        })
        .cloned()
        .collect()
}

/// Applies one patch (`patch -p1`, a raw mail decoded: [`patch_text`]) in `tree`, first as a
/// dry run so that a patch that does not apply changes nothing; the error carries patch's
/// own account of the failing hunks. The one place radiff applies a patch.
pub(crate) fn apply_patch(tree: &Path, variant: &str, patch: &Path) -> Result<()> {
    let raw = std::fs::read(patch).map_err(|e| Error::io(patch, e))?;
    let text = decoded(patch, &raw)?;
    // A mail that needed decoding goes to patch as its decoded text, in a file of its own.
    let decoded = match raw == text.as_bytes() {
        true => None,
        false => {
            let mut file = tempfile::NamedTempFile::new().map_err(|e| Error::io(Path::new("/tmp"), e))?;
            std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| Error::io(file.path(), e))?;
            Some(file)
        }
    };
    let input = decoded.as_ref().map_or(patch, |f| f.path());
    let patch_cmd = |dry: bool| {
        let mut cmd = Cmd::new("patch")
            .dir(tree)
            .args(["-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-i"])
            .arg(input);
        if dry {
            cmd = cmd.arg("--dry-run");
        }
        cmd
    };
    let (status, output) = patch_cmd(true).output()?;
    if !status.success() {
        return Err(Error::PatchFailed {
            variant: variant.to_string(),
            patch: patch.to_path_buf(),
            output: output.trim_end().to_string(),
        });
    }
    let (status, output) = patch_cmd(false).output()?;
    if !status.success() {
        return Err(Error::PatchFailed {
            variant: variant.to_string(),
            patch: patch.to_path_buf(),
            output: output.trim_end().to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_build_runs_is_told_from_what_it_compiles() {
        let files: Vec<String> = [
            "mm/readahead.c",
            "include/linux/pagemap.h",
            "arch/x86/entry/entry_64.S",
            "Documentation/mm/readahead.rst",
            "Makefile",
            "mm/Makefile",
            "mm/Kconfig",
            "scripts/kconfig/merge_config.sh",
            "tools/testing/vma/vma.c",
            "lib/Kconfig.debug",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            build_runs(&files),
            [
                "Makefile",
                "mm/Makefile",
                "mm/Kconfig",
                "scripts/kconfig/merge_config.sh",
                "tools/testing/vma/vma.c",
                "lib/Kconfig.debug"
            ]
        );
    }
}
