//! How a run ends badly, and its exit code: 1 when something failed
//! (including a refusal by `--read-only`), 2 when the command line was
//! wrong (clap's own usage errors exit 2 as well).

use redq::QueueError;

/// Why a pause fails while Redis is out of memory, and what to do.
pub const PAUSE_OUT_OF_MEMORY: &str = "Redis is out of memory (maxmemory reached, policy \
     noeviction) and refuses the write that marks a queue paused. Free memory first (let workers drain, purge dead letters with `redq dead purge QUEUE --yes`, \
     or raise maxmemory), then pause again. Resume works while Redis is out of memory.";

/// A failed run.
#[derive(Debug)]
pub enum Failure {
    /// The request itself was wrong: exit 2.
    Usage(String),
    /// It was understood but could not be done: exit 1.
    Failed(String),
}

impl Failure {
    /// The process exit code.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Failed(_) => 1,
        }
    }

    /// The message for stderr.
    pub fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Failed(m) => m,
        }
    }

    /// Pausing `queue` failed. Redis at `maxmemory` (policy `noeviction`)
    /// refuses the write that marks a queue paused (SADD may grow memory),
    /// while resume (SREM) still works: say so, and what to do.
    pub fn pause(queue: &str, e: QueueError) -> Failure {
        match e {
            QueueError::OutOfMemory => Failure::Failed(format!(
                "cannot pause {}: {}",
                crate::text::inert(queue),
                PAUSE_OUT_OF_MEMORY
            )),
            other => other.into(),
        }
    }

    /// A refusal because the console runs read-only.
    pub fn read_only(what: &str) -> Failure {
        Failure::Failed(format!(
            "refused: {what} changes Redis, and --read-only is set"
        ))
    }
}

impl From<QueueError> for Failure {
    fn from(e: QueueError) -> Failure {
        match e {
            QueueError::Invalid { .. } | QueueError::PayloadTooLarge { .. } => {
                Failure::Usage(e.to_string())
            }
            other => Failure::Failed(other.to_string()),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::Failed(format!("{e:#}"))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Failed(e.to_string())
    }
}
