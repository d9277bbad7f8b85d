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
    let (words, opts, _) = options_and_switches(args, flags, &[])?;
    Ok((words, opts))
}

/// Positional words, `--flag VALUE` options, and the switches given.
pub type Parsed<'a> = (Vec<&'a str>, Vec<(String, &'a str)>, Vec<String>);

/// [`options`], plus `switches`: flags that take no value (`--all`), returned by name in
/// the order given.
pub fn options_and_switches<'a>(args: &[&'a str], flags: &[&str], switches: &[&str]) -> Result<Parsed<'a>> {
    let mut words = Vec::new();
    let mut opts = Vec::new();
    let mut on = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if let Some(flag) = a.strip_prefix("--") {
            let name = flag.split_once('=').map_or(flag, |(n, _)| n);
            if switches.contains(&name) {
                if name != flag {
                    return Err(Error::Other(format!("--{name} takes no value")));
                }
                on.push(name.to_string());
                i += 1;
                continue;
            }
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n, v),
                None => {
                    i += 1;
                    (flag, *args.get(i).ok_or_else(|| Error::Other(format!("--{flag} needs a value")))?)
                }
            };
            if !flags.contains(&name) {
                let all: Vec<String> = flags.iter().chain(switches).map(|f| format!("--{f}")).collect();
                return Err(Error::Other(format!("unknown option --{name}; this command takes {}", all.join(", "))));
            }
            opts.push((name.to_string(), value));
        } else {
            words.push(a);
        }
        i += 1;
    }
    Ok((words, opts, on))
}

pub fn lab() -> Result<Lab> {
    let kernels = Kernels::load(&crate::repo_root())?;
    Ok(Lab::new(Cache::from_env(), kernels, guest_binary()?, &progress))
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_take_values_and_switches_take_none() {
        let (words, opts) = options(&["s.yaml", "--variant", "base", "--variant=v1"], &["variant"]).unwrap();
        assert_eq!(words, vec!["s.yaml"]);
        assert_eq!(opts, vec![("variant".to_string(), "base"), ("variant".to_string(), "v1")]);
        // Without switches, a value-less flag is still an option missing its value.
        assert_eq!(options(&["--all"], &["variant"]).unwrap_err().to_string(), "--all needs a value");
        assert_eq!(options(&["--all", "x"], &["variant"]).unwrap_err().to_string(), "unknown option --all; this command takes --variant");
        let (words, opts, on) = options_and_switches(&["--all", "--variants", "a,b", "w"], &["variants"], &["all"]).unwrap();
        assert_eq!((words, opts, on), (vec!["w"], vec![("variants".to_string(), "a,b")], vec!["all".to_string()]));
        assert_eq!(options_and_switches(&["--all=1"], &[], &["all"]).unwrap_err().to_string(), "--all takes no value");
        assert_eq!(options_and_switches(&["--x", "1"], &["variants"], &["all"]).unwrap_err().to_string(), "unknown option --x; this command takes --variants, --all");
    }
}
