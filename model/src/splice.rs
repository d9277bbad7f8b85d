//! Splicing a file into a pipe (splice(2), sendfile(2) to a pipe): `filemap_splice_read()`
//! of Linux 7.3.4 mm/filemap.c, reached through fs/splice.c's `do_splice_read()`.
//!
//! Two things set it apart from `filemap_read()`: every call is clamped to the pipe's free
//! slots (one page each), so the pipe's size is the request size readahead sees; and
//! `ra->prev_pos` moves after each folio, not once when the call returns, so a second
//! `filemap_get_pages()` inside one call sees where the first one's folios ended.

use crate::coverage::cover;
use crate::filemap::GetPagesError;
use crate::model::{Model, PAGE_SHIFT};
use crate::pagecache::FolioRef;
use crate::trace::PAGE_SIZE;

/// `MAX_RW_COUNT` (include/linux/fs.h): `INT_MAX & PAGE_MASK`.
const MAX_RW_COUNT: u64 = (i32::MAX as u64) & !(PAGE_SIZE - 1);

/// The pipe: `max_usage` slots, `used` of them holding a buffer (`pipe_buf_usage()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pipe {
    pub max_usage: u64,
    pub used: u64,
}

impl Pipe {
    /// An empty pipe of `bytes` (F_SETPIPE_SZ: `round_pipe_size()` rounds the pages up to
    /// a power of two; the default pipe has `PIPE_DEF_BUFFERS` = 16).
    pub(crate) fn of_size(bytes: u64) -> Pipe {
        Pipe { max_usage: bytes.div_ceil(PAGE_SIZE).max(1).next_power_of_two(), used: 0 }
    }

    /// `pipe_is_full()`, Linux 7.3.4 include/linux/pipe_fs_i.h: no free slot.
    fn is_full(&self) -> bool {
        self.used >= self.max_usage
    }
}

impl Model<'_> {
    /// What the guest does for an [`crate::Op::Splice`]: calls splice(2) (or sendfile(2))
    /// on the whole rest, drains the pipe, and again, until `len` bytes went through or a
    /// call returned 0. Each call is `splice_file_to_pipe()`: the pipe is empty, so
    /// `wait_for_space()` returns at once and `do_splice_read()` runs.
    pub(crate) fn splice_through_pipe(&mut self, fd: usize, offset: u64, len: u64, pipe_bytes: u64) {
        let mut pos = offset;
        let mut left = len;
        while left > 0 {
            let mut pipe = Pipe::of_size(pipe_bytes);
            let n = self.do_splice_read(fd, &mut pos, &mut pipe, left);
            if n == 0 {
                break;
            }
            left -= n.min(left);
        }
    }

    /// `do_splice_read()`, Linux 7.3.4 fs/splice.c: "Don't try to read more the pipe has
    /// space for", then the file system's `->splice_read`, which is `filemap_splice_read()`
    /// for XFS (xfs_file_splice_read()), ext4 (ext4_file_splice_read()) and f2fs
    /// (f2fs_file_splice_read(), an uncompressed file) on a descriptor without O_DIRECT.
    pub(crate) fn do_splice_read(&mut self, fd: usize, ppos: &mut u64, pipe: &mut Pipe, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let p_space = pipe.max_usage.saturating_sub(pipe.used);
        let len = len.min(p_space << PAGE_SHIFT).min(MAX_RW_COUNT);
        self.filemap_splice_read(fd, ppos, pipe, len)
    }

    /// `filemap_splice_read()`, Linux 7.3.4 mm/filemap.c: folios from the page cache (with
    /// readahead as `filemap_get_pages()` decides, `count` the bytes still wanted, at most
    /// the pipe's free space) into the pipe; "in->f_ra.prev_pos = *ppos;" after each one.
    /// Returns the bytes spliced.
    pub(crate) fn filemap_splice_read(&mut self, fd: usize, ppos: &mut u64, pipe: &mut Pipe, len: u64) -> u64 {
        let s_maxbytes = crate::sb::s_maxbytes(self.input.fs);
        if *ppos >= s_maxbytes {
            cover!(self.rec, "filemap_splice_read: *ppos >= s_maxbytes");
            return 0;
        }
        // "npages = max_t(ssize_t, pipe->max_usage - used, 0);", and len is cut to that many
        // pages.
        let npages = pipe.max_usage.saturating_sub(pipe.used);
        let mut len = len.min(npages * PAGE_SIZE);
        let mut total_spliced = 0;
        let mut batch = crate::filemap::FolioBatch::new();
        'out: while len > 0 {
            if *ppos >= self.isize {
                cover!(self.rec, "filemap_splice_read: *ppos >= i_size");
                break;
            }
            match self.filemap_get_pages(fd, *ppos, len, &mut batch, true) {
                Ok(()) => {}
                // filemap_get_pages()'s own "goto retry": the same lookup again.
                Err(GetPagesError::Retry) => continue,
                // Only IOCB_NOWAIT returns -EAGAIN, and splice(2) here passes no flags.
                Err(GetPagesError::Again) => break,
                // "if (error < 0) break;"
                Err(GetPagesError::Enomem) => break,
            };
            let isize = self.isize;
            let end_offset = isize.min(*ppos + len);
            for &folio in batch.as_slice() {
                if folio.index << PAGE_SHIFT >= end_offset {
                    cover!(self.rec, "filemap_splice_read: folio_pos >= end_offset");
                    break 'out;
                }
                let n = len.min(isize - *ppos);
                let n = splice_folio_into_pipe(pipe, folio, *ppos, n);
                if n == 0 {
                    break 'out;
                }
                len -= n;
                total_spliced += n;
                *ppos += n;
                self.files[fd].ra.prev_pos = *ppos as i64;
                if pipe.is_full() {
                    cover!(self.rec, "filemap_splice_read: pipe full");
                    break 'out;
                }
            }
        }
        total_spliced
    }
}

/// `splice_folio_into_pipe()`, Linux 7.3.4 mm/filemap.c: one pipe buffer per page of
/// `folio` from file position `fpos`, up to `size` bytes and the folio's end, while the
/// pipe has a free slot. Returns the bytes spliced.
pub(crate) fn splice_folio_into_pipe(pipe: &mut Pipe, folio: FolioRef, fpos: u64, size: u64) -> u64 {
    let folio_size = PAGE_SIZE << folio.order;
    let mut offset = fpos - (folio.index << PAGE_SHIFT);
    let size = size.min(folio_size - offset);
    offset %= PAGE_SIZE;
    let mut spliced = 0;
    while spliced < size && !pipe.is_full() {
        let part = (PAGE_SIZE - offset).min(size - spliced);
        pipe.used += 1;
        spliced += part;
        offset = 0;
    }
    spliced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Input;
    use crate::pattern::Op;
    use crate::trace::Trigger;
    use crate::variant::Policy;

    fn input(size: u64, ops: Vec<Op>) -> Input {
        Input::xfs_on_nvme(size, ops)
    }

    fn folio(index: u64, order: u32) -> FolioRef {
        FolioRef { index, order, readahead: false, uptodate: true }
    }

    #[test]
    fn a_pipe_rounds_its_pages_up_to_a_power_of_two() {
        assert_eq!(Pipe::of_size(64 << 10).max_usage, 16);
        assert_eq!(Pipe::of_size(12 << 10).max_usage, 4);
        assert_eq!(Pipe::of_size(1).max_usage, 1);
    }

    #[test]
    fn splice_folio_into_pipe_takes_one_slot_a_page_and_stops_when_the_pipe_is_full() {
        let mut pipe = Pipe { max_usage: 4, used: 0 };
        // An order-2 folio at index 8, from its second page: 3 pages, 3 slots.
        assert_eq!(splice_folio_into_pipe(&mut pipe, folio(8, 2), 9 * 4096, 1 << 20), 3 * 4096);
        assert_eq!(pipe.used, 3);
        // An unaligned start takes a slot for the page's tail, then one slot is left.
        assert_eq!(splice_folio_into_pipe(&mut pipe, folio(16, 3), 16 * 4096 + 100, 1 << 20), 4096 - 100);
        assert!(pipe.is_full());
        assert_eq!(splice_folio_into_pipe(&mut pipe, folio(17, 0), 17 * 4096, 4096), 0);
    }

    #[test]
    fn a_splice_asks_readahead_for_no_more_than_the_pipe_holds() {
        // 1 MiB through a 16 KiB pipe: the first call is a sync readahead of 4 pages, not
        // of 256 as a 1 MiB pread's would be.
        let ops = vec![Op::Splice { fd: 0, offset: 0, len: 1 << 20, pipe: 16 << 10, sendfile: false }];
        let trace = crate::predict(&input(4 << 20, ops), &Policy::BASE);
        let first = &trace.windows[0];
        assert_eq!((first.trigger, first.index, first.req_count), (Trigger::Sync, 0, 4));
        let pread = crate::predict(&input(4 << 20, vec![Op::Read { fd: 0, offset: 0, len: 1 << 20 }]), &Policy::BASE);
        assert_eq!(pread.windows[0].req_count, 256);
    }

    #[test]
    fn filemap_splice_read_moves_prev_pos_with_each_folio_and_stops_at_i_size() {
        let inp = input(40 << 10, vec![]);
        let mut model = Model::new(&inp, Policy::BASE, crate::ModelConfig::default(), false);
        let mut pos = 0;
        let mut pipe = Pipe::of_size(64 << 10);
        assert_eq!(model.do_splice_read(0, &mut pos, &mut pipe, 1 << 20), 40 << 10);
        assert_eq!(pos, 40 << 10);
        assert_eq!(model.files[0].ra.prev_pos, 40 << 10);
        assert_eq!(pipe.used, 10);
        // At i_size: nothing more, no readahead.
        let windows = model.rec.windows.len();
        assert_eq!(model.do_splice_read(0, &mut pos, &mut Pipe::of_size(64 << 10), 4096), 0);
        assert_eq!(model.rec.windows.len(), windows);
    }
}
