//! The quick subset of the fault scenarios (`redq_tests::chaos`), run in CI:
//! every fault of the reliability issue at a small, bounded scale, each
//! checked by the history checker and the structural check, and each failing
//! unless the queue drained and the workload really ran (see
//! `redq_tests::chaos::Outcome`). The full run is `scripts/reliability`
//! (see docs/reliability.md).

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
async fn an_operators_cancels_deletes_dead_letters_and_promotes_under_kill_9_stay_final() {
    let outcome = chaos::operator_surgery(scale(), worker_bin()).await;
    println!("{outcome}");
    outcome.assert_ok();
    assert!(
        outcome.report.get("server_cancels") > 0,
        "cancels reached the server"
    );
    assert!(
        outcome.report.get("ended_cancelled") > 0,
        "cancelled jobs counted as ended"
    );
    assert!(
        outcome.report.get("server_operator_dead_letters") > 0,
        "the checker saw the operator's dead-letters"
    );
}

/// Records rewritten to the standard layout, pass after pass, beside a
/// producer still writing compact and detached ones and workers killed
/// with kill -9: every rewrite leaves the job as it was, never touches a
/// running job's record, and nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_rewritten_beside_workers_killed_with_sigkill_stay_the_same_jobs() {
    let outcome = chaos::record_rewrite(scale(), worker_bin()).await;
    println!("{outcome}");
    outcome.assert_ok();
    assert!(
        outcome.report.get("server_rewrites") > 0,
        "the checker saw the rewrites"
    );
}

/// Flow control under kill -9: the queue drains (a killed worker's slots
/// free when its leases lapse), no grant exceeds the queue's or a key's
/// concurrency, no window the rate, and each limit was reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold_and_free_their_slots_while_workers_are_killed_with_sigkill() {
    let outcome = chaos::limits(scale(), worker_bin()).await;
    println!("{outcome}");
    outcome.assert_ok();
    assert!(
        outcome.report.get("server_reclaims") > 0,
        "kills caused reclaims"
    );
}

/// Workflows under kill -9 of workers and of redis-server, SCRIPT FLUSH
/// and reclaims: every batch's and chain's waiters decided by their policy,
/// each released one run by a worker, none released twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workflows_decide_every_waiter_once_under_kills_and_script_flushes() {
    let outcome = chaos::workflows(scale(), worker_bin()).await;
    println!("{outcome}");
    outcome.assert_ok();
    assert!(
        outcome.report.get("server_reclaims") > 0,
        "kills and abandoned leases caused reclaims"
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

/// The same, with every handle calling the scripts as Redis Functions and
/// `FUNCTION FLUSH` as the fault: the checker reads their `FCALL`s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_flush_every_second_reaches_no_caller() {
    let outcome = chaos::function_flush(scale()).await;
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

/// The scenarios cannot pass vacuously: when every skewed worker dies at
/// start-up (here a wrapper that refuses to start under libfaketime), the
/// one true-clock worker still drains the queue and the checker finds no
/// violation, yet the scenario fails, naming the workers and showing their
/// stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skewed_workers_that_crash_at_start_up_fail_the_skewed_clock_scenario() {
    let dir = tempfile::tempdir().expect("temp dir");
    let wrapper = dir.path().join("crashes-when-skewed");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             if [ -n \"$FAKETIME\" ]; then echo 'refusing to start under faketime' >&2; exit 3; fi\n\
             exec '{}' \"$@\"\n",
            worker_bin().display()
        ),
    )
    .expect("writing the wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("making the wrapper executable");
    let Some(outcome) = chaos::skewed_clocks(scale(), &wrapper).await else {
        panic!("libfaketime is missing: apt-get install -y faketime");
    };
    println!("{outcome}");
    assert!(outcome.failed(), "a run without its skewed workers passed");
    let text = outcome.to_string();
    for needle in [
        "worker process 1 (clock +30s) exited by itself",
        "worker 2 never had a claim answered",
        "stderr of worker process 4 (clock +30s)",
        "refusing to start under faketime",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}
