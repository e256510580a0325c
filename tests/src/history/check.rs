//! The checker: reads a whole history (client calls and replies, the
//! server's record of transitions, the final keys) and lists every broken
//! guarantee.
//!
//! | guarantee | how it is checked |
//! |---|---|
//! | every acknowledged enqueue ends exactly once as completed or dead (0 lost) | each created id is completed (client ack, or an ack the server applied: in the MONITOR record, or in the append-only file when the server was killed), or dead, or still live when the run is not drained; a job with no such end and no maybe-applied ack is lost |
//! | 0 completed twice | at most one ack reply `Completed` per job, at most one ack applied by the server; never completed and dead |
//! | no two live leases, on the Redis clock | the next lease of a job is granted at or after the previous lease's latest expiry (claim replies carry the Redis-clock expiry; grant = expiry − lease), unless its holder resolved it; server side: a grant never replaces a lease, a reclaim happens at or after the expiry |
//! | a job runs again only after its lease lapsed or was released / nacked | same checks: the server's grant follows a reclaim (at/after expiry), a nack or a release; a dead job is leased again only after a requeue (client side when the run has none; server side, never granted while its record has a death time) |
//! | stale holders' calls are rejected | an ack `Completed` under lease L while the job had a later lease, or a nack/extend accepted after a later grant, is a violation; server side, a fenced script that wrote under a lease other than the current one |
//! | a reclaimed job waits out its backoff | server side: a job reclaimed (not dead) is not leased again before half its backoff's ceiling for the attempts it had (min(cap, base·2^attempts)/2) has passed since the reclaim, on the Redis clock; the driver draws the delay from [ceiling/2, ceiling] |
//! | a cancel is final | a job whose cancel answered "cancelled" never has an ack answer "completed", is never handed out by a claim made after that answer, and is not live at the end; it counts as ended, not lost |
//! | notes are fenced | server side: progress and log lines are written (by `note`, or riding an `extend`) only for a job leased under the lease presented |
//! | operator surgery stays in its lane | server side: `delete_job` removes a leased job only when told to void leases (force); `edit_job` never rewrites a leased job and changes nothing but the payload; `promote_job` rewrites only scheduled jobs (never leased or dead ones); `dead_letter_job` takes only a job that is neither leased nor dead, and leaves it with a death time; a deleted job counts as ended, not lost |
//! | attempts counted exactly | each nack or reclaim adds exactly one attempt; nothing else (grant, extend, release, any other rewrite) changes them but a dead letter's requeue; a nack reply reports claim attempts + 1; dead letters only when attempts are spent (or forced) |
//! | per-key order | every lease of the n-th job of an ordering key precedes every lease of the (n+1)-th (lease ids are the fencing order); server side, at most one leased job per key at any instant and jobs of a key finish in enqueue order |
//! | unique fencing tokens | lease ids never repeat and grow in server order |
//! | flow control: concurrency, rate, held jobs | server side, in [`super::limits`]: at every grant the queue's and the key's leased jobs within their concurrency; in every window of a rate's interval at most its max starts, on the claim's clock; a held job never leased while held, never lost |
//! | workflows: a waiter waits for its gate, is decided once, by its policy | server side, in [`super::workflows`]: a waiter is released (or leased) only once every member of its gate finished, at most once, never under `success` after a member failed (but by an operator); a member counts once per gate; at the end of a drained run every waiter of a finished gate is decided |
//!
//! Calls without a definite reply are "maybe applied": a check only fails
//! when no reading of those calls explains what was observed.
//!
//! Every violation names the rule it broke ([`ViolationKind`]);
//! `tests/tests/reliability/reliability_checker.rs` shows each kind firing on a broken
//! variant.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use super::aof::DurableResolution;
use super::meta::Meta;
use super::record::{Call, Entry, Reply};
use super::server::{Kind, ServerRecord};
use super::structure::Dump;
use super::violation::{Violation, ViolationKind};

/// What the run promises about its end state.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect {
    /// Every job must have ended (completed or dead) by the final snapshot.
    pub drained: bool,
    /// No dead-letter requeues happened, so a dead job never comes back.
    pub no_requeue: bool,
}

/// The checker's verdict and the run's figures.
#[derive(Debug, Default, Clone)]
pub struct Report {
    pub figures: BTreeMap<&'static str, u64>,
    pub violations: Vec<Violation>,
}

impl Report {
    pub(crate) fn add(&mut self, figure: &'static str, n: u64) {
        *self.figures.entry(figure).or_default() += n;
    }

    /// Raises `figure` to `n` if it is lower (a maximum seen).
    pub(crate) fn at_least(&mut self, figure: &'static str, n: u64) {
        let f = self.figures.entry(figure).or_default();
        *f = (*f).max(n);
    }

    pub(crate) fn violation(&mut self, kind: ViolationKind, text: String) {
        self.violations.push(Violation::new(kind, text));
    }

    /// A figure, 0 when never counted.
    pub fn get(&self, figure: &str) -> u64 {
        self.figures.get(figure).copied().unwrap_or(0)
    }

    /// The kinds of every violation found.
    pub fn kinds(&self) -> BTreeSet<ViolationKind> {
        self.violations.iter().map(|v| v.kind).collect()
    }

    /// Panics with the report when anything was violated.
    #[track_caller]
    pub fn assert_ok(&self) {
        assert!(self.violations.is_empty(), "history check failed:\n{self}");
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let figures: Vec<String> = self
            .figures
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        writeln!(f, "figures: {}", figures.join(" "))?;
        writeln!(f, "violations: {}", self.violations.len())?;
        for v in self.violations.iter().take(40) {
            writeln!(f, "  - {v}")?;
        }
        if self.violations.len() > 40 {
            writeln!(f, "  … and {} more", self.violations.len() - 40)?;
        }
        Ok(())
    }
}

/// One lease a client learned of from a claim reply.
#[derive(Debug, Clone)]
struct LeaseSeen {
    lease: u64,
    grant_ms: u64,
    expiry_ms: u64,
    attempts: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Resolution {
    Nacked {
        attempts: u32,
        dead: bool,
        at_ms: Option<u64>,
    },
    Released,
    Completed,
}

/// Checks a history; `server` is the MONITOR record when one was taken.
pub fn check(
    entries: &[Entry],
    server: Option<&ServerRecord>,
    dump: &Dump,
    expect: Expect,
) -> Report {
    let mut r = Report::default();
    let mut created: BTreeMap<String, String> = BTreeMap::new(); // id -> tag
    let mut tags_enqueued: HashSet<String> = HashSet::new();
    let mut maybe_tags: HashSet<String> = HashSet::new();
    let mut key_order: HashMap<String, Vec<(u32, u64, usize, String)>> = HashMap::new();
    let mut leases: HashMap<String, Vec<LeaseSeen>> = HashMap::new();
    let mut lease_owner: HashMap<u64, String> = HashMap::new();
    let mut completions: HashMap<String, Vec<u64>> = HashMap::new();
    let mut maybe_resolved: HashSet<(String, u64)> = HashSet::new();
    // The leases a release with an unknown reply may have ended: a release
    // leaves the attempts as they were, where a lapse adds one.
    let mut maybe_released: HashSet<(String, u64)> = HashSet::new();
    let mut resolutions: HashMap<(String, u64), Resolution> = HashMap::new();
    let mut extensions: HashMap<(String, u64), Vec<(u64, u64)>> = HashMap::new();
    let mut claimed_tags: HashMap<String, String> = HashMap::new(); // id -> tag
    let mut unknown_claims = 0u64;
    // Job -> when (client clock, µs) its cancel answered "cancelled".
    let mut cancelled_at: HashMap<String, u64> = HashMap::new();
    // Claims: (invoked at, job ids handed out), checked against cancels.
    let mut claims_at: Vec<(u64, Vec<String>)> = Vec::new();

    for e in entries {
        let reply = e.outcome();
        r.add("calls", 1);
        match &reply {
            Reply::Unknown { .. } => r.add("calls_maybe_applied", 1),
            Reply::LeaseLost => r.add("calls_rejected_lease_lost", 1),
            Reply::Failed { .. } => r.add("calls_failed_definitely", 1),
            _ => {}
        }
        match (&e.call, &reply) {
            (Call::Enqueue { tags, keys, .. }, Reply::Enqueued { ids }) => {
                for (i, ((tag, (id, was_created)), key)) in
                    tags.iter().zip(ids).zip(keys).enumerate()
                {
                    tags_enqueued.insert(tag.clone());
                    if *was_created {
                        r.add("enqueued_acknowledged", 1);
                        created.insert(id.clone(), tag.clone());
                        if !key.is_empty() {
                            key_order.entry(key.clone()).or_default().push((
                                e.process,
                                e.seq,
                                i,
                                id.clone(),
                            ));
                        }
                    }
                }
            }
            (Call::Enqueue { tags, .. }, Reply::Unknown { .. }) => {
                r.add("enqueued_maybe", tags.len() as u64);
                maybe_tags.extend(tags.iter().cloned());
            }
            (Call::Enqueue { tags, .. }, _) => {
                r.add("enqueue_refused", tags.len() as u64);
            }
            (Call::Claim { lease_ms, .. }, Reply::Claimed { jobs }) => {
                claims_at.push((e.invoked_us, jobs.iter().map(|j| j.id.clone()).collect()));
                for j in jobs {
                    r.add("leases_seen_by_clients", 1);
                    if let Some(other) = lease_owner.insert(j.lease, j.id.clone()) {
                        r.violation(
                            ViolationKind::LeaseHandedOutTwice,
                            format!(
                                "lease id {} handed out twice (jobs {other} and {})",
                                j.lease, j.id
                            ),
                        );
                    }
                    claimed_tags.insert(j.id.clone(), j.tag.clone());
                    leases.entry(j.id.clone()).or_default().push(LeaseSeen {
                        lease: j.lease,
                        grant_ms: j.expiry_ms.saturating_sub(*lease_ms),
                        expiry_ms: j.expiry_ms,
                        attempts: j.attempts,
                    });
                }
            }
            (Call::Claim { .. }, Reply::Unknown { .. }) => unknown_claims += 1,
            (Call::Ack { id, lease }, Reply::Acked { completed }) => {
                if *completed {
                    r.add("acks_completed", 1);
                    completions.entry(id.clone()).or_default().push(*lease);
                    resolutions.insert((id.clone(), *lease), Resolution::Completed);
                } else {
                    r.add("acks_already_gone", 1);
                }
            }
            (
                Call::Nack {
                    id,
                    lease,
                    delay_ms,
                    ..
                },
                Reply::Nacked {
                    attempts,
                    dead,
                    due_ms,
                },
            ) => {
                r.add(if *dead { "nacks_dead" } else { "nacks_retry" }, 1);
                resolutions.insert(
                    (id.clone(), *lease),
                    Resolution::Nacked {
                        attempts: *attempts,
                        dead: *dead,
                        at_ms: (!*dead).then(|| due_ms.saturating_sub(*delay_ms)),
                    },
                );
            }
            (
                Call::Extend {
                    id,
                    lease,
                    lease_ms,
                },
                Reply::Extended { expiry_ms },
            ) => {
                r.add("extends", 1);
                extensions
                    .entry((id.clone(), *lease))
                    .or_default()
                    .push((*expiry_ms, expiry_ms.saturating_sub(*lease_ms)));
            }
            (
                Call::Cancel { id },
                Reply::Cancel {
                    cancelled: true, ..
                },
            ) => {
                r.add("cancels", 1);
                let at = e.completed_us.unwrap_or(e.invoked_us);
                let first = cancelled_at.entry(id.clone()).or_insert(at);
                *first = (*first).min(at);
            }
            (Call::Release { id, lease }, Reply::Released) => {
                r.add("releases", 1);
                resolutions.insert((id.clone(), *lease), Resolution::Released);
            }
            (Call::Release { id, lease }, Reply::Unknown { .. }) => {
                maybe_resolved.insert((id.clone(), *lease));
                maybe_released.insert((id.clone(), *lease));
            }
            (
                Call::Ack { id, lease }
                | Call::Nack { id, lease, .. }
                | Call::Extend { id, lease, .. },
                Reply::Unknown { .. },
            ) => {
                maybe_resolved.insert((id.clone(), *lease));
            }
            _ => {}
        }
    }

    // Cancelled jobs: never completed, never handed out by a claim made
    // after the cancel answered, not live at the end.
    for (id, at) in &cancelled_at {
        if completions.get(id).is_some_and(|c| !c.is_empty()) {
            r.violation(
                ViolationKind::CancelledAndCompleted,
                format!("job {id}: its cancel answered cancelled, and an ack answered completed"),
            );
        }
        for (invoked, ids) in &claims_at {
            if invoked > at && ids.contains(id) {
                r.violation(
                    ViolationKind::LeasedAfterCancel,
                    format!(
                        "job {id}: handed out by a claim made {} ms after its cancel answered",
                        (invoked - at) / 1000
                    ),
                );
            }
        }
        if dump.jobs.contains_key(id) {
            r.violation(
                ViolationKind::CancelledButLive,
                format!("job {id}: cancelled, but still in the queue at the end"),
            );
        }
    }

    // Which jobs the server saw acked, and deleted by an operator (when it
    // was watched): a deleted job has ended, though never completed.
    let mut server_acked: HashMap<String, u64> = HashMap::new();
    let mut server_deleted: HashSet<String> = HashSet::new();
    if let Some(server) = server {
        for ev in &server.events {
            match ev.kind {
                Kind::Acked => *server_acked.entry(ev.job.clone()).or_default() += 1,
                Kind::Deleted | Kind::Cancelled => {
                    server_deleted.insert(ev.job.clone());
                }
                _ => {}
            }
        }
    }

    // 0 lost, 0 completed twice.
    let dead_final = dump.in_state("dead");
    for (id, tag) in &created {
        let completed = completions.get(id).map_or(0, Vec::len);
        let live = dump.jobs.contains_key(id) && !dead_final.contains(id);
        let dead = dead_final.contains(id);
        if completed > 1 {
            r.violation(
                ViolationKind::CompletedTwice,
                format!(
                    "job {id} ({tag}) completed {completed} times (acks {:?})",
                    completions[id]
                ),
            );
        }
        if completed >= 1 && (live || dead) {
            r.violation(
                ViolationKind::CompletedButLive,
                format!(
                    "job {id} ({tag}) was acknowledged as completed but is still {}",
                    if dead {
                        "in the dead-letter set"
                    } else {
                        "live"
                    }
                ),
            );
        }
        if completed == 0 && !live && !dead {
            let maybe = maybe_resolved.iter().any(|(j, _)| j == id);
            let durable = server
                .and_then(|s| s.durable_deletes.as_ref())
                .is_some_and(|d| d.contains(id));
            if cancelled_at.contains_key(id) {
                r.add("ended_cancelled", 1);
            } else if server_deleted.contains(id) {
                r.add("ended_deleted", 1);
            } else if server_acked.contains_key(id) {
                r.add("completed_without_client_reply", 1);
            } else if durable {
                r.add("completed_per_aof_reply_lost", 1);
            } else if maybe {
                r.add("completed_maybe", 1);
            } else {
                r.violation(ViolationKind::Lost, format!(
                    "job {id} ({tag}) was lost: enqueue acknowledged, never completed, not dead, gone"
                ));
                r.add("lost", 1);
            }
        }
        if dead {
            r.add("ended_dead", 1);
        } else if completed == 1 {
            r.add("ended_completed", 1);
        }
        if live {
            r.add("still_live", 1);
            if expect.drained {
                r.violation(
                    ViolationKind::NeverFinished,
                    format!("job {id} ({tag}) was never finished"),
                );
            }
        }
    }
    for (id, n) in &server_acked {
        if *n > 1 {
            r.violation(
                ViolationKind::ServerAckedTwice,
                format!("the server applied {n} acks to job {id}"),
            );
        }
    }
    for (id, tag) in &claimed_tags {
        if !tags_enqueued.contains(tag) && !maybe_tags.contains(tag) {
            r.violation(
                ViolationKind::ClaimedNeverEnqueued,
                format!("job {id} ({tag}) was claimed but never enqueued"),
            );
        }
    }

    // Leases, as the clients saw them.
    for (id, seen) in &mut leases {
        seen.sort_by_key(|l| l.lease);
        let completed_leases = completions.get(id).cloned().unwrap_or_default();
        for lease in &completed_leases {
            if let Some(later) = seen.iter().find(|l| l.lease > *lease) {
                r.violation(
                    ViolationKind::AckedThenLeasedAgain,
                    format!(
                    "job {id}: an ack under lease {lease} was accepted but lease {} was granted \
                     (stale ack accepted, or the job ran again after completing)",
                    later.lease
                ),
                );
            }
        }
        for pair in seen.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let key = (id.clone(), a.lease);
            let resolution = resolutions.get(&key).copied();
            let maybe = maybe_resolved.contains(&key);
            // The AOF settles a resolution the client was not told of: a
            // reply lost, or a resent call answered `LeaseLost` after its
            // first run applied.
            let durable = server
                .and_then(|s| s.durable_leases.as_ref())
                .and_then(|d| d.resolved_before(id, a.lease, b.lease))
                .filter(|_| resolution.is_none());
            match resolution {
                Some(Resolution::Nacked { at_ms, dead, .. }) => {
                    if dead && expect.no_requeue {
                        r.violation(ViolationKind::LeasedAfterDead, format!(
                            "job {id}: leased again (lease {}) after it was dead-lettered under lease {}",
                            b.lease, a.lease
                        ));
                    }
                    if let Some(at) = at_ms {
                        if at > b.grant_ms + 1 {
                            r.violation(ViolationKind::StaleNackAccepted, format!(
                                "job {id}: a nack under lease {} applied at {at} ms, after lease {} \
                                 was granted at {} ms (stale nack accepted)",
                                a.lease, b.lease, b.grant_ms
                            ));
                        }
                    }
                }
                Some(Resolution::Released) | Some(Resolution::Completed) => {}
                None if maybe => {}
                None if durable.is_some() => r.add("resolved_per_aof_reply_lost", 1),
                None => {
                    let live_until = extensions
                        .get(&key)
                        .into_iter()
                        .flatten()
                        .filter(|(_, at)| *at <= b.grant_ms)
                        .map(|(expiry, _)| *expiry)
                        .fold(a.expiry_ms, u64::max);
                    if b.grant_ms < live_until {
                        r.violation(ViolationKind::TwoLiveLeases, format!(
                            "job {id}: lease {} granted at {} ms while lease {} was live until {} ms \
                             (two live leases on the Redis clock)",
                            b.lease, b.grant_ms, a.lease, live_until
                        ));
                    }
                }
            }
            for (_, at) in extensions.get(&key).into_iter().flatten() {
                if *at > b.grant_ms + 1 {
                    r.violation(
                        ViolationKind::StaleExtendAccepted,
                        format!(
                        "job {id}: an extend under lease {} applied at {at} ms, after lease {} was \
                         granted at {} ms (stale extend accepted)",
                        a.lease, b.lease, b.grant_ms
                    ),
                    );
                }
            }
            // Attempts: +1 after a failure or a lapse, +0 after a release.
            let step = match (resolution, durable) {
                (Some(Resolution::Released), _) | (None, Some(DurableResolution::Released)) => 0,
                (None, None) if maybe_released.contains(&key) => 0,
                _ => 1,
            };
            let exact = unknown_claims == 0
                && server.is_none_or(|s| s.gaps == 0)
                && !maybe
                && durable.is_none();
            let ok = if exact {
                b.attempts == a.attempts + step
            } else {
                b.attempts >= a.attempts + step
            };
            if !ok {
                r.violation(
                    ViolationKind::AttemptsMiscounted,
                    format!(
                        "job {id}: lease {} saw {} attempts, lease {} saw {} (expected {}{})",
                        a.lease,
                        a.attempts,
                        b.lease,
                        b.attempts,
                        if exact { "" } else { "at least " },
                        a.attempts + step
                    ),
                );
            }
        }
        for l in seen.iter() {
            if let Some(Resolution::Nacked { attempts, .. }) =
                resolutions.get(&(id.clone(), l.lease))
            {
                if *attempts != l.attempts + 1 {
                    r.violation(ViolationKind::NackReportedWrongAttempts, format!(
                        "job {id}: claimed with {} attempts under lease {}, its nack reported {attempts}",
                        l.attempts, l.lease
                    ));
                }
            }
        }
    }

    // Per-key order from the clients: all leases of the n-th job of a key
    // come before any lease of the (n+1)-th.
    for (key, mut jobs) in key_order {
        jobs.sort();
        let ids: Vec<&String> = jobs.iter().map(|(_, _, _, id)| id).collect();
        for pair in ids.windows(2) {
            let last_a = leases
                .get(pair[0])
                .and_then(|l| l.iter().map(|x| x.lease).max());
            let first_b = leases
                .get(pair[1])
                .and_then(|l| l.iter().map(|x| x.lease).min());
            if let (Some(a), Some(b)) = (last_a, first_b) {
                if b < a {
                    r.violation(
                        ViolationKind::KeyLeasedOutOfOrder,
                        format!(
                            "ordering key {key:?}: job {} (lease {b}) was leased before job {} \
                         finished (its lease {a})",
                            pair[1], pair[0]
                        ),
                    );
                }
            }
        }
        r.add("ordering_keys", 1);
    }

    if let Some(server) = server {
        check_server(server, &mut r);
        super::limits::check_limits(server, dump, &mut r);
        super::workflows::check_workflows(server, dump, expect.drained, &mut r);
    }
    r
}

/// A record with its lease cleared: what a grant must leave as it found.
fn without_lease(m: &Meta) -> Meta {
    Meta {
        lease_id: 0,
        lease_expiry: 0,
        worker_node: String::new(),
        worker_instance: 0,
        ..m.clone()
    }
}

/// The checks that read the server's own record.
fn check_server(server: &ServerRecord, r: &mut Report) {
    r.add("server_scripts", server.scripts as u64);
    r.add("server_gaps", server.gaps as u64);
    let mut last_lease = 0u64;
    let mut leased_by_key: HashMap<String, String> = HashMap::new();
    let mut finished_seq: HashMap<String, (u64, String)> = HashMap::new();
    // Job -> (reclaimed at, the least delay its backoff allows), until the
    // job's next change.
    let mut backing_off: HashMap<String, (u64, u64)> = HashMap::new();
    for ev in &server.events {
        let (Some(before), after) = (&ev.before, &ev.after) else {
            continue;
        };
        let id = &ev.job;
        let fenced_ok = |presented: Option<u64>| match presented {
            Some(0) | None => true,
            Some(p) => p == before.lease_id,
        };
        let reclaimed = backing_off.remove(id);
        match &ev.kind {
            Kind::Granted => {
                let after = after.as_ref().expect("a grant writes a record");
                r.add("server_grants", 1);
                if let Some((at, least)) = reclaimed {
                    if ev.at_ms() + CLOCK_SLACK_MS < at + least {
                        r.violation(
                            ViolationKind::ServerReclaimedWithoutBackoff,
                            format!(
                                "job {id}: reclaimed at {at} ms and leased again {} ms later \
                                 by {}, before its backoff's least delay of {least} ms",
                                ev.at_ms().saturating_sub(at),
                                ev.script
                            ),
                        );
                    }
                }
                if before.lease_id != 0 {
                    r.violation(
                        ViolationKind::ServerGrantOverLiveLease,
                        format!(
                            "job {id}: lease {} granted over live lease {} (expiry {}) at {} ms \
                         by {} (two live leases)",
                            after.lease_id,
                            before.lease_id,
                            before.lease_expiry,
                            ev.at_ms(),
                            ev.script
                        ),
                    );
                }
                if after.lease_id <= last_lease {
                    r.violation(ViolationKind::ServerLeaseIdsNotGrowing, format!(
                        "job {id}: lease id {} granted after lease id {last_lease} (fencing tokens must grow)",
                        after.lease_id
                    ));
                }
                last_lease = last_lease.max(after.lease_id);
                if without_lease(before) != without_lease(after) {
                    r.violation(
                        ViolationKind::ServerGrantChangedJob,
                        format!(
                            "job {id}: the grant of lease {} by {} changed the record beyond \
                             its lease: {:?} became {:?}",
                            after.lease_id,
                            ev.script,
                            without_lease(before),
                            without_lease(after)
                        ),
                    );
                }
                if let Some(by) = ev.start_by_ms.filter(|by| ev.started_ms() > *by) {
                    r.violation(
                        ViolationKind::ServerGrantedPastStartBy,
                        format!(
                            "job {id}: lease {} granted at {} ms by {}, told to start by {by} ms \
                             (its caller had given up on the reply)",
                            after.lease_id,
                            ev.started_ms(),
                            ev.script
                        ),
                    );
                }
                if before.died_at > 0 {
                    r.violation(
                        ViolationKind::ServerGrantedWhileDead,
                        format!(
                            "job {id}: lease {} granted at {} ms by {} while the job was dead \
                         (died at {} ms, never requeued)",
                            after.lease_id,
                            ev.at_ms(),
                            ev.script,
                            before.died_at
                        ),
                    );
                }
                if !after.ordering_key.is_empty() {
                    if let Some(other) = leased_by_key.get(&after.ordering_key) {
                        if other != id {
                            r.violation(
                                ViolationKind::ServerKeyHeldTwice,
                                format!(
                                "ordering key {:?}: job {id} leased while job {other} is leased",
                                after.ordering_key
                            ),
                            );
                        }
                    }
                    leased_by_key.insert(after.ordering_key.clone(), id.clone());
                }
            }
            Kind::Extended => {
                r.add("server_extends", 1);
                if !fenced_ok(ev.presented) {
                    r.violation(
                        ViolationKind::ServerStaleExtend,
                        format!(
                        "job {id}: extend under lease {:?} accepted while lease {} was current \
                         (stale extend accepted)",
                        ev.presented, before.lease_id
                    ),
                    );
                }
            }
            Kind::Reclaimed { dead } | Kind::Nacked { dead } => {
                let after = after.as_ref().expect("a failure writes a record");
                let reclaim = matches!(ev.kind, Kind::Reclaimed { .. });
                if reclaim {
                    r.add("server_reclaims", 1);
                    if !*dead {
                        backing_off.insert(id.clone(), (ev.at_ms(), least_reclaim_delay(before)));
                    }
                    if ev.at_ms() < before.lease_expiry {
                        r.violation(
                            ViolationKind::ServerEarlyReclaim,
                            format!(
                                "job {id}: lease {} reclaimed at {} ms, before it lapsed at {} ms \
                             (early reclaim)",
                                before.lease_id,
                                ev.at_ms(),
                                before.lease_expiry
                            ),
                        );
                    }
                } else {
                    r.add("server_nacks", 1);
                    if !fenced_ok(ev.presented) {
                        r.violation(
                            ViolationKind::ServerStaleNack,
                            format!(
                            "job {id}: nack under lease {:?} accepted while lease {} was current \
                             (stale nack accepted)",
                            ev.presented, before.lease_id
                        ),
                        );
                    }
                }
                if after.attempts != before.attempts + 1 {
                    r.violation(
                        ViolationKind::ServerFailureNotOneAttempt,
                        format!(
                            "job {id}: a {} took attempts from {} to {} (expected +1)",
                            if reclaim { "reclaim" } else { "nack" },
                            before.attempts,
                            after.attempts
                        ),
                    );
                }
                let spent = after.max_attempts > 0 && after.attempts >= after.max_attempts;
                let windowed = after.retry_window > 0;
                let forced = !reclaim && ev.forced;
                if *dead {
                    r.add("server_dead_letters", 1);
                    if !spent && !windowed && !forced {
                        r.violation(
                            ViolationKind::ServerDeadTooEarly,
                            format!(
                                "job {id}: dead-lettered after {} of {} attempts",
                                after.attempts, after.max_attempts
                            ),
                        );
                    }
                } else if spent {
                    r.violation(
                        ViolationKind::ServerSpentNotDead,
                        format!(
                            "job {id}: {} attempts of {} spent but not dead-lettered",
                            after.attempts, after.max_attempts
                        ),
                    );
                }
                if !before.ordering_key.is_empty() {
                    leased_by_key.remove(&before.ordering_key);
                    if *dead {
                        finish_in_order(&before.ordering_key, before.seq, id, &mut finished_seq, r);
                    }
                }
            }
            Kind::Deleted => {
                r.add("server_deletes", 1);
                if ev.script == "delete_job" && before.lease_id != 0 && !ev.forced {
                    r.violation(
                        ViolationKind::ServerDeletedWhileLeased,
                        format!(
                            "job {id}: deleted while running under lease {} by a delete \
                             that did not ask to void leases",
                            before.lease_id
                        ),
                    );
                }
                if before.lease_id != 0 && !before.ordering_key.is_empty() {
                    leased_by_key.remove(&before.ordering_key);
                }
            }
            Kind::Noted => {
                r.add("server_notes", 1);
                if before.lease_id == 0 || !fenced_ok(ev.presented) {
                    r.violation(
                        ViolationKind::ServerStaleNote,
                        format!(
                            "job {id}: notes written by {} under lease {:?} while lease {} was \
                             current (stale notes accepted)",
                            ev.script, ev.presented, before.lease_id
                        ),
                    );
                }
            }
            Kind::Cancelled => {
                r.add("server_cancels", 1);
                if before.lease_id != 0 && !before.ordering_key.is_empty() {
                    leased_by_key.remove(&before.ordering_key);
                }
            }
            Kind::Edited => {
                r.add("server_edits", 1);
                let after = after.as_ref().expect("an edit writes a record");
                if before.lease_id != 0 {
                    r.violation(
                        ViolationKind::ServerEditedWhileLeased,
                        format!(
                            "job {id}: payload edited while running under lease {}",
                            before.lease_id
                        ),
                    );
                }
                if after != before {
                    r.violation(
                        ViolationKind::ServerEditBeyondPayload,
                        format!(
                            "job {id}: an edit changed its record from {before:?} to {after:?}"
                        ),
                    );
                }
            }
            Kind::Rewritten { payload_kept } => {
                r.add("server_rewrites", 1);
                let after = after.as_ref().expect("a rewrite writes a record");
                if before.lease_id != 0 {
                    r.violation(
                        ViolationKind::ServerRewroteLeased,
                        format!(
                            "job {id}: its record rewritten while running under lease {}",
                            before.lease_id
                        ),
                    );
                }
                if after != before {
                    r.violation(
                        ViolationKind::ServerRewriteChangedJob,
                        format!(
                            "job {id}: a rewrite changed its record from {before:?} to \
                             {after:?}"
                        ),
                    );
                } else if !payload_kept {
                    r.violation(
                        ViolationKind::ServerRewriteChangedJob,
                        format!("job {id}: a rewrite joined another payload to its record"),
                    );
                }
            }
            Kind::Promoted => {
                r.add("server_promotes", 1);
                if before.lease_id != 0 || before.died_at > 0 {
                    r.violation(
                        ViolationKind::ServerPromotedOutOfState,
                        format!(
                            "job {id}: promoted while {}",
                            if before.lease_id != 0 {
                                format!("running under lease {}", before.lease_id)
                            } else {
                                "dead".to_owned()
                            }
                        ),
                    );
                }
            }
            Kind::DeadLettered => {
                r.add("server_operator_dead_letters", 1);
                let died = after.as_ref().is_some_and(|a| a.died_at > 0);
                let was = if before.lease_id != 0 {
                    Some(format!("running under lease {}", before.lease_id))
                } else if before.died_at > 0 {
                    Some("dead already".to_owned())
                } else {
                    (!died).then(|| "left without a death time".to_owned())
                };
                if let Some(was) = was {
                    r.violation(
                        ViolationKind::ServerDeadLetteredOutOfState,
                        format!("job {id}: dead-lettered by an operator while {was}"),
                    );
                }
            }
            Kind::Released => {
                r.add("server_releases", 1);
                if !fenced_ok(ev.presented) {
                    r.violation(
                        ViolationKind::ServerStaleRelease,
                        format!(
                        "job {id}: release under lease {:?} accepted while lease {} was current",
                        ev.presented, before.lease_id
                    ),
                    );
                }
                if !before.ordering_key.is_empty() {
                    leased_by_key.remove(&before.ordering_key);
                }
            }
            Kind::Acked => {
                r.add("server_acks", 1);
                if !fenced_ok(ev.presented) {
                    r.violation(
                        ViolationKind::ServerStaleAck,
                        format!(
                            "job {id}: ack under lease {:?} accepted while lease {} was current \
                         (stale ack accepted)",
                            ev.presented, before.lease_id
                        ),
                    );
                }
                if !before.ordering_key.is_empty() {
                    leased_by_key.remove(&before.ordering_key);
                    finish_in_order(&before.ordering_key, before.seq, id, &mut finished_seq, r);
                }
            }
            _ => {}
        }
        // Only a failure counts an attempt, and only a requeue of a dead
        // letter resets them: every other rewrite keeps them as they were.
        let may_change = matches!(
            ev.kind,
            Kind::Nacked { .. } | Kind::Reclaimed { .. } | Kind::Requeued
        );
        if let Some(after) = after.as_ref().filter(|_| !may_change) {
            if after.attempts != before.attempts {
                r.violation(
                    ViolationKind::ServerAttemptsChangedWithoutFailure,
                    format!(
                        "job {id}: attempts changed from {} to {} by {}, outside a failure",
                        before.attempts, after.attempts, ev.script
                    ),
                );
            }
        }
    }
}

/// How far a grant's `MONITOR` time may precede the Redis time the claim
/// script read (the feed is written as the call starts).
const CLOCK_SLACK_MS: u64 = 5;

/// The least delay a reclaim may give a job whose record was `before`: half
/// its backoff's ceiling for the attempts made so far, the ceiling being
/// min(cap, base * 2^attempts) (the driver's "equal jitter" draws from
/// [ceiling/2, ceiling]). Written out here rather than shared with
/// `lua/lib/retry.lua`: the checker does not reuse the code it checks.
fn least_reclaim_delay(before: &Meta) -> u64 {
    if before.backoff_base == 0 {
        return 0;
    }
    let doubled = before
        .backoff_base
        .saturating_mul(1u64 << before.attempts.min(40));
    doubled.min(before.backoff_cap) / 2
}

/// Jobs of one ordering key must finish in enqueue (seq) order.
fn finish_in_order(
    key: &str,
    seq: u64,
    id: &str,
    finished: &mut HashMap<String, (u64, String)>,
    r: &mut Report,
) {
    if let Some((last, last_id)) = finished.get(key) {
        if seq < *last {
            r.violation(ViolationKind::ServerKeyFinishedOutOfOrder, format!(
                "ordering key {key:?}: job {id} (seq {seq}) finished after job {last_id} (seq {last})"
            ));
        }
    }
    finished.insert(key.to_owned(), (seq, id.to_owned()));
}
