//! `MAX/INTERVAL`, the way people write a rate on the command line
//! (`100/1s`, `10/500ms`, `5/1m`, `1/1h`): the form the driver prints a
//! [`Rate`] in, so what `redq limits set --rate` reads is what
//! `redq limits list` and the console's Limits screen show.
//!
//! The bounds are the driver's (`redq::flow::MAX_RATE`, `MAX_INTERVAL`,
//! and [`Rate::validate`] again before anything is sent); they are checked
//! here too so that the refusal names the text as it was typed.

use std::time::Duration;

use redq::flow::{Rate, MAX_INTERVAL, MAX_RATE};

/// The interval units a rate is typed in, and their length in ms.
const UNITS: [(&str, u64); 4] = [("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)];

/// Parse `--concurrency N` by the driver's rule
/// ([`redq::flow::parse_concurrency`]): the refusal names the value as typed
/// and the range 1 to 1000000, where clap's own reading of a `u32` said
/// "0..=4294967295" (0 is refused) or, for `-1`, advised `-- -1`.
pub fn parse_concurrency(text: &str) -> Result<u32, String> {
    redq::flow::parse_concurrency(text).map_err(|e| e.to_string())
}

/// Parse `MAX/INTERVAL`. The error is one sentence naming what was typed.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let shape = || format!("rate must look like MAX/INTERVAL, e.g. 100/1s; got {text:?}");
    let (max, interval) = text.trim().split_once('/').ok_or_else(shape)?;
    let max: u32 = max.trim().parse().map_err(|_| {
        format!(
            "the MAX of a rate must be a whole number of jobs, e.g. 100/1s; got {:?}",
            max.trim()
        )
    })?;
    if !(1..=MAX_RATE).contains(&max) {
        return Err(format!(
            "a rate allows 1 to {MAX_RATE} starts per interval; got {max} in {text:?}"
        ));
    }
    let per = parse_interval(interval.trim())?;
    if per.is_zero() || per > MAX_INTERVAL {
        return Err(format!(
            "a rate's INTERVAL must be 1ms to {}h; got {:?}",
            MAX_INTERVAL.as_secs() / 3600,
            interval.trim()
        ));
    }
    Ok(Rate::new(max, per))
}

/// `500ms`, `1s`, `2m`, `1h`; a bare unit means one of it (`100/s`).
fn parse_interval(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "a rate's INTERVAL must be a whole number followed by ms, s, m or h, \
             e.g. 1s or 500ms; got {text:?}"
        )
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let count: u64 = match number {
        "" => 1,
        digits => digits.parse().map_err(|_| bad())?,
    };
    let (_, ms) = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .ok_or_else(bad)?;
    let total = count.checked_mul(*ms).ok_or_else(bad)?;
    Ok(Duration::from_millis(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_in_every_unit() {
        let cases = [
            ("100/1s", 100, 1000),
            ("10/500ms", 10, 500),
            ("5/1m", 5, 60_000),
            ("1/1h", 1, 3_600_000),
            ("100/s", 100, 1000),
            (" 7 / 90s ", 7, 90_000),
        ];
        for (text, max, ms) in cases {
            let rate = parse_rate(text).unwrap();
            assert_eq!(rate.max, max, "{text}");
            assert_eq!(rate.per, Duration::from_millis(ms), "{text}");
        }
    }

    #[test]
    fn a_rate_prints_as_it_is_typed() {
        for text in [
            "100/1s", "10/500ms", "5/1m", "1/1h", "7/90s", "3/1500ms", "2/90m",
        ] {
            assert_eq!(parse_rate(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn malformed_rates_say_what_was_typed_and_what_is_expected() {
        assert_eq!(
            parse_rate("100").unwrap_err(),
            "rate must look like MAX/INTERVAL, e.g. 100/1s; got \"100\""
        );
        assert_eq!(
            parse_rate("many/1s").unwrap_err(),
            "the MAX of a rate must be a whole number of jobs, e.g. 100/1s; got \"many\""
        );
        assert_eq!(
            parse_rate("-1/1s").unwrap_err(),
            "the MAX of a rate must be a whole number of jobs, e.g. 100/1s; got \"-1\""
        );
        assert_eq!(
            parse_rate("0/1s").unwrap_err(),
            "a rate allows 1 to 100000 starts per interval; got 0 in \"0/1s\""
        );
        assert_eq!(
            parse_rate("5/25h").unwrap_err(),
            "a rate's INTERVAL must be 1ms to 24h; got \"25h\""
        );
        assert_eq!(
            parse_rate("5/0ms").unwrap_err(),
            "a rate's INTERVAL must be 1ms to 24h; got \"0ms\""
        );
        assert!(parse_rate("100000/24h").is_ok());
        for interval in ["1d", "1.5s", "10", "", "s1", "99999999999999999999h"] {
            let err = parse_rate(&format!("5/{interval}")).unwrap_err();
            assert!(
                err.starts_with(
                    "a rate's INTERVAL must be a whole number followed by ms, s, m or h"
                ),
                "{interval}: {err}"
            );
        }
    }
}
