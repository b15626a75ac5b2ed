//! The driver contract, harness side: start any delegator command, speak newline-delimited JSON
//! over its stdin/stdout (see `docs/driver-protocol.md`), capture its stderr, and kill its whole
//! process group for crash injection.

use serde_json::{Value, json};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// Longest stdout line accepted from a delegator; longer lines are a contract violation.
pub const MAX_LINE: usize = 4 * 1024 * 1024;
/// Stderr kept per case (the tail is kept).
pub const MAX_STDERR: usize = 256 * 1024;

/// What the delegator said, or what happened to it.
#[derive(Debug, Clone)]
pub enum FromDelegator {
    /// A protocol message (parsed JSON with a `type`).
    Message(Value),
    /// A line that is not a protocol message.
    Garbage(String),
    /// Stdout closed (the process exited or closed it).
    Eof,
}

/// A running delegator under test.
pub struct DelegatorProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Messages and events from the delegator.
    pub rx: mpsc::Receiver<FromDelegator>,
    stderr: Arc<Mutex<Vec<u8>>>,
    pgid: Option<i32>,
}

/// The delegator could not be started or talked to.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The command line is empty or malformed.
    #[error("bad delegator command {0:?}")]
    BadCommand(String),
    /// Spawning failed.
    #[error("cannot start delegator {cmd:?}: {source}")]
    Spawn {
        /// The command.
        cmd: String,
        /// The error.
        source: std::io::Error,
    },
    /// Writing to its stdin failed.
    #[error("cannot write to the delegator: {0}")]
    Write(std::io::Error),
}

/// Split a command line on whitespace, honouring single and double quotes.
pub fn split_command(cmd: &str) -> Result<Vec<String>, DriverError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(DriverError::BadCommand(cmd.to_string()));
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    if out.is_empty() {
        return Err(DriverError::BadCommand(cmd.to_string()));
    }
    Ok(out)
}

impl DelegatorProcess {
    /// Start `cmd` in its own process group.
    pub fn spawn(cmd: &str, stderr: Arc<Mutex<Vec<u8>>>) -> Result<DelegatorProcess, DriverError> {
        let argv = split_command(cmd)?;
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = c.spawn().map_err(|source| DriverError::Spawn {
            cmd: cmd.to_string(),
            source,
        })?;
        let pgid = child.id().map(|p| p as i32);
        let stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel(1024);
        if let Some(out) = child.stdout.take() {
            tokio::spawn(async move {
                let mut r = BufReader::new(out);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    // A read error ends the stream like EOF does.
                    let n = (&mut r)
                        .take(MAX_LINE as u64 + 1)
                        .read_until(b'\n', &mut line)
                        .await
                        .unwrap_or_default();
                    if n == 0 {
                        let _ = tx.send(FromDelegator::Eof).await;
                        return;
                    }
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim();
                    if text.is_empty() {
                        continue;
                    }
                    let msg = match serde_json::from_str::<Value>(text) {
                        Ok(v) if v.get("type").and_then(Value::as_str).is_some() => {
                            FromDelegator::Message(v)
                        }
                        _ => FromDelegator::Garbage(text.chars().take(500).collect()),
                    };
                    if tx.send(msg).await.is_err() {
                        return;
                    }
                }
            });
        }
        if let Some(mut err) = child.stderr.take() {
            let buf = stderr.clone();
            tokio::spawn(async move {
                let mut chunk = vec![0u8; 8192];
                while let Ok(n) = err.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    let mut b = buf.lock().unwrap_or_else(|p| p.into_inner());
                    b.extend_from_slice(&chunk[..n]);
                    if b.len() > MAX_STDERR {
                        let cut = b.len() - MAX_STDERR;
                        b.drain(..cut);
                    }
                }
            });
        }
        Ok(DelegatorProcess {
            child,
            stdin,
            rx,
            stderr,
            pgid,
        })
    }

    /// Send one protocol message.
    pub async fn send(&mut self, msg: &Value) -> Result<(), DriverError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(DriverError::Write(std::io::Error::other("stdin closed")));
        };
        let mut line =
            serde_json::to_vec(msg).map_err(|e| DriverError::Write(std::io::Error::other(e)))?;
        line.push(b'\n');
        stdin.write_all(&line).await.map_err(DriverError::Write)?;
        stdin.flush().await.map_err(DriverError::Write)
    }

    /// Wait for the next message, bounded.
    pub async fn recv(&mut self, timeout: Duration) -> Option<FromDelegator> {
        tokio::time::timeout(timeout, self.rx.recv())
            .await
            .ok()
            .flatten()
    }

    /// SIGKILL the whole process group (crash injection) and reap the child.
    pub async fn kill_group(&mut self) {
        if let Some(pg) = self.pgid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pg),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill().await;
    }

    /// Close stdin (EOF: finish and exit), wait up to `grace`, then SIGTERM, then SIGKILL.
    pub async fn finish(&mut self, grace: Duration) -> Option<i32> {
        self.stdin.take();
        if let Ok(Ok(s)) = tokio::time::timeout(grace, self.child.wait()).await {
            return s.code();
        }
        if let Some(pg) = self.pgid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pg),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        if let Ok(Ok(s)) = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            return s.code();
        }
        self.kill_group().await;
        None
    }

    /// Peak resident memory of the delegator process so far (`VmHWM`, KiB), where /proc exists.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let pid = self.pgid?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    }

    /// The stderr captured so far (tail).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }
}

/// Build the `init` message.
pub fn init_message(
    store_dir: &str,
    recovering: bool,
    agents: &[String],
    webhook: Option<&str>,
    self_url: &str,
    credential: &str,
    options: Value,
) -> Value {
    json!({
        "type": "init",
        "store_dir": store_dir,
        "recovering": recovering,
        "agents": agents,
        "webhook_base_url": webhook,
        "self_url": self_url,
        "credential": credential,
        "options": options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_commands() {
        assert_eq!(
            split_command("a b  'c d' \"e\"").unwrap(),
            vec!["a", "b", "c d", "e"]
        );
        assert!(split_command("  ").is_err());
        assert!(split_command("a 'b").is_err());
    }
}
