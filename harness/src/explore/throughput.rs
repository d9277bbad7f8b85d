//! The model's throughput on the search's own mix, for `radiff bench`.

use std::time::Duration;

use super::{policies, search, Options};
use crate::error::Result;

/// The model's throughput on the search's own mix: scenarios per second over the first
/// `scenarios` of `seed`, generated, parsed, predicted on `variants` and judged on
/// `threads` threads (for `radiff bench`).
pub fn model_throughput(variants: &[String], seed: u64, scenarios: u64, threads: usize) -> Result<f64> {
    let pol = policies(variants)?;
    let o = Options {
        variants: variants.to_vec(),
        max_scenarios: Some(scenarios),
        budget: Duration::from_secs(3600),
        seed,
        threads,
        ..Options::default()
    };
    Ok(search(&o, &pol).rate())
}
