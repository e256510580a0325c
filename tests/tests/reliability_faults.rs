//! The quick subset of the fault scenarios (`redq_tests::chaos`), run in CI:
//! every fault of the reliability issue at a small, bounded scale, each
//! checked by the history checker and the structural check. The full run
//! is `scripts/reliability` (see docs/reliability.md).

use std::path::Path;

use redq_tests::chaos::{self, Scale};

/// Seeded, so a failure can be replayed; override with REDQ_CHAOS_SEED.
fn scale() -> Scale {
    let seed = std::env::var("REDQ_CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_240_601);
    Scale::quick(seed)
}

fn worker_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_redq-chaos-worker"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_processes_killed_with_sigkill_lose_nothing() {
    let outcome = chaos::kill_workers(scale(), worker_bin()).await;
    println!("{outcome}");
    outcome.assert_ok();
    assert!(
        outcome.report.get("server_reclaims") > 0,
        "kills caused reclaims"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stopped_past_its_lease_has_its_late_acks_refused() {
    let outcome = chaos::stop_worker(scale(), worker_bin()).await;
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_under_load_loses_no_acknowledged_write() {
    let outcome = chaos::kill_redis(scale()).await;
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_sleep_and_client_pause_past_the_lease_break_nothing() {
    let outcome = chaos::freeze_redis(scale()).await;
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_flush_every_second_reaches_no_caller() {
    let outcome = chaos::script_flush(scale()).await;
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_flood_into_maxmemory_gets_typed_errors_and_drains() {
    let outcome = chaos::memory_flood(scale()).await;
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_with_clocks_skewed_by_thirty_seconds_never_reclaim_early() {
    let Some(outcome) = chaos::skewed_clocks(scale(), worker_bin()).await else {
        // .ci/run installs it; say so loudly rather than pass silently.
        panic!("libfaketime is missing: apt-get install -y faketime");
    };
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_claimers_claim_ten_thousand_jobs_exactly_once() {
    let outcome = chaos::many_claimers(scale(), 100, 10_000).await;
    println!("{outcome}");
    outcome.assert_ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordering_keys_hold_under_random_failures() {
    let outcome = chaos::ordering_under_failures(scale()).await;
    println!("{outcome}");
    outcome.assert_ok();
}
