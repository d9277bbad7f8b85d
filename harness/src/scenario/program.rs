//! The checks of `program:` and `fio:` steps: a command line with the scenario's files
//! substituted, a fio job file read and pointed at the scenario's file.

use std::path::{Path, PathBuf};

use crate::wire::{guest_path, Program};

/// How a `threads:` step's program label starts (`threads: 4 streams of 128 KiB reads, ...`):
/// what tells it from a `program:` step once it is a [`Program`].
pub const THREADS: &str = "threads:";

/// The keys of a fio job that choose its files: radiff sets `filename` itself.
const FIO_FILE_KEYS: [&str; 4] = ["filename", "directory", "filename_format", "opendir"];

/// `{file}` and `{file:NAME}` in `arg` replaced by the guest's path of that file.
/// `names` are the scenario's file names (`files:`), empty for a scenario with one `file:`.
pub(super) fn substitute(arg: &str, names: &[String]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(at) = rest.find("{file") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find('}').ok_or_else(|| format!("`{arg}`: `{{file` without its closing `}}`"))?;
        let inner = &tail[1..end];
        let f = match inner.strip_prefix("file") {
            Some("") => pick_only(names)?,
            Some(named) => match named.strip_prefix(':') {
                Some(name) => pick_named(name, names)?,
                None => {
                    // `{filename}` and the like are not ours: leave them.
                    out.push_str(&tail[..=end]);
                    rest = &tail[end + 1..];
                    continue;
                }
            },
            None => unreachable!("tail starts with {{file"),
        };
        out.push_str(&guest_path(f));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn pick_only(names: &[String]) -> Result<usize, String> {
    if names.len() > 1 {
        return Err(format!(
            "`{{file}}`: this scenario has {} files; say which: `{{file:NAME}}`, NAME one of {}",
            names.len(),
            names.join(", ")
        ));
    }
    Ok(0)
}

fn pick_named(name: &str, names: &[String]) -> Result<usize, String> {
    if names.is_empty() {
        return Err(format!(
            "`{{file:{name}}}`: this scenario has one file (`file:`); write `{{file}}`, or name files with `files:`"
        ));
    }
    names
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| format!("`{{file:{name}}}`: unknown file; the scenario's files: {}", names.join(", ")))
}

/// A `program:` step: `argv` with its files substituted.
pub(super) fn program(argv: &[String], names: &[String]) -> Result<Program, String> {
    let Some(first) = argv.first() else {
        return Err("program: `argv` is empty: give the program and its arguments, e.g. `argv: [dd, if={file}, of=/dev/null, bs=512k]`".into());
    };
    if first.is_empty() || first.contains('{') {
        return Err(format!("program: `argv[0]` `{first}` must name the program (a name on PATH or an absolute path)"));
    }
    let argv = argv.iter().map(|a| substitute(a, names)).collect::<Result<Vec<_>, _>>()?;
    // One line for messages, whatever the arguments hold (a script given with `-c`).
    let mut label = format!("program: {}", argv.join(" ").replace('\n', "; "));
    if label.chars().count() > 100 {
        label = label.chars().take(100).collect::<String>() + "...";
    }
    Ok(Program { argv, job: None, label, at: String::new() })
}

/// A `threads:` step (`step`, checked as `interleaved:`'s streams; `sizes`: the files'
/// bytes) as a program: a Python script that opens the streams' descriptors (one per
/// descriptor the step names: shared, or each stream its own), starts a thread per stream,
/// lets them go together, and each reads its stream with `pread` from its start to the next
/// stream's of the same file (or `to`, or the file's end). Run as a program, its calls are
/// traced and its readahead decisions checked one by one (docs/concurrency.md).
pub(super) fn threads(step: &radiff_model::Step, sizes: &[u64]) -> Result<Program, String> {
    use radiff_model::{pattern::file_of, Step};
    let Step::Interleaved { fds, size, starts, to } = step else {
        return Err("threads: not a set of streams".into());
    };
    let size_of = |fd: u32| sizes.get(file_of(fd) as usize).copied().unwrap_or(0);
    let ends = radiff_model::pattern::stream_ends(fds, starts, *to, size_of);
    let streams: Vec<String> = (0..fds.len())
        .map(|i| format!("({}, {:?}, {}, {})", fds[i], guest_path(file_of(fds[i]) as usize), starts[i], ends[i]))
        .collect();
    let script = format!(
        "import os, threading\n\
         streams = [{}]\n\
         fds = {{}}\n\
         for fd, path, _, _ in streams:\n    fds.setdefault(fd, os.open(path, os.O_RDONLY))\n\
         together = threading.Barrier(len(streams))\n\
         def read(fd, path, start, end):\n    together.wait()\n    for off in range(start, end, {size}):\n        os.pread(fds[fd], min({size}, end - off), off)\n\
         threads = [threading.Thread(target=read, args=s) for s in streams]\n\
         for t in threads:\n    t.start()\n\
         for t in threads:\n    t.join()\n",
        streams.join(", ")
    );
    let shared = if fds.windows(2).any(|w| w[0] == w[1]) { "shared descriptors" } else { "a descriptor each" };
    let label = format!("{THREADS} {} streams of {} reads, {shared}", fds.len(), super::size::Size(*size));
    Ok(Program { argv: vec!["python3".into(), "-c".into(), script], job: None, label, at: String::new() })
}

/// Where a `fio:` step's `job` is: relative to the repository, the folder above `scenarios/`
/// (a scenario at `ROOT/scenarios/x.yaml` names `scenarios/jobs/x.fio`).
pub(super) fn job_path(scenario: &Path, job: &str) -> PathBuf {
    let job = Path::new(job);
    if job.is_absolute() {
        return job.to_path_buf();
    }
    let root = scenario.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    root.join(job)
}

/// A `fio:` step as written: its job file read (see [`job_path`]) and made a program by [`fio`].
pub(super) fn fio_step(scenario: &Path, job: &str, file: Option<&str>, names: &[String]) -> Result<Program, String> {
    let path = job_path(scenario, job);
    let text = crate::files::read_text(&path).map_err(|e| {
        format!("job `{job}`: cannot read {e} (a path from the repository's root, e.g. scenarios/jobs/NAME.fio)")
    })?;
    fio(&path, &text, file, names)
}

/// A `fio:` step: the job file `text` (read from `path`) with `filename` set to file `file`
/// of the scenario; `read_iolog` made absolute (beside the job file) and redirected to the
/// same file. fio runs it with `--output` in the run's folder.
pub(super) fn fio(path: &Path, text: &str, file: Option<&str>, names: &[String]) -> Result<Program, String> {
    let f = match file {
        None => pick_only(names)?,
        Some(name) => pick_named(name, names)?,
    };
    let target = guest_path(f);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut body = String::new();
    let mut iolog = false;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        let key = trimmed.split(['=', ' ']).next().unwrap_or("").trim();
        if FIO_FILE_KEYS.contains(&key) {
            return Err(format!(
                "{}:{}: `{key}`: radiff points the job at the scenario's file itself; remove the line",
                path.display(),
                n + 1
            ));
        }
        if key == "read_iolog" {
            let value = trimmed.split_once('=').map(|(_, v)| v.trim()).unwrap_or("");
            let log = if Path::new(value).is_absolute() { PathBuf::from(value) } else { dir.join(value) };
            if !log.is_file() {
                return Err(format!("{}:{}: read_iolog `{value}`: no file {}", path.display(), n + 1, log.display()));
            }
            let log = log.canonicalize().map_err(|e| format!("{}: {e}", log.display()))?;
            body.push_str(&format!("read_iolog={}\n", log.display()));
            iolog = true;
            continue;
        }
        body.push_str(line);
        body.push('\n');
    }
    let mut job = format!("; {} with radiff's file\n[global]\nfilename={target}\n", path.display());
    if iolog {
        job.push_str(&format!("replay_redirect={target}\n"));
    }
    job.push_str(&body);
    let argv = vec!["fio".to_string(), "--output-format=terse".to_string(), "{job}".to_string()];
    Ok(Program { argv, job: Some(job), label: format!("fio: {}", path.display()), at: String::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn file_becomes_the_guest_path_inside_an_argument() {
        assert_eq!(substitute("--filename={file}", &[]).unwrap(), "--filename=/tmp/radiff-mnt/data");
        assert_eq!(substitute("if={file}", &names(&["a"])).unwrap(), "if=/tmp/radiff-mnt/data");
        assert_eq!(substitute("{file:b}", &names(&["a", "b"])).unwrap(), "/tmp/radiff-mnt/data1");
        assert_eq!(substitute("awk {print}", &[]).unwrap(), "awk {print}", "other braces stay");
        assert_eq!(substitute("{filename}", &[]).unwrap(), "{filename}");
    }

    #[test]
    fn an_unknown_or_ambiguous_file_says_which_files_there_are() {
        let e = substitute("{file:c}", &names(&["a", "b"])).unwrap_err();
        assert!(e.contains("unknown file") && e.contains("a, b"), "{e}");
        let e = substitute("{file}", &names(&["a", "b"])).unwrap_err();
        assert!(e.contains("{file:NAME}"), "{e}");
        let e = substitute("{file:a}", &[]).unwrap_err();
        assert!(e.contains("one file"), "{e}");
        assert!(substitute("{file", &[]).unwrap_err().contains("closing"));
    }

    #[test]
    fn an_empty_argv_is_refused_with_an_example() {
        assert!(program(&[], &[]).unwrap_err().contains("argv: [dd"));
        assert!(program(&names(&["{file}"]), &[]).unwrap_err().contains("must name the program"));
        let p = program(&names(&["dd", "if={file}", "bs=512k"]), &[]).unwrap();
        assert_eq!(p.argv, ["dd", "if=/tmp/radiff-mnt/data", "bs=512k"]);
        assert_eq!(p.job, None);
    }

    #[test]
    fn a_fio_job_gets_the_scenarios_file_and_may_not_name_its_own() {
        let path = Path::new("/r/scenarios/jobs/x.fio");
        let p = fio(path, "[r]\nrw=randread\nbs=4k\n", None, &[]).unwrap();
        let job = p.job.unwrap();
        assert!(job.contains("[global]\nfilename=/tmp/radiff-mnt/data\n[r]\nrw=randread\n"), "{job}");
        assert_eq!(p.argv.last().unwrap(), "{job}");
        let e = fio(path, "[r]\nfilename=/dev/sda\n", None, &[]).unwrap_err();
        assert!(e.contains("x.fio:2") && e.contains("remove the line"), "{e}");
        let e = fio(path, "[r]\nread_iolog=nope.log\n", None, &[]).unwrap_err();
        assert!(e.contains("no file /r/scenarios/jobs/nope.log"), "{e}");
    }

    #[test]
    fn a_job_path_is_relative_to_the_folder_above_scenarios() {
        assert_eq!(
            job_path(Path::new("/r/scenarios/a.yaml"), "scenarios/jobs/x.fio"),
            Path::new("/r/scenarios/jobs/x.fio")
        );
        assert_eq!(job_path(Path::new("/r/scenarios/a.yaml"), "/abs/x.fio"), Path::new("/abs/x.fio"));
    }

    #[test]
    fn a_threads_step_is_a_program_of_one_thread_per_stream_on_the_descriptors_it_names() {
        let parse = |step: &str| {
            crate::scenario::Scenario::parse(Path::new("/r/scenarios/t.yaml"), &format!("{SCENARIO}  - {step}\n"))
        };
        let s = parse("threads: {streams: 4, size: 128 KiB}").unwrap();
        assert_eq!(s.steps[1], radiff_model::Step::Program { program: 0 });
        let p = &s.programs[0];
        assert_eq!(p.label, "threads: 4 streams of 128 KiB reads, shared descriptors");
        assert_eq!(p.at, "/r/scenarios/t.yaml:7");
        let script = &p.argv[2];
        // Each stream its quarter of the 64 MiB file, on the one descriptor.
        for (k, (start, end)) in
            [(0, 16u64 << 20), (16 << 20, 32 << 20), (32 << 20, 48 << 20), (48 << 20, 64 << 20)].iter().enumerate()
        {
            assert!(script.contains(&format!("(0, \"/tmp/radiff-mnt/data\", {start}, {end})")), "stream {k}: {script}");
        }
        assert!(script.contains("os.pread(fds[fd], min(131072, end - off), off)"), "{script}");
        let own =
            parse("threads: {streams: 2, size: 64 KiB, starts: [0, 1 MiB], to: 2 MiB, separate_fds: true}").unwrap();
        let script = &own.programs[0].argv[2];
        assert!(script.contains("streams = [(0, \"/tmp/radiff-mnt/data\", 0, 1048576), (1, \"/tmp/radiff-mnt/data\", 1048576, 2097152)]"), "{script}");
        assert!(own.programs[0].label.ends_with("a descriptor each"));
        // The real interpreter reads the script (compile only: nothing is run).
        let checked = std::process::Command::new("python3")
            .args(["-c", "import sys; compile(sys.argv[1], 'threads', 'exec')", script])
            .status()
            .expect("python3 runs (the guest runs the script with it)");
        assert!(checked.success(), "{script}");
        // The streams' checks are interleaved:'s, named as this step.
        let e = parse("threads: {streams: 1, size: 4 KiB}").unwrap_err().to_string();
        assert!(e.contains("threads: need streams >= 2") && e.contains("t.yaml"), "{e}");
    }

    const SCENARIO: &str = "description: t\ndevice: {kind: nvme, size: 1 GiB}\nfilesystem: xfs\nfile: {size: 64 MiB}\nreads:\n  - read: {offset: 0, size: 4 KiB}\n";

    #[test]
    fn program_and_fio_steps_parse_into_program_ops_in_order() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("scenarios/jobs")).unwrap();
        std::fs::write(root.path().join("scenarios/jobs/r.fio"), "[r]\nrw=read\nbs=1m\n").unwrap();
        let path = root.path().join("scenarios/t.yaml");
        let text = format!(
            "{SCENARIO}  - program: {{argv: [dd, 'if={{file}}', of=/dev/null, bs=512k]}}\n  - fio: {{job: scenarios/jobs/r.fio}}\n"
        );
        let s = crate::scenario::Scenario::parse(&path, &text).unwrap();
        assert_eq!(s.steps[1], radiff_model::Step::Program { program: 0 });
        assert_eq!(s.steps[2], radiff_model::Step::Program { program: 1 });
        assert_eq!(s.programs[0].argv, ["dd", "if=/tmp/radiff-mnt/data", "of=/dev/null", "bs=512k"]);
        assert!(s.programs[1].job.as_deref().unwrap().contains("filename=/tmp/radiff-mnt/data\n[r]\n"));
        let ops = radiff_model::pattern::expand(&s.steps, s.file_size);
        assert_eq!(ops[1..], [radiff_model::Op::Program { program: 0 }, radiff_model::Op::Program { program: 1 }]);
    }

    #[test]
    fn a_bad_program_step_names_file_line_and_fix() {
        let path = Path::new("/nowhere/scenarios/t.yaml");
        let bad = |step: &str| {
            crate::scenario::Scenario::parse(path, &format!("{SCENARIO}  - {step}\n")).unwrap_err().to_string()
        };
        let e = bad("program: {argv: []}");
        assert!(e.starts_with("/nowhere/scenarios/t.yaml:7: reads[1]: program: `argv` is empty"), "{e}");
        let e = bad("program: {argv: [cat, '{file:b}']}");
        assert!(e.contains(":7: reads[1]: `{file:b}`: this scenario has one file"), "{e}");
        let e = bad("fio: {job: scenarios/jobs/none.fio}");
        assert!(
            e.contains(
                ":7: reads[1]: fio: job `scenarios/jobs/none.fio`: cannot read /nowhere/scenarios/jobs/none.fio"
            ),
            "{e}"
        );
        let e = bad("program: {args: [cat]}");
        assert!(e.contains("t.yaml:7") && e.contains("args"), "{e}");
    }
}
