//! How a run ends badly, and its exit code: 1 when something failed
//! (including a refusal by `--read-only`), 2 when the command line was
//! wrong (clap's own usage errors exit 2 as well), 3 when a canary requeue
//! proved nothing (no canary finished within its watch).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redq::{ConnectionFault, QueueError};

/// A failed run.
#[derive(Debug)]
pub enum Failure {
    /// The request itself was wrong: exit 2.
    Usage(String),
    /// It was understood but could not be done: exit 1.
    Failed(String),
    /// A canary requeue whose canaries all still wait: nothing proves the
    /// fix, and a script must not go on to requeue the rest: exit 3.
    Unproven(String),
}

impl Failure {
    /// The process exit code.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Failed(_) => 1,
            Failure::Unproven(_) => 3,
        }
    }

    /// The message for stderr.
    pub fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Failed(m) | Failure::Unproven(m) => m,
        }
    }

    /// A refusal because the console runs read-only.
    pub fn read_only(what: &str) -> Failure {
        Failure::Failed(format!(
            "refused: {what} changes Redis, and --read-only is set"
        ))
    }

    /// A change asked of the default Redis: changes go only to a Redis the
    /// user named (reads may look at the default).
    pub fn unnamed_redis(what: &str) -> Failure {
        Failure::Usage(format!(
            "refused: {what} changes Redis, and no Redis was named: pass --url or set \
             REDIS_URL (changes never go to the default {} unasked)",
            crate::cli::DEFAULT_URL
        ))
    }
}

impl From<QueueError> for Failure {
    fn from(e: QueueError) -> Failure {
        match e {
            QueueError::Invalid { .. } | QueueError::PayloadTooLarge { .. } => {
                Failure::Usage(e.to_string())
            }
            other => Failure::Failed(describe(&other)),
        }
    }
}

/// An error's message for an operator: ACL refusals said plainly, the
/// rest as the driver puts them.
pub fn describe(e: &QueueError) -> String {
    let text = e.to_string();
    permission_refusal(&text).unwrap_or(text)
}

/// What Redis says when an ACL forbids a command, a key or a channel, at
/// top level (`NOPERM …`) or inside a script (`ERR The user executing the
/// script can't …`).
const PERMISSION_MARKERS: [&str; 4] = [
    "NOPERM",
    "no permissions to",
    "The user executing the script can't",
    "this user has no permissions",
];

/// Whether this run only reads (`--read-only`, or a subcommand that
/// changes nothing): then an ACL refusal can only be of a read, and advice
/// to use `--read-only`, or about changing the namespace, is wrong.
static READ_ONLY: AtomicBool = AtomicBool::new(false);

/// Note once, as the command line is read, whether this run only reads.
pub fn note_read_only(read_only: bool) {
    READ_ONLY.store(read_only, Ordering::Relaxed);
}

/// How every ACL refusal's sentence begins.
const ACL_REFUSED: &str = "Redis refused: the user in the URL lacks the ACL permission for this";

/// An ACL refusal said plainly: who refused, what (the command Redis
/// named, else where to find it: Redis 7.0 does not name a command its
/// ACL refused inside a script, while `ACL LOG` does), and what to do,
/// with Redis's own words (minus the script's hash and line) kept.
fn permission_refusal(text: &str) -> Option<String> {
    if !PERMISSION_MARKERS.iter().any(|m| text.contains(m)) {
        return None;
    }
    let mut core = text;
    for prefix in ["redis error: ", "Unknown Error: ", "ERR ", "NOPERM "] {
        core = core.strip_prefix(prefix).unwrap_or(core);
    }
    let core = core
        .split(" script: ")
        .next()
        .unwrap_or(core)
        .trim_end_matches('.');
    let denied = match denied_command(core) {
        Some(command) => format!("The command denied is {command}"),
        None => "ACL LOG on the server names the command or key denied".to_owned(),
    };
    let advice = if READ_ONLY.load(Ordering::Relaxed) {
        "grant it to this user: a user that only looks needs the viewer rules in \
         docs/reliability.md (Security)"
    } else {
        "grant it to this user, or connect as a user allowed to change this namespace, or use \
         --read-only to only look"
    };
    Some(format!(
        "{ACL_REFUSED} (NOPERM: {core}). {denied}; {advice}."
    ))
}

/// The command in a refusal that names it (`… has no permissions to run
/// the 'time' command`), in capitals as ACL rules and `ACL LOG` show it.
fn denied_command(refusal: &str) -> Option<String> {
    let (_, rest) = refusal.split_once("to run the '")?;
    let (command, _) = rest.split_once('\'')?;
    let plain = !command.is_empty()
        && command
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '|' | '_' | '-'));
    plain.then(|| command.to_ascii_uppercase())
}

/// The reason last said by [`say_when_new`].
static LAST_SAID: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Say `reason` on stderr, once: again only when it differs from the last
/// one said. For a long-running command (the exporter) whose failures are
/// otherwise only served to its scraper and logged: an operator watching
/// its output must see why, without a line per scrape.
pub fn say_when_new(reason: &str) {
    let mut last = LAST_SAID.lock().unwrap_or_else(|e| e.into_inner());
    if last.as_deref() != Some(reason) {
        eprintln!("redq: {reason}");
        *last = Some(reason.to_owned());
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::Failed(format!("{e:#}"))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Failed(e.to_string())
    }
}

/// Whether a failed connect means Redis is out of reach right now (refused,
/// reset, no answer), so the console should open and keep retrying, rather
/// than a setting that retrying cannot fix (a bad URL, a wrong password, a
/// TLS mismatch).
pub fn is_unreachable(e: &QueueError) -> bool {
    e.connection_fault()
        .is_some_and(ConnectionFault::is_transient)
}

/// Why the console could not read Redis: the banner's sentence, and the
/// connection's fault where the driver recognised one, which picks the
/// header's word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFailure {
    /// One plain sentence (never the URL's password).
    pub sentence: String,
    /// What kind of trouble the connection is in, when known.
    pub fault: Option<ConnectionFault>,
}

impl ReadFailure {
    /// A read or connect the console gave up on after `after`.
    pub fn silent(after: Duration) -> ReadFailure {
        ReadFailure {
            sentence: format!(
                "Redis did not answer within {}",
                crate::clock::compact(after)
            ),
            fault: Some(ConnectionFault::NoAnswer),
        }
    }

    /// Whether Redis answers but its ACL refuses this user a command the
    /// read needs: retrying will not help until the user's rules change,
    /// and the console must not call it unreachable. Read from the
    /// sentence, which only `permission_refusal` begins so.
    pub fn acl_refused(&self) -> bool {
        self.fault.is_none() && self.sentence.starts_with(ACL_REFUSED)
    }

    /// The header's one word for the outage: a Redis that refuses the
    /// password or does not answer is there, and "unreachable" would send
    /// an operator to the network.
    pub fn word(&self) -> &'static str {
        if self.acl_refused() {
            return "refused by ACL";
        }
        match self.fault {
            Some(ConnectionFault::NoAnswer) => "not answering",
            Some(ConnectionFault::LoginRefused) => "login refused",
            Some(ConnectionFault::Tls) => "TLS refused",
            _ => "unreachable",
        }
    }
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence)
    }
}

/// A failed read (or connect) said as one plain sentence for the console's
/// banner: what is wrong with the connection, without the client's Debug
/// text. A read that timed out only did not answer: the driver's "may or
/// may not have been applied" is about writes and is not repeated here.
pub fn read_failed(e: &QueueError) -> ReadFailure {
    let fault = e.connection_fault();
    let sentence = match (e, fault) {
        (QueueError::Timeout(after), _) => return ReadFailure::silent(*after),
        (_, Some(ConnectionFault::Refused)) => "Redis refused the connection: nothing is \
                                                listening at that address (is redis-server \
                                                running?)"
            .to_owned(),
        (_, Some(ConnectionFault::Closed)) => "Redis closed the connection".to_owned(),
        (QueueError::ConnectFailed { detail, .. }, Some(ConnectionFault::NoAnswer)) => {
            format!("Redis did not answer in time: {detail}")
        }
        (_, Some(ConnectionFault::NoAnswer)) => "Redis did not answer in time".to_owned(),
        (_, Some(ConnectionFault::NoRoute)) => "the network has no route to Redis".to_owned(),
        (_, Some(ConnectionFault::Reconnecting)) => {
            "the connection to Redis closed and is being made again".to_owned()
        }
        _ => describe(e),
    };
    ReadFailure { sentence, fault }
}

#[cfg(test)]
mod tests {
    use super::permission_refusal;

    #[test]
    fn a_refusal_that_names_the_command_says_it_and_one_that_does_not_points_to_acl_log() {
        let named = permission_refusal(
            "NOPERM User viewer has no permissions to run the 'time' command script: \
             e0e1f9fabfc9d4800c877a703b823ac0578ff8db, on @user_script:1.",
        )
        .unwrap();
        assert!(named.contains("The command denied is TIME"), "{named}");
        assert!(!named.contains("e0e1f9"), "{named}");
        let unnamed = permission_refusal(
            "ERR The user executing the script can't run this command or subcommand script: \
             e0e1f9fabfc9d4800c877a703b823ac0578ff8db, on @user_script:1.",
        )
        .unwrap();
        assert!(unnamed.contains("ACL LOG"), "{unnamed}");
        assert_eq!(permission_refusal("ERR unknown command 'FOO'"), None);
    }
}
