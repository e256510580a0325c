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

    /// A reading that never moves (a wrong field, a constant) fails: the
    /// test computes until the reading grows past where it started.
    #[test]
    fn this_processs_cpu_time_grows_while_it_computes() {
        let before = client_cpu_s().expect("/proc/self/stat is readable");
        let give_up = std::time::Instant::now() + Duration::from_secs(10);
        let mut x = 0u64;
        while client_cpu_s().expect("/proc/self/stat is readable") <= before {
            assert!(
                std::time::Instant::now() < give_up,
                "10 s of computing and the CPU time stayed at {before} s"
            );
            for i in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
    }
}
