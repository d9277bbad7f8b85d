//! The kernel runs of `radiff explore --variants base,V` for a variant without a model
//! policy ([`super::cover::explore_unknown`]): the set on both kernels, each change run a
//! second time, and the changes shrunk on the kernels.

use std::path::Path;
use std::time::{Duration, Instant};

use super::cover::{differs, run_pair, run_pairs, same_way, Pair, UnknownReport, SHRINK_SHARE_UNKNOWN};
use super::generate::Gen;
use super::{interrupted, Costs, Options};
use crate::run::{Lab, BATCH_POINTS};

/// What the steps of one [`explore_unknown`] share: the lab, the variant, the options,
/// when it started, and what the kernel runs have cost so far.
pub(super) struct Session<'a> {
    pub lab: &'a Lab,
    pub variant: &'a str,
    pub o: &'a Options,
    pub started: Instant,
    pub costs: Costs,
}

impl Session<'_> {
    /// Runs the scenarios of `todo` on both kernels, in order, in groups of up to
    /// [`BATCH_POINTS`] (one boot of each kernel per group, [`run_pairs`]), while the set's
    /// share of the budget and `o.confirm` allow; the others are skipped with the reason.
    /// Records the set's wall time and boots in `report`.
    pub fn run_set(&mut self, todo: &[(String, Gen)], report: &mut UnknownReport, progress: &mut dyn FnMut(&str)) {
        let (lab, variant, o, started) = (self.lab, self.variant, self.o, self.started);
        let set_budget = o.budget.mul_f64(1.0 - SHRINK_SHARE_UNKNOWN);
        let limit = o.confirm.unwrap_or(usize::MAX);
        let task = crate::progress::Task::start(format!("explore on {variant}"));
        let (t0, boots0) = (Instant::now(), lab.boots());
        let mut next = 0;
        while next < todo.len() {
            let room = set_budget.saturating_sub(started.elapsed());
            let mut group: Vec<(String, Gen)> = Vec::new();
            let mut spent = Duration::ZERO;
            while next < todo.len() && group.len() < BATCH_POINTS {
                let (name, gen) = &todo[next];
                if interrupted() {
                    report.interrupted = true;
                    report.skipped.push((name.clone(), "Ctrl-C".into()));
                } else if report.ran.len() + group.len() >= limit {
                    report.skipped.push((name.clone(), format!("--confirm {limit}")));
                } else {
                    // Until a run is measured, a group is judged by its first scenario.
                    let cost = if group.is_empty() || self.costs.measured() {
                        self.costs.estimate(2, image_ready(lab, gen, name))
                    } else {
                        Duration::ZERO
                    };
                    if spent + cost > room {
                        if !group.is_empty() {
                            break; // judged again, alone, as the next group's first
                        }
                        report.skipped.push((
                            name.clone(),
                            format!("budget: about {} s, {} s left for the set", cost.as_secs(), room.as_secs()),
                        ));
                    } else {
                        spent += cost;
                        progress(&format!(
                            "explore: scenario {} of {}: {name}: {}",
                            next + 1,
                            todo.len(),
                            gen.describe()
                        ));
                        group.push((name.clone(), gen.clone()));
                    }
                }
                next += 1;
            }
            if group.is_empty() {
                continue;
            }
            progress(&format!(
                "explore: {} scenarios on base and {variant}, one boot of each kernel (about {} s)",
                group.len(),
                spent.as_secs()
            ));
            task.count(
                format!("{} scenarios on base and {variant}", group.len()),
                next as u64,
                Some(todo.len() as u64),
            );
            for ((name, _), result) in group.iter().zip(run_pairs(lab, variant, &group, progress)) {
                match result {
                    Ok(pair) => {
                        self.costs.record(2, pair.run_time, pair.image_time);
                        progress(&format!(
                            "explore: {name}: {}{}",
                            pair.hit
                                .as_ref()
                                .map_or("same requests and folios on both kernels".to_string(), |h| h.key.clone()),
                            if pair.model_bug.is_some() {
                                "; MODEL BUG: the base model parts from the base kernel"
                            } else {
                                ""
                            }
                        ));
                        report.ran.push(pair);
                    }
                    Err(e) => {
                        progress(&format!("explore: {name}: the run failed: {e}"));
                        report.skipped.push((
                            name.clone(),
                            format!("run failed: {}", e.to_string().lines().next().unwrap_or_default()),
                        ));
                    }
                }
            }
        }
        drop(task);
        report.set_wall = t0.elapsed();
        report.set_boots = lab.boots() - boots0;
        progress(&format!("explore: {}", report.set_rate()));
    }

    /// Runs every scenario that changed, or where the base model parted from the base
    /// kernel, a second time on both kernels (one batch per kernel): when either kernel's
    /// two runs differ, it is a race, moved to `report.races`, and neither a change nor a
    /// model bug.
    pub fn repeat_changes(&mut self, report: &mut UnknownReport, progress: &mut dyn FnMut(&str)) {
        if interrupted() {
            return;
        }
        let mut again: Vec<usize> = (0..report.ran.len())
            .filter(|&i| report.ran[i].hit.is_some() || report.ran[i].model_bug.is_some())
            .collect();
        // Worse changes and model bugs first, then the stronger; as many as the budget
        // leaves room for. One seen once and not run again is not reported.
        again.sort_by(|&a, &b| {
            let key = |p: &Pair| {
                (
                    p.model_bug.is_some(),
                    p.hit.as_ref().is_some_and(super::is_worse),
                    p.hit.as_ref().map_or(0.0, |h| h.strength),
                )
            };
            let (ka, kb) = (key(&report.ran[a]), key(&report.ran[b]));
            (kb.0, kb.1).cmp(&(ka.0, ka.1)).then(kb.2.total_cmp(&ka.2))
        });
        let room = self.o.budget.saturating_sub(self.started.elapsed());
        let fits = again.iter().scan(Duration::ZERO, |spent, _| {
            *spent += self.costs.estimate(2, true);
            Some(*spent <= room)
        });
        let keep: Vec<bool> = fits.collect();
        for (&i, _) in again.iter().zip(&keep).filter(|(_, k)| !**k) {
            let p = &mut report.ran[i];
            progress(&format!("explore: {}: changed once; no budget left to run it again, so not reported", p.name));
            report.unrepeated.push(p.name.clone());
            p.hit = None;
            p.model_bug = None;
        }
        let again: Vec<usize> = again.iter().zip(&keep).filter(|(_, k)| **k).map(|(&i, _)| i).collect();
        if again.is_empty() {
            return;
        }
        let items: Vec<(String, Gen)> =
            again.iter().map(|&i| (format!("{}_again", report.ran[i].name), report.ran[i].gen.clone())).collect();
        progress(&format!(
            "explore: {} scenarios run again on both kernels before they are reported: {}",
            items.len(),
            again.iter().map(|&i| report.ran[i].name.as_str()).collect::<Vec<_>>().join(", ")
        ));
        for (&i, result) in again.iter().zip(run_pairs(self.lab, self.variant, &items, progress)) {
            let first = &report.ran[i];
            let race = match result {
                Ok(second) => {
                    self.costs.record(2, second.run_time, second.image_time);
                    pair_differs(self.variant, first, &second)
                }
                Err(e) => Some(format!("the second run failed: {}", e.to_string().lines().next().unwrap_or_default())),
            };
            if let Some(why) = race {
                progress(&format!("explore: {}: not reported, a race: {why}", first.name));
                report.races.push((first.name.clone(), why));
                report.ran[i].hit = None;
                report.ran[i].model_bug = None;
            }
        }
    }

    /// Shrinks each scenario of `report.ran` that changed, worse ones first, then the
    /// stronger, by delta debugging on both kernels while the budget lasts.
    pub fn shrink_changes(&mut self, report: &mut UnknownReport, progress: &mut dyn FnMut(&str)) {
        let (lab, variant, o, started) = (self.lab, self.variant, self.o, self.started);
        let costs = &mut self.costs;
        let left = |started: &Instant| o.budget.saturating_sub(started.elapsed());
        // Shrink the changes, worse ones first, then the stronger.
        let mut changed: Vec<usize> = (0..report.ran.len()).filter(|&i| report.ran[i].hit.is_some()).collect();
        changed.sort_by(|&a, &b| {
            let (ha, hb) = (report.ran[a].hit.as_ref().unwrap(), report.ran[b].hit.as_ref().unwrap());
            super::is_worse(hb).cmp(&super::is_worse(ha)).then(hb.strength.total_cmp(&ha.strength))
        });
        for &i in &changed {
            let original = report.ran[i].clone();
            let hit = original.hit.clone().expect("changed");
            let mut best = original.clone();
            let mut tries = 0usize;
            let (shrunk, _) = super::shrink::shrink(
                &original.gen,
                |c| {
                    if interrupted() {
                        return false;
                    }
                    let ready = image_ready(lab, c, "shrink");
                    if costs.estimate(2, ready) > left(&started) {
                        return false;
                    }
                    tries += 1;
                    let name = format!("{}_s{tries}", original.name);
                    progress(&format!("explore: shrinking {}: {name}: {}", original.name, c.describe()));
                    match run_pair(lab, variant, c, &name) {
                        Ok(p) => {
                            costs.record(2, p.run_time, p.image_time);
                            let keep = same_way(&hit, &p.hit);
                            if keep {
                                best = p;
                            }
                            keep
                        }
                        Err(e) => {
                            progress(&format!("explore: {name}: the run failed: {e}"));
                            false
                        }
                    }
                },
                o.shrink_budget,
            );
            debug_assert!(shrunk == best.gen);
            // The shrunk scenario ran once per kernel: it is reported only if both repeat it.
            if best.gen != original.gen {
                match run_pair(lab, variant, &best.gen, &format!("{}_again", best.name)) {
                    Ok(again) if pair_differs(variant, &best, &again).is_none() => {}
                    _ => {
                        progress(&format!(
                            "explore: {}: the shrunk scenario did not repeat; the original is reported",
                            original.name
                        ));
                        best = original.clone();
                    }
                }
            }
            if tries > 0 {
                progress(&format!(
                    "explore: {}: shrunk to {} in {tries} kernel pairs",
                    original.name,
                    best.gen.describe()
                ));
            }
            report.shrunk.push((i, best, tries));
        }
    }
}

/// How two runs of one pair differ on either kernel (base first), if they do (a race).
fn pair_differs(variant: &str, first: &Pair, second: &Pair) -> Option<String> {
    differs("base", &first.base, &second.base).or_else(|| differs(variant, &first.variant, &second.variant))
}

/// Whether the disk image `gen` needs is prepared.
fn image_ready(lab: &Lab, gen: &Gen, name: &str) -> bool {
    gen.scenario(Path::new("explore"), name, "", &[]).is_ok_and(|s| crate::run::image_ready(&lab.cache, &s))
}
