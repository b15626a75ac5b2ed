//! The shrinking oracle over real delegator runs.

use super::shrink;
use super::{add_invariants, shows};
use a2a_harness_core::runner::{CaseResult, RunSettings, run_case};
use a2a_harness_core::scenario::Scenario;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

/// The shrinking oracle over real runs: a candidate shows the finding when every one of
/// `confirm` runs (with the finding's seed) shows it ([`shows`]) and then a run with the
/// baseline delegator (if any) neither shows it nor fails the case: the scenario is one a
/// delegator can pass. Candidates run in parallel, `jobs` runs at once.
pub(super) struct RunOracle {
    pub(super) handle: tokio::runtime::Handle,
    pub(super) delegator: String,
    pub(super) seed: u64,
    pub(super) confirm: u32,
    pub(super) jobs: usize,
    pub(super) work: PathBuf,
    pub(super) rule: String,
    pub(super) runs: Arc<AtomicUsize>,
    pub(super) counter: Arc<AtomicU64>,
    pub(super) cancel: CancellationToken,
    pub(super) baseline: Option<String>,
    /// Candidates turned down because the baseline failed them too.
    pub(super) baseline_failed: Arc<AtomicUsize>,
    /// The longest run so far (ms).
    pub(super) slowest_ms: Arc<AtomicU64>,
    /// Each run's time bound is lowered to this when set.
    pub(super) time_bound_ms: Option<u64>,
    /// A batch still running at this instant is abandoned (its candidates count as not
    /// failing): the shrink's time bound holds within a batch of slow runs.
    pub(super) deadline: Option<tokio::time::Instant>,
}

impl RunOracle {
    /// One run of `c` with `delegator`.
    async fn run_with(&self, c: &Scenario, delegator: &str) -> CaseResult {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let settings = RunSettings {
            delegator: delegator.to_string(),
            seed: self.seed,
            work_dir: self.work.join(n.to_string()),
            binding: None,
            tls: false,
        };
        self.runs.fetch_add(1, Ordering::Relaxed);
        let mut c = c.clone();
        if let Some(ms) = self.time_bound_ms {
            c.timeout_ms = c.timeout_ms.min(ms.max(1));
        }
        let mut r = run_case(&c, &settings).await;
        add_invariants(&c, &mut r);
        let _ = std::fs::remove_dir_all(&settings.work_dir);
        self.slowest_ms.fetch_max(r.duration_ms, Ordering::Relaxed);
        r
    }
}

impl shrink::Oracle for RunOracle {
    fn test(&mut self, candidates: &[Scenario]) -> Vec<bool> {
        if self.cancel.is_cancelled() {
            return vec![false; candidates.len()];
        }
        let sem = tokio::sync::Semaphore::new(self.jobs.max(1));
        let me = &*self;
        let one = |c: &Scenario| {
            let sem = &sem;
            let c = c.clone();
            async move {
                for _ in 0..me.confirm {
                    let Ok(_permit) = sem.acquire().await else {
                        return false;
                    };
                    if !shows(&me.run_with(&c, &me.delegator).await, &me.rule) {
                        return false;
                    }
                }
                if let Some(b) = &me.baseline {
                    let Ok(_permit) = sem.acquire().await else {
                        return false;
                    };
                    let r = me.run_with(&c, b).await;
                    if shows(&r, &me.rule) || r.verdict.fails_run() {
                        me.baseline_failed.fetch_add(1, Ordering::Relaxed);
                        return false;
                    }
                }
                true
            }
        };
        let all = futures::future::join_all(candidates.iter().map(one));
        let cancel = self.cancel.clone();
        let n = candidates.len();
        let deadline = self.deadline;
        self.handle.block_on(async move {
            let late = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                v = all => v,
                () = cancel.cancelled() => vec![false; n],
                () = late => vec![false; n],
            }
        })
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::Relaxed)
    }

    fn batch(&self) -> usize {
        self.jobs.max(1)
    }

    fn cost(&self) -> usize {
        self.confirm.max(1) as usize + usize::from(self.baseline.is_some())
    }

    fn stopped(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
