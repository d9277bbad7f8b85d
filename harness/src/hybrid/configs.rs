//! The kernel options the C radiff takes from a tree tests in its preprocessor lines
//! (`#ifdef CONFIG_X`, `#if defined(CONFIG_X) && ...`): each must be one radiff's header
//! decides, as radiff's kernels are built (kernels/config.fragment). An option the header
//! does not decide would be compiled as off whatever the guest's kernel has, and the C would
//! silently differ from the kernel it models (6.12's do_sync_mmap_readahead() tests
//! `#ifdef CONFIG_TRANSPARENT_HUGEPAGE` where 7.3.4 tests `IS_ENABLED()`): the C that
//! tests it is refused at that line, gcc's first error naming the option. Pure: text in,
//! C out.

/// How radiff's header decides an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// On, as in radiff's kernels: `#define CONFIG_X 1`.
    On,
    /// Off, as in radiff's kernels: never defined.
    Off,
    /// On in radiff's kernels, but in these files of the tree it guards only what the
    /// model's files never reach (system calls' entry points, which the model does not
    /// call; anonymous memory's and shmem's paths, where the model's files are XFS, ext4
    /// or f2fs): left undefined there, that code is not compiled. In any other file the
    /// option is refused as undecided.
    Unreached(&'static [&'static str]),
}

/// The options radiff's header decides.
pub const DECIDED: [(&str, Decided); 5] = [
    // kernels/config.fragment: large page-cache folios need it.
    ("CONFIG_TRANSPARENT_HUGEPAGE", Decided::On),
    // x86-64 without IA32 emulation (tinyconfig): no compat system calls.
    ("CONFIG_COMPAT", Decided::Off),
    ("CONFIG_F2FS_FS_COMPRESSION", Decided::Off),
    // fadvise64()'s entry: the model calls generic_fadvise().
    ("CONFIG_ADVISE_SYSCALLS", Decided::Unreached(&["mm/fadvise.c"])),
    // madvise_willneed(): the swap-in of an anonymous or shmem range.
    ("CONFIG_SWAP", Decided::Unreached(&["mm/madvise.c"])),
];

/// Whether the header decides `option` for the tree's `file`.
fn decided(option: &str, file: &str) -> bool {
    DECIDED.iter().any(|(name, how)| {
        *name == option
            && match how {
                Decided::Unreached(files) => files.contains(&file),
                _ => true,
            }
    })
}

/// For each option a preprocessor conditional of `text` tests that [`DECIDED`] lacks, a
/// `#line` of its place in the tree's `file` (`text`'s first line being line `first`)
/// and an `#error` naming it; empty when every option tested is decided.
pub fn undecided(file: &str, text: &str, first: usize) -> String {
    let mut out = String::new();
    let mut continued = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let conditional = continued || {
            let directive = trimmed.strip_prefix('#').map(str::trim_start).unwrap_or("");
            ["if", "elif"].iter().any(|d| directive.starts_with(d))
        };
        continued = conditional && line.trim_end().ends_with('\\');
        if !conditional {
            continue;
        }
        for option in options(line) {
            if !decided(option, file) {
                out.push_str(&format!(
                    "#line {} \"{file}\"\n#error \"{file} tests {option}, which radiff's header does not decide (harness/src/hybrid/configs.rs): the C that tests it stays the Rust port\"\n",
                    first + i
                ));
            }
        }
    }
    out
}

/// The `CONFIG_` names in `line`, each once, in order.
fn options(line: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("CONFIG_") {
        let preceded = line.len() - rest.len() + at;
        let start = &rest[at..];
        let len = start.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(start.len());
        let word_start = preceded == 0
            || !line.as_bytes()[preceded - 1].is_ascii_alphanumeric() && line.as_bytes()[preceded - 1] != b'_';
        if word_start && !out.contains(&&start[..len]) {
            out.push(&start[..len]);
        }
        rest = &start[len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_the_header_does_not_decide_is_an_error_at_its_line_and_a_decided_one_is_not() {
        let text = "static int f(void)\n{\n#ifdef CONFIG_TRANSPARENT_HUGEPAGE\n\treturn 1;\n#elif defined(CONFIG_RADIFF_NOWHERE) && \\\n\tdefined(CONFIG_RADIFF_ELSEWHERE)\n\treturn 2;\n#endif\n\treturn CONFIG_RADIFF_VALUE;\n}\n";
        let errors = undecided("mm/filemap.c", text, 100);
        let lines: Vec<&str> = errors.lines().collect();
        assert_eq!(lines.len(), 4, "{errors}");
        assert_eq!(lines[0], "#line 104 \"mm/filemap.c\"");
        assert!(
            lines[1].starts_with(
                "#error \"mm/filemap.c tests CONFIG_RADIFF_NOWHERE, which radiff's header does not decide"
            ),
            "{errors}"
        );
        assert_eq!(lines[2], "#line 105 \"mm/filemap.c\"", "a continued line is the conditional's too");
        assert!(lines[3].contains("CONFIG_RADIFF_ELSEWHERE"), "{errors}");
        assert!(!errors.contains("CONFIG_RADIFF_VALUE"), "an option outside a conditional is gcc's to name");
        assert_eq!(undecided("mm/filemap.c", "#ifdef CONFIG_TRANSPARENT_HUGEPAGE\n#endif\n", 1), "");
        assert_eq!(options("#if defined(XCONFIG_A) || CONFIG_B || CONFIG_B"), ["CONFIG_B"]);
        // Left undefined only in the files where what it guards is not reached.
        assert_eq!(undecided("mm/madvise.c", "#ifdef CONFIG_SWAP\n", 1), "");
        assert!(undecided("mm/filemap.c", "#ifdef CONFIG_SWAP\n", 1).contains("tests CONFIG_SWAP"));
    }

    #[test]
    fn every_option_the_header_decides_on_it_defines_and_every_one_off_it_does_not() {
        let header = super::super::compile::HEADER;
        let fragment = std::fs::read_to_string(crate::repo_root().join("kernels/config.fragment")).unwrap();
        for (name, decided) in DECIDED {
            let on = decided == Decided::On;
            assert_eq!(header.contains(&format!("#define {name} 1\n")), on, "{name}");
            if !on {
                assert!(!header.contains(&format!("#define {name} ")), "{name}");
            }
            // As radiff's kernels have it, where the fragment says (an option it does not
            // name is tinyconfig's: off).
            let in_fragment = fragment.lines().any(|l| l == format!("{name}=y"));
            match decided {
                Decided::On => assert!(in_fragment, "{name} is on in the header, not in kernels/config.fragment"),
                Decided::Off => assert!(!in_fragment, "{name} is off in the header, on in kernels/config.fragment"),
                // On by the fragment or by default (CONFIG_SWAP): the built .config says.
                Decided::Unreached(_) => {}
            }
        }
    }
}
