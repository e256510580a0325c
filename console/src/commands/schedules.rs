//! `redq schedules [list]|trigger|pause|resume|delete NAME`: the driver's
//! schedule calls, on the shard that has the schedule. An unknown name is
//! an error (exit 1) naming the schedules there are.

use redq::schedule::{ScheduleChange, Triggered};
use serde_json::json;

use crate::aggregate::Target;
use crate::cli::SchedulesCommand;
use crate::failure::Failure;
use crate::output::{outln, print_json};
use crate::text::inert;

/// Whether a `schedules` subcommand changes Redis.
pub fn mutates(command: &Option<SchedulesCommand>) -> Option<&'static str> {
    match command {
        None | Some(SchedulesCommand::List) => None,
        Some(SchedulesCommand::Trigger { .. }) => Some("schedules trigger"),
        Some(SchedulesCommand::Pause { .. }) => Some("schedules pause"),
        Some(SchedulesCommand::Resume { .. }) => Some("schedules resume"),
        Some(SchedulesCommand::Delete { .. }) => Some("schedules delete"),
    }
}

pub async fn run(
    target: &Target,
    command: Option<SchedulesCommand>,
    json: bool,
) -> Result<(), Failure> {
    let (name, verb, change) = match command {
        None | Some(SchedulesCommand::List) => {
            return super::listing::schedules(target, json).await
        }
        Some(SchedulesCommand::Trigger { name }) => return trigger(target, &name, json).await,
        Some(SchedulesCommand::Pause { name }) => {
            let change = target.pause_schedule(&name).await?;
            (name, "paused", change)
        }
        Some(SchedulesCommand::Resume { name }) => {
            let change = target.resume_schedule(&name).await?;
            (name, "resumed", change)
        }
        Some(SchedulesCommand::Delete { name, yes }) => {
            if !yes {
                return Err(Failure::Usage(format!(
                    "delete removes schedule {} for good (the jobs it enqueued stay); add --yes to do it",
                    inert(&name)
                )));
            }
            let change = target.delete_schedule(&name).await?;
            (name, "deleted", change)
        }
    };
    let shown = inert(&name);
    match change {
        ScheduleChange::NotFound => return Err(not_found(target, &name).await),
        ScheduleChange::Done if json => {
            print_json(&json!({ "schedule": name, "action": verb, "changed": true }))
        }
        ScheduleChange::Unchanged if json => {
            print_json(&json!({ "schedule": name, "action": verb, "changed": false }))
        }
        ScheduleChange::Done => outln!("{verb} schedule {shown}"),
        ScheduleChange::Unchanged => outln!("schedule {shown} was already {verb}"),
    }
    tracing::info!(schedule = %name, action = verb, "schedule changed");
    Ok(())
}

async fn trigger(target: &Target, name: &str, json: bool) -> Result<(), Failure> {
    match target.trigger_schedule(name).await? {
        Triggered::NotFound => Err(not_found(target, name).await),
        Triggered::Enqueued(id) => {
            tracing::info!(schedule = %name, job = %id, "schedule triggered");
            if json {
                print_json(&json!({ "schedule": name, "action": "triggered", "job": id }));
            } else {
                outln!(
                    "triggered schedule {}: enqueued job {}",
                    inert(name),
                    inert(&id)
                );
            }
            Ok(())
        }
    }
}

/// The refusal for a schedule no shard has, naming those there are.
async fn not_found(target: &Target, name: &str) -> Failure {
    let names: Vec<String> = match target.schedules().await {
        Ok(Some(all)) => all.into_iter().map(|s| inert(&s.name)).collect(),
        _ => Vec::new(),
    };
    let known = if names.is_empty() {
        "there are no schedules".to_owned()
    } else {
        format!("the schedules are {}", names.join(", "))
    };
    Failure::Failed(format!("no schedule is named {}; {known}", inert(name)))
}
