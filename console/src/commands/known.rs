//! A queue name the namespace does not know is almost always a typo
//! (`redq pause emials`): refuse it, naming the queues it does know,
//! instead of printing zeros or "paused emials".
//!
//! Known means what Redis says: a queue some job was ever enqueued to (the
//! list `redq queues` shows), or one that is paused (a queue may be paused
//! before its first job, so it can be resumed again).

use crate::aggregate::Target;
use crate::failure::Failure;
use crate::text::inert;

/// How many known names an error lists before "and N more".
const LISTED: usize = 20;

/// Fail (exit 1) unless `name` is a queue of the namespace.
pub async fn require_known(queue: &Target, name: &str) -> Result<(), Failure> {
    check(queue, name, "").await
}

/// As [`require_known`], saying how to pause a queue before its first job.
pub async fn require_known_to_pause(queue: &Target, name: &str) -> Result<(), Failure> {
    check(
        queue,
        name,
        "; to pause it before its first job, add --allow-unknown",
    )
    .await
}

/// As [`require_known`], with `advice` after the list of known queues.
pub async fn require_known_with(queue: &Target, name: &str, advice: &str) -> Result<(), Failure> {
    check(queue, name, advice).await
}

async fn check(queue: &Target, name: &str, advice: &str) -> Result<(), Failure> {
    let known = queue.queues().await?;
    if known.iter().any(|q| q == name) || queue.counts(name).await?.paused {
        return Ok(());
    }
    Err(Failure::Failed(format!(
        "no queue named {} in namespace {} ({}); check the name and --namespace{}{advice}",
        inert(name),
        inert(queue.namespace()),
        listing(&known),
        match sharded_as(queue).await? {
            Some((n, base)) => format!(", or {}", shards_advice(queue.namespace(), n, &base)),
            None => String::new(),
        },
    )))
}

/// The shard count and base of the sharded queue this one namespace
/// belongs to, as its base or as one of its shards (its jobs are then in
/// the shards' namespaces, not all here).
async fn sharded_as(queue: &Target) -> Result<Option<(usize, String)>, Failure> {
    if queue.is_sharded() {
        return Ok(None);
    }
    Ok(queue.shards()[0].sharded_as().await?)
}

/// What a listing of a namespace with no queues at all says on stderr:
/// an empty table reads as "all clear", while the usual cause is a
/// namespace or database that is not the one the queues live in (a typo in
/// REDQ_NAMESPACE, a URL without its `/db`).
pub async fn note_if_empty(queue: &Target, known: &[String]) -> Result<(), Failure> {
    if !known.is_empty() {
        return Ok(());
    }
    eprintln!("redq: {}", empty_namespace(queue).await?);
    Ok(())
}

/// "no queues in namespace NS; " and the likely cause: what
/// [`note_if_empty`] prints, and what `redq metrics` says at start and on
/// its page while the namespace has no queues.
pub async fn empty_namespace(queue: &Target) -> Result<String, Failure> {
    let namespace = inert(queue.namespace());
    let why = match sharded_as(queue).await? {
        Some((n, base)) => shards_advice(queue.namespace(), n, &base),
        None => "nothing was ever enqueued there on this Redis database; check --namespace \
                 (or REDQ_NAMESPACE) and the database number at the end of the URL (/0 when \
                 none)"
            .to_owned(),
    };
    Ok(format!("no queues in namespace {namespace}; {why}"))
}

/// "add --shards N: NS is the base of a queue spread over N shards", or,
/// for one of its shards, which base and count to watch instead.
pub fn shards_advice(namespace: &str, n: usize, base: &str) -> String {
    if namespace == base {
        return format!(
            "add --shards {n}: {} is the base of a queue spread over {n} shards",
            inert(namespace)
        );
    }
    format!(
        "{} is one shard of {}, a queue spread over {n} shards: use --namespace {} \
         --shards {n} to see all of it",
        inert(namespace),
        inert(base),
        inert(base)
    )
}

fn listing(known: &[String]) -> String {
    if known.is_empty() {
        return "it has no queues yet".into();
    }
    let shown: Vec<String> = known.iter().take(LISTED).map(|q| inert(q)).collect();
    let more = known.len().saturating_sub(LISTED);
    let mut text = format!("known: {}", shown.join(", "));
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}
