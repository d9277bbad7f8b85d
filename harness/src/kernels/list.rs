//! `radiff kernels list`: each variant, its model policy, its patches, built or not, where.

use super::Builder;
use crate::error::Result;

impl Builder<'_> {
    /// One line per variant: name, patches, whether built, where.
    pub fn list(&self) -> Result<String> {
        let base = self.base_id()?;
        let mut out = format!("base source: {}\nconfig: {}\n", base.describe, self.kernels.config.display());
        for variant in &self.kernels.variants {
            let dir = self.kernel_dir_for(&base, variant)?;
            let image = dir.join("bzImage");
            let partial = crate::cache::partial_path(&dir);
            let state = if image.is_file() {
                format!("built      {}", image.display())
            } else if partial.is_dir() {
                format!(
                    "not built  {} (a build stopped or failed: {})",
                    image.display(),
                    partial.join("build.log").display()
                )
            } else {
                format!("not built  {}", image.display())
            };
            out.push_str(&format!("\n{:<24} {state}\n", variant.name));
            out.push_str(&format!("    model: {}\n", variant.model.describe()));
            if variant.patches.is_empty() {
                out.push_str("    (no patches)\n");
            }
            for patch in &variant.patches {
                out.push_str(&format!("    {}\n", patch.strip_prefix(&self.kernels.dir).unwrap_or(patch).display()));
            }
        }
        Ok(out)
    }
}
