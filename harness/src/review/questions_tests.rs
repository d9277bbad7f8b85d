//! Each detector on traces made here: a window or request over its limit, random reads
//! amplified, folio orders that drop.

use radiff_model::pattern::{Op, ReadHow};
use radiff_model::{Folio, RaState, Request, Submit, Trace, Trigger, Window};

use super::*;

/// A window opened by `trigger` for `req_count` pages under `ra_pages`, submitting `pages`
/// pages in one request in folios of `order`.
fn window(trigger: Trigger, req_count: u64, ra_pages: u64, pages: u64, order: u32) -> Window {
    Window {
        file: 0,
        trigger,
        index: 0,
        req_count,
        ra: RaState { ra_pages, ..Default::default() },
        submits: vec![Submit::Order { index: 0, size: pages, async_size: pages, order }],
        folios: (0..pages >> order).map(|i| Folio { index: i << order, order }).collect(),
        requests: vec![Request { sector: 0, sectors: pages * 8, rwbs: "RA".into() }],
    }
}

fn trace(windows: Vec<Window>) -> Trace {
    Trace { windows }
}

const RA256: Limits = Limits { read_ahead_kb: 256, max_sectors_kb: 512 };

#[test]
fn a_window_past_read_ahead_kb_is_said_by_name_with_both_sizes() {
    let kept = trace(vec![window(Trigger::Sync, 1, 64, 16, 0), window(Trigger::Async, 1, 64, 64, 2)]);
    assert_eq!(windows_over(&kept, &RA256), None, "64 pages are read_ahead_kb 256");
    assert_eq!(largest_window_kb(&kept), 256);
    let over = trace(vec![window(Trigger::Sync, 1, 64, 16, 0), window(Trigger::Async, 1, 64, 68, 2)]);
    let o = windows_over(&over, &RA256).expect("68 pages are past 64");
    assert_eq!((o.held, o.kb, o.limit_kb, o.window, o.raised), (Held::Window, 272, 256, 1, Raised::No));
    assert_eq!(o.said(), "windows exceed read_ahead_kb: 272 KiB > 256 KiB");
    assert_eq!(largest_window_kb(&over), 272);
}

#[test]
fn a_read_larger_than_the_window_may_read_up_to_max_sectors_kb_and_no_further() {
    // A 1 MiB read (256 pages) under read_ahead_kb 128: ractl_max_pages() allows 128 pages.
    let limits = Limits { read_ahead_kb: 128, max_sectors_kb: 512 };
    assert_eq!(windows_over(&trace(vec![window(Trigger::Sync, 256, 32, 128, 2)]), &limits), None);
    let o = windows_over(&trace(vec![window(Trigger::Sync, 256, 32, 160, 2)]), &limits).unwrap();
    assert_eq!((o.kb, o.limit_kb, o.raised), (640, 512, Raised::ReadSize));
    assert!(o.said().ends_with("(the read's own size, up to max_sectors_kb)"), "{}", o.said());
}

#[test]
fn fadvise_sequential_doubles_the_window_the_call_may_open() {
    // POSIX_FADV_SEQUENTIAL: the file's ra_pages is twice the device's, as the call saw it.
    let doubled = trace(vec![window(Trigger::Async, 1, 128, 128, 2)]);
    assert_eq!(windows_over(&doubled, &RA256), None);
}

#[test]
fn a_vm_hugepage_fault_reads_a_pmd_whatever_read_ahead_kb_says() {
    let limits = Limits { read_ahead_kb: 128, max_sectors_kb: 512 };
    // Two PMDs without VM_RAND_READ (do_sync_mmap_readahead() doubles HPAGE_PMD_NR).
    let mut fault = window(Trigger::Fault, 1, 0, 1024, 9);
    fault.ra = RaState::default();
    let then = window(Trigger::Async, 1, 32, 1024, 9);
    assert_eq!(windows_over(&trace(vec![fault.clone(), then.clone()]), &limits), None);
    // Without the fault first, the same async window is over.
    assert_eq!(windows_over(&trace(vec![then]), &limits).map(|o| o.kb), Some(4096));
    // And past two PMDs, over even after it.
    let o = windows_over(&trace(vec![fault, window(Trigger::Async, 1, 32, 1026, 9)]), &limits).unwrap();
    assert_eq!((o.kb, o.limit_kb, o.raised), (4104, 4096, Raised::Hugepage));
    assert_eq!(o.said(), "windows exceed read_ahead_kb: 4104 KiB > 4096 KiB (a VM_HUGEPAGE fault's window, two PMDs)");
}

#[test]
fn a_forced_read_is_held_to_max_sectors_kb_only() {
    let mut forced = window(Trigger::Sync, 1, 64, 0, 0);
    forced.submits = vec![Submit::Unbounded { index: 0, nr_to_read: 128, lookahead_size: 0 }];
    assert_eq!(windows_over(&trace(vec![forced.clone()]), &RA256), None, "128 pages are max_sectors_kb 512");
    forced.submits = vec![Submit::Unbounded { index: 0, nr_to_read: 256, lookahead_size: 0 }];
    assert_eq!(windows_over(&trace(vec![forced]), &RA256).map(|o| (o.kb, o.limit_kb)), Some((1024, 512)));
}

#[test]
fn a_request_past_max_sectors_kb_is_said_and_the_largest_is_named() {
    let mut w = window(Trigger::Sync, 1, 64, 64, 0);
    assert_eq!(requests_over(&trace(vec![w.clone()]), &RA256), None);
    assert_eq!(largest_request_kb(&trace(vec![w.clone()])), 256);
    w.requests.push(Request { sector: 512, sectors: 1536, rwbs: "RA".into() });
    w.requests.push(Request { sector: 4096, sectors: 1280, rwbs: "RA".into() });
    w.requests.push(Request { sector: 8, sectors: 4096, rwbs: "RM".into() });
    let o = requests_over(&trace(vec![w]), &RA256).unwrap();
    assert_eq!((o.held, o.kb, o.limit_kb), (Held::Request, 768, 512), "metadata is not a data request");
    assert_eq!(o.said(), "requests exceed max_sectors_kb: 768 KiB > 512 KiB");
}

#[test]
fn the_bytes_asked_are_each_reads_up_to_the_end_of_its_file_and_a_page_per_touch() {
    let ops = vec![
        Op::Read { fd: 0, offset: 0, len: 4096 },
        Op::Read { fd: 0, offset: 8192 + 2048, len: 8192 },
        Op::Fadvise { fd: 0, offset: 0, len: 0, advice: radiff_model::Advice::Willneed },
        Op::Touch { map: 0, offset: 0 },
        Op::ReadWith { fd: 0, offset: 0, len: 4096, how: ReadHow { direct: true, ..Default::default() } },
    ];
    assert_eq!(asked_bytes(&ops, &[12288]), Some(4096 + 2048 + 4096));
    assert_eq!(asked_bytes(&[Op::Program { program: 0 }], &[12288]), None, "a program's calls are unknown");
}

#[test]
fn random_reads_are_amplified_when_the_device_reads_more_than_twice_the_bytes_asked() {
    let asked = Some(16 * 4096);
    let exact = trace((0..16).map(|_| window(Trigger::Sync, 1, 32, 1, 0)).collect());
    assert_eq!(amplification(&exact, asked), Some(1.0));
    assert_eq!(random_amplified(&exact, asked), None);
    let expanded = trace((0..16).map(|_| window(Trigger::Sync, 1, 32, 32, 0)).collect());
    assert_eq!(random_amplified(&expanded, asked), Some(32.0));
    assert_eq!(random_amplified(&expanded, None), None, "nothing known asked, nothing said");
}

#[test]
fn folio_orders_drop_when_the_largest_order_falls_or_the_pages_per_folio_fall_by_a_quarter() {
    let f = |order: u32, n: u64| Figures::of(&trace((0..n).map(|_| window(Trigger::Sync, 1, 32, 16, order)).collect()));
    let drop = order_drop(&f(4, 4), &f(2, 4)).expect("o4 -> o2");
    assert_eq!((drop.base_top, drop.patch_top, drop.base_pages, drop.patch_pages), (4, 2, 16.0, 4.0));
    assert_eq!(drop.said(), "folio orders drop: largest o4 -> o2, 16.0 -> 4.0 pages per folio");
    assert_eq!(order_drop(&f(2, 4), &f(4, 4)), None, "orders that rise do not drop");
    assert_eq!(order_drop(&f(2, 4), &f(2, 8)), None, "more of the same order is no drop");
    // The same largest order, but most pages now in order-0 folios.
    let mut mixed = f(2, 1);
    *mixed.folio_orders.entry(0).or_default() += 8;
    mixed.folios += 8;
    let same_top = order_drop(&f(2, 1), &mixed).expect("4.0 -> 2.0 pages per folio");
    assert_eq!(same_top.said(), "folio orders drop: 4.0 -> 2.0 pages per folio", "no largest order that did not fall");
    assert_eq!(order_drop(&Figures::default(), &f(2, 1)), None, "no folios before, nothing to drop");
}

#[test]
fn a_fired_detector_names_its_case_and_whether_the_base_shows_it_too() {
    let o = windows_over(&trace(vec![window(Trigger::Async, 1, 64, 68, 2)]), &RA256).unwrap();
    let fired = Fired { case: "seq_ra256".into(), said: o.said(), on_base: false };
    assert_eq!(fired.sentence(), "windows exceed read_ahead_kb: 272 KiB > 256 KiB in seq_ra256");
    assert!(Fired { on_base: true, ..fired }.sentence().ends_with("in seq_ra256 (base too)"));
}

#[test]
fn an_async_window_may_keep_the_size_of_the_one_before_it_but_the_first_past_the_limit_is_said() {
    let kept = |size: u64| {
        let mut w = window(Trigger::Async, 1, 64, size, 2);
        w.ra.size = 128;
        w
    };
    // A 512 KiB window before it (a large read's): the next may keep 512 KiB.
    assert_eq!(windows_over(&trace(vec![kept(128)]), &RA256), None);
    let o = windows_over(&trace(vec![kept(136)]), &RA256).unwrap();
    assert_eq!((o.kb, o.limit_kb, o.raised), (544, 512, Raised::Kept));
    // The patch's first window past read_ahead_kb came after one within it.
    let mut first = window(Trigger::Async, 1, 64, 68, 2);
    first.ra.size = 64;
    assert_eq!(windows_over(&trace(vec![first]), &RA256).map(|o| o.raised), Some(Raised::No));
}

#[test]
fn hints_are_left_out_but_dontneed_and_what_acts_on_a_mapping() {
    use radiff_model::pattern::{Advice, MadvAdvice};
    let read = Op::Read { fd: 0, offset: 0, len: 4096 };
    let ops = vec![
        Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Random },
        read,
        Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Dontneed },
        Op::Readahead { fd: 0, offset: 0, len: 1 << 20 },
        Op::Madvise { map: 0, offset: 0, len: 4096, advice: MadvAdvice::Sequential },
        Op::Madvise { map: 0, offset: 0, len: 4096, advice: MadvAdvice::PopulateRead },
    ];
    assert_eq!(
        without_hints(&ops),
        Some(vec![
            read,
            Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Dontneed },
            Op::Madvise { map: 0, offset: 0, len: 4096, advice: MadvAdvice::PopulateRead },
        ])
    );
    assert_eq!(without_hints(&[read]), None, "nothing to leave out");
}

/// Windows of file 0 finding `(size, prev_pos)` each.
fn states(of: &[(u64, i64)]) -> Trace {
    trace(
        of.iter()
            .map(|&(size, prev_pos)| {
                let mut w = window(Trigger::Async, 1, 64, 16, 0);
                w.ra.size = size;
                w.ra.prev_pos = prev_pos;
                w
            })
            .collect(),
    )
}

#[test]
fn a_stream_restarts_where_a_call_finds_its_files_state_fresh_after_one_found_a_window() {
    assert_eq!(restarts(&states(&[(0, -1), (16, 0), (32, 65536)])), 0, "the first call finds it fresh");
    assert_eq!(restarts(&states(&[(0, -1), (16, 0), (0, -1), (16, 0)])), 1);
    assert_eq!(restarts(&states(&[(0, -1), (16, 0), (16, -1)])), 1, "prev_pos forgotten");
    let mut other = states(&[(16, 0), (0, -1)]);
    other.windows[1].file = 1;
    assert_eq!(restarts(&other), 0, "another file's first call");
    let mut fault = states(&[(16, 0), (0, -1)]);
    fault.windows[1].trigger = Trigger::Fault;
    assert_eq!(restarts(&fault), 0, "a fault's window records no state");
}

#[test]
fn a_hint_is_ignored_where_only_base_reads_otherwise_with_it_and_resets_where_only_the_patch_restarts() {
    let heeded = states(&[(0, -1), (16, 0)]);
    let mut other = heeded.clone();
    other.windows[1].folios.pop();
    let h = |with, without| Hinted { with, without };
    let said = hints_ignored(h(&heeded, &other), h(&heeded, &heeded)).expect("base heeds it, the patch does not");
    assert!(said.starts_with("hints change nothing: "), "{said}");
    assert_eq!(hints_ignored(h(&heeded, &other), h(&heeded, &other)), None, "both heed it");
    assert_eq!(hints_ignored(h(&heeded, &heeded), h(&heeded, &heeded)), None, "neither: nothing to heed");

    let fresh = states(&[(0, -1), (16, 0), (0, -1), (16, 0)]);
    let said = hints_reset(h(&heeded, &heeded), h(&fresh, &heeded)).expect("the patch's hint empties the state");
    assert_eq!(
        said,
        "hints reset the stream: 1 readahead call found the file's readahead state emptied after them (base: 0)"
    );
    assert_eq!(hints_reset(h(&fresh, &heeded), h(&fresh, &heeded)), None, "base's hint does the same");
    assert_eq!(hints_reset(h(&heeded, &heeded), h(&fresh, &fresh)), None, "the hint is not what empties it");
}
