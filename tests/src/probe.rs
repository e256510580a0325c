//! A tiny blocking RESP client used only to decide whether a freshly started
//! `redis-server` is ready.
//!
//! It is deliberately synchronous so that `RedisServer::start` and `restart`
//! work from plain `#[test]`s as well as from inside a tokio runtime, and it
//! understands only the reply types that PING, AUTH and INFO produce.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// Per-attempt I/O limit: one probe must never eat the whole readiness deadline.
const IO_TIMEOUT: Duration = Duration::from_secs(1);

/// What a successful probe learned about the server on the port.
#[derive(Debug)]
pub(crate) struct Ready {
    /// `process_id` from `INFO server`: lets the caller check that the server
    /// answering is the one it spawned, not some other process that won a
    /// race for the same port.
    pub(crate) pid: u32,
}

/// Why a probe did not report readiness. Every variant means "try again".
pub(crate) enum NotReady {
    /// Connecting or talking failed (not listening yet, reset, timeout).
    Io(io::Error),
    /// The server answered but is not serving yet, e.g. `-LOADING` while it
    /// replays the AOF, or `loading:1` in `INFO persistence`.
    Busy(String),
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotReady::Io(e) => write!(f, "{e}"),
            NotReady::Busy(why) => f.write_str(why),
        }
    }
}

impl From<io::Error> for NotReady {
    fn from(e: io::Error) -> Self {
        NotReady::Io(e)
    }
}

/// One readiness check: (AUTH), PING, then `INFO server persistence`.
///
/// Ready means PING answered `+PONG` and `loading:0`. Redis refuses PING with
/// `-LOADING` while it replays the AOF, so the INFO check is belt and braces
/// for the "AOF recovery finished" guarantee `restart` makes.
pub(crate) fn probe(port: u16, password: Option<&str>) -> Result<Ready, NotReady> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut conn = BufReader::new(stream);

    if let Some(password) = password {
        expect_simple(&mut conn, &["AUTH", password], "OK")?;
    }
    expect_simple(&mut conn, &["PING"], "PONG")?;

    let info = match request(&mut conn, &["INFO", "server", "persistence"])? {
        Reply::Bulk(text) => text,
        other => return Err(NotReady::Busy(format!("INFO answered {}", other.text()))),
    };
    if field(&info, "loading") != Some("0") {
        return Err(NotReady::Busy("still loading".into()));
    }
    let pid = field(&info, "process_id")
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| NotReady::Busy("INFO server has no process_id".into()))?;
    Ok(Ready { pid })
}

/// The reply shapes this probe understands.
enum Reply {
    /// `+...`, without the `+`.
    Simple(String),
    /// A bulk string's payload.
    Bulk(String),
    /// Anything else (errors such as `-LOADING`, integers, ...), raw line.
    Other(String),
}

impl Reply {
    fn text(&self) -> &str {
        match self {
            Reply::Simple(s) | Reply::Bulk(s) | Reply::Other(s) => s,
        }
    }
}

fn expect_simple(
    conn: &mut BufReader<TcpStream>,
    args: &[&str],
    want: &str,
) -> Result<(), NotReady> {
    match request(conn, args)? {
        Reply::Simple(s) if s == want => Ok(()),
        other => Err(NotReady::Busy(format!(
            "{} answered {}",
            args[0],
            other.text()
        ))),
    }
}

/// Sends one command as a RESP array of bulk strings and reads one reply.
fn request(conn: &mut BufReader<TcpStream>, args: &[&str]) -> io::Result<Reply> {
    let mut out = format!("*{}\r\n", args.len());
    for arg in args {
        out.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    conn.get_mut().write_all(out.as_bytes())?;

    let line = read_line(conn)?;
    let (kind, rest) = line.split_at(1.min(line.len()));
    Ok(match kind {
        "+" => Reply::Simple(rest.to_owned()),
        "$" => {
            let len: usize = rest
                .parse()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, line.clone()))?;
            // Payload plus its trailing CRLF.
            let mut buf = vec![0; len + 2];
            conn.read_exact(&mut buf)?;
            buf.truncate(len);
            Reply::Bulk(String::from_utf8_lossy(&buf).into_owned())
        }
        _ => Reply::Other(line),
    })
}

/// Reads one CRLF-terminated line, without the CRLF.
fn read_line(conn: &mut BufReader<TcpStream>) -> io::Result<String> {
    let mut line = String::new();
    if conn.read_line(&mut line)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// Looks up `name` in INFO output (`name:value` lines).
fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines().find_map(|line| {
        line.trim_end()
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
    })
}
