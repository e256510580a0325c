//! Connecting in a task of its own, so that a caller who stops waiting
//! leaves nothing open.
//!
//! A connect is often raced against a deadline (`tokio::time::timeout`
//! around it, a `select!` with a shutdown signal). Dropped halfway, the
//! future leaves fred's client connecting in the background, and connected
//! for good once Redis answers: one more set of connections each time the
//! caller tries again, against a Redis that is already struggling. So the
//! attempt runs to its end in a task, and what it makes after the caller
//! left is closed there.

use std::future::Future;

use tokio::sync::oneshot;

use crate::QueueError;

/// A connected handle that can be closed by whoever ends up owning it.
pub(crate) trait Closable: Send + 'static {
    /// Close its connections; nothing uses the handle afterwards.
    fn close_unused(self) -> impl Future<Output = ()> + Send;
}

/// Run `attempt` in a task of its own and wait for it. If the returned
/// future is dropped before the attempt ends, the attempt still ends, and a
/// handle it made is closed instead of handed to no one.
pub(crate) async fn connect_in_task<T, F>(attempt: F) -> Result<T, QueueError>
where
    T: Closable,
    F: Future<Output = Result<T, QueueError>> + Send + 'static,
{
    let (hand_over, wait) = oneshot::channel();
    tokio::spawn(async move {
        let made = attempt.await;
        if let Err(Ok(unwanted)) = hand_over.send(made) {
            unwanted.close_unused().await;
        }
    });
    let mut waiting = Waiting { wait: Some(wait) };
    let made = waiting
        .wait
        .as_mut()
        .expect("set above and taken only on drop")
        .await;
    waiting.wait = None;
    made.unwrap_or_else(|_| {
        Err(QueueError::Protocol(
            "the connection attempt ended without an answer (its task panicked)".to_owned(),
        ))
    })
}

/// The caller's end. The attempt's task closes a handle it could not hand
/// over; this closes one handed over in the instant between the send and a
/// caller that stopped waiting, so exactly one side closes it.
struct Waiting<T: Closable> {
    wait: Option<oneshot::Receiver<Result<T, QueueError>>>,
}

impl<T: Closable> Drop for Waiting<T> {
    fn drop(&mut self) {
        let Some(mut wait) = self.wait.take() else {
            return;
        };
        if let Ok(Ok(unwanted)) = wait.try_recv() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(unwanted.close_unused());
            }
        }
    }
}
