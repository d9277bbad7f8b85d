//! Progress of long work (builds, images, VM runs, searches): the events the library
//! reports and the one process-wide [`Reporter`] that shows them. The ground floor: it
//! imports nothing of radiff's, and every module that reports imports it.

use std::sync::OnceLock;
use std::time::Duration;

/// What the library tells the one [`Reporter`] about long work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A line that stays in the log (`radiff: LINE`): a step begun or ended, a warning.
    Line(String),
    /// Where a long task is now, replacing its last status: on a terminal its bar's
    /// message (and the bar's position and length when `done` and `total` are known); in
    /// plain mode a line now and then ([`PLAIN_PERIOD`]).
    Status(Status),
    /// The task ended (its bar goes).
    Done { task: u64 },
}

/// The status of a long task ([`Task`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The task's id, unique in the process.
    pub task: u64,
    /// What the task is ("building base", "VM", "report 1mib_after_4k").
    pub title: String,
    /// Where it is now ("CC mm/readahead.o", "point 3 of 8: running the access pattern").
    pub message: String,
    /// How far, when counted: done so far, of `total` when the total is known.
    pub done: Option<u64>,
    pub total: Option<u64>,
    /// Whether `done` and `total` count bytes (shown as MiB) rather than items.
    pub bytes: bool,
}

impl Status {
    /// The status as one plain line (without `radiff: `): `TITLE: MESSAGE (DONE of TOTAL)`.
    pub fn line(&self) -> String {
        let n = |v: u64| if self.bytes { format!("{} MiB", v >> 20) } else { v.to_string() };
        let counts = match (self.done, self.total) {
            (Some(d), Some(t)) => format!(" ({} of {})", n(d), n(t)),
            (Some(d), None) => format!(" ({} so far)", n(d)),
            _ => String::new(),
        };
        match self.message.is_empty() {
            true => format!("{}{counts}", self.title),
            false => format!("{}: {}{counts}", self.title, self.message),
        }
    }
}

/// A long task that reports where it is ([`Event::Status`]) and ends when dropped
/// ([`Event::Done`]), on every path out of the work that owns it.
#[derive(Debug)]
pub struct Task {
    id: u64,
    title: String,
}

impl Task {
    /// A task named `title`; nothing is shown until its first status.
    pub fn start(title: impl Into<String>) -> Task {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Task { id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed), title: title.into() }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Where the task is, uncounted.
    pub fn status(&self, message: impl Into<String>) {
        event(Event::Status(self.make(message.into(), None, None, false)));
    }

    /// Where the task is and how far: `done` items of `total` (if known).
    pub fn count(&self, message: impl Into<String>, done: u64, total: Option<u64>) {
        event(Event::Status(self.make(message.into(), Some(done), total, false)));
    }

    /// Where the task is and how far: `done` bytes of `total` (if known).
    pub fn bytes(&self, message: impl Into<String>, done: u64, total: Option<u64>) {
        event(Event::Status(self.make(message.into(), Some(done), total, true)));
    }

    /// The status this task would report (for reporters' tests).
    pub fn make(&self, message: String, done: Option<u64>, total: Option<u64>, bytes: bool) -> Status {
        Status { task: self.id, title: self.title.clone(), message, done, total, bytes }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        event(Event::Done { task: self.id });
    }
}

/// Where the library's progress and command output go: the binary installs one
/// ([`set_reporter`]); without one, [`Plain`] lines go to stderr and output to stdout.
pub trait Reporter: Sync + Send {
    /// Progress of long work (builds, images, VM runs, searches).
    fn event(&self, event: &Event);
    /// A command's result text, for stdout.
    fn output(&self, text: &str);
}

static REPORTER: OnceLock<Box<dyn Reporter>> = OnceLock::new();

/// Installs the process's reporter (once; later calls are ignored).
pub fn set_reporter(reporter: Box<dyn Reporter>) {
    let _ = REPORTER.set(reporter);
}

fn reporter() -> &'static dyn Reporter {
    static DEFAULT: OnceLock<Plain> = OnceLock::new();
    match REPORTER.get() {
        Some(r) => r.as_ref(),
        None => DEFAULT.get_or_init(Plain::new),
    }
}

/// Tells the installed [`Reporter`] about long work.
pub fn event(event: Event) {
    reporter().event(&event);
}

/// A lasting line of progress ([`Event::Line`]) through the installed [`Reporter`].
pub fn progress(line: &str) {
    event(Event::Line(line.to_string()));
}

/// A command's result text, through the installed [`Reporter`] (so that it does not
/// interleave with a progress bar drawn on the same terminal).
pub fn output(text: &str) {
    reporter().output(text);
}

/// How often a plain reporter prints a long task's status, at most: CI logs stay short
/// but show that the work goes on.
pub const PLAIN_PERIOD: Duration = Duration::from_secs(20);

/// Progress when stderr is not a terminal (CI, a log file, tests): every lasting line as
/// `radiff: LINE`; a task's status only once it has run [`PLAIN_PERIOD`] since its first
/// status or its last printed one (a task shorter than that prints none); nothing when a
/// task ends.
pub struct Plain {
    lines: std::sync::Mutex<PlainLines>,
}

impl Plain {
    pub fn new() -> Plain {
        Plain { lines: std::sync::Mutex::new(PlainLines::default()) }
    }
}

impl Default for Plain {
    fn default() -> Plain {
        Plain::new()
    }
}

impl Reporter for Plain {
    fn event(&self, event: &Event) {
        let line = self.lines.lock().unwrap_or_else(|p| p.into_inner()).line(event, std::time::Instant::now());
        if let Some(line) = line {
            eprintln!("{line}");
        }
    }

    fn output(&self, text: &str) {
        use std::io::Write;
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
}

/// What [`Plain`] prints, decided with the time given (a clock of the caller's).
#[derive(Debug, Default)]
pub struct PlainLines {
    /// Each running task's last printed status, or its first status if none was printed.
    since: std::collections::HashMap<u64, std::time::Instant>,
}

impl PlainLines {
    /// The line `event` prints at `now`, if any.
    pub fn line(&mut self, event: &Event, now: std::time::Instant) -> Option<String> {
        match event {
            Event::Line(line) => Some(format!("radiff: {line}")),
            Event::Status(s) => {
                let since = self.since.entry(s.task).or_insert(now);
                if now.duration_since(*since) < PLAIN_PERIOD {
                    return None;
                }
                *since = now;
                Some(format!("radiff: {}", s.line()))
            }
            Event::Done { task } => {
                self.since.remove(task);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain mode: lasting lines always; a task's status first after PLAIN_PERIOD of it
    /// (a short task prints none), then at most once a PLAIN_PERIOD; nothing at its end.
    #[test]
    fn plain_lines_are_rate_limited_per_task() {
        let t0 = std::time::Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut plain = PlainLines::default();
        let (a, b) = (Task::start("VM"), Task::start("report s"));
        let status = |t: &Task, m: &str| Event::Status(t.make(m.into(), None, None, false));
        assert_eq!(
            plain.line(&Event::Line("built base in 564 s".into()), at(0)).as_deref(),
            Some("radiff: built base in 564 s")
        );
        assert_eq!(plain.line(&status(&a, "booting"), at(0)), None, "a task's first status waits");
        assert_eq!(plain.line(&status(&a, "point 1 of 8: mounting"), at(5)), None);
        assert_eq!(plain.line(&status(&b, "base, run 1 of 2"), at(19)), None, "another task has a clock of its own");
        assert_eq!(
            plain.line(&status(&a, "point 2 of 8: dropping caches"), at(20)).as_deref(),
            Some("radiff: VM: point 2 of 8: dropping caches")
        );
        assert_eq!(plain.line(&status(&a, "point 2 of 8: starting the trace"), at(21)), None, "printed a second ago");
        assert_eq!(plain.line(&status(&a, "point 3 of 8"), at(39)), None);
        assert_eq!(plain.line(&status(&a, "point 4 of 8"), at(40)).as_deref(), Some("radiff: VM: point 4 of 8"));
        assert_eq!(
            plain.line(&Event::Line("a warning".into()), at(40)).as_deref(),
            Some("radiff: a warning"),
            "lines are never held back"
        );
        assert_eq!(plain.line(&Event::Done { task: a.id() }, at(41)), None);
        assert_eq!(plain.line(&status(&a, "again"), at(42)), None, "a task that ended starts afresh");
        assert_eq!(
            plain.line(&status(&b, "base, run 2 of 2"), at(40)).as_deref(),
            Some("radiff: report s: base, run 2 of 2")
        );
    }

    #[test]
    fn a_status_line_shows_its_counts() {
        let t = Task::start("building base");
        assert_eq!(
            t.make("CC mm/readahead.o".into(), Some(812), None, false).line(),
            "building base: CC mm/readahead.o (812 so far)"
        );
        assert_eq!(t.make("base, run 2".into(), Some(1), Some(6), false).line(), "building base: base, run 2 (1 of 6)");
        assert_eq!(
            t.make("mkfs".into(), Some(3 << 20), Some(1 << 30), true).line(),
            "building base: mkfs (3 MiB of 1024 MiB)"
        );
        assert_eq!(t.make(String::new(), None, None, false).line(), "building base");
        assert_ne!(Task::start("x").id(), t.id(), "ids are unique");
    }
}
