//! What the read path reads from the super block: `sb->s_maxbytes`, as each file system's
//! fill_super sets it in Linux 7.3.4 for radiff's 4 KiB-block file systems.

use crate::input::FsKind;

/// `MAX_LFS_FILESIZE` on 64-bit: `LLONG_MAX`.
pub const MAX_LFS_FILESIZE: u64 = i64::MAX as u64;

/// f2fs's `F2FS_BLKSIZE` (the page size) less `sizeof(struct node_footer)` (24 bytes), in
/// `__le32` slots: `DEF_ADDRS_PER_BLOCK` and `NIDS_PER_BLOCK` (include/linux/f2fs_fs.h).
const F2FS_SLOTS_PER_BLOCK: u64 = (4096 - 24) / 4;

/// `sb->s_maxbytes` of a file system `fs` made by radiff (4 KiB blocks; ext4 with the
/// `huge_file` feature, mkfs.ext4's default): what filemap_read() ("if (unlikely(iocb->ki_pos
/// >= inode->i_sb->s_maxbytes)) return 0;" and "iov_iter_truncate(iter,
/// > inode->i_sb->s_maxbytes - iocb->ki_pos)") and filemap_splice_read() compare with.
pub fn s_maxbytes(fs: FsKind) -> u64 {
    match fs {
        // xfs_fs_fill_super(): "sb->s_maxbytes = MAX_LFS_FILESIZE;".
        FsKind::Xfs => MAX_LFS_FILESIZE,
        // __ext4_fill_super(): "sb->s_maxbytes = ext4_max_size(sb->s_blocksize_bits, has_huge_files);"
        FsKind::Ext4 => ext4_max_size(12, true),
        // f2fs_fill_super(): "sb->s_maxbytes = max_file_blocks(NULL) << le32_to_cpu(raw_super->log_blocksize);"
        FsKind::F2fs => max_file_blocks() << 12,
    }
}

/// `ext4_max_size()`, Linux 7.3.4 fs/ext4/super.c: the size of an extent-mapped file, whose
/// logical block number must fit the 32-bit `ee_block`, less one block so that `ee_len` can
/// still cover an extent of the largest size.
pub fn ext4_max_size(blkbits: u32, has_huge_files: bool) -> u64 {
    let mut upper_limit = MAX_LFS_FILESIZE;
    if !has_huge_files {
        upper_limit = (1u64 << 32) - 1;
        // total blocks in file system block size
        upper_limit >>= blkbits - 9;
        upper_limit <<= blkbits;
    }
    let res = ((1u64 << 32) - 1) << blkbits;
    res.min(upper_limit)
}

/// `max_file_blocks()`, Linux 7.3.4 fs/f2fs/super.c, as f2fs_fill_super() calls it (inode
/// NULL): the blocks an f2fs inode's node tree addresses (two direct, two indirect and one double indirect node block; the
/// inode's own i_addr slots are not counted), at most `U32_MAX + 1` 4 KiB data units.
pub fn max_file_blocks() -> u64 {
    let mut leaf_count = F2FS_SLOTS_PER_BLOCK;
    // two direct node blocks
    let mut result = leaf_count * 2;
    // two indirect node blocks
    leaf_count *= F2FS_SLOTS_PER_BLOCK;
    result += leaf_count * 2;
    // one double indirect node block
    leaf_count *= F2FS_SLOTS_PER_BLOCK;
    result += leaf_count;
    // "result = umin(result, F2FS_BYTES_TO_BLK(((loff_t)U32_MAX + 1) * 4096));"
    result.min(((u32::MAX as u64 + 1) * 4096) >> 12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ext4_with_huge_file_stops_one_block_short_of_16_tib() {
        assert_eq!(s_maxbytes(FsKind::Ext4), (16u64 << 40) - 4096);
        // Without huge_file, i_blocks (512-byte sectors, 32 bits) is the tighter limit.
        assert_eq!(ext4_max_size(12, false), ((1u64 << 32) - 1) >> 3 << 12);
    }

    #[test]
    fn f2fs_addresses_a_little_under_4_tib_and_xfs_all_of_loff_t() {
        assert_eq!(max_file_blocks(), 2 * 1018 + 2 * 1018 * 1018 + 1018 * 1018 * 1018);
        assert_eq!(s_maxbytes(FsKind::F2fs), 4_329_687_105_536);
        assert_eq!(s_maxbytes(FsKind::Xfs), i64::MAX as u64);
    }
}
