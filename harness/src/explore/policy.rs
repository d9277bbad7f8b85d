//! The model policy of each variant explored: a policy of its name, or its variant.yaml's.

use radiff_model::Policy;

use crate::error::{Error, Result};
use crate::hybrid::choose::predictor;
use crate::model_check::Predictor;

/// The kernel variant among `variants` that has no model policy (no policy of its name and
/// no `model:` in its variant.yaml, see [`crate::kernels::ModelExpectation`]), if any:
/// explored by running the base model's branch-covering set on both kernels
/// ([`super::cover::explore_unknown`]), which needs `--variants base,V` exactly. A name that is
/// neither a kernel variant nor a policy is an error, and so is a kernels/kernels.yaml that
/// does not load (the error names it).
pub fn without_policy(variants: &[String]) -> Result<Option<String>> {
    without_policy_in(Some(&crate::kernels::Kernels::load(&crate::repo_root())?), variants)
}

/// [`without_policy`] among `kernels`' variants (`None`: kernels/ did not load).
pub fn without_policy_in(kernels: Option<&crate::kernels::Kernels>, variants: &[String]) -> Result<Option<String>> {
    // A base whose model check is off (`model: none`): the model is not the oracle there,
    // so every variant runs on both kernels, whatever its name.
    if let Some(said) = kernels.and_then(base_off) {
        return match variants {
            [b, v] if b == "base" && v != "base" => {
                crate::progress::progress(&format!("{said} says `model: none`: the model is not the oracle on this base; it picks the scenarios and both kernels run them (base against {v})"));
                Ok(Some(v.clone()))
            }
            _ => Err(Error::Other(format!(
                "{said} says `model: none`: the model is not the oracle on this base, so explore compares a variant with it on the kernels: `--variants base,V`"
            ))),
        };
    }
    let mut unknown = Vec::new();
    for v in variants {
        if Policy::for_variant(v).is_some() {
            continue;
        }
        match kernels.map(|k| k.variant(v)) {
            Some(Ok(variant)) => {
                // A variant the model predicts by neither a policy nor the hybrid.
                let kernels = kernels.expect("a variant was found in them");
                if let (None, why) = predictor(kernels, &crate::cache::Cache::from_env(), v, &variant.model)? {
                    if let Some(why) = why {
                        crate::progress::progress(&format!("explore: the model cannot predict {v}: {why}"));
                    }
                    unknown.push(v.clone());
                }
            }
            Some(Err(e)) => return Err(e),
            None => {
                return Err(Error::Other(format!(
                    "the model has no policy for variant `{v}`, and kernels/kernels.yaml does not load to look for it"
                )))
            }
        }
    }
    match unknown.as_slice() {
        [] => Ok(None),
        [v] if variants.len() == 2 && variants[0] == "base" => Ok(Some(v.clone())),
        _ => Err(Error::Other(format!(
            "{} {} no model policy: explore such a variant against base alone, `--variants base,{}` (the base model picks the scenarios and both kernels run them)",
            unknown.join(", "),
            if unknown.len() == 1 { "has" } else { "have" },
            unknown[0]
        ))),
    }
}

/// The policies of the variants named, in order: a policy of the variant's name, or the
/// one its variant.yaml declares (`model: POLICY`); a variant without one is an error, and
/// so is a kernels/kernels.yaml that does not load (the error names it).
pub fn policies(variants: &[String]) -> Result<Vec<(String, Predictor)>> {
    policies_in(Some(&crate::kernels::Kernels::load(&crate::repo_root())?), variants)
}

/// [`policies`] with the declarations of `kernels`' variants (`None`: names alone): what
/// [`crate::hybrid::choose::predictor`] gives each (a policy of its name or its declaration;
/// for a variant without one, and for a base that moved, the hybrid where the tree's
/// changed functions run as C); without kernels/, or on a base whose model is off, the
/// policy of the variant's name.
pub fn policies_in(kernels: Option<&crate::kernels::Kernels>, variants: &[String]) -> Result<Vec<(String, Predictor)>> {
    let cache = crate::cache::Cache::from_env();
    variants
        .iter()
        .map(|v| {
            let (found, why) = match kernels.and_then(|k| Some((k, k.variant(v).ok()?))) {
                Some((k, variant)) => predictor(k, &cache, v, &variant.model)?,
                None => (None, None),
            };
            let found = found.or_else(|| why.is_none().then(|| Policy::for_variant(v).map(Predictor::Port)).flatten());
            found.map(|p| (v.clone(), p)).ok_or_else(|| {
                Error::Other(match why {
                    Some(why) => format!(
                        "the model cannot predict variant `{v}`: {why}; explore it against base alone, `--variants base,{v}` (both kernels run the base model's scenarios)"
                    ),
                    None => format!(
                        "the model has no policy for variant `{v}` (model/src/variant.rs); it knows {}",
                        Policy::KNOWN.join(", ")
                    ),
                })
            })
        })
        .collect()
}

/// Where the base's model check was turned off, if it was.
fn base_off(kernels: &crate::kernels::Kernels) -> Option<String> {
    kernels.variants.iter().find_map(|v| match &v.model {
        crate::kernels::ModelExpectation::BaseOff { said } => Some(said.clone()),
        _ => None,
    })
}
