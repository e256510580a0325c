//! How values read in messages to people: durations and times as people
//! write them, never Rust's Debug forms (`0ns`, `Some(SystemTime { .. })`).
//! It depends on nothing else in the crate, so every module may use it.

use std::time::{Duration, SystemTime};

/// A duration as an error shows it to people: in its largest whole unit
/// (`90 ms`, `5 s`, `2 min`, `24 h`), or in milliseconds with a fraction
/// when it is not whole milliseconds (`0.5 ms`); never Rust's Debug form.
pub fn duration_text(value: Duration) -> String {
    let nanos = value.as_nanos();
    if !nanos.is_multiple_of(1_000_000) {
        return format!("{} ms", nanos as f64 / 1e6);
    }
    let ms = nanos / 1_000_000;
    match ms {
        0 => "0 ms".to_owned(),
        ms if ms.is_multiple_of(3_600_000) => format!("{} h", ms / 3_600_000),
        ms if ms.is_multiple_of(60_000) => format!("{} min", ms / 60_000),
        ms if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        ms => format!("{ms} ms"),
    }
}

/// A time as an error shows it to people: RFC 3339 in UTC
/// (`2026-12-01T18:45:51.123Z`).
pub fn time_text(value: SystemTime) -> String {
    match jiff::Timestamp::try_from(value) {
        Ok(t) => t.to_string(),
        Err(_) => "a time out of range".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_times_read_as_people_write_them() {
        let ms = Duration::from_millis;
        assert_eq!(duration_text(Duration::ZERO), "0 ms");
        assert_eq!(duration_text(ms(90)), "90 ms");
        assert_eq!(duration_text(ms(5_000)), "5 s");
        assert_eq!(duration_text(ms(120_000)), "2 min");
        assert_eq!(duration_text(ms(86_400_000)), "24 h");
        assert_eq!(duration_text(ms(86_400_001)), "86400001 ms");
        assert_eq!(duration_text(Duration::from_micros(500)), "0.5 ms");
        let at = std::time::UNIX_EPOCH + ms(1_764_614_751_123);
        assert_eq!(time_text(at), "2025-12-01T18:45:51.123Z");
    }
}
