STATIC ssize_t
xfs_file_dio_read(
	struct kiocb		*iocb,
	struct iov_iter		*to)
{
	struct xfs_inode	*ip = XFS_I(file_inode(iocb->ki_filp));
	ssize_t			ret;

	trace_xfs_file_direct_read(iocb, to);

	if (!iov_iter_count(to))
		return 0; /* skip atime */

	file_accessed(iocb->ki_filp);

	ret = xfs_ilock_iocb(iocb, XFS_IOLOCK_SHARED);
	if (ret)
		return ret;
	if (mapping_stable_writes(iocb->ki_filp->f_mapping)) {
		ret = iomap_dio_rw(iocb, to, &xfs_read_iomap_ops,
				&xfs_dio_read_bounce_ops, IOMAP_DIO_BOUNCE,
				NULL, 0);
	} else {
		ret = iomap_dio_read_simple(iocb, to, xfs_read_iomap_begin);
		if (ret == -ENOTBLK)
			ret = iomap_dio_rw(iocb, to, &xfs_read_iomap_ops, NULL,
					0, NULL, 0);
	}
	xfs_iunlock(ip, XFS_IOLOCK_SHARED);

	return ret;
}
