//! Which model checks a kernel that no policy names: the Rust port where the tree's ported
//! functions are the port's, the hybrid where every one that differs runs as the tree's C,
//! and none (with why) otherwise. Decided once per kernel and process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use radiff_model::Policy;

use super::compile::{FILEMAP_C, MISS_WALKS, OPTIONAL, READAHEAD_C, SOURCES};
use crate::cache::Cache;
use crate::error::Result;
use crate::kernels::{Builder, Kernels, ModelExpectation};
use crate::model_check::Predictor;
use crate::port::{base_files, port_check, PatchedFiles, Shown};

/// What checks a kernel's runs.
#[derive(Clone, Debug)]
pub enum Choice {
    /// No ported function differs from the port: the Rust model under the base policy.
    Port,
    /// The changed functions run as the tree's C.
    Hybrid { predictor: Predictor, changed: Vec<String> },
    /// No model can: why, in a sentence.
    Not(String),
    /// Making the hybrid failed (a compiler missing, a tree that cannot be read, a header
    /// outside the tree): an error of whatever needed the model, with its cause; never
    /// taken for "no model".
    Failed(String),
}

impl Choice {
    /// The predictor, when there is one.
    pub fn predictor(&self) -> Option<Predictor> {
        match self {
            Choice::Port => Some(Predictor::Port(Policy::BASE)),
            Choice::Hybrid { predictor, .. } => Some(predictor.clone()),
            Choice::Not(_) | Choice::Failed(_) => None,
        }
    }
}

/// What checks `kernel`'s runs, as `expectation` (its `ModelExpectation`) says: the policy
/// it names (for the base, the hybrid where its tree moved in functions that run as C);
/// for a variant without a policy, the hybrid or the port ([`choose`]); otherwise no
/// model, with why (`None` for a base whose model is off: the trial says where). An error
/// where making the hybrid failed ([`Choice::Failed`]).
pub fn predictor(
    kernels: &Kernels,
    cache: &Cache,
    kernel: &str,
    expectation: &ModelExpectation,
) -> Result<(Option<Predictor>, Option<String>)> {
    let chosen = || {
        let choice = choose(kernels, cache, kernel);
        if let Choice::Failed(why) = &*choice {
            return Err(crate::Error::Other(format!("the hybrid model of {kernel} could not be made: {why}")));
        }
        Ok(choice)
    };
    Ok(match expectation {
        ModelExpectation::SameName(p) if p == "base" && kernel == "base" => match &*chosen()? {
            Choice::Hybrid { predictor, .. } => (Some(predictor.clone()), None),
            // Unmoved, or moved where the hybrid cannot follow: the port, and on a
            // divergence port-check's explanation of what moved.
            _ => (Some(Predictor::Port(Policy::BASE)), None),
        },
        ModelExpectation::SameName(p) | ModelExpectation::Declared { policy: p, .. } => {
            let policy = Policy::for_variant(p).expect("kernels/ checked the policy name when it loaded");
            (Some(Predictor::Port(policy)), None)
        }
        ModelExpectation::None => match &*chosen()? {
            Choice::Not(why) => (None, Some(why.clone())),
            choice => (choice.predictor(), None),
        },
        ModelExpectation::Off { file, line } => {
            let file = file.strip_prefix(crate::repo_root()).unwrap_or(file);
            (None, Some(format!("{}:{line} says `model: none`", file.display())))
        }
        ModelExpectation::BaseOff { .. } => (None, None),
    })
}

/// The changed functions' names, or why one of them cannot run as C: each must be in the
/// model's table of functions that run as C (radiff_model::hybrid::functions), in the file
/// the table names, or one no ported file system calls.
pub fn runs_as_c(changed: &[(String, String)]) -> std::result::Result<Vec<String>, String> {
    for (name, file) in changed {
        runnable(name, file)?;
    }
    Ok(changed.iter().map(|(n, _)| n.clone()).collect())
}

/// Whether the hybrid can run `name()` of `file` as the tree's C; why not, when not.
fn runnable(name: &str, file: &str) -> std::result::Result<(), String> {
    if !SOURCES.contains(&file) {
        return Err(format!(
            "it changes {name}() in {file}, and the hybrid runs as C only {READAHEAD_C}, {} (radiff kernels port-check)",
            partial_files()
        ));
    }
    let in_table = radiff_model::hybrid::functions::runs_as_c_named(name).is_some_and(|f| f.file == file);
    let not_called = file == READAHEAD_C && super::verdict::NOT_CALLED.contains(&name);
    if in_table || not_called {
        return Ok(());
    }
    Err(if file == READAHEAD_C {
        format!("it changes {name}(), which the model calls from outside {file}, so it stays the Rust port")
    } else {
        let names = names_of(file, &[]);
        format!("it changes {name}() in {file}, of which the hybrid runs only {} as C", super::join_and(&names))
    })
}

/// A moved base's changed (and gone) functions split: those the hybrid runs as the tree's
/// C, and the others, which stay the Rust port (port-check says why), each named. A patch
/// is followed whole or not at all; a base wherever the hybrid can follow it, since the
/// port is 7.3.4's wherever it is not.
fn split_moved(changed: &[(String, String)], gone: &[(String, String)]) -> (Vec<(String, String)>, Vec<String>) {
    let mut runs = Vec::new();
    let mut stays: Vec<String> = gone.iter().map(|(n, f)| format!("{n}() ({f}, gone from the tree)")).collect();
    for (name, file) in changed {
        match runnable(name, file) {
            Ok(()) => runs.push((name.clone(), file.clone())),
            Err(_) => stays.push(format!("{name}() ({file})")),
        }
    }
    (runs, stays)
}

/// The functions of `file` the hybrid runs as C, named (`generic_fadvise()`), joined by `joiner`.
fn of_file(file: &str, joiner: &str) -> String {
    names_of(file, &[]).join(joiner)
}

/// The functions of `file` the hybrid runs as C, named (`generic_fadvise()`), but those
/// `left` to the port.
fn names_of(file: &str, left: &[String]) -> Vec<String> {
    radiff_model::hybrid::functions::runs_as_c()
        .filter(|f| f.file == file && !left.iter().any(|l| l == f.name))
        .map(|f| format!("{}()", f.name))
        .collect()
}

/// The files of which the hybrid runs some functions as C, with those functions.
fn partial_files() -> String {
    let each: Vec<String> = OPTIONAL.iter().map(|u| format!("{} of {}", of_file(u.file, " and "), u.file)).collect();
    super::join_and(&each)
}

/// The choice for `kernel` (`base`, or a variant on the base), made once per process.
pub fn choose(kernels: &Kernels, cache: &Cache, kernel: &str) -> Arc<Choice> {
    static MADE: OnceLock<Mutex<HashMap<String, Arc<Choice>>>> = OnceLock::new();
    let key = format!("{kernel} on {:?}", kernels.base);
    let made = MADE.get_or_init(Default::default);
    if let Some(c) = made.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return c.clone();
    }
    let choice = Arc::new(decide(kernels, cache, kernel).unwrap_or_else(|e| Choice::Failed(e.to_string())));
    made.lock().unwrap_or_else(|e| e.into_inner()).insert(key, choice.clone());
    choice
}

fn decide(kernels: &Kernels, cache: &Cache, kernel: &str) -> Result<Choice> {
    let root = crate::repo_root();
    let variants: Vec<String> = if kernel == "base" { Vec::new() } else { vec![kernel.to_string()] };
    let report = port_check(&root, kernels, cache, &variants, Shown::Names)?;
    let mut changed: Vec<(String, String)> =
        report.base.changed.iter().map(|c| (c.name.clone(), c.file.clone())).collect();
    for (_, c) in &report.variants {
        changed.extend(c.changed.iter().map(|c| (c.name.clone(), c.file.clone())));
    }
    changed.sort();
    changed.dedup();
    let mut stays = Vec::new();
    if kernel == "base" {
        let gone: Vec<(String, String)> = report.base.gone.iter().map(|g| (g.name.clone(), g.file.clone())).collect();
        (changed, stays) = split_moved(&changed, &gone);
        if changed.is_empty() {
            return Ok(match stays.is_empty() {
                true => Choice::Port,
                false => Choice::Not(format!("the hybrid runs none of what the tree changes: {}", stays.join(", "))),
            });
        }
    } else if let Some(g) = report.base.gone.iter().chain(report.variants.iter().flat_map(|(_, c)| &c.gone)).next() {
        return Ok(Choice::Not(format!("{}() ({}) is gone from the tree, and the model ports it", g.name, g.file)));
    }
    if changed.is_empty() {
        return Ok(Choice::Port);
    }
    if let Err(why) = runs_as_c(&changed) {
        return Ok(Choice::Not(why));
    }
    let builder = Builder::new(kernels, cache);
    let base = base_files(&builder)?;
    let made = if kernel == "base" {
        super::make(cache, base.as_ref())?
    } else {
        let variant = kernels.variant(kernel)?;
        let patched = PatchedFiles::new(base.as_ref(), kernel, &variant.patches, &SOURCES)?;
        super::make(cache, &patched)?
    };
    Ok(match made {
        super::Made::Ready(h) => {
            // A changed function whose C did not compile: a patch is not followed; a base
            // keeps the port for it.
            let mut failed: Vec<String> = Vec::new();
            changed.retain(|(name, file)| {
                let why = match h.left_out.iter().find(|(f, _)| f == file) {
                    Some((_, error)) => {
                        Some(format!("it changes {file}, and {}", does_not_compile(file, &h.tree, error)))
                    }
                    None => h.dropped_function(name, file).map(|error| {
                        let why = does_not_compile(&format!("{name}() of {file}"), &h.tree, error);
                        format!("it changes {name}() in {file}, and {why}")
                    }),
                };
                match why {
                    None => true,
                    Some(why) => {
                        if !failed.contains(&why) {
                            failed.push(why);
                        }
                        false
                    }
                }
            });
            if kernel != "base" {
                if let Some(why) = failed.into_iter().next() {
                    return Ok(Choice::Not(why));
                }
            } else {
                stays.extend(failed);
                if changed.is_empty() {
                    return Ok(Choice::Not(stays.join("; ")));
                }
            }
            let names: Vec<String> = changed.iter().map(|(n, _)| n.clone()).collect();
            // mm/readahead.c's C, and the functions of each other file the tree changes:
            // the functions of a file it leaves as 7.3.4 has them are the port's (which
            // hybrid-check holds equal to that C), and cost no call into the C.
            let ran: Vec<&str> =
                OPTIONAL.iter().map(|u| u.file).filter(|f| h.runs(f) && changed.iter().any(|(_, c)| c == f)).collect();
            let entries = std::iter::once(READAHEAD_C)
                .chain(ran.iter().copied())
                .flat_map(super::unit::entries_of)
                .map(String::from)
                .collect();
            let c = std::sync::Arc::new(h.workers.only(entries));
            let tree = if kernel == "base" { &h.tree } else { kernel };
            let mut label = hybrid_label(tree, &ran, &names, &h.left_to_the_port());
            if !stays.is_empty() {
                label.push_str(&format!("; the Rust port of 7.3.4 for the rest: {}", stays.join(", ")));
            }
            if let Some(note) = super::mapping::note(&h.mappings) {
                label.push_str(&format!("; {note}"));
            }
            let port = port_names(&report, &names);
            Choice::Hybrid { predictor: Predictor::Hybrid { policy: Policy::BASE, c, label, port }, changed: names }
        }
        super::Made::DoesNotCompile { tree, error } => Choice::Not(does_not_compile(READAHEAD_C, &tree, &error)),
    })
}

/// The functions `report` (the base's port-check, and a variant's) finds changed or gone
/// that are not among `as_c` (those the hybrid runs as the tree's C): they stay the Rust
/// port of 7.3.4.
fn port_names(report: &crate::port::Report, as_c: &[String]) -> Vec<String> {
    let checks = std::iter::once(&report.base).chain(report.variants.iter().map(|(_, c)| c));
    let mut out: Vec<String> = checks
        .flat_map(|c| c.changed.iter().map(|f| f.name.clone()).chain(c.gone.iter().map(|g| g.name.clone())))
        .filter(|n| !as_c.contains(n))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What the base's trials are checked against, for port-check's last line on a base that
/// moved: the hybrid where it follows the tree (what stays the port named), else the port
/// and why.
pub fn base_model_line(kernels: &Kernels, cache: &Cache) -> String {
    match &*choose(kernels, cache, "base") {
        Choice::Hybrid { predictor: Predictor::Hybrid { label, .. }, .. } => {
            format!(
                "the base's trials are checked against the hybrid: {label}
"
            )
        }
        Choice::Not(why) => format!(
            "the base's trials are checked against the Rust port of 7.3.4: {why}
"
        ),
        Choice::Failed(why) => format!(
            "the hybrid of the base could not be made: {why}
"
        ),
        _ => String::new(),
    }
}

/// Why no model follows a kernel whose `file` did not compile: "FILE of TREE does not
/// compile with radiff's header (HEADER): the compiler's first error".
fn does_not_compile(file: &str, tree: &str, error: &super::CompileError) -> String {
    format!("{file} of {tree} does not compile with radiff's header ({}): {}", super::HEADER_PATH, error.first_error)
}

/// What the trial, explore's summary and review say modelled a kernel: its tree's
/// mm/readahead.c ran as C with the optional units in `ran` (a file compiled whole by its
/// name, one the hybrid takes functions from as `FILE's f(), g()`, but those `left` to the
/// port), and which of its functions the tree changes.
pub fn hybrid_label(tree: &str, ran: &[&str], changed: &[String], left: &[String]) -> String {
    let names: Vec<String> = changed.iter().map(|n| format!("{n}()")).collect();
    let ran_as_c = |n: &str| !left.iter().any(|l| l == n);
    // The miss walks are mm/filemap.c's but compiled with mm/readahead.c: said with it
    // unless the file's own functions are listed.
    let walks: Vec<String> = MISS_WALKS.iter().filter(|w| ran_as_c(w)).map(|w| format!("{w}()")).collect();
    let mut each = vec![match walks.is_empty() || ran.contains(&FILEMAP_C) {
        true => READAHEAD_C.to_string(),
        false => format!("{READAHEAD_C} (with {FILEMAP_C}'s {})", walks.join(", ")),
    }];
    for u in OPTIONAL.iter().filter(|u| ran.contains(&u.file)) {
        each.push(if u.whole {
            u.file.to_string()
        } else {
            format!("{}'s {}", u.file, names_of(u.file, left).join(", "))
        });
    }
    format!("{} of {tree} ran as C (the tree changes {})", super::join_and(&each), names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_base_runs_what_the_hybrid_can_and_names_what_stays_the_port() {
        let f = |n: &str, file: &str| (n.to_string(), file.to_string());
        let changed = [
            f("do_sync_mmap_readahead", "mm/filemap.c"),
            f("collapse_file", "mm/khugepaged.c"),
            f("set_pte_range", "mm/memory.c"),
        ];
        let (runs, stays) = split_moved(&changed, &[f("blk_flush_plug", "include/linux/blk_plug.h")]);
        assert_eq!(runs, [f("do_sync_mmap_readahead", "mm/filemap.c")]);
        assert_eq!(stays.len(), 3, "{stays:?}");
        assert_eq!(
            stays,
            [
                "blk_flush_plug() (include/linux/blk_plug.h, gone from the tree)",
                "collapse_file() (mm/khugepaged.c)",
                "set_pte_range() (mm/memory.c)"
            ]
        );
        let (runs, stays) = split_moved(&changed[1..2], &[]);
        assert!(runs.is_empty() && stays.len() == 1);
    }

    #[test]
    fn the_label_names_the_tree_and_each_changed_function() {
        let changed = ["force_page_cache_ra".to_string(), "page_cache_sync_ra".to_string()];
        let walks_left = MISS_WALKS.map(String::from);
        assert_eq!(
            hybrid_label("my-fix", &["mm/fadvise.c"], &changed, &walks_left),
            "mm/readahead.c and mm/fadvise.c of my-fix ran as C (the tree changes force_page_cache_ra(), page_cache_sync_ra())"
        );
        assert_eq!(
            hybrid_label("my-fix", &[], &changed[..1], &walks_left),
            "mm/readahead.c of my-fix ran as C (the tree changes force_page_cache_ra())"
        );
        // The tree's miss walks run with mm/readahead.c, whatever else does.
        assert_eq!(
            hybrid_label("my-fix", &[], &changed[..1], &[]),
            "mm/readahead.c (with mm/filemap.c's page_cache_next_miss(), page_cache_prev_miss()) of my-fix ran as C (the tree changes force_page_cache_ra())"
        );
        assert_eq!(
            hybrid_label("my-fix", &["mm/fadvise.c", "mm/filemap.c"], &changed[..1], &[]),
            "mm/readahead.c, mm/fadvise.c and mm/filemap.c's do_sync_mmap_readahead(), do_async_mmap_readahead(), filemap_get_read_batch(), filemap_read(), filemap_get_pages(), filemap_map_pages(), next_uptodate_folio(), filemap_map_pmd(), filemap_map_folio_range(), filemap_map_order0_folio(), page_cache_next_miss(), page_cache_prev_miss(), filemap_readahead(), filemap_create_folio(), filemap_update_page(), filemap_read_folio(), filemap_range_uptodate(), filemap_end_dropbehind_read(), filemap_end_dropbehind() of my-fix ran as C (the tree changes force_page_cache_ra())"
        );
        // Functions left out of their unit (6.12's fault-around) are not said to run.
        let left: Vec<String> = [
            "filemap_map_pages",
            "next_uptodate_folio",
            "filemap_map_pmd",
            "filemap_map_folio_range",
            "filemap_map_order0_folio",
        ]
        .map(String::from)
        .to_vec();
        let label = hybrid_label("6.12", &["mm/filemap.c"], &changed[..1], &left);
        assert!(label.starts_with("mm/readahead.c and mm/filemap.c's do_sync_mmap_readahead(), do_async_mmap_readahead(), filemap_get_read_batch(), filemap_read(), filemap_get_pages(), page_cache_next_miss()"), "{label}");
        assert!(!label.contains("filemap_map"), "{label}");
    }

    fn ch(n: &str, f: &str) -> (String, String) {
        (n.to_string(), f.to_string())
    }

    #[test]
    fn functions_of_readahead_c_the_model_calls_run_as_c() {
        let got = runs_as_c(&[ch("page_cache_async_ra", "mm/readahead.c"), ch("get_next_ra_size", "mm/readahead.c")]);
        assert_eq!(got, Ok(vec!["page_cache_async_ra".to_string(), "get_next_ra_size".to_string()]));
    }

    #[test]
    fn a_function_of_another_file_keeps_the_hybrid_out_and_says_which() {
        let why =
            runs_as_c(&[ch("page_cache_sync_ra", "mm/readahead.c"), ch("iomap_readahead", "fs/iomap/buffered-io.c")])
                .unwrap_err();
        assert!(why.contains("iomap_readahead() in fs/iomap/buffered-io.c"), "{why}");
        // f2fs's and ext4's ->readahead run as C with the static functions they call.
        assert!(runs_as_c(&[ch("f2fs_mpage_readpages", "fs/f2fs/data.c")]).is_ok());
        assert!(runs_as_c(&[ch("ext4_mpage_readpages", "fs/ext4/readpage.c")]).is_ok());
        let why = runs_as_c(&[ch("ractl_expand", "mm/readahead.c")]).unwrap_err();
        assert!(why.contains("ractl_expand()") && why.contains("outside"), "{why}");
        // mm/fadvise.c's generic_fadvise() runs as C; a function the table has is refused
        // under another file.
        assert!(runs_as_c(&[ch("generic_fadvise", "mm/fadvise.c")]).is_ok());
        let why = runs_as_c(&[ch("vfs_fadvise", "mm/fadvise.c")]).unwrap_err();
        assert!(
            why.contains("vfs_fadvise() in mm/fadvise.c, of which the hybrid runs only generic_fadvise()"),
            "{why}"
        );
        // The fault path's readahead of mm/filemap.c runs as C, the read path and the miss
        // walks; the rest of the file (filemap_fault() itself) does not.
        assert!(runs_as_c(&[
            ch("do_sync_mmap_readahead", "mm/filemap.c"),
            ch("do_async_mmap_readahead", "mm/filemap.c"),
            ch("page_cache_next_miss", "mm/filemap.c")
        ])
        .is_ok());
        assert!(runs_as_c(&[ch("filemap_read", "mm/filemap.c"), ch("filemap_get_pages", "mm/filemap.c")]).is_ok());
        let why = runs_as_c(&[ch("filemap_fault", "mm/filemap.c")]).unwrap_err();
        assert!(
            why.contains("of which the hybrid runs only do_sync_mmap_readahead(), do_async_mmap_readahead(), filemap_get_read_batch(), filemap_read(), filemap_get_pages(), filemap_map_pages(), next_uptodate_folio(), filemap_map_pmd(), filemap_map_folio_range(), filemap_map_order0_folio(), page_cache_next_miss(), page_cache_prev_miss(), filemap_readahead(), filemap_create_folio(), filemap_update_page(), filemap_read_folio(), filemap_range_uptodate(), filemap_end_dropbehind_read() and filemap_end_dropbehind() as C"),
            "{why}"
        );
        assert!(runs_as_c(&[ch("generic_fadvise", "mm/readahead.c")]).is_err());
        // No file system the model ports calls readahead_expand(): a tree may change it.
        assert!(runs_as_c(&[ch("readahead_expand", "mm/readahead.c")]).is_ok());
    }
}
