//! Reading gates of one namespace: a gate's status (O(1)), its members a
//! page at a time, and the list of gates.

use super::decode::{self, Fields};
use super::{GateStatus, MemberPage, MAX_GATES_PER_JOB, MAX_MEMBERS_PAGE};
use crate::codes::{self, GateFound};
use crate::limits;
use crate::scripts::{num, reply, text, Op};
use crate::{QueueError, RedisQueue};

/// The most gates one [`RedisQueue::gates`] call lists.
pub const MAX_GATES_PAGE: usize = 500;

/// The queue named in the gate scripts' ARGV when the call concerns no
/// queue in particular (reads): they touch only namespace-level keys.
pub(crate) const READ_QUEUE: &str = "workflows";

fn check_gate_id(id: &str) -> Result<(), QueueError> {
    limits::check_text("gate id", id, limits::MAX_ID_LEN)
}

impl RedisQueue {
    /// Gate `id`'s status and waiters, in O(1): a batch id, or the id of a
    /// job with dependencies or of a tree's parent. `None` when there is
    /// no such gate (never created, or deleted 24 hours after it finished).
    pub async fn gate(&self, id: &str) -> Result<Option<GateStatus>, QueueError> {
        check_gate_id(id)?;
        let items = reply::array(self.run(Op::GateGet, READ_QUEUE, vec![text(id)]).await?)?;
        let (found, rest) = codes::gate_found(items)?;
        if found == GateFound::NotFound {
            return Ok(None);
        }
        let mut fields = Fields::new(rest);
        let mut status = decode::status(id.to_owned(), &mut fields)?;
        decode::waiters(&mut status, &mut fields)?;
        Ok(Some(status))
    }

    /// Up to `count` (1 to [`MAX_MEMBERS_PAGE`]) members of gate `id` in id
    /// order, from `cursor` ("" for the start; then the page's `next`):
    /// pending ones with their live state, finished ones with their
    /// outcome (a completed one's result, a dead one's error).
    pub async fn gate_members(
        &self,
        id: &str,
        cursor: &str,
        count: usize,
    ) -> Result<MemberPage, QueueError> {
        check_gate_id(id)?;
        limits::check_limit("member page size", count, MAX_MEMBERS_PAGE)?;
        let args = vec![text(id), text(cursor), num(count as u64)];
        let items = reply::array(self.run(Op::GateMembers, READ_QUEUE, args).await?)?;
        let mut fields = Fields::new(items);
        let next = fields.text()?;
        let mut members = Vec::new();
        while !fields.is_empty() {
            members.push(decode::member(&mut fields)?);
        }
        Ok(MemberPage {
            members,
            next: (!next.is_empty()).then_some(next),
        })
    }

    /// The gates whose waiters wait on job `id` while it has not finished:
    /// the batch or tree it was created into, then the gates of the jobs
    /// that list it in [`NewJob::after`](crate::NewJob::after), in id
    /// order (at most [`MAX_GATES_PER_JOB`] in all). Empty for a job that
    /// finished (it counted there) or never was. One HGET-sized read of
    /// its record and one range read.
    pub async fn waited_on_by(&self, id: &str) -> Result<Vec<String>, QueueError> {
        use fred::interfaces::SortedSetsInterface;
        check_gate_id(id)?;
        let mut gates: Vec<String> = match self.inspect(id).await? {
            Some(record) => record.gate.into_iter().collect(),
            None => Vec::new(),
        };
        let key = self.inner.keys.workflow_joined();
        let joined: Vec<String> = self
            .client()
            .zrangebylex(
                &key,
                format!("[{id}\n"),
                format!("({id}\u{b}"),
                Some((0, MAX_GATES_PER_JOB as i64)),
            )
            .await
            .map_err(|e| QueueError::from_redis(e, self.inner.timeout))?;
        let prefix = format!("{id}\n");
        gates.extend(
            joined
                .into_iter()
                .filter_map(|entry| entry.strip_prefix(&prefix).map(str::to_owned)),
        );
        Ok(gates)
    }

    /// Gates by newest activity first, from `offset`, at most `count` (1 to
    /// [`MAX_GATES_PAGE`]): each one's status without its waiters
    /// ([`GateStatus::waiter_count`] says how many).
    pub async fn gates(&self, offset: u64, count: usize) -> Result<Vec<GateStatus>, QueueError> {
        limits::check_limit("gate page size", count, MAX_GATES_PAGE)?;
        let args = vec![num(offset), num(count as u64)];
        let items = reply::array(self.run(Op::GateList, READ_QUEUE, args).await?)?;
        let mut fields = Fields::new(items);
        let mut gates = Vec::new();
        while !fields.is_empty() {
            let id = fields.text()?;
            gates.push(decode::status(id, &mut fields)?);
        }
        Ok(gates)
    }
}
