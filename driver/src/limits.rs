//! Input rules, checked in Rust before anything reaches Redis.
//!
//! The scripts check the same bounds again (see `lua/lib/check.lua`), because a
//! script that errors after its first write leaves that write in place.

use std::time::Duration;

use crate::QueueError;

/// Longest queue name, in bytes.
pub const MAX_QUEUE_NAME: usize = 128;
/// Longest dedup or ordering key, in bytes.
pub const MAX_KEY_LEN: usize = 512;
/// Longest job type name, in bytes.
pub const MAX_JOB_NAME: usize = 256;
/// Longest job id accepted by the scripts, in bytes.
pub const MAX_ID_LEN: usize = 64;
/// Error texts are cut to this many bytes when recorded.
pub const MAX_ERROR_LEN: usize = 4096;
/// Longest reason an operator gives for dead-lettering a job, in bytes
/// (`lua/dead_letter_job.lua` cuts at the same length).
pub const MAX_REASON_LEN: usize = 1024;
/// Longest delay, lease, retry window or dedup TTL: ten years.
pub const MAX_DURATION: Duration = Duration::from_millis(315_360_000_000);
/// Most jobs one `claim` returns; a larger limit is served as this many.
pub const MAX_CLAIM: usize = 1000;
/// Most jobs sent to Redis in one enqueue script call; larger batches are
/// split into pipelined chunks of this size (each chunk atomic).
pub const ENQUEUE_CHUNK: usize = 1000;
/// Most dead letters touched by one requeue or delete script call.
pub const DEAD_BATCH: usize = 1000;
/// Latest accepted not-before time, in unix milliseconds (2^47).
pub const MAX_TIME_MS: u64 = 1 << 47;
/// Deepest accepted nesting of arrays and objects in a payload: serde_json
/// refuses to read back anything deeper (its recursion limit is 128), so a
/// deeper payload would come back from a claim as a string.
pub const MAX_PAYLOAD_DEPTH: usize = 127;

/// Most connections one handle keeps ([`crate::RedisQueueBuilder::pool_size`]).
pub const MAX_POOL_SIZE: usize = 64;
/// Largest payload limit a handle accepts
/// ([`crate::RedisQueueBuilder::payload_limit`]): Redis's own 512 MiB
/// string limit.
pub const MAX_PAYLOAD_LIMIT: usize = 512 * 1024 * 1024;

/// A connection pool of 1 to [`MAX_POOL_SIZE`].
pub fn check_pool_size(size: usize) -> Result<(), QueueError> {
    if size == 0 || size > MAX_POOL_SIZE {
        return Err(QueueError::invalid(
            "pool size",
            size.to_string(),
            format!("1 to {MAX_POOL_SIZE}"),
        ));
    }
    Ok(())
}

/// A payload limit of 1 byte to [`MAX_PAYLOAD_LIMIT`].
pub fn check_payload_limit(bytes: usize) -> Result<(), QueueError> {
    if bytes == 0 || bytes > MAX_PAYLOAD_LIMIT {
        return Err(QueueError::invalid(
            "payload limit",
            bytes.to_string(),
            "1 byte to 512 MiB",
        ));
    }
    Ok(())
}

/// Queue names become part of Redis key names: non-empty, bounded, and free
/// of the characters that would break the key layout or a cluster hash tag.
pub fn check_queue_name(name: &str) -> Result<(), QueueError> {
    let rule = "a queue name is 1 to 128 bytes without control characters or '{', '}', ':'";
    if name.is_empty() || name.len() > MAX_QUEUE_NAME {
        return Err(QueueError::invalid("queue name", name, rule));
    }
    if name
        .chars()
        .any(|c| c.is_control() || matches!(c, '{' | '}' | ':'))
    {
        return Err(QueueError::invalid("queue name", name, rule));
    }
    Ok(())
}

/// Namespaces form the hash tag of every key: same rule as queue names.
pub fn check_namespace(name: &str) -> Result<(), QueueError> {
    let rule = "a namespace is 1 to 128 bytes without control characters or '{', '}', ':'";
    if name.is_empty()
        || name.len() > MAX_QUEUE_NAME
        || name
            .chars()
            .any(|c| c.is_control() || matches!(c, '{' | '}' | ':'))
    {
        return Err(QueueError::invalid("namespace", name, rule));
    }
    Ok(())
}

/// Dedup and ordering keys, job names: bounded, no control characters
/// (the scripts use "\n" as a separator inside sorted-set members).
pub fn check_text(what: &'static str, value: &str, max: usize) -> Result<(), QueueError> {
    if value.is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(QueueError::invalid(
            what,
            value,
            format!("1 to {max} bytes without control characters"),
        ));
    }
    Ok(())
}

/// Job ids as accepted from callers (dead-letter operations, inspect).
pub fn check_id(id: &str) -> Result<(), QueueError> {
    check_text("job id", id, MAX_ID_LEN)
}

/// Durations sent to the scripts in whole milliseconds.
pub fn check_duration(what: &'static str, value: Duration) -> Result<u64, QueueError> {
    if value > MAX_DURATION {
        return Err(QueueError::invalid(
            what,
            crate::human::duration_text(value),
            "at most ten years",
        ));
    }
    Ok(value.as_millis() as u64)
}

/// Leases must be at least a millisecond.
pub fn check_lease(value: Duration) -> Result<u64, QueueError> {
    let ms = check_duration("lease", value)?;
    if ms == 0 {
        return Err(QueueError::invalid(
            "lease",
            format!("{value:?}"),
            "at least 1 ms",
        ));
    }
    Ok(ms)
}

/// How many jobs a `claim` of up to `limit` asks for. The seed promises "up
/// to `limit`", so a caller handing over its free capacity is never refused:
/// 0 asks for none (the caller returns an empty list without a round trip)
/// and a limit above [`MAX_CLAIM`] is served as [`MAX_CLAIM`] (fewer, as
/// "up to" allows).
pub fn claim_count(limit: usize) -> usize {
    limit.min(MAX_CLAIM)
}

/// Claim and page sizes.
pub fn check_limit(what: &'static str, value: usize, max: usize) -> Result<(), QueueError> {
    if value == 0 || value > max {
        return Err(QueueError::invalid(
            what,
            value.to_string(),
            format!("1 to {max}"),
        ));
    }
    Ok(())
}

/// Payloads must read back as they were written: nesting at most
/// [`MAX_PAYLOAD_DEPTH`] arrays and objects deep.
pub fn check_payload_depth(payload: &serde_json::Value) -> Result<(), QueueError> {
    use serde_json::Value;
    // Iterative, so a pathological payload cannot overflow our own stack.
    let mut stack = vec![(payload, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        let children = match value {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => continue,
        };
        if depth > MAX_PAYLOAD_DEPTH {
            return Err(QueueError::invalid(
                "payload",
                format!("nested more than {MAX_PAYLOAD_DEPTH} levels deep"),
                format!("JSON nested at most {MAX_PAYLOAD_DEPTH} arrays/objects deep"),
            ));
        }
        stack.reserve(children);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

/// Error texts are recorded cut to [`MAX_ERROR_LEN`] bytes on a char boundary.
pub fn cut_error(error: &str) -> &str {
    if error.len() <= MAX_ERROR_LEN {
        return error;
    }
    let mut end = MAX_ERROR_LEN;
    while !error.is_char_boundary(end) {
        end -= 1;
    }
    &error[..end]
}

/// A retry window in whole milliseconds (0 = none): when set, at least 1 ms
/// and at most ten years.
pub fn check_retry_window(window: Option<Duration>) -> Result<u64, QueueError> {
    match window {
        Some(window) if window.is_zero() => Err(QueueError::invalid(
            "retry window",
            "0s",
            "at least 1 ms (leave it unset for none)",
        )),
        Some(window) => check_duration("retry window", window),
        None => Ok(0),
    }
}
