int block_read_full_folio(struct folio *folio, get_block_t *get_block)
{
	struct inode *inode = folio->mapping->host;
	sector_t iblock, lblock;
	struct buffer_head *bh, *head, *prev = NULL;
	size_t blocksize;
	int fully_mapped = 1;
	bool page_error = false;
	loff_t limit = i_size_read(inode);

	/* This is needed for ext4. */
	if (IS_ENABLED(CONFIG_FS_VERITY) && IS_VERITY(inode))
		limit = inode->i_sb->s_maxbytes;

	head = folio_create_buffers(folio, inode, 0);
	blocksize = head->b_size;

	iblock = div_u64(folio_pos(folio), blocksize);
	lblock = div_u64(limit + blocksize - 1, blocksize);
	bh = head;

	do {
		if (buffer_uptodate(bh))
			continue;

		if (!buffer_mapped(bh)) {
			int err = 0;

			fully_mapped = 0;
			if (iblock < lblock) {
				WARN_ON(bh->b_size != blocksize);
				err = get_block(inode, iblock, bh, 0);
				if (err)
					page_error = true;
			}
			if (!buffer_mapped(bh)) {
				folio_zero_range(folio, bh_offset(bh),
						blocksize);
				if (!err)
					set_buffer_uptodate(bh);
				continue;
			}
			/*
			 * get_block() might have updated the buffer
			 * synchronously
			 */
			if (buffer_uptodate(bh))
				continue;
		}

		lock_buffer(bh);
		if (buffer_uptodate(bh)) {
			unlock_buffer(bh);
			continue;
		}

		/*
		 * If a folio's buffers are under async readin
		 * (end_buffer_async_read completion) then there is a
		 * possibility that another thread of control could lock
		 * one of the buffers after it has completed but while
		 * some of the other buffers have not completed.  This
		 * locked buffer would confuse end_buffer_async_read()
		 * into not unlocking the folio.  So the absence of
		 * BH_Async_Read tells end_buffer_async_read() that this
		 * buffer is not under async I/O.
		 *
		 * The folio comes unlocked when it has no locked
		 * buffer_async buffers left.
		 *
		 * The folio lock prevents anyone starting new async
		 * I/O reads into any of the buffers.
		 *
		 * The writeback flag is used to prevent simultaneous
		 * writeout of the same folio.
		 *
		 * The folio lock prevents anyone from starting writeback
		 * of a folio which is under read I/O (the writeback
		 * flag is only ever set on a locked folio).
		 */
		set_buffer_async_read(bh);
		if (prev)
			bh_submit(prev, REQ_OP_READ, bh_end_async_read);
		prev = bh;
	} while (iblock++, (bh = bh->b_this_page) != head);

	if (fully_mapped)
		folio_set_mappedtodisk(folio);

	/*
	 * All buffers are uptodate or get_block() returned an error
	 * when trying to map them - we must finish the read because
	 * end_buffer_async_read() will never be called on any buffer
	 * in this folio.
	 */
	if (prev)
		bh_submit(prev, REQ_OP_READ, bh_end_async_read);
	else
		folio_end_read(folio, !page_error);

	return 0;
}
