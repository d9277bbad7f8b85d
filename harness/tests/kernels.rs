//! Bad input to `radiff kernels`: patches that do not apply, unknown variants, missing
//! tools. Real `git` and `patch` on a tiny kernel-shaped git tree; no build, no VM.

use std::path::{Path, PathBuf};
use std::process::Command;

use radiff::cache::Cache;
use radiff::kernels::{Base, Builder, Kernels};
use radiff::Error;

const READAHEAD_C: &str = "\
void page_cache_async_ra(void)
{
	align = 1UL << min(ra->order, ffs(max_pages) - 1);
	end = ra->start + ra->size;
	aligned_end = round_down(end, align);
	if (aligned_end > ra->start)
		ra->size -= end - aligned_end;
	ra->async_size = ra->size;
}
";

/// A patch as mailed: prose, the diff, a signature.
const GOOD: &str = "\
From: A Developer <dev@example.org>
Subject: [PATCH] mm/readahead: comment the alignment

Some prose the patch tool skips.
---
diff --git a/mm/readahead.c b/mm/readahead.c
--- a/mm/readahead.c
+++ b/mm/readahead.c
@@ -1,5 +1,6 @@
 void page_cache_async_ra(void)
 {
+	/* align the end */
 	align = 1UL << min(ra->order, ffs(max_pages) - 1);
 	end = ra->start + ra->size;
 	aligned_end = round_down(end, align);
-- 
2.43.0
";

/// A patch against code the tree does not have.
const BAD: &str = "\
Subject: [PATCH] mm/readahead: against some other tree
---
--- a/mm/readahead.c
+++ b/mm/readahead.c
@@ -3,3 +3,3 @@
-	if (ra->size > max_pages)
+	if (ra->size >= max_pages)
 		ra->size = max_pages;
 	ra->async_size = ra->size;
";

/// Commits everything in the git tree `dir`.
fn commit_all(dir: &Path, message: &str) {
    sh(dir, &["git", "add", "-A"]);
    sh(dir, &["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message]);
}

fn sh(dir: &Path, args: &[&str]) {
    let status = Command::new(args[0]).args(&args[1..]).current_dir(dir).status().unwrap();
    assert!(status.success(), "{args:?} failed");
}

/// A repository with `kernels/` whose base is a git tree holding mm/readahead.c, and a
/// cache, both in a fresh temporary directory.
struct Rig {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    linux: PathBuf,
    cache: Cache,
    /// The base its kernels.yaml names.
    base: Base,
}

impl Rig {
    /// The rig's kernels, with the base its kernels.yaml names even where
    /// RADIFF_KERNEL_TREE names the user's tree: that override is for the repository's
    /// kernels, not for the rig's (and the process environment is shared by every test).
    fn kernels(&self) -> Kernels {
        let mut kernels = Kernels::load(&self.repo).unwrap();
        kernels.base = self.base.clone();
        kernels
    }
}

fn rig(variants: &[(&str, &[(&str, &str)])]) -> Rig {
    rig_with(READAHEAD_C, variants)
}

/// A rig whose base's mm/readahead.c is `readahead_c`.
fn rig_with(readahead_c: &str, variants: &[(&str, &[(&str, &str)])]) -> Rig {
    let rig = untraceable_rig(readahead_c, variants);
    write_tracepoints(&rig.linux);
    commit_all(&rig.linux, "tracepoints");
    rig
}

/// The headers of every tracepoint radiff enables, each defined as the kernel does
/// (`TRACE_EVENT(NAME, ...`), in `tree`.
fn write_tracepoints(tree: &Path) {
    let dir = tree.join("include/trace/events");
    std::fs::create_dir_all(&dir).unwrap();
    for event in radiff::kernels::needed_tracepoints() {
        let (system, name) = event.split_once(':').unwrap();
        let header = dir.join(format!("{system}.h"));
        let mut text = std::fs::read_to_string(&header).unwrap_or_default();
        text.push_str(&format!("TRACE_EVENT({name},\n\tTP_PROTO(void),\n);\n"));
        std::fs::write(&header, text).unwrap();
    }
}

/// The one option of the rigs' fragment, declared in `tree` as arch/x86/Kconfig does.
fn write_kconfig(tree: &Path) {
    std::fs::create_dir_all(tree.join("arch/x86")).unwrap();
    std::fs::write(tree.join("arch/x86/Kconfig"), "config 64BIT\n\tbool \"64-bit kernel\"\n").unwrap();
}

/// A rig whose base has no tracepoint headers at all (as Debian's 6.12 has no
/// include/trace/events/readahead.h).
fn untraceable_rig(readahead_c: &str, variants: &[(&str, &[(&str, &str)])]) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let linux = tmp.path().join("linux");
    std::fs::create_dir_all(linux.join("mm")).unwrap();
    std::fs::write(linux.join("mm/readahead.c"), readahead_c).unwrap();
    std::fs::write(linux.join("Makefile"), "VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n").unwrap();
    write_kconfig(&linux);
    sh(&linux, &["git", "init", "-q"]);
    commit_all(&linux, "base");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("kernels/variants")).unwrap();
    std::fs::write(
        repo.join("kernels/kernels.yaml"),
        format!("base:\n  git: {}\n  rev: HEAD\nconfig: config.fragment\n", linux.display()),
    )
    .unwrap();
    std::fs::write(repo.join("kernels/config.fragment"), "CONFIG_64BIT=y\n").unwrap();
    for (name, patches) in variants {
        let dir = repo.join("kernels/variants").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in *patches {
            std::fs::write(dir.join(file), text).unwrap();
        }
    }
    let cache = Cache { root: tmp.path().join("cache") };
    let base = Base::Git { tree: linux.clone(), rev: "HEAD".into() };
    Rig { _tmp: tmp, repo, linux, cache, base }
}

/// Builds `variant` in the rig, which must fail.
fn build_error(rig: &Rig, variant: &str) -> Error {
    let kernels = rig.kernels();
    let builder = Builder::new(&kernels, &rig.cache);
    builder.build(kernels.variant(variant).unwrap()).unwrap_err()
}

fn work_tree(cache: &Cache) -> PathBuf {
    let trees: Vec<PathBuf> = std::fs::read_dir(cache.root.join("trees")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(trees.len(), 1, "{trees:?}");
    trees[0].clone()
}

fn git_status(dir: &Path) -> String {
    String::from_utf8(
        Command::new("git").args(["status", "--porcelain", "--ignored"]).current_dir(dir).output().unwrap().stdout,
    )
    .unwrap()
}

#[test]
fn a_patch_that_does_not_apply_names_variant_patch_and_hunk_and_changes_nothing() {
    let rig = rig(&[("broken", &[("0001-good.mbox", GOOD), ("0002-bad.patch", BAD)])]);
    let err = build_error(&rig, "broken");
    let Error::PatchFailed { ref variant, ref patch, ref output } = err else {
        panic!("expected PatchFailed, got {err}")
    };
    assert_eq!(variant, "broken");
    assert!(patch.ends_with("kernels/variants/broken/0002-bad.patch"), "{}", patch.display());
    assert!(output.contains("Hunk #1 FAILED"), "{output}");
    let text = err.to_string();
    assert!(
        text.contains("variant `broken`")
            && text.contains("0002-bad.patch")
            && text.contains("the work tree was restored"),
        "{text}"
    );

    // The first patch applied, the second failed: the work tree is back at the base,
    // with no .orig or .rej files, and the developer's own tree was never touched.
    let tree = work_tree(&rig.cache);
    assert_eq!(std::fs::read_to_string(tree.join("mm/readahead.c")).unwrap(), READAHEAD_C);
    assert_eq!(git_status(&tree), "");
    assert_eq!(git_status(&rig.linux), "");
    // Nothing was built or half-built.
    assert!(
        !rig.cache.root.join("kernels").exists()
            || std::fs::read_dir(rig.cache.root.join("kernels")).unwrap().next().is_none()
    );
}

#[test]
fn a_good_patch_applies_through_the_mail_around_it() {
    // Applying works without a kernel to build: the build then fails at configure
    // (this tree has no Makefile), and the tree is reset even so.
    let rig = rig(&[("good", &[("0001-good.mbox", GOOD)])]);
    let err = build_error(&rig, "good");
    assert!(matches!(err, Error::Build { .. }), "{err}");
    assert!(err.to_string().contains("full log:"), "{err}");
    let tree = work_tree(&rig.cache);
    assert_eq!(git_status(&tree), "");
}

#[test]
fn a_kernel_built_under_another_name_with_the_same_patches_is_copied_not_built() {
    let rig = rig(&[("first", &[("0001-good.mbox", GOOD)]), ("renamed", &[("0001-renamed.mbox", GOOD)])]);
    // No kernel builds in this tree; the failed build's `.partial` folder names the key,
    // and a finished kernel of that key is put there by hand.
    let _ = build_error(&rig, "first");
    let partial = std::fs::read_dir(rig.cache.root.join("kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".partial"))
        .expect("the failed build's .partial");
    let done = PathBuf::from(partial.to_string_lossy().trim_end_matches(".partial"));
    std::fs::create_dir_all(&done).unwrap();
    std::fs::write(done.join("bzImage"), b"a kernel").unwrap();
    std::fs::write(done.join("config"), b"CONFIG_64BIT=y\n").unwrap();
    let key = done.file_name().unwrap().to_string_lossy().rsplit('-').next().unwrap().to_string();

    let kernels = rig.kernels();
    let built = Builder::new(&kernels, &rig.cache).build(kernels.variant("renamed").unwrap()).unwrap();
    assert!(!built.compiled, "copied, not built");
    assert_eq!(built.bzimage, rig.cache.root.join("kernels").join(format!("renamed-{key}")).join("bzImage"));
    assert_eq!(std::fs::read(&built.bzimage).unwrap(), b"a kernel");
    assert!(std::fs::read_to_string(built.bzimage.with_file_name("series")).unwrap().contains("0001-renamed.mbox"));
}

#[test]
fn an_unknown_variant_lists_the_known_ones() {
    let rig = rig(&[("async-align-v1", &[("0001.patch", GOOD)])]);
    let kernels = rig.kernels();
    let err = kernels.variant("async-allign-v1").unwrap_err().to_string();
    assert_eq!(err, "unknown variant `async-allign-v1`; known variants: base, async-align-v1");
}

#[test]
fn a_variant_directory_without_patches_is_an_error() {
    let rig = rig(&[("empty", &[("README.md", "notes only")])]);
    let err = Kernels::load(&rig.repo).unwrap_err().to_string();
    assert!(err.contains("variants/empty") && err.contains("no patch file"), "{err}");
}

#[test]
fn variant_yaml_names_the_model_policy_a_patch_must_match() {
    use radiff::kernels::{ModelExpectation, VARIANT_FILE};
    let rig = rig(&[
        ("async-align-v1", &[("0001.patch", GOOD)]),
        ("cleanup", &[("0001.patch", GOOD), (VARIANT_FILE, "# a refactor\nmodel: base\n")]),
        ("v3", &[("0001.patch", GOOD), (VARIANT_FILE, "description: seed 000, third try\nmodel: async-align-v2\n")]),
        ("my-fix", &[("0001.patch", GOOD)]),
        ("opt-out", &[("0001.patch", GOOD), (VARIANT_FILE, "model: none\n")]),
    ]);
    let kernels = rig.kernels();
    let model = |name: &str| kernels.variant(name).unwrap().model.clone();
    assert_eq!(model("base"), ModelExpectation::SameName("base".into()));
    assert_eq!(model("async-align-v1"), ModelExpectation::SameName("async-align-v1".into()));
    let dir = rig.repo.join("kernels/variants");
    assert_eq!(
        model("cleanup"),
        ModelExpectation::Declared { policy: "base".into(), file: dir.join("cleanup").join(VARIANT_FILE), line: 2 }
    );
    assert_eq!(model("v3").policy(), Some("async-align-v2"));
    assert_eq!(model("my-fix"), ModelExpectation::None);
    assert_eq!(model("opt-out"), ModelExpectation::Off { file: dir.join("opt-out").join(VARIANT_FILE), line: 1 });
    // variant.yaml is not a patch of the series.
    assert_eq!(kernels.variant("cleanup").unwrap().patches.len(), 1);
}

#[test]
fn explore_routes_a_variant_without_policy_to_the_kernels_and_declared_ones_to_their_policy() {
    use radiff::explore::{policies_in, without_policy_in};
    use radiff::kernels::VARIANT_FILE;
    let rig = rig(&[
        ("cleanup", &[("0001.patch", GOOD), (VARIANT_FILE, "model: base\n")]),
        ("v3", &[("0001.patch", GOOD), (VARIANT_FILE, "model: async-align-v2\n")]),
        ("my-fix", &[("0001.patch", GOOD)]),
        ("opt-out", &[("0001.patch", GOOD), (VARIANT_FILE, "model: none\n")]),
    ]);
    let kernels = rig.kernels();
    let k = Some(&kernels);
    let v = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(without_policy_in(k, &v(&["base", "my-fix"])).unwrap(), Some("my-fix".to_string()));
    assert_eq!(without_policy_in(k, &v(&["base", "opt-out"])).unwrap(), Some("opt-out".to_string()));
    assert_eq!(without_policy_in(k, &v(&["base", "cleanup", "v3", "async-align-v1"])).unwrap(), None);
    let pol = policies_in(k, &v(&["cleanup", "v3"])).unwrap();
    assert_eq!(pol[0].1.port(), Some(&radiff_model::Policy::BASE));
    assert_eq!(pol[1].1.port(), radiff_model::Policy::for_variant("async-align-v2").as_ref());
    for bad in [&["my-fix"][..], &["base", "my-fix", "opt-out"], &["base", "my-fix", "cleanup"]] {
        let e = without_policy_in(k, &v(bad)).unwrap_err().to_string();
        assert!(e.contains("--variants base,my-fix"), "{bad:?}: {e}");
    }
    let e = without_policy_in(k, &v(&["base", "nosuch"])).unwrap_err().to_string();
    assert!(e.contains("nosuch") && e.contains("my-fix"), "{e}");
    assert!(policies_in(k, &v(&["my-fix"])).is_err());
}

#[test]
fn a_bad_variant_yaml_is_an_error_at_its_line() {
    use radiff::kernels::VARIANT_FILE;
    let load = |text: &str| {
        let rig = rig(&[("my-fix", &[("0001.patch", GOOD), (VARIANT_FILE, text)])]);
        let file = rig.repo.join("kernels/variants/my-fix").join(VARIANT_FILE);
        (Kernels::load(&rig.repo).unwrap_err().to_string(), file.display().to_string())
    };
    let (e, file) = load("description: x\nmodel: async-align-v9\n");
    assert!(e.starts_with(&format!("{file}:2: `model: async-align-v9`: the model has no policy")), "{e}");
    assert!(e.contains("async-align-v1") && e.contains("model: base"), "{e}");
    let (e, file) = load("modle: base\n");
    assert!(e.starts_with(&format!("{file}:1: ")) && e.contains("unknown field `modle`"), "{e}");
    let (e, file) = load("description: only words\n");
    assert!(e.starts_with(&format!("{file}: `model:` is missing")), "{e}");
    let (e, _) = load("model: [base\n");
    assert!(e.contains(VARIANT_FILE), "{e}");
}

#[test]
fn a_missing_tool_names_its_package() {
    let err = radiff::process::require_tool("mkfs.f2fs-not-installed").unwrap_err().to_string();
    assert!(err.contains("`mkfs.f2fs-not-installed` not found"), "{err}");
    assert_eq!(radiff::process::package_of("mkfs.f2fs"), "f2fs-tools");
    assert_eq!(radiff::process::package_of("/usr/bin/flex"), "flex");
    let err = radiff::process::Cmd::new("no-such-program-radiff").read().unwrap_err().to_string();
    assert!(err.contains("not found: install"), "{err}");
}

#[test]
fn the_repositorys_kernels_directory_loads() {
    let kernels = Kernels::load(&radiff::repo_root()).unwrap();
    let names = kernels.names();
    assert_eq!(names[0], "base");
    for v in ["async-align-v1", "async-align-v2", "sync-ra-when-disabled", "f2fs-extent-ra"] {
        assert!(names.iter().any(|n| n == v), "{v} missing from {names:?}");
        assert_eq!(kernels.variant(v).unwrap().model.policy(), Some(v), "the model has no policy for {v}");
    }
}

/// A repository whose base is a Debian-style source tarball (`linux-source-7.3/mm/...`)
/// in the cache, as ./setup leaves it, with the given variants.
fn debian_rig(variants: &[(&str, &[(&str, &str)])]) -> Rig {
    let mut rig = rig(variants);
    rig.base = Base::Debian { package: "linux-source-7.3".into() };
    std::fs::write(
        rig.repo.join("kernels/kernels.yaml"),
        "base:\n  debian: linux-source-7.3\nconfig: config.fragment\n",
    )
    .unwrap();
    let source = rig.cache.root.join("source");
    std::fs::create_dir_all(&source).unwrap();
    let top = rig.linux.parent().unwrap().join("tarball");
    std::fs::create_dir_all(top.join("linux-source-7.3/mm")).unwrap();
    std::fs::write(top.join("linux-source-7.3/mm/readahead.c"), READAHEAD_C).unwrap();
    write_tracepoints(&top.join("linux-source-7.3"));
    write_kconfig(&top.join("linux-source-7.3"));
    // A file the kernel's own .gitignore files would hide: the record must keep it.
    std::fs::write(top.join("linux-source-7.3/.gitignore"), "*.o\n").unwrap();
    std::fs::write(top.join("linux-source-7.3/mm/shipped.o"), "shipped").unwrap();
    let tarball = source.join("linux-source-7.3.tar.xz");
    sh(&top, &["tar", "-cJf", tarball.to_str().unwrap(), "linux-source-7.3"]);
    rig
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The tree is recorded (the base tag, every file of the tarball, nothing else) and
/// clean, with no leftover marker.
fn assert_recorded(tree: &Path) {
    assert!(tree.join(".git/radiff-ready").is_file());
    let files = git_out(tree, &["ls-tree", "-r", "--name-only", "radiff-base"]);
    let mut headers: Vec<String> = radiff::kernels::needed_tracepoints()
        .iter()
        .map(|e| format!("include/trace/events/{}.h\n", e.split(':').next().unwrap()))
        .collect();
    headers.sort();
    headers.dedup();
    assert_eq!(files, format!(".gitignore\narch/x86/Kconfig\n{}mm/readahead.c\nmm/shipped.o\n", headers.concat()));
    assert_eq!(git_status(tree), "");
    assert!(!tree.join(".radiff-unpacked").exists());
}

#[test]
fn a_debian_base_build_records_the_tree_and_leaves_it_clean() {
    // The record runs beside the base's build, which fails at configure here (no
    // Makefile): the build waits for the record before resetting the tree.
    let rig = debian_rig(&[]);
    let err = build_error(&rig, "base");
    assert!(matches!(err, Error::Build { .. }), "{err}");
    assert_recorded(&work_tree(&rig.cache));
}

#[test]
fn a_debian_variant_waits_for_the_record_and_a_bad_patch_still_changes_nothing() {
    let rig = debian_rig(&[("broken", &[("0001-good.mbox", GOOD), ("0002-bad.patch", BAD)])]);
    let err = build_error(&rig, "broken");
    assert!(matches!(err, Error::PatchFailed { .. }), "{err}");
    let tree = work_tree(&rig.cache);
    assert_eq!(std::fs::read_to_string(tree.join("mm/readahead.c")).unwrap(), READAHEAD_C);
    assert_recorded(&tree);
}

#[test]
fn a_record_cut_short_is_made_again() {
    let rig = debian_rig(&[]);
    let kernels = rig.kernels();
    let builder = Builder::new(&kernels, &rig.cache);
    let tree = builder.work_tree().unwrap();
    assert_recorded(&tree);
    // As a run killed during `git add` leaves it: unpacked, a .git without the record.
    std::fs::remove_dir_all(tree.join(".git")).unwrap();
    sh(&tree, &["git", "init", "-q"]);
    std::fs::write(tree.join(".radiff-unpacked"), "").unwrap();
    assert_eq!(builder.work_tree().unwrap(), tree);
    assert_recorded(&tree);
}

/// Seed 001's mail as the repository keeps it (lore's raw view), the plain one.
fn seed_001() -> String {
    let dir = radiff::repo_root().join("kernels/variants/sync-ra-when-disabled");
    let mail = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "mbox"));
    std::fs::read_to_string(mail.expect("seed 001's mail")).unwrap()
}

/// An mm/readahead.c that `diff`'s hunks apply to: each hunk's old side (context and
/// removed lines) at the line its header names, filler lines between.
fn old_side(diff: &[&str]) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in diff {
        if let Some(header) = line.strip_prefix("@@ -") {
            let start: usize = header.split([',', ' ']).next().unwrap().parse().unwrap();
            while out.len() + 1 < start {
                out.push(format!("/* filler line {} */", out.len() + 1));
            }
        } else if let Some(old) = line.strip_prefix(' ').or_else(|| line.strip_prefix('-')) {
            if !line.starts_with("--- ") {
                out.push(old.to_string());
            }
        }
    }
    out.join("\n") + "\n/* the end */\n"
}

/// Seed 001's mail saved quoted-printable, base64 and as an attachment: each applies as a
/// variant through the kernels' own `patch -p1` (the one place radiff applies a patch) and
/// patches mm/readahead.c exactly as the plain mail does, where the raw copies would not.
#[test]
fn a_mail_as_clients_save_it_applies_as_a_variant_like_the_plain_one() {
    let plain = seed_001();
    let parsed = radiff::mail::parse(plain.as_bytes()).unwrap();
    let base = old_side(&parsed.patches[0].diff());
    let copies = radiff::testing::encoded_copies(&plain);
    let texts: Vec<(String, String)> = std::iter::once(("plain".to_string(), plain.clone()))
        .chain(copies.iter().map(|(how, raw)| (how.to_string(), String::from_utf8(raw.clone()).unwrap())))
        .collect();
    let files: Vec<(String, [(&str, &str); 1])> =
        texts.iter().map(|(how, text)| (how.clone(), [("0001-seed-001.mbox", text.as_str())])).collect();
    let variants: Vec<(&str, &[(&str, &str)])> = files.iter().map(|(how, f)| (how.as_str(), &f[..])).collect();
    let rig = rig_with(&base, &variants);
    let kernels = rig.kernels();
    let tree = radiff::port::DirFiles::new(&rig.linux);
    let patched = |name: &str| {
        let variant = kernels.variant(name).unwrap();
        let files = radiff::port::PatchedFiles::new(&tree, name, &variant.patches, &[])
            .unwrap_or_else(|e| panic!("{name} does not apply: {e}"));
        radiff::port::Files::read(&files, "mm/readahead.c").unwrap().unwrap()
    };
    let want = patched("plain");
    assert_ne!(want, base, "the plain mail changes the file");
    for (how, _) in &copies {
        assert_eq!(patched(how), want, "{how}: patched as the plain mail patches it");
    }
    // The raw quoted-printable copy is not a patch `patch` can read as it is.
    let raw = rig.repo.join("kernels/variants/quoted-printable/0001-seed-001.mbox");
    let out =
        Command::new("patch").args(["-p1", "--dry-run", "-i"]).arg(&raw).current_dir(&rig.linux).output().unwrap();
    assert!(!out.status.success(), "the encoded copy applied undecoded: the test shows nothing");
}

/// `radiff review` takes the same copies: each is seed 001's diff (the repository's
/// variant of it is reused), and made under a name of its own it is kept as it came and
/// applies.
#[test]
fn review_takes_a_mail_as_clients_save_it() {
    let plain = seed_001();
    let parsed = radiff::mail::parse(plain.as_bytes()).unwrap();
    let rig =
        rig_with(&old_side(&parsed.patches[0].diff()), &[("sync-ra-when-disabled", &[("0001-seed.mbox", &plain)])]);
    let kernels = rig.kernels();
    for (how, raw) in radiff::testing::encoded_copies(&plain) {
        let mail = rig.repo.join(format!("{how}.eml"));
        std::fs::write(&mail, &raw).unwrap();
        let same = radiff::review::prepare::prepare(&kernels, &rig.cache, &mail, None).unwrap();
        assert_eq!(same.variant, "sync-ra-when-disabled", "{how}: {}", same.how);
        assert_eq!(same.subject, parsed.subject, "{how}");
        let made = radiff::review::prepare::prepare(&kernels, &rig.cache, &mail, Some(how))
            .unwrap_or_else(|e| panic!("{how}: {e}"));
        assert!(made.how.starts_with(&format!("made kernels/variants/{how}/")), "{how}: {}", made.how);
        let kept = rig.repo.join("kernels/variants").join(how).join(format!("0001-{how}.mbox"));
        assert_eq!(std::fs::read(&kept).unwrap(), raw, "{how}: the mail is kept as it came");
    }
}

/// A base without the tracepoints a run enables is refused before anything is built, naming
/// the missing header and the fix, by the library and by `radiff kernels build` (exit 2);
/// the work tree is left clean and no kernel folder is begun. The same for a base whose
/// Kconfig lacks an option the fragment turns on. A base whose only lack is the whole
/// readahead header (a Linux before it) passes the tracepoints' check: it is traced flat.
#[test]
fn a_tree_without_the_tracepoints_is_refused_before_any_build() {
    let rig = untraceable_rig(READAHEAD_C, &[]);
    let started = std::time::Instant::now();
    let err = build_error(&rig, "base");
    let Error::Untraceable { ref variant, ref missing, .. } = err else { panic!("expected Untraceable, got {err}") };
    assert_eq!(variant, "base");
    let headers: Vec<&str> = missing.iter().map(|m| m.split(':').next().unwrap()).collect();
    assert_eq!(
        headers,
        [
            "include/trace/events/readahead.h",
            "include/trace/events/filemap.h",
            "include/trace/events/huge_memory.h",
            "include/trace/events/block.h"
        ],
        "each missing header named once"
    );
    let text = err.to_string();
    for needle in [
        "include/trace/events/readahead.h: no such file (radiff needs its page_cache_sync_ra",
        "include/trace/events/block.h: no such file (radiff needs its block_rq_issue)",
        "fix: use a base that has them",
        "nothing was built or booted",
    ] {
        assert!(text.contains(needle), "the refusal does not say `{needle}`:\n{text}");
    }
    assert!(started.elapsed().as_secs() < 60, "refused in seconds, not after a build");
    assert!(
        !rig.cache.root.join("kernels").exists()
            || std::fs::read_dir(rig.cache.root.join("kernels")).unwrap().next().is_none(),
        "no kernel folder is begun"
    );
    assert_eq!(git_status(&work_tree(&rig.cache)), "");

    // One header there but a tracepoint missing from it: named too.
    write_tracepoints(&rig.linux);
    let filemap = rig.linux.join("include/trace/events/filemap.h");
    let text = std::fs::read_to_string(&filemap).unwrap().replace("TRACE_EVENT(mm_filemap_fault,", "");
    std::fs::write(&filemap, text).unwrap();
    commit_all(&rig.linux, "most tracepoints");
    let err = build_error(&rig, "base").to_string();
    assert!(err.contains("include/trace/events/filemap.h does not define mm_filemap_fault\n"), "{err}");
    assert!(!err.contains("readahead.h"), "{err}");

    // The command line: exit 2, the same message, nothing built.
    let out = Command::new(env!("CARGO_BIN_EXE_radiff"))
        .args(["kernels", "build", "base"])
        .env("RADIFF_ROOT", &rig.repo)
        .env("RADIFF_CACHE", &rig.cache.root)
        .env_remove("RADIFF_KERNEL_TREE")
        .env_remove("RADIFF_KERNEL_REV")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("radiff: error: kernel `base` cannot be traced"), "{stderr}");
    assert!(stderr.contains("filemap.h does not define mm_filemap_fault"), "{stderr}");

    // Every tracepoint there, but the fragment turns on an option no Kconfig file of the
    // tree declares (and turns off another the tree lacks, which is allowed): refused
    // before any build, naming the line and the fix, by the library and the command line.
    write_tracepoints(&rig.linux);
    commit_all(&rig.linux, "every tracepoint");
    std::fs::write(
        rig.repo.join("kernels/config.fragment"),
        "CONFIG_64BIT=y\n# CONFIG_ACPI is not set\nCONFIG_RADIFF_NOWHERE=y\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let err = build_error(&rig, "base");
    let Error::Unconfigurable { ref missing, .. } = err else { panic!("expected Unconfigurable, got {err}") };
    assert_eq!(missing, &["line 3: CONFIG_RADIFF_NOWHERE=y (no `config RADIFF_NOWHERE` in any Kconfig file)"]);
    let text = err.to_string();
    for needle in
        ["kernels/config.fragment turns on", "fix: change or remove those lines", "nothing was built or booted"]
    {
        assert!(text.contains(needle), "the refusal does not say `{needle}`:\n{text}");
    }
    assert!(started.elapsed().as_secs() < 60, "refused in seconds, not after a build");
    assert!(
        !rig.cache.root.join("kernels").exists()
            || std::fs::read_dir(rig.cache.root.join("kernels")).unwrap().next().is_none(),
        "no kernel folder is begun"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_radiff"))
        .args(["kernels", "build", "base"])
        .env("RADIFF_ROOT", &rig.repo)
        .env("RADIFF_CACHE", &rig.cache.root)
        .env_remove("RADIFF_KERNEL_TREE")
        .env_remove("RADIFF_KERNEL_REV")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("radiff: error: kernel `base` cannot be configured"), "{stderr}");
    assert!(stderr.contains("line 3: CONFIG_RADIFF_NOWHERE=y"), "{stderr}");

    // No readahead header at all: the next check (the fragment's) is what refuses it.
    std::fs::remove_file(rig.linux.join(radiff::kernels::READAHEAD_H)).unwrap();
    commit_all(&rig.linux, "a Linux before the readahead tracepoints");
    let err = build_error(&rig, "base");
    assert!(matches!(err, Error::Unconfigurable { .. }), "traced flat, not refused: {err}");
}

/// A diff naming a file outside the tree is refused when the mail hides it in base64 as
/// when it is plain: what is checked is what patch would read.
#[test]
fn an_encoded_mail_naming_a_file_outside_the_tree_is_refused() {
    let plain = "[PATCH] mm: escape\n\n---\n--- /dev/null\n+++ b/../../outside\n@@ -0,0 +1 @@\n+x\n";
    let [_, (_, base64), _] = radiff::testing::encoded_copies(plain);
    let base64 = String::from_utf8(base64).unwrap();
    assert!(!base64.contains("outside"), "the copy hides the name");
    let rig = rig(&[("escape", &[("0001-escape.mbox", &base64)])]);
    let kernels = rig.kernels();
    let tree = radiff::port::DirFiles::new(&rig.linux);
    let variant = kernels.variant("escape").unwrap();
    let err = match radiff::port::PatchedFiles::new(&tree, "escape", &variant.patches, &[]) {
        Ok(_) => panic!("the encoded escape was applied"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("radiff refuses a patch that names a file outside the tree"), "{err}");
    assert!(!rig.linux.parent().unwrap().join("outside").exists());
}

#[test]
fn a_patch_whose_makefile_writes_outside_its_folders_is_named_and_its_build_cannot() {
    // The patch gives the rig's Makefile a `tinyconfig` target (configure's first make)
    // that tries to write a file outside the build's folders, then records the network it
    // sees in the build folder (which it may write).
    // Not under /tmp, which the build sees as a folder of its own: on the host's disk.
    let outside = tempfile::Builder::new().prefix("radiff-canary-").tempdir_in("/var/tmp").unwrap();
    let canary = outside.path().join("written-by-the-makefile");
    let patch = format!(
        "Subject: [PATCH] build: a target\n---\ndiff --git a/Makefile b/Makefile\n--- a/Makefile\n+++ b/Makefile\n@@ -1,3 +1,7 @@\n VERSION = 7\n PATCHLEVEL = 3\n SUBLEVEL = 4\n+tinyconfig:\n+\t-touch {}\n+\tcat /proc/net/dev > $(O)/net.txt\n+\tfalse\n",
        canary.display()
    );
    let rig = rig(&[("hostile-make", &[("0001-make.patch", patch.as_str())])]);
    let err = build_error(&rig, "hostile-make");
    let Error::Build { ref log, .. } = err else { panic!("expected the build to fail at configure, got {err}") };
    let log_text = std::fs::read_to_string(log).unwrap();
    assert!(!canary.exists(), "the patch's Makefile wrote {}", canary.display());
    assert!(log_text.contains("Read-only file system"), "{log_text}");
    assert!(
        log_text.contains("hostile-make: its patches change what the build runs: Makefile; the build runs confined"),
        "the file is named before the build:\n{log_text}"
    );
    // The build folder was writable; the only network it saw was its own loopback.
    let build = rig.cache.root.join("build");
    let net: Vec<PathBuf> = std::fs::read_dir(&build).unwrap().map(|e| e.unwrap().path().join("net.txt")).collect();
    let seen = std::fs::read_to_string(net.iter().find(|p| p.exists()).expect("net.txt in the build folder")).unwrap();
    let interfaces: Vec<&str> = seen.lines().skip(2).filter_map(|l| l.split(':').next()).map(str::trim).collect();
    assert_eq!(interfaces, ["lo"], "{seen}");
}
