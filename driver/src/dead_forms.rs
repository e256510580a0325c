//! The named forms of the dead-letter changes, written once for every type
//! that offers them ([`RedisQueue`](crate::RedisQueue),
//! [`ShardedQueue`](crate::ShardedQueue), [`Operator`](crate::Operator)).
//!
//! A type implements the two general calls, `change_dead` (by id) and
//! `drain_dead` (everything, with progress), and `list_jobs`, or hands them
//! to one that does (`ShardedQueue` to its `Operator`); this macro adds
//! the named calls on top, so that their names, arguments and documentation
//! cannot drift apart between the three. A macro rather than a trait, so
//! that callers need no import and the methods stay inherent.

/// Adds `dead_letters`, `requeue_dead`, `requeue_dead_with_attempts`,
/// `delete_dead`, `requeue_all_dead`, `requeue_all_dead_with_attempts` and
/// `purge_dead` to an `impl` block whose type has `change_dead`,
/// `drain_dead` and `list_jobs`; `dead_letter_forms!(via)` to one whose
/// method `via()` returns such a value.
macro_rules! dead_letter_forms {
    ($($via:ident)?) => {
        /// Dead letters of `queue`, newest first.
        pub async fn dead_letters(
            &self,
            queue: &str,
            offset: u64,
            count: usize,
        ) -> Result<$crate::Page<$crate::JobRecord>, $crate::QueueError> {
            self$(.$via())?.list_jobs(queue, $crate::JobState::Dead, offset, count)
                .await
        }

        /// Requeue these dead letters of `queue` (attempts reset to 0), in
        /// batches of [`limits::DEAD_BATCH`](crate::limits::DEAD_BATCH).
        pub async fn requeue_dead(
            &self,
            queue: &str,
            ids: &[String],
        ) -> Result<$crate::DeadLetterReport, $crate::QueueError> {
            self.requeue_dead_with_attempts(queue, ids, 0).await
        }

        /// Requeue these dead letters of `queue` with their attempt counter
        /// set to `attempts` (the seed's RequeueDeadLetter; `requeue_dead`
        /// is this with 0). A job whose `max_attempts` is not above
        /// `attempts` gets one more try before it is dead again.
        pub async fn requeue_dead_with_attempts(
            &self,
            queue: &str,
            ids: &[String],
            attempts: u32,
        ) -> Result<$crate::DeadLetterReport, $crate::QueueError> {
            self$(.$via())?.change_dead($crate::DeadAction::Requeue { attempts }, queue, ids)
                .await
        }

        /// Delete these dead letters of `queue` for good.
        pub async fn delete_dead(
            &self,
            queue: &str,
            ids: &[String],
        ) -> Result<$crate::DeadLetterReport, $crate::QueueError> {
            self$(.$via())?.change_dead($crate::DeadAction::Delete, queue, ids)
                .await
        }

        /// Requeue every dead letter of `queue` (attempts reset to 0) in
        /// bounded batches; `progress` is told (done so far, left) after
        /// each. The number requeued.
        pub async fn requeue_all_dead(
            &self,
            queue: &str,
            progress: impl FnMut(u64, u64),
        ) -> Result<u64, $crate::QueueError> {
            self.requeue_all_dead_with_attempts(queue, 0, progress)
                .await
        }

        /// `requeue_all_dead`, with each job's attempt counter set to
        /// `attempts` (see `requeue_dead_with_attempts`).
        pub async fn requeue_all_dead_with_attempts(
            &self,
            queue: &str,
            attempts: u32,
            progress: impl FnMut(u64, u64),
        ) -> Result<u64, $crate::QueueError> {
            self$(.$via())?.drain_dead($crate::DeadAction::Requeue { attempts }, queue, progress)
                .await
        }

        /// Delete every dead letter of `queue` in bounded batches;
        /// `progress` as for `requeue_all_dead`. The number deleted.
        pub async fn purge_dead(
            &self,
            queue: &str,
            progress: impl FnMut(u64, u64),
        ) -> Result<u64, $crate::QueueError> {
            self$(.$via())?.drain_dead($crate::DeadAction::Delete, queue, progress)
                .await
        }
    };
}

pub(crate) use dead_letter_forms;
