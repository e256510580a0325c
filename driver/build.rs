//! Generates the Rust positions of the stored records' fields from their one
//! definition, the position tables `M` in `lua/lib/job_record.lua` and `S` in
//! `lua/lib/schedule_record.lua` (see `lua/README.md`), so the Rust decoders
//! and the Lua scripts cannot disagree about where a field is. The build
//! fails when a table's positions do not run 1, 2, 3 ... in line order, or
//! its length constant does not count them. The job record's oldest length
//! and its stored form of "due when enqueued" come from the same file.
//!
//! `lua/` here is the package's symlink to the workspace's `lua/`; `cargo
//! package` copies the files it points at, so this also works from the
//! published tarball.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for (source, table, len, oldest, due_at_enqueue, out) in [
        (
            "lua/lib/job_record.lua",
            "M",
            "JOB_LEN",
            Some("OLDEST_JOB_LEN"),
            Some("DUE_AT_ENQUEUE"),
            "job_fields.rs",
        ),
        (
            "lua/lib/schedule_record.lua",
            "S",
            "SCHEDULE_LEN",
            None,
            None,
            "schedule_fields.rs",
        ),
    ] {
        println!("cargo:rerun-if-changed={source}");
        let text =
            std::fs::read_to_string(source).unwrap_or_else(|e| panic!("cannot read {source}: {e}"));
        let names = field_names(&text, table)
            .and_then(|names| check_len(&text, len, names))
            .unwrap_or_else(|why| panic!("{source}: table {table}: {why}"));
        let mut rust = positions(source, table, &names);
        if let Some(oldest) = oldest {
            let n = declared(&text, oldest)
                .filter(|n| *n <= names.len())
                .unwrap_or_else(|| {
                    panic!("{source}: no line `local {oldest} = <number up to {len}>`")
                });
            let _ = writeln!(
                rust,
                "/// Fields of the oldest record layout still read.\npub const OLDEST_LEN: usize = {n};"
            );
        }
        if table == "M" {
            let _ = writeln!(
                rust,
                "{}",
                compact_fields(&text, &names).unwrap_or_else(|why| panic!("{source}: {why}"))
            );
        }
        if let Some(due) = due_at_enqueue {
            let n = declared(&text, due)
                .unwrap_or_else(|| panic!("{source}: no line `local {due} = <number>`"));
            let _ = writeln!(
                rust,
                "/// The stored not_before of a job due when it was enqueued (read as its enqueued_at).\npub const DUE_AT_ENQUEUE: u64 = {n};"
            );
        }
        std::fs::write(Path::new(&out_dir).join(out), rust).expect("write generated positions");
    }
}

/// The field names of `local TABLE = { name = 1, name = 2, ... }`, one
/// field a line (a `--` comment may follow), in position order.
fn field_names(text: &str, table: &str) -> Result<Vec<String>, String> {
    let opening = format!("local {table} = {{");
    let mut lines = text.lines().skip_while(|line| line.trim() != opening);
    if lines.next().is_none() {
        return Err(format!("no line `{opening}`"));
    }
    let mut names = Vec::new();
    for line in lines {
        let code = line.split("--").next().unwrap_or("").trim();
        if code == "}" {
            return Ok(names);
        }
        let parsed = code
            .strip_suffix(',')
            .and_then(|entry| entry.split_once('='))
            .map(|(name, at)| (name.trim(), at.trim().parse::<usize>()));
        let Some((name, Ok(at))) = parsed else {
            return Err(format!("expected `field_name = position,`, got `{line}`"));
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            return Err(format!("`{name}` is not a field name"));
        }
        if at != names.len() + 1 {
            return Err(format!(
                "`{name}` is at position {at}, expected {}: positions run 1, 2, 3 ... in line order",
                names.len() + 1
            ));
        }
        names.push(name.to_owned());
    }
    Err("no closing `}` line".to_owned())
}

/// The compact record's fields (`local COMPACT_FIELDS = { M.a, M.b, ... }`,
/// counted by `COMPACT_LEN`, at least `COMPACT_MIN` stored) as Rust
/// constants: their positions (from 0) in the whole record, in stored order.
fn compact_fields(text: &str, names: &[String]) -> Result<String, String> {
    let prefix = "local COMPACT_FIELDS = {";
    let list = text
        .lines()
        .find_map(|line| line.strip_prefix(prefix))
        .and_then(|rest| rest.trim().strip_suffix('}'))
        .ok_or_else(|| format!("no line `{prefix} M.field, ... }}`"))?;
    let mut positions = Vec::new();
    for entry in list.split(',') {
        let name = entry.trim().strip_prefix("M.").unwrap_or("");
        let at = names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| format!("COMPACT_FIELDS: `{}` is not `M.<field>`", entry.trim()))?;
        positions.push(at.to_string());
    }
    let len = declared(text, "COMPACT_LEN").ok_or("no line `local COMPACT_LEN = <number>`")?;
    let min = declared(text, "COMPACT_MIN").ok_or("no line `local COMPACT_MIN = <number>`")?;
    if len != positions.len() || min == 0 || min > len {
        return Err(format!(
            "COMPACT_LEN is {len} and COMPACT_MIN {min} for {} compact fields",
            positions.len()
        ));
    }
    Ok(format!(
        "/// The compact record's fields, positions (from 0) in the whole record, in stored order.\n\
         pub const COMPACT: [usize; {len}] = [{}];\n\
         /// The fewest fields a compact record stores.\n\
         pub const COMPACT_MIN: usize = {min};",
        positions.join(", ")
    ))
}

/// `names`, when `local LEN = n` in `text` counts them.
fn check_len(text: &str, len: &str, names: Vec<String>) -> Result<Vec<String>, String> {
    let declared =
        declared(text, len).ok_or_else(|| format!("no line `local {len} = <number>`"))?;
    if declared != names.len() {
        return Err(format!(
            "{len} is {declared} but the table has {} fields",
            names.len()
        ));
    }
    Ok(names)
}

/// The number in `local NAME = n` in `text`.
fn declared(text: &str, name: &str) -> Option<usize> {
    let prefix = format!("local {name} = ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|n| n.trim().parse::<usize>().ok())
}

/// One `pub const FIELD: usize = position;` (from 0) per field, and `LEN`.
fn positions(source: &str, table: &str, names: &[String]) -> String {
    let mut rust = format!("// Generated by driver/build.rs from {table} in {source}.\n");
    for (i, name) in names.iter().enumerate() {
        let _ = writeln!(
            rust,
            "/// Position (from 0) of `{name}`.\npub const {}: usize = {i};",
            name.to_uppercase()
        );
    }
    let _ = writeln!(
        rust,
        "/// Number of fields.\npub const LEN: usize = {};",
        names.len()
    );
    rust
}
