//! `redq` over `rediss://` to a real redis-server whose certificates come
//! from a private CA made here with the openssl CLI: `REDQ_TLS_CA_FILE`
//! makes the console trust it (as it does the driver's `from_config`), and
//! each certificate trouble is said in words with TLS advice, never as
//! rustls's `Debug` text nor as advice about a password: a CA not trusted,
//! a certificate for another host, one that expired, and a server that
//! asks for a client certificate (which redq does not send).

use std::path::Path;
use std::process::{Command, Output};

use redq::NewJob;
use redq_tests::tls::{free_port, make_ca, make_server_cert};
use redq_tests::{unique_namespace, RedisServer};

use crate::seed::{assert_exit, connect, stderr, stdout, BIN};

/// The day `name`.crt expires, as openssl reads it (2020-01-02).
fn not_after(dir: &Path, name: &str) -> String {
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-enddate", "-dateopt", "iso_8601", "-in"])
        .arg(dir.join(format!("{name}.crt")))
        .output()
        .expect("the openssl CLI is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .strip_prefix("notAfter=")
        .and_then(|at| at.split(' ').next())
        .unwrap_or_else(|| panic!("no notAfter in {text:?}"))
        .to_owned()
}

/// `redq queues` on `url` with only these variables of ours set.
fn queues(url: &str, ns: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command
        .arg("queues")
        .env("REDIS_URL", url)
        .env("REDQ_NAMESPACE", ns)
        .env_remove("REDQ_SHARDS")
        .env_remove("REDQ_LOG")
        .env_remove("REDQ_TLS_CA_FILE");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("running redq")
}

/// Exit 1 with one line that says `words` and gives TLS advice, with no
/// Rust `Debug` text and no advice about a password.
#[track_caller]
fn assert_tls_refusal(out: &Output, words: &str) {
    assert_exit(out, 1);
    let said = stderr(out);
    assert!(said.contains(words), "want {words:?} in: {said}");
    assert!(said.contains("REDQ_TLS_CA_FILE"), "{said}");
    for debug in ["Custom {", "InvalidData", "Context", "DnsName", "password"] {
        assert!(!said.contains(debug), "{debug} in: {said}");
    }
    assert_eq!(said.lines().count(), 1, "{said}");
}

#[tokio::test]
async fn a_private_ca_is_trusted_from_redq_tls_ca_file_and_certificate_troubles_are_said_in_words()
{
    let dir = tempfile::tempdir().unwrap();
    make_ca(dir.path());
    make_server_cert(dir.path(), "good", "DNS:localhost,IP:127.0.0.1", "2");
    make_server_cert(dir.path(), "other", "DNS:otherhost", "2");
    make_server_cert(dir.path(), "expired", "DNS:localhost,IP:127.0.0.1", "-1");
    let file = |name: &str| dir.path().join(name).display().to_string();
    let tls_port = free_port();
    let server = RedisServer::builder()
        .arg("tls-port", tls_port.to_string())
        .arg("tls-cert-file", file("good.crt"))
        .arg("tls-key-file", file("good.key"))
        .arg("tls-ca-cert-file", file("ca.crt"))
        .arg("tls-auth-clients", "no")
        .start();
    let ns = unique_namespace("tls_private_ca");
    connect(&server.url(), &ns)
        .await
        .add("emails", NewJob::new(serde_json::json!({})))
        .await
        .unwrap();
    let url = format!("rediss://localhost:{tls_port}");
    let ca = file("ca.crt");
    let trusting = [("REDQ_TLS_CA_FILE", ca.as_str())];

    let out = queues(&url, &ns, &trusting);
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("emails"), "{}", stdout(&out));
    // The flag says the same as the variable.
    let out = Command::new(BIN)
        .args(["queues", "--tls-ca-file", &ca])
        .env("REDIS_URL", &url)
        .env("REDQ_NAMESPACE", &ns)
        .env_remove("REDQ_TLS_CA_FILE")
        .env_remove("REDQ_LOG")
        .output()
        .expect("running redq");
    assert_exit(&out, 0);
    assert!(stdout(&out).contains("emails"), "{}", stdout(&out));

    // The system's roots do not hold the private CA.
    assert_tls_refusal(
        &queues(&url, &ns, &[]),
        "the server's certificate is not signed by a CA this client trusts",
    );

    // A file that cannot be read is a usage error, before any connect.
    let out = queues(&url, &ns, &[("REDQ_TLS_CA_FILE", "/nonexistent/ca.crt")]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("TLS CA file /nonexistent/ca.crt"),
        "{}",
        stderr(&out)
    );

    let set = |cert: &str| {
        let (crt, key) = (file(&format!("{cert}.crt")), file(&format!("{cert}.key")));
        let server = &server;
        async move {
            // Both at once: a certificate and the other's key are refused.
            server
                .cmd(&["CONFIG", "SET", "tls-cert-file", &crt, "tls-key-file", &key])
                .await;
        }
    };
    set("other").await;
    assert_tls_refusal(
        &queues(&url, &ns, &trusting),
        "the server's certificate is for otherhost, not localhost",
    );

    set("expired").await;
    // The rustls in use says when the certificate expired only in its
    // newer releases (ExpiredContext); the date is given when it does.
    let out = queues(&url, &ns, &trusting);
    let dated = format!(
        "the server's certificate expired on {}",
        not_after(dir.path(), "expired")
    );
    let words = if stderr(&out).contains("expired on") {
        dated.as_str()
    } else {
        "the server's certificate has expired"
    };
    assert_tls_refusal(&out, words);

    set("good").await;
    server
        .cmd(&["CONFIG", "SET", "tls-auth-clients", "yes"])
        .await;
    assert_tls_refusal(
        &queues(&url, &ns, &trusting),
        "the server asks for a client certificate, which redq does not send",
    );
}
