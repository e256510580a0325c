//! Reading gates through the operator (over one namespace or the shards:
//! a batch or tree lives on one shard, where the operator finds it).

use futures::future::try_join_all;
use redq::QueueError;

use super::{Gate, MemberPage, MEMBERS_PAGE};
use crate::aggregate::Target;
use crate::tui::state::{GatePage, GateQuery};

/// How many gates the Workflows screen lists (newest activity first); each
/// is read again for its waiters, so the screen costs this many O(1) reads
/// a refresh, no more.
pub const SCREEN_GATES: usize = 50;

/// Gate `id` with its waiters, if any shard has it.
pub async fn gate(queue: &Target, id: &str) -> Result<Option<Gate>, QueueError> {
    queue.gate(id).await
}

/// A page of gate `id`'s members from `cursor` ("" for the first); empty
/// when there is no such gate.
pub async fn members(
    queue: &Target,
    id: &str,
    cursor: &str,
    count: usize,
) -> Result<MemberPage, QueueError> {
    queue.gate_members(id, cursor, count).await
}

/// Gates newest activity first, from `offset`, at most `count`, each with
/// its waiters (a listing gives only their count, so each gate with
/// waiters is read once more, in O(1)).
pub async fn gates(queue: &Target, offset: u64, count: usize) -> Result<Vec<Gate>, QueueError> {
    let listed = queue.gates(offset, count).await?;
    try_join_all(listed.into_iter().map(|listed| async move {
        if listed.waiter_count == 0 {
            return Ok(listed);
        }
        // Gone between the two reads: the listing's counts stand.
        Ok(queue.gate(&listed.id).await?.unwrap_or(listed))
    }))
    .await
}

/// The Workflows screen's gates.
pub async fn newest(queue: &Target) -> Result<Vec<Gate>, QueueError> {
    gates(queue, 0, SCREEN_GATES).await
}

/// The gate view's gate and members page.
pub async fn page(queue: &Target, query: &GateQuery) -> Result<GatePage, QueueError> {
    let (gate, members) = tokio::join!(
        queue.gate(&query.id),
        queue.gate_members(&query.id, &query.cursor, MEMBERS_PAGE)
    );
    Ok(GatePage {
        query: query.clone(),
        gate: gate?,
        members: members?,
    })
}

/// What links a job to gates: the one it waits on, and those it counts
/// toward (whose waiters wait on it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Links {
    /// Whether the job is in its queue (any state).
    pub found: bool,
    /// Its state, when found.
    pub state: Option<String>,
    /// The gate it waits (or waited) on.
    pub awaits: Option<String>,
    /// The gates it counts toward until it finishes: the batch or tree it
    /// was created into, and the gates of jobs that list it in `after`.
    pub member_of: Vec<String>,
}

/// Job `id`'s links to gates, from its record and the gates it joined.
pub async fn links(queue: &Target, id: &str) -> Result<Links, QueueError> {
    let Some(record) = queue.inspect(id).await? else {
        return Ok(Links::default());
    };
    Ok(Links {
        found: true,
        state: Some(record.state.as_str().to_owned()),
        awaits: record.awaits,
        member_of: queue.waited_on_by(id).await?,
    })
}
