//! The lifecycle of one private `redis-server` process: spawn, wait until
//! ready, SIGKILL, restart on the same port and data directory, and cleanup.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::builder::RedisServerBuilder;
use crate::port::free_port;
use crate::probe::probe;

/// How long a server may take to answer PING (and finish loading its AOF).
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(10);
/// How many fresh ports `start` tries before concluding something else is wrong.
const PORT_ATTEMPTS: usize = 5;
/// Unix socket paths are limited to 108 bytes (including the NUL) on Linux.
const MAX_SOCKET_PATH: usize = 100;

const LOG_FILE: &str = "redis.log";
const SOCKET_FILE: &str = "redis.sock";

/// A private `redis-server` on a free loopback port, with its own temporary
/// data directory. SIGKILLed and reaped on drop; the directory is removed.
#[derive(Debug)]
pub struct RedisServer {
    options: RedisServerBuilder,
    port: u16,
    pid: u32,
    /// `None` between `kill9` and `restart`.
    child: Option<Child>,
    // Fields are dropped after `Drop::drop` runs, so the directory is only
    // removed once the process using it has been killed and reaped.
    dir: TempDir,
}

/// Why one launch attempt failed.
enum LaunchError {
    /// Another process bound the port between `free_port` and redis's bind.
    PortTaken,
    /// Anything else; the message includes the server's log.
    Failed(String),
}

impl RedisServer {
    /// Starts a server with the default test configuration.
    pub fn start() -> RedisServer {
        Self::builder().start()
    }

    /// Configures a server before starting it.
    pub fn builder() -> RedisServerBuilder {
        RedisServerBuilder::default()
    }

    pub(crate) fn start_with(options: RedisServerBuilder) -> RedisServer {
        let dir = tempfile::Builder::new()
            .prefix("redq-")
            .tempdir()
            .expect("creating a temporary directory for redis-server");
        let socket = dir.path().join(SOCKET_FILE);
        assert!(
            socket.as_os_str().len() <= MAX_SOCKET_PATH,
            "unix socket path {} is too long for the kernel; point TMPDIR at a shorter directory",
            socket.display()
        );

        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            match launch(&options, port, dir.path(), LogMode::Truncate) {
                Ok((child, pid)) => {
                    return RedisServer {
                        options,
                        port,
                        pid,
                        child: Some(child),
                        dir,
                    }
                }
                Err(LaunchError::PortTaken) => continue,
                Err(LaunchError::Failed(message)) => panic!("{message}"),
            }
        }
        panic!("redis-server could not bind a free port in {PORT_ATTEMPTS} attempts");
    }

    /// The TCP port the server listens on (127.0.0.1 only).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's data directory (`--dir`): AOF files, socket and log live here.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Path of the unix socket the server listens on.
    pub fn socket_path(&self) -> PathBuf {
        self.dir().join(SOCKET_FILE)
    }

    /// The password set with [`RedisServerBuilder::password`], if any.
    pub fn password(&self) -> Option<&str> {
        self.options.password_ref()
    }

    /// Process id of the most recently started `redis-server`.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Everything the server has logged so far, across restarts.
    pub fn log(&self) -> String {
        read_log(self.dir())
    }

    /// SIGKILLs the server and reaps it, keeping the data directory so that
    /// [`restart`](Self::restart) can recover from it. A no-op if it is
    /// already down.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGKILL on Unix. Errors only mean it already exited; `wait`
            // below reaps it either way so no zombie is left behind.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, directory and options,
    /// SIGKILLing the current process first if it is still running. Returns
    /// once PING answers and the AOF (if any) has been fully loaded.
    pub fn restart(&mut self) {
        self.kill9();
        match launch(&self.options, self.port, self.dir.path(), LogMode::Append) {
            Ok((child, pid)) => {
                self.child = Some(child);
                self.pid = pid;
            }
            Err(LaunchError::PortTaken) => panic!(
                "port {} was taken by another process while redis-server was down; log:\n{}",
                self.port,
                self.log()
            ),
            Err(LaunchError::Failed(message)) => panic!("{message}"),
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Whether a launch starts a new log or continues the one from before a restart.
#[derive(Clone, Copy)]
enum LogMode {
    Truncate,
    Append,
}

/// Spawns `redis-server` and waits until it is ready; returns it and its pid.
fn launch(
    options: &RedisServerBuilder,
    port: u16,
    dir: &Path,
    log_mode: LogMode,
) -> Result<(Child, u32), LaunchError> {
    let log = open_log(dir, log_mode);
    let log_err = log.try_clone().expect("duplicating the log file handle");
    let spawned = Command::new("redis-server")
        .args(options.args(port, dir, &dir.join(SOCKET_FILE)))
        .stdin(Stdio::null())
        // Errors about bad flags go to stderr before logging is set up, so
        // both streams go to the log that failure messages quote.
        .stdout(log)
        .stderr(log_err)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if e.kind() == io::ErrorKind::NotFound => panic!(
            "`redis-server` was not found on PATH; the integration tests need a real redis. \
             Install it with: apt-get install -y redis-server"
        ),
        Err(e) => panic!("spawning redis-server failed: {e}"),
    };

    match wait_ready(&mut child, port, options.password_ref(), dir) {
        Ok(()) => {
            let pid = child.id();
            Ok((child, pid))
        }
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

/// Polls until the server we spawned (checked by pid) answers PING with its
/// data loaded, it exits, or [`READY_TIMEOUT`] passes.
fn wait_ready(
    child: &mut Child,
    port: u16,
    password: Option<&str>,
    dir: &Path,
) -> Result<(), LaunchError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().expect("polling redis-server") {
            let log = read_log(dir);
            return Err(if log.contains("Address already in use") {
                LaunchError::PortTaken
            } else {
                LaunchError::Failed(format!(
                    "redis-server on port {port} exited ({status}) before becoming ready; log:\n{log}"
                ))
            });
        }
        let last = match probe(port, password) {
            Ok(ready) if ready.pid == child.id() => return Ok(()),
            // Someone else's server won the race for this port; ours will
            // fail to bind and exit, which the check above turns into a retry.
            Ok(ready) => format!("port answered by another process (pid {})", ready.pid),
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            return Err(LaunchError::Failed(format!(
                "redis-server on port {port} was not ready after {READY_TIMEOUT:?} \
                 (last probe: {last}); log:\n{}",
                read_log(dir)
            )));
        }
        sleep(PROBE_INTERVAL);
    }
}

fn open_log(dir: &Path, mode: LogMode) -> File {
    let path = dir.join(LOG_FILE);
    let opened = match mode {
        LogMode::Truncate => File::create(&path),
        LogMode::Append => OpenOptions::new().create(true).append(true).open(&path),
    };
    opened.unwrap_or_else(|e| panic!("opening {}: {e}", path.display()))
}

fn read_log(dir: &Path) -> String {
    fs::read_to_string(dir.join(LOG_FILE)).unwrap_or_else(|e| format!("<no log: {e}>"))
}
