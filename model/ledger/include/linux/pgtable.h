static inline unsigned int exec_folio_order(void)
{
	return 0;
}
