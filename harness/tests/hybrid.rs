//! The hybrid model on real C: 7.3.4's mm/readahead.c (the configured base's, as
//! `./setup` fetched it) compiled with radiff's header and run in the model, against the
//! Rust port; seed patches against their policies; a patch that does not compile.
//!
//! Needs gcc and the base's source (`./setup` installs both): without them each test
//! fails, saying which is missing.

use std::path::PathBuf;

use radiff::cache::Cache;
use radiff::hybrid::{make, Made};
use radiff::hybrid_check::{hybrid_check, CheckOptions};
use radiff::kernels::{Builder, Kernels};
use radiff::port::{base_files, DirFiles};

fn root() -> PathBuf {
    radiff::repo_root()
}

/// The base's mm/readahead.c; a test without gcc or the source fails, saying why.
fn base_readahead() -> String {
    let why = |w: String| -> String { panic!("cannot run: {w}") };
    if std::process::Command::new("gcc").arg("--version").output().is_err() {
        return why("gcc is missing (apt-get install gcc): the hybrid compiles the tree's C".into());
    }
    let kernels = match Kernels::load(&root()) {
        Ok(k) => k,
        Err(e) => return why(format!("kernels.yaml: {e}")),
    };
    let cache = Cache::from_env();
    let files = match base_files(&Builder::new(&kernels, &cache)) {
        Ok(f) => f,
        Err(e) => return why(format!("the base's source is not there ({e}); ./setup fetches it")),
    };
    files.read("mm/readahead.c").ok().flatten().unwrap_or_else(|| why("the base has no mm/readahead.c".into()))
}

fn check(variant: Option<&str>, policy: Option<&str>, count: u64) -> (String, bool) {
    base_readahead();
    let kernels = Kernels::load(&root()).unwrap();
    let o = CheckOptions {
        variant: variant.map(str::to_string),
        policy: policy.map(str::to_string),
        count,
        seed: 7,
        threads: 2,
        show: 3,
        ..Default::default()
    };
    hybrid_check(&root(), &kernels, &Cache::from_env(), &o).unwrap()
}

#[test]
fn the_hybrid_of_the_unpatched_base_is_the_rust_port_on_every_scenario_and_generated_ones() {
    let (text, agreed) = check(None, None, 400);
    assert!(agreed, "{text}");
    assert!(text.contains(": 0 of "), "{text}");
}

#[test]
fn seed_000_v1_v2_and_seed_001_as_c_are_their_policies() {
    // v2 adds a member to struct readahead_control (pagemap.h) and a static helper.
    for v in ["async-align-v1", "async-align-v2", "sync-ra-when-disabled"] {
        let (text, agreed) = check(Some(v), None, 300);
        assert!(agreed, "{v}: {text}");
    }
}

#[test]
fn a_patched_function_as_c_parts_from_the_base_port_where_the_patch_decides() {
    // The check has teeth: seed 000 v1's C is not the base's Rust port.
    let (text, agreed) = check(Some("async-align-v1"), Some("base"), 50);
    assert!(!agreed, "{text}");
    assert!(text.contains("scenarios/1mib_after_4k.yaml: rust port and hybrid part at window"), "{text}");
}

#[test]
fn a_function_that_does_not_compile_gives_the_compilers_first_error_with_its_line() {
    let source = base_readahead();
    let broken = source.replacen("ractl->_nr_pages += 1UL << order;", "ractl->_nr_pages += ractl->no_such_field;", 1);
    assert_ne!(broken, source, "the line this test breaks is gone from the base's mm/readahead.c");
    let line = broken.lines().position(|l| l.contains("no_such_field")).unwrap() + 1;
    let tree = DirFiles::from_map([("mm/readahead.c", broken.as_str())]);
    match make(&Cache::from_env(), &tree).unwrap() {
        Made::DoesNotCompile { error, .. } => {
            assert!(error.first_error.starts_with(&format!("mm/readahead.c:{line}:")), "{}", error.first_error);
            assert!(error.first_error.contains("no_such_field"), "{}", error.first_error);
        }
        Made::Ready(_) => panic!("a reference to a field the struct lacks compiled"),
    }
}

/// hybrid-check on the base's mm/readahead.c with `edit` applied to it, as a tree of its own.
fn check_edited(edit: impl Fn(&str) -> String) -> (String, bool) {
    let source = base_readahead();
    let edited = edit(&source);
    assert_ne!(edited, source, "the line this test edits is gone from the base's mm/readahead.c");
    let tree = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tree.path().join("mm")).unwrap();
    std::fs::write(tree.path().join("mm/readahead.c"), edited).unwrap();
    let o = CheckOptions {
        tree: Some(tree.path().to_path_buf()),
        count: 40,
        seed: 3,
        threads: 2,
        show: 1,
        ..Default::default()
    };
    hybrid_check(&root(), &Kernels::load(&root()).unwrap(), &Cache::from_env(), &o).unwrap()
}

/// The number of async windows the hybrid of the base with `edit` applied to its
/// mm/readahead.c, and `member` added to its `struct file_ra_state`, gives on the headline,
/// and the Rust port's.
fn asyncs_with_member(member: &str, edit: impl Fn(&str) -> String) -> (usize, usize) {
    let source = base_readahead();
    let edited = edit(&source);
    assert_ne!(edited, source, "a line this test edits is gone from the base's mm/readahead.c");
    let kernels = Kernels::load(&root()).unwrap();
    let cache = Cache::from_env();
    let base = base_files(&Builder::new(&kernels, &cache)).unwrap();
    let fs_h = base.read("include/linux/fs.h").unwrap().expect("the base has include/linux/fs.h");
    let grown = fs_h.replacen("struct file_ra_state {\n", &format!("struct file_ra_state {{\n\t{member};\n"), 1);
    assert_ne!(grown, fs_h, "struct file_ra_state is gone from the base's include/linux/fs.h");
    let tree = DirFiles::from_map([("mm/readahead.c", edited.as_str()), ("include/linux/fs.h", grown.as_str())]);
    let Made::Ready(hybrid) = make(&cache, &tree).unwrap() else {
        panic!("the tree with a new member did not compile")
    };
    let c = hybrid.loaded.table(None).unwrap();
    let scenario = radiff::scenario::Scenario::load(&root().join("scenarios/1mib_after_4k.yaml")).unwrap();
    let input = radiff::explore::synthetic_input(&scenario);
    let policy = radiff_model::Policy::for_variant("base").unwrap();
    let config = radiff_model::ModelConfig::default();
    let asyncs =
        |t: &radiff_model::Trace| t.windows.iter().filter(|w| w.trigger == radiff_model::Trigger::Async).count();
    let port = asyncs(&radiff_model::predict_with(&input, &policy, &config));
    (asyncs(&radiff_model::predict_hybrid(&input, &policy, &config, &c).unwrap()), port)
}

#[test]
fn a_member_a_patch_adds_to_struct_file_ra_state_keeps_its_value_from_one_call_to_the_next() {
    // The patch: a counter in file->f_ra, and no async readahead after the second.
    let counted = "\tif (++ra->radiff_test_asyncs > 2)\n\t\treturn;\n\ttrace_page_cache_async_ra(";
    let (patched, port) = asyncs_with_member("unsigned int radiff_test_asyncs", |s| {
        s.replacen("\ttrace_page_cache_async_ra(", counted, 1)
    });
    // Zeroed for each call, the counter would never pass 1 and every async window would stay.
    assert!(port > 2, "the headline has {port} async windows on the port");
    assert_eq!(patched, 2, "the counter in file->f_ra did not last from one call to the next ({port} on the port)");
}

#[test]
fn a_patched_file_ra_state_init_runs_as_c_at_open() {
    // The patch: file_ra_state_init() gives each open file three async readaheads.
    let (patched, port) = asyncs_with_member("unsigned int radiff_test_left", |s| {
        let init = "\tra->prev_pos = -1;\n";
        s.replacen(init, &format!("{init}\tra->radiff_test_left = 3;\n"), 1).replacen(
            "\ttrace_page_cache_async_ra(",
            "\tif (!ra->radiff_test_left)\n\t\treturn;\n\tra->radiff_test_left--;\n\ttrace_page_cache_async_ra(",
            1,
        )
    });
    // Left at zero (the port's file_ra_state_init), no async readahead would run at all.
    assert!(port > 3, "the headline has {port} async windows on the port");
    assert_eq!(patched, 3, "file_ra_state_init()'s C did not set up f_ra at open ({port} on the port)");
}

#[test]
fn a_patched_function_that_dereferences_null_is_reported_per_scenario_and_the_run_goes_on() {
    let null = "\tfolio_clear_readahead(folio);\n\tif (ra->size > 64)\n\t\t*(volatile int *)0 = 1;\n";
    let (text, agreed) = check_edited(|s| s.replacen("\tfolio_clear_readahead(folio);\n", null, 1));
    assert!(!agreed, "{text}");
    assert!(text.contains(": the hybrid's page_cache_async_ra() crashed with SIGSEGV in system call "), "{text}");
    // Scenarios whose windows stay small still ran and agree: not every scenario crashed.
    let first = text.lines().next().unwrap();
    let counts: Vec<&str> = first.split("policy base: ").nth(1).unwrap().split(' ').collect();
    let (parted, total): (u64, u64) = (counts[0].parse().unwrap(), counts[2].parse().unwrap());
    assert!(parted > 0 && parted < total, "{first}");
}

#[test]
fn a_file_ra_state_init_that_crashes_is_reported_at_open() {
    let null = "\tra->prev_pos = -1;\n\t*(volatile int *)0 = 1;\n";
    let (text, agreed) = check_edited(|s| s.replacen("\tra->prev_pos = -1;\n", null, 1));
    assert!(!agreed, "{text}");
    assert!(
        text.contains(": the hybrid's file_ra_state_init() crashed with SIGSEGV as a file was opened, before the scenario's first system call; the run went on"),
        "{text}"
    );
}

#[test]
fn a_bug_on_in_the_c_is_reported_with_its_line() {
    let bug = "\tfolio_clear_readahead(folio);\n\tBUG_ON(ra->size > 64);\n";
    let (text, _) = check_edited(|s| s.replacen("\tfolio_clear_readahead(folio);\n", bug, 1));
    let source = base_readahead().replacen("\tfolio_clear_readahead(folio);\n", bug, 1);
    let line = source.lines().position(|l| l.contains("BUG_ON(ra->size > 64)")).unwrap() + 1;
    assert!(text.contains("crashed with SIGILL in system call "), "{text}");
    assert!(text.contains(&format!("(BUG() at mm/readahead.c:{line})")), "{text}");
}

#[test]
fn a_kernel_without_a_policy_is_checked_against_the_hybrid_where_its_changes_run_as_c() {
    use radiff::hybrid::{choose, Choice};
    base_readahead();
    let kernels = Kernels::load(&root()).unwrap();
    let cache = Cache::from_env();
    assert!(matches!(&*choose(&kernels, &cache, "base"), Choice::Port), "the unpatched base is the port");
    match &*choose(&kernels, &cache, "async-align-v1") {
        Choice::Hybrid { predictor, changed } => {
            assert_eq!(changed, &["page_cache_async_ra".to_string()]);
            // The predictor is the C: on the headline it gives v1's trace, not the base's.
            let s = radiff::scenario::Scenario::load(&root().join("scenarios/1mib_after_4k.yaml")).unwrap();
            let input = radiff::explore::synthetic_input(&s);
            let (trace, _, crash) = predictor.run(&input);
            assert!(crash.is_none());
            let v1 = radiff_model::Policy::for_variant("async-align-v1").unwrap();
            assert_eq!(trace, radiff_model::predict(&input, &v1));
            assert_ne!(trace, radiff_model::predict(&input, &radiff_model::Policy::BASE));
        }
        other => panic!("async-align-v1: expected the hybrid, got {other:?}"),
    }
    match &*choose(&kernels, &cache, "f2fs-extent-ra") {
        Choice::Not(why) => assert!(why.contains("f2fs_mpage_readpages() in fs/f2fs/data.c"), "{why}"),
        other => panic!("f2fs-extent-ra: expected no hybrid, got {other:?}"),
    }
}

#[test]
fn explore_searches_a_patch_without_a_policy_with_the_hybrid_and_finds_where_it_changes_requests() {
    use radiff::explore::{policies_in, search, without_policy_in, Options};
    use radiff::kernels::{ModelExpectation, Variant};
    use radiff::model_check::Predictor;
    base_readahead();
    // Seed 000's v1 mail under a name the model has no policy for.
    let mut kernels = Kernels::load(&root()).unwrap();
    let patches = kernels.variant("async-align-v1").unwrap().patches.clone();
    kernels.variants.push(Variant { name: "unnamed-fix".into(), patches, model: ModelExpectation::None });
    let names = vec!["base".to_string(), "unnamed-fix".to_string()];
    assert_eq!(without_policy_in(Some(&kernels), &names).unwrap(), None, "the model searches it: no kernels-only path");
    let pol = policies_in(Some(&kernels), &names).unwrap();
    assert!(matches!(pol[1].1, Predictor::Hybrid { .. }), "{:?}", pol[1].1);
    let said = radiff::explore::hybrid_lines(&pol);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("unnamed-fix: the hybrid: mm/readahead.c of unnamed-fix ran as C (the tree changes ")
            && said[0].contains("page_cache_async_ra()"),
        "{said:?}"
    );
    let o = Options { variants: names, max_scenarios: Some(400), threads: 2, seed: 1, ..Options::default() };
    let r = search(&o, &pol);
    assert_eq!(r.scenarios, 400);
    assert!(r.invalid.is_empty(), "{:?}", r.invalid);
    let changed = r.groups.values().filter(|f| f.variant.as_deref() == Some("unnamed-fix")).count();
    assert!(changed > 0, "no scenario where the patch's C changes the trace, in {} scenarios", r.scenarios);
    eprintln!("hybrid search: {} scenarios at {:.0}/s, {changed} variant-change groups", r.scenarios, r.rate());
}

#[test]
fn a_patched_function_that_loops_forever_is_stopped_at_its_time_limit_and_the_run_goes_on() {
    radiff::hybrid::watchdog::set_call_limit(std::time::Duration::from_secs(1));
    // A loop only large windows enter: small ones still run and agree.
    let lp = "\tfolio_clear_readahead(folio);\n\twhile (ra->size > 256)\n\t\t;\n";
    let (text, agreed) = check_edited(|s| s.replacen("\tfolio_clear_readahead(folio);\n", lp, 1));
    assert!(!agreed, "{text}");
    assert!(text.contains("crashed with SIGXCPU (radiff's time limit on one call into the C"), "{text}");
}
