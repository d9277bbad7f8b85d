use super::*;
use crate::calls::ra::RaFiles;
use radiff_model::Op;

const DATA: &str = "/tmp/radiff-mnt/data";

/// Lines of the calls' instance for `w`, made by task `pid` (fields as 7.3.4 prints them).
fn window_lines(w: &Window, pid: u32, out: &mut Vec<(u32, String)>) {
    let r = &w.ra;
    let open = if w.trigger == Trigger::Sync { "page_cache_sync_ra" } else { "page_cache_async_ra" };
    out.push((pid, format!(
        "{open}: dev=259:0 ino=83 index={} req_count={} order={} size={} async_size={} ra_pages={} mmap_miss={} prev_pos={}",
        w.index, w.req_count, r.order, r.size, r.async_size, r.ra_pages, r.mmap_miss, r.prev_pos
    )));
    for s in &w.submits {
        out.push((pid, match s {
            Submit::Order { index, size, async_size, order } => format!(
                "page_cache_ra_order: dev=259:0 ino=83 index={index} order={order} size={size} async_size={async_size} ra_pages={}",
                r.ra_pages
            ),
            Submit::Unbounded { index, nr_to_read, lookahead_size } => format!(
                "page_cache_ra_unbounded: dev=259:0 ino=83 index={index} nr_to_read={nr_to_read} lookahead_size={lookahead_size}"
            ),
        }));
    }
    for f in &w.folios {
        out.push((
            pid,
            format!(
                "mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x1000 ofs={} order={}",
                f.index * 4096,
                f.order
            ),
        ));
    }
    for q in &w.requests {
        out.push((
            pid,
            format!(
                "block_rq_issue: 259,0 {} {} () {} + {} none,0,0 [python3]",
                q.rwbs.as_str(),
                q.sectors * 512,
                q.sector,
                q.sectors
            ),
        ));
    }
}

/// The calls' trace of program 0 (pid `main`): `lines` of (task, body), the task's thread
/// group `main`.
fn trace(main: u32, lines: &[(u32, String)]) -> String {
    let mut t = String::from("# tracer: nop\n");
    t.push_str(
        "    radiff-guest-50      (     50) [000] .....     1.000000: tracing_mark_write: radiff program 0 start\n",
    );
    for (i, (pid, body)) in lines.iter().enumerate() {
        t.push_str(&format!("  python3-{pid} ({main:>7}) [001] ..... 1.{:06}: {body}\n", i + 1));
    }
    t.push_str(&format!("    radiff-guest-50      (     50) [000] .....     9.000000: tracing_mark_write: radiff program 0 pid {main} end\n"));
    t
}

fn pread(pid: u32, offset: u64, len: u64) -> (u32, String) {
    (pid, format!("sys_pread64(fd: 3, buf: 0x7f0000, count: 0x{len:x}, pos: 0x{offset:x})"))
}

fn returned(pid: u32, len: u64) -> (u32, String) {
    (pid, format!("sys_pread64 -> 0x{len:x}"))
}

/// Two threads of one process (pids 80 and 81) on one descriptor: 80 reads `a` and 81
/// reads `b`, each pair of calls overlapping (both entered, then 80's readahead, then
/// 81's). The model's whole run of the same calls in that order gives the windows the
/// kernel would record; `tamper` changes them first (a kernel that decides otherwise).
fn overlapping(
    a: &[(u64, u64)],
    b: &[(u64, u64)],
    tamper: impl Fn(&mut Vec<Window>),
) -> (Input, Trace, Vec<ProgramCalls>) {
    let mut ops = Vec::new();
    for (x, y) in a.iter().zip(b) {
        ops.push(Op::Read { fd: 0, offset: x.0, len: x.1 });
        ops.push(Op::Read { fd: 0, offset: y.0, len: y.1 });
    }
    let input = Input::xfs_on_nvme(64 << 20, ops.clone());
    let mut whole = radiff_model::predict(&input, &Policy::BASE);
    tamper(&mut whole.windows);
    let explained = radiff_model::explain(&input, &Policy::BASE, &radiff_model::ModelConfig::default());
    let mut lines = vec![
        (80, format!("sys_openat(dfd: 4294967196, filename: 140737488 \"{DATA}\", flags: O_RDONLY)")),
        (80, "sys_openat -> 0x3".to_string()),
        (80, "sched_process_fork: comm=python3 pid=80 child_comm=python3 child_pid=81".to_string()),
    ];
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        lines.push(pread(80, x.0, x.1));
        lines.push(pread(81, y.0, y.1));
        for (w, note) in whole.windows.iter().zip(&explained.notes) {
            if note.op == 2 * k {
                window_lines(w, 80, &mut lines);
            }
        }
        for (w, note) in whole.windows.iter().zip(&explained.notes) {
            if note.op == 2 * k + 1 {
                window_lines(w, 81, &mut lines);
            }
        }
        lines.push(returned(80, x.1));
        lines.push(returned(81, y.1));
    }
    let programs = crate::calls::parse_traced(
        &trace(80, &lines),
        &[DATA.to_string()],
        &[64 << 20],
        Some(&RaFiles { major: 259, minor: 0, inos: vec![0x83] }),
    )
    .unwrap();
    (input, whole, programs)
}

const A: [(u64, u64); 3] = [(0, 16384), (16384, 65536), (81920, 262144)];
const B: [(u64, u64); 3] = [(32 << 20, 16384), ((32 << 20) + 16384, 65536), ((32 << 20) + 81920, 262144)];

#[test]
fn every_decision_of_two_threads_reading_one_descriptor_at_once_is_checked() {
    let (input, whole, programs) = overlapping(&A, &B, |_| {});
    let calls = &programs[0].ra.calls;
    assert_eq!(calls.len(), whole.windows.len(), "{calls:?}");
    assert!(calls.iter().any(|c| c.pid == 81 && c.overlapping == vec![80]), "{calls:?}");
    assert!(programs[0].unfollowable.as_deref().is_some_and(|w| w.contains("overlapping")));
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    assert_eq!(checked, Checked { checked: whole.windows.len(), ..Checked::default() }, "{}", checked.line());
}

#[test]
fn a_kernel_that_decides_otherwise_for_the_second_task_parts_at_that_decision_with_both_pids() {
    // The kernel's window for 81's last call is one page larger than the model's.
    let (input, whole, programs) = overlapping(&A, &B, |w| {
        let i = w.iter().rposition(|w| w.index >= 8192).unwrap();
        match w[i].submits.first_mut() {
            Some(Submit::Order { size, .. }) => *size += 1,
            Some(Submit::Unbounded { nr_to_read, .. }) => *nr_to_read += 1,
            None => panic!("a window without a submission: {:?}", w[i]),
        }
    });
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    let parted = checked.parted.as_ref().unwrap_or_else(|| panic!("parts: {}", checked.line()));
    assert_eq!((parted.pid, parted.overlapping.clone()), (81, vec![80]));
    let text = parted.render("t", "cargo test");
    assert!(text.contains("pid 81, while pid 80 had a call on the file in flight"), "{text}");
    assert!(checked.checked > 0);
}

#[test]
fn folios_another_task_added_inside_the_window_set_the_decision_aside() {
    // 81 adds page 2 while 80's first call runs: the kernel's 80 skips it, the model
    // (given the cache before the call) adds it: the trace cannot say which came first.
    let (input, whole, mut programs) = overlapping(&A, &B, |_| {});
    let c = &mut programs[0].ra.calls[0];
    assert_eq!(c.pid, 80);
    c.folios.retain(|f| f.index != 2);
    c.others_added.push(Folio { index: 2, order: 0 });
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    assert_eq!(checked.parted, None);
    assert_eq!(checked.set_aside.get(OTHERS_ADDED), Some(&1), "{}", checked.line());
}

#[test]
fn a_program_whose_folios_are_not_in_the_whole_trace_is_set_aside() {
    let (input, mut whole, programs) = overlapping(&A, &B, |_| {});
    whole.windows.truncate(1);
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    assert_eq!((checked.checked, checked.set_aside.get(NOT_ALIGNED)), (0, Some(&programs[0].ra.calls.len())));
}

#[test]
fn the_program_run_is_found_in_the_whole_trace_in_either_order() {
    let f = |i| (0u32, Folio { index: i, order: 0 });
    let all = [f(9), f(1), f(2), f(3), f(7)];
    assert_eq!(run_of(&all, &[f(1), f(2), f(3)]), Some(1));
    assert_eq!(run_of(&all, &[f(3), f(1), f(2)]), Some(1));
    assert_eq!(run_of(&all, &[f(7)]), Some(4));
    assert_eq!(run_of(&all, &[f(4)]), None);
    assert_eq!(run_of(&all, &[]), Some(5));
}

/// A call of `pid` on descriptor 0 that entered with window (`size`, `async_size`) and
/// whose events ran from `at.0` to `at.1` microseconds.
fn call(pid: u32, size: u64, async_size: u64, at: (u64, u64)) -> RaCall {
    RaCall {
        pid,
        fd: Some(0),
        random: false,
        file: 0,
        trigger: Trigger::Async,
        index: 0,
        req_count: 1,
        ra: radiff_model::RaState { size, async_size, ..Default::default() },
        adds_before: 0,
        removed_before: 0,
        submits: Vec::new(),
        folios: Vec::new(),
        pfns: Vec::new(),
        requests: Vec::new(),
        elsewhere: 0,
        overlapping: Vec::new(),
        others_added: Vec::new(),
        at,
        until: at.1,
        folio_by: None,
    }
}

fn left(start: u64, size: u64, async_size: u64, at: (u64, u64)) -> Left {
    Left { start, size, async_size, at }
}

#[test]
fn ra_start_is_the_last_window_that_left_the_state_the_call_entered_with() {
    // Before any window: file_ra_state_init()'s 0.
    assert_eq!(starts_of(&[], &call(80, 0, 0, (50, 50))), vec![0]);
    // Two windows of the same shape, one after the other: the later one's start.
    let w = [left(0, 4, 2, (10, 12)), left(4, 8, 4, (20, 22)), left(12, 8, 4, (30, 32))];
    assert_eq!(starts_of(&w, &call(80, 8, 4, (40, 41))), vec![12]);
    // A state no window left (another task's window overwrote part of it): the last one's.
    assert_eq!(starts_of(&w, &call(80, 16, 8, (40, 41))), vec![12]);
    // Two tasks' windows of that shape at the same time: either may be the one the state
    // holds, the later listed first.
    let w = [left(0, 4, 2, (10, 12)), left(100, 8, 4, (20, 30)), left(12, 8, 4, (25, 26))];
    assert_eq!(starts_of(&w, &call(80, 8, 4, (40, 41))), vec![12, 100]);
}

#[test]
fn a_call_shares_its_state_with_another_tasks_call_on_the_same_descriptor_in_time_only() {
    let calls = [
        call(80, 0, 0, (10, 20)),
        call(81, 0, 0, (20, 25)),
        call(80, 0, 0, (30, 40)),
        RaCall { fd: Some(1), ..call(81, 0, 0, (30, 40)) },
        call(80, 0, 0, (50, 60)),
    ];
    assert!(shares_state(&calls, 0), "ends the microsecond the other's begins");
    assert!(shares_state(&calls, 1));
    assert!(!shares_state(&calls, 2), "81's call at that time is on another descriptor");
    assert!(!shares_state(&calls, 4), "no other task's call at that time");
    // A call that opened no window, preempted after its tracepoint: over only at its
    // task's next line (a call of another task's on the descriptor meanwhile shares its
    // state); one that opened a window read the state before its window's event.
    let preempted = [RaCall { until: 35, ..call(80, 0, 0, (10, 10)) }, call(81, 0, 0, (30, 31))];
    assert!(shares_state(&preempted, 0) && shares_state(&preempted, 1));
    assert!(!shares_state(&[call(80, 0, 0, (10, 10)), call(81, 0, 0, (30, 31))], 0));
    let order = Submit::Order { index: 0, size: 4, async_size: 2, order: 0 };
    let windowed = [RaCall { until: 35, submits: vec![order], ..call(80, 0, 0, (10, 12)) }, call(81, 0, 0, (30, 31))];
    assert!(!shares_state(&windowed, 0));
}

/// A calls' trace of program 0 (pid `main`) whose lines carry their own times
/// (microseconds after 1 s).
fn trace_at(main: u32, lines: &[(u32, u64, String)]) -> String {
    let mut t = String::from("# tracer: nop\n");
    t.push_str(
        "    radiff-guest-50      (     50) [000] .....     1.000000: tracing_mark_write: radiff program 0 start\n",
    );
    for (pid, micros, body) in lines {
        t.push_str(&format!("  python3-{pid} ({main:>7}) [001] ..... 1.{micros:06}: {body}\n"));
    }
    t.push_str(&format!("    radiff-guest-50      (     50) [000] .....     9.000000: tracing_mark_write: radiff program 0 pid {main} end\n"));
    t
}

fn sync_ra(index: u64) -> String {
    format!("page_cache_sync_ra: dev=259:0 ino=83 index={index} req_count=4 order=0 size=0 async_size=0 ra_pages=32 mmap_miss=0 prev_pos=-1")
}

fn added(index: u64) -> String {
    format!("mm_filemap_add_to_page_cache: dev 259:0 ino 83 pfn=0x1000 ofs={} order=0", index * 4096)
}

/// Program 80 and its thread 81 on one descriptor, `middle` between their first reads'
/// entries and 81's second call.
fn two_tasks(middle: &[(u32, u64, String)]) -> Vec<RaCall> {
    let at = |pid, micros, body: (u32, String)| (pid, micros, body.1);
    let mut lines = vec![
        (80, 1, format!("sys_openat(dfd: 4294967196, filename: 140737488 \"{DATA}\", flags: O_RDONLY)")),
        (80, 2, "sys_openat -> 0x3".to_string()),
        (80, 3, "sched_process_fork: comm=python3 pid=80 child_comm=python3 child_pid=81".to_string()),
        at(80, 4, pread(80, 0, 16384)),
        at(81, 5, pread(81, 1 << 20, 16384)),
    ];
    lines.extend_from_slice(middle);
    lines.push(at(80, 900, returned(80, 16384)));
    lines.push(at(81, 901, returned(81, 16384)));
    let programs = crate::calls::parse_traced(
        &trace_at(80, &lines),
        &[DATA.to_string()],
        &[64 << 20],
        Some(&RaFiles { major: 259, minor: 0, inos: vec![0x83] }),
    )
    .unwrap();
    programs[0].ra.calls.clone()
}

#[test]
fn another_tasks_folio_of_the_same_microsecond_listed_before_a_call_counts_as_added_meanwhile() {
    let calls = two_tasks(&[
        (80, 10, sync_ra(0)),
        (80, 20, added(0)),
        (80, 30, added(1)),
        (81, 30, sync_ra(256)),
        (81, 31, added(256)),
    ]);
    assert_eq!(calls.len(), 2, "{calls:?}");
    let pages = |c: &RaCall| c.others_added.iter().map(|f| f.index).collect::<Vec<_>>();
    assert_eq!(pages(&calls[1]), vec![1], "80's page 1 is tied with 81's call; page 0 came before it");
    assert_eq!(pages(&calls[0]), vec![256], "81's folio came while 80's call was its newest");
    assert_eq!(calls[1].at, (1_000_030, 1_000_031));
    assert_eq!((calls[0].folio_by, calls[1].folio_by), (None, None), "page 256 was not in the cache before 81's call");
}

#[test]
fn another_tasks_folio_after_an_older_call_ended_is_not_that_calls() {
    let calls = two_tasks(&[
        (80, 10, sync_ra(0)),
        (80, 11, added(0)),
        (80, 20, sync_ra(64)),
        (80, 21, added(64)),
        (81, 30, sync_ra(256)),
        (81, 31, added(256)),
    ]);
    let pages = |c: &RaCall| c.others_added.iter().map(|f| f.index).collect::<Vec<_>>();
    assert_eq!(pages(&calls[0]), Vec::<u64>::new(), "80's first call ended at 11, before 81's add");
    assert_eq!(pages(&calls[1]), vec![256], "80's newest call watches until its next");
    assert!(calls.iter().all(|c| c.at.0 <= c.at.1));
}

#[test]
fn tasks_whose_readahead_calls_overlap_raced_and_one_reader_beside_another_call_did_not() {
    let mut ra = crate::calls::ra::RaCalls::default();
    ra.calls = two_tasks(&[(80, 10, sync_ra(0)), (80, 11, added(0)), (81, 30, sync_ra(256)), (81, 31, added(256))]);
    assert!(ra.calls.iter().any(|c| !c.overlapping.is_empty()), "{:?}", ra.calls);
    assert!(ra.raced(), "both tasks read while the other's pread was in flight");
    // One task's calls only (the other's call on the file made no readahead, as
    // threads_one_fd's lseek): the trace is that task's and repeats.
    ra.calls.retain(|c| c.pid == 80);
    assert!(!ra.calls[0].overlapping.is_empty() && !ra.raced());
    // Two readers one after the other (no call in flight of the other's).
    let mut apart = two_tasks(&[(80, 10, sync_ra(0)), (81, 30, sync_ra(256))]);
    apart.iter_mut().for_each(|c| c.overlapping.clear());
    ra.calls = apart;
    assert!(!ra.raced());
}

#[test]
fn a_window_that_skipped_another_tasks_folio_added_while_it_ran_is_checked_with_that_folio_cached() {
    // 81 adds page 2 while 80's first call runs, and 80's call skipped it as the kernel
    // does a folio it finds: its folios and requests are the model's with page 2 cached.
    let (input, whole, mut programs) = overlapping(&A, &B, |_| {});
    let c = &mut programs[0].ra.calls[0];
    let theirs = Folio { index: 2, order: 0 };
    let d = Decision {
        file: c.file,
        trigger: c.trigger,
        index: c.index,
        req_count: c.req_count,
        ra: FileRaState::entered(&c.ra, 0),
        random: c.random,
        cache: vec![theirs],
        pfns: c.pfns.clone(),
    };
    let skipped = radiff_model::decide(&input, &Policy::BASE, &d).windows.remove(0);
    assert!(!skipped.folios.contains(&theirs) && skipped.folios.len() + 1 == c.folios.len(), "{skipped:?}");
    (c.folios, c.requests, c.submits) = (skipped.folios, skipped.requests, skipped.submits);
    c.others_added.push(theirs);
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    assert_eq!(checked, Checked { checked: whole.windows.len(), ..Checked::default() }, "{}", checked.line());
    // The same call with page 2 where the kernel's call added it itself would not have
    // skipped it: without the folio among the others', it parts.
    programs[0].ra.calls[0].others_added.clear();
    assert!(check(&input, &Policy::BASE, &whole, &programs).parted.is_some());
}

#[test]
fn a_window_of_another_size_parts_even_where_another_task_added_folios_inside_it() {
    // Other tasks' folios may change which folios a call adds, not the window it chose:
    // the states with their folios are tried, and none gives a window one page larger.
    let (input, whole, mut programs) = overlapping(&A, &B, |_| {});
    let c = &mut programs[0].ra.calls[0];
    c.others_added.push(Folio { index: 2, order: 0 });
    match c.submits.first_mut() {
        Some(Submit::Order { size, .. }) => *size += 1,
        Some(Submit::Unbounded { nr_to_read, .. }) => *nr_to_read += 1,
        None => panic!("a call without a submission: {c:?}"),
    }
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    let parted = checked.parted.as_ref().unwrap_or_else(|| panic!("parts: {}", checked.line()));
    assert_eq!((parted.pid, parted.call), (80, 0));
}

#[test]
fn an_async_call_names_the_task_that_added_its_folio() {
    // 80's window brings pages 0..4 in as one order-2 folio; 81's async call on page 2
    // (inside it) was made on 80's folio.
    let calls = two_tasks(&[
        (80, 10, sync_ra(0)),
        (80, 11, added(0).replace("order=0", "order=2")),
        (81, 30, "page_cache_async_ra: dev=259:0 ino=83 index=2 req_count=4 order=2 size=4 async_size=2 ra_pages=32 mmap_miss=0 prev_pos=-1".to_string()),
    ]);
    assert_eq!(calls.iter().map(|c| (c.pid, c.folio_by)).collect::<Vec<_>>(), vec![(80, None), (81, Some(80))]);
}

const MAP: u64 = 0x7fff_0000_0000;

/// Program 80 maps the file (descriptor 3) and faults at page 0 (a read-around of
/// `around` pages, async mark `around / 4` from its end); its thread 81 (same thread
/// group, so the same mapping) faults at the marked page: the async call the model makes from that state (`tamper` changes it
/// first). The calls' trace and the decisions' input.
fn faults_on_one_mapping(around: u64, tamper: impl Fn(&mut Window)) -> (Input, Vec<ProgramCalls>) {
    let input = Input::xfs_on_nvme(64 << 20, Vec::new());
    let async_size = around / 4;
    let mark = around - async_size;
    let entered = radiff_model::RaState {
        start: 0,
        size: around,
        async_size,
        order: 0,
        ra_pages: 32,
        mmap_miss: 0,
        prev_pos: -1,
    };
    let d = Decision {
        file: 0,
        trigger: Trigger::Async,
        index: mark,
        req_count: 32,
        ra: FileRaState::entered(&entered, 0),
        random: false,
        cache: (0..around).map(|index| Folio { index, order: 0 }).collect(),
        pfns: vec![0x1000; 64],
    };
    let mut window = radiff_model::decide(&input, &Policy::BASE, &d).windows.remove(0);
    window.ra = entered;
    tamper(&mut window);
    let at = |pid: u32, body: String| (pid, body);
    let mut lines = vec![
        at(80, format!("sys_openat(dfd: 4294967196, filename: 140737488 \"{DATA}\", flags: O_RDONLY)")),
        at(80, "sys_openat -> 0x3".to_string()),
        at(80, "sys_mmap(addr: 0, len: 0x4000000, prot: 1, flags: 1, fd: 3, off: 0)".to_string()),
        at(80, format!("sys_mmap -> {MAP:#x}")),
        at(80, "sched_process_fork: comm=python3 pid=80 child_comm=python3 child_pid=81".to_string()),
        at(80, format!("page_fault_user: address={MAP:#x} ip=0x4000 error_code=0x4")),
        at(80, format!("page_cache_ra_order: dev=259:0 ino=83 index=0 order=0 size={around} async_size={async_size} ra_pages=32")),
    ];
    lines.extend((0..around).map(|i| at(80, added(i))));
    lines.push(at(81, format!("page_fault_user: address={:#x} ip=0x4000 error_code=0x4", MAP + mark * 4096)));
    window_lines(&window, 81, &mut lines);
    let programs = crate::calls::parse_traced(
        &trace(80, &lines),
        &[DATA.to_string()],
        &[64 << 20],
        Some(&RaFiles { major: 259, minor: 0, inos: vec![0x83] }),
    )
    .unwrap();
    (input, programs)
}

#[test]
fn a_faults_async_call_is_checked_on_the_mappings_open_file_after_its_read_around() {
    let (input, programs) = faults_on_one_mapping(32, |_| {});
    let calls = &programs[0].ra.calls;
    let seen: Vec<(u32, Option<u32>, Trigger)> = calls.iter().map(|c| (c.pid, c.fd, c.trigger)).collect();
    let fd = Some(radiff_model::pattern::fd_of(0, 0));
    assert_eq!(seen, vec![(80, fd, Trigger::Fault), (81, fd, Trigger::Async)], "{calls:?}");
    assert_eq!(calls[0].folios.len(), 32);
    let whole = Trace {
        windows: vec![Window {
            file: 0,
            trigger: Trigger::Fault,
            index: 0,
            req_count: 1,
            ra: radiff_model::RaState::default(),
            submits: Vec::new(),
            folios: programs[0].ra.adds.iter().map(|a| a.1).collect(),
            requests: Vec::new(),
        }],
    };
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    assert_eq!((checked.checked, checked.set_aside.get(AROUND)), (1, Some(&1)), "{}", checked.line());
    // A kernel whose async window is one page larger parts there, a thread's pid named.
    let (input, programs) = faults_on_one_mapping(32, |w| match w.submits.first_mut() {
        Some(Submit::Order { size, .. }) => *size += 1,
        other => panic!("{other:?}"),
    });
    let checked = check(&input, &Policy::BASE, &whole, &programs);
    assert_eq!(checked.parted.as_ref().map(|p| (p.pid, p.call)), Some((81, 1)), "{}", checked.line());
}

fn removed(index: u64) -> String {
    format!("mm_filemap_delete_from_page_cache: dev 259:0 ino 83 pfn=0x1000 ofs={} order=0", index * 4096)
}

#[test]
fn folios_another_task_dropped_are_not_in_the_cache_a_later_call_meets() {
    // 80 brings pages 0 and 1 in; 81 drops both (POSIX_FADV_DONTNEED, as fio's
    // invalidate does at a job's start); 80's next call at page 0 meets neither, and the
    // page 1 it adds again is cached for the call after.
    let calls_trace = two_tasks(&[
        (80, 10, sync_ra(0)),
        (80, 11, added(0)),
        (80, 12, added(1)),
        (81, 20, removed(0)),
        (81, 21, removed(1)),
        (80, 30, sync_ra(0)),
        (80, 31, added(1)),
        (80, 40, sync_ra(2)),
    ]);
    let mut ra = crate::calls::ra::RaCalls::default();
    ra.adds = [0, 1, 1].iter().map(|&index| (0, Folio { index, order: 0 })).collect();
    ra.removed = vec![(2, 0, Folio { index: 0, order: 0 }), (2, 0, Folio { index: 1, order: 0 })];
    assert_eq!(
        calls_trace.iter().map(|c| (c.adds_before, c.removed_before)).collect::<Vec<_>>(),
        vec![(0, 0), (2, 2), (3, 2)],
        "the calls' places among the adds and removals"
    );
    let before = [(0u32, Folio { index: 9, order: 0 })];
    let pages = |c: &RaCall| cache_before(&before, &ra, c).iter().map(|f| f.index).collect::<Vec<_>>();
    assert_eq!(pages(&calls_trace[0]), vec![9]);
    assert_eq!(pages(&calls_trace[1]), vec![9], "pages 0 and 1 were dropped");
    assert_eq!(pages(&calls_trace[2]), vec![9, 1]);
}
