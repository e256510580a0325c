//! The queue a deployment configured: [`from_config`] reads the settings
//! from the environment and an optional config file, checks every one, and
//! connects the backend they describe (one namespace, a [`ShardedQueue`],
//! or an in-process [`MemoryQueue`]). The [`ConfiguredQueue`] it returns
//! implements the seed [`Queue`](crate::Queue) trait, and
//! [`Worker::new`](crate::worker::Worker::new) and
//! [`JobQueue::new`](crate::worker::JobQueue::new) take it as they take each
//! backend: a deployment moves between one namespace, shards and no Redis at
//! all by changing settings, not code.
//!
//! # Settings
//!
//! | key | environment variable | default | accepted |
//! |---|---|---|---|
//! | `url` | `REDIS_URL` | `redis://127.0.0.1:6379` | any URL [`RedisQueueBuilder::connect`] accepts; its password is never shown |
//! | `namespace` | `REDQ_NAMESPACE` | `redq` | 1 to 128 bytes without control characters, `{`, `}` or `:` |
//! | `shards` | `REDQ_SHARDS` | `1` | 1 (one namespace, a [`RedisQueue`]) to 64 (a [`ShardedQueue`] over that many namespaces derived from `namespace`) |
//! | `mode` | `REDQ_MODE` | `redis` | `redis`, or `inline`: jobs kept in process memory ([`MemoryQueue`]), no Redis |
//! | `pool_size` | `REDQ_POOL_SIZE` | `2` | connections per namespace, 1 to 64 |
//! | `payload_limit` | `REDQ_PAYLOAD_LIMIT` | `1048576` (1 MiB) | the largest payload in bytes of JSON, 1 to 536870912 (512 MiB) |
//! | `command_timeout` | `REDQ_COMMAND_TIMEOUT` | `10s` | a whole number with a unit, `ms`, `s`, `m` or `h` (`500ms`, `30s`), at least 1 ms |
//! | `tls_ca_file` | `REDQ_TLS_CA_FILE` | none: the system's root certificates | a PEM file of the CA certificates trusted for `rediss://` |
//! | `script_calls` | `REDQ_SCRIPT_CALLS` | `auto` | `auto` (Redis Functions where the server and user allow them, else `EVALSHA`), `eval` (`EVALSHA` always) or `functions` (Redis Functions always): [`ScriptCalls`](crate::ScriptCalls) |
//!
//! `REDQ_CONFIG` names the config file; without it only the environment is
//! read (no file is looked for in a default place, so what a process reads
//! is never a surprise).
//!
//! **The environment beats the file**, key by key: a file holds what a
//! deployment shares, and a variable overrides one key for one process
//! (`REDQ_MODE=inline` for a test run). An empty variable counts as unset,
//! as it does for the `redq` console, which reads the same `REDIS_URL`,
//! `REDQ_NAMESPACE`, `REDQ_SHARDS` and `REDQ_TLS_CA_FILE`.
//!
//! In `inline` mode the Redis settings are still checked (a bad value is a
//! mistake in any mode) but not used: a [`MemoryQueue`] keeps its jobs for
//! the life of the process, shares them with no other process, and applies
//! the default payload limit. It is for tests and for apps run without
//! Redis; see [`MemoryQueue`] for what it keeps of Redis's semantics.
//!
//! # The file
//!
//! TOML, read by the `toml` crate, with only top-level `key = value` lines
//! and `#` comments: no `[tables]`, `[[arrays of tables]]`, dotted keys
//! (`redq.url = …`) or inline tables (`{ … }`). Each key at most once.
//!
//! A value is a TOML string, in any of its forms (`"basic"`, `'literal'`,
//! multi-line), or a TOML integer (`4`, `1_048_576`, `0x10`); either way the
//! setting reads its text and checks it as the table says, so `shards = 3`
//! and `shards = "3"` are the same setting, while `mode = inline` is not
//! TOML (text needs its quotes) and `command_timeout = "5s"` needs them
//! too. A float, boolean, date or array is refused: no setting takes one.
//!
//! The file used to be read by a parser of redq's own, which accepted two
//! things TOML does not; both are now refused as not TOML: a number with
//! leading zeros (`shards = 007`), and control characters other than tab
//! inside quotes or comments.
//!
//! ```toml
//! # /etc/acme/redq.toml
//! url = "rediss://:s3cret@redis.internal:6380"
//! namespace = "acme"
//! shards = 3
//! pool_size = 4
//! command_timeout = "5s"
//! ```
//!
//! # Errors
//!
//! A bad setting is [`QueueError::InvalidSetting`], raised before anything
//! connects: it names the key, the value given (a URL without its password),
//! where it came from (the variable, or the file and line) and what is
//! accepted. A file that is not TOML is refused at the line and column where
//! the parser stopped, naming the setting it was reading if any and the
//! parser's reason, but never showing the text there, since a malformed
//! line may hold a password:
//!
//! ```text
//! invalid pool_size "0" from REDQ_POOL_SIZE: 1 to 64
//! invalid mode "fast" from /etc/acme/redq.toml line 4: redis or inline
//! invalid url (not shown: it may hold a password) from /etc/acme/redq.toml line 2 column 44: text in double quotes, or a whole number, then at most a # comment; this is not TOML (invalid basic string, expected `"`)
//! invalid table "redq" from /etc/acme/redq.toml line 1: top-level key = value lines (the file has no [tables], [[arrays of tables]], dotted keys or inline tables)
//! ```
//!
//! ```no_run
//! use redq::worker::{CancellationToken, Registry, WorkOptions, Worker};
//! use redq::Queue;
//!
//! # async fn demo(registry: Registry) -> Result<(), redq::QueueError> {
//! let queue = redq::from_config().await?;
//! queue.enqueue("emails", vec![serde_json::json!({"to": "ada"})]).await?;
//! let worker = Worker::new(queue, registry, WorkOptions::new().queues(["emails"]))?;
//! worker.run(CancellationToken::new()).await?;
//! # Ok(()) }
//! ```

mod configured;
mod file;
mod values;

use std::path::PathBuf;
use std::time::Duration;

pub use configured::ConfiguredQueue;

use crate::{
    redact_url, MemoryQueue, QueueError, RedisQueue, RedisQueueBuilder, ShardedQueue,
    DEFAULT_COMMAND_TIMEOUT, DEFAULT_NAMESPACE, DEFAULT_PAYLOAD_LIMIT, DEFAULT_POOL_SIZE,
};

/// The URL used when none is configured.
pub const DEFAULT_URL: &str = "redis://127.0.0.1:6379";
/// The environment variable naming the config file.
pub const CONFIG_FILE_VAR: &str = "REDQ_CONFIG";

/// The environment variable naming a PEM file of the CA certificates
/// trusted for `rediss://` (the `tls_ca_file` setting); the `redq` console
/// reads it too.
pub const TLS_CA_FILE_VAR: &str = "REDQ_TLS_CA_FILE";

/// One setting: its name in a config file and its environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) var: &'static str,
}

/// Every setting, in the order of the table in the module docs.
pub(crate) const KEYS: [Key; 9] = [
    Key {
        name: "url",
        var: "REDIS_URL",
    },
    Key {
        name: "namespace",
        var: "REDQ_NAMESPACE",
    },
    Key {
        name: "shards",
        var: "REDQ_SHARDS",
    },
    Key {
        name: "mode",
        var: "REDQ_MODE",
    },
    Key {
        name: "pool_size",
        var: "REDQ_POOL_SIZE",
    },
    Key {
        name: "payload_limit",
        var: "REDQ_PAYLOAD_LIMIT",
    },
    Key {
        name: "command_timeout",
        var: "REDQ_COMMAND_TIMEOUT",
    },
    Key {
        name: "tls_ca_file",
        var: TLS_CA_FILE_VAR,
    },
    Key {
        name: "script_calls",
        var: "REDQ_SCRIPT_CALLS",
    },
];

/// Where the jobs live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// In Redis (the default): one namespace, or a [`ShardedQueue`].
    #[default]
    Redis,
    /// In process memory, a [`MemoryQueue`]: for tests and apps without
    /// Redis. Nothing persists or is shared with another process. Jobs run
    /// when an in-process [`Worker`](crate::worker::Worker) claims them,
    /// with their retries; to run each job in the pushing task instead (no
    /// worker at all), push through
    /// [`JobQueue::inline`](crate::worker::JobQueue::inline).
    Inline,
}

/// Checked settings; see the [module docs](self) for each key. `Debug`
/// shows the URL without its password.
#[derive(Clone)]
pub struct Config {
    url: String,
    namespace: String,
    shards: usize,
    mode: Mode,
    pool_size: usize,
    payload_limit: usize,
    command_timeout: Duration,
    tls_ca_file: Option<PathBuf>,
    /// The file's contents, read while loading so that an unreadable file
    /// is a setting error before anything connects.
    tls_ca_pem: Option<Vec<u8>>,
    script_calls: crate::ScriptCalls,
}

impl Default for Config {
    /// Every key at its default.
    fn default() -> Self {
        Config {
            url: DEFAULT_URL.to_owned(),
            namespace: DEFAULT_NAMESPACE.to_owned(),
            shards: 1,
            mode: Mode::Redis,
            pool_size: DEFAULT_POOL_SIZE,
            payload_limit: DEFAULT_PAYLOAD_LIMIT,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            tls_ca_file: None,
            tls_ca_pem: None,
            script_calls: crate::ScriptCalls::Auto,
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("url", &redact_url(&self.url))
            .field("namespace", &self.namespace)
            .field("shards", &self.shards)
            .field("mode", &self.mode)
            .field("pool_size", &self.pool_size)
            .field("payload_limit", &self.payload_limit)
            .field("command_timeout", &self.command_timeout)
            .field("tls_ca_file", &self.tls_ca_file)
            .field("script_calls", &self.script_calls)
            .finish()
    }
}

/// The queue this process's environment (and the file `REDQ_CONFIG` names)
/// configured: [`Config::load`], then [`Config::connect`].
pub async fn from_config() -> Result<ConfiguredQueue, QueueError> {
    Config::load()?.connect().await
}

impl Config {
    /// The settings from this process's environment and the file
    /// `REDQ_CONFIG` names, if any; the environment beats the file.
    pub fn load() -> Result<Config, QueueError> {
        for var in KEYS.iter().map(|k| k.var).chain([CONFIG_FILE_VAR]) {
            if let Err(std::env::VarError::NotUnicode(_)) = std::env::var(var) {
                return Err(QueueError::InvalidSetting {
                    key: var.to_owned(),
                    value: None,
                    origin: "the environment".to_owned(),
                    accepted: "UTF-8 text".to_owned(),
                });
            }
        }
        Config::load_from(|var| std::env::var(var).ok())
    }

    /// [`Config::load`] with `env` in place of the process environment:
    /// `env(name)` is the variable's value, `None` when unset. Tests pass a
    /// map here instead of changing the process's environment.
    pub fn load_from(env: impl Fn(&str) -> Option<String>) -> Result<Config, QueueError> {
        let env = |var: &str| env(var).filter(|value| !value.is_empty());
        let mut file = match env(CONFIG_FILE_VAR) {
            Some(path) => Some(file::ConfigFile::read(&path)?),
            None => None,
        };
        let mut config = Config::default();
        for key in KEYS {
            let given = match env(key.var) {
                Some(value) => Some(values::Given {
                    key,
                    value,
                    origin: key.var.to_owned(),
                }),
                None => file.as_mut().and_then(|file| file.take(key)),
            };
            if let Some(given) = given {
                values::apply(&mut config, given)?;
            }
        }
        Ok(config)
    }

    /// Connect the configured backend: a [`RedisQueue`] on `namespace`,
    /// a [`ShardedQueue`] over `shards` namespaces derived from it, or a
    /// new [`MemoryQueue`] in `inline` mode.
    pub async fn connect(&self) -> Result<ConfiguredQueue, QueueError> {
        Ok(match (self.mode, self.shards) {
            (Mode::Inline, _) => ConfiguredQueue::Inline(MemoryQueue::new()),
            (Mode::Redis, 1) => ConfiguredQueue::Redis(self.builder().connect().await?),
            (Mode::Redis, shards) => ConfiguredQueue::Sharded(
                ShardedQueue::connect(self.builder(), &self.namespace, shards).await?,
            ),
        })
    }

    /// A builder with these settings, for a caller that adds its own (a
    /// worker identity) before connecting.
    pub fn builder(&self) -> RedisQueueBuilder {
        let builder = RedisQueue::builder(&self.url)
            .namespace(&self.namespace)
            .pool_size(self.pool_size)
            .payload_limit(self.payload_limit)
            .command_timeout(self.command_timeout)
            .script_calls(self.script_calls);
        match &self.tls_ca_pem {
            Some(pem) => builder.tls_ca_pem(pem.clone()),
            None => builder,
        }
    }

    /// The URL without its password.
    pub fn redacted_url(&self) -> String {
        redact_url(&self.url)
    }

    /// The namespace, or the base of the shards' namespaces.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// How many shards: 1 is one namespace.
    pub fn shards(&self) -> usize {
        self.shards
    }

    /// Where the jobs live.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Connections per namespace.
    pub fn pool_size(&self) -> usize {
        self.pool_size
    }

    /// The largest payload, in bytes of JSON.
    pub fn payload_limit(&self) -> usize {
        self.payload_limit
    }

    /// How long a command may take.
    pub fn command_timeout(&self) -> Duration {
        self.command_timeout
    }

    /// How the scripts are called.
    pub fn script_calls(&self) -> crate::ScriptCalls {
        self.script_calls
    }

    /// The file of trusted CA certificates, if one was configured.
    pub fn tls_ca_file(&self) -> Option<&std::path::Path> {
        self.tls_ca_file.as_deref()
    }
}
