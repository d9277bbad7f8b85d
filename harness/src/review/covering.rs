//! The covering set a review runs on both kernels where the model cannot follow the patch:
//! a few generated scenarios per file system the patch can reach, one of each kind a
//! reviewer asks about (random reads, sequential reads, hints, mappings, limits), so the
//! obvious regressions are looked for without a model.

use std::path::Path;

use radiff_model::pattern::SplitMix64;
use radiff_model::{Advice, FsKind, MadvAdvice, ThpMode};

use super::evidence::{Case, Origin};
use crate::error::Result;
use crate::explore::generate::{Gen, GenDevice, GenStep, GenTouch, Start, DEFAULT_FAULT_AROUND};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// The covering set's file: small enough that its image is quick to make and each run
/// short, large enough for several readahead windows and extents.
const FILE_SIZE: u64 = 32 * MIB;
const WRITE_SIZE: u64 = 2 * MIB;

/// Every kind of the set, in the order the kernels run them (random reads first: the
/// question reviewers ask first).
pub const KINDS: [&str; 5] = ["random", "sequential", "hints", "mapping", "limits"];

/// The file systems a patch touching `files` can reach: the one whose directory holds
/// every file it changes (`fs/f2fs/`), else all three.
pub fn file_systems(files: &[String]) -> Vec<FsKind> {
    let all = [FsKind::Xfs, FsKind::Ext4, FsKind::F2fs];
    let mut confined = Vec::new();
    for f in files {
        let dir = f.strip_prefix("fs/").filter(|r| r.contains('/')).and_then(|r| r.split('/').next());
        match dir {
            Some(d) => {
                // Another file system's directory (fs/btrfs/) reaches none of radiff's.
                if let Some(k) = all.iter().find(|k| k.name() == d) {
                    if !confined.contains(k) {
                        confined.push(*k);
                    }
                }
            }
            None => return all.to_vec(),
        }
    }
    all.into_iter().filter(|k| confined.contains(k)).collect()
}

/// One generated scenario of `kind` on `fs`, its random choices drawn from `seed`.
pub fn scenario(kind: &str, fs: FsKind, seed: u64) -> Gen {
    let mut rng = SplitMix64::new(seed ^ 0x636f_7665_7269_6e67);
    let mut draw = || rng.next_u64() % 10_000;
    let (read_ahead_kb, max_sectors_kb, steps) = match kind {
        "random" => {
            (128, 512, vec![GenStep::Random { count: 16, min: 4 * KIB, max: 4 * KIB, align: 4 * KIB, seed: draw() }])
        }
        "sequential" => (128, 512, vec![GenStep::Sequential { at: Start::At(0), size: 128 * KIB, len: None }]),
        "hints" => (
            128,
            512,
            vec![
                GenStep::Fadvise { advice: Advice::Willneed, range: Some((4 * MIB, 2 * MIB)) },
                GenStep::Readahead { at: 12 * MIB, size: MIB },
                GenStep::Fadvise { advice: Advice::Sequential, range: None },
                GenStep::Sequential { at: Start::At(16 * MIB), size: 64 * KIB, len: Some(4 * MIB) },
            ],
        ),
        "mapping" => (
            128,
            512,
            vec![
                GenStep::Map {
                    shared: true,
                    advice: None,
                    order: GenTouch::Random { count: 64, seed: draw() },
                    exec: false,
                },
                GenStep::Map {
                    shared: true,
                    advice: Some(MadvAdvice::Sequential),
                    order: GenTouch::Sequential,
                    exec: false,
                },
            ],
        ),
        "limits" => (
            0,
            64,
            vec![
                GenStep::Random { count: 16, min: 4 * KIB, max: 128 * KIB, align: 4 * KIB, seed: draw() },
                GenStep::Sequential { at: Start::At(0), size: MIB, len: Some(8 * MIB) },
            ],
        ),
        other => unreachable!("covering::KINDS has no {other}"),
    };
    Gen {
        device: GenDevice::Nvme { transfer_limit: 512 * KIB },
        fs,
        file_size: FILE_SIZE,
        write_size: WRITE_SIZE,
        read_ahead_kb,
        max_sectors_kb,
        steps,
        fault_around: DEFAULT_FAULT_AROUND,
        thp: ThpMode::Always,
        files: 1,
        block_size: None,
    }
}

/// The set on `file_systems`: each kind on each file system, kind by kind, named
/// `covering_KIND_FS`.
pub fn set(file_systems: &[FsKind], seed: u64) -> Vec<(String, Gen)> {
    KINDS
        .iter()
        .flat_map(|kind| {
            file_systems.iter().map(move |&fs| (format!("covering_{kind}_{}", fs.name()), scenario(kind, fs, seed)))
        })
        .collect()
}

/// The set on `file_systems` as cases, each scenario written to `dir` (the review's
/// `scenarios/`, which `radiff run` takes).
pub fn cases(file_systems: &[FsKind], seed: u64, variant: &str, dir: &Path) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    for (name, gen) in set(file_systems, seed) {
        let path = dir.join(format!("{name}.yaml"));
        let comment = format!(
            "radiff review of {variant}: the covering set (seed {seed}), run on both kernels where the model cannot follow the patch"
        );
        crate::cache::write_atomic(&path, gen.yaml(&comment, &["base".to_string(), variant.to_string()]).as_bytes())?;
        let scenario = crate::scenario::Scenario::load(&path)?;
        out.push(Case::new(name, scenario, 0, Origin::Covering, path));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::judge::{usual_of, Usual};

    #[test]
    fn a_patch_confined_to_one_file_systems_directory_reaches_that_one_else_all_three() {
        let s = |files: &[&str]| file_systems(&files.iter().map(|f| f.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&["fs/f2fs/data.c"]), vec![FsKind::F2fs]);
        assert_eq!(s(&["fs/f2fs/data.c", "fs/ext4/readpage.c"]), vec![FsKind::Ext4, FsKind::F2fs]);
        assert_eq!(s(&["fs/f2fs/data.c", "mm/readahead.c"]), vec![FsKind::Xfs, FsKind::Ext4, FsKind::F2fs]);
        assert_eq!(s(&["fs/mpage.c"]), vec![FsKind::Xfs, FsKind::Ext4, FsKind::F2fs], "fs/mpage.c serves every one");
        assert_eq!(s(&["fs/btrfs/extent_io.c"]), vec![], "a file system radiff does not run");
    }

    #[test]
    fn the_set_parses_and_together_reaches_every_usual_question_on_each_file_system() {
        let set = set(&[FsKind::F2fs, FsKind::Xfs], 7);
        assert_eq!(set.len(), 2 * KINDS.len());
        assert_eq!(set[0].0, "covering_random_f2fs", "random reads first");
        for fs in ["f2fs", "xfs"] {
            let mut reached = Vec::new();
            for (name, gen) in set.iter().filter(|(n, _)| n.ends_with(fs)) {
                let s = gen.scenario(Path::new("out"), name, "", &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(s.fs.name(), fs);
                reached.extend(usual_of(&s, &s.points[0]));
            }
            for u in Usual::ALL {
                assert!(reached.contains(&u), "{fs}: no case of the set reaches {u:?}");
            }
        }
    }

    #[test]
    fn the_seed_draws_the_random_offsets_and_nothing_else() {
        let (a, b) = (scenario("random", FsKind::F2fs, 1), scenario("random", FsKind::F2fs, 2));
        assert_ne!(a, b);
        assert_eq!(a, scenario("random", FsKind::F2fs, 1), "the same seed, the same scenario");
        assert_eq!(scenario("sequential", FsKind::F2fs, 1), scenario("sequential", FsKind::F2fs, 2));
    }
}
