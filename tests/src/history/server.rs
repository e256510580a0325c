//! Turning the server's `MONITOR` record into job transitions.
//!
//! Every transition rewrites the job's record (`HSET {ns}:jobs id value`, or
//! `HSETNX` for a lone enqueue; the value being the msgpack meta followed by
//! the payload) or deletes it (`HDEL {ns}:jobs id`), from inside a script.
//! Comparing each record with the previous one of the same job says what
//! happened: a lease granted or extended, a failure recorded (nack) or a
//! lapsed lease reclaimed, a release, a dead letter, an ack. The script that
//! did it and the lease it was presented come from the `EVALSHA` line before
//! it.

use std::collections::HashMap;

use super::gate::Gate;
use super::meta::Meta;
use super::monitor::{parse_line, GAP};
use super::server_workflow::WorkflowKeys;

/// What one server-side change of a job was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The job was created (enqueue).
    Created,
    /// A new lease was granted (claim).
    Granted,
    /// The current lease's expiry moved (extend).
    Extended,
    /// The holder reported a failure (nack / dead letter).
    Nacked { dead: bool },
    /// A lapsed lease was taken back (reclaim, also done inside claim).
    Reclaimed { dead: bool },
    /// The holder gave the job back without an attempt (release).
    Released,
    /// The job was removed while leased: completed (ack).
    Acked,
    /// A dead letter went back to its queue.
    Requeued,
    /// Deleted by an operator: a dead letter (`delete_dead`), or a job in
    /// any state (`delete_job`).
    Deleted,
    /// Cancelled by an operator (`cancel`): gone from the queue for good.
    Cancelled,
    /// The holder's notes (progress, log lines) were written (`note`, or
    /// riding an `extend`); the record itself is unchanged.
    Noted,
    /// An operator replaced the payload (`edit_job`).
    Edited,
    /// The job's record rewritten in the standard layout
    /// (`rewrite_records`); `payload_kept` when its payload's tag is the
    /// one seen before (or none was seen).
    Rewritten { payload_kept: bool },
    /// An operator made a scheduled job due now (`promote_job`).
    Promoted,
    /// An operator moved a job that waited its turn to the dead-letter set
    /// (`dead_letter_job`).
    DeadLettered,
    /// The job entered its queue's held set (flow control): due, but its
    /// limit key had no room. `key` is the key its held member names.
    Held { key: String },
    /// The job left the held set (taken by a claim, cancelled, deleted).
    Unheld,
    /// A queue's limits changed (`{ns}:limits`): `field` is "Q" (the
    /// queue-wide and each-key limits) or "Q\nK" (key K's override);
    /// `spec` its new value, `None` when deleted. `job` is empty. A
    /// `HSETNX` is `if_absent`: it applies only when the field has no value.
    LimitsSet {
        field: String,
        spec: Option<String>,
        if_absent: bool,
    },
    /// A gate record was written (`{ns}:wf:gates`), `job` being the gate
    /// id; `record` is `None` when the gate's data was deleted.
    GateWritten { record: Option<Gate> },
    /// The job became a member of `gate` (`{ns}:wf:members` "G\nid").
    Joined { gate: String },
    /// The job was counted as a member of `gate` that left for good: its
    /// outcome written to `{ns}:wf:outcomes` ("G\nid"), `outcome` being
    /// the first letter (`c` completed, `d` dead, `x` cancelled, `r` deleted).
    Counted { gate: String, outcome: String },
    /// The job entered `{ns}:wf:awaiting` ("queue\nid"): it waits on a gate.
    Awaiting,
    /// The job left `{ns}:wf:awaiting`: its wait was decided (or it was
    /// cancelled or deleted while waiting).
    LeftAwaiting,
    /// First sight of a job after a gap in the record: a new baseline.
    Rebased,
    /// Removed, but its state before was not seen (after a gap).
    GoneUnseen,
    /// Any other rewrite of the record.
    Other,
}

/// One change of one job, on the server's clock.
#[derive(Debug, Clone)]
pub struct Event {
    pub at_us: u64,
    pub job: String,
    pub kind: Kind,
    /// Name of the script that made the change (`?` when unknown).
    pub script: String,
    /// The lease presented to a fenced script (ack, nack, extend, release).
    pub presented: Option<u64>,
    /// A nack that asked for the dead-letter set (`ARGV[7]` = 1).
    pub forced: bool,
    /// Which script run made the change: runs are numbered in execution
    /// order, so changes with the same number were made atomically.
    pub run: u64,
    /// The lease length a claim asked for (its `ARGV[4]`); with the granted
    /// expiry it gives the claim's own `now`, exactly (expiry − length).
    pub lease_ms: Option<u64>,
    /// The push-back a release asked for (its `ARGV[5]`, ms): the job's
    /// limiter starts nothing for that long.
    pub pushback_ms: Option<u64>,
    /// The moment a claim was told to start by, or lease nothing (its
    /// `ARGV[7]`, Redis time in ms).
    pub start_by_ms: Option<u64>,
    /// How many gaps in the record (server restarts) came before this
    /// change: two changes with the same epoch have nothing unseen between.
    pub epoch: usize,
    /// The record before (None when not seen) and after (None when deleted).
    pub before: Option<Meta>,
    pub after: Option<Meta>,
}

impl Kind {
    /// A change of a workflow's keys, not of a job record: the rules of
    /// [`super::workflows`] read these, the others pass them by.
    pub fn is_workflow(&self) -> bool {
        matches!(
            self,
            Kind::GateWritten { .. }
                | Kind::Joined { .. }
                | Kind::Counted { .. }
                | Kind::Awaiting
                | Kind::LeftAwaiting
        )
    }
}

impl Event {
    /// The server time in milliseconds (floor), comparable with lease expiries.
    pub fn at_ms(&self) -> u64 {
        self.at_us / 1000
    }

    /// When a grant started the job on the Redis clock: the claim's `now`
    /// (its expiry less the lease length it asked for), else the record's time.
    pub fn started_ms(&self) -> u64 {
        match (self.lease_ms, &self.after) {
            (Some(length), Some(after)) if after.lease_expiry >= length => {
                after.lease_expiry - length
            }
            _ => self.at_ms(),
        }
    }
}

/// The server's record of one namespace.
#[derive(Debug, Default)]
pub struct ServerRecord {
    pub events: Vec<Event>,
    /// Times the capture lost its connection (a server restart).
    pub gaps: usize,
    /// Scripts run in the namespace.
    pub scripts: usize,
    /// Job id -> tag, from the payload that follows the meta in each
    /// written record (where it is JSON).
    pub tags: HashMap<String, String>,
    /// Lines that could not be parsed (a line, or a job record in it).
    pub unparsed: usize,
    /// The first few of them, to show.
    pub unparsed_lines: Vec<String>,
    /// Job records deleted according to the append-only file, when it was
    /// read ([`super::aof`]): acks whose effect `MONITOR` missed in a crash.
    pub durable_deletes: Option<std::collections::HashSet<String>>,
    /// Leases granted and resolved according to the append-only file, when
    /// it was read: nacks and releases whose reply was lost or wrong.
    pub durable_leases: Option<super::aof::DurableLeases>,
}

impl ServerRecord {
    /// How many unparsed lines are kept to show.
    const SHOWN: usize = 5;

    fn not_parsed(&mut self, line: &str) {
        self.unparsed += 1;
        if self.unparsed_lines.len() < Self::SHOWN {
            let cut: String = line.chars().take(200).collect();
            self.unparsed_lines.push(cut);
        }
    }

    /// A sentence for the lines that could not be read, if any: with them
    /// the record is partial, so a check that passed may have seen too little.
    pub fn unparsed_problem(&self) -> Option<String> {
        (self.unparsed > 0).then(|| {
            format!(
                "{} MONITOR lines could not be parsed, so the server record is partial; \
                 the first: {}",
                self.unparsed,
                self.unparsed_lines.join(" | ")
            )
        })
    }
}

/// Reads the monitor `lines` of namespace `ns`; `names` maps script SHA-1s
/// to names (see [`crate::lua::load_all`]).
/// The script whose function (`ScriptCalls::Functions`) is `function`.
fn function_script(function: &str) -> Option<&'static str> {
    let variants = redq::lua::VARIANTS.iter().map(|v| v.name);
    redq::lua::SCRIPTS
        .iter()
        .map(|(name, _)| *name)
        .chain(variants)
        .find(|name| redq::lua::function_name(name) == Some(function))
        .map(crate::lua::transition_of)
}

pub fn parse(lines: &[String], ns: &str, names: &HashMap<String, String>) -> ServerRecord {
    let jobs_key = format!("{{{ns}}}:jobs").into_bytes();
    let detached_key = format!("{{{ns}}}:detached").into_bytes();
    let notes_keys = [
        format!("{{{ns}}}:progress").into_bytes(),
        format!("{{{ns}}}:logs").into_bytes(),
    ];
    let tag_prefix = format!("{{{ns}}}:").into_bytes();
    let limits_key = format!("{{{ns}}}:limits").into_bytes();
    // Where an enqueue writes its `enqueued` event (lib/keys.lua K.traffic).
    let traffic_key = format!("{{{ns}}}:events:traffic").into_bytes();
    let is_held_key = |k: &[u8]| k.starts_with(&tag_prefix) && k.ends_with(b":lim_held");
    let workflow_keys = WorkflowKeys::new(ns);
    let mut record = ServerRecord::default();
    let mut run = 0u64;
    let mut known: HashMap<String, Meta> = HashMap::new();
    // The script whose effects the following `lua` lines are.
    let mut script = String::from("?");
    let mut argv: Vec<Vec<u8>> = Vec::new();
    // A lone enqueue's HSETNX of a job unknown after a gap (which may exist
    // unseen): it applied only if the same run then records the job's
    // `enqueued` event (enqueue.lua returns before that otherwise).
    let mut unconfirmed: Option<Event> = None;
    for line in lines {
        if line == GAP {
            record.gaps += 1;
            known.clear();
            unconfirmed = None;
            continue;
        }
        let Some(command) = parse_line(line) else {
            record.not_parsed(line);
            continue;
        };
        let name = command.name();
        if !command.from_lua {
            if name == "evalsha" || name == "eval" || name == "fcall" {
                run += 1;
                unconfirmed = None;
                let numkeys: usize = command.text(2).parse().unwrap_or(0);
                let in_ns = command
                    .args
                    .get(3)
                    .is_some_and(|k| k.starts_with(&tag_prefix));
                script = match name.as_str() {
                    "evalsha" => names
                        .get(&command.text(1))
                        .cloned()
                        .unwrap_or_else(|| "?".into()),
                    // A function is named for its script (`redq_ack_<hash>`).
                    "fcall" => function_script(&command.text(1)).unwrap_or("?").into(),
                    _ => "eval".into(),
                };
                argv = command.args.iter().skip(3 + numkeys).cloned().collect();
                if in_ns {
                    record.scripts += 1;
                }
            }
            continue;
        }
        let arg = |i: usize| -> Option<u64> {
            argv.get(i - 1)
                .and_then(|a| std::str::from_utf8(a).ok()?.parse().ok())
        };
        // Fenced scripts take (job id, lease id) pairs: a single pair at
        // ARGV[3..4], or, batched, n pairs after a count. The lease presented
        // for a job is the argument right after its id.
        let fenced = matches!(
            script.as_str(),
            "ack" | "nack" | "extend" | "release" | "note"
        );
        let presented_for = |id: &[u8]| -> Option<u64> {
            if !fenced {
                return None;
            }
            let at = argv.iter().skip(2).position(|a| a.as_slice() == id)? + 2;
            argv.get(at + 1)
                .and_then(|a| std::str::from_utf8(a).ok()?.parse().ok())
        };
        // A nack that asked for the dead-letter set, or a delete that may
        // void a lease.
        let forced = (script == "nack" && arg(7) == Some(1))
            || (script == "delete_job" && arg(4) == Some(1));
        let lease_ms = (script == "claim").then(|| arg(4)).flatten();
        let pushback_ms = (script == "release").then(|| arg(5)).flatten();
        let start_by_ms = (script == "claim").then(|| arg(7)).flatten();
        let epoch = record.gaps;
        let event = |at_us: u64, job: String, kind: Kind, before: Option<Meta>| Event {
            at_us,
            job,
            kind,
            script: script.clone(),
            presented: None,
            forced,
            run,
            lease_ms,
            pushback_ms,
            start_by_ms,
            epoch,
            after: before.clone(),
            before,
        };
        match name.as_str() {
            "hset" | "hsetnx" if command.args.get(1) == Some(&jobs_key) => {
                for pair in command.args[2..].chunks(2) {
                    let [raw_id, raw] = pair else { continue };
                    let id = String::from_utf8_lossy(raw_id).into_owned();
                    let Some((after, payload)) = Meta::split(raw) else {
                        record.not_parsed(line);
                        continue;
                    };
                    // Every write carries the payload, so a job first seen
                    // after a gap (not only at enqueue) gets its tag too.
                    let tag = serde_json::from_slice::<serde_json::Value>(payload)
                        .ok()
                        .map(|payload| super::record::tag_of(&payload));
                    let tag_before = record.tags.get(&id).cloned();
                    if let Some(tag) = &tag {
                        record.tags.insert(id.clone(), tag.clone());
                    }
                    let before = known.get(&id).cloned();
                    // A lone enqueue writes its record with HSETNX, which
                    // applies only when there is none: a resend's finds
                    // the job and changes nothing.
                    if name == "hsetnx" && before.is_some() {
                        continue;
                    }
                    // After a gap the job may exist unseen: its
                    // `enqueued` event confirms the write (`unconfirmed`).
                    if name == "hsetnx" && record.gaps > 0 {
                        unconfirmed = Some(Event {
                            after: Some(after),
                            ..event(command.at_us, id, Kind::Created, None)
                        });
                        continue;
                    }
                    let kind = match &before {
                        None if script == "enqueue" => Kind::Created,
                        None => Kind::Rebased,
                        Some(_) if script == "edit_job" => Kind::Edited,
                        Some(_) if script == "rewrite_records" => Kind::Rewritten {
                            payload_kept: tag_before.is_none() || tag == tag_before,
                        },
                        Some(_) if script == "promote_job" => Kind::Promoted,
                        Some(_) if script == "dead_letter_job" => Kind::DeadLettered,
                        Some(b) => classify(b, &after),
                    };
                    known.insert(id.clone(), after.clone());
                    record.events.push(Event {
                        at_us: command.at_us,
                        job: id,
                        kind,
                        script: script.clone(),
                        presented: presented_for(raw_id),
                        forced,
                        run,
                        lease_ms,
                        pushback_ms,
                        start_by_ms,
                        epoch,
                        before,
                        after: Some(after),
                    });
                }
            }
            "hset"
                if matches!(script.as_str(), "note" | "extend")
                    && command.args.get(1).is_some_and(|k| notes_keys.contains(k)) =>
            {
                let Some(raw_id) = command.args.get(2) else {
                    record.not_parsed(line);
                    continue;
                };
                let id = String::from_utf8_lossy(raw_id).into_owned();
                let before = known.get(&id).cloned();
                record.events.push(Event {
                    presented: presented_for(raw_id),
                    ..event(command.at_us, id, Kind::Noted, before)
                });
            }
            "xadd" if command.args.get(1) == Some(&traffic_key) => {
                let names_job = |id: &str| {
                    command
                        .args
                        .windows(2)
                        .any(|pair| pair[0] == b"id" && pair[1] == id.as_bytes())
                };
                if let Some(created) = unconfirmed.take_if(|e| names_job(&e.job)) {
                    known.insert(created.job.clone(), created.after.clone().expect("written"));
                    record.events.push(created);
                }
            }
            // A detached record's payload (lua/lib/job_record.lua) is
            // written apart from it: its tag comes from here.
            "hset" if command.args.get(1) == Some(&detached_key) => {
                for pair in command.args[2..].chunks(2) {
                    let [raw_id, payload] = pair else { continue };
                    if let Ok(payload) = serde_json::from_slice::<serde_json::Value>(payload) {
                        let id = String::from_utf8_lossy(raw_id).into_owned();
                        record.tags.insert(id, super::record::tag_of(&payload));
                    }
                }
            }
            "hdel" if command.args.get(1) == Some(&jobs_key) => {
                for field in &command.args[2..] {
                    let id = String::from_utf8_lossy(field).into_owned();
                    let before = known.remove(&id);
                    let kind = match &before {
                        Some(_) if script == "delete_job" => Kind::Deleted,
                        Some(_) if script == "cancel" => Kind::Cancelled,
                        // A claim removes a waiter its gate's decision cancelled.
                        Some(b) if script == "claim" && !b.awaits.is_empty() && b.lease_id == 0 => {
                            Kind::Cancelled
                        }
                        Some(b) if b.lease_id != 0 => Kind::Acked,
                        Some(b) if b.died_at > 0 => Kind::Deleted,
                        Some(_) => Kind::Other,
                        None => Kind::GoneUnseen,
                    };
                    record.events.push(Event {
                        presented: presented_for(field),
                        after: None,
                        ..event(command.at_us, id, kind, before)
                    });
                }
            }
            "zadd" if command.args.get(1).is_some_and(|k| is_held_key(k)) => {
                // ZADD key [NX|XX|GT|LT|CH|INCR]... score member [score member]...
                let rest: Vec<&Vec<u8>> = command.args[2..]
                    .iter()
                    .skip_while(|a| a.first().is_some_and(u8::is_ascii_alphabetic))
                    .collect();
                for pair in rest.chunks(2) {
                    let [_, member] = pair else {
                        record.not_parsed(line);
                        continue;
                    };
                    let Some((key, id)) = held_member(member) else {
                        record.not_parsed(line);
                        continue;
                    };
                    let before = known.get(&id).cloned();
                    record
                        .events
                        .push(event(command.at_us, id, Kind::Held { key }, before));
                }
            }
            "zrem" if command.args.get(1).is_some_and(|k| is_held_key(k)) => {
                for member in &command.args[2..] {
                    let Some((_, id)) = held_member(member) else {
                        record.not_parsed(line);
                        continue;
                    };
                    let before = known.get(&id).cloned();
                    record
                        .events
                        .push(event(command.at_us, id, Kind::Unheld, before));
                }
            }
            "zremrangebylex" | "zpopmin" | "zpopmax" | "zremrangebyrank" | "zremrangebyscore"
                if command.args.get(1).is_some_and(|k| is_held_key(k)) =>
            {
                // These remove members the line does not name: the held set
                // could not be followed, so the record is partial.
                record.not_parsed(line);
            }
            "hset" | "hsetnx" if command.args.get(1) == Some(&limits_key) => {
                for pair in command.args[2..].chunks(2) {
                    let [field, spec] = pair else {
                        record.not_parsed(line);
                        continue;
                    };
                    let kind = Kind::LimitsSet {
                        field: String::from_utf8_lossy(field).into_owned(),
                        spec: Some(String::from_utf8_lossy(spec).into_owned()),
                        if_absent: name == "hsetnx",
                    };
                    record
                        .events
                        .push(event(command.at_us, String::new(), kind, None));
                }
            }
            "hdel" if command.args.get(1) == Some(&limits_key) => {
                for field in &command.args[2..] {
                    let kind = Kind::LimitsSet {
                        field: String::from_utf8_lossy(field).into_owned(),
                        spec: None,
                        if_absent: false,
                    };
                    record
                        .events
                        .push(event(command.at_us, String::new(), kind, None));
                }
            }
            _ => match workflow_keys.changes(&name, &command.args) {
                None => {}
                Some(Err(())) => record.not_parsed(line),
                Some(Ok(changes)) => {
                    for (id, kind) in changes {
                        record.events.push(event(command.at_us, id, kind, None));
                    }
                }
            },
        }
    }
    record
}

/// The limit key and job id of a held-set member `K\n<score, 16 digits>\n<id>`.
fn held_member(member: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(member).ok()?;
    let mut parts = text.splitn(3, '\n');
    let (key, score, id) = (parts.next()?, parts.next()?, parts.next()?);
    (score.len() == 16 && score.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty())
        .then(|| (key.to_owned(), id.to_owned()))
}

fn classify(before: &Meta, after: &Meta) -> Kind {
    let lease_changed = after.lease_id != before.lease_id;
    if after.lease_id != 0 && lease_changed {
        return Kind::Granted;
    }
    if after.lease_id != 0 && after.lease_expiry != before.lease_expiry {
        return Kind::Extended;
    }
    if after.lease_id == 0 && before.lease_id != 0 {
        let dead = after.died_at > 0;
        let lease = before.lease_id as i64;
        return match after.resolved_lease {
            r if r == lease => Kind::Nacked { dead },
            r if r == -lease => Kind::Released,
            _ => Kind::Reclaimed { dead },
        };
    }
    if before.died_at > 0 && after.died_at == 0 {
        return Kind::Requeued;
    }
    Kind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `MONITOR` line of a script's `HSET {ns}:jobs id value`, every byte
    /// of the value escaped the way `sdscatrepr` may.
    fn hset_line(ns: &str, id: &str, value: &[u8]) -> String {
        let escaped: String = value.iter().map(|b| format!("\\x{b:02x}")).collect();
        format!(r#"1.000002 [0 lua] "hset" "{{{ns}}}:jobs" "{id}" "{escaped}""#)
    }

    /// Each event's job, kind, written seq and epoch.
    fn written(parsed: &ServerRecord) -> Vec<(&str, Kind, u64, usize)> {
        parsed
            .events
            .iter()
            .map(|e| {
                let seq = e.after.as_ref().expect("a written record").seq;
                (e.job.as_str(), e.kind.clone(), seq, e.epoch)
            })
            .collect()
    }

    fn meta_with_seq(seq: u64) -> Vec<u8> {
        // Positions as in lua/lib/job_record.lua's M, from 0: queue 4, seq 9.
        let fields: Vec<rmpv::Value> = (0..19)
            .map(|i| match i {
                4 => rmpv::Value::from("q"),
                9 => rmpv::Value::from(seq),
                _ => rmpv::Value::from(0),
            })
            .collect();
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, &rmpv::Value::Array(fields)).unwrap();
        out
    }

    #[test]
    fn the_tag_and_meta_come_from_the_record_with_its_payload_after_the_meta() {
        let names = HashMap::from([("sha".to_owned(), "enqueue".to_owned())]);
        let mut record = meta_with_seq(7);
        record.extend_from_slice(br#"{"tag":"t1"}"#);
        let lines = [
            r#"1.000001 [0 127.0.0.1:5000] "evalsha" "sha" "1" "{n}:jobs""#.to_owned(),
            hset_line("n", "A", &record),
            // A record without a payload still yields its meta, no tag.
            hset_line("n", "B", &meta_with_seq(8)),
        ];
        let parsed = parse(&lines, "n", &names);
        assert_eq!(parsed.unparsed, 0);
        assert_eq!(parsed.tags.get("A").map(String::as_str), Some("t1"));
        assert!(!parsed.tags.contains_key("B"));
        assert_eq!(
            written(&parsed),
            [("A", Kind::Created, 7, 0), ("B", Kind::Created, 8, 0)]
        );
    }

    /// A call by `FCALL` (`ScriptCalls::Functions`) is named for the script
    /// its function is, without any SHA-1 known; a variant's, for the
    /// script it is composed from.
    #[test]
    fn a_function_call_is_named_for_its_script() {
        let enqueue = redq::lua::function_name("enqueue").unwrap();
        let plain = redq::lua::function_name("enqueue_plain").unwrap();
        let lines = [
            format!(r#"1.000001 [0 127.0.0.1:5000] "fcall" "{enqueue}" "1" "{{n}}:jobs""#),
            hset_line("n", "A", &meta_with_seq(3)),
            r#"1.000003 [0 127.0.0.1:5000] "fcall" "redq_nothing_0" "1" "{n}:jobs""#.to_owned(),
            hset_line("n", "B", &meta_with_seq(4)),
            format!(r#"1.000005 [0 127.0.0.1:5000] "fcall" "{plain}" "1" "{{n}}:jobs""#),
            hset_line("n", "C", &meta_with_seq(5)),
        ];
        let parsed = parse(&lines, "n", &HashMap::new());
        assert_eq!(parsed.unparsed, 0);
        let scripts: Vec<_> = parsed
            .events
            .iter()
            .map(|e| (e.job.as_str(), e.script.as_str()))
            .collect();
        assert_eq!(scripts, [("A", "enqueue"), ("B", "?"), ("C", "enqueue")]);
        assert_eq!(parsed.scripts, 3);
    }

    #[test]
    fn held_set_and_limits_writes_become_events_of_their_script_run() {
        let names = HashMap::from([
            ("sha-c".to_owned(), "claim".to_owned()),
            ("sha-l".to_owned(), "limits_set".to_owned()),
        ]);
        let lines = [
            r#"1.000001 [0 127.0.0.1:5000] "evalsha" "sha-l" "1" "{n}:jobs" "q" "ch" "each_key""#,
            r#"1.000002 [0 lua] "hset" "{n}:limits" "q" "0 0 0 2 0 0""#,
            r#"1.000003 [0 127.0.0.1:5000] "evalsha" "sha-c" "1" "{n}:jobs" "q" "ch" "5" "30000""#,
            r#"1.000004 [0 lua] "zadd" "{n}:q:q:lim_held" "0" "acme\n0000000000000007\nA""#,
            r#"1.000005 [0 lua] "zrem" "{n}:q:q:lim_held" "acme\n0000000000000007\nA""#,
            r#"1.000006 [0 lua] "hdel" "{n}:limits" "q\nacme""#,
        ]
        .map(str::to_owned);
        let parsed = parse(&lines, "n", &names);
        assert_eq!(parsed.unparsed, 0, "{:?}", parsed.unparsed_lines);
        let seen: Vec<_> = parsed
            .events
            .iter()
            .map(|e| (e.run, e.job.as_str(), e.kind.clone(), e.lease_ms))
            .collect();
        let limits = |field: &str, spec: Option<&str>| Kind::LimitsSet {
            field: field.into(),
            spec: spec.map(str::to_owned),
            if_absent: false,
        };
        assert_eq!(
            seen,
            [
                (1, "", limits("q", Some("0 0 0 2 0 0")), None),
                (2, "A", Kind::Held { key: "acme".into() }, Some(30000)),
                (2, "A", Kind::Unheld, Some(30000)),
                (2, "", limits("q\nacme", None), Some(30000)),
            ]
        );
    }

    /// A lone enqueue's `HSETNX` applies only where there is no record.
    /// Before any gap the record knows every job; after one, a job it does
    /// not know may exist unseen, so the write counts as a creation only
    /// once the same run records the job's `enqueued` event.
    #[test]
    fn a_lone_enqueues_hsetnx_counts_only_where_it_applied() {
        let names = HashMap::from([("sha".to_owned(), "enqueue".to_owned())]);
        let call = r#"1.000001 [0 127.0.0.1:5000] "evalsha" "sha" "1" "{n}:jobs""#;
        let hsetnx = |id: &str, seq: u64| {
            hset_line("n", id, &meta_with_seq(seq)).replace(r#""hset""#, r#""hsetnx""#)
        };
        let enqueued = |id: &str| {
            format!(
                r#"1.000004 [0 lua] "xadd" "{{n}}:events:traffic" "MAXLEN" "~" "10000" "*" "kind" "enqueued" "queue" "q" "at" "1" "count" "1" "id" "{id}""#
            )
        };
        let lines = [
            call.to_owned(),
            hsetnx("A", 1),
            enqueued("A"),
            // A resend: A is known, so its HSETNX changed nothing.
            call.to_owned(),
            hsetnx("A", 2),
            GAP.to_owned(),
            // After the gap: B was created (its event follows), C was a
            // resend that found its job (the call returned at once).
            call.to_owned(),
            hsetnx("B", 3),
            enqueued("B"),
            call.to_owned(),
            hsetnx("C", 4),
            call.to_owned(),
        ];
        let parsed = parse(&lines, "n", &names);
        assert_eq!(parsed.unparsed, 0, "{:?}", parsed.unparsed_lines);
        assert_eq!(
            written(&parsed),
            [("A", Kind::Created, 1, 0), ("B", Kind::Created, 3, 1)]
        );
    }

    #[test]
    fn a_line_that_cannot_be_parsed_is_reported_with_its_text() {
        let names = HashMap::new();
        let lines = [
            r#"1.000001 [0 127.0.0.1:5000] "ping""#.to_owned(),
            "1.000002 [0 127.0.0.1:5000] unquoted".to_owned(),
            // A job record whose meta is not msgpack.
            r#"1.000003 [0 lua] "hset" "{n}:jobs" "A" "not msgpack""#.to_owned(),
        ];
        let parsed = parse(&lines, "n", &names);
        assert_eq!(parsed.unparsed, 2);
        let problem = parsed.unparsed_problem().expect("a problem");
        assert!(
            problem.starts_with("2 MONITOR lines could not be parsed"),
            "{problem}"
        );
        assert!(
            problem.contains("unquoted") && problem.contains("not msgpack"),
            "{problem}"
        );
        assert!(parse(&lines[..1], "n", &names).unparsed_problem().is_none());
    }
}
