//! The one check of a kernel run against the model: the kernel's trace normalised, the
//! model's input made from the scenario and what the guest measured, the model run, and
//! the two compared. Every caller that checks a run against the model (trials, bisect,
//! explore's confirmation, the fixtures) goes through [`check`].

use radiff_model::hybrid::Crash;
use std::sync::Arc;

use radiff_model::{Coverage, Input, ModelConfig, Op, Policy, Trace};

use crate::compare::{self, Divergence, Timed};
use crate::ftrace::Capture;
use crate::run::model_input_with;
use crate::scenario::Scenario;
use crate::wire::GuestEnv;
use crate::worker::Workers;

/// A run checked against the model under one policy.
#[derive(Clone, Debug)]
pub struct ModelCheck {
    /// What the model was given.
    pub input: Input,
    /// The kernel's trace, normalised ([`compare::normalise`]).
    pub kernel: Trace,
    /// The normalisation steps that removed something, with their counts.
    pub normalised: Vec<(&'static str, u64)>,
    /// The model's trace.
    pub model: Trace,
    /// The branches the model took (race marks are read from it).
    pub coverage: Coverage,
    /// Where the kernel and the model first part, if they do.
    pub divergence: Option<Divergence>,
    /// Windows that passed with only a timing-dependent `ra.prev_pos` differing.
    pub timed: Vec<Timed>,
    /// How the hybrid's C crashed, if it did: the model's trace stops there.
    pub crash: Option<Crash>,
}

/// What predicts the kernel: the Rust model under a policy, or the hybrid (a tree's own
/// mm/readahead.c running as C in the model, the rest the Rust model under `policy`; both
/// in worker processes, hybrid/worker.rs).
#[derive(Clone, Debug)]
pub enum Predictor {
    Port(Policy),
    /// `port`: the functions the tree changes that stay 7.3.4's Rust port beside its C
    /// (what the hybrid could not run), for a divergence to name those the model went
    /// through ([`Predictor::port_ran`]).
    Hybrid {
        policy: Policy,
        c: Arc<Workers>,
        label: String,
        port: Vec<String>,
    },
}

impl Predictor {
    /// The policy of the Rust model's part.
    pub fn policy(&self) -> &Policy {
        match self {
            Predictor::Port(p) | Predictor::Hybrid { policy: p, .. } => p,
        }
    }

    /// The model's trace for `input` under `config`; the hybrid's stops where its C
    /// crashed (see [`Predictor::run`] for the crash itself).
    pub fn predict_with(&self, input: &Input, config: &ModelConfig) -> Trace {
        match self {
            Predictor::Port(p) => radiff_model::predict_with(input, p, config),
            Predictor::Hybrid { policy, c, .. } => c.predict(input, policy, config).trace,
        }
    }

    /// [`Predictor::predict_with`] under the default assumptions.
    pub fn predict(&self, input: &Input) -> Trace {
        self.predict_with(input, &ModelConfig::default())
    }

    /// "the hybrid: LABEL" (which tree's C ran, which functions it changes), as the trial,
    /// explore's summary and the reply say it; `None` for the Rust port.
    pub fn hybrid_said(&self) -> Option<String> {
        match self {
            Predictor::Hybrid { label, .. } => Some(format!("the hybrid: {label}")),
            Predictor::Port(_) => None,
        }
    }

    /// The Rust model's policy when nothing runs as C: the model's notes and branches
    /// explain its decisions only then.
    pub fn port(&self) -> Option<&Policy> {
        match self {
            Predictor::Port(p) => Some(p),
            Predictor::Hybrid { .. } => None,
        }
    }

    /// Of the functions the tree changes that stay the Rust port (the hybrid's `port`),
    /// those whose branches `coverage` took, in their order; `None` for the Rust port or
    /// a hybrid that runs every changed function as C.
    pub fn port_ran(&self, coverage: &Coverage) -> Option<Vec<String>> {
        let Predictor::Hybrid { port, .. } = self else { return None };
        if port.is_empty() {
            return None;
        }
        let ran: std::collections::BTreeSet<&str> = coverage.ids().map(crate::port::lines::function_of).collect();
        Some(port.iter().filter(|f| ran.contains(f.as_str())).cloned().collect())
    }

    /// The model's trace for `input`, with its branches and any crash of the C.
    pub fn run(&self, input: &Input) -> (Trace, Coverage, Option<Crash>) {
        match self {
            Predictor::Port(p) => {
                let (trace, coverage) = radiff_model::coverage(input, p);
                (trace, coverage, None)
            }
            Predictor::Hybrid { policy, c, .. } => {
                let o = c.run(input, policy, &ModelConfig::default());
                (o.trace, o.coverage, o.crash)
            }
        }
    }
}

impl ModelCheck {
    /// The races the model marks on this run's input ([`compare::RACE_MARKS`]).
    pub fn races(&self) -> impl Iterator<Item = &'static compare::RaceMark> + '_ {
        compare::races_marked(&self.coverage)
    }
}

/// Checks `capture` (the kernel's run of `scenario`, with what the guest measured in
/// `env`, and the calls its programs made) against the model under `policy`.
pub fn check(scenario: &Scenario, env: &GuestEnv, capture: &Capture, policy: &Policy) -> ModelCheck {
    check_with(scenario, env, capture, &Predictor::Port(*policy))
}

/// [`check`] against any [`Predictor`]. For the hybrid, the windows a splice opened are
/// found on the Rust model of its policy and allowed only where both models open as many
/// windows (its notes name each window's system call).
pub fn check_with(scenario: &Scenario, env: &GuestEnv, capture: &Capture, predictor: &Predictor) -> ModelCheck {
    let input = model_input_with(scenario, env, capture);
    let (kernel, normalised) = compare::normalise(&capture.trace, &env.all_extents());
    let (mut model, coverage, crash) = predictor.run(&input);
    let mut timed = timed_windows(&input, predictor.policy());
    if capture.windowless {
        // A kernel without the readahead tracepoints: the model's trace as it would show it.
        model = compare::as_untraced(&model);
        timed.clear();
    }
    if !timed.is_empty() && timed.len() != model.windows.len() {
        timed.clear();
    }
    let (divergence, timed) = compare::compare_timed(&kernel, &model, &timed);
    ModelCheck { input, kernel, normalised, model, coverage, divergence, timed, crash }
}

/// The windows of the model's trace whose `ra.prev_pos` depends on when reads complete:
/// those a splice opened. `filemap_splice_read()` records `prev_pos` after each folio, so
/// at an async window it holds wherever the reader had got to, and that depends on which
/// of its reads had completed when it looked folios up (measured: a folio still under
/// I/O drops out of the batch, AOP_TRUNCATED_PAGE, and the mark after it is met before
/// the folios between are spliced). See `radiff_model::IoCompletion`. Empty (nothing
/// timed) for a scenario that does not splice.
pub fn timed_windows(input: &Input, policy: &Policy) -> Vec<bool> {
    if !input.ops.iter().any(|op| matches!(op, Op::Splice { .. })) {
        return Vec::new();
    }
    let explained = radiff_model::explain(input, policy, &ModelConfig::default());
    explained.notes.iter().map(|n| matches!(input.ops.get(n.op), Some(Op::Splice { .. }))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hybrid_names_the_changed_functions_it_ran_as_the_port_and_the_port_names_none() {
        let c = Arc::new(Workers::new(std::path::Path::new("/radiff-never-loaded.so")));
        let port = vec!["filemap_read".to_string(), "get_init_ra_size".to_string()];
        let hybrid = Predictor::Hybrid { policy: Policy::BASE, c, label: String::new(), port };
        let mut coverage = Coverage::default();
        assert_eq!(hybrid.port_ran(&coverage), Some(Vec::new()));
        let at = radiff_model::BRANCHES.iter().position(|b| b.id.starts_with("get_init_ra_size:")).unwrap();
        coverage.hit(at);
        assert_eq!(hybrid.port_ran(&coverage), Some(vec!["get_init_ra_size".to_string()]));
        assert_eq!(Predictor::Port(Policy::BASE).port_ran(&coverage), None);
    }

    #[test]
    fn only_the_windows_a_splice_opened_are_timed() {
        let input = Input::xfs_on_nvme(
            8 << 20,
            vec![
                Op::Read { fd: 0, offset: 0, len: 4096 },
                Op::Splice { fd: 0, offset: 1 << 20, len: 128 << 10, pipe: 64 << 10, sendfile: false },
            ],
        );
        let timed = timed_windows(&input, &Policy::BASE);
        let trace = radiff_model::predict(&input, &Policy::BASE);
        assert_eq!(timed.len(), trace.windows.len());
        assert!(!timed[0], "the pread's window");
        assert!(timed[1..].iter().all(|&t| t) && timed.len() > 1, "{timed:?}");
        assert!(timed_windows(
            &Input::xfs_on_nvme(8 << 20, vec![Op::Read { fd: 0, offset: 0, len: 4096 }]),
            &Policy::BASE
        )
        .is_empty());
    }
}
