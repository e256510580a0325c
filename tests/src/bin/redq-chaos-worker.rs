//! A recorded worker in its own process, for the fault scenarios that kill
//! (`kill -9`), stop (`SIGSTOP`) or skew the clock of (libfaketime) workers.
//!
//! Usage: `redq-chaos-worker URL NAMESPACE QUEUE BEHAVIOUR HISTORY PROCESS SEED`
//! where BEHAVIOUR is `redq_tests::chaos::workload::Behaviour::to_arg`. Every
//! call and reply is appended to the HISTORY file as it happens. Runs until
//! killed.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use redq::RedisQueue;
use redq_tests::chaos::workload::{work, Behaviour};
use redq_tests::history::{Recorder, RecordingQueue};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, namespace, queue, behaviour, history, process, seed] = args.as_slice() else {
        eprintln!("usage: redq-chaos-worker URL NAMESPACE QUEUE BEHAVIOUR HISTORY PROCESS SEED");
        std::process::exit(2);
    };
    let Some(behaviour) = Behaviour::from_arg(behaviour) else {
        fail(&format!(
            "BEHAVIOUR {behaviour:?} is not nine comma-separated numbers \
             (lease_ms,batch,work_min,work_max,nack,dead,release,abandon,extend)"
        ));
    };
    let Ok(process) = process.parse() else {
        fail(&format!("PROCESS {process:?} is not a whole number"));
    };
    let Ok(seed) = seed.parse() else {
        fail(&format!("SEED {seed:?} is not a whole number"));
    };
    let queue_handle = match RedisQueue::builder(url)
        .namespace(namespace.as_str())
        .command_timeout(Duration::from_secs(5))
        .connect()
        .await
    {
        Ok(handle) => handle,
        Err(e) => fail(&format!("connecting to redis failed: {e}")),
    };
    let recorder = Recorder::to_file(process, std::path::Path::new(history));
    // Panics (and so exits with an error and a message on stderr) when it
    // cannot claim at all; otherwise runs until killed.
    work(
        RecordingQueue::new(queue_handle, recorder),
        queue.clone(),
        behaviour,
        seed,
        Arc::new(AtomicBool::new(false)),
    )
    .await;
}

/// Says what was wrong on stderr (which the scenario keeps and shows) and exits.
fn fail(why: &str) -> ! {
    eprintln!("redq-chaos-worker: {why}");
    std::process::exit(2);
}
