//! Read-only listings (`queues`, `stats`, `workers`, `schedules`, the jobs
//! table `jobs list` and `dead list` share)
//! and `pause` / `resume`.

use std::time::{Duration, SystemTime};

use redq::{JobState, StatsBucket};
use serde_json::{json, Value};

use crate::aggregate::Target;
use crate::clock;
use crate::failure::Failure;
use crate::output::{job_json, opt_time, outln, print_json, time, Table};
use crate::tui::state::metrics::{rate_text, rates};
use crate::tui::state::rows::{queue_badges, Badge};
use crate::tui::state::QueueRow;

pub async fn queues(queue: &Target, json: bool) -> Result<(), Failure> {
    let (mut all, mut paused_in) = (Vec::new(), Vec::new());
    for name in queue.queues().await? {
        let (counts, stats) = tokio::join!(queue.counts_by_shard(&name), queue.stats(&name));
        let (sum, each) = counts?;
        let paused: Vec<usize> = each
            .iter()
            .enumerate()
            .filter(|(_, shard)| shard.paused)
            .map(|(i, _)| i)
            .collect();
        all.push(QueueRow {
            counts: sum,
            stats: stats?,
        });
        paused_in.push(paused);
    }
    // The console's warnings, by the same function over the same reads
    // (counts, throughput, the worker registry), at each snapshot's Redis
    // time: a script without a TTY sees what the Queues screen shows.
    let workers = queue.workers().await?;
    let warnings: Vec<Vec<Badge>> = all
        .iter()
        .map(|row| queue_badges(row, workers.as_deref(), row.counts.now, row.counts.now))
        .collect();
    let servers = server_note(queue).await;
    if json {
        let rows: Vec<Value> = all
            .iter()
            .zip(&paused_in)
            .zip(&warnings)
            .map(|((row, paused_in), badges)| {
                let c = &row.counts;
                json!({
                    "queue": c.queue,
                    "waiting": c.waiting,
                    "scheduled": c.scheduled,
                    "due": c.due,
                    "leased": c.leased,
                    "dead": c.dead,
                    "blocked": c.blocked,
                    "awaiting": c.awaiting,
                    "held": c.held,
                    "lapsed": c.lapsed,
                    "paused": c.paused,
                    "paused_in": paused_in,
                    "oldest_waiting_enqueued_at": opt_time(c.head_enqueued_at.filter(|_| c.waiting > 0)),
                    "due_since": opt_time(c.due_since),
                    "ready_since": opt_time(c.ready_since()),
                    "server": crate::server::json(&servers),
                    "warnings": badges.iter().map(Badge::code).collect::<Vec<_>>(),
                    "warnings_text": badges.iter().map(Badge::text).collect::<Vec<_>>(),
                })
            })
            .collect();
        print_json(&Value::Array(rows));
        return Ok(());
    }
    queues_table(&all, &warnings).print();
    let names: Vec<String> = all.iter().map(|r| r.counts.queue.clone()).collect();
    super::known::note_if_empty(queue, &names).await
}

/// The queues as a table with every count `-o json` carries. Beside
/// WAITING the due jobs that are not in it (HELD by their limit key's
/// limits, BLOCKED behind an earlier job of their ordering key), which a
/// text reader would otherwise not know are there; then the rest in the
/// order a job goes through them (DUE: those of SCHEDULED whose time has
/// come, which only a claim moves to WAITING, so with no worker left they
/// pile up there; LAPSED: those of LEASED past expiry). OLDEST is how long
/// the longest-ready job has been ready, due ones included. AWAITING are
/// the jobs waiting on other jobs (callbacks, dependents, tree parents,
/// and those held for an operator after a dependency failed), in no
/// other column. WARNINGS are the console's badges as the JSON's words
/// (`no_worker,lapsed`, `-` for none; one word each, so the table still
/// splits on blanks), the pause aside: STATE says it, last, as before.
fn queues_table(all: &[QueueRow], warnings: &[Vec<Badge>]) -> Table {
    let mut t = Table::new(&[
        "QUEUE",
        ">WAITING",
        ">HELD",
        ">BLOCKED",
        ">AWAITING",
        ">SCHEDULED",
        ">DUE",
        ">LEASED",
        ">LAPSED",
        ">DEAD",
        ">OLDEST",
        "WARNINGS",
        "STATE",
    ]);
    for (row, badges) in all.iter().zip(warnings) {
        let c = &row.counts;
        let oldest = match c.ready_since() {
            Some(at) => clock::compact(clock::age(at, c.now)),
            None => "-".into(),
        };
        let words: Vec<&str> = badges
            .iter()
            .filter(|b| !matches!(b, Badge::Paused(_)))
            .map(Badge::code)
            .collect();
        t.row(vec![
            c.queue.clone(),
            c.waiting.to_string(),
            c.held.to_string(),
            c.blocked.to_string(),
            c.awaiting.to_string(),
            c.scheduled.to_string(),
            c.due.to_string(),
            c.leased.to_string(),
            c.lapsed.to_string(),
            c.dead.to_string(),
            oldest,
            match words.is_empty() {
                true => "-".to_owned(),
                false => words.join(","),
            },
            crate::tui::view::facts::pause_of(c).unwrap_or_else(|| "active".to_owned()),
        ]);
    }
    t
}

/// The Redis server's `INFO` for `-o json`, after saying on stderr, in
/// either format, when its memory is nearly full or full (a full Redis
/// refuses enqueues, which counts alone would read as a quiet period).
/// Nothing is said when `INFO` is refused: some managed services refuse it.
async fn server_note(queue: &Target) -> Vec<Option<redq::ServerStats>> {
    let servers = crate::server::read(queue, super::connect::COMMAND_TIMEOUT).await;
    if let Some((_, note)) = crate::server::memory_notice(&servers) {
        eprintln!("redq: {note}");
    }
    servers
}

fn sum_since(stats: &[StatsBucket], now: SystemTime, window: Duration) -> (u64, u64) {
    let since = now.checked_sub(window).unwrap_or(SystemTime::UNIX_EPOCH);
    stats
        .iter()
        .filter(|b| b.start >= since)
        .fold((0, 0), |(p, f), b| (p + b.processed, f + b.failed))
}

pub async fn stats(queue: &Target, only: Option<String>, json: bool) -> Result<(), Failure> {
    let names = match only {
        Some(name) => vec![name],
        None => queue.queues().await?,
    };
    let mut rows = Vec::new();
    for name in names {
        let now = queue.counts(&name).await?.now;
        let stats = queue.stats(&name).await?;
        rows.push((name, now, stats));
    }
    let servers = server_note(queue).await;
    if json {
        let out: Vec<Value> = rows
            .iter()
            .map(|(name, now, stats)| {
                let (p, f) = rates(stats, *now);
                let (p1, f1) = sum_since(stats, *now, Duration::from_secs(60));
                let (p15, f15) = sum_since(stats, *now, Duration::from_secs(900));
                json!({
                    "queue": name,
                    "processed_per_second": p,
                    "failed_per_second": f,
                    "processed_1m": p1, "failed_1m": f1,
                    "processed_15m": p15, "failed_15m": f15,
                    "bucket_seconds": redq::STATS_BUCKET.as_secs(),
                    "server": crate::server::json(&servers),
                    "buckets": stats.iter().map(|b| json!({
                        "start": time(b.start), "processed": b.processed, "failed": b.failed,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        print_json(&Value::Array(out));
        return Ok(());
    }
    let mut t = Table::new(&[
        "QUEUE",
        ">DONE/S",
        ">FAIL/S",
        ">DONE 1m",
        ">FAILED 1m",
        ">DONE 15m",
        ">FAILED 15m",
    ]);
    for (name, now, stats) in &rows {
        let (p, f) = rates(stats, *now);
        let (p1, f1) = sum_since(stats, *now, Duration::from_secs(60));
        let (p15, f15) = sum_since(stats, *now, Duration::from_secs(900));
        t.row(vec![
            name.clone(),
            rate_text(p),
            rate_text(f),
            p1.to_string(),
            f1.to_string(),
            p15.to_string(),
            f15.to_string(),
        ]);
    }
    t.print();
    Ok(())
}

/// Print a page of jobs (shared with `dead list`); with several `shards`
/// each job says which shard holds it (a SHARD column, `shard` in JSON).
pub fn print_jobs(
    jobs: &[redq::JobRecord],
    shards: &[String],
    total: u64,
    offset: u64,
    json: bool,
) {
    if json {
        print_json(&json!({
            "total": total,
            "offset": offset,
            "jobs": jobs.iter().map(|j| job_json(j, shards)).collect::<Vec<_>>(),
        }));
        return;
    }
    let mut columns = vec!["ID", "QUEUE", "STATE", "NAME", ">TRIES", "WHEN", "ERROR"];
    // Held jobs wait on their limit key: a KEY column whenever one has one.
    let keyed = jobs.iter().any(|j| j.limit_key.is_some());
    if keyed {
        columns.insert(4, "KEY");
    }
    // Blocked jobs wait behind their ordering key's holder: which key.
    let ordered = jobs.iter().any(|j| j.state == JobState::Blocked);
    if ordered {
        columns.insert(4, "ORDERING");
    }
    if !shards.is_empty() {
        columns.insert(1, ">SHARD");
    }
    let mut t = Table::new(&columns);
    for j in jobs {
        let when = match j.state {
            JobState::Scheduled => j.due_at,
            JobState::Leased => j.lease_expires_at,
            JobState::Dead => j.died_at,
            JobState::Completed | JobState::Cancelled => j.finished_at,
            _ => Some(j.enqueued_at),
        }
        .map(|at| format!("{}Z", clock::datetime(at).replace(' ', "T")))
        .unwrap_or_else(|| "-".into());
        // A lease past its expiry is no running job (this machine's clock:
        // a skew of seconds only moves when the mark appears).
        let lapsed = j.state == JobState::Leased
            && j.lease_expires_at.is_some_and(|at| at < SystemTime::now());
        let when = if lapsed {
            format!("{when} lapsed")
        } else {
            when
        };
        let mut error = j.last_error.clone().unwrap_or_default();
        if error.chars().count() > 60 {
            error = crate::text::truncate(&error, 60);
        }
        let mut cells = vec![
            j.id.clone(),
            j.queue.clone(),
            j.state.to_string(),
            j.name.clone().unwrap_or_else(|| "-".into()),
            // As the console and `jobs show` write it: tries of the most
            // allowed, so 0 reads as "not tried yet of 5", not as a count.
            crate::tui::view::facts::tries_of(j),
            when,
            error,
        ];
        if keyed {
            cells.insert(4, j.limit_key.clone().unwrap_or_else(|| "-".into()));
        }
        if ordered {
            cells.insert(4, j.ordering_key.clone().unwrap_or_else(|| "-".into()));
        }
        if !shards.is_empty() {
            let shard = crate::aggregate::shard_index(shards, &j.namespace);
            cells.insert(1, shard.map_or_else(|| "?".into(), |i| i.to_string()));
        }
        t.row(cells);
    }
    t.print();
    if !jobs.is_empty() || total > 0 {
        outln!(
            "({} of {total}, from {})",
            jobs.len(),
            if jobs.is_empty() { offset } else { offset + 1 }
        );
    }
}

pub async fn pause(queue: &Target, name: &str, pause: bool, json: bool) -> Result<(), Failure> {
    let before = queue.counts(name).await?.paused;
    // Over shards "paused" means some shard is: only a queue that no shard
    // pauses is surely unchanged by a resume, and only one namespace surely
    // unchanged by a pause. The call is made either way (it finishes a pause
    // or resume left half-applied over shards, and changes nothing else).
    let unchanged = match pause {
        true => before && !queue.is_sharded(),
        false => !before,
    };
    if pause {
        queue.pause(name).await?;
    } else {
        queue.resume(name).await?;
    }
    tracing::info!(queue = %name, paused = pause, changed = !unchanged, "queue pause set");
    if json {
        print_json(&json!({"queue": name, "paused": pause, "changed": !unchanged}));
    } else if unchanged {
        let was = if pause {
            "already paused"
        } else {
            "not paused"
        };
        outln!("{} was {was}; nothing changed", crate::text::inert(name));
    } else {
        outln!(
            "{} {}",
            if pause { "paused" } else { "resumed" },
            crate::text::inert(name)
        );
    }
    Ok(())
}

pub async fn workers(queue: &Target, json: bool) -> Result<(), Failure> {
    let workers = queue.workers().await?;
    if json {
        print_json(&serde_json::to_value(workers.unwrap_or_default()).unwrap_or_default());
        return Ok(());
    }
    let Some(workers) = workers else {
        outln!("no workers registered (this driver version does not report workers yet)");
        return Ok(());
    };
    if workers.is_empty() {
        outln!("no workers registered");
        return Ok(());
    }
    // A worker over several shards is registered on each and listed once
    // (`aggregate::workers`): SHARDS says which, and which lost it.
    let sharded = workers.iter().any(|w| !w.shards.is_empty());
    let mut columns = vec![
        "WORKER",
        "HOST",
        ">PID",
        "QUEUES",
        ">RUNNING",
        "HEARTBEAT",
        ">DONE",
        ">FAILED",
        ">LOST-HANDOFFS",
        ">LOST-CLAIMS",
        "VERSION",
        "WAKE-UPS",
        "STATE",
    ];
    if sharded {
        columns.insert(1, "SHARDS");
    }
    let mut t = Table::new(&columns);
    for w in &workers {
        let mut cells = vec![
            w.id.clone(),
            w.host.clone(),
            w.pid.to_string(),
            w.queues.join(","),
            // A gone worker runs nothing (JSON keeps its last report).
            if w.gone {
                "-".to_owned()
            } else {
                w.in_flight.to_string()
            },
            clock::rfc3339(w.last_heartbeat),
            w.processed.to_string(),
            w.failed.to_string(),
            w.handoffs_lost_text(),
            w.claims_lost_text(),
            w.version_text().to_owned(),
            w.wake_ups_text().to_owned(),
            w.state_text().to_owned(),
        ];
        if sharded {
            cells.insert(1, w.shards_text());
        }
        t.row(cells);
    }
    t.print();
    Ok(())
}

/// `redq schedules`: NEXT marked overdue (and by how long) by the rule the
/// console's screen uses, LAST the last tick (a manual trigger is not a
/// tick: `redq schedules show` and the JSON tell them apart), STATE
/// active, paused or ended.
pub async fn schedules(queue: &Target, json: bool) -> Result<(), Failure> {
    let schedules = super::schedules::stored(queue).await?;
    let now = SystemTime::now();
    if json {
        let rows: Vec<Value> = schedules
            .iter()
            .map(|(shard, s)| super::schedules::record_json(*shard, s, now))
            .collect();
        print_json(&Value::Array(rows));
        return Ok(());
    }
    if schedules.is_empty() {
        outln!("no schedules");
        return Ok(());
    }
    let sharded = schedules.iter().any(|(shard, _)| shard.is_some());
    let mut t = Table::new(&with_shard(
        sharded,
        &[
            "NAME",
            "QUEUE",
            "EXPRESSION",
            "TIMEZONE",
            "NEXT",
            "LAST",
            "STATE",
        ],
    ));
    for (shard, s) in &schedules {
        let row = crate::registry::schedule_row(s, *shard);
        let when = |at: Option<SystemTime>| at.map(clock::rfc3339).unwrap_or_else(|| "-".into());
        let next = match row.overdue_by(now) {
            Some(late) => format!("{} overdue {}", when(row.next_run), clock::compact(late)),
            None => when(row.next_run),
        };
        t.row(shard_cell(
            *shard,
            vec![
                row.name.clone(),
                row.queue.clone(),
                row.expression.clone(),
                row.timezone.clone(),
                next,
                when(row.last_run),
                row.state_text().into(),
            ],
        ));
    }
    t.print();
    Ok(())
}

/// The columns with a SHARD column second, when rows come from several
/// shards.
fn with_shard<'a>(sharded: bool, columns: &[&'a str]) -> Vec<&'a str> {
    let mut columns = columns.to_vec();
    if sharded {
        columns.insert(1, ">SHARD");
    }
    columns
}

/// A row with its shard second, when it came from one of several shards.
fn shard_cell(shard: Option<usize>, mut cells: Vec<String>) -> Vec<String> {
    if let Some(shard) = shard {
        cells.insert(1, shard.to_string());
    }
    cells
}
