//! `radiff review` on bad input: exit 2 with the message, and nothing made.
//!
//! The patch that does not apply is tried against the base's real files (the kernel
//! source `./setup` fetched into the cache); no VM runs.

use std::path::Path;
use std::process::{Command, Output};

const RADIFF: &str = env!("CARGO_BIN_EXE_radiff");

/// A repository with its own copy of `kernels/` (a review makes its variants there) and
/// links to the rest.
fn repo() -> tempfile::TempDir {
    let real = radiff::repo_root();
    let dir = tempfile::tempdir().unwrap();
    for part in ["harness", "model", "scenarios"] {
        std::os::unix::fs::symlink(real.join(part), dir.path().join(part)).unwrap();
    }
    copy_dir(&real.join("kernels"), &dir.path().join("kernels"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn variants(repo: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo.join("kernels/variants"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn review(repo: &Path, mail: &Path) -> Output {
    Command::new(RADIFF)
        .args(["review", mail.to_str().unwrap(), "--out"])
        .arg(repo.join("out"))
        .env("RADIFF_ROOT", repo)
        .output()
        .unwrap()
}

#[test]
fn a_mail_without_a_diff_and_a_patch_that_does_not_apply_exit_2_and_make_nothing() {
    let repo = repo();
    let before = variants(repo.path());

    let no_diff = repo.path().join("no-diff.txt");
    std::fs::write(&no_diff, "Subject: [PATCH] mm/readahead: a fix\n\nThe fix is in the next mail.\n> --- a/mm/readahead.c\n> +++ b/mm/readahead.c\n").unwrap();
    let out = review(repo.path(), &no_diff);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("radiff: error: {}: it has no diff", no_diff.display())),
        "the error names the file and why:\n{stderr}"
    );

    // A hunk whose context is not in the base's mm/readahead.c.
    let stale = repo.path().join("stale.mbox");
    std::fs::write(
        &stale,
        "Subject: [PATCH] mm/readahead: trim less\n\n---\ndiff --git a/mm/readahead.c b/mm/readahead.c\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -713,3 +713,3 @@ void page_cache_async_ra(struct readahead_control *ractl,\n \tno such line one;\n-\tno such line two;\n+\ta new line;\n \tno such line three;\n",
    )
    .unwrap();
    let out = review(repo.path(), &stale);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("radiff: error: {}: ", stale.display())), "{stderr}");
    assert!(stderr.contains("does not apply to the base"), "{stderr}");
    assert!(stderr.contains("Hunk #1 FAILED at 713"), "patch's own account names the hunk:\n{stderr}");
    assert!(stderr.contains("mm/readahead.c"), "and the file:\n{stderr}");

    assert_eq!(variants(repo.path()), before, "bad input makes no variant");
    assert!(!repo.path().join("out").exists(), "and no review folder");
}

/// A mail whose one hunk adds `line` after the first line of the base's mm/readahead.c
/// (read from the kernel source `./setup` fetched), as its line 2.
fn mail_adding(dir: &Path, name: &str, line: &str) -> std::path::PathBuf {
    let kernels = radiff::kernels::Kernels::load(&radiff::repo_root()).unwrap();
    let cache = radiff::cache::Cache::from_env();
    let base = radiff::port::base_files(&radiff::kernels::Builder::new(&kernels, &cache)).unwrap();
    let text = base.read("mm/readahead.c").unwrap().expect("the base has mm/readahead.c");
    let lines: Vec<&str> = text.lines().take(2).collect();
    let mail = dir.join(name);
    std::fs::write(
        &mail,
        format!("Subject: [PATCH] mm/readahead: {name}\n\n---\ndiff --git a/mm/readahead.c b/mm/readahead.c\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -1,2 +1,3 @@\n {}\n+{line}\n {}\n", lines[0], lines[1]),
    )
    .unwrap();
    mail
}

#[test]
fn a_mail_whose_c_includes_a_file_outside_the_tree_exits_2_naming_the_line_and_changes_nothing() {
    let repo = repo();
    let before = variants(repo.path());
    let outside = tempfile::tempdir().unwrap();
    let canary = outside.path().join("canary.h");
    std::fs::write(&canary, "kept\n").unwrap();
    for (name, include) in [
        ("absolute", format!("#include \"{}\"", canary.display())),
        ("dotdot", format!("#include <../../../../../../../../../..{}>", canary.display())),
    ] {
        let mail = mail_adding(repo.path(), name, &include);
        let out = review(repo.path(), &mail);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("radiff: error: {}: mm/readahead.c:2, as the patch leaves it: `", mail.display())),
            "{name}: {stderr}"
        );
        assert!(stderr.contains("radiff refuses a header outside the tree"), "{name}: {stderr}");
        assert_eq!(std::fs::read_to_string(&canary).unwrap(), "kept\n", "{name} touched the canary");
    }
    // A diff naming a file outside the tree is refused before patch runs.
    let escape = repo.path().join("escape.mbox");
    let target = outside.path().join("made");
    std::fs::write(
        &escape,
        format!(
            "Subject: [PATCH] mm: escape\n\n---\n--- /dev/null\n+++ b/../../../../../../../..{}\n@@ -0,0 +1 @@\n+x\n",
            target.display()
        ),
    )
    .unwrap();
    let out = review(repo.path(), &escape);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("radiff refuses a patch that names a file outside the tree"), "{stderr}");
    assert!(!target.exists(), "the patch made {}", target.display());
    assert_eq!(variants(repo.path()), before, "bad input makes no variant");
    assert!(!repo.path().join("out").exists(), "and no review folder");
}

/// `radiff review -` reads the mail from standard input, and bad input there is named so.
#[test]
fn a_mail_on_standard_input_is_read_and_named_in_its_error() {
    let repo = repo();
    let before = variants(repo.path());
    let mut child = Command::new(RADIFF)
        .args(["review", "-", "--out"])
        .arg(repo.path().join("out"))
        .env("RADIFF_ROOT", repo.path())
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"Subject: [PATCH] mm: x\n\nno diff here\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("radiff: error: standard input: it has no diff"), "{stderr}");
    assert_eq!(variants(repo.path()), before, "bad input makes no variant");
}

/// A repository whose `scenarios/` holds only `names` (links to the real ones, and the fio
/// jobs), with links to the rest.
fn repo_with(names: &[&str]) -> tempfile::TempDir {
    let real = radiff::repo_root();
    let dir = tempfile::tempdir().unwrap();
    for part in ["harness", "model", "kernels"] {
        std::os::unix::fs::symlink(real.join(part), dir.path().join(part)).unwrap();
    }
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    for name in names {
        let file = format!("{name}.yaml");
        std::os::unix::fs::symlink(real.join("scenarios").join(&file), scenarios.join(&file)).unwrap();
    }
    std::os::unix::fs::symlink(real.join("scenarios/jobs"), scenarios.join("jobs")).unwrap();
    dir
}

/// `radiff ARGS --out DIR` in `repo` (its RADIFF_ROOT): the output, its stderr, the reply
/// written to DIR and DIR; no reply fails the test, with the exit status and stderr.
fn review_in(repo: &std::path::Path, args: &[&str]) -> (std::process::Output, String, String, tempfile::TempDir) {
    let out_dir = tempfile::tempdir().unwrap();
    let out = Command::new(RADIFF)
        .args(args)
        .arg("--out")
        .arg(out_dir.path())
        .current_dir(repo)
        .env("RADIFF_ROOT", repo)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let reply = std::fs::read_to_string(out_dir.path().join("reply.txt"))
        .unwrap_or_else(|e| panic!("no reply.txt ({e}); exit {:?}:\n{stderr}", out.status.code()));
    (out, stderr, reply, out_dir)
}

/// The whole review on the real kernels, of a variant folder as it is, on two of the
/// repository's scenarios (one a fio job) in a short budget (100 s, 20 s of it the search,
/// which leaves every case run: the first group of cases always runs): port-check's
/// function and the model's policy; the fio job run once on base for its calls, then
/// predicted; both points run twice on each kernel with their figures; where base and patch
/// part in kernel lines with the hunk quoted; the exit status agreeing with the Tested-by
/// line. (The figures are the kernels' own: what the two scenarios' snapshots hold.)
#[test]
fn a_review_of_a_variant_runs_what_changes_on_both_kernels_and_answers_in_kernel_lines() {
    let repo = repo_with(&["readahead_off_random", "fio_randread_ra_off", "1mib_after_4k"]);
    let (out, stderr, reply, out_dir) =
        review_in(repo.path(), &["review", "kernels/variants/sync-ra-when-disabled", "--budget", "100s"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), reply, "the reply is printed too");
    assert!(
        reply.starts_with(
            "Subject: Re: [PATCH RFC] mm/readahead: improve randread performance with readahead disabled\n"
        ),
        "{reply}"
    );
    assert!(reply.contains("- page_cache_sync_ra() (mm/readahead.c): the model follows it as its\n  known policy `sync-ra-when-disabled`"), "{reply}");
    assert!(stderr.contains("review: recording the calls of fio_randread_ra_off on base, for the model"), "{stderr}");
    let squeezed: String = reply.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    assert!(squeezed.contains("readahead_off_random (kernels)\n device reads 22592 1492 -93%\n"), "{reply}");
    assert!(squeezed.contains("fio_randread_ra_off (kernels)\n device reads 23462 1501 -94%\n"), "{reply}");
    assert!(reply.contains("The repository's scenarios: 2 of 3 points change"), "{reply}");
    assert!(reply.contains("Unchanged (* the model's prediction"), "1mib_after_4k is the model's alone:\n{reply}");
    assert!(
        reply.contains("page_cache_sync_ra: ra_pages == 0: req_count = 1\n      (mm/readahead.c:593-596)"),
        "{reply}"
    );
    assert!(reply.contains("\n> -\tif (!ra->ra_pages || blk_cgroup_congested()) {\n"), "the hunk quoted:\n{reply}");
    let tested = reply.contains("\nTested-by: radiff");
    assert!(reply.contains("\nHow far it looked:\n- The model: it follows 1 of the 1 changed functions"), "{reply}");
    assert!(reply.contains("\n- The search: "), "{reply}");
    match out.status.code() {
        Some(0) => assert!(tested, "exit 0 and no Tested-by:\n{reply}"),
        Some(1) => assert!(!tested && reply.contains("Where it is worse ("), "exit 1 without a worse case:\n{reply}"),
        // 100 s can leave the search's findings or the repository's changes unrun, or the
        // search too short to ask every usual question: each is said with its remedy.
        // The reply is wrapped at 72 columns, so a phrase is looked for with its spaces
        // and line breaks made one space.
        Some(3) => assert!(
            !tested
                && reply.contains("\nNot enough evidence for a Tested-by:\n- ")
                && reply.split_whitespace().collect::<Vec<_>>().join(" ").contains("; what would give it: "),
            "exit 3 without the shortfall:\n{reply}"
        ),
        other => panic!("exit {other:?}:\n{stderr}"),
    }
    for file in ["reply.md", "headline.svg", "scenarios/readahead_off_random.yaml"] {
        assert!(out_dir.path().join(file).is_file(), "{file} is missing:\n{stderr}");
    }
}

/// A variant folder a review left when it was killed (its process gone) is no variant of
/// any other process, and the next review removes it, even one refused for bad input.
#[test]
fn a_variant_folder_a_killed_review_left_is_seen_by_no_one_and_the_next_review_removes_it() {
    let repo = repo();
    let before = variants(repo.path());
    let left = repo.path().join("kernels/variants/left-by-a-killed-review");
    std::fs::create_dir(&left).unwrap();
    std::fs::copy(
        repo.path().join("kernels/variants/async-align-v1").read_dir().unwrap().next().unwrap().unwrap().path(),
        left.join("0001-x.mbox"),
    )
    .unwrap();
    // No process has an id above the kernel's pid_max (at most 2^22).
    std::fs::write(left.join(radiff::kernels::REVIEW_MARK), "99999999\n").unwrap();
    let kernels = radiff::kernels::Kernels::load(repo.path()).unwrap();
    assert!(kernels.variant("left-by-a-killed-review").is_err(), "{:?}", kernels.names());
    assert!(kernels.variant("async-align-v1").is_ok());

    let no_diff = repo.path().join("no-diff.txt");
    std::fs::write(&no_diff, "Subject: [PATCH] mm: x\n\nno diff here\n").unwrap();
    let out = review(repo.path(), &no_diff);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "review: removed kernels/variants/left-by-a-killed-review/, left by a review that did not finish"
        ),
        "{stderr}"
    );
    assert!(!left.exists());
    assert_eq!(variants(repo.path()), before);
}

/// Seed 003's mail (an f2fs change) reviewed under a name with no policy, in the default
/// budget: the hybrid runs its fs/f2fs/data.c as C, the search runs on the model, and the
/// reviewer's question (random reads) is answered from the kernels: a case of random 4 KiB
/// reads on f2fs, run twice on each kernel, reads many more folios with the patch (the
/// kernels' own figures, checked for that direction, not a number). The review's variant
/// folder is gone afterwards, its patch in the review folder.
#[test]
fn seed_003s_mail_under_a_new_name_is_modelled_searched_and_its_random_read_regression_confirmed() {
    let repo = repo();
    let before = variants(repo.path());
    let mail = repo
        .path()
        .join("kernels/variants/f2fs-extent-ra/0001-f2fs-adjust-readahead-window-based-on-extent-length.mbox");
    let (out, stderr, reply, out_dir) =
        review_in(repo.path(), &["review", mail.to_str().unwrap(), "--name", "f2fs-renamed"]);
    assert!(stderr.contains("review: made kernels/variants/f2fs-renamed/"), "{stderr}");
    assert_eq!(variants(repo.path()), before, "the review's variant folder is gone:\n{stderr}");
    assert!(out_dir.path().join("variant/0001-f2fs-renamed.mbox").is_file(), "its patch is kept:\n{stderr}");

    // The model follows it as C, and the search ran on the model.
    let squeezed: String = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        squeezed
            .contains("f2fs_mpage_readpages() (fs/f2fs/data.c): ran as this patch's C inside the model (the hybrid)"),
        "{reply}"
    );
    assert!(squeezed.contains("- The model: it follows 1 of the 1 changed functions"), "{reply}");
    let searched: u64 = squeezed
        .split("- The search: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no search line:\n{reply}"));
    assert!(searched > 0, "{reply}");
    // Worse on the kernels (the random reads below): exit 1, no Tested-by.
    assert!(reply.contains("\nWhere it is worse ("), "{reply}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!reply.contains("Tested-by: radiff"), "{reply}");
    let seconds: f64 = stderr
        .split("review: wrote ")
        .nth(1)
        .and_then(|r| r.split(" in ").nth(1))
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the review's wall time");
    assert!(seconds <= 600.0, "over the default budget: {seconds} s");

    // The random reads' change, from the kernels: a case of random 4 KiB reads on f2fs (the
    // headline, or one of the cases) is among the worse, and reads many more folios with
    // the patch on both kernels.
    let folios = worse_random_read_folios(&reply);
    assert!(!folios.is_empty(), "no random 4 KiB reads on f2fs among the worse:\n{reply}");
    assert!(folios.iter().any(|(b, a)| *a >= 4 * *b), "random 4 KiB reads: folios {folios:?}:\n{reply}");

    // Seed 003's reviewer asked "will we suffer regression for random read case?": the
    // checklist quotes the question at its line and answers it by name, from the kernels.
    assert!(
        squeezed.contains("- Random reads (Chao Yu asked: \"In addition, will we suffer regression for random read case?\"): worse (kernels): random reads amplified: "),
        "the random-read question is not answered by name:\n{reply}"
    );
    println!("{reply}");
}

/// The kernels' folio figures (before, after) of each case a reply lists as worse that is
/// random 4 KiB reads on f2fs (the headline, named in its own paragraph, or a case).
fn worse_random_read_folios(reply: &str) -> Vec<(u64, u64)> {
    let squeezed: String = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    let worse_cases = squeezed.split("Where it is worse").nth(1).unwrap_or("");
    let worse_cases = worse_cases.split("How far it looked").next().unwrap();
    // Each case described as random 4 KiB reads on f2fs, by name (the headline's or a case's).
    let names: Vec<&str> = squeezed
        .match_indices(" random 4 KiB reads, f2fs")
        .filter_map(|(at, _)| {
            squeezed[..at]
                .rsplit([' ', ','])
                .find(|w| w.starts_with("explore_") || w.starts_with("covering_"))
                .map(|w| w.trim_end_matches(':'))
        })
        .collect();
    // A worse case's entry runs to the next case's; its kernels' figure is "folios A -> B".
    let entry = |name: &str| {
        let rest = &worse_cases[worse_cases.find(&format!("- {name}"))? + 2..];
        let end = [" - explore_", " - covering_"].iter().filter_map(|n| rest.find(n)).min().unwrap_or(rest.len());
        Some(&rest[..end])
    };
    let folios: Vec<(u64, u64)> = names
        .iter()
        .filter_map(|name| entry(name))
        .filter_map(|e| {
            e.split("folios ").skip(1).find_map(|f| {
                let w: Vec<&str> = f.split(' ').take(3).collect();
                match w[..] {
                    [a, "->", b] => Some((a.parse().ok()?, b.trim_end_matches(',').parse().ok()?)),
                    _ => None,
                }
            })
        })
        .collect();
    folios
}

#[test]
fn the_random_read_figures_are_read_from_the_headline_or_a_case_among_the_worse() {
    let case = "Where it is worse (2 cases, the smallest first):\n- explore_a: the headline above: device reads 4 ->\n  7 (+75%), folios 1 -> 32 (+3100%)\n- explore_b (/tmp/x/explore_b.yaml)\n  16 random 4 KiB reads, f2fs on NVMe.\n  Found by the search: bytes read more, folios more; worse on folios\n    reads:\n      - random: {count: 16}\n  device reads 18 -> 19 (+5.6%), folios 15 -> 414 (+2660%)\n\nHow far it looked:\n";
    assert_eq!(worse_random_read_folios(&format!("The headline, explore_a: a read.\n\n{case}")), [(15, 414)]);
    let headline = "The headline, explore_a: 16 random 4 KiB reads, f2fs on NVMe.\n\n";
    let only_headline = case.replace("16 random 4 KiB reads", "a splice");
    assert_eq!(worse_random_read_folios(&format!("{headline}{only_headline}")), [(1, 32)]);
    assert_eq!(worse_random_read_folios(&format!("{headline}Where it is better:\n")), Vec::<(u64, u64)>::new());
}

/// A repository with its own copy of `kernels/` (a review of a mail makes its variant
/// there) whose `scenarios/` holds only `files` (links), with links to the rest.
fn repo_of(files: &[&Path]) -> tempfile::TempDir {
    let real = radiff::repo_root();
    let dir = tempfile::tempdir().unwrap();
    for part in ["harness", "model"] {
        std::os::unix::fs::symlink(real.join(part), dir.path().join(part)).unwrap();
    }
    copy_dir(&real.join("kernels"), &dir.path().join("kernels"));
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    for file in files {
        std::os::unix::fs::symlink(file, scenarios.join(file.file_name().unwrap())).unwrap();
    }
    std::os::unix::fs::symlink(real.join("scenarios/jobs"), scenarios.join("jobs")).unwrap();
    dir
}

/// A patch made for this test (`fixtures/window-past-ra/`: once page_cache_async_ra() has
/// ramped a window up to max_pages it adds a sixteenth) reviewed on one scenario of 64 KiB
/// reads under read_ahead_kb 256: the checklist's limits line, from the kernels, says that
/// windows exceed read_ahead_kb, by name, with the kernels' window size against the
/// scenario's read_ahead_kb and the case; so no Tested-by (exit 1), and the reply ends with
/// the lines for the changelog and the commands that reproduce them.
#[test]
fn a_patch_that_lets_a_window_exceed_read_ahead_kb_is_said_to_by_name_with_its_case() {
    let fixtures = radiff::repo_root().join("harness/tests/fixtures/window-past-ra");
    let scenario = fixtures.join("seq_64k_ra256.yaml");
    let repo = repo_of(&[&scenario]);
    let mail = fixtures.join("0001-window-past-read-ahead-kb.mbox");
    let (out, stderr, reply, out_dir) = review_in(repo.path(), &["review", mail.to_str().unwrap(), "--budget", "150s"]);
    let squeezed: String = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(squeezed.contains("The reviewers' questions: - Limits kept"), "{reply}");
    let limits = squeezed
        .split("- Limits kept (read_ahead_kb, max_sectors_kb): ")
        .nth(1)
        .unwrap_or_else(|| panic!("no limits line:\n{reply}"));
    let said = limits
        .strip_prefix("worse (kernels): windows exceed read_ahead_kb: ")
        .unwrap_or_else(|| panic!("the limit is not said by name, from the kernels:\n{reply}"));
    // `W KiB > L KiB in CASE`: W the kernels' window, L the case's read_ahead_kb (its
    // scenario's, in the review's scenarios/): the smallest case that shows it, ours or one
    // the search found as small.
    let words: Vec<&str> = said.split(' ').take(7).collect();
    let (window, limit): (u64, u64) = (words[0].parse().unwrap(), words[3].parse().unwrap());
    assert_eq!((words[1], words[2], words[4], words[5]), ("KiB", ">", "KiB", "in"), "{said}");
    assert!(window > limit, "{said}");
    let case = words[6].trim_end_matches(';');
    let yaml = std::fs::read_to_string(out_dir.path().join(format!("scenarios/{case}.yaml")))
        .unwrap_or_else(|e| panic!("the case {case} is not in the review's scenarios ({e}):\n{reply}"));
    assert!(yaml.contains(&format!("read_ahead_kb: {limit}\n")), "{case}'s read_ahead_kb is not {limit}:\n{yaml}");
    if case != "seq_64k_ra256" {
        assert!(said.contains("(and in "), "seq_64k_ra256 shows it too:\n{reply}");
    }
    assert!(!reply.contains("\nTested-by: radiff"), "{reply}");
    assert_eq!(out.status.code(), Some(1), "a broken limit is worse:\n{stderr}");

    let (_, changelog) = reply.split_once("\nFor the changelog (below ---):\n").expect("the changelog's lines");
    // A command's lines go on with ` \`.
    let changelog = changelog.replace(" \\\n    ", " ");
    assert!(changelog.contains("\n  device reads  ") && changelog.contains("\n  folio orders  "), "{changelog}");
    assert!(changelog.contains("radiff report ") && changelog.contains("--variants base,"), "{changelog}");
    assert!(changelog.contains("radiff review "), "{changelog}");
    let md = std::fs::read_to_string(out_dir.path().join("reply.md")).unwrap();
    assert!(md.contains("\n## The reviewers' questions\n- Limits kept"), "{md}");
    println!("{reply}");
}

/// A patch made for this test (`fixtures/willneed-forgets/`: generic_fadvise() calls
/// file_ra_state_init() after POSIX_FADV_WILLNEED), mailed with a reviewer's reply that asks
/// whether a WILLNEED in the middle of a stream destroys the readahead state, reviewed on
/// the repository's willneed_mid_stream: the checklist's hints line quotes the reviewer
/// and says, from the kernels (the case run with its hint and without it, twice each on
/// each kernel), that the hint resets the stream; so no Tested-by (exit 1).
#[test]
fn a_hint_that_resets_the_stream_is_said_to_by_name_from_the_kernels_at_the_line_the_reviewer_asked() {
    let fixtures = radiff::repo_root().join("harness/tests/fixtures/willneed-forgets");
    let scenario = radiff::repo_root().join("scenarios/willneed_mid_stream.yaml");
    let repo = repo_of(&[&scenario]);
    let mail = fixtures.join("0001-willneed-forgets-the-stream.mbox");
    let (out, stderr, reply, _out_dir) =
        review_in(repo.path(), &["review", mail.to_str().unwrap(), "--budget", "150s"]);
    let squeezed: String = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    let hints = squeezed
        .split("- Hints honoured (Rev Iewer asked: \"Does a WILLNEED in the middle of a stream destroy the readahead state now?\"): ")
        .nth(1)
        .unwrap_or_else(|| panic!("no hints line quoting the reviewer:\n{reply}"));
    assert!(hints.starts_with("worse (kernels): hints reset the stream: "), "the reset is not said by name:\n{reply}");
    let said = hints.split(" - ").next().unwrap();
    assert!(
        said.contains("in willneed_mid_stream (fadvise willneed), on the kernels, run without them too"),
        "not from the kernels, on the repository's case:\n{reply}"
    );
    assert!(!reply.contains("\nTested-by: radiff"), "{reply}");
    assert_eq!(out.status.code(), Some(1), "a hint that resets the stream is worse:\n{stderr}");
    println!("{reply}");
}
