//! Redis CPU across a timed section, over every server that holds one of
//! the bench's namespaces: one for a plain run, one to S for `--shards S`
//! (on a cluster, the primaries serving the shards' slots; on one server,
//! that server once, however many shards it holds).

use std::collections::BTreeMap;

use redq::{RedisQueue, ServerStats};
use serde_json::{json, Map, Value};

use super::cases::round;

/// Each namespace's server figures at the start (`None`: unreadable then).
pub(super) struct RedisCpu {
    before: Vec<Option<ServerStats>>,
}

impl RedisCpu {
    pub(super) async fn start(queues: &[RedisQueue]) -> RedisCpu {
        let mut before = Vec::with_capacity(queues.len());
        for queue in queues {
            before.push(queue.server_stats().await.ok());
        }
        RedisCpu { before }
    }

    /// Adds `redis_cpu_s` and `redis_cpu_us_per_job` for `jobs`, and with
    /// more than one namespace `redis_servers`, the servers counted. Adds
    /// nothing when a server could not be read, or restarted meanwhile (its
    /// figures start again from zero): a partial sum would pass for a whole.
    pub(super) async fn finish(
        self,
        queues: &[RedisQueue],
        jobs: usize,
        out: &mut Map<String, Value>,
    ) {
        let mut used_by_server = BTreeMap::new();
        for (queue, before) in queues.iter().zip(self.before) {
            let (Some(before), Ok(after)) = (before, queue.server_stats().await) else {
                return;
            };
            if before.run_id != after.run_id {
                return;
            }
            used_by_server.insert(after.run_id.clone(), cpu_s(&after) - cpu_s(&before));
        }
        let used: f64 = used_by_server.values().sum();
        out.insert("redis_cpu_s".into(), json!(round(used)));
        out.insert(
            "redis_cpu_us_per_job".into(),
            json!(round(used * 1e6 / jobs as f64)),
        );
        if queues.len() > 1 {
            out.insert("redis_servers".into(), json!(used_by_server.len()));
        }
    }
}

fn cpu_s(stats: &ServerStats) -> f64 {
    stats.used_cpu_user_s + stats.used_cpu_sys_s
}
