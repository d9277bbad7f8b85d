//! The ported kernel's own text (Linux 7.3.4), read from the Debian source `./setup` keeps in
//! the cache: the "before" side of `port-check`'s diffs. The repository keeps no kernel text.

use std::cell::OnceCell;

use super::{kernel_version, Files, Ledger};
use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::kernels::{Base, Builder, Kernels};

/// Debian's source package that holds Linux `kernel` (`7.3.4` -> `linux-source-7.3`).
pub fn debian_package(kernel: &str) -> String {
    let series: Vec<&str> = kernel.split('.').take(2).collect();
    format!("linux-source-{}", series.join("."))
}

/// The files of the kernel the ledger ports, from Debian's `linux-source-X.Y` in the cache:
/// unpacked and recorded there once, by the code that does so for a Debian base, and read
/// at its base commit. Opened on the first read, so a base that matches the port needs no
/// source; when the cache has none, every read is an error that says how to fetch it.
pub struct PortedSource<'a> {
    kernel: String,
    kernels: Kernels,
    cache: &'a Cache,
    opened: OnceCell<std::result::Result<Box<dyn Files>, String>>,
}

impl<'a> PortedSource<'a> {
    /// The source of `ledger`'s kernel; `kernels` is the configuration in force (its base is
    /// replaced by the Debian package, the rest is kept for the builder).
    pub fn new(ledger: &Ledger, kernels: &Kernels, cache: &'a Cache) -> PortedSource<'a> {
        let mut kernels = kernels.clone();
        kernels.base = Base::Debian { package: debian_package(&ledger.kernel) };
        PortedSource { kernel: ledger.kernel.clone(), kernels, cache, opened: OnceCell::new() }
    }

    /// The unpacked tree, or why there is none (with the fix).
    fn open(&self) -> std::result::Result<&dyn Files, Error> {
        let opened = self.opened.get_or_init(|| self.try_open().map_err(|e| e.to_string()));
        match opened {
            Ok(files) => Ok(files.as_ref()),
            Err(e) => Err(Error::Other(e.clone())),
        }
    }

    fn try_open(&self) -> Result<Box<dyn Files>> {
        let Base::Debian { package } = &self.kernels.base else { unreachable!("set by PortedSource::new") };
        let builder = Builder::new(&self.kernels, self.cache);
        let tarball = builder.tarball_path(package);
        if !tarball.is_file() {
            return Err(Error::Other(format!(
                "Linux {}'s own text, the diffs' before side, is read from {}, which is missing\n\
                 fix: run ./setup (it fetches Debian's {package}; if kernels/kernels.yaml names another \
                 package, run RADIFF_SOURCE_PACKAGE={package} ./setup)",
                self.kernel,
                tarball.display()
            )));
        }
        let files = super::base_files(&builder)?;
        let version = kernel_version(files.as_ref())?;
        if version != self.kernel {
            return Err(Error::Other(format!(
                "Linux {}'s own text, the diffs' before side, is read from {}, which holds Linux {version}\n\
                 fix: fetch Linux {} (Debian's {package}) into the cache with ./setup",
                self.kernel,
                tarball.display(),
                self.kernel
            )));
        }
        Ok(files)
    }
}

impl Files for PortedSource<'_> {
    fn read(&self, path: &str) -> Result<Option<String>> {
        self.open()?.read(path)
    }

    fn describe(&self) -> String {
        format!("Linux {} ({} in the cache)", self.kernel, debian_package(&self.kernel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debian_package_of_a_kernel_is_its_series() {
        assert_eq!(debian_package("7.3.4"), "linux-source-7.3");
        assert_eq!(debian_package("6.12.10"), "linux-source-6.12");
    }
}
