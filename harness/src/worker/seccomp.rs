//! The hybrid worker's seccomp filters: the system calls a tree's C may reach, as classic
//! BPF programs the kernel runs on every system call of the worker (docs/trust.md).
//!
//! Pure: [`Filter::program`] assembles the instructions; only [`Filter::install`] asks the
//! kernel. A call no rule allows traps (SIGSYS, with the call's number in the signal's
//! information): the worker reports it and is stopped, and the call is never made.

/// A test on one argument of a system call (its low 32 bits; the high 32 must be 0 for
/// [`Arg::Eq`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// Argument `i` is one of these values (a file descriptor).
    OneOf(usize, &'static [u32]),
    /// Argument `i` has none of these bits (`PROT_EXEC`, `O_WRONLY | O_RDWR | O_CREAT`).
    Clear(usize, u32),
    /// Argument `i` has all of these bits (`MAP_ANONYMOUS`).
    Set(usize, u32),
    /// Argument `i` equals this value, all 64 bits (a thread group's id).
    Eq(usize, u32),
}

/// A system call allowed when every test on its arguments holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub nr: i64,
    pub args: Vec<Arg>,
}

impl Rule {
    pub fn any(nr: i64) -> Rule {
        Rule { nr, args: Vec::new() }
    }

    pub fn with(nr: i64, args: &[Arg]) -> Rule {
        Rule { nr, args: args.to_vec() }
    }
}

/// One classic BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
const JA: u16 = 0x05; // BPF_JMP | BPF_JA

pub const RET_ALLOW: u32 = 0x7fff_0000;
pub const RET_TRAP: u32 = 0x0003_0000;
pub const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// `AUDIT_ARCH_X86_64`: a call made through another ABI (int 0x80's i386 numbers) is killed.
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;

// Offsets in `struct seccomp_data`: nr, arch, instruction_pointer, args[6].
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
fn off_arg_lo(i: usize) -> u32 {
    16 + 8 * i as u32
}

fn ld(k: u32) -> Insn {
    Insn { code: LD_W_ABS, jt: 0, jf: 0, k }
}
fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code: JEQ_K, jt, jf, k }
}
fn jset(k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code: JSET_K, jt, jf, k }
}
fn ret(k: u32) -> Insn {
    Insn { code: RET_K, jt: 0, jf: 0, k }
}

/// The rules, and what a call none allows gets.
#[derive(Clone, Debug)]
pub struct Filter {
    pub rules: Vec<Rule>,
    pub otherwise: u32,
}

impl Filter {
    /// The program: the architecture checked, then one block a rule (load the number, skip
    /// the block unless it matches, test the arguments, allow; a test that fails jumps to the
    /// next block, so two rules may name one call), then `otherwise`.
    pub fn program(&self) -> Vec<Insn> {
        let mut p = vec![ld(OFF_ARCH), jeq(AUDIT_ARCH_X86_64, 1, 0), ret(RET_KILL_PROCESS)];
        for rule in &self.rules {
            // `JA` with k == FAIL: a jump to the end of the block, fixed up below.
            const FAIL: u32 = u32::MAX;
            let fail = Insn { code: JA, jt: 0, jf: 0, k: FAIL };
            let mut body = Vec::new();
            let high_word_zero = |body: &mut Vec<Insn>, i: usize| {
                body.push(ld(off_arg_lo(i) + 4));
                body.push(jeq(0, 1, 0));
                body.push(fail);
            };
            for arg in &rule.args {
                match *arg {
                    Arg::OneOf(i, values) => {
                        body.push(ld(off_arg_lo(i)));
                        let n = values.len();
                        for (j, v) in values.iter().enumerate() {
                            // Equal: jump over the rest of the values and the failure.
                            body.push(jeq(*v, (n - j) as u8, 0));
                        }
                        body.push(fail);
                        high_word_zero(&mut body, i);
                    }
                    Arg::Eq(i, v) => {
                        body.push(ld(off_arg_lo(i)));
                        body.push(jeq(v, 1, 0));
                        body.push(fail);
                        high_word_zero(&mut body, i);
                    }
                    Arg::Clear(i, bits) => {
                        body.push(ld(off_arg_lo(i)));
                        body.push(jset(bits, 0, 1));
                        body.push(fail);
                    }
                    Arg::Set(i, bits) => {
                        // jset jumps when any bit is set: test each bit on its own.
                        body.push(ld(off_arg_lo(i)));
                        for b in (0..32).map(|s| 1u32 << s).filter(|b| bits & b != 0) {
                            body.push(jset(b, 1, 0));
                            body.push(fail);
                        }
                    }
                }
            }
            body.push(ret(RET_ALLOW));
            let end = body.len() as u32;
            for (at, insn) in body.iter_mut().enumerate() {
                if insn.code == JA && insn.k == FAIL {
                    insn.k = end - at as u32 - 1;
                }
            }
            assert!(body.len() < 256, "a rule's block fits a conditional jump");
            p.push(ld(OFF_NR));
            p.push(jeq(rule.nr as u32, 0, body.len() as u8));
            p.extend(body);
        }
        p.push(ret(self.otherwise));
        p
    }

    /// Installs the filter on the calling thread and every thread it starts afterwards
    /// (`SECCOMP_FILTER_FLAG_TSYNC`: on every thread of the process), after
    /// `PR_SET_NO_NEW_PRIVS`. Filters stack: a second one can only take more away.
    pub fn install(&self) -> std::io::Result<()> {
        #[repr(C)]
        struct Fprog {
            len: u16,
            filter: *const Insn,
        }
        let program = self.program();
        let prog = Fprog { len: program.len() as u16, filter: program.as_ptr() };
        const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
        const SECCOMP_FILTER_FLAG_TSYNC: libc::c_ulong = 1;
        // SAFETY: prctl and seccomp with valid arguments; `prog` outlives the calls.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let r = libc::syscall(
                libc::SYS_seccomp,
                SECCOMP_SET_MODE_FILTER,
                SECCOMP_FILTER_FLAG_TSYNC,
                &prog as *const Fprog,
            );
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// What the worker's memory allocator, its pipe, its exit and its watchdog thread need, for
/// both stages.
fn common() -> Vec<Rule> {
    use libc::*;
    let mut r = vec![
        Rule::with(SYS_read, &[Arg::OneOf(0, &[0])]),
        Rule::with(SYS_write, &[Arg::OneOf(0, &[1, 2])]),
        Rule::any(SYS_munmap),
        Rule::any(SYS_mremap),
        Rule::any(SYS_brk),
        Rule::any(SYS_madvise),
        Rule::any(SYS_futex),
        Rule::any(SYS_exit),
        Rule::any(SYS_exit_group),
        Rule::any(SYS_rt_sigreturn),
        Rule::any(SYS_rt_sigprocmask),
        Rule::any(SYS_sched_yield),
        Rule::any(SYS_clock_gettime),
        Rule::any(SYS_clock_nanosleep),
        Rule::any(SYS_nanosleep),
        Rule::any(SYS_getrandom),
        Rule::any(SYS_getpid),
        Rule::any(SYS_getppid),
        Rule::any(SYS_gettid),
        Rule::any(SYS_sigaltstack),
    ];
    // The watchdog's signal, to this process's own threads only.
    // SAFETY: getpid has no preconditions.
    let me = unsafe { getpid() } as u32;
    r.push(Rule::with(SYS_tgkill, &[Arg::Eq(0, me)]));
    r
}

/// While the object loads (`dlopen` reads and maps it; its constructors run here): the
/// common calls, files opened for reading only, and mappings of them. Nothing is written,
/// created, sent or executed.
pub fn loading() -> Filter {
    use libc::*;
    let mut rules = common();
    let writes = (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE) as u32;
    rules.extend([
        Rule::with(SYS_openat, &[Arg::Clear(2, writes)]),
        Rule::with(SYS_open, &[Arg::Clear(1, writes)]),
        Rule::any(SYS_read),
        Rule::any(SYS_pread64),
        Rule::any(SYS_fstat),
        Rule::any(SYS_newfstatat),
        Rule::any(SYS_close),
        Rule::any(SYS_mmap),
        Rule::any(SYS_mprotect),
        // The serving filter's own installation (filters stack: it only takes away).
        Rule::with(SYS_prctl, &[Arg::OneOf(0, &[PR_SET_NO_NEW_PRIVS as u32])]),
        Rule::any(SYS_seccomp),
    ]);
    Filter { rules, otherwise: RET_TRAP }
}

/// While it serves predictions: the common calls, and memory that is neither a file's nor
/// executable. No file, no socket, no process, no exec.
pub fn serving() -> Filter {
    use libc::*;
    let mut rules = common();
    rules.extend([
        Rule::with(SYS_mmap, &[Arg::Set(3, MAP_ANONYMOUS as u32), Arg::Clear(2, PROT_EXEC as u32)]),
        Rule::with(SYS_mprotect, &[Arg::Clear(2, PROT_EXEC as u32)]),
    ]);
    Filter { rules, otherwise: RET_TRAP }
}

/// The name of an x86-64 system call a tree's C is likely to try, else its number.
pub fn syscall_name(nr: i64) -> String {
    use libc::*;
    let known: &[(i64, &str)] = &[
        (SYS_read, "read"),
        (SYS_write, "write"),
        (SYS_open, "open"),
        (SYS_openat, "openat"),
        (SYS_close, "close"),
        (SYS_mmap, "mmap"),
        (SYS_mprotect, "mprotect"),
        (SYS_ioctl, "ioctl"),
        (SYS_socket, "socket"),
        (SYS_connect, "connect"),
        (SYS_sendto, "sendto"),
        (SYS_clone, "clone"),
        (SYS_clone3, "clone3"),
        (SYS_fork, "fork"),
        (SYS_vfork, "vfork"),
        (SYS_execve, "execve"),
        (SYS_execveat, "execveat"),
        (SYS_kill, "kill"),
        (SYS_unlink, "unlink"),
        (SYS_unlinkat, "unlinkat"),
        (SYS_rename, "rename"),
        (SYS_renameat, "renameat"),
        (SYS_truncate, "truncate"),
        (SYS_ftruncate, "ftruncate"),
        (SYS_rt_sigaction, "rt_sigaction"),
        (SYS_ptrace, "ptrace"),
        (SYS_prctl, "prctl"),
        (SYS_seccomp, "seccomp"),
        (SYS_setrlimit, "setrlimit"),
        (SYS_prlimit64, "prlimit64"),
    ];
    known.iter().find(|(n, _)| *n == nr).map_or_else(|| format!("system call {nr}"), |(_, name)| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `p` as the kernel's BPF interpreter would on `struct seccomp_data`.
    fn run(p: &[Insn], nr: i64, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_le_bytes());
        data[4..8].copy_from_slice(&AUDIT_ARCH_X86_64.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => a = u32::from_le_bytes(data[i.k as usize..i.k as usize + 4].try_into().unwrap()),
                JEQ_K => pc += if a == i.k { i.jt } else { i.jf } as usize,
                JSET_K => pc += if a & i.k != 0 { i.jt } else { i.jf } as usize,
                JA => pc += i.k as usize,
                RET_K => return i.k,
                c => panic!("instruction {c:#x}"),
            }
        }
    }

    #[test]
    fn serving_allows_the_pipe_and_anonymous_memory_and_traps_files_sockets_exec_and_other_fds() {
        let p = serving().program();
        let z = [0u64; 6];
        assert_eq!(run(&p, libc::SYS_write, [1, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&p, libc::SYS_write, [2, 0, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&p, libc::SYS_write, [3, 0, 0, 0, 0, 0]), RET_TRAP, "another descriptor");
        assert_eq!(run(&p, libc::SYS_write, [1 | 1 << 32, 0, 0, 0, 0, 0]), RET_TRAP, "a high word");
        assert_eq!(run(&p, libc::SYS_read, z), RET_ALLOW);
        assert_eq!(run(&p, libc::SYS_read, [1, 0, 0, 0, 0, 0]), RET_TRAP);
        let anon = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let rw = (libc::PROT_READ | libc::PROT_WRITE) as u64;
        assert_eq!(run(&p, libc::SYS_mmap, [0, 4096, rw, anon, u64::MAX, 0]), RET_ALLOW);
        assert_eq!(run(&p, libc::SYS_mmap, [0, 4096, rw, libc::MAP_PRIVATE as u64, 3, 0]), RET_TRAP, "a file");
        assert_eq!(run(&p, libc::SYS_mmap, [0, 4096, rw | libc::PROT_EXEC as u64, anon, 0, 0]), RET_TRAP, "exec");
        assert_eq!(run(&p, libc::SYS_mprotect, [0, 4096, libc::PROT_EXEC as u64, 0, 0, 0]), RET_TRAP);
        for nr in [libc::SYS_openat, libc::SYS_socket, libc::SYS_execve, libc::SYS_clone, libc::SYS_rt_sigaction] {
            assert_eq!(run(&p, nr, z), RET_TRAP, "{}", syscall_name(nr));
        }
        assert_eq!(run(&p, libc::SYS_exit_group, z), RET_ALLOW);
    }

    #[test]
    fn loading_opens_for_reading_only() {
        let p = loading().program();
        let at = |flags: i32| run(&p, libc::SYS_openat, [0, 0, flags as u64, 0, 0, 0]);
        assert_eq!(at(libc::O_RDONLY | libc::O_CLOEXEC), RET_ALLOW);
        assert_eq!(at(libc::O_WRONLY), RET_TRAP);
        assert_eq!(at(libc::O_RDWR), RET_TRAP);
        assert_eq!(at(libc::O_RDONLY | libc::O_CREAT), RET_TRAP);
        assert_eq!(at(libc::O_RDONLY | libc::O_TRUNC), RET_TRAP);
        assert_eq!(run(&p, libc::SYS_socket, [0; 6]), RET_TRAP);
        assert_eq!(run(&p, libc::SYS_unlink, [0; 6]), RET_TRAP);
        // Two rules name read: the pipe's, and any descriptor while loading.
        assert_eq!(run(&p, libc::SYS_read, [5, 0, 0, 0, 0, 0]), RET_ALLOW);
    }

    #[test]
    fn another_architecture_is_killed() {
        let p = serving().program();
        assert_eq!(p[..3], [ld(OFF_ARCH), jeq(AUDIT_ARCH_X86_64, 1, 0), ret(RET_KILL_PROCESS)]);
    }
}
