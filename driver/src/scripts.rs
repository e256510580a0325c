//! The Lua scripts: composed once, loaded at connect, called by SHA, reloaded
//! on `NOSCRIPT`; and the only place raw script replies are decoded.
//!
//! Each transition lives in its own file in `lua/`. The shared helpers of
//! `lua/lib.lua` are inserted after each script's first line (its `#!lua`
//! shebang with the script's flags). Bodies are compile-time constants: no
//! script text is ever built from user input.

use std::ops::Range;
use std::sync::LazyLock;

use fred::bytes::Bytes;
use fred::clients::Client;
use fred::interfaces::LuaInterface;
use fred::types::scripts::Script;
use fred::types::Value;

use crate::keys::QueueKeys;
use crate::QueueError;

const LIB: &str = include_str!("../lua/lib.lua");

/// One transition script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Enqueue,
    Claim,
    Ack,
    Nack,
    Extend,
    Release,
    Reclaim,
    RequeueDead,
    DeleteDead,
    NextDue,
    Counts,
    Inspect,
    ListJobs,
    WorkerBeat,
    WorkersList,
    ScheduleUpsert,
    ScheduleFire,
    ScheduleTrigger,
    SchedulePause,
    ScheduleDelete,
    ScheduleDue,
    ScheduleList,
    ScheduleGet,
    Park,
    Unpark,
    Pause,
}

const ALL: [Op; 26] = [
    Op::Enqueue,
    Op::Claim,
    Op::Ack,
    Op::Nack,
    Op::Extend,
    Op::Release,
    Op::Reclaim,
    Op::RequeueDead,
    Op::DeleteDead,
    Op::NextDue,
    Op::Counts,
    Op::Inspect,
    Op::ListJobs,
    Op::WorkerBeat,
    Op::WorkersList,
    Op::ScheduleUpsert,
    Op::ScheduleFire,
    Op::ScheduleTrigger,
    Op::SchedulePause,
    Op::ScheduleDelete,
    Op::ScheduleDue,
    Op::ScheduleList,
    Op::ScheduleGet,
    Op::Park,
    Op::Unpark,
    Op::Pause,
];

impl Op {
    fn source(self) -> &'static str {
        match self {
            Op::Enqueue => include_str!("../lua/enqueue.lua"),
            Op::Claim => include_str!("../lua/claim.lua"),
            Op::Ack => include_str!("../lua/ack.lua"),
            Op::Nack => include_str!("../lua/nack.lua"),
            Op::Extend => include_str!("../lua/extend.lua"),
            Op::Release => include_str!("../lua/release.lua"),
            Op::Reclaim => include_str!("../lua/reclaim.lua"),
            Op::RequeueDead => include_str!("../lua/requeue_dead.lua"),
            Op::DeleteDead => include_str!("../lua/delete_dead.lua"),
            Op::NextDue => include_str!("../lua/next_due.lua"),
            Op::Counts => include_str!("../lua/counts.lua"),
            Op::Inspect => include_str!("../lua/inspect.lua"),
            Op::ListJobs => include_str!("../lua/list_jobs.lua"),
            Op::WorkerBeat => include_str!("../lua/worker_beat.lua"),
            Op::WorkersList => include_str!("../lua/workers_list.lua"),
            Op::ScheduleUpsert => include_str!("../lua/schedule_upsert.lua"),
            Op::ScheduleFire => include_str!("../lua/schedule_fire.lua"),
            Op::ScheduleTrigger => include_str!("../lua/schedule_trigger.lua"),
            Op::SchedulePause => include_str!("../lua/schedule_pause.lua"),
            Op::ScheduleDelete => include_str!("../lua/schedule_delete.lua"),
            Op::ScheduleDue => include_str!("../lua/schedule_due.lua"),
            Op::ScheduleList => include_str!("../lua/schedule_list.lua"),
            Op::ScheduleGet => include_str!("../lua/schedule_get.lua"),
            Op::Park => include_str!("../lua/park.lua"),
            Op::Unpark => include_str!("../lua/unpark.lua"),
            Op::Pause => include_str!("../lua/pause.lua"),
        }
    }

    fn index(self) -> usize {
        ALL.iter()
            .position(|op| *op == self)
            .expect("every op is listed in ALL")
    }
}

/// Shebang line, then the shared helpers, then the rest of the script.
fn compose(source: &str) -> String {
    let (shebang, body) = source
        .split_once('\n')
        .expect("every script starts with a shebang line");
    format!("{shebang}\n{LIB}\n{body}")
}

static SCRIPTS: LazyLock<Vec<Script>> = LazyLock::new(|| {
    ALL.iter()
        .map(|op| Script::from_lua(compose(op.source())))
        .collect()
});

/// `SCRIPT LOAD` every script (done at connect; `NOSCRIPT` reloads later).
pub async fn load_all(client: &Client) -> Result<(), fred::error::Error> {
    for script in SCRIPTS.iter() {
        script.load(client).await?;
    }
    Ok(())
}

/// Run `op` with the queue's keys, reloading it once on `NOSCRIPT`.
pub async fn run(
    client: &Client,
    op: Op,
    keys: &QueueKeys,
    args: Vec<Value>,
) -> Result<Value, fred::error::Error> {
    run_with(client, op, keys, &args[..]).await
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
        }
    }
}

/// [`run`] with arguments that write themselves into the command.
pub async fn run_with<A: Args + ?Sized>(
    client: &Client,
    op: Op,
    keys: &QueueKeys,
    args: &A,
) -> Result<Value, fred::error::Error> {
    let script = &SCRIPTS[op.index()];
    match call(client, op, script, keys, args).await {
        Err(err) if err.details().starts_with("NOSCRIPT") => {
            script.load(client).await?;
            call(client, op, script, keys, args).await
        }
        result => result,
    }
}

/// Whether fred may resend `op` by itself after a dropped connection.
///
/// Every script is idempotent while its job exists, but an enqueue resent
/// after its jobs were already claimed and completed would create them
/// again (the reliability checker caught exactly that after a redis-server
/// kill -9). So an enqueue in flight when the connection drops fails back to
/// the caller as "may or may not have been applied" instead; the caller
/// decides, and a dedup key makes retrying it safe.
fn resend_safe(op: Op) -> bool {
    op != Op::Enqueue
}

async fn call<A: Args + ?Sized>(
    client: &Client,
    op: Op,
    script: &Script,
    keys: &QueueKeys,
    args: &A,
) -> Result<Value, fred::error::Error> {
    if resend_safe(op) {
        let mut argv = Vec::with_capacity(args.count());
        args.write(&mut argv);
        return client
            .evalsha(script.sha1().clone(), keys.0.clone(), argv)
            .await;
    }
    use fred::interfaces::ClientLike;
    let once = fred::types::config::Options {
        max_attempts: Some(1),
        ..Default::default()
    };
    // Converted to `Value`s by the client as it takes the command.
    let mut command = Vec::with_capacity(2 + keys.0.len() + args.count());
    command.push(Arg::Bytes(script.sha1().inner()));
    command.push(Arg::Uint(keys.0.len() as u64));
    command.extend(keys.0.iter().map(|k| Arg::Bytes(k.inner())));
    args.write(&mut command);
    // Routed to the slot of the first key, like EVALSHA itself (every key
    // of a namespace shares that slot).
    let slot = keys
        .0
        .first()
        .map(|key| fred::util::redis_keyslot(key.as_bytes()))
        .unwrap_or(0);
    let evalsha = fred::types::CustomCommand::new_static(
        "EVALSHA",
        fred::types::ClusterHash::Custom(slot),
        false,
    );
    client.with_options(&once).custom(evalsha, command).await
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

/// Script error replies that carry a validation message ("ERR redq: …") are
/// bugs in the driver's own checks; surface them as protocol errors.
pub fn map_error(err: fred::error::Error, timeout: std::time::Duration) -> QueueError {
    if let Some(pos) = err.details().find("redq: ") {
        return QueueError::Protocol(format!(
            "script refused input: {}",
            &err.details()[pos + 6..]
        ));
    }
    QueueError::from_redis(err, timeout)
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
    fn every_script_opens_with_a_shebang_and_gets_the_helpers() {
        for op in ALL {
            let composed = compose(op.source());
            assert!(composed.starts_with("#!lua"), "{op:?}");
            assert!(composed.contains("local function uint("), "{op:?}");
            assert_eq!(op.index(), ALL.iter().position(|o| *o == op).unwrap());
        }
    }
}
