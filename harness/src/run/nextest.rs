//! What a trial process that cargo-nextest started can know of its test run: the run's id,
//! its threads, and which trials of the binary the run selects (the same in every process).
//!
//! nextest runs each trial in a process of its own (`BINARY --exact NAME`) and tells it the
//! run's id and threads (`NEXTEST_RUN_ID`, `NEXTEST_TEST_THREADS`), never its filters or its
//! partition. Those are on the command line of the process that started it, cargo-nextest
//! (`/proc/PPID/cmdline`). nextest filters first, then cuts the sorted names of each binary
//! round-robin (`count:M/N`: the i-th name, counting from 0, goes to partition i mod N + 1).
//! What is not understood here (a filterset, a hash partition, libtest arguments after `--`)
//! leaves the selection unknown, and the caller runs each trial on its own.

/// A test run of cargo-nextest, as one of its trial processes sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextestRun {
    /// `NEXTEST_RUN_ID`: one for every process of one `cargo nextest run`.
    pub id: String,
    /// `NEXTEST_TEST_THREADS`: how many trials run at once.
    pub threads: Option<usize>,
    pub selection: Selection,
}

/// Which of the binary's trials the run selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Names that contain one of `filters` (all, if none), cut by `partition`.
    Known { filters: Vec<String>, partition: Option<(u64, u64)> },
    /// Why the selection is not known here.
    Unknown(String),
}

impl NextestRun {
    /// The run this process belongs to, if nextest started it as one process per trial.
    pub fn from_env() -> Option<NextestRun> {
        let s = crate::settings::get();
        let id = s.nextest_run_id.clone().filter(|id| !id.is_empty())?;
        if s.nextest_execution_mode.as_deref() != Some("process-per-test") {
            return None;
        }
        let threads = s.nextest_test_threads.as_deref().and_then(|t| t.parse().ok()).filter(|t| *t > 0);
        let parent = std::os::unix::process::parent_id();
        let selection = match std::fs::read(format!("/proc/{parent}/cmdline")) {
            Ok(raw) => {
                let args: Vec<String> = raw
                    .split(|b| *b == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                selection_of(&args)
            }
            Err(e) => Selection::Unknown(format!("cannot read nextest's command line (/proc/{parent}/cmdline: {e})")),
        };
        Some(NextestRun { id, threads, selection })
    }
}

/// Options of `cargo nextest run` that take a value as the next argument (nextest 0.9).
const VALUE_OPTIONS: &[&str] = &[
    "--color",
    "-p",
    "--package",
    "--exclude",
    "--bin",
    "--example",
    "--test",
    "--bench",
    "-F",
    "--features",
    "--build-jobs",
    "--cargo-profile",
    "--target",
    "--target-dir",
    "--manifest-path",
    "--cargo-message-format",
    "--config",
    "--run-ignored",
    "--partition",
    "--platform-filter",
    "-E",
    "--filterset",
    "--filter-expr",
    "-j",
    "--test-threads",
    "--retries",
    "--flaky-result",
    "--max-fail",
    "--debugger",
    "--tracer",
    "--no-tests",
    "--stress-count",
    "--stress-duration",
    "--failure-output",
    "--success-output",
    "--status-level",
    "--final-status-level",
    "--show-progress",
    "--max-progress-running",
    "--message-format",
    "--message-format-version",
    "--archive-file",
    "--archive-format",
    "--extract-to",
    "--cargo-metadata",
    "--workspace-remap",
    "--binaries-metadata",
    "--target-dir-remap",
    "--build-dir-remap",
    "--config-file",
    "--user-config-file",
    "--tool-config-file",
    "-P",
    "--profile",
];

/// The selection cargo-nextest's command line `args` (its argv) makes: its name filters and
/// its partition. Pure.
pub fn selection_of(args: &[String]) -> Selection {
    let Some(run) = args.iter().position(|a| a == "run" || a == "r") else {
        return Selection::Unknown(format!("not a `cargo nextest run`: {}", args.join(" ")));
    };
    let mut filters = Vec::new();
    let mut partition = None;
    let mut rest = args[run + 1..].iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let value = if VALUE_OPTIONS.contains(&name) && inline.is_none() { rest.next().cloned() } else { inline };
        match name {
            "--" => return Selection::Unknown("arguments after `--` (libtest's) are not read here".into()),
            _ if name.starts_with("-E") || name == "--filterset" || name == "--filter-expr" => {
                return Selection::Unknown("a filterset (-E) is not evaluated here".into())
            }
            "-R" | "--rerun" => return Selection::Unknown("a rerun's selection is not known here".into()),
            "--run-ignored" if !matches!(value.as_deref(), Some("default" | "all")) => {
                return Selection::Unknown("--run-ignored only".into())
            }
            "--partition" => match value.as_deref().map(parse_partition) {
                Some(Ok(p)) => partition = Some(p),
                Some(Err(why)) => return Selection::Unknown(why),
                None => return Selection::Unknown("--partition without a value".into()),
            },
            _ if !name.starts_with('-') => filters.push(arg.clone()),
            _ => {}
        }
    }
    Selection::Known { filters, partition }
}

/// `count:M/N` as (M, N); any other kind is unknown here.
fn parse_partition(text: &str) -> Result<(u64, u64), String> {
    let Some(count) = text.strip_prefix("count:") else {
        return Err(format!("partition `{text}`: only count:M/N partitions are computed here"));
    };
    let parsed = count.split_once('/').and_then(|(m, n)| Some((m.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    match parsed {
        Some((m, n)) if (1..=n).contains(&m) => Ok((m, n)),
        _ => Err(format!("partition `{text}` is not count:M/N with 1 <= M <= N")),
    }
}

impl Selection {
    /// Whether each of `names` (the binary's trials, in any order) is selected; `None` if
    /// the selection is unknown. As nextest: filter first, then cut the sorted rest.
    pub fn select(&self, names: &[&str]) -> Option<Vec<bool>> {
        let Selection::Known { filters, partition } = self else { return None };
        let mut passed: Vec<usize> = (0..names.len())
            .filter(|i| filters.is_empty() || filters.iter().any(|f| names[*i].contains(f.as_str())))
            .collect();
        passed.sort_by(|a, b| names[*a].cmp(names[*b]));
        let mut chosen = vec![false; names.len()];
        for (k, i) in passed.into_iter().enumerate() {
            chosen[i] = partition.is_none_or(|(m, n)| k as u64 % n == m - 1);
        }
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    #[test]
    fn the_partition_and_name_filters_come_from_the_command_line() {
        let known = |filters: &[&str], partition| Selection::Known {
            filters: filters.iter().map(|f| f.to_string()).collect(),
            partition,
        };
        assert_eq!(
            selection_of(&args("/usr/bin/cargo-nextest nextest run --release --test scenarios --partition count:1/3")),
            known(&[], Some((1, 3)))
        );
        assert_eq!(
            selection_of(&args("cargo-nextest nextest run --partition=count:2/3 -j 2 scenario_random")),
            known(&["scenario_random"], Some((2, 3)))
        );
        assert_eq!(
            selection_of(&args("cargo-nextest nextest run --test scenarios -P ci --no-fail-fast a b")),
            known(&["a", "b"], None)
        );
        for unknown in [
            "cargo-nextest nextest run -E test(/^scenario_random/)",
            "cargo-nextest nextest run -Etest(/^scenario_random/)",
            "cargo-nextest nextest run --filterset=test(/^scenario_random/)",
            "cargo-nextest nextest run --partition hash:1/2",
            "cargo-nextest nextest run --partition count:4/3",
            "cargo-nextest nextest run -- --exact a",
            "cargo-nextest nextest list",
        ] {
            assert!(matches!(selection_of(&args(unknown)), Selection::Unknown(_)), "{unknown}");
        }
    }

    #[test]
    fn a_count_partition_takes_every_nth_name_of_the_sorted_filtered_list() {
        // As nextest 0.9.143 ran ten tests t00..t09: count:2/3 ran t01, t04, t07; with the
        // filter set t02..t09, count:1/3 ran t02, t05, t08.
        let names: Vec<String> = (0..10).rev().map(|i| format!("t{i:02}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let chosen = |s: Selection| -> Vec<&str> {
            let mut c: Vec<&str> =
                names.iter().zip(s.select(&names).unwrap()).filter(|(_, c)| *c).map(|(n, _)| *n).collect();
            c.sort();
            c
        };
        assert_eq!(chosen(Selection::Known { filters: vec![], partition: Some((2, 3)) }), ["t01", "t04", "t07"]);
        let filters = ["t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09"].map(String::from).to_vec();
        assert_eq!(chosen(Selection::Known { filters, partition: Some((1, 3)) }), ["t02", "t05", "t08"]);
        assert_eq!(chosen(Selection::Known { filters: vec![], partition: None }).len(), 10);
        // The three partitions cover every name once.
        let mut all: Vec<&str> =
            (1..=3).flat_map(|m| chosen(Selection::Known { filters: vec![], partition: Some((m, 3)) })).collect();
        all.sort();
        assert_eq!(all.len(), 10);
        all.dedup();
        assert_eq!(all.len(), 10);
        assert_eq!(Selection::Unknown("x".into()).select(&names), None);
    }
}
