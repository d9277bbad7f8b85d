//! The XArray walk of lib/xarray.c, Linux 7.3.4 (`xas_load()`, `xas_next()`,
//! `xas_prev()`), over the page cache's folios, for the two scans readahead makes:
//! `page_cache_next_miss()` and `page_cache_prev_miss()`.
//!
//! Why the walk and not "is page i cached": a folio of order 1 to 5 is one multi-index
//! entry in a leaf node, its head slot and `(1 << order) - 1` sibling slots, and
//! `xas_descend()` moves `xa_offset` back to the head slot while `xa_index` stays where
//! the scan started (it follows sibling entries to the head's offset and stores that).
//! `xas_next()`'s fast path then steps both together, one slot and one index at a time,
//! so a scan that starts L pages into such a folio
//! looks at the slot L pages behind the index it reports: a hole is reported L pages
//! after where it is, and at the end of the leaf `__xas_next()` resynchronises
//! (`xas_set_offset()`) L pages further on, never looking at the L pages in between.
//! `xas_prev()` mirrors it. Linux 7.3.4's `page_cache_next_miss()` and
//! `page_cache_prev_miss()` start with a fresh `XA_STATE`, so they see this whenever
//! readahead scans from inside a large folio (`page_cache_async_ra()` scans from
//! `index + 1`, `page_cache_sync_ra()` from `index - 1`).
//!
//! The tree is derived from the cache, as the kernel's would be with `XA_CHUNK_SHIFT` 6
//! (`CONFIG_BASE_SMALL` is off in the kernels radiff builds): a folio of order `o` is
//! stored at shift `o - o % 6` with `(1 << (o % 6)) - 1` siblings (`xas_set_order()`), a
//! slot of a node at shift `s` holds a node when a folio stored below `s` lies in its
//! range (nodes left empty are freed, `xas_delete_node()`), and the root covers every
//! page the cache may hold. A root taller than the kernel's changes no result of the two
//! scans: above the kernel's root there is nothing but empty slots, and leaving the
//! kernel's root (`set_bounds()`) and meeting an empty slot both return NULL at the same
//! `xa_index`. The page cache holds no value (shadow) entries: nothing is reclaimed.

use crate::pagecache::PageCache;

/// `XA_CHUNK_SHIFT`.
const CHUNK_SHIFT: u32 = 6;
/// `XA_CHUNK_MASK`.
const CHUNK_MASK: u64 = (1 << CHUNK_SHIFT) - 1;

/// A `struct xa_node`: the slots `[base, base + (64 << shift))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    shift: u32,
    base: u64,
}

/// What a slot holds (`xa_entry()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Null,
    /// A folio's head slot.
    Folio,
    /// `xa_mk_sibling(offset)`: a later slot of the multi-index entry at `offset`.
    Sibling(u8),
    Node(Node),
}

/// `xas->xa_node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XaNode {
    /// NULL: the head is an entry, not a node.
    Top,
    /// `XAS_BOUNDS`.
    Bounds,
    /// `XAS_RESTART` (`xas_frozen()`: the first `xas_next()`/`xas_prev()` loads the index
    /// itself).
    Restart,
    Node(Node),
}

/// `struct xa_state` with `xa_shift` 0 (`XA_STATE(xas, &mapping->i_pages, index)`).
#[derive(Clone, Copy, Debug)]
struct XaState {
    index: u64,
    node: XaNode,
    /// `unsigned char xa_offset`.
    offset: u8,
}

/// `get_offset()`.
fn get_offset(index: u64, node: Node) -> u8 {
    ((index >> node.shift) & CHUNK_MASK) as u8
}

/// The page cache seen as the kernel's xarray.
pub(crate) struct XArray<'a> {
    cache: &'a PageCache,
    /// The root node's shift; `None` when the array is empty (`xa_head` NULL).
    root_shift: Option<u32>,
}

impl<'a> XArray<'a> {
    pub(crate) fn new(cache: &'a PageCache) -> Self {
        let root_shift = (cache.nr_folios() > 0).then(|| {
            let last = cache.span().saturating_sub(1);
            let mut shift = 0;
            while shift < 60 && (last >> shift) > CHUNK_MASK {
                shift += CHUNK_SHIFT;
            }
            shift
        });
        XArray { cache, root_shift }
    }

    /// `xa_entry(xa, node, offset)`.
    fn entry(&self, node: Node, offset: u8) -> Entry {
        let start = node.base + ((offset as u64) << node.shift);
        let end = start + (1u64 << node.shift);
        if let Some(folio) = self.cache.folio_at(start) {
            // xas_set_order(): "xas->xa_shift = order - (order % XA_CHUNK_SHIFT);"
            let xa_shift = folio.order - folio.order % CHUNK_SHIFT;
            if xa_shift >= node.shift {
                // Stored at this node's level: the folio covers the whole slot.
                debug_assert_eq!(
                    xa_shift, node.shift,
                    "folio at {} of order {} in a node of shift {}",
                    folio.index, folio.order, node.shift
                );
                return if folio.index == start {
                    Entry::Folio
                } else {
                    Entry::Sibling(((folio.index - node.base) >> node.shift) as u8)
                };
            }
            return Entry::Node(Node { shift: node.shift - CHUNK_SHIFT, base: start });
        }
        // Any folio in the slot that does not hold its first page is smaller than the slot:
        // stored below it, in a node.
        if node.shift > 0 && self.cache.any_present(start + 1, end) {
            return Entry::Node(Node { shift: node.shift - CHUNK_SHIFT, base: start });
        }
        Entry::Null
    }

    /// `xa_parent()` and `node->offset`.
    fn parent(&self, node: Node) -> (Option<Node>, u8) {
        let shift = node.shift + CHUNK_SHIFT;
        let offset = ((node.base >> shift) & CHUNK_MASK) as u8;
        if Some(node.shift) == self.root_shift {
            return (None, offset);
        }
        (Some(Node { shift, base: node.base & !((64u64 << shift) - 1) }), offset)
    }

    /// `xas_descend()`.
    fn xas_descend(&self, xas: &mut XaState, node: Node) -> Entry {
        let mut offset = get_offset(xas.index, node);
        let mut entry = self.entry(node, offset);
        xas.node = XaNode::Node(node);
        while let Entry::Sibling(head) = entry {
            offset = head;
            entry = self.entry(node, offset);
        }
        xas.offset = offset;
        entry
    }

    /// `xas_load()` from a state that is not at a node (`xas_start()` goes to the head).
    fn xas_load(&self, xas: &mut XaState) -> Entry {
        let Some(shift) = self.root_shift else {
            // xas_start(): "if (!xa_is_node(entry)) { if (xas->xa_index) return set_bounds(xas); }"
            xas.node = if xas.index != 0 { XaNode::Bounds } else { XaNode::Top };
            return Entry::Null;
        };
        if (xas.index >> shift) > CHUNK_MASK {
            xas.node = XaNode::Bounds;
            return Entry::Null;
        }
        xas.node = XaNode::Top;
        let mut entry = Entry::Node(Node { shift, base: 0 });
        while let Entry::Node(node) = entry {
            entry = self.xas_descend(xas, node);
            if node.shift == 0 {
                break;
            }
        }
        entry
    }

    /// `xas_next()` (include/linux/xarray.h) and `__xas_next()`.
    fn xas_next(&self, xas: &mut XaState) -> Entry {
        if let XaNode::Node(node) = xas.node {
            if node.shift == 0 && xas.offset as u64 != CHUNK_MASK {
                xas.index = xas.index.wrapping_add(1);
                xas.offset += 1;
                return self.entry(node, xas.offset);
            }
        }
        // __xas_next()
        if xas.node != XaNode::Restart {
            xas.index = xas.index.wrapping_add(1);
        }
        let mut node = match xas.node {
            XaNode::Top => {
                xas.node = XaNode::Bounds;
                return Entry::Null;
            }
            XaNode::Bounds | XaNode::Restart => return self.xas_load(xas),
            XaNode::Node(node) => node,
        };
        if xas.offset != get_offset(xas.index, node) {
            xas.offset += 1;
        }
        while xas.offset as u64 == CHUNK_MASK + 1 {
            let (parent, offset) = self.parent(node);
            xas.offset = offset + 1;
            let Some(parent) = parent else {
                xas.node = XaNode::Bounds;
                return Entry::Null;
            };
            node = parent;
            xas.node = XaNode::Node(node);
        }
        loop {
            match self.entry(node, xas.offset) {
                Entry::Node(child) => {
                    node = child;
                    xas.node = XaNode::Node(node);
                    xas.offset = get_offset(xas.index, node);
                }
                entry => return entry,
            }
        }
    }

    /// `xas_prev()` (include/linux/xarray.h) and `__xas_prev()`.
    fn xas_prev(&self, xas: &mut XaState) -> Entry {
        if let XaNode::Node(node) = xas.node {
            if node.shift == 0 && xas.offset != 0 {
                xas.index = xas.index.wrapping_sub(1);
                xas.offset -= 1;
                return self.entry(node, xas.offset);
            }
        }
        // __xas_prev()
        if xas.node != XaNode::Restart {
            xas.index = xas.index.wrapping_sub(1);
        }
        let mut node = match xas.node {
            XaNode::Top => {
                xas.node = XaNode::Bounds;
                return Entry::Null;
            }
            XaNode::Bounds | XaNode::Restart => return self.xas_load(xas),
            XaNode::Node(node) => node,
        };
        if xas.offset != get_offset(xas.index, node) {
            xas.offset = xas.offset.wrapping_sub(1);
        }
        while xas.offset == 255 {
            let (parent, offset) = self.parent(node);
            xas.offset = offset.wrapping_sub(1);
            let Some(parent) = parent else {
                xas.node = XaNode::Bounds;
                return Entry::Null;
            };
            node = parent;
            xas.node = XaNode::Node(node);
        }
        loop {
            match self.entry(node, xas.offset) {
                Entry::Node(child) => {
                    node = child;
                    xas.node = XaNode::Node(node);
                    xas.offset = get_offset(xas.index, node);
                }
                entry => return entry,
            }
        }
    }

    /// The scan of `page_cache_next_miss()`, Linux 7.3.4 mm/filemap.c: up to `max_scan`
    /// steps of `xas_next()`; an empty slot (or a value entry, which the model never stores)
    /// ends it at its index, wrapping to 0 ends it at 0, and a scan that finds no miss
    /// returns the index after the last it looked at. Returns the index and how the scan
    /// ended.
    pub(crate) fn next_miss(&self, index: u64, max_scan: u64) -> (u64, ScanEnd) {
        let mut xas = XaState { index, node: XaNode::Restart, offset: 0 };
        for _ in 0..max_scan {
            if self.xas_next(&mut xas) == Entry::Null {
                return (xas.index, ScanEnd::Miss);
            }
            if xas.index == 0 {
                return (0, ScanEnd::Wrapped);
            }
        }
        (xas.index.wrapping_add(1), ScanEnd::MaxScan)
    }

    /// The scan of `page_cache_prev_miss()`, Linux 7.3.4 mm/filemap.c: `next_miss` going
    /// down with `xas_prev()`: wrapping below 0 ends it at `ULONG_MAX`, and a scan that
    /// finds no miss returns the index before the last it looked at.
    pub(crate) fn prev_miss(&self, index: u64, max_scan: u64) -> (u64, ScanEnd) {
        let mut xas = XaState { index, node: XaNode::Restart, offset: 0 };
        for _ in 0..max_scan {
            if self.xas_prev(&mut xas) == Entry::Null {
                // Leaving the tree below 0 (set_bounds()) returns xa_index ULONG_MAX too.
                let end = if xas.index == u64::MAX { ScanEnd::Wrapped } else { ScanEnd::Miss };
                return (xas.index, end);
            }
            if xas.index == u64::MAX {
                return (u64::MAX, ScanEnd::Wrapped);
            }
        }
        (xas.index.wrapping_sub(1), ScanEnd::MaxScan)
    }
}

/// `struct radiff_xas` (model/c/radiff_kernel.h): an [`XaState`] as the C keeps it between
/// the steps of a tree's own walk (its `page_cache_next_miss()` run as C). `node`: 0 NULL
/// (the head is an entry), 1 `XAS_BOUNDS`, 2 `XAS_RESTART`, 3 the node of `shift` whose
/// first slot is page `base`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CXas {
    pub index: std::ffi::c_ulong,
    pub base: std::ffi::c_ulong,
    pub shift: std::ffi::c_uint,
    pub node: u8,
    pub offset: u8,
}

impl XArray<'_> {
    /// One `xas_next()` (`up`) or `xas_prev()` of the C's cursor `xas`, moved in place;
    /// whether the slot it stands on then holds an entry (a folio or a sibling).
    pub(crate) fn step(&self, xas: &mut CXas, up: bool) -> bool {
        let node = match xas.node {
            0 => XaNode::Top,
            1 => XaNode::Bounds,
            2 => XaNode::Restart,
            _ => XaNode::Node(Node { shift: xas.shift, base: xas.base }),
        };
        let mut state = XaState { index: xas.index, node, offset: xas.offset };
        let entry = if up { self.xas_next(&mut state) } else { self.xas_prev(&mut state) };
        (xas.index, xas.offset) = (state.index, state.offset);
        (xas.node, xas.shift, xas.base) = match state.node {
            XaNode::Top => (0, 0, 0),
            XaNode::Bounds => (1, 0, 0),
            XaNode::Restart => (2, 0, 0),
            XaNode::Node(n) => (3, n.shift, n.base),
        };
        entry != Entry::Null
    }
}

/// How a scan ended (for coverage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScanEnd {
    /// An empty slot.
    Miss,
    /// The index wrapped (to 0 going up, to `ULONG_MAX` going down).
    Wrapped,
    /// `max_scan` slots without an empty one.
    MaxScan,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(folios: &[(u64, u32)], pages: u64) -> PageCache {
        let mut c = PageCache::with_capacity(pages);
        for &(index, order) in folios {
            c.add_folio(index, order, false, 0).unwrap();
        }
        c
    }

    /// The exact answer a scan with no xarray quirk would give.
    fn naive_next(c: &PageCache, index: u64, max_scan: u64) -> u64 {
        (index..index + max_scan).find(|&i| !c.present(i)).unwrap_or(index + max_scan)
    }

    #[test]
    fn scans_from_a_folio_head_or_of_order_0_folios_find_the_first_hole() {
        // Order-0 folios and scans that start on a head: xa_index and xa_offset agree.
        let c = cache(&[(0, 0), (1, 0), (2, 0), (5, 0), (64, 6), (128, 2), (200, 0)], 4096);
        let xa = XArray::new(&c);
        assert_eq!(xa.next_miss(1, 64).0, 3);
        // "if (xas.xa_index == 0) return 0;" also after loading index 0 itself.
        assert_eq!(xa.next_miss(0, 64), (0, ScanEnd::Wrapped));
        assert_eq!(xa.next_miss(64, 256).0, 132);
        assert_eq!(xa.next_miss(128, 64).0, 132);
        assert_eq!(xa.next_miss(3, 64), (3, ScanEnd::Miss));
        assert_eq!(xa.next_miss(64, 16), (80, ScanEnd::MaxScan));
        assert_eq!(xa.prev_miss(2, 64), (u64::MAX, ScanEnd::Wrapped));
        // From 131 (3 pages into the order-2 folio at 128) __xas_prev() leaves the leaf
        // with xa_index 130 and lands in the order-6 folio's slot, then at xa_index 129 in
        // the leaf of 0..63 at the offset of 129 (page 1): from there it walks the cached
        // pages 1 and 0 and leaves the tree at xa_index 127.
        assert_eq!(xa.prev_miss(131, 64).0, 127);
        assert_eq!(xa.prev_miss(200, 64).0, 199);
        for start in [1, 3, 64, 100, 128, 199, 200, 201] {
            assert_eq!(xa.next_miss(start, 300).0, naive_next(&c, start, 300), "next_miss({start})");
        }
    }

    #[test]
    fn the_c_cursors_steps_walk_as_the_scans_do() {
        let c = cache(&[(0, 2), (4, 2), (112, 4), (128, 4), (144, 0)], 4096);
        let xa = XArray::new(&c);
        for (index, max_scan) in [(0, 200), (113, 64), (5, 3), (150, 10)] {
            let mut xas = CXas { index, node: 2, ..Default::default() };
            let mut miss = None;
            for _ in 0..max_scan {
                if !xa.step(&mut xas, true) || xas.index == 0 {
                    miss = Some(xas.index);
                    break;
                }
            }
            let scanned = miss.unwrap_or(xas.index + 1);
            assert_eq!(scanned, xa.next_miss(index, max_scan).0, "next_miss({index}, {max_scan})");
        }
        let mut xas = CXas { index: 130, node: 2, ..Default::default() };
        let mut steps = 0;
        while xa.step(&mut xas, false) && steps < 40 {
            steps += 1;
        }
        assert_eq!(xas.index, xa.prev_miss(130, 1000).0, "prev_miss's hole");
    }

    /// The scan `page_cache_async_ra()` made in the kernel's trace of
    /// scenarios/interleaved_next_miss_lag.yaml: an order-4 folio at 112, nothing at 128.
    /// "start = page_cache_next_miss(ractl->mapping, index + 1, max_pages);" from 113
    /// returns 129: xas_descend() left xa_offset on the folio's head (112) with xa_index
    /// 113, xas_next() moved both, and at the end of the leaf __xas_next() went up and
    /// resynchronised past index 128 without looking at it.
    #[test]
    fn next_miss_from_inside_a_multi_index_entry_lags_and_skips_at_the_leaf_end() {
        let c = cache(&[(64, 4), (80, 4), (96, 4), (112, 4)], 2048);
        let xa = XArray::new(&c);
        assert_eq!(xa.next_miss(113, 64), (129, ScanEnd::Miss));
        assert_eq!(xa.next_miss(112, 64), (128, ScanEnd::Miss));
        // Inside the leaf, a hole is reported as many pages late as the scan started into
        // its folio: 3 pages into the order-2 folio at 8, the hole at 12 reads as 15.
        let c = cache(&[(8, 2)], 2048);
        let xa = XArray::new(&c);
        assert_eq!(xa.next_miss(11, 64).0, 15);
        assert_eq!(xa.next_miss(9, 64).0, 13);
        // The skipped pages are not looked at: a cached page right after the leaf is not
        // seen as cached when the scan jumps over it, a missing one not as missing.
        // From 58 (2 pages into the order-3 folio at 56) the leaf ends at xa_index 65, and
        // __xas_next() resumes at 66: the hole at 65 is never looked at, and the scan goes
        // on through the folio at 66 to the hole at 68.
        let c = cache(&[(56, 3), (64, 0), (66, 1)], 2048);
        let xa = XArray::new(&c);
        assert_eq!(naive_next(&c, 58, 64), 65);
        assert_eq!(xa.next_miss(58, 64).0, 68);
    }

    #[test]
    fn prev_miss_from_inside_a_multi_index_entry_looks_ahead_of_its_index() {
        // "miss = page_cache_prev_miss(ractl->mapping, index - 1, max_pages);" with index - 1
        // the last page of an order-2 folio at 20: xa_offset starts at 20, xa_index at 23,
        // so the hole at 19 is found while xa_index says 22.
        let c = cache(&[(20, 2)], 2048);
        let xa = XArray::new(&c);
        assert_eq!(xa.prev_miss(23, 64), (22, ScanEnd::Miss));
        assert_eq!(xa.prev_miss(20, 64), (19, ScanEnd::Miss));
        // Cached from 0: from a head the scan wraps; from inside a folio it reaches offset 0
        // of the leaf with xa_index ahead, and __xas_prev() leaves the tree at xa_index 2.
        let c = cache(&[(0, 2), (4, 2)], 2048);
        let xa = XArray::new(&c);
        assert_eq!(xa.prev_miss(4, 64), (u64::MAX, ScanEnd::Wrapped));
        assert_eq!(xa.prev_miss(7, 64), (2, ScanEnd::Miss));
    }

    #[test]
    fn large_folios_above_the_leaves_are_walked_as_the_kernel_walks_them() {
        // Order 6 and 7 folios live in the shift-6 node (the second as a head and a
        // sibling); __xas_next() catches xa_offset up one slot per step there.
        let c = cache(&[(0, 6), (128, 7), (256, 0)], 4096);
        let xa = XArray::new(&c);
        assert_eq!(xa.next_miss(1, 300).0, 64);
        assert_eq!(xa.next_miss(130, 300).0, 257);
        assert_eq!(xa.next_miss(200, 300).0, 257);
        // xa_offset steps down from the head's slot (2) while xa_index is still in slot 3:
        // the empty slot 1 is read at xa_index 254.
        assert_eq!(xa.prev_miss(255, 300).0, 254);
        assert_eq!(xa.prev_miss(191, 300).0, 127);
        // A scan that starts on the last page of a sibling slot: the next slot is read as
        // the sibling until xa_offset catches up with xa_index.
        assert_eq!(xa.next_miss(255, 300).0, 257);
        let c = cache(&[(128, 7)], 4096);
        let xa = XArray::new(&c);
        assert_eq!(xa.next_miss(255, 300).0, 257, "256 is read at the sibling slot 3, 257 at slot 4");
        assert_eq!(xa.next_miss(192, 300).0, 256);
    }
}
