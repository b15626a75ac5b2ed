//! What `/proc` says about processes: CPU time, resident memory, open file descriptors, for one
//! process, for this process (the in-process mock) and for a whole process group (the
//! delegator under test and any children it started).

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Clock ticks per second of `/proc/*/stat` times (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// The fields of `/proc/<pid>/stat` after the command name.
fn stat_fields(pid: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// CPU seconds of one process: (own utime+stime, reaped children's cutime+cstime).
pub fn cpu_seconds(pid: &str) -> Option<(f64, f64)> {
    let f = stat_fields(pid)?;
    // Fields after ')' start at field 3 (state): utime is field 14 -> index 11.
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    Some(((n(11)? + n(12)?) / USER_HZ, (n(13)? + n(14)?) / USER_HZ))
}

/// The process group of `pid`.
fn pgrp(pid: &str) -> Option<i32> {
    stat_fields(pid)?.get(2)?.parse().ok()
}

/// Every pid in process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|d| d.ok()?.file_name().to_str().map(str::to_string))
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        .filter(|p| pgrp(p) == Some(pgid))
        .collect()
}

/// `VmRSS` of a process (KiB).
pub fn rss_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Open file descriptors of a process.
pub fn fd_count(pid: &str) -> Option<u64> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64)
}

/// CPU seconds of a whole process group now: the sum over its live members of their own time
/// plus the time of children they reaped (`cutime`/`cstime`).
pub fn group_cpu_seconds(pgid: i32) -> f64 {
    group_members(pgid)
        .iter()
        .filter_map(|p| cpu_seconds(p))
        .map(|(own, reaped)| own + reaped)
        .sum()
}

/// This process's CPU seconds (user + system, every thread).
pub fn self_cpu_seconds() -> f64 {
    cpu_seconds("self").map_or(0.0, |(own, _)| own)
}

/// One sample of both sides.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Sample {
    /// Milliseconds since the sampler started.
    pub t_ms: u64,
    /// The delegator group's summed resident memory (KiB).
    pub delegator_rss_kib: u64,
    /// This (mock) process's resident memory (KiB).
    pub mock_rss_kib: u64,
}

/// Peaks and a time series seen by a [`Sampler`].
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    /// The series (at most one sample per interval).
    pub series: Vec<Sample>,
    /// Peak delegator group RSS (KiB).
    pub delegator_peak_rss_kib: u64,
    /// Peak mock (this process) RSS (KiB).
    pub mock_peak_rss_kib: u64,
    /// Peak open fds of the delegator group (summed).
    pub delegator_peak_fds: u64,
    /// Peak open fds of this process.
    pub mock_peak_fds: u64,
}

/// Samples the delegator group (if any) and this process on a thread until stopped.
pub struct Sampler {
    /// Dropping it stops the sampling thread at once (after one last sample).
    stop: Option<mpsc::Sender<()>>,
    seen: Arc<Mutex<Sampled>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Start sampling every `every`; `pgid` is the delegator's group (None: only this
    /// process).
    pub fn start(pgid: Option<i32>, every: Duration) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let seen = Arc::new(Mutex::new(Sampled::default()));
        let sn = seen.clone();
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut last = false;
            loop {
                let (mut rss, mut fds) = (0, 0);
                if let Some(pg) = pgid {
                    for p in group_members(pg) {
                        rss += rss_kib(&p).unwrap_or(0);
                        fds += fd_count(&p).unwrap_or(0);
                    }
                }
                let mock_rss = rss_kib("self").unwrap_or(0);
                let mock_fds = fd_count("self").unwrap_or(0);
                {
                    let mut s = sn.lock().unwrap_or_else(|p| p.into_inner());
                    s.delegator_peak_rss_kib = s.delegator_peak_rss_kib.max(rss);
                    s.mock_peak_rss_kib = s.mock_peak_rss_kib.max(mock_rss);
                    s.delegator_peak_fds = s.delegator_peak_fds.max(fds);
                    s.mock_peak_fds = s.mock_peak_fds.max(mock_fds);
                    if s.series.len() < 100_000 {
                        s.series.push(Sample {
                            t_ms: t0.elapsed().as_millis() as u64,
                            delegator_rss_kib: rss,
                            mock_rss_kib: mock_rss,
                        });
                    }
                }
                if last {
                    return;
                }
                // The next tick, or the stop (a message or the sender dropped) without delay.
                if !matches!(
                    stopped.recv_timeout(every),
                    Err(mpsc::RecvTimeoutError::Timeout)
                ) {
                    last = true;
                }
            }
        });
        Sampler {
            stop: Some(stop),
            seen,
            thread: Some(thread),
        }
    }

    /// Stop (after one last sample) and return what was seen.
    pub fn finish(mut self) -> Sampled {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
