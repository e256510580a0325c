//! The workflow keys in the server's record: which `MONITOR` lines of a
//! script change a gate (`{ns}:wf:gates`), its members (`wf:members`), the
//! members' counted outcomes (`wf:outcomes`) and the jobs that wait on a
//! gate (`wf:awaiting`), as [`Kind`]s of [`super::server::Event`]s.

use super::gate::Gate;
use super::server::Kind;

/// The namespace's workflow keys, as they appear in `MONITOR` lines.
pub(super) struct WorkflowKeys {
    gates: Vec<u8>,
    members: Vec<u8>,
    outcomes: Vec<u8>,
    awaiting: Vec<u8>,
}

/// What one command did to the workflow keys: the changes, one per job or
/// gate, or `Err` when it changed them in a way the line does not spell out.
pub(super) type Changes = Result<Vec<(String, Kind)>, ()>;

impl WorkflowKeys {
    pub(super) fn new(ns: &str) -> WorkflowKeys {
        let key = |name: &str| format!("{{{ns}}}:wf:{name}").into_bytes();
        WorkflowKeys {
            gates: key("gates"),
            members: key("members"),
            outcomes: key("outcomes"),
            awaiting: key("awaiting"),
        }
    }

    /// The changes `name args…` made (args[0] is the command), or `None`
    /// when it touches none of these keys or only reads or trims them.
    pub(super) fn changes(&self, name: &str, args: &[Vec<u8>]) -> Option<Changes> {
        let key = args.get(1)?;
        let rest = &args[2..];
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        if *key == self.gates {
            return match name {
                "hset" => Some(pairs(rest).and_then(|pairs| {
                    pairs
                        .into_iter()
                        .map(|(gate, raw)| {
                            let record = Gate::decode(raw).ok_or(())?;
                            Ok((
                                text(gate),
                                Kind::GateWritten {
                                    record: Some(record),
                                },
                            ))
                        })
                        .collect()
                })),
                "hdel" => Some(Ok(rest
                    .iter()
                    .map(|gate| (text(gate), Kind::GateWritten { record: None }))
                    .collect())),
                _ => None,
            };
        }
        if *key == self.members && name == "zadd" {
            return Some(
                zadd_members(rest)
                    .into_iter()
                    .map(|m| {
                        let (gate, id) = split_first(m).ok_or(())?;
                        Ok((id, Kind::Joined { gate }))
                    })
                    .collect(),
            );
        }
        if *key == self.outcomes && name == "hset" {
            return Some(pairs(rest).and_then(|pairs| {
                pairs
                    .into_iter()
                    .map(|(field, value)| {
                        let (gate, id) = split_first(field).ok_or(())?;
                        let outcome = text(value.get(..1).unwrap_or_default());
                        Ok((id, Kind::Counted { gate, outcome }))
                    })
                    .collect()
            }));
        }
        if *key == self.awaiting {
            let id_of = |m: &[u8]| split_first(m).map(|(_queue, id)| id).ok_or(());
            return match name {
                "zadd" => Some(
                    zadd_members(rest)
                        .into_iter()
                        .map(|m| Ok((id_of(m)?, Kind::Awaiting)))
                        .collect(),
                ),
                "zrem" => Some(
                    rest.iter()
                        .map(|m| Ok((id_of(m)?, Kind::LeftAwaiting)))
                        .collect(),
                ),
                // Removals that do not name their members: not followable.
                n if n.starts_with("zrem") || n.starts_with("zpop") || n == "del" => Some(Err(())),
                _ => None,
            };
        }
        None
    }
}

/// A field and its value, as a command's arguments carry them.
type Pair<'a> = (&'a [u8], &'a [u8]);

/// `field value` pairs; `Err` when one is incomplete.
fn pairs(args: &[Vec<u8>]) -> Result<Vec<Pair<'_>>, ()> {
    args.chunks(2)
        .map(|c| match c {
            [a, b] => Ok((a.as_slice(), b.as_slice())),
            _ => Err(()),
        })
        .collect()
}

/// The members a `ZADD key [NX|XX|GT|LT|CH|INCR]... score member...` adds.
fn zadd_members(args: &[Vec<u8>]) -> Vec<&[u8]> {
    let rest: Vec<&Vec<u8>> = args
        .iter()
        .skip_while(|a| a.first().is_some_and(u8::is_ascii_alphabetic))
        .collect();
    rest.chunks(2)
        .filter_map(|c| c.get(1).map(|m| m.as_slice()))
        .collect()
}

/// `A\nB` as (A, B): a gate and a member id, or a queue and a waiter id.
fn split_first(member: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(member).ok()?;
    let (a, b) = text.split_once('\n')?;
    (!a.is_empty() && !b.is_empty()).then(|| (a.to_owned(), b.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn members_outcomes_and_waits_name_their_jobs() {
        let keys = WorkflowKeys::new("n");
        let joined = keys.changes(
            "zadd",
            &args(&["zadd", "{n}:wf:members", "0", "G\nA", "0", "G\nB"]),
        );
        assert_eq!(
            joined,
            Some(Ok(vec![
                ("A".into(), Kind::Joined { gate: "G".into() }),
                ("B".into(), Kind::Joined { gate: "G".into() }),
            ]))
        );
        let counted = keys.changes("hset", &args(&["hset", "{n}:wf:outcomes", "G\nA", "c{}"]));
        assert_eq!(
            counted,
            Some(Ok(vec![(
                "A".into(),
                Kind::Counted {
                    gate: "G".into(),
                    outcome: "c".into()
                }
            )]))
        );
        let waits = keys.changes(
            "zadd",
            &args(&["zadd", "{n}:wf:awaiting", "NX", "0", "q\nW"]),
        );
        assert_eq!(waits, Some(Ok(vec![("W".into(), Kind::Awaiting)])));
        let left = keys.changes("zrem", &args(&["zrem", "{n}:wf:awaiting", "q\nW"]));
        assert_eq!(left, Some(Ok(vec![("W".into(), Kind::LeftAwaiting)])));
        let trimmed = keys.changes(
            "zremrangebylex",
            &args(&["zremrangebylex", "{n}:wf:awaiting", "[a", "[b"]),
        );
        assert_eq!(trimmed, Some(Err(())));
        // Reads, and keys of other namespaces, change nothing.
        assert_eq!(
            keys.changes("zscore", &args(&["zscore", "{n}:wf:awaiting", "q\nW"])),
            None
        );
        assert_eq!(
            keys.changes("zadd", &args(&["zadd", "{m}:wf:members", "0", "G\nA"])),
            None
        );
    }
}
