//! A mapping's PMD entries ([`Pmds`]), for [`super`]'s fault path.

use super::Pmd;

/// The PMD entries of one mapping, by virtual PMD number (`vpn >> 9`): a slot for each
/// PMD from the first one asked for, none until set. Looked up on every load a scenario
/// makes, so a vector, not a map.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pmds {
    first: u64,
    slots: Vec<Option<Pmd>>,
}

impl Pmds {
    /// The entry of PMD `pmd`, if it is not none.
    pub(crate) fn get(&self, pmd: u64) -> Option<Pmd> {
        pmd.checked_sub(self.first).and_then(|i| self.slots.get(i as usize).copied().flatten())
    }

    /// Sets PMD `pmd`'s entry.
    pub(crate) fn insert(&mut self, pmd: u64, entry: Pmd) {
        *self.slot(pmd) = Some(entry);
    }

    /// Sets PMD `pmd`'s entry unless it has one.
    pub(crate) fn insert_if_none(&mut self, pmd: u64, entry: Pmd) {
        self.slot(pmd).get_or_insert(entry);
    }

    /// Clears PMD `pmd`'s entry (`pmdp_collapse_flush()`).
    pub(crate) fn remove(&mut self, pmd: u64) {
        if let Some(i) = pmd.checked_sub(self.first) {
            if let Some(slot) = self.slots.get_mut(i as usize) {
                *slot = None;
            }
        }
    }

    fn slot(&mut self, pmd: u64) -> &mut Option<Pmd> {
        if self.slots.is_empty() {
            self.first = pmd;
        } else if pmd < self.first {
            let mut grown = vec![None; (self.first - pmd) as usize];
            grown.append(&mut self.slots);
            (self.first, self.slots) = (pmd, grown);
        }
        let i = (pmd - self.first) as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        &mut self.slots[i]
    }
}
