//! `redq jobs show ID` (and `redq dead show ID`): everything about one job,
//! from the shard that holds it: its record, and the progress and log lines
//! its handler reported; for a finished job its queue keeps, how it
//! finished and its result; for one only a tombstone is left of, that.

use redq::JobResult;
use serde_json::json;

use crate::aggregate::Target;
use crate::clock;
use crate::failure::Failure;
use crate::output::{job_json, outln, print_json, time};
use crate::tui::detail_text::{detail_lines, finished_lines};

pub async fn run(queue: &Target, id: &str, json: bool) -> Result<(), Failure> {
    let shards = queue.shard_namespaces();
    let now = std::time::SystemTime::now();
    let Some(job) = queue.inspect(id).await? else {
        return finished(queue, id, &shards, now, json).await;
    };
    let notes = queue.notes(id).await?;
    let awaits = awaits_line(queue, &job).await?;
    let flow = crate::flow::held::detail_lines(queue, &job, now).await?;
    if json {
        let mut value = job_json(&job, &shards);
        value["progress"] = notes.progress.clone().unwrap_or_default();
        value["log"] = json!(notes.log);
        if let Some(line) = awaits {
            value["awaits_status"] = json!(line);
        }
        for (label, text) in &flow {
            value[label.replace(' ', "_")] = json!(text);
        }
        print_json(&value);
    } else {
        let mut lines = detail_lines(&job, &notes, &shards, now);
        // Why a held job is held, under the state line it explains.
        let at = lines.iter().position(|l| l.starts_with("state"));
        for (i, (label, text)) in flow.iter().enumerate() {
            let at = at.map_or(0, |a| a + 1 + i);
            lines.insert(at, format!("{label:<14}{text}"));
        }
        if let Some(line) = awaits {
            // Under the state line it explains, as in the console's detail.
            let at = lines
                .iter()
                .position(|l| l.starts_with("state"))
                .map_or(0, |i| i + 1);
            lines.insert(at, format!("{:<14}{line}", "awaits"));
            lines.insert(
                at + 1,
                format!("{:<14}redq deps show {}", "", crate::text::inert(id)),
            );
        }
        for line in lines {
            outln!("{}", line.trim_end());
        }
    }
    Ok(())
}

/// What the gate a job awaits says of it (`batch G (7 of 10 finished):
/// waiting for 3 of 10`), or `None` for a job that awaits nothing or whose
/// gate is gone.
async fn awaits_line(queue: &Target, job: &redq::JobRecord) -> Result<Option<String>, Failure> {
    let Some(gate) = job.awaits.as_deref() else {
        return Ok(None);
    };
    let read = crate::workflow::read::gate(queue, gate).await?;
    Ok(read.map(|gate| crate::workflow::why::awaits_line(&gate, &job.id)))
}

/// A kept job as JSON, in the words `redq jobs list --state completed`
/// uses for the same job (`state`, `holder` as `{node, instance}`, times
/// as RFC 3339), with `"kept": true` where a tombstone says `false`.
fn kept_json(kept: &redq::KeptJob, shards: &[String]) -> serde_json::Value {
    let mut value = json!({
        "id": kept.id,
        "queue": kept.queue,
        "state": kept.outcome.as_str(),
        "kept": true,
        "name": kept.name,
        "attempt": kept.attempt,
        "holder": kept.holder.map(|(node, instance)| json!({"node": node, "instance": instance})),
        "enqueued_at": time(kept.enqueued_at),
        "finished_at": time(kept.finished_at),
        "run_time_ms": kept.run_time.map(|d| d.as_millis() as u64),
        "cancelled_by": kept.cancelled_by,
        "cancelled_in": kept.cancelled_in,
        "result": kept.result,
    });
    if !shards.is_empty() {
        value["shard"] = json!(crate::aggregate::shard_index(shards, &kept.namespace));
        value["namespace"] = json!(kept.namespace);
    }
    value
}

/// A job no longer in the queue: what its kept record or tombstone says.
async fn finished(
    queue: &Target,
    id: &str,
    shards: &[String],
    now: std::time::SystemTime,
    json: bool,
) -> Result<(), Failure> {
    match queue.result(id).await? {
        JobResult::Kept(kept) => {
            if json {
                print_json(&kept_json(&kept, shards));
            } else {
                for line in finished_lines(&kept, shards, now) {
                    outln!("{}", line.trim_end());
                }
            }
            Ok(())
        }
        JobResult::Tombstone(tombstone) => {
            let outcome = tombstone.outcome.as_str();
            if json {
                print_json(&json!({
                    "id": id,
                    "state": outcome,
                    "finished_at": time(tombstone.finished_at),
                    "kept": false,
                }));
            } else {
                outln!(
                    "job {} {outcome} at {} UTC; its record is no longer kept",
                    crate::text::inert(id),
                    clock::datetime(tombstone.finished_at)
                );
            }
            Ok(())
        }
        JobResult::Live | JobResult::Unknown => Err(Failure::Failed(format!(
            "no job {}",
            crate::text::inert(id)
        ))),
    }
}
