//! The trace: what one run of an access pattern did, as the kernel's tracepoints report it.
//!
//! One type for both sides: the ftrace parser (`radiff::ftrace`) builds it from
//! a real kernel's trace, and [`crate::predict`] builds it from the model, so
//! comparing the two is `==`, and a divergence is the first window where they part.

use serde::{Deserialize, Serialize};

/// Sectors are 512 bytes in the block layer's trace events, whatever the device's block size.
pub const SECTOR_SIZE: u64 = 512;

/// Pages are 4 KiB on the x86_64 guests radiff runs.
pub const PAGE_SIZE: u64 = 4096;

/// Everything that happened to one file and its device, in the order the kernel emitted it,
/// grouped into windows: each window starts at a `page_cache_sync_ra` or
/// `page_cache_async_ra` event and holds every event up to the next one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub windows: Vec<Window>,
}

/// What opened a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// Events before the first readahead call (none in a well-formed run, but never dropped).
    Start,
    /// `page_cache_sync_ra()`: the read found no folio at `index`.
    Sync,
    /// `page_cache_async_ra()`: the read reached a folio marked PG_readahead at `index`.
    Async,
    /// `mm_filemap_fault`: filemap_fault() was entered for page `index` (once per try: a
    /// fault retried after readahead dropped the mmap lock shows twice). `req_count` 1 and
    /// `ra` all default on both sides (the event prints neither). What filemap_fault did
    /// without a sync/async call (read-around, the VM_HUGEPAGE path: their
    /// `page_cache_ra_order` submits, folios and requests) belongs to this window; a
    /// `page_cache_sync_ra`/`page_cache_async_ra` it makes opens the next window.
    Fault,
    /// `mm_filemap_map_pages`: fault-around (filemap_map_pages()) over the file range
    /// `[index, index + req_count)` (the event's `index` and `last_index`: req_count =
    /// last - index + 1); `ra` all default. The kernel emits it only when
    /// next_uptodate_folio() found a folio in the range and no PMD was mapped; the pages
    /// it mapped are not in the event.
    FaultAround,
    /// `mm_khugepaged_collapse_file`: `collapse_file()` (mm/khugepaged.c) ended, for
    /// MADV_COLLAPSE, with this result; `index` is the event's (the page its loop stopped
    /// at: the range's end on success), `req_count` its `nr` (HPAGE_PMD_NR), `ra` all
    /// default. The readahead `collapse_file()` made for missing pages opened `Sync`
    /// windows before it; the order-9 folio that replaced the small ones is not a
    /// `mm_filemap_add_to_page_cache` (`xas_store()`), so no folio is in this window.
    Collapse(ScanResult),
}

/// Declares [`ScanResult`] with the names the trace prints.
macro_rules! scan_results {
    ($($variant:ident = $name:literal,)*) => {
        /// `enum scan_result`, mm/khugepaged.c (7.3.4), as `SCAN_STATUS` in
        /// include/trace/events/huge_memory.h names each in the trace.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ScanResult {
            $(#[serde(rename = $name)] $variant,)*
        }

        impl ScanResult {
            /// The name `__print_symbolic(result, SCAN_STATUS)` prints.
            pub fn name(self) -> &'static str {
                match self {
                    $(ScanResult::$variant => $name,)*
                }
            }

            /// The result a trace line names, if it is one of 7.3.4's.
            pub fn from_name(name: &str) -> Option<ScanResult> {
                match name {
                    $($name => Some(ScanResult::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

scan_results! {
    Fail = "failed",
    Succeed = "succeeded",
    NoPteTable = "no_pte_table",
    PmdMapped = "page_pmd_mapped",
    ExceedNonePte = "exceed_none_pte",
    ExceedSwapPte = "exceed_swap_pte",
    ExceedSharedPte = "exceed_shared_pte",
    PteNonPresent = "pte_non_present",
    PteUffd = "pte_uffd_wp",
    PteMappedHugepage = "pte_mapped_hugepage",
    LackReferencedPage = "lack_referenced_page",
    PageNull = "page_null",
    ScanAbort = "scan_aborted",
    PageCount = "not_suitable_page_count",
    PageLru = "page_not_in_lru",
    PageLock = "page_locked",
    PageAnon = "page_not_anon",
    PageLazyfree = "page_lazyfree",
    PageCompound = "page_compound",
    AnyProcess = "no_process_for_page",
    VmaNull = "vma_null",
    VmaCheck = "vma_check_failed",
    AddressRange = "not_suitable_address_range",
    DelPageLru = "could_not_delete_page_from_lru",
    AllocHugePageFail = "alloc_huge_page_failed",
    CgroupChargeFail = "ccgroup_charge_failed",
    Truncated = "truncated",
    PageHasPrivate = "page_has_private",
    StoreFailed = "store_failed",
    CopyMc = "copy_poisoned_page",
    PageFilled = "page_filled",
    PageDirtyOrWriteback = "page_dirty_or_writeback",
}

/// The readahead state (`struct file_ra_state`) as the sync/async tracepoint saw it:
/// the values *before* the call changed them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    pub order: u32,
    pub ra_pages: u64,
    pub mmap_miss: u64,
    /// `ra->prev_pos`, -1 when the file has not been read yet.
    pub prev_pos: i64,
}

/// One readahead window: the call that opened it and everything it caused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// The scenario's file the call was about, by index (0: the first or only file;
    /// see [`crate::pattern::FDS_PER_FILE`]). Requests are the device's, whatever file
    /// they read; a folio of another file than the current window's opens a `Start`
    /// window of its own file, on both sides.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file: u32,
    pub trigger: Trigger,
    /// The page index the call was made for (`readahead_index(ractl)`).
    pub index: u64,
    /// Pages the read still wanted (`req_count`).
    pub req_count: u64,
    /// `file_ra_state` before the call. `ra.start` is not in the tracepoint; both sides leave it 0.
    pub ra: RaState,
    /// What the call submitted: `page_cache_ra_order` and `page_cache_ra_unbounded` events.
    pub submits: Vec<Submit>,
    /// Folios added to the page cache, in the order they were added.
    pub folios: Vec<Folio>,
    /// Requests the device was sent (`block_rq_issue`), in issue order.
    pub requests: Vec<Request>,
}

/// A readahead submission inside a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Submit {
    /// `page_cache_ra_order()`: the window `[index, index + size)` with the last
    /// `async_size` pages asynchronous; `order` is `ra->order` before it is clamped.
    Order { index: u64, size: u64, async_size: u64, order: u32 },
    /// `page_cache_ra_unbounded()`: `nr_to_read` order-0 pages from `index`.
    Unbounded { index: u64, nr_to_read: u64, lookahead_size: u64 },
}

/// A folio added to the file's page cache (`mm_filemap_add_to_page_cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Folio {
    pub index: u64,
    pub order: u32,
}

/// A request issued to the device (`block_rq_issue`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Request {
    /// First sector, in 512-byte units from the start of the whole device.
    pub sector: u64,
    /// Length in 512-byte sectors.
    pub sectors: u64,
    /// The block layer's rwbs flags: `R` read, `A` readahead, `M` metadata, `S` sync, ...
    pub rwbs: Rwbs,
}

/// A request's rwbs flags, kept inline (a trace holds one per request): the kernel's
/// `blk_fill_rwbs()` writes at most `RWBS_LEN` - 1 = 9 of them. Compares, orders, hashes,
/// prints and serialises as the string it holds.
#[derive(Clone, Copy, Default)]
pub struct Rwbs {
    len: u8,
    bytes: [u8; Rwbs::CAP],
}

impl Rwbs {
    /// Flags kept; a longer string (never from the kernel) keeps its first `CAP` bytes
    /// that end on a character boundary.
    pub const CAP: usize = 15;

    /// Flags from ASCII letters, at compile time: what the model's requests carry, made
    /// once (a `From<&str>` copies at run time).
    pub const fn ascii(s: &str) -> Rwbs {
        assert!(s.len() <= Rwbs::CAP && s.is_ascii(), "rwbs flags are at most 15 ASCII letters");
        Rwbs::prefix(s.as_bytes(), s.len())
    }

    /// The first `n` bytes of `b` (at most [`Rwbs::CAP`], ending on a character boundary).
    const fn prefix(b: &[u8], n: usize) -> Rwbs {
        let mut bytes = [0; Rwbs::CAP];
        let mut i = 0;
        while i < n {
            bytes[i] = b[i];
            i += 1;
        }
        Rwbs { len: n as u8, bytes }
    }

    pub fn as_str(&self) -> &str {
        // Built only from a &str cut on a character boundary.
        std::str::from_utf8(self.flags()).unwrap_or_default()
    }

    /// The flags' bytes: what comparing, ordering and hashing look at, without the UTF-8
    /// check of [`Rwbs::as_str`] (a trace asks about every request's flags).
    #[inline]
    fn flags(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Whether flag `c` is among them: `str::contains(c)`, on the bytes.
    #[inline]
    pub fn contains(&self, c: char) -> bool {
        if c.is_ascii() {
            return self.flags().contains(&(c as u8));
        }
        let mut utf8 = [0; 4];
        let needle = c.encode_utf8(&mut utf8).as_bytes();
        self.flags().windows(needle.len()).any(|w| w == needle)
    }
}

impl From<&str> for Rwbs {
    fn from(s: &str) -> Self {
        let mut n = s.len().min(Rwbs::CAP);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        Rwbs::prefix(s.as_bytes(), n)
    }
}

impl std::ops::Deref for Rwbs {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Rwbs {
    fn eq(&self, other: &Self) -> bool {
        self.flags() == other.flags()
    }
}

impl Eq for Rwbs {}

impl PartialEq<&str> for Rwbs {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for Rwbs {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rwbs {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // str orders by its bytes.
        self.flags().cmp(other.flags())
    }
}

impl std::hash::Hash for Rwbs {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // What `str`'s Hash writes.
        state.write(self.flags());
        state.write_u8(0xff);
    }
}

impl std::fmt::Display for Rwbs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.as_str(), f)
    }
}

impl std::fmt::Debug for Rwbs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Rwbs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Rwbs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Rwbs::from(String::deserialize(d)?.as_str()))
    }
}

impl Request {
    /// Bytes the request transfers.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.sectors * SECTOR_SIZE
    }

    /// True for file system metadata (`REQ_META`): the model does not predict these.
    #[inline]
    pub fn is_metadata(&self) -> bool {
        self.rwbs.contains('M')
    }

    #[inline]
    pub fn is_read(&self) -> bool {
        self.rwbs.contains('R')
    }
}

impl Window {
    /// A window opened by `trigger` at page `index`, with nothing submitted, added or
    /// issued yet. `Start` windows (events before any call) are `open(Trigger::Start, 0,
    /// 0, RaState::default())`, on both sides.
    pub fn open(trigger: Trigger, index: u64, req_count: u64, ra: RaState) -> Window {
        Window { file: 0, trigger, index, req_count, ra, submits: Vec::new(), folios: Vec::new(), requests: Vec::new() }
    }

    /// [`Window::open`] for file `file`.
    pub fn open_in(file: u32, trigger: Trigger, index: u64, req_count: u64, ra: RaState) -> Window {
        Window { file, ..Window::open(trigger, index, req_count, ra) }
    }
}

/// Window vectors given back by [`Trace::recycle`], emptied, for the windows the model
/// opens next on this thread: a search predicts thousands of traces a second and drops
/// each once judged, and without these every window of every trace allocated (and freed)
/// its vectors. The model takes the thread's spares once a prediction ([`Spare::take`])
/// and gives back what it did not use ([`Spare::give_back`]).
#[derive(Debug, Default)]
pub(crate) struct Spare {
    /// An emptied `Trace::windows`.
    windows: Option<Vec<Window>>,
    submits: Vec<Vec<Submit>>,
    folios: Vec<Vec<Folio>>,
    requests: Vec<Vec<Request>>,
}

/// The most vectors of each kind [`Spare`] keeps (those of the largest traces' windows
/// beyond it are freed).
const SPARE_MAX: usize = 1 << 13;
/// The most items a kept vector may have room for; larger ones are freed. A window given a
/// large vector for a folio or two spreads the trace over memory the cache no longer holds:
/// kept whatever their size (and up to 65536 of each kind), they made the search slower
/// than new vectors did (`radiff explore --scenarios 3000 --threads 1 --seed 1`: 467-490
/// scenarios a second, 630-674 with no vector kept, 648-651 with this bound), where the
/// headline's same trace again and again gained (1.16 ms new, 0.87-0.89 ms kept).
const SPARE_CAP: usize = 8;

thread_local! {
    static SPARE: std::cell::RefCell<Spare> = std::cell::RefCell::new(Spare::default());
}

/// Keeps `v`, emptied, in `spare` unless it has no room, more than [`SPARE_CAP`], or
/// `spare` is full.
fn keep<T>(spare: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    if v.capacity() > 0 && v.capacity() <= SPARE_CAP && spare.len() < SPARE_MAX {
        v.clear();
        spare.push(v);
    }
}

impl Spare {
    /// This thread's spares, taken.
    pub(crate) fn take() -> Spare {
        SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()))
    }

    /// Back to this thread's spares: whole lists, unless some were given back meanwhile
    /// (then added one by one).
    pub(crate) fn give_back(self) {
        fn merge<T>(into: &mut Vec<Vec<T>>, from: Vec<Vec<T>>) {
            if into.is_empty() {
                *into = from;
            } else {
                from.into_iter().for_each(|v| keep(into, v));
            }
        }
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.windows.is_none() {
                spare.windows = self.windows;
            }
            merge(&mut spare.submits, self.submits);
            merge(&mut spare.folios, self.folios);
            merge(&mut spare.requests, self.requests);
        })
    }

    /// An empty `Trace::windows` (a spare one if there is).
    pub(crate) fn windows(&mut self) -> Vec<Window> {
        self.windows.take().unwrap_or_default()
    }

    /// [`Window::open_in`], its vectors spare ones.
    pub(crate) fn window(&mut self, file: u32, trigger: Trigger, index: u64, req_count: u64, ra: RaState) -> Window {
        Window {
            file,
            trigger,
            index,
            req_count,
            ra,
            submits: self.submits.pop().unwrap_or_default(),
            folios: self.folios.pop().unwrap_or_default(),
            requests: self.requests.pop().unwrap_or_default(),
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Folio {
    #[inline]
    pub fn pages(&self) -> u64 {
        1 << self.order
    }
}

impl Trace {
    /// Drops the trace, keeping its windows' vectors for the windows the model opens next
    /// on this thread ([`Spare`]): for a caller that predicts trace after trace and drops
    /// each, as radiff explore's search does. The traces made after are the same either way.
    pub fn recycle(self) {
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            let mut windows = self.windows;
            for w in windows.drain(..) {
                keep(&mut spare.submits, w.submits);
                keep(&mut spare.folios, w.folios);
                keep(&mut spare.requests, w.requests);
            }
            spare.windows = Some(windows);
        })
    }

    /// Drops the trace, keeping only the vector that held its windows, for the next
    /// trace the model makes on this thread: for a caller that drops each trace once it is
    /// sent (the hybrid's worker), where keeping the windows' own vectors as well
    /// ([`Trace::recycle`]) measured slower. The traces made after are the same either way.
    pub fn recycle_windows(mut self) {
        self.windows.clear();
        SPARE.with(|spare| spare.borrow_mut().windows.get_or_insert(self.windows).clear());
    }

    pub fn folios(&self) -> impl Iterator<Item = &Folio> {
        self.windows.iter().flat_map(|w| w.folios.iter())
    }

    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.windows.iter().flat_map(|w| w.requests.iter())
    }

    /// Number of folios added for each order, index = order.
    pub fn folio_orders(&self) -> Vec<u64> {
        let mut orders = Vec::new();
        for folio in self.folios() {
            let order = folio.order as usize;
            if orders.len() <= order {
                orders.resize(order + 1, 0);
            }
            orders[order] += 1;
        }
        orders
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_behaves_as_the_string_it_holds() {
        let (ra, r, rm) = (Rwbs::from("RA"), Rwbs::from("R"), Rwbs::from("RM"));
        assert_eq!(ra.as_str(), "RA");
        assert!(ra == "RA" && ra != r);
        assert!(rm.contains('M') && !ra.contains('M') && ra.contains('A') && ra.contains('R'));
        const RAS: Rwbs = Rwbs::ascii("RAS");
        assert!(RAS == Rwbs::from("RAS") && Rwbs::ascii("") == Rwbs::from(""));
        assert!(Rwbs::from("Ré").contains('é') && !Rwbs::from("Ré").contains('e'));
        let hash = |x: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            x(&mut h);
            std::hash::Hasher::finish(&h)
        };
        assert_eq!(hash(&|h| std::hash::Hash::hash(&ra, h)), hash(&|h| std::hash::Hash::hash("RA", h)));
        // Ordered as strings: "R" < "RA" < "RM".
        let mut v = [rm, ra, r];
        v.sort();
        assert_eq!(v.iter().map(|x| x.as_str()).collect::<Vec<_>>(), ["R", "RA", "RM"]);
        assert_eq!(format!("{ra} {ra:?}"), "RA \"RA\"");
        let json = serde_json::to_string(&Request { sector: 8, sectors: 16, rwbs: ra }).unwrap();
        assert_eq!(json, r#"{"sector":8,"sectors":16,"rwbs":"RA"}"#);
        assert_eq!(serde_json::from_str::<Request>(&json).unwrap().rwbs, ra);
        // Longer than the kernel ever writes: cut on a character boundary.
        assert_eq!(Rwbs::from("RRRRRRRRRRRRRRRRRRRR").len(), Rwbs::CAP);
        assert_eq!(Rwbs::from("RRRRRRRRRRRRRRé").as_str(), "RRRRRRRRRRRRRR");
    }

    #[test]
    fn a_recycled_trace_gives_its_vectors_emptied_to_the_next_windows() {
        std::thread::spawn(|| {
            let mut spare = Spare::take();
            let mut w = spare.window(0, Trigger::Sync, 0, 1, RaState::default());
            assert_eq!(w.folios.capacity(), 0, "nothing given back yet on this thread");
            w.folios.reserve_exact(SPARE_CAP);
            w.folios.extend((0..6).map(|index| Folio { index, order: 0 }));
            w.requests.push(Request { sector: 8, sectors: 8, rwbs: "RA".into() });
            let empty = Window::open(Trigger::Async, 9, 1, RaState::default());
            // Room for more than SPARE_CAP: freed, not kept.
            let mut large = Window::open(Trigger::Sync, 20, 1, RaState::default());
            large.folios.extend((0..40).map(|index| Folio { index, order: 0 }));
            Trace { windows: vec![large, w, empty] }.recycle();
            let mut spare = Spare::take();
            let windows = spare.windows();
            assert!(windows.is_empty() && windows.capacity() >= 3);
            let next = spare.window(1, Trigger::Sync, 3, 2, RaState::default());
            assert_eq!((next.file, next.index, next.req_count), (1, 3, 2));
            assert!(next.folios.is_empty() && (6..=SPARE_CAP).contains(&next.folios.capacity()));
            assert!(next.requests.is_empty() && next.requests.capacity() >= 1);
            assert_eq!(next.submits.capacity(), 0, "no submits were given back");
            assert_eq!(spare.window(0, Trigger::Sync, 0, 1, RaState::default()).folios.capacity(), 0, "each kept once");
            // What was not used goes back for the next prediction.
            let mut left = Spare::default();
            left.folios.push(Vec::with_capacity(7));
            left.give_back();
            assert_eq!(Spare::take().window(0, Trigger::Sync, 0, 1, RaState::default()).folios.capacity(), 7);
        })
        .join()
        .unwrap();
    }
}
