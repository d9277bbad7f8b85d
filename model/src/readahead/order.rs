//! Large folios in readahead (mm/readahead.c `page_cache_ra_order()`, its order's shrinking
//! and `ra_alloc_folio()`): the folios a readahead window is made of. Part of [`super`].

use super::*;

impl Model<'_> {
    /// `ra_alloc_folio()`, Linux 7.3.4 mm/readahead.c: add one folio of `order` at
    /// `index`, with PG_readahead if it holds `mark` ("mark = round_down(mark, 1UL << order)").
    pub(crate) fn ra_alloc_folio(
        &mut self,
        ractl: &mut ReadaheadControl,
        index: u64,
        mark: u64,
        order: u32,
    ) -> Result<(), RaAllocError> {
        if !self.ractl_alloc_folio(order) {
            cover!(self.rec, "ra_alloc_folio: -ENOMEM");
            return Err(RaAllocError::Enomem);
        }
        let mark = round_down(mark, 1 << order);
        if self.filemap_add_folio(index, order, index == mark).is_err() {
            cover!(self.rec, "ra_alloc_folio: -EEXIST");
            return Err(RaAllocError::Eexist);
        }
        self.ractl_set_dropbehind(ractl, index);
        if index == mark {
            cover!(self.rec, "ra_alloc_folio: folio holds mark: PG_readahead");
        }
        ractl.nr_pages += 1 << order;
        Ok(())
    }

    /// `page_cache_ra_order()`, Linux 7.3.4 mm/readahead.c: add the window
    /// `[ra->start, ra->start + ra->size)` as folios of `ra->order` (clamped to the mapping
    /// and to `ilog2(ra->size)`), smaller where the index is unaligned or near EOF, then
    /// read them; on a conflict with a cached folio, fall back to order-0 readahead of the
    /// rest.
    pub(crate) fn page_cache_ra_order(&mut self, ractl: &mut ReadaheadControl) {
        if self.c_page_cache_ra_order(ractl) {
            return;
        }
        let fd = ractl.fd;
        let start = ractl.index;
        let mut index = start;
        let min_order = self.min_order();
        let mut limit = self.isize.wrapping_sub(1) >> PAGE_SHIFT;
        let mut new_order = self.files[fd].ra.order;
        let ra = self.files[fd].ra;
        self.rec.submit(Submit::Order { index: start, size: ra.size, async_size: ra.async_size, order: ra.order });

        let mut err = Ok(());
        if self.max_order() == 0 {
            // !mapping_large_folio_support()
            cover!(self.rec, "page_cache_ra_order: !mapping_large_folio_support");
            self.files[fd].ra.order = 0;
        } else {
            cover_cmp!(self.rec, "page_cache_ra_order: new_order", "max_order", new_order, self.max_order());
            new_order = new_order.min(self.max_order());
            if ra.size == 0 {
                cover!(self.rec, "page_cache_ra_order: ra->size == 0");
            } else {
                cover_cmp!(self.rec, "page_cache_ra_order: new_order", "ilog2(ra->size)", new_order, ilog2(ra.size));
            }
            new_order = new_order.min(ilog2(ra.size));
            if new_order < min_order {
                cover!(self.rec, "page_cache_ra_order: new_order < min_order");
            }
            new_order = new_order.max(min_order);
            if self.policy.async_align == AsyncAlign::InRaOrder && ractl.may_shrink {
                new_order = self.ra_order_shrink(ractl, new_order);
            }
            // 7.3.4 computes limit and mark before clamping new_order; they depend only on
            // ra->size and ra->async_size, which only the v2 shrink above changes.
            let ra = self.files[fd].ra;
            let mark;
            cover_cmp!(
                self.rec,
                "page_cache_ra_order: limit",
                "index + ra->size - 1",
                limit,
                (index + ra.size).wrapping_sub(1)
            );
            if limit > (index + ra.size).wrapping_sub(1) {
                limit = index + ra.size - 1;
                mark = (index + ra.size).wrapping_sub(ra.async_size);
            } else {
                // "We've reached the end, so don't set a readahead marker."
                mark = u64::MAX;
            }
            self.files[fd].ra.order = new_order;
            self.rec.note(|| format!("ra_order: index {start} size {} async {} order {} -> new_order {new_order}, limit {limit}, mark {mark:#x}", ra.size, ra.async_size, ra.order));

            ractl.index = round_down(index, 1 << min_order);
            index = ractl.index;
            while index <= limit {
                let mut order = new_order;
                // "Align with smaller pages if needed"
                if index & ((1u64 << order) - 1) != 0 {
                    cover!(self.rec, "page_cache_ra_order: index unaligned to order: smaller folio");
                    order = index.trailing_zeros();
                }
                // "Don't allocate pages past EOF"
                while order > min_order && index + (1u64 << order) - 1 > limit {
                    cover!(self.rec, "page_cache_ra_order: past EOF: order - 1");
                    order -= 1;
                }
                if order == new_order {
                    cover!(self.rec, "page_cache_ra_order: folio of new_order");
                }
                if order == 0 {
                    cover!(self.rec, "page_cache_ra_order: folio of order 0");
                }
                err = self.ra_alloc_folio(ractl, index, mark, order);
                if let Err(e) = err {
                    // -ENOMEM and -EEXIST alike: "if (err) break;", then the fallback.
                    cover!(self.rec, "page_cache_ra_order: ra_alloc_folio failed: fallback");
                    self.rec.note(|| match e {
                        RaAllocError::Enomem => format!(
                            "ra_order: the order-{order} allocation at page {index} failed: fall back to order 0"
                        ),
                        RaAllocError::Eexist => format!("ra_order: page {index} is cached: fall back to order 0"),
                    });
                    break;
                }
                index += 1 << order;
            }
            self.read_pages(ractl);
            if err.is_ok() {
                return;
            }
        }
        // fallback: ->readahead() may have changed the window, so whether anything is left
        // to read is asked again.
        let ra = self.files[fd].ra;
        // "if (ra->size > index - start)" in pgoff_t: with a minimum folio order,
        // mapping_align_index() may have moved `index` below `start`, and a folio that
        // failed there leaves `index - start` negative, which wraps to a huge unsigned
        // value: no fallback (measured: xfs_16k_blocks).
        let done = index.wrapping_sub(start);
        if ra.size > done {
            cover!(self.rec, "page_cache_ra_order: fallback: ra->size > index - start");
            self.do_page_cache_ra(ractl, ra.size - done, ra.async_size);
        } else {
            cover!(self.rec, "page_cache_ra_order: fallback: nothing left");
        }
    }

    /// Seed 000 v2 (kernels/variants/async-align-v2, the design agreed in the thread): in
    /// `page_cache_ra_order()`, after clamping `new_order`, end an async window on a
    /// `1 << new_order` boundary, stepping `new_order` down while the trim would keep less
    /// than half of the window. Returns the order to allocate with.
    ///
    /// Choices the thread leaves open, taken here: the boundary is `1 << new_order` alone
    /// (no `ffs(max_pages)` term: the thread's v2 aligns 1 MiB reads at max_sectors_kb
    /// 1024, where ffs(255) - 1 = 0 stops base and v1); the stepped-down order becomes
    /// `ra->order` (as the clamped order does in 7.3.4); `limit` and the PG_readahead mark
    /// are computed from the shrunk window; a window reaching EOF is shrunk too. With these,
    /// the model gives the folio counts the thread reports for v2 (tests/seed000.rs).
    pub(super) fn ra_order_shrink(&mut self, ractl: &ReadaheadControl, mut new_order: u32) -> u32 {
        let min_order = self.min_order();
        let ra = &mut self.files[ractl.fd].ra;
        let start = ractl.index;
        if ra.size == 0 {
            cover!(self.rec, "ra_order_shrink: ra->size == 0");
            return new_order;
        }
        let end = start + ra.size;
        let mut aligned_end = round_down(end, 1 << new_order);
        // Unsigned long arithmetic, as the C's: where aligned_end falls below start the
        // difference wraps (found by the hybrid: the debug build's overflow check fired).
        while 2u64.wrapping_mul(aligned_end.wrapping_sub(start)) < ra.size && new_order > min_order {
            cover!(self.rec, "ra_order_shrink: trim keeps less than half: new_order - 1");
            new_order -= 1;
            aligned_end = round_down(end, 1 << new_order);
        }
        if aligned_end == end {
            cover!(self.rec, "ra_order_shrink: end aligned: no trim");
        }
        if aligned_end <= start {
            cover!(self.rec, "ra_order_shrink: aligned_end <= start");
        }
        if aligned_end > start {
            cover!(self.rec, "ra_order_shrink: window shrunk");
            let size = ra.size;
            ra.size = aligned_end - start;
            ra.async_size = ra.size;
            let after = ra.size;
            self.rec
                .note(|| format!("v2 shrink: end {end} -> {aligned_end} (order {new_order}), size {size} -> {after}"));
        }
        new_order
    }
}
