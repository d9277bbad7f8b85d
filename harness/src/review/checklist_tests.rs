//! Each checklist line and the changelog's lines, on traces and cases made here.

use std::path::Path;

use radiff_model::{Folio, RaState, Request, Submit, Trace, Trigger, Window};

use super::*;
use crate::review::evidence::KernelRuns;

/// `n` windows, each submitting `pages` pages in one request of them, in folios of `order`,
/// opened by an async call under `ra_pages`.
fn trace(n: u64, pages: u64, order: u32, ra_pages: u64) -> Trace {
    Trace {
        windows: (0..n)
            .map(|i| Window {
                file: 0,
                trigger: if i == 0 { Trigger::Sync } else { Trigger::Async },
                index: i * pages,
                req_count: 1,
                ra: RaState { ra_pages, ..Default::default() },
                submits: vec![Submit::Order { index: i * pages, size: pages, async_size: pages, order }],
                folios: (0..pages >> order).map(|f| Folio { index: i * pages + (f << order), order }).collect(),
                requests: vec![Request { sector: i * pages * 8, sectors: pages * 8, rwbs: "RA".into() }],
            })
            .collect(),
    }
}

const RA256: Limits = Limits { read_ahead_kb: 256, max_sectors_kb: 512 };

fn seen_of<'a>(name: &'a str, lines: &[Line], base: &'a Trace, patch: &'a Trace) -> Seen<'a> {
    Seen {
        name,
        lines: lines.to_vec(),
        hints: Vec::new(),
        limits: RA256,
        asked: None,
        base,
        patch,
        kernels: true,
        smallness: (1, 1 << 20),
        hinted: None,
        hinted_kernels: false,
    }
}

fn line(said: &[Said], l: Line) -> &Said {
    said.iter().find(|s| s.line == l).unwrap()
}

#[test]
fn every_line_is_answered_and_a_line_no_case_asks_is_not_reached() {
    let (a, b) = (trace(4, 64, 2, 64), trace(4, 64, 2, 64));
    let said = checklist(&[seen_of("seq", &[Line::Limits, Line::Sequential, Line::FolioOrders], &a, &b)]);
    assert_eq!(said.iter().map(|s| s.line).collect::<Vec<_>>(), Line::ALL.to_vec());
    for l in [Line::Limits, Line::Sequential, Line::FolioOrders] {
        assert_eq!(line(&said, l).answer, Answer::Unchanged, "{:?}", line(&said, l));
    }
    let random = line(&said, Line::RandomReads);
    assert_eq!(random.answer, Answer::NotReached);
    assert_eq!(random.sentence(), "Random reads: not reached: no case read at random.");
    assert_eq!(line(&said, Line::Hints).answer, Answer::NotReached);
    assert_eq!(line(&said, Line::Mmap).answer, Answer::NotReached);
}

#[test]
fn a_window_over_read_ahead_kb_on_the_patch_alone_makes_limits_worse_and_names_the_smallest_case() {
    let (a, b) = (trace(4, 64, 2, 64), trace(4, 68, 2, 64));
    let mut big = seen_of("big", &[Line::Limits], &a, &b);
    big.smallness = (3, 64 << 20);
    let small = seen_of("small", &[Line::Limits], &a, &b);
    let said = checklist(&[big, small]);
    let limits = line(&said, Line::Limits);
    assert_eq!(limits.answer, Answer::Worse);
    assert_eq!(limits.fired[0].case, "small", "the smallest case first");
    let s = limits.sentence();
    assert!(
        s.starts_with("Limits kept (read_ahead_kb, max_sectors_kb): worse (kernels): windows exceed read_ahead_kb: 272 KiB > 256 KiB in small (and in 1 more case);"),
        "{s}"
    );
    assert!(s.contains("largest window 256 KiB -> 272 KiB in small (read_ahead_kb 256)"), "{s}");
    assert!(s.contains("largest request 256 KiB -> 272 KiB in small (max_sectors_kb 512)"), "{s}");
    assert!(s.ends_with("; 2 cases."), "{s}");
    assert_eq!(s.matches("windows exceed read_ahead_kb").count(), 1, "each question once:\n{s}");
    assert!(s.contains("272 KiB > 256 KiB in small (and in 1 more case);"), "{s}");
}

#[test]
fn a_limit_the_base_exceeds_too_is_the_bases_and_one_only_the_base_exceeds_is_better() {
    let (over, kept) = (trace(2, 68, 2, 64), trace(2, 64, 2, 64));
    let said = checklist(&[seen_of("both", &[Line::Limits], &over, &over)]);
    let limits = line(&said, Line::Limits);
    assert_eq!(limits.answer, Answer::Unchanged);
    assert!(
        limits
            .sentence()
            .contains("the base's own: windows exceed read_ahead_kb: 272 KiB > 256 KiB in both (base too)"),
        "{}",
        limits.sentence()
    );
    let said = checklist(&[seen_of("fixed", &[Line::Limits], &over, &kept)]);
    let limits = line(&said, Line::Limits);
    assert_eq!(limits.answer, Answer::Better);
    assert!(limits.sentence().contains("over its limit on base only in fixed"), "{}", limits.sentence());
    let said = checklist(&[seen_of("kept", &[Line::Limits], &kept, &kept)]);
    assert!(line(&said, Line::Limits).sentence().contains(", none over its limit;"));
}

#[test]
fn a_request_over_max_sectors_kb_is_named_in_the_limits_line() {
    let a = trace(2, 64, 2, 64);
    let mut b = a.clone();
    b.windows[1].requests = vec![Request { sector: 512, sectors: 2048, rwbs: "RA".into() }];
    let said = checklist(&[seen_of("merged", &[Line::Limits], &a, &b)]);
    let limits = line(&said, Line::Limits);
    assert_eq!(limits.answer, Answer::Worse);
    assert!(
        limits.sentence().contains("requests exceed max_sectors_kb: 1024 KiB > 512 KiB in merged"),
        "{}",
        limits.sentence()
    );
}

#[test]
fn sequential_reads_say_requests_and_bytes_and_more_of_either_is_worse() {
    let (a, b) = (trace(8, 16, 2, 64), trace(2, 64, 2, 64));
    let said = checklist(&[seen_of("seq", &[Line::Sequential], &a, &b)]);
    let s = line(&said, Line::Sequential);
    assert_eq!(s.answer, Answer::Better);
    assert_eq!(
        s.sentence(),
        "Sequential reads: better (kernels): seq: device reads 8 -> 2 (-75%), bytes read 512 KiB (unchanged); 1 case."
    );
    let said = checklist(&[seen_of("seq", &[Line::Sequential], &b, &a)]);
    assert_eq!(line(&said, Line::Sequential).answer, Answer::Worse);
}

#[test]
fn a_worse_case_is_named_before_a_better_one_whatever_their_size() {
    let (few, many) = (trace(2, 64, 2, 64), trace(8, 16, 2, 64));
    let better = seen_of("better", &[Line::Sequential], &many, &few);
    let mut worse = seen_of("worse", &[Line::Sequential], &few, &many);
    worse.smallness = (9, 1 << 30);
    let s = line(&checklist(&[better, worse]), Line::Sequential).sentence();
    assert!(s.starts_with("Sequential reads: worse (kernels): worse: device reads 2 -> 8"), "{s}");
    assert!(s.ends_with("; 2 cases."), "{s}");
}

#[test]
fn random_reads_say_bytes_read_per_byte_asked_and_name_an_amplification() {
    let (exact, expanded) = (trace(16, 1, 0, 32), trace(16, 32, 0, 32));
    let mut r = seen_of("covering_random_f2fs", &[Line::RandomReads], &exact, &expanded);
    r.asked = Some(16 * 4096);
    let said = checklist(&[r]);
    let random = line(&said, Line::RandomReads);
    assert_eq!(random.answer, Answer::Worse);
    assert_eq!(
        random.sentence(),
        "Random reads: worse (kernels): random reads amplified: 32.00 bytes read per byte asked (base 1.00) in covering_random_f2fs; covering_random_f2fs: 1.00 -> 32.00 bytes read per byte asked, device reads 16 (unchanged), bytes read 64 KiB -> 2.0 MiB (+3100%); 1 case."
    );
}

#[test]
fn folio_orders_give_the_distribution_and_where_it_drops() {
    let (big, small) = (trace(4, 64, 4, 64), trace(4, 64, 2, 64));
    let said = checklist(&[seen_of("drops", &[Line::FolioOrders], &big, &small)]);
    let orders = line(&said, Line::FolioOrders);
    assert_eq!(orders.answer, Answer::Worse);
    assert_eq!(
        orders.sentence(),
        "Folio orders: worse (kernels): folio orders drop: largest o4 -> o2, 16.0 -> 4.0 pages per folio in drops; folios 16 o4 -> 64 o2 over 1 case; drops: 16.0 -> 4.0 pages per folio."
    );
    let said = checklist(&[seen_of("rises", &[Line::FolioOrders], &small, &big)]);
    assert_eq!(line(&said, Line::FolioOrders).answer, Answer::Better);
}

#[test]
fn hints_name_the_hints_given_and_the_fault_path_its_faults() {
    let (a, b) = (trace(2, 64, 2, 64), trace(2, 64, 2, 64));
    let mut hinted = seen_of("willneed_mid_stream", &[Line::Hints, Line::Mmap], &a, &b);
    hinted.hints = vec!["fadvise willneed".into(), "readahead(2)".into()];
    let said = checklist(&[hinted]);
    assert_eq!(
        line(&said, Line::Hints).sentence(),
        "Hints honoured: unchanged (kernels): willneed_mid_stream (fadvise willneed, readahead(2)): device reads 2 (unchanged), bytes read 512 KiB (unchanged); 1 case."
    );
    let mut faulted = b.clone();
    faulted.windows.push(Window::open(Trigger::Fault, 0, 1, RaState::default()));
    let said = checklist(&[seen_of("mmap", &[Line::Mmap], &a, &faulted)]);
    let mmap = line(&said, Line::Mmap);
    assert_eq!(mmap.answer, Answer::Worse, "one more fault");
    assert!(mmap.sentence().contains("faults 0 -> 1"), "{}", mmap.sentence());
}

/// `trace(..)` whose second window found the readahead state emptied (a fresh open's).
fn emptied(t: &Trace) -> Trace {
    let mut t = t.clone();
    for (i, w) in t.windows.iter_mut().enumerate() {
        w.ra.size = if i == 1 { 0 } else { 64 };
        w.ra.prev_pos = 0;
    }
    t
}

#[test]
fn a_hint_the_patch_ignores_or_that_resets_its_stream_makes_hints_worse_on_the_models_figures() {
    let (a, b) = (trace(2, 64, 2, 64), trace(2, 64, 2, 64));
    let mut hinted = seen_of("willneed_mid_stream", &[Line::Hints], &a, &b);
    hinted.hints = vec!["fadvise willneed".into()];
    // Base reads other requests with its hint than without; the patch the same.
    let unhinted = trace(4, 32, 2, 64);
    hinted.hinted = Some((Hinted { with: &a, without: &unhinted }, Hinted { with: &b, without: &b }));
    let said = checklist(std::slice::from_ref(&hinted));
    let hints = line(&said, Line::Hints);
    assert_eq!(hints.answer, Answer::Worse, "{hints:?}");
    assert_eq!(hints.fired.len(), 1);
    assert_eq!(hints.fired[0].case, "willneed_mid_stream (fadvise willneed), on the model");
    assert!(
        hints.sentence().starts_with("Hints honoured: worse (kernels): hints change nothing: the same requests and folios with them as without (base: device reads 4 -> 2, folios 32 -> 32, without -> with) in willneed_mid_stream (fadvise willneed), on the model;"),
        "{}",
        hints.sentence()
    );
    // Both heed it, and the patch's stream finds its state emptied after the hint.
    let reset = emptied(&b);
    let kept = {
        let mut t = unhinted.clone();
        t.windows.iter_mut().for_each(|w| (w.ra.size, w.ra.prev_pos) = (64, 0));
        t
    };
    let mut patch_with = reset.clone();
    patch_with.windows[0].requests[0].sectors += 8;
    hinted.hinted = Some((Hinted { with: &a, without: &kept }, Hinted { with: &patch_with, without: &kept }));
    let said = checklist(std::slice::from_ref(&hinted));
    let hints = line(&said, Line::Hints);
    assert_eq!(hints.answer, Answer::Worse);
    assert!(hints.fired[0].said.starts_with("hints reset the stream: 1 readahead call found"), "{:?}", hints.fired);
    // A reset the base's hint makes too is not the patch's.
    hinted.hinted = Some((Hinted { with: &reset, without: &kept }, Hinted { with: &patch_with, without: &kept }));
    let said = checklist(std::slice::from_ref(&hinted));
    assert_eq!(line(&said, Line::Hints).fired, Vec::new());
    assert_eq!(line(&said, Line::Hints).answer, Answer::Unchanged);
}

#[test]
fn a_line_only_the_model_saw_says_so_and_the_kernels_cases_are_preferred() {
    let (a, b) = (trace(8, 16, 2, 64), trace(2, 64, 2, 64));
    let mut model = seen_of("model_only", &[Line::Sequential], &a, &b);
    model.kernels = false;
    let said = checklist(std::slice::from_ref(&model));
    let s = line(&said, Line::Sequential);
    assert!(s.model);
    assert!(
        s.sentence().starts_with(
            "Sequential reads: better (the model's figures; the kernels ran none of these cases): model_only"
        ),
        "{}",
        s.sentence()
    );
    let ran = seen_of("ran", &[Line::Sequential], &a, &a);
    let said = checklist(&[model, ran]);
    let s = line(&said, Line::Sequential);
    assert_eq!((s.answer, s.model), (Answer::Unchanged, false), "the kernels' case decides: {s:?}");
}

fn scenario(reads: &str) -> Scenario {
    Scenario::parse(
        Path::new("scenarios/t.yaml"),
        &format!("description: t\ndevice: {{kind: nvme, size: 1 GiB}}\nfilesystem: xfs\nfile: {{size: 8 MiB}}\nreads:\n{reads}"),
    )
    .unwrap()
}

#[test]
fn each_case_asks_the_lines_its_steps_ask() {
    let of = |reads: &str| {
        let s = scenario(reads);
        lines_of(&s, &s.points[0])
    };
    let all = |mid: &[Line]| [&[Line::Limits][..], mid, &[Line::FolioOrders]].concat();
    assert_eq!(of("  - sequential: {from: 0, size: 64 KiB}\n"), all(&[Line::Sequential]));
    assert_eq!(of("  - random: {count: 4, size: 4 KiB, seed: 1}\n"), all(&[Line::RandomReads]));
    assert_eq!(
        of("  - fadvise: {advice: willneed}\n  - sequential: {from: 0, size: 64 KiB}\n"),
        all(&[Line::Sequential, Line::Hints])
    );
    assert_eq!(
        of("  - mmap: {map: 0}\n  - madvise: {map: 0, advice: random}\n  - touch: {map: 0, order: sequential}\n"),
        all(&[Line::Hints, Line::Mmap])
    );
    assert_eq!(of("  - interleaved: {streams: 2, size: 32 KiB}\n"), all(&[Line::Sequential, Line::Streams]));
    let two = Scenario::parse(
        Path::new("scenarios/t.yaml"),
        "description: t\ndevice: {kind: nvme, size: 1 GiB}\nfilesystem: xfs\nfiles:\n  - {name: a, size: 8 MiB}\n  - {name: b, size: 8 MiB}\nreads:\n  - sequential: {file: b, from: 0, size: 64 KiB}\n",
    )
    .unwrap();
    assert!(lines_of(&two, &two.points[0]).contains(&Line::Streams), "a second file");
    let s = scenario(
        "  - fadvise: {advice: willneed}\n  - readahead: {offset: 0, size: 1 MiB}\n  - fadvise: {advice: willneed}\n",
    );
    assert_eq!(hints_of(&s), vec!["fadvise willneed".to_string(), "readahead(2)".to_string()]);
}

/// A review of one case the kernels ran, `base` against `patch`.
fn review(base: Trace, patch: Trace) -> Review {
    let s = scenario("  - sequential: {from: 0, size: 64 KiB}\n");
    let mut c = Case::new("seq_64k".into(), s.clone(), 0, Origin::Repository, s.path.clone());
    c.model = Some((base.clone(), patch.clone()));
    let (a, b) = (Figures::of(&base), Figures::of(&patch));
    c.runs = Some(KernelRuns {
        base: vec![a.clone(), a],
        patch: vec![b.clone(), b],
        base_trace: base,
        patch_trace: patch,
        raced: None,
    });
    Review {
        variant: "my-fix".into(),
        cases: vec![c],
        command: "radiff review my-fix.mbox --budget 600s --seed 0".into(),
        ..Default::default()
    }
}

#[test]
fn the_changelog_quotes_the_headlines_reads_bytes_and_orders_and_the_commands_that_reproduce_them() {
    let mut r = review(trace(8, 16, 2, 64), trace(2, 64, 4, 64));
    (r.folder, r.made) = ("review-my-fix".into(), true);
    assert_eq!(
        changelog(&r),
        vec![
            "radiff, seq_64k: t",
            "Base -> patch, two runs of each kernel:",
            "  device reads  8 -> 2 (-75%)",
            "  bytes read    512 KiB (unchanged)",
            "  folio orders  32 o2 -> 8 o4",
            "  cp -r review-my-fix/variant kernels/variants/my-fix &&",
            "  radiff report review-my-fix/scenarios/t.yaml --variants base,my-fix --runs 2",
            "  radiff review my-fix.mbox --budget 600s --seed 0",
        ]
    );
    r.made = false;
    assert!(
        changelog(&r)[5].starts_with("  radiff report review-my-fix/scenarios/t.yaml"),
        "a variant in kernels/variants/ needs no copy"
    );
}

#[test]
fn with_no_change_on_the_kernels_the_changelog_says_so_and_gives_the_review() {
    let r = review(trace(2, 64, 2, 64), trace(2, 64, 2, 64));
    assert_eq!(
        changelog(&r),
        vec![
            "radiff: no change of device reads, bytes or folios on the kernels (1 case run twice on each).",
            "  radiff review my-fix.mbox --budget 600s --seed 0",
        ]
    );
}

#[test]
fn a_review_gives_the_checklist_its_kernels_cases_with_their_limits_and_bytes_asked() {
    let r = review(trace(8, 16, 2, 64), trace(2, 64, 4, 64));
    let s = seen(&r);
    assert_eq!(s.len(), 1);
    assert!(s[0].kernels);
    assert_eq!(s[0].limits, Limits { read_ahead_kb: 128, max_sectors_kb: 512 }, "the kernel's defaults on this NVMe");
    assert_eq!(s[0].asked, Some(8 << 20), "64 KiB reads to the end of the 8 MiB file");
    assert_eq!(s[0].lines, vec![Line::Limits, Line::Sequential, Line::FolioOrders]);
}

#[test]
fn a_limit_the_patch_alone_breaks_on_the_kernels_withholds_the_tested_by() {
    // read_ahead_kb 128 (32 pages): a 34-page window is over it, a 32-page one is not.
    let r = review(trace(2, 32, 2, 32), trace(2, 34, 2, 32));
    assert!(limits_broken(&r));
    assert!(crate::review::judge::looked(&r).worse, "a broken limit is worse");
    let t = crate::review::reply::text(&r);
    assert!(t.contains("\nWhere it is worse (1 case, the smallest first):\n- seq_64k: the headline above"), "{t}");
    let headline = t.split("\nThe headline, seq_64k").nth(1).expect(&t);
    assert!(
        headline.contains("\n  windows exceed read_ahead_kb: 136 KiB > 128 KiB.\n"),
        "said under the headline:\n{t}"
    );
    assert!(!limits_broken(&review(trace(2, 34, 2, 32), trace(2, 34, 2, 32))), "the base's own");
    let mut model_only = review(trace(2, 32, 2, 32), trace(2, 34, 2, 32));
    model_only.cases[0].runs = None;
    assert!(!limits_broken(&model_only), "the model's word alone is no kernel evidence");
}

#[test]
fn a_case_the_hint_detectors_fire_on_runs_without_its_hints_and_the_kernels_decide() {
    let hinted = "  - fadvise: {advice: willneed, offset: 0, len: 1 MiB}\n  - sequential: {from: 0, size: 64 KiB}\n  - fadvise: {advice: dontneed}\n";
    let s = scenario(hinted);
    let mut c = Case::new("willneed".into(), s.clone(), 0, Origin::Repository, s.path.clone());
    assert_eq!(c.unhinted_single().steps, s.steps[1..].to_vec(), "the WILLNEED goes, DONTNEED stays");
    let (heeded, without) = (trace(2, 64, 2, 64), trace(4, 32, 2, 64));
    // The model: base reads otherwise with its hint, the patch the same.
    c.model = Some((heeded.clone(), without.clone()));
    c.unhinted = Some((without.clone(), without.clone()));
    assert!(c.hints_fire_on_model());
    let runs = |base: &Trace, patch: &Trace| {
        let (a, b) = (Figures::of(base), Figures::of(patch));
        KernelRuns {
            base: vec![a.clone(), a],
            patch: vec![b.clone(), b],
            base_trace: base.clone(),
            patch_trace: patch.clone(),
            raced: None,
        }
    };
    c.runs = Some(runs(&heeded, &without));
    // The kernels, run without the hint too, show the patch heeds it as base does.
    c.unhinted_runs = Some(runs(&without, &heeded));
    let r = Review { cases: vec![c.clone()], ..Default::default() };
    let hints = checklist(&seen(&r)).into_iter().find(|s| s.line == Line::Hints).unwrap();
    assert_eq!(hints.fired, Vec::new(), "the kernels decide: {hints:?}");
    assert_eq!(hints_broken(&c), None);
    // They show it ignored.
    c.unhinted_runs = Some(runs(&without, &without));
    assert!(broken(&c).is_some_and(|s| s.starts_with("hints change nothing: ")), "{:?}", broken(&c));
    let r = Review { cases: vec![c], ..Default::default() };
    let hints = checklist(&seen(&r)).into_iter().find(|s| s.line == Line::Hints).unwrap();
    assert_eq!(hints.answer, Answer::Worse);
    assert_eq!(hints.fired[0].case, "willneed (fadvise willneed), on the kernels, run without them too");
}
