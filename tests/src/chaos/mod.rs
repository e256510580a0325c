//! Fault scenarios: each runs a recorded workload against a private
//! redis-server, injects one kind of fault (seeded, bounded in time,
//! loopback only), runs the structural check after every fault, and hands
//! the whole history to the checker. Each returns its figures.
//!
//! A scenario passes only when nothing was broken *and* the run counts as
//! evidence ([`Outcome`]): the queue drained (every acknowledged job
//! completed or dead, nothing live, within a deadline), jobs were created
//! and refused only as the fault explains, faults were injected, every
//! worker had a claim answered and none panicked or crashed, and every
//! history file and `MONITOR` line was read.
//!
//! One file per scenario; `harness` and `fleet` (worker processes) are
//! what they share. The quick CI subset (`tests/tests/reliability/reliability_faults.rs`)
//! runs them at [`Scale::quick`]; the full run (`scripts/reliability`,
//! binary `redq-chaos`) at [`Scale::full`].

mod fleet;
mod harness;
mod outcome;
pub mod workload;

mod freeze_redis;
mod kill_redis;
mod kill_workers;
mod limits;
mod many_claimers;
mod memory_flood;
mod operator_surgery;
mod ordering;
mod record_rewrite;
mod script_flush;
mod skewed_clocks;
mod stop_worker;
mod workflows;

use std::time::Duration;

pub use fleet::FAKETIME_LIB;
pub use outcome::Outcome;

pub use freeze_redis::freeze_redis;
pub use kill_redis::kill_redis;
pub use kill_workers::kill_workers;
pub use limits::limits;
pub use many_claimers::many_claimers;
pub use memory_flood::memory_flood;
pub use operator_surgery::operator_surgery;
pub use ordering::ordering_under_failures;
pub use record_rewrite::record_rewrite;
pub use script_flush::{function_flush, script_flush};
pub use skewed_clocks::skewed_clocks;
pub use stop_worker::stop_worker;
pub use workflows::workflows;

/// How big a run is.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// Jobs per scenario (the many-claimers scenario always uses 10 000).
    pub jobs: usize,
    /// How long faults keep coming.
    pub fault_window: Duration,
    pub seed: u64,
}

impl Scale {
    /// The CI subset: small and bounded.
    pub fn quick(seed: u64) -> Scale {
        Scale {
            jobs: 600,
            fault_window: Duration::from_secs(8),
            seed,
        }
    }

    /// The full run.
    pub fn full(seed: u64) -> Scale {
        Scale {
            jobs: 6000,
            fault_window: Duration::from_secs(60),
            seed,
        }
    }
}
