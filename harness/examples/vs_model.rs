//! Compares a run folder's kernel trace with the model's prediction for its scenario, as a
//! trial does (normalised kernel trace, base policy), without booting anything:
//! `cargo run --release -p radiff --example vs_model -- scenarios/S.yaml ~/.cache/radiff/runs/S/base`.

use radiff::compare::{self, normalise};
use radiff::ftrace::Capture;
use radiff::guest::GuestEnv;
use radiff::run::model_input;
use radiff::scenario::Scenario;
use radiff_model::{predict, Policy};

fn main() {
    let mut args = std::env::args().skip(1);
    let scenario = Scenario::load(std::path::Path::new(&args.next().expect("usage: vs_model SCENARIO RUN_DIR"))).expect("scenario");
    let dir = std::path::PathBuf::from(args.next().expect("usage: vs_model SCENARIO RUN_DIR"));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    let capture: Capture = serde_json::from_str(&read("trace.json")).expect("trace.json");
    let env: GuestEnv = serde_json::from_str(&read("env.json")).expect("env.json");
    let (kernel, steps) = normalise(&capture.trace, &env.extents);
    for (step, n) in steps {
        println!("normalised: {n} x {step}");
    }
    let predicted = predict(&model_input(&scenario, &env, &capture.pfns), &Policy::BASE);
    match compare::compare(&kernel, &predicted) {
        None => println!("{}: model == kernel ({} windows)", scenario.name, kernel.windows.len()),
        Some(d) => println!("{}", compare::render(&d, &scenario.name, "")),
    }
}
