//! The command line: the console by default, scriptable subcommands, and
//! the connection options they share.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::clock::parse_duration;
use crate::failure::Failure;

/// The default Redis URL.
pub const DEFAULT_URL: &str = "redis://127.0.0.1:6379";
/// The shortest refresh interval accepted.
pub const MIN_REFRESH: Duration = Duration::from_millis(250);
/// The longest: the figures on screen are as old as a refresh, and a
/// console showing minutes-old counts as live misleads more than it saves.
pub const MAX_REFRESH: Duration = Duration::from_secs(60);

/// The redq operator console: a live view of redq queues in Redis, with
/// keystrokes to requeue dead letters and pause queues. Subcommands do the
/// same from scripts.
///
/// Exit codes: 0 ok, 1 failed (including refused by --read-only), 2 usage,
/// 3 a canary requeue that proved nothing (no canary finished in time).
#[derive(Debug, Parser)]
#[command(
    name = "redq",
    version,
    about,
    long_about,
    after_help = "Benchmarks: redq bench --case enqueue_bulk|enqueue_serial|enqueue_window|process|process_keep|latency \
                  --n N --c C --redis URL --queue NAME [--lat-n K --lat-gap-ms G --window W --batch B --shards S --workers per-shard|one --script-calls eval|functions --threads T] \
                  (one JSON line; see bench/compare/README.md)"
)]
pub struct Cli {
    #[command(flatten)]
    pub connection: Connection,
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Where the queues live.
///
/// The variables (`REDIS_URL`, `REDQ_NAMESPACE`, `REDQ_SHARDS`) are read by
/// [`Connection::from_env`], not by clap: clap counts a value from the
/// environment as given on the command line, so usage lines said
/// `--url <URL>` was required whenever `REDIS_URL` was set, and help showed
/// `[env: REDQ_NAMESPACE=]` for an unset variable.
#[derive(Debug, Args, Clone)]
pub struct Connection {
    // This doc comment is the flag's --help text, so it stays plain text:
    // rustdoc would read the URL's brackets as links.
    #[allow(rustdoc::broken_intra_doc_links)]
    /// Redis URL: redis://[user:password@]host[:port][/db], rediss://…
    /// (TLS), redis+unix:///path, redis-cluster://host:port?node=…,
    /// redis-sentinel://host:port?sentinelServiceName=…. Default: the
    /// REDIS_URL variable, else redis://127.0.0.1:6379. Prefer REDIS_URL
    /// for passwords: a flag is visible in `ps`.
    #[arg(long, value_name = "URL", global = true)]
    pub url: Option<String>,
    /// Key namespace of the queues. Default: the REDQ_NAMESPACE variable,
    /// else redq.
    #[arg(long, value_name = "NAME", global = true)]
    pub namespace: Option<String>,
    /// How many shards the queues are spread over by redq's ShardedQueue
    /// (1 to 64, the n it was created with). Above 1 the console watches
    /// the shard namespaces derived from --namespace as one queue.
    /// Default: the REDQ_SHARDS variable, else 1.
    #[arg(long, value_name = "N", value_parser = parse_shards, global = true)]
    pub shards: Option<usize>,
    /// PEM file of the CA certificates trusted for rediss:// instead of the
    /// system's roots (a private CA). Default: the REDQ_TLS_CA_FILE
    /// variable.
    #[arg(long, value_name = "PATH", global = true)]
    pub tls_ca_file: Option<std::path::PathBuf>,
    /// Who this command's (or console's) operator actions are recorded as:
    /// the BY of their events (pauses, requeues, deletes, cancels…), for
    /// example a runbook bot's name or an incident ticket. Default: the
    /// REDQ_ACTOR variable, else cli USER@HOST (console USER@HOST in the
    /// console).
    #[arg(long, value_name = "NAME", global = true)]
    pub actor: Option<String>,
}

impl Connection {
    /// Fill what the command line left out from the environment. A bad
    /// `REDQ_SHARDS` is a usage error, said as the flag's would be.
    pub fn from_env(mut self) -> Result<Connection, Failure> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        self.url = self.url.or_else(|| var("REDIS_URL"));
        self.namespace = self.namespace.or_else(|| var("REDQ_NAMESPACE"));
        self.tls_ca_file = self
            .tls_ca_file
            .or_else(|| var(redq::config::TLS_CA_FILE_VAR).map(std::path::PathBuf::from));
        if let Some(actor) = self.actor.take().or_else(|| var("REDQ_ACTOR")) {
            // Refused before anything is sent, as the driver would refuse
            // it at connect.
            redq::events::check_actor(&actor).map_err(|e| {
                Failure::Usage(format!("the actor (--actor or REDQ_ACTOR) is refused: {e}"))
            })?;
            self.actor = Some(actor);
        }
        if self.shards.is_none() {
            if let Some(text) = var("REDQ_SHARDS") {
                let shards = parse_shards(&text)
                    .map_err(|why| Failure::Usage(format!("REDQ_SHARDS={why}")))?;
                self.shards = Some(shards);
            }
        }
        Ok(self)
    }

    /// The URL to use.
    pub fn url(&self) -> &str {
        self.url.as_deref().unwrap_or(DEFAULT_URL)
    }

    /// The namespace to use.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or(redq::DEFAULT_NAMESPACE)
    }

    /// How many shards.
    pub fn shards(&self) -> usize {
        self.shards.unwrap_or(1)
    }

    /// Who operator actions are recorded as: the actor given, else
    /// `program <user>@<host>`.
    pub fn actor(&self, program: &str) -> String {
        self.actor
            .clone()
            .unwrap_or_else(|| redq::events::local_actor(program))
    }
}

/// Options every mode shares.
#[derive(Debug, Args, Clone)]
pub struct Global {
    /// Refuse every change (requeue, delete, purge, pause, resume, enqueue).
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Console refresh interval, with its unit: 250ms to 1m.
    #[arg(long, default_value = "1s", value_parser = parse_refresh, global = true)]
    pub refresh: Duration,
    /// No colours (also when NO_COLOR is set): bold, reverse and a marker.
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Write logs to this file (nothing is ever logged to the terminal).
    #[arg(long, value_name = "PATH", global = true)]
    pub log_file: Option<PathBuf>,
    /// Output format of subcommands.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table, global = true)]
    pub output: Output,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Aligned columns for people.
    Table,
    /// JSON for scripts.
    Json,
}

/// `--refresh`: a unit is required, because a bare number reads as
/// milliseconds to many people while every other duration here reads it as
/// seconds (`--refresh 250` would have refreshed every four minutes).
fn parse_refresh(text: &str) -> Result<Duration, String> {
    if text.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "{text} has no unit: write {text}ms or {text}s (accepted: 250ms to 1m)"
        ));
    }
    let d = parse_duration(text)?;
    if !(MIN_REFRESH..=MAX_REFRESH).contains(&d) {
        return Err(format!(
            "{text} is outside the accepted refresh interval of 250ms to 1m"
        ));
    }
    Ok(d)
}

/// `--shards`: 1 to the driver's maximum; the error names the range.
pub fn parse_shards(text: &str) -> Result<usize, String> {
    let max = redq::shards::MAX_SHARDS;
    match text.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text} is not a shard count: give a whole number from 1 to {max}, \
             the n the queue's ShardedQueue was created with"
        )),
    }
}

fn parse_delay(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

/// The most kept jobs of each outcome a retention count can name.
const MAX_KEPT_COUNT: u64 = u32::MAX as u64;

/// `retention set --max-count`: 1 to `MAX_KEPT_COUNT`; 0 bounds nothing,
/// so it is refused here, said plainly, rather than by the driver.
fn parse_max_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err(format!(
            "0 is no count bound: give a number of jobs from 1 to {MAX_KEPT_COUNT} \
             (to keep no finished jobs: redq retention clear)"
        )),
        Ok(n) if n <= MAX_KEPT_COUNT => Ok(n),
        _ => Err(format!(
            "{text} is not a count of jobs: give a whole number from 1 to {MAX_KEPT_COUNT}"
        )),
    }
}

/// `retention set --max-age` and `--tombstone-age`: a duration of at least
/// 1 ms (shorter is stored as 0, which is no bound at all).
fn parse_kept_age(text: &str) -> Result<Duration, String> {
    let age = parse_duration(text)?;
    if age < Duration::from_millis(1) {
        return Err(format!(
            "{text} is too short: give an age of 1ms to 10 years, with its unit (e.g. 7d, 12h)"
        ));
    }
    Ok(age)
}

/// The largest retention size bound: 128 TiB (the driver's limit).
const MAX_KEPT_BYTES: u64 = 1 << 47;

/// `retention set --max-bytes`: bytes, or a whole number with KB, MB, GB or
/// TB (powers of 1024; KiB… and K, M, G, T too, in any case), 1 byte to
/// `MAX_KEPT_BYTES`.
fn parse_size(text: &str) -> Result<u64, String> {
    let accepted = "give bytes (e.g. 1048576) or a whole number with KB, MB, GB or TB \
                    (e.g. 512MB, 1GB; a KB is 1024 bytes), up to 128TB";
    let trimmed = text.trim();
    let digits = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("{text} is not a size: {accepted}")),
    };
    let Ok(n) = number.parse::<u64>() else {
        return Err(format!("{text} is not a size: {accepted}"));
    };
    if n == 0 {
        return Err(format!(
            "{text} is no size bound: {accepted} (to keep no finished jobs: redq retention clear)"
        ));
    }
    match n.checked_mul(1 << shift) {
        Some(bytes) if bytes <= MAX_KEPT_BYTES => Ok(bytes),
        _ => Err(format!(
            "{text} is more than a size bound can be: {accepted}"
        )),
    }
}

/// Job states a listing can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StateArg {
    /// Due, waiting to be claimed.
    Waiting,
    /// Due, but held back until its limit key has room (flow control).
    Held,
    /// Waiting behind an earlier job with the same ordering key (listed by
    /// key, then in the order the key runs them).
    Blocked,
    /// Waiting for its batch, dependencies or children (workflows).
    Awaiting,
    /// Delayed or backing off.
    Scheduled,
    /// Claimed under a lease.
    Leased,
    /// In the dead-letter set.
    Dead,
    /// Completed and kept by the queue's retention policy.
    Completed,
    /// Cancelled and kept by the queue's retention policy.
    Cancelled,
}

impl StateArg {
    /// The driver's state.
    pub fn state(self) -> redq::JobState {
        match self {
            StateArg::Waiting => redq::JobState::Waiting,
            StateArg::Held => redq::JobState::Held,
            StateArg::Blocked => redq::JobState::Blocked,
            StateArg::Awaiting => redq::JobState::Awaiting,
            StateArg::Scheduled => redq::JobState::Scheduled,
            StateArg::Leased => redq::JobState::Leased,
            StateArg::Dead => redq::JobState::Dead,
            StateArg::Completed => redq::JobState::Completed,
            StateArg::Cancelled => redq::JobState::Cancelled,
        }
    }
}

/// The states `redq jobs cancel --queue` empties: the live ones a bulk
/// cancel reaches (a blocked job follows its waiting holder: cancel it by
/// id; a finished one has nothing left to cancel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CancelStateArg {
    /// Due, waiting to be claimed.
    Waiting,
    /// Due, but held back until its limit key has room (flow control).
    Held,
    /// Waiting for its batch, dependencies or children (workflows).
    Awaiting,
    /// Delayed or backing off.
    Scheduled,
    /// Claimed under a lease (its worker is told at once).
    Leased,
    /// In the dead-letter set.
    Dead,
}

impl CancelStateArg {
    /// The driver's state.
    pub fn state(self) -> redq::JobState {
        match self {
            CancelStateArg::Waiting => redq::JobState::Waiting,
            CancelStateArg::Held => redq::JobState::Held,
            CancelStateArg::Awaiting => redq::JobState::Awaiting,
            CancelStateArg::Scheduled => redq::JobState::Scheduled,
            CancelStateArg::Leased => redq::JobState::Leased,
            CancelStateArg::Dead => redq::JobState::Dead,
        }
    }
}

/// The states `redq jobs search --state` finds: a live job's (finished jobs
/// a queue keeps are not searched).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchStateArg {
    /// Due, waiting to be claimed.
    Waiting,
    /// Due, but held back until its limit key has room (flow control).
    Held,
    /// Waiting behind an earlier job with the same ordering key.
    Blocked,
    /// Waiting for its batch, dependencies or children (workflows).
    Awaiting,
    /// Delayed or backing off.
    Scheduled,
    /// Claimed under a lease.
    Leased,
    /// In the dead-letter set.
    Dead,
}

impl SearchStateArg {
    /// The driver's state.
    pub fn state(self) -> redq::JobState {
        match self {
            SearchStateArg::Waiting => redq::JobState::Waiting,
            SearchStateArg::Held => redq::JobState::Held,
            SearchStateArg::Blocked => redq::JobState::Blocked,
            SearchStateArg::Awaiting => redq::JobState::Awaiting,
            SearchStateArg::Scheduled => redq::JobState::Scheduled,
            SearchStateArg::Leased => redq::JobState::Leased,
            SearchStateArg::Dead => redq::JobState::Dead,
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every queue with its size by state.
    Queues,
    /// Throughput over the last 15 minutes (of one queue, or all).
    Stats {
        /// Only this queue.
        queue: Option<String>,
    },
    /// Jobs: list a queue's jobs in one state, show one, search their
    /// payloads; promote, retry, edit, delete or cancel jobs, by id or a
    /// queue's in bulk.
    ///
    /// `redq jobs QUEUE [--state S]` is short for `redq jobs list QUEUE
    /// [--state S]` (a queue named like a subcommand needs the long form).
    // The bare form's arguments conflict with the subcommands, so `jobs list
    // X` is the subcommand and `jobs X` the listing, and a subcommand lifts
    // the bare form's required QUEUE.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Jobs {
        #[command(subcommand)]
        command: Option<JobsCommand>,
        #[command(flatten)]
        list: JobsList,
    },
    /// Dead letters: list, groups (by error signature), show, requeue,
    /// delete, purge, and the queue's dead-letter bound.
    Dead {
        #[command(subcommand)]
        command: DeadCommand,
    },
    /// Kept results: what a queue keeps of its finished jobs.
    Retention {
        #[command(subcommand)]
        command: RetentionCommand,
    },
    /// Flow control: concurrency and rate limits per queue and per limit
    /// key, set live (see redq::flow).
    Limits {
        #[command(subcommand)]
        command: LimitsCommand,
    },
    /// Workflows: batches with callbacks, and (the same listing) jobs'
    /// dependencies and trees; show one with its waiters and members, or
    /// cancel one.
    Batches {
        #[command(subcommand)]
        command: BatchesCommand,
    },
    /// A job's dependencies: what it waits on (counts, each member's state
    /// or outcome, its decision and why) and what waits on it; release or
    /// fail a job held by its dependency-failure policy.
    Deps {
        #[command(subcommand)]
        command: DepsCommand,
    },
    /// Pause a queue: workers claim nothing from it until it is resumed.
    ///
    /// The queue must be one the namespace knows (enqueued to before, or
    /// paused); --allow-unknown pauses a queue before its first job.
    Pause {
        /// The queue.
        queue: String,
        /// Pause it even though no job was ever enqueued to it (a queue
        /// about to be used, or a name with a typo: check it).
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Resume a paused queue.
    Resume {
        /// The queue.
        queue: String,
    },
    /// Recurring schedules: list them (the default), set one (a cron
    /// expression or @every INTERVAL), trigger one now, pause, resume or
    /// delete one.
    Schedules {
        #[command(subcommand)]
        command: Option<SchedulesCommand>,
    },
    /// Leases: reclaim a queue's lapsed leases now (when no worker is left
    /// to do it).
    Leases {
        #[command(subcommand)]
        command: LeasesCommand,
    },
    /// Live workers, then those gone lately, with each one's redq VERSION
    /// and WAKE-UPS (shard: hears every wake-up; plain: no shard
    /// subscription, may start work late; polls: no subscription; ?: an
    /// earlier version), LOST-HANDOFFS (jobs handed to it whose messages
    /// never reached it, given back: its subscription broke or lagged) and
    /// LOST-CLAIMS (jobs its claims leased whose replies never reached it,
    /// given back: its connection broke or timed out mid-claim); `quiet` or
    /// `stop` one.
    Workers {
        #[command(subcommand)]
        command: Option<WorkersCommand>,
    },
    /// redq's Redis Function libraries on the server (services call their
    /// scripts as functions by default), this version's and others';
    /// `prune` drops the others after a deploy.
    Functions {
        #[command(subcommand)]
        command: Option<FunctionsCommand>,
    },
    /// The job record format producers write in this namespace: show it,
    /// or set it. `compact` stores a fresh job with no options but a name
    /// and max_attempts in 17 bytes less (16 B a waiting job in Redis
    /// memory); redq versions before it cannot read such records, so set it
    /// only once every driver on the namespace is this version or later.
    /// `detached` keeps payloads of 4 KB or more (`detached:BYTES`: of
    /// BYTES or more) apart from their records, which saves Redis most of
    /// what a large payload costs it a job, for about 140 B of memory more a
    /// job (worth it from about 2 KB: below that a worker gets through no
    /// more jobs); the same caution applies. `compact+detached[:BYTES]`
    /// does both: large payloads apart, the smaller fresh jobs compact.
    /// Producers pick it up at their next connect.
    /// The way back (a driver older than these formats must join again):
    /// `--check` counts the records it could not read; `standard --rewrite`
    /// sets the standard format and rewrites them in the standard layout
    /// (detached ones of running jobs are left: run it again once they
    /// finish).
    RecordFormat {
        /// standard, compact, detached, detached:BYTES, compact+detached or
        /// compact+detached:BYTES; none shows the current one.
        #[arg(value_name = "standard|compact|[compact+]detached[:BYTES]", value_parser = parse_record_format)]
        set: Option<redq::RecordFormat>,
        /// Count the compact and detached records in the namespace (what a
        /// driver older than those formats cannot read); writes nothing.
        #[arg(long, conflicts_with_all = ["set", "rewrite"])]
        check: bool,
        /// Rewrite the compact and detached records in the standard layout,
        /// in bounded steps; only with the standard format (given, or
        /// already set).
        #[arg(long)]
        rewrite: bool,
    },
    /// Serve Prometheus metrics at http://ADDR/metrics, read from Redis at
    /// each scrape (queue sizes by state, lapsed leases, head age, recent
    /// throughput, workers; --shards sums the shards). Runs until Ctrl-C;
    /// the address bound goes to stderr. See the README's "Metrics and
    /// events".
    /// `redq metrics show QUEUE` prints a queue's wait/run percentiles and
    /// error rate per job name instead.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Metrics {
        #[command(subcommand)]
        command: Option<MetricsCommand>,
        /// Address to listen on, e.g. 127.0.0.1:9464 (port 0: any free one).
        #[arg(long, value_name = "ADDR", required = true)]
        listen: Option<std::net::SocketAddr>,
        /// At most this many queues get a queue label of their own (the
        /// first by name at the first scrape, then kept while the exporter
        /// runs); the rest are summed under queue="_other".
        #[arg(long, value_name = "N", default_value_t = 1000)]
        max_queues: usize,
        /// Leave out the wait and run histograms (52 of a queue's 77
        /// series), for namespaces with many queues.
        #[arg(long)]
        no_histograms: bool,
    },
    /// Events (every transition and operator action), oldest first, one
    /// line each; with --follow, wait for new ones until Ctrl-C. The
    /// traffic (enqueued, completed, pushed_back) is a stream of its own, so
    /// that it never trims the rest away: shown with --traffic, or when
    /// --kind names one of its kinds.
    Events {
        /// Keep printing events as they happen (blocking reads), saying on
        /// stderr when Redis stops answering, answers again, or lost the
        /// event history (it is asked once a second).
        #[arg(long)]
        follow: bool,
        /// Where to start: start (the oldest kept), now (only new ones), or
        /// an event id (the first column of a line): the events after it.
        #[arg(long, value_name = "ID|start|now", default_value = "start")]
        from: String,
        /// Only events of these kinds (repeat it, or separate kinds with
        /// commas), e.g. --kind dead,schedule_deleted.
        #[arg(long, value_name = "KIND", value_delimiter = ',')]
        kind: Vec<String>,
        /// Also the traffic stream: every enqueued, completed and pushed_back event.
        #[arg(long)]
        traffic: bool,
    },
    /// Enqueue one job.
    Enqueue {
        /// The queue.
        queue: String,
        /// The payload, as JSON.
        json: String,
        /// Priority 0-255, higher first.
        #[arg(long, default_value_t = 0)]
        priority: u8,
        /// Not claimable before this delay has passed (e.g. 30s, 5m).
        #[arg(long, value_parser = parse_delay)]
        delay: Option<Duration>,
        /// Skip the enqueue while a live job has this key.
        #[arg(long)]
        dedup_key: Option<String>,
        /// Run one at a time, in order, with other jobs of this key.
        #[arg(long)]
        ordering_key: Option<String>,
        /// The job type name.
        #[arg(long)]
        name: Option<String>,
        /// Dead-letter after this many failed attempts (0 = unlimited).
        #[arg(long, default_value_t = 0)]
        max_attempts: u32,
        /// Attempts already made elsewhere (a job moved from another
        /// system); below --max-attempts unless that is 0.
        #[arg(long, value_name = "N", default_value_t = 0)]
        attempts: u32,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// A private Redis with producers and workers, and the console on it.
    ///
    /// Always starts its own redis-server on a free loopback port in a
    /// temporary directory, whatever --url or REDIS_URL say: the demo never
    /// writes to a Redis it did not start. Quitting the console stops it all.
    /// To fill an existing Redis with demo traffic instead (producers,
    /// workers and two schedules in the namespace), name it with
    /// --into-existing URL and add --yes-write-demo-traffic.
    Demo {
        /// Write the demo traffic into this Redis instead of a private one.
        /// It must be spelled out here: REDIS_URL is never used by the demo.
        #[arg(long, value_name = "URL")]
        into_existing: Option<String>,
        /// Required with --into-existing: the demo's jobs, workers and
        /// schedules stay in that Redis.
        #[arg(long, requires = "into_existing")]
        yes_write_demo_traffic: bool,
    },
}

/// `redq jobs` subcommands.
#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// A page of a queue's jobs in one state.
    ///
    /// WHEN is the time that matters in that state: when it was enqueued
    /// (waiting, held, blocked, awaiting), when it is due (scheduled), when
    /// its lease expires (leased; `lapsed` once past), when it died (dead),
    /// when it finished (completed, cancelled).
    List(JobsList),
    /// Everything about one job: state, payload, attempts, error, progress
    /// and log lines.
    Show {
        /// The job id.
        id: String,
    },
    /// Make scheduled jobs due now, in their place by priority (by id, or
    /// with --queue every scheduled job of the queue, in bounded batches).
    #[command(
        group = clap::ArgGroup::new("which").required(true).args(["ids", "queue"]),
        override_usage = "redq jobs promote <ID>...\n       \
                          redq jobs promote --queue <QUEUE> --yes"
    )]
    Promote(JobsPromote),
    /// Retry now: a job backing off after a failure runs at once (its
    /// attempts kept); a dead job is requeued with attempts reset to 0. With
    /// --queue, every job of the queue backing off; scheduled jobs that never
    /// failed are not retries and stay scheduled (`redq jobs promote` makes
    /// them due), and dead ones are `redq dead requeue QUEUE --all`.
    #[command(
        group = clap::ArgGroup::new("which").required(true).args(["ids", "queue"]),
        override_usage = "redq jobs retry <ID>...\n       \
                          redq jobs retry --queue <QUEUE> --yes"
    )]
    Retry(JobsPromote),
    /// Delete jobs for good, in any state, releasing their ordering and
    /// dedup keys; a leased job only with --force, which voids its lease.
    /// With --queue and --state, every job of the queue in that state.
    #[command(
        group = clap::ArgGroup::new("which").required(true).args(["ids", "queue"]),
        override_usage = "redq jobs delete [--force] <ID>...\n       \
                          redq jobs delete [--force] --queue <QUEUE> --state <STATE> --yes"
    )]
    Delete(JobsDelete),
    /// Replace the payload of a job that is not running (waiting,
    /// scheduled, held, blocked, awaiting or dead), checked as an enqueue
    /// checks it. A held or awaiting job runs with the new payload once its
    /// limit or gate lets it; a running (leased) job is refused.
    #[command(
        group = clap::ArgGroup::new("source").required(true).args(["payload", "file"]),
        override_usage = "redq jobs edit <ID> <JSON>\n       \
                          redq jobs edit <ID> --file <PATH>\n       \
                          redq jobs edit <ID> -   (the JSON from standard input)"
    )]
    Edit(JobsEdit),
    /// Cancel one job in any state (a running job's worker is told at
    /// once), or with --queue and --state every job of a queue in that state.
    #[command(
        group = clap::ArgGroup::new("which").required(true).args(["id", "queue"]),
        override_usage = "redq jobs cancel [OPTIONS] <ID>\n       \
                          redq jobs cancel [OPTIONS] --queue <QUEUE> --state <STATE> --yes"
    )]
    Cancel(JobsCancel),
    /// Move jobs that wait their turn (waiting, scheduled, held or blocked)
    /// to the dead-letter set, unrun: to look at, fix (`redq jobs edit`)
    /// and requeue later (`redq dead requeue`). Each dies as a failed job
    /// dies: attempts kept, its error `dead-lettered by an operator (WHO):
    /// REASON`, its ordering key passed on. A running job is refused
    /// (cancel or delete it), as are awaiting and dead ones.
    #[command(name = "dead-letter")]
    DeadLetter(JobsDeadLetter),
    /// Search a queue's live jobs for a text in their payload (plain,
    /// case-sensitive), in Redis, in bounded steps that never block it:
    /// each step examines at most 1 000 records.
    Search(JobsSearch),
}

/// What `redq jobs search` takes.
#[derive(Debug, Args, Clone)]
pub struct JobsSearch {
    /// The queue.
    pub queue: String,
    /// The text the payload must contain.
    pub text: String,
    /// Only jobs in this state (a live one: finished jobs are not searched).
    #[arg(long, value_enum)]
    pub state: Option<SearchStateArg>,
}

/// `redq batches` subcommands.
#[derive(Debug, Subcommand)]
pub enum BatchesCommand {
    /// Batches, dependencies and trees (every gate), newest activity
    /// first: progress, failures and what became of their waiters.
    List {
        /// Skip this many.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// At most this many (1 to 500).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=500))]
        limit: u64,
    },
    /// One batch (or a job's dependencies, or a tree, by its job id): its
    /// counts, each waiter with why it waits or how it was decided, and a
    /// page of its members with their state or outcome.
    Show {
        /// The batch id (or the waiting job's id).
        id: String,
        /// Start the members page after this cursor (printed under a page
        /// that has more).
        #[arg(long, value_name = "CURSOR", default_value = "")]
        cursor: String,
        /// Members per page (1 to 1000).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=1000))]
        limit: u64,
    },
    /// Cancel a batch (or dependencies, or a tree) as a whole: its jobs
    /// still pending are cancelled, in pages, and so are the jobs waiting on it.
    Cancel {
        /// The batch id (or the waiting job's id).
        id: String,
        /// Required: a cancelled batch cannot be resumed.
        #[arg(long)]
        yes: bool,
    },
}

/// `redq deps` subcommands.
#[derive(Debug, Subcommand)]
pub enum DepsCommand {
    /// What a job waits on (its batch, dependencies or children: counts,
    /// members, its decision and why) and what waits on it.
    Show {
        /// The job id.
        id: String,
    },
    /// Release a job held because a dependency failed: it enters its
    /// queue and runs.
    Release {
        /// The held job's id.
        id: String,
    },
    /// Dead-letter a job held because a dependency failed.
    Fail {
        /// The held job's id.
        id: String,
    },
}

/// `redq schedules` subcommands.
#[derive(Debug, Subcommand)]
pub enum SchedulesCommand {
    /// Every schedule with its next run (marked overdue when no scheduler
    /// fired it), its last tick and its state (active, paused or ended).
    List,
    /// Everything a schedule holds (its job, misfire policy, start and
    /// end, last tick and last enqueue), and its next 5 runs in its own
    /// time zone and in UTC.
    Show {
        /// The schedule.
        name: String,
        #[command(flatten)]
        shard: ScheduleShard,
    },
    /// Create a schedule, or replace one with --replace: a cron expression
    /// ("30 2 * * *", 5 or 6 fields, or an alias such as @daily) in
    /// --timezone, or an interval, "@every 30s" (s, m, h, d; 1s to 366d),
    /// whose runs are the multiples of the interval since 1970-01-01 00:00
    /// UTC, not counted from now. Prints the next run.
    Set {
        /// The schedule (1 to 128 bytes).
        name: String,
        /// The queue its jobs go to.
        queue: String,
        /// When it runs: "30 2 * * *", "@daily", "@every 5m"; quote it.
        expression: String,
        /// The IANA time zone of a cron expression's times (an @every
        /// schedule's must be UTC).
        #[arg(long, default_value = "UTC")]
        timezone: String,
        /// The jobs' type name, which a typed worker needs to run them.
        #[arg(long, value_name = "NAME")]
        job_name: Option<String>,
        /// The payload every job carries, as JSON.
        #[arg(long, value_name = "JSON")]
        payload: Option<String>,
        /// After an outage: fire once for the missed runs, or skip them.
        #[arg(long, value_enum, default_value_t = MisfireArg::FireOnce)]
        misfire: MisfireArg,
        /// Replace a schedule of that name: everything not given takes its
        /// default (payload null, no job name). Without it an existing
        /// schedule is refused, so an application's is not reset by
        /// accident.
        #[arg(long)]
        replace: bool,
        /// Send its jobs to a queue that has none yet (otherwise refused,
        /// so a typo does not fill a queue no worker reads).
        #[arg(long)]
        allow_unknown: bool,
        #[command(flatten)]
        shard: ScheduleShard,
    },
    /// Enqueue the schedule's job now (its next run is unchanged).
    Trigger {
        /// The schedule.
        name: String,
        #[command(flatten)]
        shard: ScheduleShard,
    },
    /// Pause a schedule: no tick fires until it is resumed.
    Pause {
        /// The schedule.
        name: String,
        #[command(flatten)]
        shard: ScheduleShard,
    },
    /// Resume a paused schedule from its next tick.
    Resume {
        /// The schedule.
        name: String,
        #[command(flatten)]
        shard: ScheduleShard,
    },
    /// Delete a schedule (jobs it enqueued stay).
    Delete {
        /// The schedule.
        name: String,
        #[command(flatten)]
        shard: ScheduleShard,
        /// Required: a deleted schedule is gone for good.
        #[arg(long)]
        yes: bool,
    },
}

/// `redq schedules set --misfire`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MisfireArg {
    /// One job for the runs missed during an outage (the default).
    FireOnce,
    /// No job for missed runs.
    Skip,
}

/// Which shard's schedule a `redq schedules` subcommand acts on.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ScheduleShard {
    /// With --shards: the shard whose schedule of that name to act on
    /// (its index, as the SHARD column shows it). Needed only when several
    /// shards store the name: each of those is a schedule of its own.
    #[arg(long, value_name = "INDEX")]
    pub shard: Option<usize>,
}

/// `redq leases` subcommands.
#[derive(Debug, Subcommand)]
pub enum LeasesCommand {
    /// Reclaim every lapsed lease of a queue now: each job counts a failed
    /// attempt and goes back to the queue, or to the dead letters when its
    /// attempts are spent.
    Reclaim {
        /// The queue.
        queue: String,
    },
}

/// What `redq jobs cancel` takes.
#[derive(Debug, Args, Clone)]
pub struct JobsCancel {
    /// The job.
    pub id: Option<String>,
    /// Who cancels (kept with the job when its queue keeps finished jobs).
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub by: String,
    /// Every job of this queue in --state, in bounded batches.
    #[arg(long, requires = "state", conflicts_with = "id")]
    pub queue: Option<String>,
    /// With --queue: which jobs (a blocked job follows its waiting holder:
    /// cancel it by id, found with `redq jobs list QUEUE --state blocked`).
    #[arg(long, value_enum, requires = "queue")]
    pub state: Option<CancelStateArg>,
    /// Required with --queue: a bulk cancel cannot be undone.
    #[arg(long)]
    pub yes: bool,
}

/// `redq retention` subcommands.
#[derive(Debug, Subcommand)]
pub enum RetentionCommand {
    /// What a queue keeps of its finished jobs, and how much it keeps now.
    Show {
        /// The queue.
        queue: String,
    },
    /// Keep a queue's completed and cancelled jobs (with their results)
    /// within these bounds; at least one of count, age and size. It
    /// replaces the queue's whole policy: a bound not given is no longer
    /// set (the reply names it).
    Set {
        /// The queue.
        queue: String,
        /// At most this many completed (and this many cancelled) jobs: 1 to
        /// 4294967295.
        #[arg(long, value_name = "N", value_parser = parse_max_count)]
        max_count: Option<u64>,
        /// Forget kept jobs older than this (e.g. 7d, 12h; 1ms to 10 years).
        #[arg(long, value_name = "DURATION", value_parser = parse_kept_age)]
        max_age: Option<Duration>,
        /// At most about this much of kept jobs: bytes (1048576), or a whole
        /// number with KB, MB, GB or TB (e.g. 512MB, 1GB; a KB is 1024
        /// bytes, and KiB, MiB, GiB, TiB say the same); at least 1KB, up
        /// to 128 TB.
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_bytes: Option<u64>,
        /// How long a forgotten job's tombstone lasts (1ms to 10 years).
        #[arg(long, value_name = "DURATION", value_parser = parse_kept_age, default_value = "1d")]
        tombstone_age: Duration,
        /// Set it even though no job was ever enqueued to the queue (so
        /// that its first jobs are kept, e.g. for jobs that others will
        /// name as dependencies; or a name with a typo: check it).
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Stop keeping a queue's finished jobs and forget those kept
    /// (tombstones stay until they expire).
    Clear {
        /// The queue.
        queue: String,
        /// Required: what is forgotten cannot be read again.
        #[arg(long)]
        yes: bool,
    },
}

/// `redq workers` subcommands (none: list the workers).
#[derive(Debug, Subcommand)]
pub enum WorkersCommand {
    /// Quiet a worker: it claims nothing more and finishes what it runs,
    /// staying registered (shown as quiet) until it is shut down.
    Quiet {
        /// The worker's id, as `redq workers` lists it (node-instance).
        id: String,
    },
    /// Stop a worker: quiet, then it exits once its running jobs are done.
    Stop {
        /// The worker's id, as `redq workers` lists it (node-instance).
        id: String,
    },
}

/// `redq functions` subcommands (none: list the libraries).
#[derive(Debug, Subcommand)]
pub enum FunctionsCommand {
    /// Drop, from every primary, the libraries this version of redq does
    /// not call (another driver version's). A service still running such a
    /// version loads its library again at its next call: nothing fails.
    Prune,
}

/// `redq metrics` subcommands.
#[derive(Debug, Subcommand)]
pub enum MetricsCommand {
    /// A queue's completed, failed (retried + dead-lettered), error rate,
    /// and wait and run p50/p90/p99, per job name and summed, over a recent
    /// window (percentiles are estimates within a factor of 2).
    Show {
        /// The queue.
        queue: String,
        /// How far back: 5m, 1h, 24h or 90d.
        #[arg(long, value_name = "5m|1h|24h|90d", default_value = "1h",
              value_parser = crate::commands::metrics::figures::parse_window)]
        window: redq::metrics::MetricsWindow,
    },
    /// Stop recording a queue's metrics (wait and run times, outcome
    /// counts): its claims, acks and nacks then write nothing to them,
    /// 10 to 15 % less Redis work for a lone claim or ack. What was
    /// recorded stays readable; sizes, throughput and events are kept
    /// whatever the switch says. Live, for every worker.
    Off {
        /// The queue.
        queue: String,
    },
    /// Record a queue's metrics again (the default for every queue).
    On {
        /// The queue.
        queue: String,
    },
}

/// `redq limits` subcommands.
#[derive(Debug, Subcommand)]
pub enum LimitsCommand {
    /// Every queue with flow control (or one): each limit, its use now,
    /// the jobs it holds back; then its limit keys.
    List {
        /// Only this queue.
        queue: Option<String>,
    },
    /// Limit a queue as a whole (the default), every limit key of it
    /// (--each-key), or one key (--key); at least one of --concurrency
    /// and --rate. The limit given replaces the scope's limit whole.
    #[command(group = clap::ArgGroup::new("bound").required(true).multiple(true)
        .args(["concurrency", "rate"]))]
    Set {
        /// The queue.
        queue: String,
        #[command(flatten)]
        scope: LimitScopeArgs,
        /// At most this many jobs leased at once (1 to 1000000).
        #[arg(long, value_name = "N", allow_negative_numbers = true,
              value_parser = crate::flow::parse_concurrency)]
        concurrency: Option<u32>,
        /// At most MAX jobs started in any window of INTERVAL (ms, s, m, h),
        /// on the Redis clock: e.g. 100/1s, 10/500ms, 1000/1h.
        #[arg(long, value_name = "MAX/INTERVAL", value_parser = crate::flow::parse_rate)]
        rate: Option<redq::flow::Rate>,
        /// Limit it even though no job was ever enqueued to it (a queue
        /// about to be used, or a name with a typo: check it).
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Remove a limit: the queue's own (the default), the each-key default
    /// (--each-key), one key's (--key), or every one of the queue (--all).
    Clear {
        /// The queue.
        queue: String,
        #[command(flatten)]
        scope: LimitScopeArgs,
        /// The queue's own limit, its each-key default and every key's own.
        #[arg(long, conflicts_with_all = ["key", "each_key"])]
        all: bool,
        /// Required with --all when the queue has any limit: every one is
        /// lifted at once.
        #[arg(long, requires = "all")]
        yes: bool,
    },
}

/// Which limit of a queue: its own unless one of these is given.
#[derive(Debug, Args, Clone)]
pub struct LimitScopeArgs {
    /// The limit of this one limit key (it replaces the each-key default
    /// for that key).
    #[arg(long, value_name = "K", conflicts_with = "each_key")]
    pub key: Option<String>,
    /// The default limit of every limit key of the queue.
    #[arg(long)]
    pub each_key: bool,
}

/// What `redq jobs promote` and `redq jobs retry` take.
#[derive(Debug, Args, Clone)]
pub struct JobsPromote {
    /// The jobs.
    pub ids: Vec<String>,
    /// Every such job of this queue, in bounded batches.
    #[arg(long, conflicts_with = "ids")]
    pub queue: Option<String>,
    /// Required with --queue: a bulk change is not undone.
    #[arg(long)]
    pub yes: bool,
}

/// What `redq jobs dead-letter` takes.
#[derive(Debug, Args, Clone)]
pub struct JobsDeadLetter {
    /// The jobs.
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// Why, recorded in each job's error after who did it (at most 1024
    /// bytes).
    #[arg(long, default_value = "")]
    pub reason: String,
}

/// What `redq jobs delete` takes.
#[derive(Debug, Args, Clone)]
pub struct JobsDelete {
    /// The jobs.
    pub ids: Vec<String>,
    /// Delete a running job too, voiding its holder's lease (its ack then
    /// changes nothing and the job never comes back).
    #[arg(long)]
    pub force: bool,
    /// Every job of this queue in --state, in bounded batches.
    #[arg(long, requires = "state", conflicts_with = "ids")]
    pub queue: Option<String>,
    /// With --queue: which jobs (leased needs --force); `redq jobs list
    /// QUEUE --state S` shows them first.
    #[arg(long, value_enum, requires = "queue")]
    pub state: Option<DeleteStateArg>,
    /// Required with --queue: a delete cannot be undone.
    #[arg(long)]
    pub yes: bool,
}

/// The states `redq jobs delete --queue` empties: those the driver's bulk
/// delete takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeleteStateArg {
    /// Due, waiting to be claimed.
    Waiting,
    /// Delayed or backing off.
    Scheduled,
    /// Waiting behind an earlier job with the same ordering key (each
    /// leaves its place; the key's holder and the rest go on in order).
    Blocked,
    /// Held back until its limit key has room (flow control).
    Held,
    /// Waiting for its batch, dependencies or children (each leaves its
    /// gate's waiters and counts as deleted, a failure, toward the
    /// workflows it is a member of: a job depending on it is decided then).
    Awaiting,
    /// In the dead-letter set.
    Dead,
    /// Running under a lease (needs --force).
    Leased,
}

impl DeleteStateArg {
    /// The driver's state.
    pub fn state(self) -> redq::JobState {
        match self {
            DeleteStateArg::Waiting => redq::JobState::Waiting,
            DeleteStateArg::Scheduled => redq::JobState::Scheduled,
            DeleteStateArg::Blocked => redq::JobState::Blocked,
            DeleteStateArg::Held => redq::JobState::Held,
            DeleteStateArg::Awaiting => redq::JobState::Awaiting,
            DeleteStateArg::Dead => redq::JobState::Dead,
            DeleteStateArg::Leased => redq::JobState::Leased,
        }
    }
}

/// What `redq jobs edit` takes.
#[derive(Debug, Args, Clone)]
pub struct JobsEdit {
    /// The job.
    pub id: String,
    /// The new payload as JSON, or `-` to read it from standard input.
    pub payload: Option<String>,
    /// Read the new payload from this file.
    #[arg(long, value_name = "PATH")]
    pub file: Option<std::path::PathBuf>,
}

/// What `redq jobs list` (and the bare `redq jobs QUEUE`) takes.
#[derive(Debug, Args, Clone)]
pub struct JobsList {
    /// The queue.
    // An Option only so that the bare form can lift it when a subcommand
    // is given; clap still requires it otherwise.
    #[arg(required = true, value_name = "QUEUE")]
    pub queue: Option<String>,
    /// Which jobs.
    #[arg(long, value_enum, default_value_t = StateArg::Waiting)]
    pub state: StateArg,
    /// Skip this many.
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
    /// At most this many (1 to 1000).
    #[arg(long, default_value_t = 50, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub limit: usize,
}

/// Dead-letter subcommands.
#[derive(Debug, Subcommand)]
pub enum DeadCommand {
    /// Dead letters, newest first (of one queue, or of all merged).
    List {
        /// Only this queue.
        queue: Option<String>,
        /// Skip this many of the list as printed (newest first across
        /// queues); offset + limit is at most 10000.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// At most this many rows (1 to 1000), of the list as printed.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Error signatures: the dead letters grouped by error, with their
    /// count, newest and oldest death and an example error, over every
    /// dead letter of the queue (of each queue without QUEUE). A signature
    /// is what --group takes.
    Groups {
        /// Only this queue.
        queue: Option<String>,
    },
    /// Everything about one job: payload, error, attempts.
    Show {
        /// The job id.
        id: String,
    },
    /// Requeue dead letters (attempts restart at 0, or at --attempts).
    // clap would print the required group before QUEUE (`<IDS|--all>
    // <QUEUE>`): the usage is written out in the order the arguments go.
    #[command(
        group = clap::ArgGroup::new("which").required(true).args(["ids", "all", "group"]),
        override_usage = "redq dead requeue [OPTIONS] <QUEUE> <IDS>...\n       \
                          redq dead requeue [OPTIONS] <QUEUE> --all --yes\n       \
                          redq dead requeue [OPTIONS] <QUEUE> --group <SIG> --yes\n       \
                          redq dead requeue [OPTIONS] <QUEUE> --group <SIG> --canary <N> [--watch <DELAY>]",
        after_help = "Exit codes: 0 done (a canary requeue: at least one canary completed and none \
                      died again, so the rest may follow); 1 failed, or a canary died again; 2 usage, \
                      or --all / --group without --yes; 3 a canary requeue that proved nothing: no \
                      canary finished within --watch (a paused queue, or no worker serving it)."
    )]
    Requeue {
        /// The queue.
        queue: String,
        /// The jobs.
        ids: Vec<String>,
        /// Every dead letter of the queue, in bounded batches.
        #[arg(long)]
        all: bool,
        /// The attempt counter each job restarts at: attempts it has already
        /// used. Refused, before anything is requeued, at or above the max
        /// attempts of a job it would requeue (as the console refuses it).
        #[arg(long, value_name = "N", default_value_t = 0)]
        attempts: u32,
        /// Every dead letter of the queue whose error has this signature
        /// (the groups of the console's Dead letters screen; `redq dead
        /// groups` lists them).
        #[arg(long, value_name = "SIG", conflicts_with_all = ["ids", "all"])]
        group: Option<String>,
        /// With --group: requeue only N of the group (the newest), wait
        /// until they complete or die again (at most --watch), report each,
        /// and leave the rest dead. Exits 0 only when at least one
        /// completed and none died again; 1 if any died again; 3 if none
        /// finished within --watch.
        #[arg(long, value_name = "N", requires = "group")]
        canary: Option<usize>,
        /// How long a canary requeue watches its jobs.
        #[arg(long, value_parser = parse_delay, default_value = "60s", requires = "canary")]
        watch: Duration,
        /// Required with --all, and with --group without --canary: they
        /// requeue every dead letter of the queue or of the group.
        #[arg(long)]
        yes: bool,
    },
    /// Delete dead letters for good: these ids, or a whole group.
    #[command(
        group = clap::ArgGroup::new("which").required(true).args(["ids", "group"]),
        override_usage = "redq dead delete [OPTIONS] <QUEUE> <IDS>...\n       \
                          redq dead delete [OPTIONS] <QUEUE> --group <SIG> --yes"
    )]
    Delete {
        /// The queue.
        queue: String,
        /// The jobs.
        ids: Vec<String>,
        /// Every dead letter of the queue whose error has this signature
        /// (`redq dead groups` lists them).
        #[arg(long, value_name = "SIG", conflicts_with = "ids")]
        group: Option<String>,
        /// Required with --group: it deletes the whole group for good.
        #[arg(long, requires = "group")]
        yes: bool,
    },
    /// Delete every dead letter of a queue for good.
    Purge {
        /// The queue.
        queue: String,
        /// Required: purge cannot be undone.
        #[arg(long)]
        yes: bool,
    },
    /// A queue's dead-letter bound: at most N dead letters and/or none
    /// older than an age, trimmed whenever a job of the queue dies, when
    /// the bound is set, and by `redq dead bound trim`.
    Bound {
        #[command(subcommand)]
        command: DeadBoundCommand,
    },
}

/// `redq dead bound` subcommands.
#[derive(Debug, Subcommand)]
pub enum DeadBoundCommand {
    /// A queue's dead-letter bound, and how many dead letters it has.
    Show {
        /// The queue.
        queue: String,
    },
    /// Bound a queue's dead letters (at least one of count and age), and
    /// delete at once those past the bound. It replaces the queue's whole
    /// bound: a bound not given is no longer set (the reply names it).
    /// From then on, each death in the queue deletes the oldest dead
    /// letters past it (at most 100 a death).
    Set {
        /// The queue.
        queue: String,
        /// Keep at most the N newest dead letters: 1 to 4294967295.
        #[arg(long, value_name = "N", value_parser = parse_dead_count)]
        max_count: Option<u64>,
        /// Delete dead letters that died longer ago than this (e.g. 30d,
        /// 12h; 1m to 10 years), on Redis's clock.
        #[arg(long, value_name = "DURATION", value_parser = parse_dead_age)]
        max_age: Option<Duration>,
        /// Set it even though no job was ever enqueued to the queue (or a
        /// name with a typo: check it).
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Remove a queue's dead-letter bound; its dead letters stay.
    Clear {
        /// The queue.
        queue: String,
    },
    /// Delete now the dead letters past a queue's bound: how a cron job
    /// applies the age bound to a queue where no job dies.
    Trim {
        /// The queue.
        queue: String,
    },
}

/// `dead bound set --max-count`: 1 to `MAX_KEPT_COUNT` dead letters.
fn parse_dead_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err(format!(
            "0 is no count bound: give a number of dead letters from 1 to {MAX_KEPT_COUNT} \
             (to delete every dead letter: redq dead purge)"
        )),
        Ok(n) if n <= MAX_KEPT_COUNT => Ok(n),
        _ => Err(format!(
            "{text} is not a count of dead letters: give a whole number from 1 to {MAX_KEPT_COUNT}"
        )),
    }
}

/// `dead bound set --max-age`: a duration of at least a minute (the
/// driver's `redq::kept::MIN_DEAD_AGE`).
fn parse_dead_age(text: &str) -> Result<Duration, String> {
    let age = parse_duration(text)?;
    if age < redq::kept::MIN_DEAD_AGE {
        return Err(format!(
            "{text} is too short: give an age of 1m to 10 years, with its unit (e.g. 30d, 12h); \
             a dead letter deleted sooner could be gone before anyone saw it"
        ));
    }
    Ok(age)
}

/// `redq record-format`'s argument: a plain sentence naming what is accepted.
fn parse_record_format(text: &str) -> Result<redq::RecordFormat, String> {
    redq::RecordFormat::parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_is_bytes_or_a_whole_number_with_a_unit_of_1024s() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("1GB"), Ok(1 << 30));
        assert_eq!(parse_size("512mb"), Ok(512 << 20));
        assert_eq!(parse_size("64 MiB"), Ok(64 << 20));
        assert_eq!(parse_size("2k"), Ok(2048));
        assert_eq!(parse_size("128TB"), Ok(1 << 47));
        for refused in [
            "0",
            "0GB",
            "1.5GB",
            "1PB",
            "GB",
            "",
            "-1",
            "129TB",
            "99999999999TB",
        ] {
            let why = parse_size(refused).unwrap_err();
            assert!(why.contains("KB, MB, GB or TB"), "{refused}: {why}");
        }
    }

    #[test]
    fn a_retention_count_and_age_refuse_what_bounds_nothing() {
        assert_eq!(parse_max_count("10"), Ok(10));
        assert!(parse_max_count("0")
            .unwrap_err()
            .contains("1 to 4294967295"));
        assert!(parse_max_count("4294967296").is_err());
        assert_eq!(parse_kept_age("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert!(parse_kept_age("0s")
            .unwrap_err()
            .contains("1ms to 10 years"));
        assert!(parse_kept_age("0.5ms").is_err());
    }

    #[test]
    fn a_dead_bound_refuses_a_zero_count_and_an_age_under_a_minute() {
        assert_eq!(parse_dead_count("10000"), Ok(10_000));
        assert!(parse_dead_count("0")
            .unwrap_err()
            .contains("redq dead purge"));
        assert!(parse_dead_count("4294967296").is_err());
        assert_eq!(parse_dead_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_dead_age("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_dead_age("59s")
            .unwrap_err()
            .contains("1m to 10 years"));
    }

    #[test]
    fn a_refresh_needs_its_unit_and_stays_within_250ms_to_a_minute() {
        assert_eq!(parse_refresh("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_refresh("1m"), Ok(Duration::from_secs(60)));
        let bare = parse_refresh("250").unwrap_err();
        assert!(bare.contains("250ms or 250s"), "{bare}");
        for outside in ["100ms", "61s", "4m"] {
            let refused = parse_refresh(outside).unwrap_err();
            assert!(refused.contains("250ms to 1m"), "{outside}: {refused}");
        }
    }
}
