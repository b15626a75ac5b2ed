//! One case, as named phases: start the network, start the delegator and initialise it, send
//! the delegations, take in what it says (answering escalations, sending cancels, injecting the
//! crash and restarting it), collect the evidence (snapshot, stop), judge.

use super::capture::{OutputCapture, scan_everything, scan_store_at_kill};
use super::crash::{BACKOFF_SETTLE, CrashInjector, CrashRecord};
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

    fn init_message(&self, recovering: bool) -> ToDelegator {
        let mut msg = init_message(
            &self.facts.store.display().to_string(),
            recovering,
            &self.cards,
            Some(WEBHOOK_BASE),
            SELF_URL,
            OWN_CREDENTIAL,
            self.options.clone(),
        );
        if let ToDelegator::Init(init) = &mut msg {
            init.agent_credentials = self.facts.agent_credentials.iter().cloned().collect();
            init.extensions = self.s.extensions.clone();
            init.fetch_origins = self.fetch_origins.clone();
            init.card_signatures = self
                .s
                .card_signature_policy(self.s.network.seed ^ self.cfg.seed);
            init.tls_roots = self
                .facts
                .tls_roots
                .as_ref()
                .map(|p| p.display().to_string());
        }
        msg
    }

    /// Crash injection: the injector watches the journal as its tripwire and SIGKILLs the
    /// delegator's process group at the trigger's named point (see [`super::crash`]);
    /// [`Self::take_in`] then restarts it. Memory cases watch the process group's memory.
    fn arm_crash(&mut self) {
        if self.s.memory_bound_mib.is_some() {
            self.proc.watch_memory();
        }
        let Some(c) = self.s.crash.as_ref() else {
            return;
        };
        let killer = self.proc.killer();
        let k = match c.trigger {
            CrashTrigger::AtEvent => c.event.map_or(1, std::num::NonZeroU64::get),
            _ => c.chunks,
        };
        let injector = CrashInjector::new(
            c.trigger,
            k,
            self.journal.clone(),
            Arc::new(move || killer.kill()),
            BACKOFF_SETTLE,
        );
        injector.arm();
        self.crash = Some(injector);
    }

    /// The process group's memory while it ran, with the baseline taken at `init_ok` (memory
    /// cases only). After a crash it is the killed process's: the restarted one gets what was
    /// already produced as one task snapshot (`SendStreamingMessage` deduplicated, or
    /// `SubscribeToTask`), not as a stream, so DLG-ART-10 judges the life that streamed, on
    /// what streamed before the kill.
    fn memory_reading(&self) -> Option<MemoryReading> {
        if let Some(m) = &self.memory_before_crash {
            return Some(m.clone());
        }
        let mut m = self.proc.memory()?;
        m.baseline_kib = self.memory_baseline_kib;
        Some(m)
    }

    /// Send `init` and wait for `init_ok`, bounded by [`INIT_WAIT`] and the case deadline.
    async fn initialise(&mut self) {
        let init = self.init_message(false);
        self.alive = self.send(&init).await;
        let init_until = (tokio::time::Instant::now() + INIT_WAIT).min(self.deadline);
        let mut inited = false;
        while self.alive && !inited && !self.flooded {
            // A kill before `init_ok` (an `at_event` crash during start-up): restart and wait
            // for the restarted process's `init_ok`.
            if let Some(record) = self.crash_due() {
                self.alive = self.crash_and_restart(record).await;
                continue;
            }
            let left = init_until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                self.intake.note(format!(
                    "the delegator did not answer init within {} ms",
                    INIT_WAIT.as_millis().min(u128::from(self.s.timeout_ms))
                ));
                break;
            }
            match self.proc.recv(left).await {
                None => {}
                Some(DelegatorOutput::Message(m)) => match self.intake.message(&m) {
                    Some(Received::Message(FromDelegator::InitOk(_))) => {
                        inited = true;
                        // Scenario deadlines count from here, when delegations can start: a
                        // delegator slow to start on a loaded machine does not eat into them.
                        self.facts.start = time::OffsetDateTime::now_utc();
                        self.facts.started_at_us =
                            Some(self.facts.network_started.elapsed().as_micros() as u64);
                        self.memory_baseline_kib = self.proc.group_rss_kib();
                    }
                    Some(Received::Message(FromDelegator::Error(e))) => {
                        if e.code == DriverErrorCode::Unsupported {
                            self.facts.unsupported = true;
                        }
                        self.intake.note(format!("init refused: {m}"));
                        self.alive = false;
                    }
                    Some(Received::Message(other)) => self
                        .intake
                        .note(format!("contract: {} before init_ok", other.type_name())),
                    Some(Received::Snapshot(_)) => self
                        .intake
                        .note("contract: snapshot_ok before init_ok".into()),
                    // Already noted: an unknown type, or a message the contract does not accept.
                    None => {}
                },
                Some(DelegatorOutput::Garbage(g)) => {
                    self.garbage(Some(&g));
                }
                Some(DelegatorOutput::TooLong) => {
                    self.garbage(None);
                }
                // Our own kill: the restart comes next turn.
                Some(DelegatorOutput::Eof) if self.crash_due().is_some() => {}
                Some(DelegatorOutput::Eof) => {
                    self.intake
                        .note("the delegator exited before init_ok".into());
                    self.alive = false;
                }
            }
        }
        self.facts.inited = inited && !self.flooded;
    }

    /// Send a `delegate` for `d`, noting a clamped deadline.
    async fn delegate(&mut self, d: &Delegation) {
        let (msg, note) = delegate_message(d, self.facts.start);
        if let Some(n) = note {
            self.intake.note(n);
        }
        self.send(&ToDelegator::Delegate(msg)).await;
    }

    /// The delegations that wait for no other.
    async fn send_first_delegations(&mut self) {
        if !self.facts.inited {
            return;
        }
        for d in self.s.delegations.iter().filter(|d| d.after.is_none()) {
            self.delegate(d).await;
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

    /// `forge_push` cases: once the journal shows the push config the delegator gave an agent
    /// for a delegation's task, post one notification with a wrong token to that webhook.
    async fn forge_when_push_configured(&mut self) {
        if !self.s.forge_push {
            return;
        }
        let s = self.s;
        for d in &s.delegations {
            if self
                .forged_for
                .get(&d.id)
                .is_some_and(|(_, reached)| *reached)
            {
                continue;
            }
            let Some(t) = self.journal.with_entries(|j| push_target(j, &d.text)) else {
                continue;
            };
            if self
                .forged_for
                .get(&d.id)
                .is_some_and(|(url, _)| *url == t.url)
            {
                continue;
            }
            let code = forge_push(&t.url, &t.task, &t.context).await;
            self.forged_for
                .insert(d.id.clone(), (t.url.clone(), code.is_some()));
            if let Some(code) = code {
                self.facts.forged.push(code);
            }
        }
    }

    /// The crash, once the injector killed the delegator and it is still to be restarted.
    fn crash_due(&self) -> Option<CrashRecord> {
        self.crash.as_ref().filter(|_| !self.crashed)?.record()
    }

    /// SIGKILL the delegator, keep what it wrote before it died, and restart it on the same
    /// store with `recovering: true`. False when the case cannot go on.
    async fn crash_and_restart(&mut self, record: CrashRecord) -> bool {
        self.crashed = true;
        self.proc.kill_group().await;
        self.intake.note(format!(
            "crash injected: SIGKILL after journal seq {} ({:?} fired at seq {}: {})",
            record.last_seq_before_kill, record.trigger, record.fired_seq, record.point
        ));
        if !record.at_named_point {
            self.intake.note(format!(
                "crash point missed: the delegator went past the point {:?} names before the kill landed, so the case did not test it",
                record.trigger
            ));
        }
        self.facts.crash = Some(record);
        // What the killed process wrote before it died is evidence too.
        let until = (tokio::time::Instant::now() + Duration::from_secs(1)).min(self.deadline);
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            match self.proc.recv(left).await {
                Some(DelegatorOutput::Message(m)) => {
                    if let Some(r) = self.intake.message(&m) {
                        if let Received::Message(msg) = &r {
                            self.unacked.received(msg);
                        }
                        self.backlog.push_back(r);
                    }
                }
                Some(DelegatorOutput::Garbage(g)) => {
                    if !self.garbage(Some(&g)) {
                        return false;
                    }
                }
                Some(DelegatorOutput::TooLong) => {
                    if !self.garbage(None) {
                        return false;
                    }
                }
                Some(DelegatorOutput::Eof) | None => break,
            }
        }
        if let Some(c) = self.facts.crash.as_mut() {
            c.messages_before_restart = Some(self.intake.messages.len());
        }
        self.scan_store_at_kill().await;
        self.intake.new_life();
        if self.s.memory_bound_mib.is_some() {
            self.memory_before_crash = self.memory_reading();
        }
        let tap = self.facts.capture.new_life();
        match DelegatorProcess::spawn_tapped(
            &self.cfg.delegator,
            self.facts.stderr.clone(),
            Some(tap),
        ) {
            Ok(p) => self.proc = p,
            Err(e) => {
                self.intake.note(format!("restart failed: {e}"));
                return false;
            }
        }
        let init = self.init_message(true);
        self.send(&init).await;
        // What the killed process never acknowledged may never have reached its store: a real
        // caller sends it again, with the same ids (a correct delegator takes a `delegate` it
        // had recorded as that same delegation).
        for msg in self.unacked.take() {
            let what = match &msg {
                ToDelegator::Delegate(d) => format!("delegate {}", d.id),
                ToDelegator::Cancel(c) => format!("cancel {}", c.id),
                _ => continue,
            };
            self.intake.note(format!(
                "re-sent after the restart (the killed process had not acknowledged it): {what}"
            ));
            self.send(&msg).await;
        }
        true
    }

    /// DLG-SECRET-01: the store as the killed process left it, scanned for the secrets known at
    /// the kill, before the restarted process may rewrite it (a secret it then removes was still
    /// written).
    async fn scan_store_at_kill(&mut self) {
        let secrets = self.journal.with_entries(|j| {
            known_secrets(
                OWN_CREDENTIAL,
                &self.facts.agent_credentials,
                &self.facts.given,
                j,
            )
        });
        let store = self.facts.store.clone();
        self.facts.store_at_kill =
            tokio::task::spawn_blocking(move || scan_store_at_kill(&secrets, &store))
                .await
                .ok();
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
                // The backoff kill lands within its settle time: wait for it, bounded.
                let waiting = inj.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    waiting.wait_while_pending(BACKOFF_SETTLE * 4)
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

    /// Act on one message: forge a push and send cancels on `state`, answer an `escalate`,
    /// record a `done` (and start the delegations waiting for it), note an `error`.
    async fn handle(&mut self, msg: Received, old_life: bool) {
        let Received::Message(msg) = msg else {
            // A snapshot_ok nobody asked for needs no action.
            return;
        };
        match msg {
            FromDelegator::State(st) if !old_life => self.on_state(&st).await,
            // An escalation of the killed process is reported again by the restarted one.
            FromDelegator::Escalate(e) if !old_life => {
                // The `input_round` (`auth_round`) crash point: the delegator has seen the
                // question (the auth request) and no answer (credential) has been given. The
                // restarted delegator reports it again.
                let round = match e.kind {
                    EscalationKind::Input => CrashTrigger::InputRound,
                    EscalationKind::Auth => CrashTrigger::AuthRound,
                };
                let at_crash_point = !self.crashed
                    && self.crash.as_ref().is_some_and(|c| {
                        c.trigger() == round
                            && c.kill_at_point(
                                "the delegator escalated it and the harness had not answered",
                            )
                    });
                if !at_crash_point {
                    self.on_escalate(&e).await;
                }
            }
            FromDelegator::Done(done) => {
                let id = done.id.clone();
                self.note_outcome_seq(&id);
                self.facts
                    .outcomes
                    .insert(id.clone(), FromDelegator::Done(done));
                let s = self.s;
                for d in s
                    .delegations
                    .iter()
                    .filter(|d| d.after.as_deref() == Some(id.as_str()))
                {
                    self.delegate(d).await;
                }
            }
            FromDelegator::Error(e) => {
                let line = serde_json::to_string(&e).unwrap_or_default();
                if e.code == DriverErrorCode::Unsupported {
                    self.facts.unsupported = true;
                    self.note_outcome_seq(e.id.as_deref().unwrap_or_default());
                    self.facts
                        .outcomes
                        .insert(e.id.clone().unwrap_or_default(), FromDelegator::Error(e));
                }
                self.intake.note(format!("delegator error: {line}"));
            }
            // Other types need no action.
            _ => {}
        }
    }

    /// Evidence: the journal as it stood when the outcome of `id` arrived (only what is in it
    /// can have caused that outcome).
    fn note_outcome_seq(&mut self, id: &str) {
        let last = self.journal.with_entries(|j| j.last().map_or(0, |e| e.seq));
        self.facts.done_at.insert(id.to_string(), last);
    }

    async fn on_state(&mut self, msg: &StateChange) {
        let id = msg.id.as_str();
        let bare = |x: &str| x.trim_start_matches("TASK_STATE_").to_ascii_uppercase();
        let s = self.s;
        for c in &s.cancels {
            if c.id == id
                && !self.canceled.contains(&c.id)
                && c.when_state
                    .as_deref()
                    .is_none_or(|w| bare(w) == msg.state.as_str())
            {
                self.canceled.push(c.id.clone());
                let cancel = ToDelegator::Cancel(Cancel { id: id.to_string() });
                self.send(&cancel).await;
            }
        }
    }

    async fn on_escalate(&mut self, msg: &Escalate) {
        let (id, kind) = (msg.id.as_str(), msg.kind);
        let used = self
            .facts
            .given
            .iter()
            .filter(|(i, k, _)| i == id && *k == kind)
            .count();
        let answers: Vec<&Answer> = self
            .s
            .answers
            .iter()
            .filter(|a| a.id == id && a.kind == kind)
            .collect();
        if let Some(a) = answers.get(used).or(answers.last()) {
            let reply = match kind {
                EscalationKind::Auth => ToDelegator::Credential(Credential {
                    id: id.to_string(),
                    credential: a.value.clone(),
                }),
                EscalationKind::Input => ToDelegator::Answer(a2a_driver_contract::Answer {
                    id: id.to_string(),
                    text: a.value.clone(),
                }),
            };
            self.facts
                .given
                .push((id.to_string(), kind, a.value.clone()));
            self.send(&reply).await;
        }
    }

    /// Note the delegations without an outcome when the case deadline passed.
    fn note_time_bound(&mut self) {
        if let Some(c) = self.crash.as_ref().filter(|c| c.record().is_none()) {
            let journal_end = self.journal.with_entries(|j| j.last().map_or(0, |e| e.seq));
            self.intake.note(format!(
                "crash trigger {:?} never reached its point: no crash was injected (the journal ended at seq {journal_end})",
                c.trigger()
            ));
        }
        if self.facts.inited && !self.flooded && !self.all_done() {
            let missing = self
                .s
                .delegations
                .iter()
                .filter(|d| !self.facts.outcomes.contains_key(&d.id))
                .count();
            self.intake.note(format!(
                "time bound: {missing} of {} delegations had no outcome after {} ms",
                self.s.delegations.len(),
                self.s.timeout_ms
            ));
        }
    }

    /// A delegator whose stdin has stayed full does not read its requests: a contract break.
    /// True when it stalled.
    fn note_stdin_stall(&mut self) -> bool {
        let stalled = self
            .proc
            .write_blocked()
            .filter(|(blocked, _)| *blocked >= STDIN_STALL);
        if let Some((blocked, queued)) = stalled
            && !self.intake.stalled_noted
        {
            self.intake.stalled_noted = true;
            self.intake.note(format!(
                "contract: the delegator did not read its stdin: a write blocked for {} ms, {queued} more messages queued",
                blocked.as_millis()
            ));
        }
        stalled.is_some()
    }

    /// Ask for the snapshot and wait (at most 5 s) for `snapshot_ok`.
    async fn take_snapshot(&mut self, stalled: bool) {
        let until = tokio::time::Instant::now() + Duration::from_secs(5);
        if !self.facts.inited
            || self.flooded
            || stalled
            || !self.send_until(&ToDelegator::Snapshot, until).await
        {
            return;
        }
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            match self.proc.recv(left).await {
                Some(DelegatorOutput::Message(m)) => {
                    if let Some(Received::Snapshot(records)) = self.intake.message(&m) {
                        self.facts.snapshot = Some(records);
                        break;
                    }
                }
                Some(DelegatorOutput::Garbage(g)) => {
                    if !self.garbage(Some(&g)) {
                        break;
                    }
                }
                Some(DelegatorOutput::TooLong) => {
                    if !self.garbage(None) {
                        break;
                    }
                }
                Some(DelegatorOutput::Eof) | None => break,
            }
        }
    }

    /// Stop the delegator: EOF and a grace period, or a kill after a flood.
    async fn stop(mut self, stalled: bool) -> (Intake, Facts) {
        if self.flooded {
            self.proc.kill_group().await;
        } else {
            // Without init_ok, or with a stdin it does not read, there is no work to let it finish.
            let grace = if self.facts.inited && !stalled {
                Duration::from_secs(3)
            } else {
                Duration::from_millis(300)
            };
            self.proc.finish(grace).await;
        }
        (self.intake, self.facts)
    }
}

/// Judge the evidence and fill in the case result.
fn verdict(
    s: &Scenario,
    intake: &mut Intake,
    facts: Facts,
    entries: Vec<Entry>,
    memory: Option<MemoryReading>,
    mut result: CaseResult,
    t0: Instant,
) -> CaseResult {
    let messages = std::mem::take(&mut intake.messages);
    let typed = std::mem::take(&mut intake.typed);
    // Before the store is removed below: what the reported files hold.
    let files = crate::rules::hash_reported_files(&facts.outcomes);
    // DLG-UNTRUSTED-02, where it is judged: what agent-chosen names made outside the store
    // during the case.
    let untrusted_02 = "DLG-UNTRUSTED-02";
    let judged = s.rules.iter().any(|r| r == untrusted_02)
        || crate::rules::registry()
            .iter()
            .any(|r| r.id == untrusted_02 && r.always);
    let trap_hits = if judged {
        crate::rules::trap_hits(&facts.store, facts.start.into())
    } else {
        Vec::new()
    };
    let ev = Evidence {
        scenario: s,
        journal: &entries,
        messages: &typed,
        outcomes: &facts.outcomes,
        snapshot: facts.snapshot.as_deref(),
        self_url: SELF_URL,
        credential: OWN_CREDENTIAL,
        given: &facts.given,
        crash_seq: facts.crash.as_ref().map(|c| c.last_seq_before_kill),
        start: facts.start,
        forged_pushes: &facts.forged,
        memory,
        done_at: &facts.done_at,
        artifact_files: &files,
        secrets: &facts.secrets,
        store_dir: &facts.store,
        trap_hits: &trap_hits,
    };
    if !facts.secrets.limits.is_empty() {
        intake.note(format!(
            "DLG-SECRET-01 judged what was scanned ({}); not scanned: {}",
            facts.secrets.covered.join("; "),
            facts.secrets.limits.join("; ")
        ));
    }
    let verdicts = judge(s, &ev, &entries);
    result.verdict = case_verdict(
        &verdicts,
        intake.contract_broken,
        facts.unsupported,
        facts.inited,
    );
    if facts.crash.as_ref().is_some_and(|c| !c.at_named_point) && result.verdict == Verdict::Pass {
        // The case did not test what it names (a note says why): no PASS.
        result.verdict = Verdict::Unknown;
    }
    result.crash = facts.crash.clone();
    result.started_at_us = facts.started_at_us;
    result.done_at = facts.done_at.clone();
    result.rules = verdicts;
    result.notes = intake.closing_notes();
    result.outcomes = facts.outcomes;
    result.messages = messages;
    result.stderr =
        String::from_utf8_lossy(&facts.stderr.lock().unwrap_or_else(|p| p.into_inner()))
            .into_owned();
    result.journal = entries;
    result.duration_ms = t0.elapsed().as_millis() as u64;
    let _ = std::fs::remove_dir_all(&facts.store);
    if let Some(p) = &facts.tls_roots {
        let _ = std::fs::remove_file(p);
    }
    result
}

/// The `init` options: the harness's fast timings, overridden by the scenario's `options`. A
/// scenario option the typed contract does not accept (such as a string `seed`) is still sent
/// as written, with every option passed through untyped.
fn init_options(seed: u64, overrides: &BTreeMap<String, Value>) -> InitOptions {
    let defaults = InitOptions {
        seed: Some(seed),
        retry_base_ms: Some(crate::rules::DEFAULT_RETRY_BASE_MS),
        retry_cap_ms: Some(crate::rules::DEFAULT_RETRY_CAP_MS),
        poll_interval_ms: Some(crate::rules::DEFAULT_POLL_INTERVAL_MS),
        deadline_margin_ms: Some(200),
        ..InitOptions::default()
    };
    if overrides.is_empty() {
        return defaults;
    }
    let mut options = match serde_json::to_value(&defaults) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for (k, v) in overrides {
        options.insert(k.clone(), v.clone());
    }
    serde_json::from_value(Value::Object(options.clone())).unwrap_or(InitOptions {
        extra: options,
        ..InitOptions::default()
    })
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
