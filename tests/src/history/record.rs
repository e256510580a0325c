//! The client side of a history: every call a client makes and the reply it
//! got, in the Jepsen style. A call is logged when it is invoked and again
//! when it completes; a call that never completed (its process was killed)
//! or failed without a definite answer (timeout, dropped connection) is
//! "maybe applied", and the checker treats it as either.
//!
//! Jobs are told apart by a `tag` the client puts in each payload
//! (`{"tag": ...}`), so a job whose enqueue got no reply (and so no id) is
//! still recognised when it is claimed.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redq::{Acked, Enqueued, Job, Lease, Nacked, NewJob, QueueError, Reclaimed, RedisQueue};
use serde::{Deserialize, Serialize};

/// A call as the client issued it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Call {
    /// `add_batch`: the tags of the jobs, in order.
    Enqueue {
        queue: String,
        tags: Vec<String>,
        /// Ordering key of each job ("" for none).
        keys: Vec<String>,
    },
    Claim {
        queue: String,
        limit: usize,
        lease_ms: u64,
    },
    Ack {
        id: String,
        lease: u64,
    },
    Nack {
        id: String,
        lease: u64,
        delay_ms: u64,
        dead: bool,
    },
    Extend {
        id: String,
        lease: u64,
        lease_ms: u64,
    },
    Release {
        id: String,
        lease: u64,
    },
    Reclaim {
        queue: String,
    },
    /// An operator's cancel of one job (`cancel.lua`).
    Cancel {
        id: String,
    },
}

/// One job handed out by a claim.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Claimed {
    pub id: String,
    pub tag: String,
    pub lease: u64,
    pub attempts: u32,
    /// Lease expiry on the Redis clock (ms).
    pub expiry_ms: u64,
    pub ordering_key: String,
}

/// What came back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// Per job, in order: its id and whether it was created.
    Enqueued {
        ids: Vec<(String, bool)>,
    },
    Claimed {
        jobs: Vec<Claimed>,
    },
    Acked {
        completed: bool,
    },
    Nacked {
        attempts: u32,
        dead: bool,
        /// Retry due time on the Redis clock (0 when dead).
        due_ms: u64,
    },
    Extended {
        expiry_ms: u64,
    },
    Released,
    Reclaimed {
        requeued: u64,
        dead: u64,
    },
    /// A cancel's answer: the job was cancelled (now, or earlier), or it
    /// had completed before (nothing changed), or no such job.
    Cancel {
        cancelled: bool,
        completed_before: bool,
    },
    /// Refused by the lease fence: nothing changed.
    LeaseLost,
    /// Refused because an operator cancelled the job: nothing changed.
    JobCancelled,
    /// A definite failure: nothing was written (out of memory, bad input).
    Failed {
        error: String,
    },
    /// No definite answer: the call may or may not have been applied.
    Unknown {
        error: String,
    },
}

impl Reply {
    /// Whether the call surely took effect.
    pub fn applied(&self) -> bool {
        !matches!(
            self,
            Reply::LeaseLost | Reply::JobCancelled | Reply::Failed { .. } | Reply::Unknown { .. }
        )
    }
}

/// A call, its reply (`None`: never completed) and when, in microseconds
/// since the recorder started (comparable only within one process).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub process: u32,
    pub seq: u64,
    pub invoked_us: u64,
    pub completed_us: Option<u64>,
    pub call: Call,
    pub reply: Option<Reply>,
}

impl Entry {
    /// Call `seq` of process 1, answered with `reply`: a line of a
    /// hand-made history (the checker's broken variants, unit tests).
    pub fn made(seq: u64, call: Call, reply: Reply) -> Entry {
        Entry {
            process: 1,
            seq,
            invoked_us: seq,
            completed_us: Some(seq),
            call,
            reply: Some(reply),
        }
    }

    /// The reply, with "never completed" read as [`Reply::Unknown`].
    pub fn outcome(&self) -> Reply {
        self.reply.clone().unwrap_or(Reply::Unknown {
            error: "no reply (process killed)".into(),
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
enum Line {
    Invoke {
        process: u32,
        seq: u64,
        at_us: u64,
        #[serde(flatten)]
        call: Call,
    },
    Complete {
        process: u32,
        seq: u64,
        at_us: u64,
        #[serde(flatten)]
        reply: Reply,
    },
}

struct Inner {
    entries: Vec<Entry>,
    next: u64,
    file: Option<File>,
}

/// Collects the calls of one process, in memory and optionally as JSON
/// lines in a file (each line written before the call returns, so a
/// `kill -9` loses at most the reply being recorded).
#[derive(Clone)]
pub struct Recorder {
    process: u32,
    epoch: Instant,
    inner: Arc<Mutex<Inner>>,
}

impl Recorder {
    /// An in-memory recorder for the calls of `process`.
    pub fn new(process: u32) -> Recorder {
        Recorder {
            process,
            epoch: Instant::now(),
            inner: Arc::new(Mutex::new(Inner {
                entries: Vec::new(),
                next: 0,
                file: None,
            })),
        }
    }

    /// A recorder that also appends to the file at `path`.
    pub fn to_file(process: u32, path: &Path) -> Recorder {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
        let recorder = Recorder::new(process);
        recorder.inner.lock().unwrap().file = Some(file);
        recorder
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    fn write(inner: &mut Inner, line: &Line) {
        if let Some(file) = &mut inner.file {
            let mut text = serde_json::to_string(line).expect("history lines serialize");
            text.push('\n');
            file.write_all(text.as_bytes())
                .expect("writing the history");
        }
    }

    /// Logs a call about to be sent; returns its sequence number.
    pub fn invoke(&self, call: Call) -> u64 {
        let at_us = self.now_us();
        let mut inner = self.inner.lock().unwrap();
        let seq = inner.next;
        inner.next += 1;
        Self::write(
            &mut inner,
            &Line::Invoke {
                process: self.process,
                seq,
                at_us,
                call: call.clone(),
            },
        );
        inner.entries.push(Entry {
            process: self.process,
            seq,
            invoked_us: at_us,
            completed_us: None,
            call,
            reply: None,
        });
        seq
    }

    /// Logs the reply of call `seq`.
    pub fn complete(&self, seq: u64, reply: Reply) {
        let at_us = self.now_us();
        let mut inner = self.inner.lock().unwrap();
        Self::write(
            &mut inner,
            &Line::Complete {
                process: self.process,
                seq,
                at_us,
                reply: reply.clone(),
            },
        );
        // Entries are pushed in seq order, so seq is the index.
        let entry = &mut inner.entries[seq as usize];
        entry.completed_us = Some(at_us);
        entry.reply = Some(reply);
    }

    /// Everything recorded so far.
    pub fn entries(&self) -> Vec<Entry> {
        self.inner.lock().unwrap().entries.clone()
    }
}

/// Reads the history files written by [`Recorder::to_file`] (a torn last
/// line, from a process killed mid-write, is skipped).
pub fn read_history(paths: &[impl AsRef<Path>]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for path in paths {
        let Ok(file) = File::open(path.as_ref()) else {
            continue;
        };
        for line in BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<Line>(&line) {
                Ok(Line::Invoke {
                    process,
                    seq,
                    at_us,
                    call,
                }) => {
                    index.insert((process, seq), entries.len());
                    entries.push(Entry {
                        process,
                        seq,
                        invoked_us: at_us,
                        completed_us: None,
                        call,
                        reply: None,
                    });
                }
                Ok(Line::Complete {
                    process,
                    seq,
                    at_us,
                    reply,
                }) => {
                    if let Some(&i) = index.get(&(process, seq)) {
                        entries[i].completed_us = Some(at_us);
                        entries[i].reply = Some(reply);
                    }
                }
                Err(_) => {}
            }
        }
    }
    entries
}

/// How a driver error is read: refused by the fence, surely not applied, or
/// unknown.
pub fn classify(err: &QueueError) -> Reply {
    match err {
        QueueError::LeaseLost { .. } => Reply::LeaseLost,
        QueueError::JobCancelled { .. } => Reply::JobCancelled,
        QueueError::OutOfMemory
        | QueueError::Invalid { .. }
        | QueueError::PayloadTooLarge { .. }
        | QueueError::Config(_)
        | QueueError::ConnectFailed { .. }
        | QueueError::JobNotFound { .. } => Reply::Failed {
            error: err.to_string(),
        },
        _ => Reply::Unknown {
            error: err.to_string(),
        },
    }
}

fn time_ms(at: std::time::SystemTime) -> u64 {
    at.duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// The tag a job carries in its payload (`{"tag": ...}`).
pub fn tag_of(payload: &serde_json::Value) -> String {
    payload["tag"].as_str().unwrap_or_default().to_owned()
}

/// A job of a recorded workload: its tag (unique per job), ordering key
/// ("" for none), attempt ceiling (0 = unlimited) and payload padding.
#[derive(Debug, Clone, Default)]
pub struct JobSpec {
    pub tag: String,
    pub ordering_key: String,
    pub max_attempts: u32,
    pub pad: usize,
    /// The reclaim backoff's first delay and ceiling (ms); (0, 0) = none.
    pub reclaim_backoff_ms: (u64, u64),
    /// Limit key within the queue (flow control), "" for none.
    pub limit_key: String,
}

impl JobSpec {
    /// A job with tag `tag` and nothing else set.
    pub fn new(tag: impl Into<String>) -> JobSpec {
        JobSpec {
            tag: tag.into(),
            ..JobSpec::default()
        }
    }

    /// The job to enqueue: payload `{"tag": ..., "pad": "xxx…"}`.
    pub fn to_job(&self) -> NewJob {
        let mut job =
            NewJob::new(serde_json::json!({ "tag": self.tag, "pad": "x".repeat(self.pad) }))
                .max_attempts(self.max_attempts)
                .reclaim_backoff(redq::Backoff::exponential(
                    std::time::Duration::from_millis(self.reclaim_backoff_ms.0),
                    std::time::Duration::from_millis(self.reclaim_backoff_ms.1),
                ));
        if !self.ordering_key.is_empty() {
            job = job.ordering_key(self.ordering_key.clone());
        }
        if !self.limit_key.is_empty() {
            job = job.limit_key(self.limit_key.clone());
        }
        job
    }
}

/// A [`RedisQueue`] that records every call it makes in a [`Recorder`].
#[derive(Clone)]
pub struct RecordingQueue {
    pub queue: RedisQueue,
    pub recorder: Recorder,
}

impl RecordingQueue {
    pub fn new(queue: RedisQueue, recorder: Recorder) -> RecordingQueue {
        RecordingQueue { queue, recorder }
    }

    /// Enqueue one job per spec, in one batch.
    pub async fn add_batch(
        &self,
        queue: &str,
        specs: &[JobSpec],
    ) -> Result<Vec<Enqueued>, QueueError> {
        let seq = self.recorder.invoke(Call::Enqueue {
            queue: queue.to_owned(),
            tags: specs.iter().map(|s| s.tag.clone()).collect(),
            keys: specs.iter().map(|s| s.ordering_key.clone()).collect(),
        });
        let result = self
            .queue
            .add_batch(queue, specs.iter().map(JobSpec::to_job).collect())
            .await;
        self.recorder.complete(
            seq,
            match &result {
                Ok(outcomes) => Reply::Enqueued {
                    ids: outcomes
                        .iter()
                        .map(|o| (o.id().to_owned(), matches!(o, Enqueued::Created(_))))
                        .collect(),
                },
                Err(e) => classify(e),
            },
        );
        result
    }

    pub async fn claim(
        &self,
        queue: &str,
        limit: usize,
        lease: Duration,
    ) -> Result<Vec<Job>, QueueError> {
        let lease_ms = lease.as_millis() as u64;
        let seq = self.recorder.invoke(Call::Claim {
            queue: queue.to_owned(),
            limit,
            lease_ms,
        });
        let result = self.queue.claim(queue, limit, lease).await;
        self.recorder.complete(
            seq,
            match &result {
                Ok(jobs) => Reply::Claimed {
                    jobs: jobs
                        .iter()
                        .map(|j| Claimed {
                            id: j.id.clone(),
                            tag: tag_of(&j.payload),
                            lease: j.lease_id,
                            attempts: j.attempts,
                            expiry_ms: time_ms(j.lease_expires_at),
                            ordering_key: j.ordering_key.clone().unwrap_or_default(),
                        })
                        .collect(),
                },
                Err(e) => classify(e),
            },
        );
        result
    }

    pub async fn ack(&self, lease: &Lease) -> Result<Acked, QueueError> {
        let seq = self.recorder.invoke(Call::Ack {
            id: lease.id.clone(),
            lease: lease.lease_id,
        });
        let result = self.queue.ack(lease).await;
        self.recorder.complete(
            seq,
            match &result {
                Ok(acked) => Reply::Acked {
                    completed: *acked == Acked::Completed,
                },
                Err(e) => classify(e),
            },
        );
        result
    }

    pub async fn nack(
        &self,
        lease: &Lease,
        delay: Duration,
        dead: bool,
    ) -> Result<Nacked, QueueError> {
        let seq = self.recorder.invoke(Call::Nack {
            id: lease.id.clone(),
            lease: lease.lease_id,
            delay_ms: delay.as_millis() as u64,
            dead,
        });
        let result = if dead {
            self.queue.dead_letter(lease, "chaos: dead").await
        } else {
            self.queue.nack(lease, delay, "chaos: retry").await
        };
        self.recorder.complete(
            seq,
            match &result {
                Ok(Nacked::Retrying { attempts, due_at }) => Reply::Nacked {
                    attempts: *attempts,
                    dead: false,
                    due_ms: time_ms(*due_at),
                },
                Ok(Nacked::DeadLettered { attempts }) => Reply::Nacked {
                    attempts: *attempts,
                    dead: true,
                    due_ms: 0,
                },
                Err(e) => classify(e),
            },
        );
        result
    }

    pub async fn extend(
        &self,
        lease: &Lease,
        length: Duration,
    ) -> Result<std::time::SystemTime, QueueError> {
        let seq = self.recorder.invoke(Call::Extend {
            id: lease.id.clone(),
            lease: lease.lease_id,
            lease_ms: length.as_millis() as u64,
        });
        let result = self.queue.extend(lease, length).await;
        self.recorder.complete(
            seq,
            match &result {
                Ok(expiry) => Reply::Extended {
                    expiry_ms: time_ms(*expiry),
                },
                Err(e) => classify(e),
            },
        );
        result
    }

    pub async fn release(&self, lease: &Lease) -> Result<(), QueueError> {
        let seq = self.recorder.invoke(Call::Release {
            id: lease.id.clone(),
            lease: lease.lease_id,
        });
        let result = self.queue.release(lease).await;
        self.recorder.complete(
            seq,
            match &result {
                Ok(()) => Reply::Released,
                Err(e) => classify(e),
            },
        );
        result
    }

    pub async fn reclaim(&self, queue: &str) -> Result<Reclaimed, QueueError> {
        let seq = self.recorder.invoke(Call::Reclaim {
            queue: queue.to_owned(),
        });
        let result = self.queue.reclaim(queue, 1000).await;
        self.recorder.complete(
            seq,
            match &result {
                Ok(r) => Reply::Reclaimed {
                    requeued: r.requeued,
                    dead: r.dead_lettered,
                },
                Err(e) => classify(e),
            },
        );
        result
    }
}
