//! Broken variants of flow control that are hand-made server records: each
//! a sound record and the same record with one defect a limiter could have.

use redq_tests::history::meta::Meta;
use redq_tests::history::server::{Event, Kind, ServerRecord};
use redq_tests::history::{self, Dump, Report};

use super::bench::*;

/// The lease length every hand-made grant asks for.
const LEASE_MS: u64 = 1000;

/// A server record written by hand, one script run per call.
#[derive(Default)]
struct Record {
    events: Vec<Event>,
    run: u64,
    lease_seq: u64,
}

fn waiting(key: &str) -> Meta {
    Meta {
        queue: QUEUE.into(),
        seq: 1,
        limit_key: key.into(),
        ..Meta::default()
    }
}

impl Record {
    fn push(
        &mut self,
        at_ms: u64,
        job: &str,
        kind: Kind,
        before: Option<Meta>,
        after: Option<Meta>,
    ) {
        self.events.push(Event {
            at_us: at_ms * 1000,
            job: job.into(),
            kind,
            script: "claim".into(),
            presented: None,
            forced: false,
            run: self.run,
            lease_ms: Some(LEASE_MS),
            pushback_ms: None,
            start_by_ms: None,
            epoch: 0,
            before,
            after,
        });
    }

    /// limits_set writes field `field` of `{ns}:limits`.
    fn limits(&mut self, field: &str, spec: &str) -> &mut Self {
        self.run += 1;
        let kind = Kind::LimitsSet {
            field: field.into(),
            spec: Some(spec.into()),
            if_absent: false,
        };
        self.push(0, "", kind, None, None);
        self
    }

    /// An enqueue of job `id` with limit key `key` (held back when the key
    /// is not empty).
    fn enqueue(&mut self, id: &str, key: &str) -> &mut Self {
        self.run += 1;
        self.push(0, id, Kind::Created, None, Some(waiting(key)));
        if !key.is_empty() {
            let kind = Kind::Held { key: key.into() };
            self.push(0, id, kind, Some(waiting(key)), Some(waiting(key)));
        }
        self
    }

    /// A claim at `at_ms` granting job `id` (taking it out of the held set
    /// first when `unhold`).
    fn grant_from(&mut self, at_ms: u64, id: &str, key: &str, unhold: bool) -> &mut Self {
        self.run += 1;
        self.lease_seq += 1;
        if unhold {
            self.push(
                at_ms,
                id,
                Kind::Unheld,
                Some(waiting(key)),
                Some(waiting(key)),
            );
        }
        let leased = Meta {
            lease_id: self.lease_seq,
            lease_expiry: at_ms + LEASE_MS,
            ..waiting(key)
        };
        self.push(at_ms, id, Kind::Granted, Some(waiting(key)), Some(leased));
        self
    }

    /// A claim granting job `id`, held back by key `key` if it has one.
    fn grant(&mut self, at_ms: u64, id: &str, key: &str) -> &mut Self {
        self.grant_from(at_ms, id, key, !key.is_empty())
    }

    /// An ack of job `id` under its current lease.
    fn ack(&mut self, at_ms: u64, id: &str) -> &mut Self {
        self.run += 1;
        let before = self
            .events
            .iter()
            .rev()
            .find(|e| e.job == id && e.kind == Kind::Granted)
            .and_then(|e| e.after.clone());
        self.push(at_ms, id, Kind::Acked, before, None);
        self
    }

    /// A release of job `id` at `at_ms` pushing its limiter back `ms`.
    fn push_back(&mut self, at_ms: u64, id: &str, ms: u64) -> &mut Self {
        self.ack(at_ms, id);
        let release = self.events.last_mut().expect("the event just pushed");
        let before = release.before.clone().expect("a leased job");
        release.kind = Kind::Released;
        release.script = "release".into();
        release.pushback_ms = Some(ms);
        release.after = Some(Meta {
            resolved_lease: -(before.lease_id as i64),
            ..waiting(&before.limit_key)
        });
        self
    }

    fn check(&mut self) -> Report {
        let server = ServerRecord {
            events: std::mem::take(&mut self.events),
            ..ServerRecord::default()
        };
        let report = history::check(&[], Some(&server), &Dump::default(), drained());
        println!("{report}");
        report
    }
}

/// Each key at most 2 leased: broken, a third job of key "acme" is granted
/// while two are leased.
pub async fn key_over_its_concurrency(broken: bool) -> Report {
    let mut r = Record::default();
    r.limits(QUEUE, "0 0 0 2 0 0");
    for id in ["a", "b", "c"] {
        r.enqueue(id, "acme");
    }
    r.grant(1000, "a", "acme").grant(1001, "b", "acme");
    if !broken {
        r.ack(1002, "a");
    }
    r.grant(1003, "c", "acme");
    if broken {
        r.ack(1004, "a");
    }
    r.ack(1005, "b").ack(1006, "c").check()
}

/// Key "vip" has an override of 1 replacing the each-key default of 5:
/// broken, two of its jobs are leased at once.
pub async fn key_over_its_override(broken: bool) -> Report {
    let mut r = Record::default();
    r.limits(QUEUE, "0 0 0 5 0 0")
        .limits(&format!("{QUEUE}\nvip"), "1 0 0");
    r.enqueue("a", "vip").enqueue("b", "vip");
    r.grant(1000, "a", "vip");
    if !broken {
        r.ack(1001, "a");
    }
    r.grant(1002, "b", "vip");
    if broken {
        r.ack(1003, "a");
    }
    r.ack(1004, "b").check()
}

/// The queue at most 2 leased: broken, a third (unkeyed) job is granted
/// while two are leased.
pub async fn queue_over_its_concurrency(broken: bool) -> Report {
    let mut r = Record::default();
    r.limits(QUEUE, "2 0 0 0 0 0");
    for id in ["a", "b", "c"] {
        r.enqueue(id, "");
    }
    r.grant(1000, "a", "").grant(1001, "b", "");
    if !broken {
        r.ack(1002, "a");
    }
    r.grant(1003, "c", "");
    if broken {
        r.ack(1004, "a");
    }
    r.ack(1005, "b").ack(1006, "c").check()
}

/// Three starts of limiter `key` (the queue when empty) under a rate of 2
/// per 1000 ms: sound, the third starts exactly 1000 ms after the first
/// (the window `(now - per, now]` no longer holds it); broken, 1 ms sooner.
async fn three_starts(key: &str, broken: bool) -> Report {
    let mut r = Record::default();
    if key.is_empty() {
        r.limits(QUEUE, "0 2 1000 0 0 0");
    } else {
        r.limits(QUEUE, "0 0 0 0 0 0")
            .limits(&format!("{QUEUE}\n{key}"), "0 2 1000");
    }
    for id in ["a", "b", "c"] {
        r.enqueue(id, key);
    }
    let third = if broken { 10_999 } else { 11_000 };
    r.grant(10_000, "a", key).ack(10_001, "a");
    r.grant(10_500, "b", key).ack(10_501, "b");
    r.grant(third, "c", key).ack(third + 1, "c").check()
}

pub async fn queue_over_its_rate(broken: bool) -> Report {
    three_starts("", broken).await
}

pub async fn key_over_its_rate(broken: bool) -> Report {
    three_starts("acme", broken).await
}

/// Broken, a claim leases a held job without taking it out of the held set.
pub async fn leased_while_held(broken: bool) -> Report {
    let mut r = Record::default();
    r.limits(QUEUE, "0 0 0 1 0 0").enqueue("a", "acme");
    r.grant_from(1000, "a", "acme", !broken);
    r.ack(1001, "a").check()
}

/// Broken, a claim takes a held job out of the held set and drops its
/// record instead of leasing it.
pub async fn held_job_dropped(broken: bool) -> Report {
    let mut r = Record::default();
    r.limits(QUEUE, "0 0 0 1 0 0").enqueue("a", "acme");
    if broken {
        r.run += 1;
        r.push(
            1000,
            "a",
            Kind::Unheld,
            Some(waiting("acme")),
            Some(waiting("acme")),
        );
        r.push(1000, "a", Kind::Other, Some(waiting("acme")), None);
    } else {
        r.grant(1000, "a", "acme").ack(1001, "a");
    }
    r.check()
}

/// A handler hit a remote 429 and pushed its limiter back 500 ms: broken,
/// the next job of its key starts 100 ms later (for the queue: any job,
/// when the pushed-back job had no key).
async fn start_during_a_push_back(key: &str, broken: bool) -> Report {
    let mut r = Record::default();
    r.limits(QUEUE, "0 0 0 0 0 0");
    r.enqueue("a", key).enqueue("b", "other");
    r.grant(1000, "a", key).push_back(1010, "a", 500);
    let next = if broken { 1110 } else { 1510 };
    r.grant(
        next,
        if key.is_empty() { "b" } else { "a" },
        if key.is_empty() { "other" } else { key },
    );
    if key.is_empty() {
        r.ack(next + 1, "b")
            .grant(next + 2, "a", key)
            .ack(next + 3, "a");
    } else {
        r.ack(next + 1, "a")
            .grant(next + 2, "b", "other")
            .ack(next + 3, "b");
    }
    r.check()
}

pub async fn key_started_while_pushed_back(broken: bool) -> Report {
    start_during_a_push_back("acme", broken).await
}

pub async fn queue_started_while_pushed_back(broken: bool) -> Report {
    start_during_a_push_back("", broken).await
}
