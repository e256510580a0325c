//! The `redq` binary; everything lives in the library (`redq_console`).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // `redq bench` keeps comparison-script semantics (unknown flags ignored,
    // the first occurrence of a flag wins), which clap does not do.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("bench") {
        return redq_console::bench::main(&args[2..]);
    }
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
