//! The stored form of `lua/lib/metrics.lua`, read from the Lua file itself
//! (its `MV` table and constants), so the two cannot drift: a test checks
//! the positions here against the module's text.

/// Histogram buckets: bucket `b` holds times of at most 2^b ms (b < 23, so
/// 1 ms up to 4194.304 s); the last holds every longer time.
pub const BUCKETS: usize = 24;
/// Job names a queue records separately; the rest are counted as [`OTHER`].
pub const NAMES_MAX: usize = 100;
/// The name jobs without one are recorded under.
pub const NONE: &str = "(none)";
/// The name of every job whose name came after [`NAMES_MAX`] others.
pub const OTHER: &str = "(other)";

/// Positions (from 0) in a stored value (the Lua `MV` positions minus one).
pub(crate) const WINDOW: usize = 0;
pub(crate) const COMPLETED: usize = 1;
pub(crate) const RETRIED: usize = 2;
pub(crate) const DEAD: usize = 3;
pub(crate) const CANCELLED: usize = 4;
pub(crate) const RECLAIMED: usize = 5;
pub(crate) const WAIT_SUM: usize = 7;
pub(crate) const WAIT_BUCKET: usize = 8;
pub(crate) const RUN_SUM: usize = 33;
pub(crate) const RUN_BUCKET: usize = 34;
pub(crate) const LEN: usize = 58;

/// A rollup: its field prefix, window width (ms) and number of slots.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rollup {
    pub prefix: char,
    pub width_ms: u64,
    pub slots: u64,
}

/// 5 s windows for 16 minutes.
pub(crate) const SECONDS: Rollup = Rollup {
    prefix: 's',
    width_ms: 5_000,
    slots: 192,
};
/// 1 min windows for 24 hours.
pub(crate) const MINUTES: Rollup = Rollup {
    prefix: 'm',
    width_ms: 60_000,
    slots: 1_440,
};
/// 1 h windows for 90 days.
pub(crate) const HOURS: Rollup = Rollup {
    prefix: 'h',
    width_ms: 3_600_000,
    slots: 2_160,
};

impl Rollup {
    /// The field holding window number `window` of `name`.
    pub fn field(&self, window: u64, name: &str) -> String {
        format!("{}{}|{name}", self.prefix, window % self.slots)
    }
}

/// The field holding `name`'s totals: of its closed 5 s windows, or (the
/// earlier layout, without [`open_field`]) of all of them.
pub(crate) fn total_field(name: &str) -> String {
    format!("t|{name}")
}

/// The field holding `name`'s open 5 s window number (decimal text): the
/// newest written, not yet folded into the totals and the longer rollups.
pub(crate) fn open_field(name: &str) -> String {
    format!("w|{name}")
}

/// The field present while the queue's metrics are off
/// (`lua/metrics_switch.lua`): when they were turned off, unix ms.
pub(crate) const OFF_FIELD: &str = "off";

/// The field counting the queue's lost hand-offs given back
/// (`lua/release.lua`'s `handoff_lost` form): a decimal integer.
pub(crate) const HANDOFFS_LOST_FIELD: &str = "handoffs_lost";

/// The field counting the jobs of lost claims given back (`lua/release.lua`'s
/// `claim_lost` form): a decimal integer.
pub(crate) const CLAIMS_LOST_FIELD: &str = "claims_lost";

/// A stored open-window marker, or `None` when it is not a number.
pub(crate) fn open_window(raw: &[u8]) -> Option<u64> {
    std::str::from_utf8(raw).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LUA: &str = include_str!("../../lua/lib/metrics.lua");

    fn lua_number(name: &str) -> u64 {
        let at = LUA
            .find(&format!("{name} = "))
            .unwrap_or_else(|| panic!("{name} in metrics.lua"));
        LUA[at + name.len() + 3..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    }

    #[test]
    fn the_stored_layout_is_the_lua_modules() {
        assert_eq!(lua_number("METRIC_BUCKETS") as usize, BUCKETS);
        assert_eq!(lua_number("METRIC_NAMES_MAX") as usize, NAMES_MAX);
        assert_eq!(lua_number("METRIC_LEN") as usize, LEN);
        for (name, at) in [
            ("window", WINDOW),
            ("completed", COMPLETED),
            ("retried", RETRIED),
            ("dead", DEAD),
            ("cancelled", CANCELLED),
            ("reclaimed", RECLAIMED),
            ("wait_sum", WAIT_SUM),
            ("wait_bucket", WAIT_BUCKET),
            ("run_sum", RUN_SUM),
            ("run_bucket", RUN_BUCKET),
        ] {
            assert_eq!(lua_number(name) as usize, at + 1, "MV.{name}");
        }
        // tally_time finds a kind's sum and buckets right after its count.
        for kind in ["wait", "run"] {
            let count = lua_number(&format!("{kind}_count"));
            assert_eq!(lua_number(&format!("{kind}_sum")), count + 1, "{kind}");
            assert_eq!(lua_number(&format!("{kind}_bucket")), count + 2, "{kind}");
        }
        assert_eq!(RUN_BUCKET + BUCKETS, LEN);
        assert_eq!(WAIT_BUCKET + BUCKETS + 2, RUN_BUCKET);
        for (field, prefix) in [(total_field("n"), "'t|'"), (open_field("n"), "'w|'")] {
            assert_eq!(&field[..2], &prefix[1..3]);
            assert!(
                LUA.contains(&format!("{prefix} .. name")),
                "{prefix} in metrics.lua"
            );
        }
        assert!(LUA.contains(&format!("local METRIC_OFF = '{OFF_FIELD}'")));
        let switch = include_str!("../../lua/metrics_switch.lua");
        for access in [
            "HGET', K.metrics, '",
            "HSET', K.metrics, '",
            "HDEL', K.metrics, '",
        ] {
            assert!(
                switch.contains(&format!("{access}{OFF_FIELD}'")),
                "metrics_switch.lua: {access}{OFF_FIELD}'"
            );
        }
        let release = include_str!("../../lua/release.lua");
        for field in [HANDOFFS_LOST_FIELD, CLAIMS_LOST_FIELD] {
            let count = format!("HINCRBY', K.metrics, '{field}', 1)");
            assert!(release.contains(&count), "release.lua: {count}");
            assert!(
                LUA.contains(&format!("\"{field}\"")),
                "metrics.lua: {field}"
            );
        }
        for r in [SECONDS, MINUTES, HOURS] {
            let line = format!("{{ '{}', {}, {} }}", r.prefix, r.width_ms, r.slots);
            assert!(LUA.contains(&line), "metrics.lua has the rollup {line}");
        }
    }
}
