//! One case, as named phases: start the network, start the delegator and initialise it, send
//! the delegations, take in what it says (answering escalations, sending cancels, injecting the
//! crash and restarting it), collect the evidence (snapshot, stop), judge.
//!
//! Here: the case's run (phases in order), its state (`CaseRun`) and the loop that takes in
//! what the delegator says; `start`: the init message and the first delegations; `handle`: each
//! message (state changes, escalations, a forged push), time bounds; `restart`: the crash and
//! the restart on the same store; `finish`: snapshot, stop, verdict.

mod finish;
mod handle;
mod restart;
mod start;

use finish::verdict;
use start::init_options;

use super::capture::{OutputCapture, scan_everything, scan_store_at_kill};
use super::crash::{CrashInjector, CrashRecord, PENDING_KILL_WAIT};
use super::intake::{Intake, Received};
use super::messages::{delegate_message, forge_push, push_target};
use super::unacked::Unacknowledged;
use super::verdict::{CaseResult, Verdict, case_verdict, judge};
use super::{INIT_WAIT, OWN_CREDENTIAL, RunSettings, SELF_URL, STDIN_STALL, WEBHOOK_BASE};
use crate::delegator_process::{DelegatorOutput, DelegatorProcess, MemoryReading, init_message};
use crate::rules::Evidence;
use crate::rules::secret::{SecretScan, StoreScan, known_secrets};
use crate::scenario::{Answer, CrashTrigger, Delegation, Scenario};
use a2a_driver_contract::{
    Cancel, Credential, DriverErrorCode, Escalate, EscalationKind, FromDelegator, InitOptions,
    StateChange, ToDelegator,
};
use a2a_mock_agents::{Entry, Journal, Network};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Run one case against the delegator.
pub async fn run_case(s: &Scenario, cfg: &RunSettings) -> CaseResult {
    // Over a `--binding` pass the case is judged on the network it actually ran.
    let over_binding;
    let s = match cfg.binding {
        Some(b) => {
            over_binding = super::served_over(s, b);
            &over_binding
        }
        None => s,
    };
    // Over `--tls` every agent serves TLS (the case is judged on that network too).
    let over_tls;
    let s = if cfg.tls {
        over_tls = super::served_over_tls(s);
        &over_tls
    } else {
        s
    };
    let t0 = Instant::now();
    let start = time::OffsetDateTime::now_utc();
    let mut result = CaseResult::empty(s, cfg);
    let net = match start_network(s, cfg).await {
        Ok(n) => n,
        Err(e) => {
            result.notes.push(format!("network did not start: {e}"));
            return result;
        }
    };
    let deadline = tokio::time::Instant::now() + Duration::from_millis(s.timeout_ms);
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let mut capture = OutputCapture::default();
    let tap = capture.new_life();
    let proc = match DelegatorProcess::spawn_tapped(&cfg.delegator, stderr.clone(), Some(tap)) {
        Ok(p) => p,
        Err(e) => {
            result.notes.push(e.to_string());
            result.verdict = Verdict::Fail;
            net.shutdown().await;
            return result;
        }
    };
    let mut run = CaseRun::new(s, cfg, &net, proc, stderr, capture, start, deadline);
    run.facts.network_started = t0;
    run.arm_crash();
    run.initialise().await;
    run.send_first_delegations().await;
    run.take_in().await;
    run.journal.clear_tripwire();
    run.note_time_bound();
    let stalled = run.note_stdin_stall();
    run.take_snapshot(stalled).await;
    // A write that began late in a short case (a loaded machine) shows its stall while the
    // snapshot is waited for.
    let stalled = stalled || run.note_stdin_stall();
    let memory = run.memory_reading();
    let (mut intake, mut facts) = run.stop(stalled).await;
    let entries = net.journal().entries();
    let dropped = net.journal().dropped();
    net.shutdown().await;
    facts.secrets = scan_for_secrets(&mut facts, &entries).await;
    let mut result = verdict(s, &mut intake, facts, entries, memory, result, t0);
    journal_incomplete(&mut result, dropped);
    result
}

/// A journal that dropped entries at its bound cannot show everything a PASS rests on: such a
/// case is UNKNOWN, with a note (a FAIL, witnessed in the kept entries or the contract, and an
/// UNSUPPORTED stand).
fn journal_incomplete(result: &mut CaseResult, dropped: u64) {
    if dropped == 0 {
        return;
    }
    result.notes.push(format!(
        "journal incomplete: {dropped} entries past its max_entries bound were dropped; the verdict cannot rest on it"
    ));
    if matches!(result.verdict, Verdict::Pass | Verdict::NonStrict) {
        result.verdict = Verdict::Unknown;
    }
}

/// Start the case's network, its seed XORed with the run's.
async fn start_network(
    s: &Scenario,
    cfg: &RunSettings,
) -> Result<Network, a2a_mock_agents::NetworkError> {
    let mut spec = s.network.clone();
    spec.seed ^= cfg.seed;
    let net = Network::start(spec).await?;
    // DLG-AUTH-01 evidence: the credential (and its bare token) is searched for before long
    // strings are summarised.
    net.journal().watch(OWN_CREDENTIAL);
    if let Some(token) = OWN_CREDENTIAL.split_whitespace().last() {
        net.journal().watch(token);
    }
    Ok(net)
}

/// DLG-SECRET-01's evidence, taken before the store is removed: every secret the delegator held
/// searched for in everything it wrote (on the blocking pool: it reads files).
async fn scan_for_secrets(facts: &mut Facts, entries: &[Entry]) -> SecretScan {
    let secrets = known_secrets(
        OWN_CREDENTIAL,
        &facts.agent_credentials,
        &facts.given,
        entries,
    );
    let capture = std::mem::take(&mut facts.capture);
    let snapshot = facts.snapshot.clone();
    let store = facts.store.clone();
    let at_kill = facts.store_at_kill.take();
    tokio::task::spawn_blocking(move || {
        scan_everything(&capture, &secrets, snapshot.as_deref(), &store, at_kill)
    })
    .await
    .unwrap_or_else(|e| SecretScan {
        limits: vec![format!("the secret scan failed: {e}")],
        ..SecretScan::default()
    })
}

/// What a case run learnt that the judgement needs.
struct Facts {
    start: time::OffsetDateTime,
    store: PathBuf,
    /// The PEM file of the network's certificate authority (`init.tls_roots`), beside the
    /// store, when some agent serves TLS.
    tls_roots: Option<PathBuf>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Everything the delegator wrote on stdout and stderr, per process life.
    capture: OutputCapture,
    /// The secret scan of the store as the killed process left it (a crash case).
    store_at_kill: Option<StoreScan>,
    /// The secret scan of everything the delegator wrote, taken before the store is removed.
    secrets: SecretScan,
    outcomes: BTreeMap<String, FromDelegator>,
    given: Vec<(String, EscalationKind, String)>,
    /// The credentials the delegator was given for agents' security schemes (card URL,
    /// `Authorization` value): `init.agent_credentials`.
    agent_credentials: Vec<(String, String)>,
    snapshot: Option<Vec<Value>>,
    crash: Option<CrashRecord>,
    unsupported: bool,
    forged: Vec<u16>,
    inited: bool,
    /// Per delegation, the last journal sequence when its outcome was received.
    done_at: BTreeMap<String, u64>,
    /// Taken before the network started: journal times are at most its elapsed time.
    network_started: Instant,
    /// Journal time (µs since the network started, at least) of `init_ok`.
    started_at_us: Option<u64>,
}

/// The state of one case while it runs.
struct CaseRun<'a> {
    s: &'a Scenario,
    cfg: &'a RunSettings,
    journal: Journal,
    proc: DelegatorProcess,
    intake: Intake,
    facts: Facts,
    /// The `init` options (defaults overridden by the scenario's).
    options: InitOptions,
    cards: Vec<String>,
    /// The mock agents' own origins (`http://127.0.0.1:PORT`): `init.fetch_origins`, the only
    /// origins url parts may be fetched from (DLG-URL-01).
    fetch_origins: Vec<String>,
    deadline: tokio::time::Instant,
    /// The case's crash injection, if it has one.
    crash: Option<Arc<CrashInjector>>,
    crashed: bool,
    /// The delegator's process-group memory at `init_ok` (KiB), for DLG-ART-10.
    memory_baseline_kib: Option<u64>,
    /// The killed process's memory reading (with its baseline), memory cases with a crash.
    memory_before_crash: Option<MemoryReading>,
    /// Messages the killed process wrote before it died, handled after the restart.
    backlog: VecDeque<Received>,
    /// `delegate`s and `cancel`s the current process has not acknowledged (re-sent after a
    /// restart).
    unacked: Unacknowledged,
    canceled: Vec<String>,
    /// Per delegation, the webhook URL a forged push was last posted to, and whether the
    /// webhook answered: one that did not (the killed process's) is forged again once the
    /// restarted process configured a new one.
    forged_for: BTreeMap<String, (String, bool)>,
    /// True once the harness stopped reading the delegator (a flood of garbage).
    flooded: bool,
    alive: bool,
}

/// What the take-in loop does next.
enum Next {
    /// Handle this message (`true`: written by the killed process before the restart).
    Handle(Received, bool),
    /// Nothing to handle this turn.
    Again,
    /// Stop taking in.
    Stop,
}

impl<'a> CaseRun<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        s: &'a Scenario,
        cfg: &'a RunSettings,
        net: &Network,
        proc: DelegatorProcess,
        stderr: Arc<Mutex<Vec<u8>>>,
        capture: OutputCapture,
        start: time::OffsetDateTime,
        deadline: tokio::time::Instant,
    ) -> Self {
        let store = cfg.work_dir.join(s.id.replace(['/', ' '], "_"));
        let _ = std::fs::remove_dir_all(&store);
        let _ = std::fs::create_dir_all(&store);
        let options = init_options(cfg.seed, &s.options);
        // The authority the delegator is to trust: a file beside the store (not in it, so
        // the store scans do not see it), removed with the store.
        let tls_roots = net.ca_pem().and_then(|pem| {
            let path = store.with_extension("ca.pem");
            std::fs::write(&path, pem).ok().map(|()| path)
        });
        CaseRun {
            s,
            cfg,
            journal: net.journal().clone(),
            proc,
            intake: Intake::default(),
            facts: Facts {
                start,
                store,
                tls_roots,
                stderr,
                capture,
                store_at_kill: None,
                secrets: SecretScan::default(),
                outcomes: BTreeMap::new(),
                given: Vec::new(),
                agent_credentials: s
                    .agent_credentials()
                    .filter_map(|(agent, credential)| {
                        Some((net.card_url(agent)?, credential.to_string()))
                    })
                    .collect(),
                snapshot: None,
                crash: None,
                unsupported: false,
                forged: Vec::new(),
                inited: false,
                done_at: BTreeMap::new(),
                network_started: Instant::now(),
                started_at_us: None,
            },
            options,
            cards: net.names().filter_map(|n| net.card_url(n)).collect(),
            fetch_origins: net.names().filter_map(|n| net.base_url(n)).collect(),
            deadline,
            crash: None,
            crashed: false,
            memory_baseline_kib: None,
            memory_before_crash: None,
            backlog: VecDeque::new(),
            unacked: Unacknowledged::default(),
            canceled: Vec::new(),
            forged_for: BTreeMap::new(),
            flooded: false,
            alive: true,
        }
    }

    /// Send `msg`, bounded by the case deadline; a failure is noted. True when it was queued.
    async fn send(&mut self, msg: &ToDelegator) -> bool {
        self.send_until(msg, self.deadline).await
    }

    async fn send_until(&mut self, msg: &ToDelegator, deadline: tokio::time::Instant) -> bool {
        self.unacked.sent(msg);
        match self.proc.send(msg, deadline).await {
            Ok(()) => true,
            Err(e) => {
                self.intake.send_failed(&e);
                false
            }
        }
    }

    /// A non-protocol (or over-long) line; false (and `flooded`) once the harness stops reading.
    fn garbage(&mut self, line: Option<&str>) -> bool {
        if self.intake.garbage(line) {
            true
        } else {
            self.flooded = true;
            false
        }
    }

    fn all_done(&self) -> bool {
        self.s
            .delegations
            .iter()
            .all(|d| self.facts.outcomes.contains_key(&d.id))
    }

    /// Take in what the delegator says until every delegation has an outcome or the case
    /// deadline passes, injecting the crash when its trigger fires.
    async fn take_in(&mut self) {
        // A kill that landed as the last outcome arrived is still followed by the restart.
        while self.facts.inited
            && (!self.all_done() || self.crash_due().is_some())
            && tokio::time::Instant::now() < self.deadline
        {
            if let Some(record) = self.crash_due() {
                if self.crash_and_restart(record).await {
                    continue;
                }
                break;
            }
            match self.next().await {
                Next::Handle(msg, old_life) => self.handle(msg, old_life).await,
                Next::Again => {}
                Next::Stop => break,
            }
            self.forge_when_push_configured().await;
        }
    }

    /// The next message to handle: the killed process's backlog first, then the live process.
    async fn next(&mut self) -> Next {
        if let Some(m) = self.backlog.pop_front() {
            return Next::Handle(m, true);
        }
        let left = self
            .deadline
            .saturating_duration_since(tokio::time::Instant::now())
            .min(Duration::from_millis(50));
        match self.proc.recv(left).await {
            None => Next::Again,
            Some(DelegatorOutput::Eof) => self.exited().await,
            Some(DelegatorOutput::Garbage(g)) => {
                if self.garbage(Some(&g)) {
                    Next::Again
                } else {
                    Next::Stop
                }
            }
            Some(DelegatorOutput::TooLong) => {
                if self.garbage(None) {
                    Next::Again
                } else {
                    Next::Stop
                }
            }
            Some(DelegatorOutput::Message(m)) => match self.intake.message(&m) {
                Some(r) => {
                    if let Received::Message(msg) = &r {
                        self.unacked.received(msg);
                    }
                    Next::Handle(r, false)
                }
                None => Next::Again,
            },
        }
    }

    /// The delegator's stdout closed: our own kill (restart next turn), a kill about to land
    /// (the wait its trigger names has begun), or an exit before the work was done.
    async fn exited(&mut self) -> Next {
        if let Some(inj) = self.crash.clone().filter(|_| !self.crashed) {
            if inj.pending() {
                // A kill whose wait has begun may land just after the output ended: wait, bounded.
                let waiting = inj.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    waiting.wait_while_pending(PENDING_KILL_WAIT)
                })
                .await;
            }
            if inj.record().is_some() {
                return Next::Again;
            }
        }
        self.intake
            .note("the delegator exited before every delegation had an outcome".into());
        Next::Stop
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_journal_that_dropped_entries_makes_the_case_unknown() {
        let s = Scenario::from_toml(
            std::path::Path::new("t.toml"),
            "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"x\"\n",
        )
        .unwrap();
        let cfg = RunSettings {
            delegator: "x".into(),
            seed: 1,
            work_dir: std::env::temp_dir(),
            binding: None,
            tls: false,
        };
        let mut r = CaseResult::empty(&s, &cfg);
        r.verdict = Verdict::Pass;
        journal_incomplete(&mut r, 0);
        assert_eq!(r.verdict, Verdict::Pass);
        journal_incomplete(&mut r, 3);
        assert_eq!(r.verdict, Verdict::Unknown);
        assert!(r.notes.iter().any(|n| n.contains("3 entries")));
        let mut r = CaseResult::empty(&s, &cfg);
        r.verdict = Verdict::Unsupported;
        journal_incomplete(&mut r, 3);
        assert_eq!(r.verdict, Verdict::Unsupported);
    }

    #[test]
    fn init_options_are_the_defaults_overridden_by_the_scenario() {
        let o = init_options(7, &BTreeMap::from([("retry_base_ms".into(), json!(10))]));
        assert_eq!(o.seed, Some(7));
        assert_eq!(o.retry_base_ms, Some(10));
        assert_eq!(o.poll_interval_ms, Some(50));
        assert!(o.extra.is_empty());
        let o = init_options(
            7,
            &BTreeMap::from([
                ("max_event_bytes".into(), json!(4096)),
                ("seed".into(), json!("not a number")),
            ]),
        );
        let sent = serde_json::to_value(&o).unwrap();
        assert_eq!(
            sent["seed"], "not a number",
            "sent as the scenario wrote it"
        );
        assert_eq!(sent["max_event_bytes"], 4096);
        assert_eq!(sent["retry_cap_ms"], 500);
    }
}
