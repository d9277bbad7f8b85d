//! Whether a review has earned a Tested-by. Pure: [`Looked`] (how far the review looked,
//! as data) in, a [`Verdict`] out; nothing here runs a kernel or reads a file.
//!
//! A Tested-by claims that the model followed every function the patch changes, that the
//! search ran on the model, that the kernels ran everything the search kept and every
//! point of the patch's reach (twice on each kernel, agreeing), that some case reached
//! each of the reviewers' usual questions ([`Usual`]), and that the kernels showed nothing
//! worse. Each way to fall short of that is a [`Shortfall`], which the reply names with
//! what would give the Tested-by.

use std::time::Duration;

use radiff_model::{Step, TouchOrder};

use super::evidence::Origin;
use super::questions::{hint_advice, hint_madvice, is_hint_step};
use super::reply::Review;
use crate::explore::generate::{Gen, GenStep, GenTouch};
use crate::scenario::{Point, Scenario};

/// The questions reviewers of a readahead patch ask first (seed 003's reviewer: "will we
/// suffer regression for random read case?").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Usual {
    /// Random reads: `random:` reads, random touches of a mapping, a fio randread job.
    RandomReads,
    /// Hints: fadvise, madvise, readahead(2).
    Hints,
    /// Mappings: mmap and its page faults.
    Mappings,
    /// Limits: read_ahead_kb other than the kernel's default, or max_sectors_kb below the
    /// device's limit.
    Limits,
}

impl Usual {
    pub const ALL: [Usual; 4] = [Usual::RandomReads, Usual::Hints, Usual::Mappings, Usual::Limits];

    pub fn name(self) -> &'static str {
        match self {
            Usual::RandomReads => "random reads",
            Usual::Hints => "hints (fadvise, madvise, readahead(2))",
            Usual::Mappings => "mappings (mmap and its faults)",
            Usual::Limits => "limits (read_ahead_kb, max_sectors_kb)",
        }
    }
}

/// The kernel's read_ahead_kb when nothing sets it (VM_READAHEAD_PAGES, 128 KiB).
const DEFAULT_READ_AHEAD_KB: u64 = 128;

/// Which of the [`Usual`] questions `point` of `scenario` asks (hints: readahead hints, as
/// [`is_hint_step`] reads them).
pub fn usual_of(scenario: &Scenario, point: &Point) -> Vec<Usual> {
    let mut out = Vec::new();
    let mut add = |u: Usual| {
        if !out.contains(&u) {
            out.push(u);
        }
    };
    for step in &scenario.steps {
        match step {
            Step::Random { .. } => add(Usual::RandomReads),
            Step::Touch { order: TouchOrder::Random { .. }, .. } => {
                add(Usual::RandomReads);
                add(Usual::Mappings);
            }
            // A readahead hint, not an action (DONTNEED, POPULATE_READ, COLLAPSE).
            s if is_hint_step(s) => add(Usual::Hints),
            Step::Mmap { .. } | Step::Touch { .. } => add(Usual::Mappings),
            _ => {}
        }
    }
    for p in &scenario.programs {
        let job = p.job.as_deref().unwrap_or("");
        if job.contains("rw=randread") || job.contains("rw=randrw") {
            add(Usual::RandomReads);
        }
        if job.contains("ioengine=mmap") {
            add(Usual::Mappings);
        }
    }
    let q = &point.queue;
    let device_kb = scenario.device.transfer_limit / 1024;
    if q.read_ahead_kb.is_some_and(|kb| kb != DEFAULT_READ_AHEAD_KB)
        || q.max_sectors_kb.is_some_and(|kb| kb < device_kb)
    {
        add(Usual::Limits);
    }
    out.sort();
    out
}

/// Which of the [`Usual`] questions a generated scenario asks (as [`usual_of`] reads the
/// scenario it renders to).
pub fn usual_of_gen(g: &Gen) -> Vec<Usual> {
    let mut out = Vec::new();
    for step in &g.steps {
        let asks: &[Usual] = match step {
            GenStep::Random { .. } => &[Usual::RandomReads],
            GenStep::Map { order: GenTouch::Random { .. }, advice: Some(a), .. } if hint_madvice(*a) => {
                &[Usual::RandomReads, Usual::Hints, Usual::Mappings]
            }
            GenStep::Map { order: GenTouch::Random { .. }, .. } => &[Usual::RandomReads, Usual::Mappings],
            GenStep::Map { advice: Some(a), .. } if hint_madvice(*a) => &[Usual::Hints, Usual::Mappings],
            GenStep::Map { .. } => &[Usual::Mappings],
            GenStep::Fadvise { advice, .. } if hint_advice(*advice) => &[Usual::Hints],
            GenStep::Readahead { .. } => &[Usual::Hints],
            _ => &[],
        };
        out.extend_from_slice(asks);
    }
    if g.read_ahead_kb != DEFAULT_READ_AHEAD_KB || g.max_sectors_kb < g.device.max_kb() {
        out.push(Usual::Limits);
    }
    out.sort();
    out.dedup();
    out
}

/// The usual questions the search's first `scenarios` generated scenarios of `seed` ask
/// (at most the first 5000: the grammar draws each kind within far fewer).
pub fn usual_of_search(seed: u64, scenarios: u64) -> Vec<Usual> {
    let mut reached = Vec::new();
    for index in 0..scenarios.min(5000) {
        for u in usual_of_gen(&crate::explore::generate::generate(seed, index)) {
            if !reached.contains(&u) {
                reached.push(u);
            }
        }
        if reached.len() == Usual::ALL.len() {
            break;
        }
    }
    reached.sort();
    reached
}

/// A function the patch changes, and whether the model followed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionLooked {
    pub function: String,
    pub file: String,
    pub modelled: bool,
}

/// The search on the model, when one ran.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchLooked {
    pub elapsed: Duration,
    /// Generated scenarios it predicted.
    pub scenarios: u64,
    /// Its findings that joined the cases, and how many of those ran on both kernels.
    pub kept: usize,
    pub kept_ran: usize,
}

/// How far a review looked: what the model followed, the search, what the kernels ran,
/// which usual questions some case reached, and what the kernels showed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Looked {
    /// Whether a model (a known policy, the hybrid, the port) predicted the patch.
    pub modelled: bool,
    /// Why not, when it did not.
    pub why_not: Option<String>,
    /// The variant, for what would give the Tested-by (`kernels/variants/NAME/`).
    pub variant: String,
    /// The patch's changed functions among those the model ports.
    pub functions: Vec<FunctionLooked>,
    pub search: Option<SearchLooked>,
    /// Points the kernels were to run (the model's changes, or every point the patch can
    /// reach where the model cannot say), and how many ran twice on each kernel.
    pub reach: usize,
    pub reach_ran: usize,
    /// Of those, the generated covering set's (a review the model cannot follow).
    pub covering: usize,
    pub covering_ran: usize,
    /// The file systems the patch can reach (all three when it is not confined to one).
    pub file_systems: Vec<String>,
    /// The usual questions no case reached, on the model or on the kernels.
    pub unreached: Vec<Usual>,
    /// Whether the kernels show something worse (run twice each, no race): a figure, or a
    /// window or request over its limit on the patch alone.
    pub worse: bool,
    /// Cases set aside because two runs of one kernel differed.
    pub races: usize,
}

/// How far `r` looked, from its cases: a case reaches a usual question when the model
/// predicted it or the kernels ran it (on the model, every repository point where the
/// model follows the patch; on the kernels alone, the points of the patch's reach).
pub fn looked(r: &Review) -> Looked {
    let ran = |c: &&&super::evidence::Case| c.runs.is_some();
    let found: Vec<_> = r.cases.iter().filter(|c| matches!(c.origin, Origin::Found { .. })).collect();
    let wanted: Vec<_> = r.cases.iter().filter(|c| c.wanted).collect();
    let covering: Vec<_> = r.cases.iter().filter(|c| c.origin == Origin::Covering).collect();
    let mut reached: Vec<Usual> = Vec::new();
    for c in r.cases.iter().filter(|c| c.weighed()) {
        reached.extend(usual_of(&c.scenario, &c.scenario.points[c.point]));
    }
    reached.extend(r.search_reached.iter().copied());
    Looked {
        modelled: r.modelled,
        why_not: r.why_not.clone(),
        variant: r.variant.clone(),
        functions: r
            .touched
            .iter()
            .map(|t| FunctionLooked { function: t.function.clone(), file: t.file.clone(), modelled: t.modelled })
            .collect(),
        search: r.search.map(|(elapsed, scenarios)| SearchLooked {
            elapsed,
            scenarios,
            kept: found.len(),
            kept_ran: found.iter().filter(ran).count(),
        }),
        reach: wanted.len(),
        reach_ran: wanted.iter().filter(ran).count(),
        covering: covering.len(),
        covering_ran: covering.iter().filter(ran).count(),
        file_systems: r.file_systems.clone(),
        unreached: Usual::ALL.into_iter().filter(|u| !reached.contains(u)).collect(),
        worse: r.worse(),
        races: r.cases.iter().filter(|c| c.runs.as_ref().is_some_and(|k| k.race().is_some())).count(),
    }
}

/// One way a review falls short of a Tested-by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// No model predicted the patch: `functions` (`name() (file)`) are what it changes.
    NotModelled { functions: Vec<String>, why: Option<String> },
    /// No search ran on the model.
    NotSearched,
    /// The search kept findings the kernels did not run.
    FindingsNotRun { kept: usize, ran: usize },
    /// Points of the patch's reach the kernels did not run.
    ReachNotRun { reach: usize, ran: usize },
    /// The kernels ran nothing.
    NothingRan,
    /// Cases set aside as races.
    Races(usize),
    /// Usual questions no case reached.
    Unreached(Vec<Usual>),
}

/// What a review's evidence earns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The kernels show something worse.
    pub worse: bool,
    /// Why there is not enough evidence for a Tested-by (empty: there is).
    pub shortfalls: Vec<Shortfall>,
}

/// `radiff review`'s exit status when nothing is worse but the evidence earns no Tested-by.
pub const EXIT_NOT_ENOUGH: u8 = 3;

impl Verdict {
    /// A Tested-by: nothing worse, and nothing short.
    pub fn tested_by(&self) -> bool {
        !self.worse && self.shortfalls.is_empty()
    }

    /// 1 when the kernels show something worse, [`EXIT_NOT_ENOUGH`] when nothing is worse
    /// but the evidence falls short, 0 with a Tested-by (2, bad input, never gets here).
    pub fn exit_code(&self) -> u8 {
        match (self.worse, self.shortfalls.is_empty()) {
            (true, _) => 1,
            (false, false) => EXIT_NOT_ENOUGH,
            (false, true) => 0,
        }
    }
}

/// The verdict on `looked`: every shortfall, in the order the reply lists them.
pub fn judge(looked: &Looked) -> Verdict {
    let mut short = Vec::new();
    let unmodelled: Vec<String> =
        looked.functions.iter().filter(|f| !f.modelled).map(|f| format!("{}() ({})", f.function, f.file)).collect();
    if !looked.modelled || !unmodelled.is_empty() {
        short.push(Shortfall::NotModelled { functions: unmodelled, why: looked.why_not.clone() });
    }
    match &looked.search {
        None => short.push(Shortfall::NotSearched),
        Some(s) if s.kept_ran < s.kept => short.push(Shortfall::FindingsNotRun { kept: s.kept, ran: s.kept_ran }),
        Some(_) => {}
    }
    if looked.reach_ran == 0 {
        short.push(Shortfall::NothingRan);
    } else if looked.reach_ran < looked.reach {
        short.push(Shortfall::ReachNotRun { reach: looked.reach, ran: looked.reach_ran });
    }
    if looked.races > 0 {
        short.push(Shortfall::Races(looked.races));
    }
    if !looked.unreached.is_empty() {
        short.push(Shortfall::Unreached(looked.unreached.clone()));
    }
    Verdict { worse: looked.worse, shortfalls: short }
}

/// Each shortfall of `v` in a sentence with what would give the Tested-by.
pub fn shortfall_lines(v: &Verdict, looked: &Looked) -> Vec<String> {
    let name = &looked.variant;
    v.shortfalls
        .iter()
        .map(|s| match s {
            Shortfall::NotModelled { functions, why } => {
                let what = match (why, functions.as_slice()) {
                    (Some(why), _) => format!("the patch: {why}"),
                    (None, []) => "the patch".to_string(),
                    (None, f) => f.join(", "),
                };
                format!(
                    "the model does not follow {what}; what would give it: the model following it, as a policy of model/src/variant.rs named in the variant's variant.yaml (`model: POLICY`; `radiff review --keep` leaves kernels/variants/{name}/ in place), or a change the hybrid runs as C."
                )
            }
            Shortfall::NotSearched => {
                "no search ran: it searches on the model, which does not follow the patch; what would give it: the model following it (above).".to_string()
            }
            Shortfall::FindingsNotRun { kept, ran } => format!(
                "the kernels ran {ran} of the {kept} findings the search kept; what would give it: a larger --budget."
            ),
            Shortfall::ReachNotRun { reach, ran } => format!(
                "the kernels ran {ran} of the {reach} points of the patch's reach; what would give it: a larger --budget."
            ),
            Shortfall::NothingRan => {
                "the kernels ran nothing: no case the model says changes, none the patch can reach; what would give it: a scenario where the patch changes requests or folios.".to_string()
            }
            Shortfall::Races(n) => format!(
                "{n} case{} set aside as races; what would give it: rerunning them (`radiff report`) until both kernels repeat.",
                if *n == 1 { " was" } else { "s were" }
            ),
            Shortfall::Unreached(usual) => {
                let names: Vec<&str> = usual.iter().map(|u| u.name()).collect();
                format!(
                    "no case reached {} on {}; what would give it: a scenario of that kind in scenarios/{}.",
                    names.join(", "),
                    looked.file_systems.join(", "),
                    if looked.modelled { ", or a longer search (--budget)" } else { " (or the model following the patch, whose search draws every kind)" }
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A review that earned its Tested-by: modelled, searched, everything run, nothing
    /// worse, every usual question reached.
    fn earned() -> Looked {
        Looked {
            modelled: true,
            why_not: None,
            variant: "my-fix".into(),
            functions: vec![FunctionLooked {
                function: "page_cache_async_ra".into(),
                file: "mm/readahead.c".into(),
                modelled: true,
            }],
            search: Some(SearchLooked { elapsed: Duration::from_secs(100), scenarios: 30000, kept: 4, kept_ran: 4 }),
            reach: 12,
            reach_ran: 12,
            covering: 0,
            covering_ran: 0,
            file_systems: vec!["xfs".into(), "ext4".into(), "f2fs".into()],
            unreached: Vec::new(),
            worse: false,
            races: 0,
        }
    }

    #[test]
    fn a_review_that_modelled_searched_and_ran_everything_earns_a_tested_by_and_exits_0() {
        let v = judge(&earned());
        assert!(v.tested_by(), "{v:?}");
        assert_eq!(v.exit_code(), 0);
        assert!(shortfall_lines(&v, &earned()).is_empty());
    }

    #[test]
    fn a_patch_the_model_does_not_follow_gets_no_tested_by_however_much_the_kernels_ran() {
        let mut l = earned();
        l.modelled = false;
        l.why_not = Some("it changes f2fs_mpage_readpages() in fs/f2fs/data.c".into());
        l.functions[0] =
            FunctionLooked { function: "f2fs_mpage_readpages".into(), file: "fs/f2fs/data.c".into(), modelled: false };
        l.search = None;
        let v = judge(&l);
        assert_eq!(
            v.shortfalls,
            vec![
                Shortfall::NotModelled {
                    functions: vec!["f2fs_mpage_readpages() (fs/f2fs/data.c)".into()],
                    why: l.why_not.clone()
                },
                Shortfall::NotSearched
            ]
        );
        assert_eq!(v.exit_code(), EXIT_NOT_ENOUGH);
        let lines = shortfall_lines(&v, &l);
        assert!(
            lines[0].starts_with("the model does not follow the patch: it changes f2fs_mpage_readpages() in fs/f2fs/data.c; what would give it: the model following it"),
            "{lines:?}"
        );
        assert!(lines[0].contains("kernels/variants/my-fix/"), "{lines:?}");
        l.why_not = None;
        assert!(
            shortfall_lines(&judge(&l), &l)[0]
                .starts_with("the model does not follow f2fs_mpage_readpages() (fs/f2fs/data.c);"),
            "without a why, the functions"
        );
    }

    #[test]
    fn one_changed_function_the_model_does_not_follow_is_enough_to_withhold_it() {
        let mut l = earned();
        l.functions.push(FunctionLooked {
            function: "ext4_mpage_readpages".into(),
            file: "fs/ext4/readpage.c".into(),
            modelled: false,
        });
        let v = judge(&l);
        assert_eq!(
            v.shortfalls,
            vec![Shortfall::NotModelled {
                functions: vec!["ext4_mpage_readpages() (fs/ext4/readpage.c)".into()],
                why: None
            }]
        );
    }

    #[test]
    fn a_search_whose_findings_the_kernels_did_not_all_run_withholds_it() {
        let mut l = earned();
        l.search = Some(SearchLooked { elapsed: Duration::from_secs(20), scenarios: 5000, kept: 4, kept_ran: 3 });
        let v = judge(&l);
        assert_eq!(v.shortfalls, vec![Shortfall::FindingsNotRun { kept: 4, ran: 3 }]);
        assert_eq!(v.exit_code(), EXIT_NOT_ENOUGH);
        assert_eq!(
            shortfall_lines(&v, &l),
            vec!["the kernels ran 3 of the 4 findings the search kept; what would give it: a larger --budget."]
        );
    }

    #[test]
    fn points_of_the_reach_the_budget_left_unrun_withhold_it() {
        let mut l = earned();
        l.reach_ran = 7;
        assert_eq!(judge(&l).shortfalls, vec![Shortfall::ReachNotRun { reach: 12, ran: 7 }]);
    }

    #[test]
    fn a_review_whose_kernels_ran_nothing_has_nothing_to_sign() {
        let mut l = earned();
        (l.reach, l.reach_ran) = (0, 0);
        assert_eq!(judge(&l).shortfalls, vec![Shortfall::NothingRan]);
    }

    #[test]
    fn a_race_withholds_it() {
        let mut l = earned();
        l.races = 2;
        let v = judge(&l);
        assert_eq!(v.shortfalls, vec![Shortfall::Races(2)]);
        assert!(shortfall_lines(&v, &l)[0].starts_with("2 cases were set aside as races"));
    }

    #[test]
    fn a_usual_question_no_case_reached_withholds_it_and_names_the_file_systems() {
        let mut l = earned();
        l.unreached = vec![Usual::RandomReads, Usual::Limits];
        l.file_systems = vec!["f2fs".into()];
        let v = judge(&l);
        assert_eq!(v.shortfalls, vec![Shortfall::Unreached(vec![Usual::RandomReads, Usual::Limits])]);
        assert!(
            shortfall_lines(&v, &l)[0]
                .starts_with("no case reached random reads, limits (read_ahead_kb, max_sectors_kb) on f2fs;"),
            "{:?}",
            shortfall_lines(&v, &l)
        );
    }

    #[test]
    fn worse_on_the_kernels_exits_1_even_where_the_evidence_falls_short() {
        let mut l = earned();
        l.worse = true;
        assert!(!judge(&l).tested_by());
        assert_eq!(judge(&l).exit_code(), 1);
        l.modelled = false;
        let v = judge(&l);
        assert_eq!(v.exit_code(), 1);
        assert!(!v.shortfalls.is_empty(), "the shortfalls are still said");
    }

    #[test]
    fn each_usual_question_of_a_generated_scenario_is_what_its_yaml_asks() {
        for index in 0..300 {
            let g = crate::explore::generate::generate(3, index);
            let Ok(s) = crate::explore::generate::Gen::scenario(&g, std::path::Path::new("x"), "x", "", &[]) else {
                continue;
            };
            assert_eq!(usual_of_gen(&g), usual_of(&s, &s.points[0]), "scenario {index}:\n{}", g.yaml("", &[]));
        }
        assert_eq!(usual_of_search(0, 2000), Usual::ALL.to_vec(), "a search of 2000 scenarios asks every question");
        assert!(usual_of_search(0, 1).len() < Usual::ALL.len(), "one scenario does not");
    }

    fn scenario(reads: &str, queue: &str) -> Scenario {
        Scenario::parse(
            std::path::Path::new("t.yaml"),
            &format!("description: t\ndevice: {{kind: nvme, size: 1 GiB}}\nfilesystem: xfs\nfile: {{size: 8 MiB}}\n{queue}reads:\n{reads}"),
        )
        .unwrap()
    }

    #[test]
    fn each_usual_question_is_read_from_the_steps_and_the_queue() {
        let of = |reads: &str, queue: &str| {
            let s = scenario(reads, queue);
            usual_of(&s, &s.points[0])
        };
        assert_eq!(of("  - sequential: {from: 0, size: 1 MiB}\n", ""), vec![]);
        assert_eq!(of("  - random: {count: 4, size: 4 KiB, seed: 1}\n", ""), vec![Usual::RandomReads]);
        assert_eq!(of("  - fadvise: {advice: willneed}\n  - read: {offset: 0, size: 4 KiB}\n", ""), vec![Usual::Hints]);
        assert_eq!(of("  - readahead: {offset: 0, size: 1 MiB}\n", ""), vec![Usual::Hints]);
        assert_eq!(
            of("  - mmap: {map: 0}\n  - touch: {map: 0, order: random, count: 8, seed: 2}\n", ""),
            vec![Usual::RandomReads, Usual::Mappings]
        );
        assert_eq!(
            of("  - mmap: {map: 0}\n  - madvise: {map: 0, advice: sequential}\n  - touch: {map: 0, order: sequential}\n", ""),
            vec![Usual::Hints, Usual::Mappings]
        );
        let read = "  - read: {offset: 0, size: 4 KiB}\n";
        assert_eq!(of(read, "queue: {read_ahead_kb: 128}\n"), vec![], "the default is no limit");
        assert_eq!(of(read, "queue: {read_ahead_kb: 0}\n"), vec![Usual::Limits]);
        assert_eq!(of(read, "queue: {max_sectors_kb: 64}\n"), vec![Usual::Limits]);
        assert_eq!(of(read, "queue: {max_sectors_kb: 512}\n"), vec![], "the device's own limit");
    }
}
