//! Triage: the strongest findings of each detector shrunk, regrouped, ordered for confirmation.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::model_check::Predictor;

use super::detect::Hit;
use super::search::{fires, Finding, SearchResult};
use super::{interrupted, shrink, Options};

/// The order detectors are listed and confirmed in: [`super::detect::rank`].
fn detector_rank(d: &str) -> usize {
    super::detect::rank(d)
}

/// The strongest groups of each detector, shrunk, then grouped again by their class
/// ([`Finding::class`], keeping the strongest); ordered for confirmation: round robin over
/// the detectors in [`super::detect::rank`]'s order, fewest steps then strongest first within each.
pub fn shrink_findings(
    r: &SearchResult,
    o: &Options,
    policies: &[(String, Predictor)],
    progress: &mut dyn FnMut(&str),
) -> Vec<Finding> {
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
            let same = |h: &Hit| match (&h.change, &f.hit.change) {
                (Some(a), Some(b)) => a.same_pattern(b),
                _ => f.variant.is_none(),
            };
            let (gen, calls) = shrink::shrink(
                &f.gen,
                |g| fires(g, f.hit.detector, f.variant.as_deref(), policies, &o.thresholds).is_some_and(|h| same(&h)),
                o.shrink_budget,
            );
            calls_total += calls;
            let hit = fires(&gen, f.hit.detector, f.variant.as_deref(), policies, &o.thresholds)
                .unwrap_or_else(|| f.hit.clone());
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
    progress(&format!(
        "explore: shrank {done} findings to {} in {:.1} s ({calls_total} predictions)",
        shrunk.len(),
        started.elapsed().as_secs_f64()
    ));
    let mut lists: Vec<Vec<Finding>> = Vec::new();
    let mut by: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    for f in shrunk.into_values() {
        by.entry(detector_rank(f.hit.detector)).or_default().push(f);
    }
    for mut l in by.into_values() {
        // Fewest steps first, then the strongest.
        l.sort_by(|a, b| {
            a.gen
                .steps
                .len()
                .cmp(&b.gen.steps.len())
                .then(b.hit.strength.total_cmp(&a.hit.strength))
                .then(a.index.cmp(&b.index))
        });
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
    hit.change.as_ref().is_some_and(|c| c.is_worse())
}

/// Whether a variant change changes the device's requests (not only the folios).
pub fn changes_requests(hit: &Hit) -> bool {
    hit.change.as_ref().is_some_and(|c| c.changes_requests())
}
