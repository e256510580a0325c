//! Taking a namespace's compact and detached job records back to the
//! standard layout (`lua/rewrite_records.lua`), and counting them: the way
//! back from [`RecordFormat`]'s opt-in formats for an operator who must let
//! a driver older than them join the namespace again (a rollback), without
//! waiting for every such job to finish.
//!
//! Both walk the namespace's jobs hash one bounded HSCAN step a call, as a
//! search does, so neither holds Redis for long however many jobs wait.

use serde::Serialize;

use crate::record_format::ANY_QUEUE;
use crate::scripts::{num, reply, text, Op};
use crate::{QueueError, RecordFormat, RedisQueue};

/// Records one walk step asks HSCAN for (its COUNT).
const WALK_STEP: u64 = 500;

/// The detached payloads, in bytes, one rewrite call joins back to their
/// records at most (it always takes one): Redis's Lua hashes every byte of
/// every string it makes, about 12.5k instructions a KB: a call of 4 MB of
/// 4 KB payloads took Redis 14 ms at most (docs/performance.md, round
/// thirty-two).
const PAYLOAD_BUDGET: u64 = 4 * 1024 * 1024;

/// The most job ids one rewrite call takes (the script's bound).
const IDS_A_CALL: usize = 1000;

/// The records in a namespace that a driver older than the compact and
/// detached formats cannot read ([`RecordFormat`]), by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NewerRecords {
    /// Compact records: always fresh, waiting jobs.
    pub compact: u64,
    /// Detached records of jobs not leased.
    pub detached: u64,
    /// Detached records of leased jobs. A rewrite leaves them (their
    /// workers may still read the payload apart); they go when their jobs
    /// finish, or a later rewrite takes them once their leases are over.
    pub leased_detached: u64,
}

impl NewerRecords {
    /// Every record an older driver cannot read: none means one may join.
    pub fn total(&self) -> u64 {
        self.compact + self.detached + self.leased_detached
    }

    pub(crate) fn add(&mut self, other: NewerRecords) {
        self.compact += other.compact;
        self.detached += other.detached;
        self.leased_detached += other.leased_detached;
    }
}

/// What [`RedisQueue::rewrite_records`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RecordsRewritten {
    /// Compact records rewritten in the standard layout.
    pub compact: u64,
    /// Detached records rewritten with their payloads joined back.
    pub detached: u64,
    /// Detached records of leased jobs left as they are (see
    /// [`NewerRecords::leased_detached`]): run the rewrite again once their
    /// jobs have finished or their leases ended.
    pub left_leased: u64,
}

impl RecordsRewritten {
    pub(crate) fn add(&mut self, other: RecordsRewritten) {
        self.compact += other.compact;
        self.detached += other.detached;
        self.left_leased += other.left_leased;
    }
}

/// A rewrite is refused while the namespace's record `format` is not
/// standard: its producers would go on writing what it takes away.
pub(crate) fn refuse_unless_standard(format: RecordFormat) -> Result<(), QueueError> {
    if format == RecordFormat::Standard {
        return Ok(());
    }
    Err(QueueError::invalid(
        "record format for a rewrite",
        format.name(),
        "a rewrite needs the standard format: set it first (redq record-format standard), or \
         producers go on writing records an older driver cannot read",
    ))
}

/// One walk step's reply: where the next starts, what it met, and (in a
/// rewrite) the unleased detached records it met, by id.
struct WalkStep {
    next: String,
    met: NewerRecords,
    detached_ids: Vec<String>,
}

impl RedisQueue {
    /// Count the records of this namespace that a driver older than the
    /// compact and detached formats cannot read. Reads every record's first
    /// bytes in Redis (one bounded step a call, no payload sent back);
    /// jobs added or finished meanwhile may or may not be counted.
    pub async fn newer_records(&self) -> Result<NewerRecords, QueueError> {
        let mut total = NewerRecords::default();
        let mut cursor = "0".to_owned();
        loop {
            let step = self.walk_step("count", &cursor).await?;
            total.add(step.met);
            if step.next == "0" {
                return Ok(total);
            }
            cursor = step.next;
        }
    }

    /// Rewrite this namespace's compact and detached records in the
    /// standard layout, so that a driver older than those formats can read
    /// every job (a rollback). Every reader of this version sees the same
    /// jobs before and after: only their stored layout changes, never their
    /// state, lease or place.
    ///
    /// Refused while the namespace's record format is not
    /// [`RecordFormat::Standard`]: its producers would go on writing such
    /// records. Set it first; producers connected before switch at their
    /// next connect, so a record they write meanwhile may be missed (count
    /// with [`RedisQueue::newer_records`] afterwards). Detached records of
    /// leased jobs are left ([`RecordsRewritten::left_leased`]).
    pub async fn rewrite_records(&self) -> Result<RecordsRewritten, QueueError> {
        refuse_unless_standard(self.stored_record_format().await?)?;
        let mut done = RecordsRewritten::default();
        let mut cursor = "0".to_owned();
        loop {
            let step = self.walk_step("rewrite", &cursor).await?;
            done.compact += step.met.compact;
            done.left_leased += step.met.leased_detached;
            done.add(self.rewrite_detached(step.detached_ids).await?);
            if step.next == "0" {
                self.record_rewrite(done).await?;
                return Ok(done);
            }
            cursor = step.next;
        }
    }

    /// The `records_rewritten` event of a rewrite that found anything to
    /// do: who ran it and what it did, for an operator reading back an
    /// incident's events.
    async fn record_rewrite(&self, done: RecordsRewritten) -> Result<(), QueueError> {
        if done == RecordsRewritten::default() {
            return Ok(());
        }
        let args = vec![
            text("rewritten"),
            num(done.compact),
            num(done.detached),
            num(done.left_leased),
        ];
        let code = self.run(Op::RecordFormat, ANY_QUEUE, args).await?;
        crate::codes::record_format_changed(&code)?;
        Ok(())
    }

    async fn walk_step(&self, kind: &str, cursor: &str) -> Result<WalkStep, QueueError> {
        let args = vec![text(kind), text(cursor), num(WALK_STEP)];
        let items = reply::array(self.run(Op::RewriteRecords, ANY_QUEUE, args).await?)?;
        let short = || QueueError::Protocol("rewrite_records reply is short".into());
        let mut items = items.into_iter();
        let next = reply::text(items.next().ok_or_else(short)?)?;
        let mut counts = [0u64; 4];
        for count in &mut counts {
            *count = reply::int(&items.next().ok_or_else(short)?)?.max(0) as u64;
        }
        let [_examined, compact, detached, leased_detached] = counts;
        Ok(WalkStep {
            next,
            met: NewerRecords {
                compact,
                detached,
                leased_detached,
            },
            detached_ids: items.map(reply::text).collect::<Result<_, _>>()?,
        })
    }

    /// Rewrite the detached records of `ids`, in as many calls as their
    /// payloads' sizes take ([`PAYLOAD_BUDGET`] a call).
    async fn rewrite_detached(&self, ids: Vec<String>) -> Result<RecordsRewritten, QueueError> {
        let mut done = RecordsRewritten::default();
        let mut rest = &ids[..];
        while !rest.is_empty() {
            let mut args = vec![text("ids"), num(PAYLOAD_BUDGET)];
            args.extend(rest.iter().take(IDS_A_CALL).map(text));
            let items = reply::array(self.run(Op::RewriteRecords, ANY_QUEUE, args).await?)?;
            let taken = reply::count_at(&items, 0)? as usize;
            if taken == 0 || taken > rest.len().min(IDS_A_CALL) {
                return Err(QueueError::Protocol(format!(
                    "rewrite_records took {taken} of {} ids",
                    rest.len()
                )));
            }
            done.detached += reply::count_at(&items, 1)?;
            done.left_leased += reply::count_at(&items, 2)?;
            rest = &rest[taken..];
        }
        Ok(done)
    }
}
