//! A job's notes (progress, log lines: [`crate::notes`]) from the shard
//! that holds them.

use super::Operator;
use crate::{JobNotes, QueueError};

impl Operator {
    /// The notes of job `id`, from the first shard that has any (a job id is
    /// on one shard); empty when it has none. One round trip a shard asked.
    pub async fn notes(&self, id: &str) -> Result<JobNotes, QueueError> {
        for shard in self.shards() {
            let notes = shard.notes(id).await?;
            if !notes.is_empty() {
                return Ok(notes);
            }
        }
        Ok(JobNotes::default())
    }
}
