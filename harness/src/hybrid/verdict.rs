//! Whether a changed ported function runs as its tree's C in the hybrid, and if not why:
//! the line `radiff kernels port-check` prints under each changed function.

use super::compile::{compile_tree, PerUnit, OPTIONAL, READAHEAD_C, SOURCES};
use crate::cache::Cache;
use crate::error::Result;
use crate::kernels::{Builder, Kernels};
use crate::port::{base_files, Files, PatchedFiles, PortCheck, Report};

/// A function of mm/readahead.c that none of the file systems the model ports (XFS, ext4,
/// f2fs) calls in 7.3.4 (only erofs, netfs, btrfs, squashfs and orangefs do): a tree that
/// changes it changes nothing the model follows, so the hybrid may take it. The model's
/// Rust port is reached only from the f2fs-extent-ra policy, never with the hybrid.
pub const NOT_CALLED: [&str; 1] = ["readahead_expand"];

/// Whether the hybrid runs function `name` as its tree's C: one of the model's table
/// (radiff_model::hybrid::functions: the entries the model calls and every static function
/// they call; [`NOT_CALLED`] is compiled with them and never called).
pub fn runs_as_c(name: &str) -> bool {
    radiff_model::hybrid::functions::runs_as_c_named(name).is_some()
}

/// Whether a file the hybrid compiles failed: the file and the compiler's first error.
pub type Failed = (&'static str, String);

/// The verdict on function `name` of `file` in a tree whose files compiled (`Ok`) or one
/// of which failed (`Err`: [`Compiles::for_file`]).
pub fn verdict(name: &str, file: &str, compiled: &std::result::Result<(), Failed>) -> String {
    if let Err(why) = super::choose::runs_as_c(&[(name.to_string(), file.to_string())]) {
        return format!("stays the Rust port: {why}");
    }
    if NOT_CALLED.contains(&name) {
        return format!(
            "decides nothing in the model: none of the file systems it ports (XFS, ext4, f2fs) calls {name}() in Linux 7.3.4, so the hybrid takes the tree with it"
        );
    }
    match compiled {
        Ok(()) => "runs as C (radiff kernels hybrid-check compares it with the port)".to_string(),
        Err((failed, first)) => format!("does not run as C: {failed} does not compile with radiff's header: {first}"),
    }
}

/// Whether a tree's files compiled with radiff's header: each `Err` holds the compiler's
/// first error, or why it could not be tried (no gcc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiles {
    pub readahead: std::result::Result<(), String>,
    /// Each of the optional units ([`OPTIONAL`], in its order); `Ok` too when the tree has
    /// no such file or none of the functions taken from it.
    pub optional: PerUnit<std::result::Result<(), String>>,
    /// Functions left out of a unit whose others compiled: (function, file, first error).
    pub dropped: Vec<(String, &'static str, String)>,
}

impl Compiles {
    /// All compiled (or were not tried: no changed function needs them).
    pub const OK: Compiles =
        Compiles { readahead: Ok(()), optional: [const { Ok(()) }; OPTIONAL.len()], dropped: Vec::new() };

    /// mm/readahead.c did not compile (or could not be tried), saying why.
    fn readahead_failed(why: String) -> Compiles {
        Compiles { readahead: Err(why), ..Compiles::OK }
    }

    /// All compiled but the optional unit of `file`, which failed with `why`.
    pub fn unit_failed(file: &str, why: String) -> Compiles {
        let mut c = Compiles::OK;
        if let Some(i) = OPTIONAL.iter().position(|u| u.file == file) {
            c.optional[i] = Err(why);
        }
        c
    }

    /// For function `name` of `file`: [`Compiles::for_file`], unless it was left out of its
    /// unit (the error was in it: [`super::compile::Dropped`]).
    pub fn for_function(&self, name: &str, file: &str) -> std::result::Result<(), Failed> {
        match self.dropped.iter().find(|(n, f, _)| n == name && *f == file) {
            Some((_, f, first)) => Err((f, first.clone())),
            None => self.for_file(file),
        }
    }

    /// For a function of `file`: whether the files it needs compiled. Every function
    /// needs mm/readahead.c (the object's), one of an optional unit's file its unit too.
    pub fn for_file(&self, file: &str) -> std::result::Result<(), Failed> {
        self.readahead.clone().map_err(|e| (READAHEAD_C, e))?;
        for (u, r) in OPTIONAL.iter().zip(&self.optional) {
            if u.file == file {
                r.clone().map_err(|e| (u.file, e))?;
            }
        }
        Ok(())
    }
}

/// Whether `tree`'s mm/readahead.c and optional units compile with radiff's header.
pub fn compiles(cache: &Cache, tree: &dyn Files) -> Result<Compiles> {
    Ok(match compile_tree(cache, tree) {
        Ok(None) => Compiles::readahead_failed(format!("{} has no {READAHEAD_C}", tree.describe())),
        Ok(Some(Ok(c))) => {
            let dropped = c
                .dropped
                .iter()
                .flat_map(|d| d.functions.iter().map(|f| (f.clone(), d.file, d.error.first_error.clone())))
                .collect();
            Compiles {
                readahead: Ok(()),
                optional: c.failed.map(|e| e.map_or(Ok(()), |e| Err(e.first_error))),
                dropped,
            }
        }
        Ok(Some(Err(e))) => Compiles::readahead_failed(e.first_error),
        Err(e) => Compiles::readahead_failed(format!("could not run the compiler: {e}")),
    })
}

/// Adds to `report` (what `port-check` found) the verdict on each changed function, for
/// the base and for each variant; a tree is compiled only when one of its changed
/// functions is in a file the hybrid compiles.
pub fn annotate(report: &mut Report, kernels: &Kernels, cache: &Cache) -> Result<()> {
    let builder = Builder::new(kernels, cache);
    let base = base_files(&builder)?;
    let touches = |c: &PortCheck| c.changed.iter().any(|ch| SOURCES.contains(&ch.file.as_str()));
    let mut notes = Vec::new();
    if !report.base.changed.is_empty() {
        let compiled = if touches(&report.base) { compiles(cache, base.as_ref())? } else { Compiles::OK };
        for ch in &report.base.changed {
            notes.push((
                ("base".to_string(), ch.name.clone()),
                verdict(&ch.name, &ch.file, &compiled.for_function(&ch.name, &ch.file)),
            ));
        }
    }
    for (name, c) in &report.variants {
        if c.changed.is_empty() {
            continue;
        }
        let compiled = if touches(c) {
            let variant = kernels.variant(name)?;
            let patched = PatchedFiles::new(base.as_ref(), name, &variant.patches, &SOURCES)?;
            compiles(cache, &patched)?
        } else {
            Compiles::OK
        };
        for ch in &c.changed {
            notes.push((
                (name.clone(), ch.name.clone()),
                verdict(&ch.name, &ch.file, &compiled.for_function(&ch.name, &ch.file)),
            ));
        }
    }
    report.notes.extend(notes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::compile::{FADVISE_C, FILEMAP_C};
    use super::*;

    #[test]
    fn a_changed_function_of_readahead_c_runs_as_c_when_the_file_compiles() {
        assert!(verdict("page_cache_async_ra", "mm/readahead.c", &Ok(())).starts_with("runs as C"));
        assert!(verdict("ra_alloc_folio", "mm/readahead.c", &Ok(())).starts_with("runs as C"));
    }

    #[test]
    fn a_compile_failure_is_named_with_the_first_error() {
        let v = verdict(
            "page_cache_ra_order",
            "mm/readahead.c",
            &Err((READAHEAD_C, "mm/readahead.c:520:9: error: x".into())),
        );
        assert_eq!(
            v,
            "does not run as C: mm/readahead.c does not compile with radiff's header: mm/readahead.c:520:9: error: x"
        );
    }

    #[test]
    fn generic_fadvise_runs_as_c_when_both_files_compile_and_names_the_file_that_did_not() {
        assert!(verdict("generic_fadvise", FADVISE_C, &Compiles::OK.for_file(FADVISE_C)).starts_with("runs as C"));
        let fadvise_failed = Compiles::unit_failed(FADVISE_C, "mm/fadvise.c:40:2: error: y".into());
        let v = verdict("generic_fadvise", FADVISE_C, &fadvise_failed.for_file(FADVISE_C));
        assert_eq!(
            v,
            "does not run as C: mm/fadvise.c does not compile with radiff's header: mm/fadvise.c:40:2: error: y"
        );
        // mm/readahead.c's functions do not need mm/fadvise.c.
        assert!(
            verdict("page_cache_sync_ra", READAHEAD_C, &fadvise_failed.for_file(READAHEAD_C)).starts_with("runs as C")
        );
        // Without mm/readahead.c's object, nothing runs as C.
        let readahead_failed = Compiles::readahead_failed("mm/readahead.c:1:1: error: z".into());
        let v = verdict("generic_fadvise", FADVISE_C, &readahead_failed.for_file(FADVISE_C));
        assert!(v.starts_with("does not run as C: mm/readahead.c does not compile"), "{v}");
    }

    #[test]
    fn functions_the_hybrid_does_not_compile_or_call_stay_rust() {
        assert!(verdict("filemap_fault", "mm/filemap.c", &Ok(())).contains("of which the hybrid runs only"));
        assert!(verdict("filemap_get_pages", "mm/filemap.c", &Ok(())).starts_with("runs as C"));
        assert!(verdict("iomap_readahead", "fs/iomap/buffered-io.c", &Ok(())).contains("runs as C only mm/readahead.c"));
        assert!(verdict("ext4_mpage_readpages", "fs/ext4/readpage.c", &Ok(())).starts_with("runs as C"));
        assert!(verdict("f2fs_mpage_readpages", "fs/f2fs/data.c", &Ok(())).starts_with("runs as C"));
        let f2fs_failed = Compiles::unit_failed("fs/f2fs/data.c", "fs/f2fs/data.c:2294:35: error: v".into());
        let v = verdict("f2fs_mpage_readpages", "fs/f2fs/data.c", &f2fs_failed.for_file("fs/f2fs/data.c"));
        assert!(v.starts_with("does not run as C: fs/f2fs/data.c does not compile"), "{v}");
        let filemap_failed = Compiles::unit_failed(FILEMAP_C, "mm/filemap.c:3340:3: error: w".into());
        let v = verdict("do_sync_mmap_readahead", FILEMAP_C, &filemap_failed.for_file(FILEMAP_C));
        assert_eq!(
            v,
            "does not run as C: mm/filemap.c does not compile with radiff's header: mm/filemap.c:3340:3: error: w"
        );
        assert!(verdict("do_async_mmap_readahead", FILEMAP_C, &Ok(())).starts_with("runs as C"));
        assert!(verdict("file_ra_state_expand", "mm/readahead.c", &Ok(())).contains("from outside"));
    }

    #[test]
    fn a_function_no_ported_file_system_calls_decides_nothing() {
        let v = verdict("readahead_expand", "mm/readahead.c", &Ok(()));
        assert!(v.starts_with("decides nothing in the model") && v.contains("readahead_expand()"), "{v}");
    }
}
