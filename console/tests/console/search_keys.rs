//! The payload search keys against a real Redis: `S` on a queue's jobs
//! view, a text, Enter; the walk goes through the console's own search
//! steps (`tui::search::walk`, as its I/O task runs them); then `c` cancels
//! every match, asking with the count first, and the jobs are read back
//! with the driver.

use std::collections::BTreeSet;

use ratatui::crossterm::event::KeyCode;
use redq::{JobResult, NewJob};
use redq_console::aggregate::Target;
use redq_console::tui::state::{Action, Mutation, State, Update, View};
use redq_tests::{unique_namespace, RedisServer};

use crate::live::{chars, console, press, prompt, refresh, run};
use crate::seed::connect;

/// Walk the search the console asks for to its end, as its I/O task does,
/// the state receiving each step; how many steps came.
async fn walk(target: &Target, state: &mut State) -> usize {
    let wanted = state.search_wanted().expect("Enter starts the search");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    redq_console::tui::search::walk(target, &wanted, &tx).await;
    let mut steps = 0;
    while let Ok(update) = rx.try_recv() {
        steps += usize::from(matches!(update, Update::Search(_)));
        state.apply(Action::Received(update));
    }
    steps
}

#[tokio::test]
async fn s_finds_the_matching_jobs_and_c_cancels_every_one_of_them_and_no_other() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("console_search"));
    let queue = connect(&url, &ns).await;
    let customer = |c: &str, n: u32| NewJob::new(serde_json::json!({"customer": c, "n": n}));
    // Enough others that the walk takes several bounded steps.
    let others = queue
        .add_batch("billing", (0..1500).map(|n| customer("cus_7", n)).collect())
        .await
        .unwrap();
    let wanted: BTreeSet<String> = queue
        .add_batch("billing", (0..4).map(|n| customer("cus_3", n)).collect())
        .await
        .unwrap()
        .iter()
        .map(|e| e.id().to_owned())
        .collect();
    let target = Target::single(connect(&url, &ns).await);
    let mut state = console(&target, &ns);
    refresh(&target, &mut state).await;
    press(&mut state, &[KeyCode::Enter]);
    refresh(&target, &mut state).await;

    press(&mut state, &chars("Scus_3"));
    assert_eq!(
        state.search_wanted(),
        None,
        "nothing is searched while typing"
    );
    press(&mut state, &[KeyCode::Enter]);
    let steps = walk(&target, &mut state).await;
    assert!(steps > 1, "the walk is bounded steps, {steps} here");
    let search = state.search.clone().unwrap();
    assert!(search.done && !search.running);
    let found: BTreeSet<String> = search.matches.iter().map(|j| j.id.clone()).collect();
    assert_eq!(found, wanted);
    assert_eq!(
        state.search_wanted(),
        None,
        "a finished walk is not asked for again"
    );

    // Enter shows a match's detail; Esc comes back to the results.
    press(&mut state, &[KeyCode::Down, KeyCode::Enter]);
    let shown = state.detail().expect("a job's detail").record.id.clone();
    assert!(wanted.contains(&shown));
    press(&mut state, &[KeyCode::Esc]);
    assert!(matches!(state.view, View::Jobs(_)) && state.search_shown().is_some());

    assert!(press(&mut state, &chars("c")).is_empty());
    let asked = prompt(&state);
    assert!(
        asked
            .starts_with("Cancel all 4 matching jobs of billing whose payload contains \"cus_3\"?"),
        "{asked}"
    );
    assert!(
        press(&mut state, &chars("n")).is_empty(),
        "the default is no"
    );
    assert_eq!(queue.counts("billing").await.unwrap().waiting, 1504);

    let sent = press(&mut state, &chars("cy"));
    assert!(
        matches!(&sent[..], [Mutation::OnMatches { ids, .. }] if ids.len() == 4),
        "{sent:?}"
    );
    let ((message, ok), progress) = run(&target, &mut state, sent[0].clone()).await;
    assert!(ok, "{message}");
    assert_eq!(message, "cancelled 4 matching jobs");
    assert!(progress >= 1, "progress is reported");
    for id in &wanted {
        assert!(
            matches!(queue.result(id).await.unwrap(), JobResult::Tombstone(_)),
            "{id} is cancelled"
        );
    }
    assert_eq!(queue.counts("billing").await.unwrap().waiting, 1500);
    // The results are searched again: the cancelled jobs leave them.
    walk(&target, &mut state).await;
    let again = state.search.clone().unwrap();
    assert!(again.done, "the text was searched again to its end");
    assert!(
        again.matches.is_empty(),
        "cancelled jobs still listed: {:?}",
        again.matches.iter().map(|j| &j.id).collect::<Vec<_>>()
    );
    for id in others.iter().take(20).map(|e| e.id()) {
        assert!(
            queue.inspect(id).await.unwrap().is_some(),
            "{id} is untouched"
        );
    }
}
