//! The hybrid model's harness side: a tree's mm/readahead.c compiled with radiff's header,
//! loaded, and handed to the model as a table of kernel functions (docs/hybrid.md).

pub mod choose;
pub mod compile;
pub mod load;
pub mod verdict;
pub mod watchdog;

use crate::cache::Cache;
use crate::error::Result;
use crate::port::Files;

pub use choose::{choose, Choice};
pub use compile::{CompileError, HEADER, HEADER_PATH};
pub use load::Loaded;

/// A tree's mm/readahead.c, ready for the model.
pub struct Hybrid {
    pub loaded: Loaded,
    /// The tree, described, for messages.
    pub tree: String,
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

/// Compiles (or finds in the cache) and loads the hybrid of `tree`.
pub fn make(cache: &Cache, tree: &dyn Files) -> Result<Made> {
    let label = tree.describe();
    let Some(compiled) = compile::compile_tree(cache, tree)? else {
        return Err(crate::Error::Other(format!("{label} has no {}: no hybrid", compile::READAHEAD_C)));
    };
    match compiled {
        Ok(so) => Ok(Made::Ready(Hybrid { loaded: Loaded::open(&so)?, tree: label })),
        Err(error) => Ok(Made::DoesNotCompile { tree: label, error }),
    }
}
