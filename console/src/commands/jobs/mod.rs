//! `redq jobs list|show|…`: one file per subcommand, dispatched here.

mod cancel;
pub(super) mod changes;
mod dead_letter;
mod delete;
mod edit;
mod list;
mod promote;
mod retry;
mod search;
mod show;

pub use show::run as show;

use crate::aggregate::Target;
use crate::cli::{JobsCommand, JobsList};
use crate::failure::Failure;

/// Whether a `jobs` subcommand changes Redis (what `--read-only` refuses).
pub fn mutates(command: &Option<JobsCommand>) -> Option<&'static str> {
    match command {
        None | Some(JobsCommand::List(_)) | Some(JobsCommand::Show { .. }) => None,
        Some(JobsCommand::Promote(_)) => Some("jobs promote"),
        Some(JobsCommand::Retry(_)) => Some("jobs retry"),
        Some(JobsCommand::Delete(_)) => Some("jobs delete"),
        Some(JobsCommand::Edit(_)) => Some("jobs edit"),
        Some(JobsCommand::Cancel(_)) => Some("jobs cancel"),
        Some(JobsCommand::DeadLetter(_)) => Some("jobs dead-letter"),
        Some(JobsCommand::Search(_)) => None,
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
        Some(JobsCommand::Promote(args)) => {
            promote::run(queue, args.ids, args.queue, args.yes, json).await
        }
        Some(JobsCommand::Retry(args)) => {
            retry::run(queue, args.ids, args.queue, args.yes, json).await
        }
        Some(JobsCommand::Delete(args)) => {
            let all = args.queue.zip(args.state.map(|s| s.state()));
            delete::run(queue, args.ids, all, args.force, args.yes, json).await
        }
        Some(JobsCommand::Edit(args)) => {
            let source = match (args.payload, args.file) {
                (_, Some(path)) => edit::Source::File(path),
                (Some(text), None) if text == "-" => edit::Source::Stdin,
                (Some(text), None) => edit::Source::Argument(text),
                (None, None) => edit::Source::Stdin,
            };
            edit::run(queue, &args.id, source, json).await
        }
        Some(JobsCommand::Cancel(args)) => cancel::run(queue, args, json).await,
        Some(JobsCommand::DeadLetter(args)) => {
            dead_letter::run(queue, args.ids, &args.reason, json).await
        }
        Some(JobsCommand::Search(args)) => search::run(queue, args, json).await,
    }
}
