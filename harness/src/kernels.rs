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

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::cache::{self, Cache};
use crate::error::{Error, Result};
use crate::process::{log_tail, require_tool, Cmd, Outcome};

/// Bumped when the way radiff builds changes, so old cached kernels are not reused.
const RECIPE: &str = "radiff-kernel-recipe-1";

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
    /// No policy: trials check the kernel's trace against its snapshot and show how it
    /// differs from the base kernel's, without a model check.
    None,
}

impl ModelExpectation {
    /// The name of the model's policy, if there is one.
    pub fn policy(&self) -> Option<&str> {
        match self {
            ModelExpectation::SameName(p) | ModelExpectation::Declared { policy: p, .. } => Some(p),
            ModelExpectation::None => None,
        }
    }

    /// "base (kernels/variants/x/variant.yaml:2)", for listings.
    pub fn describe(&self) -> String {
        match self {
            ModelExpectation::SameName(p) => format!("{p} (the policy of the same name)"),
            ModelExpectation::Declared { policy, file, line } => format!("{policy} ({}:{line})", file.display()),
            ModelExpectation::None => format!("none: trials check the snapshot and show the difference from base ({VARIANT_FILE} can name a policy)"),
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
        let text = cache::read(&file)?;
        let parsed: VariantFile = crate::yaml::parse(&file, &text)?;
        let line = crate::yaml::line_of(&text, &["model"]);
        match parsed.model.as_deref() {
            None => Err(Error::input(&file, 0, format!("`model:` is missing: {}", model_help()))),
            Some("none") => Ok(ModelExpectation::None),
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

/// A variant's own settings, beside its patches.
pub const VARIANT_FILE: &str = "variant.yaml";

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
    #[allow(dead_code)]
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BaseFile {
    debian: Option<String>,
    git: Option<String>,
    rev: Option<String>,
}

/// Environment overrides of `kernels.yaml`'s base: a developer with an mm-new checkout sets
/// `RADIFF_KERNEL_TREE=~/src/mm` (and optionally `RADIFF_KERNEL_REV=mm-new`).
pub const ENV_TREE: &str = "RADIFF_KERNEL_TREE";
pub const ENV_REV: &str = "RADIFF_KERNEL_REV";
/// Set by `radiff bisect` for its children: the name of the tree whose lock it holds.
pub const ENV_LOCKED: &str = "RADIFF_TREE_LOCKED";

impl Kernels {
    /// Reads `repo/kernels/`.
    pub fn load(repo: &Path) -> Result<Kernels> {
        let dir = repo.join("kernels");
        let file = dir.join("kernels.yaml");
        let text = cache::read(&file)?;
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
        if let Some(tree) = std::env::var_os(ENV_TREE).filter(|t| !t.is_empty()) {
            let rev = std::env::var(ENV_REV).unwrap_or_else(|_| "HEAD".into());
            base = Base::Git { tree: PathBuf::from(tree), rev };
        }
        let config = dir.join(&parsed.config);
        if !config.is_file() {
            return Err(Error::input(&file, crate::yaml::line_of(&text, &["config"]), format!("config fragment {} does not exist", config.display())));
        }
        let mut variants = vec![Variant { name: "base".into(), patches: Vec::new(), model: ModelExpectation::SameName("base".into()) }];
        let vdir = dir.join("variants");
        if vdir.is_dir() {
            let mut names: Vec<_> = read_dir_sorted(&vdir)?.into_iter().filter(|p| p.is_dir()).collect();
            names.sort();
            for path in names {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if name == "base" {
                    return Err(Error::input(&path, 0, "`base` is the unpatched tree; it cannot have a variants/ directory"));
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
        Ok(Kernels { dir, base, config, variants })
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
        Some(rest) => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(rest),
        None => PathBuf::from(path),
    }
}

/// The resolved base: a name for its work tree and what identifies its contents.
#[derive(Clone, Debug)]
struct BaseId {
    /// Directory name under `trees/` and `build/`.
    tree_name: String,
    /// Key material: changes whenever the source changes.
    content: String,
    /// Human description for `kernels list`.
    describe: String,
}

/// Builds and finds kernels in the cache.
pub struct Builder<'a> {
    pub kernels: &'a Kernels,
    pub cache: &'a Cache,
    /// Called with one line of progress at a time (which variant, elapsed, the make step).
    pub progress: &'a (dyn Fn(&str) + Sync),
    pub timeout: Duration,
}

impl<'a> Builder<'a> {
    pub fn new(kernels: &'a Kernels, cache: &'a Cache, progress: &'a (dyn Fn(&str) + Sync)) -> Builder<'a> {
        let timeout = std::env::var("RADIFF_BUILD_TIMEOUT").ok().and_then(|s| s.parse().ok()).unwrap_or(3600);
        Builder { kernels, cache, progress, timeout: Duration::from_secs(timeout) }
    }

    fn base_id(&self) -> Result<BaseId> {
        match &self.kernels.base {
            Base::Debian { package } => {
                let tarball = self.tarball(package)?;
                let meta = std::fs::metadata(&tarball).map_err(|e| Error::io(&tarball, e))?;
                let version = std::fs::read_to_string(self.cache.root.join("source").join(format!("{package}.version")))
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
                let dirty = Cmd::new("git").arg("-C").arg(tree).args(["status", "--porcelain", "--untracked-files=no"]).read()?;
                let canonical = tree.canonicalize().map_err(|e| Error::io(tree, e))?;
                let managed = self.cache.root.join("trees").canonicalize().ok().filter(|t| canonical.parent() == Some(t.as_path()));
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

    /// Locks the work tree and build directory of the base, for as long as the lock lives;
    /// returns the lock and the name to put in [`ENV_LOCKED`] for child processes.
    pub fn lock_tree(&self) -> Result<(cache::Lock, String)> {
        let base = self.base_id()?;
        Ok((self.lock_tree_named(&base.tree_name)?, base.tree_name))
    }

    fn lock_tree_named(&self, name: &str) -> Result<cache::Lock> {
        cache::lock(&self.cache.dir("locks")?.join(format!("{name}.lock")))
    }

    fn tarball(&self, package: &str) -> Result<PathBuf> {
        let path = self.cache.root.join("source").join(format!("{package}.tar.xz"));
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
        Ok(self.kernel_dir_for(&base, variant)?)
    }

    fn kernel_dir_for(&self, base: &BaseId, variant: &Variant) -> Result<PathBuf> {
        let config = std::fs::read(&self.kernels.config).map_err(|e| Error::io(&self.kernels.config, e))?;
        let mut parts: Vec<Vec<u8>> = vec![RECIPE.into(), base.content.clone().into(), config];
        for patch in &variant.patches {
            parts.push(std::fs::read(patch).map_err(|e| Error::io(patch, e))?);
        }
        Ok(self.cache.root.join("kernels").join(format!("{}-{}", variant.name, cache::key(parts))))
    }

    /// One line per variant: name, patches, whether built, where.
    pub fn list(&self) -> Result<String> {
        let base = self.base_id()?;
        let mut out = format!("base source: {}\nconfig: {}\n", base.describe, self.kernels.config.display());
        for variant in &self.kernels.variants {
            let dir = self.kernel_dir_for(&base, variant)?;
            let image = dir.join("bzImage");
            let state = if image.is_file() { format!("built      {}", image.display()) } else { format!("not built  {}", image.display()) };
            out.push_str(&format!("\n{:<24} {state}\n", variant.name));
            out.push_str(&format!("    model: {}\n", variant.model.describe()));
            if variant.patches.is_empty() {
                out.push_str("    (no patches)\n");
            }
            for patch in &variant.patches {
                out.push_str(&format!("    {}\n", patch.strip_prefix(&self.kernels.dir).unwrap_or(patch).display()));
            }
        }
        Ok(out)
    }

    /// Builds `variant` unless the cache has it. Safe to call from several threads or
    /// processes at once: the work tree and build directory are locked.
    pub fn build(&self, variant: &Variant) -> Result<Built> {
        let started = Instant::now();
        let base = self.base_id()?;
        let dir = self.kernel_dir_for(&base, variant)?;
        let image = dir.join("bzImage");
        if image.is_file() {
            return Ok(Built { variant: variant.name.clone(), bzimage: image, compiled: false, elapsed: started.elapsed() });
        }
        for tool in ["make", "gcc", "flex", "bison", "bc", "patch", "git", "tar", "xz"] {
            require_tool(tool)?;
        }
        let _lock = match std::env::var(ENV_LOCKED) {
            // `radiff bisect` holds this tree's lock for the whole bisection and runs
            // `radiff check` in it: the check must not wait for its own parent.
            Ok(name) if name == base.tree_name => None,
            _ => Some(self.lock_tree_named(&base.tree_name)?),
        };
        if image.is_file() {
            // Another process built it while this one waited for the lock.
            return Ok(Built { variant: variant.name.clone(), bzimage: image, compiled: false, elapsed: started.elapsed() });
        }
        let (tree, recorded) = self.unpack_tree(&base)?;
        // A fresh unpack is recorded in git (for undoing patches; about 45 s of one core)
        // while the base compiles: the build never writes into the source tree. A variant
        // with patches waits for the record first; the scope joins it on every path, so it
        // never outlives the lock.
        let (result, reset) = std::thread::scope(|scope| {
            let mut recording = (!recorded).then(|| {
                (self.progress)("recording the base tree in git, so patches can always be undone (once; meanwhile the build starts)");
                scope.spawn(|| record_base(&tree))
            });
            let mut wait = || recording.take().map_or(Ok(()), |handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            let result = match variant.patches.is_empty() {
                true => self.build_locked(&base, &tree, variant, &dir),
                false => wait().and_then(|()| self.build_locked(&base, &tree, variant, &dir)),
            };
            let reset = wait().and_then(|()| match &self.kernels.base {
                Base::InPlace { .. } => Ok(()),
                Base::Debian { .. } => reset_tree(&tree, BASE_TAG),
                Base::Git { tree: source, rev } => git_rev(source, rev).and_then(|sha| reset_tree(&tree, &sha)),
            });
            (result, reset)
        });
        let bzimage = result?;
        reset?;
        (self.progress)(&format!("built {} in {:.0} s: {}", variant.name, started.elapsed().as_secs_f64(), bzimage.display()));
        Ok(Built { variant: variant.name.clone(), bzimage, compiled: true, elapsed: started.elapsed() })
    }

    fn build_locked(&self, base: &BaseId, tree: &Path, variant: &Variant, dir: &Path) -> Result<PathBuf> {
        let config_text = std::fs::read_to_string(&self.kernels.config).map_err(|e| Error::io(&self.kernels.config, e))?;
        // One build directory per tree, whatever the config: a changed fragment is an
        // incremental rebuild too (kbuild recompiles what depends on the changed options).
        let build = self.cache.dir("build")?.join(&base.tree_name);
        // Patches first: one that does not apply should cost (and leave) nothing else.
        for patch in &variant.patches {
            apply_patch(tree, &variant.name, patch)?;
        }
        std::fs::create_dir_all(&build).map_err(|e| Error::io(&build, e))?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let log = dir.join("build.log");
        let _ = std::fs::remove_file(&log);
        self.configure(tree, &build, &config_text, &log)?;
        let jobs = std::thread::available_parallelism().map(|n| n.get() + 1).unwrap_or(3);
        let mut make = Cmd::new("make").arg("-C").arg(tree).arg(format!("O={}", build.display())).arg(format!("-j{jobs}"));
        make = self.with_ccache(make)?.arg("bzImage");
        (self.progress)(&format!("building {} in {} ({}; log {})", variant.name, build.display(), make.display(), log.display()));
        let name = variant.name.clone();
        let outcome = make.run_logged(&log, self.timeout, Duration::from_secs(10), |elapsed| {
            let step = last_make_step(&log);
            (self.progress)(&format!("building {name}: {}:{:02} elapsed, {step}", elapsed.as_secs() / 60, elapsed.as_secs() % 60));
        })?;
        match outcome {
            Outcome::Exited(status) if status.success() => {}
            Outcome::Exited(status) => {
                return Err(Error::Build { variant: variant.name.clone(), log: log.clone(), tail: format!("{}\n(make: {status})", log_tail(&log, 30)) })
            }
            Outcome::TimedOut(after) => {
                return Err(Error::Build {
                    variant: variant.name.clone(),
                    log: log.clone(),
                    tail: format!("{}\n(killed after {} s; set RADIFF_BUILD_TIMEOUT to allow longer)", log_tail(&log, 30), after.as_secs()),
                })
            }
        }
        let image = build.join("arch/x86/boot/bzImage");
        let data = std::fs::read(&image).map_err(|e| Error::io(&image, e))?;
        let config = std::fs::read(build.join(".config")).map_err(|e| Error::io(build.join(".config"), e))?;
        cache::write_atomic(&dir.join("config"), &config)?;
        let series: String = variant.patches.iter().map(|p| format!("{}\n", p.display())).collect();
        cache::write_atomic(&dir.join("series"), series.as_bytes())?;
        // The bzImage goes last: its presence is what marks the kernel built.
        cache::write_atomic(&dir.join("bzImage"), &data)?;
        Ok(dir.join("bzImage"))
    }

    /// Compiles through ccache, kept in the cache: a variant that touches a widely included
    /// header (async-align-v2 changes include/linux/pagemap.h) recompiles most of the kernel
    /// once, and the builds after it, with the header restored, then hit the cache instead
    /// of recompiling it all again.
    ///
    /// Depend mode: on a miss ccache takes the headers from the compiler's own `-MMD` file
    /// (kbuild passes `-Wp,-MMD,...`) instead of running the preprocessor a second time; a
    /// cold base build took 1158 s with it and 1311 s without, on 2 cores.
    fn with_ccache(&self, make: Cmd) -> Result<Cmd> {
        if crate::process::find_in_path("ccache").is_none() {
            (self.progress)("ccache not found (./setup installs it): switching between variants that touch headers will recompile");
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

    /// Makes `build/.config` from tinyconfig + the fragment, unless it already is; then
    /// checks that every line of the fragment stuck.
    fn configure(&self, tree: &Path, build: &Path, fragment: &str, log: &Path) -> Result<()> {
        let stamp = build.join(".radiff-config");
        let want = cache::key([fragment.as_bytes()]);
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) && build.join(".config").is_file() {
            return Ok(());
        }
        (self.progress)(&format!("configuring {} (tinyconfig + {})", build.display(), self.kernels.config.display()));
        let o = format!("O={}", build.display());
        let frag = build.join("radiff.fragment");
        std::fs::write(&frag, fragment).map_err(|e| Error::io(&frag, e))?;
        let steps = [
            Cmd::new("make").arg("-C").arg(tree).arg(&o).arg("tinyconfig"),
            Cmd::new(tree.join("scripts/kconfig/merge_config.sh"))
                .dir(tree)
                .args(["-m", "-O"])
                .arg(build)
                .arg(build.join(".config"))
                .arg(&frag),
            Cmd::new("make").arg("-C").arg(tree).arg(&o).arg("olddefconfig"),
        ];
        for step in steps {
            let outcome = step.run_logged(log, Duration::from_secs(600), Duration::from_secs(60), |_| {})?;
            if !matches!(outcome, Outcome::Exited(s) if s.success()) {
                return Err(Error::Build { variant: "(config)".into(), log: log.to_path_buf(), tail: log_tail(log, 30) });
            }
        }
        let config = cache::read(&build.join(".config"))?;
        check_fragment(&self.kernels.config, fragment, &config)?;
        cache::write_atomic(&stamp, want.as_bytes())
    }

    /// The base's work tree, checked out at the base and clean. Hold [`Builder::lock_tree`]
    /// while using it.
    pub fn work_tree(&self) -> Result<PathBuf> {
        let base = self.base_id()?;
        self.prepare_tree(&base)
    }

    /// The work tree for `base`, checked out and clean.
    fn prepare_tree(&self, base: &BaseId) -> Result<PathBuf> {
        let (tree, recorded) = self.unpack_tree(base)?;
        if !recorded {
            (self.progress)("recording the base tree in git, so patches can always be undone (once)");
            record_base(&tree)?;
        }
        Ok(tree)
    }

    /// The work tree for `base`, and whether its git record of the base exists yet (if it
    /// does, the tree is checked out at the base and clean). It does not only for a Debian
    /// tree just unpacked, or unpacked by a run that stopped before recording it: nothing
    /// writes into a tree before its record.
    fn unpack_tree(&self, base: &BaseId) -> Result<(PathBuf, bool)> {
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
                (self.progress)(&format!("unpacking {} into {} (once)", tarball.display(), tree.display()));
                // Debian's tarball is xz in many blocks: `-T0` decompresses them on every core
                // (xz 5.4, bookworm's, decompresses on one unless told), 12 s -> 6 s here.
                Cmd::new("tar")
                    .arg("-C")
                    .arg(&tmp)
                    .args(["--strip-components=1", "--use-compress-program=xz -T0", "-xf"])
                    .arg(&tarball)
                    .read()?;
                std::fs::write(tmp.join(UNPACKED), b"").map_err(|e| Error::io(&tmp, e))?;
                let _ = std::fs::remove_dir_all(&tree);
                std::fs::rename(&tmp, &tree).map_err(|e| Error::io(&tree, e))?;
                Ok((tree, false))
            }
            Base::Git { tree: source, rev } => {
                let trees = self.cache.dir("trees")?;
                let tree = trees.join(&base.tree_name);
                if !tree.join(".git").is_dir() {
                    (self.progress)(&format!("cloning {} (shared, no copy of its objects) into {}", source.display(), tree.display()));
                    Cmd::new("git").args(["clone", "-q", "--shared", "--no-checkout"]).arg(source).arg(&tree).read()?;
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
const UNPACKED: &str = ".radiff-unpacked";

/// Marks a Debian work tree whose git record of the base is complete.
const READY: &str = ".git/radiff-ready";

/// Records the unpacked, untouched Debian tree as the base commit (tagged [`BASE_TAG`]),
/// so a variant's patches can always be undone with `git checkout` and `git clean`.
/// Starts over if an earlier run stopped partway.
fn record_base(tree: &Path) -> Result<()> {
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

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    Cmd::new("git").arg("-C").arg(dir).args(args).read()
}

fn git_rev(tree: &Path, rev: &str) -> Result<String> {
    if !tree.join(".git").exists() {
        return Err(Error::Other(format!("{} is not a git tree (set by kernels.yaml or {ENV_TREE})", tree.display())));
    }
    Ok(git(tree, &["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?.trim().to_string())
}

/// The tag that marks the base commit of a work tree radiff unpacked.
const BASE_TAG: &str = "radiff-base";

/// Restores the work tree to `base` (a commit), removing whatever patches added; only
/// files that differ are rewritten, so the next build stays incremental.
fn reset_tree(tree: &Path, base: &str) -> Result<()> {
    git(tree, &["checkout", "-q", "-f", "--detach", base])?;
    git(tree, &["clean", "-q", "-f", "-d", "-x"])?;
    Ok(())
}

/// Applies one patch, first as a dry run so that a patch that does not apply changes
/// nothing; the error carries patch's own account of the failing hunks.
fn apply_patch(tree: &Path, variant: &str, patch: &Path) -> Result<()> {
    let patch_cmd = |dry: bool| {
        let mut cmd = Cmd::new("patch").dir(tree).args(["-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-i"]).arg(patch);
        if dry {
            cmd = cmd.arg("--dry-run");
        }
        cmd
    };
    let (status, output) = patch_cmd(true).output()?;
    if !status.success() {
        return Err(Error::PatchFailed { variant: variant.to_string(), patch: patch.to_path_buf(), output: output.trim_end().to_string() });
    }
    let (status, output) = patch_cmd(false).output()?;
    if !status.success() {
        return Err(Error::PatchFailed { variant: variant.to_string(), patch: patch.to_path_buf(), output: output.trim_end().to_string() });
    }
    Ok(())
}

/// The last kbuild step in a build log ("CC mm/readahead.o"), for progress lines.
fn last_make_step(log: &Path) -> String {
    let tail = log_tail(log, 5);
    tail.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
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

/// Every `CONFIG_X=v` and `# CONFIG_X is not set` line of the fragment must be in `.config`.
pub fn check_fragment(file: &Path, fragment: &str, config: &str) -> Result<()> {
    let have: std::collections::HashSet<&str> = config.lines().map(str::trim).collect();
    for (number, line) in fragment.lines().enumerate() {
        let line = line.trim();
        let wanted = line.starts_with("CONFIG_") || (line.starts_with("# CONFIG_") && line.ends_with(" is not set"));
        if !wanted {
            continue;
        }
        let sticks = have.contains(line) || (line.ends_with(" is not set") && !config.contains(&format!("{}=", &line[2..line.len() - 11])));
        if !sticks {
            return Err(Error::input(
                file,
                number + 1,
                format!("`{line}` did not stick after `make olddefconfig`: the option does not exist in this kernel or a dependency is off; fix or remove the line"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_lines_that_did_not_stick_are_named() {
        let fragment = "# comment\nCONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n";
        let ok = "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n";
        check_fragment(Path::new("f"), fragment, ok).unwrap();
        let err = check_fragment(Path::new("f"), fragment, "CONFIG_A=y\n").unwrap_err().to_string();
        assert!(err.starts_with("f:3: `CONFIG_B=y` did not stick"), "{err}");
        let err = check_fragment(Path::new("f"), fragment, "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=y\n").unwrap_err().to_string();
        assert!(err.starts_with("f:4: "), "{err}");
    }

    #[test]
    fn docs_are_not_patches() {
        assert!(is_doc(Path::new("kernels/variants/x/README.md")));
        assert!(!is_doc(Path::new("kernels/variants/x/0001-mm-readahead.patch")));
    }
}
