//! How a run ends badly, and its exit code: 1 when something failed
//! (including a refusal by `--read-only`), 2 when the command line was
//! wrong (clap's own usage errors exit 2 as well), 3 when a canary requeue
//! proved nothing (no canary finished within its watch).

use redq::QueueError;

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

/// An ACL refusal said plainly: who refused, why, and what to do, with
/// Redis's own words (minus the script's hash and line) kept.
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
    Some(format!(
        "Redis refused: the user in the URL lacks the ACL permission for this \
         (NOPERM: {core}). Connect as a user allowed to change this namespace, \
         or use --read-only to only look."
    ))
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
    match e {
        QueueError::Timeout(_) => true,
        QueueError::Config(_) | QueueError::Redis(_) => outage_of(e).is_some(),
        _ => false,
    }
}

/// How a server that is down or silent reads in the driver's error text
/// (lowercased: the driver turns the client's I/O errors into the operating
/// system's words), and what the console says.
const OUT_OF_REACH: [(&str, Outage); 8] = [
    ("connection refused", Outage::Refused),
    ("connection reset", Outage::Closed),
    ("connection closed", Outage::Closed),
    ("broken pipe", Outage::Closed),
    ("unexpected eof", Outage::Closed),
    ("no answer within", Outage::Silent),
    ("timed out", Outage::Silent),
    ("unreachable", Outage::NoRoute),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outage {
    Refused,
    Closed,
    Silent,
    NoRoute,
}

fn outage_of(e: &QueueError) -> Option<Outage> {
    let text = e.to_string().to_lowercase();
    OUT_OF_REACH
        .iter()
        .find(|(marker, _)| text.contains(marker))
        .map(|(_, outage)| *outage)
}

/// The header's one word for an outage, from the sentence [`read_failed`]
/// made of it: a Redis that refuses the password or does not answer is
/// there, and "unreachable" would send an operator to the network.
pub fn outage_word(sentence: &str) -> &'static str {
    if sentence.starts_with("Redis did not answer") {
        "not answering"
    } else if sentence.contains("authentication failed") {
        "login refused"
    } else {
        "unreachable"
    }
}

/// A failed read (or connect) said as one plain sentence for the console's
/// banner: what is wrong with the connection, without the client's Debug
/// text. A read that timed out only did not answer: the driver's "may or
/// may not have been applied" is about writes and is not repeated here.
pub fn read_failed(e: &QueueError) -> String {
    if let QueueError::Timeout(after) = e {
        return format!(
            "Redis did not answer within {}",
            crate::clock::compact(*after)
        );
    }
    let text = e.to_string();
    match outage_of(e) {
        Some(Outage::Refused) => "Redis refused the connection: nothing is listening at that \
                                  address (is redis-server running?)"
            .to_owned(),
        Some(Outage::Closed) => "Redis closed the connection".to_owned(),
        Some(Outage::Silent) => match text.split("no answer within ").nth(1) {
            Some(after) => format!("Redis did not answer within {after}"),
            None => "Redis did not answer in time".to_owned(),
        },
        Some(Outage::NoRoute) => "the network has no route to Redis".to_owned(),
        None => describe(e),
    }
}
