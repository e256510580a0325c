//! A surgery key that cannot apply is refused at the keypress, before any
//! question, with why and what to do instead (a kept job's tab, a held or
//! awaiting job); `t` retries a dead job as `redq jobs retry` does; a bulk
//! key on an empty state says there is nothing to do. And the CLI's bulk
//! forms: `jobs retry --queue` counts only the jobs backing off, saying
//! what it leaves scheduled, and `jobs promote --queue` with nothing
//! scheduled says so and succeeds. Against a real Redis.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::flow::{Limit, LimitScope};
use redq::kept::Retention;
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Mutation, Overlay, State};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

use crate::live::{chars, console, press, prompt, refresh, run};
use crate::seed::*;

const LATER: Duration = Duration::from_secs(3600);

/// The console on the jobs view of `queue` (the only one, or the first by
/// name), → pressed until it shows `wanted`.
async fn tab(target: &Target, ns: &str, wanted: JobState) -> State {
    let mut state = console(target, ns);
    refresh(target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    refresh(target, &mut state).await;
    for _ in 0..10 {
        if state.jobs().unwrap().query.state == wanted {
            break;
        }
        press(&mut state, &[KeyCode::Right]);
    }
    assert_eq!(state.jobs().unwrap().query.state, wanted);
    refresh(target, &mut state).await;
    state
}

/// Press `keys`: nothing may be asked or sent; the status line then.
fn refused(state: &mut State, keys: &str) -> String {
    assert!(
        press(state, &chars(keys)).is_empty(),
        "{keys} sent something"
    );
    assert!(
        matches!(state.overlay, Overlay::None),
        "{keys} asked: {:?}",
        state.overlay
    );
    state
        .status
        .as_ref()
        .expect("a refusal is said")
        .text
        .clone()
}

#[tokio::test]
async fn on_the_completed_tab_what_cannot_apply_is_refused_before_any_question() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_kept_keys"));
    let queue = connect(&url, &ns).await;
    queue
        .set_retention("emails", &Retention::new().max_count(100))
        .await
        .unwrap();
    let done = queue.add("emails", NewJob::new(json!(1))).await.unwrap();
    let job = queue.claim("emails", 1, LATER).await.unwrap().remove(0);
    queue.ack(&job.lease()).await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = tab(&target, &ns, JobState::Completed).await;
    assert_eq!(state.selected_job().map(|j| j.id.as_str()), Some(done.id()));

    let said = refused(&mut state, "c");
    assert!(
        said.contains("nothing to cancel: this job has completed"),
        "{said}"
    );
    let said = refused(&mut state, "C");
    assert!(said.contains("completed jobs have finished"), "{said}");
    let said = refused(&mut state, "D");
    assert!(said.contains("redq retention clear emails"), "{said}");
    let said = refused(&mut state, "u");
    assert!(
        said.contains("only a scheduled job can be promoted"),
        "{said}"
    );
    assert!(said.contains("completed"), "{said}");
    let said = refused(&mut state, "t");
    assert!(said.contains("completed"), "{said}");

    // `d` is not refused: the driver deletes a kept job by id.
    assert!(press(&mut state, &chars("d")).is_empty());
    assert!(prompt(&state).starts_with(&format!("Delete completed job {}", done.id())));
    let sent = press(&mut state, &chars("y"));
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(queue.counts("emails").await.unwrap().completed, 0);
}

#[tokio::test]
async fn u_and_t_name_a_held_job_held_and_an_awaiting_job_awaiting() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_held_keys"));
    let queue = connect(&url, &ns).await;
    queue
        .set_limit("mail", LimitScope::EachKey, Limit::concurrency(1))
        .await
        .unwrap();
    for n in 0..2 {
        queue
            .add("mail", NewJob::new(json!(n)).limit_key("acme"))
            .await
            .unwrap();
    }
    queue.claim("mail", 10, LATER).await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = tab(&target, &ns, JobState::Held).await;
    for key in ["u", "t"] {
        let said = refused(&mut state, key);
        assert!(said.contains("this job is held"), "{said}");
        assert!(said.contains("redq limits show mail"), "{said}");
    }

    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_awaiting_keys"));
    let queue = connect(&url, &ns).await;
    let first = queue.add("charges", NewJob::new(json!(1))).await.unwrap();
    let then = queue
        .add("charges", NewJob::new(json!(2)).after([first.id()]))
        .await
        .unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = tab(&target, &ns, JobState::Awaiting).await;
    for key in ["u", "t"] {
        let said = refused(&mut state, key);
        assert!(said.contains("this job is awaiting"), "{said}");
        assert!(
            said.contains(&format!("redq deps show {}", then.id())),
            "{said}"
        );
    }
}

#[tokio::test]
async fn t_on_a_dead_job_requeues_it_as_jobs_retry_does() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_dead_retry"));
    let queue = connect(&url, &ns).await;
    let dead = dead_letters(&queue, "hooks", 1, "boom").await.remove(0);
    let target = Target::single(connect(&url, &ns).await);
    let mut state = tab(&target, &ns, JobState::Dead).await;

    assert!(press(&mut state, &chars("t")).is_empty());
    let asked = prompt(&state);
    assert!(asked.contains("attempts reset to 0"), "{asked}");
    let sent = press(&mut state, &chars("y"));
    assert_eq!(sent, vec![Mutation::RetryNow(dead.clone())]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert!(
        message.starts_with(&format!("requeued {dead}")),
        "{message}"
    );
    let record = queue.inspect(&dead).await.unwrap().unwrap();
    assert_eq!((record.state, record.attempts), (JobState::Waiting, 0));
}

#[tokio::test]
async fn a_bulk_key_on_an_empty_state_says_there_is_nothing_to_do() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_bulk_empty"));
    let queue = connect(&url, &ns).await;
    queue.add("emails", NewJob::new(json!(1))).await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = tab(&target, &ns, JobState::Scheduled).await;
    let said = refused(&mut state, "U");
    assert_eq!(said, "no scheduled jobs in emails: nothing to promote");
}

#[tokio::test]
async fn jobs_retry_queue_counts_only_jobs_backing_off_and_says_what_stays_scheduled() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-retry-count");
    let url = server.url();
    let q = connect(&url, &ns).await;
    for n in 0..2 {
        q.add("q", NewJob::new(json!(n)).delay(LATER))
            .await
            .unwrap();
    }
    let stays = "2 scheduled jobs never failed: not retries, they stay scheduled \
                 (redq jobs promote --queue q makes them due)";

    // None backing off: said, nothing asked, exit 0.
    let out = redq(&url, &ns, &["jobs", "retry", "--queue", "q"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim(),
        format!("no job of q is backing off after a failure: nothing to retry; {stays}")
    );

    q.add("q", NewJob::new(json!("f"))).await.unwrap();
    let job = q.claim("q", 1, LATER).await.unwrap().remove(0);
    q.nack(&job.lease(), LATER, "HTTP 503").await.unwrap();

    let out = redq(&url, &ns, &["jobs", "retry", "--queue", "q"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains(&format!(
            "would retry now the 1 job of q backing off after a failure; {stays}; add --yes"
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        q.counts("q").await.unwrap().scheduled,
        3,
        "asking changed something"
    );

    let out = redq(&url, &ns, &["jobs", "retry", "--queue", "q", "--yes"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim(),
        format!("retried 1 job of q; 0 left backing off; {stays}")
    );
    let out = redq(
        &url,
        &ns,
        &["jobs", "retry", "--queue", "q", "--yes", "-o", "json"],
    );
    assert_exit(&out, 0);
    let report = crate::seed::json(&out);
    assert_eq!(
        (
            &report["done"],
            &report["left"],
            &report["scheduled_never_failed"]
        ),
        (&json!(0), &json!(0), &json!(2))
    );
}

#[tokio::test]
async fn jobs_promote_queue_with_nothing_scheduled_says_so_and_succeeds() {
    let server = RedisServer::start();
    let ns = unique_namespace("cli-promote-none");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("q", NewJob::new(json!(1))).await.unwrap();
    for args in [
        &["jobs", "promote", "--queue", "q"][..],
        &["jobs", "promote", "--queue", "q", "--yes"][..],
    ] {
        let out = redq(&url, &ns, args);
        assert_exit(&out, 0);
        assert_eq!(
            stdout(&out).trim(),
            "no scheduled job in q: nothing to promote"
        );
    }
}
