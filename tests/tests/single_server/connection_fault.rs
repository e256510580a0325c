//! A service reacts to a connection's trouble by its kind, not by the words
//! of a message: wait and retry while Redis is down or paused, stop and fix
//! the URL when the password or the database number is wrong. Each kind is
//! produced here by a real server in that condition.

use std::time::Duration;

use redq::{ConnectionFault, NewJob, QueueError, RedisQueue};
use redq_tests::{unique_namespace, RedisServer};

const TIMEOUT: Duration = Duration::from_secs(1);

async fn connect_fault(url: &str) -> (Option<ConnectionFault>, QueueError) {
    let err = RedisQueue::builder(url)
        .command_timeout(TIMEOUT)
        .connect()
        .await
        .expect_err("the connect must fail");
    assert!(
        matches!(err, QueueError::ConnectFailed { .. }),
        "a connection's failure: {err:?}"
    );
    (err.connection_fault(), err)
}

#[tokio::test]
async fn no_server_listening_is_refused_and_transient() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (fault, err) = connect_fault(&format!("redis://127.0.0.1:{port}")).await;
    assert_eq!(fault, Some(ConnectionFault::Refused), "{err}");
    assert!(ConnectionFault::Refused.is_transient());
}

#[tokio::test]
async fn a_wrong_or_missing_password_is_a_refused_login_that_waiting_cannot_cure() {
    let server = RedisServer::builder().password("right-Secret-3c1a").start();
    let wrong = format!("redis://:wrong-Secret-8e02@127.0.0.1:{}", server.port());
    let (fault, err) = connect_fault(&wrong).await;
    assert_eq!(fault, Some(ConnectionFault::LoginRefused), "{err}");
    let (fault, err) = connect_fault(&server.url()).await;
    assert_eq!(fault, Some(ConnectionFault::LoginRefused), "none: {err}");
    assert!(!ConnectionFault::LoginRefused.is_transient());
}

#[tokio::test]
async fn a_database_number_the_server_lacks_is_named_as_such() {
    let server = RedisServer::start();
    let (fault, err) = connect_fault(&format!("{}/99", server.url())).await;
    assert_eq!(fault, Some(ConnectionFault::NoSuchDatabase), "{err}");
    assert!(!ConnectionFault::NoSuchDatabase.is_transient());
}

#[tokio::test]
async fn a_paused_redis_does_not_answer() {
    let server = RedisServer::start();
    server.cmd(&["CLIENT", "PAUSE", "3000", "ALL"]).await;
    let (fault, err) = connect_fault(&server.url()).await;
    assert_eq!(fault, Some(ConnectionFault::NoAnswer), "{err}");
}

/// A web server where Redis was expected: its first reply is not Redis's
/// protocol, and the error says what to check rather than the client's
/// decoder's words.
#[tokio::test]
async fn a_port_that_speaks_another_protocol_is_not_redis() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut request = [0u8; 512];
                let _ = socket.read(&mut request).await;
                let _ = socket
                    .write_all(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                    .await;
            });
        }
    });
    let (fault, err) = connect_fault(&format!("redis://127.0.0.1:{port}")).await;
    server.abort();
    assert_eq!(fault, Some(ConnectionFault::NotRedis), "{err}");
    let said = err.to_string();
    assert!(said.contains("not in Redis's protocol"), "{said}");
    assert!(said.contains("rediss://"), "{said}");
}

/// A handle that was connected: its commands fail with a connection's
/// fault while Redis is gone, and a command's own refusal is none.
#[tokio::test]
async fn a_connected_handle_reads_a_killed_server_as_a_transient_fault() {
    let mut server = RedisServer::start();
    let queue = RedisQueue::builder(&server.url())
        .namespace(unique_namespace("fault"))
        .command_timeout(TIMEOUT)
        .connect()
        .await
        .unwrap();
    let refused = queue
        .add("bad:queue", NewJob::new(serde_json::json!(1)))
        .await
        .unwrap_err();
    assert_eq!(refused.connection_fault(), None, "{refused}");

    server.kill9();
    let err = queue.counts("q").await.unwrap_err();
    let fault = err.connection_fault();
    assert!(
        fault.is_some_and(ConnectionFault::is_transient),
        "a killed server: {fault:?} from {err}"
    );
}
