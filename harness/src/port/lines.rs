//! Where in the kernel each decision of the model is made: a branch id of
//! `radiff_model::coverage::BRANCHES` to file:line in a kernel tree.
//!
//! `model/lines.txt` gives, per branch, one or two fragments of the C lines that make the
//! decision (`ID<TAB>FIRST[<TAB>LAST]`), written against the ported kernel. The lines are
//! found at run time in the tree asked about, inside the definition of the branch's
//! function (named by the id), so a base where the function moved still gets its own line
//! numbers; a fragment the tree no longer has falls back to the whole function, and says
//! so. A branch the file does not list is shown as its whole function.

use std::collections::BTreeMap;
use std::path::Path;

use super::files::Cached;
use super::{extract, Ledger};
use crate::error::{Error, Result};

/// The anchors file, relative to the repository root.
pub const LINES: &str = "model/lines.txt";

/// The C fragments that locate one decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub first: String,
    /// The last line of the decision, searched for from `first` on; `None`: one line.
    pub last: Option<String>,
}

/// `model/lines.txt`: anchors by branch id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anchors {
    by_id: BTreeMap<String, Anchor>,
}

/// A decision's place in a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLines {
    /// The kernel function (`page_cache_async_ra`).
    pub function: String,
    /// From the tree's root (`mm/readahead.c`).
    pub file: String,
    /// 1-based, inclusive.
    pub first: usize,
    pub last: usize,
    /// Whether the lines are the decision's own (`false`: the whole function, because no
    /// anchor is listed or the tree lacks it).
    pub exact: bool,
}

impl std::fmt::Display for KernelLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "{}:{}", self.file, self.first)?;
        } else {
            write!(f, "{}:{}-{}", self.file, self.first, self.last)?;
        }
        if !self.exact {
            write!(f, " ({}())", self.function)?;
        }
        Ok(())
    }
}

impl Anchors {
    /// Reads `model/lines.txt` below the repository root.
    pub fn load(root: &Path) -> Result<Anchors> {
        let path = root.join(LINES);
        Anchors::parse(&path, &crate::files::read_text(&path)?)
    }

    /// Parses the file's text; `path` is for errors at file:line.
    pub fn parse(path: &Path, text: &str) -> Result<Anchors> {
        let mut by_id = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = line.split('\t').collect();
            let bad = |m: &str| Error::input(path, i + 1, format!("`{line}`: {m}"));
            if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.trim().is_empty()) {
                return Err(bad("expected `BRANCH ID<TAB>FIRST LINE FRAGMENT[<TAB>LAST LINE FRAGMENT]`"));
            }
            if !radiff_model::coverage::BRANCHES.iter().any(|b| b.id == parts[0]) {
                return Err(bad("no such branch in radiff_model::coverage::BRANCHES"));
            }
            let anchor = Anchor { first: squash(parts[1]), last: parts.get(2).map(|s| squash(s)) };
            if by_id.insert(parts[0].to_string(), anchor).is_some() {
                return Err(bad("listed twice"));
            }
        }
        Ok(Anchors { by_id })
    }

    pub fn get(&self, id: &str) -> Option<&Anchor> {
        self.by_id.get(id)
    }

    /// The ids listed, in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(String::as_str)
    }
}

/// White space collapsed to single spaces, trimmed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The function a branch id names (`"page_cache_async_ra: ..."` -> `page_cache_async_ra`).
pub fn function_of(id: &str) -> &str {
    id.split(':').next().unwrap_or(id).trim()
}

/// Where `id` is decided in `tree`: the anchor's lines inside the first definition of its
/// function that has them, else that function's lines; `None` when the ledger does not
/// list the function or the tree does not define it.
pub fn locate(anchors: &Anchors, ledger: &Ledger, tree: &mut Cached, id: &str) -> Result<Option<KernelLines>> {
    let function = function_of(id);
    let Some(ported) = ledger.function(function) else { return Ok(None) };
    let Some(text) = tree.read(&ported.file)? else { return Ok(None) };
    let spans = extract::definitions(text, function)
        .map_err(|e| Error::Other(format!("{} in {}: {e}", function, ported.file)))?;
    let Some(&(start, end)) = spans.first() else { return Ok(None) };
    let lines: Vec<&str> = text.lines().collect();
    let whole = KernelLines {
        function: function.to_string(),
        file: ported.file.clone(),
        first: start,
        last: end,
        exact: false,
    };
    let Some(anchor) = anchors.get(id) else { return Ok(Some(whole)) };
    for &(start, end) in &spans {
        if let Some((first, last)) = find_anchor(&lines[start - 1..end], anchor) {
            return Ok(Some(KernelLines { first: start + first, last: start + last, exact: true, ..whole }));
        }
    }
    Ok(Some(whole))
}

/// The 0-based lines of `anchor` in `body`: its first fragment's first line, and its last
/// fragment's first line from there on.
fn find_anchor(body: &[&str], anchor: &Anchor) -> Option<(usize, usize)> {
    let has = |line: &str, fragment: &str| squash(line).contains(fragment);
    let first = body.iter().position(|l| has(l, &anchor.first))?;
    let last = match &anchor.last {
        None => first,
        Some(fragment) => first + body[first..].iter().position(|l| has(l, fragment))?,
    };
    Some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::{DirFiles, Ported};

    fn ledger() -> Ledger {
        Ledger {
            kernel: "7.3.4".into(),
            functions: vec![Ported {
                name: "get_next_ra_size".into(),
                file: "mm/readahead.c".into(),
                fingerprint: "0".repeat(16),
            }],
            not_code: vec![],
        }
    }

    const C: &str = "int x;\n\nstatic unsigned long get_next_ra_size(struct file_ra_state *ra,\n\t\tunsigned long max)\n{\n\tunsigned long cur = ra->size;\n\n\tif (cur < max / 16)\n\t\treturn 4 * cur;\n\tif (cur <= max / 2)\n\t\treturn 2 * cur;\n\treturn max;\n}\n";

    #[test]
    fn a_decision_is_found_by_its_fragments_inside_its_function() {
        let anchors = Anchors::parse(
            Path::new("lines.txt"),
            "get_next_ra_size: cur < max / 16\tif (cur <  max / 16)\treturn 4 * cur;\n",
        )
        .unwrap();
        let files = DirFiles::from_map([("mm/readahead.c", C)]);
        let mut tree = Cached::new(&files);
        let at = locate(&anchors, &ledger(), &mut tree, "get_next_ra_size: cur < max / 16").unwrap().unwrap();
        assert_eq!((at.first, at.last, at.exact), (8, 9, true));
        assert_eq!(at.to_string(), "mm/readahead.c:8-9");
        // Not listed: the whole function, said so.
        let at = locate(&anchors, &ledger(), &mut tree, "get_next_ra_size: cur > max / 2").unwrap().unwrap();
        assert_eq!(at.to_string(), "mm/readahead.c:3-13 (get_next_ra_size())");
    }

    #[test]
    fn a_tree_that_lost_the_fragment_gets_the_whole_function() {
        let anchors =
            Anchors::parse(Path::new("lines.txt"), "get_next_ra_size: cur < max / 16\tif (cur < max / 8)\n").unwrap();
        let files = DirFiles::from_map([("mm/readahead.c", C)]);
        let at =
            locate(&anchors, &ledger(), &mut Cached::new(&files), "get_next_ra_size: cur < max / 16").unwrap().unwrap();
        assert!(!at.exact);
        assert_eq!((at.first, at.last), (3, 13));
    }

    #[test]
    fn a_bad_line_is_an_error_at_its_line() {
        let e = Anchors::parse(Path::new("lines.txt"), "# c\nno_such_fn: x\tfoo\n").unwrap_err().to_string();
        assert!(e.contains("lines.txt:2") && e.contains("no such branch"), "{e}");
        let e = Anchors::parse(Path::new("lines.txt"), "get_next_ra_size: cur < max / 16\n").unwrap_err().to_string();
        assert!(e.contains("lines.txt:1") && e.contains("expected"), "{e}");
    }
}
