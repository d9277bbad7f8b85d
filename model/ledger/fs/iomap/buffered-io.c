void iomap_readahead(const struct iomap_ops *ops,
		struct iomap_read_folio_ctx *ctx, void *private)
{
	struct readahead_control *rac = ctx->rac;
	struct iomap_iter iter = {
		.inode	= rac->mapping->host,
		.pos	= readahead_pos(rac),
		.len	= readahead_length(rac),
		.private = private,
	};
	size_t cur_bytes_submitted;

	trace_iomap_readahead(rac->mapping->host, readahead_count(rac));

	/*
	 * Fetch fsverity_info for both data and fsverity metadata, as iomap
	 * needs zeroed hash for merkle tree block synthesis
	 */
	ctx->vi = fsverity_get_info(iter.inode);
	if (ctx->vi && iter.pos < i_size_read(iter.inode))
		fsverity_readahead(ctx->vi, readahead_index(rac),
				readahead_count(rac));

	while (iomap_iter(&iter, ops) > 0) {
		iter.status = iomap_readahead_iter(&iter, ctx,
					&cur_bytes_submitted);
		if (ctx->read_ctx && ctx->ops->submit_read)
			ctx->ops->submit_read(&iter, ctx);
	}

	if (ctx->cur_folio)
		iomap_read_end(ctx->cur_folio, cur_bytes_submitted);
}
