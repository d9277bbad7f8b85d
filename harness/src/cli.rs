//! Shared pieces of the command line: option parsing, the lab, progress lines.

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::kernels::Kernels;
use crate::run::{guest_binary, Lab};

/// Progress of long work (builds, image preparation), one line at a time on stderr.
pub fn progress(line: &str) {
    eprintln!("radiff: {line}");
}

/// Splits `args` into positional words and the values of `--flag VALUE` options.
pub fn options<'a>(args: &[&'a str], flags: &[&str]) -> Result<(Vec<&'a str>, Vec<(String, &'a str)>)> {
    let mut words = Vec::new();
    let mut opts = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if let Some(flag) = a.strip_prefix("--") {
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n, v),
                None => {
                    i += 1;
                    (flag, *args.get(i).ok_or_else(|| Error::Other(format!("--{flag} needs a value")))?)
                }
            };
            if !flags.contains(&name) {
                return Err(Error::Other(format!("unknown option --{name}; this command takes {}", flags.iter().map(|f| format!("--{f}")).collect::<Vec<_>>().join(", "))));
            }
            opts.push((name.to_string(), value));
        } else {
            words.push(a);
        }
        i += 1;
    }
    Ok((words, opts))
}

pub fn lab() -> Result<Lab> {
    let kernels = Kernels::load(&crate::repo_root())?;
    Ok(Lab::new(Cache::from_env(), kernels, guest_binary()?, &progress))
}

