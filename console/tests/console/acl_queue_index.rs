//! A name in the queue index that no queue may have, put there by anyone
//! allowed to write the namespace's keys (`SADD {redq}:queues "evq\e]52;…"`),
//! is skipped: the other queues are listed as before, and the CLI says once
//! on stderr, escaped, that the index holds a name redq refuses.

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::{assert_exit, connect, redq, stderr, stdout};

#[tokio::test]
async fn a_hostile_name_in_the_queue_index_is_skipped_and_said_once_escaped() {
    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("acl_queue_index"));
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    let hostile = "evq\u{1b}]52;c;aGk=\u{7}";
    server
        .cmd(&["SADD", &format!("{{{ns}}}:queues"), hostile])
        .await;

    let out = redq(&url, &ns, &["queues"]);
    assert_exit(&out, 0);
    let (table, said) = (stdout(&out), stderr(&out));
    assert!(table.lines().any(|l| l.starts_with("emails")), "{table}");
    assert!(!table.contains("evq"), "{table}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("refuses as a queue name"), "{said}");
    assert!(said.contains(r#""evq\x1b]52;c;aGk=\x07""#), "{said}");
    assert!(!said.contains('\u{1b}') && !table.contains('\u{1b}'));

    let json = redq(&url, &ns, &["queues", "-o", "json"]);
    assert_exit(&json, 0);
    assert!(stdout(&json).contains("\"emails\""), "{}", stdout(&json));
}

#[tokio::test]
async fn the_console_says_the_index_holds_a_refused_name_in_a_line_under_the_tabs() {
    use redq_console::tui::state::{Action, Update};

    let server = RedisServer::start();
    let (url, ns) = (server.url(), unique_namespace("acl_queue_index_tui"));
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    let hostile = "evq\u{1b}]52;c;aGk=\u{7}";
    server
        .cmd(&["SADD", &format!("{{{ns}}}:queues"), hostile])
        .await;
    // What the console's source reads with each refresh.
    let refused = q.refused_queue_names().await.unwrap();
    assert_eq!(refused, vec![hostile.to_owned()]);
    assert_eq!(q.queues().await.unwrap(), vec!["emails".to_owned()]);

    let mut state = crate::common::loaded();
    state.apply(Action::Received(Update::RefusedQueueNames(refused)));
    let screen = crate::outage::screen_at(&state, crate::common::now());
    assert!(
        screen.contains("the queue index holds a name that redq refuses"),
        "{screen}"
    );
    assert!(screen.contains(r#""evq\x1b]52;c;aGk=\x07""#), "{screen}");
    assert!(!screen.contains('\u{1b}'), "{screen}");
}
