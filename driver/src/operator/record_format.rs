//! The namespace's record format marker (`crate::record_format`), read and
//! set over every shard.

use super::Operator;
use crate::{QueueError, RecordFormat};

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
}
