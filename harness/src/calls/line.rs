//! One line of the calls' trace instance (context on, `record-tgid` on):
//! `TASK-PID (TGID) [CPU] FLAGS TIME: BODY`.

use std::collections::BTreeMap;

/// A parsed line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Line {
    pub(super) pid: u32,
    pub(super) tgid: u32,
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
    Other,
}

pub(super) fn parse(raw: &str) -> Result<Line, String> {
    // The CPU field `) [NNN]` ends the task, pid and tgid; task names may hold anything.
    let cpu = find_cpu(raw).ok_or("no `(TGID) [CPU]` field")?;
    let head = &raw[..cpu];
    let open = head.rfind('(').ok_or("no `(TGID)`")?;
    let tgid_text = head[open + 1..].trim();
    let task_pid = head[..open].trim_end();
    let dash = task_pid.rfind('-').ok_or("no `TASK-PID`")?;
    let pid: u32 = task_pid[dash + 1..].parse().map_err(|_| "a pid that is not a number")?;
    // `(-------)`: ftrace did not know the task's group; a task alone is its own.
    let tgid = tgid_text.parse().unwrap_or(pid);
    let rest = &raw[cpu..];
    let colon = rest.find(": ").ok_or("no `TIME: `")?;
    let body = rest[colon + 2..].trim_end();
    Ok(Line { pid, tgid, body: parse_body(body)? })
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
