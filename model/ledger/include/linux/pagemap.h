static inline struct folio *__filemap_get_folio(struct address_space *mapping,
		pgoff_t index, fgf_t fgf_flags, gfp_t gfp)
{
	return __filemap_get_folio_mpol(mapping, index, fgf_flags, gfp, NULL);
}

static inline pgoff_t folio_next_index(const struct folio *folio)
{
	return folio->index + folio_nr_pages(folio);
}

#define DEFINE_READAHEAD(ractl, f, r, m, i)				\
	struct readahead_control ractl = {				\
		.file = f,						\
		.mapping = m,						\
		.ra = r,						\
		._index = i,						\
	}
