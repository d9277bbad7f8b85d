//! Compares the model with a finished run's trace, without booting a VM: for a model bug,
//! to see whether a model change fixes it from the run `radiff run` (or explore) left.
//!
//! ```sh
//! cargo run --release --example replay -- SCENARIO.yaml ~/.cache/radiff/runs/NAME/VARIANT [POLICY]
//! GREP=xarray cargo run --release --example replay -- ...   # also print the model's notes containing "xarray"
//! ```
//!
//! POLICY defaults to the variant the run folder is named after (or its parent, for a
//! matrix point) when the model knows it, else base.
use radiff::{compare, ftrace::Capture, run::model_input, scenario::Scenario, wire::GuestEnv};
use radiff_model::Policy;
use std::path::Path;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: replay SCENARIO.yaml RUN_DIR [POLICY]");
        std::process::exit(2);
    }
    let scenario = Scenario::load(Path::new(&a[1])).unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(&a[2]);
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
    };
    let env: GuestEnv = serde_json::from_str(&read("env.json")).unwrap();
    let cap: Capture = serde_json::from_str(&read("trace.json")).unwrap();
    // The variant's folder, or its parent for a matrix point's folder.
    let policy = match a.get(3) {
        Some(name) => Policy::for_variant(name).unwrap_or_else(|| panic!("no model policy `{name}`")),
        None => dir
            .ancestors()
            .take(2)
            .find_map(|d| Policy::for_variant(&d.file_name()?.to_string_lossy()))
            .unwrap_or(Policy::BASE),
    };
    let input = model_input(&scenario, &env, &cap.pfns);
    let model = radiff_model::predict(&input, &policy);
    let (kernel, _) = compare::normalise(&cap.trace, &env.extents);
    match compare::compare(&kernel, &model) {
        Some(d) => println!("{}", compare::render(&d, &scenario.name, "-")),
        None => println!("{}: model equals kernel ({} windows)", scenario.name, kernel.windows.len()),
    }
    if let Ok(word) = std::env::var("GREP") {
        let ex = radiff_model::explain(&input, &policy, &Default::default());
        for (i, n) in ex.notes.iter().enumerate() {
            for s in n.steps.iter().filter(|s| s.contains(&word)) {
                println!("  window {i} (op {}): {s}", n.op);
            }
        }
    }
}
