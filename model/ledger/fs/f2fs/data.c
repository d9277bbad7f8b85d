static int f2fs_mpage_readpages(struct inode *inode, struct fsverity_info *vi,
		struct readahead_control *rac, struct folio *folio)
{
	struct bio *bio = NULL;
	sector_t last_block_in_bio = 0;
	struct f2fs_map_blocks map;
#ifdef CONFIG_F2FS_FS_COMPRESSION
	struct compress_ctx cc = {
		.inode = inode,
		.log_cluster_size = F2FS_I(inode)->i_log_cluster_size,
		.cluster_size = F2FS_I(inode)->i_cluster_size,
		.cluster_idx = NULL_CLUSTER,
		.rpages = NULL,
		.cpages = NULL,
		.nr_rpages = 0,
		.nr_cpages = 0,
	};
	pgoff_t nc_cluster_idx = NULL_CLUSTER;
	pgoff_t index;
#endif
	pgoff_t next_pgofs = 0;
	unsigned nr_pages = rac ? readahead_count(rac) : 1;
	struct address_space *mapping = rac ? rac->mapping : folio->mapping;
	unsigned max_nr_pages = nr_pages;
	int ret = 0;

	if (mapping_large_folio_support(mapping))
		return f2fs_read_data_large_folio(inode, vi, rac, folio);

#ifdef CONFIG_F2FS_FS_COMPRESSION
	if (f2fs_compressed_file(inode)) {
		index = rac ? readahead_index(rac) : folio->index;
		max_nr_pages = round_up(index + nr_pages, cc.cluster_size) -
				round_down(index, cc.cluster_size);
	}
#endif

	map.m_pblk = 0;
	map.m_lblk = 0;
	map.m_len = 0;
	map.m_flags = 0;
	map.m_next_pgofs = &next_pgofs;
	map.m_next_extent = NULL;
	map.m_seg_type = NO_CHECK_TYPE;
	map.m_may_create = false;

	for (; nr_pages; nr_pages--) {
		if (rac) {
			folio = readahead_folio(rac);
			prefetchw(&folio->flags);
		}

		f2fs_update_read_folio_count(F2FS_I_SB(inode), folio);

#ifdef CONFIG_F2FS_FS_COMPRESSION
		index = folio->index;

		if (!f2fs_compressed_file(inode))
			goto read_single_page;

		/* there are remained compressed pages, submit them */
		if (!f2fs_cluster_can_merge_page(&cc, index)) {
			cc.vi = vi;
			ret = f2fs_read_multi_pages(&cc, &bio,
						max_nr_pages,
						&last_block_in_bio,
						rac, false);
			f2fs_destroy_compress_ctx(&cc, false);
			if (ret)
				goto set_error_page;
		}
		if (cc.cluster_idx == NULL_CLUSTER) {
			if (nc_cluster_idx == index >> cc.log_cluster_size)
				goto read_single_page;

			ret = f2fs_is_compressed_cluster(inode, index);
			if (ret < 0)
				goto set_error_page;
			else if (!ret) {
				nc_cluster_idx =
					index >> cc.log_cluster_size;
				goto read_single_page;
			}

			nc_cluster_idx = NULL_CLUSTER;
		}
		ret = f2fs_init_compress_ctx(&cc);
		if (ret)
			goto set_error_page;

		f2fs_compress_ctx_add_page(&cc, folio);

		goto next_page;
read_single_page:
#endif

		ret = f2fs_read_single_page(inode, vi, folio, max_nr_pages,
					    &map, &bio, &last_block_in_bio,
					    rac);
		if (ret) {
#ifdef CONFIG_F2FS_FS_COMPRESSION
set_error_page:
#endif
			folio_zero_segment(folio, 0, folio_size(folio));
			folio_unlock(folio);
		}
#ifdef CONFIG_F2FS_FS_COMPRESSION
next_page:
#endif

#ifdef CONFIG_F2FS_FS_COMPRESSION
		if (f2fs_compressed_file(inode)) {
			/* last page */
			if (nr_pages == 1 && !f2fs_cluster_is_empty(&cc)) {
				cc.vi = vi;
				ret = f2fs_read_multi_pages(&cc, &bio,
							max_nr_pages,
							&last_block_in_bio,
							rac, false);
				f2fs_destroy_compress_ctx(&cc, false);
			}
		}
#endif
	}
	f2fs_submit_read_bio(F2FS_I_SB(inode), bio, DATA);
	return ret;
}
