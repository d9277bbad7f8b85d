//! radiff's model of Linux readahead: predicts, for a scenario's reads on a file, the
//! trace the kernel produces (windows, folios and their orders, device requests).
//!
//! Pure and deterministic: no files, processes, environment or clocks. Follows
//! Linux 7.3.4 (mm/readahead.c, mm/filemap.c, mm/fadvise.c, fs/iomap, fs/ext4, fs/f2fs,
//! block/); each ported function keeps its kernel name.
//!
//! ```
//! use radiff_model::*;
//! let input = Input {
//!     fs: FsKind::Xfs,
//!     file_size: 1 << 20,
//!     extents: vec![Extent { logical: 0, physical: 1 << 30, length: 1 << 20, flags: 0 }],
//!     queue: QueueLimits::nvme_qemu(128, 512),
//!     mapping: MappingLimits::xfs(),
//!     ops: vec![Op::Read { fd: 0, offset: 0, len: 4096 }],
//! };
//! let trace = predict(&input, &Policy::BASE);
//! assert_eq!(trace.windows[0].trigger, Trigger::Sync);
//! assert_eq!(trace.windows[0].folios.len(), 4); // get_init_ra_size(1, 32) = 4 pages
//! ```

pub mod block;
pub mod config;
pub mod fadvise;
pub mod filemap;
pub mod fs;
pub mod input;
pub mod model;
pub mod pagecache;
pub mod pattern;
pub mod readahead;
pub mod trace;
pub mod variant;

pub use config::{FolioMemory, IoCompletion, ModelConfig};
pub use input::{Extent, FsKind, Input, MappingLimits, QueueLimits};
pub use model::{Explained, Simulation, WindowNote};
pub use pattern::{Advice, Op, SizeRange, Step};
pub use trace::{Folio, RaState, Request, Submit, Trace, Trigger, Window};
pub use variant::{AsyncAlign, Policy};

/// The trace Linux 7.3.4 with the variant `policy` produces for `input`, under the
/// default assumptions ([`ModelConfig::default()`]).
pub fn predict(input: &Input, policy: &Policy) -> Trace {
    predict_with(input, policy, &ModelConfig::default())
}

/// [`predict`] under explicit assumptions.
pub fn predict_with(input: &Input, policy: &Policy, config: &ModelConfig) -> Trace {
    let mut m = model::Model::new(input, *policy, *config, false);
    m.run();
    Trace { windows: m.rec.windows }
}

/// [`predict_with`], plus the model's notes on every window (the system call that opened
/// it, `file_ra_state` after the call, and each decision with its values), for debugging
/// a divergence from the kernel.
pub fn explain(input: &Input, policy: &Policy, config: &ModelConfig) -> Explained {
    Simulation::new(input, policy, config).finish()
}
