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
