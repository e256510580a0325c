//! Connecting: the builder, its defaults, and the checks done at connect.
//! Builds the handle of `handle.rs`; the calls on it (`queue.rs`, `admin.rs`,
//! …) sit above this module and this module knows none of them.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use fred::clients::Pool;
use fred::interfaces::ClientLike;
use fred::types::config::{Config, ReconnectPolicy};

use crate::connection_fault::ConnectionFault;
use crate::handle::{Inner, RedisQueue};
use crate::identity::WorkerIdentity;
use crate::keys::Keys;
use crate::limits::{check_namespace, check_payload_limit, check_pool_size};
use crate::redact::redact_url;
use crate::{scripts, QueueError};

/// Default namespace: every key starts with `{redq}:`.
pub const DEFAULT_NAMESPACE: &str = "redq";
/// Default payload limit: 1 MiB of JSON.
pub const DEFAULT_PAYLOAD_LIMIT: usize = 1024 * 1024;
/// Default command timeout.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// Default number of connections.
pub const DEFAULT_POOL_SIZE: usize = 2;

/// Settings for [`RedisQueue`]; see each method for its default.
#[derive(Clone)]
pub struct RedisQueueBuilder {
    url: String,
    namespace: String,
    identity: Option<WorkerIdentity>,
    pool_size: usize,
    payload_limit: usize,
    command_timeout: Duration,
    /// PEM text of the CAs trusted for TLS instead of the system roots.
    tls_ca_pem: Option<Vec<u8>>,
    /// Who this handle's operator actions are recorded as (`events/actor.rs`).
    actor: Option<String>,
    script_calls: scripts::ScriptCalls,
    /// Whether a connect loads every script the server lacks.
    preload_scripts: bool,
}

impl std::fmt::Debug for RedisQueueBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisQueueBuilder")
            .field("url", &redact_url(&self.url))
            .field("namespace", &self.namespace)
            .field("identity", &self.identity)
            .field("pool_size", &self.pool_size)
            .field("payload_limit", &self.payload_limit)
            .field("command_timeout", &self.command_timeout)
            .field("tls_ca_pem", &self.tls_ca_pem.as_ref().map(|p| p.len()))
            .field("script_calls", &self.script_calls)
            .field("preload_scripts", &self.preload_scripts)
            .finish()
    }
}

impl RedisQueueBuilder {
    pub(crate) fn new(url: &str) -> Self {
        RedisQueueBuilder {
            url: url.to_owned(),
            namespace: DEFAULT_NAMESPACE.to_owned(),
            identity: None,
            pool_size: DEFAULT_POOL_SIZE,
            payload_limit: DEFAULT_PAYLOAD_LIMIT,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            tls_ca_pem: None,
            actor: None,
            script_calls: scripts::ScriptCalls::default(),
            preload_scripts: true,
        }
    }

    /// How the scripts are called (default [`ScriptCalls::Auto`]: as Redis
    /// Functions where the server and the user allow them, which costs the
    /// server less a call, and by `EVALSHA` elsewhere).
    /// [`ScriptCalls::Eval`] always calls them by `EVALSHA`, leaving no
    /// function libraries on the server; [`ScriptCalls::Functions`] always
    /// as functions, and [`connect`](Self::connect) fails with a plain
    /// sentence on a server without them.
    ///
    /// [`ScriptCalls::Auto`]: crate::ScriptCalls::Auto
    /// [`ScriptCalls::Eval`]: crate::ScriptCalls::Eval
    /// [`ScriptCalls::Functions`]: crate::ScriptCalls::Functions
    #[must_use]
    pub fn script_calls(mut self, calls: scripts::ScriptCalls) -> Self {
        self.script_calls = calls;
        self
    }

    /// Whether [`connect`](Self::connect) readies every script (default
    /// true): it composes all of them (25 to 30 ms of CPU) and loads those
    /// the server lacks, so that the calls in flight when a service starts
    /// find them (all but the two variants only a namespace that detaches
    /// payloads calls, in a namespace that does not: `RecordFormat`). With
    /// false, a script is composed at its first call and
    /// loaded then if the server lacks it (one `NOSCRIPT`, or "Function not
    /// found", and one load, once per handle): for a short-lived process
    /// that runs a few scripts, as each `redq` command does.
    #[must_use]
    pub fn preload_scripts(mut self, preload: bool) -> Self {
        self.preload_scripts = preload;
        self
    }

    /// Trust the certificate authorities in `pem` (one or more PEM
    /// `CERTIFICATE` blocks) for `rediss://` connections, instead of the
    /// system's root certificates (the default): for a private CA or a
    /// self-signed server certificate. The server's certificate must still
    /// name the host in the URL. Ignored for plaintext URLs; [`connect`]
    /// fails with [`QueueError::Config`] when `pem` holds no certificate.
    ///
    /// [`connect`]: RedisQueueBuilder::connect
    #[must_use]
    pub fn tls_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls_ca_pem = Some(pem.into());
        self
    }

    /// [`tls_ca_pem`](RedisQueueBuilder::tls_ca_pem) with the PEM read from
    /// the file at `path`.
    pub fn tls_ca_file(self, path: impl AsRef<std::path::Path>) -> Result<Self, QueueError> {
        let path = path.as_ref();
        let pem = std::fs::read(path).map_err(|e| {
            QueueError::Config(format!("reading TLS CA file {}: {e}", path.display()))
        })?;
        Ok(self.tls_ca_pem(pem))
    }

    /// The namespace (default `redq`): the hash tag of every key, so several
    /// applications can share one Redis without seeing each other's queues.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Who this handle's operator actions (pause, resume, requeue, delete,
    /// purge, cancel, limits, retention, promote and retry now, payload
    /// edits, a schedule's upsert, pause, resume, delete and trigger, a
    /// held waiter's decision) are recorded as, as the `by` of their
    /// events on `{ns}:events`: for example
    /// [`events::local_actor("console")`](crate::events::local_actor)
    /// (`console alice@host`). Default: none, and those events carry no
    /// `by`. At most 128 bytes are kept; control characters are refused at
    /// [`connect`](Self::connect).
    #[must_use]
    pub fn actor(mut self, actor: impl Into<String>) -> Self {
        self.actor = Some(actor.into()).filter(|a| !a.is_empty());
        self
    }

    /// The worker identity recorded on leases (default: a random node id per
    /// process and a new instance number per connection). The first
    /// [`Worker`](crate::worker::Worker) made on the handle leases under it;
    /// a later one takes this node with an instance of its own
    /// ([`RedisQueue::identity`]).
    #[must_use]
    pub fn identity(mut self, node: u64, instance: u32) -> Self {
        self.identity = Some(WorkerIdentity { node, instance });
        self
    }

    /// How many connections to keep (default 2). Commands are pipelined on
    /// each, so a few go a long way.
    #[must_use]
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size;
        self
    }

    /// The largest payload accepted, in bytes of JSON (default 1 MiB).
    #[must_use]
    pub fn payload_limit(mut self, bytes: usize) -> Self {
        self.payload_limit = bytes;
        self
    }

    /// How long a command may take before it fails with
    /// [`QueueError::Timeout`] (default 10 s). A claim that Redis holds
    /// past half of it (a `CLIENT PAUSE`, a `DEBUG SLEEP`, a slow script)
    /// leases nothing once it runs: its caller may have given up on it, and
    /// jobs leased then would wait out their leases, an attempt counted.
    #[must_use]
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = timeout;
        self
    }

    /// Check the URL as [`connect`](RedisQueueBuilder::connect) would,
    /// without connecting: a command line can refuse a bad URL as a usage
    /// error before anything is sent. The error is the one `connect` gives.
    pub fn check_url(&self) -> Result<(), QueueError> {
        parse_config(&self.url, &redact_url(&self.url)).map(|_| ())
    }

    /// Connect, load the scripts, and check the server's eviction policy.
    ///
    /// Accepted URLs: `redis://[user:password@]host[:port][/db]`,
    /// `rediss://…` (TLS with rustls, verified against the system's root
    /// certificates; never a plaintext fallback),
    /// `redis+unix:///path/to/redis.sock`, a Redis Cluster
    /// (`redis-cluster://host:port?node=host2:port2&node=…`, any reachable
    /// nodes as seeds; `rediss-cluster://` with TLS) and a primary behind
    /// Sentinel (`redis-sentinel://sentinel:26379?sentinelServiceName=name&node=sentinel2:26379`;
    /// `rediss-sentinel://` with TLS). See `docs/cluster.md`.
    ///
    /// Safe to race against a deadline or drop: the attempt runs in a task
    /// of its own, and a handle it makes after the caller stopped waiting
    /// is closed, not left connected (`unwaited.rs`).
    pub async fn connect(self) -> Result<RedisQueue, QueueError> {
        crate::unwaited::connect_in_task(self.connect_here()).await
    }

    async fn connect_here(self) -> Result<RedisQueue, QueueError> {
        check_namespace(&self.namespace)?;
        check_pool_size(self.pool_size)?;
        check_payload_limit(self.payload_limit)?;
        if let Some(actor) = &self.actor {
            crate::actor::check_actor(actor)?;
        }
        let redacted = redact_url(&self.url);
        let mut config = parse_config(&self.url, &redacted)?;
        if let (Some(pem), Some(tls)) = (&self.tls_ca_pem, config.tls.as_mut()) {
            tls.connector = tls_connector(pem)?;
        }
        let mut client_builder = fred::types::Builder::from_config(config);
        client_builder
            .with_performance_config(|perf| perf.default_command_timeout = self.command_timeout)
            .with_connection_config(|conn| {
                conn.connection_timeout = self.command_timeout;
                conn.internal_command_timeout = self.command_timeout;
                // fred leaves Nagle's algorithm on: a command written while
                // an earlier one on the same connection is unanswered (a
                // second coalesced batch, an ack beside a claim) would wait
                // for that reply's ACK before leaving. The peers' clients
                // turn it off too (ioredis for BullMQ, node_redis for
                // bee-queue).
                conn.tcp.nodelay = Some(true);
            })
            .set_policy(ReconnectPolicy::new_exponential(0, 50, 2_000, 2));
        let pool = client_builder
            .build_pool(self.pool_size)
            .map_err(|e| QueueError::Config(format!("{redacted}: {}", e.details())))?;
        pool.init()
            .await
            .map_err(|e| connect_error(e, &redacted, self.command_timeout))?;
        let keys = Keys::new(&self.namespace);
        let readied = async {
            // Read before the scripts are readied: which variants a handle
            // calls follows from it (`scripts::load_all`).
            let record_format = crate::record_format::at_connect(
                &pool,
                &keys,
                &self.namespace,
                self.command_timeout,
            )
            .await?;
            let script_calls = scripts::load_all(
                pool.next(),
                self.script_calls,
                self.preload_scripts,
                record_format.detach_from().is_some(),
            )
            .await
            .map_err(|e| QueueError::from_redis(e, self.command_timeout))?;
            crate::layout::refuse_earlier_layout(
                &pool,
                &keys,
                &self.namespace,
                &redacted,
                self.command_timeout,
            )
            .await?;
            Ok::<_, QueueError>((record_format, script_calls))
        };
        let (record_format, script_calls) = match readied.await {
            Ok(readied) => readied,
            Err(e) => {
                // The pool is up: dropped, its connections would stay open
                // (and reconnect) with nothing to use them, one more each
                // time a caller retries the connect.
                let _ = tokio::time::timeout(self.command_timeout, pool.quit()).await;
                return Err(e);
            }
        };
        warn_unless_noeviction(&pool, &redacted).await;
        crate::connection_watch::watch(&pool, &redacted);
        let identity = self.identity.unwrap_or_else(WorkerIdentity::unique);
        Ok(RedisQueue {
            identity,
            inner: Arc::new(Inner {
                pool,
                client_builder,
                keys,
                namespace: self.namespace,
                url: redacted,
                identity,
                workers_made: Default::default(),
                payload_limit: self.payload_limit,
                timeout: self.command_timeout,
                queue_keys: RwLock::new(HashMap::new()),
                held: crate::remembered::Remembered::new(),
                coalescer: Default::default(),
                actor: self.actor,
                script_calls,
                record_format: std::sync::atomic::AtomicU64::new(record_format.to_bits()),
                whole_acks: Default::default(),
                whole_claims: Default::default(),
                redis_clock: Default::default(),
            }),
        })
    }
}

fn parse_config(url: &str, redacted: &str) -> Result<Config, QueueError> {
    let scheme = url.split("://").next().unwrap_or_default();
    if !matches!(
        scheme,
        "redis"
            | "rediss"
            | "redis+unix"
            | "redis-cluster"
            | "rediss-cluster"
            | "redis-sentinel"
            | "rediss-sentinel"
    ) {
        return Err(QueueError::Config(format!(
            "{redacted}: unsupported scheme; accepted: redis://, rediss:// (TLS), redis+unix://, \
             redis-cluster://, rediss-cluster://, redis-sentinel://, rediss-sentinel://"
        )));
    }
    check_no_stray_at(url, redacted)?;
    check_query(url, scheme, redacted)?;
    let config = Config::from_url(url).map_err(|e| {
        let why = crate::error::plain(&e);
        QueueError::Config(format!("{redacted}: {}", scrub(&why, url)))
    })?;
    if scheme.starts_with("rediss") && config.tls.is_none() {
        return Err(QueueError::Config(format!(
            "{redacted}: TLS was requested but is not configured"
        )));
    }
    Ok(config)
}

/// Refuse an `@` after the host: a password holding `/`, `?` or `#` that
/// was not percent-encoded ends the host early (`redis://admin:6379/x@h`
/// reads as host `admin`, port 6379, path `/x@h`), so the client would
/// connect to the wrong place and the rest of the password would be shown
/// as the URL's path or query. Said without the URL, which holds it.
fn check_no_stray_at(url: &str, redacted: &str) -> Result<(), QueueError> {
    if !crate::redact::has_stray_at(url) {
        return Ok(());
    }
    Err(QueueError::Config(format!(
        "{redacted}: the URL has an '@' after its host, so part of a password is read as \
         the host, path or query; percent-encode the password's '/', '?' and '#' \
         (%2F, %3F, %23)"
    )))
}

/// The query parameters the client (fred's `Config::from_url`) reads, by
/// scheme: `node` (further seed nodes) for a cluster, `node` and
/// `sentinelServiceName` for a sentinel; none for a single server. Its
/// `sentinelUsername` and `sentinelPassword` need a feature this build
/// does not enable, so they would be ignored too.
fn query_parameters_read(scheme: &str) -> &'static [&'static str] {
    if scheme.ends_with("-cluster") {
        &["node"]
    } else if scheme.ends_with("-sentinel") {
        &["node", "sentinelServiceName"]
    } else {
        &[]
    }
}

/// Refuse a query parameter the client would silently ignore, before
/// connecting: `?password=...` read as a password but was dropped, and the
/// connection then failed (or ran without the intended database or TLS
/// setting) with no word about why. The sentence names the parameter,
/// never its value.
fn check_query(url: &str, scheme: &str, redacted: &str) -> Result<(), QueueError> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Ok(());
    };
    let read = query_parameters_read(scheme);
    let Some(part) = parsed
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find(|part| !read.contains(&part.split_once('=').map_or(*part, |(k, _)| k)))
    else {
        return Ok(());
    };
    // A part without '=' is no parameter: perhaps a password pasted there,
    // so it is not shown.
    let what = match part.split_once('=') {
        // Printable as it stands: a name with control characters or spaces
        // is shown with those replaced.
        Some((name, _)) => {
            let name: String = url::form_urlencoded::parse(name.as_bytes())
                .next()
                .map_or_else(String::new, |(name, _)| name.into_owned())
                .chars()
                .map(|c| if c.is_ascii_graphic() { c } else { '?' })
                .collect();
            format!("the query parameter {name}")
        }
        None => "a query part without '=' (not shown, in case it holds a password)".to_owned(),
    };
    let accepted = match read {
        [] => format!("a {scheme}:// URL takes no query parameters"),
        names => format!("a {scheme}:// URL accepts only {}", names.join(" and ")),
    };
    Err(QueueError::Config(format!(
        "{redacted}: {what} is not read by the Redis client, and {accepted}; \
         a password goes before the host (redis://:PASSWORD@host:6379, or \
         redis://USER:PASSWORD@host:6379), the database after it (redis://host:6379/2)"
    )))
}

/// A rustls connector that trusts exactly the CA certificates in `pem`.
fn tls_connector(pem: &[u8]) -> Result<fred::types::config::TlsConnector, QueueError> {
    use fred::rustls::pki_types::pem::PemObject;
    use fred::rustls::pki_types::CertificateDer;
    let bad = |why: String| QueueError::Config(format!("TLS CA certificates: {why}"));
    let mut roots = fred::rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| bad(format!("unreadable PEM: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| bad(format!("not a usable CA certificate: {e}")))?;
    }
    if roots.is_empty() {
        return Err(bad("no CERTIFICATE block in the PEM".into()));
    }
    let config = fred::rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config.into())
}

/// fred's messages can quote the URL it was given: never let the raw URL
/// (and its password) through.
fn scrub(message: &str, url: &str) -> String {
    let mut out = message.replace(url, "<url>");
    if let Ok(parsed) = url::Url::parse(url) {
        for (_, value) in parsed.query_pairs() {
            if !value.is_empty() {
                out = out.replace(value.as_ref(), "<value>");
            }
        }
        if let Some(password) = parsed.password().filter(|p| !p.is_empty()) {
            out = out.replace(password, "<password>");
        }
    }
    out
}

fn connect_error(err: fred::error::Error, redacted: &str, timeout: Duration) -> QueueError {
    match connect_error_of(err, redacted, timeout) {
        QueueError::ConnectFailed {
            target,
            fault: Some(fault),
            detail,
        } if fault.is_transient() && is_cluster_url(redacted) => QueueError::ConnectFailed {
            target,
            fault: Some(fault),
            detail: format!("{detail}{CLUSTER_HINT}"),
        },
        other => other,
    }
}

/// A cluster client connects to every primary the cluster names, and the
/// client's error does not say which one failed: without this an operator
/// checks the URL's nodes, which may all be up.
const CLUSTER_HINT: &str = " (a cluster connect reaches every primary the cluster names, not only \
                            the URL's nodes: one of them may be down or out of reach from here)";

fn is_cluster_url(url: &str) -> bool {
    url.starts_with("redis-cluster://") || url.starts_with("rediss-cluster://")
}

fn connect_error_of(err: fred::error::Error, redacted: &str, timeout: Duration) -> QueueError {
    let target = redacted.to_owned();
    match QueueError::from_redis(err, timeout) {
        QueueError::Redis(inner) => {
            let fault = crate::connection_fault::of_connect_error(&inner.0);
            let detail = match fault {
                // The decoder's own words ("Decode Error: frame_type: …")
                // tell an operator nothing more.
                Some(ConnectionFault::NotRedis) => "the server's reply is not in Redis's \
                                                    protocol: another service listens there, \
                                                    or a TLS port needs rediss://"
                    .to_owned(),
                _ => inner.to_string(),
            };
            QueueError::ConnectFailed {
                target,
                fault,
                detail,
            }
        }
        // A timeout while connecting is not a command that "may or may not
        // have been applied": nothing was sent. The usual cause for rediss://
        // is a server that does not speak TLS (the handshake never ends).
        QueueError::Timeout(_) => {
            let hint = if redacted.starts_with("rediss://") {
                " (is the server speaking TLS on that port?)"
            } else {
                ""
            };
            QueueError::ConnectFailed {
                target,
                fault: Some(ConnectionFault::NoAnswer),
                detail: format!("no answer within {timeout:?}{hint}"),
            }
        }
        other => other,
    }
}

/// Evicting a queue's keys loses jobs silently; say so once at connect.
async fn warn_unless_noeviction(pool: &Pool, redacted: &str) {
    let command =
        fred::types::CustomCommand::new_static("CONFIG", fred::types::ClusterHash::Random, false);
    // CONFIG may be refused (managed Redis, ACLs): then there is nothing to say.
    let reply: Result<Vec<String>, _> = pool
        .next()
        .custom(command, vec!["GET", "maxmemory-policy"])
        .await;
    if let Ok(settings) = reply {
        if let Some(policy) = settings.get(1).filter(|p| p.as_str() != "noeviction") {
            tracing::warn!(
                url = %redacted,
                policy = %policy,
                "redis maxmemory-policy is not noeviction: under memory pressure Redis may evict queue keys and lose jobs"
            );
        }
    }
}
