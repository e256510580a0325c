//! The record format a namespace's producers write, and its marker
//! (`{ns}:record_format`): see [`RecordFormat`].

use std::sync::atomic::Ordering;
use std::sync::LazyLock;

use fred::interfaces::KeysInterface;
use fred::types::Value;

use crate::error::QueueError;
use crate::RedisQueue;

/// The job record layout an enqueue writes: the one format step redq has
/// taken, gated by a marker in the namespace.
///
/// Every driver from this version on reads two job record layouts (both
/// defined in `lua/lib/job_record.lua`): the standard one, a msgpack array
/// of 19 to 27 fields, and the compact one, the array a fresh job with no
/// options but a name and `max_attempts`, due at once, fits in (queue,
/// sequence, enqueue time, name, max_attempts: 17 bytes fewer, which puts
/// the bench's waiting job in a smaller allocator class, 16 bytes a job).
/// A job's first lease stores it in the standard layout, at about 8k Redis
/// instructions more than leasing a standard record (README, "Compact job
/// records").
///
/// Drivers before this version read only the standard layout and would
/// misread a compact record. So compact records are written only in a
/// namespace whose marker (`{ns}:record_format` = `compact`) an operator
/// set, once every driver on it is of this version or later:
/// [`RedisQueue::set_record_format`], `redq record-format compact`.
///
/// A handle reads the marker when it connects and writes its enqueues in
/// that format (a handle that sets it switches at once; others at their
/// next connect). A marker this version does not know refuses the
/// connection, so a later format step is safe against this version the
/// same way. Setting it back to standard is safe for this version and
/// later, which read both layouts; a driver older than this version may
/// join again once the compact jobs already written have been leased (or
/// deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordFormat {
    /// The array of 19 to 27 fields every redq version reads.
    #[default]
    Standard,
    /// The compact record for fresh jobs that fit it; drivers before this
    /// version cannot read it.
    Compact,
}

impl RecordFormat {
    /// Its name, as the marker, `redq record-format` and `-o json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            RecordFormat::Standard => "standard",
            RecordFormat::Compact => "compact",
        }
    }

    /// The format named `name` (`standard` or `compact`).
    pub fn parse(name: &str) -> Result<RecordFormat, QueueError> {
        match name {
            "standard" => Ok(RecordFormat::Standard),
            "compact" => Ok(RecordFormat::Compact),
            other => Err(QueueError::invalid(
                "record format",
                other,
                "standard or compact",
            )),
        }
    }

    /// What enqueue.lua takes as its `ARGV[7]`, made once a process.
    pub(crate) fn wire(self) -> &'static Value {
        static STANDARD: LazyLock<Value> = LazyLock::new(|| Value::from(""));
        static COMPACT: LazyLock<Value> = LazyLock::new(|| Value::from("compact"));
        match self {
            RecordFormat::Standard => &STANDARD,
            RecordFormat::Compact => &COMPACT,
        }
    }
}

impl std::fmt::Display for RecordFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The format a namespace's marker names: absent is the standard one; a
/// value this version does not know is refused, naming what it found.
pub(crate) fn from_marker(
    marker: Option<String>,
    namespace: &str,
) -> Result<RecordFormat, QueueError> {
    let Some(name) = marker else {
        return Ok(RecordFormat::Standard);
    };
    RecordFormat::parse(&name).map_err(|_| {
        QueueError::Config(format!(
            "namespace {namespace:?} writes job records in format {name:?}, which this version \
             of redq cannot read (it reads standard and compact); upgrade redq, or use another \
             namespace"
        ))
    })
}

/// The format of `keys`' namespace at connect. A user without access to
/// the namespace gets the standard one: its first real command reports the
/// refusal, as `crate::layout` does.
pub(crate) async fn at_connect(
    pool: &fred::clients::Pool,
    keys: &crate::keys::Keys,
    namespace: &str,
    timeout: std::time::Duration,
) -> Result<RecordFormat, QueueError> {
    match pool.next().get(keys.record_format()).await {
        Ok(marker) => from_marker(marker, namespace),
        Err(e) if e.details().starts_with("NOPERM") => Ok(RecordFormat::Standard),
        Err(e) => Err(QueueError::from_redis(e, timeout)),
    }
}

impl RedisQueue {
    /// The record format this handle's enqueues write: the namespace's
    /// marker when it connected, or what it last set.
    pub fn record_format(&self) -> RecordFormat {
        if self.inner.compact_records.load(Ordering::Relaxed) {
            RecordFormat::Compact
        } else {
            RecordFormat::Standard
        }
    }

    /// The namespace's marker as it is now (another handle may have set it
    /// since this one connected).
    pub async fn stored_record_format(&self) -> Result<RecordFormat, QueueError> {
        let marker: Option<String> = self
            .client()
            .get(self.inner.keys.record_format())
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        from_marker(marker, &self.inner.namespace)
    }

    /// Set the namespace's record format ([`RecordFormat`]): this handle
    /// writes it from now on, others from their next connect. Set
    /// [`RecordFormat::Compact`] only once no driver older than this
    /// version uses the namespace.
    pub async fn set_record_format(&self, format: RecordFormat) -> Result<(), QueueError> {
        let key = self.inner.keys.record_format();
        let result: Result<(), _> = match format {
            RecordFormat::Standard => self.client().del(key).await,
            RecordFormat::Compact => {
                self.client()
                    .set(key, format.name(), None, None, false)
                    .await
            }
        };
        result.map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        self.inner
            .compact_records
            .store(format == RecordFormat::Compact, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_as_its_format_and_an_unknown_one_is_refused_by_name() {
        assert_eq!(from_marker(None, "ns").unwrap(), RecordFormat::Standard);
        assert_eq!(
            from_marker(Some("compact".into()), "ns").unwrap(),
            RecordFormat::Compact
        );
        let err = from_marker(Some("v9".into()), "ns")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"v9\"") && err.contains("standard and compact"),
            "{err}"
        );
        assert_eq!(
            RecordFormat::parse("compact").unwrap(),
            RecordFormat::Compact
        );
        let err = RecordFormat::parse("tiny").unwrap_err().to_string();
        assert!(err.contains("standard or compact"), "{err}");
    }
}
