//! The file's page cache, the model's state: which indices hold a folio of which order,
//! which folios carry PG_readahead, which are uptodate (their read has completed), and
//! where each folio sits in physical memory.
//!
//! A flat vector with one byte per page, like the xarray's multi-index entries: every
//! slot of a folio holds its order, from which a page finds the folio's first (folios are
//! naturally aligned); the head slot holds its flags too. Lookups are O(1); the vector
//! grows when a folio is added past its end.

/// One folio as a lookup returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FolioRef {
    /// `folio->index`: the first page of the folio (naturally aligned to its size).
    pub index: u64,
    pub order: u32,
    /// PG_readahead.
    pub readahead: bool,
    /// PG_uptodate: false while the folio's read is in flight.
    pub uptodate: bool,
}

impl FolioRef {
    /// `folio_nr_pages()`.
    pub fn nr_pages(&self) -> u64 {
        1 << self.order
    }

    /// `folio_next_index()`.
    pub fn next_index(&self) -> u64 {
        self.index + self.nr_pages()
    }
}

/// x86_64's `MAX_PHYSMEM_BITS` with 5-level paging: 52.
const PHYS_ADDR_MASK: u64 = (1 << 52) - 1;

/// One page's entry, a byte: 0 when no folio holds the page; else the order of the folio
/// that holds it plus one ([`Slot::ORDER`]), and on the folio's first page [`Slot::HEAD`]
/// and the folio's flags. A folio is naturally aligned, so a page finds its head by
/// clearing the low `order` bits of its index; a folio's range fills with one value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
struct Slot(u8);

impl Slot {
    const EMPTY: Slot = Slot(0);
    // The header's RADIFF_SLOT_*: the C reads these bytes itself (`PageCache::bytes`).
    const ORDER: u8 = 0x1f;
    const HEAD: u8 = 0x20;
    const READAHEAD: u8 = 0x40;
    const UPTODATE: u8 = 0x80;

    /// A page of a folio of `order` (below 31).
    fn of_order(order: u32) -> Slot {
        Slot(order as u8 + 1)
    }

    fn order(self) -> u32 {
        (self.0 & Slot::ORDER) as u32 - 1
    }

    fn has(self, flag: u8) -> bool {
        self.0 & flag != 0
    }

    fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.0 |= flag;
        } else {
            self.0 &= !flag;
        }
    }
}

/// The header's names for the bits of [`PageCache::bytes`], with their values here.
pub(crate) const SLOT_BITS: [(&str, u8); 4] = [
    ("RADIFF_SLOT_ORDER", Slot::ORDER),
    ("RADIFF_SLOT_HEAD", Slot::HEAD),
    ("RADIFF_SLOT_READAHEAD", Slot::READAHEAD),
    ("RADIFF_SLOT_UPTODATE", Slot::UPTODATE),
];

/// The page cache of the one file the model reads.
#[derive(Clone, Debug, Default)]
pub struct PageCache {
    slots: Vec<Slot>,
    /// The pfn of each folio, at its head's index (the other entries are stale). Apart
    /// from the slots, so lookups (`folio_at()`) stay small: only bio building asks.
    pfns: Vec<u64>,
    nr_folios: u64,
    /// Cached pages in each aligned run of [`CHUNK`] pages, so that the xarray walk can
    /// tell whether a node's slot holds anything without looking at every page.
    chunk_pages: Vec<u16>,
    /// Heads of the folios with PG_dropbehind (RWF_DONTCACHE reads made them); apart from
    /// the slots, since almost no scenario has any.
    dropbehind: std::collections::BTreeSet<u64>,
}

/// Pages per entry of `PageCache::chunk_pages`.
pub const CHUNK: u64 = 64;

/// `__filemap_add_folio()` found an entry in the range: -EEXIST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eexist;

impl PageCache {
    /// An empty cache with room for `pages` pages (it grows past them if needed).
    pub fn with_capacity(pages: u64) -> Self {
        PageCache {
            slots: vec![Slot::EMPTY; pages as usize],
            pfns: vec![0; pages as usize],
            nr_folios: 0,
            chunk_pages: vec![0; pages.div_ceil(CHUNK) as usize],
            dropbehind: Default::default(),
        }
    }

    fn slot(&self, index: u64) -> Slot {
        usize::try_from(index).ok().and_then(|i| self.slots.get(i).copied()).unwrap_or(Slot::EMPTY)
    }

    /// The cache as the header's `struct radiff_env` lends it to the C: a byte a page
    /// (the slots: 0 where none, else the folio's order plus one, `HEAD` on its first
    /// page, that page's `READAHEAD` and `UPTODATE`), and how many. Valid until the cache
    /// next changes.
    pub fn bytes(&self) -> (*const u8, usize) {
        (self.slots.as_ptr().cast::<u8>(), self.slots.len())
    }

    /// Whether a folio with PG_dropbehind is cached (a flag [`PageCache::bytes`] lacks).
    pub fn has_dropbehind(&self) -> bool {
        !self.dropbehind.is_empty()
    }

    /// The folio that holds page `index` (`xa_load()`), if any.
    pub fn folio_at(&self, index: u64) -> Option<FolioRef> {
        let page = self.slot(index);
        if page == Slot::EMPTY {
            return None;
        }
        let order = page.order();
        let head_index = index & !((1u64 << order) - 1);
        let head = self.slots[head_index as usize];
        debug_assert!(head.has(Slot::HEAD) && head.order() == order, "page {index} of a folio without its head");
        Some(FolioRef {
            index: head_index,
            order,
            readahead: head.has(Slot::READAHEAD),
            uptodate: head.has(Slot::UPTODATE),
        })
    }

    /// `folio_pfn()`: the page frame number of the folio's first page.
    pub fn folio_pfn(&self, folio: &FolioRef) -> u64 {
        self.pfns[folio.index as usize]
    }

    /// `folio_to_phys()`: the physical address of the folio's first byte. Bits of the pfn
    /// above x86_64's 52 physical address bits are dropped, so addresses never overflow.
    pub fn folio_phys(&self, folio: &FolioRef) -> u64 {
        (self.folio_pfn(folio) << crate::model::PAGE_SHIFT) & PHYS_ADDR_MASK
    }

    /// True if page `index` is in a folio.
    pub fn present(&self, index: u64) -> bool {
        self.slot(index) != Slot::EMPTY
    }

    fn count_pages(&mut self, index: u64, nr: u64, added: bool) {
        let mut i = index;
        while i < index + nr {
            let n = (CHUNK - i % CHUNK).min(index + nr - i);
            let c = &mut self.chunk_pages[(i / CHUNK) as usize];
            *c = if added { *c + n as u16 } else { *c - n as u16 };
            i += n;
        }
    }

    /// True if any page of `[start, end)` is in a folio.
    pub fn any_present(&self, start: u64, end: u64) -> bool {
        let end = end.min(self.slots.len() as u64);
        let mut i = start;
        while i < end {
            if i.is_multiple_of(CHUNK) && i + CHUNK <= end {
                if self.chunk_pages[(i / CHUNK) as usize] > 0 {
                    return true;
                }
                i += CHUNK;
            } else {
                if self.present(i) {
                    return true;
                }
                i += 1;
            }
        }
        false
    }

    /// The first page of `[from, last]` that is in a folio, if any, passing over empty
    /// runs of [`CHUNK`] pages at once (as the xarray's walk passes over empty nodes).
    pub fn next_present(&self, from: u64, last: u64) -> Option<u64> {
        let end = last.saturating_add(1).min(self.slots.len() as u64);
        let mut i = from;
        while i < end {
            if i.is_multiple_of(CHUNK) && self.chunk_pages[(i / CHUNK) as usize] == 0 {
                i += CHUNK;
            } else if self.present(i) {
                return Some(i);
            } else {
                i += 1;
            }
        }
        None
    }

    /// The pages the cache has room for: every folio lies below this index.
    pub fn span(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Number of folios in the cache.
    pub fn nr_folios(&self) -> u64 {
        self.nr_folios
    }

    /// `__filemap_add_folio()`: insert a folio of `1 << order` pages at `index` whose first
    /// page is page frame `pfn`, or fail with -EEXIST if any page of the range already
    /// holds a folio. The folio is locked and not uptodate until its read completes.
    pub fn add_folio(&mut self, index: u64, order: u32, readahead: bool, pfn: u64) -> Result<(), Eexist> {
        let nr = 1u64 << order;
        assert!(order < 31 && index.is_multiple_of(nr), "folio at {index} of order {order} is not naturally aligned");
        let end = (index + nr) as usize;
        if self.slots.len() < end {
            self.slots.resize(end.max(self.slots.len() * 2), Slot::EMPTY);
            self.pfns.resize(self.slots.len(), 0);
            self.chunk_pages.resize((self.slots.len() as u64).div_ceil(CHUNK) as usize, 0);
        }
        let range = &mut self.slots[index as usize..end];
        if range.iter().any(|s| *s != Slot::EMPTY) {
            return Err(Eexist);
        }
        range.fill(Slot::of_order(order));
        range[0].set(Slot::HEAD, true);
        range[0].set(Slot::READAHEAD, readahead);
        self.pfns[index as usize] = pfn;
        self.count_pages(index, nr, true);
        self.nr_folios += 1;
        Ok(())
    }

    fn head_mut(&mut self, index: u64) -> &mut Slot {
        let head = &mut self.slots[index as usize];
        assert!(head.has(Slot::HEAD), "page {index} is not the head of a folio: {head:?}");
        head
    }

    /// `folio_mark_uptodate()` (the read completed, or the folio needed no read).
    pub fn set_uptodate(&mut self, head: u64) {
        self.head_mut(head).set(Slot::UPTODATE, true);
    }

    /// The folio's read in flight again (not uptodate, locked): a read the guest recorded
    /// still in flight where the model had completed it (`crate::LoadInFlight`).
    pub fn clear_uptodate(&mut self, head: u64) {
        self.head_mut(head).set(Slot::UPTODATE, false);
    }

    /// `folio_set_readahead()`.
    pub fn set_readahead(&mut self, head: u64) {
        self.head_mut(head).set(Slot::READAHEAD, true);
    }

    /// `folio_clear_readahead()`.
    pub fn clear_readahead(&mut self, head: u64) {
        self.head_mut(head).set(Slot::READAHEAD, false);
    }

    /// `filemap_remove_folio()`.
    pub fn remove_folio(&mut self, head: u64) {
        let folio = self.folio_at(head).expect("removing a folio that is not there");
        assert_eq!(folio.index, head, "removing from the middle of a folio");
        self.slots[head as usize..folio.next_index() as usize].fill(Slot::EMPTY);
        self.count_pages(head, folio.nr_pages(), false);
        self.nr_folios -= 1;
        self.dropbehind.remove(&head);
    }

    /// `__folio_set_dropbehind()` on the folio whose head is `head`.
    pub fn set_dropbehind(&mut self, head: u64) {
        self.dropbehind.insert(head);
    }

    /// `folio_test_dropbehind()`.
    pub fn test_dropbehind(&self, head: u64) -> bool {
        self.dropbehind.contains(&head)
    }

    /// `folio_test_clear_dropbehind()`: whether it was set; it is clear after.
    pub fn test_clear_dropbehind(&mut self, head: u64) -> bool {
        self.dropbehind.remove(&head)
    }

    /// The folios whose first page is in `[start, end)`, in index order.
    pub fn folios_in(&self, start: u64, end: u64) -> Vec<FolioRef> {
        let mut out = Vec::new();
        self.folios_in_into(start, end, &mut out);
        out
    }

    /// [`PageCache::folios_in`] into `out`, emptied first.
    pub fn folios_in_into(&self, start: u64, end: u64, out: &mut Vec<FolioRef>) {
        out.clear();
        let end = end.min(self.slots.len() as u64);
        let mut i = start;
        while i < end {
            match self.folio_at(i) {
                Some(f) if f.index == i => {
                    out.push(f);
                    i = f.next_index();
                }
                _ => i += 1,
            }
        }
    }

    /// Every folio in the cache, in index order.
    pub fn folios(&self) -> Vec<FolioRef> {
        self.folios_in(0, self.slots.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_folio_is_found_from_every_page_and_blocks_overlapping_adds() {
        let mut cache = PageCache::with_capacity(8);
        cache.add_folio(4, 2, true, 0x1234).unwrap();
        for i in 4..8 {
            let f = cache.folio_at(i).unwrap();
            assert_eq!((f.index, f.order, f.readahead, f.uptodate, cache.folio_pfn(&f)), (4, 2, true, false, 0x1234));
        }
        assert_eq!(cache.folio_phys(&cache.folio_at(7).unwrap()), 0x1234000);
        assert_eq!(cache.folio_at(3), None);
        assert_eq!(cache.add_folio(6, 1, false, 7), Err(Eexist));
        assert_eq!(cache.add_folio(0, 3, false, 7), Err(Eexist));
        assert_eq!(cache.folio_pfn(&cache.folio_at(5).unwrap()), 0x1234);
        cache.add_folio(16, 4, false, 0x40).unwrap();
        assert_eq!(cache.folio_at(31).map(|f| (f.index, cache.folio_pfn(&f))), Some((16, 0x40)));
        assert_eq!(cache.nr_folios(), 2);
        assert!(
            cache.any_present(0, 5)
                && !cache.any_present(0, 4)
                && !cache.any_present(8, 16)
                && cache.any_present(8, 17)
        );
        cache.add_folio(64, 6, false, 0x80).unwrap();
        assert!(cache.any_present(64, 128) && cache.any_present(100, 101) && !cache.any_present(128, 4096));
        cache.remove_folio(64);
        assert!(!cache.any_present(32, 4096));
        cache.remove_folio(4);
        assert!(!cache.present(5));
        assert!(!cache.any_present(0, 16));
        assert_eq!(cache.folios().iter().map(|f| f.index).collect::<Vec<_>>(), vec![16]);
    }

    /// The next present page is what a page-by-page walk finds, over empty chunks, partly
    /// filled ones, the end of the range and the end of the cache.
    #[test]
    fn the_next_present_page_is_the_one_a_page_by_page_walk_finds() {
        let mut cache = PageCache::with_capacity(300);
        for (index, order) in [(3, 0), (4, 2), (130, 1), (192, 6), (288, 3)] {
            cache.add_folio(index, order, false, 0).unwrap();
        }
        let walk = |from: u64, last: u64| (from..=last.min(400)).find(|&i| cache.present(i));
        for from in 0..320 {
            for last in [from, from + 1, from + 63, from + 64, from + 200, u64::MAX] {
                assert_eq!(cache.next_present(from, last), walk(from, last), "from {from} to {last}");
            }
        }
    }
}
