//! The workflow rules (batches, dependencies, trees: one thing inside, a
//! *gate* with members and waiters; `lua/lib/gate.lua`), checked on the
//! server's own record (`MONITOR`) and the final snapshot.
//!
//! The rules judge what happened to the jobs, read from their records,
//! not the gate's own bookkeeping: a member has finished when its record
//! says so (an ack, a dead letter, a cancel or a delete removed or
//! rewrote it), whatever the gate's `pending` says, so a script that
//! miscounts is caught by what it let through.
//!
//! | rule | how |
//! |---|---|
//! | a waiter waits for every member | when a waiter is released (a claim or an operator's release takes it out of `wf:awaiting` and the job stays live) or first leased, every member of its gate has finished: none is live as last seen with no gap in the record since |
//! | one decision per waiter | a waiter is released by at most one script run, and a decision written into its gate's record never changes, but a `held` one (an operator's release or failure ends it) |
//! | a member counts once per gate | one outcome written per member and gate (`wf:outcomes`); every gate record has `pending` ≥ 0 and `succeeded + failed` ≤ `total` |
//! | the policy holds | a waiter under the condition `success` released by a claim (not an operator) has no member whose first end was a failure (dead letter, cancel, delete) |
//! | every waiter is decided | at the end of a drained run, every waiter of a gate that is done (or sealed with nothing pending) has a decision |
//!
//! Across a gap in the record (a server restart) a member's end may have
//! gone unseen: a member last seen live before a gap is not taken as
//! unfinished, and two writes with a gap between them are not taken as a
//! repetition (counted as `workflow_findings_dropped_after_gaps`).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::check::Report;
use super::gate::{is_final, Gate};
use super::server::{Event, Kind, ServerRecord};
use super::structure::Dump;
use super::violation::ViolationKind;

/// How a job left for good, as its record showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Completed,
    Dead,
    Cancelled,
    Deleted,
    /// Gone while unseen (after a gap): finished, how is not known.
    Unknown,
}

impl End {
    fn failed(self) -> bool {
        matches!(self, End::Dead | End::Cancelled | End::Deleted)
    }

    fn words(self) -> &'static str {
        match self {
            End::Completed => "completed",
            End::Dead => "dead-lettered",
            End::Cancelled => "cancelled",
            End::Deleted => "deleted",
            End::Unknown => "gone",
        }
    }
}

/// A job as last seen: live since epoch `e`, or ended.
#[derive(Debug, Clone, Copy)]
enum Life {
    Live { epoch: usize },
    Ended(End),
}

#[derive(Default)]
struct Replay {
    life: HashMap<String, Life>,
    /// Gate -> member -> its first end once a member (None: not yet).
    members: BTreeMap<String, BTreeMap<String, Option<End>>>,
    /// Gate -> its last record written.
    gates: HashMap<String, (Gate, usize)>,
    /// Waiter -> the gate it waits on (its record's `awaits`).
    awaits: HashMap<String, String>,
    /// Waiters in `wf:awaiting`, as replayed.
    awaiting: HashSet<String>,
    /// (gate, member) -> the epoch its outcome was written in.
    counted: HashMap<(String, String), usize>,
    /// Waiter -> how many script runs released it.
    releases: HashMap<String, u64>,
    /// Waiters whose release (or first lease) was judged.
    judged: HashSet<String>,
    /// Gates whose counts were found wrong (reported once each).
    miscounted: HashSet<String>,
}

/// Checks the workflow rules on `server`'s record and, when `drained`, the
/// final snapshot `dump`.
pub fn check_workflows(server: &ServerRecord, dump: &Dump, drained: bool, r: &mut Report) {
    let mut replay = Replay::default();
    let mut i = 0;
    let events = &server.events;
    while i < events.len() {
        // One script run at a time: its effects are atomic, and whether a
        // waiter that left `wf:awaiting` was released or ended is only
        // known once the whole run is read.
        let run = events[i].run;
        let end = events[i..]
            .iter()
            .position(|e| e.run != run)
            .map_or(events.len(), |n| i + n);
        replay.run(&events[i..end], r);
        i = end;
    }
    for n in replay.releases.values() {
        r.add("workflow_waiters_released", 1);
        r.at_least("workflow_max_releases_of_a_waiter", *n);
    }
    r.add("workflow_gates_seen", replay.members.len() as u64);
    if drained {
        never_decided(dump, r);
    }
}

impl Replay {
    fn run(&mut self, run: &[Event], r: &mut Report) {
        let mut left_awaiting: Vec<&Event> = Vec::new();
        // Waiters leased in this run, judged after its releases (a claim
        // that releases a waiter may lease it at once).
        let mut leased: Vec<&Event> = Vec::new();
        for ev in run {
            match &ev.kind {
                Kind::GateWritten { record } => self.gate_written(ev, record.as_ref(), r),
                Kind::Joined { gate } => self.join(gate, &ev.job),
                Kind::Counted { gate, outcome } => self.counted(ev, gate, outcome, r),
                Kind::Awaiting => {
                    self.awaiting.insert(ev.job.clone());
                }
                Kind::LeftAwaiting => {
                    if self.awaiting.remove(&ev.job) {
                        left_awaiting.push(ev);
                    }
                }
                _ => {
                    if self.job_changed(ev) {
                        leased.push(ev);
                    }
                }
            }
        }
        for ev in left_awaiting {
            // Left the wait and still live: released (a dead letter or a
            // cancel of the waiter ended it in the same run).
            if !matches!(self.life.get(&ev.job), Some(Life::Live { .. })) {
                continue;
            }
            let n = self.releases.entry(ev.job.clone()).or_default();
            *n += 1;
            if *n == 2 {
                r.violation(
                    ViolationKind::ServerWaiterDecidedTwice,
                    format!(
                        "waiter {}: released a second time at {} ms by {}",
                        ev.job,
                        ev.at_ms(),
                        ev.script
                    ),
                );
            }
            self.judge_release(ev, "released", r);
        }
        for ev in leased {
            self.judge_release(ev, "leased", r);
        }
    }

    /// Replays a change of a job record; true when it leased a waiter.
    fn job_changed(&mut self, ev: &Event) -> bool {
        let id = &ev.job;
        match &ev.after {
            Some(after) => {
                if !after.gate.is_empty() {
                    self.join(&after.gate, id);
                }
                if !after.awaits.is_empty() {
                    self.awaits.insert(id.clone(), after.awaits.clone());
                }
                if after.died_at > 0 {
                    self.ended(id, End::Dead);
                } else {
                    self.life.insert(id.clone(), Life::Live { epoch: ev.epoch });
                }
                return ev.kind == Kind::Granted && self.awaits.contains_key(id);
            }
            None if ev.before.is_none() && ev.kind != Kind::GoneUnseen => {}
            None => {
                let end = match ev.kind {
                    Kind::Acked => End::Completed,
                    Kind::Cancelled => End::Cancelled,
                    Kind::Deleted => End::Deleted,
                    _ => End::Unknown,
                };
                self.ended(id, end);
            }
        }
        false
    }

    /// The job left for good: its first end, for each gate it is a member of.
    fn ended(&mut self, id: &str, end: End) {
        if matches!(self.life.get(id), Some(Life::Ended(_))) {
            return;
        }
        self.life.insert(id.to_owned(), Life::Ended(end));
        for members in self.members.values_mut() {
            if let Some(first @ None) = members.get_mut(id) {
                *first = Some(end);
            }
        }
    }

    fn join(&mut self, gate: &str, id: &str) {
        let already = match self.life.get(id) {
            Some(Life::Ended(end)) => Some(*end),
            _ => None,
        };
        self.members
            .entry(gate.to_owned())
            .or_default()
            .entry(id.to_owned())
            .or_insert(already);
    }

    fn counted(&mut self, ev: &Event, gate: &str, outcome: &str, r: &mut Report) {
        r.add("workflow_members_counted", 1);
        let key = (gate.to_owned(), ev.job.clone());
        match self.counted.insert(key, ev.epoch) {
            Some(epoch) if epoch == ev.epoch => r.violation(
                ViolationKind::ServerMemberCountedTwice,
                format!(
                    "member {} of gate {gate}: counted again at {} ms by {} (outcome {outcome:?})",
                    ev.job,
                    ev.at_ms(),
                    ev.script
                ),
            ),
            Some(_) => r.add("workflow_findings_dropped_after_gaps", 1),
            None => {}
        }
    }

    fn gate_written(&mut self, ev: &Event, record: Option<&Gate>, r: &mut Report) {
        let gate = &ev.job;
        let Some(new) = record else {
            self.gates.remove(gate);
            return;
        };
        r.add("workflow_gate_writes", 1);
        if (new.pending < 0 || new.succeeded + new.failed > new.total)
            && self.miscounted.insert(gate.clone())
        {
            r.violation(
                ViolationKind::ServerMemberCountedTwice,
                format!(
                    "gate {gate}: written by {} at {} ms with {} total, {} pending, {} \
                     succeeded, {} failed (a member counted more than once)",
                    ev.script,
                    ev.at_ms(),
                    new.total,
                    new.pending,
                    new.succeeded,
                    new.failed
                ),
            );
        }
        if let Some((old, epoch)) = self.gates.get(gate) {
            for before in &old.waiters {
                let Some(after) = new.waiter(&before.id) else {
                    continue;
                };
                let changed = after.decision != before.decision;
                let by_operator = before.decision == "held"
                    && matches!(
                        after.decision.as_str(),
                        "operator_released" | "operator_failed"
                    );
                let undecided = before.decision.is_empty() && !after.decision.is_empty();
                if changed && !by_operator && !undecided {
                    if *epoch != ev.epoch {
                        r.add("workflow_findings_dropped_after_gaps", 1);
                        continue;
                    }
                    r.violation(
                        ViolationKind::ServerWaiterDecidedTwice,
                        format!(
                            "waiter {} of gate {gate}: decided {:?}, then {:?} by {} at {} ms",
                            before.id,
                            before.decision,
                            after.decision,
                            ev.script,
                            ev.at_ms()
                        ),
                    );
                }
            }
        }
        self.gates.insert(gate.clone(), (new.clone(), ev.epoch));
    }

    /// A waiter was released (`how`), or leased: every member of its gate
    /// finished, and under `success` none failed, unless an operator
    /// released it.
    fn judge_release(&mut self, ev: &Event, how: &str, r: &mut Report) {
        let waiter = &ev.job;
        if !self.judged.insert(waiter.clone()) {
            return;
        }
        let Some(gate) = self.awaits.get(waiter) else {
            return;
        };
        let members = self.members.get(gate).cloned().unwrap_or_default();
        let mut unfinished = Vec::new();
        let mut unsure = 0;
        for id in members.keys() {
            match self.life.get(id) {
                Some(Life::Live { epoch }) if *epoch == ev.epoch => unfinished.push(id.as_str()),
                Some(Life::Live { .. }) => unsure += 1,
                _ => {}
            }
        }
        if unsure > 0 {
            r.add("workflow_findings_dropped_after_gaps", 1);
        }
        if let Some(first) = unfinished.first() {
            r.violation(
                ViolationKind::ServerWaiterReleasedEarly,
                format!(
                    "waiter {waiter} of gate {gate}: {how} at {} ms by {} while {} of its {} \
                     members had not finished (job {first} among them)",
                    ev.at_ms(),
                    ev.script,
                    unfinished.len(),
                    members.len()
                ),
            );
        }
        let Some((record, _)) = self.gates.get(gate) else {
            return;
        };
        let Some(spec) = record.waiter(waiter) else {
            return;
        };
        let by_operator = ev.script == "gate_decide" || spec.decision == "operator_released";
        if spec.condition != "success" || by_operator || record.state == "cancelled" {
            return;
        }
        let failed = members
            .iter()
            .find_map(|(id, end)| end.filter(|e| e.failed()).map(|e| (id, e)));
        if let Some((id, end)) = failed {
            r.violation(
                ViolationKind::ServerReleasedDespiteFailure,
                format!(
                    "waiter {waiter} of gate {gate}: {how} at {} ms by {} under the condition \
                     success, although member {id} was {}",
                    ev.at_ms(),
                    ev.script,
                    end.words()
                ),
            );
        }
    }
}

/// At the end of a drained run: every waiter of a gate whose members are
/// done has a decision.
fn never_decided(dump: &Dump, r: &mut Report) {
    for (gate, record) in &dump.gates {
        let Some(record) = record else {
            continue;
        };
        let finished = record.state == "done"
            || record.state == "cancelled"
            || (record.state == "sealed" && record.pending <= 0);
        if !finished {
            continue;
        }
        r.add("workflow_gates_finished", 1);
        for w in &record.waiters {
            if w.decision.is_empty() {
                r.violation(
                    ViolationKind::WaiterNeverDecided,
                    format!(
                        "waiter {} of gate {gate} ({}, {} of {} members pending): never \
                         decided by the end of the run",
                        w.id, record.state, record.pending, record.total
                    ),
                );
            } else if is_final(&w.decision) {
                r.add("workflow_waiters_decided", 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::gate::Waiter;
    use crate::history::meta::Meta;

    /// A hand-made server record, one script run per call of `run`.
    #[derive(Default)]
    struct Record {
        events: Vec<Event>,
        run: u64,
        epoch: usize,
        known: HashMap<String, Meta>,
    }

    impl Record {
        fn run(&mut self, script: &str, changes: Vec<(&str, Kind, Option<Meta>)>) {
            self.run += 1;
            for (job, kind, after) in changes {
                let before = match kind {
                    _ if kind.is_workflow() => None,
                    _ => self.known.get(job).cloned(),
                };
                match &after {
                    Some(m) => self.known.insert(job.to_owned(), m.clone()),
                    None if !kind.is_workflow() => self.known.remove(job),
                    None => None,
                };
                self.events.push(Event {
                    at_us: self.run * 1000,
                    job: job.to_owned(),
                    kind,
                    script: script.to_owned(),
                    presented: None,
                    forced: false,
                    run: self.run,
                    lease_ms: None,
                    pushback_ms: None,
                    start_by_ms: None,
                    epoch: self.epoch,
                    before,
                    after,
                });
            }
        }

        fn check(self, dump: &Dump) -> Report {
            let server = ServerRecord {
                events: self.events,
                gaps: self.epoch,
                ..ServerRecord::default()
            };
            let mut r = Report::default();
            check_workflows(&server, dump, true, &mut r);
            r
        }
    }

    fn member(gate: &str) -> Meta {
        Meta {
            queue: "q".into(),
            gate: gate.into(),
            ..Meta::default()
        }
    }

    fn leased(mut m: Meta, lease: u64) -> Meta {
        m.lease_id = lease;
        m
    }

    fn gate(state: &str, pending: i64, decision: &str) -> Kind {
        Kind::GateWritten {
            record: Some(Gate {
                kind: "batch".into(),
                state: state.into(),
                total: 2,
                pending,
                succeeded: 2 - pending,
                failed: 0,
                waiters: vec![Waiter {
                    id: "W".into(),
                    queue: "q".into(),
                    condition: "success".into(),
                    on_failure: "cancel".into(),
                    decision: decision.into(),
                }],
            }),
        }
    }

    /// Gate G with members A and B and waiter W under `success`, sealed;
    /// A completes; then `b_ends` for B.
    fn sealed_with_a_done(b_ends: bool) -> Record {
        let mut rec = Record::default();
        let waiter = Meta {
            queue: "q".into(),
            awaits: "G".into(),
            ..Meta::default()
        };
        rec.run(
            "enqueue",
            vec![
                ("A", Kind::Created, Some(member("G"))),
                ("A", Kind::Joined { gate: "G".into() }, None),
                ("B", Kind::Created, Some(member("G"))),
                ("B", Kind::Joined { gate: "G".into() }, None),
            ],
        );
        rec.run(
            "gate_seal",
            vec![
                ("W", Kind::Rebased, Some(waiter)),
                ("W", Kind::Awaiting, None),
                ("G", gate("sealed", 2, ""), None),
            ],
        );
        for (lease, id) in [(1, "A"), (2, "B")] {
            rec.run(
                "claim",
                vec![(id, Kind::Granted, Some(leased(member("G"), lease)))],
            );
        }
        rec.run(
            "ack",
            vec![("A", Kind::Acked, None), ("G", gate("sealed", 1, ""), None)],
        );
        if b_ends {
            rec.run(
                "ack",
                vec![("B", Kind::Acked, None), ("G", gate("done", 0, ""), None)],
            );
        }
        rec
    }

    fn release(rec: &mut Record) {
        let waiter = Meta {
            queue: "q".into(),
            awaits: "G".into(),
            ..Meta::default()
        };
        rec.run(
            "claim",
            vec![
                ("W", Kind::LeftAwaiting, None),
                ("G", gate("done", 0, "released"), None),
                ("W", Kind::Granted, Some(leased(waiter, 9))),
            ],
        );
    }

    fn finished_gate(decision: &str) -> Dump {
        let Kind::GateWritten { record: Some(g) } = gate("done", 0, decision) else {
            unreachable!()
        };
        Dump {
            gates: BTreeMap::from([("G".to_owned(), Some(g))]),
            ..Dump::default()
        }
    }

    #[test]
    fn a_waiter_released_once_after_its_members_passes() {
        let mut rec = sealed_with_a_done(true);
        release(&mut rec);
        let r = rec.check(&finished_gate("released"));
        assert!(r.violations.is_empty(), "{r}");
        assert_eq!(r.get("workflow_waiters_released"), 1);
        assert_eq!(r.get("workflow_max_releases_of_a_waiter"), 1);
    }

    #[test]
    fn a_waiter_released_while_a_member_runs_is_caught() {
        let mut rec = sealed_with_a_done(false);
        release(&mut rec);
        let r = rec.check(&finished_gate("released"));
        assert_eq!(
            r.kinds(),
            [ViolationKind::ServerWaiterReleasedEarly].into(),
            "{r}"
        );
    }

    #[test]
    fn after_a_gap_a_member_last_seen_live_is_not_taken_as_unfinished() {
        let mut rec = sealed_with_a_done(false);
        rec.epoch = 1;
        release(&mut rec);
        let r = rec.check(&finished_gate("released"));
        assert!(r.violations.is_empty(), "{r}");
        assert_eq!(r.get("workflow_findings_dropped_after_gaps"), 1);
    }

    #[test]
    fn a_release_under_success_after_a_member_died_is_caught() {
        let mut rec = sealed_with_a_done(false);
        let mut dead = member("G");
        dead.died_at = 5;
        rec.run("nack", vec![("B", Kind::Nacked { dead: true }, Some(dead))]);
        release(&mut rec);
        let r = rec.check(&finished_gate("released"));
        assert_eq!(
            r.kinds(),
            [ViolationKind::ServerReleasedDespiteFailure].into(),
            "{r}"
        );
    }

    #[test]
    fn a_decision_changed_or_a_second_release_is_caught() {
        let mut rec = sealed_with_a_done(true);
        release(&mut rec);
        rec.run(
            "gate_decide",
            vec![("G", gate("done", 0, "operator_released"), None)],
        );
        let r = rec.check(&finished_gate("operator_released"));
        assert_eq!(
            r.kinds(),
            [ViolationKind::ServerWaiterDecidedTwice].into(),
            "{r}"
        );

        let mut rec = sealed_with_a_done(true);
        release(&mut rec);
        rec.run("claim", vec![("W", Kind::Awaiting, None)]);
        release(&mut rec);
        let r = rec.check(&finished_gate("released"));
        assert_eq!(
            r.kinds(),
            [ViolationKind::ServerWaiterDecidedTwice].into(),
            "{r}"
        );
        assert_eq!(r.get("workflow_max_releases_of_a_waiter"), 2);
    }

    #[test]
    fn a_member_counted_twice_is_caught() {
        let mut rec = sealed_with_a_done(true);
        let counted = || Kind::Counted {
            gate: "G".into(),
            outcome: "c".into(),
        };
        rec.run("ack", vec![("A", counted(), None)]);
        rec.run(
            "ack",
            vec![("A", counted(), None), ("G", gate("done", -1, ""), None)],
        );
        release(&mut rec);
        let r = rec.check(&finished_gate("released"));
        assert_eq!(
            r.kinds(),
            [ViolationKind::ServerMemberCountedTwice].into(),
            "{r}"
        );
        assert_eq!(r.violations.len(), 2, "{r}");
    }

    #[test]
    fn a_waiter_of_a_done_gate_left_undecided_is_caught() {
        let rec = sealed_with_a_done(true);
        let r = rec.check(&finished_gate(""));
        assert_eq!(r.kinds(), [ViolationKind::WaiterNeverDecided].into(), "{r}");
    }
}
