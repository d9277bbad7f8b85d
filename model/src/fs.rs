//! The file systems' `->readahead` and `->read_folio` of Linux 7.3.4: how XFS (iomap,
//! fs/iomap/buffered-io.c and bio.c), ext4 (fs/ext4/readpage.c) and f2fs
//! (fs/f2fs/data.c) turn the folios of a readahead batch into bios, given the file's
//! extents. The bios go to `Model::submit_bio()` (block.rs).
//!
//! ext4 and f2fs use 4 KiB blocks here ([`BLOCK_SIZE`]), so a block is a page; XFS may
//! have larger ones (`mkfs: {block_size}`), whose size the mapping's minimum folio order
//! gives (`Model::xfs_block_size`).

use crate::block::{bio_max_segs, Bio};
use crate::input::FsKind;
use crate::model::{Model, BLOCK_SIZE, PAGE_SHIFT};
use crate::pagecache::FolioRef;
use crate::readahead::ReadaheadControl;
use crate::trace::{PAGE_SIZE, SECTOR_SIZE};

impl Model<'_> {
    /// `mapping->a_ops->readahead(rac)`: xfs_vm_readahead(), ext4_readahead() or
    /// f2fs_readahead(). Reads every folio of `ractl` (the batch may grow: seed 003).
    pub(crate) fn aops_readahead(&mut self, ractl: &mut ReadaheadControl) {
        match self.input.fs {
            FsKind::Xfs => self.iomap_readahead(ractl),
            FsKind::Ext4 => {
                if self.c_fs_readahead(ractl) {
                    return;
                }
                let mut folios = std::mem::take(&mut self.folio_buf);
                self.cache.folios_in_into(ractl.index, ractl.index + ractl.nr_pages, &mut folios);
                self.ext4_mpage_readpages(&folios, true);
                self.folio_buf = folios;
            }
            FsKind::F2fs => {
                if !self.c_fs_readahead(ractl) {
                    self.f2fs_mpage_readpages(Some(ractl), None)
                }
            }
        }
    }

    /// `mapping->a_ops->read_folio(file, folio)`: xfs_vm_read_folio(), ext4_read_folio()
    /// or f2fs_read_data_folio(). No plug is held: each bio is issued on its own.
    pub(crate) fn aops_read_folio(&mut self, folio: FolioRef) {
        match self.input.fs {
            FsKind::Xfs => {
                let start = folio.index << PAGE_SHIFT;
                self.iomap_read(&[folio], start, start + (PAGE_SIZE << folio.order), false);
            }
            FsKind::Ext4 | FsKind::F2fs => {
                // The C's `struct file` is any of the call's: neither ->read_folio reads it.
                let fd = self.input.ops.get(self.op).and_then(|o| o.fd()).unwrap_or(0) as usize;
                if self.c_fs_read_folio(fd, folio) {
                    return;
                }
                match self.input.fs {
                    FsKind::Ext4 => self.ext4_mpage_readpages(&[folio], false),
                    _ => self.f2fs_mpage_readpages(None, Some(folio)),
                }
            }
        }
    }

    /// The folio's read completes later: see `end_io_submission()`.
    pub(crate) fn folio_under_io(&mut self, folio: &FolioRef) {
        if self.io_folios.last() != Some(&folio.index) {
            self.io_folios.push(folio.index);
        }
    }

    /// XFS's block size, `i_blocksize(inode)`: a page unless larger, and then
    /// `PAGE_SIZE << min_folio_order` (xfs_ialloc_setup_geometry(): "igeo->min_folio_order =
    /// mp->m_sb.sb_blocklog - PAGE_SHIFT"); radiff makes no block smaller than the page.
    pub(crate) fn xfs_block_size(&self) -> u64 {
        PAGE_SIZE << self.min_order()
    }

    /// `iomap_readahead()` with `iomap_bio_read_ops`, Linux 7.3.4 fs/iomap/buffered-io.c
    /// (xfs_vm_readahead(); XFS picks its own read ops only on devices with integrity
    /// checksums).
    fn iomap_readahead(&mut self, ractl: &ReadaheadControl) {
        let mut folios = std::mem::take(&mut self.folio_buf);
        self.cache.folios_in_into(ractl.index, ractl.index + ractl.nr_pages, &mut folios);
        let start = ractl.index << PAGE_SHIFT;
        self.iomap_read(&folios, start, start + (ractl.nr_pages << PAGE_SHIFT), true);
        self.folio_buf = folios;
    }

    /// The loop shared by `iomap_readahead()` and `iomap_read_folio()`: for each mapping
    /// `iomap_iter()` returns (an extent or hole, trimmed to the range), for each folio in
    /// it, `iomap_read_folio_iter()` → `iomap_bio_read_folio_range()`, which adds the folio
    /// to the open bio if it continues it on disk and has room, else submits that bio and
    /// starts one sized for the rest of the mapping; at the end of each mapping the bio is
    /// submitted ("if (ctx->read_ctx && ctx->ops->submit_read) ctx->ops->submit_read(...)").
    fn iomap_read(&mut self, folios: &[FolioRef], start: u64, end: u64, rahead: bool) {
        let isize = self.isize;
        let block = self.xfs_block_size();
        let eof_block_end = isize.div_ceil(block) * block;
        let mut bio: Option<Bio> = None;
        let mut pos = start;
        let mut fi = 0;
        while pos < end {
            let mapping = self.layout.lookup(pos);
            let map_end = mapping.end.min(end);
            while pos < map_end {
                while folios[fi].next_index() << PAGE_SHIFT <= pos {
                    fi += 1;
                }
                let folio = folios[fi];
                let part_end = (folio.next_index() << PAGE_SHIFT).min(map_end);
                // iomap_adjust_read_range(): a range over i_size stops after the block
                // holding it; iomap_block_needs_zeroing(): "return pos >= i_size_read(...)".
                let io_end = part_end.min(eof_block_end);
                match mapping.physical(pos) {
                    Some(physical) if pos < isize => {
                        let plen = io_end - pos;
                        let poff = pos - (folio.index << PAGE_SHIFT); // offset_in_folio()
                        let sector = physical / SECTOR_SIZE;
                        // iomap_bio_read_folio_range(); iomap_bio_has_room() is
                        // bio_add_page()'s BIO_MAX_SIZE test.
                        let fits = match &mut bio {
                            Some(b) => {
                                b.end_sector() == sector && b.bio_add_folio(self.cache.folio_phys(&folio), plen, poff)
                            }
                            None => false,
                        };
                        if !fits {
                            // iomap_read_alloc_bio(): "Submit the existing range if there was one."
                            if let Some(b) = bio.take() {
                                self.submit_bio(b);
                            }
                            let nr_vecs = (map_end - pos).div_ceil(PAGE_SIZE);
                            let mut b = self.bio_alloc(sector, bio_max_segs(nr_vecs), rahead);
                            b.bio_add_folio_nofail(self.cache.folio_phys(&folio), plen, poff);
                            bio = Some(b);
                        }
                        self.folio_under_io(&folio);
                        pos = io_end;
                    }
                    _ => {
                        // Hole, unwritten extent or past EOF: zeroed, no I/O.
                        pos = part_end;
                    }
                }
                if pos == folio.next_index() << PAGE_SHIFT && self.io_folios.last() != Some(&folio.index) {
                    self.cache.set_uptodate(folio.index);
                }
            }
            if let Some(b) = bio.take() {
                self.submit_bio(b);
            }
        }
    }

    /// `ext4_mpage_readpages()`, Linux 7.3.4 fs/ext4/readpage.c (`rahead` when called from
    /// ext4_readahead()). A folio whose blocks are all mapped and contiguous on disk (or
    /// mapped up to a hole) joins the open bio if its first block follows the bio's last;
    /// a folio with a hole before mapped blocks, or discontiguous blocks, is "confused"
    /// and read block by block through `block_read_full_folio()`.
    fn ext4_mpage_readpages(&mut self, folios: &[FolioRef], rahead: bool) {
        let last_block_in_file = self.isize.div_ceil(BLOCK_SIZE);
        let mut bio: Option<Bio> = None;
        let mut last_block_in_bio = 0u64;
        let mut nr_pages: u64 = folios.iter().map(|f| f.nr_pages()).sum();
        for folio in folios {
            let blocks_per_folio = folio.nr_pages();
            let mut first_hole = blocks_per_folio;
            let mut first_block = 0;
            let mut confused = false;
            for page_block in 0..blocks_per_folio {
                let block_in_file = folio.index + page_block;
                let mapped = if block_in_file < last_block_in_file { self.layout.block(block_in_file) } else { None };
                match mapped {
                    None => first_hole = first_hole.min(page_block),
                    Some(_) if first_hole != blocks_per_folio => {
                        confused = true; // "hole -> non-hole"
                        break;
                    }
                    Some(pblk) if page_block == 0 => first_block = pblk,
                    Some(pblk) if first_block + page_block != pblk => {
                        confused = true; // "Contiguous blocks?"
                        break;
                    }
                    Some(_) => {}
                }
            }
            if confused {
                if let Some(b) = bio.take() {
                    self.submit_bio(b);
                }
                self.block_read_full_folio(folio);
                nr_pages -= blocks_per_folio;
                continue;
            }
            if first_hole == 0 {
                self.cache.set_uptodate(folio.index);
                nr_pages -= blocks_per_folio;
                continue;
            }
            // "This folio will go to BIO.  Do we need to send this BIO off first?"
            if bio.is_some() && last_block_in_bio != first_block.wrapping_sub(1) {
                self.submit_bio(bio.take().unwrap());
            }
            let length = first_hole * BLOCK_SIZE;
            let sector = first_block * (BLOCK_SIZE / SECTOR_SIZE);
            let added = bio.as_mut().is_some_and(|b| b.bio_add_folio(self.cache.folio_phys(folio), length, 0));
            if !added {
                // Either no bio, or "if (!bio_add_folio(...)) goto submit_and_realloc;"
                if let Some(b) = bio.take() {
                    self.submit_bio(b);
                }
                let mut b = self.bio_alloc(sector, bio_max_segs(nr_pages), rahead);
                b.bio_add_folio_nofail(self.cache.folio_phys(folio), length, 0);
                bio = Some(b);
            }
            self.folio_under_io(folio);
            if first_hole != blocks_per_folio {
                self.submit_bio(bio.take().unwrap());
            } else {
                last_block_in_bio = first_block + blocks_per_folio - 1;
            }
            nr_pages -= blocks_per_folio;
        }
        if let Some(b) = bio.take() {
            self.submit_bio(b);
        }
    }

    /// `block_read_full_folio()`, Linux 7.3.4 fs/buffer.c: one single-block bio per mapped
    /// block (`bh_submit(bh, REQ_OP_READ, ...)`, no REQ_RAHEAD), in block order.
    pub(crate) fn block_read_full_folio(&mut self, folio: &FolioRef) {
        let lblock = self.isize.div_ceil(BLOCK_SIZE);
        let mut any = false;
        for block in folio.index..folio.next_index() {
            let Some(pblk) = (if block < lblock { self.layout.block(block) } else { None }) else { continue };
            // bh_submit(): "bio_add_folio_nofail(bio, bh->b_folio, bh->b_size, bh_offset(bh))".
            let mut bio = self.bio_alloc(pblk * (BLOCK_SIZE / SECTOR_SIZE), 1, false);
            bio.bio_add_folio_nofail(self.cache.folio_phys(folio), BLOCK_SIZE, (block - folio.index) * BLOCK_SIZE);
            self.submit_bio(bio);
            any = true;
        }
        if any {
            self.folio_under_io(folio);
        } else {
            self.cache.set_uptodate(folio.index);
        }
    }

    /// `f2fs_mpage_readpages()`, Linux 7.3.4 fs/f2fs/data.c, for a file without large
    /// folios or compression: `f2fs_read_single_page()` per page; a page joins the open bio
    /// if its block follows the bio's last one (`page_is_mergeable()`; `max_io_bytes` is 0
    /// and there is one device) and `bio_add_folio()` takes it: merged into the last
    /// bio_vec when physically contiguous, else a new bio_vec if the bio has room. Bios
    /// come from `f2fs_grab_read_bio()` with `bio_max_segs(max_nr_pages)` vecs, for the
    /// batch as it was when the call began, and go to the block layer through
    /// `f2fs_submit_read_bio()` (`blk_crypto_submit_bio()`: `submit_bio()`).
    fn f2fs_mpage_readpages(&mut self, mut rac: Option<&mut ReadaheadControl>, folio: Option<FolioRef>) {
        let mut nr_pages = match (&rac, folio) {
            (Some(rac), _) => rac.nr_pages,
            (None, Some(f)) => f.nr_pages(),
            (None, None) => return,
        };
        let max_nr_pages = nr_pages;
        if self.policy.f2fs_extent_ra {
            if let Some(rac) = rac.as_deref_mut() {
                // Seed 003: map from the window's start for max(nr_pages, bdi->ra_pages)
                // blocks and expand the window to what f2fs_map_blocks() maps contiguously.
                let block_in_file = rac.index;
                let m_len = self.layout.contiguous_blocks(block_in_file, nr_pages.max(self.bdi.ra_pages));
                if m_len > nr_pages {
                    self.rec.note(|| format!("f2fs_extent_ra: expand {block_in_file}+{nr_pages} to {m_len} pages"));
                    self.readahead_expand(rac, block_in_file * BLOCK_SIZE, m_len * BLOCK_SIZE);
                    nr_pages = rac.nr_pages;
                }
            }
        }
        // The folio batch: the model's buffer, as ext4's and iomap's readahead use it.
        let mut folios = std::mem::take(&mut self.folio_buf);
        match (&rac, folio) {
            (Some(rac), _) => self.cache.folios_in_into(rac.index, rac.index + nr_pages, &mut folios),
            (None, Some(f)) => {
                folios.clear();
                folios.push(f);
            }
            (None, None) => unreachable!(),
        }
        let rahead = rac.is_some();
        let last_block_in_file = self.isize.div_ceil(BLOCK_SIZE);
        let mut bio: Option<Bio> = None;
        let mut last_block_in_bio = 0u64;
        for folio in &folios {
            // f2fs_read_single_page(); large folios of immutable files go through
            // f2fs_read_data_large_folio(), which the model does not port: it reads each
            // page of such a folio the same way.
            let mut any = false;
            for block_in_file in folio.index..folio.next_index() {
                let block_nr = if block_in_file < last_block_in_file { self.layout.block(block_in_file) } else { None };
                let Some(block_nr) = block_nr else { continue }; // zero_out
                if bio.is_some() && last_block_in_bio + 1 != block_nr {
                    self.submit_bio(bio.take().unwrap());
                }
                // "if (!bio_add_folio(bio, folio, blocksize, 0)) goto submit_and_realloc;"
                let off = (block_in_file - folio.index) * BLOCK_SIZE;
                let added =
                    bio.as_mut().is_some_and(|b| b.bio_add_folio(self.cache.folio_phys(folio), BLOCK_SIZE, off));
                if !added {
                    if let Some(b) = bio.take() {
                        self.submit_bio(b);
                    }
                    // f2fs_grab_read_bio(inode, ..., nr_pages = max_nr_pages, f2fs_ra_op_flags(rac), ...)
                    let mut b =
                        self.bio_alloc(block_nr * (BLOCK_SIZE / SECTOR_SIZE), bio_max_segs(max_nr_pages), rahead);
                    b.bio_add_folio_nofail(self.cache.folio_phys(folio), BLOCK_SIZE, off);
                    bio = Some(b);
                }
                last_block_in_bio = block_nr;
                any = true;
            }
            if any {
                self.folio_under_io(folio);
            } else {
                self.cache.set_uptodate(folio.index);
            }
        }
        if let Some(b) = bio.take() {
            self.submit_bio(b);
        }
        self.folio_buf = folios;
    }
}
