//! Infrastructure failures: what went wrong, where, and what to do about it.
//!
//! A divergence between kernel and model is not an error (see `compare`); these are
//! the failures that stop radiff from getting an answer at all. Each class is its own
//! variant, carrying its cause (`source`) where there is one; the messages name the file
//! (and line) and the fix.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file system holding `path` (the cache, as a rule) is full. Nothing half-written
    /// is reused: kernels, images and run results appear only when complete.
    #[error(
        "{}: no space left on device (ENOSPC){}\nfix: free space on the file system holding it, or point RADIFF_CACHE at a larger one \
         (a kernel takes about 5 MB, the work tree and shared build directory about 3 GB, a disk image up to its scenario's device size); \
         nothing half-written is kept for the next run, which starts this step again",
        path.display(),
        during.as_deref().map(|d| format!(" while {d}")).unwrap_or_default()
    )]
    NoSpace {
        path: PathBuf,
        /// What radiff was doing ("building kernel `base`"), when known.
        during: Option<String>,
        #[source]
        source: io::Error,
    },
    /// A scenario or `kernels/` file is wrong; `line` is 1-based, 0 when unknown.
    #[error("{}{}: {message}", file.display(), at_line(*line))]
    Input { file: PathBuf, line: usize, message: String },
    /// A host program radiff needs is missing.
    #[error("`{tool}` not found: install the Debian package `{package}` (./setup does)")]
    MissingTool { tool: String, package: String },
    /// Parts `./setup` provides are missing (QEMU, virtme-ng, the kernel source): each
    /// one's name and where radiff looked.
    #[error("{}", missing_setup(missing))]
    MissingSetup { missing: Vec<(String, String)> },
    /// A host program could not be started or waited for (not because it is missing).
    #[error("cannot {action} `{command}`: {source}")]
    Spawn {
        action: &'static str,
        command: String,
        #[source]
        source: io::Error,
    },
    /// A variant name that `kernels/variants/` does not have.
    #[error("unknown variant `{name}`; known variants: {}", known.join(", "))]
    UnknownVariant { name: String, known: Vec<String> },
    /// A patch of a variant's series does not apply to the base tree.
    #[error("variant `{variant}`: patch {} does not apply (the work tree was restored):\n{}", patch.display(), indent(output))]
    PatchFailed { variant: String, patch: PathBuf, output: String },
    /// A kernel tree that does not define the tracepoints every run enables: refused
    /// before it is built ([`crate::kernels::check_tree`]).
    #[error(
        "kernel `{variant}` cannot be traced: its tree {} lacks tracepoints every run enables:\n{}\nfix: use a base that has them (the Linux 7.3 source ./setup fetches does), or add them with a patch of the variant; nothing was built or booted",
        tree.display(),
        indent(&missing.join("\n"))
    )]
    Untraceable { tree: PathBuf, variant: String, missing: Vec<String> },
    /// A kernel tree whose Kconfig files do not declare options the config fragment turns
    /// on: refused before it is configured (`kernels/kconfig.rs`).
    #[error(
        "kernel `{variant}` cannot be configured: its tree {} does not declare options that {} turns on:\n{}\nfix: change or remove those lines of the fragment (a `# CONFIG_X is not set` line may name an option the tree lacks), or use a base that has them; nothing was built or booted",
        tree.display(),
        fragment.display(),
        indent(&missing.join("\n"))
    )]
    Unconfigurable { tree: PathBuf, variant: String, fragment: PathBuf, missing: Vec<String> },
    /// A kernel build failed; the full log is kept at `log`.
    #[error("build of `{variant}` failed; full log: {}\nlast lines:\n{}", log.display(), indent(tail))]
    Build { variant: String, log: PathBuf, tail: String },
    /// A command failed (not a build: git, tar, qemu-img, ...).
    #[error("`{command}` failed ({status}):\n{}", indent(output))]
    Command { command: String, status: String, output: String },
    /// A VM did not finish in time; console and partial results are kept in `dir`.
    /// `last_step`: where the guest program was (status.json); `timeout_source`: which
    /// timeout it was and where it is set.
    #[error(
        "the VM did not finish within {} s{} and was killed{}; console log and partial results in {}\nconsole tail:\n{}",
        after.as_secs(),
        timeout_source.as_ref().map(|t| format!(" ({t})")).unwrap_or_default(),
        last_step.as_ref().map(|s| format!("; the guest's last step: `{s}`")).unwrap_or_default(),
        dir.display(),
        indent(console_tail)
    )]
    VmTimeout {
        after: Duration,
        dir: PathBuf,
        last_step: Option<String>,
        timeout_source: Option<String>,
        console_tail: String,
    },
    /// A VM ended without the guest reporting success.
    #[error("the guest failed: {message}\nconsole log and partial results in {}\nconsole tail:\n{}", dir.display(), indent(console_tail))]
    Guest { dir: PathBuf, message: String, console_tail: String },
    /// A trace that cannot be parsed.
    #[error("{}:{line}: {message}", file.display())]
    Trace { file: PathBuf, line: usize, message: String },
    /// A JSON file radiff wrote or reads back (spec, env, trace) that does not (de)serialise.
    #[error("{}: {source}", file.display())]
    Json {
        file: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The trace ring buffer lost events: the trace is shorter than what the kernel did and
    /// is not compared. Console log and the partial trace are kept in `dir`.
    #[error("the trace is incomplete: {message}\nfix: {fix}\nconsole log and the partial trace in {}", dir.display())]
    LostEvents { dir: PathBuf, message: String, fix: String },
    /// Anything else, already explained.
    #[error("{0}")]
    Other(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error on `path`; a full file system (ENOSPC, EDQUOT) is [`Error::NoSpace`].
    pub fn io(path: impl Into<PathBuf>, err: io::Error) -> Error {
        let path = path.into();
        if is_no_space(&err) {
            Error::NoSpace { path, during: None, source: err }
        } else {
            Error::Io { path, source: err }
        }
    }

    pub fn input(file: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Error {
        Error::Input { file: file.into(), line, message: message.into() }
    }

    /// Says what radiff was doing when the file system filled up (other errors unchanged).
    pub fn during(self, what: impl FnOnce() -> String) -> Error {
        match self {
            Error::NoSpace { path, during: None, source } => Error::NoSpace { path, during: Some(what()), source },
            other => other,
        }
    }

    /// Whether this is a full file system.
    pub fn is_no_space(&self) -> bool {
        matches!(self, Error::NoSpace { .. })
    }
}

/// ENOSPC, or a quota's EDQUOT: no room to write.
pub fn is_no_space(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(code) if code == nix::errno::Errno::ENOSPC as i32 || code == nix::errno::Errno::EDQUOT as i32)
}

fn missing_setup(missing: &[(String, String)]) -> String {
    let names: Vec<&str> = missing.iter().map(|(name, _)| name.as_str()).collect();
    let names = match names.as_slice() {
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    };
    let (verb, it) = if missing.len() == 1 { ("is", "it") } else { ("are", "them") };
    let details: Vec<String> = missing.iter().map(|(name, where_)| format!("{name}: {where_}")).collect();
    format!(
        "this host cannot run a kernel: {names} {verb} missing ({}); run ./setup, which installs {it}",
        details.join("; ")
    )
}

fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_system_is_its_own_error_naming_the_path_and_the_fix() {
        let err =
            Error::io("/cache/kernels/base-1/bzImage", io::Error::from_raw_os_error(nix::errno::Errno::ENOSPC as i32));
        assert!(err.is_no_space());
        let text = err.during(|| "building kernel `base`".into()).to_string();
        assert!(
            text.starts_with(
                "/cache/kernels/base-1/bzImage: no space left on device (ENOSPC) while building kernel `base`\nfix: "
            ),
            "{text}"
        );
        assert!(text.contains("RADIFF_CACHE"), "{text}");
        let other = Error::io("/x", io::Error::from(io::ErrorKind::NotFound));
        assert!(!other.is_no_space());
        assert!(std::error::Error::source(&other).is_some());
    }

    #[test]
    fn input_errors_name_file_and_line() {
        assert_eq!(Error::input("s.yaml", 3, "bad").to_string(), "s.yaml:3: bad");
        assert_eq!(Error::input("s.yaml", 0, "bad").to_string(), "s.yaml: bad");
    }
}
