//! A batch with two callbacks held for an operator, on the Workflows
//! screen against a real Redis: `r` there names the first held one and
//! says how to pick another; in the gate view `w` picks the waiter, the
//! waiters table marks it, and `r` then `y` release the one picked.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::workflow::{Batch, Condition, OnFailure};
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Screen, State, View};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{console, drawn, press, prompt, refresh, run};
use crate::seed::connect;

/// The screen as drawn at 120×30.
fn screen(state: &State) -> String {
    drawn(state, 120, 30)
}

#[tokio::test]
async fn w_picks_which_held_waiter_r_releases() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_waiters"));
    let q = connect(&url, &ns).await;
    let held = || NewJob::new(serde_json::json!("callback"));
    let batch = Batch::new()
        .label("two held")
        .job("work", NewJob::new(serde_json::json!("kaput")))
        .callback("after", held(), Condition::AllSucceeded, OnFailure::Hold)
        .callback("after", held(), Condition::AllSucceeded, OnFailure::Hold);
    let handle = q.enqueue_batch(batch).await.unwrap();
    let batch_id = handle.id.to_string();
    let (first, second) = (
        handle.callbacks[0].id().to_owned(),
        handle.callbacks[1].id().to_owned(),
    );
    let job = q
        .claim("work", 1, Duration::from_secs(60))
        .await
        .unwrap()
        .remove(0);
    q.dead_letter(&job.lease(), "kaput").await.unwrap();
    // after's next claim decides both: held.
    assert!(q
        .claim("after", 10, Duration::from_secs(60))
        .await
        .unwrap()
        .is_empty());

    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('8')]);
    assert_eq!(state.screen(), Screen::Workflows);
    refresh(&target, &mut state).await;

    // On the list: r names the first held and how to pick another.
    assert!(press(&mut state, &[KeyCode::Char('r')]).is_empty());
    assert!(
        prompt(&state).starts_with(&format!(
            "Release held job {first} (waiter 1 of 2, the first of 2 held: Enter, then w picks \
             another) into after"
        )),
        "{}",
        prompt(&state)
    );
    press(&mut state, &[KeyCode::Char('n')]);

    // In the gate view: w picks the second, which the table marks.
    press(&mut state, &[KeyCode::Enter]);
    assert!(matches!(&state.view, View::Gate(g) if g.query.id == batch_id));
    refresh(&target, &mut state).await;
    let marked = |state: &State| {
        screen(state)
            .lines()
            .find(|l| l.contains('▶') && l.contains("held"))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no waiter marked:\n{}", screen(state)))
    };
    assert!(marked(&state).contains(&first), "{}", screen(&state));
    assert!(screen(&state).contains("w picks, r d decide"));
    press(&mut state, &[KeyCode::Char('w')]);
    assert!(marked(&state).contains(&second), "{}", screen(&state));
    // j/k still move the members' cursor, not the waiter picked.
    press(&mut state, &[KeyCode::Char('j')]);
    assert!(marked(&state).contains(&second));

    assert!(press(&mut state, &[KeyCode::Char('r')]).is_empty());
    assert!(
        prompt(&state).starts_with(&format!(
            "Release held job {second} (waiter 2 of 2, w picks another) into after"
        )),
        "{}",
        prompt(&state)
    );
    let mutation = press(&mut state, &[KeyCode::Char('y')])
        .pop()
        .expect("y releases");
    let ((message, ok), _) = run(&target, &mut state, mutation).await;
    assert!(ok, "{message}");
    assert_eq!(
        q.inspect(&second).await.unwrap().unwrap().state,
        JobState::Waiting
    );
    assert_eq!(
        q.inspect(&first).await.unwrap().unwrap().state,
        JobState::Awaiting,
        "the first is still held"
    );

    // w wraps to the first again; d on the released one says so.
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Char('w')]);
    assert!(press(&mut state, &[KeyCode::Char('d')]).is_empty());
    assert!(prompt(&state).starts_with(&format!("Dead-letter held job {first} (waiter 1 of 2")));
    press(&mut state, &[KeyCode::Char('n')]);
    press(&mut state, &[KeyCode::Char('w')]);
    press(&mut state, &[KeyCode::Char('d')]);
    assert!(
        state.confirm().is_none(),
        "a released waiter is not asked about"
    );
    let said = state.status.as_ref().map(|s| s.text.clone()).unwrap();
    assert!(
        said.starts_with(&format!("waiter 2 of 2, {second}, is released")),
        "{said}"
    );
}
