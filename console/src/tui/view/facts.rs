//! How each fact about a job or a worker is written: one function per
//! fact, used by every list and by the job detail, so a lease holder or a
//! try count reads the same on every screen.

/// Tries made out of the most allowed: `3/5`; `3/∞` when attempts are
/// unlimited.
pub fn tries(attempts: u32, max_attempts: u32) -> String {
    match max_attempts {
        0 => format!("{attempts}/∞"),
        max => format!("{attempts}/{max}"),
    }
}

/// A worker, as the driver's registry names it (`node-instance`, both in
/// decimal): the Leases screen, the Workers screen and the job detail all
/// write a lease holder this way, so one can be looked up in the other.
pub fn worker(node: u64, instance: u32) -> String {
    format!("{node}-{instance}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_always_show_the_limit() {
        assert_eq!(tries(3, 3), "3/3");
        assert_eq!(tries(1, 0), "1/∞");
    }

    #[test]
    fn a_worker_reads_as_the_registry_names_it() {
        assert_eq!(worker(0x9cd2_5af9, 1), "2631031545-1");
    }
}
