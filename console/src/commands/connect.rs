//! Connecting for a subcommand, the console or the demo, and the one place
//! a connection failure becomes the sentence an operator reads: what
//! failed, on which URL (never its password), and what to try.

use std::path::PathBuf;
use std::time::Duration;

use redq::{ConnectionFault, QueueError, RedisQueue, RedisQueueBuilder};

use crate::aggregate::Target;
use crate::cli::Connection;
use crate::failure::Failure;

/// Commands give up on a Redis that does not answer within this.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

/// The driver's settings for the connection's URL (any namespace). Operator
/// actions are recorded on the event stream as `--actor`'s, else as the
/// CLI's (`cli <user>@<host>`); the console sets its own default over this.
///
/// The scripts are called by `EVALSHA`, not as Redis Functions (the
/// driver's default): an operator's look at a Redis leaves nothing there
/// but its script cache, never a function library that is replicated and
/// persisted. The console's calls are few, so functions would save little.
/// Nor are they readied at connect: a command runs a few of the 45, each
/// composed and, if the server lacks it, loaded at its first call, which
/// spares every command composing them all (most of its CPU time).
///
/// With a CA file (`REDQ_TLS_CA_FILE`, as the driver's `from_config` reads
/// it) `rediss://` trusts the CAs in it instead of the system's roots, read
/// by the driver's own `RedisQueueBuilder::tls_ca_file`. A file that cannot
/// be read is refused by [`check_url`], which every connect runs first.
pub fn builder(connection: &Connection) -> RedisQueueBuilder {
    let builder = RedisQueue::builder(connection.url())
        .command_timeout(COMMAND_TIMEOUT)
        .actor(connection.actor("cli"))
        .script_calls(redq::ScriptCalls::Eval)
        .preload_scripts(false);
    match tls_ca_file(connection) {
        Some(path) => builder.clone().tls_ca_file(path).unwrap_or(builder),
        None => builder,
    }
}

/// The file of CA certificates to trust for `rediss://`, if one is named.
fn tls_ca_file(connection: &Connection) -> Option<PathBuf> {
    connection.tls_ca_file.clone()
}

/// A URL the driver would refuse, or a CA file it cannot read, is a usage
/// error (exit 2), said before anything is sent.
pub fn check_url(connection: &Connection) -> Result<(), Failure> {
    if let Some(path) = tls_ca_file(connection) {
        if let Err(e) = std::fs::File::open(&path) {
            return Err(Failure::Usage(format!(
                "the TLS CA file {} (--tls-ca-file or {}) cannot be read: {e}",
                path.display(),
                redq::config::TLS_CA_FILE_VAR
            )));
        }
    }
    builder(connection)
        .check_url()
        .map_err(|e| bad_url(connection.url(), e))
}

/// Connect for a subcommand: one namespace, or every shard of it with
/// `--shards`. Its operator actions are the CLI's.
pub async fn connect(connection: &Connection) -> Result<Target, Failure> {
    connect_as(connection, "cli").await
}

/// [`connect`], with operator actions recorded as `program`'s (`console`
/// for the demo's console, so its keystrokes are not logged as the CLI's).
pub async fn connect_as(connection: &Connection, program: &str) -> Result<Target, Failure> {
    check_url(connection)?;
    let target = Target::connect(
        builder(connection).actor(connection.actor(program)),
        connection.namespace(),
        connection.shards(),
    )
    .await
    .map_err(connect_failure)?;
    tracing::info!(
        url = %target.redacted_url(),
        namespace = %target.namespace(),
        shards = connection.shards(),
        "connected"
    );
    say_refused_queue_names(&target).await;
    Ok(target)
}

/// A name in the queue index that no queue may have (anyone with write
/// access to Redis can add one) is skipped by every listing, which would
/// otherwise fail on it; said once per command on stderr, escaped (it may
/// hold terminal escapes), so that an operator can remove it. A failed
/// read says nothing: the command's own read will say why.
async fn say_refused_queue_names(target: &Target) {
    let Ok(Ok(names)) = tokio::time::timeout(COMMAND_TIMEOUT, target.refused_queue_names()).await
    else {
        return;
    };
    if names.is_empty() {
        return;
    }
    let shown: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                "\"{}\"",
                crate::text::truncate(&crate::text::inert(name), 80)
            )
        })
        .collect();
    let index = target
        .shards()
        .iter()
        .map(|shard| redq::keys::Keys::new(shard.namespace()).queues())
        .collect::<Vec<_>>()
        .join(", ");
    eprintln!(
        "redq: note: the queue index ({index}) holds {} that redq refuses as a queue name and \
         skips (shown escaped): {}; remove with SREM if no one meant it",
        if names.len() == 1 { "a name" } else { "names" },
        shown.join(", ")
    );
}

/// Where the accepted URL forms are written down.
const URL_FORMS: &str = "the accepted forms are listed under --url in redq --help";

fn bad_url(url: &str, e: QueueError) -> Failure {
    let QueueError::Config(message) = &e else {
        return Failure::Usage(e.to_string());
    };
    // The driver says "<the redacted URL>: <why>"; the URL is named here.
    let shown = redq::redact_url(url);
    let why = message
        .strip_prefix(&format!("{shown}: "))
        .unwrap_or(message);
    let hint = if why.contains("accepted:") {
        String::new()
    } else {
        format!("; {URL_FORMS}")
    };
    if url::Url::parse(url).is_err() {
        // Not even a URL: it is not echoed, since it may be a password
        // pasted in the wrong place.
        return Failure::Usage(format!(
            "the Redis URL from --url or REDIS_URL (not shown, in case it holds a password) \
             is not a valid URL: {why}{hint}"
        ));
    }
    Failure::Usage(format!("the Redis URL {shown} is not usable: {why}{hint}"))
}

/// What to check, by the kind of fault: advice about a password does not
/// help a Redis that is paused, nor a database number the server does not
/// have.
fn connect_advice(fault: Option<ConnectionFault>) -> &'static str {
    match fault {
        Some(ConnectionFault::NoAnswer) => {
            "something accepted the connection but did not answer: Redis may be paused \
             (CLIENT PAUSE), busy (a long script) or overloaded, or another service listens there"
        }
        Some(ConnectionFault::NoSuchDatabase) => {
            "the database number at the end of the URL is beyond the server's `databases` \
             setting (16 by default: /0 to /15)"
        }
        Some(ConnectionFault::LoginRefused) => {
            "the user or password in the URL (--url or REDIS_URL) is not accepted"
        }
        Some(ConnectionFault::NotRedis) => {
            "check the host, port and scheme of the URL (--url or REDIS_URL)"
        }
        Some(ConnectionFault::Tls) => {
            "check the TLS settings: REDQ_TLS_CA_FILE names a PEM file of the CA that signed the \
             server's certificate (without it the system's root certificates are trusted), the \
             URL's host is a name that certificate holds, and the certificate is within its dates"
        }
        _ => {
            "check that Redis is running there and that the URL (--url or REDIS_URL) and its \
             password are right"
        }
    }
}

/// A failed connect as the operator reads it (the console's first connect
/// shares it).
pub fn connect_failure(e: QueueError) -> Failure {
    match &e {
        QueueError::ConnectFailed { target, detail, .. } => Failure::Failed(format!(
            "cannot connect to {target}: {detail}; {}",
            connect_advice(e.connection_fault())
        )),
        _ => Failure::from(e),
    }
}
