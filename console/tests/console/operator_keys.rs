//! The operator keys against a real Redis, through the console's source and
//! key table: on the Schedules screen `t` triggers, `p` pauses and resumes,
//! `d` deletes the selected schedule; on the Leases screen `x` reclaims the
//! lapsed leases of the selected lease's queue; on the grouped Dead letters
//! screen `K` requeues three canaries of a group and reports what became of
//! them. Each asks first naming its target, and No is the default.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::schedule::Schedule;
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::Screen;
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{console, press, prompt, refresh, run};
use crate::seed::{connect, dead_letters};

#[tokio::test]
async fn schedule_keys_trigger_pause_resume_and_delete_after_asking() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("keys_schedules"));
    let queue = connect(&url, &ns).await;
    queue
        .upsert_schedule(Schedule::new("digest", "emails", "0 3 * * *"))
        .await
        .unwrap();
    let target = Target::single(queue.clone());
    let mut state = console(&target, &ns);
    press(&mut state, &[KeyCode::Char('4')]);
    assert_eq!(state.screen(), Screen::Schedules);
    refresh(&target, &mut state).await;

    // t asks, naming the schedule and its queue; any other key is No.
    assert!(press(&mut state, &[KeyCode::Char('t')]).is_empty());
    let asked = prompt(&state);
    assert!(
        asked.contains("Trigger schedule digest now") && asked.contains("emails"),
        "{asked}"
    );
    assert!(press(&mut state, &[KeyCode::Char('x')]).is_empty());
    assert_eq!(queue.counts("emails").await.unwrap().waiting, 0);

    press(&mut state, &[KeyCode::Char('t')]);
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(
        ok && message.starts_with("triggered schedule digest: job "),
        "{message}"
    );
    assert_eq!(queue.counts("emails").await.unwrap().waiting, 1);

    // p pauses, then (refreshed, shown paused) resumes.
    press(&mut state, &[KeyCode::Char('p')]);
    assert!(prompt(&state).starts_with("Pause schedule digest?"));
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert!(queue.schedule("digest").await.unwrap().unwrap().paused);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('p')]);
    assert!(
        prompt(&state).starts_with("Resume schedule digest?"),
        "{}",
        prompt(&state)
    );
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    run(&target, &mut state, sent[0].clone()).await;
    assert!(!queue.schedule("digest").await.unwrap().unwrap().paused);

    // d deletes after asking.
    press(&mut state, &[KeyCode::Char('d')]);
    assert!(prompt(&state).contains("Delete schedule digest?"));
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok && message == "deleted schedule digest", "{message}");
    assert!(queue.schedule("digest").await.unwrap().is_none());
}

#[tokio::test]
async fn x_on_the_leases_screen_reclaims_the_lapsed_leases_of_the_queue() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("keys_reclaim"));
    let queue = connect(&url, &ns).await;
    for i in 0..3 {
        queue
            .add("emails", NewJob::new(serde_json::json!(i)))
            .await
            .unwrap();
    }
    // The worker that claimed them died: its leases lapse, nobody reclaims.
    let claimed = queue
        .claim("emails", 3, Duration::from_millis(50))
        .await
        .unwrap();
    assert_eq!(claimed.len(), 3);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while queue.counts("emails").await.unwrap().lapsed < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the leases never lapsed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let target = Target::single(queue.clone());
    let mut state = console(&target, &ns);
    press(&mut state, &[KeyCode::Char('2')]);
    refresh(&target, &mut state).await;
    state.clock = std::time::SystemTime::now();

    press(&mut state, &[KeyCode::Char('x')]);
    let asked = prompt(&state);
    assert!(
        asked.starts_with("Reclaim the 3 lapsed leases of emails now?"),
        "{asked}"
    );
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert!(message.contains("3 back in the queue"), "{message}");
    let counts = queue.counts("emails").await.unwrap();
    assert_eq!((counts.waiting, counts.leased), (3, 0), "{counts:?}");
}

#[tokio::test]
async fn k_on_a_dead_letter_group_requeues_three_canaries_and_reports_their_fate() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("keys_canary"));
    let queue = connect(&url, &ns).await;
    dead_letters(&queue, "webhooks", 5, "timeout after 3000 ms").await;
    let target = Target::single(queue.clone());
    let mut state = console(&target, &ns);
    press(&mut state, &[KeyCode::Char('3')]);
    refresh(&target, &mut state).await;
    // Ungrouped, K says what it needs.
    assert!(press(&mut state, &[KeyCode::Char('K')]).is_empty());
    assert!(state
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("works on a group"));
    press(&mut state, &[KeyCode::Char('s')]);

    press(&mut state, &[KeyCode::Char('K')]);
    let asked = prompt(&state);
    assert!(
        asked.starts_with("Requeue 3 of the 5 dead letters with error \"timeout after # ms\""),
        "{asked}"
    );
    let sent = press(&mut state, &[KeyCode::Char('y')]);
    // A worker completes whatever comes back: the canaries complete.
    let worker = {
        let queue = queue.clone();
        tokio::spawn(async move {
            loop {
                for job in queue
                    .claim("webhooks", 10, Duration::from_secs(30))
                    .await
                    .unwrap()
                {
                    queue.ack(&job.lease()).await.unwrap();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let ((message, ok), _) = run(&target, &mut state, sent[0].clone()).await;
    worker.abort();
    assert!(ok, "{message}");
    assert_eq!(
        message,
        "canaries: 3 completed, 0 dead again, 0 still running; r on the group requeues the other 2 dead letters"
    );
    let counts = queue.counts("webhooks").await.unwrap();
    assert_eq!(counts.dead, 2, "the rest stay dead: {counts:?}");
    assert_eq!(
        queue
            .list_jobs("webhooks", JobState::Dead, 0, 10)
            .await
            .unwrap()
            .items
            .len(),
        2
    );
}
