//! `redq events --follow`: the events as they come, and what an operator
//! watching them needs to know about Redis meanwhile.
//!
//! The events are read by blocking reads (`XREAD BLOCK`, one connection per
//! shard and stream); a read waiting on a Redis that died only waits, so
//! silence on stdout says nothing by itself. Beside the reads, Redis is
//! asked once a second whether it answers (one `XREVRANGE … COUNT 1` a
//! shard, given up after 2 s), and stderr says, one line each (stdout keeps
//! only events):
//!
//! - when it stops answering: `Redis at URL is not answering since
//!   HH:MM:SS UTC (why); still following` (the URL without its password);
//! - when it answers again: `Redis answers again after 8s`;
//! - then, if it restarted (its `run_id` changed) or lost the stream (the
//!   last event shown is no longer kept: the stream's newest entry is older
//!   than it, or its oldest newer), which: `Redis restarted …; the event
//!   history is still there`, or `the event history restarted: Redis lost
//!   its data, events before HH:MM:SS UTC are gone …`. A stream that now
//!   ends before the last event shown is read again from its start, so
//!   that the new history's events are printed although their ids are
//!   lower (a server whose clock is behind the old one's).
//!
//! A read that fails on its own (a restart within a second, between two
//! questions) is checked the same way at the next answer.

use std::time::{Duration, Instant, SystemTime};

use futures::stream::{BoxStream, SelectAll};
use futures::StreamExt;
use redq::events::{EventCursor, EventStream};
use redq::{QueueError, QueueEvent};

use crate::aggregate::Target;
use crate::cli::Connection;
use crate::clock;
use crate::failure::{is_unreachable, read_failed, Failure, ReadFailure};

/// How long `--follow` waits after a failed read before reading again
/// from where it was (the driver reconnects meanwhile).
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How often Redis is asked whether it answers.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// How long a question (or a fresh connection telling why there is no
/// answer) may take before Redis counts as not answering.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Where one shard's stream was last read.
struct Feed {
    shard: usize,
    stream: EventStream,
    /// The id of the last event read from it (or where it started).
    position: String,
    /// The id of the last event of it printed: not `position`, which may
    /// be where `--from now` started or an event `--kind` left out.
    shown: Option<String>,
}

/// Every feed's events, each tagged with its feed's index.
type Reads = SelectAll<BoxStream<'static, (usize, Result<QueueEvent, QueueError>)>>;

/// What the watcher knows about Redis between two questions.
struct Watch {
    /// The URL without its password.
    url: String,
    /// Each shard's server's `run_id`, once read.
    run_ids: Vec<Option<String>>,
    /// Since when Redis has not answered (the wall clock, and the instant).
    down: Option<(SystemTime, Instant)>,
    /// When the outage the next check follows began, if there was one.
    outage: Option<SystemTime>,
    /// A read failed: whether Redis restarted is checked at the next answer.
    check: bool,
}

/// Follow `streams` of every shard of `target` from `from`, calling
/// `print` for each event, until Ctrl-C.
pub async fn follow(
    connection: &Connection,
    target: &Target,
    streams: &[EventStream],
    from: EventCursor,
    print: impl Fn(&QueueEvent) -> bool,
) -> Result<(), Failure> {
    let mut feeds: Vec<Feed> = target
        .shards()
        .iter()
        .enumerate()
        .flat_map(|(shard, _)| {
            streams.iter().map(move |&stream| Feed {
                shard,
                stream,
                position: String::new(),
                shown: None,
            })
        })
        .collect();
    let cursors = vec![from; feeds.len()];
    let mut reads = open(target, &mut feeds, cursors).await?;
    let mut watch = Watch {
        url: target.redacted_url().to_owned(),
        run_ids: run_ids(target).await,
        down: None,
        outage: None,
        check: false,
    };
    let mut probe = tokio::time::interval(PROBE_EVERY);
    probe.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let interrupted = super::super::interrupt::interrupted();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = &mut interrupted => return Ok(()),
            next = reads.next() => match next {
                Some((i, Ok(event))) => {
                    feeds[i].position.clone_from(&event.event_id);
                    if print(&event) {
                        feeds[i].shown = Some(event.event_id.clone());
                    }
                }
                Some((_, Err(e))) => {
                    watch.check = true;
                    if watch.down.is_none() {
                        if is_unreachable(&e) {
                            watch.went_down(
                                read_failed(&e).sentence,
                                (SystemTime::now(), Instant::now()),
                            );
                        } else {
                            eprintln!(
                                "redq: reading events failed ({}); reading on from the last \
                                 event shown",
                                read_failed(&e)
                            );
                        }
                    }
                    tokio::select! {
                        _ = &mut interrupted => return Ok(()),
                        _ = tokio::time::sleep(RETRY_AFTER) => {}
                    }
                }
                None => return Ok(()),
            },
            _ = probe.tick() => {
                // The outage began no later than this question.
                let asked_at = (SystemTime::now(), Instant::now());
                let asked = tokio::select! {
                    _ = &mut interrupted => return Ok(()),
                    asked = answers(connection, target) => asked,
                };
                match asked {
                    Err(why) => {
                        if watch.down.is_none() {
                            watch.went_down(why, asked_at);
                        }
                    }
                    Ok(()) => {
                        if let Some((since, started)) = watch.down.take() {
                            watch.outage = Some(since);
                            eprintln!(
                                "redq: Redis answers again after {}",
                                clock::compact(Duration::from_secs(
                                    started.elapsed().as_secs_f64().round() as u64
                                ))
                            );
                            watch.check = true;
                        }
                        if watch.check {
                            if let Some(reopened) =
                                watch.after_a_gap(target, &mut feeds).await
                            {
                                reads = reopened;
                            }
                        }
                    }
                }
            }
        }
    }
}

impl Watch {
    fn went_down(&mut self, why: String, (since, started): (SystemTime, Instant)) {
        // One pair of brackets: the advice read_failed adds in its own
        // ("(is redis-server running?)") goes.
        let why = match why.rsplit_once(" (") {
            Some((said, _)) if why.ends_with(')') => said,
            _ => &why,
        };
        eprintln!(
            "redq: Redis at {} is not answering since {} UTC ({why}); still following",
            self.url,
            clock::short(since, since)
        );
        self.down = Some((since, started));
        self.check = true;
    }

    /// After an outage or a failed read: say whether Redis restarted or
    /// lost the streams, and reopen the feeds when a stream must be read
    /// again from its start. `None` leaves the reads as they are (also
    /// when the check could not be made: it is made again at the next
    /// answer).
    async fn after_a_gap(&mut self, target: &Target, feeds: &mut [Feed]) -> Option<Reads> {
        let mut reopen = false;
        let mut again_from_start = Vec::with_capacity(feeds.len());
        for (index, shard) in target.shards().iter().enumerate() {
            let Ok(Ok(stats)) = tokio::time::timeout(PROBE_TIMEOUT, shard.server_stats()).await
            else {
                return None;
            };
            let restarted = self.run_ids[index]
                .as_ref()
                .is_some_and(|before| *before != stats.run_id);
            let mut lost = false;
            // The shard's last event printed, of whichever of its streams.
            let shown = feeds
                .iter()
                .filter(|f| f.shard == index)
                .filter_map(|f| f.shown.as_deref())
                .max_by_key(|id| entry_id(id));
            let last = match shown {
                Some(id) => format!("the last one shown was {id}"),
                None => "none was shown before".to_owned(),
            };
            for feed in feeds.iter().filter(|f| f.shard == index) {
                let Ok(Ok(kept)) =
                    tokio::time::timeout(PROBE_TIMEOUT, shard.event_ids_kept(feed.stream)).await
                else {
                    return None;
                };
                let gone = history_gone(&feed.position, kept.as_ref());
                lost |= gone.is_some();
                let again = gone == Some(Gone::EndsBefore);
                reopen |= again;
                again_from_start.push(again);
            }
            self.run_ids[index] = Some(stats.run_id);
            let on = if target.is_sharded() {
                format!(" on shard {}", crate::text::inert(shard.namespace()))
            } else {
                String::new()
            };
            match (lost, restarted) {
                (true, _) => eprintln!(
                    "redq: the event history restarted{on}: Redis lost its data, events \
                     before {} UTC are gone ({last}); following what it holds now",
                    self.lost_before()
                ),
                (false, true) => eprintln!(
                    "redq: Redis restarted{on} while it was out of reach (a new server \
                     process); the event history is still there"
                ),
                (false, false) => {}
            }
        }
        self.check = false;
        self.outage = None;
        if !reopen {
            return None;
        }
        let cursors = feeds
            .iter()
            .zip(&again_from_start)
            .map(|(feed, &again)| {
                if again {
                    EventCursor::Start
                } else {
                    EventCursor::After(feed.position.clone())
                }
            })
            .collect();
        match open(target, feeds, cursors).await {
            Ok(reads) => Some(reads),
            Err(_) => {
                // Gone again: checked once more at the next answer.
                self.check = true;
                None
            }
        }
    }

    /// The time before which events are gone: when Redis stopped
    /// answering, or now for a loss seen without an outage.
    fn lost_before(&self) -> String {
        let at = self.outage.unwrap_or_else(SystemTime::now);
        clock::short(at, at)
    }
}

/// How the history read so far is gone from a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gone {
    /// The stream is empty, or its newest entry is older than the last
    /// one read: the feed must start over.
    EndsBefore,
    /// Its oldest entry is newer than the last one read: what came
    /// between is gone, what came after is read on.
    StartsAfter,
}

/// Whether the history up to `position` (the last event read) is gone from
/// a stream that keeps `kept` (its oldest and newest ids). A feed that has
/// read nothing (`0-0`) has nothing to lose.
fn history_gone(position: &str, kept: Option<&(String, String)>) -> Option<Gone> {
    let at = entry_id(position).filter(|&id| id != (0, 0))?;
    let Some((oldest, newest)) = kept else {
        return Some(Gone::EndsBefore);
    };
    if entry_id(newest).is_some_and(|newest| newest < at) {
        Some(Gone::EndsBefore)
    } else if entry_id(oldest).is_some_and(|oldest| oldest > at) {
        Some(Gone::StartsAfter)
    } else {
        None
    }
}

/// A stream entry id `MS-SEQ` (or `MS`) as numbers, to compare.
fn entry_id(id: &str) -> Option<(u64, u64)> {
    let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
    Some((ms.parse().ok()?, seq.parse().ok()?))
}

/// One feed per shard and stream from `cursors`, their positions noted.
async fn open(
    target: &Target,
    feeds: &mut [Feed],
    cursors: Vec<EventCursor>,
) -> Result<Reads, QueueError> {
    let opened = futures::future::try_join_all(
        feeds
            .iter()
            .zip(cursors)
            .map(|(feed, cursor)| target.shards()[feed.shard].follow_stream(feed.stream, cursor)),
    )
    .await?;
    let mut reads = SelectAll::new();
    for (index, (feed, opened)) in feeds.iter_mut().zip(opened).enumerate() {
        feed.position = opened.position().to_owned();
        reads.push(opened.into_stream().map(move |read| (index, read)).boxed());
    }
    Ok(reads)
}

/// Each shard's server's `run_id` (`None` where it could not be read).
async fn run_ids(target: &Target) -> Vec<Option<String>> {
    let mut ids = Vec::new();
    for shard in target.shards() {
        let stats = tokio::time::timeout(PROBE_TIMEOUT, shard.server_stats()).await;
        ids.push(stats.ok().and_then(Result::ok).map(|s| s.run_id));
    }
    ids
}

/// Whether Redis answers, asked through the handle in use; if it does not,
/// why, from a fresh connection (the handle's client only waits while it
/// reconnects, so its error says little).
async fn answers(connection: &Connection, target: &Target) -> Result<(), String> {
    let asked = futures::future::try_join_all(
        target
            .shards()
            .iter()
            .map(|shard| shard.latest_events(EventStream::Main, 1)),
    );
    let first = match tokio::time::timeout(PROBE_TIMEOUT, asked).await {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(e)) => read_failed(&e),
        Err(_) => ReadFailure::silent(PROBE_TIMEOUT),
    }
    .sentence;
    let fresh = Target::connect(
        super::super::connect::builder(connection),
        connection.namespace(),
        connection.shards(),
    );
    match tokio::time::timeout(PROBE_TIMEOUT, fresh).await {
        Ok(Err(e)) => Err(read_failed(&e).sentence),
        Ok(Ok(probe)) => {
            for shard in probe.shards() {
                shard.close().await;
            }
            Err(first)
        }
        Err(_) => Err(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(oldest: &str, newest: &str) -> Option<(String, String)> {
        Some((oldest.to_owned(), newest.to_owned()))
    }

    #[test]
    fn a_history_is_gone_when_the_stream_no_longer_reaches_the_last_event_read() {
        let last = "1700000000000-3";
        assert_eq!(history_gone(last, None), Some(Gone::EndsBefore));
        assert_eq!(
            history_gone(last, kept("1600000000000-0", "1700000000000-2").as_ref()),
            Some(Gone::EndsBefore)
        );
        assert_eq!(
            history_gone(last, kept("1700000000001-0", "1800000000000-0").as_ref()),
            Some(Gone::StartsAfter)
        );
        assert_eq!(
            history_gone(last, kept("1600000000000-0", "1700000000000-3").as_ref()),
            None,
            "the last event read is still kept"
        );
        assert_eq!(
            history_gone("0-0", None),
            None,
            "nothing read, nothing lost"
        );
        assert_eq!(
            history_gone("0-0", kept("1-0", "2-0").as_ref()),
            None,
            "a feed from the start of an empty stream"
        );
    }
}
