//! How long predicting seed 000's headline case takes: XFS on NVMe, read_ahead_kb 128,
//! max_sectors_kb 512, a 4 KiB read at 0 then 1 MiB reads from 4 KiB to the end of a
//! 512 MiB file (3327 windows, 9721 folios). Target (issue 38): at most 1 ms in release.
//!
//! Each prediction is timed with its trace given back (`Trace::recycle`), as radiff
//! explore's search gives back each trace it has judged.
//!
//! `cargo bench -p radiff-model --bench predict`

use std::hint::black_box;
use std::time::{Duration, Instant};

use radiff_model::pattern::expand;
use radiff_model::*;

/// An XFS file of `size` bytes in one extent on QEMU NVMe (read_ahead_kb 128,
/// max_sectors_kb 512), with these steps.
fn xfs_input(size: u64, steps: &[Step]) -> Input {
    Input::xfs_on_nvme(size, expand(steps, size))
}

fn headline() -> Input {
    xfs_input(
        512 << 20,
        &[Step::Read { fd: 0, offset: 0, size: 4096 }, Step::Sequential { fd: 0, from: 4096, size: 1 << 20, to: None }],
    )
}

/// The mmap headline (issue 12, scenarios/mmap_seq_8mib.yaml): a MAP_SHARED mapping of
/// an 8 MiB XFS file touched sequentially, one load a page (2048 touches).
fn mmap_headline() -> Input {
    let size = 8 << 20;
    xfs_input(
        size,
        &[
            Step::Mmap { map: 0, fd: 0, offset: 0, len: size, shared: true, exec: false, populate: false },
            Step::Touch { maps: vec![0], from: 0, to: None, order: TouchOrder::Sequential },
        ],
    )
}

fn time(name: &str, f: impl Fn()) {
    f(); // warm up
    let mut runs = Vec::new();
    let start = Instant::now();
    while runs.len() < 5 || (start.elapsed() < Duration::from_secs(2) && runs.len() < 200) {
        let t = Instant::now();
        f();
        runs.push(t.elapsed());
    }
    runs.sort();
    println!(
        "{name}: median {:.2} ms, min {:.2} ms over {} runs",
        runs[runs.len() / 2].as_secs_f64() * 1e3,
        runs[0].as_secs_f64() * 1e3,
        runs.len()
    );
}

fn main() {
    let input = headline();
    for variant in ["base", "async-align-v1", "async-align-v2"] {
        let policy = Policy::for_variant(variant).unwrap();
        time(&format!("predict 512 MiB headline, {variant}"), || {
            black_box(predict(black_box(&input), &policy)).recycle();
        });
    }
    let mmap = mmap_headline();
    time("predict 8 MiB mmap sequential touch, base", || {
        black_box(predict(black_box(&mmap), &Policy::BASE)).recycle();
    });
}
