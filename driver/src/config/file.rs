//! The config file: flat TOML, parsed by the `toml` crate into spanned
//! values, then read into the values of known settings, each remembering its
//! line for error messages.
//!
//! No error here echoes the file's text except a value of a known setting
//! other than `url`: a line that is not TOML may be a password pasted in the
//! wrong place. The crate's own rendering (`Display`) quotes the line, so it
//! is never used; its `message()` is a fixed description of the grammar
//! (`unclosed array, expected ']'`), and is passed on only while it repeats
//! no word of the line (see [`description`]).

use std::collections::HashMap;

use toml::de::{DeInteger, DeString, DeTable, DeValue};
use toml::Spanned;

use super::values::Given;
use super::{Key, CONFIG_FILE_VAR, KEYS};
use crate::QueueError;

/// What every setting's value may be in the file.
const VALUE_FORMS: &str = "text in double quotes, or a whole number";

/// What a file may hold instead of a table.
const NO_TABLES: &str = "top-level key = value lines (the file has no [tables], \
                         [[arrays of tables]], dotted keys or inline tables)";

/// A read config file: the value of each setting it names.
pub(crate) struct ConfigFile {
    values: HashMap<&'static str, Given>,
}

impl ConfigFile {
    /// Read and parse the file at `path` (named by `REDQ_CONFIG`).
    pub(crate) fn read(path: &str) -> Result<ConfigFile, QueueError> {
        let text = std::fs::read_to_string(path).map_err(|e| QueueError::InvalidSetting {
            key: "config file".to_owned(),
            value: Some(path.to_owned()),
            origin: CONFIG_FILE_VAR.to_owned(),
            accepted: format!("a readable UTF-8 file ({e})"),
        })?;
        ConfigFile::parse(path, &text)
    }

    /// Parse `text`, the contents of the file `path`. The first problem in
    /// the file is the error: a TOML one first, then the settings in the
    /// order they appear.
    pub(crate) fn parse(path: &str, text: &str) -> Result<ConfigFile, QueueError> {
        let file = Source { path, text };
        // Recovery keeps what parsed around an error: it names the setting
        // whose value is not TOML, and the first of a repeated key.
        let (table, errors) = DeTable::parse_recoverable(text);
        let table = table.into_inner();
        // The first in the file: later ones may follow from it.
        let first = errors
            .iter()
            .min_by_key(|error| error.span().map_or(usize::MAX, |span| span.start));
        if let Some(error) = first {
            return Err(file.not_toml(&table, error));
        }
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(name, _)| name.span().start);
        let mut values = HashMap::new();
        for (name, value) in entries {
            let given = file.setting(name, value)?;
            values.insert(given.key.name, given);
        }
        Ok(ConfigFile { values })
    }

    /// The file's value for `key`, if it sets one.
    pub(crate) fn take(&mut self, key: Key) -> Option<Given> {
        self.values.remove(key.name)
    }
}

/// The file being read: its name for messages, its text for positions.
struct Source<'a> {
    path: &'a str,
    text: &'a str,
}

impl Source<'_> {
    /// One top-level `name = value` of a file that is valid TOML.
    fn setting(
        &self,
        name: &Spanned<DeString<'_>>,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<Given, QueueError> {
        let origin = self.line(name.span().start);
        if holds_tables(value.get_ref()) {
            return Err(QueueError::InvalidSetting {
                key: "table".to_owned(),
                value: Some(name.get_ref().to_string()),
                origin,
                accepted: NO_TABLES.to_owned(),
            });
        }
        let Some(key) = known(name.get_ref()) else {
            let names: Vec<&str> = KEYS.iter().map(|key| key.name).collect();
            return Err(QueueError::InvalidSetting {
                key: "setting name".to_owned(),
                value: Some(name.get_ref().to_string()),
                origin,
                accepted: format!("one of {}", names.join(", ")),
            });
        };
        let text = match value.get_ref() {
            DeValue::String(text) => text.to_string(),
            DeValue::Integer(number) => whole_number(number),
            other => {
                return Err(QueueError::InvalidSetting {
                    key: key.name.to_owned(),
                    value: self
                        .text
                        .get(value.span())
                        .and_then(|text| shown(key, text)),
                    origin,
                    accepted: format!("{VALUE_FORMS}, not a TOML {}", other.type_str()),
                })
            }
        };
        Ok(Given {
            key,
            value: text,
            origin,
        })
    }

    /// The file's first TOML error, naming the setting it is in if any,
    /// with its line and column but not its text.
    fn not_toml(&self, table: &DeTable<'_>, error: &toml::de::Error) -> QueueError {
        let Some(at) = error.span().map(|span| span.start) else {
            return self.unreadable("line", self.path.to_owned(), "a TOML file", error, None);
        };
        if let Some(repeated) = self.repeated(table, error) {
            return repeated;
        }
        let origin = self.line_and_column(at);
        // The setting whose line (from its name to the end of the line its
        // value ends on) holds the error: a bad value, or text after one.
        let within = table.iter().find(|(name, value)| {
            let value_end = value.span().end;
            let line_end = self.text.get(value_end..).and_then(|rest| rest.find('\n'));
            let line_end = line_end.map_or(self.text.len(), |n| value_end + n);
            (name.span().start..=line_end).contains(&at)
        });
        match within.and_then(|(name, _)| known(name.get_ref())) {
            Some(key) => self.unreadable(
                key.name,
                origin,
                &format!("{VALUE_FORMS}, then at most a # comment"),
                error,
                Some(at),
            ),
            None => self.unreadable(
                "line",
                origin,
                "key = value lines and # comments, the flat part of TOML",
                error,
                Some(at),
            ),
        }
    }

    /// A TOML error at the byte offset `at`, the text there not shown.
    fn unreadable(
        &self,
        key: &str,
        origin: String,
        accepted: &str,
        error: &toml::de::Error,
        at: Option<usize>,
    ) -> QueueError {
        let line = at.map_or("", |at| self.line_text(at));
        let accepted = match description(error.message(), line) {
            Some(why) => format!("{accepted}; this is not TOML ({why})"),
            None => format!("{accepted}; this is not TOML"),
        };
        QueueError::InvalidSetting {
            key: key.to_owned(),
            value: None,
            origin,
            accepted,
        }
    }

    /// A known setting given twice, when that is the error: the crate points
    /// at the second name; the recovered table holds the first.
    fn repeated(&self, table: &DeTable<'_>, error: &toml::de::Error) -> Option<QueueError> {
        if !error.message().starts_with("duplicate key") {
            return None;
        }
        let span = error.span()?;
        let key = known(self.text.get(span.clone())?)?;
        let (first, _) = table.get_key_value(key.name)?;
        if first.span().start >= span.start {
            return None;
        }
        Some(QueueError::InvalidSetting {
            key: key.name.to_owned(),
            value: self.value_at(key, span.start),
            origin: self.line(span.start),
            accepted: format!(
                "each key once (it is also set on {})",
                self.line(first.span().start)
            ),
        })
    }

    /// The value, as an error shows it, of the `key = value` starting at
    /// `at` (the parser, having refused it as a repeat, did not keep it).
    fn value_at(&self, key: Key, at: usize) -> Option<String> {
        let (rest, _) = DeTable::parse_recoverable(self.text.get(at..)?);
        let rest = rest.into_inner();
        let (name, value) = rest.get_key_value(key.name)?;
        let text = match value.get_ref() {
            _ if name.span().start != 0 => return None,
            DeValue::String(text) => text.to_string(),
            DeValue::Integer(number) => whole_number(number),
            _ => return None,
        };
        shown(key, &text)
    }

    /// `path line N` for the byte offset `at`.
    fn line(&self, at: usize) -> String {
        format!("{} line {}", self.path, self.line_number(at))
    }

    /// `path line N column C` for the byte offset `at`, counting columns in
    /// characters.
    fn line_and_column(&self, at: usize) -> String {
        let at = at.min(self.text.len());
        let line_start = self.text.as_bytes()[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |newline| newline + 1);
        let column = match self.text.get(line_start..at) {
            Some(before) => before.chars().count() + 1,
            None => at - line_start + 1,
        };
        format!("{} column {column}", self.line(at))
    }

    /// The text of the line holding the byte offset `at`.
    fn line_text(&self, at: usize) -> &str {
        let at = at.min(self.text.len());
        let bytes = self.text.as_bytes();
        let start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |newline| newline + 1);
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| at + n);
        self.text.get(start..end).unwrap_or("")
    }

    fn line_number(&self, at: usize) -> usize {
        let at = at.min(self.text.len());
        self.text.as_bytes()[..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }
}

/// Whether `value` is a table (`[name]`, `name.key = ..`, `{ .. }`) or an
/// array of them (`[[name]]`): the nesting a flat file does not have.
fn holds_tables(value: &DeValue<'_>) -> bool {
    match value {
        DeValue::Table(_) => true,
        DeValue::Array(items) => {
            !items.is_empty() && items.iter().all(|item| item.get_ref().is_table())
        }
        _ => false,
    }
}

/// The parser's `message`, unless it repeats a word (4 characters or more)
/// of the `line` it is about. Today's messages are fixed grammar text; this
/// keeps a later version that quotes its input from showing a secret.
fn description<'m>(message: &'m str, line: &str) -> Option<&'m str> {
    let mut words = line
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 4);
    (!words.any(|word| message.contains(word))).then_some(message)
}

/// The setting called `name`, if there is one.
fn known(name: &str) -> Option<Key> {
    KEYS.iter().copied().find(|key| key.name == name)
}

/// A TOML integer as decimal text (`0x10` is `16`, `1_000` is `1000`);
/// one below zero or too large for any setting stays as written, for the
/// setting's own check to refuse.
fn whole_number(number: &DeInteger<'_>) -> String {
    match u128::from_str_radix(number.as_str(), number.radix()) {
        Ok(value) => value.to_string(),
        Err(_) => number.to_string(),
    }
}

/// A value as an error shows it: a URL is never shown here, since one that
/// the URL parser did not even see may carry its password in plain sight.
fn shown(key: Key, value: &str) -> Option<String> {
    (key.name != "url").then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(text: &str, name: &str) -> Option<String> {
        let mut file = ConfigFile::parse("redq.toml", text).unwrap();
        file.take(known(name).unwrap()).map(|given| given.value)
    }

    fn refusal(text: &str) -> String {
        match ConfigFile::parse("redq.toml", text) {
            Ok(_) => panic!("{text:?} should be refused"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn quoted_values_unescape_as_toml_basic_strings() {
        assert_eq!(
            value_of(r#"namespace = "a\"b\\c" # note"#, "namespace").as_deref(),
            Some(r#"a"b\c"#)
        );
        // A '#' inside quotes is text, not a comment.
        assert_eq!(
            value_of(r##"url = "redis://h:1/0#x""##, "url").as_deref(),
            Some("redis://h:1/0#x")
        );
        assert_eq!(
            value_of("shards = 4 # four", "shards").as_deref(),
            Some("4")
        );
        assert_eq!(value_of("# only a comment\n\n", "shards"), None);
    }

    #[test]
    fn every_toml_string_and_integer_form_is_read() {
        assert_eq!(
            value_of("namespace = 'a\\b'", "namespace").as_deref(),
            Some("a\\b")
        );
        assert_eq!(
            value_of("mode = \"\"\"\ninline\"\"\"", "mode").as_deref(),
            Some("inline")
        );
        assert_eq!(
            value_of("payload_limit = 1_048_576", "payload_limit").as_deref(),
            Some("1048576")
        );
        assert_eq!(
            value_of("pool_size = 0x10", "pool_size").as_deref(),
            Some("16")
        );
        // As before, a number may be quoted and text may be a bare number:
        // each setting's own check reads the text.
        assert_eq!(value_of("shards = \"3\"", "shards").as_deref(), Some("3"));
        assert_eq!(
            value_of("pool_size = -1", "pool_size").as_deref(),
            Some("-1")
        );
    }

    #[test]
    fn an_escape_toml_refuses_is_refused() {
        let message = refusal(r#"namespace = "a\qb""#);
        assert!(
            message.starts_with(
                "invalid namespace (not shown: it may hold a password) \
                 from redq.toml line 1 column 16: "
            ),
            "{message}"
        );
        assert!(message.contains("this is not TOML ("), "{message}");
    }

    #[test]
    fn a_syntax_error_gives_line_and_column_but_not_the_text() {
        let message = refusal("shards = 2\n  hunter2-secret\n");
        assert!(
            message.starts_with(
                "invalid line (not shown: it may hold a password) \
                 from redq.toml line 2 column 17: "
            ),
            "{message}"
        );
        assert!(!message.contains("hunter2"), "{message}");
    }

    /// The file errors the module docs show, word for word.
    #[test]
    fn the_documented_errors_are_the_ones_given() {
        let refused_as = |text: &str| match ConfigFile::parse("/etc/acme/redq.toml", text) {
            Ok(_) => panic!("{text:?} should be refused"),
            Err(err) => err.to_string(),
        };
        assert_eq!(
            refused_as("namespace = \"acme\"\nurl = \"rediss://:s3cret@redis.internal:6380\n"),
            "invalid url (not shown: it may hold a password) from /etc/acme/redq.toml line 2 \
             column 44: text in double quotes, or a whole number, then at most a # comment; \
             this is not TOML (invalid basic string, expected `\"`)"
        );
        assert_eq!(
            refused_as("[redq]\nshards = 3\n"),
            "invalid table \"redq\" from /etc/acme/redq.toml line 1: top-level key = value \
             lines (the file has no [tables], [[arrays of tables]], dotted keys or inline tables)"
        );
    }

    #[test]
    fn a_parser_message_quoting_the_line_is_not_passed_on() {
        let line = r#"url = "redis://:hunter2@cache" oops"#;
        assert_eq!(description("unexpected `oops`", line), None);
        assert_eq!(description("unexpected `hunter2`", line), None);
        assert_eq!(
            description("invalid basic string, expected `\"`", line),
            Some("invalid basic string, expected `\"`")
        );
    }

    #[test]
    fn a_value_of_another_type_names_the_type() {
        assert_eq!(
            refusal("pool_size = 4.5"),
            r#"invalid pool_size "4.5" from redq.toml line 1: text in double quotes, or a whole number, not a TOML float"#
        );
        assert_eq!(
            refusal("mode = true"),
            r#"invalid mode "true" from redq.toml line 1: text in double quotes, or a whole number, not a TOML boolean"#
        );
        assert_eq!(
            refusal("url = [\"redis://:pw@h\"]"),
            "invalid url (not shown: it may hold a password) from redq.toml line 1: \
             text in double quotes, or a whole number, not a TOML array"
        );
    }
}
