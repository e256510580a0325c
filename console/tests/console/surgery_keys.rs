//! The console's job surgery keys against a real Redis: `u` promote, `t`
//! retry now, `d` delete on the selected job (a row of the jobs view or the
//! job detail), `U`/`D` on every job of the state shown. Each asks first
//! (default No); the keys go through the key table and the state, the
//! change through the console's source and the driver, and the jobs are
//! read back with the driver.

use std::time::{Duration, SystemTime};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::input::action_for;
use redq_console::tui::source;
use redq_console::tui::state::{Action, Command, Mutation, Overlay, Settings, State, Update};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::connect;

const LATER: Duration = Duration::from_secs(3600);

/// Load what the console shows now (its focus) into `state`.
async fn refresh(target: &Target, state: &mut State) {
    let snapshot = source::fetch(target, &state.focus()).await.unwrap();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: SystemTime::now(),
    }));
}

/// The console on the jobs view of the only queue, `→` pressed `right` times
/// (0 waiting, 1 scheduled, 2 leased, 3 dead).
async fn jobs_view(target: &Target, namespace: &str, right: usize) -> State {
    let mut state = State::new(Settings {
        url: target.redacted_url().to_owned(),
        namespace: namespace.to_owned(),
        shards: Vec::new(),
        read_only: false,
        refresh: Duration::from_secs(1),
    });
    refresh(target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    for _ in 0..right {
        press(&mut state, &[KeyCode::Right]);
    }
    refresh(target, &mut state).await;
    state
}

/// Press `keys` through the key table; the mutations they start.
fn press(state: &mut State, keys: &[KeyCode]) -> Vec<Mutation> {
    let mut sent = Vec::new();
    for code in keys {
        let event = KeyEvent::new(*code, KeyModifiers::NONE);
        if let Some(action) = action_for(state, &event) {
            if let Command::Mutate(mutation) = state.apply(action) {
                sent.push(mutation);
            }
        }
    }
    sent
}

fn chars(text: &str) -> Vec<KeyCode> {
    text.chars().map(KeyCode::Char).collect()
}

fn prompt(state: &State) -> String {
    match &state.overlay {
        Overlay::Confirm(confirm) => confirm.prompt.clone(),
        other => panic!(
            "no question open ({other:?}); status {:?}, view {:?}",
            state.status, state.view
        ),
    }
}

/// Carry out `mutation` as the console's I/O task does: its result line
/// and the progress reports on the way.
/// The state receives them, as the console's loop would.
async fn run(target: &Target, state: &mut State, mutation: Mutation) -> ((String, bool), usize) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    source::mutate(target, mutation, &tx).await;
    let (mut finished, mut progress) = (None, 0);
    while let Ok(update) = rx.try_recv() {
        match &update {
            Update::Finished { message, ok } => finished = Some((message.clone(), *ok)),
            Update::Progress { .. } => progress += 1,
            _ => {}
        }
        state.apply(Action::Received(update));
    }
    (
        finished.expect("a mutation always reports how it ended"),
        progress,
    )
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
