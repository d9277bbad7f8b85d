//! The review's last phase: where base and patch part in kernel lines and which of the
//! patch's hunks holds them, then the folder (reply.txt, reply.md, scenarios/, headline.svg).

use std::path::Path;

use super::evidence::Origin;
use super::reply::{self, Placed, Review};
use crate::cache::Cache;
use crate::error::Result;
use crate::kernels::{Builder, Kernels};
use crate::port::lines::function_of;

/// Fills `review.hunks` and, for each changed case, where base and patch part: the
/// model's parting decisions in the base's lines and the hunks that hold them (else the
/// hunks of the functions those decisions are in); for a case only the kernels ran, the
/// window where their traces part and every hunk of the patch.
pub fn place(review: &mut Review, root: &Path, kernels: &Kernels, cache: &Cache) -> Result<()> {
    let hunks = crate::port::hunks::variant_hunks(root, kernels, cache, &review.variant)?;
    review.hunks = hunks.iter().map(|h| h.text.trim_end().to_string()).collect();
    let base = crate::port::base_files(&Builder::new(kernels, cache))?;
    let mut placer = crate::explain::Placer::new(root, base.as_ref())?;
    let mut placed = Vec::new();
    for c in &review.cases {
        if !c.changed() {
            placed.push(None);
            continue;
        }
        placed.push(match (&c.parting, &c.runs) {
            (Some((window, ids)), _) => {
                let at: Vec<_> = ids.iter().filter_map(|id| placer.place(id)).collect();
                let mut held: Vec<usize> =
                    hunks.iter().enumerate().filter(|(_, h)| at.iter().any(|a| h.holds(a))).map(|(i, _)| i).collect();
                if held.is_empty() {
                    let functions: Vec<&str> = ids.iter().map(|id| function_of(id)).collect();
                    held = hunks
                        .iter()
                        .enumerate()
                        .filter(|(_, h)| h.functions.iter().any(|f| functions.contains(&f.as_str())))
                        .map(|(i, _)| i)
                        .collect();
                }
                Some(Placed {
                    window: *window,
                    lines: ids.iter().map(|id| placer.line(id)).collect(),
                    hunks: held,
                    from_kernels: false,
                })
            }
            (None, Some(r)) => Some(Placed {
                window: crate::compare::compare(&r.base_trace, &r.patch_trace).map_or(0, |d| d.window),
                lines: Vec::new(),
                hunks: (0..hunks.len()).collect(),
                from_kernels: true,
            }),
            (None, None) => None,
        });
    }
    review.placed = placed;
    Ok(())
}

/// Writes the review's folder `out` and returns the reply's text: the changed repository
/// scenarios beside the search's under `scenarios/`, the headline's windows on both
/// kernels as `headline.svg`, `reply.txt` and `reply.md`.
pub fn write(review: &mut Review, out: &Path) -> Result<String> {
    let scenarios = out.join("scenarios");
    for c in review.cases.iter().filter(|c| c.changed() && c.origin == Origin::Repository) {
        let to = scenarios.join(c.file.file_name().unwrap_or_default());
        crate::cache::write_atomic(&to, crate::files::read_text(&c.file)?.as_bytes())?;
    }
    if let Some(h) = review.headline() {
        let c = &review.cases[h];
        if let Some(r) = &c.runs {
            let pages = c.scenario.file_size.div_ceil(radiff_model::trace::PAGE_SIZE);
            let (range, what) = crate::report::page_range(None, pages)?;
            let traces = vec![(
                None,
                vec![("base".to_string(), r.base_trace.clone()), (review.variant.clone(), r.patch_trace.clone())],
            )];
            let svg = crate::report::picture(&format!("{}: {}", c.name, c.scenario.description), &what, range, &traces);
            let path = out.join("headline.svg");
            crate::files::write(&path, svg)?;
            review.picture = Some(path.display().to_string());
        }
    }
    review.folder = out.display().to_string();
    let text = reply::text(review);
    crate::cache::write_atomic(&out.join("reply.txt"), text.as_bytes())?;
    crate::cache::write_atomic(&out.join("reply.md"), reply::markdown(review).as_bytes())?;
    Ok(text)
}
