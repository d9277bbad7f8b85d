//! Why each window of a run is what it is, in kernel lines: `radiff explain RUN_DIR`.
//!
//! The model, in explain mode, records the decisions (branch ids of
//! `radiff_model::coverage::BRANCHES`, named after the kernel's conditions) that made each
//! window; [`crate::port::lines`] places each in the base's source. For a variant the model
//! has a policy for, the first decision where the variant's path leaves the base's is
//! named; for a patch it has none for, the functions the patch changes that the window's
//! base path went through.

use std::path::{Path, PathBuf};

use radiff_model::{explain as model_explain, Explained, Input, ModelConfig, Policy, Trace};

use crate::cache::Cache;
use crate::compare;
use crate::error::{Error, Result};
use crate::kernels::{Builder, Kernels};
use crate::port::lines::{locate, Anchors, KernelLines};
use crate::port::{self, Cached, Files, Ledger};
use crate::summary::window_line;

/// What `radiff explain` is asked.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `runs/SCENARIO/VARIANT[/POINT]`: absolute, relative to here, or to the cache's runs/.
    pub run_dir: PathBuf,
    /// One window only.
    pub window: Option<usize>,
}

/// Places decisions in a tree's lines, reading each file once.
pub struct Placer<'a> {
    anchors: Anchors,
    ledger: Ledger,
    tree: Cached<'a>,
    /// For the heading: which tree the lines are of.
    pub tree_name: String,
}

impl<'a> Placer<'a> {
    pub fn new(root: &Path, tree: &'a dyn Files) -> Result<Placer<'a>> {
        Ok(Placer {
            anchors: Anchors::load(root)?,
            ledger: Ledger::load(root)?,
            tree_name: tree.describe(),
            tree: Cached::new(tree),
        })
    }

    /// Where `id` is decided; `None` when the tree lacks its function.
    pub fn place(&mut self, id: &str) -> Option<KernelLines> {
        locate(&self.anchors, &self.ledger, &mut self.tree, id).ok().flatten()
    }

    /// `id` with its lines: `page_cache_async_ra: aligned_end < end: trimmed  (mm/readahead.c:713-717)`.
    /// A branch of a variant's policy is that variant's change, not a line of the base.
    pub fn line(&mut self, id: &str) -> String {
        let only = radiff_model::coverage::BRANCHES.iter().find(|b| b.id == id).and_then(|b| b.only);
        if let Some(policy) = only {
            return format!("{id}  ({policy}'s change to {}())", crate::port::lines::function_of(id));
        }
        match self.place(id) {
            Some(at) => format!("{id}  ({at})"),
            None => format!("{id}  (not in {})", self.tree_name),
        }
    }

    /// Decisions one per line, each with its lines, a run of the same one as one line
    /// (`x4`); each line starts with `indent`.
    pub fn lines(&mut self, decisions: &[String], indent: &str) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < decisions.len() {
            let n = decisions[i..].iter().take_while(|d| **d == decisions[i]).count();
            let times = if n > 1 { format!(" x{n}") } else { String::new() };
            out.push_str(&format!("{indent}{}{times}\n", self.line(&decisions[i])));
            i += n;
        }
        out
    }
}

/// The first decision where two explained runs of one input part: the window, and each
/// side's decision there (`None`: that side's path ended).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parting {
    pub window: usize,
    pub base: Option<String>,
    pub other: Option<String>,
    /// The decisions both took in that window before parting.
    pub shared: Vec<String>,
}

/// Where `other`'s path of decisions first leaves `base`'s (window by window, then within
/// the window); `None` when every window was decided alike.
pub fn first_parting(base: &Explained, other: &Explained) -> Option<Parting> {
    let n = base.notes.len().max(other.notes.len());
    for w in 0..n {
        let a = base.notes.get(w).map(|n| n.decisions.as_slice()).unwrap_or(&[]);
        let b = other.notes.get(w).map(|n| n.decisions.as_slice()).unwrap_or(&[]);
        let same_window = base.trace.windows.get(w) == other.trace.windows.get(w);
        if a == b && same_window {
            continue;
        }
        let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        if k == a.len() && k == b.len() {
            // The same decisions made different windows: the values differ, not the path.
            return Some(Parting { window: w, base: None, other: None, shared: a.to_vec() });
        }
        return Some(Parting { window: w, base: a.get(k).cloned(), other: b.get(k).cloned(), shared: a[..k].to_vec() });
    }
    None
}

/// The decisions of each window (or of `only`), one per line under the window's line.
pub fn render_windows(explained: &Explained, only: Option<usize>, placer: &mut Placer) -> String {
    let mut out = String::new();
    for (i, (w, note)) in explained.trace.windows.iter().zip(&explained.notes).enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        out.push_str(&format!("window {i} (op {}): {}\n", note.op, window_line(w)));
        out.push_str(&placer.lines(&note.decisions, "    "));
    }
    out
}

/// A sentence for a parting: "at window 3 base took X (lines); V took Y (lines)".
pub fn render_parting(p: &Parting, other_name: &str, placer: &mut Placer) -> String {
    let side = |d: &Option<String>, placer: &mut Placer| match d {
        Some(d) => placer.line(d),
        None => "no further decision".to_string(),
    };
    if p.base.is_none() && p.other.is_none() {
        return format!(
            "base and {other_name} part at window {}: the same decisions, with different values\n",
            p.window
        );
    }
    let mut s =
        format!("base and {other_name} part at window {}, after {} shared decisions:\n", p.window, p.shared.len());
    s.push_str(&format!("    base:  {}\n", side(&p.base, placer)));
    s.push_str(&format!("    {other_name}: {}\n", side(&p.other, placer)));
    s
}

/// A run folder read back: the kernel's trace, the model's input, the variant.
pub struct LoadedRun {
    pub dir: PathBuf,
    pub scenario: String,
    pub variant: String,
    pub kernel: Trace,
    pub input: Input,
}

/// Reads `runs/SCENARIO/VARIANT[/POINT]` and the scenario it ran (scenarios/SCENARIO.yaml).
pub fn load_run(root: &Path, cache: &Cache, dir: &Path) -> Result<LoadedRun> {
    let runs = cache.dir("runs")?;
    let dir = if dir.join("trace.json").exists() { dir.to_path_buf() } else { runs.join(dir) };
    let read = |name: &str| {
        let path = dir.join(name);
        crate::files::read_text(&path).map(|t| (path, t))
    };
    let (env_path, env_text) = read("env.json")?;
    let (trace_path, trace_text) = read("trace.json")?;
    let env: crate::wire::GuestEnv =
        serde_json::from_str(&env_text).map_err(|e| Error::Json { file: env_path, source: e })?;
    let capture: crate::ftrace::Capture =
        serde_json::from_str(&trace_text).map_err(|e| Error::Json { file: trace_path, source: e })?;
    let canonical = dir.canonicalize().map_err(|e| Error::io(&dir, e))?;
    let runs = runs.canonicalize().map_err(|e| Error::io(&runs, e))?;
    let rel = canonical.strip_prefix(&runs).map_err(|_| {
        Error::Other(format!("{}: not a run folder below {} (runs/SCENARIO/VARIANT)", dir.display(), runs.display()))
    })?;
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.len() < 2 {
        return Err(Error::Other(format!("{}: a run folder is runs/SCENARIO/VARIANT[/POINT]", dir.display())));
    }
    let scenario_path = root.join("scenarios").join(format!("{}.yaml", parts[0]));
    let scenario = crate::scenario::Scenario::load(&scenario_path)?;
    let (kernel, _) = compare::normalise(&capture.trace, &env.all_extents());
    let input = crate::run::model_input_with(&scenario, &env, &capture);
    Ok(LoadedRun { dir, scenario: parts[0].clone(), variant: parts[1].clone(), kernel, input })
}

/// `radiff explain`: the run's windows with their decisions in the base's lines, and for
/// a variant where it parts from the base.
pub fn explain_command(root: &Path, kernels: &Kernels, cache: &Cache, o: &Options) -> Result<String> {
    let run = load_run(root, cache, &o.run_dir)?;
    let tree = port::base_files(&Builder::new(kernels, cache))?;
    let mut placer = Placer::new(root, tree.as_ref())?;
    let config = ModelConfig::default();
    let base = model_explain(&run.input, &Policy::BASE, &config);
    let variant = if run.variant == "base" || run.variant.starts_with("base-") {
        None
    } else {
        Some(kernels.variant(&run.variant)?)
    };
    let policy = match variant {
        None => Some(("base".to_string(), Policy::BASE)),
        Some(v) => v.model.policy().and_then(|name| Some((name.to_string(), Policy::for_variant(name)?))),
    };
    let mut out = format!(
        "{}: scenario {}, kernel {}; decisions in the lines of {}\n",
        run.dir.display(),
        run.scenario,
        run.variant,
        placer.tree_name
    );
    match &policy {
        Some((name, p)) => {
            let own = model_explain(&run.input, p, &config);
            let timed = crate::model_check::timed_windows(&run.input, p);
            match compare::compare_timed(&run.kernel, &own.trace, &timed).0 {
                None if run.kernel != own.trace => out.push_str(&format!(
                    "the model ({name}) equals the kernel but for a splice's prev_pos (not compared: it depends on when reads complete): {} windows\n",
                    own.trace.windows.len()
                )),
                None => out.push_str(&format!("the model ({name}) equals the kernel: {} windows\n", own.trace.windows.len())),
                Some(d) => out.push_str(&format!("the model ({name}) parts from the kernel at window {}: the decisions below are the model's\n", d.window)),
            }
            out.push_str(&render_windows(&own, o.window, &mut placer));
            if let Some(v) = variant {
                match first_parting(&base, &own) {
                    Some(parting) => out.push_str(&render_parting(&parting, &v.name, &mut placer)),
                    None => out.push_str(&format!("base and {} take the same decisions on this run\n", v.name)),
                }
            }
        }
        None => {
            let v = variant.expect("base always has a policy");
            out.push_str(&format!(
                "the model has no policy for {}: the base model's decisions, and the patch's functions on its path\n",
                v.name
            ));
            out.push_str(&hybrid_line(kernels, cache, &run, &base.trace, &v.name));
            out.push_str(&patch_on_path(root, kernels, cache, &run, &base, v, o.window, &mut placer)?);
        }
    }
    Ok(out)
}

/// What the hybrid (the variant's C in the model) says of the run, when it can model the
/// variant: whether it equals the kernel, and where it parts from the base model.
fn hybrid_line(kernels: &Kernels, cache: &Cache, run: &LoadedRun, base: &Trace, variant: &str) -> String {
    let choice = crate::hybrid::choose(kernels, cache, variant);
    let crate::hybrid::Choice::Hybrid { predictor, changed } = &*choice else {
        return match &*choice {
            crate::hybrid::Choice::Not(why) => format!("the hybrid cannot model {variant}: {why}\n"),
            crate::hybrid::Choice::Failed(why) => format!("the hybrid of {variant} could not be made: {why}\n"),
            _ => String::new(),
        };
    };
    let trace = predictor.predict(&run.input);
    let kernel = match compare::compare(&run.kernel, &trace) {
        None => format!("equals the kernel: {} windows", trace.windows.len()),
        Some(d) => format!("parts from the kernel at window {}", d.window),
    };
    let from_base = match compare::compare(base, &trace) {
        None => "takes the base model's decisions on this run".to_string(),
        Some(d) => format!("parts from the base model at window {}", d.window),
    };
    format!("the hybrid ({variant}'s {} run as C) {kernel}, and {from_base}\n", changed.join(", "))
}

/// For a trial's divergence message: the model's decisions at `window`, in the base's
/// lines; `None` when the base's source cannot be read.
pub fn decisions_at(
    root: &Path,
    kernels: &Kernels,
    cache: &Cache,
    input: &Input,
    policy: &Policy,
    window: usize,
) -> Option<String> {
    let explained = model_explain(input, policy, &ModelConfig::default());
    let note = explained.notes.get(window)?;
    let tree = port::base_files(&Builder::new(kernels, cache)).ok()?;
    let mut placer = Placer::new(root, tree.as_ref()).ok()?;
    Some(format!(
        "the model decided window {window} so (radiff explain RUN_DIR --window {window}):\n{}",
        placer.lines(&note.decisions, "    ")
    ))
}

/// For a patch without a policy: where the kernel leaves the base model, that window's base
/// decisions, and which of its functions the patch changes.
#[allow(
    clippy::too_many_arguments,
    reason = "the tree, the kernels, the cache and the run it explains come from different places; each is used once"
)]
fn patch_on_path(
    root: &Path,
    kernels: &Kernels,
    cache: &Cache,
    run: &LoadedRun,
    base: &Explained,
    v: &crate::kernels::Variant,
    only: Option<usize>,
    placer: &mut Placer,
) -> Result<String> {
    let report = port::port_check(root, kernels, cache, std::slice::from_ref(&v.name), port::Shown::Names)?;
    let changed: Vec<String> =
        report.variants.iter().flat_map(|(_, c)| c.differing().into_iter().map(str::to_string)).collect();
    let window = match (only, compare::compare(&run.kernel, &base.trace)) {
        (Some(w), _) => w,
        (None, Some(d)) => d.window,
        (None, None) => {
            return Ok(format!(
                "the kernel equals the base model here: the patch ({}) changed nothing on this run\n",
                join_or_none(&changed)
            ));
        }
    };
    let mut out = format!("the kernel parts from the base model at window {window}\n");
    out.push_str(&render_windows(base, Some(window), placer));
    let on_path: Vec<&str> = base
        .notes
        .get(window)
        .map(|n| n.functions())
        .unwrap_or_default()
        .into_iter()
        .filter(|f| changed.iter().any(|c| c == f))
        .collect();
    out.push_str(&format!(
        "the patch changes {}; of them, window {window}'s base path went through: {}\n",
        join_or_none(&changed),
        if on_path.is_empty() { "none".to_string() } else { on_path.join(", ") }
    ));
    let hunks = port::hunks::variant_hunks(root, kernels, cache, &v.name)?;
    let decisions = base.notes.get(window).map(|n| n.decisions.clone()).unwrap_or_default();
    out.push_str(&hunks_on_path(&hunks, &decisions, &v.name, placer));
    Ok(out)
}

/// The hunks of `variant` in the functions `decisions` go through, each with the decisions
/// that lie in its lines: "async-align-v1's hunk at mm/readahead.c:700-720 in
/// page_cache_async_ra(), where the path decided: ...", then the hunk.
pub fn hunks_on_path(hunks: &[port::hunks::Hunk], decisions: &[String], variant: &str, placer: &mut Placer) -> String {
    let functions: Vec<&str> = decisions.iter().map(|d| port::lines::function_of(d)).collect();
    let mut out = String::new();
    for h in hunks.iter().filter(|h| h.functions.iter().any(|f| functions.contains(&f.as_str()))) {
        let mut inside: Vec<String> = Vec::new();
        for d in decisions {
            if !inside.contains(d) && placer.place(d).is_some_and(|at| h.holds(&at)) {
                inside.push(d.clone());
            }
        }
        out.push_str(&format!(
            "{variant}'s hunk at {}:{}-{} in {}(), ",
            h.file,
            h.first,
            h.last,
            h.functions.join("(), ")
        ));
        if inside.is_empty() {
            out.push_str("which the path's function went through (no decision of the path lies in its lines):\n");
        } else {
            out.push_str("where the path decided:\n");
            out.push_str(&placer.lines(&inside, "    "));
        }
        for line in h.text.lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out
}

fn join_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "no ported function".to_string()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parting_is_the_first_decision_the_two_policies_take_differently() {
        let input = crate::testing::example_stream();
        let config = ModelConfig::default();
        let base = model_explain(&input, &Policy::BASE, &config);
        let v1 = model_explain(&input, &Policy::for_variant("async-align-v1").unwrap(), &config);
        let p = first_parting(&base, &v1).expect("the policies differ on this stream");
        // Every window before the parting was decided alike and came out alike.
        for w in 0..p.window {
            assert_eq!(base.notes[w].decisions, v1.notes[w].decisions);
            assert_eq!(base.trace.windows[w], v1.trace.windows[w]);
        }
        let (a, b) = (p.base.clone().unwrap(), p.other.clone().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with("page_cache_async_ra:") && b.starts_with("page_cache_async_ra:"), "{a} / {b}");
        // The same run against itself never parts.
        assert_eq!(first_parting(&base, &base), None);
    }
}
