//! What a boot's console says: a point's lines, the kernel's panic, the trace it dumped.

use std::path::Path;

use crate::scenario::Scenario;
use crate::wire::Status;

/// The file in a guest's folder where it reports its step and, at the end, whether it
/// succeeded (written by `guest.rs`).
pub const STATUS_FILE: &str = "status.json";

/// The guest's last report in its folder `dir` ([`STATUS_FILE`]); none if it wrote none
/// yet, or one that does not parse (a write the guest has not finished).
pub fn read_status(dir: &Path) -> Option<Status> {
    std::fs::read_to_string(dir.join(STATUS_FILE)).ok().and_then(|t| serde_json::from_str(&t).ok())
}

/// The console lines of the `n`-th point of a boot (1-based): from the guest's line
/// `radiff-guest: point N of M begins` to the next point's (the whole console if there is
/// no such line: the boot did not get that far).
pub fn console_of_point(console: &str, n: usize) -> String {
    let begins = |k: usize| console.find(&format!("radiff-guest: point {k} of "));
    let Some(start) = begins(n) else { return console.to_string() };
    let start = console[..start].rfind('\n').map_or(0, |p| p + 1);
    let end = begins(n + 1).map_or(console.len(), |e| console[..e].rfind('\n').map_or(e, |p| p + 1));
    console[start..end.max(start)].to_string()
}

/// The kernel's report of an oops or panic in a console, if it made one: the lines from
/// the first `kernel BUG at`, `BUG: `, `Oops: `, `general protection fault` or `Kernel
/// panic` to the end of its call trace (`</TASK>` or `---[ end trace`; at most 40), then
/// the `Kernel panic - not syncing` line. The trace buffer's dump is left out.
pub fn kernel_panic(console: &str) -> Option<String> {
    let lines: Vec<&str> = console.lines().map(|l| l.trim_end_matches('\r')).collect();
    let starts = ["kernel BUG at", "BUG: ", "Oops: ", "general protection fault", "Kernel panic - not syncing"];
    let first = lines.iter().position(|l| starts.iter().any(|s| l.contains(s)))?;
    let report_end = lines[first..]
        .iter()
        .position(|l| {
            l.contains("</TASK>")
                || l.contains("---[ end trace")
                || l.contains("Dumping ftrace buffer:")
                || l.contains("Kernel panic - not syncing")
        })
        .map_or(lines.len() - 1, |k| first + k);
    let mut quoted: Vec<&str> = lines[first..=report_end.min(first + 39)]
        .iter()
        .copied()
        .filter(|l| !l.contains("Dumping ftrace buffer:"))
        .collect();
    if let Some(panic) = lines[first..].iter().find(|l| l.contains("Kernel panic - not syncing")) {
        if quoted.last() != Some(panic) {
            quoted.push(panic);
        }
    }
    Some(quoted.join("\n"))
}

/// The trace buffer as the kernel dumped it on the console at an oops
/// (`ftrace_dump_on_oops`: the lines between `Dumping ftrace buffer:` and the closing
/// dashes), without the console's timestamps: the partial trace of a run that panicked.
pub fn ftrace_dump(console: &str) -> Option<String> {
    let strip = |l: &str| -> String {
        let l = l.trim_end_matches('\r');
        match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
            Some((_, rest)) => rest.to_string(),
            None => l.to_string(),
        }
    };
    let mut lines = console.lines().map(strip).skip_while(|l| !l.contains("Dumping ftrace buffer:")).skip(1);
    let mut out =
        String::from("# the trace buffer as the kernel dumped it on the console at the oops (ftrace_dump_on_oops)\n");
    let first = lines.next()?;
    if !first.starts_with("----") {
        out.push_str(&first);
        out.push('\n');
    }
    for l in lines {
        if l.starts_with("----") {
            break;
        }
        out.push_str(&l);
        out.push('\n');
    }
    Some(out)
}

/// How to give a scenario's trace more room.
pub(super) fn lost_fix(scenario: &Scenario, suggest_kb: u64) -> String {
    format!(
        "raise `trace_buffer_kb` in {} (now {} KiB per CPU; try `trace_buffer_kb: {suggest_kb}`)",
        scenario.path.display(),
        scenario.trace_buffer_kb
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real console (fault-test kernel, a BUG() in page_cache_sync_ra(), oops=panic,
    /// ftrace_dump_on_oops), cut short.
    const PANIC: &str = "[    3.4] radiff-guest: point 1 of 2 begins: /r/_batch/1-0/0
[    3.5] XFS (nvme0n1): Ending clean mount
[    3.6] radiff-guest: point 1 of 2 ended with exit code 0 after 0.8 s
[    4.1] radiff-guest: point 2 of 2 begins: /r/_batch/1-0/1
[    4.9] ------------[ cut here ]------------
[    4.9] kernel BUG at mm/readahead.c:594!
[    4.9] Oops: invalid opcode: 0000 [#1] SMP
[    4.9] RIP: 0010:0xffffffff810faae8
[    4.9] Call Trace:
[    4.9]  <TASK>
[    4.9]  ? 0xffffffff810f21b3
[    4.9]  </TASK>
[    4.9] Dumping ftrace buffer:
[    4.9] ---------------------------------
[    4.9] radiff-g-80        0..... 46306us : page_cache_sync_ra: dev=259:1 ino=83 index=1 req_count=1
[    4.9] radiff-g-80        0..... 47737us : page_cache_sync_ra: dev=259:1 ino=83 index=1000 req_count=3
[    4.9] ---------------------------------
[    4.9] ---[ end trace 0000000000000000 ]---
[    4.9] RIP: 0010:0xffffffff810faae8
[    4.9] Kernel panic - not syncing: Fatal exception
[    4.9] Dumping ftrace buffer:
[    4.9]    (ftrace buffer empty)
";

    #[test]
    fn a_points_console_runs_from_its_line_to_the_next_points() {
        let first = console_of_point(PANIC, 1);
        assert!(first.starts_with("[    3.4] radiff-guest: point 1 of 2 begins"));
        assert!(first.ends_with("exit code 0 after 0.8 s\n"), "{first}");
        let second = console_of_point(PANIC, 2);
        assert!(second.starts_with("[    4.1] radiff-guest: point 2 of 2 begins"));
        assert!(second.contains("Kernel panic"));
        assert!(!second.contains("point 1 of 2"));
        // A point the boot never reached: the whole console (it may say why).
        assert_eq!(console_of_point(PANIC, 3), PANIC);
        assert_eq!(console_of_point("no markers\n", 1), "no markers\n");
    }

    #[test]
    fn the_panic_is_quoted_without_the_trace_dump() {
        let quoted = kernel_panic(PANIC).expect("a panic");
        assert_eq!(
            quoted,
            "[    4.9] kernel BUG at mm/readahead.c:594!\n[    4.9] Oops: invalid opcode: 0000 [#1] SMP\n[    4.9] RIP: 0010:0xffffffff810faae8\n\
             [    4.9] Call Trace:\n[    4.9]  <TASK>\n[    4.9]  ? 0xffffffff810f21b3\n[    4.9]  </TASK>\n[    4.9] Kernel panic - not syncing: Fatal exception"
        );
        assert_eq!(kernel_panic(&console_of_point(PANIC, 1)), None);
        assert_eq!(kernel_panic("[ 1.0] sysrq: Resetting\n"), None);
        // A panic without an oops before it is quoted alone.
        assert_eq!(
            kernel_panic("[ 1.0] x\n[ 2.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n").as_deref(),
            Some("[ 2.0] Kernel panic - not syncing: VFS: Unable to mount root fs")
        );
    }

    #[test]
    fn the_dumped_trace_is_kept_without_console_stamps() {
        let dump = ftrace_dump(PANIC).expect("a dump");
        let lines: Vec<&str> = dump.lines().collect();
        assert_eq!(lines.len(), 3, "{dump}");
        assert!(lines[0].starts_with("# the trace buffer as the kernel dumped it"));
        assert_eq!(
            lines[2],
            "radiff-g-80        0..... 47737us : page_cache_sync_ra: dev=259:1 ino=83 index=1000 req_count=3"
        );
        assert_eq!(ftrace_dump("[ 1.0] nothing\n"), None);
    }
}
