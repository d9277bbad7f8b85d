//! `radiff explore --variants base,V` for a variant the model has no policy for: the
//! model on base picks a small set of generated scenarios that together reach every
//! branch of the ported kernel functions the generator can reach (greedy set cover over
//! [`radiff_model::coverage`]), the set runs on both kernels, and every scenario where
//! V's device requests or folios differ from base's is written as scenario YAML with the
//! figures of both kernels. Not shrunk: shrinking needs a model of V.

use std::fmt::Write;

use radiff_model::Coverage;

use super::generate::{self, Gen};
use super::{figures_line, model_input, scenario_of, Options};
use crate::compare::normalise;
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
        let (i, gain) = sets.iter().enumerate().map(|(i, s)| (i, s.minus(&covered).len())).fold((0, 0), |b, x| if x.1 > b.1 { x } else { b });
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
        let (_, cov) = radiff_model::coverage(&model_input(&s), &radiff_model::Policy::BASE);
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

/// Runs the picked set on base and `variant`'s kernel; writes each scenario whose device
/// requests or folios differ to `o.out` as YAML (unshrunk) and returns the Markdown report.
pub fn unknown_variant(lab: &Lab, variant: &str, o: &Options, picked: &Picked, progress: &mut dyn FnMut(&str)) -> Result<String> {
    let mut md = format!("## radiff explore --variants base,{variant} (no model policy: branch-covering set, unshrunk)\n\n{}\n", picked.summary());
    let _ = writeln!(md, "| scenario | base (kernel) | {variant} (kernel) | change |\n|---|---|---|---|");
    std::fs::create_dir_all(&o.out).map_err(|e| Error::io(&o.out, e))?;
    let dir = lab.cache.dir("explore")?;
    let variants = vec!["base".to_string(), variant.to_string()];
    for (index, gen) in &picked.gens {
        let name = format!("explore_cover_{}_{index}", o.seed);
        let scenario = gen.scenario(&dir, &name, "", &variants)?;
        let point = &scenario.points[0];
        let mut traces = Vec::new();
        for v in &variants {
            let out = lab.run(&scenario, point, v, &format!("explore {name} on {v}"))?;
            traces.push(normalise(&out.capture.trace, &out.env.extents).0);
        }
        let hit = super::detect::variant_change(&traces[0], &traces[1], variant);
        progress(&format!("explore: {name}: {}", hit.as_ref().map_or("same requests and folios".to_string(), |h| h.key.clone())));
        if let Some(h) = hit {
            let (a, b) = (figures_line(&traces[0]), figures_line(&traces[1]));
            let comment = format!("Seed {} of `radiff explore` (scenario {index}, not shrunk: {variant} has no model policy).\nvariant-change: {}\nKernel: base: {a}; {variant}: {b}\n", o.seed, h.detail);
            let path = o.out.join(format!("{name}.yaml"));
            std::fs::write(&path, gen.yaml(&comment, &variants)).map_err(|e| Error::io(&path, e))?;
            let _ = writeln!(md, "| `{name}.yaml`: {} | {a} | {b} | {} |", gen.describe(), h.key.replace('|', "/"));
        }
    }
    Ok(md)
}

/// `radiff explore --variants base,V` where V has no model policy: picks the set from
/// `o.max_scenarios` (default 2000) scenarios of `o.seed`, runs it, prints the report.
pub fn main_for_unknown(lab: &Lab, variant: &str, o: &Options) -> Result<String> {
    let picked = pick(o.seed, o.max_scenarios.unwrap_or(2000));
    crate::cli::progress(&picked.summary());
    let md = unknown_variant(lab, variant, o, &picked, &mut |l| crate::cli::progress(l))?;
    let path = o.out.join("summary.md");
    std::fs::write(&path, &md).map_err(|e| Error::io(&path, e))?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                all.union(&radiff_model::coverage(&model_input(&s), &radiff_model::Policy::BASE).1);
            }
        }
        assert_eq!(p.covered, all);
        assert!(p.gens.len() < 60, "{}", p.gens.len());
    }

    /// The set for seed 1's first 2000 scenarios, printed: `cargo test -p radiff --lib
    /// explore::cover::tests::print_the_set -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn print_the_set() {
        let p = pick(1, 2000);
        print!("{}", p.summary());
        for (i, g) in &p.gens {
            println!("  scenario {i}: {}", g.describe());
        }
    }
}
