//! The flow-control rules, checked on the server's own record (`MONITOR`):
//! the job records every script wrote and the limits it wrote, replayed in
//! execution order.
//!
//! Why `MONITOR` and not the append-only file: the other server-side rules
//! read it too, it is a total order of every script's effects with the
//! Redis clock, and it names the script and its ARGV, so a claim's lease
//! length gives that claim's own `now` exactly (the granted expiry less the
//! length). The AOF holds the same writes but no times and no ARGV; it only
//! settles what a killed server applied, which these rules do not need.
//!
//! The rules read what happened to the jobs, never the limiter's own
//! bookkeeping (the leased counts, the start log): a script that forgets to
//! count a lease or record a start is caught by what it let through.
//!
//! | rule | how |
//! |---|---|
//! | concurrency | a job is leased from the grant that sets a lease on its record until the write that clears it (ack, nack, release, reclaim, cancel, delete); at every grant the queue's leased jobs are at most its queue-wide concurrency and the key's at most its key's (the key's override, else the each-key default), as the limits stood at that instant |
//! | rate | every grant is a start at the claim's `now`; at every start the starts in `(now − per, now]` of the queue, and of the key, are at most `max` (whole ms); starts made while the limiter had no rate do not count, and clearing a rate forgets its starts (the script keeps no log then) |
//! | push-back | a release asking for a push-back of `p` ms at time `t` pushes its job's limiter back (its limit key's, or the queue's when it has none) until `t + p`; no grant of that key (for a queue, of any of its jobs) starts before then, `MONITOR`'s time standing for the release's `now` with a few ms of slack |
//! | held | a job granted by a script run is not in the held set when that run ends; a job that was ever held ends completed, cancelled, deleted or dead, or is still in the queue at the end |

use std::collections::{BTreeMap, HashMap, HashSet};

use super::check::Report;
use super::server::{Event, Kind, ServerRecord};
use super::structure::Dump;
use super::violation::ViolationKind;

/// One limiter's limit: concurrency and rate (0 = none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spec {
    pub concurrency: u64,
    pub rate_max: u64,
    pub rate_per_ms: u64,
}

impl Spec {
    fn has_rate(&self) -> bool {
        self.rate_max > 0 && self.rate_per_ms > 0
    }
}

/// A queue's limits as `{ns}:limits` "Q" holds them: "qc qr qp kc kr kp".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueSpec {
    pub queue: Spec,
    pub each_key: Spec,
}

fn numbers(text: &str) -> Option<Vec<u64>> {
    text.split(' ').map(|n| n.parse().ok()).collect()
}

/// Parses a queue's field: six decimal integers.
pub fn parse_queue_spec(text: &str) -> Option<QueueSpec> {
    match numbers(text)?.as_slice() {
        [qc, qr, qp, kc, kr, kp] => Some(QueueSpec {
            queue: Spec {
                concurrency: *qc,
                rate_max: *qr,
                rate_per_ms: *qp,
            },
            each_key: Spec {
                concurrency: *kc,
                rate_max: *kr,
                rate_per_ms: *kp,
            },
        }),
        _ => None,
    }
}

/// Parses a key's override: three decimal integers.
pub fn parse_key_spec(text: &str) -> Option<Spec> {
    match numbers(text)?.as_slice() {
        [c, r, p] => Some(Spec {
            concurrency: *c,
            rate_max: *r,
            rate_per_ms: *p,
        }),
        _ => None,
    }
}

/// A limiter: a queue (`key` None) or a limit key of a queue.
type Limiter = (String, Option<String>);

fn name(limiter: &Limiter) -> String {
    match &limiter.1 {
        None => format!("queue {:?}", limiter.0),
        Some(key) => format!("limit key {key:?} of queue {:?}", limiter.0),
    }
}

/// The limits in force, as replayed from the record.
#[derive(Default)]
struct Limits {
    /// Field of `{ns}:limits` -> its raw value.
    fields: HashMap<String, String>,
}

impl Limits {
    fn apply(&mut self, field: &str, spec: &Option<String>, if_absent: bool) {
        match spec {
            Some(spec) if if_absent => {
                self.fields
                    .entry(field.to_owned())
                    .or_insert_with(|| spec.clone());
            }
            Some(spec) => {
                self.fields.insert(field.to_owned(), spec.clone());
            }
            None => {
                self.fields.remove(field);
            }
        }
    }

    fn of(&self, limiter: &Limiter) -> Spec {
        let (queue, key) = limiter;
        let queue_spec = self
            .fields
            .get(queue)
            .and_then(|t| parse_queue_spec(t))
            .unwrap_or_default();
        match key {
            None => queue_spec.queue,
            Some(key) => self
                .fields
                .get(&format!("{queue}\n{key}"))
                .and_then(|t| parse_key_spec(t))
                .unwrap_or(queue_spec.each_key),
        }
    }
}

/// The limiters a leased job of `queue` with limit key `key` counts against.
fn limiters(queue: &str, key: &str) -> Vec<Limiter> {
    let mut out = vec![(queue.to_owned(), None)];
    if !key.is_empty() {
        out.push((queue.to_owned(), Some(key.to_owned())));
    }
    out
}

/// Checks the flow-control rules on `server`'s record, with `dump` the
/// final snapshot (a job still there has not been lost).
///
/// Across a gap in the record (a server restart) the leases, holds and ends
/// the capture missed cannot be replayed, so after one the concurrency and
/// held rules would judge a state they did not see: their findings are
/// dropped (counted as `limit_findings_dropped_after_gaps`). The rate and
/// push-back rules only ever miss starts there, which cannot make them fire
/// wrongly, so they stand.
pub fn check_limits(server: &ServerRecord, dump: &Dump, r: &mut Report) {
    let mut own = Report::default();
    replay(server, dump, &mut own);
    for (figure, n) in own.figures {
        r.at_least(figure, n);
    }
    for v in own.violations {
        let stands = server.gaps == 0
            || matches!(
                v.kind,
                ViolationKind::ServerQueueRateExceeded
                    | ViolationKind::ServerKeyRateExceeded
                    | ViolationKind::ServerStartedWhilePushedBack
            );
        if stands {
            r.violation(v.kind, v.text);
        } else {
            r.add("limit_findings_dropped_after_gaps", 1);
        }
    }
}

fn replay(server: &ServerRecord, dump: &Dump, r: &mut Report) {
    let mut limits = Limits::default();
    // Job -> the limiters its current lease counts against.
    let mut leased: HashMap<String, Vec<Limiter>> = HashMap::new();
    let mut in_use: HashMap<Limiter, u64> = HashMap::new();
    // Limiter -> its starts (ms) while it had a rate, in execution order.
    let mut starts: HashMap<Limiter, Vec<u64>> = HashMap::new();
    let mut held: HashSet<String> = HashSet::new();
    // Limiter -> until when (ms) it is pushed back.
    let mut pushed_until: HashMap<Limiter, u64> = HashMap::new();
    // Job -> the limit key it was held by, for every job ever held.
    let mut ever_held: BTreeMap<String, String> = BTreeMap::new();
    let mut ended: HashSet<String> = HashSet::new();
    // Jobs granted by the script run being replayed, checked when it ends.
    let mut granted_in_run: Vec<(String, &Event)> = Vec::new();
    let mut run = None;
    for ev in &server.events {
        if run != Some(ev.run) {
            leased_while_held(&granted_in_run, &held, r);
            granted_in_run.clear();
            run = Some(ev.run);
        }
        if ev.kind.is_workflow() {
            continue;
        }
        let id = &ev.job;
        match &ev.kind {
            Kind::LimitsSet {
                field,
                spec,
                if_absent,
            } => {
                limits.apply(field, spec, *if_absent);
                // A limiter without a rate keeps no start log.
                starts.retain(|limiter, _| limits.of(limiter).has_rate());
                continue;
            }
            Kind::Held { key } => {
                r.add("limit_holds", 1);
                held.insert(id.clone());
                ever_held.insert(id.clone(), key.clone());
                continue;
            }
            Kind::Unheld => {
                held.remove(id);
                continue;
            }
            Kind::Acked | Kind::Cancelled | Kind::Deleted => {
                ended.insert(id.clone());
            }
            Kind::Released => {
                if let (Some(ms), Some(before)) = (ev.pushback_ms, &ev.before) {
                    r.add("limit_push_backs", 1);
                    let key = Some(before.limit_key.clone()).filter(|k| !k.is_empty());
                    let until = pushed_until.entry((before.queue.clone(), key)).or_default();
                    *until = (*until).max(ev.at_ms() + ms);
                }
            }
            _ => {}
        }
        if ev.after.as_ref().is_some_and(|a| a.died_at > 0) {
            ended.insert(id.clone());
        }
        let lease_after = ev.after.as_ref().filter(|a| a.lease_id != 0);
        match (leased.contains_key(id), lease_after) {
            (false, Some(after)) => {
                let counted = limiters(&after.queue, &after.limit_key);
                for limiter in &counted {
                    *in_use.entry(limiter.clone()).or_default() += 1;
                }
                if ev.kind == Kind::Granted {
                    concurrency(&counted, &in_use, &limits, id, ev, r);
                }
                leased.insert(id.clone(), counted);
            }
            (true, None) => {
                for limiter in leased.remove(id).unwrap_or_default() {
                    if let Some(n) = in_use.get_mut(&limiter) {
                        *n = n.saturating_sub(1);
                    }
                }
            }
            _ => {}
        }
        if let (Kind::Granted, Some(after)) = (&ev.kind, lease_after) {
            granted_in_run.push((id.clone(), ev));
            for limiter in limiters(&after.queue, &after.limit_key) {
                rate(&limiter, &mut starts, &limits, ev, r);
                pushed_back(&limiter, &pushed_until, id, ev, r);
            }
        }
    }
    leased_while_held(&granted_in_run, &held, r);
    let dead = dump.in_state("dead");
    for (id, key) in &ever_held {
        if !ended.contains(id) && !dump.jobs.contains_key(id) && !dead.contains(id) {
            r.violation(
                ViolationKind::ServerHeldJobLost,
                format!(
                    "job {id}: held back by limit key {key:?}, then gone without being \
                     completed, cancelled or deleted"
                ),
            );
        }
    }
}

/// At a grant: every limiter the job counts against within its concurrency.
fn concurrency(
    counted: &[Limiter],
    in_use: &HashMap<Limiter, u64>,
    limits: &Limits,
    id: &str,
    ev: &Event,
    r: &mut Report,
) {
    for limiter in counted {
        let n = in_use.get(limiter).copied().unwrap_or(0);
        let limit = limits.of(limiter).concurrency;
        let (figure, kind) = match limiter.1 {
            None => (
                "limit_max_leased_queue",
                ViolationKind::ServerQueueConcurrencyExceeded,
            ),
            Some(_) => (
                "limit_max_leased_key",
                ViolationKind::ServerKeyConcurrencyExceeded,
            ),
        };
        if limit == 0 {
            continue;
        }
        r.at_least(figure, n);
        if n > limit {
            r.violation(
                kind,
                format!(
                    "{}: job {id} leased at {} ms by {} made {n} leased jobs, over its \
                     concurrency of {limit}",
                    name(limiter),
                    ev.at_ms(),
                    ev.script
                ),
            );
        }
    }
}

/// At a start: the limiter's starts in the window ending now within its rate.
fn rate(
    limiter: &Limiter,
    starts: &mut HashMap<Limiter, Vec<u64>>,
    limits: &Limits,
    ev: &Event,
    r: &mut Report,
) {
    let spec = limits.of(limiter);
    if !spec.has_rate() {
        return;
    }
    let now = ev.started_ms();
    let log = starts.entry(limiter.clone()).or_default();
    log.push(now);
    // Starts in (now - per, now]: the log is in execution order, so scan
    // back from the newest until one falls out of the window.
    let from = now as i128 - spec.rate_per_ms as i128;
    let in_window = log
        .iter()
        .rev()
        .take_while(|t| **t as i128 > from)
        .filter(|t| **t <= now)
        .count() as u64;
    let (figure, kind) = match limiter.1 {
        None => (
            "limit_max_starts_in_window_queue",
            ViolationKind::ServerQueueRateExceeded,
        ),
        Some(_) => (
            "limit_max_starts_in_window_key",
            ViolationKind::ServerKeyRateExceeded,
        ),
    };
    r.at_least(figure, in_window);
    // How long the limiter was started under its rate, first start to last.
    r.at_least("limit_rated_starts_span_ms", now.saturating_sub(log[0]));
    if in_window > spec.rate_max {
        r.violation(
            kind,
            format!(
                "{}: {in_window} starts in the {} ms ending at {now} ms (the last by {}), \
                 over its rate of {} per {} ms",
                name(limiter),
                spec.rate_per_ms,
                ev.script,
                spec.rate_max,
                spec.rate_per_ms
            ),
        );
    }
}

/// How far `MONITOR`'s time of a release may trail the `now` its script
/// read (the push-back's start).
const PUSH_BACK_SLACK_MS: u64 = 5;

/// At a start: the limiter is not pushed back.
fn pushed_back(
    limiter: &Limiter,
    pushed_until: &HashMap<Limiter, u64>,
    id: &str,
    ev: &Event,
    r: &mut Report,
) {
    let Some(until) = pushed_until.get(limiter) else {
        return;
    };
    let start = ev.started_ms();
    if start + PUSH_BACK_SLACK_MS < *until {
        r.violation(
            ViolationKind::ServerStartedWhilePushedBack,
            format!(
                "{}: job {id} started at {start} ms by {}, while pushed back until {until} ms",
                name(limiter),
                ev.script
            ),
        );
    }
}

/// The jobs a script run granted that it left in the held set.
fn leased_while_held(granted: &[(String, &Event)], held: &HashSet<String>, r: &mut Report) {
    for (id, ev) in granted {
        if held.contains(id) {
            r.violation(
                ViolationKind::ServerLeasedWhileHeld,
                format!(
                    "job {id}: leased at {} ms by {} while it was in the held set",
                    ev.at_ms(),
                    ev.script
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_six_or_three_decimal_integers() {
        let q = parse_queue_spec("5 100 1000 2 0 0").unwrap();
        assert_eq!(q.queue.concurrency, 5);
        assert_eq!((q.queue.rate_max, q.queue.rate_per_ms), (100, 1000));
        assert_eq!(q.each_key.concurrency, 2);
        assert!(!q.each_key.has_rate());
        assert_eq!(parse_key_spec("1 3 500").unwrap().rate_per_ms, 500);
        assert!(parse_queue_spec("1 2 3").is_none());
        assert!(parse_key_spec("1 x 3").is_none());
    }

    #[test]
    fn an_override_replaces_the_each_key_default_entirely() {
        let mut limits = Limits::default();
        limits.apply("q", &Some("0 0 0 2 10 1000".into()), false);
        let key = ("q".to_owned(), Some("acme".to_owned()));
        assert_eq!(limits.of(&key).concurrency, 2);
        limits.apply("q\nacme", &Some("7 0 0".into()), false);
        assert_eq!(
            limits.of(&key),
            Spec {
                concurrency: 7,
                rate_max: 0,
                rate_per_ms: 0
            }
        );
        // A HSETNX of the blank spec changes nothing that is set.
        limits.apply("q", &Some("0 0 0 0 0 0".into()), true);
        assert_eq!(limits.of(&("q".to_owned(), None)), Spec::default());
        assert_eq!(
            limits
                .of(&("q".to_owned(), Some("other".into())))
                .concurrency,
            2
        );
        limits.apply("q\nacme", &None, false);
        assert_eq!(limits.of(&key).concurrency, 2);
    }
}
