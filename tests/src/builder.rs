//! Which `redis-server` configuration a test asks for, turned into command-line flags.

use std::ffi::OsString;
use std::path::Path;

use crate::server::RedisServer;

/// Configures a [`RedisServer`] before starting it; see [`RedisServer::builder`].
///
/// Defaults are tuned for tests: no persistence at all (`save ""`,
/// `appendonly no`), loopback only, no password.
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until .start() is called"]
pub struct RedisServerBuilder {
    appendonly_always: bool,
    maxmemory: Option<u64>,
    password: Option<String>,
    enable_debug: bool,
    extra: Vec<(String, String)>,
    /// Commands renamed away (`rename-command NAME ""`).
    without: Vec<String>,
}

impl RedisServerBuilder {
    /// Turns on the AOF with `appendfsync always`, so every acknowledged write
    /// survives a SIGKILL: the mode crash-recovery tests need.
    pub fn appendonly_always(mut self) -> Self {
        self.appendonly_always = true;
        self
    }

    /// Caps memory at `bytes` with `maxmemory-policy noeviction`, so writes
    /// past the cap fail with `-OOM` instead of silently evicting queue keys.
    pub fn maxmemory(mut self, bytes: u64) -> Self {
        self.maxmemory = Some(bytes);
        self
    }

    /// Requires clients to `AUTH` with `password` (`requirepass`).
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// Allows the `DEBUG` command from loopback and unix-socket clients
    /// (`enable-debug-command local`; redis 7 disables it by default).
    pub fn enable_debug(mut self) -> Self {
        self.enable_debug = true;
        self
    }

    /// Passes any other config directive as `--key value`. Applied after
    /// everything else, so it can override the harness's own defaults.
    /// A leading `--` on `key` is accepted and ignored.
    pub fn arg(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        let key = key.strip_prefix("--").unwrap_or(&key).to_owned();
        self.extra.push((key, value.into()));
        self
    }

    /// Takes `command` away (`rename-command COMMAND ""`): the server
    /// answers it as an unknown command, as an older Redis without it does
    /// (FUNCTION and FCALL came with Redis 7.0).
    pub fn without_command(mut self, command: impl Into<String>) -> Self {
        self.without.push(command.into());
        self
    }

    /// Starts the server and waits until it answers PING; panics (with the
    /// server's log) if it does not come up.
    pub fn start(self) -> RedisServer {
        RedisServer::start_with(self)
    }

    pub(crate) fn password_ref(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The full `redis-server` command line for this configuration.
    pub(crate) fn args(&self, port: u16, dir: &Path, socket: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut set = |key: &str, value: &dyn AsRef<std::ffi::OsStr>| {
            args.push(format!("--{key}").into());
            args.push(value.as_ref().to_owned());
        };

        set("port", &port.to_string());
        set("bind", &"127.0.0.1");
        set("protected-mode", &"no");
        set("daemonize", &"no");
        set("dir", &dir);
        set("unixsocket", &socket);
        set("unixsocketperm", &"700");
        // An empty `save` disables RDB snapshots: tests must not leave files
        // behind or stall on background saves.
        set("save", &"");
        if self.appendonly_always {
            set("appendonly", &"yes");
            set("appendfsync", &"always");
        } else {
            set("appendonly", &"no");
        }
        if let Some(bytes) = self.maxmemory {
            set("maxmemory", &bytes.to_string());
            set("maxmemory-policy", &"noeviction");
        }
        if let Some(password) = &self.password {
            set("requirepass", password);
        }
        if self.enable_debug {
            set("enable-debug-command", &"local");
        }
        for (key, value) in &self.extra {
            set(key, value);
        }
        for command in &self.without {
            args.extend(["--rename-command".into(), command.into(), "".into()]);
        }
        args
    }
}
