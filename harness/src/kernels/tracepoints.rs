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

/// Refuses `tree` (as a variant's build would compile it, its patches applied) when it
/// does not define every tracepoint of [`needed`]: an [`Error::Untraceable`] naming each
/// header and tracepoint it lacks.
pub fn check_tree(tree: &Path, variant: &str) -> Result<()> {
    let missing = missing(&needed(), &|header| std::fs::read_to_string(tree.join(header)).ok());
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Untraceable { tree: tree.to_path_buf(), variant: variant.to_string(), missing })
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

    const READAHEAD_H: &str = "#define TRACE_SYSTEM readahead\n/* TRACE_EVENT(in_a_comment, is read too) */\nTRACE_EVENT(page_cache_ra_unbounded,\n\tTP_PROTO(struct inode *inode),\n);\nDECLARE_EVENT_CLASS(page_cache_ra_op,\n\tTP_PROTO(struct inode *inode),\n);\nDEFINE_EVENT(page_cache_ra_op, page_cache_sync_ra,\n\tTP_PROTO(struct inode *inode)\n);\nDEFINE_EVENT(page_cache_ra_op,\n\t     page_cache_async_ra,\n\tTP_PROTO(struct inode *inode)\n);\n";

    #[test]
    fn a_header_defines_its_trace_events_and_define_events_by_name() {
        let names = defined(READAHEAD_H);
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
            "include/trace/events/readahead.h" => Some(READAHEAD_H.to_string()),
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
}
