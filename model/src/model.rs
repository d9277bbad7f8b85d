//! The model's state for one prediction: the inode's page cache, one `struct file` per
//! fd, the backing device, the file's layout on disk, and the trace being recorded.
//!
//! The kernel functions are methods of `Model`, spread over modules named after the
//! kernel files they port (readahead.rs, filemap.rs, fadvise.rs, fault.rs, fs.rs, block.rs).

use serde::{Deserialize, Serialize};

use crate::block::{Limits, Plug};
use crate::config::{IoCompletion, ModelConfig};
use crate::input::{Extent, Input};
use crate::pagecache::PageCache;
use crate::pattern::{file_of, Op};
use crate::readahead::FileRaState;
use crate::trace::{Folio, RaState, Request, Submit, Trace, Trigger, Window, PAGE_SIZE};
use crate::variant::Policy;

/// `PAGE_SHIFT` on x86_64.
pub const PAGE_SHIFT: u32 = 12;

/// The file system block size the model supports: 4 KiB, the page size (`mkfs` defaults
/// for XFS and ext4 on disks this size; f2fs only has 4 KiB blocks).
pub const BLOCK_SIZE: u64 = 4096;

/// The parts of `struct file` readahead looks at.
#[derive(Clone, Debug)]
pub struct File {
    /// `file->f_ra`, set up by `file_ra_state_init()` at open.
    pub ra: FileRaState,
    /// `FMODE_RANDOM` (POSIX_FADV_RANDOM).
    pub random: bool,
    /// `FMODE_NOREUSE` (POSIX_FADV_NOREUSE): changes LRU handling only, kept for completeness.
    pub noreuse: bool,
    /// `file->f_ra` as the tree's C lays it out (the hybrid's; the Rust port never reads
    /// it): zero at open, as the kernel's `memset(&f->f_ra, 0, ...)` leaves it, and kept
    /// from one call into the C to the next, so that the members a tree adds keep their
    /// values; the model's own members are set in it before each call.
    pub ra_raw: crate::hybrid::RaRaw,
}

/// The parts of `struct backing_dev_info` readahead looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bdi {
    /// `bdi->ra_pages`: read_ahead_kb in pages.
    pub ra_pages: u64,
    /// `bdi->io_pages`: max_sectors in pages ("bdi->io_pages = lim->max_sectors >> PAGE_SECTORS_SHIFT"
    /// in blk_apply_bdi_limits()).
    pub io_pages: u64,
}

/// Where a file offset lives on disk, as the file system's block mapping reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// Written blocks: byte `start` of the range is at this device byte offset.
    Mapped { physical: u64 },
    /// Allocated but unwritten (FIEMAP_EXTENT_UNWRITTEN): reads as zeroes, no I/O.
    Unwritten,
    /// No blocks: reads as zeroes, no I/O.
    Hole,
}

/// A maximal range of the file with one [`MapKind`], in bytes: `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub kind: MapKind,
}

impl Mapping {
    /// Device byte offset of file byte `pos` (inside the mapping), if it is mapped.
    pub fn physical(&self, pos: u64) -> Option<u64> {
        match self.kind {
            MapKind::Mapped { physical } => Some(physical + (pos - self.start)),
            _ => None,
        }
    }
}

/// The file's extents (FIEMAP), sorted, for the block mapping functions of the file systems.
#[derive(Clone, Debug)]
pub struct Layout {
    extents: Vec<Extent>,
}

/// FIEMAP_EXTENT_UNWRITTEN.
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;

impl Layout {
    pub fn new(extents: &[Extent]) -> Self {
        let mut extents: Vec<Extent> = extents.iter().copied().filter(|e| e.length > 0).collect();
        extents.sort_by_key(|e| e.logical);
        Layout { extents }
    }

    /// The extent, or the hole between extents, that holds file byte `pos`
    /// (what `->iomap_begin` / `ext4_map_blocks()` / `f2fs_map_blocks()` return, before
    /// they trim it to the range asked for).
    pub fn lookup(&self, pos: u64) -> Mapping {
        let i = self.extents.partition_point(|e| e.logical + e.length <= pos);
        match self.extents.get(i) {
            Some(e) if e.logical <= pos => {
                let kind = if e.flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
                    MapKind::Unwritten
                } else {
                    MapKind::Mapped { physical: e.physical }
                };
                Mapping { start: e.logical, end: e.logical + e.length, kind }
            }
            Some(e) => Mapping {
                start: self.extents.get(i.wrapping_sub(1)).map_or(0, |p| p.logical + p.length),
                end: e.logical,
                kind: MapKind::Hole,
            },
            None => Mapping {
                start: self.extents.last().map_or(0, |p| p.logical + p.length),
                end: u64::MAX,
                kind: MapKind::Hole,
            },
        }
    }

    /// The file pages whose data lie in sectors `[sector, sector + sectors)` of the device
    /// (written extents only: an unwritten one is read without I/O).
    pub fn pages_on(&self, sector: u64, sectors: u64) -> Vec<u64> {
        let (from, to) = (sector * 512, (sector + sectors) * 512);
        let mut pages = Vec::new();
        for e in self.extents.iter().filter(|e| e.flags & 0x800 == 0) {
            let (s, t) = (from.max(e.physical), to.min(e.physical + e.length));
            if s < t {
                let (first, end) =
                    ((e.logical + (s - e.physical)) / 4096, (e.logical + (t - e.physical)).div_ceil(4096));
                pages.extend(first..end);
            }
        }
        pages
    }

    /// Device block number of file block `block`, if it is written.
    pub fn block(&self, block: u64) -> Option<u64> {
        let pos = block * BLOCK_SIZE;
        self.lookup(pos).physical(pos).map(|p| p / BLOCK_SIZE)
    }

    /// Number of blocks from `block` that are written and physically contiguous, at most
    /// `max` (`f2fs_map_blocks()` for a read: it extends the mapping while
    /// "blkaddr == (map->m_pblk + ofs)", across extents and node blocks).
    pub fn contiguous_blocks(&self, block: u64, max: u64) -> u64 {
        let Some(first) = self.block(block) else { return 0 };
        let mut n = 0;
        while n < max {
            let pos = (block + n) * BLOCK_SIZE;
            let m = self.lookup(pos);
            match m.physical(pos) {
                Some(p) if p / BLOCK_SIZE == first + n => {
                    // Take the rest of this extent at once.
                    let in_extent = (m.end - pos) / BLOCK_SIZE;
                    n += in_extent.max(1).min(max - n);
                }
                _ => break,
            }
        }
        n
    }
}

/// What the model knows about one window beyond what the tracepoints print: for
/// debugging a divergence. `Explained::notes[i]` belongs to `trace.windows[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowNote {
    /// Index in `Input::ops` of the system call that opened the window.
    pub op: usize,
    /// The fd it was made on.
    pub fd: u32,
    /// `file_ra_state` when the sync/async call returned (with `start`).
    pub ra_after: RaState,
    /// The decisions the readahead code took, in order, with the kernel's values.
    pub steps: Vec<String>,
    /// `nr_phys_segments` of each request of the window, in issue order (the tracepoint
    /// does not print it).
    pub segments: Vec<u64>,
    /// The branches of the ported kernel functions ([`crate::coverage::BRANCHES`] ids,
    /// `"<kernel function>: <condition>"`) that decided this window, in the order taken:
    /// those taken after the previous window's last I/O (what led to this window), then
    /// this window's own.
    #[serde(default)]
    pub decisions: Vec<String>,
}

impl WindowNote {
    fn new(op: usize, fd: u32, ra_after: RaState, decisions: Vec<String>) -> WindowNote {
        WindowNote { op, fd, ra_after, steps: Vec::new(), segments: Vec::new(), decisions }
    }

    /// The kernel functions of [`WindowNote::decisions`], each once, in first-taken order.
    pub fn functions(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for d in &self.decisions {
            let f = d.split(':').next().unwrap_or(d).trim();
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out
    }
}

/// A trace together with the model's notes on each window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explained {
    pub trace: Trace,
    pub notes: Vec<WindowNote>,
}

/// Collects events into windows, as the ftrace side groups them.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub windows: Vec<Window>,
    /// The system call being run, for the notes.
    pub op: usize,
    /// How many windows there were when it started: its own are the ones after.
    pub op_first_window: usize,
    /// The requests of its own windows, by sector.
    pub op_requests: crate::op_requests::OpRequests,
    /// Some when explaining.
    pub notes: Option<Vec<WindowNote>>,
    /// Some when recording branch coverage (see [`crate::coverage`]).
    pub coverage: Option<crate::coverage::Coverage>,
    /// The file the system call being run is about (see [`Window::file`]).
    pub file: u32,
    /// When explaining: how many of the last note's decisions were taken by its last I/O
    /// event (folio, request, submission); the ones after lead to the next window.
    pub io_mark: usize,
    /// When explaining: decisions taken before any window was opened.
    pub before_first: Vec<String>,
    /// Vectors for the windows it opens (what earlier traces gave back), taken from the
    /// thread's spares as the model starts and given back as it ends ([`Model::run`]).
    pub spare: crate::trace::Spare,
}

impl Recorder {
    /// A note for a window just opened, when explaining: its decisions start with those
    /// taken since the last window's last I/O.
    fn push_note(&mut self, op: usize, fd: u32, ra_after: RaState) {
        let Some(notes) = &mut self.notes else { return };
        let leading = match notes.last() {
            Some(n) => n.decisions[self.io_mark.min(n.decisions.len())..].to_vec(),
            None => std::mem::take(&mut self.before_first),
        };
        self.io_mark = leading.len();
        notes.push(WindowNote::new(op, fd, ra_after, leading));
    }

    /// An I/O event of the current window: decisions after it lead to the next window.
    fn io_event(&mut self) {
        if let Some(note) = self.notes.as_mut().and_then(|n| n.last_mut()) {
            self.io_mark = note.decisions.len();
        }
    }

    #[inline]
    fn current(&mut self) -> &mut Window {
        if self.windows.is_empty() {
            self.open_start();
        }
        self.windows.last_mut().unwrap()
    }

    /// Events before the first readahead call, or a folio of another file than the
    /// window's: kept in a Start window that has no call, so nothing is dropped.
    #[cold]
    fn open_start(&mut self) {
        self.windows.push(self.spare.window(self.file, Trigger::Start, 0, 0, RaState::default()));
        self.push_note(self.op, 0, RaState::default());
    }

    pub fn open(&mut self, trigger: Trigger, index: u64, req_count: u64, ra: &FileRaState, op: usize, fd: u32) {
        self.windows.push(self.spare.window(self.file, trigger, index, req_count, ra.traced()));
        self.push_note(op, fd, ra.traced());
    }

    /// Opens a window for an event that prints no `file_ra_state` (`mm_filemap_fault`,
    /// `mm_filemap_map_pages`): `ra` all default, as the ftrace side leaves it.
    pub fn open_event(&mut self, trigger: Trigger, index: u64, req_count: u64, op: usize, fd: u32) {
        self.windows.push(self.spare.window(self.file, trigger, index, req_count, RaState::default()));
        self.push_note(op, fd, RaState::default());
    }

    pub fn submit(&mut self, submit: Submit) {
        self.current().submits.push(submit);
        self.io_event();
    }

    pub fn folio(&mut self, index: u64, order: u32) {
        if self.windows.last().is_some_and(|w| w.file != self.file) {
            // A folio of another file than the window's (the ftrace side does the same).
            self.open_start();
        }
        self.current().folios.push(Folio { index, order });
        self.io_event();
    }

    pub fn request(&mut self, request: Request, nr_segs: u64) {
        let (sector, sectors) = (request.sector, request.sectors);
        self.current().requests.push(request);
        if self.windows.len() > self.op_first_window {
            self.op_requests.add(sector, sectors);
        }
        if let Some(note) = self.notes.as_mut().and_then(|n| n.last_mut()) {
            note.segments.push(nr_segs);
        }
        self.io_event();
    }

    /// Records a decision for debugging; `f` only runs when explaining.
    pub fn note(&mut self, f: impl FnOnce() -> String) {
        if self.notes.is_some() {
            self.current();
            self.notes.as_mut().unwrap().last_mut().unwrap().steps.push(f());
        }
    }

    /// Records branch `i` of [`crate::coverage::BRANCHES`] when recording coverage (the
    /// `cover!` and `cover_cmp!` macros call it).
    #[inline(always)]
    pub fn cover(&mut self, i: usize) {
        if self.covering() {
            self.record_branch(i);
        }
    }

    /// [`Recorder::cover`] when recording.
    #[inline(never)]
    fn record_branch(&mut self, i: usize) {
        if let Some(c) = &mut self.coverage {
            c.hit(i);
        }
        if let Some(notes) = &mut self.notes {
            // Before the first window, decisions wait for it (no window is made for them:
            // the trace is the one `predict` gives).
            let id = crate::coverage::BRANCHES[i].id.to_string();
            match notes.last_mut() {
                Some(note) => note.decisions.push(id),
                None => self.before_first.push(id),
            }
        }
    }

    /// Whether branches are being recorded (for coverage, or for the notes' decisions).
    #[inline(always)]
    pub fn covering(&self) -> bool {
        self.coverage.is_some() || self.notes.is_some()
    }

    /// The readahead call of the current window returned with `ra`.
    pub fn returned(&mut self, ra: &FileRaState) {
        if let Some(note) = self.notes.as_mut().and_then(|n| n.last_mut()) {
            note.ra_after = RaState { start: ra.start, ..ra.traced() };
        }
    }
}

/// One prediction in progress.
pub(crate) struct Model<'a> {
    pub input: &'a Input,
    pub policy: Policy,
    pub config: ModelConfig,
    pub cache: PageCache,
    pub files: Vec<File>,
    pub bdi: Bdi,
    pub limits: Limits,
    pub layout: Layout,
    /// i_size.
    pub isize: u64,
    pub rec: Recorder,
    /// `current->plug` while `read_pages()` runs, or while madvise(MADV_POPULATE_READ) does.
    pub plug: Option<Plug>,
    /// `blk_start_plug()` calls made while a plug was held, not yet finished.
    pub(crate) nested_plugs: u32,
    /// mq-deadline's `latest_pos[DD_READ]`: the start of the last read dispatched.
    pub(crate) deadline_latest_pos: u64,
    /// Folios whose read was issued by the current ->readahead / ->read_folio call.
    pub io_folios: Vec<u64>,
    /// An emptied plug list, kept for the next plug's requests.
    pub(crate) spare_rqs: Vec<crate::block::Rq>,
    /// Bio_vec lists of bios already submitted, for the next bios.
    pub(crate) spare_bvecs: Vec<Vec<crate::block::Bvec>>,
    /// The folios of the batch `->readahead` is reading (kept for the next batch).
    pub(crate) folio_buf: Vec<crate::pagecache::FolioRef>,
    /// Folios under read I/O that complete before the next system call
    /// ([`IoCompletion::BeforeNextOp`]).
    pub inflight: Vec<u64>,
    /// Index in `input.ops` of the system call being run.
    pub op: usize,
    /// Folios added to the page cache so far: the index in `input.folio_pfns` of the
    /// next one's pfn.
    pub nr_added: usize,
    /// The process's file mappings, by map index (`None`: unmapped or never mapped).
    pub mm: Vec<Option<crate::fault::Mmap>>,
    /// `Op::Mmap`s run so far: the index in `input.vm.mmap_addrs` of the next one's address.
    pub nr_mmaps: usize,
    /// The file `cache`, `layout`, `isize` and `inflight` belong to (the current system
    /// call's); the other files' are parked here, by file (`None` at the current one).
    pub cur_file: usize,
    pub parked: Vec<Option<Inode>>,
    /// The RWF_ flags of the read being run (`iocb->ki_flags`' IOCB_NOWAIT and
    /// IOCB_DONTCACHE); none outside an [`Op::ReadWith`].
    pub ki_flags: crate::pattern::ReadHow,
    /// What the last `Op::FailAlloc` armed (see [`crate::fail_page_alloc`]).
    pub fail: crate::fail_page_alloc::FailPageAlloc,
    /// The hybrid's C functions, run in place of their Rust port (see [`crate::hybrid`]).
    pub c: Option<&'a crate::hybrid::CReadahead>,
    /// How the hybrid's C crashed, if it did (the run stops there).
    pub crash: Option<crate::hybrid::Crash>,
    /// The last call's frame and the folios it lent, kept for the next call into the C.
    pub(crate) c_frame: crate::hybrid::Spare,
}

/// What the model keeps per file (per inode) besides its descriptors: swapped into
/// `Model` for the system call that uses the file.
pub(crate) struct Inode {
    cache: PageCache,
    layout: Layout,
    isize: u64,
    inflight: Vec<u64>,
}

impl<'a> Model<'a> {
    pub fn new(input: &'a Input, policy: Policy, config: ModelConfig, explain: bool) -> Self {
        let limits = Limits::from_queue(&input.queue);
        let bdi = Bdi {
            ra_pages: input.queue.read_ahead_kb * 1024 / PAGE_SIZE,
            io_pages: limits.max_sectors * 512 / PAGE_SIZE,
        };
        let nr_fds = input.ops.iter().map(|op| op.fd().map_or(1, |fd| fd as usize + 1)).max().unwrap_or(1);
        let files = (0..nr_fds)
            .map(|_| File {
                ra: FileRaState::file_ra_state_init(bdi.ra_pages),
                random: false,
                noreuse: false,
                ra_raw: Default::default(),
            })
            .collect();
        let parked = (0..input.nr_files())
            .map(|f| {
                (f > 0).then(|| Inode {
                    cache: PageCache::with_capacity(input.size_of(f).div_ceil(PAGE_SIZE)),
                    layout: Layout::new(input.extents_of(f)),
                    isize: input.size_of(f),
                    inflight: Vec::new(),
                })
            })
            .collect();
        Model {
            input,
            policy,
            config,
            cache: PageCache::with_capacity(input.file_size.div_ceil(PAGE_SIZE)),
            files,
            bdi,
            limits,
            layout: Layout::new(&input.extents),
            isize: input.file_size,
            rec: Recorder {
                windows: Vec::new(),
                op: 0,
                op_first_window: 0,
                op_requests: Default::default(),
                notes: explain.then(Vec::new),
                coverage: None,
                file: 0,
                io_mark: 0,
                before_first: Vec::new(),
                spare: Default::default(),
            },
            plug: None,
            nested_plugs: 0,
            deadline_latest_pos: 0,
            io_folios: Vec::new(),
            spare_rqs: Vec::new(),
            spare_bvecs: Vec::new(),
            folio_buf: Vec::new(),
            inflight: Vec::new(),
            op: 0,
            nr_added: 0,
            mm: Vec::new(),
            nr_mmaps: 0,
            cur_file: 0,
            parked,
            ki_flags: Default::default(),
            fail: Default::default(),
            c: None,
            crash: None,
            c_frame: Default::default(),
        }
    }

    /// Makes file `f` the current one (see `parked`); a file the input does not have
    /// leaves the current one (the harness never gives such descriptors).
    pub(crate) fn switch_file(&mut self, f: usize) {
        if f == self.cur_file || f >= self.parked.len() {
            return;
        }
        let Some(next) = self.parked[f].take() else { return };
        let old = Inode {
            cache: std::mem::replace(&mut self.cache, next.cache),
            layout: std::mem::replace(&mut self.layout, next.layout),
            isize: std::mem::replace(&mut self.isize, next.isize),
            inflight: std::mem::replace(&mut self.inflight, next.inflight),
        };
        self.parked[self.cur_file] = Some(old);
        self.cur_file = f;
        self.rec.file = f as u32;
    }

    /// The file system call `op` is about: its descriptor's, or its mapping's.
    fn file_of_op(&self, op: &Op) -> usize {
        match *op {
            Op::Read { fd, .. } | Op::Fadvise { fd, .. } | Op::Readahead { fd, .. } | Op::Mmap { fd, .. } => {
                file_of(fd) as usize
            }
            Op::Splice { fd, .. } | Op::ReadWith { fd, .. } => file_of(fd) as usize,
            Op::FailAlloc { .. } | Op::Program { .. } => self.cur_file,
            Op::Madvise { map, .. } | Op::Touch { map, .. } | Op::Munmap { map } => self
                .mm
                .get(map as usize)
                .and_then(Option::as_ref)
                .map_or(self.cur_file, |m| file_of(m.fd as u32) as usize),
        }
    }

    /// Runs every system call of the input, in order.
    pub fn run(&mut self) {
        self.rec.spare = crate::trace::Spare::take();
        self.rec.windows = self.rec.spare.windows();
        self.run_ops();
        std::mem::take(&mut self.rec.spare).give_back();
    }

    fn run_ops(&mut self) {
        self.c_open_files();
        if self.crash.is_some() {
            return;
        }
        for i in 0..self.input.ops.len() {
            self.run_op(i);
            if self.crash.is_some() {
                // The hybrid's C crashed: the state it left is not the kernel's.
                return;
            }
        }
        self.finish();
    }

    /// After the last system call: notes a measured pfn list longer than what the model
    /// added (the model added fewer folios than the kernel).
    pub fn finish(&mut self) {
        let (added, measured) = (self.nr_added, self.input.folio_pfns.len());
        if added < measured && !self.rec.windows.is_empty() {
            self.rec.note(|| format!("folio_pfns: the kernel added {measured} folios, the model {added}"));
        }
    }

    /// Runs system call `i` of the input.
    pub fn run_op(&mut self, i: usize) {
        self.op = i;
        self.rec.op = i;
        self.rec.op_first_window = self.rec.windows.len();
        self.rec.op_requests.clear();
        self.switch_file(self.file_of_op(&self.input.ops[i]));
        match self.input.ops[i] {
            Op::Read { fd, offset, len } => {
                self.filemap_read(fd as usize, offset, len);
            }
            Op::Fadvise { fd, offset, len, advice } => self.generic_fadvise(fd as usize, offset, len, advice),
            // mm/readahead.c, ksys_readahead(): "return vfs_fadvise(fd_file(f), offset,
            // count, POSIX_FADV_WILLNEED);" (so a count of 0, like fadvise's len 0, means
            // to the end of the file).
            Op::Readahead { fd, offset, len } => {
                self.generic_fadvise(fd as usize, offset, len, crate::pattern::Advice::Willneed)
            }
            Op::Mmap { map, fd, offset, len, shared, exec, populate } => {
                self.do_mmap(map as usize, fd as usize, offset, len, shared, exec);
                if populate {
                    self.mm_populate(map as usize);
                }
            }
            Op::Madvise { map, offset, len, advice } => self.do_madvise(map as usize, offset, len, advice),
            Op::Touch { map, offset } => {
                self.reads_in_flight_at_load(map as usize, offset);
                self.do_user_addr_fault(map as usize, offset)
            }
            Op::Munmap { map } => self.do_munmap(map as usize),
            Op::Splice { fd, offset, len, pipe, .. } => self.splice_through_pipe(fd as usize, offset, len, pipe),
            Op::ReadWith { fd, offset, len, how } => self.read_with(fd as usize, offset, len, how),
            Op::FailAlloc { times, min_order } => self.arm_fail_page_alloc(times, min_order),
            // The harness puts the program's recorded calls in its place; one left here
            // (a program whose calls were not recorded) makes no call.
            Op::Program { .. } => {}
        }
        // The guest waits for the device to go idle after each touch as well as after each
        // system call (see IoCompletion::BeforeNextOp and Touches).
        let settles =
            !matches!(self.input.ops[i], Op::Touch { .. }) || self.config.touches == crate::config::Touches::WaitIdle;
        if self.config.io_completion == IoCompletion::BeforeNextOp && settles {
            self.complete_inflight();
        }
    }

    /// Completes every read in flight, in the order they were issued.
    pub(crate) fn complete_inflight(&mut self) {
        for head in std::mem::take(&mut self.inflight) {
            self.complete_read(head);
        }
    }

    /// Completes the read of the folio at `head`: the folio, if the cache still holds it
    /// there, becomes uptodate.
    pub(crate) fn complete_read(&mut self, head: u64) {
        if self.cache.folio_at(head).is_some_and(|f| f.index == head) {
            self.cache.set_uptodate(head);
        }
    }

    /// The mapping's folio limits.
    pub fn min_order(&self) -> u32 {
        if self.input.mapping.large_folios {
            self.input.mapping.min_order
        } else {
            0
        }
    }

    pub fn max_order(&self) -> u32 {
        if self.input.mapping.large_folios {
            self.input.mapping.max_order.max(self.min_order())
        } else {
            0
        }
    }
}

/// A prediction run one system call at a time, to look at the model's state in between
/// (tests, debugging).
pub struct Simulation<'a> {
    model: Model<'a>,
    next: usize,
}

impl<'a> Simulation<'a> {
    /// A simulation of `input` that records explanations ([`WindowNote`]s).
    pub fn new(input: &'a Input, policy: &Policy, config: &ModelConfig) -> Self {
        Simulation { model: Model::new(input, *policy, *config, true), next: 0 }
    }

    /// Runs the next system call; false when none is left.
    pub fn step(&mut self) -> bool {
        if self.next >= self.model.input.ops.len() {
            return false;
        }
        self.model.run_op(self.next);
        self.next += 1;
        true
    }

    /// Index in `Input::ops` of the next system call to run.
    pub fn next_op(&self) -> usize {
        self.next
    }

    /// The page cache now.
    pub fn cache(&self) -> &PageCache {
        &self.model.cache
    }

    /// `file->f_ra` of `fd` now.
    pub fn ra(&self, fd: u32) -> FileRaState {
        self.model.files[fd as usize].ra
    }

    /// The windows recorded so far.
    pub fn windows(&self) -> &[Window] {
        &self.model.rec.windows
    }

    /// The notes on the windows recorded so far.
    pub fn notes(&self) -> &[WindowNote] {
        self.model.rec.notes.as_deref().unwrap_or_default()
    }

    /// Runs the rest and returns the trace with its notes.
    pub fn finish(mut self) -> Explained {
        while self.step() {}
        self.model.finish();
        Explained { trace: Trace { windows: self.model.rec.windows }, notes: self.model.rec.notes.unwrap_or_default() }
    }
}
