//! Compiling a tree's mm/readahead.c into a shared object with radiff's kernel header,
//! cached under `hybrid/<key>.so` (docs/hybrid.md).

use std::path::{Path, PathBuf};

use crate::cache::{self, Cache};
use crate::error::{Error, Result};
use crate::process::Cmd;

/// Where radiff's header is kept, from the repository's root.
pub const HEADER_PATH: &str = "model/c/radiff_kernel.h";

/// radiff's own header of the kernel API mm/readahead.c uses (model/c/radiff_kernel.h).
pub const HEADER: &str = include_str!("../../../model/c/radiff_kernel.h");

/// The file of the tree the hybrid compiles.
pub const READAHEAD_C: &str = "mm/readahead.c";

/// The tree's header whose `struct readahead_control` a patch may grow.
pub const PAGEMAP_H: &str = "include/linux/pagemap.h";

/// The members of `struct NAME { ... };` in `text` (a header), as (name, declaration);
/// `Ok(None)` when `text` does not define it, `Err` when a member is more than a plain
/// declaration (a nested struct, a function pointer, a bit-field, a preprocessor line).
pub fn members(text: &str, name: &str) -> std::result::Result<Option<Vec<(String, String)>>, String> {
    let open = format!("struct {name} {{");
    let Some(start) = text.lines().position(|l| l.trim_end() == open) else { return Ok(None) };
    let mut body = String::new();
    for line in text.lines().skip(start + 1) {
        if line.starts_with("};") {
            break;
        }
        body.push_str(line);
        body.push('\n');
    }
    // Comments out, then one declaration per `;`.
    let mut plain = String::new();
    let mut rest = body.as_str();
    while let Some(i) = rest.find("/*") {
        plain.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    plain.push_str(rest);
    let plain: String = plain.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    for decl in plain.split(';').map(str::trim).filter(|d| !d.is_empty()) {
        if decl.contains(['(', '{', '#', ':']) {
            return Err(format!("struct {name} has a member the hybrid cannot copy: `{decl}`"));
        }
        let last = decl.split(|c: char| c.is_whitespace() || c == '*').next_back().unwrap_or("");
        let member = last.split('[').next().unwrap_or("").to_string();
        out.push((member, decl.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    Ok(Some(out))
}

/// The declarations of the members `tree_pagemap` (the tree's include/linux/pagemap.h)
/// gives `struct readahead_control` beyond radiff's header's, as `RADIFF_RAC_EXTRA` holds
/// them (`bool may_shrink;`); empty when the tree adds none or has no such header.
pub fn rac_extra(tree_pagemap: Option<&str>) -> std::result::Result<String, String> {
    let ours = members(HEADER, "readahead_control")?.expect("radiff's header defines struct readahead_control");
    let Some(theirs) = tree_pagemap.map(|t| members(t, "readahead_control")).transpose()?.flatten() else {
        return Ok(String::new());
    };
    Ok(theirs
        .iter()
        .filter(|(n, _)| !ours.iter().any(|(o, _)| o == n))
        .map(|(_, decl)| format!("{decl};"))
        .collect::<Vec<_>>()
        .join(" "))
}

/// Where a compile failed: the compiler's first error, as `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub first_error: String,
    pub log: String,
}

/// The first `error:` line of gcc's output (its file and line kept), or the output's
/// first line when there is none (a linker error).
pub fn first_error(output: &str) -> String {
    output
        .lines()
        .find(|l| l.contains(": error: "))
        .or_else(|| output.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("(no output)")
        .trim()
        .to_string()
}

/// The headers `source` includes, as written (`linux/pagemap.h`, `internal.h`).
pub fn includes(source: &str) -> Vec<String> {
    let mut out: Vec<String> = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix('#'))
        .filter_map(|l| l.trim_start().strip_prefix("include"))
        .filter_map(|l| {
            let l = l.trim();
            let (open, close) = match l.chars().next()? {
                '<' => ('<', '>'),
                '"' => ('"', '"'),
                _ => return None,
            };
            let rest = l.strip_prefix(open)?;
            Some(rest[..rest.find(close)?].to_string())
        })
        .filter(|h| !h.contains(".."))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// gcc's flags: a shared object without the system's headers; the kernel's own choices
/// about aliasing and overflow; a call to a helper the header lacks is an error here,
/// never a symbol missing at load time.
const FLAGS: [&str; 10] = [
    "-O2",
    // __FILE__ (BUG()'s report) names the tree's file, not the scratch copy.
    "-fmacro-prefix-map=readahead.c=mm/readahead.c",
    "-g",
    "-shared",
    "-fPIC",
    "-nostdinc",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-Werror=implicit-function-declaration",
    "-Werror=incompatible-pointer-types",
];

/// The gcc command that compiles `source` (a copy of the tree's file in `dir`, beside
/// the empty headers in `dir/include`) into `out`.
fn gcc(dir: &Path, header: &Path, out: &Path) -> Cmd {
    Cmd::new("gcc")
        .dir(dir)
        .args(FLAGS)
        .arg("-isystem")
        .arg(gcc_include())
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-include")
        .arg(header)
        .arg("readahead.c")
        .arg("-o")
        .arg(out)
}

fn gcc_include() -> String {
    Cmd::new("gcc").arg("-print-file-name=include").read().map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Compiles `tree`'s mm/readahead.c ([`compile`]) with the members its pagemap.h adds to
/// `struct readahead_control`; `None` when the tree has no mm/readahead.c.
pub fn compile_tree(
    cache: &Cache,
    tree: &dyn crate::port::Files,
) -> Result<Option<std::result::Result<PathBuf, CompileError>>> {
    let Some(source) = tree.read(READAHEAD_C)? else { return Ok(None) };
    let extra = match rac_extra(tree.read(PAGEMAP_H)?.as_deref()) {
        Ok(extra) => extra,
        Err(why) => {
            let first_error = format!("{PAGEMAP_H}: {why}");
            return Ok(Some(Err(CompileError { log: first_error.clone(), first_error })));
        }
    };
    compile(cache, &source, &extra).map(Some)
}

/// Compiles `source` (the text of a tree's mm/readahead.c) into `hybrid/<key>.so` in the
/// cache, or finds it there, with `rac_extra` ([`rac_extra`]) appended to the header's
/// `struct readahead_control`; the key covers the source, the header and the extra
/// members. A failure gives the compiler's first error.
pub fn compile(cache: &Cache, source: &str, rac_extra: &str) -> Result<std::result::Result<PathBuf, CompileError>> {
    let dir = cache.dir("hybrid")?;
    let key = cache::key([source.as_bytes(), HEADER.as_bytes(), FLAGS.join(" ").as_bytes(), rac_extra.as_bytes()]);
    let so = dir.join(format!("{key}.so"));
    if so.is_file() {
        return Ok(Ok(so));
    }
    let work = tempfile::Builder::new().prefix("radiff-hybrid-").tempdir().map_err(|e| Error::io(&dir, e))?;
    let w = work.path();
    for h in includes(source) {
        // Quoted includes ("internal.h") are looked up beside the file first: both places.
        for p in [w.join("include").join(&h), w.join(&h)] {
            std::fs::create_dir_all(p.parent().unwrap()).map_err(|e| Error::io(&p, e))?;
            std::fs::write(&p, "").map_err(|e| Error::io(&p, e))?;
        }
    }
    let header = w.join("radiff_kernel.h");
    let text = if rac_extra.is_empty() {
        HEADER.to_string()
    } else {
        format!("#define RADIFF_RAC_EXTRA {rac_extra}\n{HEADER}")
    };
    std::fs::write(&header, text).map_err(|e| Error::io(&header, e))?;
    let copy = w.join("readahead.c");
    std::fs::write(&copy, source).map_err(|e| Error::io(&copy, e))?;
    let staged = w.join("out.so");
    let (status, output) = gcc(w, &header, &staged).output()?;
    if !status.success() {
        // The copy is the tree's file: name it as the tree does.
        let first = first_error(&output);
        let first = match first.strip_prefix("readahead.c:") {
            Some(rest) => format!("{READAHEAD_C}:{rest}"),
            None => first,
        };
        return Ok(Err(CompileError { first_error: first, log: output }));
    }
    let bytes = std::fs::read(&staged).map_err(|e| Error::io(&staged, e))?;
    cache::write_atomic(&so, &bytes)?;
    Ok(Ok(so))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_a_tree_adds_to_struct_readahead_control_is_copied_and_the_others_are_not() {
        let tree = "struct other {\n\tint x;\n};\nstruct readahead_control {\n\tstruct file *file;\n\tstruct address_space *mapping;\n\tstruct file_ra_state *ra;\n/* private: use the readahead_* accessors instead */\n\tpgoff_t _index;\n\tunsigned int _nr_pages;\n\tunsigned int _batch_count;\n\tbool dropbehind;\n\t/*\n\t * Set by page_cache_async_ra().\n\t */\n\tbool may_shrink;\n\tbool _workingset;\n\tunsigned long _pflags;\n};\n";
        assert_eq!(rac_extra(Some(tree)).unwrap(), "bool may_shrink;");
        let unpatched = tree.replace("\tbool may_shrink;\n", "");
        assert_eq!(rac_extra(Some(&unpatched)).unwrap(), "");
        assert_eq!(rac_extra(None).unwrap(), "");
        let nested = tree.replace("\tbool may_shrink;\n", "\tvoid (*hook)(int);\n");
        assert!(rac_extra(Some(&nested)).unwrap_err().contains("`void (*hook)(int)`"));
    }

    #[test]
    fn includes_are_the_headers_as_written_each_once() {
        let src = "#include <linux/mm.h>\n# include \"internal.h\"\n#include <linux/mm.h>\n#define X\n";
        assert_eq!(includes(src), ["internal.h", "linux/mm.h"]);
    }

    #[test]
    fn the_first_error_keeps_its_file_and_line() {
        let out = "readahead.c: In function 'f':\nreadahead.c:12:3: warning: x\nreadahead.c:40:9: error: 'struct readahead_control' has no member named 'may_shrink'\nreadahead.c:41:1: error: y\n";
        assert_eq!(
            first_error(out),
            "readahead.c:40:9: error: 'struct readahead_control' has no member named 'may_shrink'"
        );
    }
}
