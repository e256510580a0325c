//! The driver's behaviour against one private `redis-server` per test (the
//! harness that starts them included): one binary, a module per area, so
//! the dependency tree is linked once rather than once per file.

mod cancel_races;
mod cancel_sharded;
mod cancel_states;
mod claim_order;
mod coalescing;
mod concurrency;
mod config;
mod connect;
mod counts_stats;
mod dead_letters;
mod dedup;
mod enqueue;
mod flow_api;
mod flow_limits;
mod flow_rate;
mod flow_support;
mod flow_scripts;
mod fencing;
mod handoff;
mod harness;
mod kept_results;
mod noscript;
mod notes_api;
mod notes_worker;
mod ordering;
mod out_of_memory;
mod payloads;
mod properties;
mod queue_trait;
mod reclaim;
mod reclaim_backoff;
mod resend;
mod schedules;
mod seed_trait;
mod smoke;
mod surgery_bulk;
mod surgery_delete;
mod surgery_edit;
mod surgery_promote;
mod surgery_races;
mod timeouts;
mod validation;
mod worker;
mod worker_memory;
