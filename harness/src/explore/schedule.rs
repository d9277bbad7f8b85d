//! Scheduling confirmations: what VM work costs so far, which findings fit the budget next.

use std::time::Duration;

/// Until a VM run has been timed: what one run of a finding's scenario is guessed to
/// cost under TCG, and the preparation of a disk image.
pub const GUESS_RUN: Duration = Duration::from_secs(45);
pub const GUESS_IMAGE: Duration = Duration::from_secs(90);

/// What the VM work of an explore run has cost so far, to estimate the next piece: the mean
/// run and image preparation measured, [`GUESS_RUN`] and [`GUESS_IMAGE`] until measured.
#[derive(Debug, Default)]
pub struct Costs {
    runs: u32,
    run_time: Duration,
    images: u32,
    image_time: Duration,
}

impl Costs {
    pub fn per_run(&self) -> Duration {
        if self.runs == 0 {
            GUESS_RUN
        } else {
            self.run_time / self.runs
        }
    }

    /// Whether a run has been measured (until then, estimates are guesses).
    pub fn measured(&self) -> bool {
        self.runs > 0
    }

    /// `runs` VM runs, and the disk image's preparation unless it is `ready`.
    pub fn estimate(&self, runs: u32, ready: bool) -> Duration {
        let per_image = if self.images == 0 { GUESS_IMAGE } else { self.image_time / self.images };
        self.per_run() * runs + if ready { Duration::ZERO } else { per_image }
    }

    /// Adds `runs` runs that took `run_time` in all, and an image preparation when one was made.
    pub fn record(&mut self, runs: u32, run_time: Duration, image: Option<Duration>) {
        self.runs += runs;
        self.run_time += run_time;
        if let Some(t) = image {
            self.images += 1;
            self.image_time += t;
        }
    }
}

/// A finding waiting for confirmation, as [`pick_group`] weighs it.
#[derive(Clone, Debug)]
pub struct Queued {
    /// Whether its disk image is prepared.
    pub ready: bool,
    /// Its runs and (unless ready) its image's preparation ([`Costs::estimate`]).
    pub estimate: Duration,
    /// Its name (its scenario's, and so its run folders').
    pub name: String,
}

/// The next findings to confirm together (indices into `queue`, in the order they are
/// confirmed), at most `max`: those whose disk image is ready first, then the others,
/// each in the queue's order, each taken if its estimate fits in what `left` leaves
/// after the ones taken before it. A finding named as one already taken waits for the
/// next group (the two would share run folders). Empty when none fits.
pub fn pick_group(queue: &[Queued], left: Duration, max: usize) -> Vec<usize> {
    let mut picked: Vec<usize> = Vec::new();
    let mut spent = Duration::ZERO;
    for ready in [true, false] {
        for (i, q) in queue.iter().enumerate().filter(|(_, q)| q.ready == ready) {
            if picked.len() >= max {
                return picked;
            }
            if spent + q.estimate <= left && !picked.iter().any(|&p| queue[p].name == q.name) {
                spent += q.estimate;
                picked.push(i);
            }
        }
    }
    picked
}
