static inline bool folio_mapped(const struct folio *folio)
{
	return folio_mapcount(folio) >= 1;
}

static inline pgoff_t vma_start_pgoff(const struct vm_area_struct *vma)
{
	return vma->vm_pgoff;
}

static inline unsigned long folio_nr_pages(const struct folio *folio)
{
	if (!folio_test_large(folio))
		return 1;
	return folio_large_nr_pages(folio);
}

static inline unsigned long folio_pfn(const struct folio *folio)
{
	return page_to_pfn(&folio->page);
}
