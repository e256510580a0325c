//! The full reliability run: every fault scenario of `redq_tests::chaos` at
//! full scale, each checked by the history checker and the structural
//! check, with its figures. Run it with `scripts/reliability`.
//!
//! Usage: `redq-chaos [--quick] [--seed N] [--jobs N] [--window SECS] [--only NAME]...`
//! NAME is one of: kill-workers, stop-worker, kill-redis, freeze, script-flush,
//! oom, skew, claimers, ordering, surgery, rewrite, limits, workflows. Exits 1 when any guarantee was broken
//! or a run does not count as evidence (see `redq_tests::chaos::Outcome`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use redq_tests::chaos::{self, Outcome, Scale};

const ALL: [&str; 13] = [
    "kill-workers",
    "stop-worker",
    "kill-redis",
    "freeze",
    "script-flush",
    "oom",
    "skew",
    "claimers",
    "ordering",
    "surgery",
    "rewrite",
    "limits",
    "workflows",
];

fn usage() -> ! {
    eprintln!(
        "usage: redq-chaos [--quick] [--seed N] [--jobs N] [--window SECS] [--only NAME]...\n\
         NAME: {}",
        ALL.join(", ")
    );
    std::process::exit(2);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut seed: u64 = 20_240_601;
    let mut quick = false;
    let mut jobs = None;
    let mut window = None;
    let mut only: Vec<String> = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--quick" => quick = true,
            "--seed" => seed = value().parse().unwrap_or_else(|_| usage()),
            "--jobs" => jobs = Some(value().parse().unwrap_or_else(|_| usage())),
            "--window" => {
                window = Some(Duration::from_secs(
                    value().parse().unwrap_or_else(|_| usage()),
                ))
            }
            "--only" => only.push(value()),
            _ => usage(),
        }
    }
    if only.iter().any(|o| !ALL.contains(&o.as_str())) {
        usage();
    }
    let mut scale = if quick {
        Scale::quick(seed)
    } else {
        Scale::full(seed)
    };
    if let Some(jobs) = jobs {
        scale.jobs = jobs;
    }
    if let Some(window) = window {
        scale.fault_window = window;
    }
    let worker = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("redq-chaos-worker")))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("redq-chaos-worker"));
    println!(
        "redq reliability run: seed {seed}, {} jobs per scenario, fault window {:?}",
        scale.jobs, scale.fault_window
    );
    let started = Instant::now();
    let mut failed = Vec::new();
    for name in ALL {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let outcome: Option<Outcome> = match name {
            "kill-workers" => Some(chaos::kill_workers(scale, &worker).await),
            "stop-worker" => Some(chaos::stop_worker(scale, &worker).await),
            "kill-redis" => Some(chaos::kill_redis(scale).await),
            "freeze" => Some(chaos::freeze_redis(scale).await),
            "script-flush" => Some(chaos::script_flush(scale).await),
            "oom" => Some(chaos::memory_flood(scale).await),
            "skew" => chaos::skewed_clocks(scale, &worker).await,
            "claimers" => Some(chaos::many_claimers(scale, 100, 10_000).await),
            "ordering" => Some(chaos::ordering_under_failures(scale).await),
            "surgery" => Some(chaos::operator_surgery(scale, &worker).await),
            "rewrite" => Some(chaos::record_rewrite(scale, &worker).await),
            "limits" => Some(chaos::limits(scale, &worker).await),
            "workflows" => Some(chaos::workflows(scale, &worker).await),
            _ => unreachable!(),
        };
        match outcome {
            Some(outcome) => {
                println!("{outcome}");
                if outcome.failed() {
                    failed.push(name);
                }
            }
            None => {
                println!(
                    "== {name}: skipped, libfaketime is not installed (apt-get install faketime)\n"
                );
                failed.push(name);
            }
        }
    }
    println!("total: {:.1?}", started.elapsed());
    if failed.is_empty() {
        println!("all guarantees held");
    } else {
        println!("FAILED: {}", failed.join(", "));
        std::process::exit(1);
    }
}
