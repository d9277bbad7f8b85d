//! Kernel sources and builds: turns `kernels/` into bootable bzImages in the cache.
//!
//! `kernels/kernels.yaml` names the base source and the config fragment;
//! `kernels/variants/NAME/` holds each variant's patch series (applied in file-name
//! order with `patch -p1`, so raw mails saved from the list work). `base` is the
//! unpatched tree and needs no directory.
//!
//! Every variant is built in one shared `O=` build directory per (tree, config): the
//! first build is cold, every other one recompiles only what its patches touch. The
//! work tree is a git repository so that it can always be reset to the base, even
//! after a patch failed half-way or radiff was killed.
//!
//! The parts: `source` (where the base comes from, what identifies it, where its kernels
//! live), `tree` (the git work tree: unpack, record, reset, patch), `configure`
//! (tinyconfig + the fragment, checked line by line), `compile` (locks, make, and the
//! kernel directory that appears whole or not at all), `list` (`radiff kernels list`).

mod compile;
mod configure;
mod kconfig;
mod list;
mod source;
mod tracepoints;
mod tree;

pub use tracepoints::{check_tree, needed as needed_tracepoints, Tracing, READAHEAD_H};
pub(crate) use tree::apply_patch;
pub use tree::patch_text;
use tree::runs_in_build;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cache::{self, Cache};
use crate::error::{Error, Result};

pub use compile::{bzimage_release, is_compile, step_and_reason, BUILDING, BUILT, CCACHE_LOG};
pub use configure::check_fragment;

/// Bumped when the way radiff builds changes, so old cached kernels are not reused.
pub(super) const RECIPE: &str = "radiff-kernel-recipe-2";

/// What `kernels/` describes.
#[derive(Clone, Debug)]
pub struct Kernels {
    /// The `kernels/` directory.
    pub dir: PathBuf,
    pub base: Base,
    /// The config fragment merged onto `make tinyconfig`.
    pub config: PathBuf,
    /// `base` first, then the variants in name order.
    pub variants: Vec<Variant>,
    /// Where the base's model was said (`kernels/kernels.yaml:N` or `RADIFF_BASE_MODEL`),
    /// if it was: `model: base` or `model: none`.
    pub model_said: Option<String>,
}

/// Where the base source comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    /// A Debian `linux-source-X.Y` package; `./setup` fetched its tarball into the cache.
    Debian { package: String },
    /// A local kernel git tree at a revision (a branch, tag or commit).
    Git { tree: PathBuf, rev: String },
    /// A kernel tree built as it is checked out, in place (for `git bisect run`).
    InPlace { tree: PathBuf },
}

/// Where a base's files can be read as they are ([`Builder::base_source`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseSource {
    /// A git repository at a revision.
    Git { dir: PathBuf, rev: String },
    /// A directory, as checked out.
    Dir(PathBuf),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub name: String,
    /// Patches in the order they are applied.
    pub patches: Vec<PathBuf>,
    /// The model policy the variant's kernel must match, and where that was said.
    pub model: ModelExpectation,
}

/// What the model predicts for a variant: a policy of `radiff_model::Policy::for_variant`
/// (`base` for a patch that must not change behaviour), or nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelExpectation {
    /// The variant's own name is a policy the model knows.
    SameName(String),
    /// `model: POLICY` in the variant's `variant.yaml`, at this line.
    Declared { policy: String, file: PathBuf, line: usize },
    /// No policy: trials check the kernel against the hybrid (its tree's C run in the
    /// model) where its changed functions run as C; otherwise against its snapshot, showing
    /// how its trace differs from the base kernel's, without a model check.
    None,
    /// `model: none` in the variant's `variant.yaml`, at this line: no model check.
    Off { file: PathBuf, line: usize },
    /// No model check because the base says so (`model: none` in kernels.yaml, or
    /// `RADIFF_BASE_MODEL=none`): the model ports another kernel than this base.
    BaseOff { said: String },
}

impl ModelExpectation {
    /// The name of the model's policy, if there is one.
    pub fn policy(&self) -> Option<&str> {
        match self {
            ModelExpectation::SameName(p) | ModelExpectation::Declared { policy: p, .. } => Some(p),
            ModelExpectation::None | ModelExpectation::Off { .. } | ModelExpectation::BaseOff { .. } => None,
        }
    }

    /// "base (kernels/variants/x/variant.yaml:2)", for listings.
    pub fn describe(&self) -> String {
        match self {
            ModelExpectation::SameName(p) => format!("{p} (the policy of the same name)"),
            ModelExpectation::Declared { policy, file, line } => format!("{policy} ({}:{line})", file.display()),
            ModelExpectation::None => format!("no policy: the hybrid where its changed functions run as C, else the snapshot and the difference from base ({VARIANT_FILE} can name a policy)"),
            ModelExpectation::Off { file, line } => format!("none ({}:{line}): trials check the snapshot and show the difference from base", file.display()),
            ModelExpectation::BaseOff { said } => format!("none: {said} says `model: none` for this base; trials check the snapshot and show the difference from base"),
        }
    }

    /// The variant's expectation from its directory: `variant.yaml`'s `model:` when the
    /// file exists, else the policy of the same name, else none.
    fn load(name: &str, dir: &Path) -> Result<ModelExpectation> {
        let file = dir.join(VARIANT_FILE);
        if !file.exists() {
            return Ok(match radiff_model::Policy::for_variant(name) {
                Some(_) => ModelExpectation::SameName(name.to_string()),
                None => ModelExpectation::None,
            });
        }
        let text = crate::files::read_text(&file)?;
        let parsed: VariantFile = crate::yaml::parse(&file, &text)?;
        let line = crate::yaml::line_of(&text, &["model"]);
        match parsed.model.as_deref() {
            None => Err(Error::input(&file, 0, format!("`model:` is missing: {}", model_help()))),
            Some("none") => Ok(ModelExpectation::Off { file, line }),
            Some(policy) if radiff_model::Policy::for_variant(policy).is_some() => {
                Ok(ModelExpectation::Declared { policy: policy.to_string(), file, line })
            }
            Some(other) => Err(Error::input(
                &file,
                line,
                format!("`model: {other}`: the model has no policy `{other}`; {}", model_help()),
            )),
        }
    }
}

/// Whether the base's model check is off, and where that was said (`RADIFF_BASE_MODEL`
/// over kernels.yaml's `model:`); a value radiff does not know is an error at its line.
fn base_model(file: &Path, text: &str, declared: Option<&str>, env: &KernelsEnv) -> Result<Option<String>> {
    let known = |v: &str| matches!(v, "none" | "base");
    if let Some(v) = &env.base_model {
        if !known(v) {
            return Err(Error::input(
                Path::new(ENV_BASE_MODEL),
                0,
                format!("`{v}`: the base's model is `base` (the model's port, the default) or `none`"),
            ));
        }
        return Ok((v == "none").then(|| format!("{ENV_BASE_MODEL}=none")));
    }
    match declared {
        None | Some("base") => Ok(None),
        Some("none") => {
            let line = crate::yaml::line_of(text, &["model"]);
            Ok(Some(format!("{}:{line}", file.display())))
        }
        Some(other) => Err(Error::input(
            file,
            crate::yaml::line_of(text, &["model"]),
            format!("`model: {other}`: the base's model is `base` (the model's port, the default) or `none` (no model check on this base)"),
        )),
    }
}

/// Why `tree` is not a kernel source tree, if it is not one (before anything is built).
fn check_kernel_tree(tree: &Path) -> std::result::Result<(), String> {
    if !tree.exists() {
        // The host check names it with everything else missing (`radiff::host`).
        return Ok(());
    }
    for must in ["Makefile", "mm/readahead.c"] {
        if !tree.join(must).is_file() {
            return Err(format!("{} is not a kernel tree: it has no {must}", tree.display()));
        }
    }
    Ok(())
}

/// A variant's own settings, beside its patches.
pub const VARIANT_FILE: &str = "variant.yaml";

/// The file `radiff review` puts in a variant folder it makes, holding its process id: the
/// variant is that process's alone. Every other process leaves it out of `kernels/` (a
/// `cargo test` beside a review, or after a review that was killed), and a later review
/// removes a folder whose process is gone ([`remove_stale_reviews`]).
pub const REVIEW_MARK: &str = ".radiff-review";

/// The process id in `dir`'s [`REVIEW_MARK`], when it has one.
fn review_of(dir: &Path) -> Option<u32> {
    crate::files::read_text_if_any(&dir.join(REVIEW_MARK)).ok().flatten()?.trim().parse().ok()
}

/// Removes the folders of `variants_dir` that a review made whose process no longer runs
/// (killed before it could remove them); returns their names.
pub fn remove_stale_reviews(variants_dir: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    for dir in crate::files::entries(variants_dir).unwrap_or_default() {
        let Some(pid) = review_of(&dir) else { continue };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            crate::files::remove_dir_quietly(&dir);
            removed.push(dir.file_name().unwrap_or_default().to_string_lossy().into_owned());
        }
    }
    removed
}

/// How to write `variant.yaml`'s `model:`, with the policies the model knows.
pub fn model_help() -> String {
    format!(
        "write `model: base` for a patch that must not change behaviour, `model: none` for no model check, \
         or `model: POLICY` with a policy the model knows ({}; model/src/variant.rs)",
        radiff_model::Policy::KNOWN.join(", ")
    )
}

/// `kernels/variants/NAME/variant.yaml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantFile {
    model: Option<String>,
    /// Free text: what the patch is.
    #[allow(dead_code, reason = "kept from kernels.yaml for people reading it; no code reads it")]
    description: Option<String>,
}

/// A kernel ready to boot.
#[derive(Clone, Debug)]
pub struct Built {
    pub variant: String,
    pub bzimage: PathBuf,
    /// False when the cache already had it.
    pub compiled: bool,
    pub elapsed: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelsFile {
    base: BaseFile,
    config: String,
    /// `none`: no model check on this base (the model ports another kernel); `base`
    /// (the default): the model's port is the oracle.
    model: Option<String>,
}

pub use crate::settings::{ENV_BASE_MODEL, ENV_LOCKED, ENV_REV, ENV_TREE};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BaseFile {
    debian: Option<String>,
    git: Option<String>,
    rev: Option<String>,
}

/// What the environment says of the kernels, applied over kernels.yaml: the base tree and
/// revision (`RADIFF_KERNEL_TREE`, `RADIFF_KERNEL_REV`) and the base's model
/// (`RADIFF_BASE_MODEL`).
#[derive(Clone, Debug, Default)]
pub struct KernelsEnv {
    pub tree: Option<PathBuf>,
    pub rev: Option<String>,
    pub base_model: Option<String>,
}

impl KernelsEnv {
    /// The process's (read once by [`crate::settings`]).
    pub fn from_settings() -> KernelsEnv {
        let s = crate::settings::get();
        KernelsEnv { tree: s.kernel_tree.clone(), rev: s.kernel_rev.clone(), base_model: s.base_model.clone() }
    }
}

impl Kernels {
    /// Reads `repo/kernels/`, with the environment's settings over it.
    pub fn load(repo: &Path) -> Result<Kernels> {
        let dir = repo.join("kernels");
        let text = crate::files::read_text(&dir.join("kernels.yaml"))?;
        Kernels::parse(&dir, &text, &KernelsEnv::from_settings())
    }

    /// The kernels `text` (the content of `dir/kernels.yaml`) declares, with `env` over it;
    /// the variants are `dir/variants/`'s folders.
    pub fn parse(dir: &Path, text: &str, env: &KernelsEnv) -> Result<Kernels> {
        let dir = dir.to_path_buf();
        let file = dir.join("kernels.yaml");
        let text = text.to_string();
        let parsed: KernelsFile = crate::yaml::parse(&file, &text)?;
        let mut base = match (parsed.base.debian, parsed.base.git) {
            (Some(package), None) => Base::Debian { package },
            (None, Some(tree)) => {
                Base::Git { tree: expand_home(&tree), rev: parsed.base.rev.unwrap_or_else(|| "HEAD".into()) }
            }
            _ => {
                return Err(Error::input(
                    &file,
                    crate::yaml::line_of(&text, &["base"]),
                    "`base` needs exactly one of `debian: PACKAGE` or `git: TREE` (with optional `rev:`)",
                ))
            }
        };
        if let Base::Git { tree, .. } = &base {
            check_kernel_tree(tree)
                .map_err(|why| Error::input(&file, crate::yaml::line_of(&text, &["base", "git"]), why))?;
        }
        if let Some(tree) = env.tree.clone() {
            let rev = env.rev.clone().unwrap_or_else(|| "HEAD".into());
            check_kernel_tree(&tree).map_err(|why| Error::input(Path::new(ENV_TREE), 0, why))?;
            base = Base::Git { tree, rev };
        }
        let base_off = base_model(&file, &text, parsed.model.as_deref(), env)?;
        let model_said = match (&base_off, env.base_model.as_ref(), &parsed.model) {
            (Some(said), _, _) => Some(said.clone()),
            (None, Some(_), _) => Some(ENV_BASE_MODEL.to_string()),
            (None, None, Some(_)) => Some(format!("{}:{}", file.display(), crate::yaml::line_of(&text, &["model"]))),
            (None, None, None) => None,
        };
        let config = dir.join(&parsed.config);
        if !config.is_file() {
            return Err(Error::input(
                &file,
                crate::yaml::line_of(&text, &["config"]),
                format!("config fragment {} does not exist", config.display()),
            ));
        }
        let mut variants = vec![Variant {
            name: "base".into(),
            patches: Vec::new(),
            model: ModelExpectation::SameName("base".into()),
        }];
        let vdir = dir.join("variants");
        if vdir.is_dir() {
            let mut names: Vec<_> = read_dir_sorted(&vdir)?.into_iter().filter(|p| p.is_dir()).collect();
            names.sort();
            for path in names {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if review_of(&path).is_some_and(|pid| pid != std::process::id()) {
                    continue; // another process's review
                }
                if name == "base" {
                    return Err(Error::input(
                        &path,
                        0,
                        "`base` is the unpatched tree; it cannot have a variants/ directory",
                    ));
                }
                let patches: Vec<PathBuf> = read_dir_sorted(&path)?
                    .into_iter()
                    .filter(|p| p.is_file() && !is_doc(p) && p.file_name().is_some_and(|n| n != VARIANT_FILE))
                    .collect();
                if patches.is_empty() {
                    return Err(Error::input(&path, 0, "variant directory holds no patch file"));
                }
                let model = ModelExpectation::load(&name, &path)?;
                variants.push(Variant { name, patches, model });
            }
        }
        if let Some(said) = base_off {
            // The model's policies are changes to its port: none holds on a base it does
            // not port.
            for v in &mut variants {
                v.model = ModelExpectation::BaseOff { said: said.clone() };
            }
        }
        Ok(Kernels { dir, base, config, variants, model_said })
    }

    pub fn names(&self) -> Vec<String> {
        self.variants.iter().map(|v| v.name.clone()).collect()
    }

    pub fn variant(&self, name: &str) -> Result<&Variant> {
        self.variants
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| Error::UnknownVariant { name: name.to_string(), known: self.names() })
    }

    /// The same kernels built from `tree` as it is checked out (for `radiff check --tree`).
    pub fn in_place(&self, tree: &Path) -> Kernels {
        Kernels { base: Base::InPlace { tree: tree.to_path_buf() }, ..self.clone() }
    }
}

fn is_doc(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    name.starts_with("readme") || name.ends_with(".md") || name.starts_with('.')
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        paths.push(entry.map_err(|e| Error::io(dir, e))?.path());
    }
    paths.sort();
    Ok(paths)
}

fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => crate::settings::get().home.clone().unwrap_or_default().join(rest),
        None => PathBuf::from(path),
    }
}

/// Builds and finds kernels in the cache. Lasting lines of progress (what is built where,
/// when it is done) go to [`crate::progress::progress`]; a running build's status (its
/// kbuild step, objects compiled) to a [`crate::progress::Task`].
pub struct Builder<'a> {
    pub kernels: &'a Kernels,
    pub cache: &'a Cache,
    pub timeout: Duration,
}

impl<'a> Builder<'a> {
    pub fn new(kernels: &'a Kernels, cache: &'a Cache) -> Builder<'a> {
        let timeout = crate::settings::get().build_timeout.as_deref().and_then(|s| s.parse().ok()).unwrap_or(3600);
        Builder { kernels, cache, timeout: Duration::from_secs(timeout) }
    }

    /// Locks the work tree and build directory of the base, for as long as the lock lives;
    /// returns the lock and the name to put in [`ENV_LOCKED`] for child processes.
    pub fn lock_tree(&self) -> Result<(cache::Lock, String)> {
        let base = self.base_id()?;
        Ok((self.lock_tree_named(&base.tree_name)?, base.tree_name))
    }

    /// A shared lock on the base's work tree and build directory ([`cache::lock_shared`]):
    /// no build there while it lives, any number of readers at once.
    pub fn lock_tree_shared(&self) -> Result<cache::Lock> {
        cache::lock_shared(&self.tree_lock(&self.base_id()?.tree_name)?)
    }

    /// The lock file of work tree `name` (and its build directory).
    fn tree_lock(&self, name: &str) -> Result<std::path::PathBuf> {
        Ok(self.cache.dir("locks")?.join(format!("{name}.lock")))
    }

    pub(super) fn lock_tree_named(&self, name: &str) -> Result<cache::Lock> {
        cache::lock_or_wait(&self.tree_lock(name)?, |path| {
            crate::progress::progress(&format!(
                "waiting for {}: another radiff or cargo test is building in this tree (or the compilers of a build that was stopped are finishing)",
                path.display()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernels/ folder with its config fragment and one variant, and its kernels.yaml text.
    fn kernels_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("config.fragment"), "CONFIG_X=y\n").unwrap();
        std::fs::create_dir_all(d.path().join("variants/fix")).unwrap();
        std::fs::write(d.path().join("variants/fix/0001.patch"), "--- a/x\n+++ b/x\n").unwrap();
        d
    }

    const DEBIAN: &str = "base:\n  debian: linux-source-7.3\nconfig: config.fragment\n";

    #[test]
    fn a_reviews_variant_is_its_own_process_alone_and_a_dead_reviews_is_removed() {
        let d = kernels_dir();
        let ours = d.path().join("variants/ours");
        std::fs::create_dir_all(&ours).unwrap();
        std::fs::write(ours.join("0001.mbox"), "--- a/x\n+++ b/x\n").unwrap();
        std::fs::write(ours.join(REVIEW_MARK), std::process::id().to_string()).unwrap();
        // Another live process's review: our parent's (cargo's or the shell's).
        let live = d.path().join("variants/live");
        std::fs::create_dir_all(&live).unwrap();
        std::fs::write(live.join("0001.mbox"), "--- a/x\n+++ b/x\n").unwrap();
        std::fs::write(live.join(REVIEW_MARK), std::os::unix::process::parent_id().to_string()).unwrap();
        // A review that was killed: a pid above pid_max runs nowhere.
        let dead = d.path().join("variants/dead");
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join("0001.mbox"), "--- a/x\n+++ b/x\n").unwrap();
        std::fs::write(dead.join(REVIEW_MARK), "99999999\n").unwrap();
        let k = Kernels::parse(d.path(), DEBIAN, &KernelsEnv::default()).unwrap();
        assert_eq!(k.names(), ["base", "fix", "ours"], "only this process's review is a variant here");
        assert_eq!(k.variant("ours").unwrap().patches, [ours.join("0001.mbox")], "the mark is no patch");
        assert_eq!(remove_stale_reviews(&d.path().join("variants")), ["dead"]);
        assert!(!dead.exists() && live.exists() && ours.exists());
    }

    #[test]
    fn kernels_parse_from_text_without_the_environment() {
        let d = kernels_dir();
        let k = Kernels::parse(d.path(), DEBIAN, &KernelsEnv::default()).unwrap();
        assert_eq!(k.base, Base::Debian { package: "linux-source-7.3".into() });
        assert_eq!(k.names(), ["base", "fix"]);
        assert_eq!(k.model_said, None);
        assert_eq!(
            k.variant("fix").unwrap().model,
            ModelExpectation::load("fix", &d.path().join("variants/fix")).unwrap()
        );
        let off = Kernels::parse(d.path(), &format!("{DEBIAN}model: none\n"), &KernelsEnv::default()).unwrap();
        assert_eq!(off.model_said.as_deref(), Some(format!("{}:4", d.path().join("kernels.yaml").display()).as_str()));
        assert!(off.variants.iter().all(|v| matches!(v.model, ModelExpectation::BaseOff { .. })));
    }

    #[test]
    fn the_environment_is_applied_over_the_text() {
        let d = kernels_dir();
        let tree = d.path().join("no-such-tree");
        let env = KernelsEnv { tree: Some(tree.clone()), rev: None, base_model: Some("none".into()) };
        let k = Kernels::parse(d.path(), DEBIAN, &env).unwrap();
        assert_eq!(k.base, Base::Git { tree, rev: "HEAD".into() });
        assert_eq!(k.model_said, Some(format!("{ENV_BASE_MODEL}=none")));
        assert!(k.variants.iter().all(|v| matches!(v.model, ModelExpectation::BaseOff { .. })));
        let bad = KernelsEnv { base_model: Some("async-align-v1".into()), ..Default::default() };
        let e = Kernels::parse(d.path(), DEBIAN, &bad).unwrap_err().to_string();
        assert!(e.contains(ENV_BASE_MODEL) && e.contains("`async-align-v1`"), "{e}");
    }

    #[test]
    fn a_base_with_both_sources_is_refused_at_its_line() {
        let d = kernels_dir();
        let both = "config: config.fragment\nbase:\n  debian: linux-source-7.3\n  git: /tmp/x\n";
        let e = Kernels::parse(d.path(), both, &KernelsEnv::default()).unwrap_err().to_string();
        assert!(e.contains("kernels.yaml:2") && e.contains("exactly one of"), "{e}");
    }

    #[test]
    fn docs_are_not_patches() {
        assert!(is_doc(Path::new("kernels/variants/x/README.md")));
        assert!(!is_doc(Path::new("kernels/variants/x/0001-mm-readahead.patch")));
    }
}
