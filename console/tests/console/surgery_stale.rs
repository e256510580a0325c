//! The job detail acts on what it shows. A detail opened on a running job
//! whose job then completes (its queue keeping it) shows the completed job,
//! and its keys act on a completed job: `d` asks to delete the completed
//! job, not to void a lease; `c` is refused at once, nothing being left to
//! cancel. Driven as the console runs: the detail's job read again through
//! the source, keys through the key table, against a real Redis.

use std::time::Duration;

use ratatui::crossterm::event::KeyCode;
use redq::kept::Retention;
use redq::{JobState, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::source;
use redq_console::tui::state::{Action, Overlay, State};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{chars, console, drawn, press, prompt, refresh};
use crate::seed::connect;

const LATER: Duration = Duration::from_secs(3600);

/// Read the detail's job again, as each refresh of the console does.
async fn reread(target: &Target, state: &mut State) {
    let id = state.watched_job().expect("the detail watches its job");
    for update in source::read_watched(target, &id).await {
        state.apply(Action::Received(update));
    }
}

#[tokio::test]
async fn the_detail_of_a_job_that_completed_acts_on_the_completed_job() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_stale"));
    let queue = connect(&url, &ns).await;
    queue
        .set_retention("emails", &Retention::new().max_count(100))
        .await
        .unwrap();
    queue
        .add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap();
    let job = queue.claim("emails", 1, LATER).await.unwrap().remove(0);
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    // The queue's jobs, → to leased, and its detail.
    press(
        &mut state,
        &[KeyCode::Enter, KeyCode::Right, KeyCode::Right],
    );
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    assert_eq!(state.detail().unwrap().record.state, JobState::Leased);

    queue.ack(&job.lease()).await.unwrap();
    reread(&target, &mut state).await;
    let detail = state.detail().unwrap();
    assert_eq!(detail.record.id, job.id);
    assert_eq!(detail.record.state, JobState::Completed);
    let screen = drawn(&state, 100, 30);
    assert!(
        screen.contains(&format!("completed job {}", job.id)),
        "{screen}"
    );

    // `d` deletes the completed job: no lease to void.
    assert!(press(&mut state, &chars("d")).is_empty());
    let asked = prompt(&state);
    assert!(
        asked.starts_with(&format!("Delete completed job {}", job.id)),
        "{asked}"
    );
    assert!(!asked.contains("lease"), "{asked}");
    press(&mut state, &chars("n"));

    // `c`: nothing to cancel, said at once, nothing asked or sent.
    assert!(press(&mut state, &chars("c")).is_empty());
    assert!(
        matches!(state.overlay, Overlay::None),
        "{:?}",
        state.overlay
    );
    let said = state.status.as_ref().unwrap().text.clone();
    assert!(
        said.contains("nothing to cancel") && said.contains("completed"),
        "{said}"
    );
}

/// A job deleted elsewhere while its detail is open reads as gone: the
/// title and state line say so (what it last was kept below), and its keys
/// refuse at once rather than ask about a waiting job that is not there.
#[tokio::test]
async fn the_detail_of_a_job_deleted_elsewhere_reads_as_gone() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_gone"));
    let queue = connect(&url, &ns).await;
    let id = queue
        .add("emails", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap()
        .id()
        .to_owned();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    assert_eq!(state.detail().unwrap().record.id, id);

    queue.delete_job(&id, redq::IfLeased::Refuse).await.unwrap();
    reread(&target, &mut state).await;
    let screen = drawn(&state, 100, 30);
    assert!(screen.contains(&format!("gone job {id}")), "{screen}");
    assert!(
        screen.contains("gone: deleted, or finished and not kept (it was waiting)"),
        "{screen}"
    );

    for key in ["d", "c"] {
        let sent = press(&mut state, &chars(key));
        assert!(sent.is_empty(), "{key}: {sent:?}");
        assert!(
            matches!(state.overlay, Overlay::None),
            "{key}: {:?}",
            state.overlay
        );
    }
    assert!(press(&mut state, &chars("d")).is_empty());
    let said = state.status.as_ref().unwrap().text.clone();
    assert!(
        said.contains(&format!("job {id} no longer exists")),
        "{said}"
    );
}
