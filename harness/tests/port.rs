//! The port ledger against the real Linux 7.3.4 source, and `radiff kernels port-check`
//! run as a user runs it on small git trees: no build, no VM.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use radiff::cache::Cache;
use radiff::kernels::Kernels;
use radiff::port::{self, DirFiles, Files, Ledger, PortedSource};

fn root() -> PathBuf {
    radiff::repo_root()
}

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::from_env)
}

/// The 7.3.4 tree `./setup` fetched (Debian's linux-source-7.3), as `radiff kernels
/// port-check` reads it for its diffs: unpacked in the cache, read at its recorded base. A
/// host without it fails (never passes unchecked), naming the fix.
fn source_7_3_4() -> Box<dyn Files> {
    let kernels = Kernels::load(&root()).expect("kernels/ loads");
    let source = PortedSource::new(&Ledger::load(&root()).unwrap(), &kernels, cache());
    match port::kernel_version(&source) {
        Ok(v) => assert_eq!(v, "7.3.4", "the cache's linux-source-7.3 is the kernel the model ports"),
        Err(e) => panic!("the Linux 7.3.4 source is needed to check the ledger against it: {e}"),
    }
    Box::new(source)
}

#[test]
fn every_kernel_function_the_model_names_is_in_the_ledger() {
    let unlisted = port::unlisted(&root()).unwrap();
    assert!(unlisted.is_empty(), "model functions whose doc comment names a kernel function model/ledger.txt lacks (run `radiff kernels ledger --tree DIR --write`): {unlisted:?}");
}

#[test]
fn a_model_function_missing_from_the_ledger_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("model/src");
    std::fs::create_dir_all(&src).unwrap();
    for e in std::fs::read_dir(root().join("model/src")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            std::fs::copy(&p, src.join(p.file_name().unwrap())).unwrap();
        }
    }
    let extra = "\n/// `page_cache_ra_newthing()`, Linux 7.3.4 mm/readahead.c: a port nobody listed.\npub fn page_cache_ra_newthing() {}\n";
    let mut text = std::fs::read_to_string(src.join("readahead.rs")).unwrap();
    text.push_str(extra);
    std::fs::write(src.join("readahead.rs"), text).unwrap();
    let ledger = Ledger::load(&root()).unwrap();
    let missing = port::missing_from_ledger(&ledger, &port::doc_names(&src).unwrap());
    let names: Vec<&str> = missing.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["page_cache_ra_newthing"]);
    assert!(missing[0].at.starts_with("model/src/readahead.rs:"), "{:?}", missing[0]);
}

#[test]
fn the_repository_keeps_no_kernel_text() {
    assert!(!root().join("model/ledger").exists(), "model/ledger/ is back: port-check reads 7.3.4 from the cache");
}

/// The quotes (`"..."`) in the comments of `text`, a comment's lines joined, that hold more
/// than one C statement or run over 100 characters (longer than a kernel line), each with
/// the line its comment starts on.
fn long_quotes(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = i;
        let mut comment = String::new();
        while let Some(rest) = lines.get(i).and_then(|l| l.trim_start().strip_prefix("//")) {
            comment.push_str(rest.trim_start_matches(['/', '!']).trim());
            comment.push(' ');
            i += 1;
        }
        for quote in comment.split('"').skip(1).step_by(2) {
            if quote.matches(';').count() > 1 || quote.len() > 100 {
                found.push((start + 1, quote.to_string()));
            }
        }
        i = i.max(start + 1);
    }
    found
}

#[test]
fn no_model_comment_quotes_several_kernel_lines() {
    let mut found = Vec::new();
    for e in std::fs::read_dir(root().join("model/src")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "rs") {
            for (line, quote) in long_quotes(&std::fs::read_to_string(&path).unwrap()) {
                found.push(format!("{}:{line}: {quote}", path.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "quote the one kernel line the code follows, say the rest in our own words:\n{}",
        found.join("\n")
    );
    let several = "x();\n// \"if (!folio) {\n// folio_put(f); return;\" and\n/// \"one line;\"\n";
    assert_eq!(long_quotes(several), [(2, "if (!folio) { folio_put(f); return;".to_string())]);
}

#[test]
fn the_ledger_matches_the_linux_7_3_4_source_and_a_one_character_change_is_named() {
    let ledger = Ledger::load(&root()).unwrap();
    assert_eq!(ledger.kernel, "7.3.4");
    assert!(ledger.functions.len() > 80, "the ledger lists {} functions", ledger.functions.len());
    let source = source_7_3_4();
    // Every fingerprint against the real source: nothing differs, so no diff is read.
    let c = port::check_against_ledger(&ledger, None, source.as_ref(), "7.3.4").unwrap();
    assert!(c.matches(), "the ledger no longer matches the 7.3.4 source:\n{}", c.render(&ledger.kernel));
    assert_eq!(c.unchanged(), ledger.functions.len());

    // A copy of the source with one character changed inside page_cache_async_ra().
    let tmp = tempfile::tempdir().unwrap();
    for f in &ledger.functions {
        let path = tmp.path().join(&f.file);
        if !path.exists() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, source.read(&f.file).unwrap().unwrap()).unwrap();
        }
    }
    let file = tmp.path().join("mm/readahead.c");
    let text = std::fs::read_to_string(&file).unwrap();
    let body = port::extract(&text, "page_cache_async_ra").unwrap().unwrap();
    let at = text.find(&body).unwrap() + body.find("ra->size").expect("the body sets ra->size");
    let mut bytes = text.into_bytes();
    bytes[at + "ra->siz".len()] = b'f';
    std::fs::write(&file, bytes).unwrap();
    let c = port::check_against_ledger(&ledger, Some(source.as_ref()), &DirFiles::new(tmp.path()), "copy").unwrap();
    assert_eq!(c.differing(), ["page_cache_async_ra"], "{}", c.render("7.3.4"));
    let diff = &c.changed[0].diff;
    assert!(diff.starts_with("--- a/mm/readahead.c (Linux 7.3.4)\n+++ b/mm/readahead.c (copy)\n"), "{diff}");
    let minus: Vec<&str> = diff.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).collect();
    let plus: Vec<&str> = diff.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).collect();
    assert_eq!(minus.len(), 1, "{diff}");
    assert_eq!(plus, [minus[0].replacen('-', "+", 1).replacen("ra->size", "ra->sizf", 1)], "{diff}");
}

/// A repository root (kernels/, model/ledger.txt) whose base is a git tree holding the
/// ledger's files as the 7.3.4 source has them, committed once (a stand-in for mm-new: edits
/// then add commits). Its cache reaches the real cache's source and unpacked trees, so
/// port-check can read 7.3.4 for its diffs.
struct Rig {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    linux: PathBuf,
    cache: PathBuf,
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The parts of the real cache a rig's cache links to: the source `./setup` fetched, the
/// trees unpacked from it, and their locks.
const SHARED: [&str; 3] = ["source", "trees", "locks"];

fn rig(kernels_yaml_extra: &str) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let (root, linux, cache) = (tmp.path().join("repo"), tmp.path().join("linux"), tmp.path().join("cache"));
    let source = source_7_3_4();
    let ledger = Ledger::load(&self::root()).unwrap();
    for file in ledger.functions.iter().map(|f| f.file.as_str()).chain(["Makefile"]) {
        let path = linux.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, source.read(file).unwrap().unwrap_or_else(|| panic!("7.3.4 has no {file}"))).unwrap();
    }
    git(&linux, &["init", "-q"]);
    git(&linux, &["add", "-A"]);
    git(&linux, &["commit", "-q", "-m", "7.3.4"]);
    std::fs::create_dir_all(&cache).unwrap();
    for dir in SHARED {
        std::os::unix::fs::symlink(self::cache().root.join(dir), cache.join(dir)).unwrap();
    }
    std::fs::create_dir_all(root.join("kernels/variants")).unwrap();
    std::fs::create_dir_all(root.join("model")).unwrap();
    std::fs::copy(self::root().join(port::LEDGER), root.join(port::LEDGER)).unwrap();
    std::fs::write(root.join("kernels/config.fragment"), "").unwrap();
    std::fs::write(
        root.join("kernels/kernels.yaml"),
        format!("base:\n  git: {}\nconfig: config.fragment\n{kernels_yaml_extra}", linux.display()),
    )
    .unwrap();
    Rig { _tmp: tmp, root, linux, cache }
}

impl Rig {
    fn radiff(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_radiff"))
            .args(args)
            .env("RADIFF_ROOT", &self.root)
            .env("RADIFF_CACHE", &self.cache)
            .env_remove("RADIFF_KERNEL_TREE")
            .env_remove("RADIFF_KERNEL_REV")
            .env_remove("RADIFF_BASE_MODEL")
            .output()
            .unwrap()
    }

    /// Replaces `from` by `to` in `file` of the base tree and commits it.
    fn commit_edit(&self, file: &str, from: &str, to: &str) {
        let path = self.linux.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} has no `{from}`");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        git(&self.linux, &["commit", "-q", "-am", "mm/readahead: a change"]);
    }
}

fn out(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn port_check_names_exactly_the_function_a_base_changed_with_its_diff() {
    let rig = rig("");
    let o = rig.radiff(&["kernels", "port-check"]);
    let (text, err) = out(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{err}");
    let total = Ledger::load(&rig.root).unwrap().functions.len();
    assert!(
        text.ends_with(&format!("unchanged: {total} of {total} ported functions (the model ports Linux 7.3.4)\n")),
        "{text}"
    );

    // One function's body changes (`sync_ra`'s `req_count` guard); a comment elsewhere too,
    // which is no change.
    let sync = port::extract(&std::fs::read_to_string(rig.linux.join("mm/readahead.c")).unwrap(), "page_cache_sync_ra")
        .unwrap()
        .unwrap();
    let line = sync
        .lines()
        .skip_while(|l| *l != "{")
        .find(|l| l.contains("req_count") && l.trim_end().ends_with(';'))
        .unwrap()
        .to_string();
    rig.commit_edit("mm/readahead.c", &line, &format!("{line} /* reworded */"));
    assert_eq!(rig.radiff(&["kernels", "port-check"]).status.code(), Some(0), "a comment is no change");
    let edited = format!("{line}\n\tif (req_count > 1024)\n\t\treq_count = 1024;");
    rig.commit_edit("mm/readahead.c", &format!("{line} /* reworded */"), &edited);
    let o = rig.radiff(&["kernels", "port-check"]);
    let (text, err) = out(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{err}");
    let named: Vec<&str> = text.lines().filter(|l| l.starts_with("changed: ") || l.starts_with("gone: ")).collect();
    assert_eq!(named, ["changed: page_cache_sync_ra (mm/readahead.c)"], "{text}");
    assert!(text.contains("+\tif (req_count > 1024)\n+\t\treq_count = 1024;\n"), "{text}");
    assert!(text.contains("--- a/mm/readahead.c (Linux 7.3.4)\n+++ b/mm/readahead.c (base)\n"), "{text}");
    // The changed function runs as the base's C in the hybrid (the ledger's bodies are the
    // file here, and they compile with radiff's header).
    if Command::new("gcc").arg("--version").output().is_ok() {
        assert!(text.contains("\n  page_cache_sync_ra: runs as C"), "{text}");
    }
    assert!(
        text.contains(&format!(
            "\nunchanged: {} of {total} ported functions (the model ports Linux 7.3.4)\n",
            total - 1
        )),
        "{text}"
    );
    // Last, what the base's trials are checked against: the hybrid, running its changed
    // function as its C.
    if Command::new("gcc").arg("--version").output().is_ok() {
        assert!(
            text.ends_with(&format!(
                "\nthe base's trials are checked against the hybrid: mm/readahead.c (with mm/filemap.c's page_cache_next_miss(), page_cache_prev_miss()) of {} at HEAD ran as C (the tree changes page_cache_sync_ra())\n",
                rig.linux.display()
            )),
            "{text}"
        );
    }

    // The same rig at the commit before: the function is restored.
    git(&rig.linux, &["checkout", "-q", "HEAD~1"]);
    let o = rig.radiff(&["kernels", "port-check"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", out(&o));
}

/// Without the 7.3.4 source in the cache, port-check still names what a base changed (the
/// ledger's fingerprints say so), and says in place of the diff how to fetch the source.
#[test]
fn without_the_source_port_check_names_the_change_and_says_how_to_fetch_the_source() {
    let rig = rig("");
    for dir in SHARED {
        std::fs::remove_file(rig.cache.join(dir)).unwrap();
    }
    let o = rig.radiff(&["kernels", "port-check"]);
    assert_eq!(o.status.code(), Some(0), "a base that matches needs no source: {:?}", out(&o));
    rig.commit_edit("mm/readahead.c", "\t\t\t\t\t\t\tra->size >> 1;\n", "\t\t\t\t\t\t\tra->size >> 2;\n");
    let o = rig.radiff(&["kernels", "port-check"]);
    let (text, err) = out(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{err}");
    let tarball = rig.cache.join("source/linux-source-7.3.tar.xz");
    assert_eq!(
        text.lines().take(5).collect::<Vec<_>>(),
        [
            &format!("base: {} at HEAD", rig.linux.display()),
            "changed: page_cache_sync_ra (mm/readahead.c)",
            "  page_cache_sync_ra: runs as C (radiff kernels hybrid-check compares it with the port)",
            &format!(
                "no diffs: Linux 7.3.4's own text, the diffs' before side, is read from {}, which is missing",
                tarball.display()
            ),
            "fix: run ./setup (it fetches Debian's linux-source-7.3; if kernels/kernels.yaml names another package, run RADIFF_SOURCE_PACKAGE=linux-source-7.3 ./setup)",
        ],
        "{text}"
    );
    assert!(!rig.cache.join("trees").exists(), "nothing unpacked");
}

#[test]
fn a_variant_lists_the_ported_functions_its_patch_changes() {
    let rig = rig("");
    let dir = rig.root.join("kernels/variants/my-fix");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(rig.linux.join("mm/readahead.c")).unwrap();
    let body = port::extract(&text, "page_cache_async_ra").unwrap().unwrap();
    let line = body.lines().find(|l| l.contains("ra->size")).unwrap();
    let after = text.replacen(line, &format!("{line}\n\tra->size = ra->size;"), 1);
    write_patch(&dir, "mm/readahead.c", &text, &after);
    let o = rig.radiff(&["kernels", "port-check", "my-fix"]);
    let (text, err) = out(&o);
    assert_eq!(o.status.code(), Some(0), "the base matches: {text}{err}");
    let section = text.split("variant my-fix:").nth(1).unwrap_or_else(|| panic!("{text}"));
    let named: Vec<&str> = section.lines().filter(|l| l.starts_with("changed: ") || l.starts_with("gone: ")).collect();
    assert_eq!(named, ["changed: page_cache_async_ra (mm/readahead.c)"], "{text}");
    let o = rig.radiff(&["kernels", "port-check", "no-such"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).1.contains("unknown variant `no-such`"), "{:?}", out(&o));
}

#[test]
fn a_variant_that_changes_generic_fadvise_runs_it_as_c_and_a_base_whose_fadvise_c_fails_says_why() {
    if Command::new("gcc").arg("--version").output().is_err() {
        panic!("cannot run: gcc is missing (apt-get install gcc): the hybrid compiles the tree's C");
    }
    let rig = rig("");
    let dir = rig.root.join("kernels/variants/fadvise-fix");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(rig.linux.join("mm/fadvise.c")).unwrap();
    let (from, to) = ("file->f_ra.ra_pages = bdi->ra_pages * 2;", "file->f_ra.ra_pages = bdi->ra_pages * 4;");
    assert!(text.contains(from), "7.3.4's generic_fadvise() has no `{from}`");
    let after = text.replacen(from, to, 1);
    write_patch(&dir, "mm/fadvise.c", &text, &after);
    let (text, err) = out(&rig.radiff(&["kernels", "port-check", "fadvise-fix"]));
    let section = text.split("variant fadvise-fix:").nth(1).unwrap_or_else(|| panic!("{text}{err}"));
    assert!(section.contains("changed: generic_fadvise (mm/fadvise.c)\n"), "{text}");
    assert!(section.contains("\n  generic_fadvise: runs as C"), "{text}");

    // A base whose mm/fadvise.c does not compile with radiff's header: the compiler's first error.
    rig.commit_edit("mm/fadvise.c", from, "file->f_ra.no_such_member = 2;");
    let line = std::fs::read_to_string(rig.linux.join("mm/fadvise.c"))
        .unwrap()
        .lines()
        .position(|l| l.contains("no_such_member"))
        .unwrap()
        + 1;
    let (text, err) = out(&rig.radiff(&["kernels", "port-check"]));
    let want = format!(
        "\n  generic_fadvise: does not run as C: mm/fadvise.c does not compile with radiff's header: mm/fadvise.c:{line}:"
    );
    assert!(text.contains(&want), "{text}{err}");
}

#[test]
fn a_base_that_is_not_a_kernel_tree_or_an_unknown_model_is_an_error_at_its_line() {
    let bad = rig("model: maybe\n");
    let o = bad.radiff(&["kernels", "port-check"]);
    let err = out(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("kernels/kernels.yaml:4: `model: maybe`: the base's model is `base`"), "{err}");
    let rig = rig("");
    let yaml = rig.root.join("kernels/kernels.yaml");
    std::fs::write(&yaml, format!("base:\n  git: {}\nconfig: config.fragment\n", rig.root.display())).unwrap();
    let o = rig.radiff(&["kernels", "build"]);
    let err = out(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("kernels/kernels.yaml:2:") && err.contains("is not a kernel tree: it has no Makefile"),
        "{err}"
    );
    assert!(!rig.cache.join("kernels").exists(), "nothing built");
}

/// Every decision model/lines.txt places is found, as its own lines, in the ported
/// kernel's source; the anchors are checked against the real tree, not against themselves.
#[test]
fn every_listed_decision_is_found_in_the_7_3_4_source() {
    use radiff::port::lines::{locate, Anchors};
    let ledger = Ledger::load(&root()).unwrap();
    let anchors = Anchors::load(&root()).unwrap();
    let tree = source_7_3_4();
    let mut tree = port::Cached::new(tree.as_ref());
    let mut lost = Vec::new();
    let mut n = 0;
    for id in anchors.ids() {
        n += 1;
        match locate(&anchors, &ledger, &mut tree, id).unwrap() {
            Some(at) if at.exact => {}
            other => lost.push(format!("{id}: {other:?}")),
        }
    }
    assert!(lost.is_empty(), "anchors of model/lines.txt not found in 7.3.4:\n{}", lost.join("\n"));
    assert!(n > 100, "model/lines.txt places {n} decisions");
    // The end alignment of page_cache_async_ra(), as 7.3.4 numbers its lines.
    let at = locate(&anchors, &ledger, &mut tree, "page_cache_async_ra: aligned_end < end: trimmed").unwrap().unwrap();
    assert_eq!(at.to_string(), "mm/readahead.c:713-717");
    // A case label the function has twice (its DAX switch, then the real one): the real one.
    let at = locate(&anchors, &ledger, &mut tree, "generic_fadvise: POSIX_FADV_WILLNEED").unwrap().unwrap();
    assert_eq!(at.to_string(), "mm/fadvise.c:98-106");
    // The fault path, as 7.3.4 numbers its lines: the read-around window, the major fault
    // that leads to it, finish_fault()'s fallback to one page, and the retry after a major
    // fault under the VMA lock.
    for (id, lines) in [
        ("do_sync_mmap_readahead: read-around", "mm/filemap.c:3435-3438"),
        ("filemap_fault: no folio: VM_FAULT_MAJOR", "mm/filemap.c:3596-3597"),
        ("finish_fault: folio beyond the VMA or page table: one page", "mm/memory.c:5836-5840"),
        ("do_user_addr_fault: VMA lock: VM_FAULT_RETRY, major: FAULT_FLAG_TRIED", "arch/x86/mm/fault.c:1352-1353"),
    ] {
        let at = locate(&anchors, &ledger, &mut tree, id).unwrap().unwrap();
        assert_eq!(at.to_string(), lines, "{id}");
    }
}

/// `radiff explain`'s parting of async-align-v1 from the base, placed in the real 7.3.4
/// source: the base's decision there is page_cache_async_ra()'s end alignment.
#[test]
fn the_async_align_v1_parting_is_placed_at_the_end_alignment() {
    use radiff::explain::{first_parting, render_parting, Placer};
    use radiff::testing::example_stream;
    use radiff_model::{explain, ModelConfig, Policy};
    let input = example_stream();
    let config = ModelConfig::default();
    let base = explain(&input, &Policy::BASE, &config);
    let v1 = explain(&input, &Policy::for_variant("async-align-v1").unwrap(), &config);
    let parting = first_parting(&base, &v1).unwrap();
    let tree = source_7_3_4();
    let mut placer = Placer::new(&root(), tree.as_ref()).unwrap();
    let text = render_parting(&parting, "async-align-v1", &mut placer);
    assert!(
        text.contains("base:  page_cache_async_ra: aligned_end < end: trimmed  (mm/readahead.c:713-717)"),
        "{text}"
    );
    assert!(text.contains("async-align-v1's change to page_cache_async_ra()"), "{text}");
}

/// A patch without a model policy, shown where a window's base path goes through it:
/// async-align-v1's mail applied to the real 7.3.4 source gives one hunk, in
/// page_cache_async_ra(), and the base path of the window where v1's policy parts from the
/// base decided the end alignment inside that hunk's lines.
#[test]
fn async_align_v1s_hunk_holds_the_decision_its_parting_window_took() {
    use radiff::explain::{first_parting, hunks_on_path, Placer};
    use radiff::testing::example_stream;
    use radiff_model::{explain, ModelConfig, Policy};
    let tree = source_7_3_4();
    let ledger = Ledger::load(&root()).unwrap();
    let kernels = Kernels::load(&root()).unwrap();
    let v1 = kernels.variant("async-align-v1").unwrap();
    let files: Vec<&str> = ledger.functions.iter().map(|f| f.file.as_str()).collect();
    let patched = port::PatchedFiles::new(tree.as_ref(), "async-align-v1", &v1.patches, &files).unwrap();
    let hunks = port::hunks::hunks_of(&ledger, tree.as_ref(), &patched).unwrap();
    let names: Vec<Vec<String>> = hunks.iter().map(|h| h.functions.clone()).collect();
    assert_eq!(names, vec![vec!["page_cache_async_ra".to_string()]], "{hunks:#?}");
    let input = example_stream();
    let config = ModelConfig::default();
    let base = explain(&input, &Policy::BASE, &config);
    let window = first_parting(&base, &explain(&input, &Policy::for_variant("async-align-v1").unwrap(), &config))
        .unwrap()
        .window;
    let mut placer = Placer::new(&root(), tree.as_ref()).unwrap();
    let text = hunks_on_path(&hunks, &base.notes[window].decisions, "async-align-v1", &mut placer);
    assert!(text.starts_with("async-align-v1's hunk at mm/readahead.c:"), "{text}");
    assert!(text.contains("where the path decided:\n"), "{text}");
    assert!(text.contains("page_cache_async_ra: aligned_end < end: trimmed  (mm/readahead.c:713-717)"), "{text}");
    assert!(text.contains("\n      +\t"), "the hunk's added lines are shown: {text}");
    // A window decided elsewhere (the first, a sync window) shows no hunk.
    assert_eq!(hunks_on_path(&hunks, &base.notes[0].decisions, "async-align-v1", &mut placer), "");
}

/// A variant's patch `dir/0001-fix.patch`: the change of `file` from `before` to `after`, as
/// a mail would carry it.
fn write_patch(dir: &Path, file: &str, before: &str, after: &str) {
    let diff = similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .header(&format!("a/{file}"), &format!("b/{file}"))
        .to_string();
    std::fs::write(
        dir.join("0001-fix.patch"),
        format!("Subject: [PATCH] fix\n---\ndiff --git a/{file} b/{file}\n{diff}"),
    )
    .unwrap();
}

/// A base that changes a function the hybrid runs as C and one it does not (khugepaged's):
/// its trials are checked against the hybrid, which runs the first as the tree's C and
/// names the second as 7.3.4's port; with the second alone, against the port, saying why.
#[test]
fn a_moved_base_is_followed_where_the_hybrid_can_and_the_rest_is_named() {
    if Command::new("gcc").arg("--version").output().is_err() {
        panic!("gcc is needed to build the hybrid (./setup installs it)");
    }
    let rig = rig("");
    let body = |file: &str, name: &str| {
        port::extract(&std::fs::read_to_string(rig.linux.join(file)).unwrap(), name).unwrap().unwrap()
    };
    let first_statement =
        |text: &str| text.lines().skip_while(|l| *l != "{").find(|l| l.trim_end().ends_with(';')).unwrap().to_string();
    // A statement added to `name()` of `file`: port-check names a change (exit 1); its report.
    let change = |file: &str, name: &str| {
        let statement = first_statement(&body(file, name));
        rig.commit_edit(file, &statement, &format!("{statement}\n\t(void)0;"));
        let o = rig.radiff(&["kernels", "port-check"]);
        let (text, err) = out(&o);
        assert_eq!(o.status.code(), Some(1), "{text}{err}");
        text
    };
    let text = change("mm/khugepaged.c", "collapse_file");
    assert!(
        text.ends_with("\nthe base's trials are checked against the Rust port of 7.3.4: the hybrid runs none of what the tree changes: collapse_file() (mm/khugepaged.c)\n"),
        "{text}"
    );
    let text = change("mm/readahead.c", "page_cache_sync_ra");
    assert!(
        text.ends_with(&format!(
            "\nthe base's trials are checked against the hybrid: mm/readahead.c (with mm/filemap.c's page_cache_next_miss(), page_cache_prev_miss()) of {} at HEAD ran as C (the tree changes page_cache_sync_ra()); the Rust port of 7.3.4 for the rest: collapse_file() (mm/khugepaged.c)\n",
            rig.linux.display()
        )),
        "{text}"
    );
}

#[test]
fn linux_7_3_4_reads_with_rwf_dontcache_on_xfs_and_ext4_and_refuses_it_on_f2fs_as_its_tree_says() {
    use radiff_model::FsKind;
    let tree = source_7_3_4();
    for fs in [FsKind::Xfs, FsKind::Ext4] {
        assert_eq!(radiff::port::refuses::dontcache(tree.as_ref(), fs).unwrap(), None, "{}", fs.name());
    }
    let why = radiff::port::refuses::dontcache(tree.as_ref(), FsKind::F2fs).unwrap().expect("f2fs refuses it");
    assert!(why.contains("fs/f2fs/file.c sets no FOP_DONTCACHE"), "{why}");
}
