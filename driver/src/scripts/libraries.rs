//! redq's function libraries on a server: which are there, which this
//! build calls, and dropping the others.
//!
//! A handle calling its scripts as Redis Functions ([`ScriptCalls::Auto`],
//! the default, or [`ScriptCalls::Functions`]) loads, when it connects, the
//! library of each script it calls so that the server lacks, named
//! `redq_<script>_<hash of its text>`. The server
//! keeps them (replicated, saved in RDB and AOF) after every handle is gone,
//! and a driver whose scripts changed loads libraries of new names beside
//! the old. Nothing drops those on its own: a driver cannot tell an earlier
//! version's libraries from those of a service still running it. An
//! operator can, after a deploy, and drops them with
//! [`Operator::prune_function_libraries`] (`redq functions prune`). A
//! library dropped while a driver still calls it costs that driver one
//! reload at its next call, nothing else.
//!
//! [`ScriptCalls::Auto`]: crate::ScriptCalls::Auto
//! [`ScriptCalls::Functions`]: crate::ScriptCalls::Functions
//! [`Operator::prune_function_libraries`]: crate::Operator::prune_function_libraries

use fred::clients::Client;
use fred::interfaces::FunctionInterface;
use fred::types::Value;

/// What every redq library's name starts with.
const PREFIX: &str = "redq_";

/// One of redq's function libraries on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionLibrary {
    /// Its name, `redq_<script>_<hash>`.
    pub name: String,
    /// The script it holds (`lua/<script>.lua`).
    pub script: String,
    /// Whether this build of the driver calls it: the library of its own
    /// script text. The others are another version's (earlier or later).
    pub current: bool,
    /// The size of its code in bytes, which the server keeps in memory
    /// (more again once it has run: the functions it built).
    pub code_bytes: usize,
}

/// The libraries the server `client` talks to holds whose names are
/// redq's, by name.
pub(crate) async fn list(client: &Client) -> Result<Vec<FunctionLibrary>, fred::error::Error> {
    let listed: Value = client
        .function_list(Some(format!("{PREFIX}*")), true)
        .await?;
    let mut libraries: Vec<FunctionLibrary> = match listed {
        Value::Array(entries) => entries.into_iter().filter_map(library).collect(),
        _ => Vec::new(),
    };
    libraries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(libraries)
}

/// The names of redq's libraries on the server `client` talks to, without
/// their code (what a connect reads to load only the missing ones).
pub(crate) async fn names(client: &Client) -> Result<Vec<String>, fred::error::Error> {
    let listed: Value = client
        .function_list(Some(format!("{PREFIX}*")), false)
        .await?;
    let Value::Array(entries) = listed else {
        return Ok(Vec::new());
    };
    Ok(entries
        .into_iter()
        .filter_map(|entry| {
            let fields: Vec<Value> = entry.convert().ok()?;
            field(&fields, "library_name")?.as_string()
        })
        .collect())
}

/// Field `name` of a `FUNCTION LIST` entry (a flat list of name, value).
fn field(fields: &[Value], name: &str) -> Option<Value> {
    fields
        .chunks(2)
        .find(|pair| pair[0].as_str().as_deref() == Some(name))
        .map(|pair| pair[1].clone())
}

/// One `FUNCTION LIST WITHCODE` entry, when its name is a redq library's.
fn library(entry: Value) -> Option<FunctionLibrary> {
    let fields: Vec<Value> = entry.convert().ok()?;
    let name = field(&fields, "library_name")?.as_string()?;
    let script = script_of(&name)?.to_owned();
    let code_bytes = field(&fields, "library_code")?
        .as_bytes()
        .map(<[u8]>::len)?;
    // Only the script the name names is composed to compare (the others
    // may never be used by this process).
    let current = super::function_name(&script) == Some(name.as_str());
    Some(FunctionLibrary {
        name,
        script,
        current,
        code_bytes,
    })
}

/// The script of a library named `redq_<script>_<16 hex digits>`.
fn script_of(name: &str) -> Option<&str> {
    let (script, hash) = name.strip_prefix(PREFIX)?.rsplit_once('_')?;
    let hex = hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && !script.is_empty()).then_some(script)
}

/// Drop library `name` from every primary (`FUNCTION DELETE`); a server
/// that no longer has it is not an error.
pub(crate) async fn delete(client: &Client, name: &str) -> Result<(), fred::error::Error> {
    match client.function_delete_cluster(name).await {
        Err(err)
            if err
                .details()
                .to_ascii_lowercase()
                .contains("library not found") =>
        {
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::super::SCRIPTS;
    use super::*;

    #[test]
    fn a_library_name_gives_its_script() {
        assert_eq!(script_of("redq_enqueue_0123456789abcdef"), Some("enqueue"));
        assert_eq!(
            script_of("redq_requeue_dead_0123456789ABCDEF"),
            Some("requeue_dead")
        );
        for other in [
            "redq_enqueue",
            "redq__0123456789abcdef",
            "redq_enqueue_0123",
            "redq_enqueue_0123456789abcdeg",
            "mylib_enqueue_0123456789abcdef",
        ] {
            assert_eq!(script_of(other), None, "{other}");
        }
    }

    #[test]
    fn every_library_this_build_loads_is_named_so_its_script_is_read_back() {
        for loaded in SCRIPTS.iter() {
            assert_eq!(script_of(&loaded.built().function_name), Some(loaded.name));
        }
    }
}
