//! Workflows at the script level (lua/lib/gate.lua, lua/lib/gate_decide.lua):
//! the gate scripts called raw, as the driver calls them, checking what the
//! gates promise: a waiter is released once, only after its last member
//! finished; a failed member decides it by its policy; an unknown dependency
//! refuses the seal with nothing written; a cancelled gate cancels its waiter;
//! a resent seal finds its waiters; and jobs without gates cost what they did.

use std::collections::HashMap;

use fred::clients::Client;
use fred::types::Value;
use redq_tests::fixtures::{digest, server};
use redq_tests::lua::{self, EnqueueJob};
use redq_tests::{unique_namespace, RedisServer};

/// A waiter of a gate_seal call: its queue, condition, on_failure and id.
struct Waiter<'a> {
    queue: &'a str,
    condition: &'a str,
    on_failure: &'a str,
    id: &'a str,
}

/// What gate_get.lua says of a gate, as texts.
struct Status {
    state: String,
    pending: String,
    succeeded: String,
    failed: String,
    first_failure: String,
    /// Each waiter's decision, in order.
    decisions: Vec<String>,
}

/// One namespace, its scripts loaded, called raw.
struct Raw {
    client: Client,
    ns: String,
    shas: HashMap<&'static str, String>,
}

fn items(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => panic!("expected an array, got {other:?}"),
    }
}

fn texts(v: Value) -> Vec<String> {
    items(v)
        .iter()
        .map(|v| match v {
            Value::Integer(n) => n.to_string(),
            other => other.as_string().unwrap_or_default(),
        })
        .collect()
}

fn job(id: &str, max_attempts: u32) -> Vec<Value> {
    EnqueueJob {
        id,
        payload: "{}",
        priority: 0,
        delay_ms: 0,
        dedup_key: "",
        ordering_key: "",
        max_attempts,
        backoff_base_ms: 0,
        backoff_cap_ms: 0,
        limit_key: "",
    }
    .argv()
}

impl Raw {
    async fn new(server: &RedisServer, test: &str) -> Raw {
        let client = server.client().await;
        let mut shas = HashMap::new();
        for name in [
            "enqueue",
            "claim",
            "ack",
            "nack",
            "inspect",
            "counts",
            "cancel",
            "gate_seal",
            "gate_get",
            "gate_members",
            "gate_cancel",
            "gate_decide",
        ] {
            shas.insert(
                name,
                lua::load(&client, &lua::compose(lua::source(name))).await,
            );
        }
        Raw {
            client,
            ns: unique_namespace(test),
            shas,
        }
    }

    async fn try_run(
        &self,
        name: &str,
        queue: &str,
        args: Vec<Value>,
    ) -> Result<Value, fred::error::Error> {
        lua::evalsha(&self.client, &self.shas[name], &self.ns, queue, &args).await
    }

    async fn run(&self, name: &str, queue: &str, args: Vec<Value>) -> Value {
        self.try_run(name, queue, args)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// Enqueues jobs (id, max_attempts) to `queue`, into `gate` (a batch) when given.
    async fn enqueue(&self, queue: &str, gate: &str, jobs: &[(&str, u32)]) -> Vec<String> {
        let kind = if gate.is_empty() { "" } else { "batch" };
        let mut args: Vec<Value> = vec![
            "1048576".into(),
            jobs.len().to_string().into(),
            gate.into(),
            kind.into(),
            "".into(), // standard records
        ];
        for (id, max_attempts) in jobs {
            args.extend(job(id, *max_attempts));
        }
        texts(self.run("enqueue", queue, args).await)
    }

    fn seal_args(&self, gate: &str, kind: &str, deps: &[&str], waiters: &[Waiter]) -> Vec<Value> {
        let mut args: Vec<Value> = vec![
            gate.into(),
            kind.into(),
            "1048576".into(),
            "".into(),
            deps.len().to_string().into(),
        ];
        args.extend(deps.iter().map(|d| Value::from(*d)));
        args.push(waiters.len().to_string().into());
        for w in waiters {
            args.extend([w.queue.into(), w.condition.into(), w.on_failure.into()]);
            args.extend(job(w.id, 0));
        }
        // No parent gate; the standard record format.
        args.extend(["".into(), "".into(), "".into()]);
        args
    }

    /// gate_seal's reply, as texts.
    async fn seal(
        &self,
        gate: &str,
        kind: &str,
        deps: &[&str],
        waiters: &[Waiter<'_>],
    ) -> Vec<String> {
        texts(
            self.run("gate_seal", "q", self.seal_args(gate, kind, deps, waiters))
                .await,
        )
    }

    /// The ids a claim of `queue` leased.
    async fn claim(&self, queue: &str) -> Vec<String> {
        let reply = texts(
            self.run(
                "claim",
                queue,
                vec!["100".into(), "600000".into(), "1".into(), "1".into()],
            )
            .await,
        );
        reply[1..].iter().step_by(2).cloned().collect()
    }

    async fn ack(&self, queue: &str, id: &str) -> String {
        texts(
            self.run("ack", queue, vec!["1".into(), id.into(), "0".into()])
                .await,
        )
        .remove(0)
    }

    async fn nack_dead(&self, queue: &str, id: &str, error: &str) {
        let args = vec![id.into(), "0".into(), "0".into(), error.into(), "1".into()];
        self.run("nack", queue, args).await;
    }

    async fn state(&self, queue: &str, id: &str) -> String {
        texts(self.run("inspect", queue, vec![id.into()]).await)
            .first()
            .cloned()
            .unwrap_or_default()
    }

    /// The dead letter's error text (its record, as inspect returns it).
    async fn error_of(&self, queue: &str, id: &str) -> String {
        let reply = items(self.run("inspect", queue, vec![id.into()]).await);
        let meta = redq::lua::JobMeta::decode(reply[1].as_bytes().expect("a record")).unwrap();
        meta.error
    }

    /// gate_get's status.
    async fn gate(&self, gate: &str) -> Status {
        let g = texts(self.run("gate_get", "q", vec![gate.into()]).await);
        assert_eq!(g[0], "1", "gate {gate} exists");
        Status {
            state: g[2].clone(),
            pending: g[7].clone(),
            succeeded: g[8].clone(),
            failed: g[9].clone(),
            first_failure: g[10].clone(),
            decisions: g[13..].chunks(5).map(|w| w[4].clone()).collect(),
        }
    }

    /// counts.lua's (waiting, awaiting) of `queue`.
    async fn waiting_and_awaiting(&self, queue: &str) -> (String, String) {
        let c = texts(self.run("counts", queue, vec![]).await);
        (c[0].clone(), c[12].clone())
    }

    async fn ready(&self, server: &RedisServer) -> Vec<String> {
        let key = format!("{{{}}}:ord:ready", self.ns);
        server
            .cmd(&["ZRANGE", &key, "0", "-1"])
            .await
            .convert()
            .unwrap()
    }
}

fn waiter<'a>(queue: &'a str, condition: &'a str, on_failure: &'a str, id: &'a str) -> Waiter<'a> {
    Waiter {
        queue,
        condition,
        on_failure,
        id,
    }
}

#[tokio::test]
async fn a_waiter_is_released_after_the_third_member_is_acknowledged_and_only_once() {
    let server = server();
    let raw = Raw::new(&server, "gate-three").await;
    raw.enqueue("q", "B", &[("m1", 0), ("m2", 0), ("m3", 0)])
        .await;
    assert_eq!(
        raw.seal("B", "batch", &[], &[waiter("cb", "success", "dead", "w")])
            .await,
        ["1", "w"]
    );
    assert_eq!(raw.state("cb", "w").await, "awaiting");
    let members = raw.claim("q").await;
    assert_eq!(members, ["m1", "m2", "m3"]);
    for (n, id) in members.iter().enumerate() {
        assert!(
            raw.claim("cb").await.is_empty(),
            "the waiter leased after {n} acks"
        );
        assert!(
            raw.ready(&server).await.is_empty(),
            "the waiter ready after {n} acks"
        );
        assert_eq!(raw.ack("q", id).await, "1");
    }
    assert_eq!(
        raw.ready(&server).await.len(),
        1,
        "the third ack fires the gate"
    );
    assert_eq!(raw.claim("cb").await, ["w"]);
    assert!(raw.claim("cb").await.is_empty(), "released once");
    let b = raw.gate("B").await;
    assert_eq!((b.state.as_str(), b.pending.as_str()), ("done", "0"));
    assert_eq!((b.succeeded.as_str(), b.failed.as_str()), ("3", "0"));
    assert_eq!(b.decisions, ["released"]);
    // Acknowledging the waiter counts toward no gate: the status is unchanged.
    assert_eq!(raw.ack("cb", "w").await, "1");
    assert_eq!(raw.gate("B").await.succeeded, "3");
}

#[tokio::test]
async fn a_dead_member_dead_letters_a_success_waiter_naming_it_and_all_releases_anyway() {
    let server = server();
    let raw = Raw::new(&server, "gate-dead").await;
    raw.enqueue("q", "", &[("a1", 1), ("a2", 0)]).await;
    assert_eq!(
        raw.seal(
            "D1",
            "deps",
            &["a1", "a2"],
            &[waiter("q", "success", "dead", "D1")]
        )
        .await,
        ["1", "D1"]
    );
    assert_eq!(
        raw.seal(
            "D2",
            "deps",
            &["a1", "a2"],
            &[waiter("q", "all", "dead", "D2")]
        )
        .await,
        ["1", "D2"]
    );
    assert_eq!(raw.claim("q").await, ["a1", "a2"]);
    raw.nack_dead("q", "a1", "boom").await;
    assert_eq!(
        raw.state("q", "D1").await,
        "awaiting",
        "decided at the last member, not the first failure"
    );
    raw.ack("q", "a2").await;
    assert_eq!(
        raw.claim("q").await,
        ["D2"],
        "all: released although a1 died"
    );
    assert_eq!(raw.state("q", "D1").await, "dead");
    assert_eq!(raw.error_of("q", "D1").await, "dependency a1 dead: boom");
    let d1 = raw.gate("D1").await;
    assert_eq!((d1.succeeded.as_str(), d1.failed.as_str()), ("1", "1"));
    assert_eq!(d1.first_failure, "a1 dead: boom");
    assert_eq!(d1.decisions, ["dead"]);
    assert_eq!(raw.gate("D2").await.decisions, ["released"]);
}

#[tokio::test]
async fn a_held_waiter_stays_awaiting_until_an_operator_decides() {
    let server = server();
    let raw = Raw::new(&server, "gate-hold").await;
    raw.enqueue("q", "", &[("a1", 1)]).await;
    raw.seal("H", "deps", &["a1"], &[waiter("q", "success", "hold", "H")])
        .await;
    raw.claim("q").await;
    raw.nack_dead("q", "a1", "boom").await;
    assert!(raw.claim("q").await.is_empty());
    assert_eq!(raw.state("q", "H").await, "awaiting");
    assert_eq!(raw.gate("H").await.decisions, ["held"]);
    assert!(
        raw.claim("q").await.is_empty(),
        "held: no later claim releases it"
    );
    let decide = |action: &'static str| {
        raw.run(
            "gate_decide",
            "q",
            vec!["H".into(), action.into(), "ops".into()],
        )
    };
    assert_eq!(texts(decide("release").await), ["1"]);
    assert_eq!(
        texts(decide("release").await),
        ["-1", "operator_released"],
        "decided once"
    );
    assert_eq!(raw.claim("q").await, ["H"]);
}

/// A fired waiter sits in ord:ready and in wf:awaiting until its queue's
/// claim decides it: counts shows it once, as awaiting (its state), not as
/// waiting too; held, it stays awaiting; decided, it leaves both.
#[tokio::test]
async fn counts_show_a_fired_waiter_once_as_awaiting_until_it_is_decided() {
    let server = server();
    let raw = Raw::new(&server, "gate-counts").await;
    raw.enqueue("q", "", &[("a1", 0), ("b1", 1)]).await;
    raw.seal(
        "R",
        "deps",
        &["a1"],
        &[waiter("cb", "success", "dead", "R")],
    )
    .await;
    raw.seal(
        "H",
        "deps",
        &["b1"],
        &[waiter("cb", "success", "hold", "H")],
    )
    .await;
    raw.seal(
        "X",
        "deps",
        &["b1"],
        &[waiter("cb", "success", "dead", "X")],
    )
    .await;
    let none_waiting = ("0".to_owned(), "3".to_owned());
    assert_eq!(raw.waiting_and_awaiting("cb").await, none_waiting);
    assert_eq!(raw.claim("q").await, ["a1", "b1"]);
    raw.ack("q", "a1").await;
    raw.nack_dead("q", "b1", "boom").await;
    assert_eq!(raw.ready(&server).await.len(), 3, "all three gates fired");
    assert_eq!(raw.state("cb", "R").await, "awaiting");
    assert_eq!(
        raw.waiting_and_awaiting("cb").await,
        none_waiting,
        "fired waiters are counted once, as awaiting"
    );
    // An operator cancels one fired waiter before any claim decides it.
    let cancelled = texts(
        raw.run("cancel", "cb", vec!["ops".into(), "id".into(), "X".into()])
            .await,
    );
    assert_eq!(cancelled[..2], ["1", "awaiting"]);
    assert_eq!(
        raw.waiting_and_awaiting("cb").await,
        ("0".to_owned(), "2".to_owned())
    );
    // The claim decides the rest: R released and leased, H held.
    assert_eq!(raw.claim("cb").await, ["R"]);
    assert_eq!(
        raw.waiting_and_awaiting("cb").await,
        ("0".to_owned(), "1".to_owned()),
        "the held waiter is awaiting, nothing waits"
    );
    texts(
        raw.run(
            "gate_decide",
            "cb",
            vec!["H".into(), "release".into(), "ops".into()],
        )
        .await,
    );
    assert_eq!(
        raw.waiting_and_awaiting("cb").await,
        ("1".to_owned(), "0".to_owned())
    );
}

/// A batch without callbacks is sealed too, so its status reaches done.
#[tokio::test]
async fn a_batch_sealed_without_waiters_is_done_after_its_last_job() {
    let server = server();
    let raw = Raw::new(&server, "gate-no-waiters").await;
    raw.enqueue("q", "B", &[("m1", 0), ("m2", 0)]).await;
    assert!(raw.seal("B", "batch", &[], &[]).await.is_empty());
    assert_eq!(raw.gate("B").await.state, "sealed");
    let members = raw.claim("q").await;
    raw.ack("q", &members[0]).await;
    assert_eq!(raw.gate("B").await.state, "sealed", "one of two finished");
    raw.ack("q", &members[1]).await;
    let b = raw.gate("B").await;
    assert_eq!((b.state.as_str(), b.succeeded.as_str()), ("done", "2"));
    assert!(
        raw.seal("B", "batch", &[], &[]).await.is_empty(),
        "sealing it again (a resend) changes nothing"
    );
    assert_eq!(raw.gate("B").await.state, "done");
}

#[tokio::test]
async fn an_unknown_dependency_refuses_the_seal_and_writes_nothing() {
    let server = server();
    let raw = Raw::new(&server, "gate-unknown").await;
    raw.enqueue("q", "", &[("a1", 0)]).await;
    let before = digest(&server).await;
    assert_eq!(
        raw.seal(
            "U",
            "deps",
            &["a1", "never"],
            &[waiter("q", "success", "dead", "U")]
        )
        .await,
        ["-1", "never"]
    );
    assert_eq!(digest(&server).await, before);
}

#[tokio::test]
async fn a_cancelled_gate_cancels_its_waiter_at_the_next_claim() {
    let server = server();
    let raw = Raw::new(&server, "gate-cancel").await;
    raw.enqueue("q", "B", &[("m1", 0)]).await;
    raw.seal("B", "batch", &[], &[waiter("cb", "all", "dead", "w")])
        .await;
    assert_eq!(
        texts(
            raw.run("gate_cancel", "q", vec!["B".into(), "ops".into()])
                .await
        ),
        ["1"]
    );
    assert_eq!(
        texts(
            raw.run("gate_cancel", "q", vec!["B".into(), "".into()])
                .await
        ),
        ["2", "cancelled"]
    );
    assert!(raw.claim("cb").await.is_empty());
    assert_eq!(raw.state("cb", "w").await, "", "the waiter is gone");
    assert_eq!(raw.gate("B").await.decisions, ["cancelled"]);
    assert_eq!(
        raw.enqueue("q", "B", &[("m2", 0)]).await,
        ["-3", "m2"],
        "a cancelled batch takes no jobs"
    );
}

#[tokio::test]
async fn a_resent_seal_answers_created_earlier() {
    let server = server();
    let raw = Raw::new(&server, "gate-resend").await;
    raw.enqueue("q", "B", &[("m1", 0)]).await;
    let waiters = [waiter("cb", "success", "dead", "w")];
    assert_eq!(raw.seal("B", "batch", &[], &waiters).await, ["1", "w"]);
    let before = digest(&server).await;
    assert_eq!(raw.seal("B", "batch", &[], &waiters).await, ["2", "w"]);
    assert_eq!(digest(&server).await, before);
    let other = [waiter("cb", "success", "dead", "x")];
    assert_eq!(raw.seal("B", "batch", &[], &other).await, ["-2", "sealed"]);
}

/// The commands a call made, by name, and their total.
async fn cost(
    server: &RedisServer,
    call: impl std::future::Future<Output = ()>,
) -> (Vec<(String, i64)>, i64) {
    server.reset_stats().await;
    call.await;
    let seen = server.seen_since_reset().await;
    let commands: Vec<(String, i64)> = seen
        .commands
        .into_iter()
        .filter(|(name, _)| name != "evalsha" && name != "config")
        .collect();
    let total = commands.iter().map(|(_, n)| n).sum();
    (commands, total)
}

#[tokio::test]
async fn jobs_without_gates_cost_a_claim_nothing_more_and_an_ack_one_exists() {
    let server = server();
    let plain = Raw::new(&server, "gate-cost-plain").await;
    let gated = Raw::new(&server, "gate-cost-gated").await;
    // The second namespace has a gate with a waiter on another queue.
    gated.enqueue("other", "B", &[("m", 0)]).await;
    gated
        .seal("B", "batch", &[], &[waiter("cb", "all", "dead", "w")])
        .await;
    let mut per_call = Vec::new();
    for raw in [&plain, &gated] {
        raw.enqueue("q", "", &[("j1", 0), ("j2", 0)]).await;
        let (_, claim) = cost(&server, async {
            assert_eq!(raw.claim("q").await.len(), 2);
        })
        .await;
        let (commands, ack) = cost(&server, async {
            assert_eq!(raw.ack("q", "j1").await, "1");
        })
        .await;
        let exists = commands
            .iter()
            .find(|(n, _)| n == "exists")
            .map(|(_, n)| *n);
        assert_eq!(exists, Some(1), "one EXISTS per ack call: {commands:?}");
        per_call.push((claim, ack));
    }
    assert_eq!(
        per_call[0], per_call[1],
        "(claim, ack) commands without and with gates in the namespace"
    );
}

#[tokio::test]
async fn a_subtree_root_joins_its_parent_when_sealed_and_the_parent_waits_for_it() {
    let server = server();
    let raw = Raw::new(&server, "gate-tree").await;
    raw.enqueue("q", "S", &[("leaf", 0)]).await;
    let mut args = raw.seal_args("S", "tree", &[], &[waiter("q", "success", "dead", "S")]);
    let parent = args.len() - 3;
    args[parent] = "T".into();
    args[parent + 1] = "tree".into();
    assert_eq!(texts(raw.run("gate_seal", "q", args).await), ["1", "S"]);
    assert_eq!(
        raw.seal("T", "tree", &[], &[waiter("top", "success", "dead", "T")])
            .await,
        ["1", "T"]
    );
    assert_eq!(
        raw.gate("T").await.pending,
        "1",
        "the subtree root S is T's member"
    );
    assert_eq!(raw.claim("q").await, ["leaf"]);
    raw.ack("q", "leaf").await;
    assert!(raw.claim("top").await.is_empty(), "T waits for S");
    assert_eq!(raw.claim("q").await, ["S"]);
    raw.ack("q", "S").await;
    assert_eq!(raw.claim("top").await, ["T"]);
}

#[tokio::test]
async fn a_finished_gates_data_is_deleted_once_its_keep_time_passed() {
    let server = server();
    let raw = Raw::new(&server, "gate-trim").await;
    raw.enqueue("q", "B", &[("m1", 0), ("m2", 0)]).await;
    raw.seal("B", "batch", &[], &[waiter("q", "all", "dead", "w")])
        .await;
    for id in raw.claim("q").await {
        raw.ack("q", &id).await;
    }
    assert_eq!(raw.claim("q").await, ["w"], "decided: nothing waits on B");
    let expire = format!("{{{}}}:wf:expire", raw.ns);
    server.cmd(&["ZADD", &expire, "1", "B"]).await;
    // Any gate call trims what is due.
    raw.seal("Z", "batch", &[], &[waiter("q", "all", "dead", "z")])
        .await;
    assert_eq!(
        texts(raw.run("gate_get", "q", vec!["B".into()]).await),
        ["0"]
    );
    let members = format!("{{{}}}:wf:members", raw.ns);
    let outcomes = format!("{{{}}}:wf:outcomes", raw.ns);
    let left: i64 = server.cmd(&["ZCARD", &members]).await.convert().unwrap();
    let kept: i64 = server.cmd(&["HLEN", &outcomes]).await.convert().unwrap();
    assert_eq!((left, kept), (0, 0));
}
