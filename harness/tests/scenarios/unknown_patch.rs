//! A patch the model has no policy for, and one declared `model: base`, checked on the
//! headline's runs of the seed variants (shared with their own trials: no extra boot).

use std::path::Path;

use libtest_mimic::{Failed, Trial};
use radiff::compare;
use radiff::kernels::ModelExpectation;
use radiff::run::{model_input, Need};
use radiff::scenario::Scenario;
use radiff::verdict::Failure;
use radiff_model::{predict, Policy};

use super::{check, headline, shared_run, Needs};

pub fn trials(root: &Path, needs: &mut Needs) -> radiff::Result<Vec<Trial>> {
    let (h1, h2) = (headline(root)?, headline(root)?);
    let p = &h1.points[0];
    needs.insert(
        "unknown_patch::the_hybrid_checks_a_patch_without_a_policy".into(),
        ["async-align-v1", "sync-ra-when-disabled", "f2fs-extent-ra", "base"]
            .iter()
            .map(|v| Need::new(&h1, p, v))
            .collect(),
    );
    needs.insert(
        "unknown_patch::model_base_fails_at_the_first_window".into(),
        vec![Need::new(&h1, p, "async-align-v1")],
    );
    Ok(vec![
        Trial::test("unknown_patch::the_hybrid_checks_a_patch_without_a_policy", move || {
            the_hybrid_checks_a_patch_without_a_policy(&h1)
        }),
        Trial::test("unknown_patch::model_base_fails_at_the_first_window", move || {
            model_base_fails_at_the_first_window(&h2)
        }),
    ])
}

/// A variant without a model policy is checked against the hybrid (its own C running in
/// the model) where its patch changes only functions the hybrid runs as C: seed 000's v1
/// (whose kernel the base model does not predict on the headline), seed 001's patch and
/// seed 003's (`f2fs_mpage_readpages()` of fs/f2fs/data.c; the headline is not on f2fs, so
/// it acts nowhere there) pass with model == kernel, and the summary says what ran as C.
fn the_hybrid_checks_a_patch_without_a_policy(headline: &Scenario) -> Result<(), Failed> {
    let point = &headline.points[0];
    let cases = [("async-align-v1", true), ("sync-ra-when-disabled", false), ("f2fs-extent-ra", false)];
    for (variant, base_model_parts) in cases {
        let who = format!("unknown_patch::the_hybrid_checks_a_patch_without_a_policy ({variant})");
        let out = shared_run(headline, point, variant, &who)?;
        let v = check(headline, point, variant, &ModelExpectation::None, &out, &who)?;
        if let Err(e) = v.render() {
            return Err(format!("{who}: should pass with model == kernel on the hybrid:\n{e}").into());
        }
        // mm/readahead.c's C always; of the other files, those the patch changes.
        let ran = if variant == "f2fs-extent-ra" {
            "model: the hybrid: mm/readahead.c (with mm/filemap.c's page_cache_next_miss(), page_cache_prev_miss()) and fs/f2fs/data.c's f2fs_readahead(), "
        } else {
            "model: the hybrid: mm/readahead.c (with mm/filemap.c's page_cache_next_miss(), page_cache_prev_miss()) of "
        };
        for ran in [ran.to_string(), format!(" of {variant} ran as C (the tree changes ")] {
            if !v.summary.contains(&ran) {
                return Err(format!("{who}: the summary does not say `{ran}`:\n{}", v.summary).into());
            }
        }
        // The check is the C's: the base's Rust model parts from this kernel where the patch acts.
        let base = radiff::model_check::check(headline, &out.env, &out.capture, &Policy::BASE);
        if base.divergence.is_some() != base_model_parts {
            return Err(format!(
                "{who}: expected the base model to {} this kernel on the headline",
                if base_model_parts { "part from" } else { "equal" }
            )
            .into());
        }
    }
    Ok(())
}

/// A variant declared `model: base` (a patch that must not change behaviour) whose kernel
/// does change it fails at the first window where the base model and the kernel part:
/// seed 000's v1 kernel, checked against the base policy, must fail where the base and v1
/// models first differ.
fn model_base_fails_at_the_first_window(headline: &Scenario) -> Result<(), Failed> {
    let point = &headline.points[0];
    let who = "unknown_patch::model_base_fails_at_the_first_window";
    let out = shared_run(headline, point, "async-align-v1", who)?;
    let file = radiff::repo_root().join("kernels/variants/async-align-v1").join(radiff::kernels::VARIANT_FILE);
    let declared = ModelExpectation::Declared { policy: "base".into(), file, line: 1 };
    let input = model_input(headline, &out.env, &out.capture.pfns);
    let v1 = Policy::for_variant("async-align-v1").expect("a known policy");
    let first = compare::compare(&predict(&input, &Policy::BASE), &predict(&input, &v1))
        .ok_or_else(|| {
            format!("{who}: the base and v1 models agree on the headline; this test needs a scenario where they part")
        })?
        .window;
    let v = check(headline, point, "async-align-v1", &declared, &out, who)?;
    let diverged = v.failures.iter().find_map(|f| match f {
        Failure::Diverged { divergence, text } => Some((divergence.window, text)),
        _ => None,
    });
    let declared_line = format!(
        "{who}: checked against the model's `base` policy, as kernels/variants/async-align-v1/variant.yaml:1 says\n"
    );
    match (diverged, v.render()) {
        (_, Ok(notes)) => Err(format!("{who}: passed, but the v1 kernel changes the base behaviour:\n{notes}").into()),
        (Some((window, text)), Err(_)) if window == first && text.starts_with(&declared_line) => {
            eprintln!(
                "{who}: fails as it should, at window {first}:\n{}",
                text.lines().take(8).collect::<Vec<_>>().join("\n")
            );
            Ok(())
        }
        (_, Err(e)) => {
            Err(format!("{who}: expected a failure at window {first} naming variant.yaml, got:\n{e}").into())
        }
    }
}
