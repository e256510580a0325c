//! A Redis URL's query: parameters the client would silently ignore
//! (`?password=...`, once dropped and then echoed in "cannot connect to")
//! are refused before connecting, named without their values; the ones the
//! client reads (cluster and sentinel nodes) still pass.

use redq::{redact_url, QueueError, RedisQueue};
use redq_tests::RedisServer;

fn refusal(url: &str) -> String {
    match RedisQueue::builder(url).check_url() {
        Err(QueueError::Config(message)) => message,
        other => panic!("{url}: expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_password_in_the_query_is_refused_by_name_before_connecting() {
    let server = RedisServer::start();
    let url = format!("{}?password=s3cr3t", server.url());
    let message = refusal(&url);
    assert!(
        message.contains("the query parameter password is not read"),
        "{message}"
    );
    assert!(message.contains("redis://:PASSWORD@host"), "{message}");
    assert!(!message.contains("s3cr3t"), "{message}");
    // Connecting says the same, without trying the server.
    match RedisQueue::connect(&url).await {
        Err(QueueError::Config(m)) => assert_eq!(m, message),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("a URL with ?password= connected"),
    }
    assert!(!redact_url(&url).contains("s3cr3t"));
}

#[test]
fn parameters_the_client_reads_still_pass_and_others_are_named() {
    RedisQueue::builder("redis-cluster://127.0.0.1:7000?node=127.0.0.1:7001")
        .check_url()
        .expect("a cluster's seed nodes");
    let sentinel = refusal(
        "redis-sentinel://127.0.0.1:26379?sentinelServiceName=main&sentinelPassword=s3cr3t",
    );
    assert!(sentinel.contains("sentinelPassword"), "{sentinel}");
    assert!(!sentinel.contains("s3cr3t"), "{sentinel}");
    // The service name is a name an operator needs in the sentence, not a
    // secret: shown (redact_url shows it and the seed nodes, nothing else).
    assert!(sentinel.contains("sentinelServiceName=main"), "{sentinel}");
    let db = refusal("redis://127.0.0.1:6379?db=2");
    assert!(db.contains("parameter db"), "{db}");
    assert!(db.contains("/2"), "the database goes after the host: {db}");
    // A part without '=' may be a password pasted there: never shown.
    let bare = refusal("redis://127.0.0.1:6379?s3cr3t");
    assert!(bare.contains("a query part without '='"), "{bare}");
    assert!(!bare.contains("s3cr3t"), "{bare}");
}
