//! `redq`, the operator console for redq queues: a live terminal UI on a
//! Redis URL (the default), scriptable subcommands, and a self-contained
//! demo.
//!
//! The console never touches Redis keys itself: it reads and changes queues
//! only through the driver's API (`redq::RedisQueue`), so every mutation is
//! one of the driver's atomic scripts, run in bounded batches.
//!
//! Layout: `tui` holds the live console (state, input, source, view, theme,
//! app), `commands` the subcommands, `demo` the demo, and small helpers
//! (`clock`, `text`, `signature`, `output`) are shared by all three.
//! `aggregate` is what they all read and change: one namespace, or every
//! shard of a sharded queue seen as one.

pub mod aggregate;
pub mod bench;
pub mod canary;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod dead_census;
pub mod demo;
pub mod event_fields;
pub mod failure;
pub mod flow;
pub mod logging;
pub mod output;
pub mod registry;
pub mod requeue_attempts;
pub mod server;
pub mod signature;
pub mod text;
pub mod tui;
pub mod workflow;

use clap::CommandFactory;

use cli::{Cli, Command};
use failure::Failure;
use tui::state::Settings;
use tui::theme::Theme;

/// Whether colour is wanted: not with `--no-color`, nor when `NO_COLOR` is
/// set to anything non-empty (<https://no-color.org>).
pub fn color_wanted(no_color_flag: bool) -> bool {
    !no_color_flag && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Run the parsed command line.
pub fn run(cli: Cli) -> Result<(), Failure> {
    // A subcommand that only reads is refused by an ACL only for a read,
    // as a run under --read-only is: the advice is what to grant.
    let only_reads = cli.global.read_only
        || cli.command.as_ref().is_some_and(|command| {
            !matches!(command, Command::Demo { .. }) && commands::mutates(command).is_none()
        });
    failure::note_read_only(only_reads);
    if let Some(Command::Completions { shell }) = &cli.command {
        // Generated into memory first: clap_complete panics on a failed
        // write, and the output goes through the one place that does not.
        let mut script = Vec::new();
        clap_complete::generate(*shell, &mut Cli::command(), "redq", &mut script);
        output::out!("{}", String::from_utf8_lossy(&script));
        return Ok(());
    }
    if let Some(path) = &cli.global.log_file {
        logging::to_file(path).map_err(|e| {
            Failure::Failed(format!("cannot open log file {}: {e}", path.display()))
        })?;
    }
    let connection = cli.connection.from_env()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(async move {
        match cli.command {
            None => console(&connection, &cli.global).await,
            Some(Command::Demo {
                into_existing,
                yes_write_demo_traffic,
            }) => {
                demo::run(
                    &connection,
                    &cli.global,
                    into_existing,
                    yes_write_demo_traffic,
                )
                .await
            }
            Some(command) => commands::run(&connection, &cli.global, command).await,
        }
    });
    // Background tasks (the Redis client's reconnect loop) must not keep the
    // process alive after the console quit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    result
}

/// The live console draws on a terminal and reads its keys: without one
/// (a pipe, cron, CI) say what to use instead, before connecting, rather
/// than the terminal library's "No such device or address (os error 6)".
pub fn require_terminal() -> Result<(), Failure> {
    use std::io::IsTerminal;
    // Keys are read from the controlling terminal, which a process started
    // without one (setsid, a service) cannot open even with a tty stdout.
    let keys = cfg!(not(unix)) || std::fs::File::open("/dev/tty").is_ok();
    if std::io::stdout().is_terminal() && keys {
        return Ok(());
    }
    Err(Failure::Usage(
        "the console needs a terminal; for scripts use a subcommand \
         with -o json, e.g. redq queues -o json (see redq --help)"
            .into(),
    ))
}

/// What the live console shows and may do on `connection`.
pub fn console_settings(
    connection: &cli::Connection,
    global: &cli::Global,
) -> Result<Settings, Failure> {
    let (base, n) = (connection.namespace(), connection.shards());
    Ok(Settings {
        url: redq::redact_url(connection.url()),
        namespace: base.to_owned(),
        shards: match n {
            1 => Vec::new(),
            _ => redq::shards::shard_namespaces(base, n)?,
        },
        // With no Redis named, the console looks at the default one but
        // changes nothing there.
        read_only: global.read_only || connection.url.is_none(),
        refresh: global.refresh,
    })
}

/// The live console on the connection's Redis. It opens while Redis is out
/// of reach and keeps retrying; settings that retrying cannot fix (a bad
/// URL, a wrong password) are refused at once, as before.
pub async fn console(connection: &cli::Connection, global: &cli::Global) -> Result<(), Failure> {
    require_terminal()?;
    commands::check_url(connection)?;
    let (builder, base, n) = (
        // Its operator actions are the console's on the event stream.
        commands::builder(connection).actor(connection.actor("console")),
        connection.namespace().to_owned(),
        connection.shards(),
    );
    let settings = console_settings(connection, global)?;
    let connect: tui::source::Connector = std::sync::Arc::new(move || {
        let (builder, base) = (builder.clone(), base.clone());
        Box::pin(async move { aggregate::Target::connect(builder, &base, n).await })
    });
    let first = match connect().await {
        Ok(queue) => Some(queue),
        Err(e) if failure::is_unreachable(&e) => None,
        Err(e) => return Err(commands::connect_failure(e)),
    };
    let link = tui::source::Link::new(first, connect);
    tui::app::run_with(link, settings, Theme::new(color_wanted(global.no_color))).await?;
    Ok(())
}
