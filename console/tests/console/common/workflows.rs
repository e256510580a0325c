//! Workflow fixtures: a batch half done with a dead delivery, a receipt
//! held because its charge died, a tree waiting for a thumbnail, and an
//! old batch whose callback was released; the batch's members page.

use redq::workflow::{
    Condition, GateKind, GateState, GateStatus, Member, MemberPage, MemberState, OnFailure, Waiter,
    WaiterDecision,
};
use redq::JobState;

use super::ago;

pub const BATCH: &str = "01JDQ9B0000000000000000001";
pub const RECEIPT: &str = "01JDQ9R0000000000000000002";
pub const ALBUM: &str = "01JDQ9T0000000000000000003";
pub const IMPORT: &str = "01JDQ9A0000000000000000004";
/// The delivery of the batch that died.
pub const DIED: &str = "01JDQ9M0000000000000000015";

fn waiter(
    id: &str,
    condition: Condition,
    on_failure: OnFailure,
    decision: WaiterDecision,
) -> Waiter {
    Waiter {
        id: id.into(),
        queue: "emails".into(),
        condition,
        on_failure,
        decision,
    }
}

fn gate(id: &str, kind: GateKind, state: GateState, created_ago: u64) -> GateStatus {
    GateStatus {
        id: id.into(),
        kind,
        state,
        created_at: ago(created_ago),
        sealed_at: Some(ago(created_ago - 1)),
        done_at: None,
        total: 0,
        pending: 0,
        succeeded: 0,
        failed: 0,
        first_failure: None,
        label: None,
        waiters: Vec::new(),
        waiter_count: 0,
    }
}

/// The Workflows screen's gates, newest activity first.
pub fn gates() -> Vec<GateStatus> {
    let mut receipt = gate(RECEIPT, GateKind::Dependencies, GateState::Done, 120);
    receipt.done_at = Some(ago(40));
    receipt.total = 1;
    receipt.failed = 1;
    receipt.first_failure =
        Some("01JDQ9C0000000000000000009 dead: card declined for cus_4: insufficient funds".into());
    receipt.waiters = vec![waiter(
        RECEIPT,
        Condition::AllSucceeded,
        OnFailure::Hold,
        WaiterDecision::Held,
    )];

    let mut batch = gate(BATCH, GateKind::Batch, GateState::Sealed, 300);
    batch.label = Some("order.created fan-out".into());
    batch.total = 6;
    batch.pending = 2;
    batch.succeeded = 3;
    batch.failed = 1;
    batch.first_failure = Some(format!(
        "{DIED} dead: HTTP 410 Gone: endpoint https://hooks.example.com/initech was removed"
    ));
    batch.waiters = vec![
        waiter(
            "01JDQ9W0000000000000000021",
            Condition::AllFinished,
            OnFailure::Cancel,
            WaiterDecision::Pending,
        ),
        waiter(
            "01JDQ9W0000000000000000022",
            Condition::AllSucceeded,
            OnFailure::Cancel,
            WaiterDecision::Pending,
        ),
    ];

    let mut album = gate(ALBUM, GateKind::Tree, GateState::Sealed, 600);
    album.total = 3;
    album.pending = 1;
    album.succeeded = 2;
    album.waiters = vec![waiter(
        ALBUM,
        Condition::AllSucceeded,
        OnFailure::DeadLetter,
        WaiterDecision::Pending,
    )];

    let mut import = gate(IMPORT, GateKind::Batch, GateState::Done, 7200);
    import.done_at = Some(ago(3600));
    import.label = Some("nightly import".into());
    import.total = 1000;
    import.succeeded = 1000;
    import.waiters = vec![waiter(
        "01JDQ9W0000000000000000031",
        Condition::AllFinished,
        OnFailure::Cancel,
        WaiterDecision::Released,
    )];

    let mut all = vec![receipt, batch, album, import];
    for g in &mut all {
        g.waiter_count = g.waiters.len();
    }
    all
}

/// The first page of the batch's members: three delivered (one with a
/// result), the dead one (its error carries an escape sequence), one
/// running, one waiting.
pub fn batch_members() -> MemberPage {
    let member = |n: u32, state: MemberState| Member {
        id: format!("01JDQ9M00000000000000000{n:02}"),
        queue: "webhooks".into(),
        state,
    };
    MemberPage {
        members: vec![
            member(11, MemberState::Completed(Some(serde_json::json!({"status": 200, "ms": 84})))),
            member(12, MemberState::Completed(None)),
            member(13, MemberState::Completed(Some(serde_json::json!({"status": 204})))),
            member(14, MemberState::Pending(JobState::Leased)),
            member(
                15,
                MemberState::Dead(
                    "HTTP 410 Gone: endpoint https://hooks.example.com/initech was removed \u{1b}[2J"
                        .into(),
                ),
            ),
            member(16, MemberState::Pending(JobState::Waiting)),
        ],
        next: None,
    }
}
