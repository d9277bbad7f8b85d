//! `radiff kernels hybrid-check`: which tree, which policy, then the check (the Rust port
//! against a tree's C on the repository's scenarios and on explore's generated ones).

use std::path::{Path, PathBuf};

use radiff_model::Policy;

pub mod check;

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::hybrid::{make, Made};
use crate::kernels::{Builder, Kernels};
use crate::port::{base_files, DirFiles, Files, PatchedFiles};
use check::{check, Checked, Compare};

/// What `hybrid-check` was asked.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// A kernel tree to take mm/readahead.c from (default: the configured base).
    pub tree: Option<PathBuf>,
    /// A variant whose patches to apply to that tree.
    pub variant: Option<String>,
    /// The policy to compare with (default: the variant's, else base).
    pub policy: Option<String>,
    /// Generated scenarios to run besides the repository's.
    pub count: u64,
    pub seed: u64,
    pub threads: usize,
    /// Scenarios shown in full.
    pub show: usize,
}

/// Runs the check; returns what to print and whether the two agreed everywhere.
pub fn hybrid_check(root: &Path, kernels: &Kernels, cache: &Cache, o: &CheckOptions) -> Result<(String, bool)> {
    let policy_name = o.policy.clone().or_else(|| o.variant.clone()).unwrap_or_else(|| "base".to_string());
    let policy = Policy::for_variant(&policy_name).ok_or_else(|| {
        Error::Other(format!(
            "hybrid-check: the model has no policy {policy_name} to compare the C with; give one with --policy (known: {})",
            Policy::KNOWN.join(", ")
        ))
    })?;
    let builder = Builder::new(kernels, cache);
    let base: Box<dyn Files> = match &o.tree {
        Some(dir) => Box::new(DirFiles::new(dir)),
        None => base_files(&builder)?,
    };
    let patched;
    let tree: &dyn Files = match &o.variant {
        Some(v) => {
            let variant = kernels.variant(v)?;
            patched = PatchedFiles::new(base.as_ref(), v, &variant.patches, &crate::hybrid::SOURCES)?;
            &patched
        }
        None => base.as_ref(),
    };
    let hybrid = match make(cache, tree)? {
        Made::Ready(h) => h,
        Made::DoesNotCompile { tree, error } => {
            return Ok((
                format!(
                    "hybrid-check: {tree}'s {} does not compile with radiff's header: {}\n(the model falls back to its Rust port for this tree; the full compiler output:)\n{}",
                    crate::hybrid::compile::READAHEAD_C,
                    error.first_error,
                    crate::error::tail(&error.log, 20)
                ),
                false,
            ))
        }
    };
    let functions = hybrid.workers.functions().map_err(crate::Error::Other)?;
    let files = scenario_files(root)?;
    // A tree without the readahead tracepoints (6.12) opens no window in the hybrid: only
    // its requests and folios can be held to the port's.
    let traced =
        tree.read(crate::hybrid::compile::READAHEAD_C)?.is_some_and(|t| t.contains("trace_page_cache_sync_ra("));
    let how = if traced { Compare::Windows } else { Compare::Flat };
    let checked: Checked = check(&files, o.count, o.seed, o.threads, &policy, &hybrid.workers, how);
    let what = format!(
        "hybrid of {} ({} as C) against the Rust port with policy {policy_name}",
        hybrid.tree,
        functions.join(", ")
    );
    let mut text = String::new();
    if !traced {
        text.push_str(&format!(
            "hybrid-check: {}'s {} has no readahead tracepoints (trace_page_cache_sync_ra() and the rest), so the hybrid opens no readahead window, as its kernel would show none: the two are compared as that kernel records a trace (the faults' windows, the device's requests and the folios added, in order), as the trials compare it\n",
            hybrid.tree,
            crate::hybrid::compile::READAHEAD_C
        ));
    }
    text.push_str(&checked.render(&what, o.show));
    if !checked.parted.is_empty() && policy_name == "base" {
        text.push_str(&own_code(root, tree, &hybrid)?);
    }
    for note in hybrid.notes() {
        text.push_str(&format!("{note}\n"));
    }
    Ok((text, checked.parted.is_empty()))
}

/// Where a check parts on a tree whose C differs from the port's kernel: the sentence that
/// says which of the functions that ran as C it changes, so that its own code, not the
/// port, is what parts there (empty for a tree that changes none: then a part is a port
/// bug or the header's).
fn own_code(root: &Path, tree: &dyn Files, hybrid: &crate::hybrid::Hybrid) -> Result<String> {
    let ledger = crate::port::Ledger::load(root)?;
    let check = crate::port::check_against_ledger(&ledger, None, tree, "tree")?;
    let own: Vec<String> = check
        .changed
        .iter()
        .filter(|c| crate::hybrid::verdict::runs_as_c(&c.name))
        .filter(|c| hybrid.runs(&c.file) && hybrid.dropped_function(&c.name, &c.file).is_none())
        .map(|c| format!("{}()", c.name))
        .collect();
    if own.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(
        "{} changes {} of the functions that ran as C here from {} ({}{}; `radiff kernels port-check` shows each diff): where the two part, that may be the tree's own code deciding otherwise than the port, not a port bug\n",
        tree.describe(),
        own.len(),
        crate::port::kernel_label(&ledger.kernel),
        own.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
        if own.len() > 8 { format!(" and {} more", own.len() - 8) } else { String::new() }
    ))
}

fn scenario_files(root: &Path) -> Result<Vec<(PathBuf, crate::scenario::Scenario)>> {
    let mut out = Vec::new();
    for (path, s) in crate::scenario::load_each(&root.join("scenarios"))? {
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        out.push((rel, s?));
    }
    Ok(out)
}
