//! The house rules of issue 25, checked on harness/src's text (pure: reads the sources,
//! no VM): no file over 700 lines before its test module, no function over 120 lines (the
//! model's files too),
//! only the binary imports the CLI module, no import circle among the top-level modules,
//! only settings.rs reads the environment, only process.rs and the guest build commands.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// Lines a file may have before the `#[cfg(test)]` that opens its inline test module.
const FILE_LINES: usize = 700;
/// Lines a function may have, from its `fn` line to its closing brace.
const FN_LINES: usize = 120;

/// A source file: its path under harness/src ("run.rs", "explore/mod.rs") and its text.
type File = (String, String);

/// Every .rs file under harness/src, sorted by path.
fn sources() -> Vec<File> {
    sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// Every .rs file under model/src: the model, held to the same sizes.
fn model_sources() -> Vec<File> {
    sources_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/src"))
}

/// Every .rs file under `root`, by its path there, sorted.
fn sources_under(root: &Path) -> Vec<File> {
    let root = root.to_path_buf();
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
                files.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no source under {}", root.display());
    files
}

/// What the `#[cfg(test)]` at `lines[at]` applies to: the item after it (on its line or
/// the next that is not an attribute), if that item is a module: (true, name) for an
/// inline module (`mod tests {`), (false, name) for a declaration of a file (`mod tests;`).
fn test_module_at<'a>(lines: &[&'a str], at: usize) -> Option<(bool, &'a str)> {
    let rest = lines[at].trim().strip_prefix("#[cfg(test)]")?.trim();
    let item = if rest.is_empty() {
        lines[at + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty() && !l.starts_with("#["))?
    } else {
        rest
    };
    let item = item.strip_prefix("pub(crate) ").or_else(|| item.strip_prefix("pub ")).unwrap_or(item);
    let item = item.strip_prefix("mod ")?;
    let end = item.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(item.len());
    match item[end..].trim_start().chars().next() {
        Some('{') => Some((true, &item[..end])),
        Some(';') => Some((false, &item[..end])),
        _ => None,
    }
}

/// The index of the line that closes the block opened at `lines[at]` or after it: the next
/// line that is the opening line's indentation and `}` (`};` too).
fn closing(lines: &[&str], at: usize) -> Option<usize> {
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    (at + 1..lines.len()).find(|&i| lines[i].strip_prefix(indent).is_some_and(|r| r == "}" || r == "};"))
}

/// Rule (a): files over [`FILE_LINES`] lines before the `#[cfg(test)]` that opens an inline
/// test module (or in all, without one); a `#[cfg(test)] mod tests;` that declares a file
/// does not end the count.
fn long_files(root: &str, files: &[File]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().collect();
        let before = (0..lines.len())
            .find(|&i| test_module_at(&lines, i).is_some_and(|(inline, _)| inline))
            .unwrap_or(lines.len());
        if before > FILE_LINES {
            found.push(format!(
                "{root}/{path}:{}: {before} lines before its #[cfg(test)] module (at most {FILE_LINES})",
                FILE_LINES + 1
            ));
        }
    }
    found
}

/// The function a line declares (`fn NAME`, after `pub`, `const`, `async`, `unsafe`), if any.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if rest.starts_with("//") {
        return None;
    }
    loop {
        let before = rest;
        for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        if rest == before {
            break;
        }
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Rule (b): functions over [`FN_LINES`] lines, from the `fn` line to the closing brace at
/// its indentation. A declaration without a body (`fn f();`) and a one-line function are
/// skipped.
fn long_functions(root: &str, files: &[File]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = fn_name(line) else { continue };
            // The signature ends at the first `{` (a body) or `;` (no body).
            let Some(open) = (i..lines.len()).find(|&j| lines[j].contains('{') || lines[j].trim_end().ends_with(';'))
            else {
                continue;
            };
            if !lines[open].contains('{') || lines[open].trim_end().ends_with('}') {
                continue;
            }
            let Some(close) = closing(&lines, i) else { continue };
            let n = close - i + 1;
            if n > FN_LINES {
                found.push(format!("{root}/{path}:{}: fn {name} is {n} lines (at most {FN_LINES})", i + 1));
            }
        }
    }
    found
}

/// Whether `line` names the CLI module: `crate::cli` or a path through `cli::` (not
/// `foo_cli::`), outside a comment.
fn names_cli(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    code.match_indices("cli").any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = &code[at + 3..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && (after.starts_with("::")
                || (code[..at].ends_with("crate::") && !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')))
    })
}

/// Rule (c): lines outside harness/src/bin/ (and the CLI module itself) that import the CLI
/// module: the command line imports the library, never the other way round.
fn cli_imports(files: &[File]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        if path.starts_with("bin/") || path == "cli.rs" || path.starts_with("cli/") {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            if names_cli(line) {
                found.push(format!(
                    "harness/src/{path}:{}: imports the CLI module ({}); only harness/src/bin/ may",
                    i + 1,
                    line.trim()
                ));
            }
        }
    }
    found
}

/// The top-level module a file belongs to ("run.rs" -> run, "explore/cover.rs" -> explore);
/// None for lib.rs and the binaries.
fn top_module(path: &str) -> Option<&str> {
    let first = path.split('/').next()?;
    if path == "lib.rs" || first == "bin" {
        return None;
    }
    Some(first.strip_suffix(".rs").unwrap_or(first))
}

/// The files a `#[cfg(test)] mod NAME;` declares: NAME.rs or NAME/mod.rs beside the
/// declaring file's submodules.
fn test_files(files: &[File]) -> BTreeSet<String> {
    let mut test = BTreeSet::new();
    for (path, text) in files {
        let lines: Vec<&str> = text.lines().collect();
        let dir = match path.strip_suffix("mod.rs").or_else(|| path.strip_suffix("lib.rs")) {
            Some(dir) => dir.to_string(),
            None => format!("{}/", path.strip_suffix(".rs").unwrap_or(path)),
        };
        for i in 0..lines.len() {
            if let Some((false, name)) = test_module_at(&lines, i) {
                test.insert(format!("{dir}{name}.rs"));
                test.insert(format!("{dir}{name}/mod.rs"));
            }
        }
    }
    test
}

/// `text` with its inline `#[cfg(test)]` modules and its comment lines blanked, so that
/// what is left keeps its line numbers.
fn code_outside_tests(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = String::new();
    let mut i = 0;
    while i < lines.len() {
        let end = match test_module_at(&lines, i) {
            Some((true, _)) => closing(&lines, i).map_or(lines.len(), |c| c + 1),
            _ => i + 1,
        };
        for line in &lines[i..end] {
            let blank = end > i + 1 || line.trim_start().starts_with("//");
            kept += if blank { "" } else { line };
            kept.push('\n');
        }
        i = end;
    }
    kept
}

/// The modules `code` names as `crate::MODULE`, and inside `crate::{a, b::c}` groups
/// (over several lines too): (line number, module).
fn crate_mentions(code: &str) -> Vec<(usize, &str)> {
    let mut names = Vec::new();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let ident = |s: &str| s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    for (at, _) in code.match_indices("crate::") {
        if code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of the group: those after `{` or a `,` at depth 0.
            let mut depth = 0;
            let mut start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        start = false;
                        names.push((line_of(at + "crate::{".len() + k), &group[k..k + ident(&group[k..])]));
                    }
                    _ => {}
                }
            }
        } else {
            names.push((line_of(at), &rest[..ident(rest)]));
        }
    }
    names
}

/// Imports among top-level modules: edges[a][b] is where a first mentions `crate::b`.
type Edges<'a> = BTreeMap<&'a str, BTreeMap<String, String>>;

/// The shortest path of imports from `a` to `b` (from `a` to itself: a circle), as the
/// modules after `a`.
fn shortest_path(edges: &Edges, a: &str, b: &str) -> Option<Vec<String>> {
    let next = |m: &str| edges.get(m).into_iter().flat_map(|e| e.keys().cloned()).collect::<Vec<_>>();
    // From a's imports, so that a path from a to a has at least one step.
    let mut prev: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::new();
    for n in next(a) {
        prev.insert(n.clone(), a.to_string());
        queue.push_back(n);
    }
    while let Some(m) = queue.pop_front() {
        if m == b {
            let mut way = vec![m];
            while prev[way.last().unwrap()] != a {
                way.push(prev[way.last().unwrap()].clone());
            }
            way.reverse();
            return Some(way);
        }
        for n in next(&m) {
            if !prev.contains_key(&n) {
                prev.insert(n.clone(), m.clone());
                queue.push_back(n);
            }
        }
    }
    None
}

/// Rule (d): circles among harness/src's top-level modules, each named with the file and
/// line of each of its imports (the first `crate::MODULE` mention outside test modules).
fn import_circles(files: &[File]) -> Vec<String> {
    let tests = test_files(files);
    let modules: BTreeSet<&str> = files.iter().filter_map(|(p, _)| top_module(p)).collect();
    // edges[a][b]: where a first mentions crate::b.
    let mut edges: Edges = BTreeMap::new();
    for (path, text) in files {
        let Some(from) = top_module(path) else { continue };
        if tests.contains(path) {
            continue;
        }
        let code = code_outside_tests(text);
        for (n, to) in crate_mentions(&code) {
            if to != from && modules.contains(to) {
                edges
                    .entry(from)
                    .or_default()
                    .entry(to.to_string())
                    .or_insert_with(|| format!("harness/src/{path}:{n}"));
            }
        }
    }
    let mut found = Vec::new();
    let mut placed: BTreeSet<String> = BTreeSet::new();
    for &m in &modules {
        if placed.contains(m) {
            continue;
        }
        let Some(way) = shortest_path(&edges, m, m) else { continue };
        // The circle's strongly connected component: every module it reaches that reaches
        // it, reported once.
        for other in &modules {
            if shortest_path(&edges, m, other).is_some() && shortest_path(&edges, other, m).is_some() {
                placed.insert(other.to_string());
            }
        }
        let mut text = format!("import circle of {} modules: {m}", way.len());
        let mut from = m.to_string();
        for to in &way {
            text += &format!(" -> {to} ({})", edges[from.as_str()][to]);
            from = to.clone();
        }
        found.push(text);
    }
    found
}

/// Fails listing what `rule` found, if anything.
/// Lines of library code (test modules and comments left out) outside `allowed` (paths, or
/// folders ending in `/`) that contain one of `needles`: "path:line: the line".
fn edge_crossings(files: &[File], needles: &[&str], allowed: &[&str]) -> Vec<String> {
    let tests = test_files(files);
    let mut found = Vec::new();
    for (path, text) in files {
        if tests.contains(path)
            || path.starts_with("bin/")
            || allowed.iter().any(|a| path == a || (a.ends_with('/') && path.starts_with(a)))
        {
            continue;
        }
        for (i, line) in code_outside_tests(text).lines().enumerate() {
            if needles.iter().any(|n| line.contains(n)) {
                found.push(format!("harness/src/{path}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    found
}

/// What reads the environment: only settings.rs does, once per process.
const ENV_READS: [&str; 3] = ["env::var(", "env::var_os(", "env::vars("];
/// Where host processes are built: process.rs, and the guest's own side of the VM, which
/// runs mkfs, the batch's points and the scenario's programs inside the guest.
const COMMAND_ROOMS: [&str; 2] = ["process.rs", "guest/"];

/// What touches files: std::fs (and the Unix extensions' symlink).
const FS_CALLS: [&str; 2] = ["std::fs", "unix::fs::"];
/// The rooms that own files: the user's files (files.rs), the cache (cache.rs), processes'
/// logs (process.rs), the kernel trees and builds (kernels/, port/files.rs), the compiler's
/// objects (hybrid/compile.rs), the run folders (run/), the VM (vm.rs) and the guest's own
/// side (guest/).
const FILE_ROOMS: [&str; 9] =
    ["files.rs", "cache.rs", "process.rs", "kernels/", "port/files.rs", "hybrid/compile.rs", "run/", "vm.rs", "guest/"];

fn check(rule: &str, found: Vec<String>) {
    assert!(found.is_empty(), "{rule}: {} found:\n{}", found.len(), found.join("\n"));
}

#[test]
fn no_file_is_over_700_lines_before_its_test_module() {
    check("files over 700 lines", long_files("harness/src", &sources()));
    check("model files over 700 lines", long_files("model/src", &model_sources()));
}

#[test]
fn no_function_is_over_120_lines() {
    check("functions over 120 lines", long_functions("harness/src", &sources()));
    check("model functions over 120 lines", long_functions("model/src", &model_sources()));
}

#[test]
fn only_the_binary_imports_the_cli_module() {
    check("imports of the CLI module", cli_imports(&sources()));
}

#[test]
fn no_import_circle_among_the_top_level_modules() {
    check("import circles", import_circles(&sources()));
}

#[test]
fn only_the_settings_module_reads_the_environment() {
    check("environment reads outside settings.rs", edge_crossings(&sources(), &ENV_READS, &["settings.rs"]));
}

#[test]
fn only_process_rs_and_the_guest_build_commands() {
    check(
        "Command built outside process.rs and guest/",
        edge_crossings(&sources(), &["Command::new("], &COMMAND_ROOMS),
    );
}

#[test]
fn only_the_rooms_that_own_files_touch_them() {
    check("std::fs outside the rooms that own files", edge_crossings(&sources(), &FS_CALLS, &FILE_ROOMS));
}

#[test]
fn a_file_touched_outside_its_rooms_is_caught_with_its_line() {
    let files = tree(&[
        ("files.rs", "fn r() { std::fs::read_to_string(p); }\n"),
        ("run/boot.rs", "use std::fs;\n"),
        ("explore/mod.rs", "fn w() {\n    std::fs::write(p, t);\n}\n#[cfg(test)]\nmod tests {\n    fn t() { std::fs::write(p, t); }\n}\n"),
        ("bench.rs", "fn l() { std::os::unix::fs::symlink(a, b); }\n"),
    ]);
    assert_eq!(
        edge_crossings(&files, &FS_CALLS, &FILE_ROOMS),
        [
            "harness/src/explore/mod.rs:2: std::fs::write(p, t);",
            "harness/src/bench.rs:1: fn l() { std::os::unix::fs::symlink(a, b); }"
        ]
    );
}

#[test]
fn an_environment_read_or_a_command_outside_its_room_is_caught_with_its_line() {
    let files = tree(&[
        ("settings.rs", "fn f() { std::env::var(\"A\"); }\n"),
        ("cache.rs", "// std::env::var(\"B\") in a comment\nfn g() { std::env::var_os(\"B\"); }\n#[cfg(test)]\nmod tests {\n    fn t() { std::env::var(\"C\"); }\n}\n"),
        ("guest/prepare.rs", "fn p() { std::process::Command::new(\"mkfs\"); }\n"),
        ("vm.rs", "fn v() { let c = std::process::Command::new(\"qemu\"); }\n"),
    ]);
    assert_eq!(
        edge_crossings(&files, &ENV_READS, &["settings.rs"]),
        ["harness/src/cache.rs:2: fn g() { std::env::var_os(\"B\"); }"]
    );
    assert_eq!(
        edge_crossings(&files, &["Command::new("], &COMMAND_ROOMS),
        ["harness/src/vm.rs:1: fn v() { let c = std::process::Command::new(\"qemu\"); }"]
    );
}

/// Files from (path, text) pairs.
fn tree(files: &[(&str, &str)]) -> Vec<File> {
    files.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
}

#[test]
fn a_file_over_700_lines_before_its_test_module_is_caught_with_its_count() {
    let code = "let x = 1;\n".repeat(701);
    let found = long_files("harness/src", &tree(&[("big.rs", &(code + "#[cfg(test)]\nmod tests {\n}\n"))]));
    assert_eq!(found, ["harness/src/big.rs:701: 701 lines before its #[cfg(test)] module (at most 700)"]);
    let short = "let x = 1;\n".repeat(700) + "#[cfg(test)]\nmod tests {\n" + &"let y = 2;\n".repeat(500) + "}\n";
    assert!(long_files("harness/src", &tree(&[("short.rs", &short)])).is_empty());
}

#[test]
fn a_test_module_declared_as_a_file_does_not_end_the_count() {
    let code = "#[cfg(test)]\nmod tests;\n".to_string() + &"let x = 1;\n".repeat(699);
    assert_eq!(
        long_files("harness/src", &tree(&[("m.rs", &code)])),
        ["harness/src/m.rs:701: 701 lines before its #[cfg(test)] module (at most 700)"]
    );
}

#[test]
fn a_function_over_120_lines_is_caught_with_its_line_and_count() {
    let long =
        format!("struct S;\nimpl S {{\n    pub fn long(&self) {{\n{}    }}\n}}\n", "        let x = 1;\n".repeat(119));
    assert_eq!(
        long_functions("harness/src", &tree(&[("f.rs", &long)])),
        ["harness/src/f.rs:3: fn long is 121 lines (at most 120)"]
    );
    let fits = format!(
        "fn fits()\nwhere\n    u8: Copy,\n{{\n{}}}\nfn one() {{ }}\nfn decl();\n",
        "    let x = 1;\n".repeat(115)
    );
    assert!(long_functions("harness/src", &tree(&[("g.rs", &fits)])).is_empty());
}

#[test]
fn a_library_module_naming_the_cli_is_caught_and_the_binary_is_not() {
    let files = tree(&[
        ("run.rs", "use crate::progress;\nuse crate::cli::Args;\n"),
        ("report/mod.rs", "// cli::lab() was here\nfn f() { cli::parse(); }\nlet my_cli::x = 1;\n"),
        ("bin/radiff.rs", "use radiff::cli;\nfn main() { cli::run() }\n"),
    ]);
    assert_eq!(
        cli_imports(&files),
        [
            "harness/src/run.rs:2: imports the CLI module (use crate::cli::Args;); only harness/src/bin/ may",
            "harness/src/report/mod.rs:2: imports the CLI module (fn f() { cli::parse(); }); only harness/src/bin/ may"
        ]
    );
}

#[test]
fn an_import_circle_is_caught_and_named_with_each_import() {
    let files = tree(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
        ("a.rs", "use crate::b::X;\n"),
        ("b/mod.rs", "mod inner;\n"),
        ("b/inner.rs", "\nuse crate::{d, c::Y};\n"),
        ("c.rs", "fn f() { crate::a::g() }\n"),
        ("d.rs", "// crate::a in a comment\n"),
    ]);
    assert_eq!(
        import_circles(&files),
        ["import circle of 3 modules: a -> b (harness/src/a.rs:1) -> c (harness/src/b/inner.rs:2) -> a (harness/src/c.rs:1)"]
    );
}

#[test]
fn imports_in_test_modules_and_test_files_make_no_circle() {
    let files = tree(&[
        ("a.rs", "use crate::b;\n#[cfg(test)]\nmod tests;\n"),
        ("a/tests.rs", "use crate::b;\n"),
        ("b.rs", "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n"),
        ("c.rs", "#[cfg(test)]\nmod fixtures;\n"),
        ("c/fixtures.rs", "use crate::b;\n"),
        ("b/more.rs", "#[cfg(test)]\nmod t {\n    use crate::c;\n}\n"),
    ]);
    assert!(import_circles(&files).is_empty());
    let circle = tree(&[("a.rs", "use crate::b;\n"), ("b.rs", "use crate::a;\n")]);
    assert_eq!(
        import_circles(&circle),
        ["import circle of 2 modules: a -> b (harness/src/a.rs:1) -> a (harness/src/b.rs:1)"]
    );
}
