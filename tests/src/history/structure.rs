//! The structural check of a namespace: one atomic snapshot of every key
//! (a read-only script), then the invariants that must hold between them at
//! every instant, whatever faults happened:
//!
//! - every job record has a non-empty payload after its msgpack meta, or
//!   is detached (`lua/lib/job_record.lua`) with a non-empty payload in
//!   `{ns}:detached`, which holds no payload of any other job;
//! - every job is in exactly one state: waiting (in the waiting zset or in
//!   the fifo list), scheduled, leased or dead in its own queue, blocked
//!   behind its ordering key, or released to its queue as an ordering
//!   successor; no index holds a job that does not exist or belongs to
//!   another queue;
//! - the fifo list holds only priority-0 jobs without an ordering key, in
//!   strictly increasing sequence order (so no duplicates);
//! - leased ⇔ the record holds a lease, with the same expiry as the index;
//!   dead ⇔ the record has a death time; a waiting job's score is its
//!   priority and sequence;
//! - ordering keys: each key held by a live job of that key, every other
//!   live job of the key blocked behind it, the per-queue blocked counters
//!   equal to what is blocked;
//! - dedup keys point to live jobs carrying that key;
//! - kept (finished) jobs: a kept record in `{ns}:kept` is not a live job
//!   (not in `{ns}:jobs`), and is in exactly one of its own queue's
//!   `completed` / `cancelled` sets, the one its outcome names; those sets
//!   hold only kept jobs;
//! - flow control (`structure_flow`): every held member names its job's
//!   limit key and waiting score; each key's leased and held counts equal
//!   the jobs leased and held under it;
//! - workflows (`structure_workflow`): a job waiting on a gate (in
//!   `wf:awaiting`, and in `ord:ready` too once its gate fired) is in that
//!   one state, and its record names the gate; every gate record decodes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use fred::clients::Client;
use fred::interfaces::{LuaInterface, SetsInterface};
use fred::types::Value;

use super::meta::Meta;
use super::violation::{Violation, ViolationKind};

const DUMP: &str = r#"#!lua flags=no-writes,allow-oom
-- KEYS: jobs dedup dedup:ttl ord:active ord:blocked ord:ready ord:blocked:n kept,
--       wf:gates wf:awaiting detached, then per queue: waiting scheduled leased dead (zsets), fifo (list),
--       completed cancelled lim_held (zsets), lim (hash), lim_ready (zset)
local out = {
  redis.call('HGETALL', KEYS[1]),
  redis.call('HGETALL', KEYS[2]), redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES'),
  redis.call('HGETALL', KEYS[4]), redis.call('ZRANGE', KEYS[5], 0, -1),
  redis.call('ZRANGE', KEYS[6], 0, -1), redis.call('HGETALL', KEYS[7]),
  redis.call('HGETALL', KEYS[8]),
  redis.call('HGETALL', KEYS[9]), redis.call('ZRANGE', KEYS[10], 0, -1),
  redis.call('HGETALL', KEYS[11]),
}
for i = 12, #KEYS, 10 do
  for j = i, i + 3 do
    out[#out + 1] = redis.call('ZRANGE', KEYS[j], 0, -1, 'WITHSCORES')
  end
  out[#out + 1] = redis.call('LRANGE', KEYS[i + 4], 0, -1)
  out[#out + 1] = redis.call('ZRANGE', KEYS[i + 5], 0, -1)
  out[#out + 1] = redis.call('ZRANGE', KEYS[i + 6], 0, -1)
  out[#out + 1] = redis.call('ZRANGE', KEYS[i + 7], 0, -1)
  out[#out + 1] = redis.call('HGETALL', KEYS[i + 8])
  out[#out + 1] = redis.call('ZRANGE', KEYS[i + 9], 0, -1, 'WITHSCORES')
end
return out
"#;

/// The four per-queue state indexes (sorted sets). Waiting jobs may also be
/// in the per-queue `fifo` list instead, see [`Dump::fifo`].
pub const STATES: [&str; 4] = ["waiting", "scheduled", "leased", "dead"];

/// An atomic snapshot of a namespace's keys.
#[derive(Debug, Default, Clone)]
pub struct Dump {
    pub jobs: BTreeMap<String, Meta>,
    /// Records that did not decode.
    pub undecodable: Vec<String>,
    /// Records with nothing after their meta and no detached payload: the
    /// payload is missing.
    pub without_payload: Vec<String>,
    /// Payloads in `{ns}:detached` of no live job's detached record.
    pub orphaned_payloads: Vec<String>,
    pub dedup: HashMap<String, String>,
    pub dedup_ttl: HashMap<String, f64>,
    pub ord_active: HashMap<String, String>,
    pub ord_blocked: Vec<String>,
    pub ord_ready: Vec<String>,
    pub ord_blocked_n: HashMap<String, i64>,
    /// (queue, state) -> member -> score.
    pub states: BTreeMap<(String, String), BTreeMap<String, f64>>,
    /// queue -> its fifo list (waiting priority-0 jobs), head first.
    pub fifo: BTreeMap<String, Vec<String>>,
    /// Kept finished jobs: id -> (outcome, queue) from their kept records
    /// (`lua/lib/kept_record.lua`: fields 1 and 2); `None` when undecodable.
    pub kept: BTreeMap<String, Option<(String, String)>>,
    /// (queue, "completed" | "cancelled") -> the ids that set holds.
    pub finished: BTreeMap<(String, String), BTreeSet<String>>,
    /// queue -> the members of its held set (`K\n<score16>\n<id>`, flow control).
    pub held: BTreeMap<String, Vec<String>>,
    /// queue -> its per-key flow state (`{ns}:q:Q:lim`: "u\nK" leased,
    /// "h\nK" held, "p\nK" pushed back until).
    pub lim: BTreeMap<String, BTreeMap<String, String>>,
    /// queue -> its ready keys (`{ns}:q:Q:lim_ready`: key -> the waiting
    /// score of its best held job).
    pub lim_ready: BTreeMap<String, BTreeMap<String, f64>>,
    /// Gates (`{ns}:wf:gates`): id -> record, `None` when undecodable.
    pub gates: BTreeMap<String, Option<super::gate::Gate>>,
    /// The members of `{ns}:wf:awaiting` (`queue\nid`): jobs waiting on a gate.
    pub awaiting: Vec<String>,
}

/// The kept states, each a per-queue sorted set of ids.
pub const KEPT_STATES: [&str; 2] = ["completed", "cancelled"];

/// The outcome and queue of a kept record (a msgpack array whose first two
/// fields are both text), decoded here rather than by the driver.
fn kept_outcome_and_queue(raw: &[u8]) -> Option<(String, String)> {
    let mut rest = raw;
    match rmpv::decode::read_value(&mut rest).ok()? {
        rmpv::Value::Array(fields) => match (fields.first()?, fields.get(1)?) {
            (rmpv::Value::String(o), rmpv::Value::String(q)) => {
                Some((o.as_str()?.to_owned(), q.as_str()?.to_owned()))
            }
            _ => None,
        },
        _ => None,
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.to_vec(),
        Value::String(s) => s.to_string().into_bytes(),
        Value::Integer(n) => n.to_string().into_bytes(),
        Value::Double(f) => f.to_string().into_bytes(),
        _ => Vec::new(),
    }
}

fn text(v: &Value) -> String {
    String::from_utf8_lossy(&bytes(v)).into_owned()
}

fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) => items,
        _ => &[],
    }
}

fn pairs(v: &Value) -> impl Iterator<Item = (&Value, &Value)> {
    items(v).chunks(2).filter_map(|c| match c {
        [a, b] => Some((a, b)),
        _ => None,
    })
}

impl Dump {
    /// Snapshots namespace `ns` in one script call.
    pub async fn take(client: &Client, ns: &str) -> Result<Dump, fred::error::Error> {
        let key = |s: &str| format!("{{{ns}}}:{s}");
        let queues: Vec<String> = client.smembers(key("queues")).await?;
        let mut keys: Vec<String> = [
            "jobs",
            "dedup",
            "dedup:ttl",
            "ord:active",
            "ord:blocked",
            "ord:ready",
            "ord:blocked:n",
            "kept",
            "wf:gates",
            "wf:awaiting",
            "detached",
        ]
        .iter()
        .map(|s| key(s))
        .collect();
        for queue in &queues {
            for state in STATES {
                keys.push(key(&format!("q:{queue}:{state}")));
            }
            keys.push(key(&format!("q:{queue}:fifo")));
            for state in KEPT_STATES {
                keys.push(key(&format!("q:{queue}:{state}")));
            }
            keys.push(key(&format!("q:{queue}:lim_held")));
            keys.push(key(&format!("q:{queue}:lim")));
            keys.push(key(&format!("q:{queue}:lim_ready")));
        }
        let reply: Value = client.eval(DUMP, keys, Vec::<Value>::new()).await?;
        let parts = items(&reply);
        let mut dump = Dump::default();
        let detached: HashMap<String, Vec<u8>> = pairs(&parts[10])
            .map(|(id, payload)| (text(id), bytes(payload)))
            .collect();
        let mut detached_records = BTreeSet::new();
        for (id, raw) in pairs(&parts[0]) {
            let raw = bytes(raw);
            match Meta::split(&raw) {
                Some((meta, payload)) => {
                    // A detached record's header is msgpack's array32
                    // (DETACHED_HEAD in lua/lib/job_record.lua).
                    let is_detached = raw.first() == Some(&0xdd) && payload.is_empty();
                    if is_detached {
                        detached_records.insert(text(id));
                    }
                    let has_payload = if is_detached {
                        detached.get(&text(id)).is_some_and(|p| !p.is_empty())
                    } else {
                        !payload.is_empty()
                    };
                    if !has_payload {
                        dump.without_payload.push(text(id));
                    }
                    dump.jobs.insert(text(id), meta);
                }
                None => dump.undecodable.push(text(id)),
            }
        }
        dump.orphaned_payloads = detached
            .into_keys()
            .filter(|id| !detached_records.contains(id))
            .collect();
        dump.orphaned_payloads.sort();
        dump.dedup = pairs(&parts[1]).map(|(k, v)| (text(k), text(v))).collect();
        dump.dedup_ttl = pairs(&parts[2])
            .map(|(k, v)| (text(k), text(v).parse().unwrap_or(f64::NAN)))
            .collect();
        dump.ord_active = pairs(&parts[3]).map(|(k, v)| (text(k), text(v))).collect();
        dump.ord_blocked = items(&parts[4]).iter().map(text).collect();
        dump.ord_ready = items(&parts[5]).iter().map(text).collect();
        dump.ord_blocked_n = pairs(&parts[6])
            .map(|(k, v)| (text(k), text(v).parse().unwrap_or(i64::MIN)))
            .collect();
        dump.kept = pairs(&parts[7])
            .map(|(id, raw)| (text(id), kept_outcome_and_queue(&bytes(raw))))
            .collect();
        dump.read_workflows(&parts[8], &parts[9]);
        let mut i = 11;
        for queue in &queues {
            for state in STATES {
                let members = pairs(&parts[i])
                    .map(|(m, s)| (text(m), text(s).parse().unwrap_or(f64::NAN)))
                    .collect();
                dump.states
                    .insert((queue.clone(), state.to_owned()), members);
                i += 1;
            }
            let fifo = items(&parts[i]).iter().map(text).collect();
            dump.fifo.insert(queue.clone(), fifo);
            i += 1;
            for state in KEPT_STATES {
                let ids = items(&parts[i]).iter().map(text).collect();
                dump.finished.insert((queue.clone(), state.to_owned()), ids);
                i += 1;
            }
            let held = items(&parts[i]).iter().map(text).collect();
            dump.held.insert(queue.clone(), held);
            let lim = pairs(&parts[i + 1])
                .map(|(k, v)| (text(k), text(v)))
                .collect();
            dump.lim.insert(queue.clone(), lim);
            let ready = pairs(&parts[i + 2])
                .map(|(k, v)| (text(k), text(v).parse().unwrap_or(f64::NAN)))
                .collect();
            dump.lim_ready.insert(queue.clone(), ready);
            i += 3;
        }
        Ok(dump)
    }

    /// Where each job is: (queue, state) for every index holding it.
    pub fn placements(&self) -> HashMap<String, Vec<(String, String)>> {
        let mut at: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for ((queue, state), members) in &self.states {
            for id in members.keys() {
                at.entry(id.clone())
                    .or_default()
                    .push((queue.clone(), state.clone()));
            }
        }
        // A waiting job in the fifo list instead of the waiting zset. Each
        // occurrence counts, so a duplicate shows as two states.
        for (queue, ids) in &self.fifo {
            for id in ids {
                at.entry(id.clone())
                    .or_default()
                    .push((queue.clone(), "fifo".into()));
            }
        }
        for member in &self.ord_blocked {
            if let Some(id) = member.rsplit('\n').next() {
                let queue = self
                    .jobs
                    .get(id)
                    .map(|m| m.queue.clone())
                    .unwrap_or_default();
                at.entry(id.to_owned())
                    .or_default()
                    .push((queue, "blocked".into()));
            }
        }
        for (queue, members) in &self.held {
            for member in members {
                let id = member.rsplit('\n').next().unwrap_or_default();
                at.entry(id.to_owned())
                    .or_default()
                    .push((queue.clone(), "held".into()));
            }
        }
        let awaiting = self.place_awaiting(&mut at);
        for member in &self.ord_ready {
            let mut parts = member.splitn(3, '\n');
            let (queue, _seq, id) = (parts.next(), parts.next(), parts.next());
            // A waiter whose gate fired waits in ord:ready for its queue's
            // claim to decide it, still awaiting: one state.
            if id.is_some_and(|id| awaiting.contains(id)) {
                continue;
            }
            if let (Some(queue), Some(id)) = (queue, id) {
                at.entry(id.to_owned())
                    .or_default()
                    .push((queue.to_owned(), "ready".into()));
            }
        }
        at
    }

    /// Ids of the jobs in state `state` of any queue ("waiting" includes
    /// the fifo lists).
    pub fn in_state(&self, state: &str) -> BTreeSet<String> {
        let fifo = self
            .fifo
            .values()
            .filter(|_| state == "waiting")
            .flatten()
            .cloned();
        self.states
            .iter()
            .filter(|((_, s), _)| s == state)
            .flat_map(|(_, members)| members.keys().cloned())
            .chain(fifo)
            .collect()
    }

    /// Every broken invariant, described; empty when the namespace is sound.
    pub fn violations(&self) -> Vec<String> {
        self.findings().iter().map(Violation::to_string).collect()
    }

    /// Every broken invariant, with the rule it broke.
    pub fn findings(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        for id in &self.undecodable {
            out.push(Violation::new(
                ViolationKind::UndecodableRecord,
                format!("job {id}: record does not decode"),
            ));
        }
        for id in &self.without_payload {
            out.push(Violation::new(
                ViolationKind::RecordWithoutPayload,
                format!("job {id}: record without payload"),
            ));
        }
        for id in &self.orphaned_payloads {
            out.push(Violation::new(
                ViolationKind::DetachedPayloadOrphaned,
                format!("job {id}: a detached payload without its job's detached record"),
            ));
        }
        let placements = self.placements();
        for (id, meta) in &self.jobs {
            let places = placements.get(id).cloned().unwrap_or_default();
            if places.len() != 1 {
                out.push(Violation::new(
                    ViolationKind::NotInOneState,
                    format!(
                        "job {id}: in {} states {places:?}, expected exactly one",
                        places.len()
                    ),
                ));
            }
            for (queue, state) in &places {
                if *queue != meta.queue {
                    out.push(Violation::new(
                        ViolationKind::InAnotherQueue,
                        format!(
                            "job {id} of queue {:?} is {state} in queue {queue:?}",
                            meta.queue
                        ),
                    ));
                }
            }
            let leased = places.iter().any(|(_, s)| s == "leased");
            if leased != (meta.lease_id != 0) {
                out.push(Violation::new(
                    ViolationKind::LeaseIndexMismatch,
                    format!(
                        "job {id}: leased index {leased} but record lease {}",
                        meta.lease_id
                    ),
                ));
            }
            if leased {
                let score = self.states[&(meta.queue.clone(), "leased".to_owned())][id];
                if score != meta.lease_expiry as f64 {
                    out.push(Violation::new(
                        ViolationKind::LeaseExpiryMismatch,
                        format!(
                            "job {id}: lease expiry {} in the index, {} in the record",
                            score, meta.lease_expiry
                        ),
                    ));
                }
            }
            let dead = places.iter().any(|(_, s)| s == "dead");
            if dead != (meta.died_at > 0) {
                out.push(Violation::new(
                    ViolationKind::DeadIndexMismatch,
                    format!("job {id}: dead index {dead} but died_at {}", meta.died_at),
                ));
            }
            if let Some(members) = self.states.get(&(meta.queue.clone(), "waiting".into())) {
                if let Some(score) = members.get(id) {
                    if *score != meta.waiting_score() {
                        out.push(Violation::new(
                            ViolationKind::WaitingScoreWrong,
                            format!(
                                "job {id}: waiting score {score}, expected {}",
                                meta.waiting_score()
                            ),
                        ));
                    }
                }
            }
        }
        for (id, places) in &placements {
            if !self.jobs.contains_key(id) {
                out.push(Violation::new(
                    ViolationKind::IndexWithoutRecord,
                    format!("{places:?} holds {id}, which has no record"),
                ));
            }
        }
        self.check_fifo(&mut out);
        self.check_ordering(&placements, &mut out);
        self.check_dedup(&mut out);
        self.check_kept(&mut out);
        self.check_flow(&mut out);
        self.check_workflows(&mut out);
        out
    }

    /// Kept jobs are finished: not live, in exactly the one finished set
    /// their record names, and those sets hold nothing else.
    fn check_kept(&self, out: &mut Vec<Violation>) {
        let mut indexed: HashMap<&String, Vec<&(String, String)>> = HashMap::new();
        for (place, ids) in &self.finished {
            for id in ids {
                indexed.entry(id).or_default().push(place);
                if !self.kept.contains_key(id) {
                    out.push(Violation::new(
                        ViolationKind::IndexWithoutRecord,
                        format!("{place:?} holds {id}, which has no kept record"),
                    ));
                }
            }
        }
        for (id, record) in &self.kept {
            let Some((outcome, queue)) = record else {
                out.push(Violation::new(
                    ViolationKind::UndecodableRecord,
                    format!("kept job {id}: record does not decode"),
                ));
                continue;
            };
            if self.jobs.contains_key(id) {
                out.push(Violation::new(
                    ViolationKind::NotInOneState,
                    format!("job {id} is both live and kept as {outcome}"),
                ));
            }
            let places = indexed.get(id).cloned().unwrap_or_default();
            if places.len() != 1 || places[0] != &(queue.clone(), outcome.clone()) {
                out.push(Violation::new(
                    ViolationKind::NotInOneState,
                    format!(
                        "kept job {id} ({outcome} in queue {queue:?}) is in {places:?}, expected exactly that one"
                    ),
                ));
            }
        }
    }

    /// What the fifo list may hold beyond what every index may: only jobs
    /// that claim can take in list order, i.e. priority 0 (the list's
    /// implied score is the priority-0 one) and no ordering key, strictly
    /// ascending in sequence. Missing records, other queues and other
    /// states are reported with the placements.
    fn check_fifo(&self, out: &mut Vec<Violation>) {
        for (queue, ids) in &self.fifo {
            let mut last: Option<(&String, u64)> = None;
            for id in ids {
                let Some(meta) = self.jobs.get(id) else {
                    continue;
                };
                if meta.priority != 0 {
                    out.push(Violation::new(
                        ViolationKind::FifoPriority,
                        format!(
                            "job {id} in the fifo of queue {queue:?} has priority {}",
                            meta.priority
                        ),
                    ));
                }
                if !meta.ordering_key.is_empty() {
                    out.push(Violation::new(
                        ViolationKind::FifoOrderingKey,
                        format!(
                            "job {id} in the fifo of queue {queue:?} has ordering key {:?}",
                            meta.ordering_key
                        ),
                    ));
                }
                if let Some((prev, prev_seq)) = last {
                    if meta.seq <= prev_seq {
                        out.push(Violation::new(ViolationKind::FifoOutOfOrder, format!(
                            "fifo of queue {queue:?} out of order: {prev} (seq {prev_seq}) before {id} (seq {})",
                            meta.seq
                        )));
                    }
                }
                last = Some((id, meta.seq));
            }
        }
    }

    fn check_ordering(
        &self,
        placements: &HashMap<String, Vec<(String, String)>>,
        out: &mut Vec<Violation>,
    ) {
        let mut live_by_key: HashMap<&str, Vec<&String>> = HashMap::new();
        for (id, meta) in &self.jobs {
            if !meta.ordering_key.is_empty() && meta.died_at == 0 {
                live_by_key.entry(&meta.ordering_key).or_default().push(id);
            }
        }
        for (key, holder) in &self.ord_active {
            match self.jobs.get(holder) {
                Some(m) if m.ordering_key == *key && m.died_at == 0 => {}
                _ => out.push(Violation::new(
                    ViolationKind::KeyHolderNotLive,
                    format!(
                    "ordering key {key:?} is held by {holder}, which is not a live job of that key"
                ),
                )),
            }
        }
        for (key, ids) in &live_by_key {
            let holder = self.ord_active.get(*key);
            if holder.is_none() {
                out.push(Violation::new(
                    ViolationKind::KeyWithoutHolder,
                    format!("ordering key {key:?} has live jobs {ids:?} but no holder"),
                ));
            }
            for id in ids {
                let blocked = placements
                    .get(*id)
                    .is_some_and(|p| p.iter().any(|(_, s)| s == "blocked"));
                let is_holder = holder == Some(*id);
                if is_holder == blocked {
                    out.push(Violation::new(
                        ViolationKind::KeyHolderOrBlockedWrong,
                        format!(
                        "job {id} of ordering key {key:?}: holder {is_holder}, blocked {blocked}"
                    ),
                    ));
                }
            }
        }
        let mut blocked_per_queue: HashMap<String, i64> = HashMap::new();
        for member in &self.ord_blocked {
            let mut parts = member.splitn(3, '\n');
            let (key, seq, id) = (parts.next(), parts.next(), parts.next());
            let (Some(key), Some(seq), Some(id)) = (key, seq, id) else {
                out.push(Violation::new(
                    ViolationKind::BlockedMemberMalformed,
                    format!("malformed blocked member {member:?}"),
                ));
                continue;
            };
            if let Some(m) = self.jobs.get(id) {
                *blocked_per_queue.entry(m.queue.clone()).or_default() += 1;
                if m.ordering_key != key || seq.parse::<u64>().ok() != Some(m.seq) {
                    out.push(Violation::new(
                        ViolationKind::BlockedMemberMismatch,
                        format!("blocked member {member:?} disagrees with its record"),
                    ));
                }
            }
        }
        let queues: BTreeSet<&String> = blocked_per_queue
            .keys()
            .chain(self.ord_blocked_n.keys())
            .collect();
        for queue in queues {
            let counted = self.ord_blocked_n.get(queue).copied().unwrap_or(0);
            let actual = blocked_per_queue.get(queue).copied().unwrap_or(0);
            if counted != actual {
                out.push(Violation::new(
                    ViolationKind::BlockedCounterWrong,
                    format!("queue {queue:?}: blocked counter {counted}, but {actual} blocked"),
                ));
            }
        }
    }

    fn check_dedup(&self, out: &mut Vec<Violation>) {
        for (key, id) in &self.dedup {
            if self.dedup_ttl.contains_key(key) {
                continue;
            }
            match self.jobs.get(id) {
                Some(m) if m.dedup_key == *key && m.died_at == 0 => {}
                _ => out.push(Violation::new(
                    ViolationKind::DedupNotLive,
                    format!("dedup key {key:?} points to {id}, not a live job with that key"),
                )),
            }
        }
        for key in self.dedup_ttl.keys() {
            if !self.dedup.contains_key(key) {
                out.push(Violation::new(
                    ViolationKind::DedupTtlOrphan,
                    format!("dedup TTL for {key:?} without a dedup entry"),
                ));
            }
        }
    }
}

/// Snapshots `ns` and returns its broken invariants.
pub async fn check_namespace(client: &Client, ns: &str) -> Vec<String> {
    match Dump::take(client, ns).await {
        Ok(dump) => dump.violations(),
        Err(e) => vec![format!("could not snapshot the namespace: {e}")],
    }
}
