//! One readahead decision at a time: what the model decides for a single
//! `page_cache_sync_ra()` or `page_cache_async_ra()` call, given the state the kernel had
//! when it made it (the call's `file_ra_state`, the folios then in the page cache).
//!
//! Where several tasks read one file at once, the model cannot replay the system calls in
//! order (the interleaving is the scheduler's), but the kernel recorded each call and the
//! state it entered with; the harness rebuilds that state from the trace and asks
//! [`decide`] what the call should have done (the window, the folios it added and their
//! orders, the device requests). See docs/concurrency.md.

use crate::input::Input;
use crate::model::Model;
use crate::pattern::{fd_of, Op};
use crate::readahead::{FileRaState, ReadaheadControl};
use crate::trace::{Folio, Trigger, Window, PAGE_SIZE};
use crate::variant::Policy;
use crate::ModelConfig;

/// A readahead call the kernel made, with the state it made it in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The scenario's file (0: the first).
    pub file: u32,
    /// `Trigger::Sync` (`page_cache_sync_ra()`) or `Trigger::Async`
    /// (`page_cache_async_ra()`, at the folio holding `index`, marked PG_readahead).
    pub trigger: Trigger,
    pub index: u64,
    pub req_count: u64,
    /// The call's `file_ra_state` at entry, `start` included (the tracepoint does not
    /// print it: the harness takes it from the last window of the same state).
    pub ra: FileRaState,
    /// FMODE_RANDOM on the call's file (POSIX_FADV_RANDOM).
    pub random: bool,
    /// The folios of the file in the page cache when the call was made, uptodate or not
    /// (the decisions look at presence only).
    pub cache: Vec<Folio>,
    /// The page frame of each folio the kernel's call added, in order (how bios merge);
    /// empty: [`crate::FolioMemory`]'s assumption.
    pub pfns: Vec<u64>,
}

/// What the model decides for a [`Decision`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The windows the call opened (one; none for an async call that returned before its
    /// tracepoint, as with `ra_pages` 0): submissions, folios added, requests issued.
    pub windows: Vec<Window>,
    /// The `file_ra_state` the call left.
    pub ra: FileRaState,
}

/// What `input`'s kernel (the model under `policy`) decides for `d`. `input` gives the
/// file system, the files' sizes and extents, the queue and the mapping's folio limits;
/// its operations are not run.
pub fn decide(input: &Input, policy: &Policy, d: &Decision) -> Decided {
    let fd = fd_of(d.file, 0);
    let alone = Input {
        ops: vec![Op::Read { fd, offset: d.index * PAGE_SIZE, len: d.req_count.max(1) * PAGE_SIZE }],
        folio_pfns: d.pfns.clone(),
        ..input.clone()
    };
    let mut m = Model::new(&alone, *policy, ModelConfig::default(), false);
    m.switch_file(d.file as usize);
    for f in &d.cache {
        // A folio the kernel had is one the model's cache can hold; one that overlaps
        // another (a trace that missed a removal) is left out.
        if m.cache.add_folio(f.index, f.order, false, 0).is_ok() {
            m.cache.set_uptodate(f.index);
        }
    }
    let file = &mut m.files[fd as usize];
    file.ra = d.ra;
    file.random = d.random;
    let mut ractl = ReadaheadControl::new(fd as usize, d.index);
    match d.trigger {
        Trigger::Async => {
            if let Some(folio) = m.cache.folio_at(d.index) {
                m.cache.set_readahead(folio.index);
                let folio = m.cache.folio_at(d.index).expect("present above");
                m.page_cache_async_ra(&mut ractl, folio, d.req_count);
            }
        }
        _ => m.page_cache_sync_ra(&mut ractl, d.req_count),
    }
    Decided { windows: std::mem::take(&mut m.rec.windows), ra: m.files[fd as usize].ra }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Submit;

    fn sync_at(index: u64, req_count: u64, ra: FileRaState, cache: Vec<Folio>) -> Decision {
        Decision { file: 0, trigger: Trigger::Sync, index, req_count, ra, random: false, cache, pfns: Vec::new() }
    }

    #[test]
    fn a_decision_alone_is_what_the_whole_run_decided_at_that_call() {
        // Two sequential reads: the second reaches the first window's mark. Each window of
        // the whole run, asked alone with the state it was entered with and the folios
        // cached before it, comes out the same.
        let ops = vec![Op::Read { fd: 0, offset: 0, len: 16384 }, Op::Read { fd: 0, offset: 16384, len: 65536 }];
        let input = Input::xfs_on_nvme(8 << 20, ops);
        let whole = crate::predict(&input, &Policy::BASE);
        assert!(whole.windows.len() >= 3, "{whole:?}");
        let mut cache: Vec<Folio> = Vec::new();
        let mut start = 0;
        for w in &whole.windows {
            let ra = FileRaState::entered(&w.ra, start);
            let d = Decision { trigger: w.trigger, ..sync_at(w.index, w.req_count, ra, cache.clone()) };
            let got = decide(&input, &Policy::BASE, &d);
            assert_eq!(got.windows.len(), 1, "{got:?}");
            let mut alone = got.windows[0].clone();
            alone.ra.start = 0;
            assert_eq!(&alone, w);
            start = got.ra.start;
            cache.extend(&w.folios);
        }
    }

    #[test]
    fn a_window_another_task_already_cached_is_skipped() {
        // A sync call at 0 of a cold file reads the initial window; the same call with
        // pages 1-2 cached (another task's) adds only the others.
        let input = Input::xfs_on_nvme(8 << 20, Vec::new());
        let init = FileRaState::file_ra_state_init(32);
        let cold = decide(&input, &Policy::BASE, &sync_at(0, 1, init, Vec::new()));
        let warm = decide(
            &input,
            &Policy::BASE,
            &sync_at(0, 1, init, vec![Folio { index: 1, order: 0 }, Folio { index: 2, order: 0 }]),
        );
        // The same window; with pages cached inside it, page_cache_ra_order() falls back
        // to page_cache_ra_unbounded() for the rest.
        assert_eq!(cold.windows[0].submits[0], warm.windows[0].submits[0]);
        let pages = |w: &Window| w.folios.iter().map(|f| f.index).collect::<Vec<_>>();
        assert_eq!(pages(&cold.windows[0]), vec![0, 1, 2, 3]);
        assert_eq!(pages(&warm.windows[0]), vec![0, 3]);
        assert!(matches!(warm.windows[0].submits[..], [Submit::Order { index: 0, .. }, Submit::Unbounded { .. }]));
    }
}
