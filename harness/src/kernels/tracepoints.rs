//! What radiff needs of a kernel tree before it builds it: the definitions of the
//! tracepoints every run enables ([`crate::guest::EVENTS`] and the block layer's), each in
//! `include/trace/events/SYSTEM.h`. A tree without them would build for minutes and then
//! fail every run at "enabling readahead:page_cache_sync_ra: Invalid argument"; it is
//! refused before any build or boot, naming what is missing.

use std::path::Path;

use crate::error::{Error, Result};

/// The tracepoints a run enables, `system:name`.
pub fn needed() -> Vec<&'static str> {
    crate::guest::EVENTS.iter().copied().chain([crate::guest::BLOCK_EVENT]).collect()
}

/// How a tree's kernel can be traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracing {
    /// Every tracepoint of [`needed`]: each readahead window is seen.
    Windows,
    /// Every one but the readahead windows': the tree has no
    /// `include/trace/events/readahead.h` at all (Linux before the readahead tracepoints,
    /// Debian's 6.12). Its runs record the folios added, the faults and the device's
    /// requests; the guest leaves the readahead events out and the trace says so
    /// ([`crate::ftrace::NO_WINDOWS`]), and a trial holds the model to that
    /// ([`crate::compare::as_untraced`]).
    Flat,
}

/// The header of the readahead windows' tracepoints, which a [`Tracing::Flat`] tree lacks.
pub const READAHEAD_H: &str = "include/trace/events/readahead.h";

/// Refuses `tree` (as a variant's build would compile it, its patches applied) when it
/// does not define every tracepoint of [`needed`]: an [`Error::Untraceable`] naming each
/// header and tracepoint it lacks. A tree that lacks only the whole readahead header is
/// [`Tracing::Flat`].
pub fn check_tree(tree: &Path, variant: &str) -> Result<Tracing> {
    let missing = missing(&needed(), &|header| std::fs::read_to_string(tree.join(header)).ok());
    match tracing_of(&missing) {
        Some(tracing) => Ok(tracing),
        None => Err(Error::Untraceable { tree: tree.to_path_buf(), variant: variant.to_string(), missing }),
    }
}

/// What [`missing`]'s answer leaves: every tracepoint, or all but a readahead header that
/// is not there at all; `None` for anything else.
fn tracing_of(missing: &[String]) -> Option<Tracing> {
    match missing {
        [] => Some(Tracing::Windows),
        [only] if only.starts_with(&format!("{READAHEAD_H}: no such file")) => Some(Tracing::Flat),
        _ => None,
    }
}

/// Each header (relative to the tree) that lacks some of `events`, with what it lacks:
/// `include/trace/events/readahead.h: no such file`, or `... does not define
/// page_cache_sync_ra, page_cache_async_ra`. `read` gives a header's text, `None` when the
/// tree has no such file.
pub fn missing(events: &[&str], read: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut by_header: Vec<(String, Vec<&str>)> = Vec::new();
    for event in events {
        let (system, name) = event.split_once(':').unwrap_or(("", event));
        let header = format!("include/trace/events/{system}.h");
        match by_header.iter_mut().find(|(h, _)| *h == header) {
            Some((_, names)) => names.push(name),
            None => by_header.push((header, vec![name])),
        }
    }
    let mut out = Vec::new();
    for (header, names) in by_header {
        let Some(text) = read(&header) else {
            out.push(format!("{header}: no such file (radiff needs its {})", names.join(", ")));
            continue;
        };
        let defined = defined(&text);
        let lacking: Vec<&str> = names.into_iter().filter(|n| !defined.iter().any(|d| d == n)).collect();
        if !lacking.is_empty() {
            out.push(format!("{header} does not define {}", lacking.join(", ")));
        }
    }
    out
}

/// The tracepoints a header defines: the name of each `TRACE_EVENT(NAME, ...)` and each
/// `DEFINE_EVENT(CLASS, NAME, ...)`, with their `_CONDITION`, `_FN` and `_PRINT` forms.
pub fn defined(header: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = header;
    while let Some(at) = rest.find(|c: char| c.is_ascii_uppercase()) {
        rest = &rest[at..];
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let (word, after) = rest.split_at(len);
        rest = after;
        // The name is the macro's first argument, or its second for a DEFINE_EVENT.
        let position = match word {
            "TRACE_EVENT" | "TRACE_EVENT_CONDITION" | "TRACE_EVENT_FN" | "TRACE_EVENT_FN_COND" => 0,
            "DEFINE_EVENT" | "DEFINE_EVENT_CONDITION" | "DEFINE_EVENT_FN" | "DEFINE_EVENT_PRINT" => 1,
            _ => continue,
        };
        let Some(args) = after.trim_start().strip_prefix('(') else { continue };
        if let Some(name) = args.split(',').nth(position).map(str::trim) {
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                out.push(name.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const READAHEAD_H_TEXT: &str = "#define TRACE_SYSTEM readahead\n/* TRACE_EVENT(in_a_comment, is read too) */\nTRACE_EVENT(page_cache_ra_unbounded,\n\tTP_PROTO(struct inode *inode),\n);\nDECLARE_EVENT_CLASS(page_cache_ra_op,\n\tTP_PROTO(struct inode *inode),\n);\nDEFINE_EVENT(page_cache_ra_op, page_cache_sync_ra,\n\tTP_PROTO(struct inode *inode)\n);\nDEFINE_EVENT(page_cache_ra_op,\n\t     page_cache_async_ra,\n\tTP_PROTO(struct inode *inode)\n);\n";

    #[test]
    fn a_header_defines_its_trace_events_and_define_events_by_name() {
        let names = defined(READAHEAD_H_TEXT);
        assert_eq!(names, ["in_a_comment", "page_cache_ra_unbounded", "page_cache_sync_ra", "page_cache_async_ra"]);
        assert!(!names.contains(&"page_cache_ra_op".to_string()), "a class is not a tracepoint");
    }

    #[test]
    fn a_missing_header_and_a_missing_definition_are_each_named_once() {
        let events = [
            "readahead:page_cache_sync_ra",
            "readahead:page_cache_ra_order",
            "block:block_rq_issue",
            "filemap:mm_filemap_fault",
        ];
        let read = |h: &str| match h {
            "include/trace/events/readahead.h" => Some(READAHEAD_H_TEXT.to_string()),
            "include/trace/events/filemap.h" => Some("TRACE_EVENT(mm_filemap_fault,\n".to_string()),
            _ => None,
        };
        assert_eq!(
            missing(&events, &read),
            [
                "include/trace/events/readahead.h does not define page_cache_ra_order",
                "include/trace/events/block.h: no such file (radiff needs its block_rq_issue)",
            ]
        );
        assert_eq!(missing(&events[..1], &read), Vec::<String>::new());
    }

    #[test]
    fn a_tree_without_the_readahead_header_is_flat_and_any_other_lack_is_refused() {
        let events = needed();
        let all =
            |_: &str| Some(events.iter().map(|e| format!("TRACE_EVENT({},\n", e.split_once(':').unwrap().1)).collect());
        assert_eq!(tracing_of(&missing(&events, &all)), Some(Tracing::Windows));
        let older = |h: &str| if h == READAHEAD_H { None } else { all(h) };
        assert_eq!(tracing_of(&missing(&events, &older)), Some(Tracing::Flat));
        let partial = |h: &str| if h == READAHEAD_H { Some(String::new()) } else { all(h) };
        assert_eq!(tracing_of(&missing(&events, &partial)), None, "a readahead header without the events");
        let no_block = |h: &str| if h == READAHEAD_H || h.ends_with("block.h") { None } else { all(h) };
        assert_eq!(tracing_of(&missing(&events, &no_block)), None, "the block layer's are needed");
    }
}
