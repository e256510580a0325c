//! Broken variants that are hand-made histories: defects no script can
//! easily produce.

use redq_tests::history::meta::Meta;
use redq_tests::history::record::{Call, Claimed, Entry, Reply};
use redq_tests::history::server::{Event, Kind, ServerRecord};
use redq_tests::history::{self, Dump, Report};

use super::bench::*;

/// Call `seq` of process 1 with its reply.
pub fn entry(seq: u64, call: Call, reply: Reply) -> Entry {
    Entry::made(seq, call, reply)
}

/// An enqueue of `jobs` (id, tag), all created.
pub fn enqueued(seq: u64, jobs: &[(&str, &str)]) -> Entry {
    entry(
        seq,
        Call::Enqueue {
            queue: QUEUE.into(),
            tags: jobs.iter().map(|(_, tag)| (*tag).to_owned()).collect(),
            keys: vec![String::new(); jobs.len()],
        },
        Reply::Enqueued {
            ids: jobs
                .iter()
                .map(|(id, _)| ((*id).to_owned(), true))
                .collect(),
        },
    )
}

/// A claim handing out job `id` (tag `tag`) under `lease`, 1 s long,
/// granted at `lease` seconds.
pub fn claimed(seq: u64, id: &str, tag: &str, lease: u64) -> Entry {
    entry(
        seq,
        Call::Claim {
            queue: QUEUE.into(),
            limit: 1,
            lease_ms: 1000,
        },
        Reply::Claimed {
            jobs: vec![Claimed {
                id: id.into(),
                tag: tag.into(),
                lease,
                attempts: 0,
                expiry_ms: lease * 1000 + 1000,
                ordering_key: String::new(),
            }],
        },
    )
}

pub fn acked(seq: u64, id: &str, lease: u64) -> Entry {
    entry(
        seq,
        Call::Ack {
            id: id.into(),
            lease,
        },
        Reply::Acked { completed: true },
    )
}

/// The client-side checks alone (no server record): broken, job A is
/// acknowledged as completed twice and job B is never claimed, yet gone.
pub async fn client_history_alone(broken: bool) -> Report {
    let mut entries = vec![
        enqueued(0, &[("A", "a"), ("B", "b")]),
        claimed(1, "A", "a", 1),
        acked(2, "A", 1),
    ];
    if broken {
        entries.push(acked(3, "A", 1));
    } else {
        entries.extend([claimed(3, "B", "b", 2), acked(4, "B", 2)]);
    }
    history::check(&entries, None, &Dump::default(), drained())
}

/// Broken, a claim hands out job G, whose tag no enqueue carried.
pub async fn claimed_never_enqueued(broken: bool) -> Report {
    let mut entries = vec![
        enqueued(0, &[("A", "a")]),
        claimed(1, "A", "a", 1),
        acked(2, "A", 1),
    ];
    if broken {
        entries.extend([claimed(3, "G", "ghost", 2), acked(4, "G", 2)]);
    }
    history::check(&entries, None, &Dump::default(), drained())
}

/// Broken, the server's record shows job A's ack applied twice (as a
/// resent ack that was not idempotent would).
pub async fn server_acked_twice(broken: bool) -> Report {
    let entries = [
        enqueued(0, &[("A", "a")]),
        claimed(1, "A", "a", 1),
        acked(2, "A", 1),
    ];
    let waiting = Meta {
        queue: QUEUE.into(),
        seq: 1,
        ..Meta::default()
    };
    let leased = Meta {
        lease_id: 1,
        lease_expiry: 2000,
        ..waiting.clone()
    };
    let event =
        |at_ms: u64, kind: Kind, script: &str, before: Option<&Meta>, after: Option<&Meta>| Event {
            at_us: at_ms * 1000,
            job: "A".into(),
            kind,
            script: script.into(),
            presented: (script == "ack").then_some(1),
            forced: false,
            run: at_ms,
            lease_ms: None,
            pushback_ms: None,
            start_by_ms: None,
            epoch: 0,
            before: before.cloned(),
            after: after.cloned(),
        };
    let mut events = vec![
        event(0, Kind::Created, "enqueue", None, Some(&waiting)),
        event(1000, Kind::Granted, "claim", Some(&waiting), Some(&leased)),
        event(1500, Kind::Acked, "ack", Some(&leased), None),
    ];
    if broken {
        events.push(event(1600, Kind::Acked, "ack", Some(&leased), None));
    }
    let server = ServerRecord {
        events,
        ..ServerRecord::default()
    };
    history::check(&entries, Some(&server), &Dump::default(), drained())
}
