//! `redq jobs search QUEUE TEXT [--state S]`: the queue's live jobs whose
//! payload contains TEXT, found in Redis by the driver's bounded search
//! steps (`redq::search`), listed as `redq jobs list` lists a page.

use std::collections::BTreeSet;

use redq::search::SEARCH_START;

use crate::aggregate::Target;
use crate::cli::JobsSearch;
use crate::commands::known::require_known;
use crate::commands::listing::print_jobs;
use crate::failure::Failure;

pub async fn run(target: &Target, args: JobsSearch, json: bool) -> Result<(), Failure> {
    require_known(target, &args.queue).await?;
    let state = args.state.map(|s| s.state());
    let mut seen = BTreeSet::new();
    let mut jobs = Vec::new();
    let mut cursor = SEARCH_START.to_owned();
    let mut examined = 0;
    loop {
        let page = target.search(&args.queue, &args.text, &cursor).await?;
        examined += page.examined;
        for job in page.jobs {
            // A rehash during the walk may return a job twice.
            if state.is_none_or(|s| s == job.state) && seen.insert(job.id.clone()) {
                jobs.push(job);
            }
        }
        match page.next {
            Some(next) => cursor = next,
            None => break,
        }
    }
    tracing::info!(queue = %args.queue, found = jobs.len(), examined, "searched");
    jobs.sort_by(|a, b| a.enqueued_at.cmp(&b.enqueued_at).then(a.id.cmp(&b.id)));
    let total = jobs.len() as u64;
    print_jobs(&jobs, &target.shard_namespaces(), total, 0, json);
    Ok(())
}
