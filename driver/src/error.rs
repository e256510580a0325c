//! The one error type of the crate.

use std::time::Duration;

use crate::connection_fault::{of_client_error, ConnectionFault};

/// Everything that can go wrong talking to a redq queue.
///
/// Input errors ([`QueueError::Invalid`], [`QueueError::PayloadTooLarge`]) are
/// raised before anything is sent to Redis, so nothing is ever half written.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// An argument broke a rule; `what` names it, `rule` says what is accepted.
    #[error("invalid {what} {value:?}: {rule}")]
    Invalid {
        /// Which argument (e.g. "queue name").
        what: &'static str,
        /// The offending value, shortened when long.
        value: String,
        /// What is accepted instead.
        rule: String,
    },
    /// A payload is larger than the configured limit.
    #[error("payload is {size} bytes, over the limit of {limit} bytes")]
    PayloadTooLarge {
        /// Serialized payload size in bytes.
        size: usize,
        /// The configured limit ([`crate::RedisQueueBuilder::payload_limit`]).
        limit: usize,
    },
    /// The job is not held under this lease any more: the lease lapsed and was
    /// reclaimed, or the job was claimed again. This call changed nothing.
    ///
    /// One case reads the same and is not a refusal: a call whose reply was
    /// lost when Redis restarted is sent again by the client, and if its
    /// first run had applied (the nack went through, then another worker
    /// claimed and finished the job) the second run finds the lease gone.
    /// So after a connection loss, `LeaseLost` on an ack, nack or release
    /// means "not held now", not "never applied"; a handler must not undo
    /// work on the strength of it alone.
    #[error("lease lost on job {id}: it is no longer held under lease {lease_id}")]
    LeaseLost {
        /// The job.
        id: String,
        /// The lease that was presented (0 when none was known).
        lease_id: u64,
    },
    /// An operator cancelled the job (see [`crate::kept`]): it is gone for
    /// good and will not be retried. The holder's ack, nack or extend
    /// changed nothing; the worker stops the job.
    #[error("job {id} was cancelled by an operator")]
    JobCancelled {
        /// The job.
        id: String,
    },
    /// No job with this id exists (in the given queue, when one was named).
    #[error("no job {id}")]
    JobNotFound {
        /// The job id that was looked up.
        id: String,
    },
    /// The job is in a state this change does not accept (promote, retry
    /// now, delete or edit, see [`crate::surgery`]); nothing was changed.
    #[error("cannot {change} job {id}: it is {state}; {accepted}")]
    WrongState {
        /// The job.
        id: String,
        /// The change refused ("promote", "retry now", "delete", "edit").
        change: &'static str,
        /// The state the job is in, in words ("leased (running)").
        state: &'static str,
        /// What the change accepts instead.
        accepted: &'static str,
    },
    /// Redis refused a write because it reached `maxmemory` (policy
    /// `noeviction`). Nothing was written; claims, acks and dead-lettering
    /// keep working so workers can drain the queue.
    #[error("redis is out of memory (maxmemory reached); nothing was written")]
    OutOfMemory,
    /// A command did not complete within the configured timeout; a write
    /// may or may not have been applied (a read changed nothing either way).
    #[error(
        "redis command timed out after {}; if it was a write, it may or may not have been applied",
        crate::human::duration_text(*.0)
    )]
    Timeout(Duration),
    /// The URL or a connection setting is unusable (a TLS file that does
    /// not parse, a URL form the driver does not take); retrying the same
    /// settings cannot help.
    #[error("connection: {0}")]
    Config(String),
    /// Connecting to the server failed: it could not be reached, did not
    /// answer, or refused the login or the database. Nothing was sent.
    /// [`QueueError::connection_fault`] says which, as a value to act on.
    #[error("connection: cannot connect to {target}: {detail}")]
    ConnectFailed {
        /// The URL connected to, its password removed.
        target: String,
        /// Why, when it is a connection's fault the driver recognises
        /// (`None`: a TLS handshake, a cluster that is not one, …).
        fault: Option<ConnectionFault>,
        /// What the client or the server said, in plain words.
        detail: String,
    },
    /// A setting read by [`crate::config`] (from the environment or a
    /// config file) is unusable. Raised before anything connects.
    #[error("invalid {key} {} from {origin}: {accepted}", shown_setting(.value))]
    InvalidSetting {
        /// The setting as named in a config file (`pool_size`), or what is
        /// wrong when no setting is (`setting name`, `line`, `config file`).
        key: String,
        /// The value given, `None` where it is not shown because it may
        /// hold a secret (a URL is shown with its password removed).
        value: Option<String>,
        /// Where it came from: an environment variable (`REDQ_POOL_SIZE`)
        /// or a file and line (`/etc/redq.toml line 3`).
        origin: String,
        /// What is accepted instead.
        accepted: String,
    },
    /// Redis answered something the driver did not expect (a bug or a
    /// foreign writer in the namespace).
    #[error("unexpected reply from redis: {0}")]
    Protocol(String),
    /// Any other Redis or connection failure.
    #[error("redis error: {0}")]
    Redis(#[source] RedisError),
    /// A batch or tree sent in several calls (`crate::workflow`) failed
    /// half-way: the jobs enqueued so far run, its callbacks or parent do
    /// not exist, and its open gate expires 24 hours after its last job
    /// joined.
    #[error(
        "{gate} is incomplete: {enqueued} of its jobs were enqueued, then {cause}; they run, nothing waits on them, and it expires in 24 hours"
    )]
    WorkflowIncomplete {
        /// The batch id, or the tree parent's id.
        gate: String,
        /// How many of its jobs were enqueued before the failure.
        enqueued: u64,
        /// What failed.
        #[source]
        cause: Box<QueueError>,
    },
}

/// An error reported by the Redis client, kept as the source of
/// [`QueueError::Redis`]. Its text never contains credentials, and is plain
/// words: the client renders I/O and URL errors with Rust's `Debug`
/// (`IO Error: Os { code: 111, kind: ConnectionRefused, … }`), which
/// `plain` turns back into what the operating system said.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", plain(&self.0))]
pub struct RedisError(pub(crate) fred::error::Error);

/// A client error in plain words: what the server or the operating system
/// said, without the client's kind label or Rust `Debug` syntax.
pub(crate) fn plain(err: &fred::error::Error) -> String {
    use fred::error::ErrorKind;
    let details = err.details();
    match err.kind() {
        // `format!("{:?}", io::Error)`: `Os { .., message: "Connection refused" }`,
        // `Custom { .., error: "failed to lookup address information: .." }`,
        // `Kind(UnexpectedEof)`.
        ErrorKind::IO => crate::connection_fault::tls_refusal(details)
            .or_else(|| quoted_field(details, "message: \""))
            .or_else(|| quoted_field(details, "error: \""))
            .or_else(|| debug_value(details, "error: "))
            .or_else(|| {
                let kind = details.strip_prefix("Kind(")?.strip_suffix(')')?;
                Some(words(kind))
            })
            .map(|text| lowercase_first(&text))
            .unwrap_or_else(|| details.to_owned()),
        // `format!("{:?}", url::ParseError)`: `InvalidPort`, `EmptyHost`.
        ErrorKind::Url if is_identifier(details) => words(details),
        // Fixed sentences such as "Invalid integer string.".
        ErrorKind::Parse => lowercase_first(details.trim_end_matches('.')),
        ErrorKind::Timeout => format!("timed out: {details}"),
        ErrorKind::Auth => format!("authentication failed: {}", details.trim_end_matches('.')),
        // Replies from the server (`ERR …`, `NOPERM …`) and the rest: the
        // details are already words.
        _ => details.to_owned(),
    }
}

/// An error value after `field` in a `Debug` rendering, in words: rustls
/// leaves `error: InvalidCertificate(UnknownIssuer) }`, which reads
/// `invalid certificate (unknown issuer)`.
fn debug_value(debug: &str, field: &str) -> Option<String> {
    let start = debug.find(field)? + field.len();
    let value = debug[start..].trim_end_matches('}').trim();
    let (name, inner) = match value.split_once('(') {
        Some((name, rest)) => (name, Some(rest.strip_suffix(')')?)),
        None => (value, None),
    };
    if !is_identifier(name) || !inner.is_none_or(is_identifier) {
        return None;
    }
    Some(match inner {
        Some(inner) => format!("{} ({})", words(name), words(inner)),
        None => words(name),
    })
}

/// The string literal after `field` in a `Debug` rendering, unescaped.
fn quoted_field(debug: &str, field: &str) -> Option<String> {
    let start = debug.find(field)? + field.len();
    let mut out = String::new();
    let mut chars = debug[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}

fn is_identifier(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `ConnectionRefused` → `connection refused`.
fn words(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        // Keep acronyms ("TLS handshake …") as they are.
        Some(first) if !chars.clone().next().is_some_and(|c| c.is_ascii_uppercase()) => {
            first.to_lowercase().chain(chars).collect()
        }
        _ => text.to_owned(),
    }
}

impl QueueError {
    pub(crate) fn invalid(
        what: &'static str,
        value: impl AsRef<str>,
        rule: impl Into<String>,
    ) -> Self {
        QueueError::Invalid {
            what,
            value: shorten(value.as_ref()),
            rule: rule.into(),
        }
    }

    /// Why the connection failed, when this error is a connection's: the
    /// server is down or unreachable, does not answer (a command that
    /// timed out counts: it may be paused or busy), or refused the login or
    /// the database number. `None` for every other error: a refusal of
    /// input, a job's state, a script's error, a command Redis refused.
    /// [`ConnectionFault::is_transient`] says whether waiting can cure it.
    pub fn connection_fault(&self) -> Option<ConnectionFault> {
        match self {
            QueueError::ConnectFailed { fault, .. } => *fault,
            QueueError::Timeout(_) => Some(ConnectionFault::NoAnswer),
            QueueError::Redis(RedisError(err)) => of_client_error(err),
            _ => None,
        }
    }

    pub(crate) fn from_redis(err: fred::error::Error, timeout: Duration) -> Self {
        use fred::error::ErrorKind;
        let details = err.details();
        if details.starts_with("OOM") || details.contains("maxmemory") {
            return QueueError::OutOfMemory;
        }
        if *err.kind() == ErrorKind::Timeout {
            return QueueError::Timeout(timeout);
        }
        QueueError::Redis(RedisError(err))
    }
}

/// A setting's value as an error shows it: quoted, or a note that it is
/// withheld.
fn shown_setting(value: &Option<String>) -> String {
    match value {
        Some(value) => format!("{:?}", shorten(value)),
        None => "(not shown: it may hold a password)".to_owned(),
    }
}

/// Keep error messages readable when a caller passes a huge value.
fn shorten(value: &str) -> String {
    const MAX: usize = 80;
    if value.len() <= MAX {
        return value.to_owned();
    }
    let mut end = MAX;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &value[..end], value.len())
}

#[cfg(test)]
mod tests {
    use fred::error::{Error, ErrorKind};

    use super::RedisError;

    fn shown(err: Error) -> String {
        RedisError(err).to_string()
    }

    #[test]
    fn client_errors_read_as_words_not_rust_debug() {
        let refused = std::io::Error::from_raw_os_error(111);
        assert_eq!(shown(Error::from(refused)), "connection refused");
        let lookup = std::io::Error::other(
            "failed to lookup address information: Name or service not known",
        );
        assert_eq!(
            shown(Error::from(lookup)),
            "failed to lookup address information: Name or service not known"
        );
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert_eq!(shown(Error::from(eof)), "unexpected eof");
        assert_eq!(
            shown(Error::from(url::ParseError::InvalidPort)),
            "invalid port"
        );
        assert_eq!(
            shown(Error::new(ErrorKind::Unknown, "ERR unknown command 'FOO'")),
            "ERR unknown command 'FOO'"
        );
        let untrusted = Error::new(
            ErrorKind::IO,
            "Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }",
        );
        assert_eq!(
            shown(untrusted),
            "the server's certificate is not signed by a CA this client trusts (invalid \
             certificate: unknown issuer)"
        );
    }
}
