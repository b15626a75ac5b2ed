//! One run of a workload: the ceiling (raw reads of the same responses from the same source),
//! the delegator under test (any command speaking the driver contract), and a baseline; each
//! verified byte-exact against the journal's truth.

use crate::procfs::{self, Sampler};
use crate::source::{self, AGENT, RawRead, SKILL, Truth};
use crate::workload::{Delivery, Workload};
use a2a_driver_contract::process::{DelegatorOutput, DelegatorProcess, init_message};
use a2a_driver_contract::{FromDelegator, InitOptions, ToDelegator};
use a2a_mock_agents::Network;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often memory and fds are sampled.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(25);
/// Longest wait for `init_ok`.
const INIT_WAIT: Duration = Duration::from_secs(30);

/// The figures of one run of one side (ceiling, delegator or baseline).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunSample {
    /// Verified byte-exact (every delegation completed with the journal's bytes and sha256).
    pub verified: bool,
    /// Why not, when not verified.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Delegations (or reads) that completed byte-exact.
    pub completed: u64,
    /// Artifact content bytes (the journal's truth, summed).
    pub bytes: u64,
    /// Artifact chunk events the source sent.
    pub events: u64,
    /// First request to last completion, seconds.
    pub wall_s: f64,
    /// `bytes` / `wall_s`, in MB/s (10^6).
    pub mb_s: f64,
    /// `events` / `wall_s`.
    pub events_s: f64,
    /// Median over delegations of the time from the request (`delegate` line, or HTTP request)
    /// to the source sending the first artifact chunk, ms.
    pub ttfb_ms: f64,
    /// Request to completion per delegation: median, ms.
    pub latency_p50_ms: f64,
    /// Request to completion per delegation: 99th percentile, ms.
    pub latency_p99_ms: f64,
    /// CPU seconds of the consumer (the delegator's whole process group from `init_ok` to
    /// the last `done`; the raw reader's share is within `mock_cpu_s`).
    pub cpu_s: f64,
    /// `cpu_s` per GiB of content.
    pub cpu_s_per_gib: f64,
    /// Peak resident memory of the consumer (delegator group), MiB.
    pub peak_rss_mib: f64,
    /// Peak open fds of the consumer (delegator group).
    pub peak_fds: u64,
    /// CPU seconds of this process during the run: the in-process mock (plus, for the
    /// ceiling, the raw reader; plus the bench's own driving, small).
    pub mock_cpu_s: f64,
    /// Peak resident memory of this process (the mock), MiB.
    pub mock_peak_rss_mib: f64,
    /// Peak open fds of this process (the mock).
    pub mock_peak_fds: u64,
    /// Wire bytes read (the ceiling only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire_bytes: Option<u64>,
    /// Memory over time (delegator group and mock, KiB), for the plots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rss_series: Vec<procfs::Sample>,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

impl RunSample {
    pub(crate) fn finish_rates(&mut self, latencies_ms: &mut [f64], ttfbs_ms: &mut [f64]) {
        if self.wall_s > 0.0 {
            self.mb_s = self.bytes as f64 / 1e6 / self.wall_s;
            self.events_s = self.events as f64 / self.wall_s;
        }
        if self.bytes > 0 {
            self.cpu_s_per_gib = self.cpu_s / (self.bytes as f64 / f64::from(1u32 << 30));
        }
        latencies_ms.sort_by(f64::total_cmp);
        ttfbs_ms.sort_by(f64::total_cmp);
        self.latency_p50_ms = percentile(latencies_ms, 50.0);
        self.latency_p99_ms = percentile(latencies_ms, 99.0);
        self.ttfb_ms = percentile(ttfbs_ms, 50.0);
        if !self.verified {
            // A failed run has no throughput figure.
            self.mb_s = 0.0;
            self.events_s = 0.0;
        }
    }
}

/// Start the workload's network.
async fn start_network(w: &Workload, seed: u64) -> Result<(Network, Instant), String> {
    let net = Network::start(source::network_spec(w, seed))
        .await
        .map_err(|e| format!("the mock network did not start: {e}"))?;
    // The journal counts from the network's start: the anchor of `at_us`.
    let now = Instant::now();
    let anchor = now.checked_sub(net.journal().elapsed()).unwrap_or(now);
    Ok((net, anchor))
}

fn since_anchor_ms(anchor: Instant, at_us: u64, sent: Instant) -> f64 {
    let sent_us = sent.saturating_duration_since(anchor).as_micros() as f64;
    ((at_us as f64 - sent_us) / 1000.0).max(0.0)
}

/// Raw reads in flight at once in the ceiling.
pub const CEILING_IN_FLIGHT: usize = 1024;

/// The ceiling: `parallel` raw reads of the same responses, at once, from a fresh network of
/// the same spec and seed.
pub async fn ceiling(w: &Workload, seed: u64) -> RunSample {
    let mut s = RunSample::default();
    let (net, anchor) = match start_network(w, seed).await {
        Ok(n) => n,
        Err(e) => {
            s.failures.push(e);
            return s;
        }
    };
    let Some(url) = net.rpc_url(AGENT) else {
        s.failures.push("the source has no JSON-RPC URL".into());
        net.shutdown().await;
        return s;
    };
    let client = match reqwest::Client::builder().no_proxy().build() {
        Ok(c) => c,
        Err(e) => {
            s.failures.push(format!("HTTP client: {e}"));
            net.shutdown().await;
            return s;
        }
    };
    let limit = Duration::from_secs(w.time_limit_s);
    let sampler = Sampler::start(None, SAMPLE_EVERY);
    let cpu0 = procfs::self_cpu_seconds();
    let t0 = Instant::now();
    // At most CEILING_IN_FLIGHT reads at once: both ends of every connection are in this
    // process, and 10,000 at once would pass the file descriptor limit.
    let in_flight = tokio::sync::Semaphore::new(CEILING_IN_FLIGHT);
    let reads: Vec<RawRead> = futures::future::join_all((0..w.parallel).map(|i| {
        let in_flight = &in_flight;
        let (client, url) = (&client, &url);
        async move {
            let _permit = in_flight.acquire().await;
            source::raw_read(
                client,
                url,
                w.delivery,
                format!("bench-ceiling-{i}-{}", uuid_like(seed, i)),
                limit,
            )
            .await
        }
    }))
    .await;
    let wall = t0.elapsed();
    s.mock_cpu_s = procfs::self_cpu_seconds() - cpu0;
    let seen = sampler.finish();
    s.mock_peak_rss_mib = mib(seen.mock_peak_rss_kib);
    s.mock_peak_fds = seen.mock_peak_fds;
    let dropped = net.journal().dropped();
    let truth = net.journal().with_entries(|e| Truth::of(e, dropped));
    drop(client);
    net.shutdown().await;
    release_free_memory();
    let (mut lat, mut ttfb) = (Vec::new(), Vec::new());
    let mut wire = 0;
    for r in &reads {
        wire += r.wire_bytes;
        if let Some(e) = &r.error {
            s.failures.push(format!("raw read {}: {e}", r.message_id));
            continue;
        }
        let Some(t) = truth
            .by_message
            .get(&r.message_id)
            .and_then(|id| truth.tasks.get(id))
        else {
            s.failures
                .push(format!("raw read {}: no task in the journal", r.message_id));
            continue;
        };
        if t.artifacts.len() != w.artifacts as usize {
            s.failures.push(format!(
                "raw read {}: {} artifacts sent, expected {}",
                r.message_id,
                t.artifacts.len(),
                w.artifacts
            ));
            continue;
        }
        s.completed += 1;
        s.bytes += t.artifacts.values().map(|(b, _)| b).sum::<u64>();
        s.events += t.chunks;
        lat.push(r.ended.duration_since(r.sent).as_secs_f64() * 1000.0);
        if let Some(at) = t.first_chunk_us {
            ttfb.push(since_anchor_ms(anchor, at, r.sent));
        }
    }
    s.wire_bytes = Some(wire);
    s.verified = s.failures.is_empty() && s.completed == u64::from(w.parallel);
    s.wall_s = wall.as_secs_f64();
    s.finish_rates(&mut lat, &mut ttfb);
    s
}

/// A deterministic id suffix.
fn uuid_like(seed: u64, i: u32) -> String {
    format!("{seed:x}-{i:x}-{:x}", std::process::id())
}

/// The pid of the child of this process that leads its own process group and was not there
/// before (how the delegator's group is found without the process module exposing it).
fn new_group_leader(before: &[String]) -> Option<i32> {
    let me = std::process::id().to_string();
    let dir = std::fs::read_dir("/proc").ok()?;
    dir.filter_map(|d| d.ok()?.file_name().to_str().map(str::to_string))
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()) && !before.contains(p))
        .find(|p| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                return false;
            };
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                return false;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            f.get(1) == Some(&me.as_str()) && f.get(2) == Some(&p.as_str())
        })
        .and_then(|p| p.parse().ok())
}

fn children_now() -> Vec<String> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|d| d.ok()?.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The sha256 and length of a file.
pub fn hash_file(path: &Path) -> std::io::Result<(u64, String)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += k as u64;
        h.update(&buf[..k]);
    }
    Ok((n, hex::encode(h.finalize())))
}

/// Run the delegator `cmd` on the workload once, on a fresh network of the same spec and seed
/// as the ceiling; `work` holds its store (removed afterwards).
pub async fn delegator(w: &Workload, seed: u64, cmd: &str, work: &Path) -> RunSample {
    let mut s = RunSample::default();
    let (net, anchor) = match start_network(w, seed).await {
        Ok(n) => n,
        Err(e) => {
            s.failures.push(e);
            return s;
        }
    };
    let store = work.join("store");
    let _ = std::fs::remove_dir_all(&store);
    if let Err(e) = std::fs::create_dir_all(&store) {
        s.failures.push(format!("{}: {e}", store.display()));
        net.shutdown().await;
        return s;
    }
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let before = children_now();
    let mut proc = match DelegatorProcess::spawn(cmd, stderr.clone()) {
        Ok(p) => p,
        Err(e) => {
            s.failures.push(e.to_string());
            net.shutdown().await;
            return s;
        }
    };
    let pgid = new_group_leader(&before);
    proc.watch_memory();
    drive(w, &net, anchor, &mut proc, pgid, &store, &mut s).await;
    let tail = proc.stderr();
    proc.finish(Duration::from_secs(10)).await;
    net.shutdown().await;
    set_aside(&store, work, w.total_bytes());
    release_free_memory();
    if !s.verified && !tail.trim().is_empty() {
        let t: String = tail
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" | ");
        s.failures.push(format!("delegator stderr (tail): {t}"));
    }
    s
}

/// A finished run's store is moved aside (and removed with the bench's scratch directory at the
/// end) rather than deleted when its artifacts total at most this much.
const SET_ASIDE_BYTES: u64 = 256 << 20;

/// Take a finished run's `store` out of the way of the next run. Deleting thousands of small
/// files right before the next run would bill that run for the deletion: ext4 skips the inodes
/// freed in the last seconds when it allocates new ones (`recently_deleted`), scanning past each
/// of them; in a profile of scale-1000 that scan was a quarter to a half of the delegator's CPU.
/// So a store of many small files (at most [`SET_ASIDE_BYTES`]) is renamed into `work/old/`
/// (no inode is freed) and deleted at the end of the bench with `work`; a larger one (few
/// large files, where the scan does not matter but the disk space does) is deleted now.
fn set_aside(store: &Path, work: &Path, bytes: u64) {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if bytes <= SET_ASIDE_BYTES {
        let old = work.join("old");
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dest = old.join(format!("store-{n}"));
        if std::fs::create_dir_all(&old).is_ok() && std::fs::rename(store, &dest).is_ok() {
            return;
        }
    }
    let _ = std::fs::remove_dir_all(store);
}

/// Give the memory freed by a finished run back to the system, so that the mock's peak RSS in
/// the next run (the mock runs in this process) counts what that run holds, not what the
/// allocator kept from the run before (glibc keeps freed heap in its arenas).
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free heap pages to the kernel; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Keep glibc's threshold for serving an allocation with its own mapping at its default
/// (128 KiB) instead of letting it grow: by default, freeing one large mapped buffer (a
/// journal's entry vector, a connection's buffer) raises the threshold to that size, so later
/// large buffers come from the arenas and stay in this process's RSS after they are freed,
/// fragmenting what `malloc_trim` can give back. The mock runs in this process: with the
/// threshold moving, its RSS in a workload's second repetition carried 40 MiB of the first.
pub(crate) fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; it has no preconditions.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Init, delegate, take in every `done`, verify.
async fn drive(
    w: &Workload,
    net: &Network,
    anchor: Instant,
    proc: &mut DelegatorProcess,
    pgid: Option<i32>,
    store: &Path,
    s: &mut RunSample,
) {
    let cards: Vec<String> = net.card_url(AGENT).into_iter().collect();
    let options: InitOptions = serde_json::from_value(serde_json::json!({
        "poll_interval_ms": 20, "seed": 1, "request_timeout_ms": w.time_limit_s * 1000,
    }))
    .unwrap_or_default();
    let webhook = (w.delivery == Delivery::Push).then_some("http://127.0.0.1:0");
    let init = init_message(
        &store.display().to_string(),
        false,
        &cards,
        webhook,
        "http://127.0.0.1:4100/",
        "Bearer bench-own-token",
        options,
    );
    let limit = Duration::from_secs(w.time_limit_s);
    let init_until = tokio::time::Instant::now() + INIT_WAIT;
    if let Err(e) = proc.send(&init, init_until).await {
        s.failures.push(format!("init: {e}"));
        return;
    }
    loop {
        let left = init_until.saturating_duration_since(tokio::time::Instant::now());
        match proc.recv(left).await {
            None => {
                s.failures
                    .push("the delegator did not answer init within 30 s".into());
                return;
            }
            Some(DelegatorOutput::Message(m)) if m["type"] == "init_ok" => break,
            Some(DelegatorOutput::Message(m)) if m["type"] == "error" => {
                s.failures.push(format!("init refused: {m}"));
                return;
            }
            Some(DelegatorOutput::Eof) => {
                s.failures
                    .push("the delegator exited before init_ok".into());
                return;
            }
            Some(_) => {}
        }
    }
    let sampler = Sampler::start(pgid, SAMPLE_EVERY);
    let cpu0 = pgid.map_or(0.0, procfs::group_cpu_seconds);
    let mock0 = procfs::self_cpu_seconds();
    let t0 = Instant::now();
    let deadline = tokio::time::Instant::now() + limit;
    let mut sent_at: BTreeMap<String, Instant> = BTreeMap::new();
    let mut dones: BTreeMap<String, (Instant, a2a_driver_contract::Done)> = BTreeMap::new();
    let mut notes: Vec<String> = Vec::new();
    let mime = source::media_type(w.part);
    let max_size = (w.artifact_bytes.0 * 2 + 4096).min(4 << 30);
    for i in 0..w.parallel {
        let id = format!("d{i}");
        let msg: ToDelegator = match serde_json::from_value(serde_json::json!({
            "type": "delegate", "id": id, "capability": SKILL, "text": format!("bench {i}"),
            "artifact_spec": {"mime_types": [mime], "max_size_bytes": max_size,
                              "streaming_preferred": w.delivery == Delivery::Stream},
            "timeout_seconds": w.time_limit_s, "max_retries": 0,
        })) {
            Ok(m) => m,
            Err(e) => {
                s.failures.push(format!("building delegate: {e}"));
                return;
            }
        };
        // Send without blocking on a delegator whose stdout is full: take in what it wrote
        // while its stdin is busy.
        loop {
            if tokio::time::Instant::now() >= deadline {
                s.failures
                    .push(format!("the delegator did not take delegate {id} in time"));
                break;
            }
            match proc
                .send(&msg, tokio::time::Instant::now() + Duration::from_millis(5))
                .await
            {
                Ok(()) => {
                    sent_at.insert(id.clone(), Instant::now());
                    break;
                }
                Err(a2a_driver_contract::process::DelegatorProcessError::Stalled { .. }) => {
                    while let Ok(m) = proc.rx.try_recv() {
                        take(m, &mut dones, &mut notes);
                    }
                }
                Err(e) => {
                    s.failures.push(format!("delegate {id}: {e}"));
                    break;
                }
            }
        }
    }
    let mut eof = false;
    while dones.len() < sent_at.len() && !eof {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            break;
        }
        match proc.recv(left).await {
            None => break,
            Some(DelegatorOutput::Eof) => eof = true,
            Some(m) => take(m, &mut dones, &mut notes),
        }
    }
    let wall = t0.elapsed();
    s.cpu_s = pgid.map_or(0.0, procfs::group_cpu_seconds) - cpu0;
    s.mock_cpu_s = procfs::self_cpu_seconds() - mock0;
    let seen = sampler.finish();
    let hwm = proc.memory().map_or(0, |m| m.peak_kib);
    s.peak_rss_mib = mib(seen.delegator_peak_rss_kib.max(hwm));
    s.peak_fds = seen.delegator_peak_fds;
    s.mock_peak_rss_mib = mib(seen.mock_peak_rss_kib);
    s.mock_peak_fds = seen.mock_peak_fds;
    s.rss_series = seen.series;
    s.wall_s = wall.as_secs_f64();
    if eof {
        s.failures
            .push("the delegator exited before every done".into());
    }
    if dones.len() < sent_at.len() {
        s.failures.push(format!(
            "{} of {} delegations done within the time limit ({} s)",
            dones.len(),
            sent_at.len(),
            w.time_limit_s
        ));
    }
    s.failures.extend(notes.into_iter().take(10));
    let dropped = net.journal().dropped();
    let truth = net.journal().with_entries(|e| Truth::of(e, dropped));
    if truth.dropped > 0 {
        s.failures.push(format!(
            "the journal dropped {} entries: the truth is incomplete",
            truth.dropped
        ));
    }
    let (mut lat, mut ttfb) = (Vec::new(), Vec::new());
    for (id, (at, done)) in &dones {
        match verify(w, done, &truth) {
            Ok((bytes, events, first)) => {
                s.completed += 1;
                s.bytes += bytes;
                s.events += events;
                if let Some(sent) = sent_at.get(id) {
                    lat.push(at.duration_since(*sent).as_secs_f64() * 1000.0);
                    if let Some(f) = first {
                        ttfb.push(since_anchor_ms(anchor, f, *sent));
                    }
                }
            }
            Err(e) => {
                if s.failures.len() < 20 {
                    s.failures.push(format!("{id}: {e}"));
                }
            }
        }
    }
    s.verified = s.failures.is_empty() && s.completed == u64::from(w.parallel);
    s.finish_rates(&mut lat, &mut ttfb);
}

/// Keep a `done` (first one per id); note an `error` line.
fn take(
    m: DelegatorOutput,
    dones: &mut BTreeMap<String, (Instant, a2a_driver_contract::Done)>,
    notes: &mut Vec<String>,
) {
    let DelegatorOutput::Message(v) = m else {
        if let DelegatorOutput::Garbage(g) = m
            && notes.len() < 10
        {
            notes.push(format!("non-protocol line: {g}"));
        }
        return;
    };
    match serde_json::from_value::<FromDelegator>(v.clone()) {
        Ok(FromDelegator::Done(d)) => {
            dones.entry(d.id.clone()).or_insert((Instant::now(), d));
        }
        Ok(FromDelegator::Error(e)) if notes.len() < 10 => {
            notes.push(format!("error line: {:?} {}", e.code, e.message));
        }
        Ok(_) => {}
        Err(e) if notes.len() < 10 => notes.push(format!("a line the contract rejects ({e}): {v}")),
        Err(_) => {}
    }
}

/// Byte-exactness of one `done`: COMPLETED, every artifact the source sent with its bytes and
/// sha256, and the file at `path` holding exactly those. Ok: (bytes, chunk events, first chunk).
fn verify(
    w: &Workload,
    d: &a2a_driver_contract::Done,
    truth: &Truth,
) -> Result<(u64, u64, Option<u64>), String> {
    if d.state != a2a_driver_contract::Outcome::Completed {
        return Err(format!(
            "ended {:?}: {}",
            d.state,
            d.reason.as_deref().unwrap_or("")
        ));
    }
    let task = d.task_id.as_deref().ok_or("done without a task_id")?;
    let t = truth
        .tasks
        .get(task)
        .ok_or_else(|| format!("task {task} sent no artifact"))?;
    if t.artifacts.len() != w.artifacts as usize || d.artifacts.len() != t.artifacts.len() {
        return Err(format!(
            "{} artifacts reported, the source sent {} (expected {})",
            d.artifacts.len(),
            t.artifacts.len(),
            w.artifacts
        ));
    }
    let mut bytes = 0;
    for a in &d.artifacts {
        let (tb, tsha) = t
            .artifacts
            .get(&a.artifact_id)
            .ok_or_else(|| format!("artifact {} was never sent", a.artifact_id))?;
        if a.bytes != *tb || a.sha256 != *tsha {
            return Err(format!(
                "artifact {} CORRUPTED: reported {} bytes sha256 {}, the source sent {} bytes sha256 {}",
                a.artifact_id, a.bytes, a.sha256, tb, tsha
            ));
        }
        let (fb, fsha) = hash_file(Path::new(&a.path))
            .map_err(|e| format!("artifact {} file {}: {e}", a.artifact_id, a.path))?;
        if fb != *tb || fsha != *tsha {
            return Err(format!(
                "artifact {} file {} CORRUPTED: {} bytes sha256 {}, the source sent {} bytes sha256 {}",
                a.artifact_id, a.path, fb, fsha, tb, tsha
            ));
        }
        bytes += tb;
    }
    Ok((bytes, t.chunks, t.first_chunk_us))
}
