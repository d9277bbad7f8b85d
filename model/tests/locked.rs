//! Issue 24's "locked modelled as not uptodate", pinned: the model has no PG_locked; a
//! folio that is not uptodate stands for one locked by its read. That is exact only while
//! no folio is ever unlocked and not uptodate (a failed read) or locked and uptodate
//! (truncation, writeback), which radiff's read-only, error-free guests never make, and
//! while nothing stays locked from one step to the next (the guest's wait, README). These
//! tests fail if the model ever leaves a folio not uptodate past the op that added it under
//! the guest's contract, on every kind of step and on holes and unwritten extents (read
//! without I/O: iomap zeroes them and marks them uptodate at once).

use radiff_model::*;

fn input(fs: FsKind, ops: Vec<Op>) -> Input {
    let size = 8u64 << 20;
    // [0, 3 MiB) written, [3, 4) a hole, [4, 5) unwritten, [5, 8) written.
    let extents = vec![
        Extent { logical: 0, physical: 1 << 30, length: 3 << 20, flags: 0 },
        Extent { logical: 4 << 20, physical: (1 << 30) + (4 << 20), length: 1 << 20, flags: 0x800 },
        Extent { logical: 5 << 20, physical: (1 << 30) + (5 << 20), length: 3 << 20, flags: 0 },
    ];
    Input {
        fs,
        file_size: size,
        extents,
        queue: QueueLimits::nvme_qemu(128, 512),
        mapping: MappingLimits::for_fs(fs),
        ops,
        folio_pfns: Vec::new(),
        vm: VmSettings::default(),
        other_files: Vec::new(),
    }
}

fn every_kind_of_step() -> Vec<Op> {
    let mib = 1u64 << 20;
    let mut ops = vec![
        Op::Read { fd: 0, offset: 0, len: 4096 },
        Op::Read { fd: 0, offset: 4096, len: mib },
        Op::Readahead { fd: 0, offset: 2 * mib, len: 2 * mib },
        Op::Fadvise { fd: 1, offset: 5 * mib, len: mib, advice: Advice::Willneed },
        Op::Splice { fd: 1, offset: 3 * mib, len: 2 * mib, pipe: 16 << 10, sendfile: false },
        Op::Mmap { map: 0, fd: 0, offset: 0, len: 8 * mib, shared: true, exec: false, populate: false },
        Op::Madvise { map: 0, offset: 6 * mib, len: mib, advice: MadvAdvice::Willneed },
    ];
    ops.extend((0..2048).map(|p| Op::Touch { map: 0, offset: p * 4096 }));
    ops.push(Op::Fadvise { fd: 0, offset: 0, len: 0, advice: Advice::Dontneed });
    ops.push(Op::Read { fd: 2, offset: 7 * mib, len: mib });
    ops
}

#[test]
fn under_the_guests_contract_no_folio_is_left_not_uptodate_after_any_step() {
    for fs in [FsKind::Xfs, FsKind::Ext4, FsKind::F2fs] {
        let inp = input(fs, every_kind_of_step());
        let mut sim = Simulation::new(&inp, &Policy::BASE, &ModelConfig::default());
        let mut added = 0;
        while sim.step() {
            let op = sim.next_op() - 1;
            let folios = sim.cache().folios();
            added = added.max(folios.len());
            let locked: Vec<u64> = folios.iter().filter(|f| !f.uptodate).map(|f| f.index).collect();
            assert!(locked.is_empty(), "{fs:?}: after op {op} ({:?}) folios {locked:?} are not uptodate", inp.ops[op]);
        }
        assert!(added > 0, "{fs:?}: the steps added no folio");
    }
}
