//! `redq metrics off|on QUEUE`: stop or resume recording a queue's metrics,
//! live (the driver's `Operator::set_metrics_recording`, on every shard).

use serde_json::json;

use super::figures::{recording_json, recording_note};
use crate::aggregate::Target;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;

/// Turn `queue`'s metrics on or off, then say what holds now.
pub async fn run(target: &Target, queue: &str, on: bool, json: bool) -> Result<(), Failure> {
    let switched = target.set_metrics_recording(queue, on).await?;
    let (changed, recording) = (switched.changed, switched.recording);
    tracing::info!(queue = %queue, on, changed, "metrics switched");
    if json {
        let (recording, off_since) = recording_json(recording);
        print_json(&json!({
            "queue": queue,
            "changed": changed,
            "recording": recording,
            "off_since": off_since,
        }));
        return Ok(());
    }
    match recording_note(queue, recording) {
        None => outln!("{} records its metrics", inert(queue)),
        Some(note) => outln!("{}: {note}", inert(queue)),
    }
    if !changed {
        outln!("(nothing changed: it was already so)");
    }
    Ok(())
}
