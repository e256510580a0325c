//! The Lua scripts: composed once, loaded at connect, called as Redis
//! Functions or by SHA ([`ScriptCalls`]), reloaded after "Function not
//! found" or `NOSCRIPT` (sent by body when flushed again after each reload);
//! and the only place raw script replies are decoded.
//!
//! Each transition lives in its own file in `lua/`, listed once in
//! [`catalogue`]; the helpers it uses live in small modules in `lua/lib/`,
//! which it names on its `-- include:` header line. [`compose`] builds the
//! text Redis runs (shebang, modules, body) and maps Redis's error lines back
//! to those files (see `lua/README.md`). Bodies are compile-time constants:
//! no script text is ever built from user input.

use std::ops::Range;
use std::sync::LazyLock;

use fred::bytes::Bytes;
use fred::clients::Client;
use fred::interfaces::{FunctionInterface, LuaInterface};
use fred::types::scripts::Script;
use fred::types::Value;

use crate::keys::QueueKeys;
use crate::QueueError;

pub mod catalogue;
pub mod compose;
pub(crate) mod libraries;
mod queue_keys;
mod rename;
pub(crate) mod variant_route;

/// A text argument of a script call.
pub(crate) fn text(s: impl Into<String>) -> Value {
    Value::String(s.into().into())
}

/// A whole-number argument of a script call (sent as its decimal digits).
pub(crate) fn num(n: u64) -> Value {
    text(n.to_string())
}

pub use catalogue::Op;
pub use libraries::FunctionLibrary;

/// The seam between Rust and Lua as the tests crate sees it (`redq::lua`,
/// hidden from the docs): the script list and its composition, and the
/// driver's own decoder of the job record, so tests neither re-list nor
/// re-compose the scripts, and can pin their own decoder to the driver's.
pub mod exposed {
    pub use super::catalogue::{Variant, MODULES, SCRIPTS, VARIANTS};
    pub use super::compose::{
        compose, compose_function, compose_variant, compose_variant_function, compose_with,
        includes, needed_modules, Composed,
    };
    pub use super::function_name;
    pub use super::map_error;
    pub use super::queue_keys::declared as declared_queue_keys;
    pub use crate::meta::Meta as JobMeta;
    pub use crate::meta::{JOB_RECORD_LEN, OLDEST_JOB_RECORD_LEN};
}

/// How a handle calls the scripts ([`crate::RedisQueueBuilder::script_calls`]).
///
/// All three run the same composition of the same files, so they behave the
/// same; they differ in what a call costs the server and in what they leave
/// on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScriptCalls {
    /// Redis Functions where the server and the handle's user allow them,
    /// `EVALSHA` elsewhere (the default). At connect a `FUNCTION LIST` of
    /// redq's libraries decides: a server without Functions (Redis before
    /// 7.0) or a user not allowed the `FUNCTION` command gets
    /// [`Eval`](Self::Eval) for the handle's life. Otherwise each script that
    /// writes (enqueue, claim, ack, …) is called as its function, its
    /// library loaded by the connect if the server lacks it; and a script
    /// whose library the server refuses to load (an ACL without
    /// `function|load`, a server out of memory under `noeviction`), at
    /// connect or when a call finds it gone, or whose `FCALL` the user may
    /// not run, is called by `EVALSHA` from then on by this handle: a call
    /// that meets the refusal goes through that way too, so a refusal never
    /// fails a call. The scripts that only read (counts, listings,
    /// inspection) are loaded at connect and called by `EVALSHA`, as with
    /// `Eval`: loading a library is a write, and a read must neither need
    /// one nor wait for one while writes are paused (`CLIENT PAUSE WRITE`,
    /// as in a failover); they are not on a job's path, so functions would
    /// save little there.
    #[default]
    Auto,
    /// `EVALSHA` always: each script the server lacks is loaded with
    /// `SCRIPT LOAD` at connect (at its first call with
    /// [`preload_scripts(false)`](crate::RedisQueueBuilder::preload_scripts))
    /// and reloaded after `NOSCRIPT`. Every call runs the script's whole
    /// text, building the helper modules it touches again. Nothing is left
    /// on the server but its script cache.
    Eval,
    /// `FCALL` of Redis Functions always (Redis 7.0 or later, Valkey):
    /// [`connect`](crate::RedisQueueBuilder::connect) fails with a plain
    /// sentence on a server without them, and a refused library load fails
    /// the call. Each script is a library of one function,
    /// `redq_<script>_<hash of its text>`, loaded by a connect that finds
    /// it missing (`FUNCTION LOAD REPLACE`, again after "Function not
    /// found": a server restarted without persistence, `FUNCTION FLUSH`, a
    /// new shard).
    /// What a call builds (the modules' functions and tables) stays built
    /// between calls, which saves about a quarter of the server's time on a
    /// call of one job (docs/performance.md). The libraries are server state
    /// (replicated, kept in RDB and AOF); their names carry the text's hash,
    /// so two driver versions each call their own, and an earlier version's
    /// stay until an operator drops them (`redq functions prune`). Needs the
    /// `FCALL` and `FUNCTION` commands (an ACL user needs `+fcall
    /// +function|load +function|list`).
    Functions,
}

/// How a handle calls the scripts, as settled at connect: what was asked,
/// [`ScriptCalls::Auto`] resolved by the server's answer to a probe, and
/// since then, for `Auto`, the scripts whose library the server refused.
pub(crate) struct CallMode {
    /// [`ScriptCalls::Eval`] or [`ScriptCalls::Functions`]: `Auto` is
    /// resolved at connect.
    settled: ScriptCalls,
    /// Whether the handle falls back to `EVALSHA` when a library is refused
    /// (`Auto`) rather than failing the call (`Functions`).
    falls_back: bool,
    /// Per script (by [`Op::index`]): its library was refused, so this
    /// handle calls it by `EVALSHA`.
    refused: Vec<std::sync::atomic::AtomicBool>,
    /// Per script (by [`Op::index`]): its reloads by this handle.
    reloads: Vec<Reloads>,
}

/// The reloads of one script (`SCRIPT LOAD` after `NOSCRIPT`, `FUNCTION
/// LOAD` after "Function not found") by one handle, one at a time: the
/// calls in flight when a script goes missing (a fresh server, a flush) all
/// meet the same answer, and each loading it again would make the server
/// compile it once per call (4 747 loads of one library for 4 800
/// concurrent first calls, 7.2 s of server time, before this).
#[derive(Default)]
struct Reloads {
    /// How many reloads this handle has completed.
    done: std::sync::atomic::AtomicU64,
    /// Held while one reload runs.
    running: tokio::sync::Mutex<()>,
}

impl Reloads {
    /// The reloads completed before a call is sent, for [`Reloads::reload`].
    fn seen(&self) -> u64 {
        self.done.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Reload by `load`, unless a reload completed since `seen` (read
    /// before the call that met the missing script was sent): that one
    /// loaded what the call needs, so it is only sent again.
    async fn reload<F, Fut>(&self, seen: u64, load: F) -> Result<(), fred::error::Error>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(), fred::error::Error>>,
    {
        let _running = self.running.lock().await;
        if self.seen() != seen {
            return Ok(());
        }
        load().await?;
        self.done.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }
}

impl CallMode {
    fn new(settled: ScriptCalls, falls_back: bool) -> CallMode {
        CallMode {
            settled,
            falls_back,
            refused: SCRIPTS
                .iter()
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
            reloads: SCRIPTS.iter().map(|_| Reloads::default()).collect(),
        }
    }

    /// How the handle calls scripts: [`ScriptCalls::Eval`] or
    /// [`ScriptCalls::Functions`] (which `Auto` became at connect; a script
    /// refused since is called by `EVALSHA` all the same).
    pub fn settled(&self) -> ScriptCalls {
        self.settled
    }

    /// Whether the script at `index` (of [`SCRIPTS`]) is called as its
    /// function: never under `Eval`; under `Auto` if it writes and the
    /// server has not refused its library.
    fn by_function(&self, index: usize) -> bool {
        let reads_only = !SCRIPTS[index].writes;
        self.settled == ScriptCalls::Functions
            && !(self.falls_back && reads_only)
            && !self.is_refused(index)
    }

    /// Whether the server refused the library of the script at `index` (or
    /// its `FCALL`).
    fn is_refused(&self, index: usize) -> bool {
        self.refused[index].load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Remember that the server refused the library of the script at
    /// `index` (or its `FCALL`).
    fn refuse(&self, index: usize) {
        self.refused[index].store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// What a script call needs from its handle: a connection and how to call.
#[derive(Clone, Copy)]
pub(crate) struct Caller<'a> {
    pub client: &'a Client,
    pub mode: &'a CallMode,
    /// Whether fred may send a call again by itself after a dropped
    /// connection, where the script allows it ([`resend_safe`]). A caller
    /// that sends again itself says no: only it can tell that a second
    /// run's answer (an ack's "already gone") is its own first run's doing.
    pub client_resends: bool,
}

impl Caller<'_> {
    /// This caller, its calls never sent again by fred: a dropped
    /// connection fails each call back to it.
    pub fn resent_by_caller(self) -> Self {
        Caller {
            client_resends: false,
            ..self
        }
    }
}

/// A script of the catalogue, composed at its first use: a process that
/// connects without loading every script (`preload_scripts(false)`, the
/// `redq` commands) composes only the few it runs. Composing all 45 took
/// 25 to 30 ms of CPU, most of a local `redq` command (docs/performance.md,
/// round fifteen).
struct Loaded {
    /// The script's name: its file's (`lua/<name>.lua`), or a variant's
    /// (`<file>_<variant>`, [`catalogue::Variant`]).
    name: &'static str,
    /// Its file's name (`lua/<file>.lua`).
    file: &'static str,
    /// The variant of that file it is, if it is one.
    variant: Option<&'static str>,
    /// Its file's text.
    source: &'static str,
    /// Whether it may write ([`compose::shebang_writes`]), read from its
    /// shebang once rather than at every call.
    writes: bool,
    /// Its composition and what follows from it, at its first use.
    built: std::sync::OnceLock<Built>,
    /// The library, composed at its first use.
    library: std::sync::OnceLock<compose::Composed>,
}

/// A script as composed: its client-side object (body and SHA-1), its
/// composition (to explain its errors), the one function of its library
/// and, for a queue script, where its keys are in a queue's key list.
struct Built {
    script: Script,
    composed: compose::Composed,
    /// The one function of its library (`redq_<name>_<hash>`).
    function_name: String,
    /// Its KEYS, as positions in [`crate::keys::Keys::queue`]'s list (`None`:
    /// it takes the keys its caller passes, as they are).
    queue_key_positions: Option<Vec<usize>>,
}

impl Built {
    fn compose(loaded: &Loaded) -> Built {
        let (name, source) = (loaded.name, loaded.source);
        let composed = match loaded.variant {
            None => compose::compose(name, source),
            Some(variant) => compose::compose_variant(loaded.file, variant, source),
        };
        let queue_key_positions = composed.queue_keys().map(|names| {
            names
                .iter()
                .map(|name| {
                    crate::keys::queue_key_position(name)
                        .expect("the composer binds only listed keys")
                })
                .collect()
        });
        let script = Script::from_lua(composed.text.clone());
        // The hash of the script's text: a change to any file it is
        // composed from names a new library.
        let function_name = format!("redq_{name}_{}", &script.sha1()[..16]);
        Built {
            script,
            composed,
            function_name,
            queue_key_positions,
        }
    }
}

/// Every script and then every variant, in [`Op`] order.
static SCRIPTS: LazyLock<Vec<Loaded>> = LazyLock::new(|| {
    let loaded = |name, file, variant, source| Loaded {
        name,
        file,
        variant,
        source,
        writes: compose::shebang_writes(source),
        built: std::sync::OnceLock::new(),
        library: std::sync::OnceLock::new(),
    };
    let scripts = catalogue::SCRIPTS
        .iter()
        .map(|(name, source)| loaded(name, name, None, source));
    let variants = catalogue::VARIANTS
        .iter()
        .map(|v| loaded(v.name, v.script, Some(v.variant), v.source));
    scripts.chain(variants).collect()
});

/// The function a script is called as with [`ScriptCalls::Functions`]
/// (`redq_<name>_<hash>`), for tests and tools (`None`: no such script).
pub fn function_name(script: &str) -> Option<&'static str> {
    SCRIPTS
        .iter()
        .find(|loaded| loaded.name == script)
        .map(|loaded| loaded.built().function_name.as_str())
}

impl Loaded {
    /// Its composition, composed at the first call that needs it.
    fn built(&self) -> &Built {
        self.built.get_or_init(|| Built::compose(self))
    }

    /// The script's function library (composed once, at its first use).
    fn library(&self) -> &compose::Composed {
        self.library.get_or_init(|| {
            let function_name = &self.built().function_name;
            match self.variant {
                None => compose::compose_function(self.name, self.source, function_name),
                Some(variant) => compose::compose_variant_function(
                    self.file,
                    variant,
                    self.source,
                    function_name,
                ),
            }
        })
    }

    /// `FUNCTION LOAD REPLACE` its library (on every primary of a cluster).
    /// REPLACE makes loading idempotent: a library of this name holds this
    /// very text, so replacing it changes nothing but what it had built.
    async fn load_function(&self, client: &Client) -> Result<(), fred::error::Error> {
        client
            .function_load_cluster::<Value, _>(true, self.library().text.clone())
            .await
            .map(|_| ())
    }

    /// The keys a call sends, from `keys` (for a queue script, a queue's
    /// whole key list then any keys of the script's own): a queue script's
    /// own subset of the list, then the rest; any other script's, as given.
    /// Borrowed, not collected: the command is built from them directly.
    fn sent_keys<'a>(
        &'a self,
        keys: &'a QueueKeys,
    ) -> impl Iterator<Item = &'a fred::types::Key> + Clone + 'a {
        let (positions, own): (&[usize], &[fred::types::Key]) =
            match &self.built().queue_key_positions {
                None => (&[], &keys.0),
                Some(positions) => (
                    positions,
                    keys.0
                        .get(crate::keys::queue_key_total()..)
                        .unwrap_or_default(),
                ),
            };
        positions.iter().filter_map(|i| keys.0.get(*i)).chain(own)
    }

    /// Whether `keys` is what the script takes: a queue script needs a
    /// queue's whole key list (the driver's own slip if not, so said plainly).
    fn check_keys(&self, keys: &QueueKeys) -> Result<(), fred::error::Error> {
        if self.built().queue_key_positions.is_some()
            && keys.0.len() < crate::keys::queue_key_total()
        {
            return Err(fred::error::Error::new(
                fred::error::ErrorKind::InvalidArgument,
                format!(
                    "the {} script takes a queue's keys, but was given {} keys",
                    self.name,
                    keys.0.len()
                ),
            ));
        }
        Ok(())
    }
}

/// Ready the scripts at connect and settle how they are called. A
/// `FUNCTION LIST` of redq's libraries tells whether this server, for this
/// user, has Redis Functions: [`ScriptCalls::Auto`] takes a refusal (no
/// Functions, or a user not allowed them) as [`ScriptCalls::Eval`];
/// [`ScriptCalls::Functions`] fails with a plain sentence rather than an
/// unknown command at the first call. Then each script called as a function
/// whose library the server lacks is loaded (once per server and driver
/// version: the rest of the time the list shows them all), and every other
/// script gets `SCRIPT LOAD`. Loading at connect, not at each script's first
/// call, spares the server a load per call in flight when a service starts
/// (every concurrent first call would find no library), and spares those
/// calls a round trip; "Function not found" and `NOSCRIPT` still reload
/// later (a flush, a restart without persistence, a new shard). Without
/// `preload` (`RedisQueueBuilder::preload_scripts(false)`) only the probe
/// is sent, and each script is composed and loaded at its first call.
/// The variants only a namespace that detaches payloads calls
/// ([`only_when_detaching`]) are readied only when `detaching`: a server
/// whose namespaces do not detach holds no library it never runs (each is
/// about 160 KB of Redis memory).
pub(crate) async fn load_all(
    client: &Client,
    calls: ScriptCalls,
    preload: bool,
    detaching: bool,
) -> Result<CallMode, fred::error::Error> {
    // Eval asks nothing: a user allowed only EVALSHA would find a refused
    // FUNCTION LIST in its server's ACL LOG at every connect.
    let listed = match calls {
        ScriptCalls::Eval => Ok(Vec::new()),
        _ => libraries::names(client).await,
    };
    let settled = match (&listed, calls) {
        (_, ScriptCalls::Eval) => ScriptCalls::Eval,
        (Ok(_), _) => ScriptCalls::Functions,
        (Err(err), ScriptCalls::Auto) if refused_by_server(err) => ScriptCalls::Eval,
        (Err(err), ScriptCalls::Functions) => {
            let details = err.details().to_owned();
            let why = if details.to_ascii_lowercase().contains("unknown command") {
                "this server has no Redis Functions (they need Redis 7.0 or later, or \
                 Valkey): connect with ScriptCalls::Eval or ScriptCalls::Auto"
                    .to_owned()
            } else {
                format!("calling scripts as functions needs the FUNCTION command: {details}")
            };
            return Err(fred::error::Error::new(err.kind().clone(), why));
        }
        (Err(err), _) => return Err(err.clone()),
    };
    let present = listed.unwrap_or_default();
    let mode = CallMode::new(settled, calls == ScriptCalls::Auto);
    if !preload {
        return Ok(mode);
    }
    let (by_sha, by_function): (Vec<usize>, Vec<usize>) = (0..SCRIPTS.len())
        .filter(|index| detaching || !only_when_detaching(&SCRIPTS[*index]))
        .partition(|index| !mode.by_function(*index));
    // Only what the server lacks is sent, all of it at once: the scripts
    // are 2.5 MB in all, and loading each in turn made every connect (every
    // `redq` command, every service start) 45 round trips and 2.5 MB long.
    let cached = cached_scripts(client, &by_sha).await;
    let loads = by_sha
        .iter()
        .zip(cached)
        .filter(|(_, cached)| !cached)
        .map(|(index, _)| SCRIPTS[*index].built().script.load(client));
    futures::future::try_join_all(loads).await?;
    let missing: Vec<usize> = by_function
        .into_iter()
        .filter(|index| !present.contains(&SCRIPTS[*index].built().function_name))
        .collect();
    let loaded = futures::future::join_all(
        missing
            .iter()
            .map(|index| SCRIPTS[*index].load_function(client)),
    )
    .await;
    for (index, result) in missing.into_iter().zip(loaded) {
        match result {
            Ok(()) => {}
            // Called by EVALSHA, loaded at its first call (NOSCRIPT).
            Err(err) if mode.falls_back && refused_by_server(&err) => mode.refuse(index),
            Err(err) => return Err(err),
        }
    }
    Ok(mode)
}

/// Whether `script` is a variant only the calls of a namespace that
/// detaches payloads go to ([`catalogue::Variant::only_when_detaching`]).
/// A handle that starts detaching after its connect (it set the format
/// itself) loads them at their first call.
fn only_when_detaching(script: &Loaded) -> bool {
    script.variant.is_some_and(catalogue::only_when_detaching)
}

/// For each script of `indices`, whether the server's script cache holds
/// it: one `SCRIPT EXISTS` for them all. Where that cannot tell (a cluster,
/// whose primaries each keep their own cache; a user refused the command;
/// a failure), every answer is no, and each script is loaded as before.
async fn cached_scripts(client: &Client, indices: &[usize]) -> Vec<bool> {
    use fred::interfaces::ClientLike;
    let unknown = vec![false; indices.len()];
    if indices.is_empty() || client.is_clustered() {
        return unknown;
    }
    let hashes: Vec<String> = indices
        .iter()
        .map(|index| SCRIPTS[*index].built().script.sha1().to_string())
        .collect();
    match client.script_exists::<Vec<bool>, _>(hashes).await {
        Ok(cached) if cached.len() == indices.len() => cached,
        _ => unknown,
    }
}

/// Whether `err` is the server's answer (an error reply such as `NOPERM`,
/// `OOM`, `READONLY` or an unknown command) rather than the connection's
/// failure (I/O, timeout), which says nothing about what the server allows.
/// fred gives error replies the kind `Unknown` with the reply as details,
/// and every Redis error reply starts with an upper-case code.
fn refused_by_server(err: &fred::error::Error) -> bool {
    *err.kind() == fred::error::ErrorKind::Unknown
        && err
            .details()
            .split_whitespace()
            .next()
            .is_some_and(|code| code.len() > 1 && code.bytes().all(|b| b.is_ascii_uppercase()))
}

/// Run `op` with the queue's keys, reloading it on `NOSCRIPT` (a few times
/// at most, then sending its body).
pub(crate) async fn run(
    caller: Caller<'_>,
    op: Op,
    keys: &QueueKeys,
    args: Vec<Value>,
) -> Result<Value, fred::error::Error> {
    run_with(caller, op, keys, &args[..]).await
}

/// The arguments of a script call, written into its command (again on a
/// `NOSCRIPT` retry): a large argument list is not first assembled and then
/// copied.
pub trait Args: Sync {
    /// How many arguments `write` appends.
    fn count(&self) -> usize;
    /// Append the arguments to `out`.
    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>);
}

impl Args for [Value] {
    fn count(&self) -> usize {
        self.len()
    }
    fn write<'a>(&'a self, out: &mut Vec<Arg<'a>>) {
        out.extend(self.iter().map(Arg::Value));
    }
}

/// One script argument as handed to the client, which turns it into a
/// `Value` as it takes the command: a large argument list (an enqueue batch)
/// is built once, compactly, rather than built as `Value`s and converted.
#[derive(Debug)]
pub enum Arg<'a> {
    /// An argument already in the client's form (cloned, not copied).
    Value(&'a Value),
    /// A decimal number, sent as its digits.
    Uint(u64),
    /// Shared bytes (cloned by reference count, not copied).
    Bytes(&'a Bytes),
    /// The bytes at `range` of a shared buffer (a slice of it, not a copy).
    Slice(&'a Bytes, Range<usize>),
    /// A fixed text (a marker such as enqueue's "=").
    Static(&'static str),
}

impl From<Arg<'_>> for Value {
    fn from(arg: Arg<'_>) -> Value {
        match arg {
            Arg::Value(value) => value.clone(),
            // fred writes an integer argument as the bulk string of its
            // decimal digits: the same bytes as the text, without building it.
            Arg::Uint(n) => match i64::try_from(n) {
                Ok(n) => Value::Integer(n),
                Err(_) => Value::String(n.to_string().into()),
            },
            Arg::Bytes(bytes) => Value::Bytes(bytes.clone()),
            Arg::Slice(buf, range) => Value::Bytes(buf.slice(range)),
            Arg::Static(text) => Value::Bytes(Bytes::from_static(text.as_bytes())),
        }
    }
}

/// [`run`] with arguments that write themselves into the command.
pub(crate) async fn run_with<A: Args + ?Sized>(
    caller: Caller<'_>,
    op: Op,
    keys: &QueueKeys,
    args: &A,
) -> Result<Value, fred::error::Error> {
    let loaded = &SCRIPTS[op.index()];
    loaded.check_keys(keys)?;
    if caller.mode.by_function(op.index()) {
        return run_function(caller, op, loaded, keys, args).await;
    }
    run_eval(caller, op, loaded, keys, args).await
}

/// [`run_with`] by `EVALSHA`.
async fn run_eval<A: Args + ?Sized>(
    caller: Caller<'_>,
    op: Op,
    loaded: &Loaded,
    keys: &QueueKeys,
    args: &A,
) -> Result<Value, fred::error::Error> {
    let client = caller.client;
    let script = &loaded.built().script;
    let reload = &caller.mode.reloads[op.index()];
    let mut reloads = 0;
    loop {
        let seen = reload.seen();
        match call(caller, op, loaded, keys, args, By::Sha).await {
            // A `NOSCRIPT` call ran nothing, so it is safe to send again,
            // enqueues included. A `SCRIPT FLUSH` can land between the reload
            // and the retry (the reliability run flushes every second and
            // once saw exactly that), so a few reloads are allowed, not one.
            Err(err) if err.details().starts_with("NOSCRIPT") && reloads < NOSCRIPT_RELOADS => {
                reloads += 1;
                reload
                    .reload(seen, || async { script.load(client).await.map(|_| ()) })
                    .await?;
            }
            // Flushed after every reload: the body itself goes with the
            // call (EVAL), which no flush can outrun. Rare, so its size is
            // paid only here.
            Err(err) if err.details().starts_with("NOSCRIPT") => {
                return call(caller, op, loaded, keys, args, By::Body).await;
            }
            result => return result,
        }
    }
}

/// How many times one call reloads its script on `NOSCRIPT` before it
/// sends the script's body instead.
const NOSCRIPT_RELOADS: u32 = 3;

/// [`run_with`] by `FCALL`. "Function not found" ran nothing (a server
/// without the library: restarted without persistence, flushed, a new
/// shard), so the library is loaded and the call sent again; flushed after
/// every reload, the call goes as the script's body (EVAL), which no flush
/// can outrun, as on the `EVALSHA` path. A handle that falls back
/// ([`ScriptCalls::Auto`]) takes the server's refusal of the load, or of
/// `FCALL` itself, as the script's to be called by `EVALSHA`: this call and
/// every later one.
async fn run_function<A: Args + ?Sized>(
    caller: Caller<'_>,
    op: Op,
    loaded: &Loaded,
    keys: &QueueKeys,
    args: &A,
) -> Result<Value, fred::error::Error> {
    let client = caller.client;
    let fall_back = || async {
        caller.mode.refuse(op.index());
        run_eval(caller, op, loaded, keys, args).await
    };
    let reload = &caller.mode.reloads[op.index()];
    let mut reloads = 0;
    loop {
        let seen = reload.seen();
        match call(caller, op, loaded, keys, args, By::Function).await {
            Err(err) if function_missing(&err) && reloads < NOSCRIPT_RELOADS => {
                reloads += 1;
                let load = || async {
                    // Refused while this call waited for another's load:
                    // nothing to load, it falls back below.
                    if caller.mode.is_refused(op.index()) {
                        return Ok(());
                    }
                    loaded.load_function(client).await
                };
                match reload.reload(seen, load).await {
                    Ok(()) if caller.mode.is_refused(op.index()) => return fall_back().await,
                    Ok(()) => {}
                    Err(err) if caller.mode.falls_back && refused_by_server(&err) => {
                        tracing::debug!(script = loaded.name, error = %err.details(),
                            "the server refused the script's function library: calling it by EVALSHA");
                        return fall_back().await;
                    }
                    Err(err) => return Err(err),
                }
            }
            Err(err) if function_missing(&err) => {
                return call(caller, op, loaded, keys, args, By::Body).await;
            }
            Err(err) if caller.mode.falls_back && fcall_refused(&err) => {
                return fall_back().await;
            }
            result => return result,
        }
    }
}

/// Whether `err` refuses this user the `FCALL` command itself (not a
/// command the function ran: that is refused alike by `EVALSHA`).
fn fcall_refused(err: &fred::error::Error) -> bool {
    let details = err.details();
    details.starts_with("NOPERM") && details.to_ascii_lowercase().contains("'fcall'")
}

/// Whether `err` is the server's reply to an `FCALL` of a function it
/// does not have.
fn function_missing(err: &fred::error::Error) -> bool {
    err.details().contains("Function not found")
}

/// How a call names its script: by SHA1 (EVALSHA, the usual way), by
/// sending its body (EVAL), or as its library's function (FCALL).
#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    Sha,
    Body,
    Function,
}

/// Whether fred may resend `op` by itself after a dropped connection.
///
/// Every script is idempotent while its job exists, but an enqueue resent
/// after its jobs were already claimed and completed would create them
/// again (the reliability checker caught exactly that after a redis-server
/// kill -9). So an enqueue in flight when the connection drops fails back to
/// the caller as "may or may not have been applied" instead; the caller
/// decides, and a dedup key makes retrying it safe. A claim resent after
/// its first run leased jobs would lease others, and the first run's would
/// wait out their leases with nothing to say so: it fails back too, and a
/// worker gives the first run's jobs back (`crate::lost_claim`). Their
/// variants likewise. A caller may refuse fred's resend of the others too
/// ([`Caller::resent_by_caller`]).
fn resend_safe(op: Op) -> bool {
    !matches!(op.script(), "enqueue" | "claim")
}

async fn call<A: Args + ?Sized>(
    caller: Caller<'_>,
    op: Op,
    loaded: &Loaded,
    keys: &QueueKeys,
    args: &A,
    by: By,
) -> Result<Value, fred::error::Error> {
    let script = &loaded.built().script;
    let keys = loaded.sent_keys(keys);
    let body = match (by, script.lua()) {
        (By::Body, Some(body)) => Some(body),
        _ => None,
    };
    let client = caller.client;
    if caller.client_resends && resend_safe(op) {
        let mut argv = Vec::with_capacity(args.count());
        args.write(&mut argv);
        let keys: Vec<fred::types::Key> = keys.cloned().collect();
        return match (by, body) {
            (By::Function, _) => {
                client
                    .fcall(loaded.built().function_name.as_str(), keys, argv)
                    .await
            }
            (_, Some(body)) => client.eval(body.clone(), keys, argv).await,
            (_, None) => client.evalsha(script.sha1().clone(), keys, argv).await,
        };
    }
    use fred::interfaces::ClientLike;
    let once = fred::types::config::Options {
        max_attempts: Some(1),
        ..Default::default()
    };
    // Converted to `Value`s by the client as it takes the command.
    let key_count = keys.clone().count();
    let mut command = Vec::with_capacity(2 + key_count + args.count());
    let function_name;
    command.push(Arg::Bytes(match (by, body) {
        (By::Function, _) => {
            function_name = Bytes::from(loaded.built().function_name.clone());
            &function_name
        }
        (_, Some(body)) => body.inner(),
        (_, None) => script.sha1().inner(),
    }));
    command.push(Arg::Uint(key_count as u64));
    command.extend(keys.clone().map(|k| Arg::Bytes(k.inner())));
    args.write(&mut command);
    // Routed to the slot of the first key, like EVALSHA itself (every key
    // of a namespace shares that slot).
    let slot = keys
        .clone()
        .next()
        .map(|key| fred::util::redis_keyslot(key.as_bytes()))
        .unwrap_or(0);
    let name = match (by, body) {
        (By::Function, _) => "FCALL",
        (_, Some(_)) => "EVAL",
        (_, None) => "EVALSHA",
    };
    let command_name =
        fred::types::CustomCommand::new_static(name, fred::types::ClusterHash::Custom(slot), false);
    client
        .with_options(&once)
        .custom(command_name, command)
        .await
}

/// Decoding of script replies.
pub mod reply {
    use fred::types::Value;

    use crate::QueueError;

    fn unexpected(what: &str, value: &Value) -> QueueError {
        QueueError::Protocol(format!("expected {what}, got {value:?}"))
    }

    /// An array reply.
    pub fn array(value: Value) -> Result<Vec<Value>, QueueError> {
        match value {
            Value::Array(items) => Ok(items),
            Value::Null => Ok(Vec::new()),
            other => Err(unexpected("an array", &other)),
        }
    }

    /// An integer reply (Lua numbers arrive as integers).
    pub fn int(value: &Value) -> Result<i64, QueueError> {
        match value {
            Value::Integer(n) => Ok(*n),
            Value::String(s) => s.parse().map_err(|_| unexpected("an integer", value)),
            Value::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| unexpected("an integer", value)),
            other => Err(unexpected("an integer", other)),
        }
    }

    /// Entry `index` of an array reply as a count (0 when absent or
    /// negative): how the scripts report their small integer results.
    pub fn count_at(items: &[Value], index: usize) -> Result<u64, QueueError> {
        Ok(items.get(index).map(int).transpose()?.unwrap_or(0).max(0) as u64)
    }

    /// A score reply (a string holding a float).
    pub fn score(value: &Value) -> Result<f64, QueueError> {
        match value {
            Value::Double(f) => Ok(*f),
            Value::Integer(n) => Ok(*n as f64),
            Value::String(s) => s.parse().map_err(|_| unexpected("a score", value)),
            Value::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| unexpected("a score", value)),
            other => Err(unexpected("a score", other)),
        }
    }

    /// A bulk string reply as raw bytes.
    pub fn bytes(value: Value) -> Result<Vec<u8>, QueueError> {
        match value {
            Value::Bytes(b) => Ok(b.to_vec()),
            Value::String(s) => Ok(s.to_string().into_bytes()),
            Value::Null => Ok(Vec::new()),
            other => Err(unexpected("a string", &other)),
        }
    }

    /// A bulk string reply as text.
    pub fn text(value: Value) -> Result<String, QueueError> {
        let raw = bytes(value)?;
        String::from_utf8(raw).map_err(|e| QueueError::Protocol(format!("reply is not UTF-8: {e}")))
    }
}

/// How [`map_error`] begins a script's refusal of its input.
const REFUSED_INPUT: &str = "script refused input: ";

/// Script error replies that carry a validation message ("ERR redq: …") are
/// bugs in the driver's own checks; surface them as protocol errors. Either
/// way a Lua line (`user_script:N`) is rewritten to the file and line it
/// came from.
pub fn map_error(err: fred::error::Error, timeout: std::time::Duration) -> QueueError {
    let err = match explain(err.details()) {
        Some(details) => fred::error::Error::new(err.kind().clone(), details),
        None => err,
    };
    if let Some(pos) = err.details().find("redq: ") {
        return QueueError::Protocol(format!("{REFUSED_INPUT}{}", &err.details()[pos + 6..]));
    }
    QueueError::from_redis(err, timeout)
}

/// `details` with its Lua lines traced to their files, when it is an error
/// of one of the scripts (Redis names a script by SHA-1, `script: <sha>`,
/// and a function by its name, `script: redq_claim_<hash>`).
fn explain(details: &str) -> Option<String> {
    let at = details.find("script: ")? + "script: ".len();
    let named = details[at..]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()?;
    // Only the scripts this process composed can have run here.
    let built = || SCRIPTS.iter().filter_map(|l| Some((l, l.built.get()?)));
    if let Some((loaded, _)) = built().find(|(_, b)| b.function_name == named) {
        return Some(loaded.library().explain(details));
    }
    let sha = details.get(at..at + 40)?;
    let (_, b) = built().find(|(_, b)| b.script.sha1().eq_ignore_ascii_case(sha))?;
    Some(b.composed.explain(details))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_become_integers_and_only_huge_ones_text() {
        assert!(matches!(Value::from(Arg::Uint(0)), Value::Integer(0)));
        let max = i64::MAX as u64;
        assert!(matches!(Value::from(Arg::Uint(max)), Value::Integer(n) if n == i64::MAX));
        match Value::from(Arg::Uint(u64::MAX)) {
            Value::String(s) => assert_eq!(&*s, "18446744073709551615"),
            other => panic!("{other:?}"),
        }
        let buf = Bytes::from_static(b"abcdef");
        match Value::from(Arg::Slice(&buf, 2..4)) {
            Value::Bytes(b) => assert_eq!(&b[..], b"cd"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lua_error_line_names_the_file_and_line_it_came_from() {
        let op = Op::Claim;
        let loaded = &SCRIPTS[op.index()];
        let composed = &loaded.built().composed;
        let text = &composed.text;
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let check_file = include_str!("../lua/lib/check.lua");
        let fail_line = check_file
            .lines()
            .position(|l| l.contains("error({err = 'ERR redq: ' .. msg})"))
            .unwrap()
            + 1;
        let composed_line = line_of("error({err = 'ERR redq: ' .. msg})");
        let claim_file = include_str!("../lua/claim.lua");
        let body_line = claim_file
            .lines()
            .position(|l| l.contains("reclaim_lapsed(now, RECLAIM"))
            .unwrap()
            + 1;
        let details = format!(
            "ERR redq: claim limit must be a whole number script: {}, on @user_script:{composed_line}.",
            loaded.built().script.sha1()
        );
        match map_error(
            fred::error::Error::new(fred::error::ErrorKind::Unknown, details),
            std::time::Duration::from_secs(1),
        ) {
            QueueError::Protocol(text) => assert!(
                text.ends_with(&format!("on @lua/lib/check.lua:{fail_line}.")),
                "{text}"
            ),
            other => panic!("{other:?}"),
        }
        let runtime = format!(
            "ERR user_script:{}: attempt to index a nil value script: {}, on @user_script:1.",
            line_of("reclaim_lapsed(now, RECLAIM"),
            loaded.built().script.sha1()
        );
        assert_eq!(
            explain(&runtime).unwrap(),
            format!(
                "ERR lua/claim.lua:{body_line}: attempt to index a nil value script: {}, on @lua/claim.lua:1.",
                loaded.built().script.sha1()
            )
        );
        // Another script's error is left as Redis wrote it.
        assert_eq!(
            explain("ERR user_script:3: boom script: 0000, on @user_script:3."),
            None
        );
    }

    #[test]
    fn every_line_of_a_composed_script_traces_back_to_its_file() {
        let read = |file: &str| -> &str {
            if let Some(name) = file
                .strip_prefix("lua/lib/")
                .and_then(|f| f.strip_suffix(".lua"))
            {
                return catalogue::MODULES
                    .iter()
                    .find(|(n, _)| *n == name)
                    .unwrap()
                    .1;
            }
            let name = file
                .strip_prefix("lua/")
                .and_then(|f| f.strip_suffix(".lua"))
                .unwrap();
            catalogue::SCRIPTS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap()
                .1
        };
        for (name, source) in catalogue::SCRIPTS {
            let composed = compose::compose(name, source);
            assert!(composed.text.starts_with("#!lua"), "{name}");
            for (i, line) in composed.text.lines().enumerate() {
                // None: a line the composer wrote (a module's opening or closing).
                let Some((file, at)) = composed.locate(i + 1) else {
                    continue;
                };
                assert_eq!(
                    read(file).lines().nth(at - 1),
                    Some(composed.as_written(line).as_str()),
                    "{name} line {}",
                    i + 1
                );
            }
        }
    }

    #[test]
    fn the_op_list_and_the_script_list_agree() {
        assert_eq!(catalogue::SCRIPTS[Op::Enqueue.index()].0, "enqueue");
        assert_eq!(catalogue::SCRIPTS[Op::Pause.index()].0, "pause");
        assert_eq!(catalogue::SCRIPTS[Op::Cancel.index()].0, "cancel");
        assert_eq!(Op::Cancel.script(), "cancel");
        assert_eq!(Op::AckDetached.script(), "ack");
    }

    /// An enqueue or a claim, whichever variant runs it, is never resent
    /// by fred after a dropped connection; the other scripts are.
    #[test]
    fn no_enqueue_or_claim_variant_is_resent_by_the_client() {
        for op in [
            Op::Enqueue,
            Op::EnqueuePlain,
            Op::EnqueueDetached,
            Op::Claim,
            Op::ClaimPlain,
        ] {
            assert!(!resend_safe(op), "{}", op.script());
        }
        for op in [Op::Ack, Op::AckPlain, Op::AckDetached, Op::Release] {
            assert!(resend_safe(op), "{}", op.script());
        }
    }
}
