//! Prints a summary of the model's trace for seed 000's headline case (XFS on NVMe,
//! read_ahead_kb 128, a 4 KiB read at 0 then 1 MiB reads from 4 KiB to the end of a
//! 512 MiB file): `cargo run -p radiff-model --example headline -- [variant] [max_sectors_kb] [read_kb] [explain]`.

use radiff_model::pattern::expand;
use radiff_model::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = args.get(1).map(String::as_str).unwrap_or("base");
    let max_sectors_kb: u64 = args.get(2).map_or(512, |s| s.parse().unwrap());
    let read_kb: u64 = args.get(3).map_or(1024, |s| s.parse().unwrap());
    let policy = Policy::for_variant(variant).expect("unknown variant");
    let size = 512 << 20;
    let mut queue = QueueLimits::nvme_qemu(128, max_sectors_kb);
    queue.max_hw_sectors_kb = queue.max_hw_sectors_kb.max(max_sectors_kb);
    let ops = expand(
        &[
            Step::Read { fd: 0, offset: 0, size: 4096 },
            Step::Sequential { fd: 0, from: 4096, size: read_kb << 10, to: None },
        ],
        size,
    );
    let input = Input { queue, ..Input::xfs_on_nvme(size, ops) };
    let trace = predict(&input, &policy);
    let submits = trace.windows.iter().flat_map(|w| &w.submits).count();
    println!(
        "windows {} submits {} requests {} folios {} orders {:?}",
        trace.windows.len(),
        submits,
        trace.requests().count(),
        trace.folios().count(),
        trace.folio_orders()
    );
    let sizes: Vec<String> = trace
        .windows
        .iter()
        .flat_map(|w| &w.submits)
        .take(40)
        .map(|s| match s {
            Submit::Order { index, size, .. } => format!("{index}+{size}"),
            Submit::Unbounded { index, nr_to_read, .. } => format!("U{index}+{nr_to_read}"),
        })
        .collect();
    println!("{}", sizes.join(" "));
    if args.get(4).is_some_and(|a| a == "explain") {
        let ex = explain(&input, &policy, &ModelConfig::default());
        for (w, n) in ex.trace.windows.iter().zip(&ex.notes).take(60) {
            println!(
                "{:?} idx {} req {} ra {:?} | {:?} folios {:?}",
                w.trigger,
                w.index,
                w.req_count,
                (w.ra.size, w.ra.async_size, w.ra.order),
                n.steps,
                w.folios.iter().map(|f| (f.index, f.order)).collect::<Vec<_>>()
            );
        }
    }
}
