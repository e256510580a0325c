//! Storage layouts of earlier versions, which this one must not misread.
//!
//! Before the job record carried its payload, payloads lived apart in a
//! `{ns}:payloads` hash. Read the new way, such jobs would come out with an
//! empty payload, so connecting to a namespace that still holds one is
//! refused, before anything is read or written.

use fred::clients::Pool;
use fred::interfaces::KeysInterface;

use crate::error::QueueError;
use crate::keys::Keys;

/// Refuse a namespace written in the earlier layout (see the module docs).
pub(crate) async fn refuse_earlier_layout(
    pool: &Pool,
    keys: &Keys,
    namespace: &str,
    redacted: &str,
    timeout: std::time::Duration,
) -> Result<(), QueueError> {
    let old = keys.earlier_payloads();
    let found: i64 = match pool.next().exists(&old).await {
        Ok(found) => found,
        // A user without access to the namespace cannot misread it either;
        // its first real command reports the refusal, as before this check.
        Err(e) if e.details().starts_with("NOPERM") => return Ok(()),
        Err(e) => return Err(QueueError::from_redis(e, timeout)),
    };
    if found == 0 {
        return Ok(());
    }
    Err(QueueError::Config(format!(
        "{redacted}: namespace {namespace:?} holds jobs in the storage layout of an earlier \
         redq (key {old} exists); finish or purge them with that version, or use another \
         namespace"
    )))
}
