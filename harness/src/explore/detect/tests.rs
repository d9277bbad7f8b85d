//! The detectors' table, and the hint-shortfall and lost-ramp detectors on model traces
//! (the model run on small generated scenarios).

use super::super::generate::{self, Gen, GenDevice, GenStep, GenTouch, Start};
use super::super::{context, fires, policies, predict_scenario, scenario_of};
use super::*;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn base() -> Vec<(String, crate::model_check::Predictor)> {
    policies(&["base".to_string()]).unwrap()
}

fn gen(steps: Vec<GenStep>) -> Gen {
    let mut g = Gen {
        files: 1,
        fault_around: generate::DEFAULT_FAULT_AROUND,
        thp: radiff_model::ThpMode::Always,
        device: GenDevice::Nvme { transfer_limit: 512 * KIB },
        fs: radiff_model::FsKind::Xfs,
        file_size: 32 * MIB,
        write_size: MIB,
        read_ahead_kb: 128,
        max_sectors_kb: 512,
        block_size: None,
        steps,
    };
    g.fix();
    g
}

/// The detector `name` on the model's trace of `g` (base), with the default thresholds.
fn on_model(g: &Gen, name: &str) -> Option<Hit> {
    fires(g, name, None, &base(), &Thresholds::default())
}

#[test]
fn every_row_has_a_unique_name_and_thresholds_and_each_threshold_can_be_set() {
    let mut names = std::collections::BTreeSet::new();
    for row in DETECTORS {
        assert!(names.insert(row.name), "{} twice", row.name);
        assert!(!row.thresholds.is_empty(), "{} has no threshold option", row.name);
        assert!(rank(row.name) > rank("variant-change"));
    }
    let all = thresholds::names();
    assert_eq!(
        all.len(),
        all.iter().collect::<std::collections::BTreeSet<_>>().len(),
        "a threshold name twice: {all:?}"
    );
    let mut t = Thresholds::default();
    for name in &all {
        t.set(&format!("{name}=3")).unwrap();
        assert_eq!(t.get(name), 3.0);
    }
    assert!(t.set("hint_min_pages=1.5").unwrap_err().contains("whole number"));
    assert!(t.set("hint_read_share=x").unwrap_err().contains("not a number"));
    assert!(t.set("nope=1").unwrap_err().contains("unknown threshold `nope`"));
    assert!(t.set("trim_ratio").is_err());
    let help = thresholds_help();
    for name in &all {
        assert!(help.contains(&format!("{name}=")), "{name} missing from the help");
    }
    // Every detector reads only thresholds the table declares (an undeclared one panics).
    let g = gen(vec![
        GenStep::Fadvise { advice: radiff_model::Advice::Willneed, range: None },
        GenStep::Sequential { at: Start::At(0), size: 64 * KIB, len: None },
    ]);
    let s = scenario_of(&g, &[]).unwrap();
    let (input, traces) = predict_scenario(&s, &base());
    run_all(&traces[0], &context(&input), &Thresholds::default());
}

#[test]
fn a_willneed_over_far_more_than_max_pages_falls_short_on_the_model() {
    // 32 MiB file, read_ahead_kb 128 (ra_pages 32), max_sectors_kb 512 (io_pages 128):
    // force_page_cache_ra() reads max(io_pages, ra_pages) = 128 of the 8192 pages.
    let whole = gen(vec![
        GenStep::Fadvise { advice: radiff_model::Advice::Willneed, range: None },
        GenStep::Read { at: Start::At(16 * MIB), size: 4 * KIB },
    ]);
    let hit = on_model(&whole, "hint-shortfall").expect("fires");
    assert!(hit.key.starts_with("willneed read under 1/64"), "{}", hit.key);
    assert!(
        hit.detail.contains("[0, 8192)") && hit.detail.contains("(8192 of them not cached) read 128 of them"),
        "{}",
        hit.detail
    );
    // readahead(2) and MADV_WILLNEED take the same path.
    let ra = gen(vec![GenStep::Readahead { at: MIB, size: 4 * MIB }]);
    let hit = on_model(&ra, "hint-shortfall").expect("fires");
    assert!(hit.key.starts_with("readahead(2)") && hit.detail.contains("[256, 1280)"), "{hit:?}");
    let madv = gen(vec![GenStep::Map {
        shared: true,
        exec: false,
        advice: Some(radiff_model::MadvAdvice::Willneed),
        order: GenTouch::Stride { stride: 2 * MIB },
    }]);
    assert!(on_model(&madv, "hint-shortfall").expect("fires").key.starts_with("madv-willneed"));
    // A hint within max_pages reads all of it; a hint over cached pages asks for nothing.
    assert_eq!(on_model(&gen(vec![GenStep::Readahead { at: MIB, size: 512 * KIB }]), "hint-shortfall"), None);
    let cached = gen(vec![
        GenStep::Sequential { at: Start::At(0), size: MIB, len: None },
        GenStep::Fadvise { advice: radiff_model::Advice::Willneed, range: None },
    ]);
    assert_eq!(on_model(&cached, "hint-shortfall"), None);
    // The threshold: a share of 1/100 lets a 128-of-8192 read pass.
    let t = Thresholds::default().with("hint_read_share", 0.01);
    assert!(fires(&whole, "hint-shortfall", None, &base(), &t).is_none());
}

#[test]
fn interleaved_streams_on_one_fd_lose_their_ramp_on_the_model_and_on_separate_fds_do_not() {
    // Two streams sharing one file_ra_state: each sync miss of one starts over at an
    // initial window and ra->order 0 in the middle of the other's pages.
    let mut one = gen(vec![GenStep::Interleaved { streams: 2, size: 96 * KIB, separate_fds: false }]);
    (one.device, one.file_size, one.max_sectors_kb) = (GenDevice::Ufs, 128 * MIB, 64);
    one.fix();
    let hit = on_model(&one, "lost-ramp").expect("fires");
    assert!(hit.detail.contains("fell back"), "{}", hit.detail);
    let mut fds = one.clone();
    fds.steps = vec![GenStep::Interleaved { streams: 2, size: 96 * KIB, separate_fds: true }];
    assert_eq!(on_model(&fds, "lost-ramp"), None);
    let mut seq = one.clone();
    seq.steps = vec![GenStep::Sequential { at: Start::At(0), size: 96 * KIB, len: None }];
    assert_eq!(on_model(&seq, "lost-ramp"), None);
    // More drops than it has: none.
    let t = Thresholds::default().with("ramp_min_drops", 1e9);
    assert!(fires(&one, "lost-ramp", None, &base(), &t).is_none());
}
