//! radiff's model of Linux readahead: predicts, for a scenario's reads on a file, the
//! trace the kernel produces (windows, folios and their orders, device requests).
//!
//! Pure and deterministic: no files, processes, environment or clocks. Follows
//! Linux 7.3.4 (mm/readahead.c, mm/filemap.c, fs/iomap, block/); each ported function
//! keeps its kernel name.

pub mod input;
pub mod pattern;
pub mod trace;
pub mod variant;

pub use input::{Extent, FsKind, Input, MappingLimits, QueueLimits};
pub use pattern::{Advice, Op, SizeRange, Step};
pub use trace::{Folio, RaState, Request, Submit, Trace, Trigger, Window};
pub use variant::{AsyncAlign, Policy};
