//! The model-only search's throughput: seed 1's first 2000 generated scenarios (the
//! figure `radiff bench --model-only` prints), generated, parsed, predicted on base and
//! judged, on one thread and on every core. The work is the same every run, so
//! `perf stat -e instructions:u` on this binary compares two builds exactly.
//!
//! `cargo bench -p radiff --bench search` (issue 38's target: 1000 scenarios a second on
//! every core).

use radiff::explore::{all_cores, model_throughput};

fn main() {
    let scenarios = std::env::var("RADIFF_BENCH_SCENARIOS").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    let base = ["base".to_string()];
    let one = model_throughput(&base, 1, scenarios, 1).expect("the base policy");
    let threads = all_cores();
    let all = model_throughput(&base, 1, scenarios, threads).expect("the base policy");
    println!(
        "search (seed 1's first {scenarios} scenarios on base): {one:.0} scenarios/s on 1 thread, {all:.0}/s on {threads} threads: x{:.2}",
        all / one.max(1e-9)
    );
}
