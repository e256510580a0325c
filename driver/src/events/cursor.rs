//! Where a subscription to the events starts.

use std::str::FromStr;

use crate::QueueError;

/// Where [`RedisQueue::follow_events`](crate::RedisQueue::follow_events)
/// starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventCursor {
    /// The oldest event the capped stream still holds.
    Start,
    /// Only events added after the subscription opened.
    Now,
    /// Events after this stream entry id: an event's `event_id`
    /// (`1733000000000-0`), or milliseconds alone (`1733000000000`, read
    /// as `1733000000000-0`, as Redis reads it).
    After(String),
}

impl FromStr for EventCursor {
    type Err = QueueError;

    /// `start`, `now`, or a stream entry id (`MS-SEQ` or `MS`).
    fn from_str(text: &str) -> Result<EventCursor, QueueError> {
        match text {
            "start" => Ok(EventCursor::Start),
            "now" => Ok(EventCursor::Now),
            id if is_entry_id(id) => Ok(EventCursor::After(id.to_owned())),
            other => Err(QueueError::invalid(
                "event position",
                other,
                "start, now, or an event id such as 1733000000000-0",
            )),
        }
    }
}

/// `MS-SEQ` or `MS`, each a whole number that fits 64 bits.
fn is_entry_id(text: &str) -> bool {
    // Digits only: `parse` alone would take a leading `+`.
    let number = |part: &str| {
        !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) && part.parse::<u64>().is_ok()
    };
    match text.split_once('-') {
        Some((ms, seq)) => number(ms) && number(seq),
        None => number(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse_as_start_now_or_an_entry_id() {
        assert_eq!("start".parse::<EventCursor>().unwrap(), EventCursor::Start);
        assert_eq!("now".parse::<EventCursor>().unwrap(), EventCursor::Now);
        for id in [
            "1733000000000-0",
            "1733000000000",
            "0-0",
            "5-18446744073709551615",
        ] {
            assert_eq!(
                id.parse::<EventCursor>().unwrap(),
                EventCursor::After(id.to_owned())
            );
        }
        for bad in [
            "",
            "-",
            "1-",
            "-1",
            "+1-0",
            "1-2-3",
            "later",
            "1.5",
            "18446744073709551616",
        ] {
            let error = bad.parse::<EventCursor>().unwrap_err().to_string();
            assert!(
                error.contains("start, now, or an event id"),
                "{bad}: {error}"
            );
        }
    }
}
