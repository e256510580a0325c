//! `redq`: the operator console for redq queues.
//!
//! Until the console issue lands, this binary only prints its version and help.

use clap::Parser;

/// The redq operator console (the live TUI and subcommands are coming).
#[derive(Debug, Parser)]
#[command(name = "redq", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    println!(
        "redq {}: the console is not built yet; see README.md",
        env!("CARGO_PKG_VERSION")
    );
}
