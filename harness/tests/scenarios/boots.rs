//! The guest machine itself: each kernel boots and says its release, a guest that halts
//! is stopped at once, a trace buffer too small fails its run saying so.

use std::path::Path;
use std::time::Duration;

use libtest_mimic::{Failed, Trial};
use radiff::scenario::Scenario;
use radiff::vm;

use super::{lab, SCHEDULE};

pub fn trials(root: &Path, variants: &[String], of_7_3_4: impl Fn(Trial) -> Trial) -> radiff::Result<Vec<Trial>> {
    let mut trials = Vec::new();
    // Every kernel boots and reports the release it was built as.
    for variant in variants {
        let v = variant.clone();
        trials.push(Trial::test(format!("kernel_boots::{variant}"), move || kernel_boots(&v)));
    }
    // A guest that halts instead of rebooting is stopped at once, not at its timeout.
    trials.push(Trial::test("vm_halt_is_seen::base", halted_guest_is_stopped));
    // A ring buffer too small for the scenario's events: the run fails saying so.
    let tiny = Scenario::load(&root.join("harness/tests/fixtures/tiny_trace_buffer.yaml"))?;
    trials.push(of_7_3_4(Trial::test("lost_events::tiny_trace_buffer::base", move || lost_events_fail_the_run(&tiny))));
    Ok(trials)
}

fn kernel_boots(variant: &str) -> Result<(), Failed> {
    let lab = lab()?;
    let who = format!("kernel_boots::{variant}");
    let kernel = lab.kernel(variant, &who).map_err(|e| e.to_string())?;
    let want = radiff::kernels::bzimage_release(&kernel).map_err(|e| e.to_string())?;
    // A boot of this kernel that the matrix already made says its release (the guest
    // records `uname -r` in every run's env.json): no boot of its own. Otherwise (this
    // trial alone, or before any of the variant's batches ended) a boot with no disk.
    let (got, how) = match release_from_a_batch(variant) {
        Some((release, dir)) => (release, format!("its batch's run {}", dir.display())),
        None => {
            let (got, wall) = lab.boot_release(variant, &who).map_err(|e| e.to_string())?;
            (got, format!("a boot of its own, {:.1} s", wall.as_secs_f64()))
        }
    };
    eprintln!("{who}: {} booted ({how}), uname -r: {got}", kernel.display());
    if got != want {
        return Err(format!("{who}: the guest says `{got}`, the bzImage {} says `{want}`", kernel.display()).into());
    }
    Ok(())
}

/// The release the guest saw in a finished run of one of `variant`'s boots, and the run's
/// folder ([`Schedule::release_of`]).
fn release_from_a_batch(variant: &str) -> Option<(String, std::path::PathBuf)> {
    SCHEDULE.get()?.release_of(lab().ok()?, variant)
}

/// The kernel has no ACPI, so virtme-ng-init's power-off halts the guest; radiff's guest
/// command reboots first. With the reboot's trigger covered by /dev/null, the guest halts,
/// and the boot must end with the command's status, promptly: a hang would run into the
/// timeout and fail as `VmTimeout`. The same boot checks that a TCG guest's CPU has
/// neither ERMS nor FSRM (vm.rs's `TCG_CPU`: the guest copies 8 bytes a `rep` iteration).
fn halted_guest_is_stopped() -> Result<(), Failed> {
    let lab = lab()?;
    let who = "vm_halt_is_seen::base";
    let kernel = lab.kernel("base", who).map_err(|e| e.to_string())?;
    let dir = lab.cache.dir("runs").map_err(|e| e.to_string())?.join("_halt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let boot = vm::Boot {
        kernel,
        disks: Vec::new(),
        snapshot: false,
        shared: dir.clone(),
        command: "grep -owE 'erms|fsrm' /proc/cpuinfo | sort -u > cpu-flags; mount --bind /dev/null /proc/sysrq-trigger; exit 7"
            .into(),
        cpus: 1,
        memory_mb: 1024,
        timeout: Duration::from_secs(180),
    };
    let booted = vm::boot(&lab.cache, &boot).map_err(|e| format!("{who}: {e}"))?;
    let console = std::fs::read_to_string(&booted.console).map_err(|e| format!("{}: {e}", booted.console.display()))?;
    eprintln!("{who}: ended in {:.1} s, exit code {:?}", booted.elapsed.as_secs_f64(), booted.exit_code);
    if !console.contains("System halted") {
        return Err(format!("{who}: the guest did not halt; its console is {}", booted.console.display()).into());
    }
    if booted.exit_code != Some(7) {
        return Err(format!(
            "{who}: exit code {:?}, the command exited with 7; see {}",
            booted.exit_code,
            dir.display()
        )
        .into());
    }
    let flags = std::fs::read_to_string(dir.join("cpu-flags")).map_err(|e| format!("{who}: cpu-flags: {e}"))?;
    if booted.accel == vm::Accel::Tcg && !flags.trim().is_empty() {
        return Err(format!("{who}: the TCG guest's CPU has {} (see {})", flags.trim(), dir.display()).into());
    }
    Ok(())
}

/// A scenario whose `trace_buffer_kb` (8) cannot hold its events: the run is an error that
/// counts the lost events from the trace's text and says how to fix it, never a shorter
/// trace; its folder keeps the console log and the partial trace.
fn lost_events_fail_the_run(scenario: &Scenario) -> Result<(), Failed> {
    let lab = lab()?;
    let who = "lost_events::tiny_trace_buffer::base";
    let err = match lab.run(scenario, &scenario.points[0], "base", who) {
        Ok(out) => {
            return Err(format!(
                "{who}: the run succeeded with {} events in an {} KiB buffer (folder {}): a lost event went unseen",
                out.capture.events,
                scenario.trace_buffer_kb,
                out.dir.display()
            )
            .into())
        }
        Err(e) => e,
    };
    eprintln!("{who}: the run failed as it should:\n{err}");
    let radiff::Error::LostEvents { dir, message, fix } = &err else {
        return Err(format!("{who}: expected the lost-events error, got: {err}").into());
    };
    for (what, text, needle) in [
        ("message", message, "the ftrace ring buffer lost at least "),
        ("message", message, "entries-in-buffer/entries-written"),
        ("fix", fix, "raise `trace_buffer_kb` in "),
        ("fix", fix, "(now 8 KiB per CPU; try `trace_buffer_kb: "),
    ] {
        if !text.contains(needle) {
            return Err(format!("{who}: the {what} does not say `{needle}`:\n{err}").into());
        }
    }
    for kept in ["console.log", "trace.txt", "env.json"] {
        let path = dir.join(kept);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if len == 0 {
            return Err(
                format!("{who}: the run folder does not keep {kept} (or it is empty): {}", path.display()).into()
            );
        }
    }
    Ok(())
}
