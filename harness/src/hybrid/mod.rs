//! The hybrid model's harness side: a tree's mm/readahead.c, mm/fadvise.c and the functions
//! taken from its mm/filemap.c and fs/f2fs/data.c compiled with radiff's header, loaded, and handed to the model as a table of kernel functions
//! (docs/hybrid.md).

pub mod choose;
pub mod compile;
pub mod configs;
pub mod mapping;
pub mod unit;
pub mod verdict;

use crate::cache::Cache;
use crate::error::Result;
use crate::port::Files;

pub use crate::worker::{watchdog, Workers};
pub use choose::{choose, Choice};
pub use compile::{
    CompileError, EXT4_READPAGE_C, F2FS_DATA_C, FADVISE_C, FILEMAP_C, HEADER, HEADER_PATH, READAHEAD_C, SOURCES,
};

/// A tree's mm/readahead.c (with the optional units that compiled: mm/fadvise.c, the
/// functions taken from mm/filemap.c and fs/f2fs/data.c), compiled, and the workers that
/// run it for the model.
pub struct Hybrid {
    pub workers: std::sync::Arc<Workers>,
    /// The tree, described, for messages.
    pub tree: String,
    /// The optional units left out of the object (their functions stay the Rust port), by
    /// tree file, with the compiler's first error.
    pub left_out: Vec<(&'static str, CompileError)>,
    /// Functions left out of a unit whose other functions run as C.
    pub dropped: Vec<compile::Dropped>,
    /// The file systems whose files the tree gives other folio limits than Linux 7.3.4
    /// ([`mapping::of`]); the workers give the model those.
    pub mappings: Vec<(radiff_model::FsKind, radiff_model::MappingLimits)>,
    /// Whether the tree's own miss walks are in mm/readahead.c's unit.
    pub walks: bool,
}

impl Hybrid {
    /// Whether the functions of `file` run as C (its unit is in the object).
    pub fn runs(&self, file: &str) -> bool {
        self.left_out_of(file).is_none()
    }

    /// The functions the table names that the object does not run as C though their unit
    /// compiled: those left out of a unit, and the miss walks when the tree's are not taken.
    pub fn left_to_the_port(&self) -> Vec<String> {
        let walks = (!self.walks).then_some(compile::MISS_WALKS.map(String::from)).into_iter().flatten();
        self.dropped.iter().flat_map(|d| d.functions.iter().cloned()).chain(walks).collect()
    }

    /// Why the unit of `file` was left out, when it was.
    pub fn left_out_of(&self, file: &str) -> Option<&CompileError> {
        self.left_out.iter().find(|(f, _)| *f == file).map(|(_, e)| e)
    }

    /// What the hybrid leaves to the Rust port, a sentence for each unit left out
    /// ("generic_fadvise() stays the Rust port: mm/fadvise.c does not compile with radiff's
    /// header: ...").
    pub fn notes(&self) -> Vec<String> {
        let stay = |names: &[String]| if names.len() == 1 { "stays" } else { "stay" };
        let units = self.left_out.iter().map(|(file, e)| {
            let names: Vec<String> = unit::entries_of(file).iter().map(|n| format!("{n}()")).collect();
            format!(
                "{} {} the Rust port: {file} does not compile with radiff's header: {}",
                join_and(&names),
                stay(&names),
                e.first_error
            )
        });
        let functions = self.dropped.iter().map(|d| {
            let names: Vec<String> = d.functions.iter().map(|n| format!("{n}()")).collect();
            format!(
                "{} of {} {} the Rust port (the file's other functions run as C): {} not compile with radiff's header: {}",
                join_and(&names),
                d.file,
                stay(&names),
                if names.len() == 1 { "it does" } else { "they do" },
                d.error.first_error
            )
        });
        units.chain(functions).chain(mapping::note(&self.mappings)).collect()
    }

    /// Why function `name` of `file` was left out of its unit, when it was.
    pub fn dropped_function(&self, name: &str, file: &str) -> Option<&CompileError> {
        self.dropped.iter().find(|d| d.file == file && d.functions.iter().any(|f| f == name)).map(|d| &d.error)
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
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
        Ok(c) => {
            let mappings = mapping::of(tree)?;
            Ok(Made::Ready(Hybrid {
                workers: std::sync::Arc::new(Workers::new(&c.so).with_mappings(mappings.clone())),
                tree: label,
                left_out: c.left_out(),
                dropped: c.dropped,
                mappings,
                walks: c.walks,
            }))
        }
        Err(error) => Ok(Made::DoesNotCompile { tree: label, error }),
    }
}
