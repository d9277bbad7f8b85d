ssize_t __iomap_dio_read_simple(struct kiocb *iocb, struct iov_iter *iter,
		struct iomap_iter *iomi)
{
	gfp_t gfp = (iomi->flags & IOMAP_NOWAIT) ? GFP_NOWAIT : GFP_KERNEL;
	struct iomap_dio_simple *sr;
	unsigned int alignment;
	struct bio *bio;
	ssize_t ret;

	if (iomi->iomap.type != IOMAP_MAPPED ||
	    iomi->iomap.offset + iomi->iomap.length < iomi->pos + iomi->len ||
	    (iomi->iomap.flags & IOMAP_F_INTEGRITY)) {
		ret = -ENOTBLK;
		goto out_dio_end;
	}

	alignment = iomap_dio_alignment(iomi->inode, iomi->iomap.bdev, 0);
	if ((iomi->pos | iomi->len) & (alignment - 1)) {
		ret = -EINVAL;
		goto out_dio_end;
	}

	if (unlikely(!iomi->inode->i_sb->s_dio_done_wq &&
			!is_sync_kiocb(iocb))) {
		ret = sb_init_dio_done_wq(iomi->inode->i_sb);
		if (ret < 0)
			goto out_dio_end;
	}

	trace_iomap_dio_rw_begin(iocb, iter, 0, 0);

	bio = bio_alloc_bioset(iomi->iomap.bdev,
			       bio_iov_vecs_to_alloc(iter, BIO_MAX_VECS),
			       REQ_OP_READ, gfp, &iomap_dio_simple_pool);
	if (!bio) {
		ret = -EAGAIN;
		goto out_dio_end;
	}
	sr = container_of(bio, struct iomap_dio_simple, bio);
	sr->iocb = iocb;
	sr->dio_flags = 0;

	bio->bi_iter.bi_sector = iomap_sector(&iomi->iomap, iomi->pos);
	bio->bi_ioprio = iocb->ki_ioprio;

	ret = bio_iov_iter_get_pages(bio, iter,
				bdev_dma_alignment(bio->bi_bdev),
				alignment - 1);
	if (unlikely(ret))
		goto out_bio_put;

	if (bio->bi_iter.bi_size != iomi->len) {
		iov_iter_revert(iter, bio->bi_iter.bi_size);
		ret = -ENOTBLK;
		goto out_bio_release_pages;
	}

	sr->size = bio->bi_iter.bi_size;
	if (user_backed_iter(iter)) {
		bio_set_pages_dirty(bio);
		sr->dio_flags |= IOMAP_DIO_USER_BACKED;
	}

	if (iocb->ki_flags & IOCB_NOWAIT)
		bio->bi_opf |= REQ_NOWAIT;

	if (is_sync_kiocb(iocb)) {
		submit_bio_wait(bio);
		return iomap_dio_simple_complete(sr);
	}

	if ((iocb->ki_flags & IOCB_HIPRI)) {
		bio->bi_opf |= REQ_POLLED;
		WRITE_ONCE(iocb->private, bio);
	}
	bio->bi_end_io = iomap_dio_simple_end_io;
	submit_bio(bio);
	trace_iomap_dio_rw_queued(iomi->inode, iocb->ki_pos, iomi->len);
	return -EIOCBQUEUED;

out_bio_release_pages:
	bio_release_pages(bio, false);
out_bio_put:
	bio_put(bio);
out_dio_end:
	inode_dio_end(iomi->inode);
	return ret;
}

struct iomap_dio *
__iomap_dio_rw(struct kiocb *iocb, struct iov_iter *iter,
		const struct iomap_ops *ops, const struct iomap_dio_ops *dops,
		unsigned int dio_flags, void *private, size_t done_before)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct iomap_iter iomi = {
		.inode		= inode,
		.pos		= iocb->ki_pos,
		.len		= iov_iter_count(iter),
		.flags		= IOMAP_DIRECT,
		.private	= private,
	};
	bool wait_for_completion =
		is_sync_kiocb(iocb) || (dio_flags & IOMAP_DIO_FORCE_WAIT);
	struct blk_plug plug;
	struct iomap_dio *dio;
	loff_t ret = 0;

	trace_iomap_dio_rw_begin(iocb, iter, dio_flags, done_before);

	if (!iomi.len)
		return NULL;

	dio = kmalloc_obj(*dio);
	if (!dio)
		return ERR_PTR(-ENOMEM);

	dio->iocb = iocb;
	atomic_set(&dio->ref, 1);
	dio->size = 0;
	dio->i_size = i_size_read(inode);
	dio->dops = dops;
	dio->error = 0;
	dio->flags = dio_flags & (IOMAP_DIO_FSBLOCK_ALIGNED | IOMAP_DIO_BOUNCE);
	dio->done_before = done_before;

	dio->submit.iter = iter;
	dio->submit.waiter = current;

	if (iocb->ki_flags & IOCB_NOWAIT)
		iomi.flags |= IOMAP_NOWAIT;

	if (iov_iter_rw(iter) == READ) {
		if (iomi.pos >= dio->i_size)
			goto out_free_dio;

		if (user_backed_iter(iter))
			dio->flags |= IOMAP_DIO_USER_BACKED;

		ret = kiocb_write_and_wait(iocb, iomi.len);
		if (ret)
			goto out_free_dio;
	} else {
		iomi.flags |= IOMAP_WRITE;
		dio->flags |= IOMAP_DIO_WRITE;

		if (dio_flags & IOMAP_DIO_OVERWRITE_ONLY) {
			ret = -EAGAIN;
			if (iomi.pos >= dio->i_size ||
			    iomi.pos + iomi.len > dio->i_size)
				goto out_free_dio;
			iomi.flags |= IOMAP_OVERWRITE_ONLY;
		}

		if (iocb->ki_flags & IOCB_ATOMIC)
			iomi.flags |= IOMAP_ATOMIC;

		/* for data sync or sync, we need sync completion processing */
		if (iocb_is_dsync(iocb)) {
			dio->flags |= IOMAP_DIO_NEED_SYNC;

		       /*
			* For datasync only writes, we optimistically try using
			* WRITE_THROUGH for this IO. This flag requires either
			* FUA writes through the device's write cache, or a
			* normal write to a device without a volatile write
			* cache. For the former, Any non-FUA write that occurs
			* will clear this flag, hence we know before completion
			* whether a cache flush is necessary.
			*/
			if (!(iocb->ki_flags & IOCB_SYNC))
				dio->flags |= IOMAP_DIO_WRITE_THROUGH;
		}

		/*
		 * i_size updates must to happen from process context.
		 */
		if (iomi.pos + iomi.len > dio->i_size)
			dio->flags |= IOMAP_DIO_COMP_WORK;

		/*
		 * Try to invalidate cache pages for the range we are writing.
		 * If this invalidation fails, let the caller fall back to
		 * buffered I/O.
		 */
		ret = kiocb_invalidate_pages(iocb, iomi.len);
		if (ret) {
			if (ret != -EAGAIN) {
				trace_iomap_dio_invalidate_fail(inode, iomi.pos,
								iomi.len);
				if (iocb->ki_flags & IOCB_ATOMIC) {
					/*
					 * folio invalidation failed, maybe
					 * this is transient, unlock and see if
					 * the caller tries again.
					 */
					ret = -EAGAIN;
				} else {
					/* fall back to buffered write */
					ret = -ENOTBLK;
				}
			}
			goto out_free_dio;
		}
	}

	if (!wait_for_completion && !inode->i_sb->s_dio_done_wq) {
		ret = sb_init_dio_done_wq(inode->i_sb);
		if (ret < 0)
			goto out_free_dio;
	}

	inode_dio_begin(inode);

	blk_start_plug(&plug);
	while ((ret = iomap_iter(&iomi, ops)) > 0) {
		iomi.status = iomap_dio_iter(&iomi, dio);

		/*
		 * We can only poll for single bio I/Os.
		 */
		iocb->ki_flags &= ~IOCB_HIPRI;
	}

	blk_finish_plug(&plug);

	/*
	 * We only report that we've read data up to i_size.
	 * Revert iter to a state corresponding to that as some callers (such
	 * as the splice code) rely on it.
	 */
	if (iov_iter_rw(iter) == READ && iomi.pos >= dio->i_size)
		iov_iter_revert(iter, iomi.pos - dio->i_size);

	if (ret == -EFAULT && dio->size && (dio_flags & IOMAP_DIO_PARTIAL)) {
		if (!(iocb->ki_flags & IOCB_NOWAIT))
			wait_for_completion = true;
		ret = 0;
	}

	/* magic error code to fall back to buffered I/O */
	if (ret == -ENOTBLK) {
		wait_for_completion = true;
		ret = 0;
	}
	if (ret < 0)
		iomap_dio_set_error(dio, ret);

	/*
	 * If all the writes we issued were already written through to the
	 * media, we don't need to flush the cache on IO completion. Clear the
	 * sync flag for this case.
	 *
	 * Otherwise clear the inline completion flag if any sync work is
	 * needed, as that needs to be performed from process context.
	 */
	if (dio->flags & IOMAP_DIO_WRITE_THROUGH)
		dio->flags &= ~IOMAP_DIO_NEED_SYNC;
	else if (dio->flags & IOMAP_DIO_NEED_SYNC)
		dio->flags |= IOMAP_DIO_COMP_WORK;

	/*
	 * We are about to drop our additional submission reference, which
	 * might be the last reference to the dio.  There are three different
	 * ways we can progress here:
	 *
	 *  (a) If this is the last reference we will always complete and free
	 *	the dio ourselves.
	 *  (b) If this is not the last reference, and we serve an asynchronous
	 *	iocb, we must never touch the dio after the decrement, the
	 *	I/O completion handler will complete and free it.
	 *  (c) If this is not the last reference, but we serve a synchronous
	 *	iocb, the I/O completion handler will wake us up on the drop
	 *	of the final reference, and we will complete and free it here
	 *	after we got woken by the I/O completion handler.
	 */
	dio->wait_for_completion = wait_for_completion;
	if (!atomic_dec_and_test(&dio->ref)) {
		if (!wait_for_completion) {
			trace_iomap_dio_rw_queued(inode, iomi.pos, iomi.len);
			return ERR_PTR(-EIOCBQUEUED);
		}

		for (;;) {
			set_current_state(TASK_UNINTERRUPTIBLE);
			if (!READ_ONCE(dio->submit.waiter))
				break;

			blk_io_schedule();
		}
		__set_current_state(TASK_RUNNING);
	}

	return dio;

out_free_dio:
	kfree(dio);
	if (ret)
		return ERR_PTR(ret);
	return NULL;
}
