//! Jobs waiting on other jobs are where an operator looks: `redq queues`
//! and the Queues screen count them (AWAITING, `"awaiting"` in JSON), since
//! a queue holding only such jobs otherwise reads as empty, and `redq jobs
//! show` says what such a job waits on and where to read more.

use redq::{NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json;

use redq_console::tui::state::{Action, Screen, Update};

use crate::common::{loaded, now, snapshot};
use crate::seed::*;
use crate::views::screen_text;

#[test]
fn the_queues_screen_counts_awaiting_jobs_only_while_some_queue_has_them() {
    let mut state = loaded();
    state.apply(Action::Show(Screen::Queues));
    state.apply(Action::Resize(140, 30));
    assert!(!screen_text(&state, 140, 30).contains("AWAITING"));

    let mut snapshot = snapshot();
    let reports = snapshot
        .queues
        .iter_mut()
        .find(|q| q.counts.queue == "reports")
        .unwrap();
    reports.counts.awaiting = 37;
    state.apply(Action::Received(Update::Snapshot {
        snapshot: Box::new(snapshot),
        received_at: now(),
    }));
    let text = screen_text(&state, 140, 30);
    let header: Vec<&str> = text
        .lines()
        .find(|l| l.contains("QUEUE"))
        .unwrap()
        .split_whitespace()
        .collect();
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.contains("reports"))
        .unwrap()
        .split_whitespace()
        .collect();
    let column = header.iter().position(|h| *h == "AWAITING");
    // The row's cells line up with the header's after the border.
    let offset = row.iter().position(|c| *c == "reports").unwrap()
        - header.iter().position(|h| *h == "QUEUE").unwrap();
    assert_eq!(column.map(|c| row[c + offset]), Some("37"), "{text}");
}

#[tokio::test]
async fn a_dependent_job_is_counted_and_its_detail_says_what_it_awaits() {
    let server = RedisServer::start();
    let url = server.url();
    let ns = unique_namespace("awaiting-cli");
    let queue = RedisQueue::builder(&url)
        .namespace(&ns)
        .connect()
        .await
        .unwrap();
    let charge = queue
        .add("payments", NewJob::new(json!({ "order": 9 })))
        .await
        .unwrap();
    let receipt = queue
        .add(
            "mail",
            NewJob::new(json!({ "order": 9 })).after([charge.id()]),
        )
        .await
        .unwrap();

    let out = redq(&url, &ns, &["queues"]);
    assert_exit(&out, 0);
    let table = stdout(&out);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let column = header.iter().position(|h| *h == "AWAITING");
    let mail: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("mail"))
        .unwrap_or_else(|| panic!("no mail row:\n{table}"))
        .split_whitespace()
        .collect();
    assert_eq!(column.map(|c| mail[c]), Some("1"), "{table}");

    let out = redq(&url, &ns, &["-o", "json", "queues"]);
    assert_exit(&out, 0);
    let rows = json(&out);
    let mail = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["queue"] == "mail")
        .unwrap();
    assert_eq!(mail["awaiting"], 1, "{rows}");

    let out = redq(&url, &ns, &["jobs", "show", receipt.id()]);
    assert_exit(&out, 0);
    let detail = stdout(&out);
    let awaits = detail
        .lines()
        .find(|l| l.starts_with("awaits"))
        .unwrap_or_else(|| panic!("no awaits line:\n{detail}"));
    assert!(awaits.contains("(0 of 1 finished)"), "{detail}");
    assert!(
        detail.contains(&format!("redq deps show {}", receipt.id())),
        "{detail}"
    );
}
