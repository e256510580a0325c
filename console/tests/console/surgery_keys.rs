//! The console's job surgery keys against a real Redis: `u` promote, `t`
//! retry now, `d` delete on the selected job (a row of the jobs view or the
//! job detail), `U`/`D` on every job of the state shown. Each asks first
//! (default No); the keys go through the key table and the state, the
//! change through the console's source and the driver, and the jobs are
//! read back with the driver.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Mutation, Overlay, State};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{chars, console, press, prompt, refresh, run};
use crate::seed::connect;

const LATER: Duration = Duration::from_secs(3600);

/// The console on the jobs view of the only queue, `→` pressed `right` times
/// (0 waiting, 1 scheduled, 2 leased, 3 dead).
async fn jobs_view(target: &Target, namespace: &str, right: usize) -> State {
    let mut state = console(target, namespace);
    refresh(target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    for _ in 0..right {
        press(&mut state, &[KeyCode::Right]);
    }
    refresh(target, &mut state).await;
    state
}

#[tokio::test]
async fn u_asks_then_promotes_the_selected_scheduled_job_and_no_changes_nothing() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_promote"));
    let queue = connect(&url, &ns).await;
    let id = queue
        .add("emails", NewJob::new(serde_json::json!(1)).delay(LATER))
        .await
        .unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = jobs_view(&target, &ns, 1).await;
    assert_eq!(state.selected_job().map(|j| j.id.as_str()), Some(id.id()));

    assert!(press(&mut state, &chars("u")).is_empty());
    assert!(prompt(&state).starts_with(&format!("Promote scheduled job {}", id.id())));
    assert!(
        press(&mut state, &chars("n")).is_empty(),
        "no is the answer that sends nothing"
    );
    assert_eq!(queue.counts("emails").await.unwrap().scheduled, 1);

    // `t` refuses a delayed job that never failed, and sends nothing.
    assert!(press(&mut state, &chars("t")).is_empty());
    assert!(matches!(state.overlay, Overlay::None));
    assert!(state
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("u promotes it"));

    let sent = press(&mut state, &chars("uy"));
    assert_eq!(sent, vec![Mutation::Promote(id.id().to_owned())]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(
        queue.inspect(id.id()).await.unwrap().unwrap().state,
        JobState::Waiting
    );
}

#[tokio::test]
async fn t_retries_a_job_backing_off_now() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_retry"));
    let queue = connect(&url, &ns).await;
    queue
        .add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let job = queue.claim("emails", 1, LATER).await.unwrap().remove(0);
    queue.nack(&job.lease(), LATER, "HTTP 503").await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = jobs_view(&target, &ns, 1).await;

    let sent = press(&mut state, &chars("ty"));
    assert_eq!(sent, vec![Mutation::RetryNow(job.id.clone())]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    let again = queue.claim("emails", 1, LATER).await.unwrap();
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (job.id.as_str(), 1)
    );
}

#[tokio::test]
async fn d_on_a_running_job_says_its_lease_is_voided_and_deletes_it() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_delete"));
    let queue = connect(&url, &ns).await;
    queue
        .add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let held = queue.claim("emails", 1, LATER).await.unwrap().remove(0);
    let target = Target::single(connect(&url, &ns).await);
    let mut state = jobs_view(&target, &ns, 2).await;

    // From the job's detail.
    press(&mut state, &[KeyCode::Enter]);
    assert!(press(&mut state, &chars("d")).is_empty());
    assert!(
        prompt(&state).contains("its lease is voided"),
        "{}",
        prompt(&state)
    );
    let sent = press(&mut state, &chars("y"));
    assert_eq!(
        sent,
        vec![Mutation::DeleteJob {
            id: held.id.clone(),
            force: true
        }]
    );
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert!(queue.inspect(&held.id).await.unwrap().is_none());
    assert_eq!(
        queue.ack(&held.lease()).await.unwrap(),
        redq::Acked::AlreadyGone
    );
}

#[tokio::test]
async fn capital_u_and_d_act_on_every_job_of_the_state_in_batches_with_progress() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_bulk"));
    let queue = connect(&url, &ns).await;
    let n = redq::surgery::SURGERY_BATCH + 5;
    let jobs = (0..n)
        .map(|i| NewJob::new(serde_json::json!(i)).delay(LATER))
        .collect();
    queue.add_batch("emails", jobs).await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = jobs_view(&target, &ns, 1).await;

    assert!(press(&mut state, &chars("U")).is_empty());
    assert!(prompt(&state).starts_with(&format!("Promote all {n} scheduled jobs of emails")));
    let sent = press(&mut state, &chars("y"));
    assert_eq!(sent, vec![Mutation::PromoteAll("emails".into())]);
    let ((message, ok), progress) = run(&target, &mut state, sent[0].clone()).await;
    assert_eq!(
        (message.as_str(), ok),
        (format!("promoted {n} jobs").as_str(), true)
    );
    assert!(progress >= 2, "{progress} progress reports for two batches");
    assert_eq!(queue.counts("emails").await.unwrap().waiting, n as u64);

    // The waiting ones, all deleted.
    press(&mut state, &[KeyCode::Left]);
    refresh(&target, &mut state).await;
    let sent = press(&mut state, &chars("Dy"));
    assert_eq!(
        sent,
        vec![Mutation::DeleteAll {
            queue: "emails".into(),
            state: JobState::Waiting
        }]
    );
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(queue.counts("emails").await.unwrap().waiting, 0);
}

/// `x` sets the selected job aside, unrun, in the dead-letter set: it asks
/// first, names how it comes back, and a running job is refused at the
/// keypress with what to do instead.
#[tokio::test]
async fn x_dead_letters_a_waiting_job_and_refuses_a_running_one() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_dead_letter"));
    let queue = connect(&url, &ns).await;
    queue
        .add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    queue.claim("emails", 1, LATER).await.unwrap();
    let waiting = queue
        .add("emails", NewJob::new(serde_json::json!(2)))
        .await
        .unwrap();
    let target = Target::single(connect(&url, &ns).await);

    // The running job, on the leased tab: refused, nothing asked.
    let mut state = jobs_view(&target, &ns, 2).await;
    assert!(press(&mut state, &chars("x")).is_empty());
    assert!(matches!(state.overlay, Overlay::None));
    let said = &state.status.as_ref().unwrap().text;
    assert!(said.contains("c cancels it, d deletes it"), "{said}");

    // The waiting one: asked, then sent.
    let mut state = jobs_view(&target, &ns, 0).await;
    assert_eq!(
        state.selected_job().map(|j| j.id.as_str()),
        Some(waiting.id())
    );
    assert!(press(&mut state, &chars("x")).is_empty());
    assert!(
        prompt(&state).starts_with(&format!("Dead-letter waiting job {}", waiting.id()))
            && prompt(&state).contains("r on Dead letters requeues it"),
        "{}",
        prompt(&state)
    );
    let sent = press(&mut state, &chars("y"));
    assert_eq!(sent, vec![Mutation::DeadLetterJob(waiting.id().to_owned())]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert!(message.contains("(it was waiting)"), "{message}");
    let record = queue.inspect(waiting.id()).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Dead);
    assert_eq!(record.attempts, 0);
}

/// Ending a batch member (delete, cancel, dead-letter) counts it failed in
/// its batch, which decides what waits on it: the question says so.
#[tokio::test]
async fn ending_a_batch_member_says_the_batch_counts_it_failed() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_member"));
    let queue = connect(&url, &ns).await;
    let batch =
        redq::workflow::Batch::new().jobs("emails", vec![NewJob::new(serde_json::json!(1))]);
    let handle = queue.enqueue_batch(batch).await.unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = jobs_view(&target, &ns, 0).await;
    for key in ["d", "c", "x"] {
        assert!(press(&mut state, &chars(key)).is_empty());
        assert!(
            prompt(&state).contains(&format!(
                "It is a member of {}: that counts it failed there",
                handle.id.as_str()
            )),
            "{key}: {}",
            prompt(&state)
        );
        press(&mut state, &chars("n"));
    }
    // A job that belongs to no batch is asked about without it.
    queue
        .add("emails", NewJob::new(serde_json::json!(2)))
        .await
        .unwrap();
    let mut state = jobs_view(&target, &ns, 0).await;
    press(&mut state, &[KeyCode::Down]);
    assert!(press(&mut state, &chars("d")).is_empty());
    assert!(!prompt(&state).contains("member of"), "{}", prompt(&state));
}
