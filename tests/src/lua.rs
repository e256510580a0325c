//! The driver's Lua scripts, as the driver lists and composes them
//! (`redq::lua`), for tests that talk to them directly: raw `EVALSHA` with
//! hostile ARGV (the property tests), naming the scripts seen by `MONITOR`
//! (the history checker), and deliberately broken variants that prove the
//! checker is not vacuous (always built here, in test code, never shipped).

use std::collections::HashMap;
use std::sync::LazyLock;

use fred::clients::Client;
use fred::interfaces::LuaInterface;
use fred::types::Value;

/// Every script that takes exactly the queue key list of
/// `lua/lib/keys.lua` (and ARGV = queue, wake channel, ...), by the name of
/// its file in `lua/`: those that include `keys` and name no key of their own.
pub static QUEUE_SCRIPTS: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
    redq::lua::SCRIPTS
        .iter()
        .filter(|(_, source)| {
            redq::lua::includes(source).contains(&"keys") && !source.contains("KEYS[")
        })
        .copied()
        .collect()
});

/// Variant `name`'s text (`redq::lua::VARIANTS`, as the driver composes
/// it), checked to declare `keys` queue keys.
pub fn variant(name: &str, keys: usize) -> String {
    let variant = redq::lua::VARIANTS
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variant {name}"));
    let body = redq::lua::compose_variant(variant.script, variant.variant, variant.source).text;
    assert_eq!(
        redq::lua::declared_queue_keys(&body).unwrap().len(),
        keys,
        "{}",
        body.lines().nth(1).unwrap()
    );
    body
}

/// The function libraries of every script that writes (what a connect
/// with the driver's default script calls loads in a namespace that does
/// not detach payloads: the variants only a detaching one calls are left
/// to it), sorted.
pub fn writing_libraries() -> Vec<String> {
    // A variant writes as its script does (one shebang).
    let variants = redq::lua::VARIANTS
        .iter()
        .filter(|v| !v.only_when_detaching())
        .map(|v| (v.name, v.source));
    let mut names: Vec<String> = redq::lua::SCRIPTS
        .iter()
        .copied()
        .chain(variants)
        .filter(|(name, source)| redq::lua::compose(name, source).writes())
        .map(|(name, _)| redq::lua::function_name(name).unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// The text of `lua/<name>.lua` (panics for an unknown name).
pub fn source(name: &str) -> &'static str {
    redq::lua::SCRIPTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no script lua/{name}.lua"))
}

/// The driver's composition of a script's `source` (one of the shipped
/// scripts, or a test's own text): what the driver loads.
pub fn compose(source: &str) -> String {
    composed(source).text
}

/// [`compose`] with the map from its lines back to the files they came
/// from (`Composed::explain` rewrites Redis's `user_script:N`).
pub fn composed(source: &str) -> redq::lua::Composed {
    let name = redq::lua::SCRIPTS
        .iter()
        .find(|(_, s)| *s == source)
        .map_or("test_script", |(n, _)| *n);
    redq::lua::compose(name, source)
}

/// The composed script `name` with `patches` applied (each `(from, to)`
/// must match exactly once, so a patch cannot silently stop applying when
/// the script changes). They apply to the files as written (the script and
/// its modules), before the composer rewrites the names of lazy modules.
pub fn patched(name: &str, patches: &[(&str, &str)]) -> String {
    let mut hits = vec![0; patches.len()];
    let mut apply = |text: &str| {
        let mut text = text.to_owned();
        for (i, (from, to)) in patches.iter().enumerate() {
            hits[i] += text.matches(from).count();
            text = text.replacen(from, to, 1);
        }
        text
    };
    let script = apply(source(name));
    let text = redq::lua::compose_with(name, &script, &mut apply).text;
    for ((from, _), hits) in patches.iter().zip(hits) {
        assert_eq!(hits, 1, "patch {from:?} matches {hits} times in {name}");
    }
    text
}

/// `SCRIPT LOAD` a script body; returns its SHA-1. The queue keys the body
/// takes (the composer names them on a line of their own) are remembered
/// by its SHA-1, for [`evalsha`].
pub async fn load(client: &Client, body: &str) -> String {
    let sha = client
        .script_load::<String, _>(body.to_owned())
        .await
        .expect("SCRIPT LOAD");
    if let Some(names) = redq::lua::declared_queue_keys(body) {
        KEY_LISTS
            .lock()
            .unwrap()
            .insert(sha.clone(), names.into_iter().map(str::to_owned).collect());
    }
    sha
}

/// SHA-1 -> the queue key names of a body loaded with [`load`].
static KEY_LISTS: LazyLock<std::sync::Mutex<HashMap<String, Vec<String>>>> =
    LazyLock::new(Default::default);

/// The KEYS a composed queue script `body` takes for `queue` in namespace
/// `ns`: the keys it names, in its order (as the driver sends them).
pub fn queue_keys_of(body: &str, ns: &str, queue: &str) -> Vec<fred::types::Key> {
    let names = redq::lua::declared_queue_keys(body).expect("a composed queue script");
    named_keys(&names, ns, queue)
}

fn named_keys<S: AsRef<str>>(names: &[S], ns: &str, queue: &str) -> Vec<fred::types::Key> {
    let all = redq::keys::Keys::new(ns).queue(queue).0;
    names
        .iter()
        .map(|name| {
            let at = redq::keys::queue_key_position(name.as_ref())
                .unwrap_or_else(|| panic!("no queue key {}", name.as_ref()));
            all[at].clone()
        })
        .collect()
}

/// Variants loaded with [`load_named`]: SHA-1 -> the script they replace.
static VARIANTS: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// `SCRIPT LOAD` a variant of script `name`, remembered so that the server
/// record names its runs `name` like the script it stands in for.
pub async fn load_named(client: &Client, name: &str, body: &str) -> String {
    let sha = load(client, body).await;
    VARIANTS
        .lock()
        .unwrap()
        .push((sha.clone(), name.to_owned()));
    sha
}

/// Loads every shipped queue script; returns SHA-1 -> script name (with
/// the variants loaded so far), which is how `MONITOR` lines (that show
/// only the SHA) are named.
pub async fn load_all(client: &Client) -> HashMap<String, String> {
    let mut names: HashMap<String, String> = VARIANTS.lock().unwrap().iter().cloned().collect();
    for (name, source) in QUEUE_SCRIPTS.iter() {
        names.insert(load(client, &compose(source)).await, (*name).to_owned());
    }
    // The driver's own variants (lua/README.md, "Variants") are runs of the
    // script they are composed from.
    for variant in redq::lua::VARIANTS {
        let body = redq::lua::compose_variant(variant.script, variant.variant, variant.source).text;
        names.insert(load(client, &body).await, variant.script.to_owned());
    }
    names
}

/// The script a driver's script or variant named `name` runs (a variant's
/// runs are its file's: `enqueue_plain` is `enqueue`).
pub fn transition_of(name: &str) -> &str {
    redq::lua::VARIANTS
        .iter()
        .find(|v| v.name == name)
        .map_or(name, |v| v.script)
}

/// Runs a script loaded with [`load`] with its queue keys (those of
/// `lua/lib/keys.lua` its composition names) for `queue` in namespace `ns`,
/// and ARGV = queue, wake channel, then `args`.
pub async fn evalsha(
    client: &Client,
    sha: &str,
    ns: &str,
    queue: &str,
    args: &[Value],
) -> Result<Value, fred::error::Error> {
    let keys = redq::keys::Keys::new(ns);
    let mut argv: Vec<Value> = vec![
        Value::from(queue.to_owned()),
        Value::from(keys.wake_channel()),
    ];
    argv.extend(args.iter().cloned());
    let names = KEY_LISTS
        .lock()
        .unwrap()
        .get(sha)
        .cloned()
        .unwrap_or_else(|| panic!("script {sha} was not loaded with lua::load as a queue script"));
    client
        .evalsha(sha.to_owned(), named_keys(&names, ns, queue), argv)
        .await
}

/// One job's entries for enqueue.lua, as its header lays them out: the id,
/// the payload, how many options follow, then a (code, value) pair for each
/// of `options` (the values of option codes 1 to 14, in the header's order)
/// that is not its default ("0" or ""). The one place the test side lays a
/// job out.
pub fn enqueue_entries(id: &str, payload: &str, options: [String; 14]) -> Vec<Value> {
    let sent: Vec<(usize, String)> = (1..)
        .zip(options)
        .filter(|(_, value)| value != "0" && !value.is_empty())
        .collect();
    let mut entries = vec![
        Value::from(id.to_owned()),
        Value::from(payload.to_owned()),
        Value::from(sent.len().to_string()),
    ];
    for (code, value) in sent {
        entries.push(Value::from(code.to_string()));
        entries.push(Value::from(value));
    }
    entries
}

/// One job for enqueue.lua, for tests that call the script straight
/// ([`enqueue_entries`]).
pub struct EnqueueJob<'a> {
    pub id: &'a str,
    pub payload: &'a str,
    pub priority: u8,
    pub delay_ms: u64,
    pub dedup_key: &'a str,
    pub ordering_key: &'a str,
    pub max_attempts: u32,
    /// The reclaim backoff (lib/retry.lua): first delay and ceiling, ms.
    pub backoff_base_ms: u64,
    pub backoff_cap_ms: u64,
    /// The limit key within the queue (lib/flow.lua), "" = none.
    pub limit_key: &'a str,
}

impl EnqueueJob<'_> {
    /// The entries, every option not named here at its default (a trace
    /// context too: the checker's decoder test covers that field).
    pub fn argv(&self) -> Vec<Value> {
        let s = |v: &dyn ToString| v.to_string();
        enqueue_entries(
            self.id,
            self.payload,
            [
                s(&self.priority),
                s(&self.delay_ms),
                s(&0), // not_before_ms
                s(&self.dedup_key),
                s(&0), // dedup_ttl_ms
                s(&self.ordering_key),
                s(&self.max_attempts),
                s(&0),  // retry_window_ms
                s(&""), // name
                s(&0),  // attempts
                s(&self.backoff_base_ms),
                s(&self.backoff_cap_ms),
                s(&self.limit_key),
                s(&""), // trace
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::RedisServer;

    /// The line (from 1) of `lua/<file>` holding `needle`, which must occur once.
    fn line_of(file_text: &str, needle: &str) -> usize {
        let lines: Vec<usize> = file_text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(needle))
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(lines.len(), 1, "{needle:?} occurs on lines {lines:?}");
        lines[0]
    }

    fn module_text(name: &str) -> &'static str {
        redq::lua::MODULES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .unwrap()
    }

    #[tokio::test]
    async fn a_refused_argument_names_the_module_line_that_refused_it() {
        let server = RedisServer::start();
        let client = server.client().await;
        let sha = load(&client, &compose(source("claim"))).await;
        let limit = Value::from("a lot");
        let args = [limit, "1000".into(), "1".into(), "1".into()];
        let err = evalsha(&client, &sha, "lines", "q", &args)
            .await
            .expect_err("a claim limit that is not a number is refused");
        let line = line_of(module_text("check"), "error({err = 'ERR redq: ' .. msg})");
        match redq::lua::map_error(err, Duration::from_secs(1)) {
            redq::QueueError::Protocol(text) => {
                assert!(
                    text.starts_with("script refused input: claim limit must be a whole number"),
                    "{text}"
                );
                assert!(
                    text.contains(&format!("lua/lib/check.lua:{line}")),
                    "{text}"
                );
                assert!(!text.contains("user_script"), "{text}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_runtime_error_in_a_module_names_that_module_and_line() {
        let server = RedisServer::start();
        let client = server.client().await;
        // A test-only script that calls a module helper wrongly: store_meta
        // of a record this script never read, without its payload.
        let script = "#!lua\n-- include: job_store\nstore_meta('job-1', {})\n";
        let composed = composed(script);
        let sha = load(&client, &composed.text).await;
        let err = client
            .evalsha::<Value, _, _, _>(sha, vec!["{t}:jobs"], Vec::<String>::new())
            .await
            .expect_err("store_meta refuses to write a record without its payload");
        let line = line_of(module_text("job_store"), "without its payload')");
        let explained = composed.explain(err.details());
        assert!(
            explained.contains(&format!(
                "lua/lib/job_store.lua:{line}: redq: store_meta of job job-1 without its payload"
            )),
            "{explained} (Redis said: {})",
            err.details()
        );
    }

    /// The test side's one enqueue layout ([`EnqueueJob`]) stores the same
    /// job record as the driver's own enqueue of the same options, so the two
    /// layouts of enqueue.lua's ARGV cannot drift apart unnoticed.
    #[tokio::test]
    async fn the_test_enqueue_layout_stores_what_the_drivers_enqueue_stores() {
        use crate::history::meta::Meta;
        let server = RedisServer::start();
        let client = server.client().await;
        let read = |ns: &'static str, id: String| {
            let client = client.clone();
            async move {
                let raw: Vec<u8> =
                    fred::interfaces::HashesInterface::hget(&client, format!("{{{ns}}}:jobs"), id)
                        .await
                        .expect("HGET the job record");
                Meta::split(&raw)
                    .map(|(meta, payload)| (meta, payload.to_vec()))
                    .expect("a job record")
            }
        };

        let queue = crate::fixtures::handle(&server, "by-driver").await;
        let job = redq::NewJob::new(serde_json::json!({"n": 1}))
            .priority(3)
            .dedup_key("d")
            .ordering_key("k")
            .limit_key("tenant")
            .max_attempts(4)
            .reclaim_backoff(redq::Backoff::exponential(
                std::time::Duration::from_millis(250),
                std::time::Duration::from_secs(5),
            ));
        let id = queue.add("q", job).await.expect("enqueue").id().to_owned();
        let (by_driver, driver_payload) = read("by-driver", id).await;

        let sha = load(&client, &compose(source("enqueue"))).await;
        let mut args = vec![
            Value::from(1 << 20),
            Value::from(1),
            Value::from(""),
            Value::from(""),
            Value::from(""), // standard records
        ];
        args.extend(
            EnqueueJob {
                id: "raw-1",
                payload: r#"{"n":1}"#,
                priority: 3,
                delay_ms: 0,
                dedup_key: "d",
                ordering_key: "k",
                max_attempts: 4,
                backoff_base_ms: 250,
                backoff_cap_ms: 5_000,
                limit_key: "tenant",
            }
            .argv(),
        );
        evalsha(&client, &sha, "by-test", "q", &args)
            .await
            .expect("the raw enqueue is accepted");
        let (by_test, test_payload) = read("by-test", "raw-1".to_owned()).await;

        // Everything but when each was enqueued is the same.
        let timeless = |m: Meta| Meta {
            enqueued_at: 0,
            not_before: 0,
            ..m
        };
        assert_eq!(timeless(by_test), timeless(by_driver));
        assert_eq!(test_payload, driver_payload);
    }
}
