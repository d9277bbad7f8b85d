//! A variant's hunks in the ported files, in the base's lines: what a patch without a model
//! policy changes, shown where a window's base path goes through it.

use std::path::Path;

use similar::{ChangeTag, DiffTag, TextDiff};

use super::lines::KernelLines;
use super::{definitions, Files, Ledger, PatchedFiles};
use crate::cache::Cache;
use crate::error::Result;
use crate::kernels::{Builder, Kernels};

/// One hunk of a variant's change to a file the ledger's functions live in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    pub file: String,
    /// The base lines the hunk shows (context included), 1-based and inclusive.
    pub first: usize,
    pub last: usize,
    /// The ported functions whose base definition holds a line the hunk removes or adds
    /// next to, in file order.
    pub functions: Vec<String>,
    /// The hunk as `diff -u` prints it, its `@@` header in the base's and the variant's lines.
    pub text: String,
}

impl Hunk {
    /// Whether the decision placed `at` lies inside the lines the hunk shows.
    pub fn holds(&self, at: &KernelLines) -> bool {
        at.exact && at.file == self.file && at.first <= self.last && at.last >= self.first
    }
}

/// Every hunk turning `base`'s copy of the ledger's files into `patched`'s, three lines of
/// context each, in file order, each with the ported functions it changes.
pub fn hunks_of(ledger: &Ledger, base: &dyn Files, patched: &dyn Files) -> Result<Vec<Hunk>> {
    let mut files: Vec<&str> = ledger.functions.iter().map(|f| f.file.as_str()).collect();
    files.sort();
    files.dedup();
    let mut out = Vec::new();
    for file in files {
        let (Some(old), Some(new)) = (base.read(file)?, patched.read(file)?) else { continue };
        if old == new {
            continue;
        }
        // Each ported function of this file, with its base definitions' lines.
        let spans: Vec<(&str, (usize, usize))> = ledger
            .functions
            .iter()
            .filter(|f| f.file == file)
            .flat_map(|f| definitions(&old, &f.name).unwrap_or_default().into_iter().map(move |s| (f.name.as_str(), s)))
            .collect();
        let diff = TextDiff::from_lines(&old, &new);
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            let ops = hunk.ops();
            let (Some(first_op), Some(last_op)) = (ops.first(), ops.last()) else { continue };
            let (first, last) =
                (first_op.old_range().start + 1, last_op.old_range().end.max(first_op.old_range().start + 1));
            // The base lines changed: those removed, and for an insertion the lines either side.
            let mut changed: Vec<usize> = Vec::new();
            for op in ops {
                let r = op.old_range();
                match op.tag() {
                    DiffTag::Equal => {}
                    DiffTag::Insert => changed.extend([r.start, r.start + 1]),
                    DiffTag::Delete | DiffTag::Replace => changed.extend(r.start + 1..=r.end),
                }
            }
            let mut functions: Vec<String> = Vec::new();
            for (name, (a, b)) in &spans {
                if changed.iter().any(|l| l >= a && l <= b) && !functions.iter().any(|f| f == name) {
                    functions.push(name.to_string());
                }
            }
            let mut text = format!("{}\n", hunk.header());
            for change in hunk.iter_changes() {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                text.push(sign);
                text.push_str(change.value().trim_end_matches('\n'));
                text.push('\n');
            }
            out.push(Hunk { file: file.to_string(), first, last, functions, text });
        }
    }
    Ok(out)
}

/// `variant`'s hunks in the ported files, against the configured base.
pub fn variant_hunks(root: &Path, kernels: &Kernels, cache: &Cache, variant: &str) -> Result<Vec<Hunk>> {
    let ledger = Ledger::load(root)?;
    let base = super::base_files(&Builder::new(kernels, cache))?;
    let v = kernels.variant(variant)?;
    let files: Vec<&str> = ledger.functions.iter().map(|f| f.file.as_str()).collect();
    let patched = PatchedFiles::new(base.as_ref(), variant, &v.patches, &files)?;
    hunks_of(&ledger, base.as_ref(), &patched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::{DirFiles, Ported};

    const BASE: &str = "static int a(int x)\n{\n\tif (x > 1)\n\t\treturn 1;\n\treturn 0;\n}\n\n/* gap */\n/* gap */\n/* gap */\n/* gap */\n/* gap */\n/* gap */\n/* gap */\n\nstatic int b(int y)\n{\n\treturn y + 1;\n}\n";

    fn ledger() -> Ledger {
        let f = |name: &str| Ported { name: name.into(), file: "mm/x.c".into(), fingerprint: String::new() };
        Ledger { kernel: "7.3.4".into(), functions: vec![f("a"), f("b")], not_code: Vec::new() }
    }

    #[test]
    fn a_hunk_is_in_base_lines_and_names_the_function_it_changes() {
        let patched = BASE.replace("if (x > 1)", "if (x >= 1)");
        let (base, new) = (DirFiles::from_map([("mm/x.c", BASE)]), DirFiles::from_map([("mm/x.c", patched.as_str())]));
        let h = hunks_of(&ledger(), &base, &new).unwrap();
        assert_eq!(h.len(), 1, "{h:#?}");
        assert_eq!(h[0].functions, vec!["a".to_string()]);
        assert_eq!((h[0].first, h[0].last), (1, 6));
        assert!(h[0].text.starts_with("@@ -1,6 +1,6 @@\n"), "{}", h[0].text);
        assert!(h[0].text.contains("-\tif (x > 1)\n+\tif (x >= 1)\n"), "{}", h[0].text);
        let at = |first, last, exact| KernelLines { function: "a".into(), file: "mm/x.c".into(), first, last, exact };
        assert!(h[0].holds(&at(3, 4, true)));
        assert!(!h[0].holds(&at(16, 19, true)), "b's lines are not in a's hunk");
        assert!(!h[0].holds(&at(1, 6, false)), "a whole function is not a decision's place");
    }

    #[test]
    fn two_changes_apart_are_two_hunks_each_with_its_function() {
        let patched = BASE.replace("if (x > 1)", "if (x > 2)").replace("return y + 1;", "return y + 2;");
        let (base, new) = (DirFiles::from_map([("mm/x.c", BASE)]), DirFiles::from_map([("mm/x.c", patched.as_str())]));
        let h = hunks_of(&ledger(), &base, &new).unwrap();
        let names: Vec<Vec<String>> = h.iter().map(|h| h.functions.clone()).collect();
        assert_eq!(names, vec![vec!["a".to_string()], vec!["b".to_string()]]);
        assert_eq!((h[1].first, h[1].last), (15, 19));
        assert!(hunks_of(&ledger(), &base, &base).unwrap().is_empty(), "an unchanged file has no hunk");
    }
}
