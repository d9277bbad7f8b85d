//! The build directory's `.config`: `make tinyconfig`, the fragment merged on, `make
//! olddefconfig`, and every line of the fragment checked to have stuck.

use std::path::Path;
use std::time::Duration;

use super::Builder;
use crate::cache;
use crate::error::{Error, Result};
use crate::process::{log_tail, Cmd, Outcome};

impl Builder<'_> {
    /// Makes `build/.config` from tinyconfig + the fragment, unless it already is; then
    /// checks that every line of the fragment stuck.
    pub(super) fn configure(&self, tree: &Path, build: &Path, fragment: &str, log: &Path) -> Result<()> {
        let stamp = build.join(".radiff-config");
        let want = cache::key([fragment.as_bytes()]);
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) && build.join(".config").is_file() {
            return Ok(());
        }
        crate::progress::progress(&format!(
            "configuring {} (tinyconfig + {})",
            build.display(),
            self.kernels.config.display()
        ));
        let o = format!("O={}", build.display());
        let frag = build.join("radiff.fragment");
        std::fs::write(&frag, fragment).map_err(|e| Error::io(&frag, e))?;
        let steps = [
            Cmd::new("make").arg("-C").arg(tree).arg(&o).arg("tinyconfig"),
            Cmd::new(tree.join("scripts/kconfig/merge_config.sh"))
                .dir(tree)
                .args(["-m", "-O"])
                .arg(build)
                .arg(build.join(".config"))
                .arg(&frag),
            Cmd::new("make").arg("-C").arg(tree).arg(&o).arg("olddefconfig"),
        ]
        // The tree's Makefiles and scripts, which a patch may have changed: confined.
        .map(|step| step.confined(&[tree, build]));
        for step in steps {
            let outcome = step.run_logged(log, Duration::from_secs(600), Duration::from_secs(60), |_| {})?;
            if !matches!(outcome, Outcome::Exited(s) if s.success()) {
                return Err(Error::Build {
                    variant: "(config)".into(),
                    log: log.to_path_buf(),
                    tail: log_tail(log, 30),
                });
            }
        }
        let config = crate::files::read_text(&build.join(".config"))?;
        check_fragment(&self.kernels.config, fragment, &config)?;
        cache::write_atomic(&stamp, want.as_bytes())
    }
}

/// Every `CONFIG_X=v` and `# CONFIG_X is not set` line of the fragment must be in `.config`.
pub fn check_fragment(file: &Path, fragment: &str, config: &str) -> Result<()> {
    let have: std::collections::HashSet<&str> = config.lines().map(str::trim).collect();
    for (number, line) in fragment.lines().enumerate() {
        let line = line.trim();
        let wanted = line.starts_with("CONFIG_") || (line.starts_with("# CONFIG_") && line.ends_with(" is not set"));
        if !wanted {
            continue;
        }
        let sticks = have.contains(line)
            || (line.ends_with(" is not set") && !config.contains(&format!("{}=", &line[2..line.len() - 11])));
        if !sticks {
            return Err(Error::input(
                file,
                number + 1,
                format!("`{line}` did not stick after `make olddefconfig`: the option does not exist in this kernel or a dependency is off; fix or remove the line"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_lines_that_did_not_stick_are_named() {
        let fragment = "# comment\nCONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n";
        let ok = "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n";
        check_fragment(Path::new("f"), fragment, ok).unwrap();
        let err = check_fragment(Path::new("f"), fragment, "CONFIG_A=y\n").unwrap_err().to_string();
        assert!(err.starts_with("f:3: `CONFIG_B=y` did not stick"), "{err}");
        let err =
            check_fragment(Path::new("f"), fragment, "CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=y\n").unwrap_err().to_string();
        assert!(err.starts_with("f:4: "), "{err}");
    }
}
