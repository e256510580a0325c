//! What the subcommands say to an operator: the questions of the bulk forms
//! name the command and flags that exist, refusals say what was wrong and
//! what is accepted, and nothing asks for --yes when there is nothing to do.

use std::time::Duration;

use redq::NewJob;
use redq_tests::{unique_namespace, RedisServer};
use serde_json::json as value;

use crate::seed::*;

const LATER: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn a_bulk_question_names_the_real_command_and_flags() {
    let server = RedisServer::start();
    let ns = unique_namespace("wording-bulk");
    let url = server.url();
    let q = connect(&url, &ns).await;
    q.add("emails", NewJob::new(value!(1)).delay(LATER))
        .await
        .unwrap();
    for i in 0..4 {
        q.add("emails", NewJob::new(value!(i))).await.unwrap();
    }

    let out = redq(&url, &ns, &["jobs", "promote", "--queue", "emails"]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(!said.contains("--all"), "{said}");
    assert!(
        said.contains(
            "redq: jobs promote --queue emails would make the 1 scheduled job of emails due now; add --yes to do it"
        ),
        "{said}"
    );

    let out = redq(
        &url,
        &ns,
        &["jobs", "delete", "--queue", "emails", "--state", "waiting"],
    );
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(!said.contains("--all"), "{said}");
    assert!(
        said.contains(
            "redq: jobs delete --queue emails --state waiting would delete all 4 waiting jobs of emails for good; add --yes to do it"
        ),
        "{said}"
    );

    let out = redq(&url, &ns, &["jobs", "retry", "--queue", "emails"]);
    assert_exit(&out, 2);
    let said = stderr(&out);
    assert!(!said.contains("--all"), "{said}");
    assert!(
        said.contains("redq: jobs retry --queue emails would run"),
        "{said}"
    );

    // Nothing moved.
    let counts = q.counts("emails").await.unwrap();
    assert_eq!((counts.waiting, counts.scheduled), (4, 1));
}
