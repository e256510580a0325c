//! Running Redis out of memory for real: `maxmemory` with `noeviction`
//! just above what the server uses, then filled by enqueues until Redis
//! refuses one.

use redq::{NewJob, QueueError, RedisQueue};
use serde_json::json;

use crate::server::RedisServer;

/// A server capped at 1 GiB with `noeviction` and `DEBUG` allowed: call
/// [`cap_memory`] on it once the clients that need to connect have.
pub fn capped_server() -> RedisServer {
    RedisServer::builder()
        .maxmemory(1 << 30)
        .enable_debug()
        .start()
}

/// `used_memory` from `INFO memory`.
pub async fn used_memory(server: &RedisServer) -> u64 {
    let info: String = server.cmd(&["INFO", "memory"]).await.convert().unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("INFO memory has used_memory")
}

/// Lower `maxmemory` to `headroom` bytes above what the server uses now.
pub async fn cap_memory(server: &RedisServer, headroom: u64) {
    let limit = used_memory(server).await + headroom;
    server
        .cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()])
        .await;
}

/// Keep Redis out of memory: lower `maxmemory` to `margin` bytes below
/// what it uses now, so every write that may grow memory is refused (not
/// only the large ones that no longer fit) until that much is freed.
pub async fn hold_out_of_memory(server: &RedisServer, margin: u64) {
    let limit = used_memory(server).await.saturating_sub(margin).max(1);
    server
        .cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()])
        .await;
}

/// A job of about `kib` KiB.
pub fn big_job(n: usize, kib: usize) -> NewJob {
    NewJob::new(json!({ "n": n, "pad": "x".repeat(kib * 1024) }))
}

/// Enqueue 64 KiB jobs into `name` until Redis refuses one with
/// [`QueueError::OutOfMemory`]; returns how many were created. Panics on
/// any other error, or if Redis never fills up.
pub async fn fill_until_out_of_memory(queue: &RedisQueue, name: &str) -> usize {
    for n in 0..1000 {
        match queue.add(name, big_job(n, 64)).await {
            Ok(_) => continue,
            Err(QueueError::OutOfMemory) => return n,
            Err(other) => panic!("expected OutOfMemory, got {other:?}"),
        }
    }
    panic!("redis never ran out of memory");
}
