//! The config file: TOML, parsed by the `toml` crate into spanned values,
//! of which only top-level strings and integers are read, into the values
//! of known settings, each remembering its line for error messages. No
//! error shows the file's text except the value of a known setting other
//! than `url`.

mod not_toml;
mod position;

use std::collections::HashMap;

use toml::de::{DeString, DeTable, DeValue};
use toml::Spanned;

use super::values::Given;
use super::{Key, CONFIG_FILE_VAR, KEYS};
use crate::QueueError;
use position::Source;

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
            return Err(not_toml::not_toml(&file, &table, error));
        }
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(name, _)| name.span().start);
        let mut values = HashMap::new();
        for (name, value) in entries {
            let given = setting(&file, name, value)?;
            values.insert(given.key.name, given);
        }
        Ok(ConfigFile { values })
    }

    /// The file's value for `key`, if it sets one.
    pub(crate) fn take(&mut self, key: Key) -> Option<Given> {
        self.values.remove(key.name)
    }
}

/// One top-level `name = value` of a file that is valid TOML.
fn setting(
    file: &Source,
    name: &Spanned<DeString<'_>>,
    value: &Spanned<DeValue<'_>>,
) -> Result<Given, QueueError> {
    let origin = file.line(name.span().start);
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
    let Some(text) = text_of(value.get_ref()) else {
        return Err(QueueError::InvalidSetting {
            key: key.name.to_owned(),
            value: file
                .text
                .get(value.span())
                .and_then(|text| shown(key, text)),
            origin,
            accepted: format!("{VALUE_FORMS}, not a TOML {}", value.get_ref().type_str()),
        });
    };
    Ok(Given {
        key,
        value: text,
        origin,
    })
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

/// The text a setting reads from a TOML string or integer; integers in
/// decimal (`0x10` is `16`, `1_000` is `1000`), but one below zero or too
/// large for any setting as written, for the setting's own check to refuse.
/// `None` for the other types, which no setting takes.
fn text_of(value: &DeValue<'_>) -> Option<String> {
    match value {
        DeValue::String(text) => Some(text.to_string()),
        DeValue::Integer(number) => Some(
            match u128::from_str_radix(number.as_str(), number.radix()) {
                Ok(value) => value.to_string(),
                Err(_) => number.to_string(),
            },
        ),
        _ => None,
    }
}

/// The setting called `name`, if there is one.
fn known(name: &str) -> Option<Key> {
    KEYS.iter().copied().find(|key| key.name == name)
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
