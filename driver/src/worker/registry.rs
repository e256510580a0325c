//! The registry: job type names mapped to how to decode and run them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::context::JobCx;
use super::error::JobError;
use super::typed::TypedJob;

/// How to run one registered job type, with its type parameters erased.
pub(crate) trait Runner: Send + Sync {
    /// Decode `payload` and start running it; a decode failure is an error
    /// text (the job is dead-lettered: retrying cannot fix it).
    fn start<'a>(
        &'a self,
        payload: &Value,
        cx: &'a JobCx,
    ) -> Result<BoxFuture<'a, Result<(), JobError>>, String>;
    fn timeout(&self) -> Duration;
    fn backoff(&self, attempt: u32) -> Duration;
    /// The type's `MAX_ATTEMPTS`, for jobs enqueued by name without a limit
    /// of their own (`super::attempts`).
    fn max_attempts(&self) -> u32;
    /// The type's `QUEUE`, for the queues a worker serves (`super::served`).
    fn queue(&self) -> &'static str;
}

struct TypedRunner<T>(std::marker::PhantomData<fn() -> T>);

impl<T: TypedJob> Runner for TypedRunner<T> {
    fn start<'a>(
        &'a self,
        payload: &Value,
        cx: &'a JobCx,
    ) -> Result<BoxFuture<'a, Result<(), JobError>>, String> {
        let job: T = serde_json::from_value(payload.clone())
            .map_err(|e| format!("payload does not decode as {}: {e}", T::NAME))?;
        Ok(Box::pin(async move { job.run(cx).await }))
    }

    fn timeout(&self) -> Duration {
        T::TIMEOUT
    }

    fn backoff(&self, attempt: u32) -> Duration {
        T::backoff(attempt)
    }

    fn max_attempts(&self) -> u32 {
        T::MAX_ATTEMPTS
    }

    fn queue(&self) -> &'static str {
        T::QUEUE
    }
}

/// Job types a worker can run, by name. `registry.add_job::<T>()` is the
/// typed way to contribute one.
#[derive(Clone, Default)]
pub struct Registry {
    runners: BTreeMap<&'static str, Arc<dyn Runner>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.runners.keys()).finish()
    }
}

impl Registry {
    /// No job types.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Register `T` under `T::NAME`. Registering the same name twice keeps
    /// the last one.
    pub fn add_job<T: TypedJob>(&mut self) -> &mut Self {
        self.runners.insert(
            T::NAME,
            Arc::new(TypedRunner::<T>(std::marker::PhantomData)),
        );
        self
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        self.runners.keys().copied().collect()
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Runner>> {
        self.runners.get(name)
    }

    /// Each registered name with its type's `QUEUE`, sorted by name.
    pub(crate) fn queues(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.runners
            .iter()
            .map(|(name, runner)| (*name, runner.queue()))
    }

    /// Why a job with this name cannot run here, for its error text.
    pub(crate) fn unknown(&self, name: Option<&str>) -> String {
        let known = shown_names(&self.names());
        match name {
            Some(name) => format!("unknown job name {name:?}: no handler registered on this worker (registered: {known})"),
            None => format!("job has no name: typed workers only run jobs pushed with a name (registered: {known})"),
        }
    }
}

/// How many registered names an error lists: the text is stored in every
/// such job's record and event, so a registry of hundreds of types must not
/// make each one kilobytes long.
const NAMES_SHOWN: usize = 8;

/// `a, b, c` or, past [`NAMES_SHOWN`], `a, b, …, h and 12 more`.
fn shown_names(names: &[&str]) -> String {
    match names.len().checked_sub(NAMES_SHOWN) {
        None | Some(0) => names.join(", "),
        Some(more) => format!("{} and {more} more", names[..NAMES_SHOWN].join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_registry_is_listed_in_part() {
        let few = ["a", "b"];
        assert_eq!(shown_names(&few), "a, b");
        let many: Vec<String> = (0..20).map(|i| format!("t{i:02}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            shown_names(&many),
            "t00, t01, t02, t03, t04, t05, t06, t07 and 12 more"
        );
    }
}
