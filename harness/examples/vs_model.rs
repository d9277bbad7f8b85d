//! Compares a run folder's kernel trace with the model's prediction for its scenario, as a
//! trial does (normalised kernel trace, base policy), without booting anything:
//! `cargo run --release -p radiff --example vs_model -- scenarios/S.yaml ~/.cache/radiff/runs/S/base [at-issue|before-next-op|when-waited]`
//! (the I/O completion assumption, default the model's).

use radiff::compare::{self, normalise};
use radiff::ftrace::Capture;
use radiff::run::model_input;
use radiff::scenario::Scenario;
use radiff::wire::GuestEnv;
use radiff_model::{predict_with, IoCompletion, ModelConfig, Policy};

fn main() {
    let mut args = std::env::args().skip(1);
    let scenario = Scenario::load(std::path::Path::new(&args.next().expect("usage: vs_model SCENARIO RUN_DIR")))
        .expect("scenario");
    let dir = std::path::PathBuf::from(args.next().expect("usage: vs_model SCENARIO RUN_DIR"));
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
    };
    let capture: Capture = serde_json::from_str(&read("trace.json")).expect("trace.json");
    let env: GuestEnv = serde_json::from_str(&read("env.json")).expect("env.json");
    let (kernel, steps) = normalise(&capture.trace, &env.extents);
    for (step, n) in steps {
        println!("normalised: {n} x {step}");
    }
    let io_completion = match args.next().as_deref() {
        None => IoCompletion::default(),
        Some("at-issue") => IoCompletion::AtIssue,
        Some("before-next-op") => IoCompletion::BeforeNextOp,
        Some("when-waited") => IoCompletion::WhenWaited,
        Some(other) => panic!("unknown I/O completion {other}"),
    };
    let config = ModelConfig { io_completion, ..ModelConfig::default() };
    let predicted = predict_with(&model_input(&scenario, &env, &capture.pfns), &Policy::BASE, &config);
    match compare::compare(&kernel, &predicted) {
        None => println!("{}: model == kernel ({} windows)", scenario.name, kernel.windows.len()),
        Some(d) => println!("{}", compare::render(&d, &scenario.name, "")),
    }
}
