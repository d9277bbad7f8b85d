//! Confirming a finding on the real kernels, as a trial does: run its scenario in the VM
//! on each variant it concerns, normalise the kernel's trace, predict with the model on
//! what the guest measured, compare, and run the same detector on the kernel's trace.

use std::fmt::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use radiff_model::{predict, Trace};

use super::detect::{self, Hit};
use super::{comment, context, figures_line, policies, Finding, Options};
use crate::compare::{self, normalise};
use crate::error::{Error, Result};
use crate::run::{model_input, Lab};

/// The outcome of a confirmation.
#[derive(Clone, Debug)]
pub enum Status {
    /// The kernel fires the same detector and the model equals the kernel.
    Confirmed { kernel_key: String },
    /// The model and the kernel differ: the model is wrong here (the diff, rendered).
    ModelBug { diff: String },
    /// Model and kernel agree, but the kernel's trace does not fire the detector (only
    /// possible where the synthesised measurement differs from the guest's: extents,
    /// queue limits).
    NotReproduced,
    /// The VM run failed (its error): neither confirmed nor refuted.
    Failed { error: String },
}

impl Status {
    pub fn is_confirmed(&self) -> bool {
        matches!(self, Status::Confirmed { .. })
    }

    pub fn is_model_bug(&self) -> bool {
        matches!(self, Status::ModelBug { .. })
    }

    pub fn short(&self) -> &'static str {
        match self {
            Status::Confirmed { .. } => "confirmed",
            Status::ModelBug { .. } => "**model bug**",
            Status::NotReproduced => "not reproduced",
            Status::Failed { .. } => "run failed",
        }
    }

    pub fn text(&self) -> String {
        match self {
            Status::Confirmed { kernel_key } => format!("confirmed: the kernel fires it too [{kernel_key}], and the model equals the kernel"),
            Status::ModelBug { diff } => format!("MODEL BUG: the model and the kernel differ\n{diff}"),
            Status::NotReproduced => "not reproduced: the model equals the kernel, but the kernel's trace does not fire the detector".into(),
            Status::Failed { error } => format!("the run failed: {error}"),
        }
    }
}

/// A finding run on the kernels.
#[derive(Clone, Debug)]
pub struct Confirmation {
    pub finding: Finding,
    pub status: Status,
    /// "base: N reads, ...; V: ..." from the model on what the guest measured.
    pub model_figures: String,
    pub kernel_figures: String,
    /// The kernel's hit, when it fired.
    pub kernel_hit: Option<Hit>,
    /// Wall time of the disk image's preparation, when it had to be prepared.
    pub image_time: Option<Duration>,
    /// Wall time of each VM run.
    pub run_times: Vec<Duration>,
    /// Wall time of the whole confirmation.
    pub wall: Duration,
}

/// Whether the disk image `f`'s scenario needs is already prepared (then confirming it
/// costs only its runs).
pub fn image_ready(lab: &Lab, f: &Finding, o: &Options) -> bool {
    f.gen.scenario(Path::new("explore"), &f.name(), "", &f.variants(&o.variants[0])).is_ok_and(|s| crate::run::image_ready(&lab.cache, &s))
}

/// [`confirm`], with a failed run as [`Status::Failed`] instead of an error (so that one
/// failure does not end a search).
pub fn confirm_or_fail(lab: &Lab, f: &Finding, o: &Options) -> Confirmation {
    let started = Instant::now();
    confirm(lab, f, o).unwrap_or_else(|e| Confirmation {
        finding: f.clone(),
        status: Status::Failed { error: e.to_string() },
        model_figures: String::new(),
        kernel_figures: String::new(),
        kernel_hit: None,
        image_time: None,
        run_times: Vec::new(),
        wall: started.elapsed(),
    })
}

/// Runs `f`'s scenario on the kernels (the first variant of `o.variants`, and the compared
/// one for a variant change) and judges it.
pub fn confirm(lab: &Lab, f: &Finding, o: &Options) -> Result<Confirmation> {
    let variants = f.variants(&o.variants[0]);
    let pol = policies(&variants)?;
    let name = f.name();
    let started = Instant::now();
    let dir = lab.cache.dir("explore")?;
    let scenario = f.gen.scenario(&dir, &name, "", &variants)?;
    let point = &scenario.points[0];
    let image_time = (!image_ready(lab, f, o)).then(|| {
        let t = Instant::now();
        lab.image(&scenario, &format!("explore {name}")).map(|_| t.elapsed())
    });
    let image_time = image_time.transpose()?;
    let mut run_times = Vec::new();
    let mut kernels: Vec<Trace> = Vec::new();
    let mut models: Vec<Trace> = Vec::new();
    let mut bug: Option<String> = None;
    let mut first_input = None;
    for (variant, policy) in &pol {
        let who = format!("explore {name} on {variant}");
        let out = lab.run(&scenario, point, variant, &who)?;
        run_times.push(out.wall);
        let input = model_input(&scenario, &out.env, &out.capture.pfns);
        let model = predict(&input, policy);
        let (kernel, _) = normalise(&out.capture.trace, &out.env.all_extents());
        if let Some(d) = compare::compare(&kernel, &model) {
            let rerun = format!("radiff run {} --variant {variant}", o.out.join("model-bugs").join(format!("{name}.yaml")).display());
            let text = compare::render(&d, &format!("{name}::{variant}"), &rerun);
            bug.get_or_insert(text);
        }
        if first_input.is_none() {
            first_input = Some(input);
        }
        kernels.push(kernel);
        models.push(model);
    }
    let figures = |traces: &[Trace]| variants.iter().zip(traces).map(|(v, t)| format!("{v}: {}", figures_line(t))).collect::<Vec<_>>().join("; ");
    let input = first_input.ok_or_else(|| Error::Other("no variant to run".into()))?;
    let kernel_hit = match &f.variant {
        Some(v) => detect::variant_change(&kernels[0], &kernels[1], v),
        None => detect::run_all(&kernels[0], &context(&input), &o.thresholds).into_iter().find(|h| h.detector == f.hit.detector),
    };
    let status = match (bug, &kernel_hit) {
        (Some(diff), _) => Status::ModelBug { diff },
        (None, Some(h)) => Status::Confirmed { kernel_key: h.key.clone() },
        (None, None) => Status::NotReproduced,
    };
    Ok(Confirmation { finding: f.clone(), status, model_figures: figures(&models), kernel_figures: figures(&kernels), kernel_hit, image_time, run_times, wall: started.elapsed() })
}

impl Confirmation {
    /// Writes the finding's scenario to `dir` (confirmed: `NAME.yaml`; a model bug:
    /// `model-bugs/NAME.yaml` with the diff in its comment; not reproduced:
    /// `not-reproduced/NAME.yaml`).
    pub fn write(&self, dir: &Path, o: &Options) -> Result<()> {
        let f = &self.finding;
        let mut c = comment(f, o, &self.model_figures, Some(&self.kernel_figures));
        // Each status: its lines in the comment, and the folder of DIR it is written to.
        let folder = match &self.status {
            Status::Confirmed { kernel_key } => {
                let _ = writeln!(c, "The kernel's trace fires {} [{kernel_key}]; the model equals the kernel.", f.hit.detector);
                None
            }
            Status::ModelBug { diff } => {
                let _ = writeln!(c, "MODEL BUG: the model and the kernel differ:");
                for line in diff.lines() {
                    let _ = writeln!(c, "  {line}");
                }
                Some("model-bugs")
            }
            Status::NotReproduced => {
                let _ = writeln!(c, "Not reproduced: the kernel's trace does not fire {}.", f.hit.detector);
                Some("not-reproduced")
            }
            Status::Failed { error } => {
                let _ = writeln!(c, "The run on the kernel failed:");
                for line in error.lines() {
                    let _ = writeln!(c, "  {line}");
                }
                Some("failed")
            }
        };
        let path = folder.map_or_else(|| dir.to_path_buf(), |d| dir.join(d)).join(format!("{}.yaml", f.name()));
        let text = f.gen.yaml(&c, &f.variants(&o.variants[0]));
        crate::cache::write_atomic(&path, text.as_bytes())
    }
}
