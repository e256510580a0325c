//! `redq functions [prune]`: redq's Redis Function libraries on the server,
//! and dropping those of other driver versions (see the driver's
//! `Operator::prune_function_libraries` for why nothing else drops them).

use redq::FunctionLibrary;
use serde_json::json;

use crate::aggregate::Target;
use crate::cli::FunctionsCommand;
use crate::failure::Failure;
use crate::output::{count, outln, print_json, Table};

pub async fn run(
    target: &Target,
    command: Option<FunctionsCommand>,
    json: bool,
) -> Result<(), Failure> {
    match command {
        None => list(target, json).await,
        Some(FunctionsCommand::Prune) => prune(target, json).await,
    }
}

async fn list(target: &Target, json: bool) -> Result<(), Failure> {
    let libraries = target.function_libraries().await?;
    if json {
        print_json(&json!(libraries
            .iter()
            .map(library_json)
            .collect::<Vec<_>>()));
        return Ok(());
    }
    if libraries.is_empty() {
        outln!(
            "no redq function libraries on this server (scripts are called by EVALSHA, \
             or no service has called one yet)"
        );
        return Ok(());
    }
    let mut table = Table::new(&["LIBRARY", "SCRIPT", "VERSION", ">CODE BYTES"]);
    for library in &libraries {
        table.row(vec![
            library.name.clone(),
            library.script.clone(),
            version(library).to_owned(),
            library.code_bytes.to_string(),
        ]);
    }
    table.print();
    let others: Vec<&FunctionLibrary> = libraries.iter().filter(|l| !l.current).collect();
    if !others.is_empty() {
        outln!(
            "{} of another redq version ({} bytes of code): `redq functions prune` drops them",
            count(others.len() as u64, "library", "libraries"),
            others.iter().map(|l| l.code_bytes).sum::<usize>(),
        );
    }
    Ok(())
}

async fn prune(target: &Target, json: bool) -> Result<(), Failure> {
    let dropped = target.prune_function_libraries().await?;
    tracing::info!(dropped = dropped.len(), "pruned function libraries");
    if json {
        print_json(&json!({
            "action": "pruned",
            "dropped": dropped.iter().map(library_json).collect::<Vec<_>>(),
        }));
    } else {
        outln!(
            "dropped {} of other redq versions ({} bytes of code)",
            count(
                dropped.len() as u64,
                "function library",
                "function libraries"
            ),
            dropped.iter().map(|l| l.code_bytes).sum::<usize>(),
        );
    }
    Ok(())
}

/// "this" for the libraries this build calls, else "other".
fn version(library: &FunctionLibrary) -> &'static str {
    if library.current {
        "this"
    } else {
        "other"
    }
}

fn library_json(library: &FunctionLibrary) -> serde_json::Value {
    json!({
        "library": library.name,
        "script": library.script,
        "version": version(library),
        "code_bytes": library.code_bytes,
    })
}
