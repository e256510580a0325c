//! The I/O side of the console's payload search (`state::search`): the
//! walk, one bounded driver step at a time (`Operator::search`, each a short
//! script run that never holds Redis for long), each step's matches sent as
//! it comes; and cancelling or deleting every match, in batches with
//! progress.

use futures::future::try_join_all;
use redq::search::SEARCH_START;
use redq::{CancelOutcome, IfLeased, QueueError};
use tokio::sync::mpsc;

use crate::aggregate::Target;
use crate::failure::describe;
use crate::tui::state::{plural, MatchChange, SearchRun, SearchStep, Update};

/// Matches changed at once: one batch of calls in flight, then progress.
pub const MATCH_BATCH: usize = 100;

/// Walk `search` to its end, sending each step; stops when the UI hangs up
/// (the caller drops this future to stop it earlier).
pub async fn walk(target: &Target, search: &SearchRun, updates: &mpsc::UnboundedSender<Update>) {
    let mut cursor = SEARCH_START.to_owned();
    loop {
        let step = target.search(&search.queue, &search.text, &cursor).await;
        let (sent, next) = match step {
            Ok(page) => {
                let next = page.next;
                let step = SearchStep {
                    run: search.run,
                    jobs: page.jobs,
                    examined: page.examined,
                    outcome: Ok(next.is_none()),
                };
                (step, next)
            }
            Err(e) => {
                let step = SearchStep {
                    run: search.run,
                    jobs: Vec::new(),
                    examined: 0,
                    outcome: Err(describe(&e)),
                };
                (step, None)
            }
        };
        if updates.send(Update::Search(sent)).is_err() {
            return;
        }
        match next {
            Some(next) => cursor = next,
            None => return,
        }
    }
}

/// Cancel or delete each of `ids`, a batch at a time, reporting progress;
/// the sentence the status line shows after.
pub async fn change_matches(
    target: &Target,
    change: MatchChange,
    ids: &[String],
    progress: impl Fn(u64, u64),
) -> Result<String, QueueError> {
    let total = ids.len() as u64;
    let (mut changed, mut gone, mut seen) = (0u64, 0u64, 0u64);
    progress(0, total);
    for batch in ids.chunks(MATCH_BATCH) {
        let outcomes = try_join_all(batch.iter().map(|id| change_one(target, change, id))).await?;
        for done in outcomes {
            if done {
                changed += 1;
            } else {
                gone += 1;
            }
        }
        seen += batch.len() as u64;
        progress(seen, total - seen);
    }
    let verb = match change {
        MatchChange::Cancel => "cancelled",
        MatchChange::Delete => "deleted",
    };
    let mut text = format!("{verb} {}", plural(changed as usize, "matching job"));
    if gone > 0 {
        text.push_str(&format!(" ({gone} had finished or gone since the search)"));
    }
    Ok(text)
}

/// Whether `id` was changed (false: it had finished or was gone).
async fn change_one(target: &Target, change: MatchChange, id: &str) -> Result<bool, QueueError> {
    match change {
        MatchChange::Cancel => Ok(matches!(
            target.cancel(id, super::source::CANCELLED_BY).await?,
            CancelOutcome::Cancelled { .. }
        )),
        MatchChange::Delete => match target.delete_job(id, IfLeased::VoidLease).await {
            Ok(()) => Ok(true),
            Err(QueueError::JobNotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        },
    }
}
