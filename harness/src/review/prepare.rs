//! From what `radiff review` was given to a variant of `kernels/variants/`: an existing
//! variant folder, a variant that already holds the same diff, or a new folder made only
//! once the mail parsed and every patch applied to the base's files.

use std::path::{Path, PathBuf};

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::kernels::{Builder, Kernels};
use crate::mail::{self, Mail, Thread};

/// The variant a review runs on.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub variant: String,
    /// The subject the reply answers.
    pub subject: String,
    /// The headers of the mail it answers (empty for a mail saved without them).
    pub thread: Thread,
    /// Each patch's subject, in the series' order.
    pub patch_subjects: Vec<String>,
    /// What was done to find it (`made kernels/variants/x/ from ...`, `the same diff as ...`).
    pub how: String,
    /// What the thread's reviewers asked of the checklist ([`super::asked`]).
    pub asked: Vec<super::asked::Asked>,
    /// The folder it made for the review (marked [`crate::kernels::REVIEW_MARK`]: this
    /// process's alone), `None` when it reused one.
    pub made: Option<PathBuf>,
}

/// The variant for `path` (a mail, an mbox, or a folder of `kernels/variants/`; `-`, a mail
/// on standard input), made in `kernels` if needed under `name` (default: from the
/// subject). Bad input changes nothing: a mail with no diff, or a patch that does not
/// apply, is an error naming the file and the hunk, before any folder is made.
pub fn prepare(kernels: &Kernels, cache: &Cache, path: &Path, name: Option<&str>) -> Result<Prepared> {
    let variants_dir = kernels.dir.join("variants");
    for gone in crate::kernels::remove_stale_reviews(&variants_dir) {
        crate::progress::progress(&format!(
            "review: removed kernels/variants/{gone}/, left by a review that did not finish"
        ));
    }
    if path.is_dir() {
        return existing_folder(kernels, &variants_dir, path);
    }
    let (path, raw) = match path == Path::new("-") {
        true => (Path::new(STDIN), crate::files::read_stdin()?),
        false => (path, crate::files::read_bytes(path)?),
    };
    let mail = mail::parse(&raw).map_err(|why| Error::input(path, 0, why))?;
    let subjects: Vec<String> = mail.patches.iter().map(|m| m.subject.clone()).collect();
    // A name given asks for a variant of its own, even where another holds the same diff.
    if let Some(same) = name.is_none().then(|| same_diff(kernels, &mail)).transpose()?.flatten() {
        return Ok(Prepared {
            how: format!("the same diff as kernels/variants/{same}/ (reused, with its kernel and model)"),
            variant: same,
            asked: super::asked::asked(&mail.said),
            subject: mail.subject,
            thread: mail.thread,
            patch_subjects: subjects,
            made: None,
        });
    }
    let wanted = name.map(str::to_string).unwrap_or_else(|| mail.name.clone());
    if name.is_some() && variants_dir.join(&wanted).exists() {
        return Err(Error::Other(format!(
            "kernels/variants/{wanted}/ exists and holds another diff: give another --name, or review the folder itself"
        )));
    }
    let variant = free_name(&variants_dir, &wanted);
    // The patches, as they will be stored, applied to the base's files first.
    let staged =
        tempfile::Builder::new().prefix("radiff-review-").tempdir().map_err(|e| Error::io(Path::new("/tmp"), e))?;
    let files = patch_files(&mail, &variant);
    let mut paths = Vec::new();
    for (file, text) in &files {
        let p = staged.path().join(file);
        crate::files::write(&p, text)?;
        paths.push(p);
    }
    let builder = Builder::new(kernels, cache);
    let base = crate::port::base_files(&builder)?;
    crate::progress::progress(&format!(
        "review: applying {} to the base's files (patch -p1 --dry-run)",
        path.display()
    ));
    match crate::port::PatchedFiles::new(base.as_ref(), &variant, &paths, &[]) {
        Ok(patched) => refuse_outside_headers(path, &patched)?,
        Err(e) => {
            return Err(match e {
                Error::PatchFailed { output, patch, .. } => Error::input(
                    path,
                    0,
                    format!(
                        "{} does not apply to the base ({}); nothing was made. patch says:\n{output}",
                        patch.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()),
                        base.describe()
                    ),
                ),
                other => other,
            })
        }
    }
    let dir = variants_dir.join(&variant);
    crate::files::make_dir(&dir)?;
    let mark = (PathBuf::from(crate::kernels::REVIEW_MARK), std::process::id().to_string().into_bytes());
    for (file, text) in files.iter().chain([&mark]) {
        if let Err(e) = crate::files::write(&dir.join(file), text) {
            crate::files::remove_dir_quietly(&dir);
            return Err(e);
        }
    }
    Ok(Prepared {
        how: format!("made kernels/variants/{variant}/ from {} ({} patch file(s))", path.display(), files.len()),
        variant,
        asked: super::asked::asked(&mail.said),
        subject: mail.subject,
        thread: mail.thread,
        patch_subjects: subjects,
        made: Some(dir),
    })
}

/// Refuses a mail whose patches leave a file the hybrid compiles (mm/readahead.c,
/// mm/fadvise.c) including a header outside the tree (an absolute path, `..`), naming the
/// line, before any folder is made or kernel built.
fn refuse_outside_headers(mail: &Path, patched: &dyn crate::port::Files) -> Result<()> {
    for file in crate::hybrid::SOURCES {
        let Some(text) = patched.read(file)? else { continue };
        if let Err((line, why)) = crate::hybrid::compile::includes(&text) {
            return Err(Error::input(
                mail,
                0,
                format!("{file}:{line}, as the patch leaves it: {why}: radiff refuses a header outside the tree; nothing was made"),
            ));
        }
    }
    Ok(())
}

/// A folder of `kernels/variants/`, as it is.
fn existing_folder(kernels: &Kernels, variants_dir: &Path, path: &Path) -> Result<Prepared> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if canonical(path.parent().unwrap_or(Path::new(""))) != canonical(variants_dir) {
        return Err(Error::input(
            path,
            0,
            format!(
                "a folder to review must be a variant, in {}: copy it there, or give the mail itself",
                variants_dir.display()
            ),
        ));
    }
    let variant = kernels.variant(&name)?;
    let mut subjects = Vec::new();
    let mut thread = None;
    let mut said = Vec::new();
    for p in &variant.patches {
        let mail = mail::parse(&crate::files::read_bytes(p)?).map_err(|why| Error::input(p, 0, why))?;
        subjects.extend(mail.patches.iter().map(|m| m.subject.clone()));
        thread.get_or_insert(mail.thread);
        said.extend(mail.said);
    }
    let subject = subjects.first().cloned().unwrap_or_else(|| format!("[PATCH] {name}"));
    Ok(Prepared {
        variant: name.clone(),
        subject,
        thread: thread.unwrap_or_default(),
        patch_subjects: subjects,
        how: format!("kernels/variants/{name}/ as it is"),
        asked: super::asked::asked(&said),
        made: None,
    })
}

/// The variant of `kernels` whose patches hold exactly `mail`'s diffs, if one does.
fn same_diff(kernels: &Kernels, mail: &Mail) -> Result<Option<String>> {
    let wanted: Vec<&str> = mail.patches.iter().flat_map(|m| m.diff()).collect();
    for v in kernels.variants.iter().filter(|v| !v.patches.is_empty()) {
        let mut texts = Vec::new();
        for p in &v.patches {
            texts.push(crate::kernels::patch_text(p)?);
        }
        let theirs: Vec<&str> = texts.iter().flat_map(|t| mail::diff_lines(t)).collect();
        if theirs == wanted {
            return Ok(Some(v.name.clone()));
        }
    }
    Ok(None)
}

/// `wanted`, or `wanted-2`, `-3`, ... when a folder of that name exists.
fn free_name(variants_dir: &Path, wanted: &str) -> String {
    let mut name = wanted.to_string();
    let mut n = 2;
    while variants_dir.join(&name).exists() {
        name = format!("{wanted}-{n}");
        n += 1;
    }
    name
}

/// The files a variant keeps, each message as it came (the kernels decode it as they apply
/// it): a raw mail (`0001-NAME.mbox`); a series, one file per patch in its order
/// (`0001-...patch`, applied in file-name order).
fn patch_files(mail: &Mail, variant: &str) -> Vec<(PathBuf, Vec<u8>)> {
    if mail.patches.len() == 1 {
        return vec![(PathBuf::from(format!("0001-{variant}.mbox")), mail.patches[0].raw.clone())];
    }
    mail.patches
        .iter()
        .enumerate()
        .map(|(i, m)| (PathBuf::from(format!("{:04}-{}.patch", i + 1, m.name)), m.raw.clone()))
        .collect()
}

/// What a mail read from standard input (`radiff review -`) is called in messages.
const STDIN: &str = "standard input";
