//! Bad input and a host without what `./setup` installs: YAML that is not YAML, a bad
//! `kernels/kernels.yaml`, a scenario with one bad step (each an error at file:line); one
//! bad scenario file fails its own trial while every other one still lists; a host without
//! QEMU, virtme-ng or the kernel source fails at once, saying which. No build, no VM: the
//! real `radiff` binary and the real test-trial binary (`tests/scenarios.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use radiff::kernels::Kernels;
use radiff::scenario::{self, Scenario};

const RADIFF: &str = env!("CARGO_BIN_EXE_radiff");

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn fixture() -> String {
    std::fs::read_to_string(radiff::repo_root().join("harness/tests/fixtures/full_cache.yaml")).unwrap()
}

/// The fixture's second step, which the bad-step tests replace, and its line in `good`.
const STEP: &str = "  - sequential: {from: 4 KiB, size: 16 KiB}";

fn step_line(good: &str) -> usize {
    good.lines().position(|l| l == STEP).unwrap() + 1
}

fn load_error(dir: &Path, name: &str, yaml: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, yaml).unwrap();
    Scenario::load(&path).expect_err("a bad scenario").to_string()
}

#[test]
fn yaml_that_is_not_yaml_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // An unclosed quote: where the file ended, and where the quote began.
    let err = load_error(dir.path(), "quote.yaml", b"description: \"unterminated\nreads:\n  - read: {offset: 0}\n");
    assert_eq!(
        err,
        format!("{d}/quote.yaml:4: found unexpected end of stream, while scanning a quoted scalar at line 1 column 14")
    );
    let err = load_error(dir.path(), "tab.yaml", b"description: x\ndevice:\n\tkind: nvme\n");
    assert!(err.starts_with(&format!("{d}/tab.yaml:3: ")), "{err}");
    let err = load_error(dir.path(), "prose.yaml", b"This is a note, not a scenario.\n");
    assert!(err.starts_with(&format!("{d}/prose.yaml:1: ")), "{err}");
    let err = load_error(dir.path(), "binary.yaml", b"\x00\x01\xff\xfe");
    assert!(err.starts_with(&format!("{d}/binary.yaml: ")) && err.contains("UTF-8"), "{err}");
}

#[test]
fn a_scenario_with_one_bad_step_is_an_error_at_the_steps_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let good = fixture();
    let line = step_line(&good);
    let bad = |with: &str| good.replace(STEP, with);
    let err = load_error(dir.path(), "key.yaml", bad("  - sequential: {from: 4 KiB, sise: 16 KiB}").as_bytes());
    assert!(
        err.starts_with(&format!(
            "{d}/key.yaml:{line}: reads[1].sequential: unknown field `sise`, expected one of `from`, `size`"
        )),
        "{err}"
    );
    let err = load_error(dir.path(), "unit.yaml", bad("  - sequential: {from: 4 KiB, size: 16 lots}").as_bytes());
    assert!(
        err.starts_with(&format!("{d}/unit.yaml:{line}: reads[1].sequential: `16 lots`: unknown unit `lots`")),
        "{err}"
    );
    let err = load_error(dir.path(), "kind.yaml", bad("  - jump: {to: 3}").as_bytes());
    assert!(err.starts_with(&format!("{d}/kind.yaml:{line}: reads[1]: unknown variant `jump`")), "{err}");
}

/// A repository: the real `kernels/` and `harness/` (fixtures the trials read), and a
/// `scenarios/` holding links to the real scenarios plus `extra` files.
fn repo(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let real = radiff::repo_root();
    let dir = tempfile::tempdir().unwrap();
    for part in ["kernels", "harness", "model"] {
        std::os::unix::fs::symlink(real.join(part), dir.path().join(part)).unwrap();
    }
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    for path in scenario::discover(&real.join("scenarios")).unwrap() {
        std::os::unix::fs::symlink(&path, scenarios.join(path.file_name().unwrap())).unwrap();
    }
    // The fio job files the program scenarios name.
    std::os::unix::fs::symlink(real.join("scenarios/jobs"), scenarios.join("jobs")).unwrap();
    for (name, text) in extra {
        std::fs::write(scenarios.join(name), text).unwrap();
    }
    dir
}

#[test]
fn a_bad_kernels_yaml_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = dir.path().join("kernels");
    std::fs::create_dir(&kernels).unwrap();
    std::fs::copy(radiff::repo_root().join("kernels/config.fragment"), kernels.join("config.fragment")).unwrap();
    let file = kernels.join("kernels.yaml");
    let f = file.display();
    let error = |yaml: &str| {
        std::fs::write(&file, yaml).unwrap();
        Kernels::load(dir.path()).expect_err("a bad kernels.yaml").to_string()
    };
    assert_eq!(
        error("base:\n  debian: linux-source-7.3\nconfig: config.fragment\nextra: 1\n"),
        format!("{f}:4: unknown field `extra`, expected one of `base`, `config`, `model`")
    );
    assert_eq!(
        error("base:\n  debian: [linux\nconfig: config.fragment\n"),
        format!("{f}:2: base.debian: invalid type: sequence, expected a string")
    );
    assert_eq!(
        error("base:\n  debian: \"linux\nconfig: config.fragment\n"),
        format!("{f}:4: found unexpected end of stream, while scanning a quoted scalar at line 2 column 11")
    );
    assert!(error("base:\n  debian: linux-source-7.3\n  git: /x\nconfig: config.fragment\n")
        .starts_with(&format!("{f}:1: `base` needs exactly one of")));
    assert!(error("base:\n  debian: linux-source-7.3\nconfig: nowhere.fragment\n")
        .starts_with(&format!("{f}:3: config fragment ")));
    // And through the command, where a user meets it.
    std::fs::write(&file, "base:\n  debian: linux-source-7.3\nconfig: config.fragment\nextra: 1\n").unwrap();
    let out = Command::new(RADIFF).args(["kernels", "list"]).env("RADIFF_ROOT", dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("radiff: error: {f}:4: unknown field `extra`, expected one of `base`, `config`, `model`")
    );
}

/// The test binary of `tests/scenarios.rs` (libtest-mimic), built beside this one by
/// `cargo test` (the newest, should several versions be there).
fn scenarios_binary() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&deps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("scenarios-") && p.extension().is_none()
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p).unwrap_or_else(|| {
        panic!("no scenarios-* test binary in {}: `cargo test` builds it (or `cargo test --no-run`)", deps.display())
    })
}

#[test]
fn one_bad_scenario_file_fails_its_own_trial_and_every_other_scenario_still_lists() {
    let bad =
        fixture().replace("  - sequential: {from: 4 KiB, size: 16 KiB}", "  - sequential: {from: 4 KiB, sise: 16 KiB}");
    let line = bad.lines().position(|l| l.contains("sise")).unwrap() + 1;
    let repo = repo(&[("zz_bad_step.yaml", &bad), ("aa_not_yaml.yaml", "description: \"unterminated\n")]);
    let binary = scenarios_binary();
    let out = Command::new(&binary).arg("--list").env("RADIFF_ROOT", repo.path()).output().unwrap();
    let listed = text(&out);
    assert!(out.status.success(), "{listed}");
    assert!(listed.contains("scenario_zz_bad_step::load: test"), "{listed}");
    assert!(listed.contains("scenario_aa_not_yaml::load: test"), "{listed}");
    // Every good scenario lists exactly as it does without the bad files.
    let clean = repo_trials(&binary, &self::repo(&[]));
    let with_bad: Vec<&str> = listed.lines().filter(|l| l.ends_with(": test") && !l.contains("::load:")).collect();
    assert_eq!(with_bad, clean.lines().filter(|l| l.ends_with(": test")).collect::<Vec<_>>());
    assert!(with_bad.len() > 50, "{listed}");
    // The bad file's trial fails with its file:line; others run (a model-free one that
    // boots nothing would still need a kernel; running the bad trial shows the message).
    let out = Command::new(&binary)
        .args(["--exact", "scenario_zz_bad_step::load"])
        .env("RADIFF_ROOT", repo.path())
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    let file = repo.path().join("scenarios/zz_bad_step.yaml");
    assert!(said.contains(&format!("{}:{line}: reads[1].sequential: unknown field `sise`", file.display())), "{said}");
    assert!(said.contains("1 failed"), "{said}");
}

fn repo_trials(binary: &Path, repo: &tempfile::TempDir) -> String {
    let out = Command::new(binary).arg("--list").env("RADIFF_ROOT", repo.path()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    text(&out)
}

/// `.config/nextest.toml` starts the long trials first and `kernel_boots::*` last by name
/// prefixes: each must still name a trial of the repository's scenarios binary, or a
/// rename would silently put that trial back in name order.
#[test]
fn each_nextest_priority_names_trials_that_exist() {
    let config = std::fs::read_to_string(radiff::repo_root().join(".config/nextest.toml")).unwrap();
    let out = Command::new(scenarios_binary()).arg("--list").output().unwrap();
    let listed = text(&out);
    assert!(out.status.success(), "{listed}");
    let trials: Vec<&str> = listed.lines().filter_map(|l| l.strip_suffix(": test")).collect();
    let prefixes: Vec<&str> = config.split("test(/^").skip(1).map(|rest| rest.split('/').next().unwrap()).collect();
    assert!(prefixes.len() >= 5, "{config}");
    for prefix in prefixes {
        assert!(
            trials.iter().any(|t| t.starts_with(prefix)),
            "`test(/^{prefix}/)` in .config/nextest.toml names no trial of:\n{listed}"
        );
    }
}

#[test]
fn a_host_without_qemu_virtme_ng_or_the_kernel_source_fails_at_once_saying_which() {
    let empty = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let scenario = radiff::repo_root().join("harness/tests/fixtures/full_cache.yaml");
    let radiff = |path: &Path, tree: Option<&str>| {
        let mut cmd = Command::new(RADIFF);
        cmd.args(["run", scenario.to_str().unwrap()]).env("PATH", path).env("RADIFF_CACHE", cache.path());
        if let Some(tree) = tree {
            cmd.env("RADIFF_KERNEL_TREE", tree);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default().to_string()
    };
    let c = cache.path().display();
    // Nothing: no QEMU on PATH, no virtme-ng in the cache's venv or on PATH, no source.
    assert_eq!(
        radiff(empty.path(), None),
        format!(
            "radiff: error: this host cannot run a kernel: QEMU, virtme-ng and the kernel source are missing \
             (QEMU: `qemu-system-x86_64` is not on PATH; virtme-ng: neither {c}/venv/bin/vng nor `vng` on PATH; \
             the kernel source: {c}/source/linux-source-7.3.tar.xz (Debian's linux-source-7.3) does not exist; \
             or set RADIFF_KERNEL_TREE=/path/to/linux); run ./setup, which installs them"
        )
    );
    // Each alone: QEMU (a PATH that has virtme-ng and the source found), virtme-ng, the source.
    let shared = radiff::cache::Cache::from_env();
    let tools = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(shared.root.join("venv/bin/vng"), tools.path().join("vng")).unwrap();
    // A kernel-shaped git tree: the source found.
    let linux = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(linux.path().join("mm")).unwrap();
    std::fs::write(linux.path().join("mm/readahead.c"), "").unwrap();
    std::fs::write(linux.path().join("Makefile"), "VERSION = 7\n").unwrap();
    assert!(Command::new("git").arg("-C").arg(linux.path()).args(["init", "-q"]).status().unwrap().success());
    let tree = linux.path().to_path_buf();
    let only_qemu = radiff(tools.path(), Some(tree.to_str().unwrap()));
    assert!(only_qemu.contains("this host cannot run a kernel: QEMU is missing (QEMU: `qemu-system-x86_64` is not on PATH); run ./setup, which installs it"), "{only_qemu}");
    let qemu = radiff::process::find_in_path(radiff::host::QEMU).expect("QEMU on this host's PATH");
    std::os::unix::fs::symlink(qemu, empty.path().join(radiff::host::QEMU)).unwrap();
    let only_vng = radiff(empty.path(), Some(tree.to_str().unwrap()));
    assert!(only_vng.contains("virtme-ng is missing (virtme-ng: neither "), "{only_vng}");
    assert!(only_vng.ends_with("run ./setup, which installs it"), "{only_vng}");
    std::os::unix::fs::symlink(empty.path().join(radiff::host::QEMU), tools.path().join(radiff::host::QEMU)).unwrap();
    let only_source = radiff(tools.path(), Some("/nowhere/linux"));
    assert!(
        only_source.ends_with("the kernel source is missing (the kernel source: /nowhere/linux is not a git tree (named by kernels/kernels.yaml or RADIFF_KERNEL_TREE)); run ./setup, which installs it"),
        "{only_source}"
    );

    // The trials: each fails at once with that message, no build begun.
    let started = Instant::now();
    let out = Command::new(scenarios_binary())
        .arg("scenario_64k_after_4k::")
        .env("PATH", empty.path())
        .env("RADIFF_CACHE", cache.path())
        .output()
        .unwrap();
    let said = text(&out);
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}: {said}", started.elapsed());
    assert!(said.contains("0 passed; 3 failed"), "{said}");
    assert_eq!(
        said.matches("this host cannot run a kernel: virtme-ng and the kernel source are missing").count(),
        3,
        "{said}"
    );
    assert!(!cache.path().join("kernels").exists() && !cache.path().join("trees").exists(), "a build began");
}

/// A careless count or size (a typo: 4000000000, 2^32, 2^63) is an error at its line that
/// names the limit, in well under a second and without expanding anything.
#[test]
fn a_count_or_size_past_its_limit_is_an_error_at_its_line_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixture();
    let line = step_line(&good);
    let line_of = |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let check = |name: &str, text: String, at: usize, says: &str| {
        let started = Instant::now();
        let err = load_error(dir.path(), name, text.as_bytes());
        assert!(started.elapsed() < Duration::from_secs(1), "{name}: {:?}", started.elapsed());
        let d = dir.path().display();
        assert!(err.starts_with(&format!("{d}/{name}:{at}: ")) && err.contains(says), "{name}: {err}");
    };
    for n in ["4000000000", "4294967296", "9223372036854775808"] {
        // 2^63 bytes as bytes: 2^63 KiB overflows u64, an error of its own at the section.
        let unit = if n.len() > 12 { "" } else { " KiB" };
        check(
            "random.yaml",
            good.replace(STEP, &format!("  - random: {{count: {n}, size: 4 KiB}}")),
            line,
            "at most 4194304",
        );
        let touch = format!("  - mmap: {{size: 1 MiB}}\n  - touch: {{order: random, count: {n}}}");
        check("touch.yaml", good.replace(STEP, &touch), line + 1, "at most");
        check("seq.yaml", good.replace(STEP, &format!("  - sequential: {{from: 0, size: 1, to: {n}}}")), line, "");
        check("read.yaml", good.replace(STEP, &format!("  - read: {{offset: {n}, size: {n}}}")), line, "does not fit");
        check(
            "device.yaml",
            good.replacen("size: 128 MiB", &format!("size: {n}{unit}"), 1),
            line_of(&good, "size: 128 MiB"),
            "device.size",
        );
        check(
            "file.yaml",
            good.replacen("size: 16 MiB", &format!("size: {n}{unit}"), 1),
            line_of(&good, "size: 16 MiB"),
            "",
        );
    }
    check("streams.yaml", good.replace(STEP, "  - interleaved: {streams: 100000000, size: 4 KiB}"), line, "at most 64");
    check(
        "streams32.yaml",
        good.replace(STEP, "  - interleaved: {streams: 4294967295, size: 4 KiB}"),
        line,
        "at most 64",
    );
    check("trace.yaml", format!("{good}trace_buffer_kb: 99999999\n"), good.lines().count() + 1, "at most 2097152");
    check("trace63.yaml", format!("{good}trace_buffer_kb: 9223372036854775808\n"), good.lines().count() + 1, "at most");
    check("timeout.yaml", format!("{good}timeout_s: 4294967296\n"), good.lines().count() + 1, "at most 86400");
    check("map.yaml", good.replace(STEP, "  - mmap: {map: 4294967295}"), line, "0 to 63");
}

#[test]
fn a_bad_splice_step_is_an_error_at_its_line_and_a_good_one_parses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let good = fixture();
    let line = step_line(&good);
    let bad = |with: &str| good.replace(STEP, with);
    for (name, with, says) in [
        (
            "pipe3.yaml",
            "  - splice: {offset: 0, size: 1 MiB, pipe: 12 KiB}",
            "`pipe` 12 KiB must be a power of two from 4 KiB to 1 MiB",
        ),
        ("pipe2m.yaml", "  - splice: {offset: 0, size: 1 MiB, pipe: 2 MiB}", "`pipe` 2 MiB must be a power of two"),
        (
            "past.yaml",
            "  - splice: {offset: 15 MiB, size: 2 MiB}",
            "must be more than 0 and end inside the 16 MiB file",
        ),
        (
            "via.yaml",
            "  - splice: {offset: 0, size: 1 MiB, via: write}",
            "unknown variant `write`, expected `splice` or `sendfile`",
        ),
        ("key.yaml", "  - splice: {offset: 0, size: 1 MiB, pipes: 4 KiB}", "unknown field `pipes`"),
    ] {
        let err = load_error(dir.path(), name, bad(with).as_bytes());
        assert!(err.starts_with(&format!("{d}/{name}:{line}: reads[1]")) && err.contains(says), "{name}: {err}");
    }
    let path = dir.path().join("good.yaml");
    std::fs::write(&path, bad("  - splice: {offset: 1 MiB, pipe: 16 KiB, via: sendfile}")).unwrap();
    let s = Scenario::load(&path).unwrap();
    assert_eq!(
        s.steps[1],
        radiff_model::Step::Splice { fd: 0, offset: 1 << 20, size: 15 << 20, pipe: 16 << 10, sendfile: true }
    );
}

#[test]
fn bad_preadv2_flags_and_direct_reads_are_errors_at_their_line_and_good_ones_parse() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let good = fixture();
    let line = step_line(&good);
    let bad = |with: &str| good.replace(STEP, with);
    for (name, text, says) in [
        (
            "twice.yaml",
            bad("  - read: {offset: 0, size: 4 KiB, flags: [nowait, nowait]}"),
            "`flags` lists nowait twice",
        ),
        (
            "both.yaml",
            bad("  - read: {offset: 0, size: 4 KiB, flags: [nowait], direct: true}"),
            "`direct: true` does not go with `flags:`",
        ),
        (
            "unaligned.yaml",
            bad("  - read: {offset: 512, size: 4 KiB, direct: true}"),
            "O_DIRECT needs the offset, size and end aligned",
        ),
        ("end.yaml", bad("  - sequential: {from: 0, size: 8 KiB, to: 10 KiB, direct: true}"), "10 KiB is not"),
        ("big.yaml", bad("  - read: {offset: 0, size: 256 KiB, direct: true}"), "at most 128 KiB"),
        ("flag.yaml", bad("  - read: {offset: 0, size: 4 KiB, flags: [sync]}"), "unknown variant `sync`"),
        (
            "f2fs.yaml",
            bad("  - read: {offset: 0, size: 4 KiB, flags: [dontcache]}")
                .replace("filesystem: ext4", "filesystem: f2fs"),
            "f2fs does not set FOP_DONTCACHE",
        ),
        (
            "f2fsdio.yaml",
            bad("  - read: {offset: 0, size: 4 KiB, direct: true}").replace("filesystem: ext4", "filesystem: f2fs"),
            "`direct: true` on f2fs",
        ),
        (
            "mapped.yaml",
            bad("  - read: {offset: 0, size: 4 KiB, flags: [dontcache]}\n  - mmap: {}"),
            "in a scenario with mappings",
        ),
    ] {
        let err = load_error(dir.path(), name, text.as_bytes());
        assert!(err.starts_with(&format!("{d}/{name}:{line}: ")) && err.contains(says), "{name}: {err}");
    }
    let path = dir.path().join("good.yaml");
    std::fs::write(&path, bad("  - read: {offset: 4 KiB, size: 8 KiB, flags: [dontcache, nowait]}\n  - sequential: {from: 1 MiB, size: 64 KiB, to: 2 MiB, direct: true}")).unwrap();
    let s = Scenario::load(&path).unwrap();
    let how = radiff_model::ReadHow { nowait: true, dontcache: true, direct: false };
    assert_eq!(s.steps[1], radiff_model::Step::ReadWith { fd: 0, offset: 4096, size: 8192, how });
    let direct = radiff_model::ReadHow { direct: true, ..Default::default() };
    assert_eq!(
        s.steps[2],
        radiff_model::Step::SequentialWith { fd: 0, from: 1 << 20, size: 64 << 10, to: Some(2 << 20), how: direct }
    );
}

/// The README's `cargo test -- scenario_NAME` runs exactly one scenario on every variant
/// only while no scenario's trial prefix (`scenario_NAME::`, less the `::`) is a prefix of
/// another's: libtest filters by substring.
#[test]
fn no_scenario_name_is_a_prefix_of_another() {
    let files = scenario::discover(&radiff::repo_root().join("scenarios")).unwrap();
    let names: Vec<String> = files.iter().map(|p| p.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    assert!(names.len() > 10, "scenarios/ holds the repository's scenarios: {names:?}");
    let clashes: Vec<String> = names
        .iter()
        .flat_map(|a| {
            names.iter().filter(move |b| *b != a && b.starts_with(a.as_str())).map(move |b| format!("{a} < {b}"))
        })
        .collect();
    assert!(clashes.is_empty(), "`cargo test -- scenario_A` would also run scenario B: {clashes:?}; rename one");
}
