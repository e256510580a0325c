//! The attempt count a requeue restarts dead letters at, and the bound it
//! stays below: the console's requeue question and `redq dead requeue
//! --attempts` refuse the same counts, in the same words.
//!
//! The driver accepts any count (a job whose max attempts is not above it
//! gets one more try); people are refused those counts instead, because an
//! operator who asks for 2 of 3 expects the job to get one more try because
//! of the 2, and a count at or above the maximum would quietly give it one
//! all the same.

use redq::JobRecord;

use crate::aggregate::Target;
use crate::failure::Failure;

/// Dead letters read a call while looking for the bound of `--all`.
const PAGE: usize = 500;

/// The lowest max attempts among `jobs`, unlimited ones (0) aside: the
/// bound a requeue's attempt count stays below.
pub fn lowest_max_attempts<'a>(jobs: impl IntoIterator<Item = &'a JobRecord>) -> Option<u32> {
    jobs.into_iter()
        .map(|j| j.max_attempts)
        .filter(|&max| max > 0)
        .min()
}

/// Why `attempts` is refused for jobs whose lowest max attempts is `below`.
pub fn refusal(attempts: u32, below: u32) -> String {
    let accepted = match below {
        1 => "only 0 is accepted".to_owned(),
        _ => format!("accepted are 0 to {}", below - 1),
    };
    format!("attempts {attempts} refused: {accepted} (max attempts is {below})")
}

/// Which dead letters of a queue a requeue takes.
pub enum Requeued<'a> {
    /// These ids (ones that are not dead letters are reported, not refused).
    Ids(&'a [String]),
    /// Every dead letter of the queue.
    All,
}

/// Refuses `attempts` before anything is written when it is at or above
/// the max attempts of a dead letter the requeue takes. 0 is always
/// accepted and reads nothing; otherwise the jobs are read first (every
/// dead letter of the queue for `--all`, a page at a time).
pub async fn refuse_at_or_above_max(
    target: &Target,
    queue: &str,
    which: Requeued<'_>,
    attempts: u32,
) -> Result<(), Failure> {
    if attempts == 0 {
        return Ok(());
    }
    let mut jobs = Vec::new();
    match which {
        Requeued::Ids(ids) => {
            for id in ids {
                if let Some(job) = target.inspect(id).await? {
                    jobs.push(job);
                }
            }
        }
        // Shard by shard: the merged listing stops at its window (10 000
        // rows), and re-reads every shard from its start for each page.
        Requeued::All => {
            for shard in target.shards() {
                let mut offset = 0;
                loop {
                    let page = shard.dead_letters(queue, offset, PAGE).await?;
                    let read = page.items.len();
                    jobs.extend(page.items);
                    offset += read as u64;
                    if read < PAGE || offset >= page.total {
                        break;
                    }
                }
            }
        }
    }
    let dead = jobs
        .iter()
        .filter(|j| j.queue == queue && j.state == redq::JobState::Dead);
    match lowest_max_attempts(dead) {
        Some(below) if attempts >= below => Err(Failure::Usage(format!(
            "{}; nothing was requeued",
            refusal(attempts, below)
        ))),
        _ => Ok(()),
    }
}
