//! Bisecting names the patch (in a series) and the commit (in a tree) that changed the
//! headline's trace: seed 000's, between two neutral changes.

use std::path::{Path, PathBuf};

use libtest_mimic::{Failed, Trial};
use radiff::scenario::Scenario;

use super::{headline, lab};

pub fn trials(root: &Path) -> radiff::Result<Vec<Trial>> {
    let (h1, h2) = (headline(root)?, headline(root)?);
    Ok(vec![
        Trial::test("bisect::series_names_seed_000", move || bisect_series(&h1)),
        Trial::test("bisect::tree_names_seed_000", move || bisect_tree(&h2)),
    ])
}

/// [a neutral change, seed 000's patch, another neutral change].
fn bisect_patches() -> Vec<PathBuf> {
    let root = radiff::repo_root();
    let seed = std::fs::read_dir(root.join("kernels/variants/async-align-v1")).unwrap().next().unwrap().unwrap().path();
    vec![
        root.join("harness/tests/bisect/0001-mm-filemap-a-neutral-comment.patch"),
        seed,
        root.join("harness/tests/bisect/0003-mm-readahead-another-neutral-comment.patch"),
    ]
}

fn bisect_series(scenario: &Scenario) -> Result<(), Failed> {
    let lab = lab()?;
    let variant = radiff::kernels::Variant {
        name: "bisect-test".into(),
        patches: bisect_patches(),
        model: radiff::kernels::ModelExpectation::SameName("async-align-v1".into()),
    };
    let found =
        radiff::bisect::bisect_series(lab, &variant, scenario, &scenario.points[0]).map_err(|e| e.to_string())?;
    eprintln!("bisect::series_names_seed_000:\n{}", found.describe());
    match &found.patch {
        Some((2, _)) => Ok(()),
        _ => Err(format!("expected patch #2 (seed 000), got:\n{}", found.describe()).into()),
    }
}

fn bisect_tree(scenario: &Scenario) -> Result<(), Failed> {
    let lab = lab()?;
    let root = radiff::repo_root();
    if !matches!(lab.kernels.base, radiff::kernels::Base::Debian { .. }) {
        return Err(
            "this trial builds its test repository in radiff's Debian work tree; unset RADIFF_KERNEL_TREE".into()
        );
    }
    // The base kernel first, so that the tree's build directory is warm.
    lab.kernel("base", "bisect::tree_names_seed_000").map_err(|e| e.to_string())?;
    let builder = radiff::kernels::Builder::new(&lab.kernels, &lab.cache);
    // A repository made from the base source: commits [neutral, seed 000, neutral] on
    // top of the base, in radiff's own work tree (so every step builds incrementally).
    let (tree, commits) = {
        let _lock = builder.lock_tree().map_err(|e| e.to_string())?;
        let tree = builder.work_tree().map_err(|e| e.to_string())?;
        let mut commits = Vec::new();
        for patch in bisect_patches() {
            // Fixed dates: the same commits, hence the same kernels' cache keys, every run
            // on a tree (no rebuild of the two kernels the bisection builds).
            let git = |args: &[&str]| {
                let cmd = radiff::process::Cmd::new("git").arg("-C").arg(&tree).args(args.iter().copied());
                cmd.env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
                    .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
                    .read()
            };
            radiff::process::Cmd::new("patch")
                .dir(&tree)
                .args(["-p1", "--batch", "--forward", "-s", "-i"])
                .arg(&patch)
                .read()
                .map_err(|e| e.to_string())?;
            // The mail's subject (a raw mail may only have "[PATCH] ..." as its first line).
            let text = std::fs::read_to_string(&patch).map_err(|e| e.to_string())?;
            let subject = text
                .lines()
                .find_map(|l| l.strip_prefix("Subject: "))
                .or_else(|| text.lines().find(|l| l.starts_with("[PATCH")))
                .unwrap_or("a patch")
                .to_string();
            git(&["-c", "user.name=radiff", "-c", "user.email=radiff@localhost", "commit", "-q", "-a", "-m", &subject])
                .map_err(|e| e.to_string())?;
            commits.push(git(&["rev-parse", "HEAD"]).map_err(|e| e.to_string())?.trim().to_string());
        }
        (tree, commits)
    };
    let result =
        radiff::bisect::bisect_tree(&root, &tree, "radiff-base", &commits[2], &scenario.path, None, "snapshot");
    // Leave the work tree at the base for every other build.
    {
        let _lock = builder.lock_tree().map_err(|e| e.to_string())?;
        builder.work_tree().map_err(|e| e.to_string())?;
    }
    let found = result.map_err(|e| e.to_string())?;
    eprintln!("bisect::tree_names_seed_000:\n{}", found.describe());
    // git names seed 000's commit, and its own check recorded the change.
    let changed = found.first_check().is_some_and(|s| matches!(s.result, Ok(radiff::bisect::Verdict::Changed(_))));
    if found.first_bad != commits[1] || !changed {
        return Err(format!(
            "expected seed 000's commit {} first, its check recording a change; got:\n{}",
            &commits[1][..12],
            found.describe()
        )
        .into());
    }
    Ok(())
}
