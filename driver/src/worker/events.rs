//! The failed-job event (`JobFailed` in the seed).

use serde::Serialize;

/// Announced when a job reaches the dead-letter set. In process through
/// [`super::Worker::failures`]; across processes the scripts append the same
/// facts to the `{ns}:events` stream ([`crate::RedisQueue::events`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobFailed {
    /// The queue.
    pub queue: String,
    /// The job id.
    pub id: String,
    /// The job type name, if any.
    pub name: Option<String>,
    /// The error that ended it.
    pub error: String,
    /// Failed attempts recorded.
    pub attempts: u32,
}
