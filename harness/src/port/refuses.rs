//! What a tree's kernel refuses of a scenario before any readahead runs, read from the
//! tree's own text: a scenario that asks for it cannot run there, and says why before a
//! boot rather than failing in the guest.
//!
//! `preadv2(RWF_DONTCACHE)`: `kiocb_set_rw_flags()` (include/linux/fs.h) fails it with
//! EOPNOTSUPP where the flag is not among the tree's `RWF_SUPPORTED` (include/uapi/linux/fs.h
//! defines no `RWF_DONTCACHE`: Linux before 6.14, Debian's 6.12 among them), and where the
//! file's `file_operations` do not set `FOP_DONTCACHE` (f2fs in 7.3.4).

use radiff_model::{FsKind, Step};

use super::extract::is_ident;
use super::Files;
use crate::error::{Error, Result};
use crate::scenario::Scenario;

/// The file that holds `fs`'s regular-file `file_operations` in a tree.
fn file_operations_of(fs: FsKind) -> &'static str {
    match fs {
        FsKind::Xfs => "fs/xfs/xfs_file.c",
        FsKind::Ext4 => "fs/ext4/file.c",
        FsKind::F2fs => "fs/f2fs/file.c",
    }
}

/// Whether `text` has `word` as a whole identifier.
fn has_identifier(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let before = at == 0 || !is_ident(b[at - 1]);
        let after = b.get(at + word.len()).is_none_or(|&c| !is_ident(c));
        before && after
    })
}

/// Why `tree`'s kernel fails `preadv2(RWF_DONTCACHE)` on `fs`, where it does.
pub fn dontcache(tree: &dyn Files, fs: FsKind) -> Result<Option<String>> {
    const UAPI: &str = "include/uapi/linux/fs.h";
    let refused = |why: String| {
        Some(format!(
            "{} refuses preadv2(RWF_DONTCACHE) on {} with EOPNOTSUPP (kiocb_set_rw_flags()): {why}",
            tree.describe(),
            fs.name()
        ))
    };
    match tree.read(UAPI)? {
        None => return Ok(refused(format!("the tree has no {UAPI}"))),
        Some(t) if !has_identifier(&t, "RWF_DONTCACHE") => {
            return Ok(refused(format!("its {UAPI} defines no RWF_DONTCACHE (Linux 6.14 added it)")))
        }
        Some(_) => {}
    }
    let ops = file_operations_of(fs);
    Ok(match tree.read(ops)? {
        Some(t) if has_identifier(&t, "FOP_DONTCACHE") => None,
        Some(_) => refused(format!("its {ops} sets no FOP_DONTCACHE")),
        None => refused(format!("the tree has no {ops}")),
    })
}

/// [`refused`] as the error of the scenario's file, at its first `dontcache` read (the
/// line the scenario's own checks name, `yaml::line_of_item`): what `radiff run` says
/// before building or booting anything.
pub fn check(tree: &dyn Files, scenario: &Scenario) -> Result<()> {
    match (refused(tree, scenario)?, first_uncached(scenario)) {
        (Some(why), Some(i)) => {
            let text = crate::files::read_text(&scenario.path).unwrap_or_default();
            let line = crate::yaml::line_of_item(&text, "reads", i);
            Err(Error::input(&scenario.path, line, format!("reads[{i}]: {why}; the scenario cannot run on this base")))
        }
        _ => Ok(()),
    }
}

/// The index of the scenario's first step that reads with RWF_DONTCACHE.
fn first_uncached(scenario: &Scenario) -> Option<usize> {
    scenario.steps.iter().position(|s| match s {
        Step::ReadWith { how, .. } | Step::SequentialWith { how, .. } => how.dontcache,
        _ => false,
    })
}

/// Why `tree`'s kernel cannot run `scenario`'s steps, where it cannot.
pub fn refused(tree: &dyn Files, scenario: &Scenario) -> Result<Option<String>> {
    match first_uncached(scenario) {
        Some(_) => dontcache(tree, scenario.fs),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::DirFiles;

    const UAPI_WITH: &str = "#define RWF_NOWAIT\t((__force __kernel_rwf_t)0x00000008)\n#define RWF_DONTCACHE\t((__force __kernel_rwf_t)0x00000080)\n";
    const UAPI_WITHOUT: &str =
        "#define RWF_NOWAIT\t((__force __kernel_rwf_t)0x00000008)\n/* RWF_DONTCACHEX is another name */\n";
    const FOPS_WITH: &str = "\t.fop_flags\t= FOP_MMAP_SYNC | FOP_BUFFER_RASYNC |\n\t\t\t  FOP_DONTCACHE,\n";
    const FOPS_WITHOUT: &str = "\t.fop_flags\t= FOP_BUFFER_RASYNC,\n";

    #[test]
    fn a_tree_whose_uapi_has_no_rwf_dontcache_refuses_it_on_every_file_system() {
        let tree = DirFiles::from_map([("include/uapi/linux/fs.h", UAPI_WITHOUT), ("fs/xfs/xfs_file.c", FOPS_WITH)]);
        let why = dontcache(&tree, FsKind::Xfs).unwrap().expect("refused");
        assert!(why.contains("defines no RWF_DONTCACHE") && why.contains("on xfs"), "{why}");
        assert!(why.contains("kiocb_set_rw_flags()"), "{why}");
    }

    #[test]
    fn a_file_system_without_fop_dontcache_refuses_it_and_one_with_it_does_not() {
        let tree = DirFiles::from_map([
            ("include/uapi/linux/fs.h", UAPI_WITH),
            ("fs/xfs/xfs_file.c", FOPS_WITH),
            ("fs/ext4/file.c", FOPS_WITH),
            ("fs/f2fs/file.c", FOPS_WITHOUT),
        ]);
        assert_eq!(dontcache(&tree, FsKind::Xfs).unwrap(), None);
        assert_eq!(dontcache(&tree, FsKind::Ext4).unwrap(), None);
        let why = dontcache(&tree, FsKind::F2fs).unwrap().expect("refused");
        assert!(why.contains("fs/f2fs/file.c sets no FOP_DONTCACHE"), "{why}");
    }

    #[test]
    fn a_missing_file_is_a_refusal_that_names_it() {
        let tree = DirFiles::from_map([("include/uapi/linux/fs.h", UAPI_WITH)]);
        let why = dontcache(&tree, FsKind::Ext4).unwrap().expect("refused");
        assert!(why.contains("has no fs/ext4/file.c"), "{why}");
    }

    #[test]
    fn only_a_scenario_that_reads_with_rwf_dontcache_is_refused() {
        let tree = DirFiles::from_map([("include/uapi/linux/fs.h", UAPI_WITHOUT)]);
        let root = crate::repo_root().join("scenarios");
        let with = crate::scenario::Scenario::load(&root.join("dontcache_xfs.yaml")).unwrap();
        assert!(refused(&tree, &with).unwrap().is_some());
        let without = crate::scenario::Scenario::load(&root.join("1mib_after_4k.yaml")).unwrap();
        assert_eq!(refused(&tree, &without).unwrap(), None);
        check(&tree, &without).unwrap();
        let e = check(&tree, &with).unwrap_err().to_string();
        let line = crate::files::read_text(&with.path).unwrap().lines().position(|l| l.contains("dontcache")).unwrap();
        assert!(e.starts_with(&format!("{}:{}: ", with.path.display(), line + 1)), "{e}");
        assert!(e.contains("defines no RWF_DONTCACHE") && e.ends_with("cannot run on this base"), "{e}");
    }
}
