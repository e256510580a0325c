//! Least-privilege Redis ACL users for a namespace: a worker (producers
//! and workers) and a viewer (reads only), as documented in
//! docs/reliability.md.

use std::collections::BTreeMap;

use crate::server::RedisServer;

/// What a worker (and a producer) needs: the scripts, the namespace's keys
/// and channels (plain and shard), and nothing else: no CONFIG, no KEYS, no FLUSH*,
/// no DEBUG, no other keys.
pub fn worker_acl(ns: &str, password: &str) -> Vec<String> {
    let mut rules = user("worker", password);
    rules.push(format!("~{{{ns}}}:*"));
    rules.push(format!("&{{{ns}}}:*"));
    for c in [
        "+evalsha",
        "+script|load",
        "+script|exists",
        "+ping",
        "+subscribe",
        "+unsubscribe",
        // Shard channels, where the scripts publish wake-ups and hand-offs
        // (lua/lib/notify.lua); without them both go plainly.
        "+ssubscribe",
        "+sunsubscribe",
        // The listener's check that its shard subscription still holds.
        "+pubsub|shardnumsub",
        "+client|setname",
        "+client|id",
        "+info",
        "+time",
        // Called from inside the scripts (ACLs apply there too).
        "+@read",
        "+@write",
        "+publish",
        "+spublish",
    ] {
        rules.push(c.into());
    }
    rules.extend(["-@dangerous".into(), "+info".into()]);
    rules
}

/// [`worker_acl`] for a handle that calls the scripts as Redis Functions
/// (`ScriptCalls::Functions`): `FCALL` and loading a library (and the
/// connect's `FUNCTION LIST` probe) instead of `EVALSHA` and `SCRIPT LOAD`.
pub fn functions_worker_acl(ns: &str, password: &str) -> Vec<String> {
    worker_acl(ns, password)
        .into_iter()
        .flat_map(|rule| match rule.as_str() {
            "+evalsha" => vec!["+fcall".to_owned()],
            "+script|load" => vec!["+function|load".to_owned(), "+function|list".to_owned()],
            "+script|exists" => vec![],
            _ => vec![rule],
        })
        .collect()
}

/// A viewer may run the scripts but no write command inside them, and
/// publish nothing: every mutation is refused at its first write.
pub fn viewer_acl(ns: &str, password: &str) -> Vec<String> {
    let mut rules = user("viewer", password);
    rules.push(format!("~{{{ns}}}:*"));
    for c in [
        "+evalsha",
        "+script|load",
        "+script|exists",
        "+ping",
        "+client|setname",
        "+client|id",
        "+@read",
        "+time",
        "-@write",
        "-@dangerous",
    ] {
        rules.push(c.into());
    }
    rules
}

/// `ACL SETUSER name reset on >password`, to extend with rules.
fn user(name: &str, password: &str) -> Vec<String> {
    let mut rules: Vec<String> = ["ACL", "SETUSER", name, "reset", "on"]
        .into_iter()
        .map(String::from)
        .collect();
    rules.push(format!(">{password}"));
    rules
}

/// Run an `ACL SETUSER` command made by [`worker_acl`] or [`viewer_acl`].
pub async fn set_user(server: &RedisServer, rules: &[String]) {
    let args: Vec<&str> = rules.iter().map(String::as_str).collect();
    server.cmd(&args).await;
}

/// The server's `ACL LOG` (the commands it refused), for messages.
pub async fn acl_log(server: &RedisServer) -> String {
    format!("{:?}", server.cmd(&["ACL", "LOG"]).await)
}

/// What `ACL LOG` says was refused: each refused command or key (its
/// `object`) and how many times.
pub async fn acl_refused(server: &RedisServer) -> BTreeMap<String, i64> {
    use fred::types::Value;
    let Value::Array(entries) = server.cmd(&["ACL", "LOG", "128"]).await else {
        panic!("ACL LOG did not answer an array");
    };
    let mut refused = BTreeMap::new();
    for entry in entries {
        let Value::Array(fields) = entry else {
            panic!("an ACL LOG entry is not an array: {entry:?}");
        };
        let field = |name: &str| {
            fields
                .chunks(2)
                .find(|kv| kv[0].as_str().as_deref() == Some(name))
                .map(|kv| kv[1].clone())
                .unwrap_or_else(|| panic!("an ACL LOG entry without {name}: {fields:?}"))
        };
        let object = field("object").as_string().unwrap();
        let count = field("count").as_i64().unwrap();
        *refused.entry(object).or_insert(0) += count;
    }
    refused
}

/// A URL logging in as `user` with `password` on `server`.
pub fn user_url(server: &RedisServer, user: &str, password: &str) -> String {
    format!("redis://{user}:{password}@127.0.0.1:{}", server.port())
}

/// A handle on namespace `ns` of `server`, logged in as the user `worker`
/// (set up by [`set_user`]) with `password`, calling the scripts as the
/// test run does.
pub async fn worker_handle(server: &RedisServer, ns: &str, password: &str) -> redq::RedisQueue {
    redq::RedisQueue::builder(&user_url(server, "worker", password))
        .namespace(ns)
        .script_calls(crate::fixtures::script_calls())
        .connect()
        .await
        .expect("connect as the worker user")
}
