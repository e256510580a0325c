//! Times and durations as the console prints them.
//!
//! All wall-clock times are UTC (the console runs next to servers in any time
//! zone; UTC is what their logs say). No clock is read here: callers pass the
//! `now` they render for, which keeps views pure and testable.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 before it).
pub fn epoch_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
pub fn datetime(at: SystemTime) -> String {
    let secs = epoch_ms(at) / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02} {}", time_of_day(secs))
}

/// RFC 3339 in UTC with milliseconds, for JSON output.
pub fn rfc3339(at: SystemTime) -> String {
    let ms = epoch_ms(at);
    let secs = ms / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{}.{:03}Z",
        time_of_day(secs),
        ms % 1000
    )
}

/// `HH:MM:SS` when `at` is on the same UTC day as `now`, else `MM-DD HH:MM`.
pub fn short(at: SystemTime, now: SystemTime) -> String {
    if same_day(at, now) {
        time_of_day(epoch_ms(at) / 1000)
    } else {
        dated(at)
    }
}

/// Whether `a` and `b` fall on the same UTC day.
pub fn same_day(a: SystemTime, b: SystemTime) -> bool {
    epoch_ms(a) / 86_400_000 == epoch_ms(b) / 86_400_000
}

/// `MM-DD HH:MM` of `at`, whatever day it is: for a scale whose labels
/// span days, so that every label says its day, today's too.
pub fn dated(at: SystemTime) -> String {
    let a = epoch_ms(at) / 1000;
    let (_, m, d) = civil_from_days((a / 86_400) as i64);
    format!("{m:02}-{d:02} {}", &time_of_day(a)[..5])
}

/// `HH:MM:SS` of a time in seconds since the epoch.
fn time_of_day(secs: u64) -> String {
    let s = secs % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A compact duration: `850ms`, `12s`, `4m05s`, `3h20m`, `2d04h`.
pub fn compact(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    let s = ms / 1000;
    match s {
        0 if ms > 0 => format!("{ms}ms"),
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, s / 60 % 60),
        _ => format!("{}d{:02}h", s / 86_400, s / 3600 % 24),
    }
}

/// How long a run took, in tenths of a second below a minute (`1.5s`,
/// `12s`, `850ms`): `compact` would say `1s` for 1 500 ms.
pub fn run_time(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    match ms {
        1000..60_000 if ms % 1000 >= 100 => format!("{}.{}s", ms / 1000, ms % 1000 / 100),
        _ => compact(d),
    }
}

/// `at` from `now`'s side: `in 30s`, or `1m05s ago` once it has passed
/// (a lapse or a due time that passed must not read as still to come).
pub fn relative(at: SystemTime, now: SystemTime) -> String {
    match at.duration_since(now) {
        Ok(ahead) => format!("in {}", compact(ahead)),
        Err(_) => format!("{} ago", compact(age(at, now))),
    }
}

/// How long before `now` `at` was (zero when it is in the future).
pub fn age(at: SystemTime, now: SystemTime) -> Duration {
    now.duration_since(at).unwrap_or_default()
}

/// Days since 1970-01-01 to a (year, month, day) civil date; Howard
/// Hinnant's algorithm, exact for the whole range the console can meet.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A duration as a flag takes it, in the largest whole unit it is (`7d`,
/// `90m`, `1500ms`): what [`parse_duration`] reads back exactly, for a
/// command an output suggests (`redq retention set q --max-age 7d`).
pub fn as_flag(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, name) in [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
    ] {
        if ms >= unit && ms.is_multiple_of(unit) {
            return format!("{}{name}", ms / unit);
        }
    }
    format!("{ms}ms")
}

/// Parses `250ms`, `5s`, `2m`, `1h`, `1d`, or a plain number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (try 500ms, 5s, 2m, 1h)"))?;
    let factor = match unit {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?} (use ms, s, m, h or d)"
            ))
        }
    };
    let secs = value * factor;
    if !secs.is_finite() || !(0.0..=315_360_000.0).contains(&secs) {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_flag_duration_reads_back_exactly() {
        for ms in [1, 999, 1500, 60_000, 5_400_000, 7 * 86_400_000, 86_400_001] {
            let d = Duration::from_millis(ms);
            assert_eq!(parse_duration(&as_flag(d)), Ok(d), "{}", as_flag(d));
        }
        assert_eq!(as_flag(Duration::from_secs(7 * 86_400)), "7d");
        assert_eq!(as_flag(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn a_run_time_keeps_its_tenths_below_a_minute() {
        let ms = Duration::from_millis;
        assert_eq!(run_time(ms(1500)), "1.5s");
        assert_eq!(run_time(ms(1050)), "1s");
        assert_eq!(run_time(ms(12_000)), "12s");
        assert_eq!(run_time(ms(59_999)), "59.9s");
        assert_eq!(run_time(ms(850)), "850ms");
        assert_eq!(run_time(ms(65_000)), "1m05s");
    }

    #[test]
    fn formats_utc_dates() {
        let cases = [
            (0, "1970-01-01 00:00:00"),
            (951_782_400, "2000-02-29 00:00:00"),
            (1_764_455_825, "2025-11-29 22:37:05"),
        ];
        for (secs, want) in cases {
            assert_eq!(datetime(at(secs)), want);
        }
        assert_eq!(rfc3339(at(1_764_455_825)), "2025-11-29T22:37:05.000Z");
    }

    #[test]
    fn dated_times_say_their_day_even_today() {
        assert_eq!(dated(at(1_764_455_825)), "11-29 22:37");
        assert!(same_day(at(1_764_455_825), at(1_764_455_825 - 3600)));
        assert!(!same_day(at(1_764_455_825), at(1_764_455_825 - 86_400)));
    }

    #[test]
    fn short_times_drop_the_date_today() {
        let now = at(1_764_455_825);
        assert_eq!(short(at(1_764_455_800), now), "22:36:40");
        assert_eq!(short(at(1_764_455_825 - 86_400), now), "11-28 22:37");
    }

    #[test]
    fn compact_durations() {
        let cases = [
            (Duration::from_millis(850), "850ms"),
            (Duration::ZERO, "0s"),
            (Duration::from_secs(12), "12s"),
            (Duration::from_secs(245), "4m05s"),
            (Duration::from_secs(12_000), "3h20m"),
            (Duration::from_secs(187_200), "2d04h"),
        ];
        for (d, want) in cases {
            assert_eq!(compact(d), want);
        }
    }

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5y").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
