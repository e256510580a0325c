//! An operator cancelling, deleting, dead-lettering and promoting jobs while worker
//! processes run them and are killed with `kill -9` every 2–4 s: cancels
//! race the holders' acks and nacks and the reclaims of killed workers'
//! leases. Every cancel that answered "cancelled" must stay final (the job
//! never completes, is never handed out again, is not left in the queue),
//! deletes, dead-letters and promotes must stay in their lane, and nothing else may be
//! lost: the checker reads the operator's calls with everyone else's.

use std::path::Path;
use std::time::{Duration, Instant};

use fred::interfaces::{ListInterface, SortedSetsInterface};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::fleet::Fleet;
use super::harness::{self, structure_check, QUEUE};
use super::workload::{produce, specs, Behaviour};
use super::{Outcome, Scale};
use crate::history::raw::RawQueue;
use crate::history::record::Reply;
use crate::history::{Recorder, RecordingQueue, ServerLog};
use crate::{unique_namespace, RedisServer};

/// The recorder process number of the operator's calls.
const OPERATOR: u32 = 999;

/// What the operator did, for the figures.
#[derive(Default)]
struct Surgery {
    cancelled_leased: usize,
    cancelled_waiting: usize,
    deleted: usize,
    dead_lettered: usize,
    promoted: usize,
}

pub async fn operator_surgery(scale: Scale, worker_bin: &Path) -> Outcome {
    let started = Instant::now();
    let server = RedisServer::start();
    let ns = unique_namespace("chaos-surgery");
    let url = server.url();
    let log = ServerLog::start(server.port(), None).await;
    let mut rng = StdRng::seed_from_u64(scale.seed);
    // Failures retry after a delay, so there are scheduled jobs to promote.
    let behaviour = Behaviour {
        lease: Duration::from_millis(800),
        work_ms: (2, 8),
        nack: 0.2,
        retry_delay: Duration::from_secs(2),
        ..Behaviour::default()
    };
    let producer = RecordingQueue::new(
        harness::handle(&url, &ns, Duration::from_secs(5)).await,
        Recorder::new(0),
    );
    let client = server.client().await;
    let operator = RawQueue::new(client.clone(), &ns, QUEUE, Recorder::new(OPERATOR), &[]).await;
    let key = |part: &str| format!("{{{ns}}}:q:{QUEUE}:{part}");
    let mut fleet = Fleet::new(worker_bin, &url, &ns);
    fleet.spawn_team(&behaviour, 3, scale.seed);
    let jobs = specs("surgery", 0, scale.jobs, 0, 0);
    let pause = scale.fault_window / (jobs.len() as u32 / 20).max(1);
    let feed = {
        let producer = producer.clone();
        tokio::spawn(async move { produce(&producer, QUEUE, &jobs, 20, pause).await })
    };
    let mut structure = Vec::new();
    let mut surgery = Surgery::default();
    let mut kills = 0;
    let mut next_kill = Instant::now() + Duration::from_millis(rng.random_range(2000..=4000));
    let window = scale.fault_window.max(Duration::from_secs(6));
    let window_end = Instant::now() + window;
    let half_window = Instant::now() + window / 2;
    while Instant::now() < window_end || !feed.is_finished() {
        tokio::time::sleep(Duration::from_millis(rng.random_range(20..=60))).await;
        // One operator action on a job picked from where it is now. Past
        // half the window, an action the run must show and has not yet
        // done goes first, so a short run (CI's) still does each.
        let roll = rng.random_range(0..100);
        let owed = Instant::now() >= half_window;
        let roll = match roll {
            _ if owed && surgery.deleted == 0 => 60,
            _ if owed && surgery.dead_lettered == 0 => 75,
            roll => roll,
        };
        let (set, list) = match roll {
            0..40 => ("leased", false),
            40..85 => ("fifo", true),
            _ => ("scheduled", false),
        };
        let picked: Vec<String> = if list {
            client.lrange(key(set), 0, 9).await.unwrap_or_default()
        } else {
            client
                .zrange(key(set), 0, 9, None, false, None, false)
                .await
                .unwrap_or_default()
        };
        if let Some(id) = picked.get(rng.random_range(0..picked.len().max(1))) {
            match roll {
                0..60 => {
                    if let Reply::Cancel {
                        cancelled: true, ..
                    } = operator.cancel(id).await
                    {
                        if set == "leased" {
                            surgery.cancelled_leased += 1;
                        } else {
                            surgery.cancelled_waiting += 1;
                        }
                    }
                }
                60..75 => surgery.deleted += (operator.delete(id, false).await == 1) as usize,
                // Waiting jobs (75..85) and jobs backing off (85..88) set aside.
                75..88 => {
                    surgery.dead_lettered += (operator.dead_letter_job(id).await == 1) as usize
                }
                _ => surgery.promoted += (operator.promote(id).await == 1) as usize,
            }
        }
        if Instant::now() >= next_kill {
            fleet
                .kill_and_replace(&mut rng, &behaviour, scale.seed)
                .await;
            kills += 1;
            structure_check(&server, &ns, &format!("kill -9 #{kills}"), &mut structure).await;
            next_kill = Instant::now() + Duration::from_millis(rng.random_range(2000..=4000));
        }
        if started.elapsed() > scale.fault_window * 4 + Duration::from_secs(60) {
            break;
        }
    }
    let produced = feed.await.expect("producer task");
    let drained = harness::drain(&producer.queue, Duration::from_secs(60)).await;
    let mut recorded = producer.recorder.entries();
    recorded.extend(operator.recorder.entries());
    let (entries, ended) = harness::end_fleet(fleet, recorded).await;
    let (report, unread) = harness::check(&server, &ns, log, &entries, None).await;
    let mut outcome = Outcome::new(
        "an operator cancels, deletes, dead-letters and promotes while workers are killed",
        started,
        report,
        structure,
    );
    outcome.figure("jobs enqueued", produced.created);
    outcome.figure("running jobs cancelled", surgery.cancelled_leased);
    outcome.figure("waiting jobs cancelled", surgery.cancelled_waiting);
    outcome.figure("jobs deleted", surgery.deleted);
    outcome.figure("jobs dead-lettered", surgery.dead_lettered);
    outcome.figure("retries promoted", surgery.promoted);
    outcome.figure("worker processes killed with -9", kills);
    outcome.require(surgery.cancelled_leased > 0, || {
        "no running job was cancelled".into()
    });
    outcome.require(surgery.deleted > 0, || "no job was deleted".into());
    outcome.require(surgery.dead_lettered > 0, || {
        "no job was dead-lettered".into()
    });
    harness::require_ran(
        &mut outcome,
        drained,
        produced.created,
        produced.unexplained(&[]),
        ("worker processes killed", kills),
    );
    harness::close_fleet_run(&mut outcome, &entries, ended, unread, false);
    outcome
}
