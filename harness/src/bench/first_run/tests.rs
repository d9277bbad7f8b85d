use super::*;

/// A run.log as scripts/first-run writes it, cut down: setup's steps, cargo's compile, two
/// test binaries (the second failing), an image.
const RUN_LOG: &str = "\
1000.0 == setup
1000.5 setup: installing: flex bison
1040.0 setup: kernel source: /c/source/linux-source-7.3.tar.xz
1040.2 setup: building radiff (release)
1100.0 setup: done. Next: cargo test
1100.1 == setup exit 0
1100.2 == cargo test
1100.3    Compiling radiff v0.1.0 (/x/harness)
1300.0      Running unittests src/lib.rs (target/debug/deps/radiff-0123)
1350.0 test result: ok. 8 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 49.9s
1350.1      Running tests/faults.rs (target/debug/deps/faults-4567)
1400.0 radiff: prepared /c/images/f2fs-0a1b/disk.img in 45 s: 2049.0 MiB written on a 4 GiB device
1401.0 radiff: prepared /c/images/xfs-9f8e/disk.img in 3 s: 16.0 MiB written on a 1 GiB device
2000.0 test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 649.9s
2000.1 error: test failed, to rerun pass `-p radiff --test faults`
2000.2 == cargo test exit 101
";

#[test]
fn the_run_log_gives_setup_s_steps_the_compile_each_test_binary_and_the_images() {
    let log = parse_run_log(RUN_LOG);
    assert!((log.setup.as_ref().unwrap().secs() - 100.1).abs() < 1e-9);
    assert_eq!(log.setup_exit, Some(0));
    let steps: Vec<(&str, f64)> = log.setup_steps.iter().map(|s| (s.what.as_str(), s.secs())).collect();
    assert_eq!(steps.len(), 4);
    assert_eq!(steps[0].0, "installing: flex bison");
    assert!((steps[0].1 - 39.5).abs() < 1e-9);
    assert!((steps[2].1 - 59.8).abs() < 1e-9, "the release build runs until setup's last line: {steps:?}");
    assert!((log.compile.as_ref().unwrap().secs() - 199.8).abs() < 1e-9);
    assert_eq!(log.test_exit, Some(101));
    let names: Vec<&str> = log.binaries.iter().map(|b| b.span.what.as_str()).collect();
    assert_eq!(names, ["unittests src/lib.rs", "tests/faults.rs"]);
    assert_eq!((log.binaries[0].passed, log.binaries[0].failed, log.binaries[0].ignored), (8, 0, 2));
    assert_eq!((log.binaries[1].passed, log.binaries[1].failed), (4, 1));
    assert!((log.binaries[1].span.secs() - 650.1).abs() < 1e-9);
    assert_eq!(log.images, [("f2fs-0a1b".to_string(), 45.0), ("xfs-9f8e".to_string(), 3.0)]);
}

#[test]
fn a_run_log_cut_short_ends_what_was_open_at_its_last_line() {
    let cut: String = RUN_LOG.lines().take(11).map(|l| format!("{l}\n")).collect();
    let log = parse_run_log(&cut);
    assert_eq!(log.test_exit, None);
    assert_eq!(log.test.as_ref().map(|s| s.end), Some(1350.1), "the last line is the second binary's start");
    let text = render(&log, &[], "");
    assert!(text.contains("cargo test") && text.contains("did not end"), "{text}");
    assert!(text.contains("kernel builds: 0, 0 s in all") && !text.contains("-0"), "{text}");
    // Lines that are not stamped are skipped, not misread.
    assert_eq!(parse_run_log("no stamp here\n"), RunLog::default());
}

/// A V=2 build log of a variant whose patch changed a header and a .c file.
fn variant_log(tree: &str) -> String {
    format!(
        "{BUILDING} v2 in {tree} from 1500000\n  \
         HOSTCC  scripts/basic/fixdep - due to target missing\n  \
         CC      mm/readahead.o - due to: {tree}/mm/readahead.c {tree}/include/linux/pagemap.h\n  \
         CC      mm/filemap.o - due to: {tree}/include/linux/pagemap.h\n  \
         CC      fs/xfs/xfs_aops.o - due to: {tree}/include/linux/pagemap.h\n  \
         CC      init/version.o - due to command line change\n  \
         LD      vmlinux - due to: vmlinux.a\n\
         {BUILT} v2 in 438.5 s\n"
    )
}

#[test]
fn a_build_log_says_when_how_long_how_many_objects_and_why() {
    let ccache = "# mm/readahead.c\ncache_miss\ndirect_cache_miss\n# mm/filemap.c\ndirect_cache_hit\nlocal_storage_hit\n# x.c\ncache_miss\n";
    let b = parse_build(&variant_log("/c/trees/7.3.4"), ccache, 9e9).unwrap();
    assert_eq!(b.span, Span { what: "v2".into(), start: 1500.0, end: 1938.5 });
    assert!(b.done);
    assert_eq!(b.objects, 4);
    assert_eq!(
        b.reasons,
        [("include/linux/pagemap.h".to_string(), 3), ("flags".to_string(), 1), ("mm/readahead.c".to_string(), 1)]
    );
    assert_eq!((b.hits, b.misses), (1, 2));
}

#[test]
fn a_build_that_did_not_finish_ends_at_its_log_s_last_write_and_a_log_without_the_first_line_is_none() {
    let log = variant_log("/t");
    let unfinished: String = log.lines().filter(|l| !l.starts_with(BUILT)).map(|l| format!("{l}\n")).collect();
    let b = parse_build(&unfinished, "", 1600.0).unwrap();
    assert!(!b.done);
    assert_eq!(b.span.end, 1600.0);
    assert!(parse_build("  CC      mm/readahead.o\n", "", 1.0).is_none(), "a log from before the first line");
}

#[test]
fn the_breakdown_names_builds_that_ran_beside_each_other() {
    let base = parse_build(&variant_log("/t").replace(" v2 in", " base in"), "", 0.0).unwrap();
    let mut other = parse_build(&variant_log("/t").replace(" v2 in", " faults-test in"), "", 0.0).unwrap();
    other.span.start += 388.5;
    other.span.end += 388.5;
    let log = parse_run_log(RUN_LOG);
    let boots = "base-6d63804bf1280d11 8 a/base,b/base 1796169027000 41500 20100\n";
    let text = render(&log, &[base, other], boots);
    assert!(text.contains("kernel builds: 2, 877 s in all"), "{text}");
    assert!(text.contains("beside faults-test 50 s"), "{text}");
    assert!(text.contains("beside base 50 s"), "{text}");
    assert!(text.contains("3 include/linux/pagemap.h, 1 flags, 1 mm/readahead.c"), "{text}");
    assert!(text.contains("images: 2 prepared, 48 s in all"), "{text}");
    assert!(text.contains("f2fs-0a1b"), "an image of 30 s or more is named:\n{text}");
    assert!(
        text.contains("boots: 1 boots (base 1), 42 s of VM wall in all; the guests' access patterns 20 s"),
        "{text}"
    );
    assert!(text.contains("first run: 16.7 min in all"), "{text}");
}
