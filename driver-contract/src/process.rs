//! The delegator under test as a process: start any delegator command, write the typed driver
//! contract's [`ToDelegator`] lines to its stdin, read its stdout lines (see
//! `docs/driver-protocol.md`), capture its stderr, and kill its whole process group for crash
//! injection.
//!
//! Lines from the delegator are handed on as raw JSON ([`DelegatorOutput::Message`]): the runner
//! checks what a foreign delegator wrote against the contract's schemas before it parses it into
//! the typed [`FromDelegator`](crate::FromDelegator).

use crate::{Init, InitOptions, ToDelegator};
use futures::StreamExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

/// Longest stdout line accepted from a delegator (`docs/driver-protocol.md`: 16 MiB); a longer
/// line is a contract violation, reported once and discarded up to the next newline.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// Stderr kept per case (the tail is kept).
pub const MAX_STDERR: usize = 256 * 1024;
/// Messages to the delegator queued behind one its stdin has not taken yet.
pub const WRITE_QUEUE: usize = 64;
/// At most this many bytes of queued lines are gathered into one write to the delegator's stdin
/// (one line may exceed it).
const WRITE_BATCH_BYTES: usize = 256 * 1024;
/// Lines from the delegator read ahead of the runner.
const READ_QUEUE: usize = 256;
/// Longest excerpt of a non-protocol line kept.
const GARBAGE_EXCERPT: usize = 500;
/// How often a watched process group's memory is sampled ([`DelegatorProcess::watch_memory`]).
pub const MEMORY_SAMPLE_INTERVAL: Duration = Duration::from_millis(20);
/// Processes of one group followed at most (more are counted in the reading).
const MAX_GROUP_PROCESSES: usize = 256;

/// The memory of a delegator's whole process group while it ran: every process whose process
/// group is the delegator's, found in `/proc` every [`MEMORY_SAMPLE_INTERVAL`]. (This machine
/// has no cgroup v2 memory controller to read `memory.peak` from; see `scenarios/README.md`.)
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemoryReading {
    /// The group's resident memory at `init_ok` (KiB): the baseline.
    pub baseline_kib: Option<u64>,
    /// The group's peak (KiB): the sum, over every process of the group seen, of its own peak
    /// resident set (`VmHWM`, kept after it exits). An upper bound of the group's peak that no
    /// sampling gap can miss for a process seen once.
    pub peak_kib: u64,
    /// The highest sampled sum of the group's resident sets (KiB).
    pub sampled_peak_kib: u64,
    /// Processes of the group seen.
    pub processes: usize,
    /// Samples taken.
    pub samples: u64,
}

/// What the sampler has seen of a process group.
#[derive(Debug, Default)]
struct GroupMemory {
    /// Peak resident set (KiB) of each process seen.
    hwm: BTreeMap<i32, u64>,
    sampled_peak_kib: u64,
    samples: u64,
}

/// The pids of every process in process group `pgid` (from `/proc/<pid>/stat`).
fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|d| d.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| process_group(*pid) == Some(pgid))
        .collect()
}

/// The process group of `pid`: the fifth field of `/proc/<pid>/stat`, counted after the
/// command name (which may hold spaces and parentheses).
fn process_group(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// `VmRSS` and `VmHWM` of `pid` (KiB).
fn resident_kib(pid: i32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

impl GroupMemory {
    /// One sample of the group; the current sum of its resident sets (KiB).
    fn sample(&mut self, pgid: i32) -> u64 {
        let mut rss_sum = 0;
        for pid in group_members(pgid) {
            let Some((rss, hwm)) = resident_kib(pid) else {
                continue;
            };
            // A pid that left the group (and was reused) is not read again: process_group
            // was checked just before.
            if self.hwm.len() < MAX_GROUP_PROCESSES || self.hwm.contains_key(&pid) {
                let e = self.hwm.entry(pid).or_default();
                *e = (*e).max(hwm);
            }
            rss_sum += rss;
        }
        self.sampled_peak_kib = self.sampled_peak_kib.max(rss_sum);
        self.samples += 1;
        rss_sum
    }

    fn reading(&self) -> MemoryReading {
        MemoryReading {
            baseline_kib: None,
            peak_kib: self.hwm.values().sum::<u64>().max(self.sampled_peak_kib),
            sampled_peak_kib: self.sampled_peak_kib,
            processes: self.hwm.len(),
            samples: self.samples,
        }
    }
}

/// Samples a process group's memory on its own thread until stopped.
struct MemoryWatch {
    memory: Arc<Mutex<GroupMemory>>,
    stop: Arc<AtomicBool>,
}

impl MemoryWatch {
    fn start(pgid: i32) -> MemoryWatch {
        let memory = Arc::new(Mutex::new(GroupMemory::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, st) = (memory.clone(), stop.clone());
        std::thread::spawn(move || {
            // Bounded: stopped when the process is stopped, reaped or dropped.
            while !st.load(Ordering::SeqCst) {
                m.lock().unwrap_or_else(|p| p.into_inner()).sample(pgid);
                std::thread::sleep(MEMORY_SAMPLE_INTERVAL);
            }
        });
        MemoryWatch { memory, stop }
    }

    fn reading(&self) -> MemoryReading {
        self.memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .reading()
    }
}

impl Drop for MemoryWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One of the delegator's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputStream {
    /// Its stdout: protocol lines and anything else it writes there.
    Stdout,
    /// Its stderr.
    Stderr,
}

/// Receives a copy of every byte read from a delegator's stdout and stderr, in the order read:
/// stdout before it is split into lines (so non-protocol, over-long and non-UTF-8 lines are seen
/// too), stderr before the kept tail ([`MAX_STDERR`]) is cut. Called on the reader tasks: it
/// must be quick and must not block for long.
pub type OutputTap = Arc<dyn Fn(OutputStream, &[u8]) + Send + Sync>;

/// An [`AsyncRead`](tokio::io::AsyncRead) that hands every byte it reads to a tap.
struct Tapped<R> {
    inner: R,
    stream: OutputStream,
    tap: Option<OutputTap>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Tapped<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        if let (std::task::Poll::Ready(Ok(())), Some(tap)) = (&polled, &this.tap) {
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                tap(this.stream, new);
            }
        }
        polled
    }
}

/// What the delegator wrote on its stdout, or what happened to it.
#[derive(Debug, Clone)]
pub enum DelegatorOutput {
    /// A protocol message: a JSON object with a string `type`, not yet checked against the
    /// contract.
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

/// The writer task's write in progress: when it last made progress, and how many whole lines
/// wait behind the one it is blocked in.
#[derive(Debug, Clone, Copy)]
struct Writing {
    since: std::time::Instant,
    lines_after: usize,
}

/// Write the lines from `wrx` to the delegator's stdin until either ends. The lines queued
/// meanwhile go in one write (thousands of `delegate` lines at once would otherwise wake the
/// delegator's reader once each); `writing` says how long the write has made no progress, so a
/// delegator that reads slowly is not taken for one that stopped reading.
async fn write_batches<W: tokio::io::AsyncWrite + Unpin>(
    mut stdin: W,
    mut wrx: mpsc::Receiver<Vec<u8>>,
    writing: Arc<Mutex<Option<Writing>>>,
) {
    let set = |w: Option<Writing>| *writing.lock().unwrap_or_else(|p| p.into_inner()) = w;
    let newlines = |bytes: &[u8]| bytes.iter().filter(|&&b| b == b'\n').count();
    while let Some(mut batch) = wrx.recv().await {
        while batch.len() < WRITE_BATCH_BYTES {
            let Ok(more) = wrx.try_recv() else { break };
            batch.extend_from_slice(&more);
        }
        let mut lines_left = newlines(&batch);
        let mut written = 0;
        let r = loop {
            // Each write that makes progress restarts the clock.
            set(Some(Writing {
                since: std::time::Instant::now(),
                lines_after: lines_left.saturating_sub(1),
            }));
            if written == batch.len() {
                break stdin.flush().await;
            }
            match stdin.write(&batch[written..]).await {
                Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    lines_left -= newlines(&batch[written..written + n]);
                    written += n;
                }
                Err(e) => break Err(e),
            }
        };
        set(None);
        if r.is_err() {
            // Dropping the receiver makes later sends fail.
            return;
        }
    }
}

/// A running delegator under test.
pub struct DelegatorProcess {
    child: Child,
    /// Lines to the delegator's stdin, written by a writer task; dropping it closes stdin.
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    /// The write the writer task is blocked in, if any.
    writing: Arc<Mutex<Option<Writing>>>,
    /// Messages and events from the delegator.
    pub rx: mpsc::Receiver<DelegatorOutput>,
    stderr: Arc<Mutex<Vec<u8>>>,
    pgid: Option<i32>,
    killer: GroupKiller,
    reaped: bool,
    tasks: Vec<JoinHandle<()>>,
    /// The stderr reader: awaited (bounded) once the process is stopped, so that what it wrote
    /// last is in the capture.
    stderr_reader: Option<JoinHandle<()>>,
    memory: Option<MemoryWatch>,
}

/// The delegator process could not be started or written to (not to be confused with an `error`
/// line the delegator writes, [`ErrorReply`](crate::ErrorReply)).
#[derive(Debug, thiserror::Error)]
pub enum DelegatorProcessError {
    /// The command line is empty or malformed.
    #[error("bad delegator command {cmd:?}: {reason}")]
    BadCommand {
        /// The command.
        cmd: String,
        /// What is wrong with it.
        reason: String,
    },
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

/// A delegator command line: leading `NAME=value` environment assignments, the program and
/// its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// Environment variables set for the delegator (`NAME=value` words before the program).
    pub env: Vec<(String, String)>,
    /// The program (a name looked up on `PATH`, or a path).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// Split a command line the way a POSIX shell splits words (quotes and backslash escapes, no
/// expansion); leading `NAME=value` words set the delegator's environment, as in
/// `A2A_LOG=debug a2a-delegator drive`.
pub fn split_command(cmd: &str) -> Result<CommandLine, DelegatorProcessError> {
    let bad = |reason: &str| DelegatorProcessError::BadCommand {
        cmd: cmd.to_string(),
        reason: reason.to_string(),
    };
    let words = shell_words::split(cmd).map_err(|e| bad(&e.to_string()))?;
    let mut words = words.into_iter().peekable();
    let mut env = Vec::new();
    while let Some((k, v)) = words.peek().and_then(|w| env_assignment(w)) {
        env.push((k, v));
        words.next();
    }
    let program = words.next().ok_or_else(|| bad("no program"))?;
    Ok(CommandLine {
        env,
        program,
        args: words.collect(),
    })
}

/// `NAME=value` with a shell variable name.
fn env_assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| (name.to_string(), value.to_string()))
}

/// Quote `s` for a POSIX shell (left as is when it needs no quoting); [`split_command`] reads
/// it back.
pub fn shell_quote(s: &str) -> String {
    shell_words::quote(s).into_owned()
}

/// The program of a delegator command is not there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// A bare name not found on `PATH`.
    #[error("{0}: not found on PATH")]
    NotOnPath(String),
    /// A path that names nothing.
    #[error("{0}: no such file")]
    NoSuchFile(String),
    /// A path that names something not executable.
    #[error("{0}: not an executable file")]
    NotExecutable(String),
}

/// Where `program` (the program of a delegator command) is: a path containing `/` must name an
/// executable file; a bare name is looked up on `PATH`.
pub fn resolve_program(program: &str) -> Result<std::path::PathBuf, ProgramError> {
    which::which(program).map_err(|_| {
        if !program.contains('/') {
            ProgramError::NotOnPath(program.to_string())
        } else if !std::path::Path::new(program).exists() {
            ProgramError::NoSuchFile(program.to_string())
        } else {
            ProgramError::NotExecutable(program.to_string())
        }
    })
}

/// Read lines of at most [`MAX_LINE`] bytes and classify them, until EOF or the receiver is gone.
async fn read_lines<R: tokio::io::AsyncRead + Unpin>(out: R, tx: mpsc::Sender<DelegatorOutput>) {
    let codec = LinesCodec::new_with_max_length(MAX_LINE);
    let mut lines = FramedRead::with_capacity(out, codec, 64 * 1024);
    // After a decoder error `FramedRead` yields `None` once and then reads on.
    let mut after_error = false;
    loop {
        let msg = match lines.next().await {
            Some(Ok(line)) => {
                after_error = false;
                classify(&line)
            }
            // The codec discards the rest of the line up to its newline.
            Some(Err(LinesCodecError::MaxLineLengthExceeded)) => {
                after_error = true;
                Some(DelegatorOutput::TooLong)
            }
            // The line (consumed) is not UTF-8: garbage, not a protocol message.
            Some(Err(LinesCodecError::Io(e))) if e.kind() == std::io::ErrorKind::InvalidData => {
                after_error = true;
                Some(DelegatorOutput::Garbage(format!(
                    "(a line that is not UTF-8: {e})"
                )))
            }
            None if after_error => {
                after_error = false;
                continue;
            }
            // A read error ends the stream like EOF does.
            Some(Err(LinesCodecError::Io(_))) | None => {
                let _ = tx.send(DelegatorOutput::Eof).await;
                return;
            }
        };
        if let Some(m) = msg
            && tx.send(m).await.is_err()
        {
            return;
        }
    }
}

/// A protocol message or garbage; `None` for an empty line (ignored).
fn classify(line: &str) -> Option<DelegatorOutput> {
    let text = line.trim();
    if text.is_empty() {
        return None;
    }
    Some(match serde_json::from_str::<Value>(text) {
        Ok(v) if v.get("type").and_then(Value::as_str).is_some() => DelegatorOutput::Message(v),
        _ => DelegatorOutput::Garbage(text.chars().take(GARBAGE_EXCERPT).collect()),
    })
}

impl DelegatorProcess {
    /// Start `cmd` in its own process group.
    pub fn spawn(
        cmd: &str,
        stderr: Arc<Mutex<Vec<u8>>>,
    ) -> Result<DelegatorProcess, DelegatorProcessError> {
        Self::spawn_tapped(cmd, stderr, None)
    }

    /// [`Self::spawn`], with `tap` (when given) receiving every byte the process writes on
    /// stdout and stderr as it is read.
    pub fn spawn_tapped(
        cmd: &str,
        stderr: Arc<Mutex<Vec<u8>>>,
        tap: Option<OutputTap>,
    ) -> Result<DelegatorProcess, DelegatorProcessError> {
        let line = split_command(cmd)?;
        let mut c = Command::new(&line.program);
        c.args(&line.args)
            .envs(line.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = c.spawn().map_err(|source| DelegatorProcessError::Spawn {
            cmd: cmd.to_string(),
            source,
        })?;
        let pgid = child.id().map(|p| p as i32);
        let killer = GroupKiller::default();
        killer.arm(pgid);
        let mut tasks = Vec::new();
        let (wtx, wrx) = mpsc::channel::<Vec<u8>>(WRITE_QUEUE);
        let writing = Arc::new(Mutex::new(None));
        if let Some(stdin) = child.stdin.take() {
            tasks.push(tokio::spawn(write_batches(stdin, wrx, writing.clone())));
        }
        let (tx, rx) = mpsc::channel(READ_QUEUE);
        if let Some(out) = child.stdout.take() {
            let out = Tapped {
                inner: out,
                stream: OutputStream::Stdout,
                tap: tap.clone(),
            };
            tasks.push(tokio::spawn(read_lines(out, tx)));
        }
        let mut stderr_reader = None;
        if let Some(err) = child.stderr.take() {
            let mut err = Tapped {
                inner: err,
                stream: OutputStream::Stderr,
                tap,
            };
            let buf = stderr.clone();
            // Not aborted on drop: it ends at EOF and keeps what a killed process wrote last.
            stderr_reader = Some(tokio::spawn(async move {
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
            }));
        }
        Ok(DelegatorProcess {
            child,
            stdin: Some(wtx),
            writing,
            rx,
            stderr,
            pgid,
            killer,
            reaped: false,
            tasks,
            stderr_reader,
            memory: None,
        })
    }

    /// The handle that SIGKILLs this process's group synchronously, until it is reaped.
    pub fn killer(&self) -> GroupKiller {
        self.killer.clone()
    }

    /// Send one protocol message. It is queued for a writer task, waiting at most until
    /// `deadline` for room in the queue: a delegator that does not read its stdin never blocks
    /// the harness past the deadline ([`DelegatorProcessError::Stalled`]).
    pub async fn send(
        &mut self,
        msg: &ToDelegator,
        deadline: tokio::time::Instant,
    ) -> Result<(), DelegatorProcessError> {
        let Some(stdin) = self.stdin.as_ref() else {
            return Err(DelegatorProcessError::Write(std::io::Error::other(
                "stdin closed",
            )));
        };
        let line = msg
            .to_line()
            .map_err(|e| DelegatorProcessError::Write(std::io::Error::other(e)))?;
        match tokio::time::timeout_at(deadline, stdin.send(line.into_bytes())).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(DelegatorProcessError::Write(std::io::Error::other(
                "its stdin is closed",
            ))),
            Err(_) => Err(DelegatorProcessError::Stalled {
                queued: WRITE_QUEUE - stdin.capacity(),
            }),
        }
    }

    /// How long the writer has been blocked in one write to the delegator's stdin (None when
    /// it is not writing), and how many more messages wait behind it.
    pub fn write_blocked(&self) -> Option<(Duration, usize)> {
        let w = (*self.writing.lock().unwrap_or_else(|p| p.into_inner()))?;
        let queued = self
            .stdin
            .as_ref()
            .map_or(0, |s| WRITE_QUEUE - s.capacity());
        Some((w.since.elapsed(), queued + w.lines_after))
    }

    /// Wait for the next message, bounded: `None` when nothing came in time. After stdout
    /// closed this returns `Eof` again at once.
    pub async fn recv(&mut self, timeout: Duration) -> Option<DelegatorOutput> {
        match tokio::time::timeout(timeout, self.rx.recv()).await {
            Err(_) => None,
            Ok(None) => Some(DelegatorOutput::Eof),
            Ok(Some(m)) => Some(m),
        }
    }

    /// SIGKILL the whole process group (crash injection) and reap the child.
    pub async fn kill_group(&mut self) {
        self.stop_memory_watch();
        if let Some(pg) = self.pgid {
            killpg(pg, nix::sys::signal::Signal::SIGKILL);
        }
        self.killer.disarm();
        let _ = self.child.kill().await;
        self.reaped = true;
        self.drain_stderr().await;
    }

    /// Wait (at most a second) for the stderr reader to reach EOF once the group is gone.
    async fn drain_stderr(&mut self) {
        if let Some(h) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), h).await;
        }
    }

    /// Close stdin (EOF: finish and exit), wait up to `grace`, then SIGTERM, then SIGKILL.
    /// Whatever is left of the process group afterwards is killed.
    pub async fn finish(&mut self, grace: Duration) -> Option<i32> {
        self.stop_memory_watch();
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
        self.drain_stderr().await;
        code
    }

    /// Start sampling the memory of the whole process group (every process whose process
    /// group is this one's, children included) until the process is stopped.
    pub fn watch_memory(&mut self) {
        if let (None, Some(pg)) = (&self.memory, self.pgid) {
            self.memory = Some(MemoryWatch::start(pg));
        }
    }

    /// The group's memory so far (after [`Self::watch_memory`]), with one more sample taken now
    /// while the group is still there.
    pub fn memory(&self) -> Option<MemoryReading> {
        let w = self.memory.as_ref()?;
        if let (Some(pg), false) = (self.pgid, self.reaped) {
            w.memory
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .sample(pg);
        }
        Some(w.reading())
    }

    /// Stop sampling before the process is reaped: its group id may be reused afterwards.
    fn stop_memory_watch(&self) {
        if let Some(w) = &self.memory {
            w.stop.store(true, Ordering::SeqCst);
        }
    }

    /// The resident memory of the whole process group now (KiB), where /proc exists.
    pub fn group_rss_kib(&self) -> Option<u64> {
        let pg = self.pgid.filter(|_| !self.reaped)?;
        let pids = group_members(pg);
        if pids.is_empty() {
            return None;
        }
        Some(
            pids.into_iter()
                .filter_map(resident_kib)
                .map(|(rss, _)| rss)
                .sum(),
        )
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
    options: InitOptions,
) -> ToDelegator {
    ToDelegator::Init(Init {
        store_dir: Some(store_dir.to_string()),
        recovering,
        agents: agents.to_vec(),
        webhook_base_url: webhook.map(str::to_string),
        webhook_listen: None,
        self_url: self_url.to_string(),
        credential: Some(credential.to_string()),
        agent_credentials: Default::default(),
        extensions: Vec::new(),
        fetch_origins: Vec::new(),
        card_signatures: None,
        tls_roots: None,
        options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<String> {
        let l = split_command(cmd).unwrap();
        std::iter::once(l.program).chain(l.args).collect()
    }

    /// Queued lines go to stdin in one batch; while the reader does not read, the writer
    /// reports itself blocked with the lines behind the first; once everything is read, it
    /// reports nothing.
    #[tokio::test]
    async fn queued_lines_go_in_one_batch_and_a_blocked_write_counts_the_lines_behind_it() {
        let (pipe_in, mut pipe_out) = tokio::io::duplex(8);
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        for line in ["first line\n", "second\n", "third\n"] {
            tx.send(line.as_bytes().to_vec()).await.unwrap();
        }
        let writing = Arc::new(Mutex::new(None));
        let writer = tokio::spawn(write_batches(pipe_in, rx, writing.clone()));
        let state = || *writing.lock().unwrap();
        let reported = |lines_after: usize| async move {
            tokio::time::timeout(Duration::from_secs(5), async {
                while state().is_none_or(|w: Writing| w.lines_after != lines_after) {
                    tokio::task::yield_now().await;
                }
            })
            .await
            .is_ok()
        };
        // The pipe takes 8 bytes, then the write blocks inside the first line: two lines wait
        // behind it.
        assert!(reported(2).await, "blocked in the first line");
        let mut head = [0u8; 8];
        pipe_out.read_exact(&mut head).await.unwrap();
        // The next 8 bytes end the first line: the write now blocks inside the second.
        assert!(reported(1).await, "blocked in the second line");
        drop(tx);
        let mut rest = String::new();
        pipe_out.read_to_string(&mut rest).await.unwrap();
        assert_eq!(
            format!("{}{rest}", String::from_utf8_lossy(&head)),
            "first line\nsecond\nthird\n"
        );
        writer.await.unwrap();
        assert!(state().is_none(), "nothing left to write");
    }

    #[test]
    fn splits_quoted_commands() {
        assert_eq!(words("a b  'c d' \"e\""), vec!["a", "b", "c d", "e"]);
        assert_eq!(
            words(r#"a "it's" 'say "hi"' x\ y"#),
            vec!["a", "it's", "say \"hi\"", "x y"]
        );
        assert_eq!(
            words("'/opt/my tools/a2a-delegator' drive"),
            vec!["/opt/my tools/a2a-delegator", "drive"]
        );
        assert_eq!(words("a ''"), vec!["a", ""]);
        assert!(matches!(
            split_command("  "),
            Err(DelegatorProcessError::BadCommand { .. })
        ));
        let err = split_command("a 'b").unwrap_err().to_string();
        assert!(err.starts_with("bad delegator command \"a 'b\": "), "{err}");
    }

    #[test]
    fn leading_assignments_set_the_environment() {
        let l = split_command("RUST_LOG=debug A2A_X='a b' a2a-delegator drive K=V").unwrap();
        assert_eq!(
            l.env,
            vec![
                ("RUST_LOG".to_string(), "debug".to_string()),
                ("A2A_X".to_string(), "a b".to_string())
            ]
        );
        assert_eq!(l.program, "a2a-delegator");
        assert_eq!(
            l.args,
            vec!["drive", "K=V"],
            "only leading words are assignments"
        );
        // Not a variable name: the program.
        assert_eq!(split_command("1X=2 prog").unwrap().program, "1X=2");
        assert!(
            split_command("VAR=1").is_err(),
            "assignments alone name no program"
        );
    }

    #[tokio::test]
    async fn the_environment_reaches_the_delegator() {
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut p = DelegatorProcess::spawn(
            r#"A2A_GREETING='{"type":"x","v":"hi there"}' sh -c 'echo "$A2A_GREETING"'"#,
            stderr,
        )
        .unwrap();
        let got = p.recv(Duration::from_secs(10)).await;
        assert!(
            matches!(&got, Some(DelegatorOutput::Message(v)) if v["v"] == "hi there"),
            "{got:?}"
        );
        p.finish(Duration::from_secs(5)).await;
    }

    #[tokio::test]
    async fn the_tap_sees_every_byte_of_both_streams() {
        let seen: Arc<Mutex<BTreeMap<&'static str, Vec<u8>>>> = Arc::default();
        let s = seen.clone();
        let tap: OutputTap = Arc::new(move |stream, bytes| {
            let key = match stream {
                OutputStream::Stdout => "out",
                OutputStream::Stderr => "err",
            };
            s.lock()
                .unwrap()
                .entry(key)
                .or_default()
                .extend_from_slice(bytes);
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut p = DelegatorProcess::spawn_tapped(
            r#"sh -c 'printf "not json\n\377x\n{\"type\":\"x\"}\n"; printf "oops\n" >&2'"#,
            stderr,
            Some(tap),
        )
        .unwrap();
        let mut got = Vec::new();
        while let Some(m) = p.recv(Duration::from_secs(10)).await {
            if matches!(m, DelegatorOutput::Eof) {
                break;
            }
            got.push(m);
        }
        p.finish(Duration::from_secs(5)).await;
        assert_eq!(got.len(), 3, "{got:?}");
        let seen = seen.lock().unwrap();
        assert_eq!(seen["out"], b"not json\n\xffx\n{\"type\":\"x\"}\n".to_vec());
        assert_eq!(seen["err"], b"oops\n".to_vec());
    }

    #[test]
    fn shell_quote_survives_a_real_shell_and_split_command() {
        assert_eq!(shell_quote("a2a-delegator"), "a2a-delegator");
        for s in [
            "a b",
            "it's",
            "sh -c \"echo 'x'\"",
            "",
            "$HOME `x` \\ !",
            "A=1",
        ] {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", shell_quote(s))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), s);
            assert_eq!(words(&format!("prog {}", shell_quote(s))), vec!["prog", s]);
        }
    }

    #[test]
    fn programs_are_resolved_on_path_or_by_path() {
        assert!(resolve_program("sh").is_ok_and(|p| p.is_absolute()));
        assert_eq!(
            resolve_program("no-such-program-a2a"),
            Err(ProgramError::NotOnPath("no-such-program-a2a".into()))
        );
        assert_eq!(
            resolve_program("/no/such/file"),
            Err(ProgramError::NoSuchFile("/no/such/file".into()))
        );
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let plain = plain.display().to_string();
        assert_eq!(
            resolve_program(&plain),
            Err(ProgramError::NotExecutable(plain.clone()))
        );
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
        assert!(matches!(got[0], DelegatorOutput::TooLong), "{got:?}");
        assert!(matches!(&got[1], DelegatorOutput::Message(v) if v["type"] == "x"));
        assert!(matches!(got[2], DelegatorOutput::Eof));
        assert_eq!(got.len(), 3);
    }

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_garbage_and_reading_goes_on() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut child = Command::new("sh")
            .args([
                "-c",
                "printf 'ab\\377cd\\n{\"type\":\"x\"}\\r\\n{\"type\":\"y\"}'",
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
        assert!(
            matches!(&got[0], DelegatorOutput::Garbage(g) if g.contains("not UTF-8")),
            "{got:?}"
        );
        assert!(
            matches!(&got[1], DelegatorOutput::Message(v) if v["type"] == "x"),
            "{got:?}"
        );
        // The last line needs no newline.
        assert!(
            matches!(&got[2], DelegatorOutput::Message(v) if v["type"] == "y"),
            "{got:?}"
        );
        assert!(matches!(got[3], DelegatorOutput::Eof));
        assert_eq!(got.len(), 4);
    }
}
