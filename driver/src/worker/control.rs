//! An operator's word to one running worker: **quiet** (claim nothing more,
//! finish what runs, stay registered) and **stop** (quiet, then exit once
//! idle). The worker's own shutdown reads as a stop. Both arrive on the worker's holder channel, where cancels of the
//! jobs it holds arrive too (`super::cancels`); see
//! [`Operator::quiet_worker`](crate::Operator::quiet_worker).
//!
//! A cancel is `"<job id> <lease id>"`. A control message is a single word
//! starting with `!` and has no space, so neither can be read as the other:
//! a cancel always has a space and a number after it.

use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// The body that quiets a worker.
pub const QUIET_MESSAGE: &str = "!quiet";
/// The body that stops a worker once idle.
pub const STOP_MESSAGE: &str = "!stop";

/// What a worker is doing, as its registry record shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerState {
    /// Claiming and running jobs.
    #[default]
    Running,
    /// Quieted: claims nothing, finishes what runs, stays until shut down.
    Quiet,
    /// Stopping: claims nothing, exits once its running jobs are done.
    Stopping,
}

impl WorkerState {
    /// The word the registry record stores and screens show.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerState::Running => "running",
            WorkerState::Quiet => "quiet",
            WorkerState::Stopping => "stopping",
        }
    }

    /// Read back from the registry record (anything else: running, as a
    /// worker of an earlier version that records no state is).
    pub fn parse(text: &str) -> WorkerState {
        match text {
            "quiet" => WorkerState::Quiet,
            "stopping" => WorkerState::Stopping,
            _ => WorkerState::Running,
        }
    }
}

/// A message on a worker's holder channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HolderMessage<'a> {
    /// Cancel job `id` if it runs here under `lease`.
    Cancel { id: &'a str, lease: u64 },
    /// Stop claiming.
    Quiet,
    /// Stop claiming, exit once idle.
    Stop,
}

impl<'a> HolderMessage<'a> {
    /// Read a holder channel message; `None` for anything else.
    pub fn parse(body: &'a str) -> Option<HolderMessage<'a>> {
        match body {
            QUIET_MESSAGE => Some(HolderMessage::Quiet),
            STOP_MESSAGE => Some(HolderMessage::Stop),
            _ if body.starts_with('!') => None,
            _ => super::cancels::parse_cancel(body)
                .map(|(id, lease)| HolderMessage::Cancel { id, lease }),
        }
    }
}

/// A worker's quiet and stop requests, shared by its listener (which sets
/// them), its loop (which obeys) and its heartbeat (which reports them).
#[derive(Debug, Default)]
pub(crate) struct Control {
    quiet: CancellationToken,
    stop: CancellationToken,
}

impl Control {
    /// Claim nothing more.
    pub fn quiet(&self) {
        self.quiet.cancel();
    }

    /// Claim nothing more, and exit once idle.
    pub fn stop(&self) {
        self.quiet.cancel();
        self.stop.cancel();
    }

    /// The worker's own shutdown began (its token was cancelled): its
    /// record says `stopping` at once, as after an operator's stop, rather
    /// than `running` for the whole grace period.
    pub fn shutting_down(&self) {
        self.stop();
    }

    /// What the registry record shows.
    pub fn state(&self) -> WorkerState {
        if self.stop.is_cancelled() {
            WorkerState::Stopping
        } else if self.quiet.is_cancelled() {
            WorkerState::Quiet
        } else {
            WorkerState::Running
        }
    }

    /// Resolves once the state is past `shown`, so the heartbeat reports a
    /// quiet or stop at once rather than at its next beat.
    pub async fn changed_from(&self, shown: WorkerState) {
        match shown {
            WorkerState::Running => self.quiet.cancelled().await,
            WorkerState::Quiet => self.stop.cancelled().await,
            WorkerState::Stopping => std::future::pending().await,
        }
    }

    /// Cancelled once stop was asked for.
    pub fn stopped(&self) -> &CancellationToken {
        &self.stop
    }

    /// A token the claim loop waits on: cancelled by `shutdown` or by a
    /// quiet (or stop) request, whichever comes first.
    pub fn claiming(&self, shutdown: &CancellationToken) -> CancellationToken {
        let claiming = shutdown.child_token();
        let (quiet, done) = (self.quiet.clone(), claiming.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = quiet.cancelled() => done.cancel(),
                _ = done.cancelled() => {}
            }
        });
        claiming
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_and_cancels_cannot_be_taken_for_each_other() {
        assert_eq!(HolderMessage::parse("!quiet"), Some(HolderMessage::Quiet));
        assert_eq!(HolderMessage::parse("!stop"), Some(HolderMessage::Stop));
        assert_eq!(
            HolderMessage::parse("01J 42"),
            Some(HolderMessage::Cancel {
                id: "01J",
                lease: 42
            })
        );
        // A job id that happens to read "quiet" is still a cancel.
        assert_eq!(
            HolderMessage::parse("quiet 7"),
            Some(HolderMessage::Cancel {
                id: "quiet",
                lease: 7
            })
        );
        assert_eq!(HolderMessage::parse("!quiet 7"), None);
        assert_eq!(HolderMessage::parse("!reboot"), None);
    }

    #[test]
    fn stop_implies_quiet_and_the_state_says_the_strongest() {
        let control = Control::default();
        assert_eq!(control.state(), WorkerState::Running);
        control.quiet();
        assert_eq!(control.state(), WorkerState::Quiet);
        control.stop();
        assert_eq!(control.state(), WorkerState::Stopping);
        let shutting_down = Control::default();
        shutting_down.shutting_down();
        assert_eq!(shutting_down.state(), WorkerState::Stopping);
        assert_eq!(WorkerState::parse("quiet"), WorkerState::Quiet);
        assert_eq!(WorkerState::parse(""), WorkerState::Running);
    }
}
