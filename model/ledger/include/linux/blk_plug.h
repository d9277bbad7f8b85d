static inline void blk_flush_plug(struct blk_plug *plug, bool async)
{
	if (plug)
		__blk_flush_plug(plug, async);
}

static inline void blk_flush_plug(struct blk_plug *plug, bool async)
{
}
