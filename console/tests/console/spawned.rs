//! A long-running `redq` (`metrics`, `events --follow`) under test: its
//! output read line by line as it comes, an interrupt sent like Ctrl-C,
//! and its exit awaited with a deadline. Killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use crate::seed::BIN;

pub struct Spawned {
    child: Child,
    stdout: UnboundedReceiver<String>,
    stderr: UnboundedReceiver<String>,
    /// Every stderr line read so far, for failure messages.
    pub stderr_seen: Vec<String>,
}

impl Spawned {
    /// Start `redq ARGS` with the URL and namespace in the environment.
    pub fn start(url: &str, namespace: &str, args: &[&str]) -> Spawned {
        let mut child = Command::new(BIN)
            .args(args)
            .env("REDIS_URL", url)
            .env("REDQ_NAMESPACE", namespace)
            .env_remove("REDQ_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting redq");
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = lines(child.stderr.take().unwrap());
        Spawned {
            child,
            stdout,
            stderr,
            stderr_seen: Vec::new(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next line of stdout, waiting up to `deadline`.
    pub async fn stdout_line(&mut self, deadline: Duration) -> String {
        match tokio::time::timeout(deadline, self.stdout.recv()).await {
            Ok(Some(line)) => line,
            Ok(None) => panic!("redq closed stdout; stderr: {:?}", self.stderr_seen),
            Err(_) => panic!(
                "no stdout line within {deadline:?}; stderr: {:?}",
                self.stderr_seen
            ),
        }
    }

    /// The first stderr line containing `part`, waiting up to `deadline`.
    pub async fn stderr_line(&mut self, part: &str, deadline: Duration) -> String {
        let give_up = tokio::time::Instant::now() + deadline;
        loop {
            match tokio::time::timeout_at(give_up, self.stderr.recv()).await {
                Ok(Some(line)) => {
                    self.stderr_seen.push(line.clone());
                    if line.contains(part) {
                        return line;
                    }
                }
                Ok(None) => panic!("redq ended; stderr: {:?}", self.stderr_seen),
                Err(_) => panic!(
                    "no stderr line with {part:?} within {deadline:?}; stderr: {:?}",
                    self.stderr_seen
                ),
            }
        }
    }

    /// Send SIGINT, as Ctrl-C in a terminal does.
    pub fn interrupt(&self) {
        let status = Command::new("kill")
            .args(["-INT", &self.pid().to_string()])
            .status()
            .expect("running kill");
        assert!(status.success());
    }

    /// Its exit status, waiting up to `deadline`.
    pub async fn exit(&mut self, deadline: Duration) -> ExitStatus {
        let give_up = tokio::time::Instant::now() + deadline;
        loop {
            if let Some(status) = self.child.try_wait().expect("waiting for redq") {
                return status;
            }
            assert!(
                tokio::time::Instant::now() < give_up,
                "redq still running {deadline:?} after the interrupt"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Lines of a pipe as they come, read on a thread of their own.
fn lines(pipe: impl std::io::Read + Send + 'static) -> UnboundedReceiver<String> {
    let (send, receive) = unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}
