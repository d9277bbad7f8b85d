//! Infrastructure failures: what went wrong, where, and what to do about it.
//!
//! A divergence between kernel and model is not an error (see `compare`); these are
//! the failures that stop radiff from getting an answer at all.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug)]
pub enum Error {
    /// A file could not be opened, read or written.
    Io { path: PathBuf, err: io::Error },
    /// A scenario or `kernels/` file is wrong; `line` is 1-based, 0 when unknown.
    Input { file: PathBuf, line: usize, message: String },
    /// A host program radiff needs is missing.
    MissingTool { tool: String, package: String },
    /// A variant name that `kernels/variants/` does not have.
    UnknownVariant { name: String, known: Vec<String> },
    /// A patch of a variant's series does not apply to the base tree.
    PatchFailed { variant: String, patch: PathBuf, output: String },
    /// A kernel build failed; the full log is kept at `log`.
    Build { variant: String, log: PathBuf, tail: String },
    /// A command failed (not a build: git, tar, qemu-img, ...).
    Command { command: String, status: String, output: String },
    /// A VM did not finish in time; console and partial results are kept in `dir`.
    /// `last_step`: where the guest program was (status.json); `timeout_source`: which
    /// timeout it was and where it is set.
    VmTimeout { after: Duration, dir: PathBuf, last_step: Option<String>, timeout_source: Option<String>, console_tail: String },
    /// A VM ended without the guest reporting success.
    Guest { dir: PathBuf, message: String, console_tail: String },
    /// A trace that cannot be parsed, or that lost events.
    Trace { file: PathBuf, line: usize, message: String },
    /// The trace ring buffer lost events: the trace is shorter than what the kernel did and
    /// is not compared. Console log and the partial trace are kept in `dir`.
    LostEvents { dir: PathBuf, message: String, fix: String },
    /// Anything else, already explained.
    Other(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(path: impl Into<PathBuf>, err: io::Error) -> Error {
        Error::Io { path: path.into(), err }
    }

    pub fn input(file: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Error {
        Error::Input { file: file.into(), line, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, err } => write!(f, "{}: {err}", path.display()),
            Error::Input { file, line: 0, message } => write!(f, "{}: {message}", file.display()),
            Error::Input { file, line, message } => write!(f, "{}:{line}: {message}", file.display()),
            Error::MissingTool { tool, package } => {
                write!(f, "`{tool}` not found: install the Debian package `{package}` (./setup does)")
            }
            Error::UnknownVariant { name, known } => {
                write!(f, "unknown variant `{name}`; known variants: {}", known.join(", "))
            }
            Error::PatchFailed { variant, patch, output } => write!(
                f,
                "variant `{variant}`: patch {} does not apply (the work tree was restored):\n{}",
                patch.display(),
                indent(output)
            ),
            Error::Build { variant, log, tail } => {
                write!(f, "build of `{variant}` failed; full log: {}\nlast lines:\n{}", log.display(), indent(tail))
            }
            Error::Command { command, status, output } => {
                write!(f, "`{command}` failed ({status}):\n{}", indent(output))
            }
            Error::VmTimeout { after, dir, last_step, timeout_source, console_tail } => write!(
                f,
                "the VM did not finish within {} s{} and was killed{}; console log and partial results in {}\nconsole tail:\n{}",
                after.as_secs(),
                timeout_source.as_ref().map(|t| format!(" ({t})")).unwrap_or_default(),
                last_step.as_ref().map(|s| format!("; the guest's last step: `{s}`")).unwrap_or_default(),
                dir.display(),
                indent(console_tail)
            ),
            Error::Guest { dir, message, console_tail } => write!(
                f,
                "the guest failed: {message}\nconsole log and partial results in {}\nconsole tail:\n{}",
                dir.display(),
                indent(console_tail)
            ),
            Error::Trace { file, line, message } => write!(f, "{}:{line}: {message}", file.display()),
            Error::LostEvents { dir, message, fix } => write!(
                f,
                "the trace is incomplete: {message}\nfix: {fix}\nconsole log and the partial trace in {}",
                dir.display()
            ),
            Error::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
