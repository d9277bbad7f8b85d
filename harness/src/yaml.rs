//! YAML input: the only module that uses serde_yaml, so that swapping the crate (its
//! author marked it deprecated) touches one file. Errors name the file and the line.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Parses `text` (the contents of `file`) into `T`; unknown keys and wrong types are
/// errors at their line when `T` denies unknown fields. Enums are written as one-key maps
/// (`- read: {offset: 0, size: 4 KiB}`), not YAML tags.
pub fn parse<T: DeserializeOwned>(file: &Path, text: &str) -> Result<T> {
    let de = serde_yaml::Deserializer::from_str(text);
    serde_yaml::with::singleton_map_recursive::deserialize(de).map_err(|err: serde_yaml::Error| {
        let line = err.location().map(|l| l.line()).unwrap_or(0);
        // serde_yaml says " at line L column C" where the error is; the line is in the
        // prefix already. Any other place it names (where an unclosed quote or bracket
        // began) stays.
        let message = match err.location() {
            Some(l) => err.to_string().replacen(&format!(" at line {} column {}", l.line(), l.column()), "", 1),
            None => err.to_string(),
        };
        Error::input(file, line, message)
    })
}

/// The 1-based line where the key at `path` (e.g. `["queue", "max_sectors_kb"]`) is
/// written, found by indentation; 0 when it is not written (a default).
pub fn line_of(text: &str, path: &[&str]) -> usize {
    let mut depth = 0;
    let mut min_indent = 0usize;
    let mut parent_indent: Option<usize> = None;
    // How the key at `depth` is written inside a flow mapping, made once a depth.
    let inline = |wanted: &str| [format!("{{{wanted}:"), format!(" {wanted}:"), format!(", {wanted}:")];
    let mut flow = path.first().map(|w| inline(w)).unwrap_or_default();
    for (number, raw) in text.lines().enumerate() {
        let line = raw.split(" #").next().unwrap_or(raw);
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if let Some(parent) = parent_indent {
            if indent <= parent {
                // Left the parent's block without finding the key.
                return 0;
            }
        }
        if indent < min_indent {
            continue;
        }
        let key = trimmed.trim_start_matches("- ");
        let wanted = path[depth];
        let matches = key.strip_prefix(wanted).is_some_and(|rest| rest.trim_start().starts_with(':'))
            || flow.iter().any(|f| key.contains(f.as_str()));
        if matches {
            if depth + 1 == path.len() {
                return number + 1;
            }
            // Flow mappings (`queue: {a: 1}`) keep children on the same line.
            if let Some(rest) = key.split_once(':').map(|(_, r)| r) {
                if rest.contains(&format!("{}:", path[depth + 1])) && depth + 2 == path.len() {
                    return number + 1;
                }
            }
            parent_indent = Some(indent);
            min_indent = indent + 1;
            depth += 1;
            flow = inline(path[depth]);
        }
    }
    0
}

/// The 1-based line of item `index` of the top-level list `key`; the key's line when the
/// item is not found (flow lists), 0 when the key is missing.
pub fn line_of_item(text: &str, key: &str, index: usize) -> usize {
    let key_line = line_of(text, &[key]);
    if key_line == 0 {
        return 0;
    }
    let mut item_indent = None;
    let mut seen = 0;
    for (number, raw) in text.lines().enumerate().skip(key_line) {
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = raw.len() - trimmed.len();
        if !trimmed.starts_with("- ") && !trimmed.starts_with('-') {
            if indent == 0 {
                break;
            }
            continue;
        }
        match item_indent {
            None => item_indent = Some(indent),
            Some(i) if indent < i => break,
            Some(i) if indent > i => continue,
            _ => {}
        }
        if seen == index {
            return number + 1;
        }
        seen += 1;
    }
    key_line
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# a comment
device:
  kind: nvme
queue:
  read_ahead_kb: 128   # pages
  max_sectors_kb: 512
file: {size: 512 MiB}
";

    #[test]
    fn finds_nested_keys_by_indentation() {
        assert_eq!(line_of(TEXT, &["queue", "max_sectors_kb"]), 6);
        assert_eq!(line_of(TEXT, &["device", "kind"]), 3);
        assert_eq!(line_of(TEXT, &["queue"]), 4);
        assert_eq!(line_of(TEXT, &["file", "size"]), 7);
        assert_eq!(line_of(TEXT, &["device", "max_sectors_kb"]), 0);
    }

    #[test]
    fn finds_list_items() {
        let text = "reads:\n  # first\n  - read: {offset: 0, size: 4 KiB}\n  - sequential:\n      size: 1 MiB\n  - random: {count: 1}\nqueue: {}\n";
        assert_eq!(line_of_item(text, "reads", 0), 3);
        assert_eq!(line_of_item(text, "reads", 1), 4);
        assert_eq!(line_of_item(text, "reads", 2), 6);
        assert_eq!(line_of_item(text, "reads", 3), 1);
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "the fields are there for serde to check the YAML's shape; the test reads only errors")]
    struct Queue {
        read_ahead_kb: u64,
    }

    #[test]
    fn unknown_keys_are_errors_at_their_line() {
        let err = parse::<Queue>(Path::new("q.yaml"), "read_ahead_kb: 1\nread_ahaed_kb: 2\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("q.yaml:2: "), "{text}");
        assert!(text.contains("read_ahaed_kb"), "{text}");
    }
}
