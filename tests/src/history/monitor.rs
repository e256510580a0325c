//! The server's own record of what it executed: a `MONITOR` connection.
//!
//! Redis feeds a monitor every command it runs, including the commands a
//! Lua script calls (shown from client `lua`), each stamped with the
//! server's clock in microseconds, in execution order. Scripts are atomic,
//! so a script's `EVALSHA` line is followed by exactly its own effects. That
//! is a total order of every transition, with the Redis clock, independent
//! of what any client managed to log before it was killed.
//!
//! When the server dies the capture records a gap and reconnects; the
//! parser then rebuilds its view of each job from the next record it sees.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Marks a point where the capture lost its connection.
pub const GAP: &str = "<gap>";

/// A running `MONITOR` capture.
pub struct ServerLog {
    lines: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl ServerLog {
    /// Starts monitoring the server on loopback `port` (authenticating as
    /// the default user when `password` is set). Returns once the monitor
    /// is attached, so every later command is captured.
    pub async fn start(port: u16, password: Option<&str>) -> ServerLog {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(capture(
            port,
            password.map(str::to_owned),
            lines.clone(),
            stop.clone(),
            ready_tx,
        ));
        ready_rx.await.expect("MONITOR attached");
        ServerLog { lines, stop, task }
    }

    /// How many lines were captured so far.
    pub fn len(&self) -> usize {
        self.lines.lock().unwrap().len()
    }

    /// Whether nothing was captured yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the lines captured so far.
    pub fn snapshot(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// A view of the captured lines that outlives [`ServerLog::stop`]: a
    /// run hands the log to the checker and can still read, afterwards,
    /// every line the checker read (to prove each one was understood).
    pub fn captured(&self) -> Captured {
        Captured(self.lines.clone())
    }

    /// Stops capturing once the server has answered a marker command sent
    /// after everything else (so every earlier command was fed to the
    /// monitor), and returns the lines.
    pub async fn stop(self, port: u16, password: Option<&str>) -> Vec<String> {
        let marker = format!("redq-history-end-{}", rand::random::<u64>());
        if let Ok(mut conn) = TcpStream::connect(("127.0.0.1", port)).await {
            let mut request = String::new();
            if let Some(password) = password {
                request.push_str(&resp(&["AUTH", password]));
            }
            request.push_str(&resp(&["ECHO", &marker]));
            let _ = conn.write_all(request.as_bytes()).await;
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            while tokio::time::Instant::now() < deadline {
                if self
                    .lines
                    .lock()
                    .unwrap()
                    .iter()
                    .rev()
                    .take(100)
                    .any(|l| l.contains(&marker))
                {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        self.stop.store(true, Ordering::SeqCst);
        self.task.abort();
        let _ = self.task.await;
        self.lines.lock().unwrap().clone()
    }
}

/// The lines of a [`ServerLog`], readable after it stopped.
#[derive(Clone)]
pub struct Captured(Arc<Mutex<Vec<String>>>);

impl Captured {
    /// Every line captured.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

fn resp(args: &[&str]) -> String {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    out
}

async fn capture(
    port: u16,
    password: Option<String>,
    lines: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    while !stop.load(Ordering::SeqCst) {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)).await {
            let (read, mut write) = stream.into_split();
            let mut request = String::new();
            if let Some(password) = &password {
                request.push_str(&resp(&["AUTH", password]));
            }
            request.push_str(&resp(&["MONITOR"]));
            if write.write_all(request.as_bytes()).await.is_ok() {
                let mut reader = BufReader::new(read);
                let mut line = Vec::new();
                let mut attached = false;
                loop {
                    line.clear();
                    match reader.read_until(b'\n', &mut line).await {
                        Ok(0) | Err(_) => break,
                        // The server died mid-line: the gap marker below
                        // stands for what was cut, not a half line.
                        Ok(_) if !line.ends_with(b"\n") => break,
                        Ok(_) => {}
                    }
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim_end_matches(['\r', '\n']);
                    if text == "+OK" && !attached {
                        attached = true;
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                        continue;
                    }
                    if let Some(rest) = text.strip_prefix('+') {
                        lines.lock().unwrap().push(rest.to_owned());
                    }
                }
                if attached {
                    lines.lock().unwrap().push(GAP.to_owned());
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One parsed monitor line.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// Server clock, microseconds since the epoch.
    pub at_us: u64,
    /// Run by a script (`[0 lua]`), rather than sent by a client.
    pub from_lua: bool,
    /// Command name (lowercased) and arguments, unescaped.
    pub args: Vec<Vec<u8>>,
}

impl Command {
    /// The command name, lowercased.
    pub fn name(&self) -> String {
        self.args
            .first()
            .map(|a| String::from_utf8_lossy(a).to_lowercase())
            .unwrap_or_default()
    }

    /// Argument `i` as text (lossy).
    pub fn text(&self, i: usize) -> String {
        self.args
            .get(i)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .unwrap_or_default()
    }
}

/// Parses `1700000000.123456 [0 127.0.0.1:5000] "cmd" "arg\x00"`;
/// `None` for the gap marker or anything malformed.
pub fn parse_line(line: &str) -> Option<Command> {
    let (ts, rest) = line.split_once(' ')?;
    let (secs, micros) = ts.split_once('.')?;
    let at_us = secs.parse::<u64>().ok()? * 1_000_000 + micros.parse::<u64>().ok()?;
    let rest = rest.strip_prefix('[')?;
    let close = rest.find("] ")?;
    let source = &rest[..close];
    let from_lua = source.ends_with(" lua");
    let args = parse_args(&rest.as_bytes()[close + 2..])?;
    Some(Command {
        at_us,
        from_lua,
        args,
    })
}

/// The quoted, `sdscatrepr`-escaped arguments of a monitor line.
fn parse_args(mut s: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    loop {
        while let [b' ', tail @ ..] = s {
            s = tail;
        }
        if s.is_empty() {
            return Some(args);
        }
        if s[0] != b'"' {
            return None;
        }
        s = &s[1..];
        let mut arg = Vec::new();
        loop {
            match s {
                [b'"', tail @ ..] => {
                    s = tail;
                    break;
                }
                [b'\\', b'x', h, l, tail @ ..] => {
                    let hex = std::str::from_utf8(&[*h, *l]).ok()?.to_owned();
                    arg.push(u8::from_str_radix(&hex, 16).ok()?);
                    s = tail;
                }
                [b'\\', c, tail @ ..] => {
                    arg.push(match c {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'a' => 7,
                        b'b' => 8,
                        other => *other,
                    });
                    s = tail;
                }
                [c, tail @ ..] => {
                    arg.push(*c);
                    s = tail;
                }
                [] => return None,
            }
        }
        args.push(arg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_escaped_arguments() {
        let c = parse_line(r#"1795993246.355941 [0 lua] "HSET" "{x}:jobs" "a" "\x93\xa1q\n\"z""#)
            .unwrap();
        assert!(c.from_lua);
        assert_eq!(c.at_us, 1_795_993_246_355_941);
        assert_eq!(c.name(), "hset");
        assert_eq!(c.args[3], b"\x93\xa1q\n\"z");
        let c = parse_line(r#"1.000002 [0 127.0.0.1:53364] "evalsha" "ab""#).unwrap();
        assert!(!c.from_lua);
        assert_eq!(c.args.len(), 2);
        assert!(parse_line(GAP).is_none());
    }
}
