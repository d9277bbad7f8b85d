//! Ctrl-C during explore: the first SIGINT asks the run to stop at its next step.

use crate::error::{Error, Result};

/// Set by SIGINT once [`catch_interrupt`] ran: the search, shrinking and the confirmations
/// stop at their next scenario or confirmation, and the run writes what it has.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

extern "C" fn on_sigint(_: nix::libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Makes the first SIGINT set [`interrupted`] instead of ending the process (a second
/// one ends it as usual: the handler resets itself). VMs run in their own process group,
/// so the running one finishes before the run stops.
pub fn catch_interrupt() -> Result<()> {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(SigHandler::Handler(on_sigint), SaFlags::SA_RESETHAND, SigSet::empty());
    // SAFETY: the handler only stores to an atomic.
    unsafe { sigaction(Signal::SIGINT, &action) }.map_err(|e| Error::Other(format!("cannot catch SIGINT: {e}")))?;
    Ok(())
}
