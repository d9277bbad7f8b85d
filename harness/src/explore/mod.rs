//! `radiff explore`: the model searches for readahead anomalies and patch regressions by
//! itself, then the real kernel proves them.
//!
//! 1. [`generate`] draws scenarios from a seeded grammar over the scenario schema; each is
//!    rendered to YAML and parsed like any scenario file.
//! 2. [`predict_scenario`] predicts each with the model on every variant named, from a
//!    synthesised measurement (one contiguous extent, the queue the device kind gives).
//! 3. [`detect`] runs the detectors on the predicted traces.
//! 4. Findings are grouped by signature (detector, the pattern that fired it, the shape of
//!    the steps); the strongest of each group is [`shrink`]ed to a minimal scenario that
//!    still fires the same detector.
//! 5. [`confirm`] runs as many as the budget leaves time for on the real kernels, in
//!    groups that boot each kernel once (see [`explore`] for the order): confirmed when
//!    the kernel fires the same detector and the model equals the kernel; a difference
//!    the kernel repeats in a second run is a model bug, one it does not (two runs of one
//!    kernel differ) a kernel race.
//!
//! `--budget` bounds the whole run ([`Options::plan`]); Ctrl-C ([`catch_interrupt`]) stops
//! it at the next scenario or group of confirmations and writes what it has.

pub mod confirm;
pub mod cover;
pub mod detect;
pub mod generate;
pub mod shrink;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use radiff_model::{pattern, Extent, Input, MappingLimits, Policy, QueueLimits, Trace};

use crate::error::{Error, Result};
use crate::wire::DeviceKind;
use crate::scenario::Scenario;
use detect::{Context, Hit, Thresholds};
use generate::Gen;

/// What `radiff explore` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The variants to predict; the first is the one the single-trace detectors judge and
    /// the others are compared with (`base` by default).
    pub variants: Vec<String>,
    /// Wall time of the whole run: search, shrinking and confirmations (see
    /// [`Options::plan`]).
    pub budget: Duration,
    pub seed: u64,
    pub out: PathBuf,
    /// How many findings to confirm on the real kernels at most (`None`: as many as the
    /// budget leaves time for).
    pub confirm: Option<usize>,
    pub thresholds: Thresholds,
    /// Findings shrunk per detector at most (the strongest of each shape of steps first).
    pub shrink_per_detector: usize,
    /// Time for shrinking (default: see [`Options::plan`]).
    pub shrink_time: Option<Duration>,
    /// Model calls allowed per shrink.
    pub shrink_budget: usize,
    /// Stop the search after this many scenarios (None: only the budget stops it).
    pub max_scenarios: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            variants: vec!["base".into()],
            budget: Duration::from_secs(600),
            seed: 0,
            out: PathBuf::from("explore-findings"),
            confirm: None,
            thresholds: Thresholds::default(),
            shrink_per_detector: 200,
            shrink_time: None,
            shrink_budget: 300,
            max_scenarios: None,
        }
    }
}

/// The share of the budget the model's search gets when findings are confirmed (the
/// rest: shrinking, then confirmations, which cost 10-90 s each under TCG).
pub const SEARCH_SHARE: f64 = 0.15;
/// ... and shrinking.
pub const SHRINK_SHARE: f64 = 0.10;

impl Options {
    /// How the budget is split: (search, shrink). Confirming: [`SEARCH_SHARE`] and
    /// [`SHRINK_SHARE`] of it (90 s and 60 s of 10 min), confirmations until the budget
    /// ends; with `--confirm 0`, five sixths search and one sixth shrinking. Shrinking
    /// gets at least 5 s.
    pub fn plan(&self) -> (Duration, Duration) {
        let (search, shrink) = if self.confirm == Some(0) {
            (self.budget.mul_f64(5.0 / 6.0), self.budget / 6)
        } else {
            (self.budget.mul_f64(SEARCH_SHARE), self.budget.mul_f64(SHRINK_SHARE))
        };
        (search, self.shrink_time.unwrap_or(shrink.max(Duration::from_secs(5))))
    }
}

/// Set by SIGINT once [`catch_interrupt`] ran: the search, shrinking and the confirmations
/// stop at their next scenario or confirmation, and the run writes what it has.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

extern "C" fn on_sigint(_: nix::libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Makes the first SIGINT set [`interrupted`] instead of ending the process (a second
/// one ends it as usual: the handler resets itself). VMs run in their own process group,
/// so the running one finishes before the run stops.
pub fn catch_interrupt() -> Result<()> {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(SigHandler::Handler(on_sigint), SaFlags::SA_RESETHAND, SigSet::empty());
    // SAFETY: the handler only stores to an atomic.
    unsafe { sigaction(Signal::SIGINT, &action) }.map_err(|e| Error::Other(format!("cannot catch SIGINT: {e}")))?;
    Ok(())
}

/// "10m", "30s", "1h", "90" (seconds), "500ms".
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("`{text}` is not a duration: write 30s, 10m or 1h"))?;
    Ok(match unit.trim() {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" | "min" => Duration::from_secs(n * 60),
        "h" => Duration::from_secs(n * 3600),
        other => return Err(format!("`{text}`: unknown unit `{other}`; use ms, s, m or h")),
    })
}

impl Options {
    /// What `radiff explore ARGS` asks (clap parsed and checked each option).
    pub fn from_args(args: &crate::cli::ExploreArgs) -> Result<Options> {
        let mut o = Options {
            variants: args.variants.clone(),
            budget: args.budget,
            seed: args.seed,
            out: args.out.clone(),
            confirm: args.confirm,
            max_scenarios: args.scenarios,
            ..Options::default()
        };
        for t in &args.threshold {
            o.thresholds.set(t).map_err(Error::Other)?;
        }
        if o.variants.is_empty() {
            return Err(Error::Other("--variants names no variant".into()));
        }
        Ok(o)
    }
}

/// The kernel variant among `variants` that has no model policy (no policy of its name and
/// no `model:` in its variant.yaml, see [`crate::kernels::ModelExpectation`]), if any:
/// explored by running the base model's branch-covering set on both kernels
/// ([`cover::explore_unknown`]), which needs `--variants base,V` exactly. A name that is
/// neither a kernel variant nor a policy is an error.
pub fn without_policy(variants: &[String]) -> Result<Option<String>> {
    without_policy_in(crate::kernels::Kernels::load(&crate::repo_root()).ok().as_ref(), variants)
}

/// [`without_policy`] among `kernels`' variants (`None`: kernels/ did not load).
pub fn without_policy_in(kernels: Option<&crate::kernels::Kernels>, variants: &[String]) -> Result<Option<String>> {
    let mut unknown = Vec::new();
    for v in variants {
        if Policy::for_variant(v).is_some() {
            continue;
        }
        match kernels.map(|k| k.variant(v)) {
            Some(Ok(variant)) if variant.model.policy().is_none() => unknown.push(v.clone()),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => return Err(Error::Other(format!("the model has no policy for variant `{v}`, and kernels/kernels.yaml does not load to look for it"))),
        }
    }
    match unknown.as_slice() {
        [] => Ok(None),
        [v] if variants.len() == 2 && variants[0] == "base" => Ok(Some(v.clone())),
        _ => Err(Error::Other(format!(
            "{} {} no model policy: explore such a variant against base alone, `--variants base,{}` (the base model picks the scenarios and both kernels run them)",
            unknown.join(", "),
            if unknown.len() == 1 { "has" } else { "have" },
            unknown[0]
        ))),
    }
}

/// The policies of the variants named, in order: a policy of the variant's name, or the
/// one its variant.yaml declares (`model: POLICY`); a variant without one is an error.
pub fn policies(variants: &[String]) -> Result<Vec<(String, Policy)>> {
    policies_in(crate::kernels::Kernels::load(&crate::repo_root()).ok().as_ref(), variants)
}

/// [`policies`] with the declarations of `kernels`' variants (`None`: names alone).
pub fn policies_in(kernels: Option<&crate::kernels::Kernels>, variants: &[String]) -> Result<Vec<(String, Policy)>> {
    variants
        .iter()
        .map(|v| {
            let declared = || kernels?.variant(v).ok()?.model.policy().and_then(Policy::for_variant);
            Policy::for_variant(v).or_else(declared).map(|p| (v.clone(), p)).ok_or_else(|| {
                Error::Other(format!("the model has no policy for variant `{v}` (model/src/variant.rs); it knows {}", Policy::KNOWN.join(", ")))
            })
        })
        .collect()
}

/// The queue limits the guest would measure for `scenario`'s first point, synthesised
/// from the device kind: QEMU NVMe with the scenario's transfer limit (max_segments
/// max_hw_sectors_kb / 4 + 1, as nvme_max_drv_segments() gives), or QEMU UFS.
pub fn queue_limits(scenario: &Scenario) -> QueueLimits {
    let q = &scenario.points[0].queue;
    let ra = q.read_ahead_kb.unwrap_or(128);
    let hw = scenario.device.transfer_limit / 1024;
    let mut limits = match scenario.device.kind {
        DeviceKind::Nvme => {
            let mut l = QueueLimits::nvme_qemu(ra, q.max_sectors_kb.unwrap_or(hw.min(1280)));
            l.max_hw_sectors_kb = hw;
            l.max_segments = hw / 4 + 1;
            if let Some(lbs) = scenario.device.logical_block_size {
                l.logical_block_size = lbs;
                l.physical_block_size = lbs;
                l.minimum_io_size = lbs;
            }
            if let Some(o) = scenario.device.optimal_io_size {
                l.optimal_io_size = o;
            }
            l
        }
        DeviceKind::Ufs => {
            let mut l = QueueLimits::ufs_qemu(ra);
            l.max_sectors_kb = q.max_sectors_kb.unwrap_or(hw);
            l
        }
    };
    if let Some(r) = q.rotational {
        limits.rotational = r;
    }
    limits
}

/// Where the synthesised extent puts the file on the device (any place will do: the model
/// does not depend on it beyond sector numbers).
pub const SYNTHETIC_PHYSICAL: u64 = 64 << 20;

/// The model's input for `scenario` without a VM: each file in one contiguous extent, the
/// next file 64 MiB after the end of the one before.
pub fn model_input(scenario: &Scenario) -> Input {
    let sizes = scenario.file_sizes();
    let mut at = SYNTHETIC_PHYSICAL;
    let mut extents: Vec<Vec<Extent>> = Vec::new();
    for &size in &sizes {
        let length = size.div_ceil(4096) * 4096;
        extents.push(vec![Extent { logical: 0, physical: at, length, flags: 0 }]);
        at += length + (64 << 20);
    }
    Input {
        fs: scenario.fs,
        file_size: scenario.file_size,
        extents: extents[0].clone(),
        queue: queue_limits(scenario),
        mapping: MappingLimits::for_fs(scenario.fs),
        ops: pattern::expand_files(&scenario.steps, &sizes),
        folio_pfns: Vec::new(),
        other_files: sizes[1..].iter().zip(&extents[1..]).map(|(&file_size, e)| radiff_model::FileInput { file_size, extents: e.clone() }).collect(),
        vm: synthetic_vm(scenario),
    }
}

/// The vm settings a scenario's `vm:` gives the kernel, as it keeps them: mm/memory.c
/// fault_around_bytes_set() stores "rounddown_pow_of_two(max(val, PAGE_SIZE))"; the mappings'
/// addresses are left to the model's assumption.
fn synthetic_vm(scenario: &Scenario) -> radiff_model::VmSettings {
    let default = radiff_model::VmSettings::default();
    radiff_model::VmSettings {
        fault_around_bytes: scenario.vm.fault_around_bytes.map_or(default.fault_around_bytes, |b| {
            let b = b.max(4096);
            1 << (63 - b.leading_zeros())
        }),
        thp_enabled: scenario.vm.thp_enabled.unwrap_or(default.thp_enabled),
        mmap_addrs: Vec::new(),
    }
}

/// The model's trace of `scenario` on each policy, in order.
pub fn predict_scenario(scenario: &Scenario, policies: &[(String, Policy)]) -> (Input, Vec<Trace>) {
    let input = model_input(scenario);
    let traces = policies.iter().map(|(_, p)| radiff_model::predict(&input, p)).collect();
    (input, traces)
}

/// The detectors' context for a trace of `input`.
pub fn context(input: &Input) -> Context<'_> {
    Context {
        ops: &input.ops,
        file_size: input.file_size,
        ra_pages: input.queue.read_ahead_kb / 4,
        max_sectors_kb: input.queue.max_sectors_kb,
        max_order: if input.mapping.large_folios { input.mapping.max_order } else { 0 },
    }
}

/// Every detector that fires on predicted traces (the first policy's trace for the
/// single-trace detectors; each other policy's against the first for variant change),
/// with the variant it concerns (`None`: the first).
pub fn detect_all(input: &Input, traces: &[Trace], policies: &[(String, Policy)], t: &Thresholds) -> Vec<(Hit, Option<String>)> {
    let mut hits: Vec<(Hit, Option<String>)> = detect::run_all(&traces[0], &context(input), t).into_iter().map(|h| (h, None)).collect();
    for (i, (name, _)) in policies.iter().enumerate().skip(1) {
        if let Some(h) = detect::variant_change(&traces[0], &traces[i], name) {
            hits.push((h, Some(name.clone())));
        }
    }
    hits
}

/// A scenario the model flagged.
#[derive(Clone, Debug)]
pub struct Finding {
    pub gen: Gen,
    pub hit: Hit,
    /// The variant compared with the first (variant change only).
    pub variant: Option<String>,
    /// Which generated scenario it came from (`generate(seed, index)`), before shrinking.
    pub index: u64,
    /// How many scenarios in its group fired.
    pub group_size: u64,
}

impl Finding {
    /// Detector, the pattern that fired it and the shape of the steps.
    pub fn signature(&self) -> String {
        signature(&self.hit, &self.gen)
    }

    /// The class a shrunk finding is listed under: detector and the shape of its steps
    /// (for a variant change also its key: which figures moved which way).
    pub fn class(&self) -> String {
        match &self.variant {
            Some(_) => self.signature(),
            None => format!("{} {}", self.hit.detector, self.gen.shape()),
        }
    }

    /// A scenario name (file stem): `explore_trimmed_window_<hash>`.
    pub fn name(&self) -> String {
        let body = self.gen.yaml("", &[]);
        let mut h: u64 = 0xcbf29ce484222325;
        for b in body.bytes().chain(self.hit.detector.bytes()).chain(self.variant.as_deref().unwrap_or("").bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        format!("explore_{}_{:08x}", self.hit.detector.replace('-', "_"), h as u32)
    }

    /// The variants its scenario runs on: the first, and the compared one.
    pub fn variants(&self, first: &str) -> Vec<String> {
        let mut v = vec![first.to_string()];
        v.extend(self.variant.clone());
        v
    }
}

pub fn signature(hit: &Hit, gen: &Gen) -> String {
    format!("{} [{}] {}", hit.detector, hit.key, gen.shape())
}

/// What the model-only search found.
#[derive(Debug, Default)]
pub struct SearchResult {
    pub scenarios: u64,
    /// Scenarios that fired at least one detector.
    pub firing: u64,
    pub elapsed: Duration,
    /// Signature → the strongest finding of its group.
    pub groups: BTreeMap<String, Finding>,
    /// Generated scenarios that did not parse (a generator bug; should be 0).
    pub invalid: Vec<String>,
}

impl SearchResult {
    pub fn rate(&self) -> f64 {
        self.scenarios as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Parses a generated scenario the way a trial would (the YAML round trip).
pub fn scenario_of(gen: &Gen, variants: &[String]) -> Result<Scenario> {
    gen.scenario(Path::new("explore"), "explore_candidate", "", variants)
}

/// The model-only search: scenarios `0..` of `seed` until the budget (or
/// `max_scenarios`) runs out, grouping findings by signature.
pub fn search(o: &Options, policies: &[(String, Policy)]) -> SearchResult {
    let started = Instant::now();
    let task = crate::progress::Task::start("explore");
    let (time, _) = o.plan();
    let mut r = SearchResult::default();
    let mut last = Instant::now();
    let mut index = 0u64;
    loop {
        if started.elapsed() >= time || o.max_scenarios.is_some_and(|m| index >= m) || interrupted() {
            break;
        }
        let gen = generate::generate(o.seed, index);
        match scenario_of(&gen, &[]) {
            Err(e) => r.invalid.push(format!("scenario {index}: {e}")),
            Ok(s) => {
                let (input, traces) = predict_scenario(&s, policies);
                let hits = detect_all(&input, &traces, policies, &o.thresholds);
                r.firing += !hits.is_empty() as u64;
                for (hit, variant) in hits {
                    let sig = signature(&hit, &gen);
                    match r.groups.get_mut(&sig) {
                        Some(f) => {
                            f.group_size += 1;
                            if hit.strength > f.hit.strength {
                                let n = f.group_size;
                                *f = Finding { gen: gen.clone(), hit, variant, index, group_size: n };
                            }
                        }
                        None => {
                            r.groups.insert(sig, Finding { gen: gen.clone(), hit, variant, index, group_size: 1 });
                        }
                    }
                }
            }
        }
        r.scenarios += 1;
        index += 1;
        if last.elapsed() >= Duration::from_secs(2) {
            last = Instant::now();
            let secs = started.elapsed().as_secs_f64();
            let message = format!("{:.0} scenarios/s, {} firing, {} signatures: {}", r.scenarios as f64 / secs, r.firing, r.groups.len(), by_detector(r.groups.values()));
            task.count(message, r.scenarios, o.max_scenarios);
        }
    }
    r.elapsed = started.elapsed();
    r
}

/// "trimmed-window 3, amplification 12"
fn by_detector<'a>(findings: impl Iterator<Item = &'a Finding>) -> String {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        *n.entry(f.hit.detector).or_default() += 1;
    }
    n.iter().map(|(d, c)| format!("{d} {c}")).collect::<Vec<_>>().join(", ")
}

/// The order detectors are listed and confirmed in.
pub const DETECTOR_ORDER: [&str; 5] = ["variant-change", "trimmed-window", "order-collapse", "fragmentation", "amplification"];

fn detector_rank(d: &str) -> usize {
    DETECTOR_ORDER.iter().position(|x| *x == d).unwrap_or(DETECTOR_ORDER.len())
}

/// Whether `gen` still fires `detector` (for `variant` when it is a variant change).
pub fn fires(gen: &Gen, detector: &str, variant: Option<&str>, policies: &[(String, Policy)], t: &Thresholds) -> Option<Hit> {
    let s = scenario_of(gen, &[]).ok()?;
    let (input, traces) = predict_scenario(&s, policies);
    detect_all(&input, &traces, policies, t).into_iter().find(|(h, v)| h.detector == detector && v.as_deref() == variant).map(|(h, _)| h)
}

/// The strongest groups of each detector, shrunk, then grouped again by their class
/// ([`Finding::class`], keeping the strongest); ordered for confirmation: round robin over
/// the detectors in [`DETECTOR_ORDER`], fewest steps then strongest first within each.
pub fn shrink_findings(r: &SearchResult, o: &Options, policies: &[(String, Policy)], progress: &mut dyn FnMut(&str)) -> Vec<Finding> {
    let mut per: BTreeMap<usize, Vec<&Finding>> = BTreeMap::new();
    for f in r.groups.values() {
        per.entry(detector_rank(f.hit.detector)).or_default().push(f);
    }
    let mut shrunk: BTreeMap<String, Finding> = BTreeMap::new();
    let started = Instant::now();
    let (_, deadline) = o.plan();
    let mut calls_total = 0;
    let mut done = 0;
    // Per detector: the strongest of each shape of steps first (fewest steps first), then
    // the rest by strength.
    let mut queues: Vec<std::collections::VecDeque<&Finding>> = Vec::new();
    for list in per.values_mut() {
        list.sort_by(|a, b| b.hit.strength.total_cmp(&a.hit.strength).then(a.index.cmp(&b.index)));
        let mut seen = std::collections::BTreeSet::new();
        let (mut firsts, rest): (Vec<&Finding>, Vec<&Finding>) = list.iter().partition(|f| seen.insert(f.gen.shape()));
        firsts.sort_by_key(|f| f.gen.steps.len());
        firsts.extend(rest);
        firsts.truncate(o.shrink_per_detector);
        queues.push(firsts.into());
    }
    // Round robin over the detectors until every queue is empty or the time is up.
    'outer: loop {
        let mut any = false;
        for q in queues.iter_mut() {
            if started.elapsed() >= deadline || interrupted() {
                break 'outer;
            }
            let Some(f) = q.pop_front() else { continue };
            any = true;
            done += 1;
            // A variant change shrinks to one that changes the same figures the same way
            // (a regression must stay one); the other detectors only need to fire.
            let same = |h: &Hit| f.variant.is_none() || h.key == f.hit.key;
            let (gen, calls) = shrink::shrink(&f.gen, |g| fires(g, f.hit.detector, f.variant.as_deref(), policies, &o.thresholds).is_some_and(|h| same(&h)), o.shrink_budget);
            calls_total += calls;
            let hit = fires(&gen, f.hit.detector, f.variant.as_deref(), policies, &o.thresholds).unwrap_or_else(|| f.hit.clone());
            let g = Finding { gen, hit, variant: f.variant.clone(), index: f.index, group_size: f.group_size };
            let sig = g.class();
            match shrunk.get_mut(&sig) {
                Some(old) => {
                    let n = old.group_size + g.group_size;
                    if g.hit.strength > old.hit.strength {
                        *old = g;
                    }
                    old.group_size = n;
                }
                None => {
                    shrunk.insert(sig, g);
                }
            }
        }
        if !any {
            break;
        }
    }
    progress(&format!("explore: shrank {done} findings to {} in {:.1} s ({calls_total} predictions)", shrunk.len(), started.elapsed().as_secs_f64()));
    let mut lists: Vec<Vec<Finding>> = Vec::new();
    let mut by: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    for f in shrunk.into_values() {
        by.entry(detector_rank(f.hit.detector)).or_default().push(f);
    }
    for mut l in by.into_values() {
        // Fewest steps first, then the strongest.
        l.sort_by(|a, b| a.gen.steps.len().cmp(&b.gen.steps.len()).then(b.hit.strength.total_cmp(&a.hit.strength)).then(a.index.cmp(&b.index)));
        l.reverse();
        lists.push(l);
    }
    let mut out = Vec::new();
    loop {
        let mut any = false;
        for l in lists.iter_mut() {
            if let Some(f) = l.pop() {
                out.push(f);
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    // With several variants the variant changes are what was asked: they come first, those
    // where the variant is worse on some figure first of all, then those that change the
    // device's requests (the sort is stable: the order above stays within each).
    out.sort_by_key(|f| (f.variant.is_none(), !is_worse(&f.hit), !changes_requests(&f.hit)));
    out
}

/// Whether a variant change is worse on some figure.
pub fn is_worse(hit: &Hit) -> bool {
    hit.detector == "variant-change" && hit.key.contains("; worse on ")
}

/// Whether a variant change changes the device's requests (not only the folios).
pub fn changes_requests(hit: &Hit) -> bool {
    hit.detector == "variant-change" && (hit.key.contains("device reads") || hit.key.contains("bytes read") || hit.key.contains("other requests"))
}

/// "3329 reads, 524288 KiB, 9721 folios (516 o0, ...)"
pub fn figures_line(t: &Trace) -> String {
    let f = crate::summary::Figures::of(t);
    format!("{} reads, {}, {} folios ({})", f.data_reads, crate::summary::kib(f.bytes_read), f.folios, f.orders_line())
}

/// The leading comment of a finding's YAML.
pub fn comment(f: &Finding, o: &Options, model: &str, kernel: Option<&str>) -> String {
    let mut s = String::new();
    // Scenario files in scenarios/ start with "# Seed " (the mail they reproduce) or
    // "# Found by `radiff explore" (the search that made them).
    let _ = writeln!(
        s,
        "Found by `radiff explore --seed {} --variants {}` (its scenario {}, shrunk), {}.",
        o.seed,
        o.variants.join(","),
        f.index,
        if kernel.is_some() { "then run on the kernel" } else { "the model alone: not run on a kernel" }
    );
    let _ = writeln!(s, "{}: {}", f.hit.detector, f.hit.detail);
    let _ = writeln!(s, "Model: {model}");
    if let Some(k) = kernel {
        let _ = writeln!(s, "Kernel: {k}");
    }
    let _ = writeln!(s, "Rerun once copied to scenarios/: cargo test -- scenario_{}", f.name());
    s
}

/// The model's figures of a finding, per variant it runs on: "base: ...; V: ...".
pub fn model_figures(f: &Finding, o: &Options) -> Result<String> {
    let variants = f.variants(&o.variants[0]);
    let pol = policies(&variants)?;
    let s = scenario_of(&f.gen, &[])?;
    let (_, traces) = predict_scenario(&s, &pol);
    Ok(variants.iter().zip(&traces).map(|(v, t)| format!("{v}: {}", figures_line(t))).collect::<Vec<_>>().join("; "))
}

/// `radiff explore`.
pub fn main(args: &crate::cli::ExploreArgs) -> Result<ExitCode> {
    let o = Options::from_args(args)?;
    catch_interrupt()?;
    if let Some(v) = without_policy(&o.variants)? {
        let lab = crate::run::Lab::open()?;
        let report = cover::main_for_unknown(&lab, &v, &o)?;
        crate::progress::output(&report.markdown);
        let bugs = report.ran.iter().any(|p| p.model_bug.is_some());
        return Ok(if report.interrupted {
            ExitCode::from(130)
        } else if bugs {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    let report = explore(&o, None, &mut |line| crate::progress::progress(line))?;
    crate::progress::output(&report.markdown);
    Ok(if report.interrupted {
        ExitCode::from(130)
    } else if report.model_bugs > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What an explore run produced.
#[derive(Debug, Default)]
pub struct Report {
    pub search: SearchResult,
    /// Wall time of shrinking.
    pub shrink_time: Duration,
    pub findings: Vec<Finding>,
    /// In the order they ran.
    pub confirmations: Vec<confirm::Confirmation>,
    /// Wall time of the confirmations.
    pub confirm_time: Duration,
    pub model_bugs: usize,
    /// Whether Ctrl-C stopped the run.
    pub interrupted: bool,
    pub markdown: String,
}

/// Until a VM run has been timed: what one run of a finding's scenario is guessed to
/// cost under TCG, and the preparation of a disk image.
pub const GUESS_RUN: Duration = Duration::from_secs(45);
pub const GUESS_IMAGE: Duration = Duration::from_secs(90);

/// What the VM work of an explore run has cost so far, to estimate the next piece: the mean
/// run and image preparation measured, [`GUESS_RUN`] and [`GUESS_IMAGE`] until measured.
#[derive(Debug, Default)]
pub struct Costs {
    runs: u32,
    run_time: Duration,
    images: u32,
    image_time: Duration,
}

impl Costs {
    pub fn per_run(&self) -> Duration {
        if self.runs == 0 { GUESS_RUN } else { self.run_time / self.runs }
    }

    /// `runs` VM runs, and the disk image's preparation unless it is `ready`.
    pub fn estimate(&self, runs: u32, ready: bool) -> Duration {
        let per_image = if self.images == 0 { GUESS_IMAGE } else { self.image_time / self.images };
        self.per_run() * runs + if ready { Duration::ZERO } else { per_image }
    }

    /// Adds `runs` runs that took `run_time` in all, and an image preparation when one was made.
    pub fn record(&mut self, runs: u32, run_time: Duration, image: Option<Duration>) {
        self.runs += runs;
        self.run_time += run_time;
        if let Some(t) = image {
            self.images += 1;
            self.image_time += t;
        }
    }
}

/// A finding waiting for confirmation, as [`pick_group`] weighs it.
#[derive(Clone, Debug)]
pub struct Queued {
    /// Whether its disk image is prepared.
    pub ready: bool,
    /// Its runs and (unless ready) its image's preparation ([`Costs::estimate`]).
    pub estimate: Duration,
    /// Its name (its scenario's, and so its run folders').
    pub name: String,
}

/// The next findings to confirm together (indices into `queue`, in the order they are
/// confirmed), at most `max`: those whose disk image is ready first, then the others,
/// each in the queue's order, each taken if its estimate fits in what `left` leaves
/// after the ones taken before it. A finding named as one already taken waits for the
/// next group (the two would share run folders). Empty when none fits.
pub fn pick_group(queue: &[Queued], left: Duration, max: usize) -> Vec<usize> {
    let mut picked: Vec<usize> = Vec::new();
    let mut spent = Duration::ZERO;
    for ready in [true, false] {
        for (i, q) in queue.iter().enumerate().filter(|(_, q)| q.ready == ready) {
            if picked.len() >= max {
                return picked;
            }
            if spent + q.estimate <= left && !picked.iter().any(|&p| queue[p].name == q.name) {
                spent += q.estimate;
                picked.push(i);
            }
        }
    }
    picked
}

/// The whole explore: search, shrink, write candidates, then confirm on the kernels (with
/// `lab`, or `crate::run::Lab::open()` when needed and not given) as many findings as the
/// budget leaves time for (at most `o.confirm`), and write and summarise.
///
/// Confirmations go in groups of up to [`crate::run::BATCH_POINTS`] findings
/// ([`pick_group`]): each kernel boots once for a group's runs, then once more for the
/// second runs that tell a model bug from a kernel race ([`confirm::confirm_group`]).
/// They go in the findings' order, except that a finding whose disk image is already
/// prepared goes before one whose image would have to be made, and that a finding whose
/// estimated cost (its runs at the mean run time so far, and the image's preparation)
/// does not fit in what is left of the budget is left for the next run. Each
/// confirmation is written, and summary.md rewritten, after each group; Ctrl-C stops the
/// confirmations between groups.
pub fn explore(o: &Options, lab: Option<&crate::run::Lab>, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    let started = Instant::now();
    let pol = policies(&o.variants)?;
    let mut report = Report { search: search(o, &pol), ..Default::default() };
    let r = &report.search;
    progress(&format!(
        "explore: seed {}: {} scenarios in {:.1} s ({:.0}/s), {} firing, {} signatures ({}){}",
        o.seed,
        r.scenarios,
        r.elapsed.as_secs_f64(),
        r.rate(),
        r.firing,
        r.groups.len(),
        by_detector(r.groups.values()),
        if r.invalid.is_empty() { String::new() } else { format!(", {} generated scenarios invalid: {}", r.invalid.len(), r.invalid[0]) }
    ));
    let shrinking = Instant::now();
    report.findings = shrink_findings(&report.search, o, &pol, progress);
    report.shrink_time = shrinking.elapsed();
    let candidates = o.out.join("candidates");
    std::fs::create_dir_all(&candidates).map_err(|e| Error::io(&candidates, e))?;
    for f in &report.findings {
        let text = f.gen.yaml(&comment(f, o, &model_figures(f, o)?, None), &f.variants(&o.variants[0]));
        let path = candidates.join(format!("{}.yaml", f.name()));
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    }
    let want = o.confirm.unwrap_or(usize::MAX);
    if want > 0 && !report.findings.is_empty() && !interrupted() {
        let owned;
        let lab = match lab {
            Some(l) => l,
            None => {
                owned = crate::run::Lab::open()?;
                &owned
            }
        };
        let confirming = Instant::now();
        let mut queue: Vec<&Finding> = report.findings.iter().collect();
        let mut costs = Costs::default();
        let task = crate::progress::Task::start("explore: confirmations");
        while report.confirmations.len() < want && !queue.is_empty() && !interrupted() {
            let left = o.budget.saturating_sub(started.elapsed());
            let queued: Vec<Queued> = queue
                .iter()
                .map(|f| {
                    let ready = confirm::image_ready(lab, f, o);
                    Queued { ready, estimate: costs.estimate(f.variants(&o.variants[0]).len() as u32, ready), name: f.name() }
                })
                .collect();
            let max = (want - report.confirmations.len()).min(crate::run::BATCH_POINTS);
            let picked = pick_group(&queued, left, max);
            if picked.is_empty() {
                progress(&format!("explore: {} s left, too little for another confirmation (a run takes about {} s)", left.as_secs(), costs.per_run().as_secs()));
                break;
            }
            let mut ahead = Duration::ZERO;
            for (n, &i) in picked.iter().enumerate() {
                let (f, q) = (queue[i], &queued[i]);
                progress(&format!(
                    "explore: confirmation {}: {} ({}) on the kernel, about {} s of {} s left{}",
                    report.confirmations.len() + n + 1,
                    q.name,
                    f.signature(),
                    q.estimate.as_secs(),
                    left.saturating_sub(ahead).as_secs(),
                    if q.ready { "" } else { " (its disk image is prepared first)" }
                ));
                ahead += q.estimate;
            }
            let group: Vec<&Finding> = picked.iter().map(|&i| queue[i]).collect();
            let mut taken = picked.clone();
            taken.sort_unstable();
            for i in taken.into_iter().rev() {
                queue.remove(i);
            }
            if group.len() > 1 {
                progress(&format!("explore: {} findings in one boot per kernel, about {} s", group.len(), ahead.as_secs()));
            }
            let names: Vec<String> = group.iter().map(|f| f.name()).collect();
            task.count(format!("on the kernels: {}", names.join(", ")), report.confirmations.len() as u64, Some(want.min(report.findings.len()) as u64));
            for c in confirm::confirm_group(lab, &group, o, progress) {
                costs.record(c.run_times.len() as u32, c.run_times.iter().sum(), c.image_time);
                progress(&format!("explore: {}: {} ({:.0} s)", c.finding.name(), c.status.text(), c.wall.as_secs_f64()));
                if c.status.is_model_bug() {
                    report.model_bugs += 1;
                }
                c.write(&o.out, o)?;
                report.confirmations.push(c);
                task.count(format!("{} confirmed or refuted", report.confirmations.len()), report.confirmations.len() as u64, Some(want.min(report.findings.len()) as u64));
            }
            report.confirm_time = confirming.elapsed();
            report.interrupted = interrupted();
            report.markdown = markdown(&report, o);
            let path = o.out.join("summary.md");
            std::fs::write(&path, &report.markdown).map_err(|e| Error::io(&path, e))?;
        }
        report.confirm_time = confirming.elapsed();
    }
    report.interrupted = interrupted();
    if report.interrupted {
        progress("explore: interrupted (Ctrl-C): writing what was confirmed so far");
    }
    report.markdown = markdown(&report, o);
    let path = o.out.join("summary.md");
    std::fs::write(&path, &report.markdown).map_err(|e| Error::io(&path, e))?;
    Ok(report)
}

/// The Markdown summary: model bugs first, then confirmed findings, then what was not
/// confirmed, then the candidates the model alone found.
pub fn markdown(report: &Report, o: &Options) -> String {
    let r = &report.search;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## radiff explore --seed {} --variants {} --budget {} s\n\n{} scenarios in {:.1} s ({:.0}/s), {} firing a detector, {} signatures; {} findings after shrinking ({:.0} s); {} run on the kernels in {:.0} s: {} confirmed, {} model bugs, {} kernel races (two runs of one kernel differ){}.\n",
        o.seed,
        o.variants.join(","),
        o.budget.as_secs(),
        r.scenarios,
        r.elapsed.as_secs_f64(),
        r.rate(),
        r.firing,
        r.groups.len(),
        report.findings.len(),
        report.shrink_time.as_secs_f64(),
        report.confirmations.len(),
        report.confirm_time.as_secs_f64(),
        report.confirmations.iter().filter(|c| c.status.is_confirmed()).count(),
        report.model_bugs,
        report.confirmations.iter().filter(|c| matches!(c.status, confirm::Status::KernelRace { .. })).count(),
        if report.interrupted { "; interrupted by Ctrl-C" } else { "" }
    );
    if !report.confirmations.is_empty() {
        let _ = writeln!(s, "| status | finding | scenario | model | kernel | VM s | rerun |\n|---|---|---|---|---|---|---|");
        let mut rows: Vec<&confirm::Confirmation> = report.confirmations.iter().collect();
        rows.sort_by_key(|c| !c.status.is_model_bug());
        for c in rows {
            let _ = writeln!(
                s,
                "| {} | {} [{}] | `{}.yaml`: {} | {} | {} | {:.0} | `cargo test -- scenario_{}` |",
                c.status.short(),
                c.finding.hit.detector,
                c.finding.hit.key.replace('|', "/"),
                c.finding.name(),
                c.finding.gen.describe(),
                c.model_figures,
                c.kernel_figures,
                c.wall.as_secs_f64(),
                c.finding.name()
            );
        }
        let _ = writeln!(s);
    }
    let run: std::collections::BTreeSet<String> = report.confirmations.iter().map(|c| c.finding.name()).collect();
    let rest: Vec<&Finding> = report.findings.iter().filter(|f| !run.contains(&f.name())).collect();
    if !rest.is_empty() {
        let _ = writeln!(s, "Not confirmed (model only; YAML in `{}`):\n\n| finding | scenario | model | group |\n|---|---|---|---|", o.out.join("candidates").display());
        for f in rest {
            let _ = writeln!(
                s,
                "| {} [{}] | `{}.yaml`: {} | {} | {} scenarios |",
                f.hit.detector,
                f.hit.key.replace('|', "/"),
                f.name(),
                f.gen.describe(),
                model_figures(f, o).unwrap_or_else(|e| e.to_string()),
                f.group_size
            );
        }
    }
    s
}

/// The model's throughput on the search's own mix: scenarios per second over the first
/// `scenarios` of `seed`, generated, parsed, predicted on `variants` and judged (for
/// `radiff bench`).
pub fn model_throughput(variants: &[String], seed: u64, scenarios: u64) -> Result<f64> {
    let pol = policies(variants)?;
    let o = Options { variants: variants.to_vec(), max_scenarios: Some(scenarios), budget: Duration::from_secs(3600), seed, ..Options::default() };
    Ok(search(&o, &pol).rate())
}

/// An end-to-end explore on `base`: the model's search over seed 1's first 400 scenarios,
/// then one confirmation on the kernel of the finding of seed 000's class the search found
/// by itself (trimmed windows after a read smaller than the sequential reads that follow;
/// any first finding if there were none, which fails). Fails unless the kernel confirmed
/// it; a model bug fails it with its diff.
pub fn trial(lab: &crate::run::Lab) -> std::result::Result<(), String> {
    let out = lab.cache.dir("explore-trial").map_err(|e| e.to_string())?;
    // A fixed number of scenarios (not a time budget), so that the trial finds and
    // confirms the same thing on every machine.
    let o = Options { budget: Duration::from_secs(600), max_scenarios: Some(400), seed: 1, out, confirm: Some(0), ..Options::default() };
    let mut log = |line: &str| (lab.progress)(line);
    let report = explore(&o, Some(lab), &mut log).map_err(|e| e.to_string())?;
    let seed_000 = report.findings.iter().find(|f| {
        f.hit.detector == "trimmed-window"
            && matches!(f.gen.steps.as_slice(), [generate::GenStep::Read { size: a, .. }, generate::GenStep::Sequential { size: b, .. }] if a < b)
    });
    let Some(f) = seed_000.or(report.findings.first()) else {
        return Err(format!("explore found nothing in {} scenarios", report.search.scenarios));
    };
    log(&format!("explore: confirming {} ({}) on the kernel", f.name(), f.signature()));
    let c = confirm::confirm(lab, f, &o).map_err(|e| e.to_string())?;
    c.write(&o.out, &o).map_err(|e| e.to_string())?;
    if seed_000.is_none() {
        return Err(format!("the search did not find seed 000's class (trimmed windows after a small first read); it found:\n{}", report.markdown));
    }
    if c.status.is_confirmed() {
        log(&format!("explore: {}: {}", f.name(), c.status.text()));
        Ok(())
    } else {
        Err(format!("{}: {}", f.name(), c.status.text()))
    }
}
