//! Notes: what a running job reports about itself, its latest **progress**
//! (a serde value, the latest wins) and its **log lines** (appended,
//! bounded), kept beside the job in `{ns}:progress` and `{ns}:logs` until it
//! leaves for good, and shown by `redq jobs show` and the console's detail.
//!
//! A job under a [`Worker`](crate::worker::Worker) writes them with
//! [`JobCx::progress`](crate::worker::JobCx::progress) and
//! [`JobCx::log`](crate::worker::JobCx::log): they are buffered in the
//! context and ride the worker's next lease extension (its heartbeat, every
//! third of the lease: with the default 30 s lease, notes show within
//! about 10 s), and what is left rides the nack; the ack drops what is left
//! unsent, since acknowledged jobs' notes are deleted anyway, and so does a
//! job released at shutdown, or stopped because its lease was lost or it
//! was cancelled. So notes cost no round trip of their own. A flush costs,
//! inside the extension's script, one `HSET` for progress and one `HGET`
//! plus one `HSET` for lines (the log is rewritten whole, at most 16 KiB).
//! Callers without a worker send a [`NoteBatch`] with [`RedisQueue::note`]
//! (one round trip, fenced by the lease like an extension).
//!
//! Bounds, enforced by the scripts (`lua/lib/notes.lua`) and applied by
//! [`NoteBatch`] before sending: progress at most [`MAX_PROGRESS_BYTES`] of
//! JSON (refused, never cut); a line at most [`MAX_LINE_BYTES`] (cut at a
//! character boundary, a newline starts a new line); at most
//! [`MAX_LOG_LINES`] lines and [`MAX_LOG_BYTES`] bytes a job, the oldest
//! dropped first.
//!
//! Fencing: notes are written only under the current lease; a stale holder's
//! notes are refused with [`QueueError::LeaseLost`] and change nothing.
//!
//! Lifetime: notes survive a retry, a reclaim and a dead-letter (they help
//! diagnose it), and are deleted when the job leaves for good (ack, cancel,
//! `delete_job`, delete of a dead letter, purge). The job record's `noted`
//! flag says a job has notes, so an ack of a job without any issues no note
//! command: the worker tells the ack
//! ([`Completion::noted`](crate::kept::Completion::noted)), knowing from the
//! claimed record ([`Job::noted`](crate::Job::noted)) and from its own
//! flushes.
//!
//! [`MemoryQueue`](crate::MemoryQueue) keeps no notes: its jobs' notes are
//! dropped.

use std::collections::VecDeque;

use fred::interfaces::HashesInterface;
use serde::Serialize;

use crate::handle::RedisQueue;
use crate::scripts::{num, text};
use crate::scripts::{reply, Op};
use crate::{limits, Lease, QueueError};

/// The most bytes of JSON a job's progress may take.
pub const MAX_PROGRESS_BYTES: usize = 4096;
/// The most bytes one log line keeps; a longer one is cut.
pub const MAX_LINE_BYTES: usize = 1024;
/// The most log lines kept a job; older ones are dropped.
pub const MAX_LOG_LINES: usize = 100;
/// The most bytes of log lines kept a job (their newlines included); older
/// lines are dropped.
pub const MAX_LOG_BYTES: usize = 16384;

/// Notes not sent yet: the latest progress and the lines logged since the
/// last send, bounded as the stored log is (so a job logging in a tight loop
/// holds at most [`MAX_LOG_BYTES`] here).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteBatch {
    progress: Option<String>,
    lines: VecDeque<String>,
    /// Bytes of `lines`, a newline each included.
    bytes: usize,
}

impl NoteBatch {
    /// Nothing to send.
    pub fn new() -> NoteBatch {
        NoteBatch::default()
    }

    /// Set the progress (replacing any unsent one). Refused, never cut, when
    /// its JSON is over [`MAX_PROGRESS_BYTES`].
    pub fn progress<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), QueueError> {
        let json = serde_json::to_string(value).map_err(|e| QueueError::Invalid {
            what: "job progress",
            value: String::new(),
            rule: format!("a value that serializes to JSON ({e})"),
        })?;
        if json.len() > MAX_PROGRESS_BYTES {
            return Err(QueueError::Invalid {
                what: "job progress",
                value: format!("{} bytes of JSON", json.len()),
                rule: format!("at most {MAX_PROGRESS_BYTES} bytes of JSON"),
            });
        }
        self.progress = Some(json);
        Ok(())
    }

    /// Append a log line: each newline in `line` starts another, each is cut
    /// to [`MAX_LINE_BYTES`], and the oldest unsent lines go beyond
    /// [`MAX_LOG_LINES`] or [`MAX_LOG_BYTES`] (the store would drop them).
    pub fn log(&mut self, line: &str) {
        for line in line.split('\n') {
            let line = cut(line.strip_suffix('\r').unwrap_or(line), MAX_LINE_BYTES);
            self.bytes += line.len() + 1;
            self.lines.push_back(line.to_owned());
        }
        while self.lines.len() > MAX_LOG_LINES || self.bytes > MAX_LOG_BYTES {
            let dropped = self.lines.pop_front().expect("over a bound, so not empty");
            self.bytes -= dropped.len() + 1;
        }
    }

    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.progress.is_none() && self.lines.is_empty()
    }

    /// Take what is to be sent, leaving the batch empty.
    pub fn take(&mut self) -> NoteBatch {
        std::mem::take(self)
    }

    /// Put back notes a send did not deliver, before anything added since
    /// (the newer progress wins).
    pub fn restore(&mut self, mut unsent: NoteBatch) {
        if self.progress.is_some() {
            unsent.progress = self.progress.take();
        }
        for line in self.lines.drain(..) {
            unsent.bytes += line.len() + 1;
            unsent.lines.push_back(line);
        }
        while unsent.lines.len() > MAX_LOG_LINES || unsent.bytes > MAX_LOG_BYTES {
            let dropped = unsent
                .lines
                .pop_front()
                .expect("over a bound, so not empty");
            unsent.bytes -= dropped.len() + 1;
        }
        *self = unsent;
    }

    /// The scripts' two note arguments: the progress JSON ('' = unchanged)
    /// and the lines, each ended by a newline ('' = none).
    pub(crate) fn args(&self) -> [fred::types::Value; 2] {
        let mut lines = String::with_capacity(self.bytes);
        for line in &self.lines {
            lines.push_str(line);
            lines.push('\n');
        }
        [text(self.progress.clone().unwrap_or_default()), text(lines)]
    }
}

/// `line` cut to at most `max` bytes at a character boundary.
fn cut(line: &str, max: usize) -> &str {
    if line.len() <= max {
        return line;
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// A job's stored notes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct JobNotes {
    /// The latest progress, if the job reported any.
    pub progress: Option<serde_json::Value>,
    /// Its log lines, oldest first (at most [`MAX_LOG_LINES`]).
    pub log: Vec<String>,
}

impl JobNotes {
    /// True when the job has no notes.
    pub fn is_empty(&self) -> bool {
        self.progress.is_none() && self.log.is_empty()
    }
}

impl RedisQueue {
    /// Record `notes` for the job held under `lease`, without extending the
    /// lease (one round trip; a worker's notes ride its heartbeat instead).
    /// Fenced: [`QueueError::LeaseLost`] when the lease is not current,
    /// [`QueueError::JobCancelled`] when an operator cancelled the job; then
    /// nothing is written. Acknowledge such a job with
    /// [`Completion::noted`](crate::kept::Completion::noted) so its notes
    /// go with it.
    pub async fn note(&self, lease: &Lease, notes: &NoteBatch) -> Result<(), QueueError> {
        limits::check_id(&lease.id)?;
        if notes.is_empty() {
            return Ok(());
        }
        let [progress, lines] = notes.args();
        let args = vec![
            text(lease.id.as_str()),
            num(lease.lease_id),
            progress,
            lines,
        ];
        let items = reply::array(self.run(Op::Note, &lease.queue, args).await?)?;
        crate::codes::noted(&items, lease)
    }

    /// The notes of job `id` (empty when it has none, or does not exist).
    /// Two `HGET`s sent together.
    pub async fn notes(&self, id: &str) -> Result<JobNotes, QueueError> {
        limits::check_id(id)?;
        let keys = &self.inner.keys;
        let (progress, log): (Result<Option<String>, _>, Result<Option<String>, _>) = tokio::join!(
            self.client().hget(keys.progress(), id),
            self.client().hget(keys.logs(), id),
        );
        let timeout = self.inner.timeout;
        let progress = progress.map_err(|e| QueueError::from_redis(e, timeout))?;
        let log = log.map_err(|e| QueueError::from_redis(e, timeout))?;
        Ok(JobNotes {
            progress: progress
                .map(|json| serde_json::from_str(&json).unwrap_or(serde_json::Value::String(json))),
            log: log
                .map(|log| log.lines().map(str::to_owned).collect())
                .unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_keeps_the_latest_progress_and_bounded_lines() {
        let mut batch = NoteBatch::new();
        assert!(batch.is_empty());
        batch.progress(&1).unwrap();
        batch.progress(&serde_json::json!({"done": 2})).unwrap();
        for i in 0..(MAX_LOG_LINES + 5) {
            batch.log(&format!("line {i}"));
        }
        assert_eq!(batch.progress.as_deref(), Some(r#"{"done":2}"#));
        assert_eq!(batch.lines.len(), MAX_LOG_LINES);
        assert_eq!(batch.lines.front().map(String::as_str), Some("line 5"));
        let big = "x".repeat(MAX_PROGRESS_BYTES);
        assert!(batch.progress(&big).is_err(), "its JSON has quotes: over");
    }

    #[test]
    fn lines_are_split_cut_at_a_character_and_bounded_in_bytes() {
        let mut batch = NoteBatch::new();
        batch.log("one\r\ntwo");
        assert_eq!(batch.lines, ["one", "two"]);
        let long = "é".repeat(MAX_LINE_BYTES); // two bytes each
        batch.log(&long);
        let cut = batch.lines.back().unwrap();
        assert_eq!(cut.len(), MAX_LINE_BYTES);
        assert!(cut.chars().all(|c| c == 'é'));
        for _ in 0..40 {
            batch.log(&long);
        }
        assert!(batch.bytes <= MAX_LOG_BYTES);
        assert_eq!(
            batch.bytes,
            batch.lines.iter().map(|l| l.len() + 1).sum::<usize>()
        );
    }

    #[test]
    fn restored_notes_go_before_newer_ones_and_newer_progress_wins() {
        let mut batch = NoteBatch::new();
        batch.progress(&1).unwrap();
        batch.log("a");
        let unsent = batch.take();
        assert!(batch.is_empty());
        batch.progress(&2).unwrap();
        batch.log("b");
        batch.restore(unsent);
        assert_eq!(batch.progress.as_deref(), Some("2"));
        assert_eq!(batch.lines, ["a", "b"]);
    }
}
