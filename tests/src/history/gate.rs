//! The gate record (a workflow's batch, dependencies or tree; defined by
//! `lua/lib/gate_record.lua`), decoded from the msgpack the scripts store
//! in `{ns}:wf:gates`, for the checker's workflow rules and the structural
//! check. Kept independent of the driver's decoder on purpose, like
//! [`super::meta`]: a checker should not share the code it checks.

/// One waiter of a gate: the job released when the gate's members are done.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Waiter {
    pub id: String,
    pub queue: String,
    /// `all` (released whatever the members' outcomes) or `success`.
    pub condition: String,
    /// `dead`, `cancel` or `hold`: what a failed member does under `success`.
    pub on_failure: String,
    /// "" until decided, then `released`, `dead`, `cancelled`, `held`,
    /// `operator_released` or `operator_failed`.
    pub decision: String,
}

/// The fields of a gate record the rules read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gate {
    pub kind: String,
    /// `open`, `sealed`, `done` or `cancelled`.
    pub state: String,
    pub total: i64,
    pub pending: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub waiters: Vec<Waiter>,
}

/// The decisions that end a waiter's wait; `held` waits for an operator.
pub fn is_final(decision: &str) -> bool {
    !matches!(decision, "" | "held")
}

impl Gate {
    /// Decodes a gate record; `None` when it is not a msgpack array of the
    /// layout: kind, state, created_at, sealed_at, done_at, total, pending,
    /// succeeded, failed, first_failure, label, waiters (each an array of
    /// id, queue, condition, on_failure, decision).
    pub fn decode(raw: &[u8]) -> Option<Gate> {
        let mut rest = raw;
        let rmpv::Value::Array(f) = rmpv::decode::read_value(&mut rest).ok()? else {
            return None;
        };
        if f.len() < 12 {
            return None;
        }
        let waiters = match &f[11] {
            rmpv::Value::Array(ws) => ws
                .iter()
                .map(|w| match w {
                    rmpv::Value::Array(w) if w.len() >= 5 => Some(Waiter {
                        id: text(&w[0]),
                        queue: text(&w[1]),
                        condition: text(&w[2]),
                        on_failure: text(&w[3]),
                        decision: text(&w[4]),
                    }),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?,
            // An empty Lua table encodes as a map.
            rmpv::Value::Map(m) if m.is_empty() => Vec::new(),
            _ => return None,
        };
        Some(Gate {
            kind: text(&f[0]),
            state: text(&f[1]),
            total: int(&f[5]),
            pending: int(&f[6]),
            succeeded: int(&f[7]),
            failed: int(&f[8]),
            waiters,
        })
    }

    /// The waiter `id`, if it is one of this gate's.
    pub fn waiter(&self, id: &str) -> Option<&Waiter> {
        self.waiters.iter().find(|w| w.id == id)
    }
}

fn text(v: &rmpv::Value) -> String {
    match v {
        rmpv::Value::String(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        rmpv::Value::Binary(b) => String::from_utf8_lossy(b).into_owned(),
        rmpv::Value::Integer(n) => n.to_string(),
        _ => String::new(),
    }
}

fn int(v: &rmpv::Value) -> i64 {
    match v {
        rmpv::Value::Integer(n) => n.as_i64().unwrap_or(i64::MAX),
        rmpv::Value::F64(x) => *x as i64,
        rmpv::Value::F32(x) => *x as i64,
        // Text that is a number is read as one; anything else cannot be a count.
        other => text(other).parse().unwrap_or(i64::MIN),
    }
}
