//! A program's mappings: mmap, madvise, munmap and the faults on them as the model's ops,
//! and the faults that met a read in flight.

use super::*;
use radiff_model::MadvAdvice;

const DATA: &str = "/tmp/radiff-mnt/data";
const ADDR: u64 = 0x7fffdde00000;

/// A calls trace of program 0 run as pid 76: `lines` of `(CPU, TASK-PID, BODY)`, one
/// microsecond apart unless a body starts with `@TIME ` (microseconds since 1 s).
fn trace(lines: &[(u32, &str, String)]) -> String {
    let mut t = String::from("# tracer: nop\n radiff-guest-50 (     50) [000] .....     1.000000: tracing_mark_write: radiff program 0 start\n");
    for (i, (cpu, task, body)) in lines.iter().enumerate() {
        let (at, body) = match body.strip_prefix('@').and_then(|b| b.split_once(' ')) {
            Some((at, body)) => (at.parse::<u64>().unwrap(), body),
            None => (i as u64 + 1, body.as_str()),
        };
        let tgid = task.rsplit('-').next().unwrap().parse::<u32>().map_or("-------".to_string(), |p| p.to_string());
        t.push_str(&format!(" {task} ({tgid:>7}) [{cpu:03}] d.... 1.{at:06}: {body}\n"));
    }
    t.push_str(
        " radiff-guest-50 (     50) [000] .....     9.000000: tracing_mark_write: radiff program 0 pid 76 end\n",
    );
    t
}

fn fio(body: &str) -> (u32, &'static str, String) {
    (1, "fio-76", body.to_string())
}

/// fio's mmap engine: open, POSIX_FADV_SEQUENTIAL, a shared mapping of the file, madvise
/// MADV_SEQUENTIAL, loads that fault, and the job's end.
fn mapped() -> Vec<(u32, &'static str, String)> {
    vec![
        fio(&format!("sys_openat(dfd: 0xffffff9c, filename: 0x5555 \"{DATA}\", flags: 0, mode: 0)")),
        fio("sys_openat -> 0x7"),
        fio("sys_fadvise64(fd: 7, offset: 0, len: 0x4000000, advice: 2)"),
        fio("sys_fadvise64 -> 0x0"),
        fio("sys_mmap(addr: 0, len: 0x4000000, prot: 1, flags: 1, fd: 7, off: 0)"),
        fio(&format!("sys_mmap -> {ADDR:#x}")),
        fio(&format!("sys_madvise(start: {ADDR:#x}, len_in: 0x4000000, behavior: 2)")),
        fio("sys_madvise -> 0x0"),
    ]
}

fn follow(lines: &[(u32, &str, String)]) -> ProgramCalls {
    parse(&trace(lines), &[DATA.to_string()], &[64 << 20]).unwrap().remove(0)
}

fn fault(address: u64, error_code: u32) -> (u32, &'static str, String) {
    fio(&format!("page_fault_user: address={address:#x} ip=0x7ffff727ea89 error_code={error_code:#x}"))
}

fn block(cpu: u32, complete: bool, sector: u64) -> (u32, &'static str, String) {
    let body = if complete {
        format!("block_rq_complete: 259,0 RA () {sector} + 512 be,0,4 [0]")
    } else {
        format!("block_rq_issue: 259,0 RA 262144 () {sector} + 512 be,0,4 [fio]")
    };
    (cpu, if complete { "<idle>-0" } else { "fio-76" }, body)
}

#[test]
fn a_programs_mapping_its_advice_and_its_faults_are_the_models_ops() {
    let mut l = mapped();
    l.push(fault(ADDR + 0x8c, 4));
    l.push(block(1, false, 192));
    l.push(block(0, true, 192));
    // A fault elsewhere (the program's heap) is no touch.
    l.push(fault(0x5555557fe040, 7));
    l.push(fault(ADDR + 0x10000, 4));
    l.push(fio(&format!("sys_madvise(start: {:#x}, len_in: 0x1000, behavior: 1)", ADDR + 0x20000)));
    l.push(fio("sys_madvise -> 0x0"));
    let p = follow(&l);
    assert_eq!(p.unfollowable, None);
    assert_eq!(p.raced, None, "every request completed before the next fault");
    assert_eq!(p.map_addrs, vec![ADDR]);
    assert_eq!(
        p.ops,
        vec![
            Op::Fadvise { fd: 0, offset: 0, len: 64 << 20, advice: Advice::Sequential },
            Op::Mmap { map: 0, fd: 0, offset: 0, len: 64 << 20, shared: true, exec: false, populate: false },
            Op::Madvise { map: 0, offset: 0, len: 64 << 20, advice: MadvAdvice::Sequential },
            Op::Touch { map: 0, offset: 0 },
            Op::Touch { map: 0, offset: 0x10000 },
            Op::Madvise { map: 0, offset: 0x20000, len: 4096, advice: MadvAdvice::Random },
            // The program's end unmaps what it left mapped.
            Op::Munmap { map: 0 },
        ]
    );
    assert_eq!(p.calls.get("page fault"), Some(&2));
    assert_eq!(p.calls.get("madvise"), Some(&2));
}

#[test]
fn the_reads_a_fault_found_in_flight_go_with_its_touch_and_a_completion_at_its_time_on_another_cpu_too() {
    let mut l = mapped();
    l.push(fault(ADDR, 4));
    l.push(block(1, false, 704));
    l.push(fault(ADDR + 0x10000, 4));
    l.push(block(0, true, 704));
    l.push(fault(ADDR + 0x20000, 4));
    l.push(block(1, false, 1216));
    l.push(fault(ADDR + 0x30000, 4));
    l.push(fio("sys_getpid()"));
    l.push(block(0, true, 1216));
    let p = follow(&l);
    // Ops: fadvise, mmap, madvise, touch, touch (4), touch, touch (6), munmap.
    assert_eq!(p.ops[4], Op::Touch { map: 0, offset: 0x10000 });
    let after_its_next_line =
        radiff_model::LoadInFlight { op: 6, requests: vec![(1216, 512)], completed_after: vec![] };
    assert_eq!(p.loads_in_flight[1], after_its_next_line);
    // Its read completed before fio's next line: perhaps while the fault ran.
    let load = radiff_model::LoadInFlight { op: 4, requests: vec![(704, 512)], completed_after: vec![(704, 512)] };
    assert_eq!(p.loads_in_flight[0], load);
    assert_eq!((p.unfollowable.as_deref(), p.raced.as_deref()), (None, None), "the model decides, not the calls");
    assert!(p.summary().contains("; 2 of its 4 faults on the mappings began with reads in flight"), "{}", p.summary());

    let at_500 = |completion_cpu: u32| {
        let mut l = mapped();
        l.push(block(1, false, 704));
        l.push((completion_cpu, "<idle>-0", "@500 block_rq_complete: 259,0 RA () 704 + 512 be,0,4 [0]".to_string()));
        l.push(fio(&format!("@500 page_fault_user: address={:#x} ip=0x1 error_code=0x4", ADDR + 0x10000)));
        follow(&l).loads_in_flight
    };
    let tie = radiff_model::LoadInFlight { op: 3, requests: vec![(704, 512)], completed_after: vec![(704, 512)] };
    assert_eq!(at_500(0), vec![tie], "the clock cannot order them");
    assert_eq!(at_500(1), vec![], "on the same CPU the buffer orders the two");

    // Spliced after a scenario's own ops, the index moves with the touch.
    let spliced = splice_programs(&[Op::Read { fd: 0, offset: 0, len: 1 }, Op::Program { program: 0 }], &[], &[p]);
    assert_eq!(spliced.ops[5], Op::Touch { map: 0, offset: 0x10000 });
    assert_eq!(spliced.loads_in_flight[0], radiff_model::LoadInFlight { op: 5, ..load });
}

#[test]
fn a_populating_madvise_that_began_with_a_read_in_flight_is_said() {
    let mut l = mapped();
    l.push(block(1, false, 704));
    l.push(fio(&format!("sys_madvise(start: {ADDR:#x}, len_in: 0x4000000, behavior: 22)")));
    l.push(fio("sys_madvise -> 0x0"));
    let raced = follow(&l).raced.expect("in flight");
    assert!(raced.starts_with("its reads raced: madvise PopulateRead by pid 76 began with 1 block request(s) in flight (sector 704 + 512)"), "{raced}");
}

#[test]
fn what_the_model_cannot_follow_on_a_mapping_is_refused_with_its_first_call() {
    let refused = |extra: Vec<(u32, &'static str, String)>| {
        let mut l = mapped();
        l.extend(extra);
        follow(&l).unfollowable.expect("refused")
    };
    let why = refused(vec![fault(ADDR + 0x3000, 6)]);
    assert!(why.starts_with("a page fault by pid 76 at 0x7fffdde03000 with error code 0x6 (a write"), "{why}");
    let why = refused(vec![
        fio("sched_process_fork: comm=fio pid=76 child_comm=fio child_pid=90"),
        (0, "fio-90", "sys_close(fd: 9)".to_string()),
    ]);
    assert!(why.starts_with("a fork by pid 76 with a mapping of the file: the child's copy (pid 90)"), "{why}");
    let why =
        refused(vec![fio(&format!("sys_munmap(addr: {:#x}, len: 0x1000)", ADDR + 0x1000)), fio("sys_munmap -> 0x0")]);
    assert!(why.starts_with("munmap by pid 76 of 0x7fffdde01000+0x1000, across or part of a mapping"), "{why}");
    let why = refused(vec![
        fio(&format!("sys_madvise(start: {ADDR:#x}, len_in: 0x1000, behavior: 4)")),
        fio("sys_madvise -> 0x0"),
    ]);
    assert!(why.starts_with("madvise by pid 76 with advice 4 on a mapping of the file"), "{why}");
    let why = refused(vec![
        fio(&format!("sys_mmap(addr: {ADDR:#x}, len: 0x1000, prot: 3, flags: 0x32, fd: 0xffffffffffffffff, off: 0)")),
        fio(&format!("sys_mmap -> {ADDR:#x}")),
    ]);
    assert!(why.starts_with("mmap by pid 76 of 0x7fffdde00000+0x1000, across or part of a mapping"), "{why}");
    let mut l = mapped();
    l[4] = fio("sys_mmap(addr: 0, len: 0x4000000, prot: 3, flags: 1, fd: 7, off: 0)");
    let why = follow(&l).unfollowable.expect("a writable mapping");
    assert!(why.starts_with("mmap by pid 76 with PROT_WRITE"), "{why}");
}

#[test]
fn a_whole_munmap_ends_the_mapping_and_a_programs_mappings_come_after_the_scenarios_own() {
    let mut l = mapped();
    l.push(fio(&format!("sys_munmap(addr: {ADDR:#x}, len: 0x4000000)")));
    l.push(fio("sys_munmap -> 0x0"));
    l.push(fault(ADDR, 4));
    let p = follow(&l);
    assert_eq!(p.unfollowable, None);
    assert_eq!(p.ops.last(), Some(&Op::Munmap { map: 0 }), "no touch after the munmap, no second munmap at the end");
    assert_eq!(p.ops.iter().filter(|o| matches!(o, Op::Munmap { .. })).count(), 1);

    // A process's end unmaps its mappings where it happens; a thread's end does not.
    let mut l = mapped();
    l.push(fio("sched_process_exit: comm=fio pid=76 prio=120 group_dead=false"));
    l.push(fault(ADDR, 4));
    l.push(fio("sched_process_exit: comm=fio pid=76 prio=120 group_dead=true"));
    l.push(fio("sys_fadvise64(fd: 7, offset: 0, len: 0, advice: 4)"));
    l.push(fio("sys_fadvise64 -> 0x0"));
    let ended = follow(&l);
    let n = ended.ops.len();
    assert_eq!(ended.ops[n - 3..n - 1], [Op::Touch { map: 0, offset: 0 }, Op::Munmap { map: 0 }]);
    assert!(matches!(ended.ops[n - 1], Op::Fadvise { advice: Advice::Dontneed, .. }), "{:?}", ended.ops);

    let own = Op::Mmap { map: 0, fd: 0, offset: 0, len: 4096, shared: true, exec: false, populate: false };
    let spliced = splice_programs(&[own, Op::Touch { map: 0, offset: 0 }, Op::Program { program: 0 }], &[0x1000], &[p]);
    assert_eq!(spliced.mmap_addrs, vec![0x1000, ADDR], "the scenario's own mapping's, then the program's");
    assert!(spliced.ops.contains(&Op::Mmap {
        map: 1,
        fd: 1,
        offset: 0,
        len: 64 << 20,
        shared: true,
        exec: false,
        populate: false
    }));
    assert_eq!(spliced.ops.last(), Some(&Op::Munmap { map: 1 }));
}

/// Each event the calls' reader follows is one the guest enables (a line of an event not
/// enabled never comes).
#[test]
fn the_guest_records_every_event_the_reader_follows() {
    let samples = [
        ("sched:sched_process_exit", "sched_process_exit: comm=fio pid=76 prio=120 group_dead=true"),
        ("sched:sched_process_exec", "sched_process_exec: filename=/usr/bin/fio pid=76 old_pid=76"),
        ("exceptions:page_fault_user", "page_fault_user: address=0x1000 ip=0x2 error_code=0x4"),
        ("exceptions:page_fault_kernel", "page_fault_kernel: address=0x1000 ip=copy_to_user error_code=0x0"),
        ("block:block_rq_issue", "block_rq_issue: 259,0 RA 262144 () 192 + 512 be,0,4 [fio]"),
        ("block:block_rq_complete", "block_rq_complete: 259,0 RA () 192 + 512 be,0,4 [0]"),
    ];
    for (event, body) in samples {
        assert!(FAULT_EVENTS.contains(&event), "{event} is not enabled in the guest");
        let l = line::parse(&format!(" fio-76 (     76) [001] d.... 1.000001: {body}")).unwrap();
        assert_ne!(l.body, line::Body::Other, "{body}");
    }
    assert_eq!(FAULT_EVENTS.len(), samples.len(), "an event enabled that nothing reads");
}

#[test]
fn a_thread_made_with_a_mapping_shares_it_and_a_process_forked_with_one_does_not() {
    // The child's first line gives its thread group: 76's own (a thread, the same
    // address space) or its own pid (a process, a copy).
    let child_line = |tgid: u32| {
        let mut t = trace(&mapped());
        let end = t.rfind(" radiff-guest-50").unwrap();
        t.insert_str(end, &format!(" fio-76 (     76) [001] d.... 1.000100: sched_process_fork: comm=fio pid=76 child_comm=fio child_pid=91\n fio-91 ({tgid:>7}) [001] d.... 1.000101: sys_close(fd: 9)\n"));
        parse(&t, &[DATA.to_string()], &[64 << 20]).unwrap().remove(0)
    };
    let thread = child_line(76);
    assert_eq!(thread.unfollowable, None);
    let why = child_line(91).unfollowable.expect("a process forked with the mapping");
    assert!(why.starts_with("a fork by pid 76 with a mapping of the file: the child's copy (pid 91)"), "{why}");
}
