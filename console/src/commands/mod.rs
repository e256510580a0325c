//! The scriptable subcommands. Each reads or changes Redis through the
//! driver's API only, and prints a table or JSON (`-o json`).

mod connect;
mod dead;
mod dead_bound;
mod dead_group;
mod dead_groups;
mod enqueue;
mod events;
mod functions;
mod interrupt;
mod jobs;
mod known;
pub mod leases;
mod limits;
mod listing;
pub mod metrics;
mod record_format;
mod retention;
pub mod schedules;
pub mod workers;
mod workflows;

pub use connect::{builder, check_url, connect, connect_as, connect_failure, COMMAND_TIMEOUT};

use crate::cli::{Command, Connection, Global};
use crate::failure::Failure;
use known::require_known;

/// Whether a command changes Redis.
pub fn mutates(command: &Command) -> Option<&'static str> {
    use crate::cli::DeadCommand as D;
    match command {
        Command::Pause { .. } => Some("pause"),
        Command::Resume { .. } => Some("resume"),
        Command::Enqueue { .. } => Some("enqueue"),
        Command::Dead { command } => match command {
            D::Requeue { .. } => Some("dead requeue"),
            D::Delete { .. } => Some("dead delete"),
            D::Purge { .. } => Some("dead purge"),
            D::Bound { command } => dead_bound::mutates(command),
            D::List { .. } | D::Groups { .. } | D::Show { .. } => None,
        },
        Command::Jobs { command, .. } => jobs::mutates(command),
        Command::Retention { command } => match command {
            crate::cli::RetentionCommand::Show { .. } => None,
            crate::cli::RetentionCommand::Set { .. } => Some("retention set"),
            crate::cli::RetentionCommand::Clear { .. } => Some("retention clear"),
        },
        Command::Limits { command } => match command {
            crate::cli::LimitsCommand::List { .. } => None,
            crate::cli::LimitsCommand::Set { .. } => Some("limits set"),
            crate::cli::LimitsCommand::Clear { .. } => Some("limits clear"),
        },
        Command::Batches {
            command: crate::cli::BatchesCommand::Cancel { .. },
        } => Some("batches cancel"),
        Command::Deps { command } => match command {
            crate::cli::DepsCommand::Release { .. } => Some("deps release"),
            crate::cli::DepsCommand::Fail { .. } => Some("deps fail"),
            crate::cli::DepsCommand::Show { .. } => None,
        },
        Command::Demo { .. } => Some("demo"),
        Command::Schedules { command } => schedules::mutates(command),
        Command::Leases { .. } => Some("leases reclaim"),
        Command::Workers {
            command: Some(command),
        } => Some(workers::mutates(command)),
        Command::Functions {
            command: Some(crate::cli::FunctionsCommand::Prune),
        } => Some("functions prune"),
        Command::RecordFormat { set: Some(_), .. } => Some("record-format"),
        Command::RecordFormat { rewrite: true, .. } => Some("record-format --rewrite"),
        Command::Metrics {
            command: Some(crate::cli::MetricsCommand::Off { .. }),
            ..
        } => Some("metrics off"),
        Command::Metrics {
            command: Some(crate::cli::MetricsCommand::On { .. }),
            ..
        } => Some("metrics on"),
        // Every other command only reads; each is named, so that a new
        // command is classified here rather than let through by default.
        Command::Queues
        | Command::Stats { .. }
        | Command::Batches { .. }
        | Command::Workers { command: None }
        | Command::Functions { .. }
        | Command::RecordFormat { .. }
        | Command::Metrics { .. }
        | Command::Events { .. }
        | Command::Completions { .. } => None,
    }
}

/// Run one subcommand (not `completions` or `demo`).
pub async fn run(
    connection: &Connection,
    global: &Global,
    command: Command,
) -> Result<(), Failure> {
    if let Some(what) = mutates(&command) {
        if global.read_only {
            return Err(Failure::read_only(what));
        }
        if connection.url.is_none() {
            return Err(Failure::unnamed_redis(what));
        }
    }
    // The exporter connects at its first scrape, and serves `redq_up 0`
    // while Redis is out of reach, rather than failing here.
    if let Command::Metrics {
        command: None,
        listen: Some(listen),
        max_queues,
        no_histograms,
    } = command
    {
        return metrics::run(connection, listen, max_queues, !no_histograms).await;
    }
    let queue = connect(connection).await?;
    let json = global.output == crate::cli::Output::Json;
    match command {
        Command::Queues => listing::queues(&queue, json).await,
        Command::Stats { queue: name } => {
            if let Some(name) = &name {
                require_known(&queue, name).await?;
            }
            listing::stats(&queue, name, json).await
        }
        Command::Jobs { command, list } => jobs::run(&queue, command, list, json).await,
        Command::Dead { command } => dead::run(&queue, command, json).await,
        Command::Retention { command } => retention::run(&queue, command, json).await,
        Command::Limits { command } => limits::run(&queue, command, json).await,
        Command::Batches { command } => workflows::batches(&queue, command, json).await,
        Command::Deps { command } => workflows::deps(&queue, command, json).await,
        Command::Pause {
            queue: name,
            allow_unknown,
        } => {
            if !allow_unknown {
                known::require_known_to_pause(&queue, &name).await?;
            }
            listing::pause(&queue, &name, true, json).await
        }
        Command::Resume { queue: name } => {
            require_known(&queue, &name).await?;
            listing::pause(&queue, &name, false, json).await
        }
        Command::Workers { command: None } => workers::list(&queue, json).await,
        Command::Workers {
            command: Some(command),
        } => workers::run(&queue, command, json).await,
        Command::Functions { command } => functions::run(&queue, command, json).await,
        Command::RecordFormat {
            set,
            check,
            rewrite,
        } => record_format::run(&queue, set, record_format::Records { check, rewrite }, json).await,
        Command::Events {
            follow,
            from,
            kind,
            traffic,
        } => events::run(connection, &queue, follow, &from, (&kind, traffic), json).await,
        Command::Metrics {
            command:
                Some(crate::cli::MetricsCommand::Show {
                    queue: name,
                    window,
                }),
            ..
        } => {
            require_known(&queue, &name).await?;
            metrics::show::run(&queue, &name, window, json).await
        }
        Command::Metrics {
            command: Some(crate::cli::MetricsCommand::Off { queue: name }),
            ..
        } => {
            require_known(&queue, &name).await?;
            metrics::switch::run(&queue, &name, false, json).await
        }
        Command::Metrics {
            command: Some(crate::cli::MetricsCommand::On { queue: name }),
            ..
        } => {
            require_known(&queue, &name).await?;
            metrics::switch::run(&queue, &name, true, json).await
        }
        Command::Metrics { .. } => unreachable!("served before connecting"),
        Command::Schedules { command } => schedules::run(&queue, command, json).await,
        Command::Leases { command } => leases::run(&queue, command, json).await,
        Command::Enqueue {
            queue: name,
            json: payload,
            priority,
            delay,
            dedup_key,
            ordering_key,
            name: job_name,
            max_attempts,
            attempts,
        } => {
            let options = enqueue::Options {
                priority,
                delay,
                dedup_key,
                ordering_key,
                name: job_name,
                max_attempts,
                attempts,
            };
            enqueue::run(&queue, &name, &payload, options, json).await
        }
        Command::Completions { .. } | Command::Demo { .. } => {
            unreachable!("handled before connecting")
        }
    }
}
