//! The hybrid model's harness side: a tree's mm/readahead.c and mm/fadvise.c compiled with
//! radiff's header, loaded, and handed to the model as a table of kernel functions
//! (docs/hybrid.md).

pub mod choose;
pub mod compile;
pub mod unit;
pub mod verdict;

use crate::cache::Cache;
use crate::error::Result;
use crate::port::Files;

pub use crate::worker::{watchdog, Workers};
pub use choose::{choose, Choice};
pub use compile::{CompileError, FADVISE_C, FILEMAP_C, HEADER, HEADER_PATH, READAHEAD_C, SOURCES};

/// A tree's mm/readahead.c (and mm/fadvise.c), compiled, and the workers that run it for
/// the model.
pub struct Hybrid {
    pub workers: std::sync::Arc<Workers>,
    /// The tree, described, for messages.
    pub tree: String,
    /// Why the tree's mm/fadvise.c is not in the object (`generic_fadvise()` stays the Rust
    /// port): the compiler's first error.
    pub fadvise: Option<CompileError>,
    /// Why the fault path's functions of the tree's mm/filemap.c are not in the object (they
    /// stay the Rust port): the compiler's first error.
    pub filemap: Option<CompileError>,
}

impl Hybrid {
    /// What the hybrid leaves to the Rust port of mm/fadvise.c, in a sentence; `None` when
    /// `generic_fadvise()` runs as C (or the tree has no mm/fadvise.c).
    pub fn fadvise_note(&self) -> Option<String> {
        self.fadvise.as_ref().map(|e| {
            format!(
                "generic_fadvise() stays the Rust port: {} does not compile with radiff's header: {}",
                compile::FADVISE_C,
                e.first_error
            )
        })
    }

    /// What the hybrid leaves to the Rust port of mm/filemap.c, in a sentence; `None` when
    /// the fault path's functions run as C (or the tree has none of them).
    pub fn filemap_note(&self) -> Option<String> {
        self.filemap.as_ref().map(|e| {
            format!(
                "do_sync_mmap_readahead() and do_async_mmap_readahead() stay the Rust port: {} does not compile with radiff's header: {}",
                compile::FILEMAP_C,
                e.first_error
            )
        })
    }
}

/// What came of making a tree's hybrid.
pub enum Made {
    Ready(Hybrid),
    /// The C did not compile: the model falls back to its Rust port, saying so.
    DoesNotCompile {
        tree: String,
        error: CompileError,
    },
}

/// Compiles (or finds in the cache) the hybrid of `tree`; its workers load it.
pub fn make(cache: &Cache, tree: &dyn Files) -> Result<Made> {
    let label = tree.describe();
    let Some(compiled) = compile::compile_tree(cache, tree)? else {
        return Err(crate::Error::Other(format!("{label} has no {}: no hybrid", compile::READAHEAD_C)));
    };
    match compiled {
        Ok(c) => Ok(Made::Ready(Hybrid {
            workers: std::sync::Arc::new(Workers::new(&c.so)),
            tree: label,
            fadvise: c.fadvise,
            filemap: c.filemap,
        })),
        Err(error) => Ok(Made::DoesNotCompile { tree: label, error }),
    }
}
