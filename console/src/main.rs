//! The `redq` binary; everything lives in the library (`redq_console`).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Usage errors exit 2 here (clap), --help and --version exit 0.
    let cli = redq_console::cli::Cli::parse();
    match redq_console::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("redq: {}", failure.message());
            ExitCode::from(failure.code())
        }
    }
}
