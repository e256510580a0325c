//! The Workflows screen against a real Redis, through the console's source
//! and key table: `8` lists a batch and a held dependent, Enter opens the
//! batch with its members, `c` then `y` cancels it (its pending jobs and
//! its callback with it), and `r` then `y` releases the held job.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::workflow::{Batch, OnFailure};
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Screen, State, View};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{console, drawn, press, prompt, refresh, run};
use crate::seed::connect;

/// The screen as drawn at 100×30.
fn screen(state: &State) -> String {
    drawn(state, 100, 30)
}

#[tokio::test]
async fn the_workflows_screen_cancels_a_batch_and_releases_a_held_job() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_workflows"));
    let q = connect(&url, &ns).await;
    let rows = (0..5)
        .map(|n| NewJob::new(serde_json::json!({"row": n})))
        .collect();
    let batch = Batch::new()
        .label("import 12")
        .jobs("imports", rows)
        .on_complete("reports", NewJob::new(serde_json::json!({"import": 12})));
    let handle = q.enqueue_batch(batch).await.unwrap();
    let batch_id = handle.id.to_string();
    let callback = handle.callbacks[0].id().to_owned();
    let charge = q
        .add("payments", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let receipt = NewJob::new(serde_json::json!(2))
        .after([charge.id()])
        .on_dependency_failure(OnFailure::Hold);
    let receipt = q.add("mail", receipt).await.unwrap().id().to_owned();
    q.cancel(charge.id(), "test").await.unwrap();
    // mail's next claim decides the receipt: held.
    assert!(q
        .claim("mail", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .is_empty());

    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('8')]);
    assert_eq!(state.screen(), Screen::Workflows);
    refresh(&target, &mut state).await;
    let drawn = screen(&state);
    let line = |needle: &str| {
        drawn
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?}:\n{drawn}"))
            .to_owned()
    };
    let held = line(&receipt[receipt.len() - 12..]);
    assert!(held.contains("deps") && held.contains("held"), "{held}");
    let row = line("import 12");
    assert!(
        row.contains("batch") && row.contains("0/5") && row.contains("pending"),
        "{row}"
    );

    // Enter on the batch: its callback waits for 5 of 5, its members wait.
    let at = state
        .visible_gates()
        .iter()
        .position(|g| g.id == batch_id)
        .expect("the batch is listed");
    for _ in 0..at {
        press(&mut state, &[KeyCode::Down]);
    }
    press(&mut state, &[KeyCode::Enter]);
    assert!(matches!(&state.view, View::Gate(g) if g.query.id == batch_id));
    refresh(&target, &mut state).await;
    assert_eq!(state.visible_members().len(), 5);
    let drawn = screen(&state);
    assert!(drawn.contains("waiting for 5 of 5"), "{drawn}");
    assert!(drawn.contains("Members 1–5 of 5"), "{drawn}");

    // c, then y: the batch, its pending jobs and its callback are cancelled.
    let sent = press(&mut state, &[KeyCode::Char('c')]);
    assert!(sent.is_empty(), "c only asks");
    assert!(
        prompt(&state).starts_with(&format!("Cancel batch {batch_id}?")),
        "{}",
        prompt(&state)
    );
    let mutation = press(&mut state, &[KeyCode::Char('y')])
        .pop()
        .expect("y cancels");
    let ((message, ok), _) = run(&target, &mut state, mutation).await;
    assert!(
        ok && message.starts_with(&format!("cancelled {batch_id}: 5 pending jobs cancelled")),
        "{message}"
    );
    assert_eq!(q.counts("imports").await.unwrap().waiting, 0);
    assert!(q
        .claim("reports", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .is_empty());
    assert!(
        q.inspect(&callback).await.unwrap().is_none(),
        "the callback is cancelled"
    );
    refresh(&target, &mut state).await;
    assert!(
        screen(&state).contains("cancelled: its batch was cancelled"),
        "{}",
        screen(&state)
    );

    // Esc, the held receipt, r then y: it is released into mail.
    press(&mut state, &[KeyCode::Esc]);
    assert_eq!(state.view, View::Screen(Screen::Workflows));
    refresh(&target, &mut state).await;
    while state.visible_gates()[state.cursor().index].id != receipt {
        press(&mut state, &[KeyCode::Down]);
    }
    assert!(
        press(&mut state, &[KeyCode::Char('r')]).is_empty(),
        "r only asks"
    );
    assert!(prompt(&state).starts_with(&format!("Release held job {receipt} into mail")));
    let mutation = press(&mut state, &[KeyCode::Char('y')])
        .pop()
        .expect("y releases");
    let ((message, ok), _) = run(&target, &mut state, mutation).await;
    assert!(ok, "{message}");
    assert_eq!(
        message,
        format!("released {receipt}: it enters its queue and runs")
    );
    let job = q.inspect(&receipt).await.unwrap().unwrap();
    assert_eq!(job.state, JobState::Waiting);
}
