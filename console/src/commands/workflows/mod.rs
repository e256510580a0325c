//! `redq batches list|show|cancel` and `redq deps show|release|fail`:
//! workflows (issue 18) through the driver's operator calls, in the words
//! the Workflows screen uses (`crate::workflow`).

mod batches;
mod deps;
mod print;

use crate::aggregate::Target;
use crate::cli::{BatchesCommand, DepsCommand};
use crate::failure::Failure;

pub async fn batches(queue: &Target, command: BatchesCommand, json: bool) -> Result<(), Failure> {
    match command {
        BatchesCommand::List { offset, limit } => batches::list(queue, offset, limit, json).await,
        BatchesCommand::Show { id, cursor, limit } => {
            batches::show(queue, &id, &cursor, limit as usize, json).await
        }
        BatchesCommand::Cancel { id, yes } => batches::cancel(queue, &id, yes, json).await,
    }
}

pub async fn deps(queue: &Target, command: DepsCommand, json: bool) -> Result<(), Failure> {
    match command {
        DepsCommand::Show { id } => deps::show(queue, &id, json).await,
        DepsCommand::Release { id } => deps::decide(queue, &id, true, json).await,
        DepsCommand::Fail { id } => deps::decide(queue, &id, false, json).await,
    }
}
