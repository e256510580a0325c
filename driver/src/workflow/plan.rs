//! The builders of workflows ([`Batch`], [`Tree`], a job's dependencies)
//! and every check made on them before anything is sent.

use std::collections::HashSet;

use super::{Condition, OnFailure, MAX_DEPENDENCIES, MAX_LABEL, MAX_WAITERS};
use crate::limits::{self, check_queue_name};
use crate::worker::TypedJob;
use crate::{NewJob, QueueError};

/// A waiter to create: its queue, job and policy.
#[derive(Debug, Clone)]
pub(crate) struct WaiterPlan {
    pub queue: String,
    pub job: NewJob,
    pub condition: Condition,
    pub on_failure: OnFailure,
}

/// Jobs enqueued together, with callbacks that run once every one of them
/// finished: `on_complete` whatever their outcomes, `on_success` only if
/// all completed (otherwise it is cancelled). See [`crate::workflow`].
///
/// ```
/// use redq::workflow::Batch;
/// use redq::NewJob;
/// let batch = Batch::new()
///     .label("import 2026-12-01")
///     .jobs("rows", vec![NewJob::new(serde_json::json!({"row": 1}))])
///     .on_complete("reports", NewJob::new(serde_json::json!({"import": "2026-12-01"})));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub(crate) label: Option<String>,
    pub(crate) members: Vec<(String, NewJob)>,
    pub(crate) callbacks: Vec<WaiterPlan>,
    /// A typed job that could not be turned into a job (its payload does
    /// not serialize): reported when the batch is enqueued.
    pub(crate) refused: Option<QueueError>,
}

impl Batch {
    /// An empty batch, without label or callbacks.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// A label shown with the batch's status (at most [`MAX_LABEL`] bytes,
    /// no control characters).
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Batch {
        self.label = Some(label.into());
        self
    }

    /// Add one job of `queue`.
    #[must_use]
    pub fn job(mut self, queue: impl Into<String>, job: NewJob) -> Batch {
        self.members.push((queue.into(), job));
        self
    }

    /// Add jobs of `queue`.
    #[must_use]
    pub fn jobs(mut self, queue: impl Into<String>, jobs: Vec<NewJob>) -> Batch {
        let queue = queue.into();
        self.members
            .extend(jobs.into_iter().map(|job| (queue.clone(), job)));
        self
    }

    /// Add a typed job, onto `T::QUEUE` with its name and options.
    #[must_use]
    pub fn typed_job<T: TypedJob>(mut self, job: &T) -> Batch {
        match typed(job) {
            Ok(new) => self.members.push((T::QUEUE.to_owned(), new)),
            Err(e) => self.refused = self.refused.or(Some(e)),
        }
        self
    }

    /// A callback enqueued into `queue` once every job finished, whatever
    /// their outcomes.
    #[must_use]
    pub fn on_complete(self, queue: impl Into<String>, job: NewJob) -> Batch {
        self.callback(queue, job, Condition::AllFinished, OnFailure::Cancel)
    }

    /// A callback enqueued into `queue` once every job completed; cancelled
    /// if one was dead-lettered, cancelled or deleted.
    #[must_use]
    pub fn on_success(self, queue: impl Into<String>, job: NewJob) -> Batch {
        self.callback(queue, job, Condition::AllSucceeded, OnFailure::Cancel)
    }

    /// A typed [`Batch::on_complete`].
    #[must_use]
    pub fn typed_on_complete<T: TypedJob>(self, job: &T) -> Batch {
        self.typed_callback(job, Condition::AllFinished, OnFailure::Cancel)
    }

    /// A typed [`Batch::on_success`].
    #[must_use]
    pub fn typed_on_success<T: TypedJob>(self, job: &T) -> Batch {
        self.typed_callback(job, Condition::AllSucceeded, OnFailure::Cancel)
    }

    /// A callback with its own policy: released under `condition`, and if a
    /// job failed under [`Condition::AllSucceeded`], `on_failure`
    /// ([`OnFailure::Hold`] keeps it for an operator).
    #[must_use]
    pub fn callback(
        mut self,
        queue: impl Into<String>,
        job: NewJob,
        condition: Condition,
        on_failure: OnFailure,
    ) -> Batch {
        self.callbacks.push(WaiterPlan {
            queue: queue.into(),
            job,
            condition,
            on_failure,
        });
        self
    }

    fn typed_callback<T: TypedJob>(
        mut self,
        job: &T,
        condition: Condition,
        on_failure: OnFailure,
    ) -> Batch {
        match typed(job) {
            Ok(new) => self.callback(T::QUEUE, new, condition, on_failure),
            Err(e) => {
                self.refused = self.refused.or(Some(e));
                self
            }
        }
    }

    /// Every check before anything is sent (each job's own options are
    /// checked as they are encoded).
    pub(crate) fn validate(&self) -> Result<(), QueueError> {
        if let Some(e) = &self.refused {
            return Err(e.clone());
        }
        if self.members.is_empty() && self.callbacks.is_empty() {
            return Err(QueueError::invalid(
                "batch",
                "no jobs and no callbacks",
                "a batch has at least one job or one callback",
            ));
        }
        check_waiters(self.callbacks.len(), "callbacks of a batch")?;
        if let Some(label) = &self.label {
            limits::check_text("batch label", label, MAX_LABEL)?;
        }
        for (queue, job) in &self.members {
            check_queue_name(queue)?;
            no_dependencies(job, "a batch's job")?;
        }
        for callback in &self.callbacks {
            check_queue_name(&callback.queue)?;
            no_dependencies(&callback.job, "a batch's callback")?;
        }
        Ok(())
    }
}

/// A parent job that waits for its children, in any queues; a child may be
/// a tree itself. The parent is released once every child finished, if all
/// completed; otherwise it is dead-lettered naming the first failure
/// ([`Tree::on_failure`] changes that). See [`crate::workflow`].
///
/// ```
/// use redq::workflow::{OnFailure, Tree};
/// use redq::NewJob;
/// let tree = Tree::new("books", NewJob::new(serde_json::json!({"bind": 1})))
///     .child("pages", NewJob::new(serde_json::json!({"page": 1})))
///     .subtree(Tree::new("chapters", NewJob::new(serde_json::json!({"chapter": 2})))
///         .child("pages", NewJob::new(serde_json::json!({"page": 2}))))
///     .on_failure(OnFailure::Hold);
/// ```
#[derive(Debug, Clone)]
pub struct Tree {
    pub(crate) queue: String,
    pub(crate) parent: NewJob,
    pub(crate) children: Vec<(String, NewJob)>,
    pub(crate) subtrees: Vec<Tree>,
    pub(crate) refused: Option<QueueError>,
}

impl Tree {
    /// A tree whose parent is `parent`, in `queue`, without children yet.
    /// The parent's [`NewJob::release_when`] and
    /// [`NewJob::on_dependency_failure`] are its policy (defaults: all
    /// succeeded, else dead-lettered).
    pub fn new(queue: impl Into<String>, parent: NewJob) -> Tree {
        Tree {
            queue: queue.into(),
            parent,
            children: Vec::new(),
            subtrees: Vec::new(),
            refused: None,
        }
    }

    /// A tree whose parent is a typed job, onto `T::QUEUE`.
    pub fn typed<T: TypedJob>(parent: &T) -> Tree {
        match typed(parent) {
            Ok(new) => Tree::new(T::QUEUE, new),
            Err(e) => Tree {
                refused: Some(e),
                ..Tree::new(T::QUEUE, NewJob::new(serde_json::Value::Null))
            },
        }
    }

    /// Add a child job of `queue`.
    #[must_use]
    pub fn child(mut self, queue: impl Into<String>, job: NewJob) -> Tree {
        self.children.push((queue.into(), job));
        self
    }

    /// Add a typed child, onto `T::QUEUE`.
    #[must_use]
    pub fn typed_child<T: TypedJob>(mut self, job: &T) -> Tree {
        match typed(job) {
            Ok(new) => self.children.push((T::QUEUE.to_owned(), new)),
            Err(e) => self.refused = self.refused.or(Some(e)),
        }
        self
    }

    /// Add a child that is a tree: its parent is a child of this tree's
    /// parent, released once its own children finished.
    #[must_use]
    pub fn subtree(mut self, tree: Tree) -> Tree {
        self.subtrees.push(tree);
        self
    }

    /// What happens to the parent when a child failed (default
    /// [`OnFailure::DeadLetter`]).
    #[must_use]
    pub fn on_failure(mut self, policy: OnFailure) -> Tree {
        self.parent = self.parent.on_dependency_failure(policy);
        self
    }

    /// When the parent is released (default [`Condition::AllSucceeded`]).
    #[must_use]
    pub fn release_when(mut self, condition: Condition) -> Tree {
        self.parent = self.parent.release_when(condition);
        self
    }

    /// The parent's policy.
    pub(crate) fn policy(&self) -> (Condition, OnFailure) {
        let deps = self.parent.dependencies.clone().unwrap_or_default();
        (deps.condition, deps.on_failure)
    }

    /// Every job of the tree: parents and children.
    pub(crate) fn jobs(&self) -> Vec<&NewJob> {
        let mut out = vec![&self.parent];
        out.extend(self.children.iter().map(|(_, job)| job));
        for subtree in &self.subtrees {
            out.extend(subtree.jobs());
        }
        out
    }

    /// How many jobs the whole tree creates.
    pub(crate) fn size(&self) -> usize {
        1 + self.children.len() + self.subtrees.iter().map(Tree::size).sum::<usize>()
    }

    /// Every check before anything is sent, over the whole tree.
    pub(crate) fn validate(&self) -> Result<(), QueueError> {
        if let Some(e) = &self.refused {
            return Err(e.clone());
        }
        check_queue_name(&self.queue)?;
        if self
            .parent
            .dependencies
            .as_ref()
            .is_some_and(|d| d.ids.is_some())
        {
            return Err(QueueError::invalid(
                "tree parent",
                "a job with after(ids)",
                "a tree's parent waits for its children only; list other jobs as children",
            ));
        }
        if self.children.is_empty() && self.subtrees.is_empty() {
            return Err(QueueError::invalid(
                "tree",
                "a parent without children",
                "a tree has at least one child or subtree",
            ));
        }
        for (queue, job) in &self.children {
            check_queue_name(queue)?;
            no_dependencies(job, "a tree's child")?;
        }
        self.subtrees.iter().try_for_each(Tree::validate)
    }
}

/// The checks of a job's own dependency list ([`NewJob::after`]).
pub(crate) fn check_dependencies(ids: &[String]) -> Result<(), QueueError> {
    if ids.is_empty() || ids.len() > MAX_DEPENDENCIES {
        return Err(QueueError::invalid(
            "dependencies",
            format!("{} ids", ids.len()),
            format!(
                "1 to {MAX_DEPENDENCIES} existing jobs; for more, enqueue them as one Batch \
                 and make this job its callback"
            ),
        ));
    }
    let mut seen = HashSet::with_capacity(ids.len());
    for id in ids {
        limits::check_id(id)?;
        if !seen.insert(id.as_str()) {
            return Err(QueueError::invalid(
                "dependencies",
                id.as_str(),
                "each job listed once",
            ));
        }
    }
    Ok(())
}

fn check_waiters(count: usize, what: &'static str) -> Result<(), QueueError> {
    if count > MAX_WAITERS {
        return Err(QueueError::invalid(
            what,
            count.to_string(),
            format!("at most {MAX_WAITERS}"),
        ));
    }
    Ok(())
}

fn no_dependencies(job: &NewJob, what: &'static str) -> Result<(), QueueError> {
    if job.dependencies.as_ref().is_some_and(|d| d.ids.is_some()) {
        return Err(QueueError::invalid(
            what,
            "a job with after(ids)",
            "a job waits for one thing: its dependencies, or a batch or tree it belongs to; \
             enqueue it alone with add",
        ));
    }
    Ok(())
}

/// A typed job as a [`NewJob`], with its type's name and options.
fn typed<T: TypedJob>(job: &T) -> Result<NewJob, QueueError> {
    crate::worker::new_job(job)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job() -> NewJob {
        NewJob::new(json!(1))
    }

    fn refusal(result: Result<(), QueueError>) -> String {
        result.expect_err("refused").to_string()
    }

    #[test]
    fn an_empty_batch_without_callbacks_is_refused_in_words() {
        assert_eq!(
            refusal(Batch::new().validate()),
            "invalid batch \"no jobs and no callbacks\": a batch has at least one job or one callback"
        );
        assert!(Batch::new().on_complete("q", job()).validate().is_ok());
        assert!(Batch::new().job("q", job()).validate().is_ok());
    }

    #[test]
    fn more_than_eight_callbacks_are_refused() {
        let mut batch = Batch::new().job("q", job());
        for _ in 0..MAX_WAITERS {
            batch = batch.on_success("done", job());
        }
        assert!(batch.validate().is_ok());
        let text = refusal(batch.on_complete("done", job()).validate());
        assert_eq!(text, "invalid callbacks of a batch \"9\": at most 8");
    }

    #[test]
    fn a_bad_queue_name_or_label_is_refused_before_anything_is_sent() {
        let text = refusal(Batch::new().job("a:b", job()).validate());
        assert!(text.starts_with("invalid queue name \"a:b\""), "{text}");
        let text = refusal(Batch::new().on_success("", job()).validate());
        assert!(text.starts_with("invalid queue name \"\""), "{text}");
        let long = "x".repeat(MAX_LABEL + 1);
        let text = refusal(Batch::new().label(long).job("q", job()).validate());
        assert!(text.starts_with("invalid batch label"), "{text}");
    }

    #[test]
    fn a_batch_member_with_its_own_dependencies_is_refused() {
        let text = refusal(Batch::new().job("q", job().after(["a"])).validate());
        assert!(text.contains("enqueue it alone with add"), "{text}");
    }

    #[test]
    fn dependency_lists_take_one_to_a_thousand_distinct_ids() {
        let ids = |n: usize| (0..n).map(|i| format!("id{i}")).collect::<Vec<_>>();
        assert!(check_dependencies(&ids(1)).is_ok());
        assert!(check_dependencies(&ids(MAX_DEPENDENCIES)).is_ok());
        let text = refusal(check_dependencies(&ids(MAX_DEPENDENCIES + 1)));
        assert!(text.contains("1 to 1000 existing jobs"), "{text}");
        assert!(refusal(check_dependencies(&[])).contains("\"0 ids\""));
        let text = refusal(check_dependencies(&["a".into(), "b".into(), "a".into()]));
        assert_eq!(text, "invalid dependencies \"a\": each job listed once");
        assert!(refusal(check_dependencies(&["".into()])).starts_with("invalid job id"));
    }

    #[test]
    fn a_tree_needs_children_and_checks_its_subtrees() {
        let text = refusal(Tree::new("q", job()).validate());
        assert!(text.contains("at least one child"), "{text}");
        let nested = Tree::new("q", job()).subtree(Tree::new("q", job()));
        assert!(refusal(nested.validate()).contains("at least one child"));
        let ok = Tree::new("q", job())
            .child("c", job())
            .subtree(Tree::new("r", job()).child("c", job()));
        assert!(ok.validate().is_ok());
        assert_eq!(ok.size(), 4);
        let text = refusal(
            Tree::new("q", job().after(["x"]))
                .child("c", job())
                .validate(),
        );
        assert!(text.starts_with("invalid tree parent"), "{text}");
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Thumb {
        img: std::collections::HashMap<Vec<u8>, u8>,
    }
    impl TypedJob for Thumb {
        const NAME: &'static str = "thumb";
        const QUEUE: &'static str = "thumbs";
        async fn run(&self, _cx: &crate::worker::JobCx) -> Result<(), crate::worker::JobError> {
            Ok(())
        }
    }

    fn thumb(keys: usize) -> Thumb {
        Thumb {
            img: (0..keys).map(|k| (vec![k as u8], 1)).collect(),
        }
    }

    #[test]
    fn typed_jobs_join_with_their_types_queue_name_and_options() {
        let batch = Batch::new()
            .typed_job(&thumb(0))
            .typed_on_success(&thumb(0));
        assert!(batch.validate().is_ok());
        let (queue, job) = &batch.members[0];
        assert_eq!(
            (queue.as_str(), job.name.as_deref()),
            ("thumbs", Some("thumb"))
        );
        assert_eq!(job.max_attempts, Thumb::MAX_ATTEMPTS);
        assert_eq!(batch.callbacks[0].queue, "thumbs");
        let tree = Tree::typed(&thumb(0)).typed_child(&thumb(0));
        assert_eq!(tree.queue, "thumbs");
        assert!(tree.validate().is_ok());
    }

    #[test]
    fn a_typed_job_that_does_not_serialize_refuses_its_workflow() {
        // JSON object keys are strings: a map keyed by bytes does not serialize.
        let text = refusal(Batch::new().typed_job(&thumb(1)).validate());
        assert!(text.starts_with("invalid job \"thumb\""), "{text}");
        let tree = Tree::typed(&thumb(0)).typed_child(&thumb(1));
        assert!(refusal(tree.validate()).starts_with("invalid job"));
    }

    #[test]
    fn a_trees_policy_is_its_parents() {
        let tree = Tree::new("q", job()).child("c", job());
        assert_eq!(
            tree.policy(),
            (Condition::AllSucceeded, OnFailure::DeadLetter)
        );
        let tree = tree
            .on_failure(OnFailure::Hold)
            .release_when(Condition::AllFinished);
        assert_eq!(tree.policy(), (Condition::AllFinished, OnFailure::Hold));
    }
}
