//! `radiff kernels hybrid-check`: the Rust port against a tree's own C on the repository's
//! scenarios and on generated ones, at model speed. Pure apart from the threads: a
//! scenario where the two part is data (its name, its YAML, the rendered divergence).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use radiff_model::hybrid::Crash;
use radiff_model::{Input, ModelConfig, Policy, Trace};

use crate::worker::{thread_cpu, Workers};

use crate::compare::{as_untraced, compare, render_between, Divergence};
use crate::explore::generate::generate;
use crate::explore::synthetic_input;
use crate::scenario::Scenario;

/// Where the Rust port and the hybrid part on one scenario.
#[derive(Clone, Debug)]
pub struct Parted {
    /// `scenarios/NAME.yaml`, or `generated S:I` (seed and index).
    pub name: String,
    /// The scenario to rerun it with: the file, or the generated scenario's YAML.
    pub reproducer: Reproducer,
    pub outcome: Outcome,
}

/// How they part.
#[derive(Clone, Debug)]
pub enum Outcome {
    Diverged(Divergence),
    /// The C crashed on the scenario (the other scenarios still ran).
    Crashed(radiff_model::hybrid::Crash),
}

#[derive(Clone, Debug)]
pub enum Reproducer {
    File(PathBuf),
    Yaml(String),
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Checked {
    pub files: u64,
    pub generated: u64,
    /// Generated scenarios that did not parse (explore's grammar makes a few): skipped.
    pub invalid: u64,
    pub parted: Vec<Parted>,
    pub elapsed: Duration,
    /// CPU time spent in the Rust port's predictions and in the hybrid's, summed over threads.
    pub rust_time: Duration,
    pub hybrid_time: Duration,
}

/// The Rust port's trace and the hybrid's, for `input` on `policy`, with the CPU time each
/// took: the port's on this thread; the hybrid's on this thread (asking, reading the
/// answer) plus its worker's, what one core spent, whatever else the machine runs (a wall
/// clock would charge either side for time the thread waited).
pub fn both(input: &Input, policy: &Policy, c: &Workers) -> (Trace, Result<Trace, Crash>, [Duration; 2]) {
    let config = ModelConfig::default();
    let t = thread_cpu();
    let rust = radiff_model::predict_with(input, policy, &config);
    let t1 = thread_cpu();
    let o = c.predict(input, policy, &config);
    let hybrid = match o.crash {
        Some(crash) => Err(crash),
        None => Ok(o.trace),
    };
    (rust, hybrid, [t1 - t, thread_cpu() - t1 + o.cpu])
}

/// How the two traces are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// Window by window, as the trials compare a kernel with the model.
    Windows,
    /// As a kernel without the readahead tracepoints records a trace
    /// ([`crate::compare::as_untraced`], what the trials hold such a kernel to): a tree
    /// whose mm/readahead.c has none (6.12) opens no readahead window in the hybrid, as
    /// its kernel shows none; the faults' and fault-around's windows stay.
    Flat,
}

/// Runs `policy`'s Rust port and the hybrid `c` on each of `files` and on generated
/// scenarios `0..count` of `seed`, on `threads` threads, comparing as `how` says; the
/// scenarios where they part, files first, then generated ones in index order.
pub fn check(
    files: &[(PathBuf, Scenario)],
    count: u64,
    seed: u64,
    threads: usize,
    policy: &Policy,
    c: &Workers,
    how: Compare,
) -> Checked {
    let started = Instant::now();
    let mut out = Checked::default();
    for (path, s) in files {
        out.files += 1;
        let (rust, hybrid, times) = both(&synthetic_input(s), policy, c);
        out.rust_time += times[0];
        out.hybrid_time += times[1];
        if let Some(outcome) = outcome(&rust, hybrid, how) {
            out.parted.push(Parted {
                name: path.display().to_string(),
                reproducer: Reproducer::File(path.clone()),
                outcome,
            });
        }
    }
    let next = std::sync::atomic::AtomicU64::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if index >= count {
                    break;
                }
                let gen = generate(seed, index);
                let outcome = match gen.scenario(std::path::Path::new("explore"), "hybrid_check", "", &[]) {
                    Err(_) => None,
                    Ok(s) => {
                        let (rust, hybrid, times) = both(&synthetic_input(&s), policy, c);
                        Some((times, outcome(&rust, hybrid, how).map(|o| (gen.yaml("hybrid-check", &[]), o))))
                    }
                };
                results.lock().unwrap().push((index, outcome));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    for (index, outcome) in results {
        out.generated += 1;
        match outcome {
            None => out.invalid += 1,
            Some((times, parted)) => {
                out.rust_time += times[0];
                out.hybrid_time += times[1];
                if let Some((yaml, outcome)) = parted {
                    out.parted.push(Parted {
                        name: format!("generated {seed}:{index}"),
                        reproducer: Reproducer::Yaml(yaml),
                        outcome,
                    });
                }
            }
        }
    }
    out.elapsed = started.elapsed();
    out
}

/// Whether and how the hybrid's outcome parts from the Rust port's trace.
fn outcome(rust: &Trace, hybrid: Result<Trace, Crash>, how: Compare) -> Option<Outcome> {
    match hybrid {
        Ok(h) if how == Compare::Flat => compare(&as_untraced(rust), &as_untraced(&h)).map(Outcome::Diverged),
        Ok(h) => compare(rust, &h).map(Outcome::Diverged),
        Err(c) => Some(Outcome::Crashed(c)),
    }
}

impl Checked {
    /// What `hybrid-check` prints: the count, the rate, then each scenario where the two
    /// part with its diff and reproducer (at most `show` of them in full).
    pub fn render(&self, what: &str, show: usize) -> String {
        let n = self.files + self.generated - self.invalid;
        let rate = n as f64 / self.elapsed.as_secs_f64().max(1e-9);
        let mut s = format!(
            "{what}: {} of {n} scenarios part, {} of them as a crash of the C ({} files, {} generated, {} generated did not parse) in {:.1} s, {rate:.0} a second\n",
            self.parted.len(),
            self.parted.iter().filter(|p| matches!(p.outcome, Outcome::Crashed(_))).count(),
            self.files,
            self.generated - self.invalid,
            self.invalid,
            self.elapsed.as_secs_f64()
        );
        let per_core = |t: Duration| n as f64 / t.as_secs_f64().max(1e-9);
        s.push_str(&format!(
            "predictions a second on one core: rust port {:.0}, hybrid {:.0}\n",
            per_core(self.rust_time),
            per_core(self.hybrid_time)
        ));
        for p in self.parted.iter().take(show) {
            match &p.outcome {
                Outcome::Diverged(d) => s.push_str(&render_between(d, &p.name, "", ("rust port", "hybrid"))),
                Outcome::Crashed(c) => s.push_str(&format!("{}: the hybrid's {c}; the run went on\n", p.name)),
            }
            match &p.reproducer {
                Reproducer::File(f) => s.push_str(&format!("reproducer: {}\n", f.display())),
                Reproducer::Yaml(y) => s.push_str(&format!("reproducer (save as a scenario):\n{y}\n")),
            }
        }
        if self.parted.len() > show {
            s.push_str(&format!("... and {} more\n", self.parted.len() - show));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use radiff_model::{Folio, RaState, Request, Trigger, Window};

    use super::*;

    fn window(trigger: Trigger, folios: &[(u64, u32)], sector: u64) -> Window {
        let mut w = Window::open(trigger, folios[0].0, 1, RaState::default());
        w.folios = folios.iter().map(|&(index, order)| Folio { index, order }).collect();
        w.requests = vec![Request { sector, sectors: 8, rwbs: "RA".into() }];
        w
    }

    #[test]
    fn a_tree_without_tracepoints_is_held_to_the_ports_trace_as_its_kernel_records_it() {
        let fault = window(Trigger::Fault, &[(0, 0)], 0);
        let port = Trace {
            windows: vec![fault.clone(), window(Trigger::Sync, &[(1, 0)], 8), window(Trigger::Async, &[(2, 0)], 16)],
        };
        // The same folios and requests, the readahead windows' in the fault's, where a tree
        // without tracepoints leaves them.
        let untraced = as_untraced(&port);
        assert_eq!(untraced.windows.len(), 1);
        assert_eq!(untraced.windows[0].trigger, Trigger::Fault);
        assert!(outcome(&port, Ok(untraced.clone()), Compare::Windows).is_some(), "window by window they part");
        assert!(outcome(&port, Ok(untraced.clone()), Compare::Flat).is_none());
        // A folio of another order still parts, and so does a fault of its own.
        let mut other = untraced.clone();
        other.windows[0].folios[1].order = 1;
        assert!(outcome(&port, Ok(other), Compare::Flat).is_some());
        let mut split = untraced;
        let second = Window { folios: split.windows[0].folios.split_off(1), requests: Vec::new(), ..fault };
        split.windows.push(second);
        assert!(outcome(&port, Ok(split), Compare::Flat).is_some());
    }
}
