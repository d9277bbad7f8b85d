//! Reports for a patch's changelog: figures per variant, the change against the first,
//! an SVG of the windows, and a regression view over every scenario.

use std::process::ExitCode;

use crate::error::{Error, Result};

/// `radiff report ...` (see the usage text in the `radiff` binary).
pub fn main(_args: &[&str]) -> Result<ExitCode> {
    Err(Error::Other("radiff report is not written yet".into()))
}
