//! `redq dead bound show|set|clear|trim QUEUE`: a queue's dead-letter
//! bound from the command line; a set says what it replaced and how many
//! dead letters it deleted at once, `-o json` says the same, an unknown
//! queue and a bound that bounds nothing are refused with nothing written.

use std::time::Duration;

use redq::kept::DeadBound;
use redq::{NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

use crate::seed::*;

/// `n` dead letters in queue `mail`.
async fn dead_letters(q: &RedisQueue, n: usize) {
    q.add_batch("mail", (0..n).map(|i| NewJob::new(value!(i))).collect())
        .await
        .unwrap();
    for job in q.claim("mail", n, Duration::from_secs(60)).await.unwrap() {
        q.dead_letter(&job.lease(), "smtp refused").await.unwrap();
    }
}

#[tokio::test]
async fn dead_bound_set_show_trim_and_clear_say_what_they_did() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-dead-bound");
    let url = server.url();
    let q = connect(&url, &ns).await;
    dead_letters(&q, 5).await;

    let out = redq(&url, &ns, &["dead", "bound", "show", "mail"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim(),
        "mail has no dead-letter bound: its dead letters stay until deleted (5 dead letters now)"
    );

    let out = redq(
        &url,
        &ns,
        &["dead", "bound", "set", "mail", "--max-count", "3"],
    );
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "mail now keeps at most 3 dead letters (it had no bound)\n\
         deleted 2 dead letters past it at once; 3 dead letters now\n"
    );
    assert_eq!(q.counts("mail").await.unwrap().dead, 3);

    // A set replaces the whole bound, and names the bound it drops.
    let out = redq(
        &url,
        &ns,
        &[
            "-o",
            "json",
            "dead",
            "bound",
            "set",
            "mail",
            "--max-age",
            "30d",
        ],
    );
    assert_exit(&out, 0);
    let set = json(&out);
    assert_eq!(set["queue"], "mail");
    assert_eq!(set["bounded"], true);
    assert_eq!(set["max_count"], serde_json::Value::Null);
    assert_eq!(set["max_age_ms"], 30 * 86_400_000u64);
    assert_eq!(set["was"], value!({ "max_count": 3, "max_age_ms": null }));
    assert_eq!(set["trimmed"], 0);
    assert_eq!(set["dead"], 3);
    assert_eq!(set["no_longer_bounded_by"], value!(["--max-count"]));
    let out = redq(
        &url,
        &ns,
        &[
            "dead",
            "bound",
            "set",
            "mail",
            "--max-count",
            "1",
            "--max-age",
            "30d",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "mail now keeps at most 1 dead letter, none older than 30d \
         (was dead letters no older than 30d)\n\
         deleted 2 dead letters past it at once; 1 dead letter now\n"
    );

    let out = redq(&url, &ns, &["-o", "json", "dead", "bound", "show", "mail"]);
    assert_exit(&out, 0);
    let shown = json(&out);
    assert_eq!(
        (shown["max_count"].clone(), shown["dead"].clone()),
        (value!(1), value!(1))
    );

    let out = redq(&url, &ns, &["dead", "bound", "trim", "mail"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "deleted 0 dead letters of mail past its bound \
         (at most 1 dead letter, none older than 30d); 1 dead letter now\n"
    );
    let out = redq(&url, &ns, &["-o", "json", "dead", "bound", "trim", "mail"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)["trimmed"], 0);

    let out = redq(&url, &ns, &["dead", "bound", "clear", "mail"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "mail has no dead-letter bound now (was at most 1 dead letter, none older than 30d); \
         its dead letters stay (1 dead letter now)\n"
    );
    assert_eq!(q.dead_bound("mail").await.unwrap().bound, None);
    let out = redq(&url, &ns, &["-o", "json", "dead", "bound", "clear", "mail"]);
    assert_exit(&out, 0);
    assert_eq!(
        json(&out),
        value!({ "queue": "mail", "action": "cleared", "was": null, "dead": 1 })
    );

    // --read-only refuses the changes.
    let out = redq(
        &url,
        &ns,
        &[
            "--read-only",
            "dead",
            "bound",
            "set",
            "mail",
            "--max-count",
            "1",
        ],
    );
    assert_exit(&out, 1);
    assert_eq!(q.dead_bound("mail").await.unwrap().bound, None);
}

#[tokio::test]
async fn dead_bound_refuses_an_unknown_queue_and_a_bound_that_bounds_nothing() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-dead-bound-refused");
    let url = server.url();
    let q = connect(&url, &ns).await;
    dead_letters(&q, 2).await;

    let out = redq(&url, &ns, &["dead", "bound", "set", "mail"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("give at least one bound: --max-count, --max-age or both"),
        "{}",
        stderr(&out)
    );
    for (flag, value, says) in [
        ("--max-count", "0", "0 is no count bound"),
        ("--max-age", "30s", "give an age of 1m to 10 years"),
    ] {
        let out = redq(&url, &ns, &["dead", "bound", "set", "mail", flag, value]);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
    assert_eq!(q.dead_bound("mail").await.unwrap().bound, None);
    assert_eq!(q.counts("mail").await.unwrap().dead, 2);

    for sub in ["show", "clear", "trim"] {
        let out = redq(&url, &ns, &["dead", "bound", sub, "mial"]);
        assert_exit(&out, 1);
        assert!(stderr(&out).contains("mial"), "{}", stderr(&out));
    }
    let out = redq(
        &url,
        &ns,
        &["dead", "bound", "set", "mial", "--max-count", "5"],
    );
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("add --allow-unknown"),
        "{}",
        stderr(&out)
    );
    assert_eq!(q.dead_bound("mial").await.unwrap().bound, None);
    let out = redq(
        &url,
        &ns,
        &[
            "dead",
            "bound",
            "set",
            "mial",
            "--max-count",
            "5",
            "--allow-unknown",
        ],
    );
    assert_exit(&out, 0);
    assert_eq!(
        q.dead_bound("mial").await.unwrap().bound,
        Some(DeadBound::new().max_count(5))
    );
}

/// The Dead letters screen (3) names each bounded queue's bound in its
/// title; a queue without one shows nothing more.
#[test]
fn the_dead_letters_screen_shows_each_queues_bound() {
    use crate::common::*;
    use redq_console::tui::state::{Action, Screen, Update};

    let mut snapshot = snapshot();
    let dead = snapshot.dead.as_mut().expect("dead letters");
    dead.bounds = vec![
        (
            "webhooks".to_owned(),
            DeadBound::new()
                .max_count(10_000)
                .max_age(Duration::from_secs(30 * 86_400)),
        ),
        (
            "billing".to_owned(),
            DeadBound::new().max_age(Duration::from_secs(7 * 86_400)),
        ),
    ];
    let mut state = loaded();
    press(
        &mut state,
        &[
            Action::Received(Update::Snapshot {
                snapshot: Box::new(snapshot),
                received_at: now(),
            }),
            Action::Show(Screen::Dead),
        ],
    );
    let screen = crate::views::screen_text(&state, 120, 24);
    assert!(
        screen.contains("Dead letters (5); webhooks kept ≤ 10,000, 30d; billing kept 7d"),
        "{screen}"
    );
    insta::assert_snapshot!(screen);
}

/// Over shards each shard keeps to the bound on its own: the sentence says
/// so, and every shard has the bound.
#[tokio::test]
async fn dead_bound_over_shards_is_each_shards() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-dead-bound-sharded");
    let sharded = redq::ShardedQueue::connect(RedisQueue::builder(&server.url()), &ns, 3)
        .await
        .unwrap();
    sharded.add("kq", NewJob::new(value!(1))).await.unwrap();
    let set = [
        "--shards",
        "3",
        "dead",
        "bound",
        "set",
        "kq",
        "--max-count",
        "5",
    ];
    let out = redq(&server.url(), &ns, &set);
    assert_exit(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains(
            "kq now keeps at most 5 dead letters on each of its 3 shards \
             (up to 3 times that in all) (it had no bound)"
        ),
        "{said}"
    );
    for shard in sharded.shards() {
        assert_eq!(
            shard.dead_bound("kq").await.unwrap().bound,
            Some(DeadBound::new().max_count(5))
        );
    }
    let out = redq(
        &server.url(),
        &ns,
        &["--shards", "3", "-o", "json", "dead", "bound", "show", "kq"],
    );
    assert_exit(&out, 0);
    let shown = json(&out);
    assert_eq!(
        (shown["shards"].clone(), shown["max_count"].clone()),
        (value!(3), value!(5))
    );
}

/// A bound set for a queue before its first job (`--allow-unknown`) stays
/// in reach: show, trim and clear find it, where they refuse a queue that
/// has neither jobs nor a bound.
#[tokio::test]
async fn a_bound_set_before_the_queues_first_job_can_be_shown_and_cleared() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-dead-bound-unknown");
    let url = server.url();
    let out = redq(
        &url,
        &ns,
        &[
            "dead",
            "bound",
            "set",
            "later",
            "--max-count",
            "5",
            "--allow-unknown",
        ],
    );
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["dead", "bound", "show", "later"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).starts_with("later keeps at most 5"),
        "{}",
        stdout(&out)
    );
    let out = redq(&url, &ns, &["dead", "bound", "trim", "later"]);
    assert_exit(&out, 0);
    let out = redq(&url, &ns, &["dead", "bound", "clear", "later"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).starts_with("later has no dead-letter bound now"),
        "{}",
        stdout(&out)
    );
    // Once cleared, the queue is unknown again: refused, naming the fix.
    let out = redq(&url, &ns, &["dead", "bound", "show", "later"]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("no queue named later"),
        "{}",
        stderr(&out)
    );
}
