//! A throwaway `redis-server` for the demo: a free loopback port, a
//! temporary directory, no persistence; stopped and cleaned up on drop.
//!
//! The server runs under a tiny `sh` watchdog that reads its stdin, a pipe
//! from this process: when the demo exits in any way — quit, panic, SIGHUP
//! from a closed terminal, even SIGKILL — the pipe closes and the watchdog
//! stops the server, so no redis-server outlives the demo.

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::failure::Failure;

/// How to get redis-server, for the error when it is missing.
pub const INSTALL_HINT: &str = "redis-server is not installed (or not on PATH). \
Install it with: sudo apt-get install -y redis-server (Debian/Ubuntu), \
brew install redis (macOS); or fill a Redis you have with \
`redq demo --into-existing redis://HOST:PORT --yes-write-demo-traffic`";

/// A running private server.
#[derive(Debug)]
pub struct PrivateRedis {
    child: Child,
    /// Closing this stops the server (see the module docs).
    lifeline: Option<ChildStdin>,
    port: u16,
    // Removed after the process is killed (fields drop after `drop`).
    _dir: TempDir,
}

impl PrivateRedis {
    /// Start one and wait until it accepts connections.
    pub async fn start() -> Result<PrivateRedis, Failure> {
        let dir = tempfile::Builder::new()
            .prefix("redq-demo-")
            .tempdir()
            .map_err(|e| Failure::Failed(format!("cannot create a temporary directory: {e}")))?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| Failure::Failed(format!("no free loopback port: {e}")))?;
        let log = dir.path().join("redis.log");
        let Some(binary) = find_on_path("redis-server") else {
            return Err(Failure::Failed(INSTALL_HINT.to_owned()));
        };
        let spawned = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("redq-demo-redis")
            .arg(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(&log)
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--maxmemory-policy", "noeviction"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Failure::Failed(INSTALL_HINT.to_owned()))
            }
            Err(e) => return Err(Failure::Failed(format!("cannot start redis-server: {e}"))),
        };
        let lifeline = child.stdin.take();
        let mut server = PrivateRedis {
            child,
            lifeline,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(Failure::Failed(format!(
                    "redis-server exited ({status}) before accepting connections; its log:\n{log}"
                )));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(Failure::Failed(
                    "redis-server did not accept connections within 10s".into(),
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        // EOF on the watchdog's stdin: it stops redis-server and exits.
        drop(self.lifeline.take());
        let _ = self.child.wait();
    }
}

/// Runs `"$@"` (redis-server and its flags) in the background, then waits
/// for EOF on stdin and stops it.
const WATCHDOG: &str = r#""$@" & pid=$!
trap 'kill $pid 2>/dev/null' EXIT HUP INT TERM
while read -r _; do :; done
kill $pid 2>/dev/null
wait $pid 2>/dev/null
exit 0"#;

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}
