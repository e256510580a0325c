//! The driver over deployments of several servers: Redis Cluster (with
//! failover), Sentinel, and a queue sharded over independent servers.

mod cluster;
mod cluster_failover;
mod sentinel;
mod sharded;
mod sharded_worker;
