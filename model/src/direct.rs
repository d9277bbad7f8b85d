//! Reads that are not plain pread(2), Linux 7.3.4: preadv2(2)'s RWF_NOWAIT and
//! RWF_DONTCACHE (through `filemap_read()`, whose flag paths are in crate::filemap), and
//! O_DIRECT reads (fs/iomap/direct-io.c), which bypass the page cache and readahead.
//!
//! An O_DIRECT read on a clean cache changes nothing the model keeps: it goes through its
//! own `struct file` (so its own `file_ra_state`, never read by readahead), and before
//! its bios `kiocb_write_and_wait()` (mm/filemap.c) writes back and waits on dirty or
//! writeback folios of the range, which a read-only scenario has none of. (Only direct
//! *writes* call `kiocb_invalidate_pages()`.) What it adds to the trace are its requests.

use crate::block::{Bio, BIO_MAX_VECS};
use crate::coverage::cover;
use crate::input::FsKind;
use crate::model::Model;
use crate::pattern::ReadHow;
use crate::trace::{PAGE_SIZE, SECTOR_SIZE};

/// Where the model places the guest's O_DIRECT buffer in physical memory: page `i` of
/// the buffer at `USER_BUFFER_PHYS + 2 * i` pages, so no two pages are contiguous and
/// each is a bio_vec of its own (`bvec_try_merge_page()` never merges them). The guest's
/// real buffer may have contiguous pages, which would only make fewer segments; the
/// scenario parser keeps direct reads small enough (at most 128 KiB) that segment counts
/// split nothing on the devices radiff emulates, so the requests are the same either way.
const USER_BUFFER_PHYS: u64 = 1 << 44;

impl Model<'_> {
    /// What the guest does for an [`crate::Op::ReadWith`]: `preadv2()` with `how`'s flags
    /// through `filemap_read()`, or a read through an O_DIRECT descriptor.
    pub(crate) fn read_with(&mut self, fd: usize, offset: u64, len: u64, how: ReadHow) {
        if how.direct {
            match self.input.fs {
                FsKind::Xfs => self.xfs_file_dio_read(offset, len),
                // ext4_dio_read_iter(): "ret = iomap_dio_rw(iocb, to, &ext4_iomap_ops, NULL, 0, NULL, 0);"
                FsKind::Ext4 => self.iomap_dio_rw(offset, len),
                // The scenario parser refuses O_DIRECT on f2fs (f2fs_should_use_dio() may
                // send the read through filemap_read() instead).
                FsKind::F2fs => unreachable!("O_DIRECT reads on f2fs are refused by the scenario parser"),
            }
            return;
        }
        self.ki_flags = how;
        let read = self.filemap_read(fd, offset, len);
        self.ki_flags = ReadHow::default();
        // Where the guest recorded what the kernel's RWF_NOWAIT read returned, the model
        // stopped where the kernel did or the two part here (see crate::filemap::NOWAIT_RACE).
        if how.nowait && self.nowait_end().is_some_and(|end| end != offset + read) {
            cover!(
                self.rec,
                "filemap_read: IOCB_NOWAIT: the kernel returned what the model cannot follow: the kernel races"
            );
        }
    }

    /// `xfs_file_dio_read()`, Linux 7.3.4 fs/xfs/xfs_file.c: `iomap_dio_read_simple()`
    /// first, `iomap_dio_rw()` when that says -ENOTBLK (the device has no stable writes).
    fn xfs_file_dio_read(&mut self, offset: u64, len: u64) {
        if !self.iomap_dio_read_simple(offset, len) {
            self.iomap_dio_rw(offset, len);
        }
    }

    /// `iomap_dio_read_simple()`, Linux 7.3.4 include/linux/iomap.h: a read of at most one
    /// file system block inside i_size goes on to `__iomap_dio_read_simple()` (after
    /// `kiocb_write_and_wait()`: a clean range, nothing to write or wait on). Returns false
    /// for -ENOTBLK (the caller takes iomap_dio_rw()).
    fn iomap_dio_read_simple(&mut self, pos: u64, len: u64) -> bool {
        // "if (iomi.len > iomi.inode->i_sb->s_blocksize) return -ENOTBLK;"
        if len > self.xfs_block_size() || pos + len > self.isize {
            cover!(self.rec, "iomap_dio_read_simple: -ENOTBLK");
            return false;
        }
        self.__iomap_dio_read_simple(pos, len)
    }

    /// `__iomap_dio_read_simple()`, Linux 7.3.4 fs/iomap/direct-io.c: a read inside one
    /// mapped extent is one bio, `submit_bio_wait()`ed (so REQ_SYNC, and no plug); else
    /// -ENOTBLK (false).
    #[allow(non_snake_case, reason = "the kernel's name, its leading underscores kept")]
    fn __iomap_dio_read_simple(&mut self, pos: u64, len: u64) -> bool {
        let mapping = self.layout.lookup(pos);
        // -ENOTBLK unless the range lies in one mapped extent (`IOMAP_MAPPED`, its offset
        // and length covering pos + len).
        let Some(physical) = mapping.physical(pos).filter(|_| mapping.end >= pos + len) else {
            cover!(self.rec, "__iomap_dio_read_simple: not one mapped extent: -ENOTBLK");
            return false;
        };
        cover!(self.rec, "__iomap_dio_read_simple: one bio");
        let mut bio = self.dio_bio(physical / SECTOR_SIZE, len, 0);
        bio.sync = true; // bio_await(): "bio->bi_opf |= REQ_SYNC;"
        self.submit_bio(bio);
        true
    }

    /// `__iomap_dio_rw()` for a read, Linux 7.3.4 fs/iomap/direct-io.c:
    /// "ret = kiocb_write_and_wait(iocb, iomi.len);" (a clean range: nothing), then under
    /// "blk_start_plug(&plug);" one `iomap_dio_bio_iter()` per mapping `iomap_iter()`
    /// returns: a mapped extent is read by bios of at most `BIO_MAX_VECS` pages of the
    /// buffer ("bio_opf = REQ_SYNC | REQ_IDLE"), a hole or unwritten extent is zeroed
    /// (`iomap_dio_hole_iter()`), no I/O.
    fn iomap_dio_rw(&mut self, offset: u64, len: u64) {
        // "if (iocb->ki_pos >= dio->i_size) goto out_free_dio;" and reads are cut at i_size
        // only after the bios; the parser keeps direct reads inside the file.
        let end = offset + len;
        self.blk_start_plug();
        let mut pos = offset;
        while pos < end {
            let mapping = self.layout.lookup(pos);
            let map_end = mapping.end.min(end);
            match mapping.physical(pos) {
                Some(physical) => {
                    cover!(self.rec, "__iomap_dio_rw: mapped extent: bios under the plug");
                    let mut at = pos;
                    let mut sector = physical / SECTOR_SIZE;
                    while at < map_end {
                        // "nr_vecs = bio_iov_vecs_to_alloc(dio->submit.iter, BIO_MAX_VECS);"
                        let bytes = (map_end - at).min(BIO_MAX_VECS * PAGE_SIZE);
                        let mut bio = self.dio_bio(sector, bytes, (at - offset) / PAGE_SIZE);
                        bio.sync = true;
                        self.submit_bio(bio);
                        sector += bytes / SECTOR_SIZE;
                        at += bytes;
                    }
                }
                None => cover!(self.rec, "__iomap_dio_rw: hole or unwritten: zeroed, no I/O"),
            }
            pos = map_end;
        }
        self.blk_finish_plug();
    }

    /// A direct read's bio at `sector` of `bytes` of the buffer from its page `first`
    /// (`bio_iov_iter_get_pages()`; see [`USER_BUFFER_PHYS`]).
    fn dio_bio(&self, sector: u64, bytes: u64, first: u64) -> Bio {
        let pages = bytes.div_ceil(PAGE_SIZE);
        let mut bio = Bio::new(sector, pages.min(BIO_MAX_VECS), false);
        for i in 0..pages {
            let page = USER_BUFFER_PHYS + 2 * (first + i) * PAGE_SIZE;
            let part = PAGE_SIZE.min(bytes - i * PAGE_SIZE);
            bio.__bio_add_page(page, part, 0);
        }
        bio
    }
}

#[cfg(test)]
mod tests {
    use crate::input::Input;
    use crate::pattern::{Op, ReadHow};
    use crate::trace::Trigger;
    use crate::variant::Policy;

    const DIRECT: ReadHow = ReadHow { nowait: false, dontcache: false, direct: true };
    const NOWAIT: ReadHow = ReadHow { nowait: true, dontcache: false, direct: false };
    const DONTCACHE: ReadHow = ReadHow { nowait: false, dontcache: true, direct: false };

    fn predict(ops: Vec<Op>) -> crate::Trace {
        crate::predict(&Input::xfs_on_nvme(4 << 20, ops), &Policy::BASE)
    }

    #[test]
    fn a_direct_read_adds_sync_requests_and_leaves_readahead_alone() {
        let buffered = vec![Op::Read { fd: 0, offset: 0, len: 4096 }, Op::Read { fd: 0, offset: 4096, len: 4096 }];
        let mut with_direct = buffered.clone();
        with_direct.insert(1, Op::ReadWith { fd: 0, offset: 1 << 20, len: 64 << 10, how: DIRECT });
        let (a, b) = (predict(buffered), predict(with_direct));
        // The same windows, the same folios; only the direct read's request is added.
        assert_eq!(a.windows.len(), b.windows.len());
        for (x, y) in a.windows.iter().zip(&b.windows) {
            assert_eq!((x.trigger, x.index, x.ra, &x.folios), (y.trigger, y.index, y.ra, &y.folios));
        }
        let added: Vec<_> = b.windows.iter().flat_map(|w| &w.requests).filter(|r| r.rwbs == "RS").collect();
        assert_eq!(added.len(), 1, "{b:?}");
        assert_eq!(added[0].sectors, (64 << 10) / 512);
    }

    #[test]
    fn a_one_block_direct_read_on_xfs_takes_the_simple_path() {
        let t = predict(vec![Op::ReadWith { fd: 0, offset: 8192, len: 4096, how: DIRECT }]);
        let reqs: Vec<_> = t.windows.iter().flat_map(|w| &w.requests).collect();
        assert_eq!(reqs.len(), 1);
        assert_eq!((reqs[0].sectors, reqs[0].rwbs.as_str()), (8, "RS"));
        assert!(t.windows.iter().all(|w| w.trigger == Trigger::Start && w.folios.is_empty()));
    }

    #[test]
    fn a_nowait_read_of_a_cold_range_starts_readahead_and_reads_nothing() {
        // page_cache_sync_ra() runs, then the first folio is locked by its read: -EAGAIN.
        // A plain read of the same range afterwards finds the folios and starts no window.
        let t = predict(vec![
            Op::ReadWith { fd: 0, offset: 0, len: 16384, how: NOWAIT },
            Op::Read { fd: 0, offset: 0, len: 16384 },
        ]);
        assert_eq!(t.windows.len(), 1);
        assert_eq!((t.windows[0].trigger, t.windows[0].index, t.windows[0].req_count), (Trigger::Sync, 0, 4));
        // prev_pos stayed -1: the second window (if any) would have shown it; the model's
        // file state says so directly.
        let inp = Input::xfs_on_nvme(4 << 20, vec![Op::ReadWith { fd: 0, offset: 0, len: 16384, how: NOWAIT }]);
        let mut m = crate::model::Model::new(&inp, Policy::BASE, crate::ModelConfig::default(), false);
        m.run();
        assert_eq!(m.files[0].ra.prev_pos, -1);
    }

    #[test]
    fn a_nowait_read_of_a_cached_range_reads_it_like_pread() {
        let warm = Op::Read { fd: 0, offset: 0, len: 16384 };
        let a = predict(vec![warm, Op::Read { fd: 0, offset: 0, len: 8192 }]);
        let b = predict(vec![warm, Op::ReadWith { fd: 0, offset: 0, len: 8192, how: NOWAIT }]);
        assert_eq!(a, b);
    }

    #[test]
    fn a_nowait_read_into_its_own_async_window_stops_short_where_the_model_takes_the_race() {
        // 16 KiB at 0 leaves [0, 8) cached with the mark at 4. A NOWAIT read of 64 KiB
        // reaches the mark, starts the async window [8, ..) and then meets page 8 locked
        // by that read (and marked: filemap_get_pages() starts the next window from it
        // first, as a pread would): filemap_update_page() -EAGAIN, a short read of 32 KiB.
        // (On a real device the read may have completed first: the race
        // docs/scenarios.md describes.)
        let ops =
            vec![Op::Read { fd: 0, offset: 0, len: 16384 }, Op::ReadWith { fd: 0, offset: 0, len: 65536, how: NOWAIT }];
        let inp = Input::xfs_on_nvme(4 << 20, ops);
        let mut m = crate::model::Model::new(&inp, Policy::BASE, crate::ModelConfig::default(), false);
        m.run();
        assert_eq!(m.files[0].ra.prev_pos, 32768);
        let asyncs =
            |w: &[crate::Window]| w.iter().filter(|w| w.trigger == Trigger::Async).map(|w| w.index).collect::<Vec<_>>();
        assert_eq!(asyncs(&m.rec.windows), vec![4, 8]);
        // pread waits for the folios instead and reads all 64 KiB.
        let plain = Input::xfs_on_nvme(
            4 << 20,
            vec![Op::Read { fd: 0, offset: 0, len: 16384 }, Op::Read { fd: 0, offset: 0, len: 65536 }],
        );
        let mut p = crate::model::Model::new(&plain, Policy::BASE, crate::ModelConfig::default(), false);
        p.run();
        assert_eq!(p.files[0].ra.prev_pos, 65536);
        assert_eq!(asyncs(&p.rec.windows), vec![4, 8]);
    }

    /// A 4 KiB pread at 0 under read_ahead_kb 64 opens [0, 2) with the mark on page 1; an
    /// RWF_NOWAIT read of pages 1-2 (op 1) reaches it, submits the async window from page 2
    /// and then looks page 2 up, locked by that read unless the device was quick. `returned`:
    /// what the guest recorded op 1 returning, if anything. Gives `ra->prev_pos` after op 1,
    /// the async windows' indexes and whether the model marked the race.
    fn nowait_into_its_own_window(returned: Option<u64>) -> (i64, Vec<u64>, bool) {
        let ops = vec![
            Op::Read { fd: 0, offset: 0, len: 4096 },
            Op::ReadWith { fd: 0, offset: 4096, len: 8192, how: NOWAIT },
        ];
        let mut inp = Input::xfs_on_nvme(4 << 20, ops);
        inp.queue = crate::QueueLimits::nvme_qemu(64, 512);
        inp.vm.nowait_returned = returned.map(|bytes| crate::NowaitReturned { op: 1, bytes }).into_iter().collect();
        let (trace, cov) = crate::coverage(&inp, &Policy::BASE);
        let mut m = crate::model::Model::new(&inp, Policy::BASE, crate::ModelConfig::default(), false);
        m.run();
        assert_eq!(trace.windows, m.rec.windows);
        let asyncs = trace.windows.iter().filter(|w| w.trigger == Trigger::Async).map(|w| w.index).collect();
        (m.files[0].ra.prev_pos, asyncs, cov.contains(crate::filemap::NOWAIT_RACE))
    }

    #[test]
    fn a_nowait_read_whose_folio_completed_late_stops_at_it_as_the_kernel_did() {
        // The kernel returned 4 KiB: it met page 2 locked. Without a record the model
        // assumes the same. Both windows are started either way (page 2's folio carries
        // the async window's own mark, and filemap_get_pages() reads it before the trylock).
        let (unrecorded, asyncs, _) = nowait_into_its_own_window(None);
        assert_eq!(unrecorded, 4096 + 4096);
        assert_eq!(asyncs, vec![1, 2]);
        assert_eq!(nowait_into_its_own_window(Some(4096)), (unrecorded, asyncs, false));
    }

    #[test]
    fn a_nowait_read_whose_folio_completed_early_reads_on_as_the_kernel_did() {
        // The kernel returned all 8 KiB: page 2's read had completed when it looked.
        let (late, late_asyncs, _) = nowait_into_its_own_window(Some(4096));
        let (early, asyncs, raced) = nowait_into_its_own_window(Some(8192));
        assert_eq!(early, 4096 + 8192);
        assert!(early > late);
        assert_eq!(asyncs, late_asyncs, "the same windows, only where the read stopped differs");
        assert!(!raced);
    }

    #[test]
    fn a_nowait_return_the_model_cannot_follow_is_marked_as_the_kernels_race() {
        // 0 bytes: the kernel stopped at page 1, which the pread before brought in and the
        // guest let complete; the model reads it, and says the two part here.
        let (prev_pos, _, raced) = nowait_into_its_own_window(Some(0));
        assert!(raced);
        assert_eq!(prev_pos, 4096 + 4096, "the model keeps its own reading");
        // A record the model follows marks nothing.
        assert!(!nowait_into_its_own_window(Some(4096)).2);
    }

    #[test]
    fn dontcache_drops_the_folios_it_read_so_a_second_read_reads_them_again() {
        let read = Op::Read { fd: 0, offset: 0, len: 16384 };
        let dontcache = Op::ReadWith { fd: 0, offset: 0, len: 16384, how: DONTCACHE };
        let cached = predict(vec![read, read]);
        let dropped = predict(vec![dontcache, read]);
        let folios = |t: &crate::Trace| t.windows.iter().map(|w| w.folios.len()).sum::<usize>();
        // The plain second read finds every page; after RWF_DONTCACHE, pages 0-3 are gone
        // (the rest of the window, not read, stays) and are read again.
        assert!(folios(&dropped) > folios(&cached), "{dropped:?}");
        let second: Vec<_> = dropped.windows.iter().filter(|w| w.trigger == Trigger::Sync && w.index == 0).collect();
        assert_eq!(second.len(), 2, "two sync windows at 0: {dropped:?}");
    }
}
