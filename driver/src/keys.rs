//! Every Redis key name redq uses, built here and nowhere else.
//!
//! One namespace is one hash tag, `{ns}`, so every key of a namespace lives in
//! one Redis Cluster slot and each script touches a single slot.
//!
//! | key | type | contents |
//! |---|---|---|
//! | `{ns}:jobs` | hash | job id → job record: msgpack meta (queue, priority, attempts, lease, error…) followed by the payload JSON |
//! | `{ns}:q:<queue>:fifo` | list | due jobs enqueued with priority 0 and no ordering key, in enqueue order (the common case: a list entry costs a quarter of a zset entry) |
//! | `{ns}:q:<queue>:waiting` | zset | every other due job; score orders by priority, then enqueue order. Claims take the merge of this and `fifo` |
//! | `{ns}:q:<queue>:scheduled` | zset | delayed jobs and retries; score = due time (ms) |
//! | `{ns}:q:<queue>:leased` | zset | claimed jobs; score = lease expiry (ms) |
//! | `{ns}:q:<queue>:dead` | zset | dead letters; score = died at (ms) |
//! | `{ns}:q:<queue>:stats` | hash | `p<bucket>` / `f<bucket>` processed / failed per 5 s bucket; expires when idle |
//! | `{ns}:dedup` | hash | dedup key → job id |
//! | `{ns}:dedup:ttl` | zset | dedup key → expiry (TTL-mode keys) |
//! | `{ns}:ord:active` | hash | ordering key → the job holding it |
//! | `{ns}:ord:blocked` | zset | lex members `key\nseq\nid`: jobs queued behind a holder |
//! | `{ns}:ord:ready` | zset | lex members `queue\nseq\nid`: successors released to a queue |
//! | `{ns}:ord:blocked:n` | hash | queue → how many of its jobs are blocked |
//! | `{ns}:events` | stream | capped feed of dead-letter events |
//! | `{ns}:seq` | string | enqueue sequence (FIFO within a priority) |
//! | `{ns}:lease:seq` | string | lease id generator: the fencing token |
//! | `{ns}:queues` | set | every queue name enqueued to |
//! | `{ns}:paused` | set | paused queues |
//! | `{ns}:q:<queue>:parked` | string | the one worker parked on the queue for hand-offs (token, identity, lease, capacity, handed); expires with the park |
//! | `{ns}:kept` | hash | job id → kept record of a finished (completed or cancelled) job, with its result |
//! | `{ns}:q:<queue>:completed` | zset | kept completed jobs of the queue; score = finished at (ms) |
//! | `{ns}:q:<queue>:cancelled` | zset | kept cancelled jobs of the queue; score = cancelled at (ms) |
//! | `{ns}:tombstones` | hash | job id → `"<c\|x> <ms>"`: completed or cancelled, and when; once its kept record is trimmed, or for a cancel in a queue that keeps nothing |
//! | `{ns}:tombstones:at` | zset | job id → when its tombstone expires (trim order) |
//! | `{ns}:retention` | hash | queue → its retention policy `"max_count max_age_ms max_bytes tombstone_ms"`; `<queue>:bytes` → bytes its kept jobs are charged; `dead\n<queue>` → its dead-letter bound `"max_count max_age_ms"` ([`crate::kept::dead_bound`]) |
//! | `{ns}:progress` | hash | job id → the job's latest progress (JSON text), until it leaves for good ([`crate::notes`]) |
//! | `{ns}:logs` | hash | job id → the job's last log lines, each ended by `\n`, oldest first (at most 100 lines, 16 KiB) |
//! | `{ns}:limits` | hash | queue → its limits `"qc qr qp kc kr kp"` (queue-wide concurrency, rate max, rate per ms; the same for each limit key; 0 = none); `<queue>\n<key>` → that limit key's override `"c r p"` (`crate::flow`) |
//! | `{ns}:q:<queue>:lim` | hash | per limit key of the queue: `u\n<key>` leased, `h\n<key>` held, `p\n<key>` pushed back until (ms); `p\n` the queue's own push-back |
//! | `{ns}:q:<queue>:lim_starts` | zset | lex members `key\nms\nlease`: starts recorded while a rate applies (key `""` for the queue-wide rate), kept for the rate's interval |
//! | `{ns}:q:<queue>:lim_held` | zset | lex members `key\nscore\nid`: due jobs held back by their limit key, in claim order per key |
//! | `{ns}:q:<queue>:lim_ready` | zset | limit key → waiting score of its best held job: the keys with held jobs and room now |
//! | `{ns}:q:<queue>:lim_wake` | zset | limit key → when it may have room again (its rate window or push-back) |
//! | `{ns}:q:<queue>:metrics` | hash | wait and run time histograms and outcome counts per job name: totals `t\|<name>`, rollups `s<slot>\|<name>` (5 s × 192), `m<slot>\|<name>` (1 min × 1440), `h<slot>\|<name>` (1 h × 2160); `#` and `names`, the at most 100 names admitted (`crate::metrics`) |
//! | `{ns}:wf:gates` | hash | gate id → gate record (msgpack: kind, state, counts, first failure, label, waiters; `lua/lib/gate_record.lua`): a batch, a job's dependencies or a tree (`crate::workflow`) |
//! | `{ns}:wf:members` | zset | lex members `gate\nid`: the jobs a gate counts |
//! | `{ns}:wf:outcomes` | hash | `gate\nid` → how a member finished: `c<result>` completed, `d<error>` dead, `x` cancelled, `r` deleted |
//! | `{ns}:wf:of` | zset | lex members `id\ngate`: the gates a job joined after its creation (as a dependency) |
//! | `{ns}:wf:awaiting` | zset | lex members `queue\nid`: jobs waiting on a gate (undecided, or held for an operator) |
//! | `{ns}:wf:awaiting:n` | hash | queue → how many of its jobs are in `wf:awaiting` |
//! | `{ns}:wf:expire` | zset | gate id → when its data is deleted (ms); also the order gates are listed in |
//! | `{ns}:workers` | zset | worker id → last heartbeat (ms); live while younger than its TTL |
//! | `{ns}:workers:info` | hash | worker id → JSON record (host, pid, queues, totals, state) |
//! | `{ns}:workers:gone` | zset | worker id → last heartbeat of a lost worker (silent past its TTL), listed as gone for `GONE_KEPT` |
//! | `{ns}:wake` | pub/sub channel | a queue name, published when it gets due work |
//! | `{ns}:wake:finished` | pub/sub channel | ids (space-separated) finished by one ack or cancel call of a queue that keeps jobs |
//! | `{ns}:wake:holder:<node>:<instance>` | pub/sub channel | `"<job id> <lease id>"`: a job this holder leases was cancelled |
//! | `{ns}:wake:<token>` | pub/sub channel | jobs handed to the worker parked with that token (msgpack `[id, payload, meta]`), then `fence <park number>` when it unparks |
//! | `{ns}:schedules` | hash | schedule name → msgpack schedule record (queue, cron, time zone, payload, options, paused, last run) |
//! | `{ns}:schedules:next` | zset | schedule name → next run (ms); absent while paused or once ended |

use std::sync::LazyLock;

/// Key names of one namespace.
#[derive(Debug, Clone)]
pub struct Keys {
    tag: String,
    /// `{ns}:wake`, sent with every enqueue: built once, not per call.
    wake: String,
}

/// The keys a script call is given, in the order its header lists them; for
/// a queue script, a queue's whole list ([`Keys::queue`]) and then any keys
/// of the script's own, of which `crate::scripts` sends the script's own
/// subset (`lua/README.md`, "Keys"). Held in the client's wire form: built
/// once per queue, cloned per call by reference count rather than
/// re-allocated.
#[derive(Debug, Clone)]
pub struct QueueKeys(pub Vec<fred::types::Key>);

impl From<Vec<String>> for QueueKeys {
    fn from(names: Vec<String>) -> Self {
        QueueKeys(names.into_iter().map(fred::types::Key::from).collect())
    }
}

/// The queue keys scripts name as `K.<name>`, each with its pattern
/// (`{ns}:q:Q:fifo`), in the order `lua/lib/keys.lua` declares them, one a
/// line (`--   K.<name>  <pattern>  <type>  <contents>`): that file is the
/// one list, read here rather than written twice.
static QUEUE_KEYS: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
    include_str!("../lua/lib/keys.lua")
        .lines()
        .filter_map(|line| line.strip_prefix("--   K."))
        .map(|declared| {
            let mut words = declared.split_whitespace();
            let name = words.next().unwrap_or_default();
            let pattern = words.next().unwrap_or_default();
            (name, pattern)
        })
        .collect()
});

/// The queue key names of `lua/lib/keys.lua`, in its order.
pub fn queue_key_names() -> impl Iterator<Item = &'static str> {
    QUEUE_KEYS.iter().map(|(name, _)| *name)
}

/// Where queue key `name` is in [`Keys::queue`]'s list (`None`: no such key).
pub fn queue_key_position(name: &str) -> Option<usize> {
    QUEUE_KEYS.iter().position(|(n, _)| *n == name)
}

/// How many keys [`Keys::queue`] lists; a queue script's own keys follow them.
pub fn queue_key_total() -> usize {
    QUEUE_KEYS.len()
}

impl Keys {
    /// Keys of `namespace` (already validated).
    pub fn new(namespace: &str) -> Self {
        let tag = format!("{{{namespace}}}");
        Keys {
            wake: format!("{tag}:wake"),
            tag,
        }
    }

    fn key(&self, suffix: &str) -> String {
        format!("{}:{suffix}", self.tag)
    }

    /// `{ns}:jobs`
    pub fn jobs(&self) -> String {
        self.key("jobs")
    }
    /// `{ns}:payloads`, where payloads lived before the job record carried
    /// them: only looked for, to refuse a namespace in that layout.
    pub fn earlier_payloads(&self) -> String {
        self.key("payloads")
    }
    /// `{ns}:detached`: the payloads of detached job records
    /// (`crate::record_format`), by job id.
    pub fn detached(&self) -> String {
        self.key("detached")
    }
    /// `{ns}:record_format`: the record format the namespace's producers
    /// write (`crate::record_format`); absent = the standard one.
    pub fn record_format(&self) -> String {
        self.key("record_format")
    }
    /// `{ns}:sharded_as`: `"<n> <base>"` on each namespace of a
    /// [`ShardedQueue`](crate::ShardedQueue) of `n` shards, as its
    /// producers and workers last connected it (`crate::shards`).
    pub fn sharded_as(&self) -> String {
        self.key("sharded_as")
    }
    /// `{ns}:kept`: job id → kept record of a finished job.
    pub fn kept(&self) -> String {
        self.key("kept")
    }
    /// `{ns}:tombstones`: job id → tombstone of a finished job.
    pub fn tombstones(&self) -> String {
        self.key("tombstones")
    }
    /// `{ns}:tombstones:at`: job id → when its tombstone expires (unix ms).
    pub fn tombstones_at(&self) -> String {
        self.key("tombstones:at")
    }
    /// `{ns}:retention`: queue → its retention policy, `<queue>:bytes` →
    /// what its kept jobs are charged.
    pub fn retention(&self) -> String {
        self.key("retention")
    }
    /// `{ns}:progress`: job id → its latest progress (`crate::notes`).
    pub fn progress(&self) -> String {
        self.key("progress")
    }
    /// `{ns}:logs`: job id → its log lines (`crate::notes`).
    pub fn logs(&self) -> String {
        self.key("logs")
    }
    /// `{ns}:wf:of`: lex members `id\ngate`, the gates a job joined after
    /// its creation (`crate::workflow`).
    pub fn workflow_joined(&self) -> String {
        self.key("wf:of")
    }
    /// `{ns}:limits`: each queue's limits and its limit keys' overrides.
    pub fn limits(&self) -> String {
        self.key("limits")
    }

    /// `{ns}:queues`: every queue name ever enqueued to.
    pub fn queues(&self) -> String {
        self.key("queues")
    }
    /// `{ns}:paused`
    pub fn paused(&self) -> String {
        self.key("paused")
    }
    /// `{ns}:events`: every event but the traffic's.
    pub fn events(&self) -> String {
        self.key("events")
    }
    /// `{ns}:events:traffic`: the `enqueued` and `completed` events, kept
    /// apart so that their flood never trims the others away.
    pub fn traffic(&self) -> String {
        self.key("events:traffic")
    }
    /// `{ns}:wake`, the pub/sub channel that wakes idle workers.
    pub fn wake_channel(&self) -> String {
        self.wake.clone()
    }
    /// `{ns}:workers` and `{ns}:workers:info`, the worker registry.
    pub fn workers(&self) -> QueueKeys {
        QueueKeys::from(vec![
            self.key("workers"),
            self.key("workers:info"),
            self.key("workers:gone"),
        ])
    }
    /// The registry keys and `{ns}:events`, where a heartbeat writes who
    /// joined, left or was lost (`lua/worker_beat.lua`).
    pub fn worker_beat(&self) -> QueueKeys {
        QueueKeys::from(vec![
            self.key("workers"),
            self.key("workers:info"),
            self.events(),
            self.key("workers:gone"),
        ])
    }
    /// The keys of `lua/worker_control.lua`: the event stream.
    pub fn worker_control(&self) -> QueueKeys {
        QueueKeys::from(vec![self.events()])
    }
    /// `{ns}:q:<queue>:stats`
    pub fn stats(&self, queue: &str) -> String {
        self.key(&format!("q:{queue}:stats"))
    }
    /// `{ns}:q:<queue>:metrics`: wait/run histograms and outcome counts (`crate::metrics`).
    pub fn metrics(&self, queue: &str) -> String {
        self.key(&format!("q:{queue}:metrics"))
    }

    /// Every queue key of `lua/lib/keys.lua`, in its order, for one queue
    /// (already validated). A queue script receives those of them it names
    /// (`crate::scripts` picks them by [`queue_key_position`]), followed by
    /// any keys of its own that come after this list.
    pub fn queue(&self, queue: &str) -> QueueKeys {
        QueueKeys::from(
            QUEUE_KEYS
                .iter()
                .map(|(_, pattern)| self.queue_key(pattern, queue))
                .collect::<Vec<_>>(),
        )
    }

    /// The key a `lua/lib/keys.lua` pattern names for `queue`:
    /// `{ns}:dedup` or `{ns}:q:Q:fifo`.
    fn queue_key(&self, pattern: &str, queue: &str) -> String {
        let suffix = pattern
            .strip_prefix("{ns}:")
            .expect("every queue key pattern starts with {ns}: (a unit test reads them all)");
        match suffix.strip_prefix("q:Q:") {
            Some(part) => self.key(&format!("q:{queue}:{part}")),
            None => self.key(suffix),
        }
    }

    /// `{ns}:schedules`: schedule name → schedule record.
    pub fn schedules(&self) -> String {
        self.key("schedules")
    }
    /// `{ns}:schedules:next`: schedule name → next run (unix ms).
    pub fn schedules_next(&self) -> String {
        self.key("schedules:next")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored layout: the key each name of `lua/lib/keys.lua` stands
    /// for may never move (existing data lives there), so it is pinned here.
    #[test]
    fn each_queue_key_name_stands_for_the_key_it_always_has() {
        let keys = Keys::new("shop");
        let listed: Vec<(&str, String)> = queue_key_names()
            .zip(keys.queue("emails").0)
            .map(|(name, key)| (name, key.as_str().expect("utf-8 key").to_owned()))
            .collect();
        let q = |part: &str| format!("{{shop}}:q:emails:{part}");
        let ns = |part: &str| format!("{{shop}}:{part}");
        let expected = vec![
            ("jobs", ns("jobs")),
            ("fifo", q("fifo")),
            ("waiting", q("waiting")),
            ("scheduled", q("scheduled")),
            ("leased", q("leased")),
            ("dead", q("dead")),
            ("stats", q("stats")),
            ("dedup", ns("dedup")),
            ("dedup_ttl", ns("dedup:ttl")),
            ("ord_active", ns("ord:active")),
            ("ord_blocked", ns("ord:blocked")),
            ("ord_ready", ns("ord:ready")),
            ("ord_blocked_n", ns("ord:blocked:n")),
            ("events", ns("events")),
            ("seq", ns("seq")),
            ("lease_seq", ns("lease:seq")),
            ("queues", ns("queues")),
            ("paused", ns("paused")),
            ("parked", q("parked")),
            ("kept", ns("kept")),
            ("completed", q("completed")),
            ("cancelled", q("cancelled")),
            ("tombstones", ns("tombstones")),
            ("tombstones_at", ns("tombstones:at")),
            ("retention", ns("retention")),
            ("progress", ns("progress")),
            ("logs", ns("logs")),
            ("limits", ns("limits")),
            ("lim", q("lim")),
            ("lim_starts", q("lim_starts")),
            ("lim_held", q("lim_held")),
            ("lim_ready", q("lim_ready")),
            ("lim_wake", q("lim_wake")),
            ("metrics", q("metrics")),
            ("wf_gates", ns("wf:gates")),
            ("wf_members", ns("wf:members")),
            ("wf_outcomes", ns("wf:outcomes")),
            ("wf_of", ns("wf:of")),
            ("wf_awaiting", ns("wf:awaiting")),
            ("wf_awaiting_n", ns("wf:awaiting:n")),
            ("wf_expire", ns("wf:expire")),
            ("detached", ns("detached")),
            ("record_format", ns("record_format")),
            ("traffic", ns("events:traffic")),
        ];
        let expected: Vec<(&str, String)> = expected;
        assert_eq!(listed, expected);
        assert_eq!(queue_key_total(), expected.len());
        assert_eq!(queue_key_position("waiting"), Some(2));
        assert_eq!(queue_key_position("wating"), None);
        // The named accessors agree with the list.
        let named = |name: &str| listed[queue_key_position(name).unwrap()].1.clone();
        assert_eq!(named("jobs"), keys.jobs());
        assert_eq!(named("kept"), keys.kept());
        assert_eq!(named("tombstones_at"), keys.tombstones_at());
        assert_eq!(named("retention"), keys.retention());
        assert_eq!(named("limits"), keys.limits());
        assert_eq!(named("events"), keys.events());
        assert_eq!(named("stats"), keys.stats("emails"));
        assert_eq!(named("metrics"), keys.metrics("emails"));
        assert_eq!(named("wf_of"), keys.workflow_joined());
        assert_eq!(named("detached"), keys.detached());
        assert_eq!(named("record_format"), keys.record_format());
        assert_eq!(named("traffic"), keys.traffic());
    }

    #[test]
    fn every_key_carries_the_namespace_hash_tag() {
        let keys = Keys::new("shop");
        for key in keys.queue("emails").0 {
            let key = key.as_str().expect("utf-8 key");
            assert!(key.starts_with("{shop}:"), "{key}");
        }
        assert_eq!(
            keys.queue("emails").0[2].as_str(),
            Some("{shop}:q:emails:waiting")
        );
    }
}
