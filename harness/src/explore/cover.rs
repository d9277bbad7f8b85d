//! `radiff explore --variants base,V` for a variant the model has no policy for: the
//! model on base picks a small set of generated scenarios that together reach every
//! branch of the ported kernel functions the generator can reach (greedy set cover over
//! [`radiff_model::coverage()`]), the set runs on both kernels, and every scenario where
//! V's device requests or folios differ from base's is shrunk by delta debugging on the
//! kernels themselves (no model of V exists to shrink with: each candidate runs on both)
//! and written as scenario YAML with the figures of both kernels.

use std::fmt::Write;
use std::time::{Duration, Instant};

use radiff_model::{Coverage, Policy, Trace};

use super::detect::Hit;
use super::generate::{self, Gen};
use super::{figures_line, interrupted, scenario_of, synthetic_input, Costs, Options};
use crate::compare;
use crate::error::{Error, Result};
use crate::run::Lab;

/// Greedy set cover: indexes into `sets` of a small subset whose union equals the union
/// of all, the set adding most new branches first (the first such on ties).
pub fn select(sets: &[Coverage]) -> Vec<usize> {
    let mut all = Coverage::default();
    for s in sets {
        all.union(s);
    }
    let mut covered = Coverage::default();
    let mut picked = Vec::new();
    while covered != all {
        let (i, gain) = sets.iter().enumerate().map(|(i, s)| (i, s.minus(&covered).len())).fold((0, 0), |b, x| {
            if x.1 > b.1 {
                x
            } else {
                b
            }
        });
        if gain == 0 {
            break;
        }
        covered.union(&sets[i]);
        picked.push(i);
    }
    picked
}

/// The scenarios picked, with what they reach.
pub struct Picked {
    pub gens: Vec<(u64, Gen)>,
    pub covered: Coverage,
    pub generated: u64,
}

impl Picked {
    /// "the set of K scenarios reaches N of M branches" and the branches never reached.
    pub fn summary(&self) -> String {
        let base = Coverage::base();
        let mut s = format!(
            "the set of {} scenarios (of {} generated) reaches {} of {} branches\n",
            self.gens.len(),
            self.generated,
            base.len() - base.minus(&self.covered).len(),
            base.len()
        );
        let missing: Vec<&str> = base.minus(&self.covered).ids().collect();
        let _ = writeln!(s, "never reached ({}):", missing.len());
        for id in missing {
            let _ = writeln!(s, "  {id}");
        }
        s
    }
}

/// Predicts scenarios `0..n` of `seed` on base with coverage and picks the set.
pub fn pick(seed: u64, n: u64) -> Picked {
    let mut gens = Vec::new();
    let mut sets = Vec::new();
    for index in 0..n {
        let gen = generate::generate(seed, index);
        let Ok(s) = scenario_of(&gen, &[]) else { continue };
        let (_, cov) = radiff_model::coverage(&synthetic_input(&s), &radiff_model::Policy::BASE);
        gens.push((index, gen));
        sets.push(cov);
    }
    let chosen = select(&sets);
    let mut covered = Coverage::default();
    for &i in &chosen {
        covered.union(&sets[i]);
    }
    Picked { gens: chosen.iter().map(|&i| gens[i].clone()).collect(), covered, generated: n }
}

/// One scenario run on both kernels (the set's, or a shrinking candidate).
#[derive(Clone, Debug)]
pub struct Pair {
    pub name: String,
    pub gen: Gen,
    /// The kernels' traces, normalised: base, then the variant.
    pub base: Trace,
    pub variant: Trace,
    /// Where the variant's device requests or folios differ from base's.
    pub hit: Option<Hit>,
    /// Where the base model parts from the base kernel (a model bug), rendered.
    pub model_bug: Option<String>,
    /// The model's input from what the guest measured on the base run.
    pub base_input: Option<radiff_model::Input>,
    /// Wall time of the two runs, and of the disk image's preparation when it was made.
    pub run_time: Duration,
    pub image_time: Option<Duration>,
}

/// Runs `gen` on the base kernel and on `variant`'s, and checks the base kernel against the
/// base model on what the guest measured: [`run_pairs`] of one.
pub fn run_pair(lab: &Lab, variant: &str, gen: &Gen, name: &str) -> Result<Pair> {
    run_pairs(lab, variant, &[(name.to_string(), gen.clone())], &mut |_| {}).pop().expect("one result per scenario")
}

/// Runs every scenario of `items` (name, scenario) on the base kernel and on `variant`'s:
/// their disk images first (each timed), then one batch per kernel ([`Lab::run_batch`], up
/// to [`crate::run::BATCH_POINTS`] points to a boot), each run in `runs/NAME/KERNEL/`; each
/// base run is checked against the base model on what its guest measured. A scenario whose
/// image or either run fails gets the error; the others go on. `progress` gets a line as
/// each run starts. Results come back in the items' order; each pair's `run_time` is its two
/// runs' walls (a batched run's own time and its share of its boot's).
pub fn run_pairs(
    lab: &Lab,
    variant: &str,
    items: &[(String, Gen)],
    progress: &mut dyn FnMut(&str),
) -> Vec<Result<Pair>> {
    let variants = vec!["base".to_string(), variant.to_string()];
    let dir = match lab.cache.dir("explore") {
        Ok(d) => d,
        Err(e) => return items.iter().map(|_| Err(Error::Other(e.to_string()))).collect(),
    };
    // The scenarios and their images.
    let mut ready: Vec<Result<(crate::scenario::Scenario, Option<Duration>)>> = items
        .iter()
        .map(|(name, gen)| {
            let scenario = gen.scenario(&dir, name, "", &variants)?;
            if crate::run::image_ready(&lab.cache, &scenario) {
                return Ok((scenario, None));
            }
            let t = Instant::now();
            lab.image(&scenario, &format!("explore {name}"))?;
            Ok((scenario, Some(t.elapsed())))
        })
        .collect();
    let ok: Vec<usize> = (0..items.len()).filter(|&i| ready[i].is_ok()).collect();
    // One batch per kernel: base's runs, then the variant's.
    let mut outs: Vec<Vec<Option<Result<crate::run::RunOutput>>>> = Vec::new();
    for v in &variants {
        let mut of_kernel: Vec<Option<Result<crate::run::RunOutput>>> = items.iter().map(|_| None).collect();
        let who = ok.first().map_or(String::new(), |&i| format!("explore {} on {v}", items[i].0));
        match lab.kernel(v, &who) {
            Ok(kernel) => {
                let jobs: Vec<crate::run::Job> = ok
                    .iter()
                    .map(|&i| {
                        let (scenario, _) = ready[i].as_ref().expect("only scenarios that are ready run");
                        crate::run::Job { scenario, point: &scenario.points[0], name: v }
                    })
                    .collect();
                let results = lab.run_batch_announced(&kernel, &jobs, &mut |j| {
                    progress(&format!("explore: {} on {v}", items[ok[j]].0))
                });
                for (&i, r) in ok.iter().zip(results) {
                    of_kernel[i] = Some(r);
                }
            }
            Err(e) => {
                for &i in &ok {
                    of_kernel[i] = Some(Err(Error::Other(e.to_string())));
                }
            }
        }
        outs.push(of_kernel);
    }
    let mut variant_outs = outs.pop().expect("two kernels");
    let mut base_outs = outs.pop().expect("two kernels");
    (0..items.len())
        .map(|i| {
            let (scenario, image_time) = std::mem::replace(&mut ready[i], Err(Error::Other(String::new())))?;
            let base_out = base_outs[i].take().expect("a ready scenario ran on base")?;
            let variant_out = variant_outs[i].take().expect("a ready scenario ran on the variant")?;
            Ok(pair_of(&items[i], variant, &scenario, base_out, variant_out, image_time))
        })
        .collect()
}

/// A pair from its two runs: the kernels' traces normalised, the base run checked against
/// the base model on what its guest measured, the variant's change found.
fn pair_of(
    (name, gen): &(String, Gen),
    variant: &str,
    scenario: &crate::scenario::Scenario,
    base_out: crate::run::RunOutput,
    variant_out: crate::run::RunOutput,
    image_time: Option<Duration>,
) -> Pair {
    let checked = crate::model_check::check(scenario, &base_out.env, &base_out.capture, &Policy::BASE);
    let (variant_trace, _) = variant_out.normalised();
    let (base, input) = (checked.kernel, checked.input);
    let model_bug = checked
        .divergence
        .map(|d| compare::render(&d, &format!("{name}::base"), &format!("radiff run {name}.yaml --variant base")));
    let hit = super::detect::variant_change(&base, &variant_trace, variant);
    Pair {
        name: name.clone(),
        gen: gen.clone(),
        base,
        variant: variant_trace,
        hit,
        model_bug,
        base_input: Some(input),
        run_time: base_out.wall + variant_out.wall,
        image_time,
    }
}

/// What an explore of a variant without a model policy produced.
#[derive(Debug, Default)]
pub struct UnknownReport {
    /// The set's scenarios that ran on both kernels, in the order they ran.
    pub ran: Vec<Pair>,
    /// The set's scenarios not run: (name, why).
    pub skipped: Vec<(String, String)>,
    /// Per changed scenario of `ran` (by index): the smallest one found that still changes
    /// the same way, and the kernel runs the shrinking took (pairs).
    pub shrunk: Vec<(usize, Pair, usize)>,
    /// The scenarios where the base model fires a detector, run before the set: (name, what fired).
    pub anomalies: Vec<(String, String)>,
    /// The ported functions the variant's patches change (`port-check`).
    pub changed_functions: Vec<String>,
    /// The scenarios chosen because their base path goes through a changed function.
    pub directed: Vec<String>,
    /// Per reported change (by scenario name): the first window where the kernels part,
    /// and the base path's decisions there in the functions the patch changes, in the base's
    /// kernel lines.
    pub decided: Vec<(String, String)>,
    /// Changes and model bugs a second run of the same kernels did not repeat: (scenario,
    /// which kernel's two runs differed, and how). Never reported as changes.
    pub races: Vec<(String, String)>,
    /// Changes and model bugs seen once and not run again for lack of budget: not reported.
    pub unrepeated: Vec<String>,
    /// The set's kernel runs: their wall time and the guests booted for them.
    pub set_wall: Duration,
    pub set_boots: usize,
    pub interrupted: bool,
    pub markdown: String,
}

impl UnknownReport {
    /// "ran 24 scenarios on both kernels in 310 s (4.6 scenarios a minute, 8 boots)".
    pub fn set_rate(&self) -> String {
        let secs = self.set_wall.as_secs_f64();
        let rate = if secs > 0.0 { self.ran.len() as f64 * 60.0 / secs } else { 0.0 };
        format!(
            "ran {} scenarios on both kernels in {secs:.0} s ({rate:.1} scenarios a minute, {} boots)",
            self.ran.len(),
            self.set_boots
        )
    }
}

/// Whether a candidate changes "the same way" as the original: any change in requests or
/// folios, and still worse on some figure when the original was.
pub(super) fn same_way(original: &Hit, candidate: &Option<Hit>) -> bool {
    candidate.as_ref().is_some_and(|c| !super::is_worse(original) || super::is_worse(c))
}

/// Time kept for the second runs of the changes (one seen once is not reported) and for
/// shrinking them: the set's runs stop when less than this share of the budget is left.
pub const SHRINK_SHARE_UNKNOWN: f64 = 0.4;

/// `radiff explore --variants base,V` where V has no model policy: picks the branch-covering
/// set from `o.max_scenarios` (default 2000) scenarios of `o.seed` with the base model, runs
/// as much of it on both kernels as the budget allows (at most `o.confirm` scenarios when
/// given), then shrinks each scenario where V changes the device's requests or folios by
/// delta debugging on the kernels (both kernels per candidate, worse changes first), writes
/// each as scenario YAML to `o.out`, and returns the report.
pub fn explore_unknown(lab: &Lab, variant: &str, o: &Options, progress: &mut dyn FnMut(&str)) -> Result<UnknownReport> {
    let started = Instant::now();
    let picked = pick(o.seed, o.max_scenarios.unwrap_or(2000));
    progress(&format!(
        "explore: {variant} has no model policy: {}",
        picked.summary().lines().next().unwrap_or_default()
    ));
    let anomalies = base_anomalies(o, progress);
    let mut report = UnknownReport {
        anomalies: anomalies.iter().map(|(n, _, why)| (n.clone(), why.clone())).collect(),
        ..Default::default()
    };
    report.changed_functions = changed_functions(lab, variant, progress);
    let directed = super::directed::rank(
        o.seed,
        o.max_scenarios.unwrap_or(2000).min(DIRECTED_FROM),
        &report.changed_functions,
        DIRECTED,
    );
    progress(&format!(
        "explore: {variant} changes {}: {} generated scenarios go through them, the {} going through most run first",
        if report.changed_functions.is_empty() {
            "no ported function".to_string()
        } else {
            report.changed_functions.join(", ")
        },
        directed.len(),
        directed.len().min(DIRECTED)
    ));
    report.directed = directed.iter().map(|d| format!("explore_patch_{}_{}", o.seed, d.index)).collect();
    // The base anomalies first (shrunk, small, where patches set out to act), then the
    // scenarios through the patched functions, then the branch-covering set.
    let mut todo: Vec<(String, Gen)> = anomalies.into_iter().map(|(n, g, _)| (n, g)).collect();
    todo.extend(directed.iter().map(|d| (format!("explore_patch_{}_{}", o.seed, d.index), d.gen.clone())));
    for (index, g) in &picked.gens {
        if !directed.iter().any(|d| d.index == *index) {
            todo.push((format!("explore_cover_{}_{index}", o.seed), g.clone()));
        }
    }
    crate::files::make_dir(&o.out)?;
    let mut session = super::unknown::Session { lab, variant, o, started, costs: Costs::default() };
    session.run_set(&todo, &mut report, progress);
    session.repeat_changes(&mut report, progress);
    session.shrink_changes(&mut report, progress);
    report.interrupted |= interrupted();
    report.decided = decided(lab, variant, &report);
    write_changes(&report, variant, o)?;
    report.markdown = markdown_unknown(&report, &picked, variant, o, started.elapsed());
    let path = o.out.join("summary.md");
    crate::cache::write_atomic(&path, report.markdown.as_bytes())?;
    Ok(report)
}

/// At most this many scenarios run first because their base path goes through a function
/// the patch changes, chosen among the first [`DIRECTED_FROM`] of the seed.
pub const DIRECTED: usize = 12;
pub const DIRECTED_FROM: u64 = 600;

/// The ported functions `variant`'s patches change, against the base (empty, said, when
/// they cannot be read).
fn changed_functions(lab: &Lab, variant: &str, progress: &mut dyn FnMut(&str)) -> Vec<String> {
    match crate::port::port_check(
        &crate::repo_root(),
        &lab.kernels,
        &lab.cache,
        &[variant.to_string()],
        crate::port::Shown::Names,
    ) {
        Ok(r) => r.variants.iter().flat_map(|(_, c)| c.differing().into_iter().map(str::to_string)).collect(),
        Err(e) => {
            progress(&format!(
                "explore: which ported functions {variant} changes is unknown ({e}); the search is not directed"
            ));
            Vec::new()
        }
    }
}

/// For each reported change: the first window where base and variant kernels part, and
/// the decisions the base model took there in the functions the patch changes (all of the
/// window's, when it took none there), in the base's lines.
fn decided(lab: &Lab, variant: &str, r: &UnknownReport) -> Vec<(String, String)> {
    let root = crate::repo_root();
    let Ok(tree) = crate::port::base_files(&crate::kernels::Builder::new(&lab.kernels, &lab.cache)) else {
        return Vec::new();
    };
    let Ok(mut placer) = crate::explain::Placer::new(&root, tree.as_ref()) else { return Vec::new() };
    let hunks = crate::port::hunks::variant_hunks(&root, &lab.kernels, &lab.cache, variant).unwrap_or_default();
    let mut out = Vec::new();
    for (_, p, _) in &r.shrunk {
        let (Some(input), Some(d)) = (&p.base_input, compare::compare(&p.base, &p.variant)) else { continue };
        let e = radiff_model::explain(input, &Policy::BASE, &radiff_model::ModelConfig::default());
        let Some(note) = e.notes.get(d.window) else { continue };
        let mut on: Vec<String> = note
            .decisions
            .iter()
            .filter(|x| r.changed_functions.iter().any(|c| c == crate::port::lines::function_of(x)))
            .cloned()
            .collect();
        on.dedup();
        let what = if on.is_empty() {
            "none of the changed functions; the window's decisions"
        } else {
            "the changed functions"
        };
        let list = if on.is_empty() { note.decisions.clone() } else { on };
        let shown = crate::explain::hunks_on_path(&hunks, &note.decisions, variant, &mut placer);
        out.push((
            p.name.clone(),
            format!(
                "window {} is where the kernels part; the base path there, in {what}:\n{}{shown}",
                d.window,
                placer.lines(&list, "    ")
            ),
        ));
    }
    out
}

/// How two runs of one kernel on one scenario differ, if they do (a race).
pub fn differs(kernel: &str, first: &Trace, second: &Trace) -> Option<String> {
    compare::compare(first, second)
        .map(|d| format!("two runs of the {kernel} kernel part at window {} ({:?})", d.window, d.part))
}

/// Writes each change of `report`, shrunk, as a scenario YAML in `o.out`.
fn write_changes(report: &UnknownReport, variant: &str, o: &Options) -> Result<()> {
    let variants = vec!["base".to_string(), variant.to_string()];
    for (i, best, tries) in &report.shrunk {
        let original = &report.ran[*i];
        let Some(h) = &best.hit else { continue };
        let origin = match report.anomalies.iter().find(|(n, _)| *n == original.name) {
            Some((_, why)) => format!("where the base model fires {}", why.split(':').next().unwrap_or_default()),
            None => format!(
                "scenario {} of the base model's branch-covering set",
                original.name.rsplit('_').next().unwrap_or_default()
            ),
        };
        let mut c = format!(
            "Found by `radiff explore --seed {} --variants base,{variant}` ({variant} has no model policy: {origin},\n{}), run on both kernels.\n",
            o.seed,
            if best.gen == original.gen { format!("not shrunk ({tries} smaller candidates tried)") } else { format!("shrunk in {tries} kernel pairs") }
        );
        let _ = writeln!(c, "variant-change: {}", h.detail);
        let _ = writeln!(c, "Kernel: base: {}; {variant}: {}", figures_line(&best.base), figures_line(&best.variant));
        let _ = writeln!(c, "Rerun once copied to scenarios/: cargo test -- scenario_{}", best.name);
        let path = o.out.join(format!("{}.yaml", best.name));
        crate::cache::write_atomic(&path, best.gen.yaml(&c, &variants).as_bytes())?;
    }
    Ok(())
}

/// At most this many base anomalies join the set, one per detector.
pub const ANOMALIES: usize = 4;

/// Where the base model itself looks bad (a detector fires: trimmed windows, order
/// collapse, fragmentation, amplification): the patterns a readahead patch most often sets
/// out to change, which branch coverage alone does not select (seed 000's trimmed windows
/// take particular values, not a particular branch). The model's search on base over the
/// same seed, with a tenth of the budget (at most 90 s), shrunk; the strongest of each
/// detector, at most [`ANOMALIES`]: (name, scenario, "detector: detail").
pub fn base_anomalies(o: &Options, progress: &mut dyn FnMut(&str)) -> Vec<(String, Gen, String)> {
    let budget = (o.budget / 10).min(Duration::from_secs(90));
    // Shrinking by model calls as the model-driven search does (o.shrink_budget counts
    // kernel pairs here); o.shrink_time, when given, replaces the time share.
    let b = Options {
        variants: vec!["base".into()],
        budget,
        confirm: Some(0),
        shrink_budget: Options::default().shrink_budget,
        ..o.clone()
    };
    let pol = vec![("base".to_string(), crate::model_check::Predictor::Port(Policy::BASE))];
    let r = super::search(&b, &pol);
    let found = super::shrink_findings(&r, &b, &pol, &mut |_| {});
    let mut seen = std::collections::BTreeSet::new();
    let picked: Vec<(String, Gen, String)> = found
        .into_iter()
        .filter(|f| seen.insert(f.hit.detector))
        .take(ANOMALIES)
        .map(|f| (f.name(), f.gen.clone(), format!("{}: {}", f.hit.detector, f.hit.detail)))
        .collect();
    progress(&format!(
        "explore: the base model's search ({} scenarios in {:.0} s) adds {} anomalies to run first: {}",
        r.scenarios,
        r.elapsed.as_secs_f64(),
        picked.len(),
        picked.iter().map(|(n, _, _)| n.as_str()).collect::<Vec<_>>().join(", ")
    ));
    picked
}

/// The Markdown report of [`explore_unknown`].
pub fn markdown_unknown(r: &UnknownReport, picked: &Picked, variant: &str, o: &Options, wall: Duration) -> String {
    let mut md = format!("## radiff explore --seed {} --variants base,{variant}\n\n", o.seed);
    let _ = writeln!(
        md,
        "{variant} has no model policy, so the base model chose the scenarios: {}\n",
        picked.summary().trim_end().replace('\n', "\n    ")
    );
    if !r.anomalies.is_empty() {
        let _ =
            writeln!(md, "Run first, where the base model fires a detector (the patterns patches set out to change):");
        for (name, why) in &r.anomalies {
            let _ = writeln!(md, "- `{name}`: {why}");
        }
        md.push('\n');
    }
    let base = Coverage::base();
    let mut reached = Coverage::default();
    for p in &r.ran {
        if let Ok(s) = scenario_of(&p.gen, &[]) {
            reached.union(&radiff_model::coverage(&synthetic_input(&s), &Policy::BASE).1);
        }
    }
    let _ = writeln!(
        md,
        "Ran {} of the {} scenarios queued (the anomalies, the directed and the set) in {:.0} s in all{}: the set {}; those run reach {} of the {} branches.",
        r.ran.len(),
        r.ran.len() + r.skipped.len(),
        wall.as_secs_f64(),
        if r.interrupted { " (stopped by Ctrl-C)" } else { "" },
        r.set_rate(),
        base.len() - base.minus(&reached).len(),
        base.len()
    );
    for (name, why) in &r.skipped {
        let _ = writeln!(md, "- not run: `{name}` ({why})");
    }
    md.push_str(&markdown_patch(r, variant));
    let bugs: Vec<&Pair> = r.ran.iter().filter(|p| p.model_bug.is_some()).collect();
    if !bugs.is_empty() {
        let _ = writeln!(md, "\n**Model bugs**: the base model parts from the base kernel on {} of them:", bugs.len());
        for p in bugs {
            let _ = writeln!(md, "\n```text\n{}\n```", p.model_bug.as_deref().unwrap_or_default().trim_end());
        }
    }
    let changed: Vec<&(usize, Pair, usize)> = r.shrunk.iter().collect();
    if changed.is_empty() {
        let _ = writeln!(md, "\n{variant} changes no device request and no folio on any scenario run.");
        return md;
    }
    let worse = changed.iter().filter(|(_, p, _)| p.hit.as_ref().is_some_and(super::is_worse)).count();
    let _ = writeln!(
        md,
        "\n{variant} changes requests or folios on {} of them; {}.\n",
        changed.len(),
        if worse == 0 {
            "none gets worse on any figure".to_string()
        } else {
            format!("{worse} get worse on some figure")
        }
    );
    let _ = writeln!(
        md,
        "| scenario (written to {}) | base (kernel) | {variant} (kernel) | change |\n|---|---|---|---|",
        o.out.display()
    );
    for (i, p, tries) in changed {
        let from = if p.gen == r.ran[*i].gen {
            String::new()
        } else {
            format!(", shrunk from `{}` in {tries} pairs", r.ran[*i].name)
        };
        let _ = writeln!(
            md,
            "| `{}.yaml`: {}{from} | {} | {} | {} |",
            p.name,
            p.gen.describe(),
            figures_line(&p.base),
            figures_line(&p.variant),
            p.hit.as_ref().map_or(String::new(), |h| h.key.replace('|', "/"))
        );
    }
    md
}

/// What the patch changes, which scenarios reached it, and the races set aside.
fn markdown_patch(r: &UnknownReport, variant: &str) -> String {
    let mut md = String::new();
    if r.changed_functions.is_empty() {
        let _ = writeln!(md, "\n{variant} changes no ported function (port-check): the search was not directed.");
    } else {
        let gens: Vec<&Gen> = r.ran.iter().map(|p| &p.gen).collect();
        let _ = writeln!(
            md,
            "\n{variant} changes {} ported functions; the scenarios run that reached each (base model's path):",
            r.changed_functions.len()
        );
        for (f, n) in super::directed::reach(&gens, &r.changed_functions) {
            let _ = writeln!(md, "- `{f}()`: {n} of {}", r.ran.len());
        }
        let _ = writeln!(
            md,
            "{} scenarios ran first because their base path goes through them: {}",
            r.directed.len(),
            r.directed.join(", ")
        );
        let _ = writeln!(md, "\nWhat each scenario run reached of them (windows of its base path through each):");
        for p in &r.ran {
            let v = super::directed::visits(&p.gen, &r.changed_functions);
            let list = if v.is_empty() {
                "none".to_string()
            } else {
                v.iter().map(|(f, n)| format!("`{f}()` {n}")).collect::<Vec<_>>().join(", ")
            };
            let _ = writeln!(md, "- `{}`: {list}", p.name);
        }
    }
    for (name, text) in &r.decided {
        let _ = writeln!(md, "\n`{name}`:\n\n```text\n{}\n```", text.trim_end());
    }
    if !r.unrepeated.is_empty() {
        let _ = writeln!(md, "\nChanged on one run, not run again within the budget (not reported; a longer --budget runs them twice): {}", r.unrepeated.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "));
    }
    if !r.races.is_empty() {
        let _ = writeln!(
            md,
            "\nRaces, not changes (each changed scenario runs twice on each kernel; these did not repeat):"
        );
        for (name, why) in &r.races {
            let _ = writeln!(md, "- `{name}`: {why}");
        }
    }
    md
}

/// `radiff explore --variants base,V` where V has no model policy: prints the progress,
/// returns the report.
pub fn explore_unknown_command(lab: &Lab, variant: &str, o: &Options) -> Result<UnknownReport> {
    explore_unknown(lab, variant, o, &mut |l| crate::progress::progress(l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::predict;

    fn c(ids: &[usize]) -> Coverage {
        let mut c = Coverage::default();
        for &i in ids {
            c.hit(i);
        }
        c
    }

    #[test]
    fn greedy_cover_takes_the_largest_first_and_skips_redundant_sets() {
        let sets = [c(&[0, 1]), c(&[0, 1, 2, 3]), c(&[4]), c(&[3, 4]), c(&[1])];
        assert_eq!(select(&sets), vec![1, 2]);
        assert_eq!(select(&[]), Vec::<usize>::new());
        assert!(radiff_model::BRANCHES.len() > 5);
    }

    #[test]
    fn the_picked_set_reaches_what_all_scenarios_reach() {
        let p = pick(1, 200);
        let mut all = Coverage::default();
        for i in 0..200 {
            if let Ok(s) = scenario_of(&generate::generate(1, i), &[]) {
                all.union(&radiff_model::coverage(&synthetic_input(&s), &radiff_model::Policy::BASE).1);
            }
        }
        assert_eq!(p.covered, all);
        assert!(p.gens.len() < 60, "{}", p.gens.len());
    }

    #[test]
    fn a_shrunk_change_must_stay_worse_when_it_was() {
        use crate::explore::detect::Figure::DeviceReads;
        let worse = crate::explore::testing::variant_hit(&[(DeviceReads, 1.0, 2.0)], true);
        assert_eq!(worse.key, "v: device reads more; worse on device reads");
        let better = crate::explore::testing::variant_hit(&[(DeviceReads, 2.0, 1.0)], true);
        assert_eq!(better.key, "v: device reads fewer");
        assert!(same_way(&worse, &Some(worse.clone())));
        assert!(!same_way(&worse, &Some(better.clone())));
        assert!(!same_way(&worse, &None));
        assert!(same_way(&better, &Some(worse)));
        assert!(same_way(&better, &Some(better.clone())));
        assert!(!same_way(&better, &None));
    }

    /// What running the set on a kernel could find, shown with a model of that kernel: on
    /// seed 1's set, seed 000's v1 policy changes the requests of some scenario, and the
    /// change is found by the same detector the kernels' runs use. (The set is chosen by
    /// the base model alone; v1's policy plays the unknown kernel.)
    #[test]
    fn the_set_holds_a_scenario_seed_000s_patch_changes() {
        let p = pick(1, 2000);
        let v1 = Policy::for_variant("async-align-v1").unwrap();
        let changed: Vec<String> = p
            .gens
            .iter()
            .filter_map(|(i, g)| {
                let input = synthetic_input(&scenario_of(g, &[]).ok()?);
                super::super::detect::variant_change(&predict(&input, &Policy::BASE), &predict(&input, &v1), "v1")
                    .map(|h| format!("{i}: {}", h.key))
            })
            .collect();
        assert!(!changed.is_empty(), "no scenario of the set tells v1 from base");
        eprintln!("{changed:#?}");
    }

    /// The base model's anomalies run first hold seed 000's class: a trimmed-window
    /// scenario that v1's policy changes (the trial checks the same on the kernels).
    /// Seed 1: with the preadv2-flags family (issue 24) seed 3's first 50 draws lost the
    /// interleaved scenario that was its first anomaly; seed 1's first still holds the class.
    #[test]
    fn the_anomalies_hold_a_trimmed_window_that_seed_000s_patch_changes() {
        let o = Options {
            seed: 1,
            max_scenarios: Some(50),
            shrink_per_detector: 2,
            shrink_time: Some(Duration::from_secs(3600)),
            budget: Duration::from_secs(900),
            ..Options::default()
        };
        let a = base_anomalies(&o, &mut |_| {});
        eprintln!("{a:#?}");
        assert!(a.len() <= ANOMALIES);
        let (_, g, why) = a.first().expect("the search on base finds anomalies");
        assert!(why.starts_with("trimmed-window"), "{why}");
        let input = synthetic_input(&scenario_of(g, &[]).unwrap());
        let v1 = Policy::for_variant("async-align-v1").unwrap();
        assert!(super::super::detect::variant_change(&predict(&input, &Policy::BASE), &predict(&input, &v1), "v1")
            .is_some());
    }
}
