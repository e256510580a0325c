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
    /// The client had no connection to send the command on: the last one
    /// had closed and it was connecting again. Nothing was sent.
    Reconnecting,
    /// The server refused the user or password.
    LoginRefused,
    /// The URL's database number is beyond the server's `databases`
    /// setting (16 by default: `/0` to `/15`).
    NoSuchDatabase,
    /// Something answered the connect in a protocol other than Redis's:
    /// another service on that port, or a TLS port reached with
    /// `redis://` instead of `rediss://`.
    NotRedis,
    /// The TLS handshake failed over a certificate: the server's is not
    /// signed by a trusted CA, names another host or is out of its dates,
    /// or the server asks for a client certificate, which redq does not
    /// send. [`QueueError`](crate::QueueError)'s message says which.
    Tls,
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
            | ConnectionFault::NoRoute
            | ConnectionFault::Reconnecting => true,
            ConnectionFault::LoginRefused
            | ConnectionFault::NoSuchDatabase
            | ConnectionFault::NotRedis
            | ConnectionFault::Tls => false,
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
        // fred's words for a command it had no connection to write to
        // (`router/commands.rs`), while it connects again: unsent. A
        // command fred may not resend by itself fails with them.
        ErrorKind::Unknown | ErrorKind::Routing
            if details.starts_with("Failed to route command") =>
        {
            Some(ConnectionFault::Reconnecting)
        }
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

/// rustls's refusals of a handshake as fred keeps them, in the `Debug`
/// text of an I/O error (`Custom { kind: InvalidData, error:
/// InvalidCertificate(UnknownIssuer) }`): the server's certificate, or the
/// server's alert about the client's.
fn is_tls_refusal(details: &str) -> bool {
    details.contains("error: InvalidCertificate(") || details.contains("error: AlertReceived(")
}

/// A TLS refusal in `details` (an I/O error's `Debug` text) said in words,
/// naming what is wrong with which certificate, or `None` when it is not
/// one. Only what rustls's `Debug` shows is read: the names a certificate
/// holds, the name asked for and the dates.
pub(crate) fn tls_refusal(details: &str) -> Option<String> {
    if !is_tls_refusal(details) {
        return None;
    }
    let (_, error) = details.split_once("error: ")?;
    let error = error.strip_suffix(" }").unwrap_or(error);
    let cert = "the server's certificate";
    let sentence = if let Some(context) = error.strip_prefix("InvalidCertificate(") {
        let context = context.strip_suffix(')').unwrap_or(context);
        if context.starts_with("UnknownIssuer") {
            format!("{cert} is not signed by a CA this client trusts (invalid certificate: unknown issuer)")
        } else if context.starts_with("NotValidForNameContext") {
            let expected = name_in(after(context, "expected: ")?);
            let presented: Vec<String> = after(context, "presented: [")?
                .split(", \"")
                .map(|name| name_in(&name.replace("\\\"", "\"")))
                .filter(|name| !name.is_empty())
                .collect();
            format!("{cert} is for {}, not {expected}", presented.join(", "))
        } else if context.starts_with("NotValidForName") {
            format!("{cert} is not for the host in the URL")
        } else if context.starts_with("ExpiredContext") {
            match date(after(context, "not_after: ")?) {
                Some(day) => format!("{cert} expired on {day}"),
                None => format!("{cert} has expired"),
            }
        } else if context.starts_with("Expired") {
            format!("{cert} has expired")
        } else if context.starts_with("NotValidYetContext") {
            match date(after(context, "not_before: ")?) {
                Some(day) => format!("{cert} is not valid before {day}"),
                None => format!("{cert} is not valid yet"),
            }
        } else if context.starts_with("NotValidYet") {
            format!("{cert} is not valid yet")
        } else {
            format!("{cert} is refused ({})", debug_words(context))
        }
    } else if error.starts_with("AlertReceived(CertificateRequired)") {
        "the server asks for a client certificate, which redq does not send".to_owned()
    } else {
        format!("the TLS handshake failed ({})", debug_words(error))
    };
    Some(sentence)
}

/// The text after `field` in a `Debug` rendering.
fn after<'a>(debug: &'a str, field: &str) -> Option<&'a str> {
    Some(&debug[debug.find(field)? + field.len()..])
}

/// The name in `DnsName("localhost")` (or `DnsName(\"localhost\")`), or the
/// address in `IpAddress(V4(Ipv4Addr([127, 0, 0, 1])))` as written there
/// when it is not a DNS name.
fn name_in(debug: &str) -> String {
    let debug = debug.trim_start_matches('"');
    if let Some(rest) = debug.strip_prefix("DnsName(\"") {
        return rest.split('"').next().unwrap_or_default().to_owned();
    }
    if let Some(rest) = debug.strip_prefix("IpAddress(") {
        let digits: Vec<&str> = rest
            .split(|c: char| !c.is_ascii_hexdigit() && c != '.' && c != ':')
            .filter(|part| !part.is_empty() && part.chars().any(|c| c.is_ascii_digit()))
            .collect();
        return match digits.as_slice() {
            [one] => (*one).to_owned(),
            [a, b, c, d] => format!("{a}.{b}.{c}.{d}"),
            _ => "an IP address".to_owned(),
        };
    }
    debug
        .split([',', ']', ')'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The day of `UnixTime(1577923200)`, as 2020-01-02 (UTC).
fn date(debug: &str) -> Option<String> {
    let seconds: i64 = debug
        .strip_prefix("UnixTime(")?
        .split(')')
        .next()?
        .parse()
        .ok()?;
    let at = jiff::Timestamp::from_second(seconds).ok()?;
    Some(at.strftime("%Y-%m-%d").to_string())
}

/// `BadSignature` → `bad signature`; anything else that is not one
/// identifier is kept as it is.
fn debug_words(debug: &str) -> String {
    let name = debug.split(['(', ' ', '{']).next().unwrap_or(debug);
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// fred keeps an I/O error as its `Debug` text
/// (`Os { code: 111, kind: ConnectionRefused, message: "…" }`,
/// `Kind(UnexpectedEof)`, `Custom { kind: Uncategorized, error: "failed to
/// lookup address information: …" }`) or as its own sentence
/// ("Connection closed."); the `io::ErrorKind` named there decides. Other
/// kinds (`InvalidData`: a certificate the client does not trust) are not
/// a connection's trouble that waiting or a login could change.
fn of_io(details: &str) -> Option<ConnectionFault> {
    if is_tls_refusal(details) {
        return Some(ConnectionFault::Tls);
    }
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
        // The codec's words when the connection ended in the middle of a
        // reply (a kill, or an output buffer limit, while a large reply
        // was on its way).
        _ if details.contains("bytes remaining on stream") => ConnectionFault::Closed,
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
        // tokio-util's codec, as fred passes it on, when a connection ends
        // in the middle of a reply.
        let cut = Error::from(std::io::Error::other("bytes remaining on stream"));
        assert_eq!(of_client_error(&cut), Some(ConnectionFault::Closed));
        let unsent = Error::new(ErrorKind::Unknown, "Failed to route command.");
        assert_eq!(
            of_client_error(&unsent),
            Some(ConnectionFault::Reconnecting)
        );
        let untrusted = Error::new(
            ErrorKind::IO,
            "Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }",
        );
        assert_eq!(of_client_error(&untrusted), Some(ConnectionFault::Tls));
    }

    #[test]
    fn tls_refusals_are_said_in_words_naming_the_certificates_trouble() {
        let said = |error: &str| {
            super::tls_refusal(&format!("Custom {{ kind: InvalidData, error: {error} }}"))
        };
        assert_eq!(
            said(r#"InvalidCertificate(NotValidForNameContext { expected: DnsName("localhost"), presented: ["DnsName(\"otherhost\")"] })"#)
                .as_deref(),
            Some("the server's certificate is for otherhost, not localhost")
        );
        assert_eq!(
            said(r#"InvalidCertificate(NotValidForNameContext { expected: DnsName("localhost"), presented: ["DnsName(\"a.example\")", "IpAddress(10.0.0.1)"] })"#)
                .as_deref(),
            Some("the server's certificate is for a.example, 10.0.0.1, not localhost")
        );
        assert_eq!(
            said("InvalidCertificate(ExpiredContext { time: UnixTime(1765000000), not_after: UnixTime(1577923200) })")
                .as_deref(),
            Some("the server's certificate expired on 2020-01-02")
        );
        assert_eq!(
            said("AlertReceived(CertificateRequired)").as_deref(),
            Some("the server asks for a client certificate, which redq does not send")
        );
        assert!(said("InvalidCertificate(UnknownIssuer)")
            .unwrap()
            .contains("not signed by a CA this client trusts"));
        assert_eq!(super::tls_refusal("Kind(UnexpectedEof)"), None);
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
        assert!(ConnectionFault::Reconnecting.is_transient());
        assert!(!ConnectionFault::LoginRefused.is_transient());
        assert!(!ConnectionFault::NoSuchDatabase.is_transient());
        assert!(!ConnectionFault::NotRedis.is_transient());
    }
}
