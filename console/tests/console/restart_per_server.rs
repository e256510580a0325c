//! The restart notice with `--shards` on several servers (a Redis
//! Cluster's primaries): one notice per restarted server, naming its shards
//! and judging "data lost?" by their jobs alone. The review's case: shard
//! 2's primary restarted without persistence, its 250 jobs gone, and the
//! notice summed every shard ("data reloaded: the namespace held 887 jobs
//! before and holds 637 now").
//!
//! Fed as the console's I/O task feeds it: each snapshot, then the `INFO`
//! of each shard's server read just before it.

use std::time::Duration;

use redq::ServerStats;
use redq_console::tui::state::{Action, Level, Snapshot, State, Update};

use crate::common::{counts, loaded, now};

fn server(run_id: &str, uptime_s: u64) -> Option<ServerStats> {
    Some(ServerStats {
        run_id: run_id.into(),
        uptime_s,
        ..ServerStats::default()
    })
}

/// A snapshot whose shards hold `shard_jobs` waiting jobs of one queue.
fn snapshot(shard_jobs: &[u64]) -> Snapshot {
    let total = shard_jobs.iter().sum();
    Snapshot {
        queues: vec![redq_console::tui::state::QueueRow {
            counts: counts("emails", total, 0, 0, 0),
            stats: Vec::new(),
        }],
        shard_jobs: shard_jobs.to_vec(),
        ..crate::common::snapshot()
    }
}

/// One refresh: its snapshot, then its servers' `INFO`.
fn refresh(state: &mut State, shard_jobs: &[u64], servers: &[Option<ServerStats>]) {
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot(shard_jobs)),
        received_at: now(),
    }));
    state.apply(Action::Received(Update::Server(servers.to_vec())));
}

fn restarts(state: &State) -> Vec<(Level, String)> {
    state
        .server_notices()
        .into_iter()
        .filter(|(_, text)| text.starts_with("Redis restarted at "))
        .collect()
}

#[test]
fn a_shard_that_came_back_empty_is_named_and_said_lost() {
    let mut state = loaded();
    let before = [server("a", 600), server("b", 600), server("c", 600)];
    refresh(&mut state, &[300, 337, 250], &before);
    refresh(&mut state, &[300, 337, 250], &before);
    assert!(restarts(&state).is_empty());

    // Shard 2's server restarted without persistence: 887 jobs became 637.
    let after = [server("a", 601), server("b", 601), server("c2", 3)];
    refresh(&mut state, &[300, 337, 0], &after);
    let said = restarts(&state);
    assert_eq!(said.len(), 1, "{said:?}");
    let (level, text) = &said[0];
    assert_eq!(*level, Level::Error);
    assert!(
        text.ends_with(
            " (a new server run; up 3s when noticed): shard 2 held 250 jobs before and holds \
             none now; data lost?"
        ),
        "{text}"
    );
}

#[test]
fn shards_on_one_server_are_counted_together_and_each_server_keeps_its_notice() {
    let mut state = loaded();
    // Shards 0 and 1 share a server; shard 2 has its own.
    let first = [server("a", 600), server("a", 600), server("c", 600)];
    refresh(&mut state, &[300, 337, 250], &first);
    let second = [server("a2", 2), server("a2", 2), server("c", 602)];
    refresh(&mut state, &[0, 0, 250], &second);
    // Later shard 2's server restarts too, with its data reloaded: shards
    // 0 and 1's loss is still said.
    let third = [server("a2", 4), server("a2", 4), server("c2", 1)];
    refresh(&mut state, &[5, 0, 250], &third);
    let said = restarts(&state);
    let texts: Vec<&str> = said.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(said.len(), 2, "{texts:?}");
    assert_eq!(said[0].0, Level::Error);
    assert!(
        texts[0].ends_with(
            ": shards 0 and 1 held 637 jobs before and none just after, 5 now; data lost?"
        ),
        "{texts:?}"
    );
    assert_eq!(said[1].0, Level::Info);
    assert!(
        texts[1].ends_with("; data reloaded: shard 2 held 250 jobs before and holds 250 now"),
        "{texts:?}"
    );
}

#[test]
fn one_namespace_says_the_namespace_as_before() {
    let mut state = loaded();
    refresh(&mut state, &[37], &[server("a", 600)]);
    refresh(&mut state, &[0], &[server("b", 3)]);
    let at = redq_console::clock::short(
        now() - Duration::from_secs(3),
        now() - Duration::from_secs(3),
    );
    assert_eq!(
        restarts(&state),
        vec![(
            Level::Error,
            format!(
                "Redis restarted at {at} UTC (a new server run; up 3s when noticed): the \
                 namespace held 37 jobs before and holds none now; data lost?"
            )
        )]
    );
}

/// The review's case: nine minutes after a restart the queues had refilled
/// to ~1,500 jobs and the notice still said "(up 2s)" and "holds none now".
#[test]
fn a_notice_left_up_says_what_the_namespace_holds_now() {
    let mut state = loaded();
    refresh(&mut state, &[37], &[server("a", 600)]);
    refresh(&mut state, &[0], &[server("b", 2)]);
    for jobs in [400, 1512] {
        refresh(&mut state, &[jobs], &[server("b", 540)]);
    }
    let said = restarts(&state);
    assert_eq!(said.len(), 1, "{said:?}");
    let (level, text) = &said[0];
    // The jobs were lost all the same: still an error.
    assert_eq!(*level, Level::Error);
    assert!(
        text.ends_with(
            " (a new server run; up 2s when noticed): the namespace held 37 jobs before and \
             none just after, 1512 now; data lost?"
        ),
        "{text}"
    );
}
