//! Where the base source comes from (a Debian tarball, a git tree, a tree as checked out),
//! what identifies its contents, and where each variant's kernel lives in the cache.

use std::path::{Path, PathBuf};

use super::tree::git;
use super::{Base, Builder, Variant, ENV_TREE, RECIPE};
use crate::cache;
use crate::error::{Error, Result};

/// The resolved base: a name for its work tree and what identifies its contents.
#[derive(Clone, Debug)]
pub(super) struct BaseId {
    /// Directory name under `trees/` and `build/`.
    pub(super) tree_name: String,
    /// Key material: changes whenever the source changes.
    pub(super) content: String,
    /// Human description for `kernels list`.
    pub(super) describe: String,
}

impl Builder<'_> {
    pub(super) fn base_id(&self) -> Result<BaseId> {
        match &self.kernels.base {
            Base::Debian { package } => {
                let tarball = self.tarball(package)?;
                let meta = std::fs::metadata(&tarball).map_err(|e| Error::io(&tarball, e))?;
                let version =
                    std::fs::read_to_string(self.cache.root.join("source").join(format!("{package}.version")))
                        .map(|s| s.trim().to_string())
                        .unwrap_or_default();
                Ok(BaseId {
                    tree_name: format!("debian-{package}-{}", &cache::key([meta.len().to_string()])[..8]),
                    content: format!("debian {package} {version} {}", meta.len()),
                    describe: format!("Debian {package} {version} ({})", tarball.display()),
                })
            }
            Base::Git { tree, rev } => {
                let sha = git_rev(tree, rev)?;
                let canonical = tree.canonicalize().map_err(|e| Error::io(tree, e))?;
                Ok(BaseId {
                    tree_name: format!("git-{}", &cache::key([canonical.to_string_lossy().as_bytes()])[..8]),
                    content: format!("git {sha}"),
                    describe: format!("git {} at {rev} ({})", tree.display(), &sha[..12]),
                })
            }
            Base::InPlace { tree } => {
                let sha = git_rev(tree, "HEAD")?;
                let dirty =
                    crate::process::git_in(tree).args(["status", "--porcelain", "--untracked-files=no"]).read()?;
                let canonical = tree.canonicalize().map_err(|e| Error::io(tree, e))?;
                let managed = self
                    .cache
                    .root
                    .join("trees")
                    .canonicalize()
                    .ok()
                    .filter(|t| canonical.parent() == Some(t.as_path()));
                let tree_name = match managed {
                    // One of radiff's own work trees: same build directory, same lock.
                    Some(_) => canonical.file_name().unwrap_or_default().to_string_lossy().into_owned(),
                    None => format!("inplace-{}", &cache::key([canonical.to_string_lossy().as_bytes()])[..8]),
                };
                Ok(BaseId {
                    tree_name,
                    content: format!("inplace {sha} {}", cache::key([dirty.as_bytes()])),
                    describe: format!("{} as checked out ({})", tree.display(), &sha[..12]),
                })
            }
        }
    }

    /// Where `./setup` puts Debian's `package` (`linux-source-7.3`): the cache's `source/`.
    pub fn tarball_path(&self, package: &str) -> PathBuf {
        self.cache.root.join("source").join(format!("{package}.tar.xz"))
    }

    pub(super) fn tarball(&self, package: &str) -> Result<PathBuf> {
        let path = self.tarball_path(package);
        if path.is_file() {
            Ok(path)
        } else {
            Err(Error::Other(format!(
                "the base source {} is missing: run ./setup (it fetches Debian's {package}), or set {ENV_TREE}=/path/to/linux",
                path.display()
            )))
        }
    }

    /// Where `variant`'s kernel lives (or will live) in the cache.
    pub fn kernel_dir(&self, variant: &Variant) -> Result<PathBuf> {
        let base = self.base_id()?;
        self.kernel_dir_for(&base, variant)
    }

    pub(super) fn kernel_dir_for(&self, base: &BaseId, variant: &Variant) -> Result<PathBuf> {
        let config = std::fs::read(&self.kernels.config).map_err(|e| Error::io(&self.kernels.config, e))?;
        let mut parts: Vec<Vec<u8>> = vec![RECIPE.into(), base.content.clone().into(), config];
        for patch in &variant.patches {
            parts.push(std::fs::read(patch).map_err(|e| Error::io(patch, e))?);
        }
        Ok(self.cache.root.join("kernels").join(format!("{}-{}", variant.name, cache::key(parts))))
    }
}

pub(super) fn git_rev(tree: &Path, rev: &str) -> Result<String> {
    if !tree.join(".git").exists() {
        return Err(Error::Other(format!("{} is not a git tree (set by kernels.yaml or {ENV_TREE})", tree.display())));
    }
    Ok(git(tree, &["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?.trim().to_string())
}
