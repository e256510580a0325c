//! `redq jobs list|show|…`: one file per subcommand, dispatched here.

mod list;
mod show;

use crate::aggregate::Target;
use crate::cli::{JobsCommand, JobsList};
use crate::failure::Failure;

/// Whether a `jobs` subcommand changes Redis (what `--read-only` refuses).
pub fn mutates(command: &Option<JobsCommand>) -> Option<&'static str> {
    match command {
        None | Some(JobsCommand::List(_)) | Some(JobsCommand::Show { .. }) => None,
    }
}

/// Run `redq jobs`: a subcommand, or the bare form's listing.
pub async fn run(
    queue: &Target,
    command: Option<JobsCommand>,
    bare: JobsList,
    json: bool,
) -> Result<(), Failure> {
    match command {
        None => list::run(queue, bare, json).await,
        Some(JobsCommand::List(args)) => list::run(queue, args, json).await,
        Some(JobsCommand::Show { id }) => show::run(queue, &id, json).await,
    }
}
