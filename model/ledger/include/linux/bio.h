static inline unsigned int bio_max_segs(unsigned int nr_segs)
{
	return min(nr_segs, BIO_MAX_VECS);
}

#define bio_end_sector(bio)	bvec_iter_end_sector((bio)->bi_iter)
