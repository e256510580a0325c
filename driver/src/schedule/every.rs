//! `@every <duration>`: interval schedules, ticks aligned to the unix epoch.
//!
//! The one definition of the syntax: [`parse`] reads it (for
//! [`super::CronExpr::parse`]) and [`expression`] writes it (for
//! [`super::Schedule::every`]), and a test pins the two together.

use std::time::Duration;

use crate::limits::MAX_TIME_MS;

/// The alias that starts an interval expression.
pub(crate) const EVERY: &str = "@every";

/// Shortest `@every` interval: ticks are whole seconds.
pub const MIN_EVERY: Duration = Duration::from_secs(1);

/// Longest `@every` interval, 366 days. Beyond a year the epoch alignment
/// makes the first tick of a new schedule land anywhere within years, which
/// no one means; a yearly run is `@yearly` (cron), which is on the calendar.
pub const MAX_EVERY: Duration = Duration::from_secs(366 * DAY);

const MINUTE: u64 = 60;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;

/// The units, largest first, as [`expression`] writes them.
const UNITS: [(char, u64); 4] = [('d', DAY), ('h', HOUR), ('m', MINUTE), ('s', 1)];

/// What an interval may be, for error messages.
const ACCEPTED: &str = "accepted is a whole number of s, m, h or d, or a combination \
                        largest first, such as 30s, 5m, 1h30m or 2d, from 1s to 366d";

/// The interval of `expression` in seconds when it is an `@every`
/// expression (`@every` in any case, then whitespace or the end), as
/// `Some(Ok(seconds))`, or `Some(Err(why))` with a sentence saying what is
/// wrong and what is accepted; `None` for any other expression.
pub(crate) fn parse(expression: &str) -> Option<Result<u64, String>> {
    let trimmed = expression.trim();
    let head = trimmed.get(..EVERY.len())?;
    if !head.eq_ignore_ascii_case(EVERY) {
        return None;
    }
    let rest = &trimmed[EVERY.len()..];
    if rest.chars().next().is_some_and(|c| !c.is_whitespace()) {
        return None; // "@everyday": not ours; croner names it an unknown alias
    }
    if !expression.is_ascii() {
        // Stored text is ASCII, as croner's is: what quotes an expression
        // may cut it at any byte (lua/schedule_upsert.lua).
        return Some(Err(format!(
            "@every is written in plain ASCII, with plain spaces: {ACCEPTED}"
        )));
    }
    Some(interval(rest.trim()))
}

/// The seconds of an interval such as `1h30m`.
fn interval(text: &str) -> Result<u64, String> {
    if text.is_empty() {
        return Err(format!("@every needs an interval after it: {ACCEPTED}"));
    }
    if text.chars().any(char::is_whitespace) {
        return Err(format!(
            "the interval {text:?} has spaces: write it as one word, such as 1h30m ({ACCEPTED})"
        ));
    }
    if text.contains('.') || text.contains(',') {
        return Err(format!(
            "the interval {text:?} has a fraction: @every takes whole numbers of units, \
             such as 1m30s for a minute and a half ({ACCEPTED})"
        ));
    }
    let too_long = || {
        format!(
            "the interval {text:?} is longer than 366d, the longest @every: \
             for a yearly run write a cron expression such as @yearly"
        )
    };
    let mut total: u64 = 0;
    let mut rest = text;
    // Each unit once, largest first, as the help says and `expression`
    // writes: `5m5m` or `30m1h` read as a sum would be stored as typed
    // and shown so, for a period no one wrote down.
    let mut smaller_than = u64::MAX;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (number, after) = rest.split_at(digits);
        let unit_len = after.len()
            - after
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let (unit, after) = after.split_at(unit_len);
        if number.is_empty() {
            return Err(match unit {
                "" => {
                    let odd = after.chars().next().unwrap_or(' ');
                    format!("the interval {text:?} has {odd:?}, which @every does not read: {ACCEPTED}")
                }
                _ => format!("the interval {text:?} has the unit {unit:?} without a number before it: {ACCEPTED}"),
            });
        }
        let seconds = match unit {
            "s" => 1,
            "m" => MINUTE,
            "h" => HOUR,
            "d" => DAY,
            "" => {
                return Err(format!(
                    "the interval {text:?} has the number {number} without a unit: \
                     write {number}s, {number}m, {number}h or {number}d"
                ))
            }
            "ms" | "us" | "ns" => {
                return Err(format!(
                    "the interval {text:?} is in {unit}, finer than @every goes: \
                     @every takes whole seconds, 1s at least ({ACCEPTED})"
                ))
            }
            other => {
                return Err(format!(
                    "the interval {text:?} has the unit {other:?}, which @every does not know: \
                     {ACCEPTED}"
                ))
            }
        };
        if seconds >= smaller_than {
            return Err(format!(
                "the interval {text:?} gives the unit {unit:?} again or after a smaller one: \
                 write each unit once, largest first ({ACCEPTED})"
            ));
        }
        smaller_than = seconds;
        let part = number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(seconds))
            .ok_or_else(too_long)?;
        total = total.checked_add(part).ok_or_else(too_long)?;
        rest = after;
    }
    if total == 0 {
        return Err(format!(
            "the interval {text:?} is zero, which would never move on: the shortest is 1s"
        ));
    }
    if total > MAX_EVERY.as_secs() {
        return Err(too_long());
    }
    Ok(total)
}

/// The `@every` expression for `interval`, largest units first
/// (`@every 1h30m`); what [`parse`] reads back as the same seconds. A
/// fraction of a second is written in `ms`, which [`parse`] refuses naming
/// it, as it refuses an interval out of range: so a `Duration` the syntax
/// cannot hold fails at upsert, with the same message as the text would.
pub(crate) fn expression(interval: Duration) -> String {
    let mut secs = interval.as_secs();
    let millis = interval.subsec_millis();
    let mut text = String::from(EVERY);
    text.push(' ');
    if interval.is_zero() {
        text.push_str("0s");
        return text;
    }
    for (unit, size) in UNITS {
        if secs >= size {
            text.push_str(&format!("{}{unit}", secs / size));
            secs %= size;
        }
    }
    if interval.subsec_nanos() != 0 {
        // Sub-millisecond rests round up so that the text is never read
        // back as a whole number of seconds.
        text.push_str(&format!("{}ms", millis.max(1)));
    }
    text
}

/// The first multiple of `interval_ms` strictly after `after_ms` (the epoch
/// is a tick of every interval), or `None` past [`MAX_TIME_MS`].
pub(crate) fn next_after_ms(interval_ms: u64, after_ms: u64) -> Option<u64> {
    let next = (after_ms / interval_ms)
        .checked_add(1)?
        .checked_mul(interval_ms)?;
    (next <= MAX_TIME_MS).then_some(next)
}
