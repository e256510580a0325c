//! Each setting's value, from text to the checked [`Config`] field. The
//! bounds are the builder's own checks (`crate::limits`), so a value this
//! accepts is one `connect` accepts.

use std::path::PathBuf;
use std::time::Duration;

use super::{Config, Key, Mode};
use crate::shards::MAX_SHARDS;
use crate::{limits, redact_url, QueueError, RedisQueue};

/// A value as given, and where it came from.
pub(crate) struct Given {
    pub(crate) key: Key,
    pub(crate) value: String,
    /// The variable's name, or the file and line.
    pub(crate) origin: String,
}

impl Given {
    /// This value refused, shown as given.
    fn refused(&self, accepted: impl Into<String>) -> QueueError {
        self.refused_showing(Some(self.value.clone()), accepted)
    }

    fn refused_showing(&self, value: Option<String>, accepted: impl Into<String>) -> QueueError {
        QueueError::InvalidSetting {
            key: self.key.name.to_owned(),
            value,
            origin: self.origin.clone(),
            accepted: accepted.into(),
        }
    }

    /// This value refused by one of the builder's checks, with its rule.
    fn refused_by(&self, err: QueueError) -> QueueError {
        match err {
            QueueError::Invalid { rule, .. } => self.refused(rule),
            other => self.refused(other.to_string()),
        }
    }

    fn number(&self, accepted: &str) -> Result<usize, QueueError> {
        self.value
            .parse()
            .map_err(|_| self.refused(format!("a whole number, {accepted}")))
    }
}

/// Check `given` and store it in `config`.
pub(crate) fn apply(config: &mut Config, given: Given) -> Result<(), QueueError> {
    match given.key.name {
        "url" => config.url = url(&given)?,
        "namespace" => {
            limits::check_namespace(&given.value).map_err(|e| given.refused_by(e))?;
            config.namespace = given.value;
        }
        "shards" => {
            let accepted = format!(
                "1 (one namespace) to {MAX_SHARDS} (a ShardedQueue over that many namespaces)"
            );
            let shards = given.number(&accepted)?;
            if shards == 0 || shards > MAX_SHARDS {
                return Err(given.refused(accepted));
            }
            config.shards = shards;
        }
        "mode" => {
            config.mode = match given.value.as_str() {
                "redis" => Mode::Redis,
                "inline" => Mode::Inline,
                _ => return Err(given.refused("redis or inline")),
            }
        }
        "pool_size" => {
            let size = given.number(&format!("1 to {}", limits::MAX_POOL_SIZE))?;
            limits::check_pool_size(size).map_err(|e| given.refused_by(e))?;
            config.pool_size = size;
        }
        "payload_limit" => {
            let bytes = given.number("bytes from 1 to 536870912 (512 MiB)")?;
            limits::check_payload_limit(bytes).map_err(|e| given.refused_by(e))?;
            config.payload_limit = bytes;
        }
        "command_timeout" => config.command_timeout = duration(&given)?,
        "script_calls" => {
            config.script_calls = match given.value.as_str() {
                "auto" => crate::ScriptCalls::Auto,
                "eval" => crate::ScriptCalls::Eval,
                "functions" => crate::ScriptCalls::Functions,
                _ => return Err(given.refused("auto, eval or functions")),
            }
        }
        "tls_ca_file" => {
            let path = PathBuf::from(&given.value);
            let pem = std::fs::read(&path)
                .map_err(|e| given.refused(format!("a readable file of PEM certificates ({e})")))?;
            if !pem
                .windows(CERTIFICATE.len())
                .any(|w| w == CERTIFICATE.as_bytes())
            {
                return Err(
                    given.refused(format!("a PEM file with at least one {CERTIFICATE} block"))
                );
            }
            config.tls_ca_file = Some(path);
            config.tls_ca_pem = Some(pem);
        }
        other => unreachable!("setting {other} is in KEYS but not handled here"),
    }
    Ok(())
}

const CERTIFICATE: &str = "-----BEGIN CERTIFICATE-----";

/// A URL the builder accepts. Shown without its password, and not at all
/// when it does not parse (it may be a password pasted in the wrong place).
fn url(given: &Given) -> Result<String, QueueError> {
    RedisQueue::builder(&given.value)
        .check_url()
        .map_err(|err| {
            let shown = url::Url::parse(&given.value)
                .is_ok()
                .then(|| redact_url(&given.value));
            let why = match err {
                // "<redacted url>: why": the URL is shown once, as the value.
                QueueError::Config(message) => {
                    let prefix = format!("{}: ", redact_url(&given.value));
                    message
                        .strip_prefix(&prefix)
                        .map(str::to_owned)
                        .unwrap_or(message)
                }
                other => other.to_string(),
            };
            given.refused_showing(shown, why)
        })?;
    Ok(given.value.clone())
}

/// `500ms`, `30s`, `5m`, `1h`: a whole number and a unit, at least 1 ms.
fn duration(given: &Given) -> Result<Duration, QueueError> {
    let accepted = "a whole number with a unit, ms, s, m or h (500ms, 30s), at least 1 ms";
    let text = given.value.as_str();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().map_err(|_| given.refused(accepted))?;
    let millis_per_unit = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(given.refused(accepted)),
    };
    let millis = number
        .checked_mul(millis_per_unit)
        .ok_or_else(|| given.refused(accepted))?;
    if millis == 0 {
        return Err(given.refused(accepted));
    }
    let timeout = Duration::from_millis(millis);
    limits::check_duration("command timeout", timeout).map_err(|e| given.refused_by(e))?;
    Ok(timeout)
}
