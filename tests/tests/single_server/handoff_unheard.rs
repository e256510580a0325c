//! The scripts' side of finding hand-offs that never reached their worker
//! (driver/src/worker/unheard.rs): a park and its unpark say where the park
//! began and ended (its lease sequence and Redis's clock), and
//! lua/handed_unheard.lua lists the jobs leased to one worker between
//! them, and no one else's.

use std::time::Duration;

use fred::clients::Client;
use fred::types::Value;
use redq::events::EventKind;
use redq_tests::events::latest_of_kind;
use redq_tests::fixtures;
use redq_tests::lua::{compose, evalsha, load, source};
use redq_tests::{unique_namespace, RedisServer};

/// The parked worker's token and identity, as a worker would send them.
const TOKEN: u64 = 4242;
const NODE: u64 = 9;
const INSTANCE: u64 = 1;
/// The park's lease, and its number.
const LEASE_MS: i64 = 30_000;
const PARK: i64 = 7;

fn values(args: &[i64]) -> Vec<Value> {
    args.iter().map(|n| n.to_string().into()).collect()
}

/// A `handed_unheard` reply: where the next page starts, then its (id,
/// lease) pairs, sorted (jobs leased in one millisecond share a score, and
/// the leased set orders those by id).
type Page = (String, Vec<(String, String)>);

fn page(reply: Vec<String>) -> Page {
    let mut pairs: Vec<(String, String)> = reply[1..]
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    pairs.sort();
    (reply[0].clone(), pairs)
}

/// A script's reply as text: ids and numbers alike.
fn texts(reply: Value) -> Vec<String> {
    let Value::Array(items) = reply else {
        panic!("not an array: {reply:?}");
    };
    items
        .into_iter()
        .map(|v| v.as_string().expect("a string or a number"))
        .collect()
}

struct Scripts {
    admin: Client,
    ns: String,
    park: String,
    unpark: String,
    unheard: String,
}

impl Scripts {
    async fn load(server: &RedisServer, ns: &str) -> Scripts {
        let admin = server.client().await;
        let load_one = async |name: &str| load(&admin, &compose(source(name))).await;
        Scripts {
            park: load_one("park").await,
            unpark: load_one("unpark").await,
            unheard: load_one("handed_unheard").await,
            admin: admin.clone(),
            ns: ns.to_owned(),
        }
    }

    async fn run(&self, sha: &str, args: &[i64]) -> Value {
        evalsha(&self.admin, sha, &self.ns, "work", &values(args))
            .await
            .expect("the script runs")
    }

    /// Park the worker (park number `PARK`, for 5 s) with room for `room`
    /// jobs, leased for `LEASE_MS`: the park's reply.
    async fn park_worker(&self, room: i64) -> Vec<String> {
        let args = [
            TOKEN as i64,
            NODE as i64,
            INSTANCE as i64,
            LEASE_MS,
            room,
            5_000,
            PARK,
        ];
        texts(self.run(&self.park, &args).await)
    }

    /// Its unpark, on a plain channel: the reply.
    async fn unpark_worker(&self) -> Vec<String> {
        texts(self.run(&self.unpark, &[TOKEN as i64, 0, PARK]).await)
    }

    /// `handed_unheard` for `node`, lease ids in (`above`, `through`],
    /// expiries in [`from`, `to`], one page of `count` at `offset`.
    #[allow(clippy::too_many_arguments)]
    async fn unheard(
        &self,
        node: u64,
        instance: u64,
        above: i64,
        through: i64,
        from: i64,
        to: i64,
        offset: i64,
        count: i64,
    ) -> Page {
        let args = [
            node as i64,
            instance as i64,
            above,
            through,
            from,
            to,
            offset,
            count,
        ];
        page(texts(self.run(&self.unheard, &args).await))
    }
}

#[tokio::test]
async fn the_jobs_a_park_handed_are_found_between_its_ends_and_no_one_elses() {
    let server = RedisServer::start();
    let ns = unique_namespace("handed-unheard");
    let queue = fixtures::handle(&server, &ns).await;
    let ids = fixtures::add_numbered(&queue, "work", 3).await;
    // Another holder's claim first, under a longer lease: its job is in
    // the leased set beside the park's, under lease 1.
    let claimed = queue
        .claim("work", 1, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(claimed[0].id, ids[0]);
    let scripts = Scripts::load(&server, &ns).await;

    // Parked with room for two: both other jobs handed at once, leased 2
    // and 3; the park began after lease 1.
    let began = scripts.park_worker(2).await;
    assert_eq!(began[1..3], ["1", "1"], "parked, after lease 1: {began:?}");
    let began_ms: i64 = began[3].parse().unwrap();
    let ended = scripts.unpark_worker().await;
    assert_eq!(ended[..2], ["2", "3"], "handed two, ended at lease 3");
    let ended_ms: i64 = ended[2].parse().unwrap();
    assert!(ended_ms >= began_ms);

    // The park's window: its two jobs with their leases.
    let (from, to) = (began_ms + LEASE_MS, ended_ms + LEASE_MS);
    let mut handed = vec![
        (ids[1].clone(), "2".to_owned()),
        (ids[2].clone(), "3".into()),
    ];
    handed.sort();
    let theirs: Page = ("-1".into(), handed.clone());
    let none: Page = ("-1".into(), Vec::new());
    let at = |node, instance, above, through, from, to| {
        scripts.unheard(node, instance, above, through, from, to, 0, 100)
    };
    assert_eq!(at(NODE, INSTANCE, 1, 3, from, to).await, theirs);
    // However wide the expiries, the other holder's job is not the park's:
    // not its holder, and not its leases.
    let ever = 1i64 << 52;
    assert_eq!(at(NODE, INSTANCE, 0, 3, 0, ever).await, theirs);
    let identity = queue.identity();
    let other = (identity.node, identity.instance as u64);
    let its_own: Page = ("-1".into(), vec![(ids[0].clone(), "1".into())]);
    assert_eq!(at(other.0, other.1, 0, 3, 0, ever).await, its_own);
    assert_eq!(at(other.0, other.1, 1, 3, 0, ever).await, none);
    assert_eq!(
        at(NODE, INSTANCE + 1, 1, 3, 0, ever).await,
        none,
        "another instance of the node"
    );

    // A page at a time: each says where the next starts, the last -1.
    let mut found = Vec::new();
    let mut offset = 0;
    let mut pages = 0;
    while offset >= 0 {
        let (next, pairs) = scripts
            .unheard(NODE, INSTANCE, 1, 3, 0, ever, offset, 1)
            .await;
        offset = next.parse().unwrap();
        found.extend(pairs);
        pages += 1;
    }
    found.sort();
    assert_eq!(found, handed);
    assert_eq!(pages, 4, "three entries, one a page, then the end");

    // Bad input is refused by name.
    let refused = evalsha(
        &scripts.admin,
        &scripts.unheard,
        &ns,
        "work",
        &values(&[NODE as i64, INSTANCE as i64, 1, 3, from, to, 0, 0]),
    )
    .await
    .expect_err("a page of nothing");
    assert!(
        refused.to_string().contains("count must be 1 to 1000"),
        "{refused}"
    );
}

/// What `release.lua` does with a lost hand-off (`handoff_lost`, as the
/// worker's give-back sends it): the job is due again with no attempt
/// counted, and one event names it and the worker it was handed to. A lost
/// claim's job (`claim_lost`) likewise, under its own event.
#[tokio::test]
async fn a_lost_hand_off_given_back_is_due_again_and_recorded_as_an_event() {
    let server = RedisServer::start();
    let ns = unique_namespace("handoff-lost");
    let queue = fixtures::handle(&server, &ns).await;
    let ids = fixtures::add_numbered(&queue, "work", 2).await;
    let scripts = Scripts::load(&server, &ns).await;
    let release = load(&scripts.admin, &compose(source("release"))).await;
    // Both jobs handed to the parked worker at its park, leases 1 and 2;
    // then it leaves, as a worker does before it gives anything back.
    scripts.park_worker(2).await;
    let ended = scripts.unpark_worker().await;
    assert_eq!(ended[..2], ["2", "2"], "handed two, ended at lease 2");
    let release_as = async |id: &str, lease: &str, why: &str| {
        let args: Vec<Value> = vec![id.into(), lease.into(), why.into()];
        evalsha(&scripts.admin, &release, &ns, "work", &args).await
    };
    let lost_events = async || -> Vec<_> {
        latest_of_kind(&queue, EventKind::HandoffLost)
            .await
            .into_iter()
            .map(|e| (e.queue, e.job_id, e.detail))
            .collect()
    };
    let job_of = async |id: &str| queue.inspect(id).await.unwrap().expect("the job");
    let counted = async || queue.metric_totals("work").await.unwrap().handoffs_lost;

    // A fifth argument that is neither is refused, naming both, and
    // nothing is written.
    let refused = release_as(&ids[1], "2", "lost")
        .await
        .expect_err("neither a push-back nor handoff_lost");
    assert!(
        refused.to_string().contains(
            "pushback_ms (1 to 86400000), handoff_lost, claim_lost, interrupted or stopped"
        ),
        "{refused}"
    );
    assert_eq!(job_of(&ids[1]).await.state, redq::JobState::Leased);

    // Given back: due again at once, its attempts untouched, and recorded.
    let given = release_as(&ids[0], "1", "handoff_lost").await.unwrap();
    assert_eq!(given.as_i64(), Some(1), "released");
    let job = job_of(&ids[0]).await;
    assert_eq!((job.state, job.attempts), (redq::JobState::Waiting, 0));
    let worker = format!("{NODE}-{INSTANCE}");
    let once = vec![("work".to_owned(), ids[0].clone(), Some(worker.clone()))];
    assert_eq!(lost_events().await, once);
    assert_eq!(counted().await, 1, "counted for the queue's alarm");

    // A resend changes nothing and records nothing more; nor does a give-
    // back whose lease is not the job's.
    let resent = release_as(&ids[0], "1", "handoff_lost").await.unwrap();
    assert_eq!(resent.as_i64(), Some(2), "already released");
    let stale = release_as(&ids[1], "1", "handoff_lost").await.unwrap();
    assert_eq!(stale.as_i64(), Some(-1), "not held under lease 1");
    assert_eq!(job_of(&ids[1]).await.state, redq::JobState::Leased);
    assert_eq!(lost_events().await, once);
    assert_eq!(counted().await, 1, "neither counted again");

    // A lost claim's job (`driver/src/lost_claim.rs`) is released the same
    // way, under its own event, and is no hand-off to count.
    let claimed = release_as(&ids[1], "2", "claim_lost").await.unwrap();
    assert_eq!(claimed.as_i64(), Some(1), "released");
    let job = job_of(&ids[1]).await;
    assert_eq!((job.state, job.attempts), (redq::JobState::Waiting, 0));
    let claim_lost: Vec<_> = latest_of_kind(&queue, EventKind::ClaimLost)
        .await
        .into_iter()
        .map(|e| (e.queue, e.job_id, e.detail))
        .collect();
    assert_eq!(
        claim_lost,
        vec![("work".to_owned(), ids[1].clone(), Some(worker))]
    );
    assert_eq!(lost_events().await, once);
    assert_eq!(counted().await, 1, "a lost claim is not a lost hand-off");
    let totals = queue.metric_totals("work").await.unwrap();
    assert_eq!(totals.claims_lost, 1, "counted apart");
}
