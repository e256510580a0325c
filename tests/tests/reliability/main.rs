//! The reliability checker: its verdicts on recorded and crafted histories,
//! and the fault scenarios (killed workers, restarted servers) it judges.

mod reliability_checker;
mod reliability_faults;
