//! What `radiff explore` is asked: variants, budget, seed, limits, threads, thresholds.

use std::path::PathBuf;
use std::time::Duration;

use super::detect::Thresholds;

/// What `radiff explore` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The variants to predict; the first is the one the single-trace detectors judge and
    /// the others are compared with (`base` by default).
    pub variants: Vec<String>,
    /// Wall time of the whole run: search, shrinking and confirmations (see
    /// [`Options::plan`]).
    pub budget: Duration,
    pub seed: u64,
    pub out: PathBuf,
    /// How many findings to confirm on the real kernels at most (`None`: as many as the
    /// budget leaves time for).
    pub confirm: Option<usize>,
    pub thresholds: Thresholds,
    /// Findings shrunk per detector at most (the strongest of each shape of steps first).
    pub shrink_per_detector: usize,
    /// Time for shrinking (default: see [`Options::plan`]).
    pub shrink_time: Option<Duration>,
    /// Model calls allowed per shrink.
    pub shrink_budget: usize,
    /// Stop the search after this many scenarios (None: only the budget stops it).
    pub max_scenarios: Option<u64>,
    /// Threads the model's search runs on (default: every core; see [`all_cores`]).
    pub threads: usize,
    /// Judge only the variants' changes against the first (`radiff review`): the search
    /// does not run the single-trace detectors.
    pub variant_changes_only: bool,
}

/// The cores this process may use (1 when unknown).
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Default for Options {
    fn default() -> Self {
        Options {
            variants: vec!["base".into()],
            budget: Duration::from_secs(600),
            seed: 0,
            out: PathBuf::from("explore-findings"),
            confirm: None,
            thresholds: Thresholds::default(),
            shrink_per_detector: 200,
            shrink_time: None,
            shrink_budget: 300,
            max_scenarios: None,
            threads: all_cores(),
            variant_changes_only: false,
        }
    }
}

/// The share of the budget the model's search gets when findings are confirmed (the
/// rest: shrinking, then confirmations, which cost 10-90 s each under TCG).
pub const SEARCH_SHARE: f64 = 0.15;
/// ... and shrinking.
pub const SHRINK_SHARE: f64 = 0.10;

impl Options {
    /// How the budget is split: (search, shrink). Confirming: [`SEARCH_SHARE`] and
    /// [`SHRINK_SHARE`] of it (90 s and 60 s of 10 min), confirmations until the budget
    /// ends; with `--confirm 0`, five sixths search and one sixth shrinking. Shrinking
    /// gets at least 5 s.
    pub fn plan(&self) -> (Duration, Duration) {
        let (search, shrink) = if self.confirm == Some(0) {
            (self.budget.mul_f64(5.0 / 6.0), self.budget / 6)
        } else {
            (self.budget.mul_f64(SEARCH_SHARE), self.budget.mul_f64(SHRINK_SHARE))
        };
        (search, self.shrink_time.unwrap_or(shrink.max(Duration::from_secs(5))))
    }
}
