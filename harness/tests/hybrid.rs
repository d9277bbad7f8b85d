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

/// The model's input for the repository's scenario `name` (under scenarios/).
fn scenario_input(name: &str) -> radiff_model::Input {
    let s = radiff::scenario::Scenario::load(&root().join("scenarios").join(name)).unwrap();
    radiff::explore::synthetic_input(&s)
}

/// The base's mm/readahead.c; a test without gcc or the source fails, saying why.
fn base_readahead() -> String {
    base_file("mm/readahead.c")
}

/// The base's `file`; a test without gcc or the source fails, saying why.
fn base_file(file: &str) -> String {
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
    files.read(file).ok().flatten().unwrap_or_else(|| why(format!("the base has no {file}")))
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
fn every_seed_as_c_is_its_policy() {
    // v2 adds a member to struct readahead_control (pagemap.h) and a static helper; seed
    // 003 changes f2fs_mpage_readpages() in fs/f2fs/data.c.
    for v in ["async-align-v1", "async-align-v2", "sync-ra-when-disabled", "f2fs-extent-ra"] {
        let (text, agreed) = check(Some(v), None, 300);
        assert!(agreed, "{v}: {text}");
        assert!(
            text.contains(
                "f2fs_readahead, f2fs_read_data_folio, ext4_readahead, ext4_read_folio, madvise_willneed, do_fault_around, finish_fault as C"
            ),
            "{v}: {text}"
        );
    }
}

#[test]
fn a_patched_function_as_c_parts_from_the_base_port_where_the_patch_decides() {
    // The check has teeth: seed 000 v1's C is not the base's Rust port.
    let (text, agreed) = check(Some("async-align-v1"), Some("base"), 50);
    assert!(!agreed, "{text}");
    assert!(text.contains("scenarios/1mib_after_4k.yaml: rust port and hybrid part at window"), "{text}");
    // It says which function the patch changed: the part may be its code, not the port.
    assert!(
        text.contains("with async-align-v1's patches changes 1 of the functions that ran as C here from Linux 7.3.4 (page_cache_async_ra();"),
        "{text}"
    );
    let (agreed_text, _) = check(None, None, 20);
    assert!(!agreed_text.contains("of the functions that ran as C here"), "{agreed_text}");
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
    check_edited_file("mm/readahead.c", edit)
}

/// hybrid-check on a tree of the base's files the hybrid compiles (mm/readahead.c,
/// mm/fadvise.c, mm/filemap.c, fs/f2fs/data.c), with `edit` applied to `file`, one of them.
fn check_edited_file(file: &str, edit: impl Fn(&str) -> String) -> (String, bool) {
    let tree = tempfile::tempdir().unwrap();
    for f in radiff::hybrid::SOURCES {
        let source = base_file(f);
        let text = if f == file { edit(&source) } else { source.clone() };
        assert!(f != file || text != source, "the line this test edits is gone from the base's {f}");
        let path = tree.path().join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let o = CheckOptions {
        tree: Some(tree.path().to_path_buf()),
        count: 40,
        seed: 3,
        threads: 2,
        // Every scenario that parts, shown: tests check which file systems they are.
        show: 10_000,
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
    let c = hybrid.workers.clone();
    let input = scenario_input("1mib_after_4k.yaml");
    let policy = radiff_model::Policy::for_variant("base").unwrap();
    let config = radiff_model::ModelConfig::default();
    let asyncs =
        |t: &radiff_model::Trace| t.windows.iter().filter(|w| w.trigger == radiff_model::Trigger::Async).count();
    let port = asyncs(&radiff_model::predict_with(&input, &policy, &config));
    (asyncs(&hybrid_trace(&c, &input, &policy, &config)), port)
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
    assert_some_but_not_all_part(&text);
}

#[test]
fn a_patched_function_that_makes_a_raw_system_call_is_stopped_before_the_call_and_nothing_is_written() {
    // openat(AT_FDCWD, CANARY, O_WRONLY | O_CREAT, 0644) by inline assembly: no libc, no
    // header, what a hostile patch would do. The worker's filter refuses it: the file is
    // never made.
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("made-by-the-patch");
    let raw = format!(
        "\tfolio_clear_readahead(folio);\n\t{{ long r; asm volatile(\"syscall\" : \"=a\"(r) : \"a\"(257L), \"D\"(-100L), \"S\"(\"{}\"), \"d\"(0101L), \"r\"(0) : \"rcx\", \"r11\", \"memory\"); }}\n",
        canary.display()
    );
    let (text, agreed) = check_edited(|s| s.replacen("\tfolio_clear_readahead(folio);\n", &raw, 1));
    assert!(!agreed, "{text}");
    assert!(
        text.contains(": the hybrid's page_cache_async_ra() crashed with SIGSYS in system call ")
            && text.contains("the C made a system call (openat), which radiff's worker forbids"),
        "{text}"
    );
    assert!(!canary.exists(), "the patch's C made {}", canary.display());
    // Scenarios without an async window never reach the call and still agree.
    assert_some_but_not_all_part(&text);
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
            let input = scenario_input("1mib_after_4k.yaml");
            let (trace, _, crash) = predictor.run(&input);
            assert!(crash.is_none());
            let v1 = radiff_model::Policy::for_variant("async-align-v1").unwrap();
            assert_eq!(trace, radiff_model::predict(&input, &v1));
            assert_ne!(trace, radiff_model::predict(&input, &radiff_model::Policy::BASE));
        }
        other => panic!("async-align-v1: expected the hybrid, got {other:?}"),
    }
    // Seed 003 changes f2fs_mpage_readpages() in fs/f2fs/data.c, which runs as C too.
    match &*choose(&kernels, &cache, "f2fs-extent-ra") {
        Choice::Hybrid { changed, .. } => assert_eq!(changed, &["f2fs_mpage_readpages".to_string()]),
        other => panic!("f2fs-extent-ra: expected the hybrid, got {other:?}"),
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
        said[0].starts_with(
            // A patch to mm/readahead.c alone: the other files' functions stay the port.
            "unnamed-fix: the hybrid: mm/readahead.c (with mm/filemap.c's page_cache_next_miss(), page_cache_prev_miss()) of unnamed-fix ran as C (the tree changes page_cache_async_ra())"
        ),
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

/// The hybrid of the base's mm/readahead.c and its mm/fadvise.c with `edit` applied.
fn with_fadvise(edit: impl Fn(&str) -> String) -> radiff::hybrid::Hybrid {
    let fadvise = base_file("mm/fadvise.c");
    let edited = edit(&fadvise);
    assert_ne!(edited, fadvise, "the line this test edits is gone from the base's mm/fadvise.c");
    hybrid_of(&edited)
}

/// The hybrid of the base's mm/readahead.c and `fadvise` as its mm/fadvise.c.
fn hybrid_of(fadvise: &str) -> radiff::hybrid::Hybrid {
    let readahead = base_readahead();
    let tree = DirFiles::from_map([("mm/readahead.c", readahead.as_str()), ("mm/fadvise.c", fadvise)]);
    match make(&Cache::from_env(), &tree).unwrap() {
        Made::Ready(h) => h,
        Made::DoesNotCompile { error, .. } => panic!("mm/readahead.c did not compile: {}", error.first_error),
    }
}

/// The hybrid's trace on `input`, from a worker; a crash fails the test.
fn hybrid_trace(
    c: &radiff::hybrid::Workers,
    input: &radiff_model::Input,
    policy: &radiff_model::Policy,
    config: &radiff_model::ModelConfig,
) -> radiff_model::Trace {
    let o = c.predict(input, policy, config);
    assert!(o.crash.is_none(), "the hybrid crashed: {}", o.crash.unwrap());
    o.trace
}

/// The Rust port's trace and the hybrid's on `input`.
fn port_and_hybrid(
    c: &radiff::hybrid::Workers,
    input: &radiff_model::Input,
) -> (radiff_model::Trace, radiff_model::Trace) {
    let config = radiff_model::ModelConfig::default();
    let port = radiff_model::predict_with(input, &radiff_model::Policy::BASE, &config);
    (port, hybrid_trace(c, input, &radiff_model::Policy::BASE, &config))
}

/// Whether the hybrid's object defines `function` (as its worker says).
fn runs_as_c(h: &radiff::hybrid::Hybrid, function: &str) -> bool {
    h.workers.functions().unwrap().iter().any(|f| f == function)
}

/// `advice` on the whole file, then the file read 128 KiB at a time, on `fs`.
fn advised_then_read(fs: radiff_model::FsKind, advice: radiff_model::Advice) -> radiff_model::Input {
    use radiff_model::Op;
    let size = 16 << 20;
    let mut ops = vec![Op::Fadvise { fd: 0, offset: 0, len: 0, advice }];
    ops.extend((0..size / (128 << 10)).map(|i| Op::Read { fd: 0, offset: i * (128 << 10), len: 128 << 10 }));
    let mut input = radiff_model::Input::xfs_on_nvme(size, ops);
    if fs == radiff_model::FsKind::F2fs {
        input.fs = fs;
        input.mapping = radiff_model::MappingLimits::f2fs();
    }
    input
}

/// The largest `ra_pages` a trace's windows saw.
fn max_ra_pages(t: &radiff_model::Trace) -> u64 {
    t.windows.iter().map(|w| w.ra.ra_pages).max().unwrap_or(0)
}

#[test]
fn a_generic_fadvise_whose_sequential_gives_4x_parts_from_the_port_on_sequential_advice_only() {
    use radiff_model::{Advice, FsKind};
    let h = with_fadvise(|s| {
        s.replacen("file->f_ra.ra_pages = bdi->ra_pages * 2;", "file->f_ra.ra_pages = bdi->ra_pages * 4;", 1)
    });
    let c = h.workers.clone();
    assert!(runs_as_c(&h, "generic_fadvise"), "{:?}", c.functions());
    let input = advised_then_read(FsKind::Xfs, Advice::Sequential);
    let bdi = input.queue.read_ahead_kb * 1024 / 4096;
    let (port, hybrid) = port_and_hybrid(&c, &input);
    assert_eq!(max_ra_pages(&port), 2 * bdi);
    assert_eq!(max_ra_pages(&hybrid), 4 * bdi, "the tree's SEQUENTIAL did not set f_ra.ra_pages");
    // Where the edit decides nothing, the two agree: other advice, and f2fs's SEQUENTIAL
    // (f2fs_file_fadvise() sets ra_pages itself, never calling generic_fadvise()).
    for (fs, advice) in
        [(FsKind::Xfs, Advice::Normal), (FsKind::Xfs, Advice::Random), (FsKind::F2fs, Advice::Sequential)]
    {
        let (port, hybrid) = port_and_hybrid(&c, &advised_then_read(fs, advice));
        assert!(port == hybrid, "{fs:?} {advice:?}: the hybrid parts from the port");
    }
    // On generated scenarios: every one where they part has SEQUENTIAL advice.
    let checked = radiff::hybrid_check::check::check(
        &[],
        400,
        11,
        2,
        &radiff_model::Policy::BASE,
        &c,
        radiff::hybrid_check::check::Compare::Windows,
    );
    assert!(!checked.parted.is_empty(), "no generated scenario parts on a 4x SEQUENTIAL");
    for p in &checked.parted {
        let radiff::hybrid_check::check::Reproducer::Yaml(yaml) = &p.reproducer else { unreachable!() };
        assert!(yaml.contains("advice: sequential"), "{} parts without SEQUENTIAL advice:\n{yaml}", p.name);
        assert!(!yaml.contains("fs: f2fs"), "{} parts on f2fs:\n{yaml}", p.name);
    }
}

#[test]
fn a_generic_fadvise_whose_willneed_does_nothing_reads_nothing_ahead() {
    use radiff_model::{Advice, FsKind, Op};
    let h = with_fadvise(|s| {
        s.replacen("force_page_cache_readahead(mapping, file, start_index, nrpages);", "(void)nrpages;", 1)
    });
    let c = h.workers.clone();
    let willneed = |op: Op| radiff_model::Input::xfs_on_nvme(4 << 20, vec![op]);
    let requests = |t: &radiff_model::Trace| t.windows.iter().map(|w| w.requests.len()).sum::<usize>();
    // fadvise(WILLNEED) and readahead(2) (vfs_fadvise(..., POSIX_FADV_WILLNEED)) both.
    for op in [
        Op::Fadvise { fd: 0, offset: 0, len: 1 << 20, advice: Advice::Willneed },
        Op::Readahead { fd: 0, offset: 1 << 20, len: 1 << 20 },
    ] {
        let (port, hybrid) = port_and_hybrid(&c, &willneed(op));
        assert!(requests(&port) > 0, "{op:?}: the port reads nothing");
        assert_eq!(requests(&hybrid), 0, "{op:?}: the tree's WILLNEED did nothing, the hybrid read");
    }
    let (port, hybrid) = port_and_hybrid(&c, &advised_then_read(FsKind::Xfs, Advice::Dontneed));
    assert!(port == hybrid, "DONTNEED parts");
}

/// The file read 128 KiB at a time up to 2 MiB, a WILLNEED of `[4, 5)` MiB, then read on
/// to 8 MiB: a hint in the middle of a stream ("does a WILLNEED in the middle of a stream
/// destroy the readahead state?").
fn willneed_mid_stream() -> radiff_model::Input {
    use radiff_model::{Advice, Op};
    let read = |i: u64| Op::Read { fd: 0, offset: i * (128 << 10), len: 128 << 10 };
    let mut ops: Vec<Op> = (0..16).map(read).collect();
    ops.push(Op::Fadvise { fd: 0, offset: 4 << 20, len: 1 << 20, advice: Advice::Willneed });
    ops.extend((16..64).map(read));
    radiff_model::Input::xfs_on_nvme(8 << 20, ops)
}

/// The review's hint detectors on `input` with the port as base and `c` as the patch: the
/// traces with its hints and without them, then what `hints_ignored` and `hints_reset` say.
fn hint_detectors(c: &radiff::hybrid::Workers, input: &radiff_model::Input) -> (Option<String>, Option<String>) {
    use radiff::review::questions::{hints_ignored, hints_reset, without_hints, Hinted};
    let unhinted = radiff_model::Input { ops: without_hints(&input.ops).expect("a hint"), ..input.clone() };
    let (base, patch) = port_and_hybrid(c, input);
    let (base0, patch0) = port_and_hybrid(c, &unhinted);
    let (b, p) = (Hinted { with: &base, without: &base0 }, Hinted { with: &patch, without: &patch0 });
    (hints_ignored(b, p), hints_reset(b, p))
}

#[test]
fn the_reviews_hint_detectors_name_a_willneed_the_patch_ignores_and_one_that_resets_the_stream() {
    // The base's own C: neither fires.
    let same =
        with_fadvise(|s| s.replacen("\tcase POSIX_FADV_WILLNEED:", "\tcase POSIX_FADV_WILLNEED: /* as is */", 1));
    assert_eq!(hint_detectors(&same.workers, &willneed_mid_stream()), (None, None));
    // WILLNEED does nothing: the same reads with it as without, where base reads ahead.
    let ignored = with_fadvise(|s| {
        s.replacen("force_page_cache_readahead(mapping, file, start_index, nrpages);", "(void)nrpages;", 1)
    });
    let (said, reset) = hint_detectors(&ignored.workers, &willneed_mid_stream());
    assert!(said.as_deref().is_some_and(|s| s.starts_with("hints change nothing: ")), "{said:?}");
    assert_eq!(reset, None);
    // WILLNEED reads ahead, then forgets the stream (file_ra_state_init(): prev_pos -1).
    let forgets = with_fadvise(|s| {
        s.replacen(
            "force_page_cache_readahead(mapping, file, start_index, nrpages);",
            "force_page_cache_readahead(mapping, file, start_index, nrpages);\n\t\tfile_ra_state_init(&file->f_ra, mapping);",
            1,
        )
    });
    let (ignored, said) = hint_detectors(&forgets.workers, &willneed_mid_stream());
    assert_eq!(ignored, None, "it heeds the hint");
    assert!(
        said.as_deref().is_some_and(|s| s.starts_with("hints reset the stream: 1 readahead call found")),
        "{said:?}"
    );
}

#[test]
fn generic_fadvise_as_c_evicts_on_dontneed_as_the_port_does_on_ranges_with_partial_pages() {
    use radiff_model::{Advice, Op};
    let h = hybrid_of(&base_file("mm/fadvise.c"));
    let c = h.workers.clone();
    // Read 1 MiB, drop ranges of it (partial first and last pages, the end of the file,
    // len 0), then read it again: what was dropped is read again.
    let size = 1 << 20;
    for (offset, len) in [(0, size), (100, 300_000), (4096, 8192), (500_000, 0), (0, size - 1), (8191, 1)] {
        let ops = vec![
            Op::Read { fd: 0, offset: 0, len: size },
            Op::Fadvise { fd: 0, offset, len, advice: Advice::Dontneed },
            Op::Read { fd: 0, offset: 0, len: size },
        ];
        let (port, hybrid) = port_and_hybrid(&c, &radiff_model::Input::xfs_on_nvme(size, ops));
        assert!(port == hybrid, "DONTNEED of {len} at {offset}: the hybrid parts from the port");
    }
}

#[test]
fn a_tree_whose_fadvise_c_does_not_compile_runs_readahead_c_as_c_and_names_the_error() {
    let broken = |s: &str| s.replacen("file->f_ra.ra_pages = bdi->ra_pages * 2;", "file->f_ra.no_such_member = 2;", 1);
    let h = with_fadvise(broken);
    let line = broken(&base_file("mm/fadvise.c")).lines().position(|l| l.contains("no_such_member")).unwrap() + 1;
    let error = h.left_out_of("mm/fadvise.c").expect("mm/fadvise.c compiled with a member struct file_ra_state lacks");
    assert!(error.first_error.starts_with(&format!("mm/fadvise.c:{line}:")), "{}", error.first_error);
    assert!(error.first_error.contains("no_such_member"), "{}", error.first_error);
    assert!(runs_as_c(&h, "page_cache_sync_ra") && !runs_as_c(&h, "generic_fadvise"), "{:?}", h.workers.functions());
    let (text, agreed) = check_edited_file("mm/fadvise.c", broken);
    assert!(agreed, "{text}");
    // A function the file declares and no unit defines fails the link: the object is made
    // without mm/fadvise.c, naming it.
    let h = with_fadvise(|s| {
        s.replacen("int generic_fadvise(", "int radiff_test_nowhere(void);\nint generic_fadvise(", 1).replacen(
            "\t\tlru_add_drain();\n",
            "\t\tlru_add_drain();\n\t\tradiff_test_nowhere();\n",
            1,
        )
    });
    let error = h.left_out_of("mm/fadvise.c").expect("mm/fadvise.c linked with a function nothing defines");
    assert!(error.first_error.contains("undefined reference to `radiff_test_nowhere'"), "{}", error.first_error);
    assert!(!runs_as_c(&h, "generic_fadvise"));
    assert!(text.contains(&format!("generic_fadvise() stays the Rust port: mm/fadvise.c does not compile with radiff's header: mm/fadvise.c:{line}:")), "{text}");
}

#[test]
fn a_generic_fadvise_that_dereferences_null_is_reported_per_scenario_and_the_run_goes_on() {
    // WILLNEED: fadvise's, readahead(2)'s and madvise(MADV_WILLNEED)'s.
    let willneed = "\t\t/* First and last PARTIAL page! */\n";
    assert_null_dereference_reported("mm/fadvise.c", willneed, "\t\t*(volatile int *)0 = 1;\n", "generic_fadvise");
}

/// `file` with `null` put before `at`: hybrid-check parts on some scenarios but not all,
/// each a crash of `function`, and goes on.
fn assert_null_dereference_reported(file: &str, at: &str, null: &str, function: &str) {
    let (text, agreed) = check_edited_file(file, |s| s.replacen(at, &format!("{null}{at}"), 1));
    assert!(!agreed, "{text}");
    assert!(text.contains(&format!(": the hybrid's {function}() crashed with SIGSEGV in system call ")), "{text}");
    assert_some_but_not_all_part(&text);
}

#[test]
fn a_variant_whose_changed_generic_fadvise_does_not_compile_gets_no_model_and_says_why() {
    use radiff::hybrid::choose::{choose, Choice};
    let text = base_file("mm/fadvise.c");
    let from = "file->f_ra.ra_pages = bdi->ra_pages * 2;";
    assert!(text.contains(from), "7.3.4's generic_fadvise() has no `{from}`");
    let after = text.replacen(from, "file->f_ra.no_such_member = 2;", 1);
    // A name of this test's own: choose() decides once per name and process.
    let name = "fadvise-does-not-compile";
    let (kernels, _dir) = with_variant(Kernels::load(&root()).unwrap(), name, "mm/fadvise.c", &text, &after);
    match &*choose(&kernels, &Cache::from_env(), name) {
        Choice::Not(why) => assert!(
            why.starts_with("it changes mm/fadvise.c, and mm/fadvise.c of ")
                && why.contains("does not compile with radiff's header")
                && why.contains("no_such_member"),
            "{why}"
        ),
        other => panic!("a changed generic_fadvise() that does not compile must leave no model: {other:?}"),
    }
}

/// The read-around of 7.3.4's `do_sync_mmap_readahead()`: a quarter of the window async.
const READ_AROUND: &str = "\t\tra->async_size = ra->ra_pages / 4;\n";

/// The hybrid of the base's mm/readahead.c, mm/fadvise.c and its mm/filemap.c with `edit`.
fn with_filemap(edit: impl Fn(&str) -> String) -> radiff::hybrid::Hybrid {
    with_edited("mm/filemap.c", edit)
}

/// The hybrid of the base's mm/readahead.c, mm/fadvise.c and its `file` with `edit`.
fn with_edited(file: &str, edit: impl Fn(&str) -> String) -> radiff::hybrid::Hybrid {
    let source = base_file(file);
    let edited = edit(&source);
    assert_ne!(edited, source, "the line this test edits is gone from the base's {file}");
    let (readahead, fadvise) = (base_readahead(), base_file("mm/fadvise.c"));
    let tree = DirFiles::from_map([
        ("mm/readahead.c", readahead.as_str()),
        ("mm/fadvise.c", fadvise.as_str()),
        (file, edited.as_str()),
    ]);
    match make(&Cache::from_env(), &tree).unwrap() {
        Made::Ready(h) => h,
        Made::DoesNotCompile { error, .. } => panic!("mm/readahead.c did not compile: {}", error.first_error),
    }
}

/// The lookahead of the first fault's read-around in `t` (`page_cache_ra_unbounded()`'s).
fn first_fault_lookahead(t: &radiff_model::Trace) -> u64 {
    use radiff_model::{Submit, Trigger};
    t.windows
        .iter()
        .filter(|w| w.trigger == Trigger::Fault)
        .flat_map(|w| &w.submits)
        .find_map(|s| match s {
            Submit::Unbounded { lookahead_size, .. } => Some(*lookahead_size),
            _ => None,
        })
        .expect("a fault that read around")
}

#[test]
fn a_patched_do_sync_mmap_readahead_runs_as_c_and_parts_from_the_port_on_mappings_only() {
    let half = "\t\tra->async_size = ra->ra_pages / 2;\n";
    let h = with_filemap(|s| s.replacen(READ_AROUND, half, 1));
    assert!(h.runs("mm/filemap.c"), "{:?}", h.left_out);
    assert!(runs_as_c(&h, "do_sync_mmap_readahead") && runs_as_c(&h, "do_async_mmap_readahead"));
    // A read() never faults: the patch changes nothing there.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("1mib_after_4k.yaml"));
    assert_eq!(port, hybrid);
    // A mapping read backwards: every fault reads around, with twice the async part.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("mmap_backward.yaml"));
    assert_ne!(port, hybrid);
    assert_eq!(first_fault_lookahead(&hybrid), 2 * first_fault_lookahead(&port));
    // hybrid-check on the tree says so, scenario by scenario.
    let (text, agreed) = check_edited_file("mm/filemap.c", |s| s.replacen(READ_AROUND, half, 1));
    assert!(!agreed, "{text}");
    assert!(text.contains("do_sync_mmap_readahead, do_async_mmap_readahead, "), "{text}");
    assert_some_but_not_all_part(&text);
}

#[test]
fn a_do_sync_mmap_readahead_that_crashes_or_hits_bug_is_reported_with_its_function_and_filemap_line() {
    let null = format!("\t\t*(volatile int *)0 = 1;\n{READ_AROUND}");
    let (text, agreed) = check_edited_file("mm/filemap.c", |s| s.replacen(READ_AROUND, &null, 1));
    assert!(!agreed, "{text}");
    assert!(text.contains(": the hybrid's do_sync_mmap_readahead() crashed with SIGSEGV in system call "), "{text}");
    assert_some_but_not_all_part(&text);
    let bug = format!("\t\tBUG_ON(ra->ra_pages > 1);\n{READ_AROUND}");
    let edited = base_file("mm/filemap.c").replacen(READ_AROUND, &bug, 1);
    let line = edited.lines().position(|l| l.contains("BUG_ON(ra->ra_pages > 1)")).unwrap() + 1;
    let (text, _) = check_edited_file("mm/filemap.c", |s| s.replacen(READ_AROUND, &bug, 1));
    assert!(text.contains(&format!("(BUG() at mm/filemap.c:{line})")), "{text}");
}

#[test]
fn a_do_sync_mmap_readahead_that_does_not_compile_stays_the_port_naming_its_line_and_the_files_others_run_as_c() {
    let broken = |s: &str| s.replacen(READ_AROUND, "\t\tra->async_size = ra->no_such_member;\n", 1);
    let h = with_filemap(broken);
    let line = broken(&base_file("mm/filemap.c")).lines().position(|l| l.contains("no_such_member")).unwrap() + 1;
    // The error is in a function only do_sync_mmap_readahead() takes: it leaves the unit.
    assert!(h.runs("mm/filemap.c"), "{:?}", h.left_out);
    let error = h
        .dropped_function("do_sync_mmap_readahead", "mm/filemap.c")
        .expect("do_sync_mmap_readahead() compiled with a member struct file_ra_state lacks");
    assert!(error.first_error.starts_with(&format!("mm/filemap.c:{line}:")), "{}", error.first_error);
    assert!(!runs_as_c(&h, "do_sync_mmap_readahead"), "{:?}", h.workers.functions());
    for other in ["do_async_mmap_readahead", "filemap_get_read_batch", "filemap_map_pages", "page_cache_sync_ra"] {
        assert!(runs_as_c(&h, other), "{other}: {:?}", h.workers.functions());
    }
    let (text, agreed) = check_edited_file("mm/filemap.c", broken);
    assert!(agreed, "{text}");
    assert!(
        text.contains(&format!("do_sync_mmap_readahead() of mm/filemap.c stays the Rust port (the file's other functions run as C): it does not compile with radiff's header: mm/filemap.c:{line}:")),
        "{text}"
    );
    // A variant that changes it gets no model, saying why.
    let text = base_file("mm/filemap.c");
    let name = "read-around-does-not-compile";
    let (kernels, _dir) = with_variant(Kernels::load(&root()).unwrap(), name, "mm/filemap.c", &text, &broken(&text));
    match &*radiff::hybrid::choose::choose(&kernels, &Cache::from_env(), name) {
        radiff::hybrid::Choice::Not(why) => assert!(
            why.contains(
                "it changes do_sync_mmap_readahead() in mm/filemap.c, and do_sync_mmap_readahead() of mm/filemap.c"
            ) && why.contains(&format!("mm/filemap.c:{line}:")),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
}

/// 7.3.4's `filemap_get_read_batch()` ends a batch at a folio marked PG_readahead, so
/// that `filemap_get_pages()` finds it last and starts the async window there.
const BATCH_ENDS_AT_READAHEAD: &str = "\t\tif (folio_test_readahead(folio))\n\t\t\tbreak;\n";

fn async_windows(t: &radiff_model::Trace) -> usize {
    t.windows.iter().filter(|w| w.trigger == radiff_model::Trigger::Async).count()
}

#[test]
fn a_patched_filemap_get_read_batch_runs_as_c_and_parts_from_the_port_on_reads_only() {
    // The batch walks on past the marked folio: filemap_get_pages() no longer finds it last.
    let h = with_filemap(|s| s.replacen(BATCH_ENDS_AT_READAHEAD, "", 1));
    assert!(runs_as_c(&h, "filemap_get_read_batch"), "{:?}", h.workers.functions());
    // A mapping read by faults never looks up a read batch: nothing changes there.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("mmap_backward.yaml"));
    assert_eq!(port, hybrid);
    // Sequential reads: the port's async windows start at the marked folio; the patch's
    // batches step over it, so fewer of them start.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("1mib_after_4k.yaml"));
    assert_ne!(port, hybrid);
    assert!(async_windows(&port) > 0 && async_windows(&hybrid) < async_windows(&port), "{port:?}\n{hybrid:?}");
    let (text, agreed) = check_edited_file("mm/filemap.c", |s| s.replacen(BATCH_ENDS_AT_READAHEAD, "", 1));
    assert!(!agreed, "{text}");
    assert!(text.contains(", filemap_get_read_batch, "), "{text}");
    assert_some_but_not_all_part(&text);
}

/// 7.3.4's `filemap_get_pages()` asks sync readahead for the rest of the read.
const SYNC_RA_FOR_THE_READ: &str = "page_cache_sync_ra(&ractl, last_index - index);";

/// The `req_count` of each window of `t` that `trigger` opened, in order.
fn req_counts(t: &radiff_model::Trace, trigger: radiff_model::Trigger) -> Vec<u64> {
    t.windows.iter().filter(|w| w.trigger == trigger).map(|w| w.req_count).collect()
}

/// Each sync window's `req_count`, in order.
fn sync_req_counts(t: &radiff_model::Trace) -> Vec<u64> {
    req_counts(t, radiff_model::Trigger::Sync)
}

#[test]
fn a_patched_filemap_read_runs_as_c_and_parts_from_the_port_on_reads_only() {
    // The read asks sync readahead for one page, whatever it wants.
    let one = |s: &str| s.replacen(SYNC_RA_FOR_THE_READ, "page_cache_sync_ra(&ractl, 1);", 1);
    let h = with_filemap(one);
    for f in ["filemap_read", "filemap_get_read_batch", "do_sync_mmap_readahead"] {
        assert!(runs_as_c(&h, f), "{f}: {:?}", h.workers.functions());
    }
    // A mapping read by faults never reads through filemap_read(): nothing changes there.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("mmap_backward.yaml"));
    assert_eq!(port, hybrid);
    // 1 MiB from the start: the port's first sync window wants the whole read; the
    // patch's, one page.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("1mib_from_start.yaml"));
    let (p, c) = (sync_req_counts(&port), sync_req_counts(&hybrid));
    assert!(p.first().is_some_and(|&n| n > 1), "{p:?}");
    assert_eq!(c.first(), Some(&1), "{c:?}");
    let (text, agreed) = check_edited_file("mm/filemap.c", one);
    assert!(!agreed, "{text}");
    assert!(text.contains(", filemap_read, "), "{text}");
    assert_some_but_not_all_part(&text);
}

#[test]
fn a_patched_filemap_get_pages_is_followed_on_a_splice_whose_filemap_splice_read_stays_the_port() {
    // filemap_get_pages()'s sync readahead asks for one page, whatever the caller wants.
    let h = with_filemap(|s: &str| s.replacen(SYNC_RA_FOR_THE_READ, "page_cache_sync_ra(&ractl, 1);", 1));
    assert!(runs_as_c(&h, "filemap_get_pages"), "{:?}", h.workers.functions());
    // splice(2) and sendfile(2) through pipes: the port's first sync window wants what the
    // pipe holds; the patch's, one page.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("splice_pipe_sizes.yaml"));
    let (p, c) = (sync_req_counts(&port), sync_req_counts(&hybrid));
    assert!(p.first().is_some_and(|&n| n > 1), "{p:?}");
    assert_eq!(c.first(), Some(&1), "{c:?}");
    // Unpatched, the same splices are the port's: the base's hybrid-check above holds every
    // repository scenario, this one among them, to it.
}

#[test]
fn a_filemap_read_that_dereferences_null_is_reported_per_scenario_with_its_function_and_the_run_goes_on() {
    let get_pages = "\t\terror = filemap_get_pages(iocb, iter->count, &fbatch, false);\n";
    let null = "\t\tif (iocb->ki_pos > 0)\n\t\t\t*(volatile int *)0 = 1;\n";
    assert_null_dereference_reported("mm/filemap.c", get_pages, null, "filemap_read");
}

#[test]
fn a_filemap_read_that_does_not_compile_stays_the_port_naming_its_line_and_the_files_others_run_as_c() {
    let broken = |s: &str| s.replacen(SYNC_RA_FOR_THE_READ, "page_cache_sync_ra(&ractl, ractl.no_such_member);", 1);
    let h = with_filemap(broken);
    let line = broken(&base_file("mm/filemap.c")).lines().position(|l| l.contains("no_such_member")).unwrap() + 1;
    let error = h.dropped_function("filemap_read", "mm/filemap.c").expect("filemap_read() compiled");
    assert!(error.first_error.starts_with(&format!("mm/filemap.c:{line}:")), "{}", error.first_error);
    assert!(!runs_as_c(&h, "filemap_read"), "{:?}", h.workers.functions());
    // The batch's walk is the read path's too, but the model's filemap_get_pages() calls it
    // on its own: it stays C, with the fault path.
    for other in ["filemap_get_read_batch", "do_sync_mmap_readahead", "filemap_map_pages"] {
        assert!(runs_as_c(&h, other), "{other}: {:?}", h.workers.functions());
    }
    let (text, agreed) = check_edited_file("mm/filemap.c", broken);
    assert!(agreed, "{text}");
    assert!(text.contains("filemap_read(), "), "{text}");
    assert!(text.contains(&format!("of mm/filemap.c stay the Rust port (the file's other functions run as C): they do not compile with radiff's header: mm/filemap.c:{line}:")), "{text}");
}

#[test]
fn a_filemap_read_that_does_not_compile_leaves_its_batches_to_the_c_filemap_get_pages_and_the_port_agrees() {
    // filemap_read()'s own line: its call of filemap_get_pages(), whose C still compiles.
    let call = "\t\terror = filemap_get_pages(iocb, iter->count, &fbatch, false);\n";
    let broken =
        |s: &str| s.replacen(call, "\t\terror = filemap_get_pages(iocb, iter->no_such_member, &fbatch, false);\n", 1);
    let h = with_filemap(broken);
    assert!(!runs_as_c(&h, "filemap_read"), "{:?}", h.workers.functions());
    assert!(runs_as_c(&h, "filemap_get_pages"), "{:?}", h.workers.functions());
    // The port's filemap_read() then asks the C for each batch (RWF_NOWAIT's -EAGAIN among
    // the repository's scenarios): the same traces as the port's.
    let (text, agreed) = check_edited_file("mm/filemap.c", broken);
    assert!(agreed, "{text}");
    assert!(text.contains(", filemap_get_pages, "), "{text}");
}

/// 7.3.4's `madvise_willneed()` advises the VMA's part of the range.
const WILLNEED_RANGE: &str = "vfs_fadvise(file, offset, end - start, POSIX_FADV_WILLNEED);";

/// The hybrid of the base's mm/readahead.c, mm/fadvise.c and its mm/madvise.c with `edit`.
fn with_madvise(edit: impl Fn(&str) -> String) -> radiff::hybrid::Hybrid {
    with_edited("mm/madvise.c", edit)
}

/// Where each forced read of `t` starts (readahead(2), fadvise and madvise WILLNEED:
/// `page_cache_ra_unbounded()` without a lookahead).
fn forced_reads(t: &radiff_model::Trace) -> Vec<u64> {
    use radiff_model::Submit;
    t.windows
        .iter()
        .flat_map(|w| &w.submits)
        .filter_map(|s| match s {
            Submit::Unbounded { index, lookahead_size: 0, .. } => Some(*index),
            _ => None,
        })
        .collect()
}

#[test]
fn a_patched_madvise_willneed_runs_as_c_with_the_trees_struct_and_parts_from_the_port_on_madvise_only() {
    // The patch advises the range that follows the one asked.
    let next = "vfs_fadvise(file, offset + (end - start), end - start, POSIX_FADV_WILLNEED);";
    let h = with_madvise(|s| s.replacen(WILLNEED_RANGE, next, 1));
    assert!(h.runs("mm/madvise.c"), "{:?}", h.left_out);
    assert!(runs_as_c(&h, "madvise_willneed"), "{:?}", h.workers.functions());
    // Reads and faults without MADV_WILLNEED: nothing changes.
    for name in ["1mib_after_4k.yaml", "mmap_backward.yaml"] {
        let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input(name));
        assert_eq!(port, hybrid, "{name}");
    }
    // readahead(2) of the file's first MiB, then MADV_WILLNEED of its second (256 pages):
    // the port reads from the second MiB's first page, the patch from the third's.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("hint_then_touch.yaml"));
    let (p, c) = (forced_reads(&port), forced_reads(&hybrid));
    assert_eq!((p.len(), c.len()), (2, 2), "{p:?} {c:?}");
    assert_eq!((c[0], c[1]), (p[0], p[1] + 256), "{p:?} {c:?}");
    // The base's own madvise_willneed() as C is the port there.
    let same = with_madvise(|s| s.replacen(WILLNEED_RANGE, &format!("{WILLNEED_RANGE}\n"), 1));
    assert!(runs_as_c(&same, "madvise_willneed"));
    assert_eq!(port_and_hybrid(&same.workers, &scenario_input("hint_then_touch.yaml")).1, port);
    let (text, agreed) = check_edited_file("mm/madvise.c", |s| s.replacen(WILLNEED_RANGE, next, 1));
    assert!(!agreed, "{text}");
    assert!(text.contains(", madvise_willneed, "), "{text}");
    assert_some_but_not_all_part(&text);
}

#[test]
fn a_madvise_willneed_whose_tree_drops_its_struct_member_leaves_it_to_the_port_naming_the_line() {
    // The tree's own struct madvise_behavior is taken: one without `range` does not
    // compile with the header's shim, and the error names the shim's line.
    let h = with_madvise(|s| s.replacen("\tstruct madvise_behavior_range range;\n", "", 1));
    let error = h.left_out_of("mm/madvise.c").expect("a struct madvise_behavior without range compiled");
    assert!(error.first_error.contains("range"), "{}", error.first_error);
    assert!(!runs_as_c(&h, "madvise_willneed") && runs_as_c(&h, "generic_fadvise"), "{:?}", h.workers.functions());
}

/// 7.3.4's `do_fault_around()` maps up to `fault_around_pages` pages from the aligned start.
const FAULT_AROUND_END: &str = "to_pte = min3(from_pte + nr_pages, ";

/// The pages of each fault-around in `t` (`mm_filemap_map_pages`: the range asked).
fn fault_arounds(t: &radiff_model::Trace) -> Vec<u64> {
    req_counts(t, radiff_model::Trigger::FaultAround)
}

#[test]
fn a_patched_do_fault_around_runs_as_c_and_parts_from_the_port_on_mappings_only() {
    // The patch maps half as many pages around a fault.
    let half = |s: &str| s.replacen(FAULT_AROUND_END, "to_pte = min3(from_pte + nr_pages / 2, ", 1);
    let h = with_edited("mm/memory.c", half);
    assert!(h.runs("mm/memory.c"), "{:?}", h.left_out);
    assert!(runs_as_c(&h, "do_fault_around"), "{:?}", h.workers.functions());
    // read(2) never faults: nothing changes.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("1mib_after_4k.yaml"));
    assert_eq!(port, hybrid);
    // A sequential touch of a mapping: each range the patch maps is at most half the
    // port's widest, and more of them are needed.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("mmap_seq_8mib.yaml"));
    let (p, c) = (fault_arounds(&port), fault_arounds(&hybrid));
    let widest = *p.iter().max().expect("the port faults around on a sequential touch");
    assert!(c.iter().all(|&n| n <= widest / 2) && c.contains(&(widest / 2)), "{p:?}\n{c:?}");
    assert!(c.len() > p.len(), "{p:?}\n{c:?}");
    parts_on_mappings_only(
        check_edited_file("mm/memory.c", half),
        ", do_fault_around, finish_fault as C)",
        "mmap_seq_8mib",
    );
}

#[test]
fn a_do_fault_around_that_does_not_compile_leaves_it_to_the_port_naming_its_line() {
    let broken = |s: &str| s.replacen(FAULT_AROUND_END, "to_pte = min3(from_pte + vmf->no_such_member, ", 1);
    let h = with_edited("mm/memory.c", broken);
    let line = broken(&base_file("mm/memory.c")).lines().position(|l| l.contains("no_such_member")).unwrap() + 1;
    let error = h
        .dropped_function("do_fault_around", "mm/memory.c")
        .expect("do_fault_around() compiled with a member struct vm_fault lacks");
    assert!(error.first_error.starts_with(&format!("mm/memory.c:{line}:")), "{}", error.first_error);
    assert!(!runs_as_c(&h, "do_fault_around"), "{:?}", h.workers.functions());
    assert!(runs_as_c(&h, "finish_fault") && runs_as_c(&h, "page_cache_sync_ra"), "{:?}", h.workers.functions());
}

/// 7.3.4's `finish_fault()` maps one page only when it must (userfaultfd, a folio past
/// i_size); otherwise a large folio inside the VMA and page table is mapped whole.
const ONE_PAGE_WHEN: &str = "if (unlikely(userfaultfd_armed(vma)) || unlikely(needs_fallback)) {";

fn faults(t: &radiff_model::Trace) -> usize {
    t.windows.iter().filter(|w| w.trigger == radiff_model::Trigger::Fault).count()
}

#[test]
fn a_patched_finish_fault_runs_as_c_and_parts_from_the_port_on_mappings_only() {
    // The patch maps one page of a large folio per fault.
    let one_page = |s: &str| {
        s.replacen(
            ONE_PAGE_WHEN,
            "if (unlikely(userfaultfd_armed(vma)) || unlikely(needs_fallback) || nr_pages > 1) {",
            1,
        )
    };
    let h = with_edited("mm/memory.c", one_page);
    assert!(runs_as_c(&h, "finish_fault") && runs_as_c(&h, "do_fault_around"), "{:?}", h.workers.functions());
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("1mib_after_4k.yaml"));
    assert_eq!(port, hybrid);
    // Without fault-around (4 KiB), each page of a large folio the port mapped with its
    // first fault now faults on its own.
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("mmap_fault_around_4k.yaml"));
    assert!(faults(&hybrid) > faults(&port), "{} {}", faults(&port), faults(&hybrid));
    parts_on_mappings_only(
        check_edited_file("mm/memory.c", one_page),
        ", do_fault_around, finish_fault as C)",
        "mmap_fault_around_4k",
    );
}

/// 7.3.4's `next_uptodate_folio()` (a static helper of `filemap_map_pages()`) leaves a
/// folio marked PG_readahead unmapped, so that touching it faults and reads ahead.
const SKIP_READAHEAD_FOLIO: &str = "if (!folio_test_uptodate(folio) || folio_test_readahead(folio))";

#[test]
fn a_patched_filemap_map_pages_helper_runs_as_c_and_parts_from_the_port_on_mappings_only() {
    // The patch maps marked folios too: a sequential touch no longer faults on them.
    let maps_marked = |s: &str| s.replacen(SKIP_READAHEAD_FOLIO, "if (!folio_test_uptodate(folio))", 1);
    let h = with_filemap(maps_marked);
    assert!(runs_as_c(&h, "filemap_map_pages") && !runs_as_c(&h, "do_fault_around"), "{:?}", h.workers.functions());
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("1mib_after_4k.yaml"));
    assert_eq!(port, hybrid);
    let (port, hybrid) = port_and_hybrid(&h.workers, &scenario_input("mmap_seq_8mib.yaml"));
    assert!(async_windows(&port) > 0 && async_windows(&hybrid) < async_windows(&port), "{port:?}\n{hybrid:?}");
    // The base's own filemap_map_pages() as C is the port there.
    let same = with_filemap(|s| s.replacen(SKIP_READAHEAD_FOLIO, &format!("{SKIP_READAHEAD_FOLIO}\n"), 1));
    assert_eq!(port_and_hybrid(&same.workers, &scenario_input("mmap_seq_8mib.yaml")).1, port);
    parts_on_mappings_only(check_edited_file("mm/filemap.c", maps_marked), ", filemap_map_pages, ", "mmap_seq_8mib");
}

/// Workers told to run some of an object's functions load only those: a patched batch
/// left out is the port's, so reads predict as the port does.
#[test]
fn workers_that_run_some_functions_load_only_those_and_leave_the_rest_to_the_port() {
    let h = with_filemap(|s| s.replacen(BATCH_ENDS_AT_READAHEAD, "", 1));
    let named = ["page_cache_sync_ra", "page_cache_async_ra"];
    let only = h.workers.only(named.iter().map(|n| n.to_string()).collect());
    assert_eq!(only.functions().unwrap(), named);
    let (port, hybrid) = port_and_hybrid(&only, &scenario_input("1mib_after_4k.yaml"));
    assert_eq!(port, hybrid);
    let (port, all) = port_and_hybrid(&h.workers, &scenario_input("1mib_after_4k.yaml"));
    assert_ne!(port, all, "the patched batch, run as C, parts on this scenario");
}

#[test]
fn a_variant_that_changes_do_sync_mmap_readahead_is_checked_against_the_hybrid() {
    use radiff::hybrid::choose::{choose, Choice};
    let text = base_file("mm/filemap.c");
    let after = text.replacen(READ_AROUND, "\t\tra->async_size = ra->ra_pages / 2;\n", 1);
    // A name of this test's own: choose() decides once per name and process.
    let name = "read-around-half-async";
    let (kernels, _dir) = with_variant(Kernels::load(&root()).unwrap(), name, "mm/filemap.c", &text, &after);
    match &*choose(&kernels, &Cache::from_env(), name) {
        Choice::Hybrid { predictor, changed } => {
            assert_eq!(changed, &["do_sync_mmap_readahead".to_string()]);
            let input = scenario_input("mmap_backward.yaml");
            let (trace, _, crash) = predictor.run(&input);
            assert!(crash.is_none());
            let port = radiff_model::predict(&input, &radiff_model::Policy::BASE);
            assert_eq!(first_fault_lookahead(&trace), 2 * first_fault_lookahead(&port));
        }
        other => panic!("a patch to do_sync_mmap_readahead() must be the hybrid: {other:?}"),
    }
}

/// `kernels` with a variant `name` (no policy) whose one patch changes `file` from
/// `before` to `after`; the folder holding the patch lives as long as the guard.
fn with_variant(
    mut kernels: Kernels,
    name: &str,
    file: &str,
    before: &str,
    after: &str,
) -> (Kernels, tempfile::TempDir) {
    use radiff::kernels::{ModelExpectation, Variant};
    assert_ne!(before, after, "the patch changes nothing in {file}");
    let diff = similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .header(&format!("a/{file}"), &format!("b/{file}"))
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let patch = dir.path().join("0001-change.patch");
    std::fs::write(&patch, format!("Subject: [PATCH] {name}\n---\ndiff --git a/{file} b/{file}\n{diff}")).unwrap();
    kernels.variants.push(Variant { name: name.into(), patches: vec![patch], model: ModelExpectation::None });
    (kernels, dir)
}

/// hybrid-check's first line says some scenarios part, not all: "... policy base: P of T
/// scenarios part ...", 0 < P < T (the crash was per scenario; the others ran).
/// `hybrid-check` of a tree with a patched function of the fault path, whose label has
/// `label`: it parts on the mapping `scenario`, not on the read(2) headline, and not
/// everywhere.
fn parts_on_mappings_only((text, agreed): (String, bool), label: &str, scenario: &str) {
    assert!(!agreed, "{text}");
    assert!(text.contains(label), "{text}");
    assert!(text.contains(&format!("scenarios/{scenario}.yaml: rust port and hybrid part")), "{text}");
    assert!(!text.contains("scenarios/1mib_after_4k.yaml: rust port"), "{text}");
    assert_some_but_not_all_part(&text);
}

fn assert_some_but_not_all_part(text: &str) {
    let first = text.lines().next().unwrap();
    let counts: Vec<&str> = first.split("policy base: ").nth(1).unwrap().split(' ').collect();
    let (parted, total): (u64, u64) = (counts[0].parse().unwrap(), counts[2].parse().unwrap());
    assert!(parted > 0 && parted < total, "{first}");
}

/// Runs in a child of [`a_missing_gcc_fails_what_needs_the_hybrid_saying_so`] only, whose
/// PATH has git and patch but no gcc.
#[test]
#[ignore = "run by a_missing_gcc_fails_what_needs_the_hybrid_saying_so, with a PATH that has no gcc"]
fn without_gcc_the_hybrid_of_a_variant_no_policy_names_is_an_error_naming_gcc() {
    use radiff::kernels::ModelExpectation;
    assert!(std::env::var_os("RADIFF_TEST_NO_GCC").is_some(), "run only by its parent test");
    // A change no cached object holds (the time, as a statement): the compile must run.
    let kernels = Kernels::load(&root()).unwrap();
    let base = base_files(&Builder::new(&kernels, &Cache::from_env())).unwrap();
    let text = base.read("mm/readahead.c").unwrap().unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let stamp = format!("(void){nanos}UL;");
    let after = text.replacen("\ttrace_page_cache_async_ra(", &format!("\t{stamp}\n\ttrace_page_cache_async_ra("), 1);
    let name = "no-gcc";
    let (kernels, _dir) = with_variant(kernels, name, "mm/readahead.c", &text, &after);
    let err = radiff::hybrid::choose::predictor(&kernels, &Cache::from_env(), name, &ModelExpectation::None)
        .expect_err("no gcc, yet a model");
    let err = err.to_string();
    assert!(err.contains("the hybrid model of no-gcc could not be made") && err.contains("gcc"), "{err}");
}

#[test]
fn a_missing_gcc_fails_what_needs_the_hybrid_saying_so() {
    let bin = tempfile::tempdir().unwrap();
    for tool in ["git", "patch"] {
        let found = std::process::Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
        let path = String::from_utf8(found.stdout).unwrap();
        std::os::unix::fs::symlink(path.trim(), bin.path().join(tool)).unwrap();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "without_gcc_the_hybrid_of_a_variant_no_policy_names_is_an_error_naming_gcc", "--ignored"])
        .env("PATH", bin.path())
        .env("RADIFF_TEST_NO_GCC", "1")
        .output()
        .unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && all.contains("1 passed"), "{all}");
}

/// The line of 7.3.4's `f2fs_read_single_page()` that puts a block into the bio.
const F2FS_ADD: &str = "\tif (!bio_add_folio(bio, folio, blocksize, 0))\n";
/// The line of 7.3.4's `ext4_mpage_readpages()` that sizes a folio's part of its bio.
const EXT4_LENGTH: &str = "\t\tlength = first_hole << blkbits;\n";

/// The repository scenario files whose `filesystem:` is not `fs` among the lines of
/// hybrid-check's `text` that name a scenario where the two part or the C crashed.
fn parted_elsewhere(text: &str, fs: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("scenarios/") && (l.contains(" part at window") || l.contains(" crashed with ")))
        .filter(|l| {
            let yaml = std::fs::read_to_string(root().join(l.split(':').next().unwrap())).unwrap();
            !yaml.contains(&format!("filesystem: {fs}"))
        })
        .map(str::to_string)
        .collect()
}

/// A file system's read path with a NULL dereference inserted before `anchor` crashes on
/// that file system's scenarios only (named with the function the model called: the C
/// read_pages() calls ->readahead), and a BUG_ON there names `file`'s line.
fn crash_and_bug_are_reported(file: &str, fs: &str, anchor: &str, indent: &str) {
    let null = format!("{indent}*(volatile int *)0 = 1;\n{anchor}");
    let (text, agreed) = check_edited_file(file, |s| s.replacen(anchor, &null, 1));
    assert!(!agreed, "{text}");
    assert!(text.contains("() crashed with SIGSEGV in system call "), "{text}");
    assert_some_but_not_all_part(&text);
    assert_eq!(parted_elsewhere(&text, fs), Vec::<String>::new(), "only {fs} reads through {file}");
    let bug = format!("{indent}BUG_ON(folio->index > 1);\n{anchor}");
    let edited = base_file(file).replacen(anchor, &bug, 1);
    let line = edited.lines().position(|l| l.contains("BUG_ON(folio->index > 1)")).unwrap() + 1;
    let (text, _) = check_edited_file(file, |s| s.replacen(anchor, &bug, 1));
    assert!(text.contains(&format!("(BUG() at {file}:{line})")), "{text}");
}

/// A read path that does not compile (`broken` of the base's `file`) leaves the file
/// system's `->readahead` and `->read_folio` (`entries`, as the note names them) to the
/// port, naming the line, and every scenario agrees.
fn a_unit_that_does_not_compile_is_named(file: &str, entries: &str, broken: impl Fn(&str) -> String) {
    let line = broken(&base_file(file)).lines().position(|l| l.contains("no_such_name")).unwrap() + 1;
    let (text, agreed) = check_edited_file(file, broken);
    assert!(agreed, "{text}");
    let note = format!("{entries} stay the Rust port: {file} does not compile with radiff's header: {file}:{line}:");
    assert!(text.contains(&note), "{text}");
}

#[test]
fn an_f2fs_read_path_that_crashes_or_hits_bug_is_reported_with_its_function_and_data_c_line() {
    crash_and_bug_are_reported("fs/f2fs/data.c", "f2fs", F2FS_ADD, "\t");
}

#[test]
fn an_ext4_read_path_that_crashes_or_hits_bug_is_reported_with_its_function_and_readpage_c_line() {
    crash_and_bug_are_reported("fs/ext4/readpage.c", "ext4", EXT4_LENGTH, "\t\t");
}

#[test]
fn a_file_systems_read_path_that_does_not_compile_leaves_it_to_the_port_naming_its_line() {
    a_unit_that_does_not_compile_is_named("fs/f2fs/data.c", "f2fs_readahead() and f2fs_read_data_folio()", |s| {
        s.replacen(F2FS_ADD, "\tif (!bio_add_folio(bio, folio, blocksize, no_such_name))\n", 1)
    });
    a_unit_that_does_not_compile_is_named("fs/ext4/readpage.c", "ext4_readahead() and ext4_read_folio()", |s| {
        s.replacen(EXT4_LENGTH, "\t\tlength = no_such_name;\n", 1)
    });
}

#[test]
fn a_patched_ext4_mpage_readpages_runs_as_c_and_parts_from_the_port_on_ext4_files_only() {
    // Half of each folio's blocks in the bio: other requests, on ext4 only.
    let half = |s: &str| s.replacen(EXT4_LENGTH, "\t\tlength = (first_hole << blkbits) / 2;\n", 1);
    let (text, agreed) = check_edited_file("fs/ext4/readpage.c", half);
    assert!(!agreed, "{text}");
    assert!(text.contains("ext4_readahead, ext4_read_folio, "), "{text}");
    assert_some_but_not_all_part(&text);
    assert_eq!(parted_elsewhere(&text, "ext4"), Vec::<String>::new());
}

#[test]
fn seed_003s_mail_under_a_name_with_no_policy_is_its_policy_as_c_and_parts_from_the_base_on_f2fs_only() {
    use radiff::hybrid::choose::{choose, Choice};
    use radiff::kernels::{ModelExpectation, Variant};
    let mut kernels = Kernels::load(&root()).unwrap();
    let patches = kernels.variant("f2fs-extent-ra").unwrap().patches.clone();
    // A name of this test's own: choose() decides once per name and process.
    let name = "f2fs-extent-ra-renamed";
    kernels.variants.push(Variant { name: name.into(), patches, model: ModelExpectation::None });
    let Choice::Hybrid { predictor, changed } = &*choose(&kernels, &Cache::from_env(), name) else {
        panic!("seed 003's patch must be the hybrid: {:?}", choose(&kernels, &Cache::from_env(), name));
    };
    assert_eq!(changed, &["f2fs_mpage_readpages".to_string()]);
    let policy = radiff_model::Policy::for_variant("f2fs-extent-ra").unwrap();
    // The repository's scenarios, and one where the window is smaller than the file's one
    // extent and read_ahead_kb lets it grow: what the patch changes.
    let long_extent = "description: seed 003's case\ndevice: {kind: nvme, size: 1 GiB}\nfilesystem: f2fs\nfile: {size: 32 MiB}\nqueue: {read_ahead_kb: 2048}\nreads:\n  - sequential: {from: 0 B, size: 32 KiB, to: 8 MiB}\n";
    let mut scenarios = radiff::scenario::load_each(&root().join("scenarios")).unwrap();
    let path = PathBuf::from("long_extent.yaml");
    scenarios.push((path.clone(), radiff::scenario::Scenario::parse(&path, long_extent)));
    let mut f2fs_parted = Vec::new();
    for (path, s) in scenarios {
        let input = radiff::explore::synthetic_input(&s.unwrap());
        let (trace, _, crash) = predictor.run(&input);
        assert!(crash.is_none(), "{}", path.display());
        assert_eq!(trace, radiff_model::predict(&input, &policy), "{}: the C and the policy part", path.display());
        let base = radiff_model::predict(&input, &radiff_model::Policy::BASE);
        if input.fs != radiff_model::FsKind::F2fs {
            assert_eq!(trace, base, "{}: seed 003 changes f2fs only", path.display());
        } else if trace != base {
            f2fs_parted.push(path);
        }
    }
    // The check has teeth: the patch's C is not the base's Rust port.
    assert!(f2fs_parted.contains(&path), "seed 003's C parted from the base port only on {f2fs_parted:?}");
}

/// Runs in a child of [`a_worker_ends_when_the_radiff_that_started_it_is_killed`] only:
/// starts a worker on a read batch that loops for ever, with a time limit on one call into
/// the C longer than the test (so the worker is busy, and nothing of its own stops it),
/// says so, and waits to be killed.
#[test]
#[ignore = "run by a_worker_ends_when_the_radiff_that_started_it_is_killed, which kills it"]
fn a_process_with_a_busy_worker_waits_to_be_killed() {
    use std::io::Write;
    radiff::hybrid::watchdog::set_call_limit(std::time::Duration::from_secs(600));
    let h = with_filemap(|s| s.replacen(BATCH_ENDS_AT_READAHEAD, "\t\twhile (1)\n\t\t\t;\n", 1));
    let workers = h.workers.clone();
    std::thread::spawn(move || port_and_hybrid(&workers, &scenario_input("1mib_after_4k.yaml")));
    std::thread::sleep(std::time::Duration::from_secs(1));
    println!("worker started");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(120));
}

/// A worker does not outlive the radiff that started it, even one killed with SIGKILL while
/// the worker is busy (in the C under a long limit here; in the model's own code, no limit
/// at all).
#[test]
fn a_worker_ends_when_the_radiff_that_started_it_is_killed() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_process_with_a_busy_worker_waits_to_be_killed", "--ignored", "--nocapture"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.is_ok_and(|l| l.contains("worker started"))), "the child started no worker");
    // The workers: the children of each of the child's threads.
    let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
    let workers: Vec<String> = tasks
        .flat_map(|t| {
            {
                let t = t.unwrap().path();
                std::fs::read_to_string(t.join("children")).unwrap_or_default()
            }
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
        })
        .collect();
    assert!(!workers.is_empty(), "no worker among the child's children");
    child.kill().unwrap();
    child.wait().unwrap();
    let running = |pid: &String| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while workers.iter().any(running) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left: Vec<&String> = workers.iter().filter(|p| running(p)).collect();
    assert!(left.is_empty(), "workers {left:?} still run 5 s after their radiff was killed");
}

#[test]
fn the_trees_own_miss_walks_run_as_c_and_one_that_does_not_compile_stays_the_port_saying_so() {
    // The tree's page_cache_next_miss() reports each hole one page late: the C decides.
    let hole = "\t\tif (!entry || xa_is_value(entry))\n\t\t\treturn xas.xa_index;\n";
    let late = "\t\tif (!entry || xa_is_value(entry))\n\t\t\treturn xas.xa_index + 1;\n";
    let (text, agreed) = check_edited_file("mm/filemap.c", |s| s.replacen(hole, late, 1));
    assert!(!agreed, "a miss walk of the tree's own did not run: {text}");
    assert!(text.contains("changes 1 of the functions that ran as C here"), "{text}");
    assert!(text.contains("(page_cache_next_miss();"), "{text}");
    // One that does not compile: both walks are the port's, the rest runs as C.
    let (text, agreed) = check_edited_file("mm/filemap.c", |s| s.replacen(hole, "\t\tradiff_no_such_call();\n", 1));
    assert!(agreed, "{text}");
    assert!(
        text.contains("page_cache_next_miss() and page_cache_prev_miss() of mm/filemap.c stay the Rust port"),
        "{text}"
    );
    assert!(text.contains("do_sync_mmap_readahead, do_async_mmap_readahead, "), "{text}");
}
