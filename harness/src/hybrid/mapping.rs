//! What a tree's file systems give a regular file's mapping: large folios or not. The
//! model's input carries Linux 7.3.4's limits for each file system
//! (`radiff_model::MappingLimits::for_fs`); a tree whose file system sets no folio order
//! on its inodes (ext4 before it took large folios, as in Debian's 6.12) adds only order-0
//! folios, and its hybrid is given that instead. Read from the tree at run time: the file
//! that sets up the file system's inodes, and whether it calls any of the page cache's
//! setters of a folio order.

use radiff_model::{FsKind, MappingLimits};

use crate::error::Result;
use crate::port::Files;

/// The file of each file system whose inode set-up gives a mapping its folio orders in
/// Linux 7.3.4 (f2fs's gives large folios only to immutable files, never radiff's: its
/// limits are order 0 already).
pub const INODE_FILES: [(FsKind, &str); 2] = [(FsKind::Ext4, "fs/ext4/inode.c"), (FsKind::Xfs, "fs/xfs/xfs_icache.c")];

/// The page cache's setters of a mapping's folio orders (include/linux/pagemap.h).
pub const SETTERS: [&str; 3] =
    ["mapping_set_large_folios(", "mapping_set_folio_order_range(", "mapping_set_folio_min_order("];

/// The file systems of `tree` whose inode set-up calls none of [`SETTERS`], each with the
/// order-0 limits its files have; a file the tree lacks says nothing (the port's stay).
pub fn of(tree: &dyn Files) -> Result<Vec<(FsKind, MappingLimits)>> {
    let mut out = Vec::new();
    for (fs, file) in INODE_FILES {
        if let Some(text) = tree.read(file)? {
            if !SETTERS.iter().any(|s| text.contains(s)) {
                out.push((fs, MappingLimits::order0()));
            }
        }
    }
    Ok(out)
}

/// The sentence that says which file systems' limits the tree changed.
pub fn note(overrides: &[(FsKind, MappingLimits)]) -> Option<String> {
    let names: Vec<String> = overrides
        .iter()
        .map(|(fs, _)| {
            let file = INODE_FILES.iter().find(|(f, _)| f == fs).map_or("", |(_, file)| file);
            format!("{fs:?} ({file} calls none of {})", SETTERS.map(|s| format!("{s})")).join(", "))
        })
        .collect();
    (!names.is_empty()).then(|| {
        format!("the tree gives no large folios to the files of {}: the model adds order-0 folios there, where Linux 7.3.4 adds large ones", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::DirFiles;

    #[test]
    fn a_file_system_that_sets_no_folio_order_gets_order_0_and_one_the_tree_lacks_keeps_the_ports() {
        let older = DirFiles::from_map([
            ("fs/ext4/inode.c", "void ext4_set_aops(struct inode *inode) { }\n"),
            ("fs/xfs/xfs_icache.c", "\tmapping_set_folio_min_order(VFS_I(ip)->i_mapping, 0);\n"),
        ]);
        let got = of(&older).unwrap();
        assert_eq!(got, [(FsKind::Ext4, MappingLimits::order0())]);
        let said = note(&got).unwrap();
        assert!(said.contains("Ext4 (fs/ext4/inode.c calls none of mapping_set_large_folios()"), "{said}");
        let newer =
            DirFiles::from_map([("fs/ext4/inode.c", "\tmapping_set_folio_order_range(inode->i_mapping, 0, 9);\n")]);
        assert_eq!(of(&newer).unwrap(), []);
        assert_eq!(note(&[]), None);
    }
}
