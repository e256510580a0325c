//! Losing a reply for real, with no mock: Redis closes a connection whose
//! reply outgrows `client-output-buffer-limit`, after the command ran. A
//! command with a large reply (a claim of a large job) thus runs and its
//! caller never hears of it, while small replies go through.

use crate::server::RedisServer;

impl RedisServer {
    /// From now on, a normal client's connection is closed as soon as a
    /// reply of more than `bytes` waits for it (`Some`), or never (`None`,
    /// Redis's default).
    pub async fn lose_replies_over(&self, bytes: Option<u64>) {
        let limit = match bytes {
            Some(bytes) => format!("normal {bytes} {bytes} 0"),
            None => "normal 0 0 0".to_owned(),
        };
        self.cmd(&["CONFIG", "SET", "client-output-buffer-limit", &limit])
            .await;
    }
}
