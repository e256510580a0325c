//! The server's durable record: the append-only file.
//!
//! With `appendfsync always`, every write is in the AOF before its reply is
//! sent, so the AOF holds every transition a client could have been told
//! about, across `kill -9` of the server; `MONITOR` loses what the server
//! executed just before it died. Scripts are written as their effects
//! (`HDEL {ns}:jobs <id>` for an ack), so the AOF settles what a call with a
//! lost reply did. Rewrites must be off (`auto-aof-rewrite-percentage 0`)
//! for the incremental files to hold the whole history.

use std::collections::HashSet;
use std::path::Path;

/// The commands in the incremental AOF files under `dir/appendonlydir`, in order.
pub fn commands(dir: &Path) -> Vec<Vec<Vec<u8>>> {
    let aof_dir = dir.join("appendonlydir");
    let mut files: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(&aof_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let n = name
                        .strip_suffix(".incr.aof")?
                        .rsplit('.')
                        .next()?
                        .parse()
                        .ok()?;
                    Some((n, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = Vec::new();
    for (_, path) in files {
        if let Ok(bytes) = std::fs::read(&path) {
            parse(&bytes, &mut out);
        }
    }
    out
}

fn parse(mut s: &[u8], out: &mut Vec<Vec<Vec<u8>>>) {
    fn line(s: &mut &[u8]) -> Option<Vec<u8>> {
        let end = s.windows(2).position(|w| w == b"\r\n")?;
        let l = s[..end].to_vec();
        *s = &s[end + 2..];
        Some(l)
    }
    while !s.is_empty() {
        let Some(head) = line(&mut s) else { return };
        let Some(n) = head
            .strip_prefix(b"*")
            .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
        else {
            continue;
        };
        let mut args = Vec::with_capacity(n);
        for _ in 0..n {
            let Some(len) = line(&mut s).and_then(|l| {
                std::str::from_utf8(l.strip_prefix(b"$")?)
                    .ok()?
                    .parse::<usize>()
                    .ok()
            }) else {
                return;
            };
            if s.len() < len + 2 {
                return; // a torn tail
            }
            args.push(s[..len].to_vec());
            s = &s[len + 2..];
        }
        out.push(args);
    }
}

/// Job ids whose record was deleted (`HDEL {ns}:jobs id`): acknowledged
/// jobs, in a run that deletes no dead letters.
pub fn deleted_jobs(dir: &Path, ns: &str) -> HashSet<String> {
    let jobs_key = format!("{{{ns}}}:jobs").into_bytes();
    commands(dir)
        .into_iter()
        .filter(|c| {
            c.first().is_some_and(|n| n.eq_ignore_ascii_case(b"hdel"))
                && c.get(1) == Some(&jobs_key)
        })
        .flat_map(|c| {
            c.into_iter()
                .skip(2)
                .map(|id| String::from_utf8_lossy(&id).into_owned())
        })
        .collect()
}

/// When each lease was granted and resolved, in the order of the
/// append-only file: the durable record that settles a nack or release
/// whose reply the client never got, or got wrong. A call resent by the
/// client across a server restart can run twice: the first run applied and
/// its reply was lost, the second finds the job gone and answers
/// `LeaseLost`; the client then never learns its lease was resolved.
#[derive(Debug, Default)]
pub struct DurableLeases {
    /// (job, lease) -> position of the first record written under that lease.
    granted: std::collections::HashMap<(String, u64), usize>,
    /// (job, lease) -> position of the first record that resolved it, and how.
    resolved: std::collections::HashMap<(String, u64), (usize, DurableResolution)>,
}

/// How the AOF shows a lease resolved: a nack writes `resolved_lease` =
/// the lease, a release minus the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurableResolution {
    Nacked,
    Released,
}

impl DurableLeases {
    /// Builds the record from job records written in AOF order, as
    /// (job id, record bytes); one `HSET` may write several.
    pub fn from_writes<'a>(writes: impl IntoIterator<Item = (String, &'a [u8])>) -> Self {
        let mut out = DurableLeases::default();
        for (at, (id, raw)) in writes.into_iter().enumerate() {
            let Some(meta) = super::meta::Meta::decode(raw) else {
                continue;
            };
            if meta.lease_id > 0 {
                out.granted.entry((id.clone(), meta.lease_id)).or_insert(at);
            }
            let how = if meta.resolved_lease < 0 {
                DurableResolution::Released
            } else {
                DurableResolution::Nacked
            };
            let resolved = meta.resolved_lease.unsigned_abs();
            if resolved > 0 {
                out.resolved.entry((id, resolved)).or_insert((at, how));
            }
        }
        out
    }

    /// How job `id`'s lease `earlier` was durably resolved before lease
    /// `later` was granted, if it was.
    pub fn resolved_before(&self, id: &str, earlier: u64, later: u64) -> Option<DurableResolution> {
        let key = |lease| (id.to_owned(), lease);
        let (at, how) = self.resolved.get(&key(earlier))?;
        match self.granted.get(&key(later)) {
            Some(granted) if granted < at => None,
            _ => Some(*how),
        }
    }
}

/// The job records written to `{ns}:jobs` in the AOF under `dir`, as a
/// [`DurableLeases`].
pub fn leases(dir: &Path, ns: &str) -> DurableLeases {
    let jobs_key = format!("{{{ns}}}:jobs").into_bytes();
    let commands = commands(dir);
    let writes = commands
        .iter()
        .filter(|c| {
            // A lone enqueue's HSETNX is in the AOF only when it applied.
            c.first().is_some_and(|n| {
                n.eq_ignore_ascii_case(b"hset") || n.eq_ignore_ascii_case(b"hsetnx")
            }) && c.get(1) == Some(&jobs_key)
        })
        .flat_map(|c| {
            c[2..]
                .chunks_exact(2)
                .map(|pair| (String::from_utf8_lossy(&pair[0]).into_owned(), &pair[1][..]))
        });
    DurableLeases::from_writes(writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 19-field meta record (positions as in `lua/lib/job_record.lua`'s `M`) with
    /// `lease_id` at 0 and `resolved_lease` at 18.
    fn record(lease_id: u64, resolved_lease: i64) -> Vec<u8> {
        let fields: Vec<rmpv::Value> = (0..19)
            .map(|i| match i {
                0 => rmpv::Value::from(lease_id),
                4 => rmpv::Value::from("q"),
                18 => rmpv::Value::from(resolved_lease),
                _ => rmpv::Value::from(0),
            })
            .collect();
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, &rmpv::Value::Array(fields)).unwrap();
        out
    }

    fn leases_of(writes: &[(&str, Vec<u8>)]) -> DurableLeases {
        DurableLeases::from_writes(writes.iter().map(|(id, r)| ((*id).to_owned(), &r[..])))
    }

    #[test]
    fn a_nack_written_before_the_next_grant_settles_the_earlier_lease() {
        // Claimed under 7, nacked (resolved 7), claimed again under 9.
        let d = leases_of(&[
            ("A", record(7, 0)),
            ("A", record(0, 7)),
            ("A", record(9, 7)),
        ]);
        assert_eq!(
            d.resolved_before("A", 7, 9),
            Some(DurableResolution::Nacked)
        );
        // Another job's record settles nothing for A.
        assert_eq!(d.resolved_before("B", 7, 9), None);
    }

    #[test]
    fn a_resolution_written_after_the_next_grant_does_not_settle_it() {
        // Lease 9 was granted while 7 was unresolved; 7's release came later.
        let d = leases_of(&[
            ("A", record(7, 0)),
            ("A", record(9, 0)),
            ("A", record(0, -7)),
        ]);
        assert_eq!(d.resolved_before("A", 7, 9), None);
    }

    #[test]
    fn a_lease_never_resolved_is_not_settled() {
        let d = leases_of(&[("A", record(7, 0)), ("A", record(9, 0))]);
        assert_eq!(d.resolved_before("A", 7, 9), None);
    }

    #[test]
    fn a_release_is_told_from_a_nack() {
        let d = leases_of(&[
            ("A", record(7, 0)),
            ("A", record(0, -7)),
            ("A", record(9, -7)),
        ]);
        assert_eq!(
            d.resolved_before("A", 7, 9),
            Some(DurableResolution::Released)
        );
    }
}
