//! The error for a config file that is not TOML: its line and column, the
//! setting it is in if any, and the parser's reason, never the text there
//! (a line that is not TOML may be a password pasted in the wrong place).
//! The crate's own rendering (`Display`) quotes the line, so it is never
//! used; its `message()` is a fixed description of the grammar
//! (`unclosed array, expected ']'`), passed on only while it repeats no
//! word of the line (see [`description`]).

use toml::de::DeTable;

use super::position::Source;
use super::{known, shown, text_of, VALUE_FORMS};
use crate::QueueError;

/// The error for the parser's `error`, `table` being what it recovered.
pub(super) fn not_toml(file: &Source, table: &DeTable<'_>, error: &toml::de::Error) -> QueueError {
    let Some(at) = error.span().map(|span| span.start) else {
        return unreadable("line", file.path.to_owned(), "a TOML file", error, "");
    };
    if let Some(repeated) = repeated(file, table, error) {
        return repeated;
    }
    // The setting whose line (from its name to the end of the line its value
    // ends on) holds the error: a bad value, or text after one.
    let within = table.iter().find(|(name, value)| {
        let (_, line_end) = file.line_bounds(value.span().end);
        (name.span().start..=line_end).contains(&at)
    });
    let (key, accepted) = match within.and_then(|(name, _)| known(name.get_ref())) {
        Some(key) => (key.name, format!("{VALUE_FORMS}, then at most a # comment")),
        None => (
            "line",
            "key = value lines and # comments, the flat part of TOML".to_owned(),
        ),
    };
    let origin = file.line_and_column(at);
    unreadable(key, origin, &accepted, error, file.line_text(at))
}

/// A TOML error on `line`, the text there not shown.
fn unreadable(
    key: &str,
    origin: String,
    accepted: &str,
    error: &toml::de::Error,
    line: &str,
) -> QueueError {
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

/// A known setting given twice, when that is the error: the parser points
/// at the second name; the recovered table holds the first.
fn repeated(file: &Source, table: &DeTable<'_>, error: &toml::de::Error) -> Option<QueueError> {
    if !error.message().starts_with("duplicate key") {
        return None;
    }
    let span = error.span()?;
    let key = known(file.text.get(span.clone())?)?;
    let (first, _) = table.get_key_value(key.name)?;
    if first.span().start >= span.start {
        return None;
    }
    // The parser dropped the second value: read it from its line on.
    let (rest, _) = DeTable::parse_recoverable(file.text.get(span.start..)?);
    let value = rest
        .get_ref()
        .get_key_value(key.name)
        .filter(|(name, _)| name.span().start == 0)
        .and_then(|(_, value)| text_of(value.get_ref()))
        .and_then(|text| shown(key, &text));
    Some(QueueError::InvalidSetting {
        key: key.name.to_owned(),
        value,
        origin: file.line(span.start),
        accepted: format!(
            "each key once (it is also set on {})",
            file.line(first.span().start)
        ),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
