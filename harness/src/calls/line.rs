//! One line of the calls' trace instance (context on, `record-tgid` on):
//! `TASK-PID (TGID) [CPU] FLAGS TIME: BODY`.

use std::collections::BTreeMap;

/// A parsed line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Line {
    pub(super) pid: u32,
    pub(super) tgid: u32,
    /// The CPU whose buffer held it, and its time in microseconds (the instance's global
    /// clock: comparable across CPUs, lines of two CPUs may share a time).
    pub(super) cpu: u32,
    pub(super) micros: u64,
    pub(super) body: Body,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Body {
    /// `sys_pread64(fd: 3, buf: 0x..., count: 0x100000, pos: 0x1000)`.
    Enter {
        name: String,
        args: BTreeMap<String, String>,
    },
    /// `sys_pread64 -> 0x100000`.
    Exit {
        name: String,
        ret: i64,
    },
    /// `sched_process_fork: comm=fio pid=120 child_comm=fio child_pid=123`.
    Fork {
        child: u32,
    },
    /// `tracing_mark_write: TEXT`.
    Mark(String),
    /// `sched_process_exit: comm=fio pid=76 prio=120 group_dead=true` (`group_dead`: the
    /// last task of its thread group, whose address space then goes), or
    /// `sched_process_exec: ...` (`gone` too: the exec replaced the address space).
    Gone {
        gone: bool,
    },
    /// `page_fault_user: address=0x7ffff7a00000 ip=0x55555555a0c4 error_code=0x4` (or
    /// `page_fault_kernel`: the kernel touching a user address, as `copy_to_user()` does).
    Fault {
        address: u64,
        error_code: u64,
    },
    /// `block_rq_issue: 259,0 R 131072 () 2048 + 256 ...` and `block_rq_complete: 259,0 R ()
    /// 2048 + 256 ...`: a request of `dev` at `sector`, issued or completed.
    Block {
        complete: bool,
        dev: String,
        sector: u64,
        sectors: u64,
        /// The request's rwbs flags (`R`, `RA`, `RM`, ...).
        rwbs: String,
    },
    /// A readahead or page-cache event ([`super::ra::EVENT_NAMES`]): its name and
    /// fields, read with the scenario's files by [`super::ra::event_of`].
    Ra {
        event: String,
        fields: String,
    },
    Other,
}

pub(super) fn parse(raw: &str) -> Result<Line, String> {
    // The CPU field `) [NNN]` ends the task, pid and tgid; task names may hold anything.
    let cpu = find_cpu(raw).ok_or("no `(TGID) [CPU]` field")?;
    let head = &raw[..cpu];
    let open = head.rfind('(').ok_or("no `(TGID)`")?;
    let tgid_text = head[open + 1..].trim_end_matches(')').trim();
    let task_pid = head[..open].trim_end();
    let dash = task_pid.rfind('-').ok_or("no `TASK-PID`")?;
    let pid: u32 = task_pid[dash + 1..].parse().map_err(|_| "a pid that is not a number")?;
    // `(-------)`: ftrace did not know the task's group; a task alone is its own.
    let tgid = tgid_text.parse().unwrap_or(pid);
    let rest = &raw[cpu..];
    let close = rest.find(']').ok_or("no `[CPU]`")?;
    let cpu_nr = rest[2..close].parse().map_err(|_| "a CPU that is not a number")?;
    let colon = rest.find(": ").ok_or("no `TIME: `")?;
    let micros = rest[..colon].split_whitespace().last().and_then(micros).ok_or("no `TIME: `")?;
    let body = rest[colon + 2..].trim_end();
    Ok(Line { pid, tgid, cpu: cpu_nr, micros, body: parse_body(body)? })
}

/// `8.242262` (seconds, up to 6 decimals) in microseconds.
fn micros(time: &str) -> Option<u64> {
    let (secs, frac) = time.split_once('.').unwrap_or((time, ""));
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: u64 = format!("{frac:0<6}").parse().ok()?;
    Some(secs.parse::<u64>().ok()? * 1_000_000 + frac)
}

fn find_cpu(raw: &str) -> Option<usize> {
    let bytes = raw.as_bytes();
    let mut from = 0;
    while let Some(i) = raw[from..].find(") [") {
        let at = from + i;
        let digits = &bytes[at + 3..];
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        if n > 0 && digits.get(n) == Some(&b']') {
            return Some(at + 1);
        }
        from = at + 1;
    }
    None
}

fn parse_body(body: &str) -> Result<Body, String> {
    if let Some(text) = body.strip_prefix("tracing_mark_write: ") {
        return Ok(Body::Mark(text.to_string()));
    }
    if let Some(fields) = body.strip_prefix("sched_process_fork: ") {
        let child = fields
            .split_whitespace()
            .find_map(|w| w.strip_prefix("child_pid="))
            .and_then(|v| v.parse().ok())
            .ok_or("sched_process_fork without child_pid")?;
        return Ok(Body::Fork { child });
    }
    if let Some(fields) = body.strip_prefix("sched_process_exit: ") {
        return Ok(Body::Gone { gone: fields.split_whitespace().any(|w| w == "group_dead=true") });
    }
    if body.starts_with("sched_process_exec: ") {
        return Ok(Body::Gone { gone: true });
    }
    for event in ["page_fault_user: ", "page_fault_kernel: "] {
        if let Some(fields) = body.strip_prefix(event) {
            return fault(fields);
        }
    }
    for (event, complete) in [("block_rq_issue: ", false), ("block_rq_complete: ", true)] {
        if let Some(fields) = body.strip_prefix(event) {
            return block(fields, complete);
        }
    }
    if let Some((event, fields)) = body.split_once(": ") {
        if super::ra::EVENT_NAMES.contains(&event) {
            return Ok(Body::Ra { event: event.to_string(), fields: fields.to_string() });
        }
    }
    let Some(call) = body.strip_prefix("sys_") else { return Ok(Body::Other) };
    if let Some((name, ret)) = call.split_once(" -> ") {
        let ret = match ret.trim().strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).map_err(|_| format!("return value `{ret}`"))? as i64,
            None => ret.trim().parse().map_err(|_| format!("return value `{ret}`"))?,
        };
        return Ok(Body::Exit { name: name.to_string(), ret });
    }
    let open = call.find('(').ok_or("a call without `(`")?;
    let name = call[..open].to_string();
    let inner = call[open + 1..].strip_suffix(')').unwrap_or(&call[open + 1..]);
    let mut args = BTreeMap::new();
    for part in split_args(inner) {
        if let Some((k, v)) = part.split_once(": ") {
            args.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    Ok(Body::Enter { name, args })
}

/// `address=0x7ffff7a00000 ip=0x55555555a0c4 error_code=0x4`.
fn fault(fields: &str) -> Result<Body, String> {
    let hex = |key: &str| -> Result<u64, String> {
        let v = fields
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .ok_or_else(|| format!("a page fault without `{key}`"))?;
        let digits = v.strip_prefix("0x").ok_or_else(|| format!("`{key}{v}`: not hexadecimal"))?;
        u64::from_str_radix(digits, 16).map_err(|_| format!("`{key}{v}`: not hexadecimal"))
    };
    Ok(Body::Fault { address: hex("address=")?, error_code: hex("error_code=")? })
}

/// `259,0 R 131072 () 2048 + 256 none,0,0 [fio]` (issue) or `259,0 R () 2048 + 256
/// none,0,0 [0]` (completion): the device and the sector before the `+`.
fn block(fields: &str, complete: bool) -> Result<Body, String> {
    let words: Vec<&str> = fields.split_whitespace().collect();
    let plus = words.iter().position(|w| *w == "+").ok_or("a block request without `SECTOR + SECTORS`")?;
    let sector = plus
        .checked_sub(1)
        .and_then(|i| words[i].parse().ok())
        .ok_or("a block request whose sector is not a number")?;
    let sectors =
        words.get(plus + 1).and_then(|w| w.parse().ok()).ok_or("a block request whose size is not a number")?;
    let dev = words.first().ok_or("a block request without its device")?.to_string();
    let rwbs = words.get(1).ok_or("a block request without its rwbs flags")?.to_string();
    Ok(Body::Block { complete, dev, sector, sectors, rwbs })
}

/// `a: 1, b: 0x2 "x, y"` split at the commas outside quotes.
fn split_args(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in inner.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
}
