//! mm/fail_page_alloc.c of Linux 7.3.4 as radiff's guest arms it, and the page-cache
//! allocations it makes fail: which folio allocation of the scenario's task fails.
//!
//! The guest (`Op::FailAlloc`) sets debugfs `fail_page_alloc` to `probability` 100,
//! `interval` 1, `space` 0, `task-filter` 1 with the task's `make-it-fail`,
//! `ignore-gfp-wait` and `ignore-gfp-highmem` off, `min-order` K and `times` N: then
//! should_fail_ex() fails the task's next N allocations that reach it, and
//! should_fail_alloc_page() lets only those of order K or more reach it. The scenario
//! check keeps K at 4 or more, above the orders anything else of the task allocates on
//! the read path (page tables 0, kernel stacks 2, SLUB's slab pages at most
//! `PAGE_ALLOC_COSTLY_ORDER` 3), so the folios the model adds are the only candidates.

use crate::model::Model;

/// The state of `fail_page_alloc.attr` that matters to the task: `atomic_t times` and
/// `u32 min_order` (`times` 0: disarmed, the boot default of `FAULT_ATTR_INITIALIZER`'s
/// probability 0 in effect).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailPageAlloc {
    pub times: u32,
    pub min_order: u32,
}

impl FailPageAlloc {
    /// `should_fail_alloc_page()`, Linux 7.3.4 mm/fail_page_alloc.c, with the guest's
    /// settings: "if (order < fail_page_alloc.min_order)" it does not fail (no __GFP_NOFAIL
    /// on these allocations, the two ignore flags off); else should_fail_ex() fails it
    /// while `times` is not 0, and counts it down (probability 100, interval 1, space 0:
    /// nothing else can say no).
    pub fn should_fail_alloc_page(&mut self, order: u32) -> bool {
        if order < self.min_order || self.times == 0 {
            return false;
        }
        self.times -= 1;
        true
    }
}

impl Model<'_> {
    /// `ractl_alloc_folio()`, Linux 7.3.4 mm/readahead.c: "folio = filemap_alloc_folio(gfp_mask,
    /// order, NULL);": false when the allocation fails (the dropbehind flag it sets on the
    /// folio is `ractl_set_dropbehind()`, once the folio is added).
    pub(crate) fn ractl_alloc_folio(&mut self, order: u32) -> bool {
        self.alloc_folio(order)
    }

    /// What filemap_alloc_folio() (include/linux/pagemap.h, no CONFIG_NUMA: "return
    /// folio_alloc_noprof(gfp, order);") does for the model: false when the allocation of
    /// a folio of `order` fails. The model keeps no free memory: only fail_page_alloc
    /// fails it.
    pub(crate) fn alloc_folio(&mut self, order: u32) -> bool {
        if self.fail.should_fail_alloc_page(order) {
            let (times, min_order) = (self.fail.times, self.fail.min_order);
            self.rec.note(|| format!("fail_page_alloc: an order-{order} folio allocation fails (min-order {min_order}, {times} more to fail)"));
            return false;
        }
        true
    }

    /// `Op::FailAlloc`: what the guest writes to debugfs `fail_page_alloc` (`times`
    /// replaces what is left of an earlier one).
    pub(crate) fn arm_fail_page_alloc(&mut self, times: u32, min_order: u32) {
        self.fail = FailPageAlloc { times, min_order };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allocations_of_min_order_or_more_fail_and_only_times_of_them() {
        let mut f = FailPageAlloc { times: 2, min_order: 4 };
        assert!(!f.should_fail_alloc_page(0));
        assert!(!f.should_fail_alloc_page(3));
        assert!(f.should_fail_alloc_page(4));
        assert!(!f.should_fail_alloc_page(2));
        assert!(f.should_fail_alloc_page(9));
        assert!(!f.should_fail_alloc_page(9), "times used up");
        assert_eq!(f.times, 0);
    }

    #[test]
    fn disarmed_fails_nothing() {
        let mut f = FailPageAlloc::default();
        assert!((0..=9).all(|o| !f.should_fail_alloc_page(o)));
    }
}
