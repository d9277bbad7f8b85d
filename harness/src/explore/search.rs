//! The model-only search: generated scenarios predicted, judged, grouped by signature.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use radiff_model::{Input, Trace};

use super::detect::{self, Context, Hit, Thresholds};
use super::generate::{self, Gen};
use super::{interrupted, synthetic_input, Options};
use crate::error::Result;
use crate::model_check::Predictor;
use crate::scenario::Scenario;

/// The model's trace of `scenario` on each variant's predictor, in order.
pub fn predict_scenario(scenario: &Scenario, policies: &[(String, Predictor)]) -> (Input, Vec<Trace>) {
    let input = synthetic_input(scenario);
    let traces = policies.iter().map(|(_, p)| p.predict(&input)).collect();
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
        found_streams: Default::default(),
    }
}

/// Every detector that fires on predicted traces (the first policy's trace for the
/// single-trace detectors; each other policy's against the first for variant change),
/// with the variant it concerns (`None`: the first); the single-trace detectors only with
/// `single`.
pub fn detect_all(
    input: &Input,
    traces: &[Trace],
    policies: &[(String, Predictor)],
    t: &Thresholds,
    single: bool,
) -> Vec<(Hit, Option<String>)> {
    let mut hits: Vec<(Hit, Option<String>)> = match single {
        true => detect::run_all(&traces[0], &context(input), t).into_iter().map(|h| (h, None)).collect(),
        false => Vec::new(),
    };
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

/// What the search made of one generated scenario: its hits, or why it did not parse.
type Judged = std::result::Result<Vec<(Hit, Option<String>)>, String>;

/// Generates, parses, predicts and judges scenario `index` of `seed`.
/// With `variant_changes_only`, only the variants' changes are judged (the single-trace
/// detectors are not run).
fn judge(seed: u64, index: u64, policies: &[(String, Predictor)], o: &Options) -> (Gen, Judged) {
    let gen = generate::generate(seed, index);
    let judged = match scenario_of(&gen, &[]) {
        Err(e) => Err(format!("scenario {index}: {e}")),
        Ok(s) => Ok(hits_of(&s, policies, &o.thresholds, !o.variant_changes_only)),
    };
    (gen, judged)
}

/// [`detect_all`] on `scenario`'s predicted traces, which then go back to the thread
/// ([`Trace::recycle`]): the search and the shrinking judge thousands a second.
fn hits_of(
    scenario: &Scenario,
    policies: &[(String, Predictor)],
    t: &Thresholds,
    single: bool,
) -> Vec<(Hit, Option<String>)> {
    let (input, traces) = predict_scenario(scenario, policies);
    let hits = detect_all(&input, &traces, policies, t, single);
    traces.into_iter().for_each(Trace::recycle);
    hits
}

impl SearchResult {
    /// Adds scenario `index`'s outcome. Called in index order, so the strongest of a group
    /// is the first of the strongest (as one thread would find it).
    fn add(&mut self, index: u64, gen: Gen, judged: Judged) {
        self.scenarios += 1;
        let hits = match judged {
            Err(e) => return self.invalid.push(e),
            Ok(hits) => hits,
        };
        self.firing += !hits.is_empty() as u64;
        for (hit, variant) in hits {
            let sig = signature(&hit, &gen);
            match self.groups.get_mut(&sig) {
                Some(f) => {
                    f.group_size += 1;
                    if hit.strength > f.hit.strength {
                        let n = f.group_size;
                        *f = Finding { gen: gen.clone(), hit, variant, index, group_size: n };
                    }
                }
                None => {
                    self.groups.insert(sig, Finding { gen: gen.clone(), hit, variant, index, group_size: 1 });
                }
            }
        }
    }
}

/// The model-only search: scenarios `0..` of `seed` until the budget (or
/// `max_scenarios`) runs out, grouping findings by signature.
///
/// Generation, prediction and detection run on `o.threads` threads (at least one), which
/// take the next index from a shared counter as each finishes one; the results are merged
/// in index order, and every index taken is finished, so the search covers `0..n` with no
/// gap and a seed and a count name the same findings whatever the thread count.
pub fn search(o: &Options, policies: &[(String, Predictor)]) -> SearchResult {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let started = Instant::now();
    let task = crate::progress::Task::start("explore");
    let (time, _) = o.plan();
    let mut r = SearchResult::default();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let threads = o.threads.max(1);
    let (send, receive) = std::sync::mpsc::channel::<(u64, Gen, Judged)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let send = send.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) || started.elapsed() >= time || interrupted() {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                if o.max_scenarios.is_some_and(|m| index >= m) {
                    break;
                }
                let (gen, judged) = judge(o.seed, index, policies, o);
                if send.send((index, gen, judged)).is_err() {
                    break;
                }
            });
        }
        drop(send);
        // Merge in index order: outcomes that come early wait for the ones before them.
        let mut waiting: BTreeMap<u64, (Gen, Judged)> = BTreeMap::new();
        let mut last = Instant::now();
        for (index, gen, judged) in receive {
            waiting.insert(index, (gen, judged));
            while let Some((gen, judged)) = waiting.remove(&r.scenarios) {
                r.add(r.scenarios, gen, judged);
            }
            if last.elapsed() >= Duration::from_secs(2) {
                last = Instant::now();
                let secs = started.elapsed().as_secs_f64();
                let message = format!(
                    "{:.0} scenarios/s on {threads} threads, {} firing, {} signatures: {}",
                    r.scenarios as f64 / secs,
                    r.firing,
                    r.groups.len(),
                    by_detector(r.groups.values())
                );
                task.count(message, r.scenarios, o.max_scenarios);
            }
        }
        debug_assert!(waiting.is_empty(), "every index taken is finished");
    });
    r.elapsed = started.elapsed();
    r
}

/// "trimmed-window 3, amplification 12"
pub(super) fn by_detector<'a>(findings: impl Iterator<Item = &'a Finding>) -> String {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        *n.entry(f.hit.detector).or_default() += 1;
    }
    n.iter().map(|(d, c)| format!("{d} {c}")).collect::<Vec<_>>().join(", ")
}

/// Whether `gen` still fires `detector` (for `variant` when it is a variant change).
pub fn fires(
    gen: &Gen,
    detector: &str,
    variant: Option<&str>,
    policies: &[(String, Predictor)],
    t: &Thresholds,
) -> Option<Hit> {
    let s = scenario_of(gen, &[]).ok()?;
    hits_of(&s, policies, t, true)
        .into_iter()
        .find(|(h, v)| h.detector == detector && v.as_deref() == variant)
        .map(|(h, _)| h)
}
