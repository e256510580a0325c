//! Printing results: aligned tables for people, JSON for scripts. Every
//! cell that came from Redis is made inert before it reaches the terminal.
//! Everything a subcommand prints goes through `outln!` / `out!` (the
//! live console draws through its terminal backend instead).

use std::io::{self, Write};
use std::time::SystemTime;

use redq::{JobRecord, JobState};
use serde::Serializer;
use serde_json::{json, Value};

use crate::clock;
use crate::text::inert;

/// Serialize a time as RFC 3339 UTC.
pub fn ser_time<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&clock::rfc3339(*at))
}

/// Serialize an optional time as RFC 3339 UTC or null.
pub fn ser_opt_time<S: Serializer>(at: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => s.serialize_str(&clock::rfc3339(*at)),
        None => s.serialize_none(),
    }
}

/// A time as a JSON value.
pub fn time(at: SystemTime) -> Value {
    Value::String(clock::rfc3339(at))
}

/// An optional time as a JSON value.
pub fn opt_time(at: Option<SystemTime>) -> Value {
    at.map(time).unwrap_or(Value::Null)
}

/// A job as JSON (times in RFC 3339, payload as stored). With several
/// `shards` (their namespaces) it also says which holds the job: `shard`
/// (index) and `namespace`; with one namespace the shape is unchanged.
pub fn job_json(job: &JobRecord, shards: &[String]) -> Value {
    let mut value = json!({
        "id": job.id,
        "queue": job.queue,
        "state": job.state.as_str(),
        "name": job.name,
        "priority": job.priority,
        "attempts": job.attempts,
        "max_attempts": job.max_attempts,
        "enqueued_at": time(job.enqueued_at),
        "due_at": opt_time(job.due_at),
        "lease_id": job.lease_id,
        "lease_expires_at": opt_time(job.lease_expires_at),
        "holder": job.holder.map(|(node, instance)| json!({"node": node, "instance": instance})),
        "last_error": job.last_error,
        "died_at": opt_time(job.died_at),
        "finished_at": opt_time(job.finished_at),
        "dedup_key": job.dedup_key,
        "ordering_key": job.ordering_key,
        "limit_key": job.limit_key,
        "retry_window_ms": job.retry_window.map(|w| w.as_millis() as u64),
        "payload": job.payload,
    });
    if is_kept(job) {
        // Not kept with a finished job: null, not a default read as a fact.
        value["priority"] = Value::Null;
        value["max_attempts"] = Value::Null;
    }
    if !shards.is_empty() {
        value["shard"] = json!(crate::aggregate::shard_index(shards, &job.namespace));
        value["namespace"] = json!(job.namespace);
    }
    value
}

/// Whether `job` is a kept record of a finished job (completed or
/// cancelled), which keeps no payload, priority or attempt limit.
pub fn is_kept(job: &JobRecord) -> bool {
    matches!(job.state, JobState::Completed | JobState::Cancelled)
}

/// `n` with the noun that agrees with it: "1 dead letter", "2 dead letters".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Print a line on stdout, as `println!` does but through [`write_out`].
macro_rules! outln {
    () => {
        $crate::output::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// Print on stdout, as `print!` does but through [`write_out`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!($($arg)*))
    };
}
pub(crate) use out;

/// Write to stdout, flushed at once so that a failure shows here rather
/// than in a buffer dropped at exit. `println!` would panic on a failed
/// write instead: a reader that stopped reading (`redq events | head -1`)
/// is normal use, not a bug. SIGPIPE stays ignored (Rust's default): the
/// Redis client's sockets need EPIPE as an error, not a signal.
pub fn write_out(args: std::fmt::Arguments) {
    let written = {
        let mut stdout = io::stdout().lock();
        stdout.write_fmt(args).and_then(|()| stdout.flush())
    };
    if let Err(e) = written {
        exit_after_failed_write(&e);
    }
}

/// End the run after stdout failed: quietly with status 0 when the reader
/// went away (it has what it wanted, as ripgrep does), else with one
/// sentence and status 1.
fn exit_after_failed_write(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("redq: could not write the output: {e}");
    std::process::exit(1);
}

/// Print JSON, pretty.
pub fn print_json(value: &Value) {
    outln!("{}", json_text(value, true));
}

/// JSON as the CLI prints it, `pretty` or on one line. serde_json escapes
/// U+0000–U+001F but writes DEL and the C1 controls (U+007F–U+009F) as
/// they are, and U+009B starts a control sequence on many terminals; nor
/// does it escape the characters that show nothing but reorder or hide
/// text ([`crate::text::is_hidden`]: bidirectional overrides, zero-width
/// and other format characters, U+2028/U+2029). Those are escaped too
/// (`\u009b`, `\u202e`), so JSON that reaches a terminal is as inert as
/// the tables. It is still JSON and reads back to the same strings.
pub fn json_text(value: &Value, pretty: bool) -> String {
    let text = if pretty {
        format!("{value:#}")
    } else {
        value.to_string()
    };
    escape_unsafe_characters(&text)
}

/// JSON text with DEL, the C1 controls and the hidden format characters as
/// `\u` escapes (a pair of them, UTF-16 surrogates, above U+FFFF). Outside
/// its strings JSON text is ASCII, so each such character is inside a
/// string, where the escape stands for it.
fn escape_unsafe_characters(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) || crate::text::is_hidden(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A plain-text table.
#[derive(Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Table {
    /// A table with these columns; names starting with `>` are right-aligned.
    pub fn new(columns: &[&str]) -> Table {
        Table {
            header: columns
                .iter()
                .map(|c| c.trim_start_matches('>').to_owned())
                .collect(),
            right: columns.iter().map(|c| c.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row; each cell is made inert.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.iter().map(|c| inert(c)).collect());
    }

    /// The table as text, one line per row, no trailing spaces.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(cell.chars().count());
                }
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let w = widths.get(i).copied().unwrap_or(0);
                let pad = w.saturating_sub(cell.chars().count());
                if i > 0 {
                    out.push_str("  ");
                }
                if self.right.get(i).copied().unwrap_or(false) {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                } else {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad));
                }
            }
            out.trim_end().to_owned()
        };
        let mut out = line(&self.header);
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// Print it.
    pub fn print(&self) {
        out!("{}", self.render());
    }
}

#[cfg(test)]
mod tests {
    use super::{count, json_text, Table};

    #[test]
    fn json_escapes_del_and_the_c1_controls_and_reads_back_the_same() {
        let value = serde_json::json!({"a\u{85}": "x\u{9b}31m\u{7f}\u{a0}é\u{1b}"});
        for pretty in [false, true] {
            let text = json_text(&value, pretty);
            assert!(
                text.contains(r"a\u0085") && text.contains(r"x\u009b31m\u007f"),
                "{text}"
            );
            assert!(!text.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)));
            // Printable non-ASCII stays as it is.
            assert!(text.contains("\u{a0}é"), "{text}");
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&text).unwrap(),
                value
            );
        }
    }

    #[test]
    fn json_escapes_bidi_and_invisible_format_characters_and_reads_back_the_same() {
        let value = serde_json::json!({
            "n": "\u{2028}x\u{ad}\u{feff}",
            "evil\u{202e}": "\u{200b}\u{200d}\u{2066}\u{2029}\u{e0041}",
        });
        for pretty in [false, true] {
            let text = json_text(&value, pretty);
            for escape in [
                r"\u2028x\u00ad\ufeff",
                r"evil\u202e",
                r"\u200b\u200d\u2066\u2029\udb40\udc41",
            ] {
                assert!(text.contains(escape), "{escape} in {text}");
            }
            assert!(!text.chars().any(crate::text::is_hidden), "{text}");
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&text).unwrap(),
                value
            );
        }
    }

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(count(1, "dead letter", "dead letters"), "1 dead letter");
        assert_eq!(count(0, "dead letter", "dead letters"), "0 dead letters");
        assert_eq!(count(3, "dead letter", "dead letters"), "3 dead letters");
    }

    #[test]
    fn tables_align_and_neutralise_cells() {
        let mut t = Table::new(&["NAME", ">COUNT"]);
        t.row(vec!["emails".into(), "12".into()]);
        t.row(vec!["x\u{1b}[2J".into(), "1234".into()]);
        assert_eq!(
            t.render(),
            "NAME      COUNT\nemails       12\nx\\x1b[2J   1234\n"
        );
    }
}
