//! Reading a kernel tree's files by path: from a directory, from a git revision, or from a
//! base with a variant's patches applied in a scratch directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
pub use crate::mail::{outside_the_tree, touched_files};

/// A kernel tree's files by path from its root (`mm/readahead.c`).
pub trait Files {
    /// The file's text, `None` when the tree has no such file.
    fn read(&self, path: &str) -> Result<Option<String>>;
    /// The tree, for messages ("~/src/linux at mm-new").
    fn describe(&self) -> String;
}

/// A tree's files, each read once however often it is asked for.
pub struct Cached<'a> {
    tree: &'a dyn Files,
    texts: std::collections::BTreeMap<String, Option<String>>,
}

impl<'a> Cached<'a> {
    pub fn new(tree: &'a dyn Files) -> Cached<'a> {
        Cached { tree, texts: Default::default() }
    }

    /// The file's text (`None`: the tree has no such file), read on the first call only.
    pub fn read(&mut self, path: &str) -> Result<Option<&str>> {
        if !self.texts.contains_key(path) {
            let text = self.tree.read(path)?;
            self.texts.insert(path.to_string(), text);
        }
        Ok(self.texts[path].as_deref())
    }

    /// The tree, for messages.
    pub fn describe(&self) -> String {
        self.tree.describe()
    }
}

/// The files below a directory (or, for tests, held in memory).
pub struct DirFiles {
    root: PathBuf,
    memory: Option<BTreeMap<String, String>>,
}

impl DirFiles {
    pub fn new(root: impl Into<PathBuf>) -> DirFiles {
        DirFiles { root: root.into(), memory: None }
    }

    /// Files held in memory, for tests of what reads them.
    pub fn from_map<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> DirFiles {
        DirFiles {
            root: PathBuf::from("(memory)"),
            memory: Some(files.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
        }
    }
}

impl Files for DirFiles {
    fn read(&self, path: &str) -> Result<Option<String>> {
        if let Some(m) = &self.memory {
            return Ok(m.get(path).cloned());
        }
        // A path from a tree's or a patch's text, and a tree that may hold symbolic links:
        // nothing outside the tree is read.
        let p = crate::files::inside(&self.root, path).map_err(|why| Error::input(&self.root, 0, why))?;
        match std::fs::read(&p) {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&p, e)),
        }
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}

/// The files of a git repository at a revision (not its work tree, which a build may be
/// patching).
pub struct GitFiles {
    pub dir: PathBuf,
    pub rev: String,
}

impl Files for GitFiles {
    fn read(&self, path: &str) -> Result<Option<String>> {
        let spec = format!("{}:{path}", self.rev);
        let exists = crate::process::git_in(&self.dir).args(["cat-file", "-e", &spec]).output()?;
        if !exists.0.success() {
            return Ok(None);
        }
        crate::process::git_in(&self.dir).args(["show", &spec]).read().map(Some)
    }

    fn describe(&self) -> String {
        format!("{} at {}", self.dir.display(), self.rev)
    }
}

/// A base's files with a variant's patches applied: the files the patches touch (and any
/// asked for) are copied from the base into a scratch directory and patched there, as the
/// build would patch them (`patch -p1`), leaving the base alone.
pub struct PatchedFiles<'a> {
    base: &'a dyn Files,
    dir: tempfile::TempDir,
    label: String,
}

impl<'a> PatchedFiles<'a> {
    /// `base` with `patches` applied; `also` are files to copy even if no patch touches
    /// them (the ledger's), so that every read sees the same tree.
    pub fn new(base: &'a dyn Files, variant: &str, patches: &[PathBuf], also: &[&str]) -> Result<PatchedFiles<'a>> {
        let dir =
            tempfile::Builder::new().prefix("radiff-port-").tempdir().map_err(|e| Error::io(Path::new("/tmp"), e))?;
        let mut wanted: Vec<String> = also.iter().map(|s| s.to_string()).collect();
        for p in patches {
            // The decoded mail: an encoded body must not hide a name outside the tree.
            let text = crate::kernels::patch_text(p)?;
            if let Some((line, why)) = outside_the_tree(&text) {
                return Err(Error::input(
                    p,
                    line,
                    format!("{why}: radiff refuses a patch that names a file outside the tree; nothing was applied"),
                ));
            }
            wanted.extend(touched_files(&text));
        }
        wanted.sort();
        wanted.dedup();
        for file in &wanted {
            if let Some(text) = base.read(file)? {
                let path = dir.path().join(file);
                std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| Error::io(&path, e))?;
                std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
            }
        }
        for p in patches {
            crate::kernels::apply_patch(dir.path(), variant, p)?;
        }
        Ok(PatchedFiles { base, dir, label: format!("{} with {variant}'s patches", base.describe()) })
    }
}

impl Files for PatchedFiles<'_> {
    fn read(&self, path: &str) -> Result<Option<String>> {
        let p = self.dir.path().join(path);
        if p.exists() {
            return DirFiles::new(self.dir.path()).read(path);
        }
        self.base.read(path)
    }

    fn describe(&self) -> String {
        self.label.clone()
    }
}
