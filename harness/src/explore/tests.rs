//! Tests of the explore module: the grammar, the model on generated scenarios, shrinking.

use std::time::Duration;

use radiff_model::{Advice, FsKind, Op};

use super::detect::{self, Thresholds};
use super::detect_tests::sequential_ops;
use super::generate::{self, Gen, GenDevice, GenStep, Start};
use super::shrink;
use super::*;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn base() -> Vec<(String, crate::model_check::Predictor)> {
    policies(&["base".to_string()]).unwrap()
}

// ---- the grammar ----

#[test]
fn a_seed_names_the_same_scenarios() {
    for i in 0..300 {
        assert_eq!(generate::generate(1, i), generate::generate(1, i));
    }
    let differ = (0..50).filter(|&i| generate::generate(1, i) != generate::generate(2, i)).count();
    assert!(differ > 40, "seeds 1 and 2 should name different searches ({differ} of 50 differ)");
    // The count bounds these searches; the budget is only a guard, so a busy machine
    // (the search predicts tens of scenarios a second under load) still reaches it.
    let a =
        search(&Options { max_scenarios: Some(200), budget: Duration::from_secs(3600), ..Options::default() }, &base());
    let b =
        search(&Options { max_scenarios: Some(200), budget: Duration::from_secs(3600), ..Options::default() }, &base());
    assert_eq!(a.scenarios, 200);
    assert_eq!(a.groups.keys().collect::<Vec<_>>(), b.groups.keys().collect::<Vec<_>>());
}

/// The search's threads take indices as they come, but merge in index order: a seed and a
/// count name the same findings (the same strongest scenario of each group, the same
/// group sizes) on one thread and on several.
#[test]
fn a_seed_and_a_count_name_the_same_findings_on_any_number_of_threads() {
    let run = |threads| {
        search(
            &Options {
                max_scenarios: Some(300),
                budget: Duration::from_secs(3600),
                seed: 3,
                threads,
                ..Options::default()
            },
            &base(),
        )
    };
    let one = run(1);
    let summary = |r: &SearchResult| -> Vec<(String, u64, u64, String)> {
        r.groups.iter().map(|(k, f)| (k.clone(), f.index, f.group_size, f.hit.detail.clone())).collect()
    };
    assert_eq!(one.scenarios, 300);
    assert!(one.groups.len() > 10, "{} groups", one.groups.len());
    for threads in [2, 4] {
        let many = run(threads);
        assert_eq!((many.scenarios, many.firing), (one.scenarios, one.firing), "{threads} threads");
        assert_eq!(summary(&many), summary(&one), "{threads} threads");
    }
}

#[test]
fn every_generated_scenario_parses_and_says_what_was_generated() {
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..3 {
        for i in 0..400 {
            let g = generate::generate(seed, i);
            let mut fixed = g.clone();
            fixed.fix();
            assert_eq!(fixed, g, "fix() is idempotent");
            assert!((1..=generate::MAX_STEPS).contains(&g.steps.len()));
            let s = scenario_of(&g, &["base".into()])
                .unwrap_or_else(|e| panic!("seed {seed} scenario {i} does not parse: {e}\n{}", g.yaml("", &[])));
            assert_eq!(s.file_size, g.file_size);
            assert_eq!(s.fs, g.fs);
            // A mapping is two or three steps of the schema (mmap, madvise, touch).
            let items: usize = g.steps.iter().map(|st| st.yaml_items(0, None, &mut 0).len()).sum();
            assert_eq!(s.steps.len(), items);
            assert_eq!(s.vm.fault_around_bytes.unwrap_or(generate::DEFAULT_FAULT_AROUND), g.fault_around);
            assert_eq!(s.points[0].queue.read_ahead_kb, Some(g.read_ahead_kb));
            assert_eq!(s.points[0].queue.max_sectors_kb, Some(g.max_sectors_kb));
            assert!((8 * MIB..=128 * MIB).contains(&s.file_size));
            for step in &g.steps {
                kinds.insert(step.kind());
            }
        }
    }
    for p in generate::PRODUCTIONS.iter().chain(generate::MMAP_PRODUCTIONS) {
        assert!(kinds.iter().any(|k| k.starts_with(p.name)), "production {} never drawn", p.name);
    }
    for k in ["mmap-sequential", "mmap-backward", "mmap-stride", "mmap-random", "readahead"] {
        assert!(kinds.contains(k), "{k} never drawn");
    }
    assert!(kinds.contains("interleaved-fds") && kinds.contains("interleaved"));
}

#[test]
fn the_grammar_has_no_seed_scenario_literally() {
    // Every step of every scenario in scenarios/, as its YAML says it, must not appear in
    // the grammar's source; the grammar has no production that makes more than one step
    // and no literal list of steps; and no generated scenario is one of scenarios/.
    let source = include_str!("generate.rs");
    let squash = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_lowercase();
    let flat = squash(source);
    let repo = crate::scenario::load_all(&crate::repo_root().join("scenarios")).unwrap();
    for s in &repo {
        let text = std::fs::read_to_string(&s.path).unwrap();
        let reads = text.split("\nreads:\n").nth(1).unwrap();
        // The steps themselves (`  - KIND: ...`), not the lines nested inside one (a
        // program's argv, a block of text).
        let steps = reads.lines().take_while(|l| l.starts_with("  ")).filter(|l| l.starts_with("  - "));
        for line in steps {
            let step = squash(line.trim_start().trim_start_matches('-').split('#').next().unwrap());
            assert!(!flat.contains(&step), "the grammar names a step of {}: {line}", s.path.display());
        }
        assert!(!flat.contains(&squash(&s.description)), "{}", s.path.display());
    }
    for forbidden in ["vec![genstep", "steps:vec![", "&[genstep", "[genstep::"] {
        assert!(!flat.contains(forbidden), "the grammar holds a literal list of steps (`{forbidden}`)");
    }
    for seed in 0..2 {
        for i in 0..1000 {
            let g = generate::generate(seed, i);
            let s = scenario_of(&g, &[]).unwrap();
            for r in &repo {
                let same = r.steps == s.steps
                    && r.fs == s.fs
                    && r.file_size == s.file_size
                    && r.device.kind == s.device.kind
                    && r.points[0].queue == s.points[0].queue;
                assert!(!same, "generated scenario {seed}/{i} is {}", r.path.display());
            }
        }
    }
}

/// The mapping family takes its own generator (so the other scenarios of a seed are drawn
/// as before it existed): about one in [`generate::MMAP_ONE_IN`] is of it, and the others
/// carry no vm settings.
#[test]
fn the_mapping_family_leaves_the_other_scenarios_alone() {
    let mut mapped = 0;
    for i in 0..400 {
        let g = generate::generate(1, i);
        let is_map = g.steps.iter().any(|s| matches!(s, GenStep::Map { .. } | GenStep::Readahead { .. }));
        mapped += is_map as u64;
        if !is_map {
            assert_eq!((g.fault_around, g.thp), (generate::DEFAULT_FAULT_AROUND, radiff_model::ThpMode::Always));
            assert!(!g.yaml("", &[]).contains("vm:"));
        }
    }
    assert!(
        (400 / generate::MMAP_ONE_IN / 2..400 / generate::MMAP_ONE_IN * 3 / 2).contains(&mapped),
        "{mapped} of 400"
    );
}

/// The fault-path and large-block families: PROT_EXEC only on mapping-family scenarios,
/// 16 or 64 KiB blocks only on XFS, each drawn, and every such scenario parses with them.
#[test]
fn exec_mappings_and_large_xfs_blocks_are_drawn_and_parse() {
    let (mut exec, mut large) = (0, 0);
    for i in 0..400 {
        let g = generate::generate(1, i);
        let has_exec = g.steps.iter().any(|s| matches!(s, GenStep::Map { exec: true, .. }));
        exec += has_exec as u64;
        if let Some(b) = g.block_size {
            large += 1;
            assert!(g.fs == FsKind::Xfs && (b == 16 * KIB || b == 64 * KIB), "{i}: {:?} {b}", g.fs);
        }
        if has_exec || g.block_size.is_some() {
            let s = scenario_of(&g, &[]).unwrap();
            assert_eq!(s.block_size, g.block_size);
            assert_eq!(has_exec, s.steps.iter().any(|st| matches!(st, radiff_model::Step::Mmap { exec: true, .. })));
        }
    }
    assert!(exec > 0 && large > 0, "exec {exec}, large blocks {large} of 400");
}

#[test]
fn a_variant_without_a_policy_is_an_error() {
    assert!(policies(&["no-such-variant".into()]).is_err());
}

/// With the base's model check off (`model: none`), every variant, a policy's namesake
/// too, is explored against base on the kernels, and base alone is refused with the way.
#[test]
fn a_base_without_its_model_explores_every_variant_on_the_kernels() {
    let off = crate::kernels::ModelExpectation::BaseOff { said: "kernels/kernels.yaml:9".into() };
    let variant = |name: &str| crate::kernels::Variant { name: name.into(), patches: Vec::new(), model: off.clone() };
    let kernels = crate::kernels::Kernels {
        dir: "kernels".into(),
        base: crate::kernels::Base::Debian { package: "linux-source-7.3".into() },
        config: "kernels/config.fragment".into(),
        variants: vec![variant("base"), variant("async-align-v1")],
        model_said: Some("kernels/kernels.yaml:9".into()),
    };
    let v =
        |names: &[&str]| without_policy_in(Some(&kernels), &names.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(v(&["base", "async-align-v1"]).unwrap().as_deref(), Some("async-align-v1"));
    let e = v(&["base"]).unwrap_err().to_string();
    assert!(e.contains("kernels/kernels.yaml:9 says `model: none`") && e.contains("`--variants base,V`"), "{e}");
}

#[test]
fn synthesised_queue_limits_follow_the_device() {
    let mut g = gen(vec![GenStep::Sequential { at: Start::At(0), size: MIB, len: None }]);
    g.device = GenDevice::Nvme { transfer_limit: 2 * MIB };
    g.max_sectors_kb = 1024;
    let q = synthetic_input(&scenario_of(&g, &[]).unwrap()).queue;
    assert_eq!((q.max_hw_sectors_kb, q.max_segments, q.max_sectors_kb, q.read_ahead_kb), (2048, 513, 1024, 128));
    g.device = GenDevice::Ufs;
    let q = synthetic_input(&scenario_of(&g, &[]).unwrap()).queue;
    assert_eq!((q.max_hw_sectors_kb, q.max_segments, q.max_sectors_kb, q.logical_block_size), (1024, 128, 1024, 4096));
    g.device = GenDevice::Nvme { transfer_limit: 512 * KIB };
    g.max_sectors_kb = 512;
    assert_eq!(synthetic_input(&scenario_of(&g, &[]).unwrap()).queue, radiff_model::QueueLimits::nvme_qemu(128, 512));
}

// ---- the model on generated scenarios ----

fn gen(steps: Vec<GenStep>) -> Gen {
    let mut g = Gen {
        files: 1,
        fault_around: generate::DEFAULT_FAULT_AROUND,
        thp: radiff_model::ThpMode::Always,
        device: GenDevice::Nvme { transfer_limit: 512 * KIB },
        fs: FsKind::Xfs,
        file_size: 32 * MIB,
        write_size: MIB,
        read_ahead_kb: 128,
        max_sectors_kb: 512,
        steps,
        block_size: None,
    };
    g.fix();
    g
}

#[test]
fn the_model_fires_trimmed_window_on_large_reads_after_a_small_one() {
    // Seed 000's class, built by hand here (the grammar must find it by itself).
    let g = gen(vec![
        GenStep::Read { at: Start::At(0), size: 4 * KIB },
        GenStep::Sequential { at: Start::Continue, size: MIB, len: None },
    ]);
    assert!(fires(&g, "trimmed-window", None, &base(), &Thresholds::default()).is_some());
    let from_start = gen(vec![GenStep::Sequential { at: Start::At(0), size: MIB, len: None }]);
    assert!(fires(&from_start, "trimmed-window", None, &base(), &Thresholds::default()).is_none());
    // And v1 changes it, with fewer device reads.
    let both = policies(&["base".into(), "async-align-v1".into()]).unwrap();
    let hit = fires(&g, "variant-change", Some("async-align-v1"), &both, &Thresholds::default()).unwrap();
    assert!(hit.key.contains("device reads fewer"), "{}", hit.key);
}

#[test]
fn the_model_fires_order_collapse_on_interleaved_streams_sharing_one_fd() {
    let one_fd = gen(vec![GenStep::Interleaved { streams: 2, size: 128 * KIB, separate_fds: false }]);
    let hit = fires(&one_fd, "order-collapse", None, &base(), &Thresholds::default());
    let fds = gen(vec![GenStep::Interleaved { streams: 2, size: 128 * KIB, separate_fds: true }]);
    let hit_fds = fires(&fds, "order-collapse", None, &base(), &Thresholds::default());
    assert!(hit.is_some() && hit_fds.is_none(), "one fd: {hit:?}; separate fds: {hit_fds:?}");
}

// ---- shrinking ----

#[test]
fn shrinking_drops_steps_shrinks_the_file_and_rounds_numbers() {
    let mut g = gen(vec![
        GenStep::Fadvise { advice: Advice::Normal, range: None },
        GenStep::Random { count: 1024, min: 12 * KIB, max: 96 * KIB, align: 4 * KIB, seed: 3 },
        GenStep::Sequential { at: Start::At(12 * KIB), size: 768 * KIB, len: Some(8 * MIB) },
        GenStep::Read { at: Start::Continue, size: 48 * KIB },
    ]);
    g.file_size = 128 * MIB;
    g.fs = FsKind::Ext4;
    g.read_ahead_kb = 1024;
    g.fix();
    // Fires while some sequential step reads at least 64 KiB at a time.
    let pred = |g: &Gen| g.steps.iter().any(|s| matches!(s, GenStep::Sequential { size, .. } if *size >= 64 * KIB));
    assert!(pred(&g));
    let (small, calls) = shrink::shrink(&g, pred, 1000);
    assert!(pred(&small));
    assert!(shrink::cost(&small) < shrink::cost(&g));
    assert_eq!(small.steps, vec![GenStep::Sequential { at: Start::At(0), size: 64 * KIB, len: None }]);
    assert_eq!((small.file_size, small.fs, small.read_ahead_kb), (generate::FILE_SIZES[0], FsKind::Xfs, 128));
    assert!(calls < 1000);
    // A budget stops it early, still at a scenario that fires.
    let (partial, calls) = shrink::shrink(&g, pred, 3);
    assert!(calls <= 3 && pred(&partial));
    // Nothing simpler fires: the scenario comes back as it was.
    let (same, _) = shrink::shrink(&small, |g| *g == small, 100);
    assert_eq!(same, small);
}

#[test]
fn shrinking_with_the_model_keeps_the_detector_firing() {
    let g = gen(vec![
        GenStep::Fadvise { advice: Advice::Noreuse, range: None },
        GenStep::Read { at: Start::At(0), size: 12 * KIB },
        GenStep::Sequential { at: Start::Continue, size: 768 * KIB, len: None },
    ]);
    let t = Thresholds::default();
    let pol = base();
    assert!(fires(&g, "trimmed-window", None, &pol, &t).is_some());
    let (small, _) = shrink::shrink(&g, |g| fires(g, "trimmed-window", None, &pol, &t).is_some(), 300);
    assert!(fires(&small, "trimmed-window", None, &pol, &t).is_some());
    assert!(small.steps.len() <= 2, "{small:?}");
    assert_eq!(small.file_size, generate::FILE_SIZES[0]);
    assert!(scenario_of(&small, &[]).is_ok());
}

#[test]
fn a_short_search_finds_and_shrinks_something_and_writes_valid_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        max_scenarios: Some(400),
        budget: Duration::from_secs(3600),
        out: dir.path().to_path_buf(),
        confirm: Some(0),
        ..Options::default()
    };
    let report = explore(&o, None, &mut |_| {}).unwrap();
    assert_eq!(report.search.scenarios, 400);
    assert!(report.search.invalid.is_empty(), "{:?}", report.search.invalid);
    assert!(!report.findings.is_empty());
    assert!(report.markdown.contains("| finding | scenario | model | group |"), "{}", report.markdown);
    assert!(report.hybrids.is_empty() && !report.markdown.contains("Modelled by"), "the base is the Rust port");
    let written: Vec<_> =
        std::fs::read_dir(dir.path().join("candidates")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(written.len(), report.findings.len());
    for path in written {
        let s = crate::scenario::Scenario::load(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Found by `radiff explore --seed 0 --variants base`"), "{text}");
        assert!(s.name.starts_with("explore_"));
        assert_eq!(s.variants.as_deref(), Some(&["base".to_string()][..]));
    }
    // The rerun command a confirmation's diff ends with names a file that is there.
    let name = report.findings[0].name();
    let rerun = confirm::rerun(&o, &name, "base");
    let path = rerun.strip_prefix("radiff run ").and_then(|r| r.strip_suffix(" --variant base")).expect(&rerun);
    assert!(std::path::Path::new(path).is_file(), "{rerun}");
}

#[test]
fn seed_1_finds_both_seed_classes_by_itself() {
    // The done-when classes of the issue, found by the grammar (not built by hand): larger
    // sequential reads after a smaller first read trim windows, and interleaved streams on
    // one fd collapse to order-0 folios. Model only; `trial` confirms on the kernel.
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        max_scenarios: Some(400),
        budget: Duration::from_secs(600),
        seed: 1,
        out: dir.path().to_path_buf(),
        confirm: Some(0),
        ..Options::default()
    };
    let report = explore(&o, None, &mut |_| {}).unwrap();
    let has = |detector: &str, shape: &str| {
        report.findings.iter().any(|f| f.hit.detector == detector && f.gen.shape() == shape)
    };
    assert!(has("trimmed-window", "read+sequential"), "{}", report.markdown);
    assert!(has("order-collapse", "interleaved"), "{}", report.markdown);
    let f = report
        .findings
        .iter()
        .find(|f| f.hit.detector == "trimmed-window" && f.gen.shape() == "read+sequential")
        .unwrap();
    let (GenStep::Read { size: first_read, .. }, GenStep::Sequential { size: then, .. }) =
        (&f.gen.steps[0], &f.gen.steps[1])
    else {
        panic!()
    };
    assert!(first_read < then, "{f:?}");
    // Classes are listed once each.
    let classes: std::collections::BTreeSet<String> = report.findings.iter().map(Finding::class).collect();
    assert_eq!(classes.len(), report.findings.len());
    // Root causes: each finding under exactly one, fewer causes than findings, and the
    // model's main trimmed-window cause is page_cache_async_ra()'s end alignment.
    let mut seen = vec![0; report.findings.len()];
    for c in &report.causes {
        for &i in &c.findings {
            seen[i] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
    assert!(
        report.causes.len() < report.findings.len(),
        "{} causes for {} findings",
        report.causes.len(),
        report.findings.len()
    );
    // (causes come most findings first: the first trimmed-window cause is the largest)
    let trimmed = report.causes.iter().find(|c| c.detector == "trimmed-window").expect("a trimmed-window cause");
    assert!(trimmed.path.iter().any(|d| d == "page_cache_async_ra: aligned_end < end: trimmed"), "{trimmed:?}");
    assert!(report.markdown.contains("### Root causes"), "{}", report.markdown);
}

#[test]
fn the_budget_is_split_between_search_shrinking_and_confirmations() {
    let o = Options { budget: Duration::from_secs(600), ..Options::default() };
    assert_eq!(o.plan(), (Duration::from_secs(90), Duration::from_secs(60)));
    let model_only = Options { confirm: Some(0), ..o.clone() };
    assert_eq!(model_only.plan(), (Duration::from_secs(500), Duration::from_secs(100)));
    let short = Options { budget: Duration::from_secs(10), ..o };
    assert_eq!(short.plan().1, Duration::from_secs(5));
}

#[test]
fn a_written_finding_parses_under_its_file_name_and_replays_as_a_trial() {
    let g = gen(vec![
        GenStep::Read { at: Start::At(0), size: 4 * KIB },
        GenStep::Sequential { at: Start::Continue, size: MIB, len: None },
    ]);
    let hit = fires(&g, "trimmed-window", None, &base(), &Thresholds::default()).expect("fires");
    let f = Finding { gen: g, hit, variant: None, index: 17, group_size: 1 };
    let dir = tempfile::tempdir().unwrap();
    let o = Options { seed: 5, out: dir.path().to_path_buf(), ..Options::default() };
    let figures = model_figures(&f, &o).unwrap();
    let c = confirm::Confirmation {
        finding: f.clone(),
        status: confirm::Status::Confirmed { kernel_key: f.hit.key.clone() },
        model_figures: figures.clone(),
        kernel_figures: figures,
        kernel_hit: Some(f.hit.clone()),
        image_time: None,
        run_times: vec![Duration::from_secs(12)],
        wall: Duration::from_secs(12),
    };
    c.write(dir.path(), &o).unwrap();
    let path = dir.path().join(format!("{}.yaml", f.name()));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# Found by `radiff explore --seed 5 --variants base` (its scenario 17, shrunk)"),
        "{text}"
    );
    assert!(text.contains("the model equals the kernel"), "{text}");
    let s = crate::scenario::Scenario::parse(&path, &text).unwrap();
    assert_eq!(s.name, f.name());
    assert_eq!(s.variants.as_deref(), Some(&["base".to_string()][..]));
    assert_eq!(
        s.trial_name("base", &s.points[0]),
        format!("scenario_{}::base", path.file_stem().unwrap().to_str().unwrap())
    );
    assert_eq!(crate::scenario::Scenario::load(&path).unwrap().steps, scenario_of(&f.gen, &[]).unwrap().steps);
    // A run that failed goes to failed/, the summary lists it first among the rest.
    let failed = confirm::Confirmation { status: confirm::Status::Failed { error: "boom".into() }, ..c };
    failed.write(dir.path(), &o).unwrap();
    assert!(dir.path().join("failed").join(format!("{}.yaml", f.name())).is_file());
}

#[test]
fn variant_changes_say_whether_they_change_requests_and_are_worse() {
    use detect::Figure::{BytesRead, DeviceReads, Folios, PagesPerFolio};
    // Each hit made from its figures; its key, rendered once from them, is the one the
    // assertions were written on.
    let h = |figures: &[(detect::Figure, f64, f64)], requests_differ: bool, key: &str| {
        let hit = crate::explore::testing::variant_hit(figures, requests_differ);
        assert_eq!(hit.key, key, "the figures render to the key");
        hit
    };
    let bytes_more = h(&[(BytesRead, 4096.0, 8192.0)], true, "v: bytes read more; worse on bytes read");
    assert!(is_worse(&bytes_more) && changes_requests(&bytes_more));
    let reads_fewer = h(&[(DeviceReads, 2.0, 1.0)], true, "v: device reads fewer");
    assert!(!is_worse(&reads_fewer) && changes_requests(&reads_fewer));
    let folios = h(&[(Folios, 2.0, 1.0), (PagesPerFolio, 1.0, 2.0)], false, "v: folios fewer, pages per folio more");
    assert!(!changes_requests(&folios));
    let other_folios = h(&[], false, "v: same totals, other folios");
    let other_requests = h(&[], true, "v: same totals, other requests");
    assert!(!changes_requests(&other_folios) && changes_requests(&other_requests));
}

// ---- several files ----

#[test]
fn the_two_file_family_reads_both_files_and_leaves_the_others_alone() {
    let (mut two, mut mapped) = (0, 0);
    for i in 0..600 {
        let g = generate::generate(1, i);
        let alternates = g.steps.iter().any(|s| matches!(s, GenStep::Alternate { .. }));
        assert_eq!(g.files == 2, alternates, "a second file exactly when a step reads it");
        mapped += g.steps.iter().any(|s| matches!(s, GenStep::Map { .. })) as u64;
        if g.files == 2 {
            two += 1;
            let s =
                scenario_of(&g, &["base".into()]).unwrap_or_else(|e| panic!("scenario {i}: {e}\n{}", g.yaml("", &[])));
            assert_eq!(s.file_names, vec!["a", "b"]);
            assert_eq!(s.file_sizes(), vec![g.file_size, g.file_size]);
            let ops = radiff_model::pattern::expand_files(&s.steps, &s.file_sizes());
            let files: std::collections::BTreeSet<u32> = ops
                .iter()
                .filter_map(
                    |op| if let Op::Read { fd, .. } = op { Some(radiff_model::pattern::file_of(*fd)) } else { None },
                )
                .collect();
            assert_eq!(files, [0, 1].into(), "scenario {i} reads both files");
        }
    }
    // About one in TWO_FILES_ONE_IN of the scenarios outside the mapping family.
    let expected = (600 - mapped) / generate::TWO_FILES_ONE_IN;
    assert!((expected / 2..expected * 3 / 2).contains(&two), "{two} two-file scenarios, about {expected} expected");
    // Shrinking the alternation away leaves one file.
    let mut g = gen(vec![GenStep::Alternate { size: 64 * KIB }, GenStep::Read { at: Start::At(0), size: 4 * KIB }]);
    assert_eq!(g.files, 2);
    g.steps.remove(0);
    g.fix();
    assert_eq!(g.files, 1);
    assert!(!g.yaml("", &[]).contains("files:"));
}

#[test]
fn streams_and_bytes_of_two_files_are_counted_apart() {
    let b = radiff_model::pattern::fd_of(1, 0);
    // The same offsets of two files, in alternation: two streams, twice the bytes.
    let ops: Vec<Op> = sequential_ops(64 * KIB, 4 * MIB)
        .into_iter()
        .flat_map(|op| match op {
            Op::Read { offset, len, .. } => [Op::Read { fd: 0, offset, len }, Op::Read { fd: b, offset, len }],
            op => [op, op],
        })
        .collect();
    let s = detect::streams(&ops, &Thresholds::default());
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(detect::distinct_bytes_read(&ops, 64 * MIB), 8 * MIB);
    // The model's two-file trace: each stream's windows are its own file's.
    let g = gen(vec![GenStep::Alternate { size: 128 * KIB }]);
    let scenario = scenario_of(&g, &["base".into()]).unwrap();
    let (input, traces) = predict_scenario(&scenario, &base());
    assert_eq!(input.nr_files(), 2);
    assert!(traces[0].windows.iter().any(|w| w.file == 1));
    let hits = detect::run_all(&traces[0], &context(&input), &Thresholds::default());
    assert!(hits.iter().all(|h| h.detector != "amplification"), "reading two files is no amplification: {hits:?}");
}

fn queued(ready: bool, secs: u64, name: &str) -> Queued {
    Queued { ready, estimate: Duration::from_secs(secs), name: name.into() }
}

#[test]
fn a_group_takes_ready_findings_first_and_only_what_fits_the_budget() {
    let q = vec![
        queued(false, 100, "a"),
        queued(true, 40, "b"),
        queued(true, 50, "c"),
        queued(false, 30, "d"),
        queued(true, 20, "e"),
    ];
    // Ready ones first in the queue's order (b, c, e: 110 s), then d fits (140 s), a not.
    assert_eq!(pick_group(&q, Duration::from_secs(150), 8), vec![1, 2, 4, 3]);
    // One that does not fit is passed over, later ones still taken: c (50) no, e (20) yes.
    assert_eq!(pick_group(&q, Duration::from_secs(65), 8), vec![1, 4]);
    // At most `max`.
    assert_eq!(pick_group(&q, Duration::from_secs(1000), 2), vec![1, 2]);
    assert_eq!(pick_group(&q, Duration::from_secs(1000), 8), vec![1, 2, 4, 0, 3]);
    // Nothing fits: an empty group (the loop stops there).
    assert!(pick_group(&q, Duration::from_secs(19), 8).is_empty());
    assert!(pick_group(&[], Duration::from_secs(1000), 8).is_empty());
    assert!(pick_group(&q, Duration::from_secs(1000), 0).is_empty());
    // The old one-at-a-time choice is the group's first: a ready one that fits, else the
    // first that fits.
    assert_eq!(pick_group(&q, Duration::from_secs(1000), 1), vec![1]);
    assert_eq!(pick_group(&[queued(false, 100, "a"), queued(false, 30, "d")], Duration::from_secs(50), 1), vec![1]);
}

#[test]
fn findings_of_one_name_go_to_different_groups() {
    let q = vec![queued(true, 10, "x"), queued(true, 10, "y"), queued(true, 10, "x")];
    assert_eq!(pick_group(&q, Duration::from_secs(100), 8), vec![0, 1]);
    // Once the first is confirmed (removed from the queue), the other goes.
    assert_eq!(pick_group(&q[1..], Duration::from_secs(100), 8), vec![0, 1]);
}

#[test]
fn a_group_runs_each_kernel_once_in_the_order_variants_first_appear() {
    let v = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let groups = vec![
        v(&["base"]),
        v(&["base", "async-align-v1"]),
        v(&["base"]),
        v(&["base", "sync-ra-when-disabled"]),
        v(&["base", "async-align-v1"]),
    ];
    assert_eq!(confirm::variants_of(&groups), v(&["base", "async-align-v1", "sync-ra-when-disabled"]));
    assert!(confirm::variants_of(&[]).is_empty());
}

/// What a batched run costs is learnt from the runs' walls (each a share of its boot):
/// eight runs of one boot of 80 s make the next estimate 10 s a run.
#[test]
fn costs_learn_from_batched_runs() {
    let mut c = Costs::default();
    assert_eq!(c.estimate(2, true), GUESS_RUN * 2);
    assert_eq!(c.estimate(1, false), GUESS_RUN + GUESS_IMAGE);
    c.record(8, Duration::from_secs(80), Some(Duration::from_secs(30)));
    assert_eq!(c.per_run(), Duration::from_secs(10));
    assert_eq!(c.estimate(2, false), Duration::from_secs(50));
}

/// `variant_changes_only` (review's search) finds exactly the variant changes a full
/// search finds, and nothing else.
#[test]
fn a_search_of_variant_changes_only_finds_the_same_changes_and_nothing_else() {
    use crate::model_check::Predictor;
    let pol = vec![
        ("base".to_string(), Predictor::Port(radiff_model::Policy::BASE)),
        ("async-align-v1".to_string(), Predictor::Port(radiff_model::Policy::for_variant("async-align-v1").unwrap())),
    ];
    let o = Options { max_scenarios: Some(300), budget: Duration::from_secs(3600), ..Options::default() };
    let full = search(&o, &pol);
    let only = search(&Options { variant_changes_only: true, ..o }, &pol);
    let changes = |r: &SearchResult| -> Vec<(String, u64)> {
        r.groups.iter().filter(|(_, f)| f.variant.is_some()).map(|(k, f)| (k.clone(), f.group_size)).collect()
    };
    assert!(!changes(&full).is_empty(), "async-align-v1 changes some of 300 scenarios");
    assert!(full.groups.values().any(|f| f.variant.is_none()), "the full search has single-trace findings");
    assert!(only.groups.values().all(|f| f.variant.is_some()), "only variant changes");
    assert_eq!(changes(&only), changes(&full));
}

#[test]
fn the_summary_says_which_variants_the_hybrid_modelled() {
    assert!(hybrid_lines(&base()).is_empty(), "the Rust port is no hybrid");
    let o = Options::default();
    let line = "my-fix: the hybrid: mm/readahead.c of my-fix ran as C (the tree changes force_page_cache_ra())";
    let report = Report { hybrids: vec![line.to_string()], ..Default::default() };
    let md = markdown::markdown(&report, &o);
    assert!(md.contains(&format!("Modelled by {line}.")), "{md}");
}

#[test]
fn hints_over_a_range_are_drawn_their_ends_inside_a_page_or_not_and_the_model_gets_them() {
    let (mut ranged, mut inside_a_page) = (std::collections::BTreeSet::new(), 0);
    for i in 0..3000 {
        let g = generate::generate(5, i);
        for step in &g.steps {
            let GenStep::Fadvise { advice, range: Some((offset, len)) } = step else { continue };
            ranged.insert(format!("{advice:?}"));
            inside_a_page += (offset % 4096 != 0 || len % 4096 != 0) as usize;
            assert!(*offset < g.file_size && *len > 0, "{step:?} in a {} file", g.file_size);
            let s = scenario_of(&g, &["base".into()]).unwrap();
            let ops = synthetic_input(&s).ops;
            assert!(
                ops.iter().any(|op| matches!(op, Op::Fadvise { offset: o, len: l, .. } if o == offset && l == len)),
                "the model's input has no fadvise of {len} at {offset}: {ops:?}"
            );
        }
    }
    assert_eq!(ranged.into_iter().collect::<Vec<_>>(), ["Dontneed", "Willneed"]);
    assert!(inside_a_page > 0, "no range with an end inside a page");
    // Shrinking takes the range away: a hint over the whole file is the simpler one.
    let mut step = GenStep::Fadvise { advice: Advice::Dontneed, range: Some((4096 + 512, MIB + 100)) };
    for edit in shrink::STEP_EDITS {
        edit(&mut step);
    }
    assert_eq!(step, GenStep::Fadvise { advice: Advice::Dontneed, range: None });
}
