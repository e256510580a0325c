//! News from the I/O task: snapshots, outages, the watched job, progress.

use std::time::SystemTime;

use super::{Connection, Level, Progress, State, Update, View, STATUS_TTL};
use crate::clock::epoch_ms;
use crate::text::inert;

impl State {
    /// Move the state's clock to `at` (local) and let an old status go.
    pub(super) fn advance(&mut self, at: SystemTime) {
        self.clock = self.clock.max(at);
        let expired = self
            .status
            .as_ref()
            .is_some_and(|s| crate::clock::age(s.at, self.clock) >= STATUS_TTL);
        if expired {
            self.status = None;
        }
    }

    pub(super) fn receive(&mut self, update: Update) {
        match update {
            Update::Snapshot {
                snapshot,
                received_at,
            } => {
                self.advance(received_at);
                self.server.snapshot(&snapshot);
                // Frozen: the data stays exactly as it was (see `freeze`),
                // but a snapshot still proves Redis answers.
                if self.holds_snapshots() && self.data.loaded {
                    self.connection = Connection::Live;
                    return;
                }
                let s = *snapshot;
                let d = &mut self.data;
                d.loaded = true;
                d.updated_at = Some(received_at);
                d.fetched_at = Some(s.redis_now);
                d.clock_skew_ms = epoch_ms(s.redis_now) as i64 - epoch_ms(received_at) as i64;
                d.queues = s.queues;
                d.events = s.events;
                d.event_reach = s.event_reach;
                d.workers_known = s.workers.is_some();
                d.workers = s.workers.unwrap_or_default();
                d.schedules_known = s.schedules.is_some();
                d.schedules = s.schedules.unwrap_or_default();
                d.leases_loaded = s.leases.is_some();
                d.leases = s.leases.unwrap_or_default();
                d.dead_loaded = s.dead.is_some();
                d.dead = s.dead.unwrap_or_default();
                d.jobs = s.jobs;
                d.limits_loaded = s.limits.is_some();
                d.limits = s.limits.unwrap_or_default();
                d.limited = s.limited;
                d.gates_loaded = s.gates.is_some();
                d.gates = s.gates.unwrap_or_default();
                d.gate = s.gate;
                let recovered = matches!(self.connection, Connection::Reconnecting { .. });
                self.connection = Connection::Live;
                // A failure said during the outage describes a condition
                // that is over now.
                if recovered
                    && self
                        .status
                        .as_ref()
                        .is_some_and(|s| s.level == Level::Error)
                {
                    self.status = None;
                }
            }
            Update::Schedule(read) => {
                if self.holds_snapshots() && self.data.schedule.is_some() {
                    return;
                }
                self.data.schedule = match (read, self.data.schedule.take()) {
                    // Deleted while its detail is open: it reads as gone,
                    // showing what it last was.
                    (mut read, Some(before))
                        if read.record.is_none()
                            && before.name == read.name
                            && before.shard == read.shard
                            && before.record.is_some() =>
                    {
                        read.record = before.record;
                        read.gone = true;
                        Some(read)
                    }
                    (read, _) => Some(read),
                };
            }
            Update::Server(servers) => self.server.read(&servers),
            Update::RefusedQueueNames(names) => self.server.refused_queue_names = names,
            Update::Unreachable { error, at } => {
                self.advance(at);
                let since = match &self.connection {
                    Connection::Reconnecting { since, .. } => *since,
                    _ => at,
                };
                self.connection = Connection::Reconnecting { since, error };
            }
            Update::Job {
                id,
                record,
                notes,
                finished,
            } => {
                let View::Detail(detail) = &mut self.view else {
                    return;
                };
                if self.frozen.is_some() {
                    return;
                }
                if detail.record.id != id {
                    return;
                }
                detail.gone = record.is_none() && finished.is_none();
                match record {
                    Some(record) => {
                        detail.record = *record;
                        detail.notes = notes;
                    }
                    // Finished, and kept by its queue: the detail is of the
                    // kept job now, its record too, so the keys act on a
                    // finished job (`surgery`), not on the job it was.
                    None if finished.is_some() => {
                        let kept = finished.map(|k| *k);
                        if let Some(kept) = &kept {
                            detail.record = kept.to_record();
                            detail.notes = redq::JobNotes::default();
                        }
                        detail.finished = kept;
                    }
                    None => {
                        let text = format!("job {} no longer exists", inert(&id));
                        if self.status.as_ref().map(|s| &s.text) != Some(&text) {
                            self.say(Level::Info, text);
                        }
                    }
                }
            }
            Update::JobAwaits { id, gate } => {
                if self.frozen.is_some() {
                    return;
                }
                if let View::Detail(detail) = &mut self.view {
                    if detail.record.id == id {
                        detail.awaits = gate.map(|g| *g);
                    }
                }
            }
            Update::JobHeld { id, lines } => {
                if self.frozen.is_some() {
                    return;
                }
                if let View::Detail(detail) = &mut self.view {
                    if detail.record.id == id {
                        detail.held = lines;
                    }
                }
            }
            Update::Metrics { view, history } => self.receive_metrics(view, *history),
            Update::MetricsUnread { view, error } => self.metrics_unread(&view, &error),
            Update::Search(step) => self.receive_search(step),
            Update::Progress { label, done, left } => {
                self.busy = Some(Progress { label, done, left })
            }
            Update::Finished { message, ok } => {
                self.busy = None;
                self.say(if ok { Level::Ok } else { Level::Error }, message);
                self.search_again_if_changed();
            }
        }
    }
}
