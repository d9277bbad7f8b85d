//! The model's throughput on the search's own mix, for `radiff bench`.

use std::time::Duration;

use super::{policies, search, Options};
use crate::error::Result;

/// The model's throughput on the search's own mix: scenarios per second over the first
/// `scenarios` of `seed`, generated, parsed, predicted on `variants` and judged on
/// `threads` threads (for `radiff bench`).
pub fn model_throughput(variants: &[String], seed: u64, scenarios: u64, threads: usize) -> Result<f64> {
    Ok(throughput_of(&policies(variants)?, seed, scenarios, threads))
}

/// [`model_throughput`] on predictors given (a hybrid's, which no variant name gives).
pub fn throughput_of(
    pol: &[(String, crate::model_check::Predictor)],
    seed: u64,
    scenarios: u64,
    threads: usize,
) -> f64 {
    let o = Options {
        variants: pol.iter().map(|(v, _)| v.clone()).collect(),
        max_scenarios: Some(scenarios),
        budget: Duration::from_secs(3600),
        seed,
        threads,
        ..Options::default()
    };
    search(&o, pol).rate()
}
