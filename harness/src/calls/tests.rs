use super::*;

const DATA: &str = "/tmp/radiff-mnt/data";

fn paths() -> Vec<String> {
    vec![DATA.to_string()]
}

/// A trace of the calls instance: `lines` of `TASK-PID TGID BODY`, between the markers of
/// program 0 run as `pid`.
fn trace(pid: u32, lines: &[(&str, u32, u32, &str)]) -> String {
    let mut t = String::from("# tracer: nop\n");
    t.push_str(
        "    radiff-guest-50      (     50) [000] .....     1.000000: tracing_mark_write: radiff program 0 start\n",
    );
    for (i, (task, p, tgid, body)) in lines.iter().enumerate() {
        t.push_str(&format!("  {task}-{p} ({tgid:>7}) [001] ..... 1.{:06}: {body}\n", i + 1));
    }
    t.push_str(&format!(
        "    radiff-guest-50      (     50) [000] .....     9.000000: tracing_mark_write: radiff program 0 pid {pid} end\n"
    ));
    t
}

fn open_data(task: &str, pid: u32, fd: u32) -> Vec<(String, u32, u32, String)> {
    vec![
        (
            task.into(),
            pid,
            pid,
            format!("sys_openat(dfd: 4294967196, filename: 140737488 \"{DATA}\", flags: O_RDONLY)"),
        ),
        (task.into(), pid, pid, format!("sys_openat -> 0x{fd:x}")),
    ]
}

fn text(pid: u32, lines: &[(String, u32, u32, String)]) -> String {
    let refs: Vec<(&str, u32, u32, &str)> = lines.iter().map(|(a, b, c, d)| (a.as_str(), *b, *c, d.as_str())).collect();
    trace(pid, &refs)
}

fn line(task: &str, pid: u32, body: &str) -> (String, u32, u32, String) {
    (task.into(), pid, pid, body.into())
}

#[test]
fn an_open_whose_path_the_kernel_does_not_print_makes_the_program_unfollowable() {
    // Debian 6.12's syscall events: the path's address, numeric flags.
    let mut l = vec![
        line("dd", 70, "sys_openat(dfd: ffffff9c, filename: 7fffffffd908, flags: 0, mode: 0)"),
        line("dd", 70, "sys_openat -> 0x3"),
    ];
    l.push(line("dd", 70, "sys_read(fd: 3, buf: 7f0000, count: 80000)"));
    l.push(line("dd", 70, "sys_read -> 0x80000"));
    let got = parse(&text(70, &l), &paths(), &[512 << 20]).unwrap();
    let why = got[0].unfollowable.as_deref().expect("refused");
    assert!(why.starts_with("openat by pid 70: this kernel's syscall events print the path's address"), "{why}");
    assert!(why.contains("`filename: 7fffffffd908`"), "{why}");
    assert!(got[0].ops.is_empty());
}

#[test]
fn preads_become_reads_at_their_offsets_and_reads_follow_the_file_position() {
    let mut l = open_data("fio", 70, 3);
    l.push(line("fio", 70, "sys_fadvise64(fd: 3, offset: 0, len: 0, advice: 4)"));
    l.push(line("fio", 70, "sys_fadvise64 -> 0x0"));
    l.push(line("fio", 70, "sys_pread64(fd: 3, buf: 0x7f0000, count: 0x1000, pos: 0)"));
    l.push(line("fio", 70, "sys_pread64 -> 0x1000"));
    l.push(line("fio", 70, "sys_read(fd: 3, buf: 0x7f0000, count: 0x80000)"));
    l.push(line("fio", 70, "sys_read -> 0x80000"));
    l.push(line("fio", 70, "sys_lseek(fd: 3, offset: 0x100000, whence: 0)"));
    l.push(line("fio", 70, "sys_lseek -> 0x100000"));
    l.push(line("fio", 70, "sys_read(fd: 3, buf: 0x7f0000, count: 0x80000)"));
    l.push(line("fio", 70, "sys_read -> 0x80000"));
    l.push(line("fio", 70, "sys_read(fd: 7, buf: 0x7f0000, count: 0x80000)"));
    l.push(line("fio", 70, "sys_read -> 0x80000"));
    l.push(line("fio", 70, "sys_close(fd: 3)"));
    l.push(line("fio", 70, "sys_close -> 0x0"));
    let got = parse(&text(70, &l), &paths(), &[512 << 20]).unwrap();
    assert_eq!(got.len(), 1);
    let p = &got[0];
    assert_eq!(p.unfollowable, None);
    assert_eq!(
        p.ops,
        vec![
            Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Dontneed },
            Op::Read { fd: 0, offset: 0, len: 4096 },
            Op::Read { fd: 0, offset: 0, len: 512 << 10 },
            Op::Read { fd: 0, offset: 1 << 20, len: 512 << 10 },
        ],
        "pread64 leaves the file position alone; the read on fd 7 is not on the scenario's file"
    );
    assert_eq!(p.calls.get("read"), Some(&2));
    assert_eq!(p.calls.get("openat"), Some(&1));
    assert_eq!(p.bytes_asked, 4096 + (1 << 20));
    assert!(p.summary().contains("(1 close, 1 fadvise64, 1 lseek, 1 openat, 1 pread64, 2 read)"), "{}", p.summary());
}

#[test]
fn a_forked_child_shares_its_parents_open_file_and_a_dup_too() {
    let mut l = open_data("fio", 70, 3);
    l.push(line("fio", 70, "sched_process_fork: comm=fio pid=70 child_comm=fio child_pid=71"));
    l.push(("fio".into(), 71, 71, "sys_dup(fildes: 3)".into()));
    l.push(("fio".into(), 71, 71, "sys_dup -> 0x5".into()));
    l.push(("fio".into(), 71, 71, "sys_pread64(fd: 5, buf: 0x1, count: 0x1000, pos: 0x2000)".into()));
    l.push(("fio".into(), 71, 71, "sys_pread64 -> 0x1000".into()));
    // Another task outside the program reads the file: not the program's.
    l.push(("cat".into(), 99, 99, "sys_pread64(fd: 3, buf: 0x1, count: 0x1000, pos: 0)".into()));
    let got = parse(&text(70, &l), &paths(), &[1 << 20]).unwrap();
    assert_eq!(got[0].ops, vec![Op::Read { fd: 0, offset: 8192, len: 4096 }]);
}

#[test]
fn two_threads_overlapping_on_the_file_are_named_and_the_ops_stop() {
    let mut l = open_data("t", 80, 3);
    l.push(("t".into(), 80, 80, "sys_pread64(fd: 3, buf: 0x1, count: 0x1000, pos: 0)".into()));
    l.push(("t2".into(), 81, 80, "sys_pread64(fd: 3, buf: 0x1, count: 0x1000, pos: 0x1000)".into()));
    l.push(("t".into(), 80, 80, "sys_pread64 -> 0x1000".into()));
    l.push(("t2".into(), 81, 80, "sys_pread64 -> 0x1000".into()));
    l.insert(2, line("t", 80, "sched_process_fork: comm=t pid=80 child_comm=t2 child_pid=81"));
    let got = parse(&text(80, &l), &paths(), &[1 << 20]).unwrap();
    let why = got[0].unfollowable.as_deref().unwrap();
    assert!(why.contains("pread64 by pid 81 while pid 80's pread64"), "{why}");
    assert!(got[0].ops.is_empty(), "{:?}", got[0].ops);
    assert!(got[0].summary().contains("the model stops replaying its calls in order at: pread64 by pid 81"));
}

#[test]
fn writes_and_async_io_are_refused_with_their_first_call() {
    let mut l = open_data("dd", 90, 3);
    l.push(line("dd", 90, "sys_write(fd: 3, buf: 0x1, count: 0x1000)"));
    l.push(line("dd", 90, "sys_write -> 0x1000"));
    let got = parse(&text(90, &l), &paths(), &[1 << 20]).unwrap();
    assert!(got[0].unfollowable.as_deref().unwrap().starts_with("write by pid 90: a write"));
    let mut l = open_data("fio", 91, 3);
    l.push(line("fio", 91, "sys_io_uring_setup(entries: 0x20, p: 0x7ff)"));
    let got = parse(&text(91, &l), &paths(), &[1 << 20]).unwrap();
    assert!(got[0].unfollowable.as_deref().unwrap().contains("io_uring_setup by pid 91"));
}

#[test]
fn an_o_direct_open_reads_direct_and_preadv2_flags_are_kept() {
    let mut l = vec![
        line("x", 5, &format!("sys_openat(dfd: 4294967196, filename: 1 \"{DATA}\", flags: O_RDONLY|O_DIRECT)")),
        line("x", 5, "sys_openat -> 0x4"),
    ];
    l.push(line("x", 5, "sys_pread64(fd: 4, buf: 0x1, count: 0x1000, pos: 0)"));
    l.push(line("x", 5, "sys_pread64 -> 0x1000"));
    l.extend(open_data("x", 5, 6));
    l.push(line("x", 5, "sys_preadv2(fd: 6, vec: 0x1, vlen: 1, pos_l: 0x2000, pos_h: 0, flags: 0x8)"));
    l.push(line("x", 5, "sys_preadv2 -> 0x1000"));
    let got = parse(&text(5, &l), &paths(), &[1 << 20]).unwrap();
    let direct = ReadHow { direct: true, ..ReadHow::default() };
    let nowait = ReadHow { nowait: true, ..ReadHow::default() };
    assert_eq!(
        got[0].ops,
        vec![
            Op::ReadWith { fd: 0, offset: 0, len: 4096, how: direct },
            Op::ReadWith { fd: 1, offset: 8192, len: 4096, how: nowait },
        ]
    );
    // What the NOWAIT read returned is kept for the model, by its op.
    assert_eq!(got[0].nowait_returned, vec![radiff_model::NowaitReturned { op: 1, bytes: 4096 }]);
}

/// Where a program's calls are spliced in, the NOWAIT reads' returns move with their ops:
/// the program's own from its ops, the scenario's past the program's calls before them.
#[test]
fn nowait_returns_follow_their_reads_through_the_splice() {
    let nowait = ReadHow { nowait: true, ..ReadHow::default() };
    let read = |len| Op::ReadWith { fd: 0, offset: 0, len, how: nowait };
    let calls = ProgramCalls {
        program: 0,
        ops: vec![Op::Read { fd: 0, offset: 0, len: 4096 }, read(8192)],
        nowait_returned: vec![radiff_model::NowaitReturned { op: 1, bytes: 8192 }],
        ..ProgramCalls::default()
    };
    let ops = vec![read(4096), Op::Program { program: 0 }, read(4096)];
    let spliced = splice_programs(&ops, &[], &[calls]);
    assert_eq!(spliced.moved, vec![0, 1, 3]);
    assert_eq!(spliced.ops[2], Op::ReadWith { fd: 1, offset: 0, len: 8192, how: nowait });
    assert_eq!(spliced.nowait_returned, vec![radiff_model::NowaitReturned { op: 2, bytes: 8192 }]);
}

#[test]
fn a_programs_descriptors_come_after_the_scenarios_own() {
    let calls = ProgramCalls {
        program: 0,
        ops: vec![Op::Read { fd: 0, offset: 0, len: 4096 }, Op::Read { fd: 1, offset: 0, len: 4096 }],
        ..ProgramCalls::default()
    };
    let ops = vec![Op::Read { fd: 0, offset: 0, len: 1 }, Op::Program { program: 0 }, Op::Program { program: 1 }];
    assert_eq!(
        splice_programs(&ops, &[], &[calls]).ops,
        vec![
            Op::Read { fd: 0, offset: 0, len: 1 },
            Op::Read { fd: 1, offset: 0, len: 4096 },
            Op::Read { fd: 2, offset: 0, len: 4096 },
            Op::Program { program: 1 },
        ]
    );
}

#[test]
fn a_line_with_spaces_in_its_task_name_and_an_unknown_tgid_parses() {
    let l = line::parse("  kworker/u4:1 x-12 (-------) [000] d..1.  5.5: sys_close -> 0xfffffffffffffff7").unwrap();
    assert_eq!((l.pid, l.tgid), (12, 12));
    assert_eq!(l.body, line::Body::Exit { name: "close".into(), ret: -9 });
    assert!(line::parse("garbage").is_err());
    // A thread's line carries its group's tgid, not its own pid.
    let l = line::parse("         python3-81      (     80) [001] .....     1.000002: sys_close -> 0x0").unwrap();
    assert_eq!((l.pid, l.tgid), (81, 80));
}

/// cp to another file system: its copy_file_range fails with EXDEV before reading (counted,
/// no op), and the read loop after it is replayed; one that copied is refused, and so is a
/// copy into the scenario's file.
#[test]
fn a_copy_file_range_refused_with_exdev_reads_nothing_and_one_that_copied_is_refused() {
    let cp = |ret: &str| {
        let mut l = open_data("cp", 80, 3);
        l.push(line("cp", 80, "sys_fadvise64(fd: 3, offset: 0, len: 0, advice: 2)"));
        l.push(line("cp", 80, "sys_fadvise64 -> 0x0"));
        l.push(line(
            "cp",
            80,
            "sys_copy_file_range(fd_in: 3, off_in: 0, fd_out: 4, off_out: 0, len: 0x7fffffffc0000000, flags: 0)",
        ));
        l.push(line("cp", 80, &format!("sys_copy_file_range -> {ret}")));
        l.push(line("cp", 80, "sys_read(fd: 3, buf: 0x7f0000, count: 0x20000)"));
        l.push(line("cp", 80, "sys_read -> 0x20000"));
        parse(&text(80, &l), &paths(), &[1 << 20]).unwrap().remove(0)
    };
    let exdev = cp("0xffffffffffffffee");
    assert_eq!(exdev.unfollowable, None);
    assert_eq!(
        exdev.ops,
        vec![
            Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Sequential },
            Op::Read { fd: 0, offset: 0, len: 128 << 10 },
        ]
    );
    assert_eq!(exdev.calls.get("copy_file_range"), Some(&1));
    let copied = cp("0x100000");
    let why = copied.unfollowable.expect("a copy that read the file is refused");
    assert!(why.starts_with("copy_file_range by pid 80 returned 1048576: a copy out of the file"), "{why}");
    assert_eq!(copied.ops.len(), 1, "the ops end before the copy: {:?}", copied.ops);

    let mut l = open_data("cp", 80, 3);
    l.push(line("cp", 80, "sys_copy_file_range(fd_in: 5, off_in: 0, fd_out: 3, off_out: 0, len: 0x1000, flags: 0)"));
    l.push(line("cp", 80, "sys_copy_file_range -> 0x1000"));
    let into = parse(&text(80, &l), &paths(), &[1 << 20]).unwrap().remove(0);
    assert_eq!(into.unfollowable.as_deref(), Some("copy_file_range by pid 80 into the file: a write to the file"));
}
