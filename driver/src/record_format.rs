//! The record format a namespace's producers write, and its marker
//! (`{ns}:record_format`): see [`RecordFormat`].

use std::sync::atomic::Ordering;
use std::sync::LazyLock;

use fred::interfaces::KeysInterface;
use fred::types::Value;

use crate::error::QueueError;
use crate::scripts::{text, Op};
use crate::RedisQueue;

/// The queue name the namespace-wide record scripts run on
/// (`lua/record_format.lua`, `lua/rewrite_records.lua`): they need a valid
/// one for their key list, and the marker and records are the namespace's.
pub(crate) const ANY_QUEUE: &str = "records";

/// The job record layout an enqueue writes: a format step beyond the
/// standard layout, gated by a marker in the namespace.
///
/// Every driver from this version on reads three job record layouts (all
/// defined in `lua/lib/job_record.lua`):
/// - the standard one, a msgpack array of 19 to 27 fields followed by the
///   payload;
/// - the compact one, the array a fresh job with no options but a name and
///   `max_attempts`, due at once, fits in (queue, sequence, enqueue time,
///   name, max_attempts: 17 bytes fewer, which puts the bench's waiting job
///   in a smaller allocator class, 16 bytes a job). A job's first lease
///   stores it in the standard layout, at about 8k Redis instructions more
///   than leasing a standard record (README, "Compact job records");
/// - the detached one, for a payload of at least the format's size: the
///   record holds the meta alone and the payload is kept in `{ns}:detached`
///   under the job's id. Redis's Lua hashes every byte of every string a
///   script makes; a standard record's payload becomes such a string about
///   six times between enqueue and ack, a detached one's twice, which takes
///   most of what a large payload costs Redis (README, "Large payloads").
///   It costs a hash entry more a job (about 140 bytes of Redis memory
///   measured), and a lone enqueue, claim or ack gains only from a few
///   KB, so smaller payloads stay in the standard layout.
///
/// Drivers before this version read neither compact nor detached records
/// and would misread them. So they are written only in a namespace whose
/// marker (`{ns}:record_format`) an operator set, once every driver on it is
/// of this version or later: [`RedisQueue::set_record_format`],
/// `redq record-format compact` or `redq record-format detached[:BYTES]`.
///
/// A handle reads the marker when it connects and writes its enqueues in
/// that format (a handle that sets it switches at once; others at their
/// next connect). A marker this version does not know refuses the
/// connection, so a later format step is safe against this version the
/// same way. Setting it back to standard is safe for this version and
/// later, which read every layout; a driver older than this version may
/// join again once the compact jobs already written have been leased (or
/// deleted) and the detached ones finished, or once
/// [`RedisQueue::rewrite_records`] has rewritten them in the standard
/// layout ([`RedisQueue::newer_records`] counts what is left).
///
/// The format applies to every job a handle creates after it connects:
/// [`RedisQueue::add`] and its batch, typed and gated forms, a schedule's
/// ticks and triggers, and the waiters a workflow's seal creates. Compact
/// records are an enqueue's alone: the other jobs are stored in the
/// standard layout (or detached).
///
/// [`RecordFormat::CompactDetached`] writes both: an enqueued job whose
/// payload is the format's size or more is stored detached, a smaller one
/// compact when it fits the compact record, whole otherwise. A namespace
/// with many small waiting jobs and some large ones keeps the memory of
/// the first and the server's CPU on the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordFormat {
    /// The array of 19 to 27 fields every redq version reads.
    #[default]
    Standard,
    /// The compact record for fresh jobs that fit it; drivers before this
    /// version cannot read it.
    Compact,
    /// Payloads of `min_bytes` or more kept apart from their records
    /// (1 to [`RecordFormat::MAX_DETACH_FROM`] bytes); drivers before this
    /// version cannot read them.
    Detached {
        /// The smallest payload stored apart, in bytes.
        min_bytes: u32,
    },
    /// Both: payloads of `min_bytes` or more kept apart, and the enqueued
    /// jobs below that size that fit the compact record stored compact;
    /// drivers before this version cannot read either.
    CompactDetached {
        /// The smallest payload stored apart, in bytes.
        min_bytes: u32,
    },
}

impl RecordFormat {
    /// The size `detached` alone stands for: 4 KB. A worker's processing
    /// gains from about 2 KB end to end and nothing at 1 KB, and a lone
    /// enqueue or claim breaks even only at 2 to 4 KB (docs/performance.md,
    /// rounds twenty-seven to twenty-nine). A detaching handle's acks go to
    /// the ack script's variant `detached`, which costs about what an ack
    /// of whole records does from 1 KB on.
    pub const DEFAULT_DETACH_FROM: u32 = 4096;
    /// The largest size a detached format takes: the largest payload
    /// limit an enqueue takes (`lua/enqueue.lua`, `ARGV[3]`).
    pub const MAX_DETACH_FROM: u32 = 1 << 30;

    /// What [`RecordFormat::parse`] accepts, in words.
    pub const ACCEPTED: &'static str = "standard, compact, detached, detached:<bytes>, \
         compact+detached or compact+detached:<bytes> (<bytes> 1 to 1073741824)";

    /// Its name, as the marker, `redq record-format` and `-o json` spell
    /// it: `standard`, `compact`, `detached:<bytes>` or
    /// `compact+detached:<bytes>`.
    pub fn name(self) -> String {
        match self {
            RecordFormat::Standard => "standard".into(),
            RecordFormat::Compact => "compact".into(),
            RecordFormat::Detached { min_bytes } => format!("detached:{min_bytes}"),
            RecordFormat::CompactDetached { min_bytes } => {
                format!("compact+detached:{min_bytes}")
            }
        }
    }

    /// The format named `name`: `standard`, `compact`, `detached` (from
    /// [`RecordFormat::DEFAULT_DETACH_FROM`] bytes), `detached:<bytes>`,
    /// and the last two after `compact+`.
    pub fn parse(name: &str) -> Result<RecordFormat, QueueError> {
        let refused = || QueueError::invalid("record format", name, Self::ACCEPTED);
        let (compact, detached) = match name {
            "standard" => return Ok(RecordFormat::Standard),
            "compact" => return Ok(RecordFormat::Compact),
            other => match other.strip_prefix("compact+") {
                Some(rest) => (true, rest),
                None => (false, other),
            },
        };
        let min_bytes = match detached {
            "detached" => Self::DEFAULT_DETACH_FROM,
            other => match other.strip_prefix("detached:").map(str::parse::<u32>) {
                Some(Ok(min_bytes)) if (1..=Self::MAX_DETACH_FROM).contains(&min_bytes) => {
                    min_bytes
                }
                _ => return Err(refused()),
            },
        };
        Ok(if compact {
            RecordFormat::CompactDetached { min_bytes }
        } else {
            RecordFormat::Detached { min_bytes }
        })
    }

    /// The smallest payload this format stores detached, if it detaches.
    pub fn detach_from(self) -> Option<u32> {
        match self {
            RecordFormat::Detached { min_bytes } | RecordFormat::CompactDetached { min_bytes } => {
                Some(min_bytes)
            }
            RecordFormat::Standard | RecordFormat::Compact => None,
        }
    }

    /// What enqueue.lua takes as its `ARGV[7]`, and the scripts that create
    /// jobs one at a time (schedule_fire, schedule_trigger, gate_seal) last.
    pub(crate) fn wire(self) -> Value {
        static STANDARD: LazyLock<Value> = LazyLock::new(|| Value::from(""));
        static COMPACT: LazyLock<Value> = LazyLock::new(|| Value::from("compact"));
        match self {
            RecordFormat::Standard => STANDARD.clone(),
            RecordFormat::Compact => COMPACT.clone(),
            RecordFormat::Detached { .. } | RecordFormat::CompactDetached { .. } => {
                Value::from(self.name())
            }
        }
    }

    /// The format as one number, for the handle's atomic (0 standard,
    /// 1 compact, 1 + min_bytes detached, and that with
    /// [`COMPACT_DETACHED_BIT`] for compact and detached).
    pub(crate) fn to_bits(self) -> u64 {
        match self {
            RecordFormat::Standard => 0,
            RecordFormat::Compact => 1,
            RecordFormat::Detached { min_bytes } => 1 + u64::from(min_bytes),
            RecordFormat::CompactDetached { min_bytes } => {
                COMPACT_DETACHED_BIT | (1 + u64::from(min_bytes))
            }
        }
    }

    /// The format [`RecordFormat::to_bits`] made `bits`.
    pub(crate) fn from_bits(bits: u64) -> RecordFormat {
        let size = |n: u64| u32::try_from(n - 1).unwrap_or(u32::MAX);
        match bits {
            0 => RecordFormat::Standard,
            1 => RecordFormat::Compact,
            n if n & COMPACT_DETACHED_BIT != 0 => RecordFormat::CompactDetached {
                min_bytes: size(n & !COMPACT_DETACHED_BIT),
            },
            n => RecordFormat::Detached { min_bytes: size(n) },
        }
    }
}

/// The bit of [`RecordFormat::to_bits`] that marks compact and detached:
/// above every size a detached format takes.
const COMPACT_DETACHED_BIT: u64 = 1 << 40;

impl std::fmt::Display for RecordFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
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
             of redq cannot read (it reads standard, compact, detached:<bytes> and \
             compact+detached:<bytes>); upgrade redq, or use another namespace"
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
        RecordFormat::from_bits(self.inner.record_format.load(Ordering::Relaxed))
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
    /// [`RecordFormat::Compact`] or [`RecordFormat::Detached`] only once no
    /// driver older than this version uses the namespace.
    pub async fn set_record_format(&self, format: RecordFormat) -> Result<(), QueueError> {
        // One script sets the marker and records who changed it
        // (`record_format_set`, with the format it replaced).
        let args = vec![text("set"), text(format.name())];
        let code = self.run(Op::RecordFormat, ANY_QUEUE, args).await?;
        crate::codes::record_format_changed(&code)?;
        self.inner
            .record_format
            .store(format.to_bits(), Ordering::Relaxed);
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
            err.contains("\"v9\"")
                && err.contains("standard, compact, detached:<bytes> and compact+detached"),
            "{err}"
        );
        assert_eq!(
            from_marker(Some("detached:4096".into()), "ns").unwrap(),
            RecordFormat::Detached { min_bytes: 4096 }
        );
        assert_eq!(
            RecordFormat::parse("compact").unwrap(),
            RecordFormat::Compact
        );
        let err = RecordFormat::parse("tiny").unwrap_err().to_string();
        assert!(err.contains("standard, compact, detached"), "{err}");
    }

    #[test]
    fn compact_and_detached_reads_with_its_size_and_keeps_both_apart_from_either() {
        let both = |min_bytes| RecordFormat::CompactDetached { min_bytes };
        assert_eq!(
            RecordFormat::parse("compact+detached").unwrap(),
            both(RecordFormat::DEFAULT_DETACH_FROM)
        );
        assert_eq!(
            RecordFormat::parse("compact+detached:2048").unwrap(),
            both(2048)
        );
        assert_eq!(both(300).name(), "compact+detached:300");
        assert_eq!(both(300).detach_from(), Some(300));
        assert_eq!(RecordFormat::Compact.detach_from(), None);
        assert_eq!(
            from_marker(Some("compact+detached:64".into()), "ns").unwrap(),
            both(64)
        );
        for bad in [
            "compact+detached:0",
            "compact+",
            "compact+compact",
            "detached+compact",
            "compact+detached:1073741825",
        ] {
            let err = RecordFormat::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(bad) && err.contains("compact+detached:<bytes>"),
                "{bad}: {err}"
            );
        }
        for format in [both(1), both(RecordFormat::MAX_DETACH_FROM), both(4096)] {
            assert_eq!(RecordFormat::from_bits(format.to_bits()), format);
            assert_eq!(RecordFormat::parse(&format.name()).unwrap(), format);
        }
        assert_ne!(
            RecordFormat::from_bits(both(5).to_bits()),
            RecordFormat::Detached { min_bytes: 5 }
        );
    }

    #[test]
    fn a_detached_format_reads_with_its_size_and_refuses_sizes_outside_its_range() {
        let detached = |min_bytes| RecordFormat::Detached { min_bytes };
        assert_eq!(
            RecordFormat::parse("detached").unwrap(),
            detached(RecordFormat::DEFAULT_DETACH_FROM)
        );
        assert_eq!(RecordFormat::parse("detached:1").unwrap(), detached(1));
        assert_eq!(detached(300).name(), "detached:300");
        for bad in [
            "detached:0",
            "detached:",
            "detached:-5",
            "detached:1073741825",
            "detached:1k",
        ] {
            let err = RecordFormat::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(bad) && err.contains("1 to 1073741824"),
                "{bad}: {err}"
            );
        }
        for format in [
            RecordFormat::Standard,
            RecordFormat::Compact,
            detached(1),
            detached(RecordFormat::MAX_DETACH_FROM),
        ] {
            assert_eq!(RecordFormat::from_bits(format.to_bits()), format);
            assert_eq!(RecordFormat::parse(&format.name()).unwrap(), format);
        }
    }
}
