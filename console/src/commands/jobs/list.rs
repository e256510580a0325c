//! `redq jobs list QUEUE [--state S]` (and the bare `redq jobs QUEUE`).

use crate::aggregate::Target;
use crate::cli::JobsList;
use crate::commands::known::require_known;
use crate::commands::listing::print_jobs;
use crate::failure::Failure;

pub async fn run(queue: &Target, args: JobsList, json: bool) -> Result<(), Failure> {
    // clap requires QUEUE whenever no subcommand lifts it; said plainly in
    // case a future form forgets.
    let Some(name) = args.queue else {
        return Err(Failure::Usage("name the queue to list".into()));
    };
    require_known(queue, &name).await?;
    let page = queue
        .list_jobs(&name, args.state.state(), args.offset, args.limit)
        .await?;
    print_jobs(
        &page.items,
        &queue.shard_namespaces(),
        page.total,
        args.offset,
        json,
    );
    Ok(())
}
