//! `redq functions` lists redq's function libraries on the server (the
//! driver's default loads one per writing script it calls) and `prune`
//! drops those of other driver versions, against a real redis-server.

use std::time::Duration;

use redq::{NewJob, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::*;

/// A library as an earlier driver version would have left it: its name
/// has another hash of the same script.
const OTHER_VERSION: &str = "redq_enqueue_0000000000000000";

async fn lifecycle(queue: &RedisQueue) {
    queue
        .add(
            "mail",
            NewJob::new(serde_json::json!({"to": "a@example.com"})),
        )
        .await
        .unwrap();
    let jobs = queue
        .claim("mail", 1, Duration::from_secs(60))
        .await
        .unwrap();
    queue.ack(&jobs[0].lease()).await.unwrap();
}

#[tokio::test]
async fn functions_lists_this_versions_libraries_and_prune_drops_only_the_others() {
    let server = RedisServer::start();
    let ns = unique_namespace("functions-cli");
    let url = server.url();
    let queue = connect(&url, &ns).await;
    lifecycle(&queue).await;
    let code = format!(
        "#!lua name={OTHER_VERSION}\nredis.register_function('{OTHER_VERSION}', function() return 1 end)"
    );
    server.cmd(&["FUNCTION", "LOAD", &code]).await;
    // A service's connect loaded the library of every script that writes.
    let current = redq_tests::lua::writing_libraries();

    let out = redq(&url, &ns, &["functions", "-o", "json"]);
    assert_exit(&out, 0);
    let listed = json(&out);
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), current.len() + 1, "{listed}");
    for row in rows {
        let name = row["library"].as_str().unwrap();
        let expected = if name == OTHER_VERSION {
            "other"
        } else {
            "this"
        };
        assert_eq!(row["version"], expected, "{row}");
        assert!(row["code_bytes"].as_u64().unwrap() > 0, "{row}");
    }
    let other = rows.iter().find(|r| r["library"] == OTHER_VERSION).unwrap();
    assert_eq!(other["script"], "enqueue");
    assert_eq!(other["code_bytes"].as_u64().unwrap() as usize, code.len());

    let table = redq(&url, &ns, &["functions"]);
    assert_exit(&table, 0);
    let said = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(said.contains(OTHER_VERSION), "{said}");
    assert!(said.contains("1 library of another redq version"), "{said}");

    // Refused read-only, changing nothing.
    let refused = redq(&url, &ns, &["--read-only", "functions", "prune"]);
    assert_exit(&refused, 1);
    assert!(server
        .function_libraries()
        .await
        .contains(&OTHER_VERSION.to_owned()));

    let pruned = redq(&url, &ns, &["functions", "prune"]);
    assert_exit(&pruned, 0);
    let said = String::from_utf8_lossy(&pruned.stdout).into_owned();
    assert!(
        said.starts_with("dropped 1 function library of other redq versions"),
        "{said}"
    );
    assert!(!server
        .function_libraries()
        .await
        .contains(&OTHER_VERSION.to_owned()));
    for name in &current {
        assert!(
            server.function_libraries().await.contains(&name.to_owned()),
            "{name} was dropped"
        );
    }
    // The services' libraries stayed: they run on as before.
    lifecycle(&queue).await;
}
