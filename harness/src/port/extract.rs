//! Finding one kernel function's definition in a C file, as the kernel's style writes it.
//!
//! Pure: text in, text out. A definition is a declaration that starts in column 0 and
//! names the function before its `(` (with the return type on that line or the line
//! above), followed by a body from a `{` to its matching `}`; a prototype (a declaration
//! ending in `;`) is not one. `#define NAME(...)` (with its continuation lines) and
//! `SYSCALL_DEFINEn(NAME, ...)` count as definitions too. A function defined more than
//! once in a file (one per `#ifdef` branch) yields every definition, in file order.

/// Why a function's definition could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ExtractError {
    /// The definition starts at this 1-based line but its braces never balance.
    Unbalanced { line: usize },
}

impl std::fmt::Display for ExtractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExtractError::Unbalanced { line } => {
                write!(f, "the definition at line {line} has no matching closing brace")
            }
        }
    }
}

/// Every definition of `name` in `text`, joined by blank lines; `None` when the file has
/// none.
pub fn extract(text: &str, name: &str) -> Result<Option<String>, ExtractError> {
    let lines: Vec<&str> = text.lines().collect();
    let found: Vec<String> =
        definitions(text, name)?.into_iter().map(|(start, end)| lines[start - 1..end].join("\n")).collect();
    Ok((!found.is_empty()).then(|| found.join("\n\n")))
}

/// The 1-based, inclusive line ranges of every definition of `name` in `text`, in file
/// order.
pub fn definitions(text: &str, name: &str) -> Result<Vec<(usize, usize)>, ExtractError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match definition_at(&lines, i, name)? {
            Some((start, end)) => {
                found.push((start + 1, end + 1));
                i = end + 1;
            }
            None => i += 1,
        }
    }
    Ok(found)
}

/// The line range of a definition of `name` whose name is on line `i`, if there is one.
fn definition_at(lines: &[&str], i: usize, name: &str) -> Result<Option<(usize, usize)>, ExtractError> {
    let line = lines[i];
    if let Some(rest) = line.strip_prefix("#define ") {
        if rest.strip_prefix(name).is_some_and(|r| r.starts_with('(')) {
            let mut end = i;
            while lines[end].trim_end().ends_with('\\') && end + 1 < lines.len() {
                end += 1;
            }
            return Ok(Some((i, end)));
        }
        return Ok(None);
    }
    if !starts_declaration(line) || !(names_call(line, name) || is_syscall_of(line, name)) {
        return Ok(None);
    }
    // The declaration runs to the body's opening brace; a `;` before it makes it a prototype.
    let mut open = None;
    for (j, l) in lines.iter().enumerate().skip(i) {
        let code = strip_line_comment(l);
        if code.contains('{') {
            open = Some(j);
            break;
        }
        // A prototype, or a name at the start of something that is not a definition
        // (a declaration's continuation lines are indented; a col-0 line is something else).
        if code.trim_end().ends_with(';')
            || (j > i && (starts_declaration(l) || l.starts_with('#') || l.trim().is_empty()))
        {
            return Ok(None);
        }
    }
    let Some(open) = open else { return Ok(None) };
    let end = closing_brace(lines, open).ok_or(ExtractError::Unbalanced { line: i + 1 })?;
    let mut start = i;
    while start > 0 && continues_declaration(lines[start - 1]) {
        start -= 1;
    }
    Ok(Some((start, end)))
}

/// A line in column 0 that could begin a declaration (not a comment, directive or brace).
fn starts_declaration(line: &str) -> bool {
    let Some(c) = line.chars().next() else { return false };
    (c.is_ascii_alphabetic() || c == '_') && !line.starts_with("EXPORT_SYMBOL")
}

/// The line above a definition's name that still belongs to its declaration: the return
/// type or specifiers on a line of their own (`static inline`, `noinline int`).
fn continues_declaration(line: &str) -> bool {
    let t = line.trim_end();
    starts_declaration(line)
        && !t.ends_with(';')
        && !t.ends_with('}')
        && !t.ends_with(')')
        && !t.ends_with("*/")
        && !t.contains('(')
}

/// `NAME(` in `line` with no identifier character before NAME.
fn names_call(line: &str, name: &str) -> bool {
    let code = strip_line_comment(line);
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(pos) = code[from..].find(name) {
        let at = from + pos;
        let before_ok = at == 0 || !is_ident(bytes[at - 1]);
        let after = code[at + name.len()..].trim_start();
        if before_ok && after.starts_with('(') {
            return true;
        }
        from = at + name.len();
    }
    false
}

/// `SYSCALL_DEFINEn(NAME,` or `SYSCALL_DEFINE0(NAME)`.
fn is_syscall_of(line: &str, name: &str) -> bool {
    line.strip_prefix("SYSCALL_DEFINE")
        .and_then(|r| r.get(1..))
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_prefix(name))
        .is_some_and(|r| r.starts_with(',') || r.starts_with(')'))
}

/// A byte of a C identifier.
pub(super) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The line up to a `//` comment (good enough for declarations, which hold no strings).
fn strip_line_comment(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// The line of the `}` that closes the first `{` on line `open`, skipping comments,
/// strings and character literals.
fn closing_brace(lines: &[&str], open: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut in_block_comment = false;
    for (j, line) in lines.iter().enumerate().skip(open) {
        let b = line.as_bytes();
        let mut k = 0;
        while k < b.len() {
            if in_block_comment {
                if b[k] == b'*' && b.get(k + 1) == Some(&b'/') {
                    in_block_comment = false;
                    k += 1;
                }
            } else {
                match b[k] {
                    b'/' if b.get(k + 1) == Some(&b'*') => {
                        in_block_comment = true;
                        k += 1;
                    }
                    b'/' if b.get(k + 1) == Some(&b'/') => break,
                    b'"' | b'\'' => k = skip_literal(b, k),
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j);
                        }
                    }
                    _ => {}
                }
            }
            k += 1;
        }
    }
    None
}

/// The index of the quote closing the literal that opens at `k`.
fn skip_literal(b: &[u8], k: usize) -> usize {
    let quote = b[k];
    let mut k = k + 1;
    while k < b.len() && b[k] != quote {
        if b[k] == b'\\' {
            k += 1;
        }
        k += 1;
    }
    k
}

/// The code with comments removed and every run of white space folded to one space (or
/// none, next to punctuation): what a fingerprint is taken of, so that a reworded comment
/// or a reindent changes nothing.
pub fn normalise(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut k = 0;
    let mut space = false;
    let push = |out: &mut String, s: &[u8], space: &mut bool| {
        if *space {
            let prev_word = out.as_bytes().last().is_some_and(|&c| is_ident(c));
            if prev_word && is_ident(s[0]) {
                out.push(' ');
            }
            *space = false;
        }
        out.push_str(std::str::from_utf8(s).unwrap_or(""));
    };
    while k < b.len() {
        match b[k] {
            b'/' if b.get(k + 1) == Some(&b'*') => {
                k += 2;
                while k < b.len() && !(b[k] == b'*' && b.get(k + 1) == Some(&b'/')) {
                    k += 1;
                }
                k += 2;
                space = true;
                continue;
            }
            b'/' if b.get(k + 1) == Some(&b'/') => {
                while k < b.len() && b[k] != b'\n' {
                    k += 1;
                }
                space = true;
                continue;
            }
            b'"' | b'\'' => {
                let end = skip_literal(b, k).min(b.len() - 1);
                push(&mut out, &b[k..=end], &mut space);
                k = end + 1;
                continue;
            }
            c if c.is_ascii_whitespace() => space = true,
            _ => {
                let len = utf8_len(b[k]);
                push(&mut out, &b[k..(k + len).min(b.len())], &mut space);
                k += len;
                continue;
            }
        }
        k += 1;
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
// SPDX
static unsigned long get_init_ra_size(unsigned long size,
\t\t\t\t      unsigned long max);

/*
 * Set the initial window size.
 */
static unsigned long get_init_ra_size(unsigned long size,
\t\t\t\t      unsigned long max)
{
\tunsigned long newsize = roundup_pow_of_two(size);

\tif (newsize <= max / 32) /* { not a brace */
\t\tnewsize = newsize * 4;
\treturn newsize;
}

void page_cache_sync_ra(struct readahead_control *ractl,
\t\tunsigned long req_count)
{
\tchar c = '}';
\tif (!ractl) {
\t\treturn;
\t}
}
EXPORT_SYMBOL_GPL(page_cache_sync_ra);

static inline
int two_lines(void)
{
\treturn 2;
}

#define DEFINE_READAHEAD(ractl, f, r, m, i)\t\t\t\t\\
\tstruct readahead_control ractl = {\t\t\t\t\\
\t\t._index = i,\t\t\t\t\t\t\\
\t}

SYSCALL_DEFINE3(madvise, unsigned long, start, size_t, len_in, int, behavior)
{
\treturn do_madvise(current->mm, start, len_in, behavior);
}
";

    #[test]
    fn a_definition_is_found_past_its_prototype_with_its_comments() {
        let f = extract(FILE, "get_init_ra_size").unwrap().unwrap();
        assert!(
            f.starts_with(
                "static unsigned long get_init_ra_size(unsigned long size,\n\t\t\t\t      unsigned long max)\n{"
            ),
            "{f}"
        );
        assert!(f.ends_with("return newsize;\n}"), "{f}");
    }

    #[test]
    fn braces_in_comments_and_literals_do_not_count() {
        let f = extract(FILE, "page_cache_sync_ra").unwrap().unwrap();
        assert!(f.ends_with("\t}\n}"), "{f}");
        assert!(!f.contains("EXPORT_SYMBOL"));
    }

    #[test]
    fn specifiers_on_the_line_above_belong_to_the_definition() {
        assert_eq!(
            extract(FILE, "two_lines").unwrap().unwrap(),
            "static inline\nint two_lines(void)\n{\n\treturn 2;\n}"
        );
    }

    #[test]
    fn macros_and_system_calls_are_definitions() {
        let m = extract(FILE, "DEFINE_READAHEAD").unwrap().unwrap();
        assert_eq!(m.lines().count(), 4, "{m}");
        let s = extract(FILE, "madvise").unwrap().unwrap();
        assert!(s.starts_with("SYSCALL_DEFINE3(madvise,") && s.ends_with('}'), "{s}");
    }

    #[test]
    fn a_name_inside_another_name_or_a_call_is_not_a_definition() {
        assert_eq!(extract(FILE, "ra_size").unwrap(), None);
        assert_eq!(extract(FILE, "do_madvise").unwrap(), None, "called, not defined");
        assert_eq!(extract(FILE, "roundup_pow_of_two").unwrap(), None);
    }

    #[test]
    fn unbalanced_braces_are_an_error_at_the_definition() {
        let text = "int f(void)\n{\n\tif (x) {\n\treturn 1;\n}\n";
        assert_eq!(extract(text, "f"), Err(ExtractError::Unbalanced { line: 1 }));
    }

    #[test]
    fn every_definition_of_a_name_is_kept() {
        let text =
            "#ifdef A\nint f(void)\n{\n\treturn 1;\n}\n#else\nstatic inline int f(void)\n{\n\treturn 0;\n}\n#endif\n";
        let f = extract(text, "f").unwrap().unwrap();
        assert_eq!(f.matches('{').count(), 2, "{f}");
    }

    #[test]
    fn normalising_drops_comments_and_white_space_but_not_code() {
        let a = "int f(int x)\n{\n\t/* why */\n\treturn x + 1; // one more\n}";
        let b = "int  f( int x ) {\n    return x+1;\n}";
        assert_eq!(normalise(a), normalise(b));
        assert_eq!(normalise(a), "int f(int x){return x+1;}");
        assert_ne!(normalise(a), normalise("int f(int x)\n{\n\treturn x + 2;\n}"));
        assert_ne!(normalise("a = \"x  y\";"), normalise("a = \"x y\";"), "strings are code");
    }
}
