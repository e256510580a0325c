//! Worker processes (`redq-chaos-worker`) for the scenarios that kill
//! (`kill -9`), stop (`SIGSTOP`) or skew the clock of (libfaketime) workers.
//!
//! Each process appends its history to a file and its stderr to another,
//! both in the fleet's temporary directory. A process that exits before the
//! scenario kills it, a history file that is missing, or a line in it that
//! cannot be read is a problem of the run: the history would be partial and
//! the checker's verdict vacuous.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::Rng;

use super::harness::QUEUE;
use super::workload::Behaviour;
use crate::history::{read_history, Call, Entry, Reply};

/// How long a kill waits for a worker holding a live lease before it
/// takes any worker that has come up.
const HOLDER_PATIENCE: Duration = Duration::from_secs(1);

/// Whether a history shows a lease still live: a job a claim handed out
/// (or an extension kept) whose expiry, on the Redis clock, is still ahead
/// of this machine's (the scenarios' servers run here: a skewed worker's
/// clock does not enter), and that no ack, nack or release of that lease
/// has been sent for.
fn holds_a_live_lease(history: &[Entry]) -> bool {
    let mut held: HashMap<(&str, u64), u64> = HashMap::new();
    for entry in history {
        match (&entry.call, &entry.reply) {
            (_, Some(Reply::Claimed { jobs })) => {
                for job in jobs {
                    held.insert((job.id.as_str(), job.lease), job.expiry_ms);
                }
            }
            (Call::Extend { id, lease, .. }, Some(Reply::Extended { expiry_ms })) => {
                if let Some(expiry) = held.get_mut(&(id.as_str(), *lease)) {
                    *expiry = *expiry_ms;
                }
            }
            (
                Call::Ack { id, lease }
                | Call::Nack { id, lease, .. }
                | Call::Release { id, lease },
                _,
            ) => {
                held.remove(&(id.as_str(), *lease));
            }
            _ => {}
        }
    }
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    held.values().any(|expiry| *expiry > now_ms)
}

/// Debian's libfaketime (package `faketime`).
pub const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

struct WorkerProcess {
    process: u32,
    label: String,
    child: Child,
}

/// The worker processes of one scenario, running and ended.
pub(crate) struct Fleet {
    bin: PathBuf,
    url: String,
    ns: String,
    dir: tempfile::TempDir,
    running: Vec<WorkerProcess>,
    /// (process, label) of every process started, in order.
    started: Vec<(u32, String)>,
    problems: Vec<String>,
}

/// What the fleet left: every process's history, and what went wrong.
pub(crate) struct Ended {
    pub entries: Vec<Entry>,
    /// Processes started (their recorder ids), in order.
    pub processes: Vec<u32>,
    /// Histories missing or unreadable, processes that exited by themselves.
    pub problems: Vec<String>,
    /// Each process's stderr: (label, text).
    pub stderr: Vec<(String, String)>,
    /// Final lines cut short by a `kill -9` mid-write (not a problem).
    pub torn: usize,
}

impl Fleet {
    pub(crate) fn new(bin: &Path, url: &str, ns: &str) -> Fleet {
        Fleet {
            bin: bin.to_owned(),
            url: url.to_owned(),
            ns: ns.to_owned(),
            dir: tempfile::tempdir().expect("temp dir"),
            running: Vec::new(),
            started: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn history(&self, process: u32) -> PathBuf {
        self.dir.path().join(format!("history-{process}.jsonl"))
    }

    fn stderr(&self, process: u32) -> PathBuf {
        self.dir.path().join(format!("worker-{process}.stderr"))
    }

    /// Starts worker `process` (its recorder id); `skew` is a libfaketime
    /// offset such as `+30s`.
    pub(crate) fn spawn(
        &mut self,
        behaviour: &Behaviour,
        process: u32,
        seed: u64,
        skew: Option<&str>,
    ) {
        let stderr = File::create(self.stderr(process)).expect("worker stderr file");
        let mut command = Command::new(&self.bin);
        command
            .args([
                self.url.as_str(),
                &self.ns,
                QUEUE,
                &behaviour.to_arg(),
                &self.history(process).display().to_string(),
                &process.to_string(),
                &seed.to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let mut label = format!("worker process {process}");
        if let Some(offset) = skew {
            command
                .env("LD_PRELOAD", FAKETIME_LIB)
                .env("FAKETIME", offset)
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
                .env("FAKETIME_NO_CACHE", "1");
            label.push_str(&format!(" (clock {offset})"));
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {} failed: {e}", self.bin.display()));
        self.started.push((process, label.clone()));
        self.running.push(WorkerProcess {
            process,
            label,
            child,
        });
    }

    /// Processes still running, by recorder id.
    pub(crate) fn running(&self) -> Vec<u32> {
        self.running.iter().map(|w| w.process).collect()
    }

    fn take(&mut self, process: u32) -> WorkerProcess {
        let i = self
            .running
            .iter()
            .position(|w| w.process == process)
            .unwrap_or_else(|| panic!("worker process {process} is not running"));
        self.running.swap_remove(i)
    }

    /// Starts workers 1..=`n`, each seeded `seed` + its recorder id.
    pub(crate) fn spawn_team(&mut self, behaviour: &Behaviour, n: u32, seed: u64) {
        for p in 1..=n {
            self.spawn(behaviour, p, seed + p as u64, None);
        }
    }

    /// `kill -9` of a running worker picked by `rng` among those that have
    /// come up (had a claim answered: killing one still starting tests
    /// nothing, and on a loaded machine leaves no history at all), waiting
    /// up to 10 s for one to, and a new one in its place (the next recorder
    /// id, seeded `seed` + that id), so the fleet keeps its size through a
    /// run of kills. Among those, one holding a live lease is picked when
    /// one does within `HOLDER_PATIENCE`: a kill is there to leave leases
    /// to lapse, and on a queue whose limits leave workers idle most of
    /// the time, three kills of idle workers once left a run without a
    /// single reclaim to show.
    pub(crate) async fn kill_and_replace(
        &mut self,
        rng: &mut impl Rng,
        behaviour: &Behaviour,
        seed: u64,
    ) {
        let until = Instant::now() + Duration::from_secs(10);
        let up = loop {
            let up: Vec<u32> = self
                .running()
                .into_iter()
                .filter(|p| self.has_claimed(*p))
                .collect();
            if !up.is_empty() || Instant::now() >= until {
                break up;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let candidates = if up.is_empty() {
            self.running()
        } else {
            self.holding_within(&up, HOLDER_PATIENCE).await
        };
        self.kill(candidates[rng.random_range(0..candidates.len())]);
        let next = self.started.iter().map(|(p, _)| *p).max().unwrap_or(0) + 1;
        self.spawn(behaviour, next, seed + next as u64, None);
    }

    /// Those of `processes` that hold a live lease, as soon as one does,
    /// or all of them once `patience` has passed without one.
    async fn holding_within(&self, processes: &[u32], patience: Duration) -> Vec<u32> {
        let until = Instant::now() + patience;
        loop {
            let holding: Vec<u32> = processes
                .iter()
                .copied()
                .filter(|p| holds_a_live_lease(&self.history_so_far(*p)))
                .collect();
            if !holding.is_empty() {
                return holding;
            }
            if Instant::now() >= until {
                return processes.to_vec();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Whether worker `process` has had a claim answered.
    fn has_claimed(&self, process: u32) -> bool {
        self.history_so_far(process)
            .iter()
            .any(|e| matches!(e.reply, Some(Reply::Claimed { .. })))
    }

    /// `kill -9` of worker `process`; a problem if it had already exited.
    pub(crate) fn kill(&mut self, process: u32) {
        let w = self.take(process);
        self.kill_child(w);
    }

    fn kill_child(&mut self, mut w: WorkerProcess) {
        if let Ok(Some(status)) = w.child.try_wait() {
            self.problems.push(format!(
                "{} exited by itself ({status}) before the scenario killed it",
                w.label
            ));
            return;
        }
        let _ = w.child.kill();
        let _ = w.child.wait();
    }

    /// Sends `sig` (such as `-STOP`) to worker `process`.
    pub(crate) fn signal(&self, process: u32, sig: &str) {
        let w = self
            .running
            .iter()
            .find(|w| w.process == process)
            .unwrap_or_else(|| panic!("worker process {process} is not running"));
        let pid = w.child.id().to_string();
        let status = Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill {sig} {pid} failed");
    }

    /// The history worker `process` has written so far, read leniently
    /// (for polling while it runs).
    pub(crate) fn history_so_far(&self, process: u32) -> Vec<Entry> {
        read_history(&[self.history(process)])
    }

    /// Waits until every running process has had a claim answered, or
    /// `deadline` passes (then [`Ended`] reports the ones that did not): a
    /// process started just before the end must show it came up too.
    pub(crate) async fn await_first_claims(&self, deadline: Duration) {
        let until = Instant::now() + deadline;
        while Instant::now() < until && !self.running().into_iter().all(|p| self.has_claimed(p)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills every process still running and reads every history strictly.
    pub(crate) fn end(mut self) -> Ended {
        for w in std::mem::take(&mut self.running) {
            self.kill_child(w);
        }
        let mut ended = Ended {
            entries: Vec::new(),
            processes: self.started.iter().map(|(p, _)| *p).collect(),
            problems: std::mem::take(&mut self.problems),
            stderr: Vec::new(),
            torn: 0,
        };
        for (process, label) in &self.started {
            let mut text = String::new();
            if let Ok(mut f) = File::open(self.stderr(*process)) {
                let _ = f.read_to_string(&mut text);
            }
            ended.stderr.push((label.clone(), text));
            // What could be read still goes to the checker; the problem
            // fails the run either way.
            let loaded = load(&self.history(*process));
            ended.entries.extend(loaded.entries);
            ended.torn += loaded.torn;
            if let Some(why) = loaded.problem {
                ended.problems.push(format!("{label}: {why}"));
            }
        }
        ended
    }
}

/// One process's history as read by [`load`].
struct Loaded {
    entries: Vec<Entry>,
    /// 1 when the final line was cut short by a kill mid-write.
    torn: usize,
    /// Why the history is incomplete, if it is.
    problem: Option<String>,
}

/// Reads one process's history; every line must be read. Only a final line
/// without its newline may be cut short: the process was killed mid-write
/// (counted as torn), which loses at most the call being recorded.
fn load(path: &Path) -> Loaded {
    let failed = |problem: String| Loaded {
        entries: Vec::new(),
        torn: 0,
        problem: Some(problem),
    };
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            return failed(format!(
                "its history file {} could not be read: {e}",
                path.display()
            ))
        }
    };
    let Ok(text) = String::from_utf8(text) else {
        return failed(format!("its history file {} is not UTF-8", path.display()));
    };
    let complete = text.matches('\n').count();
    let torn_tail = !text.is_empty() && !text.ends_with('\n');
    let lines = complete + usize::from(torn_tail);
    let entries = read_history(&[path]);
    // The reader keeps one entry per call line and fills its reply from the
    // completion line; anything it skipped shows as a line not accounted for.
    let read = entries.len() + entries.iter().filter(|e| e.reply.is_some()).count();
    if read == lines || (torn_tail && read == complete) {
        let torn = usize::from(read < lines);
        return Loaded {
            entries,
            torn,
            problem: None,
        };
    }
    let first_bad = text
        .lines()
        .find(|l| serde_json::from_str::<serde_json::Value>(l).is_err())
        .map(|l| format!("; the first that is not JSON: {}", shorten(l)))
        .unwrap_or_else(|| {
            "; every line is JSON, so one has the wrong shape or completes a call never logged"
                .into()
        });
    Loaded {
        entries,
        torn: 0,
        problem: Some(format!(
            "{} of the {lines} lines of {} could not be read{first_bad}",
            lines.saturating_sub(read),
            path.display()
        )),
    }
}

fn shorten(line: &str) -> String {
    if line.chars().count() <= 120 {
        return line.to_owned();
    }
    let cut: String = line.chars().take(120).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    const INVOKE: &str = r#"{"line":"invoke","process":1,"seq":0,"at_us":5,"call":"claim","queue":"q","limit":1,"lease_ms":10}"#;
    const COMPLETE: &str =
        r#"{"line":"complete","process":1,"seq":0,"at_us":9,"reply":"claimed","jobs":[]}"#;

    fn load_text(text: &str) -> Loaded {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        std::fs::write(&path, text).unwrap();
        load(&path)
    }

    fn claimed(id: &str, lease: u64, expiry_ms: u64) -> Entry {
        let job = crate::history::record::Claimed {
            id: id.into(),
            tag: id.into(),
            lease,
            attempts: 0,
            expiry_ms,
            ordering_key: String::new(),
        };
        let call = Call::Claim {
            queue: "q".into(),
            limit: 1,
            lease_ms: 1,
        };
        Entry::made(0, call, Reply::Claimed { jobs: vec![job] })
    }

    #[test]
    fn a_worker_holds_a_lease_until_it_settles_it_or_the_lease_expires() {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let (later, earlier) = (now_ms + 60_000, now_ms - 1);
        assert!(holds_a_live_lease(&[claimed("a", 7, later)]));
        assert!(!holds_a_live_lease(&[claimed("a", 7, earlier)]));
        assert!(!holds_a_live_lease(&[]));
        let (id, lease) = ("a".to_owned(), 7);
        for settle in [
            Call::Ack {
                id: id.clone(),
                lease,
            },
            Call::Nack {
                id: id.clone(),
                lease,
                delay_ms: 0,
                dead: false,
            },
            Call::Release {
                id: id.clone(),
                lease,
            },
        ] {
            let settled = [
                claimed("a", 7, later),
                Entry::made(1, settle, Reply::Released),
            ];
            assert!(!holds_a_live_lease(&settled));
        }
        // A settle of another lease of the job leaves this one held.
        let other = Call::Ack {
            id: id.clone(),
            lease: 6,
        };
        assert!(holds_a_live_lease(&[
            claimed("a", 7, later),
            Entry::made(1, other, Reply::Acked { completed: false }),
        ]));
        // An extension keeps an expired-looking lease live.
        let extend = Call::Extend {
            id,
            lease,
            lease_ms: 1,
        };
        assert!(holds_a_live_lease(&[
            claimed("a", 7, earlier),
            Entry::made(1, extend, Reply::Extended { expiry_ms: later }),
        ]));
    }

    #[test]
    fn every_line_must_be_read_but_a_last_line_cut_by_a_kill_may_be_short() {
        let whole = load_text(&format!("{INVOKE}\n{COMPLETE}\n"));
        assert_eq!((whole.entries.len(), whole.torn), (1, 0));
        assert!(whole.problem.is_none() && whole.entries[0].reply.is_some());
        let torn = load_text(&format!("{INVOKE}\n{}", &COMPLETE[..20]));
        assert_eq!((torn.torn, torn.problem), (1, None));
        // A bad line is a problem, and what could be read is still kept.
        let bad = load_text(&format!("{INVOKE}\nnot json\n{COMPLETE}\n"));
        let why = bad.problem.unwrap();
        assert!(
            why.contains("1 of the 3 lines") && why.contains("not json"),
            "{why}"
        );
        assert_eq!(bad.entries.len(), 1);
        let cut = load_text(&format!("{INVOKE}\n{}\n", &COMPLETE[..20]));
        assert!(cut.problem.unwrap().contains("1 of the 2 lines"));
        assert!(load(Path::new("/nonexistent/h.jsonl"))
            .problem
            .unwrap()
            .contains("could not be read"));
    }
}
