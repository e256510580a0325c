//! Search over every shard: the shards are walked one after another, so
//! an operator cursor is the shard's index and that shard's cursor
//! (`"2:4711"`); with one namespace it is that namespace's own cursor.
//! Each call is still one bounded step on one shard (see
//! [`crate::search`]).

use super::Operator;
use crate::search::{SearchPage, SEARCH_START};
use crate::QueueError;

impl Operator {
    /// [`RedisQueue::search`](crate::RedisQueue::search) over every shard,
    /// one step a call: start from [`SEARCH_START`], then pass each page's
    /// `next` until it is `None`.
    pub async fn search(
        &self,
        queue: &str,
        needle: &str,
        cursor: &str,
    ) -> Result<SearchPage, QueueError> {
        if let [one] = self.shards() {
            return one.search(queue, needle, cursor).await;
        }
        let (index, shard_cursor) = split_cursor(cursor, self.shards().len())?;
        let mut page = self.shards()[index]
            .search(queue, needle, shard_cursor)
            .await?;
        page.next = match page.next.take() {
            Some(next) => Some(format!("{index}:{next}")),
            None if index + 1 < self.shards().len() => Some(format!("{}:0", index + 1)),
            None => None,
        };
        Ok(page)
    }
}

/// The shard index and that shard's cursor of an operator cursor.
fn split_cursor(cursor: &str, shards: usize) -> Result<(usize, &str), QueueError> {
    if cursor == SEARCH_START {
        return Ok((0, SEARCH_START));
    }
    let refused = || {
        QueueError::invalid(
            "search cursor",
            cursor,
            format!("the next cursor of an earlier search page (shard:cursor, shard below {shards}), or 0 to start"),
        )
    };
    let (index, rest) = cursor.split_once(':').ok_or_else(refused)?;
    let index: usize = index.parse().map_err(|_| refused())?;
    if index >= shards {
        return Err(refused());
    }
    Ok((index, rest))
}
