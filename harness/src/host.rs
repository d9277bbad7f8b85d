//! What `./setup` installs, checked before any build or boot: on a host without QEMU,
//! virtme-ng or the kernel source, every command and trial that needs them fails at once
//! with one message naming each missing part, not after a ten-minute build.

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::kernels::{Base, Kernels, ENV_TREE};
use crate::process::find_in_path;

/// The QEMU that runs the guests.
pub const QEMU: &str = "qemu-system-x86_64";

/// Checks that QEMU, virtme-ng and the base's source are there; the error names each part
/// that is not, where radiff looked, and that `./setup` installs it.
pub fn preflight(cache: &Cache, kernels: &Kernels) -> Result<()> {
    let mut missing = Vec::new();
    if find_in_path(QEMU).is_none() {
        missing.push(("QEMU".to_string(), format!("`{QEMU}` is not on PATH")));
    }
    let vng = cache.vng();
    if vng.components().count() == 1 && find_in_path("vng").is_none() {
        missing.push((
            "virtme-ng".to_string(),
            format!("neither {} nor `vng` on PATH", cache.root.join("venv/bin/vng").display()),
        ));
    }
    match &kernels.base {
        Base::Debian { package } => {
            let tarball = cache.root.join("source").join(format!("{package}.tar.xz"));
            if !tarball.is_file() {
                missing.push((
                    "the kernel source".to_string(),
                    format!(
                        "{} (Debian's {package}) does not exist; or set {ENV_TREE}=/path/to/linux",
                        tarball.display()
                    ),
                ));
            }
        }
        Base::Git { tree, .. } | Base::InPlace { tree } => {
            if !tree.join(".git").exists() {
                missing.push((
                    "the kernel source".to_string(),
                    format!("{} is not a git tree (named by kernels/kernels.yaml or {ENV_TREE})", tree.display()),
                ));
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::MissingSetup { missing })
    }
}
