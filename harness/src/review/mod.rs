//! `radiff review PATH`: from a patch mail (or an mbox of a series, or a variant folder) to
//! a reply a maintainer could send, in one command.
//!
//! 1. [`prepare`]: the variant, made from the mail only once it parsed and applied.
//! 2. Both kernels built; port-check says which ported functions the patch changes, and
//!    [`crate::hybrid::choose::predictor`] how the model follows them (a known policy, the
//!    patch's own C, or not at all, with why).
//! 3. The model predicts every point of `scenarios/` on base and on the patch; where it
//!    can, explore's search looks for more (on the model alone), and its smallest finding
//!    of each kind joins the cases.
//! 4. The kernels run every case the model says changes (every case the patch can reach
//!    when the model cannot say), twice each, as the budget allows ([`evidence::run`]).
//! 5. The reply ([`reply`]) with its evidence: `reply.txt`, `reply.md`, `scenarios/`,
//!    `headline.svg`, in one folder.
//!
//! Where no model follows the patch, the kernels run a generated covering set
//! ([`covering`]) beside the repository's scenarios the patch can reach.
//!
//! Exit status ([`judge::Verdict::exit_code`]): 0 with a Tested-by, 1 when the kernels
//! show something worse, 2 on bad input, 3 when nothing is worse but the evidence falls
//! short of a Tested-by ([`judge`] says what a Tested-by claims).

pub mod asked;
pub mod checklist;
pub mod covering;
pub mod evidence;
pub mod judge;
pub mod pick;
pub mod prepare;
pub mod questions;
pub mod reply;
mod thread;
mod write;

#[cfg(test)]
mod reply_tests;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use radiff_model::Policy;

use crate::cache::Cache;
use crate::error::Result;
use crate::hybrid::choose::predictor;
use crate::kernels::Kernels;
use crate::model_check::Predictor;
use crate::progress::progress;
use evidence::{Case, Origin};
use reply::{Review, Touched};

/// What `radiff review` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// A raw mail, an mbox, or a folder of `kernels/variants/`.
    pub path: PathBuf,
    /// The variant's name when one is made (default: from the subject).
    pub name: Option<String>,
    /// Wall time of the whole review (a build that is not cached comes first and counts).
    pub budget: Duration,
    /// The review's folder (default `review-VARIANT`).
    pub out: Option<PathBuf>,
    /// The search's seed.
    pub seed: u64,
    /// Leave a variant folder the review made in `kernels/variants/` (default: removed when
    /// the review ends, its patches kept in the review folder's `variant/`).
    pub keep: bool,
}

/// The variant folder a review made, removed when the review ends however it ends (an
/// error, a panic): a folder left in `kernels/variants/` would be a variant of every later
/// `cargo test`, failing for want of snapshots. A killed review's is removed by the next
/// ([`crate::kernels::remove_stale_reviews`]) and seen by no other process meanwhile.
struct MadeVariant {
    dir: Option<PathBuf>,
}

impl MadeVariant {
    /// Keeps the folder in `kernels/variants/` as if dropped in by hand (`--keep`): no longer
    /// this process's alone.
    fn keep(&mut self) -> Result<()> {
        if let Some(dir) = self.dir.take() {
            crate::files::remove_file(&dir.join(crate::kernels::REVIEW_MARK))?;
        }
        Ok(())
    }
}

impl Drop for MadeVariant {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            crate::files::remove_dir_quietly(dir);
        }
    }
}

/// The share of the budget the search on the model gets, at most [`SEARCH_MAX`].
const SEARCH_SHARE: f64 = 0.2;
const SEARCH_MAX: Duration = Duration::from_secs(120);
/// Findings of each direction (better, worse) that join the cases.
const FOUND_EACH: usize = 2;

/// `radiff review`.
pub fn review_command(o: &Options) -> Result<ExitCode> {
    let started = Instant::now();
    let deadline = started + o.budget;
    let root = crate::repo_root();
    let cache = Cache::from_env();
    progress(&format!("review: reading {}", o.path.display()));
    let prepared = prepare::prepare(&Kernels::load(&root)?, &cache, &o.path, o.name.as_deref())?;
    let mut made = MadeVariant { dir: prepared.made.clone() };
    progress(&format!("review: {}", prepared.how));
    let v = prepared.variant.clone();
    let out = o.out.clone().unwrap_or_else(|| PathBuf::from(format!("review-{v}")));
    // Review's boots do not depend on each other: as many at once as the host's cores allow.
    let lab = crate::run::Lab::open()?.side_by_side();
    progress(&format!("review: phase 1 of 5, building base and {v} (cached kernels are reused)"));
    lab.kernel("base", "radiff review")?;
    lab.kernel(&v, "radiff review")?;

    progress("review: phase 2 of 5, what the patch changes (port-check) and how the model follows it");
    let variant = lab.kernels.variant(&v)?;
    let report =
        crate::port::port_check(&root, &lab.kernels, &cache, std::slice::from_ref(&v), crate::port::Shown::Names)?;
    let changed: Vec<(String, String)> =
        report.variants.iter().flat_map(|(_, c)| c.changed.iter().map(|f| (f.name.clone(), f.file.clone()))).collect();
    let (patch, why) = predictor(&lab.kernels, &cache, &v, &variant.model)?;
    let mut review = Review {
        subject: prepared.subject.clone(),
        asked: prepared.asked.clone(),
        thread: prepared.thread.clone(),
        patches: variant.patches.len(),
        variant: v.clone(),
        kernels: format!("{} and the same with the patch, under QEMU", base_name(&lab.kernels.base, &report.kernel)),
        touched: touched(&changed, patch.as_ref(), variant.model.policy(), why.as_deref()),
        model: model_sentence(patch.as_ref(), variant.model.policy()),
        modelled: patch.is_some(),
        why_not: why.clone(),
        made: made.dir.is_some() && !o.keep,
        command: format!("radiff review {} --budget {}s --seed {}", o.path.display(), o.budget.as_secs(), o.seed),
        ..Default::default()
    };

    progress("review: phase 3 of 5, the model on the repository's scenarios, then the search");
    let scenarios = crate::scenario::load_all(&root.join("scenarios"))?;
    let mut cases = evidence::repository(&scenarios);
    review.uncovered = uncovered(&cases, &changed);
    // What the patch can reach when the model cannot say: every file it touches, not only
    // the ported functions' files (a change beside them elsewhere reaches every scenario).
    let mut files = Vec::new();
    for p in &variant.patches {
        files.extend(crate::port::touched_files(&crate::kernels::patch_text(p)?));
    }
    files.sort();
    files.dedup();
    let file_systems = covering::file_systems(&files);
    review.file_systems = file_systems.iter().map(|f| f.name().to_string()).collect();
    if let Some(p) = &patch {
        model_phase(&mut review, &mut cases, &lab, p, o, &out, deadline)?;
    } else {
        // No model to search with: the kernels search instead, on a small generated set
        // of the usual questions on the file systems the patch can reach.
        cases.extend(covering::cases(&file_systems, o.seed, &v, &out.join("scenarios"))?);
        review.searched = format!(
            "No search: the model cannot predict this patch, so the kernels ran the repository's scenarios it can reach and a generated covering set ({}) on {} (`radiff explore --variants base,{v}`{} runs the base model's covering set of branches on both kernels).",
            covering::KINDS.join(", "),
            review.file_systems.join(", "),
            if made.dir.is_some() { ", after a review with --keep," } else { "" }
        );
    }

    progress("review: phase 4 of 5, the kernels, each case twice on each");
    let mut todo: Vec<&mut Case> = cases
        .iter_mut()
        .filter(
            |c| if c.model.is_some() { c.changed() || c.hints_fire_on_model() } else { evidence::reachable(c, &files) },
        )
        .collect();
    for c in todo.iter_mut() {
        c.wanted = true;
    }
    // What a reviewer asks first: where the model says it is worse; then the repository's
    // changes, the search's better ones, and last what the model could not predict, the
    // covering set first (each the strongest first; the sort is stable).
    todo.sort_by(|a, b| rank(a).cmp(&rank(b)).then(b.strength().total_cmp(&a.strength())));
    evidence::run(&lab, &v, &mut todo, deadline, &|l| progress(l))?;
    for c in cases.iter_mut().filter(|c| c.model.is_none() && c.runs.is_none() && c.not_run.is_none()) {
        c.not_run =
            Some(format!("the patch changes only {}, which these scenarios' file systems never run", files.join(", ")));
    }
    review.cases = cases;

    progress("review: phase 5 of 5, the reply");
    series(&mut review, &lab, &prepared.patch_subjects, deadline)?;
    write::place(&mut review, &root, &lab.kernels, &cache)?;
    let text = write::write(&mut review, &out)?;
    if made.dir.is_some() {
        // The variant as it was made, for `cp -r OUT/variant kernels/variants/NAME`.
        for p in &variant.patches {
            let name = p.file_name().unwrap_or_default();
            crate::cache::write_atomic(&out.join("variant").join(name), &crate::files::read_bytes(p)?)?;
        }
        if o.keep {
            made.keep()?;
        }
    }
    crate::progress::output(&text);
    progress(&format!("review: wrote {} in {:.0} s", out.join("reply.txt").display(), started.elapsed().as_secs_f64()));
    let verdict = judge::judge(&judge::looked(&review));
    progress(&format!(
        "review: {}",
        match verdict.exit_code() {
            0 => "a Tested-by".to_string(),
            1 => "the kernels show it worse".to_string(),
            _ => format!("not enough evidence for a Tested-by (exit {})", judge::EXIT_NOT_ENOUGH),
        }
    ));
    Ok(ExitCode::from(verdict.exit_code()))
}

/// Phase 3 where a model follows the patch: it predicts every repository point on base
/// and on the patch (the program points from their calls, recorded on base while the
/// search runs), then explore's search on the model, whose smallest findings join the
/// cases.
fn model_phase(
    review: &mut Review,
    cases: &mut Vec<Case>,
    lab: &crate::run::Lab,
    p: &Predictor,
    o: &Options,
    out: &std::path::Path,
    deadline: Instant,
) -> Result<()> {
    evidence::predict(cases, &Policy::BASE, p);
    // The program cases' recording on base boots a guest while the search runs on the
    // model beside it: neither waits for the other.
    let search = o.budget.mul_f64(SEARCH_SHARE).min(SEARCH_MAX);
    // The search leaves the guest's vCPUs their cores while a recording runs.
    let recording = cases.iter().any(|c| c.needs_recording());
    let cores = crate::explore::all_cores();
    let threads = if recording { cores.saturating_sub(lab.vcpus() as usize).max(1) } else { cores };
    let v = review.variant.clone();
    let (recorded, searched) = std::thread::scope(|s| {
        let recording = s.spawn(|| evidence::record_programs(lab, cases, deadline, &|l| progress(l)));
        let searched = search_cases(&v, search, threads, o.seed, out, p);
        (recording.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), searched)
    });
    evidence::predict_recorded(cases, recorded?, &Policy::BASE, p, &|l| progress(l));
    let predicted = cases.iter().filter(|c| c.model.is_some()).count();
    let changing = cases.iter().filter(|c| c.changed()).count();
    progress(&format!("review: the model: {changing} of {predicted} repository points change"));
    let (found, said, facts) = searched?;
    review.searched = said;
    review.search = Some(facts);
    review.search_reached = judge::usual_of_search(o.seed, facts.1);
    cases.extend(found);
    Ok(())
}

/// The order in which the kernels run cases (see [`review_command`]).
fn rank(c: &Case) -> u8 {
    match (c.model.is_some(), c.worse(), &c.origin) {
        (true, true, _) => 0,
        (true, false, Origin::Repository) => 1,
        (true, false, _) => 2,
        (false, _, Origin::Covering) => 3,
        (false, ..) => 4,
    }
}

/// For a series: the first patch whose kernel changes the headline's trace and each worse
/// case's (`radiff bisect --variant`'s search over the series' prefixes, each a kernel
/// built incrementally): the headline's always, the worse ones' while the budget lasts.
fn series(review: &mut Review, lab: &crate::run::Lab, subjects: &[String], deadline: Instant) -> Result<()> {
    let variant = lab.kernels.variant(&review.variant)?;
    let n = variant.patches.len();
    if n < 2 {
        return Ok(());
    }
    let mut wanted: Vec<usize> = review.headline().into_iter().collect();
    for (i, c) in review.cases.iter().enumerate() {
        if c.shown_by_kernels() && c.worse() && !wanted.contains(&i) {
            wanted.push(i);
        }
    }
    // The headline is always bisected (a series' reply is about which patch); the worse
    // cases while the budget lasts.
    for (k, i) in wanted.into_iter().enumerate() {
        let name = review.cases[i].name.clone();
        if k > 0 && Instant::now() >= deadline {
            review.series.push((name, "not bisected: the budget is spent".into()));
            continue;
        }
        progress(&format!("review: which patch of the {n} changes {name} (bisecting the series)"));
        let single = review.cases[i].single();
        let said = match crate::bisect::bisect_series(lab, variant, &single, &single.points[0]) {
            Ok(found) => match found.patch {
                Some((k, _)) => format!(
                    "patch {k} of {n} first changes it (\"{}\")",
                    subjects.get(k - 1).map_or("", |s| s.as_str())
                ),
                None => format!("bisecting the {n} patches found none that changes it; that run of the whole series equals base (a race?)"),
            },
            Err(e) => format!("not bisected: {}", e.to_string().lines().next().unwrap_or("")),
        };
        review.series.push((name, said));
    }
    Ok(())
}

/// The base in a few words: `Linux 7.3.4 (Debian's linux-source-7.3)`, `~/src/linux at mm-new`.
fn base_name(base: &crate::kernels::Base, ported: &str) -> String {
    match base {
        crate::kernels::Base::Debian { package } => format!("Linux {ported} (Debian's {package})"),
        crate::kernels::Base::Git { tree, rev } => format!("{} at {rev}", tree.display()),
        crate::kernels::Base::InPlace { tree } => format!("{} as checked out", tree.display()),
    }
}

/// Each changed function and how the model follows it.
fn touched(
    changed: &[(String, String)],
    patch: Option<&Predictor>,
    policy: Option<&str>,
    why: Option<&str>,
) -> Vec<Touched> {
    changed
        .iter()
        .map(|(function, file)| Touched {
            function: function.clone(),
            file: file.clone(),
            how: match (patch, policy) {
                (Some(Predictor::Port(_)), Some(p)) => format!("the model follows it as its known policy `{p}`"),
                (Some(Predictor::Port(_)), None) => {
                    "the model's port of the base (the patch changes no decision there)".into()
                }
                (Some(Predictor::Hybrid { .. }), _) => "ran as this patch's C inside the model (the hybrid)".into(),
                (None, _) => format!("the model cannot follow it: {}", why.unwrap_or("no policy and no hybrid")),
            },
            modelled: patch.is_some(),
        })
        .collect()
}

fn model_sentence(patch: Option<&Predictor>, policy: Option<&str>) -> Option<String> {
    Some(match (patch?, policy) {
        (Predictor::Port(_), Some(p)) => format!("its known policy `{p}`"),
        (Predictor::Port(_), None) => "the base's port".into(),
        (hybrid @ Predictor::Hybrid { .. }, _) => hybrid.hybrid_said()?,
    })
}

/// The patch's changed functions that the base's path never reaches on the repository's
/// scenarios (functions the model records branches of; programs are left out: their calls
/// come from a run).
fn uncovered(cases: &[Case], changed: &[(String, String)]) -> Vec<String> {
    let mut all = radiff_model::Coverage::default();
    for c in cases.iter().filter(|c| c.scenario.programs.is_empty()) {
        all.union(&radiff_model::coverage(&c.input(), &Policy::BASE).1);
    }
    let reached: Vec<&str> = all.ids().map(crate::port::lines::function_of).collect();
    let recorded =
        |f: &str| radiff_model::coverage::BRANCHES.iter().any(|b| crate::port::lines::function_of(b.id) == f);
    changed
        .iter()
        .filter(|(f, _)| recorded(f) && !reached.contains(&f.as_str()))
        .map(|(f, file)| format!("{f}() ({file})"))
        .collect()
}

/// The questions generated scenario `g` asks ([`pick::Ask`]): the usual ones, and the
/// checklist lines not every case asks, read from the scenario it renders to.
fn asks_of(g: &crate::explore::generate::Gen) -> Vec<pick::Ask> {
    let mut asks: Vec<pick::Ask> = judge::usual_of_gen(g).into_iter().map(pick::Ask::Usual).collect();
    if let Ok(s) = crate::scenario::Scenario::parse(std::path::Path::new("search.yaml"), &g.yaml("", &[])) {
        asks.extend(
            checklist::lines_of(&s, &s.points[0])
                .into_iter()
                .filter(|l| pick::Ask::ALL.contains(&pick::Ask::Line(*l)))
                .map(pick::Ask::Line),
        );
    }
    asks
}

/// explore's search of base against the patch on the model for `budget` on `threads`
/// threads (no kernels), its smallest variant changes of each direction as cases with their
/// scenario files under `out/scenarios/`, and a sentence on the search.
fn search_cases(
    v: &str,
    budget: Duration,
    threads: usize,
    seed: u64,
    out: &std::path::Path,
    patch: &Predictor,
) -> Result<(Vec<Case>, String, (Duration, u64))> {
    let o = crate::explore::Options {
        variants: vec!["base".into(), v.to_string()],
        budget,
        threads,
        seed,
        out: out.join("explore"),
        confirm: Some(0),
        variant_changes_only: true,
        ..Default::default()
    };
    let report = crate::explore::explore(&o, None, &mut |l| progress(l))?;
    let mut changes: Vec<&crate::explore::Finding> =
        report.findings.iter().filter(|f| f.variant.as_deref() == Some(v)).collect();
    changes.sort_by(|a, b| a.gen.steps.len().cmp(&b.gen.steps.len()).then(b.hit.strength.total_cmp(&a.hit.strength)));
    let mut cases = Vec::new();
    let dir = out.join("scenarios");
    let found: Vec<pick::Found> = changes
        .iter()
        .map(|f| pick::Found { worse: crate::explore::is_worse(&f.hit), asks: asks_of(&f.gen) })
        .collect();
    let picked = pick::chosen(&found, FOUND_EACH);
    for f in picked.iter().map(|&i| changes[i]) {
        let variants = f.variants("base");
        let comment = format!("radiff review of {v}: {}\n{}", f.hit.key, f.hit.detail);
        let path = dir.join(format!("{}.yaml", f.name()));
        crate::cache::write_atomic(&path, f.gen.yaml(&comment, &variants).as_bytes())?;
        let scenario = crate::scenario::Scenario::load(&path)?;
        let mut c = Case::new(f.name(), scenario, 0, Origin::Found { key: f.hit.key.clone() }, path);
        evidence::predict(std::slice::from_mut(&mut c), &Policy::BASE, patch);
        cases.push(c);
    }
    let worse = changes.iter().filter(|f| crate::explore::is_worse(&f.hit)).count();
    let said = format!(
        "The search (explore, seed {seed}) predicted {} generated scenarios on the model in {:.0} s: {} change requests or folios, in {} kinds after shrinking, {worse} of them worse on some figure; the smallest {} of each direction, and of each direction the smallest that asks each usual question or checklist line (sequential reads, interleaved streams and several files) those leave open, ran on the kernels (above, where they showed it). Every finding: {}.",
        report.search.scenarios,
        report.search.elapsed.as_secs_f64(),
        report.search.groups.values().filter(|f| f.variant.as_deref() == Some(v)).map(|f| f.group_size).sum::<u64>(),
        changes.len(),
        FOUND_EACH,
        o.out.join("summary.md").display()
    );
    Ok((cases, said, (report.search.elapsed, report.search.scenarios)))
}
