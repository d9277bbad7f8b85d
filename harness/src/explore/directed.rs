//! Patch-directed search for a variant the model has no policy for: the kernel budget goes
//! where the patch acts.
//!
//! The ported functions the variant's patches change (`radiff kernels port-check V`) pick
//! the generated scenarios that run first: those whose base path (the base model's
//! decisions, window by window) goes through a changed function in the most windows, and
//! among equals those where a sequential stream follows another step (state a function
//! leaves behind is read by what follows: a stream whose readahead state a patched
//! function resets ramps up again). Each scenario run is then listed with the changed
//! functions it reached.

use std::collections::BTreeMap;

use radiff_model::{explain, ModelConfig, Policy};

use super::generate::{self, Gen, GenStep};
use super::{scenario_of, synthetic_input};
use crate::port::lines::function_of;

/// How many windows of `gen`'s base path went through each of `changed` (functions absent
/// are not listed); empty when the scenario does not parse.
pub fn visits(gen: &Gen, changed: &[String]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let Ok(s) = scenario_of(gen, &[]) else { return out };
    let input = synthetic_input(&s);
    // Branch coverage is cheap: explain only a scenario that reaches a changed function.
    let (_, cov) = radiff_model::coverage(&input, &Policy::BASE);
    if !cov.ids().any(|id| changed.iter().any(|c| c == function_of(id))) {
        return out;
    }
    let e = explain(&input, &Policy::BASE, &ModelConfig::default());
    for note in &e.notes {
        let mut seen: Vec<&str> = Vec::new();
        for d in &note.decisions {
            let f = function_of(d);
            if changed.iter().any(|c| c == f) && !seen.contains(&f) {
                seen.push(f);
                *out.entry(f.to_string()).or_insert(0) += 1;
            }
        }
    }
    out
}

/// Whether a sequential stream follows another step in `gen` (two parts of one stream, or
/// a stream after a step that left readahead state behind).
pub fn stream_after_a_step(gen: &Gen) -> bool {
    gen.steps.iter().skip(1).any(|s| matches!(s, GenStep::Sequential { .. }))
}

/// A scenario chosen for the patch: its index in the seed, the scenario, the windows
/// through changed functions.
#[derive(Clone, Debug)]
pub struct Directed {
    pub index: u64,
    pub gen: Gen,
    pub windows: usize,
}

/// Scenarios `0..n` of `seed` whose base path goes through one of `changed`, best first
/// (most such windows, a stream after a step before one without, then by index), at most
/// `keep`.
pub fn rank(seed: u64, n: u64, changed: &[String], keep: usize) -> Vec<Directed> {
    if changed.is_empty() {
        return Vec::new();
    }
    let mut all: Vec<(Directed, bool)> = (0..n)
        .filter_map(|index| {
            let gen = generate::generate(seed, index);
            let windows: usize = visits(&gen, changed).values().sum();
            (windows > 0).then(|| {
                let stream = stream_after_a_step(&gen);
                (Directed { index, gen, windows }, stream)
            })
        })
        .collect();
    all.sort_by(|(a, sa), (b, sb)| sb.cmp(sa).then(b.windows.cmp(&a.windows)).then(a.index.cmp(&b.index)));
    all.into_iter().take(keep).map(|(d, _)| d).collect()
}

/// Per changed function, how many of `gens` reached it (0 for one none reached).
pub fn reach(gens: &[&Gen], changed: &[String]) -> Vec<(String, usize)> {
    let mut n: BTreeMap<String, usize> = changed.iter().map(|c| (c.clone(), 0)).collect();
    for g in gens {
        for f in visits(g, changed).keys() {
            *n.get_mut(f).expect("visits lists changed functions only") += 1;
        }
    }
    changed.iter().map(|c| (c.clone(), n[c])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_through_the_changed_function_come_first_most_windows_first() {
        let changed = vec!["page_cache_async_ra".to_string()];
        let ranked = rank(0, 200, &changed, 20);
        assert!(!ranked.is_empty(), "no generated scenario of 200 reaches page_cache_async_ra");
        for d in &ranked {
            let v = visits(&d.gen, &changed);
            assert_eq!(v.get("page_cache_async_ra").copied().unwrap_or(0), d.windows);
            assert!(d.windows > 0);
        }
        // Streams after a step first, then most windows first within each part.
        let streams: Vec<bool> = ranked.iter().map(|d| stream_after_a_step(&d.gen)).collect();
        assert!(streams.windows(2).all(|w| w[0] >= w[1]), "{streams:?}");
        // A function no path takes directs nothing.
        assert!(rank(0, 50, &["no_such_function".to_string()], 20).is_empty());
        let gens: Vec<&Gen> = ranked.iter().map(|d| &d.gen).collect();
        assert_eq!(reach(&gens, &changed), vec![("page_cache_async_ra".to_string(), ranked.len())]);
    }
}
