//! Driving the real binary in a real terminal: tmux on a private socket,
//! keys in with send-keys, the screen out with capture-pane, waits with
//! deadlines (never fixed sleeps).

use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of our own (its own socket), killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Start `command` (a shell command line) in a 100×30 terminal, with
    /// these extra environment variables.
    pub fn start(command: &str, env: &[(&str, &str)]) -> Tmux {
        let socket = format!("redq-test-{:016x}", rand::random::<u64>());
        let mut tmux = Command::new("tmux");
        tmux.args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "100", "-y", "30", "-s", "t"]);
        for (k, v) in env {
            tmux.arg("-e").arg(format!("{k}={v}"));
            tmux.env(k, v);
        }
        tmux.env_remove("NO_COLOR").env("TERM", "xterm-256color");
        let status = tmux
            .arg(command)
            .status()
            .expect("running tmux (is it installed?)");
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    /// Press keys (tmux key names: "r", "Enter", "Escape", "C-c").
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            let status = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", "t", key])
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
        }
    }

    /// Run a tmux command on this server (`set -s set-clipboard on`,
    /// `show-buffer`); its standard output.
    pub fn command(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux command");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Resize the terminal.
    pub fn resize(&self, width: u16, height: u16) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "resize-window", "-t", "t"])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .status()
            .expect("tmux resize-window");
        assert!(status.success());
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen contains `text`; panic with the screen after
    /// `deadline`.
    pub fn wait_for(&self, text: &str, deadline: Duration) -> String {
        self.wait_until(deadline, &format!("{text:?} on screen"), |s| {
            s.contains(text)
        })
    }

    /// Wait until `check(screen)` holds.
    pub fn wait_until(
        &self,
        deadline: Duration,
        what: &str,
        check: impl Fn(&str) -> bool,
    ) -> String {
        let give_up = Instant::now() + deadline;
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if Instant::now() > give_up {
                panic!("timed out after {deadline:?} waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
