//! Test harness for running redq against real `redis-server` processes.
//!
//! Every test gets its own server ([`RedisServer`]) on a free loopback port
//! with a throwaway data directory, so tests can run in parallel, kill and
//! restart redis, or change its configuration without affecting each other.
//! Conditions are awaited with [`wait_until`] rather than fixed sleeps.
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use redq_tests::{unique_namespace, wait_until, RedisServer};
//!
//! let server = RedisServer::builder().appendonly_always().start();
//! let ns = unique_namespace("demo");
//! server.cmd(&["SET", &format!("{ns}:k"), "v"]).await;
//! wait_until(Duration::from_secs(5), "key to exist", async || {
//!     server.cmd(&["EXISTS", &format!("{ns}:k")]).await == fred::types::Value::Integer(1)
//! })
//! .await;
//! # }
//! ```

pub mod acl;
mod builder;
pub mod chaos;
mod client;
pub mod cluster;
pub mod events;
pub mod fixtures;
pub mod history;
pub mod jobs;
pub mod logs;
pub mod lua;
pub mod memory;
mod namespace;
mod port;
mod probe;
mod replies;
pub mod running;
mod server;
pub mod tls;
mod url;
mod wait;

pub use builder::RedisServerBuilder;
pub use client::{connect, SeenByServer, ServerClient};
pub use namespace::unique_namespace;
pub use server::RedisServer;
pub use wait::wait_until;
