//! Measuring: latency percentiles, this process's CPU time, Redis's.

use std::time::Duration;

/// p50/p90/p99/max in milliseconds of `samples` (sorted in place).
pub fn percentiles(samples: &mut [Duration]) -> [f64; 4] {
    if samples.is_empty() {
        return [0.0; 4];
    }
    samples.sort_unstable();
    let at = |q: f64| {
        let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
        ms(samples[rank - 1])
    };
    [at(0.50), at(0.90), at(0.99), ms(samples[samples.len() - 1])]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// CPU seconds (user + system) this process used so far, from
/// `/proc/self/stat` (Linux; clock ticks of 1/100 s, the kernel's USER_HZ
/// on every mainstream architecture). `None` where that file is missing.
pub fn client_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may contain spaces: fields start after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentiles(&mut samples), [50.0, 90.0, 99.0, 100.0]);
        assert_eq!(percentiles(&mut []), [0.0; 4]);
    }

    #[test]
    fn this_process_has_used_some_cpu() {
        assert!(client_cpu_s().is_some_and(|s| s >= 0.0));
    }
}
