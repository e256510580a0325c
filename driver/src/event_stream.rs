//! A namespace's two event streams. The traffic of a busy queue, one
//! `enqueued` and one `completed` event a call, would otherwise fill the
//! capped stream within seconds and trim away what an operator looks for
//! in an incident (the failures, the reclaims, who paused or cancelled
//! what), so it has a stream of its own (`lua/lib/keys.lua`, `K.traffic`).
//! A module of its own, as `event_kind` is, so that the operator's reads,
//! which `events` depends on, may name a stream. Public as
//! [`crate::events::EventStream`].

use crate::event_kind::EventKind;
use crate::keys::Keys;

/// Which of a namespace's event streams, each capped at about
/// [`EVENTS_CAP`](crate::events::EVENTS_CAP) entries on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventStream {
    /// `{ns}:events`: every kind but the traffic's (failures, reclaims,
    /// operator actions, workers, schedules, gates, lost hand-offs and
    /// claims).
    Main,
    /// `{ns}:events:traffic`: `enqueued` and `completed`, one a call, and
    /// `pushed_back`, one a handler's push-back (a storm of 429s is as busy
    /// as the traffic, and must not trim an incident's events away).
    Traffic,
}

impl EventStream {
    /// Both streams, the main one first.
    pub const BOTH: [EventStream; 2] = [EventStream::Main, EventStream::Traffic];

    /// Its name in words (the exporter's `stream` label): `main` or
    /// `traffic`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventStream::Main => "main",
            EventStream::Traffic => "traffic",
        }
    }

    /// The stream events of `kind` are written to.
    pub fn of(kind: EventKind) -> EventStream {
        match kind {
            EventKind::Enqueued | EventKind::Completed | EventKind::PushedBack => {
                EventStream::Traffic
            }
            _ => EventStream::Main,
        }
    }

    /// The streams that hold events of `kinds`: both for none (every kind).
    pub fn holding(kinds: &[EventKind]) -> Vec<EventStream> {
        if kinds.is_empty() {
            return EventStream::BOTH.to_vec();
        }
        EventStream::BOTH
            .into_iter()
            .filter(|stream| kinds.iter().any(|kind| EventStream::of(*kind) == *stream))
            .collect()
    }

    /// Its key in the namespace of `keys`.
    pub(crate) fn key(self, keys: &Keys) -> String {
        match self {
            EventStream::Main => keys.events(),
            EventStream::Traffic => keys.traffic(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_enqueued_completed_and_pushed_back_go_to_the_traffic_stream() {
        let traffic: Vec<EventKind> = EventKind::ALL
            .into_iter()
            .filter(|kind| EventStream::of(*kind) == EventStream::Traffic)
            .collect();
        assert_eq!(
            traffic,
            [
                EventKind::Enqueued,
                EventKind::Completed,
                EventKind::PushedBack
            ]
        );
        assert_eq!(
            EventStream::holding(&[EventKind::Dead, EventKind::Completed]),
            EventStream::BOTH
        );
        assert_eq!(
            EventStream::holding(&[EventKind::Enqueued]),
            [EventStream::Traffic]
        );
        assert_eq!(EventStream::holding(&[]), EventStream::BOTH);
    }

    /// The scripts write the traffic's kinds, and only those, to
    /// `K.traffic`: every `emit(K.traffic, '<kind>'` names one of them.
    #[test]
    fn the_scripts_write_the_traffic_kinds_to_the_traffic_stream() {
        let sources = crate::scripts::catalogue::SCRIPTS
            .iter()
            .chain(crate::scripts::catalogue::MODULES.iter())
            .map(|(_, text)| *text);
        let mut written = Vec::new();
        for text in sources {
            for call in text.split("emit(K.").skip(1) {
                let (stream, rest) = call.split_once(", ").expect("emit(K.<key>, <kind>");
                let kind = rest
                    .strip_prefix('\'')
                    .and_then(|rest| rest.split('\'').next())
                    .unwrap_or_else(|| panic!("emit(K.{stream}, ...) names its kind literally"));
                let kind = EventKind::of(kind).unwrap_or_else(|| panic!("unknown kind {kind}"));
                let expected = match EventStream::of(kind) {
                    EventStream::Main => "events",
                    EventStream::Traffic => "traffic",
                };
                assert_eq!(stream, expected, "emit of {kind:?}");
                written.push(kind);
            }
        }
        assert!(written.contains(&EventKind::Enqueued));
        assert!(written.contains(&EventKind::Completed));
    }
}
