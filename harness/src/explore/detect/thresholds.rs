//! The detectors' thresholds: declared in the detectors' table (each row names its own),
//! set from `radiff explore --threshold NAME=VALUE`, read by name.

use std::collections::BTreeMap;

/// One threshold a detector (or the stream finder all share) is tuned by: its
/// `--threshold` name, its default, and what it means.
#[derive(Clone, Copy, Debug)]
pub struct Threshold {
    pub name: &'static str,
    pub default: f64,
    /// Whether only whole numbers make sense (counts, pages, bytes).
    pub whole: bool,
    pub help: &'static str,
}

impl Threshold {
    /// A threshold that takes any number (a ratio, a share).
    pub const fn ratio(name: &'static str, default: f64, help: &'static str) -> Self {
        Threshold { name, default, whole: false, help }
    }

    /// A threshold that takes a whole number (a count, pages, bytes).
    pub const fn whole(name: &'static str, default: u64, help: &'static str) -> Self {
        Threshold { name, default: default as f64, whole: true, help }
    }
}

/// The value of every threshold the table declares (see [`super::DETECTORS`] and
/// [`super::STREAM_THRESHOLDS`]). A name the table does not declare is refused by
/// [`Thresholds::set`] and is a bug in [`Thresholds::get`] (it panics, naming it).
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    values: BTreeMap<&'static str, f64>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { values: all().map(|t| (t.name, t.default)).collect() }
    }
}

/// Every threshold of the table: the streams' first, then each detector's in table order.
pub fn all() -> impl Iterator<Item = &'static Threshold> {
    super::STREAM_THRESHOLDS.iter().chain(super::DETECTORS.iter().flat_map(|row| row.thresholds.iter()))
}

impl Thresholds {
    /// Sets one threshold by its name: `trim_ratio=0.4`.
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) = assignment.split_once('=').ok_or_else(|| format!("`{assignment}`: write NAME=VALUE"))?;
        let (name, value) = (name.trim(), value.trim());
        let t = all()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("unknown threshold `{name}` (one of: {})", names().join(", ")))?;
        let v = if t.whole {
            value.parse::<u64>().map_err(|_| format!("{name}: `{value}` is not a whole number"))? as f64
        } else {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("{name}: `{value}` is not a number"))?
        };
        self.values.insert(t.name, v);
        Ok(())
    }

    /// `self` with `name` set to `value` (for tests and callers that know the name).
    pub fn with(mut self, name: &str, value: f64) -> Self {
        let t =
            all().find(|t| t.name == name).unwrap_or_else(|| panic!("no threshold `{name}` in the detectors' table"));
        self.values.insert(t.name, value);
        self
    }

    /// The value of `name`, a threshold the table declares.
    pub fn get(&self, name: &str) -> f64 {
        *self.values.get(name).unwrap_or_else(|| panic!("no threshold `{name}` in the detectors' table"))
    }

    /// [`Thresholds::get`] of a whole-number threshold.
    pub fn count(&self, name: &str) -> u64 {
        self.get(name) as u64
    }
}

/// The names of every threshold, in table order.
pub fn names() -> Vec<&'static str> {
    all().map(|t| t.name).collect()
}

/// The `--threshold` help: one line per threshold, grouped under its detector.
pub fn help() -> String {
    let mut s =
        String::from("Set a detector's threshold (repeatable). The thresholds, by detector, with their defaults:\n");
    let mut line =
        |group: &str, t: &Threshold| s.push_str(&format!("\n  {group}: {}={} - {}", t.name, t.default, t.help));
    for t in super::STREAM_THRESHOLDS {
        line("streams", t);
    }
    for row in super::DETECTORS {
        for t in row.thresholds {
            line(row.name, t);
        }
    }
    s
}
