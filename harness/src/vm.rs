//! The VM: boots a kernel under virtme-ng (QEMU) with the device under test attached,
//! runs one command in the guest, and never hangs.
//!
//! Every boot has a timeout that kills QEMU and reports the console's tail; the console
//! log stays on disk. KVM is used only when a probe shows it really runs a guest (nested
//! virtualisation often opens /dev/kvm and then hangs); otherwise QEMU emulates (TCG).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cache::{self, Cache};
use crate::error::{Error, Result};
use crate::process::{log_tail, require_tool, Cmd, Outcome};

/// How QEMU runs the guest's instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    Tcg,
}

/// The device under test, as QEMU attaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disk {
    /// QEMU's NVMe controller; `mdts` is the transfer limit as a power of two of 4 KiB pages.
    Nvme {
        image: PathBuf,
        mdts: u8,
        logical_block_size: Option<u64>,
        opt_io_size: Option<u64>,
        min_io_size: Option<u64>,
        /// QEMU's drive throttling, requests a second (`throttling.iops-total`).
        iops_limit: Option<u64>,
    },
    /// QEMU's UFS host controller with one logical unit.
    Ufs { image: PathBuf },
}

impl Disk {
    pub fn image(&self) -> &Path {
        match self {
            Disk::Nvme { image, .. } | Disk::Ufs { image } => image,
        }
    }

    /// QEMU options attaching the disk as the `n`-th of its boot: its own drive and
    /// controller ids, serial `radiffN` and a fixed PCI slot ([`disk_pci_address`]), by
    /// which the guest finds it. `snapshot` sends the guest's writes to a throwaway
    /// overlay, so every variant reads the same, unchanged image (a read-only drive would
    /// stop XFS from mounting: log recovery wants to write); one image may be attached
    /// several times in one boot (each its own overlay). `aio` is QEMU's way of reading the
    /// image (`io_uring`, or "" for its default, a thread pool: see [`host_aio`]).
    pub fn qemu_opts(&self, snapshot: bool, n: usize, aio: &str) -> String {
        let iops = match self {
            Disk::Nvme { iops_limit: Some(n), .. } => format!(",throttling.iops-total={n}"),
            _ => String::new(),
        };
        let drive = |id: &str| {
            format!(
                // werror/rerror=report: a write that meets a full host file system is an I/O
                // error in the guest, not a VM paused for ever (QEMU's default, enospc).
                // cache=writeback: the guest's reads of a cached image come from the host's
                // page cache; with cache=none each was an O_DIRECT read of the host's disk.
                // The guest's pattern time of fio_randread_ra_off (23462 reads of 4 KiB)
                // went from 11.1 s to 7.7-7.9 s; no trace or snapshot changed.
                "-drive file={},if=none,id={id},format=raw,cache=writeback,werror=report,rerror=report{}{}{iops}",
                self.image().display(),
                if snapshot { ",snapshot=on" } else { "" },
                if aio.is_empty() { String::new() } else { format!(",aio={aio}") }
            )
        };
        let addr = format!("addr={:#04x}.0", FIRST_DISK_SLOT + n as u32);
        match self {
            Disk::Nvme { mdts, logical_block_size, opt_io_size, min_io_size, .. } => {
                let mut dev = format!("-device nvme,serial=radiff{n},drive=nvm{n},mdts={mdts},{addr}");
                for (name, value) in [
                    ("logical_block_size", logical_block_size),
                    ("physical_block_size", logical_block_size),
                    ("opt_io_size", opt_io_size),
                    ("min_io_size", min_io_size),
                ] {
                    if let Some(v) = value {
                        dev.push_str(&format!(",{name}={v}"));
                    }
                }
                format!("{} {dev}", drive(&format!("nvm{n}")))
            }
            Disk::Ufs { .. } => {
                format!(
                    "-device ufs,serial=radiff{n},id=ufs{n},{addr} {} -device ufs-lu,drive=ufsd{n},lun=0,bus=ufs{n}",
                    drive(&format!("ufsd{n}"))
                )
            }
        }
    }
}

/// The PCI slot of a boot's first disk; disk N is in slot FIRST_DISK_SLOT + N. virtme-ng's
/// own devices (9p shares, virtio-serial, the q35 chipset) take slots 0x00-0x0a and 0x1f.
const FIRST_DISK_SLOT: u32 = 0x10;

/// Disks one boot can attach (`FIRST_DISK_SLOT` up to 0x1d, below the chipset's 0x1f).
pub const MAX_DISKS: usize = 14;

/// The PCI address the guest sees the `n`-th disk of a boot at (`0000:00:10.0` for the first).
pub fn disk_pci_address(n: usize) -> String {
    format!("0000:00:{:02x}.0", FIRST_DISK_SLOT + n as u32)
}

/// One boot: a kernel, its disks, a folder shared with the guest, one guest command.
#[derive(Clone, Debug)]
pub struct Boot {
    pub kernel: PathBuf,
    /// Attached in order: disk N at [`disk_pci_address`]`(N)`, at most [`MAX_DISKS`].
    pub disks: Vec<Disk>,
    pub snapshot: bool,
    /// Shared read-write at the same path inside the guest; the console log goes here too.
    pub shared: PathBuf,
    /// Run in the guest as root, from `shared`.
    pub command: String,
    pub cpus: u32,
    pub memory_mb: u64,
    pub timeout: Duration,
}

/// How a boot ended (the guest's results are files in `Boot::shared`).
#[derive(Clone, Debug)]
pub struct Booted {
    pub accel: Accel,
    pub elapsed: Duration,
    pub console: PathBuf,
    pub exit_code: Option<i32>,
}

/// Boots, runs the command and waits for the VM to end (the guest reboots, QEMU exits), at
/// most `boot.timeout`.
pub fn boot(cache: &Cache, boot: &Boot) -> Result<Booted> {
    boot_watched(cache, boot, || false)
}

/// [`boot`], asking `stop` once a second whether to end the VM now (a watchdog of the
/// caller's). A VM so stopped ends as `Ok` with no exit code; the caller knows why.
pub fn boot_watched(cache: &Cache, boot: &Boot, stop: impl FnMut() -> bool) -> Result<Booted> {
    struct Stop<F>(F);
    impl<F: FnMut() -> bool> Watcher for Stop<F> {
        fn stop(&mut self) -> bool {
            (self.0)()
        }
    }
    boot_with(cache, boot, &mut Stop(stop))
}

/// A boot's own trouble, not the guest's doing: worth another boot ([`BOOT_ATTEMPTS`] in
/// all). `kind` names the kept console (`console.KIND-N.log`); `what` says what happened.
pub struct Trouble {
    pub kind: &'static str,
    pub what: String,
}

/// The caller's side of a boot ([`boot_with`]): told when each boot begins, asked once a
/// second whether to end the VM now (a batch's point that overran its own timeout), and
/// told when each boot ended, with its console, answering whether that was the boot's own
/// trouble (a guest that started no point in time, a kernel that panicked while booting).
pub trait Watcher {
    fn begin(&mut self) {}
    fn stop(&mut self) -> bool;
    fn ended(&mut self, _console: &str) -> Option<Trouble> {
        None
    }
}

/// The one place a boot is repeated: [`boot`] with a [`Watcher`], booted again (its console
/// kept as `console.KIND-N.log`, [`BOOT_ATTEMPTS`] boots in all) when QEMU itself crashed,
/// when the guest did not reach its command, or when the watcher names a trouble of the
/// boot's own.
pub fn boot_with(cache: &Cache, boot: &Boot, watcher: &mut dyn Watcher) -> Result<Booted> {
    let qemu = require_tool("qemu-system-x86_64")?;
    let vng = cache.vng();
    if vng.components().count() == 1 {
        require_tool("vng")?;
    }
    if boot.shared.to_string_lossy().contains('=') {
        return Err(Error::Other(format!(
            "{}: virtme-ng cannot share a folder whose path holds `=` (it reads --rwdir=GUEST=HOST); move the cache (RADIFF_CACHE)",
            boot.shared.display()
        )));
    }
    let accel = accel(cache, &boot.kernel)?;
    let console = boot.shared.join("console.log");
    let _ = std::fs::remove_file(&console);
    // vng runs `virtme-run` from PATH: put its venv first.
    let mut path = std::ffi::OsString::from(vng.parent().unwrap_or(Path::new("")));
    path.push(":");
    path.push(&crate::settings::get().path);
    let mut cmd = Cmd::new(&vng)
        .env("PATH", path)
        .arg("--run")
        .arg(&boot.kernel)
        .arg("--verbose")
        .arg("--disable-microvm")
        // The kernel has no virtiofs: share the host's root over 9p even where virtiofsd exists.
        .arg("--force-9p")
        .arg("--cpus")
        .arg(boot.cpus.to_string())
        .arg("--memory")
        .arg(format!("{}M", boot.memory_mb))
        .arg(format!("--rwdir={}", boot.shared.display()))
        .arg("--cwd")
        .arg(&boot.shared)
        .arg("--append")
        .arg(match stand_ins(cache)? {
            Some(dir) => format!("{} PATH={}", kernel_args(), dir.display()),
            None => kernel_args(),
        })
        .arg(format!("--rodir={UDEV_RULES}={}", udev_rules(cache)?.display()))
        .arg("--exec")
        .arg(guest_command(&boot.command, &boot.shared));
    if accel == Accel::Tcg {
        cmd = cmd.arg("--disable-kvm");
    }
    // --qemu-opts must come last: vng passes everything after it to QEMU.
    let mut qemu_opts = format!("{SMP_TOPOLOGY} {QUIET_SERIAL_PORTS}");
    if accel == Accel::Tcg {
        qemu_opts = format!("{qemu_opts} {TCG_CPU} {}", tcg_memory(boot.memory_mb));
    }
    if boot.disks.len() > MAX_DISKS {
        return Err(Error::Other(format!("a boot can attach at most {MAX_DISKS} disks, not {}", boot.disks.len())));
    }
    let aio = host_aio(cache, &qemu)?;
    for (n, disk) in boot.disks.iter().enumerate() {
        qemu_opts = format!("{qemu_opts} {}", disk.qemu_opts(boot.snapshot, n, aio));
    }
    cmd = cmd.arg(format!("--qemu-opts={qemu_opts}"));
    std::fs::write(boot.shared.join("vng.cmd"), format!("{}\n", cmd.display()))
        .map_err(|e| Error::io(&boot.shared, e))?;
    let exit_code_file = boot.shared.join(EXIT_CODE);
    let mut attempt = 1;
    loop {
        let _ = std::fs::remove_file(&exit_code_file);
        watcher.begin();
        let started = Instant::now();
        let outcome = cmd.run_logged_until(
            &console,
            boot.timeout,
            Duration::from_secs(3600),
            |_| {},
            || halted(&console) || watcher.stop(),
        )?;
        let text = std::fs::read_to_string(&console).unwrap_or_default();
        // QEMU's own trouble, not the guest's doing: an assertion of QEMU's, or a VM killed
        // before the guest's init reached the command (a boot that stalled in QEMU: lost
        // timer wakeups under TCG); else the watcher's.
        let qemu_trouble = match &outcome {
            Outcome::Exited(_) => qemu_crash(&text)
                .map(|line| Trouble { kind: "qemu-crash", what: format!("QEMU itself crashed ({line})") }),
            Outcome::TimedOut(after) if !text.contains(SCRIPT_STARTED) => Some(Trouble {
                kind: "boot-stall",
                what: format!("the guest did not reach its command within {} s (a boot that stalled)", after.as_secs()),
            }),
            Outcome::TimedOut(_) => None,
        };
        let watcher_trouble = watcher.ended(&text);
        if let Some(Trouble { kind, what }) = qemu_trouble.or(watcher_trouble).filter(|_| attempt < BOOT_ATTEMPTS) {
            let kept = boot.shared.join(format!("console.{kind}-{attempt}.log"));
            let _ = std::fs::rename(&console, &kept);
            crate::progress::progress(&format!(
                "{what}; its log is {}; booting again ({} of {BOOT_ATTEMPTS})",
                kept.display(),
                attempt + 1
            ));
            attempt += 1;
            continue;
        }
        return match outcome {
            Outcome::Exited(_) => {
                let exit_code = std::fs::read_to_string(&exit_code_file).ok().and_then(|t| t.trim().parse().ok());
                Ok(Booted { accel, elapsed: started.elapsed(), console, exit_code })
            }
            Outcome::TimedOut(after) => Err(Error::VmTimeout {
                after,
                dir: boot.shared.clone(),
                last_step: None,
                timeout_source: None,
                console_tail: log_tail(&console, 25),
            }),
        };
    }
}

/// The command virtme-ng runs in the guest: `command`, its exit status written to
/// [`EXIT_CODE`] in the shared folder, then a reboot that ends the VM (virtme-ng runs QEMU
/// with `-no-reboot`). The kernel has no ACPI (it was 7 % of every cold build's compile),
/// and without ACPI an x86 guest cannot power off: virtme-ng-init's own power-off after
/// the command would halt the guest and leave QEMU running. `sysrq b` resets through the
/// keyboard controller at once, skipping virtme-ng-init's exit-status port, hence the file.
/// Everything the guest leaves in the shared folder is already on the host: it is a 9p
/// mount without cache, every write goes through.
fn guest_command(command: &str, shared: &Path) -> String {
    format!("({command}); echo $? > {}/{EXIT_CODE}; echo b > /proc/sysrq-trigger", shared.display())
}

/// Where [`guest_command`] leaves the command's exit status.
const EXIT_CODE: &str = "exit-code";

/// The CPU a TCG guest gets, in place of virtme-ng's `-cpu max` (QEMU takes the last
/// `-cpu`): the same without ERMS (QEMU 10.0's `max` has it) and FSRM (should a QEMU's
/// have it), the flags that make the guest kernel copy and
/// clear memory a byte per `rep movsb`/`rep stosb` iteration, which TCG emulates one
/// iteration at a time; without them it moves 8 bytes an iteration (`rep movsq`). Measured
/// on 2 cores, the guest's pattern time of f2fs_ufs_dd_512k (2 GiB through read(2)) went
/// from 11.1 s to 8.2 s and fio_randread_ra_off's from 11.4 s to 10.3 s; readahead does
/// not look at CPU flags, and every snapshot is the same with either. KVM guests keep
/// virtme-ng's `-cpu host`.
const TCG_CPU: &str = "-cpu max,-fsrm,-erms";

/// The guest's RAM under TCG: a memfd of `memory_mb` MiB (shared memory, in 4 KiB pages)
/// in place of QEMU's anonymous memory, which QEMU asks the host to back with transparent
/// huge pages: each first touch of a guest page there made the host zero 2 MiB, 8 % of
/// the host's CPU in a scenario test run (clear_page_erms under do_huge_pmd_anonymous_page).
/// The guest sees the same RAM. Measured on 2 cores, a boot's wall: 1mib_from_start
/// 4.2-5.2 s -> 3.8-3.9 s, f2fs_ufs_dd_512k (2 GiB read) 19.4-22.0 s -> 17.4-19.9 s,
/// fio_randread_ra_off 12.7-13.0 s -> 12.3-12.6 s. KVM guests keep QEMU's anonymous
/// memory, where huge pages speed the guest's own page walks.
fn tcg_memory(memory_mb: u64) -> String {
    format!("-object memory-backend-memfd,id=radiff-ram,size={memory_mb}M -machine memory-backend=radiff-ram")
}

/// QEMU's CPU topology: one CPU per socket. Without ACPI the guest finds its CPUs in the
/// firmware's MP table, and SeaBIOS lists only the first CPU of each socket there: with
/// QEMU's default (all CPUs as cores of one socket) a guest given two vCPUs would run on
/// one. QEMU merges this with virtme-ng's `-smp N`, which sets the count (sockets = N).
const SMP_TOPOLOGY: &str = "-smp cores=1,threads=1";

/// virtme-ng's six virtio-serial devices (the guest's stdin, stdout, stderr, ...) carry one
/// port each, but QEMU gives each device 31 ports and, with ioeventfd, an eventfd per
/// virtqueue: 390 eventfds that QEMU's main loop polls at each wake-up, and under TCG it
/// wakes several times per request the emulated disk serves. Two ports a device and no
/// ioeventfd leave 6 eventfds. Measured on 2 cores with one vCPU, the guest's pattern time
/// of fio_randread_ra_off (23462 reads of 4 KiB) went from 8.5-10.2 s to 6.7-7.1 s; the
/// ports only carry virtme-ng's own stdio, never the scenario's I/O.
const QUIET_SERIAL_PORTS: &str = "-global virtio-serial-pci.max_ports=2 -global virtio-serial-pci.ioeventfd=off";

/// What a guest prints when it halts instead of rebooting: virtme-ng-init powered off (it
/// does when it fails before the command, or if the reboot in [`guest_command`] failed),
/// which without ACPI halts the guest with QEMU still running. Linux 7.3 says
/// `reboot: Power off not available: System halted instead`, and `reboot: System halted`
/// for a halt asked as such.
const HALTED: &str = "System halted";

/// Whether the console's last lines say the guest halted (see [`HALTED`]).
fn halted(console: &Path) -> bool {
    log_tail(console, 50).lines().any(|l| l.contains("reboot: ") && l.contains(HALTED))
}

/// Kernel arguments of every boot (they come after virtme-ng's own, so they win).
/// - scsi_debug and null_blk are built in (a scenario may want them one day) but make no
///   disk unless asked: every disk is work for udev's coldplug, which virtme-ng-init
///   waits for before the guest's command starts.
/// - The host's root, shared read-only over 9p, is mounted with the guest's page cache
///   (`cache=loose`; virtme-ng 1.42's options otherwise): without it every program
///   init starts (systemd-tmpfiles, udevd, udevadm) reads its libraries over 9p page by
///   page, about 6 s of a one-vCPU boot under emulation. The host's files do not change
///   during a boot, and the shared run folder is a mount of its own, without cache.
/// - `printk.time` stamps the console log, so a slow boot shows where its time went.
/// - `oops=panic`: an oops (a `BUG()`, a bad access in the kernel) panics, and virtme-ng's
///   `panic=-1` with QEMU's `-no-reboot` ends the VM at once, its console holding the
///   report. Without it the kernel kills the task and runs on, perhaps with a folio left
///   locked, and the next read of a batch would hang until its timeout.
///   `ftrace_dump_on_oops` prints the trace buffer to the console first: the run's
///   partial trace (the guest never gets to save it), which radiff keeps as trace.txt.
/// - `no_timer_check`: the boot's check that the IO-APIC timer ticks gives up after a
///   fixed count of loops, which a host busy with other work made too short under TCG:
///   `Kernel panic - not syncing: IO-APIC + timer doesn't work!` at 0.04 s, once in a
///   test run on a loaded host. QEMU's timer works; the check is for broken hardware.
const KERNEL_ARGS: &str =
    "scsi_debug.add_host=0 null_blk.nr_devices=0 printk.time=1 oops=panic ftrace_dump_on_oops no_timer_check \
    rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose";

/// [`KERNEL_ARGS`], and the TSC's frequency as the host measures it (`tsc_early_khz`).
/// Under TCG the guest's TSC is the host's (QEMU reads the host's counter), but the guest
/// calibrates it against the emulated PIT, and on a busy host that went wrong: "Fast TSC
/// calibration failed" in most boots, then a PIT calibration of 244 or 684 MHz for a
/// 2596 MHz counter in some, and the guest's clock ran up to 10 times too fast (a point
/// measured 881 s in the guest took 90 s; pattern times were off as much).
fn kernel_args() -> String {
    match host_tsc_khz() {
        Some(khz) => format!("{KERNEL_ARGS} tsc_early_khz={khz}"),
        None => KERNEL_ARGS.to_string(),
    }
}

/// The host's TSC frequency in kHz, counted against the monotonic clock over 200 ms (once
/// per process); `None` off x86-64 or when the counter looks wrong.
fn host_tsc_khz() -> Option<u64> {
    static KHZ: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *KHZ.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: RDTSC has no memory effects; every x86-64 CPU has it.
            let tsc = || unsafe { core::arch::x86_64::_rdtsc() };
            let (t0, c0) = (Instant::now(), tsc());
            std::thread::sleep(Duration::from_millis(200));
            let (c1, elapsed) = (tsc(), t0.elapsed());
            let khz = (c1.wrapping_sub(c0) as f64 / elapsed.as_secs_f64() / 1000.0).round() as u64;
            (100_000..20_000_000).contains(&khz).then_some(khz)
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    })
}

/// Where the guest's udev reads the distribution's rules.
const UDEV_RULES: &str = "/usr/lib/udev/rules.d";

/// The one udev rule the guest needs: the `/dev/virtio-ports/NAME` links virtme-ng's
/// script I/O is found by (as in systemd's 50-udev-default.rules).
const VIRTIO_PORTS_RULE: &str =
    "SUBSYSTEM==\"virtio-ports\", KERNEL==\"vport*\", ATTR{name}==\"?*\", SYMLINK+=\"virtio-ports/$attr{name}\"\n";

/// A rules folder holding only [`VIRTIO_PORTS_RULE`], shared over the guest's
/// [`UDEV_RULES`]. virtme-ng-init waits for udev's coldplug of every device before it
/// starts the command, and under emulation the host's full rule set costs about 85 ms a
/// device (11 s of a 21 s boot with one vCPU): nothing the guest runs needs those rules.
/// Boots that skip the coldplug ([`stand_ins`]) start udevd all the same, with nothing to do.
/// virtme-ng-init makes this mount while udevd starts, so a udevd that wins the race
/// reads the full rules: a slower boot, never a different trace (the guest drops every
/// cache before it traces).
fn udev_rules(cache: &Cache) -> Result<PathBuf> {
    let dir = cache.dir("udev-rules")?;
    let rule = dir.join("50-radiff-virtio-ports.rules");
    if std::fs::read_to_string(&rule).ok().as_deref() != Some(VIRTIO_PORTS_RULE) {
        cache::write_atomic(&rule, VIRTIO_PORTS_RULE.as_bytes())?;
    }
    Ok(dir)
}

/// The programs virtme-ng-init runs before the guest's command that nothing in the guest
/// needs, by name (virtme-ng-init finds them on PATH): `systemd-tmpfiles --create --boot`
/// (0.5 s of an idle one-vCPU boot under TCG) and `udevadm`, whose coldplug trigger and
/// settle took 0.7 s with one disk, more with a batch's seven. Without the coldplug there
/// are no `/dev/virtio-ports/*` links, and virtme-ng-init runs the command with its output
/// on the console ("starting script (console fallback)"), which radiff keeps as the boot's
/// console log either way; the command's exit status goes to a file (see
/// [`guest_command`]), and disks are found in /sys/block, their nodes made by devtmpfs.
const SKIPPED_AT_BOOT: [&str; 2] = ["systemd-tmpfiles", "udevadm"];

/// A folder of the cache holding a link to the host's `true` for each of
/// [`SKIPPED_AT_BOOT`], for the start of the guest init's PATH: the kernel gives init the
/// `PATH=` of its command line, and virtme-ng-init puts its own folders after it. `None`
/// when the folder's path cannot go on a kernel command line (a space, a quote) or the
/// host has no `true`: then the guest runs them (a slower boot, the same traces).
fn stand_ins(cache: &Cache) -> Result<Option<PathBuf>> {
    let Some(truth) = ["/usr/bin/true", "/bin/true"].into_iter().map(Path::new).find(|p| p.is_file()) else {
        return Ok(None);
    };
    let dir = cache.dir("guest-path")?;
    if dir.to_string_lossy().chars().any(|c| c.is_whitespace() || c == '"' || c == '\'') {
        return Ok(None);
    }
    for name in SKIPPED_AT_BOOT {
        let link = dir.join(name);
        if std::fs::read_link(&link).ok().as_deref() != Some(truth) {
            let staged = dir.join(format!(".{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&staged);
            std::os::unix::fs::symlink(truth, &staged).map_err(|e| Error::io(&staged, e))?;
            std::fs::rename(&staged, &link).map_err(|e| Error::io(&link, e))?;
        }
    }
    Ok(Some(dir))
}

/// What virtme-ng-init prints when boot is over and it starts the guest's command.
const SCRIPT_STARTED: &str = "virtme-ng-init: starting script";

/// Boots of one [`boot_with`] at most, when the boots before had trouble of their own
/// (QEMU aborted on its own assertion, the boot stalled, the kernel panicked while booting).
pub const BOOT_ATTEMPTS: u32 = 3;

/// The line of a console log where QEMU itself aborted, if it did: a line
/// `qemu-system-x86_64: FILE:LINE: FUNCTION: Assertion `...' failed.` Under TCG with
/// several vCPUs, QEMU 10.0 sometimes trips `iotlb_to_section()`'s assertion while the
/// guest programs PCI BARs at boot: a race in QEMU, not something the kernel did, so the
/// boot is worth repeating. Anything else (a guest panic, a failed guest step) is not.
pub fn qemu_crash(console: &str) -> Option<&str> {
    console
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("qemu-system-") && l.contains("Assertion") && l.ends_with("failed."))
}

/// KVM if a probe boot shows it runs a guest, else TCG. `RADIFF_ACCEL=kvm|tcg` overrides.
/// The verdict is cached per host boot (`/proc/sys/kernel/random/boot_id`).
pub fn accel(cache: &Cache, kernel: &Path) -> Result<Accel> {
    match crate::settings::get().accel.as_deref() {
        Some("kvm") => return Ok(Accel::Kvm),
        Some("tcg") => return Ok(Accel::Tcg),
        Some(other) if !other.is_empty() => return Err(Error::Other(format!("RADIFF_ACCEL={other}: use kvm or tcg"))),
        _ => {}
    }
    if std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_err() {
        return Ok(Accel::Tcg);
    }
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let kvm = verdict(&cache.dir("accel")?.join(boot_id.trim()), ("kvm", "tcg"), |log| probe_kvm(log, kernel))?;
    Ok(if kvm { Accel::Kvm } else { Accel::Tcg })
}

/// A probe's yes or no, kept in `file` as `words.0` or `words.1`: read from there, else
/// probed (its log beside it, `FILE.log`) and written. The probes below ask QEMU once
/// what a host can do.
fn verdict(file: &Path, words: (&str, &str), probe: impl FnOnce(&Path) -> Result<bool>) -> Result<bool> {
    if let Ok(text) = std::fs::read_to_string(file) {
        return Ok(text.trim() == words.0);
    }
    let yes = probe(&file.with_extension("log"))?;
    cache::write_atomic(file, format!("{}\n", if yes { words.0 } else { words.1 }).as_bytes())?;
    Ok(yes)
}

/// How QEMU reads the disk images on this host: `io_uring` where its QEMU can (built with
/// liburing), else "" (QEMU's thread pool). With io_uring QEMU's main loop submits and
/// reaps the guest's requests itself, where the thread pool wakes a worker thread for each:
/// measured on 2 cores, four runs of fio_randread_ra_off (23462 reads of 4 KiB) each way,
/// the guest's pattern time 7.51 s -> 6.84 s on average. A kernel that refuses io_uring
/// (`kernel.io_uring_disabled`) leaves QEMU 10 on its thread pool, the same guest either
/// way. Asked once per QEMU binary `qemu` (its path, size and time) and kept in the cache.
fn host_aio(cache: &Cache, qemu: &Path) -> Result<&'static str> {
    let meta = std::fs::metadata(qemu).map_err(|e| Error::io(qemu, e))?;
    let stamp = format!("{:?}", meta.modified().ok());
    let key = cache::key([qemu.to_string_lossy().as_bytes(), &meta.len().to_le_bytes(), stamp.as_bytes()]);
    let io_uring = verdict(&cache.dir("aio")?.join(&key), ("io_uring", "threads"), probe_io_uring)?;
    Ok(if io_uring { "io_uring" } else { "" })
}

/// Starts QEMU stopped (`-S`, no machine) with a drive read through io_uring: a QEMU
/// without it exits at once naming the option; one with it opens the drive and waits,
/// until the probe's timeout stops it.
fn probe_io_uring(log: &Path) -> Result<bool> {
    let _ = std::fs::remove_file(log);
    let cmd = Cmd::new("qemu-system-x86_64").args([
        "-machine",
        "none",
        "-nodefaults",
        "-display",
        "none",
        "-S",
        "-drive",
        "file=/dev/null,if=none,id=probe,format=raw,readonly=on,aio=io_uring",
    ]);
    Ok(matches!(cmd.run_logged(log, Duration::from_secs(2), Duration::from_secs(60), |_| {})?, Outcome::TimedOut(_)))
}

/// Boots `kernel` under KVM with no root file system: a kernel that runs prints its
/// banner and panics looking for init within seconds; a hung KVM prints nothing.
fn probe_kvm(log: &Path, kernel: &Path) -> Result<bool> {
    let _ = std::fs::remove_file(log);
    let cmd = Cmd::new("qemu-system-x86_64")
        .args(["-accel", "kvm", "-m", "256", "-nographic", "-no-reboot", "-kernel"])
        .arg(kernel)
        .args(["-append", "console=ttyS0 panic=-1 earlyprintk=serial"]);
    cmd.run_logged(log, Duration::from_secs(20), Duration::from_secs(60), |_| {})?;
    let text = std::fs::read_to_string(log).unwrap_or_default();
    Ok(text.contains("Kernel panic") || text.contains("VFS:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stand-ins are links to the host's `true` (run, they succeed), made once and kept.
    #[test]
    fn the_programs_skipped_at_boot_are_links_to_true() {
        let tmp = std::env::temp_dir().join(format!("radiff-stand-ins-{}", std::process::id()));
        let cache = Cache { root: tmp.clone() };
        let dir = stand_ins(&cache).unwrap().expect("this host has true");
        assert_eq!(dir, tmp.join("guest-path"));
        for name in SKIPPED_AT_BOOT {
            let link = dir.join(name);
            assert!(std::fs::read_link(&link).unwrap().ends_with("true"), "{}", link.display());
            assert!(std::process::Command::new(&link).arg("--boot").status().unwrap().success());
        }
        assert_eq!(stand_ins(&cache).unwrap(), Some(dir), "a second call finds them made");
        let _ = std::fs::remove_dir_all(&tmp);
    }

    /// A probe runs once: its answer is kept as its word, and read back after.
    #[test]
    fn a_verdict_is_probed_once_then_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("key");
        let probed = std::cell::Cell::new(0);
        let probe = |log: &Path| {
            probed.set(probed.get() + 1);
            assert_eq!(log, dir.path().join("key.log"));
            Ok(false)
        };
        assert!(!verdict(&file, ("yes", "no"), probe).unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "no\n");
        assert!(!verdict(&file, ("yes", "no"), probe).unwrap());
        assert_eq!(probed.get(), 1, "the second call reads the file");
        std::fs::write(&file, "yes\n").unwrap();
        assert!(verdict(&file, ("yes", "no"), probe).unwrap());
        assert_eq!(probed.get(), 1);
    }

    /// Each disk of a boot has its own drive, controller, serial and PCI slot; the guest
    /// finds disk N at disk_pci_address(N).
    #[test]
    fn the_disks_of_a_boot_are_told_apart() {
        let nvme = Disk::Nvme {
            image: "/i/a.img".into(),
            mdts: 7,
            logical_block_size: Some(4096),
            opt_io_size: None,
            min_io_size: None,
            iops_limit: None,
        };
        let ufs = Disk::Ufs { image: "/i/b.img".into() };
        assert_eq!(
            nvme.qemu_opts(true, 0, ""),
            "-drive file=/i/a.img,if=none,id=nvm0,format=raw,cache=writeback,werror=report,rerror=report,snapshot=on -device nvme,serial=radiff0,drive=nvm0,mdts=7,addr=0x10.0,logical_block_size=4096,physical_block_size=4096"
        );
        assert_eq!(
            ufs.qemu_opts(true, 3, "io_uring"),
            "-device ufs,serial=radiff3,id=ufs3,addr=0x13.0 -drive file=/i/b.img,if=none,id=ufsd3,format=raw,cache=writeback,werror=report,rerror=report,snapshot=on,aio=io_uring -device ufs-lu,drive=ufsd3,lun=0,bus=ufs3"
        );
        assert_eq!(disk_pci_address(0), "0000:00:10.0");
        assert_eq!(disk_pci_address(MAX_DISKS - 1), "0000:00:1d.0");
        assert!(FIRST_DISK_SLOT as usize + MAX_DISKS <= 0x1f, "slot 0x1f is the q35 chipset's");
    }

    #[test]
    fn qemu_assertions_are_told_apart_from_guest_failures() {
        let crashed = "pci 0000:00:07.0: [1af4:1003] type 00 class 0x078000 conventional PCI endpoint\n\
            qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: Assertion `section_index < d->map.sections_nb' failed.\n";
        assert_eq!(
            qemu_crash(crashed),
            Some("qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: Assertion `section_index < d->map.sections_nb' failed.")
        );
        assert_eq!(qemu_crash("Kernel panic - not syncing: Attempted to kill init!\n"), None);
        assert_eq!(qemu_crash("radiff-guest: error at step `mounting`: Assertion failed.\n"), None);
        assert_eq!(qemu_crash("qemu-system-x86_64: -device nvme,mdts=99: invalid\n"), None);
    }

    /// The command's status reaches the host even when the command fails, and the guest
    /// reboots whatever the command did (a command that exits its shell included).
    #[test]
    fn the_guest_command_records_its_status_then_reboots() {
        let line = guest_command("exit 3", Path::new("/run/x"));
        assert_eq!(line, "(exit 3); echo $? > /run/x/exit-code; echo b > /proc/sysrq-trigger");
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path();
        // Run it as the guest's shell would, with the reboot taken out.
        let script = guest_command("echo out > made; exit 3", shared)
            .replace("echo b > /proc/sysrq-trigger", "echo after > rebooted");
        let status = std::process::Command::new("sh").arg("-c").arg(&script).current_dir(shared).status().unwrap();
        assert!(status.success(), "{script}");
        assert_eq!(std::fs::read_to_string(shared.join(EXIT_CODE)).unwrap(), "3\n");
        assert_eq!(std::fs::read_to_string(shared.join("rebooted")).unwrap(), "after\n");
    }

    /// A guest that halted (virtme-ng-init's power-off without ACPI) is seen from the end of
    /// its console log, however long the log; a reboot is not a halt.
    #[test]
    fn a_halted_guest_is_seen_in_the_console_tail() {
        let dir = tempfile::tempdir().unwrap();
        let console = dir.path().join("console.log");
        assert!(!halted(&console), "no console yet");
        let boot = "[    0.1] x\n".repeat(5000);
        std::fs::write(&console, format!("{boot}[    5.0] sysrq: Resetting\n")).unwrap();
        assert!(!halted(&console));
        std::fs::write(&console, format!("{boot}[    5.0] virtme-ng-init: failed\n[    5.1] reboot: System halted\n"))
            .unwrap();
        assert!(halted(&console));
        // what 7.3 prints when virtme-ng-init asks for a power-off the kernel cannot do
        std::fs::write(&console, format!("{boot}[    4.4] reboot: Power off not available: System halted instead\n"))
            .unwrap();
        assert!(halted(&console));
    }

    /// The guest's only udev rule is the one systemd ships for virtio ports: if the host's
    /// systemd ever words it differently, this says so before a boot loses its script I/O.
    #[test]
    fn the_guest_udev_rule_is_the_hosts_virtio_ports_rule() {
        let host = Path::new(UDEV_RULES).join("50-udev-default.rules");
        let rules = std::fs::read_to_string(&host)
            .unwrap_or_else(|e| panic!("{}: {e} (./setup installs udev)", host.display()));
        assert!(
            rules.lines().any(|l| l == VIRTIO_PORTS_RULE.trim_end()),
            "{} no longer holds radiff's rule {VIRTIO_PORTS_RULE:?}: update VIRTIO_PORTS_RULE",
            host.display()
        );
    }
}
