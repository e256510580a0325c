//! The namespace's record format marker (`crate::record_format`), read and
//! set over every shard.

use super::Operator;
use crate::record_rewrite::refuse_unless_standard;
use crate::{NewerRecords, QueueError, RecordFormat, RecordsRewritten};

impl Operator {
    /// The record format the namespace's marker names (every shard's: they
    /// are set together). Shards that disagree (a set that failed half way)
    /// are reported as an error naming both; set the format again.
    pub async fn record_format(&self) -> Result<RecordFormat, QueueError> {
        let mut found: Option<RecordFormat> = None;
        for shard in self.shards() {
            let format = shard.stored_record_format().await?;
            match found {
                Some(earlier) if earlier != format => {
                    return Err(QueueError::Config(format!(
                        "the shards' record formats differ ({earlier} and {format}); \
                         set the format again"
                    )))
                }
                _ => found = Some(format),
            }
        }
        Ok(found.unwrap_or_default())
    }

    /// Set the record format on every shard: the handles of this operator
    /// write it at once, producers from their next connect. Set
    /// [`RecordFormat::Compact`] only when no driver older than this
    /// version uses the namespace (see [`RecordFormat`]).
    pub async fn set_record_format(&self, format: RecordFormat) -> Result<(), QueueError> {
        for shard in self.shards() {
            shard.set_record_format(format).await?;
        }
        Ok(())
    }

    /// [`RedisQueue::newer_records`](crate::RedisQueue::newer_records)
    /// over every shard, summed.
    pub async fn newer_records(&self) -> Result<NewerRecords, QueueError> {
        let mut total = NewerRecords::default();
        for shard in self.shards() {
            total.add(shard.newer_records().await?);
        }
        Ok(total)
    }

    /// [`RedisQueue::rewrite_records`](crate::RedisQueue::rewrite_records)
    /// on every shard, one after another, summed. Refused, before any shard
    /// is rewritten, while the record format is not standard.
    pub async fn rewrite_records(&self) -> Result<RecordsRewritten, QueueError> {
        refuse_unless_standard(self.record_format().await?)?;
        let mut done = RecordsRewritten::default();
        for shard in self.shards() {
            done.add(shard.rewrite_records().await?);
        }
        Ok(done)
    }
}
