//! Cron expressions in a time zone: parsing and the next tick.
//!
//! Parsing and the calendar walk are [croner]'s (OCPS-conformant: Vixie-cron
//! fields, `L`, `W`, `#`, and the `@hourly` family); time zones are [jiff]'s,
//! read from the system's tz database (`/usr/share/zoneinfo`, kept current by
//! the OS) and, where a machine has none, from the copy bundled into the
//! binary.
//!
//! # Syntax
//!
//! * 5 fields, `minute hour day-of-month month day-of-week`: fires at second 0.
//! * 6 fields, `second minute hour day-of-month month day-of-week`.
//! * `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily`, `@hourly`.
//! * `@every <interval>`: a fixed interval, such as `@every 30s`,
//!   `@every 5m`, `@every 1h30m` or `@every 2d` (see below).
//!
//! Day of month and day of week combine with OR when both are restricted, as
//! in Vixie cron. A year field is refused, so 6 fields always mean seconds.
//!
//! ## `@every <interval>`
//!
//! The interval is whole numbers of `s`, `m`, `h` and `d` (24 hours), alone
//! or combined largest first, written as one word (`1h30m`, `1d12h`), from
//! [`MIN_EVERY`] (1 s) to [`MAX_EVERY`] (366 days); `@every` is
//! [asynq]'s and [robfig/cron]'s syntax, BullMQ's `repeat: { every }`.
//!
//! **Ticks are aligned to the unix epoch**: the next tick after a time `t`
//! is the next multiple of the interval since 1970-01-01 00:00:00 UTC after
//! `t`, as in BullMQ. `@every 7m` fires at 00:07, 00:14, … counted from
//! 1970, not 7 minutes after the schedule was created, and `@every 5m` at
//! :00, :05, :10 of every hour. So every scheduler computes the same ticks
//! on its own, and a tick fires exactly once like a cron tick. For a run at
//! a time of day (daily at 02:30 in Paris) write a cron expression
//! (`30 2 * * *` with the time zone): `@every 1d` fires at 00:00 UTC.
//!
//! The ticks are instants, which no time zone moves, and daylight-saving
//! time does not apply to them (below). An `@every` schedule's time zone must
//! therefore be UTC (the default; `Etc/UTC` too): another is refused rather
//! than silently ignored, since `@every 1d` in `Europe/Paris` reads as
//! "midnight in Paris", which it would not be.
//!
//! [`crate::schedule::Schedule::every`] builds the expression from a
//! [`std::time::Duration`]; [`CronExpr::interval`] reads it back.
//!
//! [asynq]: https://github.com/hibiken/asynq
//! [robfig/cron]: https://pkg.go.dev/github.com/robfig/cron/v3
//!
//! # Daylight-saving time
//!
//! A tick is a wall-clock time in the schedule's time zone. Twice a year the
//! wall clock skips or repeats an hour, and what a tick does then depends on
//! the kind of expression:
//!
//! * **Fixed-time** expressions — second, minute and hour each a plain number
//!   or a list of plain numbers, such as `30 2 * * *`, `0 2,14 * * *` (twice
//!   a day) or `@daily`. Each listed time of day behaves on its own:
//!   * *spring forward* (the wall time does not exist that day, e.g. 02:30 in
//!     New York on 2026-03-08): the tick fires once, at the first instant
//!     after the gap (03:00 EDT). A daily job is never lost.
//!   * *fall back* (the wall time happens twice, e.g. 01:30 in New York on
//!     2026-11-01): the tick fires once, at the first occurrence (01:30 EDT).
//!     A daily job never runs twice.
//! * **Interval** expressions — a wildcard, step or range in the second,
//!   minute or hour field, such as `*/15 * * * *`, `0 9-17 * * *` or
//!   `@hourly`:
//!   * *spring forward*: wall times inside the gap are skipped (no run at
//!     02:15 on 2026-03-08); the rhythm in real time is kept.
//!   * *fall back*: the repeated wall times fire on both occurrences (01:15
//!     EDT and 01:15 EST), again keeping the rhythm in real time.
//!
//! croner itself counts any list in those fields as an interval; redq splits
//! a fixed-time expression with lists into one expression per listed time of
//! day (at most [`MAX_FIXED_TIMES`] of them; beyond that the expression is
//! an interval) and takes the earliest next tick of all.
//!
//! UTC and fixed-offset zones have no transitions.

use std::time::{Duration, SystemTime};

use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::job::{ms_to_time, time_to_ms};
use crate::limits::MAX_TIME_MS;
use crate::QueueError;

use super::every;
pub use super::every::{MAX_EVERY, MIN_EVERY};

/// Longest cron expression accepted, in bytes.
pub const MAX_EXPRESSION_LEN: usize = 256;
/// Longest time zone name accepted, in bytes.
pub const MAX_TIMEZONE_LEN: usize = 64;
/// Most times of day a fixed-time expression with lists (`0 0,30 8,12,18 * * *`:
/// 6) is split into; one with more is an interval expression (see the
/// module docs). 144 is every ten minutes of a day, listed.
pub const MAX_FIXED_TIMES: usize = 144;

/// A parsed cron expression bound to a time zone, or an `@every` interval
/// (see the module docs).
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use redq::schedule::CronExpr;
///
/// let daily = CronExpr::parse("30 2 * * *", "America/New_York").unwrap();
/// // 2026-03-08 00:00 EST: 02:30 does not exist that night (spring forward),
/// // so the tick fires at 03:00 EDT, 07:00 UTC.
/// let midnight = UNIX_EPOCH + Duration::from_secs(1_772_946_000);
/// let next = daily.next_after(midnight).unwrap();
/// assert_eq!(next, UNIX_EPOCH + Duration::from_secs(1_772_953_200));
/// ```
#[derive(Debug, Clone)]
pub struct CronExpr {
    expression: String,
    timezone: String,
    timing: Timing,
}

/// How a [`CronExpr`] finds its next tick.
#[derive(Debug, Clone)]
enum Timing {
    /// A cron expression as croner parsed it, or, for a fixed-time
    /// expression with lists, one fixed-time expression per listed time of
    /// day; walked on the wall clock of `tz`.
    Cron {
        crons: Vec<croner::Cron>,
        tz: TimeZone,
    },
    /// `@every`: the multiples of this many milliseconds since the epoch.
    Every { interval_ms: u64 },
}

impl CronExpr {
    /// Parse `expression` (5 or 6 fields, an `@` alias, or
    /// `@every <interval>`) for the IANA time zone `timezone` (e.g.
    /// `Europe/Paris`, `UTC`).
    ///
    /// Fails with [`QueueError::Invalid`] naming the expression (`what` =
    /// `"cron expression"`, or `"interval"` for a bad `@every`) or the time
    /// zone (`"timezone"`, also for an `@every` in a zone other than UTC),
    /// and also for an expression that never fires (`0 0 30 2 *`).
    pub fn parse(expression: &str, timezone: &str) -> Result<CronExpr, QueueError> {
        if expression.trim().is_empty()
            || expression.len() > MAX_EXPRESSION_LEN
            || expression.chars().any(char::is_control)
        {
            return Err(QueueError::invalid(
                "cron expression",
                expression,
                format!(
                    "a 5- or 6-field cron expression, an @hourly-style alias or \
                     @every <interval> (1 to {MAX_EXPRESSION_LEN} bytes without control \
                     characters)"
                ),
            ));
        }
        if timezone.is_empty()
            || timezone.len() > MAX_TIMEZONE_LEN
            || timezone.chars().any(char::is_control)
        {
            return Err(invalid_timezone(timezone));
        }
        if let Some(seconds) = every::parse(expression) {
            let seconds =
                seconds.map_err(|why| QueueError::invalid("interval", expression, why))?;
            return CronExpr::every_in(expression, seconds, timezone);
        }
        let cron = parser().parse(expression).map_err(|e| {
            QueueError::invalid("cron expression", expression, why_invalid(expression, &e))
        })?;
        let crons = match fixed_time_parts(expression) {
            Some(parts) => parts
                .iter()
                .map(|part| parser().parse(part))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    QueueError::invalid("cron expression", expression, why_invalid(expression, &e))
                })?,
            None => vec![cron],
        };
        let tz = jiff::tz::db()
            .get(timezone)
            .map_err(|_| invalid_timezone(timezone))?;
        let parsed = CronExpr {
            expression: expression.to_owned(),
            timezone: timezone.to_owned(),
            timing: Timing::Cron { crons, tz },
        };
        // A pattern like "0 0 30 2 *" parses but names no real day.
        if parsed
            .next_after_ms(time_to_ms(SystemTime::now()))
            .is_none()
        {
            return Err(QueueError::invalid(
                "cron expression",
                expression,
                "an expression that fires at least once (this one names no real date)",
            ));
        }
        Ok(parsed)
    }

    /// The `@every` expression for `expression`'s interval, once checked:
    /// ticks at its multiples since the epoch, which no time zone moves, so
    /// one that is not UTC is refused rather than silently ignored.
    fn every_in(expression: &str, seconds: u64, timezone: &str) -> Result<CronExpr, QueueError> {
        let tz = jiff::tz::db()
            .get(timezone)
            .map_err(|_| invalid_timezone(timezone))?;
        let is_utc = tz.following(Timestamp::MIN).next().is_none()
            && tz.to_offset(Timestamp::UNIX_EPOCH).seconds() == 0;
        if !is_utc {
            return Err(QueueError::invalid(
                "timezone",
                timezone,
                format!(
                    "an @every schedule ticks at multiples of its interval since \
                     1970-01-01 00:00 UTC, which no time zone moves: leave the time zone UTC \
                     (the default), or for runs at a time of day in {timezone} write a cron \
                     expression such as \"0 0 * * *\""
                ),
            ));
        }
        Ok(CronExpr {
            expression: expression.to_owned(),
            timezone: timezone.to_owned(),
            timing: Timing::Every {
                interval_ms: seconds * 1000,
            },
        })
    }

    /// The interval of an `@every` expression; `None` for a cron expression.
    pub fn interval(&self) -> Option<Duration> {
        match self.timing {
            Timing::Every { interval_ms } => Some(Duration::from_millis(interval_ms)),
            Timing::Cron { .. } => None,
        }
    }

    /// The expression as given.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The time zone name as given.
    pub fn timezone(&self) -> &str {
        &self.timezone
    }

    /// The first tick strictly after `after`, or `None` when there is none
    /// before the year 6000.
    pub fn next_after(&self, after: SystemTime) -> Option<SystemTime> {
        self.next_after_ms(time_to_ms(after)).map(ms_to_time)
    }

    /// The next `n` ticks after `after` (a preview for operators).
    pub fn upcoming(&self, after: SystemTime, n: usize) -> Vec<SystemTime> {
        let mut ticks = Vec::with_capacity(n);
        let mut at = time_to_ms(after);
        while ticks.len() < n {
            match self.next_after_ms(at) {
                Some(next) => {
                    ticks.push(ms_to_time(next));
                    at = next;
                }
                None => break,
            }
        }
        ticks
    }

    /// [`CronExpr::next_after`] in unix milliseconds. Ticks are whole
    /// seconds, so the answer is always a multiple of 1000.
    pub(crate) fn next_after_ms(&self, after_ms: u64) -> Option<u64> {
        let (crons, tz) = match &self.timing {
            Timing::Every { interval_ms } => return every::next_after_ms(*interval_ms, after_ms),
            Timing::Cron { crons, tz } => (crons, tz),
        };
        let after = Timestamp::from_millisecond(i64::try_from(after_ms).ok()?)
            .ok()?
            .to_zoned(tz.clone());
        let ms = crons
            .iter()
            .filter_map(|cron| cron.find_next_occurrence(&after, false).ok())
            .filter_map(|next| u64::try_from(next.timestamp().as_millisecond()).ok())
            .filter(|ms| *ms > after_ms)
            .min()?;
        (ms <= MAX_TIME_MS).then_some(ms)
    }
}

/// The parser every expression goes through: optional seconds, no years.
fn parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
}

/// One 6-field fixed-time expression per listed time of day, when
/// `expression`'s second, minute and hour fields are plain numbers or lists
/// of plain numbers and list at least two times (`0 2,14 * * *`); `None`
/// otherwise (croner's own reading then stands).
///
/// Why: croner counts a list as an interval, so on a DST day `0 2,14 * * *`
/// in New York lost its 02:00 run (spring forward) and `30 1,13 * * *` ran
/// at 01:30 twice (fall back), while a user reads both as fixed times. Each
/// part keeps the date fields as written.
fn fixed_time_parts(expression: &str) -> Option<Vec<String>> {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    let (time, date) = match fields.len() {
        5 => (vec!["0", fields[0], fields[1]], &fields[2..]),
        6 => (fields[..3].to_vec(), &fields[3..]),
        _ => return None,
    };
    let lists = time
        .iter()
        .map(|field| plain_numbers(field))
        .collect::<Option<Vec<_>>>()?;
    let count: usize = lists.iter().map(Vec::len).product();
    if !(2..=MAX_FIXED_TIMES).contains(&count) {
        return None;
    }
    let date = date.join(" ");
    let mut parts = Vec::with_capacity(count);
    for second in &lists[0] {
        for minute in &lists[1] {
            for hour in &lists[2] {
                parts.push(format!("{second} {minute} {hour} {date}"));
            }
        }
    }
    Some(parts)
}

/// The values of a field that is a plain number or a list of them.
fn plain_numbers(field: &str) -> Option<Vec<&str>> {
    let values: Vec<&str> = field.split(',').collect();
    values
        .iter()
        .all(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .then_some(values)
}

/// A cron field: its name and the values it accepts.
struct Field {
    name: &'static str,
    plural: &'static str,
    min: u32,
    max: u32,
}

/// The six fields, seconds first (a 5-field expression starts at minutes).
const FIELDS: [Field; 6] = [
    Field {
        name: "second",
        plural: "seconds are",
        min: 0,
        max: 59,
    },
    Field {
        name: "minute",
        plural: "minutes are",
        min: 0,
        max: 59,
    },
    Field {
        name: "hour",
        plural: "hours are",
        min: 0,
        max: 23,
    },
    Field {
        name: "day-of-month",
        plural: "days of the month are",
        min: 1,
        max: 31,
    },
    Field {
        name: "month",
        plural: "months are",
        min: 1,
        max: 12,
    },
    Field {
        name: "day-of-week",
        plural: "days of the week are",
        min: 0,
        max: 7,
    },
];

/// Why croner refused `expression`, as a sentence naming the field and
/// what it accepts where that can be told, and croner's own words
/// otherwise.
fn why_invalid(expression: &str, error: &croner::errors::CronError) -> String {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    if let Some(alias) = fields.first().and_then(|f| f.strip_prefix('@')) {
        return format!(
            "@{alias} is not an alias redq knows: accepted are @yearly, @annually, @monthly, \
             @weekly, @daily, @hourly and @every <interval> (such as @every 5m)"
        );
    }
    if let Some((zone, rest)) = fields.split_last() {
        if fields.len() > 5 && looks_like_zone(zone) {
            return format!(
                "a time zone does not go in the expression: write \"{}\" and give {zone:?} \
                 with .timezone(...) (--timezone on the command line)",
                rest.join(" ")
            );
        }
    }
    if !(5..=6).contains(&fields.len()) {
        return format!(
            "it has {} fields: accepted are 5 (minute hour day-of-month month day-of-week), \
             6 (second first) or an alias such as @daily",
            fields.len()
        );
    }
    let names = &FIELDS[6 - fields.len()..];
    for (text, field) in fields.iter().zip(names) {
        if let Some(why) = out_of_range(text, field) {
            return why;
        }
    }
    format!(
        "{} (accepted: a 5- or 6-field cron expression or an alias such as @daily)",
        croner_reason(error)
    )
}

/// The sentence for a number in `text` outside `field`'s range, if any.
/// Steps (after `/`) are not values and are left to croner.
fn out_of_range(text: &str, field: &Field) -> Option<String> {
    text.split(',')
        .flat_map(|item| {
            let values = item.split('/').next().unwrap_or("");
            values.split('-')
        })
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .find(|v| {
            v.parse::<u32>()
                .map_or(true, |n| n < field.min || n > field.max)
        })
        .map(|bad| {
            let Field {
                name,
                plural,
                min,
                max,
            } = field;
            if bad == text {
                format!("the {name} field {bad} is out of range: {plural} {min}-{max}")
            } else {
                format!(
                    "the {name} field {text} has {bad}, which is out of range: {plural} {min}-{max}"
                )
            }
        })
}

/// Whether the last word of a refused expression is a time zone name
/// (`Europe/Paris`, `UTC`), as Sidekiq-cron writes one.
fn looks_like_zone(word: &str) -> bool {
    word.bytes().any(|b| b.is_ascii_alphabetic())
        && (word.contains('/') || jiff::tz::db().get(word).is_ok())
}

/// croner's message, in the crate's style: lowercase, no trailing period.
fn croner_reason(error: &croner::errors::CronError) -> String {
    let text = error.to_string();
    let text = text.trim_end_matches('.');
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn invalid_timezone(timezone: &str) -> QueueError {
    QueueError::invalid(
        "timezone",
        timezone,
        "an IANA time zone name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\"",
    )
}

/// The id of the job a schedule enqueues for one tick: the same for every
/// scheduler and every retry, so a tick can never enqueue two jobs.
///
/// The form is `s-<16 hex digits>-<tick in unix ms>`: a 64-bit FNV-1a hash of
/// the schedule name (stable across Rust versions and machines, unlike
/// `std`'s hasher), then the tick. At most 34 bytes, no control characters.
pub fn tick_job_id(schedule: &str, tick: SystemTime) -> String {
    tick_job_id_ms(schedule, time_to_ms(tick))
}

pub(crate) fn tick_job_id_ms(schedule: &str, tick_ms: u64) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let hash = schedule
        .bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    format!("s-{hash:016x}-{tick_ms}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unix ms of an RFC 3339 instant.
    fn ms(instant: &str) -> u64 {
        instant.parse::<Timestamp>().unwrap().as_millisecond() as u64
    }

    fn next(expr: &str, tz: &str, after: &str) -> u64 {
        CronExpr::parse(expr, tz)
            .unwrap()
            .next_after_ms(ms(after))
            .unwrap()
    }

    /// The ticks after `after`, as RFC 3339 UTC instants.
    fn ticks(expr: &str, tz: &str, after: &str, n: usize) -> Vec<String> {
        let cron = CronExpr::parse(expr, tz).unwrap();
        let mut at = ms(after);
        (0..n)
            .map(|_| {
                at = cron.next_after_ms(at).unwrap();
                Timestamp::from_millisecond(at as i64).unwrap().to_string()
            })
            .collect()
    }

    #[test]
    fn five_fields_fire_at_second_zero_and_six_fields_have_seconds() {
        assert_eq!(
            next("*/15 * * * *", "UTC", "2026-01-01T10:07:30Z"),
            ms("2026-01-01T10:15:00Z")
        );
        assert_eq!(
            next("*/10 * * * * *", "UTC", "2026-01-01T10:07:31Z"),
            ms("2026-01-01T10:07:40Z")
        );
    }

    #[test]
    fn aliases_parse() {
        assert_eq!(
            next("@hourly", "UTC", "2026-01-01T10:07:30Z"),
            ms("2026-01-01T11:00:00Z")
        );
        assert_eq!(
            next("@daily", "Europe/Paris", "2026-01-01T10:07:30Z"),
            ms("2026-01-01T23:00:00Z")
        );
        assert_eq!(
            next("@weekly", "UTC", "2026-01-01T10:00:00Z"), // a Thursday
            ms("2026-01-04T00:00:00Z")
        );
        assert_eq!(
            next("@monthly", "UTC", "2026-01-01T10:00:00Z"),
            ms("2026-02-01T00:00:00Z")
        );
        assert_eq!(
            next("@yearly", "UTC", "2026-01-01T10:00:00Z"),
            ms("2027-01-01T00:00:00Z")
        );
    }

    #[test]
    fn next_is_strictly_after_even_on_a_tick_and_with_milliseconds() {
        let cron = CronExpr::parse("* * * * * *", "UTC").unwrap();
        let tick = ms("2026-01-01T00:00:05Z");
        assert_eq!(cron.next_after_ms(tick), Some(tick + 1000));
        assert_eq!(cron.next_after_ms(tick - 1), Some(tick));
        assert_eq!(cron.next_after_ms(tick + 999), Some(tick + 1000));
    }

    #[test]
    fn timezone_shifts_the_wall_clock() {
        assert_eq!(
            next("0 9 * * *", "Europe/Paris", "2026-07-01T00:00:00Z"),
            ms("2026-07-01T07:00:00Z") // CEST, UTC+2
        );
        assert_eq!(
            next("0 9 * * *", "Asia/Kolkata", "2026-07-01T00:00:00Z"),
            ms("2026-07-01T03:30:00Z")
        );
    }

    // America/New_York springs forward on 2026-03-08: 02:00 EST becomes
    // 03:00 EDT (07:00 UTC); 02:00-02:59 do not exist that day.

    #[test]
    fn spring_forward_fixed_time_in_the_gap_fires_once_right_after_it() {
        assert_eq!(
            ticks("30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3),
            [
                "2026-03-07T07:30:00Z", // 02:30 EST
                "2026-03-08T07:00:00Z", // 02:30 does not exist: 03:00 EDT
                "2026-03-09T06:30:00Z", // 02:30 EDT
            ]
        );
    }

    #[test]
    fn spring_forward_fixed_time_outside_the_gap_is_unaffected() {
        assert_eq!(
            ticks("30 3 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2),
            ["2026-03-08T07:30:00Z", "2026-03-09T07:30:00Z"]
        );
    }

    #[test]
    fn spring_forward_interval_skips_the_missing_wall_times() {
        assert_eq!(
            ticks(
                "*/30 * * * *",
                "America/New_York",
                "2026-03-08T06:00:00Z",
                4
            ),
            [
                "2026-03-08T06:30:00Z", // 01:30 EST
                "2026-03-08T07:00:00Z", // 03:00 EDT: 02:00 and 02:30 do not exist
                "2026-03-08T07:30:00Z", // 03:30 EDT
                "2026-03-08T08:00:00Z",
            ]
        );
        assert_eq!(
            ticks("@hourly", "America/New_York", "2026-03-08T05:30:00Z", 3),
            [
                "2026-03-08T06:00:00Z", // 01:00 EST
                "2026-03-08T07:00:00Z", // 03:00 EDT, one real hour later
                "2026-03-08T08:00:00Z",
            ]
        );
    }

    // America/New_York falls back on 2026-11-01: 02:00 EDT becomes 01:00 EST
    // (06:00 UTC); 01:00-01:59 happen twice.

    #[test]
    fn fall_back_fixed_time_in_the_repeat_fires_once_at_the_first() {
        assert_eq!(
            ticks("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 3),
            [
                "2026-11-01T05:30:00Z", // 01:30 EDT; not again at 01:30 EST
                "2026-11-02T06:30:00Z", // 01:30 EST
                "2026-11-03T06:30:00Z",
            ]
        );
    }

    #[test]
    fn fall_back_interval_fires_on_both_occurrences() {
        assert_eq!(
            ticks(
                "*/30 * * * *",
                "America/New_York",
                "2026-11-01T04:45:00Z",
                6
            ),
            [
                "2026-11-01T05:00:00Z", // 01:00 EDT
                "2026-11-01T05:30:00Z", // 01:30 EDT
                "2026-11-01T06:00:00Z", // 01:00 EST
                "2026-11-01T06:30:00Z", // 01:30 EST
                "2026-11-01T07:00:00Z", // 02:00 EST
                "2026-11-01T07:30:00Z",
            ]
        );
        assert_eq!(
            ticks("@hourly", "America/New_York", "2026-11-01T04:30:00Z", 3),
            [
                "2026-11-01T05:00:00Z", // 01:00 EDT
                "2026-11-01T06:00:00Z", // 01:00 EST
                "2026-11-01T07:00:00Z", // 02:00 EST
            ]
        );
    }

    #[test]
    fn fall_back_started_inside_the_repeat_does_not_fire_a_fixed_time_again() {
        // At 01:45 EST (the second 01:45), a 01:30 daily job is done for the day.
        assert_eq!(
            next("30 1 * * *", "America/New_York", "2026-11-01T06:45:00Z"),
            ms("2026-11-02T06:30:00Z")
        );
        // ...but an interval job has the second half-hour still ahead.
        assert_eq!(
            next("*/30 * * * *", "America/New_York", "2026-11-01T05:45:00Z"),
            ms("2026-11-01T06:00:00Z")
        );
    }

    #[test]
    fn europe_paris_transitions_follow_the_same_rules() {
        // 2026-03-29: 02:00 CET -> 03:00 CEST (01:00 UTC).
        assert_eq!(
            next("30 2 * * *", "Europe/Paris", "2026-03-28T12:00:00Z"),
            ms("2026-03-29T01:00:00Z")
        );
        // 2026-10-25: 03:00 CEST -> 02:00 CET (01:00 UTC); 02:30 twice.
        assert_eq!(
            ticks("30 2 * * *", "Europe/Paris", "2026-10-24T12:00:00Z", 2),
            ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]
        );
    }

    #[test]
    fn bad_expressions_are_refused_naming_the_expression() {
        for bad in [
            "",
            "   ",
            "61 * * * *",
            "* * * *",
            "* * * * * * *",
            "0 0 30 2 *",
            "@reboot",
            "hello",
            "* * * * *\n",
        ] {
            match CronExpr::parse(bad, "UTC") {
                Err(QueueError::Invalid { what, .. }) => {
                    assert_eq!(what, "cron expression", "{bad:?}")
                }
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn bad_timezones_are_refused_naming_the_timezone() {
        for bad in [
            "",
            "Mars/Olympus_Mons",
            "Europe/Pariss",
            "../etc/passwd",
            "UTC\n",
        ] {
            match CronExpr::parse("* * * * *", bad) {
                Err(QueueError::Invalid { what, .. }) => assert_eq!(what, "timezone", "{bad:?}"),
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
        let err = CronExpr::parse("* * * * *", "Mars/Olympus_Mons").unwrap_err();
        assert!(err.to_string().contains("Mars/Olympus_Mons"), "{err}");
    }

    #[test]
    fn the_bundled_tz_database_backs_machines_without_zoneinfo() {
        // jiff falls back to this copy when /usr/share/zoneinfo is missing
        // (slim containers), so schedules keep working there.
        let tz = jiff::tz::TimeZoneDatabase::bundled()
            .get("America/New_York")
            .unwrap();
        let summer = "2026-07-01T12:00:00Z".parse::<Timestamp>().unwrap();
        assert_eq!(tz.to_offset(summer).seconds(), -4 * 3600);
    }

    /// The rule part of the error for `expr`, after "invalid cron expression ...: ".
    fn refusal(expr: &str) -> String {
        match CronExpr::parse(expr, "UTC") {
            Err(QueueError::Invalid { what, rule, .. }) => {
                assert_eq!(what, "cron expression", "{expr:?}");
                rule
            }
            other => panic!("{expr:?} gave {other:?}"),
        }
    }

    #[test]
    fn error_messages_name_the_field_and_its_range() {
        let err = CronExpr::parse("61 * * * *", "UTC")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid cron expression \"61 * * * *\": \
             the minute field 61 is out of range: minutes are 0-59"
        );
        assert_eq!(
            refusal("0 25 * * *"),
            "the hour field 25 is out of range: hours are 0-23"
        );
        assert_eq!(
            refusal("61 0 2 * * *"),
            "the second field 61 is out of range: seconds are 0-59"
        );
        assert_eq!(
            refusal("0 2 0 * *"),
            "the day-of-month field 0 is out of range: days of the month are 1-31"
        );
        assert_eq!(
            refusal("0 2 * 1-13 *"),
            "the month field 1-13 has 13, which is out of range: months are 1-12"
        );
        assert_eq!(
            refusal("0 2 * * 8"),
            "the day-of-week field 8 is out of range: days of the week are 0-7"
        );
    }

    #[test]
    fn error_messages_point_to_what_to_write_instead() {
        assert!(refusal("@reboot").starts_with("@reboot is not an alias redq knows"));
        assert!(
            refusal("@everyday").ends_with("@hourly and @every <interval> (such as @every 5m)"),
            "{}",
            refusal("@everyday")
        );
        assert_eq!(
            refusal("30 2 * * * Europe/Paris"),
            "a time zone does not go in the expression: write \"30 2 * * *\" and give \
             \"Europe/Paris\" with .timezone(...) (--timezone on the command line)"
        );
        assert!(refusal("30 2 * * * UTC").starts_with("a time zone does not go"));
        assert!(refusal("* * * *").starts_with("it has 4 fields: accepted are 5"));
        assert!(refusal("* * * * * * *").starts_with("it has 7 fields"));
        // No field out of range: croner's words, with what is accepted.
        assert!(
            refusal("hello * * * *").ends_with(
                "(accepted: a 5- or 6-field cron expression or an alias such as @daily)"
            ),
            "{}",
            refusal("hello * * * *")
        );
    }

    // Several listed hours are fixed times, each on its own: croner alone
    // counts a list as an interval, which lost the 02:00 run of
    // `0 2,14 * * *` when New York springs forward and ran `30 1,13 * * *`
    // at 01:30 twice when it falls back.

    #[test]
    fn spring_forward_listed_hours_each_fire_once() {
        assert_eq!(
            ticks(
                "0 2,14 * * *",
                "America/New_York",
                "2026-03-07T12:00:00Z",
                4
            ),
            [
                "2026-03-07T19:00:00Z", // 14:00 EST
                "2026-03-08T07:00:00Z", // 02:00 does not exist: 03:00 EDT
                "2026-03-08T18:00:00Z", // 14:00 EDT
                "2026-03-09T06:00:00Z", // 02:00 EDT
            ]
        );
        // 2026-03-29 in Paris: 02:00 CET -> 03:00 CEST (01:00 UTC).
        assert_eq!(
            ticks("30 2,14 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", 3),
            [
                "2026-03-28T13:30:00Z", // 14:30 CET
                "2026-03-29T01:00:00Z", // 02:30 does not exist: 03:00 CEST
                "2026-03-29T12:30:00Z", // 14:30 CEST
            ]
        );
    }

    #[test]
    fn fall_back_listed_hours_each_fire_once_at_the_first() {
        assert_eq!(
            ticks(
                "30 1,13 * * *",
                "America/New_York",
                "2026-10-31T12:00:00Z",
                4
            ),
            [
                "2026-10-31T17:30:00Z", // 13:30 EDT
                "2026-11-01T05:30:00Z", // 01:30 EDT; not again at 01:30 EST
                "2026-11-01T18:30:00Z", // 13:30 EST
                "2026-11-02T06:30:00Z", // 01:30 EST
            ]
        );
        // 2026-10-25 in Paris: 03:00 CEST -> 02:00 CET (01:00 UTC).
        assert_eq!(
            ticks("0 30 2,14 * * *", "Europe/Paris", "2026-10-24T12:00:00Z", 4),
            [
                "2026-10-24T12:30:00Z", // 14:30 CEST
                "2026-10-25T00:30:00Z", // 02:30 CEST; not again at 02:30 CET
                "2026-10-25T13:30:00Z", // 14:30 CET
                "2026-10-26T01:30:00Z",
            ]
        );
        // Listed minutes too, and in both orders.
        assert_eq!(
            ticks(
                "45,15 1 * * *",
                "America/New_York",
                "2026-11-01T04:00:00Z",
                3
            ),
            [
                "2026-11-01T05:15:00Z", // 01:15 EDT
                "2026-11-01T05:45:00Z", // 01:45 EDT; neither again in EST
                "2026-11-02T06:15:00Z",
            ]
        );
    }

    #[test]
    fn ranges_steps_and_long_lists_stay_intervals() {
        // A range in the hour field keeps the rhythm in real time.
        assert_eq!(
            ticks(
                "30 1-2 * * *",
                "America/New_York",
                "2026-11-01T04:00:00Z",
                3
            ),
            [
                "2026-11-01T05:30:00Z", // 01:30 EDT
                "2026-11-01T06:30:00Z", // 01:30 EST
                "2026-11-01T07:30:00Z", // 02:30 EST
            ]
        );
        assert!(fixed_time_parts("0 */2 * * *").is_none());
        assert!(fixed_time_parts("30 2 * * *").is_none()); // croner's own fixed time
        assert_eq!(
            fixed_time_parts("0 2,14 * * 1-5").unwrap(),
            ["0 0 2 * * 1-5", "0 0 14 * * 1-5"]
        );
        let every_minute_of_three_hours = (0..60).map(|m| m.to_string()).collect::<Vec<_>>();
        let long = format!("{} 1,2,3 * * *", every_minute_of_three_hours.join(","));
        assert!(
            fixed_time_parts(&long).is_none(),
            "180 times > MAX_FIXED_TIMES"
        );
        assert!(CronExpr::parse(&long, "UTC").is_ok());
    }

    /// The rule part of the error for the `@every` expression `expr`.
    fn every_refusal(expr: &str) -> String {
        match CronExpr::parse(expr, "UTC") {
            Err(QueueError::Invalid { what, rule, .. }) => {
                assert_eq!(what, "interval", "{expr:?}");
                rule
            }
            other => panic!("{expr:?} gave {other:?}"),
        }
    }

    fn interval_of(expr: &str) -> Duration {
        CronExpr::parse(expr, "UTC").unwrap().interval().unwrap()
    }

    #[test]
    fn every_accepts_seconds_minutes_hours_days_and_combinations() {
        let secs = |s: u64| Duration::from_secs(s);
        assert_eq!(interval_of("@every 1s"), secs(1));
        assert_eq!(interval_of("@every 30s"), secs(30));
        assert_eq!(interval_of("@every 5m"), secs(300));
        assert_eq!(interval_of("@every 1h30m"), secs(5400));
        assert_eq!(interval_of("@every 2d"), secs(2 * 86_400));
        assert_eq!(
            interval_of("@every 1d2h3m4s"),
            secs(86_400 + 7200 + 180 + 4)
        );
        assert_eq!(interval_of("@every 90m"), secs(5400));
        assert_eq!(interval_of("@every 366d"), MAX_EVERY);
        // The alias in any case, surrounding and separating spaces (a tab
        // is a control character, refused in any expression).
        assert_eq!(interval_of("@EVERY 10s"), secs(10));
        assert_eq!(interval_of("  @every   10s "), secs(10));
        assert!(CronExpr::parse("*/5 * * * *", "UTC")
            .unwrap()
            .interval()
            .is_none());
    }

    #[test]
    fn every_refuses_bad_intervals_saying_what_is_accepted() {
        const ACCEPTED: &str = "accepted is a whole number of s, m, h or d, or a combination \
                                largest first, such as 30s, 5m, 1h30m or 2d, from 1s to 366d";
        assert_eq!(
            every_refusal("@every"),
            format!("@every needs an interval after it: {ACCEPTED}")
        );
        assert_eq!(
            every_refusal("@every 0s"),
            "the interval \"0s\" is zero, which would never move on: the shortest is 1s"
        );
        assert_eq!(
            every_refusal("@every 367d"),
            "the interval \"367d\" is longer than 366d, the longest @every: for a yearly run \
             write a cron expression such as @yearly"
        );
        assert!(every_refusal("@every 366d1s").contains("longer than 366d"));
        assert!(every_refusal("@every 99999999999999999999999s").contains("longer than 366d"));
        assert!(every_refusal("@every 9999999999999999d").contains("longer than 366d"));
        assert_eq!(
            every_refusal("@every 500ms"),
            format!(
                "the interval \"500ms\" is in ms, finer than @every goes: @every takes whole \
                 seconds, 1s at least ({ACCEPTED})"
            )
        );
        assert_eq!(
            every_refusal("@every 1.5m"),
            format!(
                "the interval \"1.5m\" has a fraction: @every takes whole numbers of units, \
                 such as 1m30s for a minute and a half ({ACCEPTED})"
            )
        );
        assert_eq!(
            every_refusal("@every 30"),
            "the interval \"30\" has the number 30 without a unit: write 30s, 30m, 30h or 30d"
        );
        assert_eq!(
            every_refusal("@every 2w"),
            format!(
                "the interval \"2w\" has the unit \"w\", which @every does not know: {ACCEPTED}"
            )
        );
        assert!(every_refusal("@every 5M").contains("the unit \"M\""));
        assert!(every_refusal("@every 5min").contains("the unit \"min\""));
        assert_eq!(
            every_refusal("@every h"),
            format!("the interval \"h\" has the unit \"h\" without a number before it: {ACCEPTED}")
        );
        assert_eq!(
            every_refusal("@every -5m"),
            format!("the interval \"-5m\" has '-', which @every does not read: {ACCEPTED}")
        );
        assert!(every_refusal("@every 1h 30m").starts_with("the interval \"1h 30m\" has spaces"));
        // Each unit once, largest first: a repeat or a smaller unit first
        // would be stored as typed, for a period no one wrote down.
        for misordered in ["@every 5m5m", "@every 30m1h", "@every 1s1d"] {
            assert!(
                every_refusal(misordered).contains("again or after a smaller one"),
                "{misordered}"
            );
        }
        assert!(CronExpr::parse("@every 1d12h30m15s", "UTC").is_ok());
        for not_ascii in [
            "@every\u{a0}5m",
            "@every 5m\u{a0}",
            "@every ５m",
            "@every 5µs",
        ] {
            assert!(
                every_refusal(not_ascii).starts_with("@every is written in plain ASCII"),
                "{not_ascii:?}"
            );
        }
        // The whole error names the expression.
        assert_eq!(
            CronExpr::parse("@every 0s", "UTC").unwrap_err().to_string(),
            "invalid interval \"@every 0s\": the interval \"0s\" is zero, which would never \
             move on: the shortest is 1s"
        );
    }

    #[test]
    fn every_refuses_a_time_zone_other_than_utc() {
        assert!(CronExpr::parse("@every 1d", "UTC").is_ok());
        assert!(CronExpr::parse("@every 1d", "Etc/UTC").is_ok());
        for zone in ["Europe/Paris", "Europe/London", "Asia/Kolkata", "Etc/GMT+5"] {
            match CronExpr::parse("@every 1d", zone) {
                Err(QueueError::Invalid { what, rule, value }) => {
                    assert_eq!(what, "timezone");
                    assert_eq!(value, zone);
                    assert!(
                        rule.starts_with(
                            "an @every schedule ticks at multiples of its interval since \
                             1970-01-01 00:00 UTC, which no time zone moves"
                        ),
                        "{rule}"
                    );
                    assert!(
                        rule.contains(&format!("at a time of day in {zone}")),
                        "{rule}"
                    );
                }
                other => panic!("{zone} gave {other:?}"),
            }
        }
        // An unknown zone is still the unknown-zone error.
        let err = CronExpr::parse("@every 1d", "Mars/Olympus_Mons").unwrap_err();
        assert!(err.to_string().contains("an IANA time zone name"), "{err}");
    }

    #[test]
    fn every_ticks_are_multiples_of_the_interval_since_the_epoch() {
        // 7 minutes: not a divisor of an hour, so the ticks drift against
        // the clock face, but they are the same for every scheduler.
        let after = ms("2026-12-07T22:13:55Z");
        let seven = 7 * 60 * 1000;
        let first = next("@every 7m", "UTC", "2026-12-07T22:13:55Z");
        assert_eq!(first % seven, 0);
        assert!(first > after && first - after <= seven);
        assert_eq!(
            ticks("@every 5m", "UTC", "2026-12-07T22:13:55Z", 3),
            [
                "2026-12-07T22:15:00Z",
                "2026-12-07T22:20:00Z",
                "2026-12-07T22:25:00Z"
            ]
        );
        assert_eq!(
            ticks("@every 1h30m", "UTC", "2026-12-07T22:13:55Z", 2),
            ["2026-12-07T22:30:00Z", "2026-12-08T00:00:00Z"]
        );
        // A day ticks at midnight UTC; 2 days at even days since 1970.
        assert_eq!(
            next("@every 1d", "UTC", "2026-12-07T22:13:55Z"),
            ms("2026-12-08T00:00:00Z")
        );
        let two_days = next("@every 2d", "UTC", "2026-12-07T22:13:55Z");
        assert_eq!(two_days % (2 * 86_400_000), 0);
        assert!(two_days > after && two_days - after <= 2 * 86_400_000);
    }

    #[test]
    fn every_next_is_strictly_after_even_exactly_on_a_tick() {
        let every = CronExpr::parse("@every 30s", "UTC").unwrap();
        let tick = ms("2026-01-01T00:00:30Z");
        assert_eq!(every.next_after_ms(tick), Some(tick + 30_000));
        assert_eq!(every.next_after_ms(tick - 1), Some(tick));
        assert_eq!(every.next_after_ms(tick + 29_999), Some(tick + 30_000));
        assert_eq!(every.next_after_ms(0), Some(30_000));
        assert_eq!(
            every.next_after(std::time::UNIX_EPOCH + Duration::from_millis(tick)),
            Some(std::time::UNIX_EPOCH + Duration::from_millis(tick + 30_000))
        );
    }

    #[test]
    fn every_handles_the_largest_interval_and_the_end_of_time() {
        let year = CronExpr::parse("@every 366d", "UTC").unwrap();
        let interval = 366 * 86_400_000;
        let next = year.next_after_ms(ms("2026-12-07T00:00:00Z")).unwrap();
        assert_eq!(next % interval, 0);
        assert_eq!(next, 57 * interval); // 2027-02-13, the 57th since 1970
        assert_eq!(year.next_after_ms(next), Some(next + interval));
        // No tick past the latest time redq stores: none, not a wrap.
        assert_eq!(year.next_after_ms(MAX_TIME_MS), None);
        assert_eq!(year.next_after_ms(u64::MAX), None);
        let second = CronExpr::parse("@every 1s", "UTC").unwrap();
        assert_eq!(second.next_after_ms(MAX_TIME_MS), None);
    }

    #[test]
    fn every_upcoming_previews_aligned_ticks_with_no_dst_rule() {
        // New York's spring forward (2026-03-08 07:00 UTC) changes nothing:
        // the ticks are instants (and the zone is UTC anyway).
        let every = CronExpr::parse("@every 1h", "UTC").unwrap();
        let from = std::time::UNIX_EPOCH + Duration::from_millis(ms("2026-03-08T05:30:00Z"));
        let got: Vec<String> = every
            .upcoming(from, 4)
            .into_iter()
            .map(|t| {
                Timestamp::from_millisecond(time_to_ms(t) as i64)
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            got,
            [
                "2026-03-08T06:00:00Z",
                "2026-03-08T07:00:00Z",
                "2026-03-08T08:00:00Z",
                "2026-03-08T09:00:00Z"
            ]
        );
    }

    #[test]
    fn every_expression_from_a_duration_reads_back_the_same() {
        use crate::schedule::every::expression;
        for secs in [
            1,
            30,
            59,
            60,
            90,
            300,
            3600,
            5400,
            86_400,
            90_061,
            366 * 86_400,
        ] {
            let text = expression(Duration::from_secs(secs));
            assert_eq!(interval_of(&text), Duration::from_secs(secs), "{text}");
        }
        assert_eq!(expression(Duration::from_secs(5400)), "@every 1h30m");
        assert_eq!(expression(Duration::from_secs(90_061)), "@every 1d1h1m1s");
        assert_eq!(expression(Duration::from_secs(2 * 86_400)), "@every 2d");
        // What the syntax cannot hold is refused, with the text's message.
        assert_eq!(expression(Duration::ZERO), "@every 0s");
        assert!(every_refusal(&expression(Duration::ZERO)).contains("is zero"));
        assert_eq!(expression(Duration::from_millis(1500)), "@every 1s500ms");
        assert!(every_refusal(&expression(Duration::from_millis(1500))).contains("is in ms"));
        assert_eq!(expression(Duration::from_nanos(1)), "@every 1ms");
        assert!(
            every_refusal(&expression(Duration::from_secs(367 * 86_400)))
                .contains("longer than 366d")
        );
    }

    #[test]
    fn tick_job_ids_are_stable_short_and_distinct() {
        let a = tick_job_id_ms("nightly-report", 1_767_225_600_000);
        assert_eq!(a, tick_job_id_ms("nightly-report", 1_767_225_600_000));
        assert_ne!(a, tick_job_id_ms("nightly-report", 1_767_225_601_000));
        assert_ne!(a, tick_job_id_ms("nightly-reporT", 1_767_225_600_000));
        // Pinned: a change here would let an upgraded scheduler refire a tick.
        assert_eq!(tick_job_id_ms("", 0), "s-cbf29ce484222325-0");
        let longest = tick_job_id_ms(&"x".repeat(128), MAX_TIME_MS);
        assert!(longest.len() <= crate::limits::MAX_ID_LEN, "{longest}");
        assert!(!longest.chars().any(char::is_control));
    }
}
