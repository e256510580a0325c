//! The config file: flat TOML, `key = value` lines read into the values of
//! known settings, each remembering its line for error messages.

use std::collections::HashMap;

use super::values::Given;
use super::{Key, CONFIG_FILE_VAR, KEYS};
use crate::QueueError;

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

    /// Parse `text`, the contents of the file `path`.
    pub(crate) fn parse(path: &str, text: &str) -> Result<ConfigFile, QueueError> {
        let mut values: HashMap<&'static str, Given> = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let origin = format!("{path} line {}", index + 1);
            let Some((key, value)) = parse_line(line, &origin)? else {
                continue;
            };
            if let Some(earlier) = values.get(key.name) {
                return Err(QueueError::InvalidSetting {
                    key: key.name.to_owned(),
                    value: shown(key, &value),
                    origin,
                    accepted: format!("each key once (it is also set on {})", earlier.origin),
                });
            }
            values.insert(key.name, Given { key, value, origin });
        }
        Ok(ConfigFile { values })
    }

    /// The file's value for `key`, if it sets one.
    pub(crate) fn take(&mut self, key: Key) -> Option<Given> {
        self.values.remove(key.name)
    }
}

/// The key and value of one line; `None` for a blank or comment line.
fn parse_line(line: &str, origin: &str) -> Result<Option<(Key, String)>, QueueError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    // A line that is not `key = value` is not echoed: it may be a password.
    let unreadable = |accepted: &str| QueueError::InvalidSetting {
        key: "line".to_owned(),
        value: None,
        origin: origin.to_owned(),
        accepted: accepted.to_owned(),
    };
    if line.starts_with('[') {
        return Err(unreadable(
            "top-level key = value lines (the file has no [tables])",
        ));
    }
    let Some((name, value)) = line.split_once('=') else {
        return Err(unreadable("key = value, or a # comment"));
    };
    let name = name.trim();
    let Some(key) = KEYS.iter().copied().find(|key| key.name == name) else {
        let names: Vec<&str> = KEYS.iter().map(|key| key.name).collect();
        return Err(QueueError::InvalidSetting {
            key: "setting name".to_owned(),
            value: Some(name.to_owned()),
            origin: origin.to_owned(),
            accepted: format!("one of {}", names.join(", ")),
        });
    };
    let bad_value = |value: &str| QueueError::InvalidSetting {
        key: key.name.to_owned(),
        value: shown(key, value),
        origin: origin.to_owned(),
        accepted: "text in double quotes, or a bare whole number, then at most a # comment"
            .to_owned(),
    };
    let raw = value.trim();
    let (value, rest) = match raw.strip_prefix('"') {
        Some(quoted) => quoted_string(quoted).ok_or_else(|| bad_value(raw))?,
        None => {
            let end = raw.find('#').unwrap_or(raw.len());
            let bare = raw[..end].trim_end();
            if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_digit()) {
                return Err(bad_value(raw));
            }
            (bare.to_owned(), "")
        }
    };
    let rest = rest.trim();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return Err(bad_value(raw));
    }
    Ok(Some((key, value)))
}

/// A TOML basic string's contents after its opening quote: the unescaped
/// text and what follows the closing quote. `None` when it is not closed or
/// has an escape TOML would refuse.
fn quoted_string(after_quote: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = after_quote.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((out, &after_quote[at + 1..])),
            '\\' => out.push(match chars.next()?.1 {
                '"' => '"',
                '\\' => '\\',
                'n' => '\n',
                't' => '\t',
                _ => return None,
            }),
            c => out.push(c),
        }
    }
    None
}

/// A value as an error shows it: a URL is never shown here, since one that
/// did not even parse as a line may carry its password in plain sight.
fn shown(key: Key, value: &str) -> Option<String> {
    (key.name != "url").then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(text: &str, name: &str) -> Option<String> {
        let key = KEYS.iter().copied().find(|k| k.name == name).unwrap();
        let mut file = ConfigFile::parse("redq.toml", text).unwrap();
        file.take(key).map(|given| given.value)
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
    fn an_escape_toml_refuses_is_refused() {
        let err = ConfigFile::parse("redq.toml", r#"namespace = "a\qb""#)
            .err()
            .expect("refused");
        assert!(err.to_string().starts_with("invalid namespace "), "{err}");
    }
}
