//! Talking to a [`RedisServer`] from tests through fred, the same client
//! library the driver uses (no dependency on `redis-cli`).

use std::time::Duration;

use fred::clients::Client;
use fred::error::Error;
use fred::interfaces::ClientLike;
use fred::types::config::Config;
use fred::types::{Builder, ClusterHash, CustomCommand, Value};

use crate::server::RedisServer;

/// Upper bound on any single harness command, so a wedged server fails the
/// test instead of hanging it.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects a fred client to `url` (any form `Config::from_url` accepts).
///
/// The client has no reconnect policy: if the server goes away, commands
/// fail instead of being retried, which is what tests that kill the server
/// want to observe.
pub async fn connect(url: &str) -> Result<Client, Error> {
    let client = Builder::from_config(Config::from_url(url)?)
        .with_performance_config(|perf| perf.default_command_timeout = COMMAND_TIMEOUT)
        .build()?;
    // `init` resolves once the connection is up; the returned handle is the
    // background connection task, which ends on its own after `quit`.
    client.init().await?;
    Ok(client)
}

impl RedisServer {
    /// A fred client connected over TCP, authenticated if a password is set.
    /// Panics if it cannot connect.
    pub async fn client(&self) -> Client {
        self.try_client()
            .await
            .unwrap_or_else(|e| panic!("connecting to {}: {e}", self.url()))
    }

    async fn try_client(&self) -> Result<Client, Error> {
        match self.password() {
            Some(_) => connect(&self.url_with_password()).await,
            None => connect(&self.url()).await,
        }
    }

    /// Runs one command (`args[0]` is its name) on a fresh connection and
    /// returns the reply; panics if it fails. For expected errors use
    /// [`try_cmd`](Self::try_cmd).
    pub async fn cmd(&self, args: &[&str]) -> Value {
        self.try_cmd(args)
            .await
            .unwrap_or_else(|e| panic!("redis command {args:?} failed: {e}"))
    }

    /// Like [`cmd`](Self::cmd) but returns errors (redis replies such as
    /// `-OOM`, or failing to connect to a killed server) instead of panicking.
    pub async fn try_cmd(&self, args: &[&str]) -> Result<Value, Error> {
        let (name, rest) = args
            .split_first()
            .expect("cmd() needs at least the command name");
        let client = self.try_client().await?;
        // The cluster hash is irrelevant for a centralized server.
        let command = CustomCommand::new(name.to_string(), ClusterHash::FirstKey, false);
        let reply = client.custom(command, rest.to_vec()).await;
        let _ = client.quit().await;
        reply
    }

    /// The clients connected now, as `INFO clients` counts them (the
    /// connection asking included): what a test of leaked connections
    /// compares with a baseline.
    pub async fn connected_clients(&self) -> u64 {
        let info = self.cmd(&["INFO", "clients"]).await;
        info.as_string()
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("connected_clients:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("INFO clients names connected_clients")
    }
}

/// One line of `CLIENT LIST`: the connection as the server sees it.
#[derive(Clone, Debug)]
pub struct ServerClient {
    /// Every `name=value` field of the line, in order.
    pub fields: Vec<(String, String)>,
}

impl ServerClient {
    /// The value of field `name` (`laddr`, `flags`, `cmd`, ...), if present.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The server port this client connected to: the port of `laddr`.
    /// `None` for a unix-socket client.
    pub fn local_port(&self) -> Option<u16> {
        self.field("laddr")?.rsplit_once(':')?.1.parse().ok()
    }
}

impl RedisServer {
    /// Every connection the server has open right now (`CLIENT LIST`),
    /// including the one that asks.
    pub async fn clients(&self) -> Vec<ServerClient> {
        let list: String = self
            .cmd(&["CLIENT", "LIST"])
            .await
            .convert()
            .expect("CLIENT LIST answers a string");
        list.lines()
            .map(|line| ServerClient {
                fields: line
                    .split(' ')
                    .filter_map(|field| field.split_once('='))
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect(),
            })
            .collect()
    }

    /// How many clients are subscribed to `channel` (`PUBSUB NUMSUB`).
    pub async fn subscribers(&self, channel: &str) -> i64 {
        self.pubsub_count("NUMSUB", channel).await
    }

    /// How many clients are subscribed to shard channel `channel` (`PUBSUB
    /// SHARDNUMSUB`).
    pub async fn shard_subscribers(&self, channel: &str) -> i64 {
        self.pubsub_count("SHARDNUMSUB", channel).await
    }

    /// `PUBSUB <which> channel`'s count.
    async fn pubsub_count(&self, which: &str, channel: &str) -> i64 {
        let reply: Vec<Value> = self
            .cmd(&["PUBSUB", which, channel])
            .await
            .convert()
            .expect("PUBSUB answers an array");
        match reply.as_slice() {
            [_, Value::Integer(n)] => *n,
            other => panic!("PUBSUB {which} {channel} answered {other:?}"),
        }
    }
}

/// What a server has seen since its statistics were last reset
/// ([`RedisServer::reset_stats`]): proof of what reached it, for tests that
/// must show something did *not* run there.
#[derive(Debug, PartialEq, Eq)]
pub struct SeenByServer {
    /// Connections accepted (`total_connections_received`).
    pub connections: i64,
    /// Every command executed, by name, with its call count
    /// (`INFO commandstats`); a command the server could not parse is not one.
    pub commands: Vec<(String, i64)>,
}

/// The names `INFO commandstats` gives a script call, however it was made.
const SCRIPT_CALL_COMMANDS: [&str; 4] = ["evalsha", "eval", "fcall", "fcall_ro"];

impl SeenByServer {
    /// The calls of `command` (its name as `INFO commandstats` gives it,
    /// lower case: `evalsha`, `hmget`).
    pub fn calls(&self, command: &str) -> i64 {
        self.commands
            .iter()
            .find(|(name, _)| name == command)
            .map_or(0, |(_, calls)| *calls)
    }

    /// The script calls, by `EVALSHA`, `EVAL` or `FCALL` alike.
    pub fn script_calls(&self) -> i64 {
        SCRIPT_CALL_COMMANDS.iter().map(|c| self.calls(c)).sum()
    }
}

impl RedisServer {
    /// The calls of `command` (lower case, as `INFO commandstats` names it)
    /// since the statistics were last reset, leaving them as they are.
    pub async fn command_calls(&self, command: &str) -> u64 {
        let info: String = self.cmd(&["INFO", "commandstats"]).await.convert().unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:calls=")))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().unwrap())
    }

    /// The script calls since the statistics were last reset, by `EVALSHA`,
    /// `EVAL` or `FCALL` alike, leaving them as they are.
    pub async fn script_calls(&self) -> u64 {
        let mut total = 0;
        for command in SCRIPT_CALL_COMMANDS {
            total += self.command_calls(command).await;
        }
        total
    }

    /// The names of the function libraries the server holds (`FUNCTION
    /// LIST`), sorted.
    pub async fn function_libraries(&self) -> Vec<String> {
        let listed = self.cmd(&["FUNCTION", "LIST"]).await;
        let fred::types::Value::Array(libraries) = listed else {
            panic!("FUNCTION LIST answered {listed:?}")
        };
        let mut names: Vec<String> = libraries
            .into_iter()
            .map(|library| {
                let fields: Vec<fred::types::Value> = library.convert().unwrap();
                fields
                    .chunks(2)
                    .find(|kv| kv[0].as_str().as_deref() == Some("library_name"))
                    .and_then(|kv| kv[1].as_string())
                    .expect("a FUNCTION LIST entry has its library_name")
            })
            .collect();
        names.sort();
        names
    }

    /// Whether the server holds the function library of script `script`
    /// (`redq::lua::function_name`: a variant's too).
    pub async fn holds_library_of(&self, script: &str) -> bool {
        let library = redq::lua::function_name(script).expect("a script of the catalogue");
        self.function_libraries().await.iter().any(|l| l == library)
    }

    /// Delete the function library of script `script`.
    pub async fn delete_library_of(&self, script: &str) {
        let library = redq::lua::function_name(script).expect("a script of the catalogue");
        self.cmd(&["FUNCTION", "DELETE", library]).await;
    }

    /// Zeroes the server's statistics (`CONFIG RESETSTAT`).
    pub async fn reset_stats(&self) {
        self.cmd(&["CONFIG", "RESETSTAT"]).await;
    }

    /// What the server has seen since the last reset, then resets again, so
    /// a read straight after a reset shows what the harness itself costs:
    /// the baseline to compare a later read with.
    pub async fn seen_since_reset(&self) -> SeenByServer {
        let stats: String = self.cmd(&["INFO", "stats"]).await.convert().unwrap();
        let commandstats: String = self.cmd(&["INFO", "commandstats"]).await.convert().unwrap();
        self.reset_stats().await;
        let connections = stats
            .lines()
            .find_map(|l| l.strip_prefix("total_connections_received:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("INFO stats has total_connections_received");
        let commands = commandstats
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
                let calls = rest
                    .strip_prefix("calls=")?
                    .split(',')
                    .next()?
                    .parse()
                    .ok()?;
                Some((name.to_owned(), calls))
            })
            .collect();
        SeenByServer {
            connections,
            commands,
        }
    }
}
