//! The console's requeue with an attempt count typed, against a real
//! Redis: the keys go through the key table and the state, the mutation
//! through the console's source and the driver, and the jobs are read back
//! with the driver.

use std::time::{Duration, SystemTime};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use redq::{JobState, NewJob, RedisQueue};
use redq_console::aggregate::Target;
use redq_console::tui::input::action_for;
use redq_console::tui::source;
use redq_console::tui::state::{Action, Command, Focus, Mutation, Settings, State, Update};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::connect;

/// Jobs that may run 5 times, dead after their last try: each enqueued
/// with 4 attempts already recorded (as if moved from another system) and
/// failed once.
async fn dead_after_five(queue: &RedisQueue, name: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let job = NewJob::new(serde_json::json!({ "n": i }))
            .max_attempts(5)
            .attempts(4);
        ids.push(queue.add(name, job).await.unwrap().id().to_owned());
    }
    for job in queue.claim(name, n, Duration::from_secs(60)).await.unwrap() {
        queue
            .nack(&job.lease(), Duration::ZERO, "HTTP 503")
            .await
            .unwrap();
    }
    assert_eq!(queue.counts(name).await.unwrap().dead, n as u64);
    ids
}

/// The console's state after one snapshot of the Dead letters screen.
async fn console_on_dead_letters(target: &Target, namespace: &str) -> State {
    let mut state = State::new(Settings {
        url: target.redacted_url().to_owned(),
        namespace: namespace.to_owned(),
        shards: Vec::new(),
        read_only: false,
        refresh: Duration::from_secs(1),
    });
    state.apply(Action::Show(redq_console::tui::state::Screen::Dead));
    let snapshot = source::fetch(target, &Focus::Dead).await.unwrap();
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: SystemTime::now(),
    }));
    state
}

/// Type `keys` through the key table (`⌫` is Backspace); the mutations
/// they start.
fn type_keys(state: &mut State, keys: &str) -> Vec<Mutation> {
    let mut sent = Vec::new();
    for c in keys.chars() {
        let code = match c {
            '⌫' => KeyCode::Backspace,
            c => KeyCode::Char(c),
        };
        let event = KeyEvent::new(code, KeyModifiers::NONE);
        if let Some(action) = action_for(state, &event) {
            if let Command::Mutate(mutation) = state.apply(action) {
                sent.push(mutation);
            }
        }
    }
    sent
}

/// Carry out `mutation` as the console's I/O task does; its result line.
async fn run(target: &Target, mutation: Mutation) -> (String, bool) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    source::mutate(target, mutation, &tx).await;
    let mut finished = None;
    while let Ok(update) = rx.try_recv() {
        if let Update::Finished { message, ok } = update {
            finished = Some((message, ok));
        }
    }
    finished.expect("a mutation always reports how it ended")
}

#[tokio::test]
async fn a_requeued_dead_letter_restarts_at_the_attempts_typed() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("console_requeue_attempts");
    let queue = connect(&url, &ns).await;
    dead_after_five(&queue, "webhooks", 2).await;
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console_on_dead_letters(&target, &ns).await;
    let selected = state.visible_dead()[0].id.clone();

    // 5 is at the jobs' max attempts: refused, and nothing reaches Redis.
    assert!(type_keys(&mut state, "r5y").is_empty());
    assert_eq!(
        state.status.as_ref().map(|s| s.text.as_str()),
        Some("attempts 5 refused: accepted are 0 to 4 (max attempts is 5)")
    );
    assert_eq!(queue.counts("webhooks").await.unwrap().dead, 2);

    // Corrected to 3: the job waits again, 3 attempts already counted.
    let sent = type_keys(&mut state, "⌫3y");
    let [mutation] = sent.as_slice() else {
        panic!("one requeue, got {sent:?}");
    };
    assert_eq!(
        run(&target, mutation.clone()).await,
        (
            "requeued 1 dead letter, attempts restart at 3".to_owned(),
            true
        )
    );
    let job = queue.inspect(&selected).await.unwrap().unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Waiting, 3));

    // R requeues the rest the same way, through the bulk form.
    let mut state = console_on_dead_letters(&target, &ns).await;
    let rest = state.visible_dead()[0].id.clone();
    let sent = type_keys(&mut state, "R2y");
    assert_eq!(
        sent,
        vec![Mutation::RequeueAllDead {
            queues: vec!["webhooks".into()],
            attempts: 2
        }]
    );
    assert_eq!(
        run(&target, sent[0].clone()).await,
        (
            "requeued 1 dead letter, attempts restart at 2".to_owned(),
            true
        )
    );
    let job = queue.inspect(&rest).await.unwrap().unwrap();
    assert_eq!((job.state, job.attempts), (JobState::Waiting, 2));
}
