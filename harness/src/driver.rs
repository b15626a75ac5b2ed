//! The driver contract, harness side: start any delegator command, speak newline-delimited JSON
//! over its stdin/stdout (see `docs/driver-protocol.md`), capture its stderr, and kill its whole
//! process group for crash injection.

use serde_json::{Value, json};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Longest stdout line accepted from a delegator (`docs/driver-protocol.md`: 16 MiB); a longer
/// line is a contract violation, reported once and discarded up to the next newline.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// Stderr kept per case (the tail is kept).
pub const MAX_STDERR: usize = 256 * 1024;
/// Messages to the delegator queued behind one its stdin has not taken yet.
pub const WRITE_QUEUE: usize = 64;
/// Lines from the delegator read ahead of the runner.
const READ_QUEUE: usize = 256;
/// Longest excerpt of a non-protocol line kept.
const GARBAGE_EXCERPT: usize = 500;

/// What the delegator said, or what happened to it.
#[derive(Debug, Clone)]
pub enum FromDelegator {
    /// A protocol message (parsed JSON with a `type`).
    Message(Value),
    /// A line that is not a protocol message (an excerpt).
    Garbage(String),
    /// A line longer than [`MAX_LINE`] (discarded up to its newline).
    TooLong,
    /// Stdout closed (the process exited or closed it).
    Eof,
}

/// SIGKILLs a delegator's process group from any thread, synchronously (for the journal's
/// tripwire), until the process is reaped: the harness disarms it before reaping, under the same
/// lock, so a kill can never reach a process group id that was reused.
#[derive(Debug, Clone, Default)]
pub struct GroupKiller(Arc<Mutex<Option<i32>>>);

impl GroupKiller {
    /// SIGKILL the group now; false when it is already reaped (or was never started).
    pub fn kill(&self) -> bool {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match *g {
            Some(pg) => killpg(pg, nix::sys::signal::Signal::SIGKILL),
            None => false,
        }
    }

    fn arm(&self, pgid: Option<i32>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = pgid;
    }

    fn disarm(&self) {
        self.arm(None);
    }
}

fn killpg(pg: i32, sig: nix::sys::signal::Signal) -> bool {
    pg > 0 && nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pg), sig).is_ok()
}

/// A running delegator under test.
pub struct DelegatorProcess {
    child: Child,
    /// Lines to the delegator's stdin, written by a writer task; dropping it closes stdin.
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    /// When the writer task began the write it is blocked in, if any.
    writing_since: Arc<Mutex<Option<std::time::Instant>>>,
    /// Messages and events from the delegator.
    pub rx: mpsc::Receiver<FromDelegator>,
    stderr: Arc<Mutex<Vec<u8>>>,
    pgid: Option<i32>,
    killer: GroupKiller,
    reaped: bool,
    tasks: Vec<JoinHandle<()>>,
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
    /// Its stdin stayed full until the deadline: it does not read its requests.
    #[error("the delegator did not read its stdin: {queued} messages still queued at the deadline")]
    Stalled {
        /// Messages waiting.
        queued: usize,
    },
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

/// Quote `s` for a POSIX shell (left as is when it needs no quoting).
pub fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Where `program` (argv\[0\] of a delegator command) is: a path containing `/` must name an
/// executable file; a bare name is looked up on `PATH`.
pub fn resolve_program(program: &str) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return if !p.exists() {
            Err(format!("{program}: no such file"))
        } else if executable(&p) {
            Ok(p)
        } else {
            Err(format!("{program}: not an executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| format!("{program}: not found on PATH"))
}

/// Read lines of at most [`MAX_LINE`] bytes and classify them, until EOF or the receiver is gone.
async fn read_lines(out: tokio::process::ChildStdout, tx: mpsc::Sender<FromDelegator>) {
    let mut r = BufReader::with_capacity(64 * 1024, out);
    let mut line: Vec<u8> = Vec::new();
    // True while discarding the rest of an over-long line.
    let mut discarding = false;
    loop {
        // A read error ends the stream like EOF does.
        let buf = match r.fill_buf().await {
            Ok(b) => b,
            Err(_) => &[][..],
        };
        if buf.is_empty() {
            if !discarding
                && let Some(msg) = classify(&line)
                && tx.send(msg).await.is_err()
            {
                return;
            }
            let _ = tx.send(FromDelegator::Eof).await;
            return;
        }
        let (chunk, complete) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let used = chunk.len() + usize::from(complete);
        let mut msg = None;
        if !discarding {
            if line.len() + chunk.len() > MAX_LINE {
                line = Vec::new();
                discarding = !complete;
                msg = Some(FromDelegator::TooLong);
            } else {
                line.extend_from_slice(chunk);
                if complete {
                    msg = classify(&line);
                    line.clear();
                }
            }
        } else if complete {
            discarding = false;
        }
        r.consume(used);
        if let Some(m) = msg
            && tx.send(m).await.is_err()
        {
            return;
        }
    }
}

/// A protocol message or garbage; `None` for an empty line (ignored).
fn classify(line: &[u8]) -> Option<FromDelegator> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<Value>(text) {
        Ok(v) if v.get("type").and_then(Value::as_str).is_some() => FromDelegator::Message(v),
        _ => FromDelegator::Garbage(text.chars().take(GARBAGE_EXCERPT).collect()),
    })
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
        let killer = GroupKiller::default();
        killer.arm(pgid);
        let mut tasks = Vec::new();
        let (wtx, mut wrx) = mpsc::channel::<Vec<u8>>(WRITE_QUEUE);
        let writing_since = Arc::new(Mutex::new(None));
        if let Some(mut stdin) = child.stdin.take() {
            let since = writing_since.clone();
            tasks.push(tokio::spawn(async move {
                while let Some(line) = wrx.recv().await {
                    *since.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(std::time::Instant::now());
                    let r = match stdin.write_all(&line).await {
                        Ok(()) => stdin.flush().await,
                        Err(e) => Err(e),
                    };
                    *since.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    if r.is_err() {
                        // Dropping the receiver makes later sends fail.
                        return;
                    }
                }
            }));
        }
        let (tx, rx) = mpsc::channel(READ_QUEUE);
        if let Some(out) = child.stdout.take() {
            tasks.push(tokio::spawn(read_lines(out, tx)));
        }
        if let Some(mut err) = child.stderr.take() {
            let buf = stderr.clone();
            // Not aborted on drop: it ends at EOF and keeps what a killed process wrote last.
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
            stdin: Some(wtx),
            writing_since,
            rx,
            stderr,
            pgid,
            killer,
            reaped: false,
            tasks,
        })
    }

    /// The handle that SIGKILLs this process's group synchronously, until it is reaped.
    pub fn killer(&self) -> GroupKiller {
        self.killer.clone()
    }

    /// Send one protocol message. It is queued for a writer task, waiting at most until
    /// `deadline` for room in the queue: a delegator that does not read its stdin never blocks
    /// the harness past the deadline ([`DriverError::Stalled`]).
    pub async fn send(
        &mut self,
        msg: &Value,
        deadline: tokio::time::Instant,
    ) -> Result<(), DriverError> {
        let Some(stdin) = self.stdin.as_ref() else {
            return Err(DriverError::Write(std::io::Error::other("stdin closed")));
        };
        let mut line =
            serde_json::to_vec(msg).map_err(|e| DriverError::Write(std::io::Error::other(e)))?;
        line.push(b'\n');
        match tokio::time::timeout_at(deadline, stdin.send(line)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(DriverError::Write(std::io::Error::other(
                "its stdin is closed",
            ))),
            Err(_) => Err(DriverError::Stalled {
                queued: WRITE_QUEUE - stdin.capacity(),
            }),
        }
    }

    /// How long the writer has been blocked in one write to the delegator's stdin (None when
    /// it is not writing), and how many more messages wait behind it.
    pub fn write_blocked(&self) -> Option<(Duration, usize)> {
        let since = (*self.writing_since.lock().unwrap_or_else(|p| p.into_inner()))?;
        let queued = self
            .stdin
            .as_ref()
            .map_or(0, |s| WRITE_QUEUE - s.capacity());
        Some((since.elapsed(), queued))
    }

    /// Wait for the next message, bounded: `None` when nothing came in time. After stdout
    /// closed this returns `Eof` again at once.
    pub async fn recv(&mut self, timeout: Duration) -> Option<FromDelegator> {
        match tokio::time::timeout(timeout, self.rx.recv()).await {
            Err(_) => None,
            Ok(None) => Some(FromDelegator::Eof),
            Ok(Some(m)) => Some(m),
        }
    }

    /// SIGKILL the whole process group (crash injection) and reap the child.
    pub async fn kill_group(&mut self) {
        if let Some(pg) = self.pgid {
            killpg(pg, nix::sys::signal::Signal::SIGKILL);
        }
        self.killer.disarm();
        let _ = self.child.kill().await;
        self.reaped = true;
    }

    /// Close stdin (EOF: finish and exit), wait up to `grace`, then SIGTERM, then SIGKILL.
    /// Whatever is left of the process group afterwards is killed.
    pub async fn finish(&mut self, grace: Duration) -> Option<i32> {
        self.stdin.take();
        self.killer.disarm();
        let code = if let Ok(Ok(s)) = tokio::time::timeout(grace, self.child.wait()).await {
            s.code()
        } else {
            if let Some(pg) = self.pgid {
                killpg(pg, nix::sys::signal::Signal::SIGTERM);
            }
            if let Ok(Ok(s)) = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await
            {
                s.code()
            } else {
                if let Some(pg) = self.pgid {
                    killpg(pg, nix::sys::signal::Signal::SIGKILL);
                }
                let _ = self.child.kill().await;
                None
            }
        };
        // Background processes the delegator left behind (they hold the group id, so it
        // cannot have been reused).
        if let Some(pg) = self.pgid {
            killpg(pg, nix::sys::signal::Signal::SIGKILL);
        }
        self.reaped = true;
        code
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

impl Drop for DelegatorProcess {
    fn drop(&mut self) {
        // `kill_on_drop` only reaches the child; take its whole group (still unreaped, so the
        // id is still ours).
        if !self.reaped {
            self.killer.disarm();
            if let Some(pg) = self.pgid {
                killpg(pg, nix::sys::signal::Signal::SIGKILL);
            }
        }
        for t in &self.tasks {
            t.abort();
        }
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

    #[test]
    fn shell_quote_survives_a_real_shell() {
        assert_eq!(shell_quote("a2a-delegator"), "a2a-delegator");
        for s in ["a b", "it's", "sh -c \"echo 'x'\"", "", "$HOME `x` \\ !"] {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", shell_quote(s))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), s);
        }
    }

    #[tokio::test]
    async fn an_over_long_line_is_one_event_and_the_next_line_is_read() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut child = Command::new("sh")
            .args([
                "-c",
                "head -c 17825792 /dev/zero | tr '\\0' x; echo; echo '{\"type\":\"x\"}'",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        tokio::spawn(read_lines(out, tx));
        let mut got = Vec::new();
        while let Some(m) = rx.recv().await {
            got.push(m);
        }
        let _ = child.wait().await;
        assert!(matches!(got[0], FromDelegator::TooLong), "{got:?}");
        assert!(matches!(&got[1], FromDelegator::Message(v) if v["type"] == "x"));
        assert!(matches!(got[2], FromDelegator::Eof));
        assert_eq!(got.len(), 3);
    }
}
