//! The requests the system call being run has issued, by start sector: a fault that waits
//! on a folio asks which of them read it ([`crate::model::Model`]'s
//! `woken_with_other_requests_in_flight`), once per folio a collapse or a fault-around
//! waits on, so the answer must not cost a walk over every request of the call.

/// The system call's requests as (start sector, sectors), sorted, with the longest one's
/// length (a request that holds sector `s` starts no earlier than `s - longest + 1`).
#[derive(Debug, Default)]
pub(crate) struct OpRequests {
    by_start: Vec<(u64, u64)>,
    longest: u64,
}

impl OpRequests {
    /// A new system call: none yet.
    pub fn clear(&mut self) {
        self.by_start.clear();
        self.longest = 0;
    }

    /// A request the call issued (in order of start sector; a request is usually issued
    /// above the last, so it usually goes at the end).
    pub fn add(&mut self, sector: u64, sectors: u64) {
        let at = self.by_start.partition_point(|&r| r <= (sector, sectors));
        self.by_start.insert(at, (sector, sectors));
        self.longest = self.longest.max(sectors);
    }

    /// Pushes to `out` every request that holds sector `s` (duplicates as often as issued).
    pub fn holding(&self, s: u64, out: &mut Vec<(u64, u64)>) {
        let lowest = s.saturating_sub(self.longest.saturating_sub(1));
        let from = self.by_start.partition_point(|&(start, _)| start < lowest);
        let to = self.by_start.partition_point(|&(start, _)| start <= s);
        out.extend(self.by_start[from..to].iter().filter(|&&(start, n)| s < start + n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requests_holding_a_sector_are_those_a_walk_over_all_of_them_finds() {
        let issued = [(64, 8), (0, 32), (8, 8), (200, 256), (32, 0), (0, 32), (300, 1)];
        let mut requests = OpRequests::default();
        for &(s, n) in &issued {
            requests.add(s, n);
        }
        for s in 0..600 {
            let mut walk: Vec<(u64, u64)> =
                issued.iter().filter(|&&(st, n)| (st..st + n).contains(&s)).copied().collect();
            let mut found = Vec::new();
            requests.holding(s, &mut found);
            walk.sort_unstable();
            found.sort_unstable();
            assert_eq!(found, walk, "sector {s}");
        }
        requests.clear();
        let mut found = Vec::new();
        requests.holding(8, &mut found);
        assert!(found.is_empty());
    }
}
