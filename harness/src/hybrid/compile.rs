//! Compiling a tree's mm/readahead.c and mm/fadvise.c, and the functions the hybrid takes from
//! its mm/filemap.c (the fault path's readahead), fs/f2fs/data.c and fs/ext4/readpage.c (the
//! file systems' `->readahead`),
//! into one shared object with radiff's kernel header, cached under `hybrid/<key>.so`
//! (docs/hybrid.md).

use std::path::{Path, PathBuf};

use crate::cache::{self, Cache};
use crate::error::{Error, Result};
use crate::process::Cmd;

pub use super::unit::{EXT4_READPAGE_C, F2FS_DATA_C, FILEMAP_C, MADVISE_C, MEMORY_C};

/// Where radiff's header is kept, from the repository's root.
pub const HEADER_PATH: &str = "model/c/radiff_kernel.h";

/// radiff's own header of the kernel API mm/readahead.c uses (model/c/radiff_kernel.h).
pub const HEADER: &str = include_str!("../../../model/c/radiff_kernel.h");

/// The file of the tree the hybrid compiles, without which there is no hybrid.
pub const READAHEAD_C: &str = "mm/readahead.c";

/// The file whose `generic_fadvise()` runs as C beside mm/readahead.c when it compiles
/// (when it does not, that function stays the Rust port).
pub const FADVISE_C: &str = "mm/fadvise.c";

/// The tree's files the hybrid compiles: a patched tree copies each (`PatchedFiles`'s
/// `also`), so every read sees the same tree.
pub const SOURCES: [&str; 7] = [READAHEAD_C, FADVISE_C, FILEMAP_C, F2FS_DATA_C, EXT4_READPAGE_C, MADVISE_C, MEMORY_C];

/// A file of the tree whose unit the object may be made without: when it does not compile
/// (or link), its functions stay the Rust port and the object is made of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The tree's file.
    pub file: &'static str,
    /// Its name in the scratch folder.
    scratch: &'static str,
    /// The `-D` it is compiled with (radiff's header declares the runtime elsewhere).
    define: &'static str,
    /// Compiled whole (mm/fadvise.c), or the functions the model calls taken from it with
    /// what they use ([`super::unit::extracted`]).
    pub whole: bool,
}

/// The optional units, in the object's order.
pub const OPTIONAL: [Unit; 6] = [
    Unit { file: FADVISE_C, scratch: "fadvise.c", define: "RADIFF_UNIT_FADVISE", whole: true },
    Unit { file: FILEMAP_C, scratch: "filemap.c", define: "RADIFF_UNIT_FILEMAP", whole: false },
    Unit { file: F2FS_DATA_C, scratch: "data.c", define: "RADIFF_UNIT_F2FS", whole: false },
    Unit { file: EXT4_READPAGE_C, scratch: "readpage.c", define: "RADIFF_UNIT_EXT4", whole: false },
    Unit { file: MADVISE_C, scratch: "madvise.c", define: "RADIFF_UNIT_MADVISE", whole: false },
    Unit { file: MEMORY_C, scratch: "memory.c", define: "RADIFF_UNIT_MEMORY", whole: false },
];

/// For each of [`OPTIONAL`]'s units, in its order.
pub type PerUnit<T> = [T; OPTIONAL.len()];

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

/// The tree's header whose `struct file_ra_state` a patch may grow.
pub const FS_H: &str = "include/linux/fs.h";

/// The members of `struct file_ra_state` the model holds (the header's `struct radiff_ra`).
pub const RA_MODEL_MEMBERS: [&str; 7] = ["start", "size", "async_size", "ra_pages", "order", "mmap_miss", "prev_pos"];

/// What the header takes from the tree's own headers: the members a tree adds to `struct
/// readahead_control` (the header's `RADIFF_RAC_EXTRA`, `bool may_shrink;`), and the tree's
/// whole `struct file_ra_state` (`RADIFF_RA_MEMBERS`), whatever its members' types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extras {
    /// `struct readahead_control`'s added members, from the tree's include/linux/pagemap.h.
    pub rac: String,
    /// `struct file_ra_state`'s members, from the tree's include/linux/fs.h, one after
    /// another; `None` when the tree does not define it there (radiff's own then).
    pub ra: Option<String>,
    /// Which of [`RA_MODEL_MEMBERS`] the tree's `struct file_ra_state` has (all of them
    /// when it is radiff's own).
    pub ra_names: Vec<String>,
}

/// No member added to `struct readahead_control`, and radiff's own `struct file_ra_state`.
impl Default for Extras {
    fn default() -> Self {
        Extras::with(String::new(), None)
    }
}

impl Extras {
    /// The extras of `tree`, or why it has members the hybrid cannot copy (naming the header).
    pub fn of(tree: &dyn crate::port::Files) -> Result<std::result::Result<Extras, String>> {
        let rac = extra("readahead_control", tree.read(PAGEMAP_H)?.as_deref()).map_err(|w| format!("{PAGEMAP_H}: {w}"));
        let ra = tree.read(FS_H)?.map(|t| members(&t, "file_ra_state")).transpose().map(Option::flatten);
        let ra = ra.map_err(|w| format!("{FS_H}: {w}"));
        Ok(rac.and_then(|rac| ra.map(|ra| Extras::with(rac, ra))))
    }

    /// The extras with `rac`'s added members and the tree's `struct file_ra_state`
    /// members as (name, declaration), `None` for radiff's own.
    pub fn with(rac: String, ra: Option<Vec<(String, String)>>) -> Extras {
        let ra_names = match &ra {
            Some(m) => {
                RA_MODEL_MEMBERS.iter().filter(|n| m.iter().any(|(t, _)| t == *n)).map(|n| n.to_string()).collect()
            }
            None => RA_MODEL_MEMBERS.iter().map(|n| n.to_string()).collect(),
        };
        let ra = ra.map(|m| m.iter().map(|(_, d)| format!("{d};")).collect::<Vec<_>>().join(" "));
        Extras { rac, ra, ra_names }
    }

    /// The header with these members in its two structs.
    fn header(&self) -> String {
        let mut text = String::new();
        if !self.rac.is_empty() {
            text.push_str(&format!("#define RADIFF_RAC_EXTRA {}\n", self.rac));
        }
        if let Some(ra) = &self.ra {
            text.push_str(&format!("#define RADIFF_RA_MEMBERS {ra}\n"));
        }
        text + HEADER
    }

    /// `radiff_ra_load()` and `radiff_ra_store()` for the tree's `struct file_ra_state`:
    /// each member the model holds that the tree's struct has, converted by C's rules; the
    /// others load as 0 and are not stored. Appended to mm/readahead.c's unit.
    pub fn ra_accessors(&self) -> String {
        let names = &self.ra_names;
        let load: String = names.iter().map(|n| format!("\tm->{n} = ra->{n};\n")).collect();
        let store: String = names.iter().map(|n| format!("\tra->{n} = m->{n};\n")).collect();
        format!(
            "#line 1 \"radiff-ra.c\"\nvoid radiff_ra_load(const struct file_ra_state *ra, struct radiff_ra *m)\n{{\n\t*m = (struct radiff_ra){{ 0 }};\n{load}}}\nvoid radiff_ra_store(struct file_ra_state *ra, const struct radiff_ra *m)\n{{\n{store}}}\n"
        )
    }
}

/// The declarations of the members `tree_header` (the tree's header that defines `struct
/// name`) gives the struct beyond radiff's header's, one after another (`bool may_shrink;`);
/// empty when the tree adds none or has no such header. A member radiff's header has
/// that the tree declares otherwise (another type) is an error: the C would be compiled
/// with radiff's type, not the tree's.
pub fn extra(name: &str, tree_header: Option<&str>) -> std::result::Result<String, String> {
    let ours = members(HEADER, name)?.unwrap_or_else(|| panic!("radiff's header defines struct {name}"));
    let Some(theirs) = tree_header.map(|t| members(t, name)).transpose()?.flatten() else {
        return Ok(String::new());
    };
    let mut added = Vec::new();
    for (member, decl) in &theirs {
        match ours.iter().find(|(o, _)| o == member) {
            None => added.push(format!("{decl};")),
            Some((_, mine)) if mine != decl => {
                return Err(format!(
                    "struct {name} declares `{decl}` where radiff's header ({HEADER_PATH}) has `{mine}`: the hybrid cannot follow a member whose type changed"
                ))
            }
            Some(_) => {}
        }
    }
    Ok(added.join(" "))
}

/// Where a compile failed: the compiler's first error, as `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub first_error: String,
    pub log: String,
}

/// The first `error:` line of gcc's output (its file and line kept), else the linker's
/// first undefined reference, else the output's first line.
pub fn first_error(output: &str) -> String {
    output
        .lines()
        .find(|l| l.contains(": error: ") && !l.starts_with("collect2:"))
        .or_else(|| output.lines().find(|l| l.contains("undefined reference to")))
        .or_else(|| output.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("(no output)")
        .trim()
        .to_string()
}

/// The headers `source` includes, as written (`linux/pagemap.h`, `internal.h`), each once;
/// or the first that names a file outside the folder it is looked up in (an absolute path,
/// `..`), with its line number and why: the compile makes an empty stand-in for each
/// header, and a stand-in is never made outside radiff's scratch folder.
pub fn includes(source: &str) -> std::result::Result<Vec<String>, (usize, String)> {
    let mut out = Vec::new();
    for (i, l) in source.lines().enumerate() {
        let Some(l) = l.trim_start().strip_prefix('#').and_then(|l| l.trim_start().strip_prefix("include")) else {
            continue;
        };
        let l = l.trim();
        let (open, close) = match l.chars().next() {
            Some('<') => ('<', '>'),
            Some('"') => ('"', '"'),
            _ => continue,
        };
        let Some(header) = l.strip_prefix(open).and_then(|rest| Some(&rest[..rest.find(close)?])) else { continue };
        crate::files::below(header).map_err(|why| (i + 1, format!("`#include {open}{header}{close}`: {why}")))?;
        out.push(header.to_string());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// gcc's flags for each unit: position-independent code without the system's headers;
/// the kernel's own choices about aliasing and overflow; a call to a helper the header
/// lacks is an error here, never a symbol missing at load time.
const FLAGS: [&str; 13] = [
    "-O2",
    // radiff_current and the header's other __thread variables in the static TLS block:
    // no __tls_get_addr() call at each use (the object is loaded once, by a worker).
    "-ftls-model=initial-exec",
    // __FILE__ (BUG()'s report) names the tree's file, not the scratch copy.
    "-fmacro-prefix-map=readahead.c=mm/readahead.c",
    "-fmacro-prefix-map=fadvise.c=mm/fadvise.c",
    "-fmacro-prefix-map=filemap.c=mm/filemap.c",
    "-g",
    "-c",
    "-fPIC",
    "-nostdinc",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-Werror=implicit-function-declaration",
    "-Werror=incompatible-pointer-types",
];

/// gcc's flags for the link of the units into the shared object. `-z defs`: a function
/// the tree's C declares and no unit defines fails here, naming it, not at dlopen().
const LINK_FLAGS: [&str; 2] = ["-shared", "-Wl,-z,defs"];

/// The gcc command that compiles `unit` (a copy of the tree's file in `dir`, beside the
/// empty headers in `dir/include`) into the object `out`; `defines` are `-D` macros.
fn gcc(dir: &Path, header: &Path, unit: &str, defines: &[&str], out: &str) -> Cmd {
    Cmd::new("gcc")
        .dir(dir)
        .args(FLAGS)
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg("-isystem")
        .arg(gcc_include())
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-include")
        .arg(header)
        .arg(unit)
        .arg("-o")
        .arg(out)
}

fn gcc_include() -> String {
    Cmd::new("gcc").arg("-print-file-name=include").read().map(|s| s.trim().to_string()).unwrap_or_default()
}

/// C that fails to compile, naming the member, where gcc lays out one of `layout`'s
/// members (radiff_model::hybrid::mirror_layout: struct, member, offset, size) elsewhere
/// than the Rust mirror does; `(end)` is where the struct's own members end (its size
/// with no member a tree adds).
pub fn layout_asserts(layout: &[(&str, &str, usize, usize)]) -> String {
    let mut c = String::new();
    for (s, m, offset, size) in layout {
        if *m == "(end)" {
            c.push_str(&format!(
                "_Static_assert(sizeof(struct {s}) == {offset}, \"struct {s} ends at {offset} in the Rust mirror\");\n"
            ));
        } else {
            c.push_str(&format!("_Static_assert(__builtin_offsetof(struct {s}, {m}) == {offset}, \"struct {s}.{m} is at {offset} in the Rust mirror\");\n"));
            // Size 0: a member whose size is the tree's (struct file's f_ra).
            if *size > 0 {
                c.push_str(&format!("_Static_assert(sizeof(((struct {s} *)0)->{m}) == {size}, \"struct {s}.{m} has {size} bytes in the Rust mirror\");\n"));
            }
        }
    }
    c
}

/// Compiles `unit` (C) against radiff's header as the hybrid's units are compiled; gcc's
/// first error where it does not compile.
pub fn check_against_header(unit: &str) -> Result<std::result::Result<(), String>> {
    check_against_header_as(unit, &[])
}

/// [`check_against_header`] with the header's sections of `defines` (`RADIFF_UNIT_F2FS`, ...).
pub fn check_against_header_as(unit: &str, defines: &[&str]) -> Result<std::result::Result<(), String>> {
    let work = tempfile::Builder::new().prefix("radiff-layout-").tempdir().map_err(|e| Error::io("/tmp", e))?;
    let w = work.path();
    let header = w.join("radiff_kernel.h");
    for (p, text) in [(&header, HEADER), (&w.join("layout.c"), unit)] {
        std::fs::write(p, text).map_err(|e| Error::io(p, e))?;
    }
    std::fs::create_dir_all(w.join("include")).map_err(|e| Error::io(w, e))?;
    let (status, output) = gcc(w, &header, "layout.c", defines, "layout.o").output()?;
    Ok(if status.success() { Ok(()) } else { Err(first_error(&output)) })
}

/// The texts of the tree's files the hybrid compiles.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// mm/readahead.c.
    pub readahead: String,
    /// Each of [`OPTIONAL`]'s units, when the tree has it: the file (mm/fadvise.c), or the
    /// unit radiff takes from it ([`super::unit::extracted`]) when the tree defines the
    /// functions the model calls.
    pub optional: PerUnit<Option<String>>,
    /// The tree's own miss walks for mm/readahead.c's unit ([`miss_walks`]), when taken.
    pub walks: Option<String>,
}

/// A compiled object: its path, and why each of [`OPTIONAL`]'s units that failed is not in
/// it (the compiler's first error; its functions then stay the Rust port).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub so: PathBuf,
    pub failed: PerUnit<Option<CompileError>>,
    /// Functions left out of a unit whose other entries compiled without them.
    pub dropped: Vec<Dropped>,
    /// Whether mm/readahead.c's unit has the tree's own [`MISS_WALKS`] (else they are the
    /// port's).
    pub walks: bool,
}

/// Functions of a tree's file left out of its unit (they stay the Rust port) because the
/// compiler's first error was in them: the entries whose unit holds the line, and the
/// static functions only they call; the file's other entries run as C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub file: &'static str,
    /// The entries first, then the static functions.
    pub functions: Vec<String>,
    pub error: CompileError,
}

/// The line of `file` a compiler's first error names (`mm/filemap.c:3481:36: error: ...`).
fn error_line(first_error: &str, file: &str) -> Option<usize> {
    let rest = first_error.strip_prefix(file)?.strip_prefix(':')?;
    rest.split(':').next()?.parse().ok()
}

impl Compiled {
    /// The units left out, by tree file, with why.
    pub fn left_out(&self) -> Vec<(&'static str, CompileError)> {
        OPTIONAL.iter().zip(&self.failed).filter_map(|(u, e)| Some((u.file, e.clone()?))).collect()
    }
}

/// Compiles `tree`'s mm/readahead.c and each of [`OPTIONAL`]'s units ([`compile`]), with
/// the members its headers add to `struct readahead_control` and `struct file_ra_state`;
/// `None` when the tree has no mm/readahead.c.
pub fn compile_tree(
    cache: &Cache,
    tree: &dyn crate::port::Files,
) -> Result<Option<std::result::Result<Compiled, CompileError>>> {
    let Some(readahead) = tree.read(READAHEAD_C)? else { return Ok(None) };
    // An option the header does not decide, tested in a file compiled whole: gcc's error
    // at its line (found once, whatever the retries below leave out).
    let readahead = format!("{readahead}{}", super::configs::undecided(READAHEAD_C, &readahead, 1));
    let extras = match Extras::of(tree)? {
        Ok(extras) => extras,
        Err(first_error) => return Ok(Some(Err(CompileError { log: first_error.clone(), first_error }))),
    };
    let mut files = PerUnit::<Option<String>>::default();
    for (u, text) in OPTIONAL.iter().zip(files.iter_mut()) {
        *text = tree.read(u.file)?.map(|t| match u.whole {
            true => format!("{t}{}", super::configs::undecided(u.file, &t, 1)),
            false => t,
        });
    }
    let mut entries = OPTIONAL.map(|u| super::unit::entries_of(u.file));
    let mut walks = miss_walks(tree)?;
    let mut dropped = Vec::new();
    loop {
        let mut optional = PerUnit::<Option<String>>::default();
        for ((u, file), (text, entries)) in OPTIONAL.iter().zip(&files).zip(optional.iter_mut().zip(&entries)) {
            *text = match file {
                None => None,
                Some(file) if u.whole => Some(file.clone()),
                // The file is there but the functions the model calls are elsewhere in the
                // tree (Debian 6.12's ext4_readahead() is in fs/ext4/inode.c): its changed
                // functions would never be reached as C, so the unit says why it is left out.
                Some(file) if super::unit::defined(file, &super::unit::entries_of(u.file)).is_empty() => {
                    Some(elsewhere(u.file))
                }
                Some(file) => match super::unit::extracted(u.file, file, entries, HEADER) {
                    Ok(unit) => unit,
                    // gcc reports it as the unit's first error.
                    Err(why) => Some(format!("#error \"{}\"\n", why.replace('"', "'"))),
                },
            };
        }
        let sources = Sources { readahead: readahead.clone(), optional, walks: walks.clone() };
        let mut compiled = match compile(cache, &sources, &extras)? {
            Ok(c) => c,
            // The tree's miss walks do not compile: mm/readahead.c's calls go to the port's.
            Err(e) if walks.is_some() && error_line(&e.first_error, FILEMAP_C).is_some() => {
                let functions = MISS_WALKS.map(String::from).to_vec();
                dropped.push(Dropped { file: FILEMAP_C, functions, error: e });
                walks = None;
                continue;
            }
            Err(e) => return Ok(Some(Err(e))),
        };
        let mut again = false;
        for ((u, file), (error, entries)) in
            OPTIONAL.iter().zip(&files).zip(compiled.failed.iter().zip(entries.iter_mut()))
        {
            if let (false, Some(file), Some(error)) = (u.whole, file, error) {
                if let Some(d) = drop_failing(u.file, file, entries, error) {
                    dropped.push(d);
                    again = true;
                }
            }
        }
        if !again {
            compiled.dropped = dropped;
            compiled.walks = walks.is_some();
            return Ok(Some(Ok(compiled)));
        }
    }
}

/// mm/readahead.c's unit: the tree's file, its miss walks when taken, the converters of its
/// struct file_ra_state and the `exports` of the functions the model calls.
fn readahead_unit(sources: &Sources, extras: &Extras, exports: &str) -> String {
    let walks = sources.walks.as_deref().unwrap_or("");
    format!("{}\n{walks}{}{exports}", sources.readahead, extras.ra_accessors())
}

/// mm/filemap.c's walks for the next and the previous page the cache misses, which
/// mm/readahead.c calls.
pub const MISS_WALKS: [&str; 2] = ["page_cache_next_miss", "page_cache_prev_miss"];

/// The tree's own [`MISS_WALKS`], each under a `#line` of its place in its mm/filemap.c,
/// for mm/readahead.c's unit (compiled with `RADIFF_TREE_MISS_WALKS`, the header then
/// declaring them instead of answering them from the model); `None` when the tree does
/// not define each once there.
pub fn miss_walks(tree: &dyn crate::port::Files) -> Result<Option<String>> {
    let Some(text) = tree.read(FILEMAP_C)? else { return Ok(None) };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for name in MISS_WALKS {
        let Ok(spans) = crate::port::definitions(&text, name) else { return Ok(None) };
        let [(first, last)] = spans[..] else { return Ok(None) };
        let def = lines[first - 1..last].join("\n");
        out.push_str(&format!("#line {first} \"{FILEMAP_C}\"\n{def}\n"));
        out.push_str(&super::configs::undecided(FILEMAP_C, &def, first));
    }
    Ok(Some(out))
}

/// The unit of a tree's `file` that defines none of the functions the model calls there:
/// gcc's error at its first line, naming them.
fn elsewhere(file: &str) -> String {
    let names: Vec<String> = super::unit::entries_of(file).iter().map(|n| format!("{n}()")).collect();
    format!(
        "#line 1 \"{file}\"\n#error \"{file} of the tree defines none of {}, which the model calls as C (the tree has them in another file, which radiff does not take): the file's functions stay the Rust port\"\n",
        names.join(", ")
    )
}

/// When `error` lies in the functions some but not all of `entries` take from `text` (the
/// tree's `file`), those entries leave `entries`, and what they took alone is returned.
fn drop_failing(
    file: &'static str,
    text: &str,
    entries: &mut Vec<&'static str>,
    error: &CompileError,
) -> Option<Dropped> {
    let line = error_line(&error.first_error, file)?;
    let found = super::unit::defined(text, entries);
    let failing = super::unit::entries_at(file, text, &found, HEADER, line);
    if failing.is_empty() || failing.len() == found.len() {
        return None;
    }
    let names = |entries: &[&str]| -> Vec<String> {
        let unit = super::unit::extract(file, text, entries, HEADER).ok().flatten();
        unit.map(|u| u.functions.into_iter().map(|(name, _, _)| name).collect()).unwrap_or_default()
    };
    let before = names(&found);
    entries.retain(|e| !failing.contains(e));
    let after = names(entries);
    let mut functions: Vec<String> = failing.iter().map(|e| e.to_string()).collect();
    for name in before {
        if !after.contains(&name) && !functions.contains(&name) {
            functions.push(name);
        }
    }
    Some(Dropped { file, functions, error: error.clone() })
}

/// The compiler's first error in `output`, its scratch file named as the tree names it
/// (`fadvise.c:12:3: ...` as `mm/fadvise.c:12:3: ...`).
fn tree_error(output: String) -> CompileError {
    let first = first_error(&output);
    let first = SOURCES
        .iter()
        .find_map(|path| {
            let local = path.rsplit('/').next().unwrap_or(path);
            first.strip_prefix(&format!("{local}:")).map(|rest| format!("{path}:{rest}"))
        })
        .unwrap_or(first);
    CompileError { first_error: first, log: output }
}

/// Where the cache keeps an optional unit's failure beside the object made without it.
fn error_path(so: &Path, unit: &str) -> PathBuf {
    so.with_extension(format!("{}-error", unit.trim_end_matches(".c")))
}

/// The header's text for `sources`: the tree's members (`extras`) and the tree's own
/// declarations of the functions its whole files call before defining them.
fn header_for(sources: &Sources, extras: &Extras) -> String {
    let mut protos = super::unit::prototypes(&sources.readahead, &super::unit::PROTOTYPED);
    for (u, t) in OPTIONAL.iter().zip(&sources.optional) {
        if let (true, Some(t)) = (u.whole, t) {
            let more = super::unit::prototypes(t, &super::unit::PROTOTYPED);
            protos = format!("{protos} {more}").trim().to_string();
        }
    }
    if protos.is_empty() {
        extras.header()
    } else {
        format!("#define RADIFF_TREE_PROTOTYPES {protos}\n{}", extras.header())
    }
}

/// Compiles `sources` into `hybrid/<key>.so` in the cache, or finds it there, with
/// `extras` ([`Extras`]) appended to the header's structs; the key covers the sources,
/// the header and the extra members. mm/readahead.c's failure is the object's (`Err`, the
/// compiler's first error); an optional unit's leaves that unit out ([`Compiled::failed`]).
pub fn compile(
    cache: &Cache,
    sources: &Sources,
    extras: &Extras,
) -> Result<std::result::Result<Compiled, CompileError>> {
    let dir = cache.dir("hybrid")?;
    let header_text = header_for(sources, extras);
    let flags = format!("{} {}", FLAGS.join(" "), LINK_FLAGS.join(" "));
    let mut parts: Vec<&[u8]> = vec![sources.readahead.as_bytes(), sources.walks.as_deref().unwrap_or("").as_bytes()];
    parts.extend(sources.optional.iter().map(|t| t.as_deref().map_or(b"(none)".as_slice(), str::as_bytes)));
    parts.extend([header_text.as_bytes(), flags.as_bytes()]);
    let key = cache::key(parts);
    let so = dir.join(format!("{key}.so"));
    let compiled =
        |failed: PerUnit<Option<CompileError>>| Compiled { so: so.clone(), failed, dropped: Vec::new(), walks: false };
    if so.is_file() {
        let failed = OPTIONAL.map(|u| crate::files::read_text(&error_path(&so, u.scratch)).ok().map(tree_error));
        return Ok(Ok(compiled(failed)));
    }
    let work = tempfile::Builder::new().prefix("radiff-hybrid-").tempdir().map_err(|e| Error::io(&dir, e))?;
    let w = work.path();
    let write = |p: &Path, text: &str| -> Result<()> {
        std::fs::create_dir_all(p.parent().unwrap()).map_err(|e| Error::io(p, e))?;
        std::fs::write(p, text).map_err(|e| Error::io(p, e))
    };
    // mm/readahead.c's unit also holds the converters of the tree's struct file_ra_state;
    // a unit compiled whole, the exports of the functions the model calls that it defines
    // (an extracted unit has them already).
    let exports = |file: &str, text: &str| {
        let entries = super::unit::entries_of(file);
        super::unit::entry_lines(&super::unit::defined(text, &entries))
    };
    let readahead = readahead_unit(sources, extras, &exports(READAHEAD_C, &sources.readahead));
    let whole: Vec<Option<String>> = OPTIONAL
        .iter()
        .zip(&sources.optional)
        .map(|(u, t)| t.as_ref().map(|t| if u.whole { format!("{t}\n{}", exports(u.file, t)) } else { t.clone() }))
        .collect();
    let mut units = vec![(READAHEAD_C, "readahead.c", Some(&readahead))];
    units.extend(OPTIONAL.iter().zip(&whole).map(|(u, t)| (u.file, u.scratch, t.as_ref())));
    // Every unit's headers checked before a byte is written.
    let mut headers = Vec::new();
    for (tree_file, _, text) in &units {
        let Some(text) = text else { continue };
        headers.push(includes(text).map_err(|(line, why)| {
            Error::input(
                tree_file,
                line,
                format!("{why}: radiff refuses a header outside the tree (nothing was written; drop or fix the line)"),
            )
        })?);
    }
    for ((_, scratch, text), headers) in units.iter().filter(|(_, _, t)| t.is_some()).zip(headers) {
        let Some(text) = text else { continue };
        for h in headers {
            // Quoted includes ("internal.h") are looked up beside the file first: both places.
            write(&w.join("include").join(&h), "")?;
            write(&w.join(&h), "")?;
        }
        write(&w.join(scratch), text)?;
    }
    let header = w.join("radiff_kernel.h");
    write(&header, &header_text)?;
    let walks: &[&str] = if sources.walks.is_some() { &["RADIFF_TREE_MISS_WALKS"] } else { &[] };
    let (status, output) = gcc(w, &header, "readahead.c", walks, "readahead.o").output()?;
    if !status.success() {
        return Ok(Err(tree_error(output)));
    }
    let object = |unit: &str| unit.replace(".c", ".o");
    let mut failed = PerUnit::<Option<CompileError>>::default();
    for ((u, text), error) in OPTIONAL.iter().zip(&sources.optional).zip(failed.iter_mut()) {
        if text.is_some() {
            let (status, output) = gcc(w, &header, u.scratch, &[u.define], &object(u.scratch)).output()?;
            if !status.success() {
                *error = Some(tree_error(output));
            }
        }
    }
    let link = |with: &[bool]| {
        let mut objects = vec!["readahead.o".to_string()];
        objects.extend(OPTIONAL.iter().zip(with).filter(|(_, w)| **w).map(|(u, _)| object(u.scratch)));
        Cmd::new("gcc").dir(w).args(LINK_FLAGS).args(&objects).arg("-o").arg("out.so").output()
    };
    let compiled_ok: Vec<bool> =
        sources.optional.iter().zip(&failed).map(|(t, e)| t.is_some() && e.is_none()).collect();
    let (mut status, mut output) = link(&compiled_ok)?;
    if !status.success() && compiled_ok.iter().any(|c| *c) {
        // They did not link together: each optional unit, in order, that links with
        // mm/readahead.c and the units kept before it is kept (mm/madvise.c's calls
        // mm/fadvise.c's vfs_fadvise()), the others are left out, saying why.
        let mut keep = vec![false; OPTIONAL.len()];
        for i in 0..OPTIONAL.len() {
            if compiled_ok[i] {
                let mut only = keep.clone();
                only[i] = true;
                let (status, output) = link(&only)?;
                if status.success() {
                    keep[i] = true;
                } else {
                    failed[i] = Some(tree_error(output));
                }
            }
        }
        (status, output) = link(&keep)?;
    }
    if !status.success() {
        return Ok(Err(tree_error(output)));
    }
    let staged = w.join("out.so");
    let bytes = std::fs::read(&staged).map_err(|e| Error::io(&staged, e))?;
    for (u, e) in OPTIONAL.iter().zip(&failed) {
        if let Some(e) = e {
            cache::write_atomic(&error_path(&so, u.scratch), e.log.as_bytes())?;
        }
    }
    cache::write_atomic(&so, &bytes)?;
    Ok(Ok(compiled(failed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_a_tree_adds_to_struct_readahead_control_is_copied_and_the_others_are_not() {
        let tree = "struct other {\n\tint x;\n};\nstruct readahead_control {\n\tstruct file *file;\n\tstruct address_space *mapping;\n\tstruct file_ra_state *ra;\n/* private: use the readahead_* accessors instead */\n\tpgoff_t _index;\n\tunsigned int _nr_pages;\n\tunsigned int _batch_count;\n\tbool dropbehind;\n\t/*\n\t * Set by page_cache_async_ra().\n\t */\n\tbool may_shrink;\n\tbool _workingset;\n\tunsigned long _pflags;\n};\n";
        let rac = |t: Option<&str>| extra("readahead_control", t);
        assert_eq!(rac(Some(tree)).unwrap(), "bool may_shrink;");
        let unpatched = tree.replace("\tbool may_shrink;\n", "");
        assert_eq!(rac(Some(&unpatched)).unwrap(), "");
        assert_eq!(rac(None).unwrap(), "");
        let nested = tree.replace("\tbool may_shrink;\n", "\tvoid (*hook)(int);\n");
        assert!(rac(Some(&nested)).unwrap_err().contains("`void (*hook)(int)`"));
    }

    #[test]
    fn the_trees_struct_file_ra_state_is_the_headers_whatever_its_members_types_and_the_converters_follow_it() {
        // 6.12's: `unsigned int mmap_miss`, no `order`, a comment; and a member a patch adds.
        let tree = "struct file_ra_state {\n\tpgoff_t start;\n\tunsigned int size;\n\tunsigned int async_size;\n\tunsigned int ra_pages;\n\tunsigned int mmap_miss;\t/* Cache miss stat for mmap accesses */\n\tloff_t prev_pos;\n\tunsigned int nr_async;\n};\n";
        let e = Extras::with(String::new(), members(tree, "file_ra_state").unwrap());
        assert_eq!(
            e.ra.as_deref(),
            Some("pgoff_t start; unsigned int size; unsigned int async_size; unsigned int ra_pages; unsigned int mmap_miss; loff_t prev_pos; unsigned int nr_async;")
        );
        assert_eq!(e.ra_names, ["start", "size", "async_size", "ra_pages", "mmap_miss", "prev_pos"]);
        assert!(e.header().starts_with("#define RADIFF_RA_MEMBERS pgoff_t start;"));
        let c = e.ra_accessors();
        assert!(
            c.contains("\tm->mmap_miss = ra->mmap_miss;\n") && c.contains("\tra->prev_pos = m->prev_pos;\n"),
            "{c}"
        );
        assert!(!c.contains("order") && !c.contains("nr_async"), "{c}");
        // A tree without the header: radiff's struct, every member converted.
        let own = Extras::default().ra_accessors();
        assert!(RA_MODEL_MEMBERS.iter().all(|n| own.contains(&format!("m->{n} = ra->{n};"))), "{own}");
        let nested = tree.replace("\tunsigned int nr_async;\n", "\tstruct { int a; } s;\n");
        assert!(members(&nested, "file_ra_state").is_err());
    }

    #[test]
    fn the_rust_mirror_of_the_header_has_every_member_where_gcc_puts_it_and_a_swap_is_caught() {
        let layout = radiff_model::hybrid::mirror_layout();
        assert!(layout.len() > 50, "{}", layout.len());
        assert_eq!(check_against_header(&layout_asserts(&layout)).unwrap(), Ok(()));
        // The constants the mirrors use: the cache's bytes the C reads, the folio flags.
        let constants = radiff_model::hybrid::mirror_constants();
        let asserts = |cs: &[(&str, u64)]| -> String {
            cs.iter()
                .map(|(n, v)| format!("_Static_assert({n} == {v}, \"{n} is {v} in the Rust mirror\");\n"))
                .collect()
        };
        assert_eq!(check_against_header(&asserts(&constants)).unwrap(), Ok(()));
        let mut moved = constants.clone();
        moved[0].1 += 1;
        let why = check_against_header(&asserts(&moved)).unwrap().unwrap_err();
        assert!(why.contains(&format!("{} is {} in the Rust mirror", moved[0].0, moved[0].1)), "{why}");
        // Two members of one size swapped in the mirror: gcc names the first that moved.
        let mut swapped = layout.clone();
        let at = |m: &str| swapped.iter().position(|(s, n, ..)| *s == "readahead_control" && *n == m).unwrap();
        let (a, b) = (at("_nr_pages"), at("_batch_count"));
        let (oa, ob) = (swapped[a].2, swapped[b].2);
        swapped[a].2 = ob;
        swapped[b].2 = oa;
        let why = check_against_header(&layout_asserts(&swapped)).unwrap().unwrap_err();
        assert!(why.contains("struct readahead_control._nr_pages is at"), "{why}");
    }

    #[test]
    fn f2fs_calls_of_7_3_and_of_6_12_both_compile_and_a_third_shape_is_an_error() {
        // 7.3 passes the file's fsverity_info; 6.12 does not (its f2fs_grab_read_bio() has
        // six arguments, its fsverity_verify_folio() one), and keeps f2fs_need_verity() in
        // f2fs.h; its page_is_mergeable() reads a zoned device's queue limits.
        let unit = |body: &str| {
            format!("int radiff_check(struct inode *inode, struct folio *folio, struct bio *b)\n{{\n{body}\n}}\n")
        };
        let both = unit(
            "\tstruct bio *a = f2fs_grab_read_bio(inode, NULL, 8, 1, 0, 0, false);\n\
             \tstruct bio *c = f2fs_grab_read_bio(inode, 8, 1, 0, 0, false);\n\
             \tif (IS_ERR(c))\n\t\treturn PTR_ERR(c);\n\
             \tif (f2fs_need_verity(inode, 0) && !fsverity_verify_folio(folio))\n\t\treturn 1;\n\
             \tif (!fsverity_verify_folio(NULL, folio) || f2fs_is_sequential_zone_area(F2FS_I_SB(inode), 8))\n\t\treturn 2;\n\
             \treturn a == c || b->bi_vcnt >= queue_max_segments(bdev_get_queue(b->bi_bdev)) ||\n\
             \t\tbio_sectors(b) > queue_max_sectors(bdev_get_queue(b->bi_bdev)) || !folio_file_mapping(folio);",
        );
        assert_eq!(check_against_header_as(&both, &["RADIFF_UNIT_F2FS"]).unwrap(), Ok(()));
        let five = unit("\treturn f2fs_grab_read_bio(inode, 8, 1, 0, 0) != NULL;");
        let why = check_against_header_as(&five, &["RADIFF_UNIT_F2FS"]).unwrap().unwrap_err();
        assert!(why.contains("radiff_f2fs_grab_read_bio_of_another_signature"), "{why}");
    }

    #[test]
    fn includes_are_the_headers_as_written_each_once() {
        let src = "#include <linux/mm.h>\n# include \"internal.h\"\n#include <linux/mm.h>\n#define X\n";
        assert_eq!(includes(src).unwrap(), ["internal.h", "linux/mm.h"]);
    }

    #[test]
    fn an_include_outside_the_tree_is_refused_with_its_line_and_nothing_outside_is_touched() {
        let outside = tempfile::tempdir().unwrap();
        let canary = outside.path().join("canary.h");
        std::fs::write(&canary, "kept\n").unwrap();
        let rel = format!("../../../../../../../../..{}", canary.display());
        let scratch = tempfile::tempdir().unwrap();
        let cache = Cache { root: scratch.path().to_path_buf() };
        for (include, line) in [(format!("\"{}\"", canary.display()), 3), (format!("<{rel}>"), 3)] {
            let readahead = format!("#include <linux/mm.h>\n\n#include {include}\nint x;\n");
            let sources = Sources { readahead, ..Default::default() };
            let err = compile(&cache, &sources, &Extras::default()).unwrap_err().to_string();
            assert!(err.starts_with(&format!("mm/readahead.c:{line}: `#include ")), "{err}");
            assert!(err.contains("radiff refuses a header outside the tree"), "{err}");
            assert_eq!(std::fs::read_to_string(&canary).unwrap(), "kept\n", "{include} emptied the canary");
            assert!(!outside.path().join("radiff_kernel.h").exists());
        }
        // mm/fadvise.c's headers are checked as well, before mm/readahead.c is compiled.
        let mut sources = Sources { readahead: "int x;\n".into(), ..Default::default() };
        sources.optional[0] = Some(format!("#include \"{}\"\n", canary.display()));
        let err = compile(&cache, &sources, &Extras::default()).unwrap_err().to_string();
        assert!(err.starts_with("mm/fadvise.c:1: "), "{err}");
        assert_eq!(std::fs::read_to_string(&canary).unwrap(), "kept\n");
    }

    #[test]
    fn a_link_failure_names_the_undefined_reference_not_collect2() {
        let out = "/usr/bin/ld: fadvise.o: in function `generic_fadvise':\nfadvise.c:(.text+0x11): undefined reference to `nowhere'\ncollect2: error: ld returned 1 exit status\n";
        assert_eq!(first_error(out), "fadvise.c:(.text+0x11): undefined reference to `nowhere'");
        assert_eq!(
            tree_error(out.to_string()).first_error,
            "mm/fadvise.c:(.text+0x11): undefined reference to `nowhere'"
        );
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
