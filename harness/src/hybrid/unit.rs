//! A translation unit of functions taken from a tree's file that cannot be compiled whole
//! (mm/filemap.c, fs/f2fs/data.c, fs/ext4/readpage.c): the functions the model calls, the file's static functions they call and
//! the file's macros they use, each under a `#line` of its place in the tree's file (so
//! gcc's errors and `BUG()` name the tree's lines), then an alias that exports each
//! function the file keeps `static`. Pure: the tree's text in, C out; nothing of the
//! kernel is kept, the text is read from the tree at run time (docs/hybrid.md).

use std::collections::{BTreeMap, BTreeSet};

use crate::port::{definitions, normalise};

/// The tree's file the fault path's functions are taken from.
pub const FILEMAP_C: &str = "mm/filemap.c";

/// The tree's file f2fs's `->readahead` and `->read_folio` are taken from.
pub const F2FS_DATA_C: &str = "fs/f2fs/data.c";

/// The tree's file ext4's `->readahead` and `->read_folio` are taken from.
pub const EXT4_READPAGE_C: &str = "fs/ext4/readpage.c";

/// The tree's file MADV_WILLNEED's `madvise_willneed()` is taken from.
pub const MADVISE_C: &str = "mm/madvise.c";

/// The tree's file `do_fault_around()` is taken from.
pub const MEMORY_C: &str = "mm/memory.c";

/// The entries the model calls through a shim of radiff's header (`RADIFF_SHIM_NAME`,
/// which takes the model's arguments and builds the tree's own struct from them: the model
/// cannot know its layout), exported as the shim where the tree's function has the type
/// the shim calls it with; each with the struct of the tree's file the shim fills.
pub const SHIMMED: [(&str, &str); 1] = [("madvise_willneed", "madvise_behavior")];

/// The functions of `file` the model calls as C: its entries in the model's table
/// (radiff_model::hybrid::functions::ENTRIES).
pub fn entries_of(file: &str) -> Vec<&'static str> {
    radiff_model::hybrid::functions::ENTRIES.iter().filter(|f| f.file == file).map(|f| f.name).collect()
}

/// The identifiers of `code` outside comments and literals, in order, each once.
fn identifiers(code: &str) -> Vec<String> {
    let code = normalise(code);
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        if c == b'"' || c == b'\'' {
            k += 1;
            while k < b.len() && b[k] != c {
                k += if b[k] == b'\\' { 2 } else { 1 };
            }
            k += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = k;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            let id = &code[start..k];
            if seen.insert(id.to_string()) {
                out.push(id.to_string());
            }
        } else if c.is_ascii_digit() {
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_' || b[k] == b'.') {
                k += 1;
            }
        } else {
            k += 1;
        }
    }
    out
}

/// The file's `#define`s in column 0, by name (the first of each), as (1-based line,
/// the lines with their continuations).
fn defines(lines: &[&str]) -> BTreeMap<String, (usize, String)> {
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let start = i;
        while lines[i].trim_end().ends_with('\\') && i + 1 < lines.len() {
            i += 1;
        }
        if let Some(rest) = lines[start].strip_prefix("#define ") {
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            out.entry(name).or_insert_with(|| (start + 1, lines[start..=i].join("\n")));
        }
        i += 1;
    }
    out
}

/// The file's `struct NAME {` and `enum NAME {` definitions in column 0, by name, as
/// (1-based line, the lines through the `};` that ends it).
fn types(lines: &[&str]) -> BTreeMap<String, (usize, String)> {
    let mut out = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("struct ").or_else(|| line.strip_prefix("enum ")) else { continue };
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if name.is_empty() || rest[name.len()..].trim() != "{" {
            continue;
        }
        if let Some(end) = lines[i..].iter().position(|l| l.starts_with("};")) {
            out.entry(name).or_insert_with(|| (i + 1, lines[i..=i + end].join("\n")));
        }
    }
    out
}

/// Whether radiff's header answers `name` itself (defines it as a macro, or declares or
/// defines a function of that name): the file's own is then not taken.
fn header_has(header: &str, name: &str) -> bool {
    let macro_def = format!("#define {name}");
    let call = format!(" {name}(");
    let star_call = format!("*{name}(");
    header.lines().any(|l| {
        l.strip_prefix(&macro_def).is_some_and(|r| r.starts_with([' ', '(', '\t']) || r.is_empty())
            || ((l.contains(&call) || l.contains(&star_call)) && !l.starts_with(['\t', ' ', '*', '/']))
    })
}

/// The unit of `entries` taken from `text` (the tree's `file`), compiled against `header`;
/// `Ok(None)` when the file defines none of them; `Err` (naming the file and line) when a
/// definition cannot be read.
pub fn extracted(file: &str, text: &str, entries: &[&str], header: &str) -> Result<Option<String>, String> {
    Ok(extract(file, text, entries, header)?.map(|u| u.text))
}

/// A unit taken from a tree's file: its text, and each function of the file it holds with
/// its first and last line (1-based) there.
pub struct Extracted {
    pub text: String,
    pub functions: Vec<(String, usize, usize)>,
}

/// Of `entries`, those whose unit (each taken alone) holds line `line` of the tree's
/// `file`: the entries an error of the compiler at that line keeps out.
pub fn entries_at<'e>(file: &str, text: &str, entries: &[&'e str], header: &str, line: usize) -> Vec<&'e str> {
    let holds = |e: &str| {
        extract(file, text, &[e], header)
            .ok()
            .flatten()
            .is_some_and(|u| u.functions.iter().any(|(_, first, last)| (*first..=*last).contains(&line)))
    };
    entries.iter().copied().filter(|e| holds(e)).collect()
}

/// [`extracted`], with the functions the unit holds.
pub fn extract(file: &str, text: &str, entries: &[&str], header: &str) -> Result<Option<Extracted>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let macros = defines(&lines);
    let structs = types(&lines);
    let read = |name: &str| definitions(text, name).map_err(|e| format!("{file}: {name}(): {e}"));
    // What the unit holds, by first line: (first line, text).
    let mut taken: BTreeMap<usize, String> = BTreeMap::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = Vec::new();
    let mut found = Vec::new();
    let mut functions = Vec::new();
    for e in entries {
        if !read(e)?.is_empty() {
            found.push(*e);
            todo.push(e.to_string());
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    // A shim fills the tree's struct: a file without it is an older signature, named at
    // the function's line by gcc (the unit's first error).
    let mut unit = format!("/* radiff: functions of the tree's {file}, taken at run time */\n");
    for (e, s) in SHIMMED.iter().filter(|(e, s)| found.contains(e) && !structs.contains_key(*s)) {
        let line = read(e)?.first().map_or(1, |(l, _)| *l);
        unit.push_str(&format!(
            "#line {line} \"{file}\"\n#error \"radiff's shim calls {e}() with the tree's struct {s}, which {file} does not define (another signature): {e}() stays the Rust port\"\n"
        ));
    }
    while let Some(name) = todo.pop() {
        if !done.insert(name.clone()) {
            continue;
        }
        let is_entry = found.contains(&name.as_str());
        // The tree's own struct or enum of that name (its layout is the tree's), unless
        // the header has one; a function of the same name is looked for as well.
        if let Some((line, def)) = structs.get(&name) {
            if !header.contains(&format!("struct {name} {{")) && !header.contains(&format!("enum {name} {{")) {
                taken.insert(*line, def.clone());
                todo.extend(identifiers(def).into_iter().filter(|i| !done.contains(i)));
            }
        }
        let body = if let Some((line, def)) = macros.get(&name).filter(|_| !is_entry) {
            if header_has(header, &name) {
                continue;
            }
            taken.insert(*line, def.clone());
            def.clone()
        } else {
            if !is_entry && (header_has(header, &name) || !text.contains(&format!("{name}("))) {
                continue;
            }
            let spans = read(&name)?;
            // The file's static functions only: any other it calls is the kernel's, which
            // the header answers (or gcc names it).
            let spans: Vec<(usize, usize)> = spans
                .into_iter()
                .filter(|(s, e)| is_entry || lines[s - 1..*e].iter().take(3).any(|l| l.contains("static")))
                .collect();
            if spans.is_empty() {
                continue;
            }
            let mut all = String::new();
            for (s, e) in spans {
                let def = lines[s - 1..e].join("\n");
                all.push_str(&def);
                all.push('\n');
                taken.insert(s, def);
                functions.push((name.clone(), s, e));
            }
            all
        };
        todo.extend(identifiers(&body).into_iter().filter(|i| !done.contains(i)));
    }
    for (line, def) in &taken {
        unit.push_str(&format!("#line {line} \"{file}\"\n{def}\n"));
    }
    // An option the header does not decide, tested in what was taken: gcc's error there.
    for (line, def) in &taken {
        unit.push_str(&super::configs::undecided(file, def, *line));
    }
    unit.push_str(&entry_lines(&found));
    Ok(Some(Extracted { text: unit, functions }))
}

/// The unit's exports of `entries` (the functions the model calls that it defines):
/// `radiff_entry_NAME`, the function's address where its type is the one the model calls
/// it with, NULL otherwise (the header's `RADIFF_ENTRY`), whatever the file made it
/// (static or not). A [`SHIMMED`] entry's export is its shim's (`RADIFF_SHIM_ENTRY`).
pub fn entry_lines(entries: &[&str]) -> String {
    let mut out = String::from("#line 1 \"radiff-entries.c\"\n");
    for e in entries {
        if SHIMMED.iter().any(|(s, _)| s == e) {
            out.push_str(&format!("RADIFF_SHIM_{e}\nRADIFF_SHIM_ENTRY({e});\n"));
        } else {
            out.push_str(&format!("RADIFF_ENTRY({e});\n"));
        }
    }
    out
}

/// Of `entries`, those `text` defines.
pub fn defined<'e>(text: &str, entries: &[&'e str]) -> Vec<&'e str> {
    entries.iter().copied().filter(|e| definitions(text, e).is_ok_and(|d| !d.is_empty())).collect()
}

/// The functions the tree's mm/readahead.c and mm/fadvise.c define that other functions
/// (or units) call before their definitions: the header declares them as the tree does.
pub const PROTOTYPED: [&str; 9] = [
    "page_cache_ra_unbounded",
    "page_cache_ra_order",
    "force_page_cache_ra",
    "page_cache_sync_ra",
    "page_cache_async_ra",
    "readahead_expand",
    "file_ra_state_init",
    "ksys_readahead",
    "generic_fadvise",
];

/// The head of each definition of `names` in `text` as a declaration on one line
/// (`port::normalise`d, comments out: `void page_cache_ra_order(struct readahead_control*ractl,
/// struct file_ra_state*ra);`), one after another.
pub fn prototypes(text: &str, names: &[&str]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for name in names {
        let Ok(spans) = definitions(text, name) else { continue };
        for (start, end) in spans {
            let def = lines[start - 1..end].join("\n");
            let Some(head) = def.split('{').next() else { continue };
            let head: String = normalise(head).split_whitespace().collect::<Vec<_>>().join(" ");
            if head.contains(&format!("{name}(")) && !head.starts_with("static") {
                out.push(format!("{head};"));
            }
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
#include <linux/mm.h>
#define LOTS  (100)
#define UNUSED 7
#define min(a, b) ((a) < (b) ? (a) : (b))

static int helper(int x)
{
\treturn x + LOTS; /* uses LOTS */
}

int exported(int x)
{
\treturn x;
}

static struct file *do_sync_mmap_readahead(struct vm_fault *vmf)
{
\tint n = helper(min(1, 2)) + exported(3);
\tconst char *s = \"UNUSED(\";
\treturn n ? vmf->vma->vm_file : 0;
}
";

    #[test]
    fn the_unit_holds_the_function_its_static_callees_and_macros_at_their_lines_and_an_export() {
        let header = "#define min(a, b) x\nint exported(int x);\n";
        let unit = extracted("mm/filemap.c", FILE, &entries_of(FILEMAP_C), header).unwrap().unwrap();
        assert!(unit.contains("#line 2 \"mm/filemap.c\"\n#define LOTS  (100)\n"), "{unit}");
        assert!(unit.contains("#line 6 \"mm/filemap.c\"\nstatic int helper(int x)\n"), "{unit}");
        assert!(unit.contains("#line 16 \"mm/filemap.c\"\nstatic struct file *do_sync_mmap_readahead("), "{unit}");
        // Not taken: a macro only a string names, the header's own macro, a function the
        // file exports (the kernel's: the header answers it), the include.
        for absent in ["UNUSED 7", "#define min", "int exported(int x)\n{", "#include"] {
            assert!(!unit.contains(absent), "{absent} in {unit}");
        }
        // The helper comes before its caller, as in the file.
        assert!(unit.find("helper(int x)").unwrap() < unit.find("do_sync_mmap_readahead(struct").unwrap());
        assert!(unit.ends_with("#line 1 \"radiff-entries.c\"\nRADIFF_ENTRY(do_sync_mmap_readahead);\n"), "{unit}");
        assert!(!unit.contains("RADIFF_ENTRY(do_async"), "only the functions the file defines");
    }

    #[test]
    fn an_error_in_a_function_only_one_entry_takes_is_that_entrys_and_one_in_a_shared_helper_is_both() {
        let file = format!(
            "{FILE}\nstatic int walk(int x)\n{{\n\treturn x * 2;\n}}\n\nint filemap_map_pages(struct vm_fault *vmf)\n{{\n\treturn walk(helper(1));\n}}\n"
        );
        let entries = entries_of(FILEMAP_C);
        let line_of = |needle: &str| file.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let at = |line| entries_at("mm/filemap.c", &file, &entries, "", line);
        assert_eq!(at(line_of("return walk(")), ["filemap_map_pages"]);
        assert_eq!(at(line_of("return x * 2;")), ["filemap_map_pages"], "walk()'s body");
        assert_eq!(at(line_of("return x + LOTS")), ["do_sync_mmap_readahead", "filemap_map_pages"], "helper()'s");
        assert!(at(line_of("#include")).is_empty());
        let unit = extract("mm/filemap.c", &file, &entries, "").unwrap().unwrap();
        let names: Vec<&str> = unit.functions.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(["helper", "walk", "do_sync_mmap_readahead", "filemap_map_pages"].iter().all(|n| names.contains(n)));
    }

    #[test]
    fn the_unit_takes_the_files_own_structs_and_enums_its_functions_use_but_not_the_headers() {
        let file = "\
enum lock_mode {
\tNO_LOCK,
\tREAD_LOCK,
};

struct madvise_behavior {
\tenum lock_mode lock_mode;
\tstruct folio *folio;
};

struct unused {
\tint x;
};

static long madvise_willneed(struct madvise_behavior *b)
{
\treturn b->lock_mode == READ_LOCK;
}
";
        let header = "struct folio {\n\tint i;\n};\n";
        let unit = extracted("mm/madvise.c", file, &entries_of(MADVISE_C), header).unwrap().unwrap();
        assert!(unit.contains("#line 1 \"mm/madvise.c\"\nenum lock_mode {\n"), "{unit}");
        assert!(unit.contains("#line 6 \"mm/madvise.c\"\nstruct madvise_behavior {\n"), "{unit}");
        assert!(!unit.contains("struct unused"), "{unit}");
        assert!(unit.ends_with("RADIFF_SHIM_madvise_willneed\nRADIFF_SHIM_ENTRY(madvise_willneed);\n"), "{unit}");
        // A struct the header defines is the header's, even where the file has its own.
        let file = format!("struct folio {{\n\tlong other;\n}};\n{file}");
        let unit = extracted("mm/madvise.c", &file, &entries_of(MADVISE_C), header).unwrap().unwrap();
        assert!(!unit.contains("long other"), "{unit}");
        assert!(!unit.contains("#error"), "{unit}");
    }

    #[test]
    fn a_shimmed_function_whose_file_lacks_the_shims_struct_is_an_error_at_its_line() {
        // An older madvise_willneed(), taking the VMA and range: no struct to fill.
        let file = "int x;\n\nstatic long madvise_willneed(struct vm_area_struct *vma, unsigned long start)\n{\n\treturn 0;\n}\n";
        let unit = extracted("mm/madvise.c", file, &entries_of(MADVISE_C), "").unwrap().unwrap();
        assert!(unit.contains("#line 3 \"mm/madvise.c\"\n#error \"radiff's shim calls madvise_willneed() with the tree's struct madvise_behavior, which mm/madvise.c does not define"), "{unit}");
    }

    #[test]
    fn a_file_without_the_functions_gives_no_unit_and_an_unbalanced_one_names_its_line() {
        assert_eq!(extracted("mm/filemap.c", "int x;\n", &entries_of(FILEMAP_C), ""), Ok(None));
        let cut = FILE.trim_end().trim_end_matches('}');
        let why = extracted("mm/filemap.c", cut, &entries_of(FILEMAP_C), "").unwrap_err();
        assert!(why.starts_with("mm/filemap.c: do_sync_mmap_readahead(): the definition at line 16"), "{why}");
    }

    #[test]
    fn a_prototype_is_the_head_of_the_trees_definition_on_one_line() {
        let text = "/* x */\nvoid page_cache_ra_order(struct readahead_control *ractl,\n\t\tstruct file_ra_state *ra, unsigned int new_order)\n{\n\tint x;\n}\nEXPORT_SYMBOL(page_cache_ra_order);\nstatic void page_cache_sync_ra(int a)\n{\n}\n";
        assert_eq!(
            prototypes(text, &PROTOTYPED),
            "void page_cache_ra_order(struct readahead_control*ractl,struct file_ra_state*ra,unsigned int new_order);"
        );
        assert_eq!(defined(text, &["page_cache_ra_order", "readahead_expand"]), ["page_cache_ra_order"]);
    }

    #[test]
    fn identifiers_skip_comments_literals_and_numbers() {
        assert_eq!(identifiers("a(b) /* c */ \"d\" 'e' 0x1f + f_2;"), ["a", "b", "f_2"]);
    }
}
