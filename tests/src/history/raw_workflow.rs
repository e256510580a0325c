//! The gate scripts for [`RawQueue`] (workflows, `lua/gate_*.lua`), so a
//! test can run a broken variant of them or of the scripts that count a
//! gate's members: sealing a gate with its waiters (recorded as an enqueue
//! of the waiters, which workers then claim) and an operator's decision on
//! a held waiter.

use fred::types::Value;

use super::{bytes, int, job_fields, s, RawQueue};
use crate::history::record::{Call, JobSpec, Reply};

/// One waiter of a gate to seal: the job, its condition (`all` |
/// `success`) and what a failed member does to it (`dead` | `cancel` | `hold`).
pub struct WaiterSpec<'a> {
    pub job: JobSpec,
    pub condition: &'a str,
    pub on_failure: &'a str,
}

impl RawQueue {
    /// Seals gate `gate` of `kind`, registering `deps` (existing jobs) as
    /// members and creating `waiters` in this queue; returns the waiters' ids.
    pub async fn seal(
        &self,
        gate: &str,
        kind: &str,
        deps: &[String],
        waiters: &[WaiterSpec<'_>],
    ) -> Vec<String> {
        let seq = self.recorder.invoke(Call::Enqueue {
            queue: self.queue.clone(),
            tags: waiters.iter().map(|w| w.job.tag.clone()).collect(),
            keys: waiters.iter().map(|w| w.job.ordering_key.clone()).collect(),
        });
        let mut args = vec![s(gate), s(kind), s(1 << 20), s(""), s(deps.len())];
        args.extend(deps.iter().map(s));
        args.push(s(waiters.len()));
        for w in waiters {
            args.extend([s(&self.queue), s(w.condition), s(w.on_failure)]);
            args.extend(job_fields(&ulid::Ulid::new().to_string(), &w.job));
        }
        args.extend([s(""), s(""), s(self.record_format)]);
        let reply = self.run("gate_seal", args).await.expect("gate_seal");
        let Value::Array(items) = reply else {
            panic!("gate_seal reply {reply:?}")
        };
        let created: Vec<(String, bool)> = items
            .chunks(2)
            .map(|p| {
                let code = int(&p[0]);
                assert!(code >= 0, "gate_seal refused: {items:?}");
                (
                    String::from_utf8_lossy(&bytes(&p[1])).into_owned(),
                    code != 0,
                )
            })
            .collect();
        let ids = created.iter().map(|(id, _)| id.clone()).collect();
        self.recorder
            .complete(seq, Reply::Enqueued { ids: created });
        ids
    }

    /// An operator's decision (`release` | `dead`) on held waiter `id`;
    /// returns the reply's code.
    pub async fn decide_held(&self, id: &str, action: &str) -> i64 {
        let reply = self
            .run("gate_decide", vec![s(id), s(action), s("checker")])
            .await
            .expect("gate_decide");
        match reply {
            Value::Array(items) => int(&items[0]),
            other => panic!("gate_decide reply {other:?}"),
        }
    }
}
