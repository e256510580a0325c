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
    let behaviour = Behaviour::from_arg(behaviour).expect("BEHAVIOUR");
    let queue_handle = RedisQueue::builder(url)
        .namespace(namespace.as_str())
        .command_timeout(Duration::from_secs(5))
        .connect()
        .await
        .expect("connect");
    let recorder = Recorder::to_file(
        process.parse().expect("PROCESS"),
        std::path::Path::new(history),
    );
    work(
        RecordingQueue::new(queue_handle, recorder),
        queue.clone(),
        behaviour,
        seed.parse().expect("SEED"),
        Arc::new(AtomicBool::new(false)),
    )
    .await;
}
