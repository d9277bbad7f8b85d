//! What radiff needs of a kernel tree's Kconfig before it configures it: every option the
//! config fragment (`kernels/config.fragment`) turns on or gives a value is declared
//! (`config X` or `menuconfig X`) in one of the tree's `Kconfig*` files. A tree without one
//! would build (tinyconfig and olddefconfig drop an unknown option without a word) and
//! then fail at "did not stick", after minutes, or boot without what the line was for; it
//! is refused before any build, naming the lines.
//!
//! A `# CONFIG_X is not set` line may name an option the tree lacks: an option that does
//! not exist is off, which is all the line asks (the fragment turns off what one release
//! has and another may not, e.g. `CONFIG_X86_KERNEL_IBT` or `CONFIG_EPROBE_EVENTS`).
//! [`super::check_fragment`] treats it the same after the build.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};

/// One line of the fragment that sets an option: `CONFIG_NAME=VALUE`, or
/// `# CONFIG_NAME is not set` (`on` false).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FragmentLine<'a> {
    /// 1-based.
    pub number: usize,
    pub text: &'a str,
    /// The option without `CONFIG_`.
    pub name: &'a str,
    pub on: bool,
}

/// The lines of `fragment` that set an option, in order.
pub fn fragment_lines(fragment: &str) -> Vec<FragmentLine<'_>> {
    let mut out = Vec::new();
    for (i, line) in fragment.lines().enumerate() {
        let text = line.trim();
        let (name, on) = if let Some(rest) = text.strip_prefix("CONFIG_") {
            (rest.split('=').next().unwrap_or(""), true)
        } else if let Some(rest) = text.strip_prefix("# CONFIG_").and_then(|r| r.strip_suffix(" is not set")) {
            (rest, false)
        } else {
            continue;
        };
        if !name.is_empty() {
            out.push(FragmentLine { number: i + 1, text, name, on });
        }
    }
    out
}

/// The options a Kconfig file declares: the name after each `config` and `menuconfig`
/// that opens a line (after indentation).
pub fn declared(kconfig: &str) -> impl Iterator<Item = &str> {
    kconfig.lines().filter_map(|line| {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("config" | "menuconfig") => words.next(),
            _ => None,
        }
    })
}

/// Each line of the fragment that turns on or gives a value to an option `has` says the
/// tree does not declare: `line 12: CONFIG_FOO=y`.
pub fn undeclared(fragment: &str, has: &dyn Fn(&str) -> bool) -> Vec<String> {
    fragment_lines(fragment)
        .into_iter()
        .filter(|l| l.on && !has(l.name))
        .map(|l| format!("line {}: {} (no `config {}` in any Kconfig file)", l.number, l.text, l.name))
        .collect()
}

/// Every option the `Kconfig*` files under `tree` declare (`.git` skipped).
pub fn declared_in_tree(tree: &Path) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    let mut dirs = vec![tree.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let name = entry.file_name();
            let kind = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
            if kind.is_dir() && name != ".git" {
                dirs.push(entry.path());
            } else if kind.is_file() && name.to_string_lossy().starts_with("Kconfig") {
                let path = entry.path();
                let text = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                out.extend(declared(&String::from_utf8_lossy(&text)).map(str::to_string));
            }
        }
    }
    Ok(out)
}

/// Refuses `tree` (as `variant`'s build would configure it) when it does not declare an
/// option `fragment` (the text of the file `fragment_file`) turns on: an
/// [`Error::Unconfigurable`] naming each such line.
pub fn check_tree(tree: &Path, variant: &str, fragment_file: &Path, fragment: &str) -> Result<()> {
    let has = declared_in_tree(tree)?;
    let missing = undeclared(fragment, &|name| has.contains(name));
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Unconfigurable {
        tree: tree.to_path_buf(),
        variant: variant.to_string(),
        fragment: fragment_file.to_path_buf(),
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAGMENT: &str = "# a comment naming CONFIG_IN_A_COMMENT=y\nCONFIG_A=y\nCONFIG_B=m\n  CONFIG_SIZE=64\n# CONFIG_GONE is not set\n# CONFIG_C is not set\n";

    #[test]
    fn the_fragment_sets_its_option_lines_and_not_its_comments() {
        let lines = fragment_lines(FRAGMENT);
        let named: Vec<(usize, &str, bool)> = lines.iter().map(|l| (l.number, l.name, l.on)).collect();
        assert_eq!(named, [(2, "A", true), (3, "B", true), (4, "SIZE", true), (5, "GONE", false), (6, "C", false)]);
        assert_eq!(lines[2].text, "CONFIG_SIZE=64");
    }

    #[test]
    fn a_kconfig_declares_its_config_and_menuconfig_entries() {
        let kconfig = "menu \"Things\"\nconfig A\n\tbool \"a\"\n\thelp\n\t  Says config words inside help.\n  menuconfig B\n\ttristate\nif A\nsource \"x/Kconfig\"\nchoice\nendmenu\n";
        assert_eq!(declared(kconfig).collect::<Vec<_>>(), ["A", "B"]);
    }

    #[test]
    fn an_option_turned_on_but_not_declared_is_named_and_one_turned_off_may_be_missing() {
        let has = |n: &str| ["A", "C"].contains(&n);
        assert_eq!(
            undeclared(FRAGMENT, &has),
            [
                "line 3: CONFIG_B=m (no `config B` in any Kconfig file)",
                "line 4: CONFIG_SIZE=64 (no `config SIZE` in any Kconfig file)"
            ]
        );
        assert!(undeclared(FRAGMENT, &|_| true).is_empty());
    }

    #[test]
    fn a_tree_is_scanned_for_its_kconfig_files_in_every_folder_but_git() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path();
        for (file, text) in [
            ("Kconfig", "source \"arch/Kconfig\"\nconfig A\n"),
            ("arch/x86/Kconfig.cpu", "config B\n"),
            ("mm/Kconfig.debug", "menuconfig SIZE\n"),
            ("mm/readahead.c", "config NOT_A_KCONFIG\n"),
            (".git/Kconfig", "config C\n"),
        ] {
            let path = tree.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let mut has: Vec<String> = declared_in_tree(tree).unwrap().into_iter().collect();
        has.sort();
        assert_eq!(has, ["A", "B", "SIZE"]);
        check_tree(tree, "base", Path::new("f"), FRAGMENT).unwrap();
        let fragment = format!("{FRAGMENT}CONFIG_C=y\n");
        let err = check_tree(tree, "base", Path::new("kernels/config.fragment"), &fragment).unwrap_err();
        let Error::Unconfigurable { ref missing, .. } = err else { panic!("expected Unconfigurable, got {err}") };
        assert_eq!(missing, &["line 7: CONFIG_C=y (no `config C` in any Kconfig file)"]);
        let text = err.to_string();
        assert!(text.contains("kernels/config.fragment") && text.contains("nothing was built or booted"), "{text}");
    }
}
