//! Prints the snapshot text (totals and window table) of a run folder's trace, as a trial
//! would snapshot it: `cargo run --release -p radiff --example table -- ~/.cache/radiff/runs/S/base [LINES]`.

use radiff::ftrace::Capture;
use radiff::wire::GuestEnv;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: table RUN_DIR [LINES]"));
    let lines: usize = args.next().map(|n| n.parse().expect("LINES is a number")).unwrap_or(usize::MAX);
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
    };
    let capture: Capture = serde_json::from_str(&read("trace.json")).expect("trace.json");
    let env: GuestEnv = serde_json::from_str(&read("env.json")).expect("env.json");
    let text = radiff::summary::snapshot(&capture.trace, &env.extents);
    for line in text.lines().take(lines) {
        println!("{line}");
    }
}
