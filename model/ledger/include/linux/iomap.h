static __always_inline ssize_t iomap_dio_read_simple(struct kiocb *iocb,
		struct iov_iter *iter, iomap_iter_begin_fn begin)
{
	struct iomap_iter iomi = {
		.inode		= file_inode(iocb->ki_filp),
		.pos		= iocb->ki_pos,
		.len		= iov_iter_count(iter),
		.flags		= IOMAP_DIRECT,
	};
	ssize_t ret;

	if (!iomi.len)
		return 0;

	/*
	 * Simple dio is an optimization for small IO. Filter out large IO
	 * early as it's the most common case to fail for typical direct IO
	 * workloads.
	 */
	if (iomi.len > iomi.inode->i_sb->s_blocksize)
		return -ENOTBLK;
	if (iocb->ki_pos + iomi.len > i_size_read(iomi.inode))
		return -ENOTBLK;
	if (IS_ENCRYPTED(iomi.inode))
		return -ENOTBLK;

	ret = kiocb_write_and_wait(iocb, iomi.len);
	if (ret)
		return ret;

	if (iocb->ki_flags & IOCB_NOWAIT)
		iomi.flags |= IOMAP_NOWAIT;

	inode_dio_begin(iomi.inode);
	ret = begin(iomi.inode, iomi.pos, iomi.len, iomi.flags, &iomi.iomap,
			&iomi.srcmap);
	if (ret) {
		inode_dio_end(iomi.inode);
		return ret;
	}

	return __iomap_dio_read_simple(iocb, iter, &iomi);
}
