//! Generated steps as scenario YAML and as words: each step's flow item(s), its phrase in
//! a finding's description, and the names of the advice and THP modes.

use super::*;
use crate::scenario::Size;

impl GenStep {
    /// The step as YAML flow items (one, or for a mapping `mmap`, `madvise` and `touch`),
    /// starting at `from` and (sequential) ending at `to`, as [`Gen::resolved`] gives them;
    /// `maps` counts the mappings made so far (a mapping takes the next index).
    pub fn yaml_items(&self, from: u64, to: Option<u64>, maps: &mut u32) -> Vec<String> {
        let GenStep::Map { shared, advice, order, exec } = self else { return rwf::yaml_items(self, from, to) };
        let map = *maps;
        *maps += 1;
        let flags =
            format!("{}{}", if *shared { "" } else { ", shared: false" }, if *exec { ", exec: true" } else { "" });
        let mut items = vec![format!("mmap: {{map: {map}{flags}}}")];
        if let Some(a) = advice {
            items.push(format!("madvise: {{map: {map}, advice: {}}}", madv_name(*a)));
        }
        items.push(match order {
            GenTouch::Sequential => format!("touch: {{map: {map}, order: sequential}}"),
            GenTouch::Backward => format!("touch: {{map: {map}, order: backward}}"),
            GenTouch::Stride { stride } => format!("touch: {{map: {map}, order: stride, stride: {}}}", Size(*stride)),
            GenTouch::Random { count, seed } => {
                format!("touch: {{map: {map}, order: random, count: {count}, seed: {seed}}}")
            }
        });
        items
    }

    /// The step as one YAML flow item (a mapping: its items joined, see [`GenStep::yaml_items`]).
    pub fn yaml(&self, from: u64, to: Option<u64>) -> String {
        match self {
            GenStep::Map { .. } => self.yaml_items(from, to, &mut 0).join("; "),
            GenStep::Readahead { at, size } => format!("readahead: {{offset: {}, size: {}}}", Size(*at), Size(*size)),
            GenStep::Read { size, .. } => format!("read: {{offset: {}, size: {}}}", Size(from), Size(*size)),
            GenStep::Sequential { size, .. } => match to {
                Some(t) => format!("sequential: {{from: {}, size: {}, to: {}}}", Size(from), Size(*size), Size(t)),
                None => format!("sequential: {{from: {}, size: {}}}", Size(from), Size(*size)),
            },
            GenStep::Random { count, min, max, align, seed } => {
                let size = if min == max { Size(*min).to_string() } else { format!("{}..{}", Size(*min), Size(*max)) };
                format!("random: {{count: {count}, size: {size}, align: {}, seed: {seed}}}", Size(*align))
            }
            GenStep::Interleaved { streams, size, separate_fds } => {
                let fds = if *separate_fds { ", separate_fds: true" } else { "" };
                format!("interleaved: {{streams: {streams}, size: {}{fds}}}", Size(*size))
            }
            GenStep::Fadvise { advice, range: None } => format!("fadvise: {{advice: {}}}", advice_name(*advice)),
            GenStep::Fadvise { advice, range: Some((offset, len)) } => {
                format!("fadvise: {{advice: {}, offset: {}, len: {}}}", advice_name(*advice), Size(*offset), Size(*len))
            }
            GenStep::FailAlloc { times, min_order } => {
                format!("fail_alloc: {{times: {times}, min_order: {min_order}}}")
            }
            GenStep::Alternate { size } => format!("interleaved: {{files: [a, b], size: {}}}", Size(*size)),
            GenStep::Splice { size, pipe, sendfile, .. } => {
                let via = if *sendfile { ", via: sendfile" } else { "" };
                format!("splice: {{offset: {}, size: {}, pipe: {}{via}}}", Size(from), Size(*size), Size(*pipe))
            }
            GenStep::ReadWith { size, how, .. } => rwf::yaml(from, *size, *how),
        }
    }

    pub(super) fn describe(&self, from: u64, to: Option<u64>, file_size: u64) -> String {
        match self {
            GenStep::Read { size, .. } => format!("a {} read at {}", Size(*size), Size(from)),
            GenStep::Sequential { size, .. } => {
                format!("{} reads from {} to {}", Size(*size), Size(from), Size(to.unwrap_or(file_size)))
            }
            GenStep::Random { count, min, max, .. } if min == max => format!("{count} random {} reads", Size(*min)),
            GenStep::Random { count, min, max, .. } => {
                format!("{count} random reads of {}..{}", Size(*min), Size(*max))
            }
            GenStep::Interleaved { streams, size, separate_fds } => {
                format!(
                    "{streams} interleaved streams of {} reads on {}",
                    Size(*size),
                    if *separate_fds { "separate fds" } else { "one fd" }
                )
            }
            GenStep::Fadvise { advice, range: None } => format!("fadvise {}", advice_name(*advice)),
            GenStep::Fadvise { advice, range: Some((offset, len)) } => {
                format!("fadvise {} of {} at {}", advice_name(*advice), Size(*len), Size(*offset))
            }
            GenStep::FailAlloc { times, min_order } => {
                format!("the next {times} allocations of order {min_order} or more failed")
            }
            GenStep::Map { shared, advice, order, exec } => {
                let touch = match order {
                    GenTouch::Sequential => "touched first to last page".to_string(),
                    GenTouch::Backward => "touched last to first page".to_string(),
                    GenTouch::Stride { stride } => format!("touched every {}", Size(*stride)),
                    GenTouch::Random { count, .. } => format!("{count} random pages touched"),
                };
                let advice = advice.map(|a| format!(", madvise {}", madv_name(a))).unwrap_or_default();
                format!(
                    "the file mmapped {}{}{advice}, {touch}",
                    if *shared { "shared" } else { "private" },
                    if *exec { " exec" } else { "" }
                )
            }
            GenStep::Readahead { at, size } => format!("readahead(2) of {} at {}", Size(*size), Size(*at)),
            GenStep::Alternate { size } => format!("the two files read in alternation, {} at a time", Size(*size)),
            GenStep::Splice { size, pipe, sendfile, .. } => {
                format!(
                    "{} {} from {} through a {} pipe",
                    if *sendfile { "sendfile of" } else { "splice of" },
                    Size(*size),
                    Size(from),
                    Size(*pipe)
                )
            }
            GenStep::ReadWith { size, how, .. } => rwf::describe(from, *size, *how),
        }
    }
}

/// A step's YAML item with `file: a` added, for a scenario with two files: every step that
/// opens a file names it, except the alternation (which names both) and the steps on a
/// mapping (which name its map).
pub(super) fn on_first_file(item: String) -> String {
    let takes_file = ["read:", "sequential:", "random:", "interleaved:", "fadvise:", "readahead:", "mmap:"]
        .iter()
        .any(|k| item.starts_with(k));
    if !takes_file || item.contains("files:") {
        return item;
    }
    item.replacen("{", "{file: a, ", 1)
}

pub fn madv_name(a: MadvAdvice) -> &'static str {
    match a {
        MadvAdvice::Normal => "normal",
        MadvAdvice::Random => "random",
        MadvAdvice::Sequential => "sequential",
        MadvAdvice::Willneed => "willneed",
        MadvAdvice::Hugepage => "hugepage",
        MadvAdvice::Nohugepage => "nohugepage",
        MadvAdvice::PopulateRead => "populate_read",
        MadvAdvice::Collapse => "collapse",
    }
}

pub fn thp_name(t: ThpMode) -> &'static str {
    match t {
        ThpMode::Always => "always",
        ThpMode::Madvise => "madvise",
        ThpMode::Never => "never",
    }
}

pub fn advice_name(a: Advice) -> &'static str {
    match a {
        Advice::Normal => "normal",
        Advice::Random => "random",
        Advice::Sequential => "sequential",
        Advice::Willneed => "willneed",
        Advice::Dontneed => "dontneed",
        Advice::Noreuse => "noreuse",
    }
}
