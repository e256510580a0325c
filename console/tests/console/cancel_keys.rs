//! The console's cancel keys against a real Redis: `c` on the selected job
//! (a row of the jobs view, the job detail, or a row of the Leases screen)
//! and `C` on every job of the state shown. Each names what it touches and
//! asks (default No); the change goes through the console's source and the
//! driver, and the jobs are read back with the driver.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::{JobResult, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::Mutation;
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{chars, console, press, prompt, refresh, run};
use crate::seed::connect;

#[tokio::test]
async fn c_on_a_running_job_of_the_leases_screen_asks_naming_it_then_cancels_it() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_cancel"));
    let queue = connect(&url, &ns).await;
    queue
        .add("emails", NewJob::new(serde_json::json!(1)).name("t.mail"))
        .await
        .unwrap();
    let held = queue
        .claim("emails", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    press(&mut state, &chars("2"));
    refresh(&target, &mut state).await;

    assert!(press(&mut state, &chars("c")).is_empty());
    let asked = prompt(&state);
    assert!(
        asked.starts_with(&format!("Cancel leased job {} (emails t.mail)?", held.id)),
        "{asked}"
    );
    assert!(asked.contains("Its worker is told at once"), "{asked}");
    assert!(
        press(&mut state, &chars("n")).is_empty(),
        "no is the answer that sends nothing"
    );
    assert_eq!(queue.counts("emails").await.unwrap().leased, 1);

    let sent = press(&mut state, &chars("cy"));
    assert_eq!(sent, vec![Mutation::CancelJob(held.id.clone())]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert!(message.starts_with("cancelled"), "{message}");
    assert_eq!(queue.counts("emails").await.unwrap().leased, 0);
    assert!(matches!(
        queue.result(&held.id).await.unwrap(),
        JobResult::Tombstone(_)
    ));
}

#[tokio::test]
async fn capital_c_in_the_jobs_view_asks_with_the_count_then_cancels_the_state() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_cancel_all"));
    let queue = connect(&url, &ns).await;
    queue
        .add_batch(
            "emails",
            (0..3).map(|n| NewJob::new(serde_json::json!(n))).collect(),
        )
        .await
        .unwrap();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;

    assert!(press(&mut state, &chars("C")).is_empty());
    assert_eq!(
        prompt(&state),
        "Cancel all 3 waiting jobs of emails? They leave for good and are never retried."
    );
    let sent = press(&mut state, &chars("y"));
    assert_eq!(sent.len(), 1);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(message, "cancelled 3 jobs");
    assert_eq!(queue.counts("emails").await.unwrap().waiting, 0);
}
