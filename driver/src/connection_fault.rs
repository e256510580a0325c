//! What kind of trouble a connection is in, as a value a caller can act on:
//! whether to wait and retry (the server is down, restarting or paused) or
//! to stop and fix a setting (a password, a database number). Read once,
//! here, from what the client and the server said, so that no caller has
//! to match the words of an error message.

/// Why a connection to Redis failed, where the failure is the connection's
/// and not a command's ([`crate::QueueError::connection_fault`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionFault {
    /// Nothing accepted the connection: no server listens at that address.
    Refused,
    /// The server closed or reset the connection (it stopped, restarted,
    /// or dropped this client).
    Closed,
    /// Something accepted the connection but did not answer in time: a
    /// Redis paused by `CLIENT PAUSE`, busy in a long script, overloaded,
    /// or another service on that port.
    NoAnswer,
    /// The host could not be found or reached (name lookup, no route).
    NoRoute,
    /// The server refused the user or password.
    LoginRefused,
    /// The URL's database number is beyond the server's `databases`
    /// setting (16 by default: `/0` to `/15`).
    NoSuchDatabase,
    /// Something answered the connect in a protocol other than Redis's:
    /// another service on that port, or a TLS port reached with
    /// `redis://` instead of `rediss://`.
    NotRedis,
}

impl ConnectionFault {
    /// Whether waiting can cure it: a server that is down, unreachable or
    /// paused may come back, while a refused password or a database number
    /// the server lacks stays wrong until the URL changes.
    pub fn is_transient(self) -> bool {
        match self {
            ConnectionFault::Refused
            | ConnectionFault::Closed
            | ConnectionFault::NoAnswer
            | ConnectionFault::NoRoute => true,
            ConnectionFault::LoginRefused
            | ConnectionFault::NoSuchDatabase
            | ConnectionFault::NotRedis => false,
        }
    }
}

/// The fault in an error that ended a connect. A reply the client cannot
/// decode there is the first thing the server said, so not Redis; later,
/// on an established connection, it is not taken for that.
pub(crate) fn of_connect_error(err: &fred::error::Error) -> Option<ConnectionFault> {
    match err.kind() {
        fred::error::ErrorKind::Protocol => Some(ConnectionFault::NotRedis),
        _ => of_client_error(err),
    }
}

/// The fault in a client error, if it is a connection's.
pub(crate) fn of_client_error(err: &fred::error::Error) -> Option<ConnectionFault> {
    use fred::error::ErrorKind;
    let details = err.details();
    match err.kind() {
        ErrorKind::Auth => Some(ConnectionFault::LoginRefused),
        ErrorKind::Timeout => Some(ConnectionFault::NoAnswer),
        ErrorKind::IO => of_io(details),
        // fred's own words when a connection ends under a command
        // ("Connection closed unexpectedly.", "Connection(s) closed.").
        ErrorKind::Canceled if details.starts_with("Connection") => Some(ConnectionFault::Closed),
        _ => of_server_reply(details),
    }
}

/// Replies from the server that are about the connection, not a command:
/// servers before Redis 6 refuse a password with a plain `ERR`, and a
/// database number out of range is refused at the connection's `SELECT`.
fn of_server_reply(reply: &str) -> Option<ConnectionFault> {
    if reply.starts_with("WRONGPASS")
        || reply.starts_with("NOAUTH")
        || reply.contains("invalid password")
        || reply.contains("invalid username-password")
    {
        Some(ConnectionFault::LoginRefused)
    } else if reply.contains("DB index is out of range") {
        Some(ConnectionFault::NoSuchDatabase)
    } else {
        None
    }
}

/// fred keeps an I/O error as its `Debug` text
/// (`Os { code: 111, kind: ConnectionRefused, message: "…" }`,
/// `Kind(UnexpectedEof)`, `Custom { kind: Uncategorized, error: "failed to
/// lookup address information: …" }`) or as its own sentence
/// ("Connection closed."); the `io::ErrorKind` named there decides. Other
/// kinds (`InvalidData`: a certificate the client does not trust) are not
/// a connection's trouble that waiting or a login could change.
fn of_io(details: &str) -> Option<ConnectionFault> {
    let kind = details
        .split_once("kind: ")
        .map(|(_, rest)| rest)
        .or_else(|| details.strip_prefix("Kind("))
        .map(|rest| rest.split([',', ')', ' ']).next().unwrap_or(""))
        .unwrap_or("");
    let fault = match kind {
        "ConnectionRefused" => ConnectionFault::Refused,
        "ConnectionReset" | "ConnectionAborted" | "BrokenPipe" | "UnexpectedEof"
        | "NotConnected" => ConnectionFault::Closed,
        "TimedOut" | "WouldBlock" => ConnectionFault::NoAnswer,
        "HostUnreachable" | "NetworkUnreachable" | "AddrNotAvailable" | "NetworkDown" => {
            ConnectionFault::NoRoute
        }
        _ if details.contains("lookup address") || details.starts_with("Failed to resolve") => {
            ConnectionFault::NoRoute
        }
        // fred's own sentences for a connection that ended or went quiet
        // ("Connection closed.", "Connection Closed", "Unresponsive
        // connection.").
        _ if details.to_lowercase().contains("connection closed") => ConnectionFault::Closed,
        _ if details.starts_with("Unresponsive connection") => ConnectionFault::NoAnswer,
        _ => return None,
    };
    Some(fault)
}

#[cfg(test)]
mod tests {
    use fred::error::{Error, ErrorKind};

    use super::{of_client_error, ConnectionFault};

    fn io(kind: std::io::ErrorKind) -> Error {
        Error::from(std::io::Error::from(kind))
    }

    #[test]
    fn io_errors_are_read_by_their_kind() {
        let refused = Error::from(std::io::Error::from_raw_os_error(111));
        assert_eq!(of_client_error(&refused), Some(ConnectionFault::Refused));
        let reset = Error::from(std::io::Error::from_raw_os_error(104));
        assert_eq!(of_client_error(&reset), Some(ConnectionFault::Closed));
        let no_route = Error::from(std::io::Error::from_raw_os_error(113));
        assert_eq!(of_client_error(&no_route), Some(ConnectionFault::NoRoute));
        assert_eq!(
            of_client_error(&io(std::io::ErrorKind::UnexpectedEof)),
            Some(ConnectionFault::Closed)
        );
        assert_eq!(
            of_client_error(&io(std::io::ErrorKind::TimedOut)),
            Some(ConnectionFault::NoAnswer)
        );
        let lookup = Error::from(std::io::Error::other(
            "failed to lookup address information: Name or service not known",
        ));
        assert_eq!(of_client_error(&lookup), Some(ConnectionFault::NoRoute));
        let closed = Error::new(ErrorKind::IO, "Connection closed.");
        assert_eq!(of_client_error(&closed), Some(ConnectionFault::Closed));
        let untrusted = Error::new(
            ErrorKind::IO,
            "Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }",
        );
        assert_eq!(of_client_error(&untrusted), None);
    }

    #[test]
    fn server_replies_about_the_login_or_database_are_faults_and_others_are_not() {
        let wrongpass = Error::new(
            ErrorKind::Auth,
            "WRONGPASS invalid username-password pair or user is disabled.",
        );
        assert_eq!(
            of_client_error(&wrongpass),
            Some(ConnectionFault::LoginRefused)
        );
        let old_server = Error::new(ErrorKind::Unknown, "ERR invalid password");
        assert_eq!(
            of_client_error(&old_server),
            Some(ConnectionFault::LoginRefused)
        );
        let db = Error::new(ErrorKind::Unknown, "ERR DB index is out of range");
        assert_eq!(of_client_error(&db), Some(ConnectionFault::NoSuchDatabase));
        let script = Error::new(ErrorKind::Unknown, "ERR unknown command 'FOO'");
        assert_eq!(of_client_error(&script), None);
        let noperm = Error::new(ErrorKind::Unknown, "NOPERM this user has no permissions");
        assert_eq!(of_client_error(&noperm), None);
    }

    #[test]
    fn only_what_waiting_can_cure_is_transient() {
        assert!(ConnectionFault::Refused.is_transient());
        assert!(ConnectionFault::NoAnswer.is_transient());
        assert!(!ConnectionFault::LoginRefused.is_transient());
        assert!(!ConnectionFault::NoSuchDatabase.is_transient());
        assert!(!ConnectionFault::NotRedis.is_transient());
    }
}
