//! `radiff kernels port-check` and `radiff kernels ledger`: a base (and the variants'
//! patched trees) against the port, and the ledger written from a tree.

use std::path::Path;
use std::sync::OnceLock;

use super::{
    check_against_ledger, doc_names, fingerprint, generate, missing_from_ledger, write, DirFiles, Files, Ledger,
    PatchedFiles, PortCheck, Ported, PortedSource,
};
use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::kernels::{BaseSource, Builder, Kernels};

/// What `port-check` found: the base against the port, then each variant against the base.
pub struct Report {
    pub kernel: String,
    /// The base, described (`Debian linux-source-7.3`, `~/src/linux at mm-new`).
    pub base_label: String,
    pub base: PortCheck,
    /// Each named variant: the ported functions its patches change, against the base.
    pub variants: Vec<(String, PortCheck)>,
    /// A line to print under a changed function, by (`base` or the variant, function):
    /// whether it runs as the tree's C in the hybrid (filled by the hybrid module).
    pub notes: std::collections::BTreeMap<(String, String), String>,
}

impl Report {
    /// The lines `port-check` prints.
    pub fn render(&self) -> String {
        let note = |f: &str| self.notes.get(&("base".to_string(), f.to_string())).cloned();
        let mut out = format!("base: {}\n{}", self.base_label, self.base.render_noted(&self.kernel, &note));
        for (name, c) in &self.variants {
            out.push_str(&format!("\nvariant {name}: the ported functions its patches change, against the base\n"));
            for ch in &c.changed {
                out.push_str(&format!("changed: {} ({})\n{}", ch.name, ch.file, ch.diff));
                if let Some(note) = self.notes.get(&(name.clone(), ch.name.clone())) {
                    out.push_str(&format!("  {}: {note}\n", ch.name));
                }
            }
            for g in &c.gone {
                out.push_str(&format!("gone: {} ({})\n", g.name, g.file));
            }
            out.push_str(&format!("unchanged: {} of {} ported functions\n", c.unchanged(), c.total));
        }
        out
    }
}

/// How `port_check` shows a base function that differs from the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// With a diff from the ported kernel's own text, read from the source in the cache
    /// ([`PortedSource`]; unpacked there first if no build has).
    Diffs,
    /// By name and file only: all that a trial's explanation or a search needs.
    Names,
}

/// Checks the configured base against the ledger below `root`, then each of `variants`
/// (its patches applied to the base's files) against the base.
pub fn port_check(root: &Path, kernels: &Kernels, cache: &Cache, variants: &[String], shown: Shown) -> Result<Report> {
    let ledger = Ledger::load(root)?;
    let builder = Builder::new(kernels, cache);
    let base = base_files(&builder)?;
    let ported = PortedSource::new(&ledger, kernels, cache);
    let ported: Option<&dyn Files> = (shown == Shown::Diffs).then_some(&ported);
    let base_check = check_against_ledger(&ledger, ported, base.as_ref(), "base")?;
    let mut report = Report {
        kernel: ledger.kernel.clone(),
        base_label: base.describe(),
        base: base_check,
        variants: Vec::new(),
        notes: Default::default(),
    };
    if variants.is_empty() {
        return Ok(report);
    }
    // A variant is compared with the base as it is: the ledger of the base's own bodies.
    let files: Vec<&str> = ledger.functions.iter().map(|f| f.file.as_str()).collect();
    let base_ledger = ledger_of(&ledger, base.as_ref())?;
    for name in variants {
        let variant = kernels.variant(name)?;
        let patched = PatchedFiles::new(base.as_ref(), name, &variant.patches, &files)?;
        let c = check_against_ledger(&base_ledger, Some(base.as_ref()), &patched, name)?;
        report.variants.push((name.clone(), c));
    }
    Ok(report)
}

/// The base's files as they are (a git revision, or the tree as checked out).
pub fn base_files(builder: &Builder) -> Result<Box<dyn Files>> {
    Ok(match builder.base_source()? {
        BaseSource::Git { dir, rev } => Box::new(super::GitFiles { dir, rev }),
        BaseSource::Dir(dir) => Box::new(DirFiles::new(dir)),
    })
}

/// The ledger's functions as `tree` has them (those it still has): the ledger a variant
/// of that tree is checked against.
fn ledger_of(ledger: &Ledger, tree: &dyn Files) -> Result<Ledger> {
    let mut out = Ledger { kernel: "base".to_string(), functions: Vec::new(), not_code: Vec::new() };
    let mut texts = super::Cached::new(tree);
    for f in &ledger.functions {
        if let Some(code) = texts.read(&f.file)?.and_then(|t| super::extract(t, &f.name).ok().flatten()) {
            out.functions.push(Ported { name: f.name.clone(), file: f.file.clone(), fingerprint: fingerprint(&code) });
        }
    }
    Ok(out)
}

/// `radiff kernels ledger --tree DIR`: the ledger made from the tree at `tree` (of kernel
/// `kernel`, read off its Makefile) and model/src's doc comments; written below `root`
/// when `write_it`. Returns the ledger's text and what changed against the current one.
pub fn make_ledger(root: &Path, tree: &Path, write_it: bool) -> Result<String> {
    let files = DirFiles::new(tree);
    let kernel = kernel_version(&files)?;
    let names = doc_names(&root.join("model/src"))?;
    let previous = Ledger::load(root).ok();
    let ledger = generate(&kernel, &files, &names, previous.as_ref())?;
    if write_it {
        write(root, &ledger)?;
    }
    let mut out = ledger.render();
    if let Some(prev) = previous {
        let before: Vec<String> = prev.render().lines().map(str::to_string).collect();
        let after: Vec<String> = out.lines().map(str::to_string).collect();
        let changed =
            before.iter().filter(|l| !after.contains(l)).count() + after.iter().filter(|l| !before.contains(l)).count();
        out.push_str(&format!(
            "# {changed} lines differ from the ledger in the repository{}\n",
            if write_it { " (written)" } else { " (not written: add --write)" }
        ));
    }
    Ok(out)
}

/// `VERSION.PATCHLEVEL.SUBLEVEL` from a kernel tree's Makefile; an error naming the tree
/// when it is not a kernel tree.
pub fn kernel_version(tree: &dyn Files) -> Result<String> {
    let not_kernel = |why: &str| Error::input(Path::new(&tree.describe()), 0, format!("not a kernel tree: {why}"));
    let makefile = tree.read("Makefile")?.ok_or_else(|| not_kernel("no Makefile"))?;
    if tree.read("mm/readahead.c")?.is_none() {
        return Err(not_kernel("no mm/readahead.c"));
    }
    let field = |k: &str| {
        makefile.lines().find_map(|l| {
            l.strip_prefix(k).and_then(|r| r.trim_start().strip_prefix('=')).map(|v| v.trim().to_string())
        })
    };
    match (field("VERSION"), field("PATCHLEVEL"), field("SUBLEVEL")) {
        (Some(v), Some(p), Some(s)) => Ok(format!("{v}.{p}.{s}")),
        _ => Err(not_kernel("its Makefile has no VERSION, PATCHLEVEL and SUBLEVEL")),
    }
}

/// The names model/'s doc comments give that the ledger below `root` lacks.
pub fn unlisted(root: &Path) -> Result<Vec<super::DocName>> {
    Ok(missing_from_ledger(&Ledger::load(root)?, &doc_names(&root.join("model/src"))?))
}

/// The base's check against the port, once per process (a trial that parts from the model
/// asks it; the base does not change while radiff runs).
pub fn base_check(root: &Path, kernels: &Kernels, cache: &Cache) -> std::result::Result<PortCheck, String> {
    static CHECKED: OnceLock<std::result::Result<PortCheck, String>> = OnceLock::new();
    CHECKED
        .get_or_init(|| port_check(root, kernels, cache, &[], Shown::Names).map(|r| r.base).map_err(|e| e.to_string()))
        .clone()
}

/// The lines that open a trial's failure when the kernel and the model part at `window`
/// on a base whose ported functions moved ([`super::why_parted`]); `None` on a base that
/// matches the port, or when the base cannot be read (said on stderr: the divergence is
/// then reported as ever).
pub fn explain_divergence(
    root: &Path,
    kernels: &Kernels,
    cache: &Cache,
    input: &radiff_model::Input,
    policy: &radiff_model::Policy,
    window: usize,
) -> Option<String> {
    let check = match base_check(root, kernels, cache) {
        Ok(c) => c,
        Err(e) => {
            crate::progress::progress(&format!(
                "could not compare the base with the port ({e}); see `radiff kernels port-check`"
            ));
            return None;
        }
    };
    if check.matches() {
        return None;
    }
    let kernel = Ledger::load(root).map(|l| l.kernel).unwrap_or_default();
    let explained = radiff_model::explain(input, policy, &radiff_model::ModelConfig::default());
    let decided = explained.notes.get(window).map(|n| n.functions()).unwrap_or_default();
    super::why_parted(&check, &kernel, window, &decided, kernels.model_said.is_some())
}
