//! How a call into the hybrid's C ended badly, as data and as the sentence the trial,
//! hybrid-check and the review print.

/// The function a [`Crash`] names when the process running the C died outside any call
/// into it (it did not start, did not answer, or was killed).
pub const WORKER: &str = "(the hybrid's worker)";

/// How a C function of the hybrid crashed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crash {
    /// The kernel function the model called.
    pub function: &'static str,
    /// The signal that ended it (11 SIGSEGV, 4 SIGILL from `BUG()`, ...).
    pub signal: i32,
    /// `BUG()` at this file and line, when it was one.
    pub bug: Option<(String, i32)>,
    /// Index in `Input::ops` of the system call it happened in; `None` when a file was
    /// opened, before the first (`file_ra_state_init()`, `Model::c_open_files`).
    pub op: Option<usize>,
    /// What the process that ran the C adds (the system call a filter refused, how a
    /// worker died), in a sentence.
    pub note: Option<String>,
}

impl std::fmt::Display for Crash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sig = match self.signal {
            11 => "SIGSEGV".to_string(),
            4 => "SIGILL".to_string(),
            7 => "SIGBUS".to_string(),
            8 => "SIGFPE".to_string(),
            24 => "SIGXCPU (radiff's time limit on one call into the C: a loop that does not end?)".to_string(),
            31 => "SIGSYS".to_string(),
            0 => "no signal".to_string(),
            n => format!("signal {n}"),
        };
        if self.function == WORKER {
            write!(f, "radiff's hybrid worker {}", self.note.as_deref().unwrap_or("died"))?;
            if self.signal != 0 {
                write!(f, " (ended by {sig})")?;
            }
            return Ok(());
        }
        match self.op {
            Some(op) => write!(f, "{}() crashed with {sig} in system call {op} of the scenario", self.function)?,
            None => write!(
                f,
                "{}() crashed with {sig} as a file was opened, before the scenario's first system call",
                self.function
            )?,
        }
        if let Some((file, line)) = &self.bug {
            write!(f, " (BUG() at {file}:{line})")?;
        }
        if let Some(note) = &self.note {
            write!(f, "; {note}")?;
        }
        Ok(())
    }
}
