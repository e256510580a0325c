//! Broken variants that are hand-made corruptions of a sound namespace's
//! keys, for the structural check.

use fred::interfaces::LuaInterface;
use fred::types::Value;
use redq_tests::history::{Dump, Report};
use redq_tests::lua;
use redq_tests::{unique_namespace, RedisServer};

use super::bench::*;

/// The jobs of the sound namespace by role, in the order a corruption
/// receives their ids (ARGV[2..]): `urgent` leased (priority 5), `doomed`
/// dead, `plain` and `deduped` (dedup key "d") in the fifo, `first` and
/// `second` of ordering key "k" (first waiting in the zset, second blocked
/// behind it), `later` scheduled, `high` waiting (priority 3).
pub const ROLES: [&str; 8] = [
    "urgent", "doomed", "plain", "deduped", "first", "second", "later", "high",
];

/// Gives a corruption the job ids by role, `k(name)` (the key `name` of
/// the namespace; ARGV[1] is its prefix) and `Q`, the prefix of queue
/// [`QUEUE`]'s keys. Writing undeclared keys is fine on a standalone
/// server, and this script never ships.
pub const CORRUPTION_PRELUDE: &str = "\
local P, urgent, doomed, plain, deduped, first, second, later, high = unpack(ARGV)
local function k(name) return P .. name end
local Q = 'q:q:'
";

/// The payload every job of the sound namespace carries: its role.
pub fn payload(role: &str) -> String {
    serde_json::json!({ "tag": role }).to_string()
}

/// Builds the sound namespace with the shipped scripts, then (broken)
/// runs `corruption` on its keys; reports what the structural check finds.
pub async fn corrupted(broken: bool, corruption: &str) -> Report {
    let server = RedisServer::start();
    let client = server.client().await;
    let ns = unique_namespace("structure");
    let mut shas = Vec::new();
    for name in ["enqueue", "claim", "nack"] {
        shas.push(lua::load(&client, &lua::compose(lua::source(name))).await);
    }
    let [enqueue, claim, nack] = <[String; 3]>::try_from(shas).unwrap();
    let run = |sha: &String, args: Vec<Value>| {
        let (client, ns, sha) = (client.clone(), ns.clone(), sha.clone());
        async move {
            lua::evalsha(&client, &sha, &ns, QUEUE, &args)
                .await
                .unwrap_or_else(|e| panic!("building the sound namespace: {e}"))
        }
    };
    // (role, priority, delay_ms, dedup key, ordering key)
    let add = |jobs: &[(&str, u8, u64, &str, &str)]| {
        let mut args = vec![s(1 << 20), s(jobs.len()), s(""), s(""), s("")];
        for (role, priority, delay, dedup, key) in jobs {
            let payload = payload(role);
            args.extend(
                lua::EnqueueJob {
                    id: role,
                    payload: &payload,
                    priority: *priority,
                    delay_ms: *delay,
                    dedup_key: dedup,
                    ordering_key: key,
                    max_attempts: 0,
                    backoff_base_ms: 0,
                    backoff_cap_ms: 0,
                    limit_key: "",
                }
                .argv(),
            );
        }
        run(&enqueue, args)
    };
    add(&[("urgent", 5, 0, "", ""), ("doomed", 0, 0, "", "")]).await;
    let lease = [s(1), s(60_000), s(1), s(1)];
    run(&claim, lease.to_vec()).await;
    run(&claim, lease.to_vec()).await;
    // Lease 0: whatever lease is current.
    run(&nack, vec![s("doomed"), s(0), s(0), s("doomed"), s(1)]).await;
    add(&[
        ("plain", 0, 0, "", ""),
        ("deduped", 0, 0, "d", ""),
        ("first", 0, 0, "", "k"),
        ("second", 0, 0, "", "k"),
        ("later", 0, 60_000, "", ""),
        ("high", 3, 0, "", ""),
    ])
    .await;
    if broken {
        let mut args = vec![format!("{{{ns}}}:")];
        args.extend(ROLES.iter().map(|r| (*r).to_owned()));
        let script = format!("{CORRUPTION_PRELUDE}{corruption}");
        let _: Value = client
            .eval(script, Vec::<String>::new(), args)
            .await
            .unwrap_or_else(|e| panic!("corrupting the namespace: {e}"));
    }
    let dump = Dump::take(&client, &ns).await.expect("snapshot");
    let report = Report {
        violations: dump.findings(),
        ..Report::default()
    };
    println!("{report}");
    report
}
