//! Running one case: start its network, drive the delegator through the driver contract, answer
//! its escalations, inject the crash, collect the evidence and turn it into verdicts.

use crate::driver::{DelegatorProcess, DriverError, FromDelegator, init_message};
use crate::rules::{Check, Evidence, Level, registry};
use crate::scenario::{CrashTrigger, Scenario};
use a2a_mock_agents::{Entry, Event, Network};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The verdict of a case or a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Every rule held.
    #[serde(rename = "PASS")]
    Pass,
    /// A MUST rule was broken.
    #[serde(rename = "FAIL")]
    Fail,
    /// Only SHOULD rules were broken.
    #[serde(rename = "NON-STRICT")]
    NonStrict,
    /// The delegator declined through the contract.
    #[serde(rename = "UNSUPPORTED")]
    Unsupported,
    /// Failed, and listed as known-failing.
    #[serde(rename = "XFAIL")]
    XFail,
    /// Passed, but listed as known-failing: the list is stale.
    #[serde(rename = "XPASS")]
    XPass,
    /// Nothing observed before the bound.
    #[serde(rename = "UNKNOWN")]
    Unknown,
}

impl Verdict {
    /// The label used in reports.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NonStrict => "NON-STRICT",
            Verdict::Unsupported => "UNSUPPORTED",
            Verdict::XFail => "XFAIL",
            Verdict::XPass => "XPASS",
            Verdict::Unknown => "UNKNOWN",
        }
    }
    /// True when this verdict fails the run.
    pub fn fails_run(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::XPass | Verdict::Unknown)
    }
}

/// The verdict of one rule in one case.
#[derive(Debug, Clone, Serialize)]
pub struct RuleVerdict {
    /// Rule id.
    pub id: String,
    /// MUST/SHOULD/MAY.
    pub level: Level,
    /// Verdict.
    pub verdict: Verdict,
    /// What should have happened (on failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What happened (on failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// Witness journal entries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<Entry>,
}

/// Everything about one case run.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// Case id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Per-rule verdicts.
    pub rules: Vec<RuleVerdict>,
    /// The seed used.
    pub seed: u64,
    /// The command that reproduces this case.
    pub repro: String,
    /// Wall time.
    pub duration_ms: u64,
    /// Harness notes (contract violations, crashes, timeouts).
    pub notes: Vec<String>,
    /// Outcomes reported by the delegator.
    pub outcomes: BTreeMap<String, Value>,
    /// Every protocol message from the delegator.
    pub messages: Vec<Value>,
    /// The delegator's stderr (tail).
    pub stderr: String,
    /// The case's journal.
    pub journal: Vec<Entry>,
}

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The delegator command.
    pub delegator: String,
    /// The seed.
    pub seed: u64,
    /// Where per-case stores go.
    pub work_dir: PathBuf,
}

const SELF_URL: &str = "http://127.0.0.1:9/delegator-under-test";
/// Push notifications go to a receiver the delegator binds on a free loopback port.
const WEBHOOK_BASE: &str = "http://127.0.0.1:0";
const OWN_CREDENTIAL: &str = "Bearer delegator-own-secret-never-forward";

/// Protocol messages kept per case; later ones are counted.
pub const MAX_MESSAGES: usize = 10_000;
/// Notes kept per case; later ones are counted.
pub const MAX_NOTES: usize = 200;
/// Non-protocol stdout lines after which the harness stops reading the delegator.
pub const MAX_GARBAGE: u64 = 1000;
/// Non-protocol lines quoted one note each; the rest are counted in one note.
const GARBAGE_QUOTED: u64 = 20;
/// The longest wait for `init_ok` (the case deadline may end it sooner).
const INIT_WAIT: Duration = Duration::from_secs(15);
/// A write to the delegator's stdin blocked this long at the end of the case is a contract break.
const STDIN_STALL: Duration = Duration::from_secs(1);

/// The driver schemas of the messages a delegator writes (`docs/driver-schema/`), embedded:
/// they are part of the contract.
const DELEGATOR_SCHEMAS: &[(&str, &str)] = &[
    (
        "init_ok",
        include_str!("../../docs/driver-schema/init_ok.json"),
    ),
    ("state", include_str!("../../docs/driver-schema/state.json")),
    (
        "escalate",
        include_str!("../../docs/driver-schema/escalate.json"),
    ),
    ("done", include_str!("../../docs/driver-schema/done.json")),
    (
        "snapshot_ok",
        include_str!("../../docs/driver-schema/snapshot_ok.json"),
    ),
    ("error", include_str!("../../docs/driver-schema/error.json")),
];

fn validators() -> &'static BTreeMap<&'static str, jsonschema::Validator> {
    static V: OnceLock<BTreeMap<&'static str, jsonschema::Validator>> = OnceLock::new();
    V.get_or_init(|| {
        DELEGATOR_SCHEMAS
            .iter()
            .filter_map(|(ty, text)| {
                // Both cannot fail for the embedded files (a unit test compiles each).
                let schema: Value = serde_json::from_str(text).ok()?;
                Some((*ty, jsonschema::validator_for(&schema).ok()?))
            })
            .collect()
    })
}

/// What is wrong with a message from the delegator, against the driver schemas.
pub fn contract_problem(m: &Value) -> Option<String> {
    let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
    let Some(v) = validators().get(ty) else {
        return Some(format!("unknown message type {ty:?}"));
    };
    let errors: Vec<String> = v.iter_errors(m).take(3).map(|e| e.to_string()).collect();
    if errors.is_empty() {
        None
    } else {
        Some(format!(
            "{ty} message violates docs/driver-schema/{ty}.json: {}",
            errors.join("; ")
        ))
    }
}

/// A crash trigger evaluated one journal entry at a time.
#[derive(Debug, Clone)]
struct TriggerState {
    trigger: CrashTrigger,
    k: u64,
    chunks: u64,
}

impl TriggerState {
    fn new(trigger: CrashTrigger, k: u64) -> Self {
        TriggerState {
            trigger,
            k,
            chunks: 0,
        }
    }

    /// True when `e` fires the trigger.
    fn observe(&mut self, e: &Entry) -> bool {
        match (&e.event, self.trigger) {
            (
                Event::Request {
                    method: Some(m), ..
                },
                CrashTrigger::FirstRequest,
            ) => m.contains("Message") || m.starts_with("message/"),
            (Event::ConnectionDropped { phase, .. }, CrashTrigger::IndefiniteSend) => {
                phase == "after_processing"
            }
            (Event::ArtifactChunk { .. }, CrashTrigger::AfterChunks) => {
                self.chunks += 1;
                self.chunks >= self.k.max(1)
            }
            (Event::TaskState { state, .. }, CrashTrigger::InputRound) => {
                state == "TASK_STATE_INPUT_REQUIRED"
            }
            (Event::Fault { kind, .. }, CrashTrigger::RetryBackoff) => {
                kind.starts_with("http_status")
            }
            _ => false,
        }
    }
}

/// True for crash triggers that must strike before the delegator sees the agent's next
/// output (the request reached the agent; the response was dropped; the K-th chunk left), so
/// they are injected synchronously by a journal tripwire. The other two (an input round, a
/// retry backoff) mean that the delegator has seen the question or the error and waits: a kill
/// before it could see them would test the first request again. They keep the journal polling
/// (up to 50 ms after the event).
fn at_the_agent(trigger: CrashTrigger) -> bool {
    matches!(
        trigger,
        CrashTrigger::FirstRequest | CrashTrigger::IndefiniteSend | CrashTrigger::AfterChunks
    )
}

fn crash_fired(trigger: CrashTrigger, k: u64, j: &[Entry]) -> Option<u64> {
    let mut t = TriggerState::new(trigger, k);
    j.iter().find(|e| t.observe(e)).map(|e| e.seq)
}

/// The latest and earliest instants a delegation deadline is sent as (RFC 3339, 4-digit year).
fn deadline_bounds() -> (time::OffsetDateTime, time::OffsetDateTime) {
    (
        time::macros::datetime!(0001-01-01 00:00:00 UTC),
        time::macros::datetime!(9999-12-31 23:59:59.999 UTC),
    )
}

/// The `delegate` request for `d`, and a note when its deadline had to be clamped (an
/// out-of-range `deadline_in_ms` is a scenario error, rejected by the loader; this only keeps
/// the runner from panicking).
fn delegate_message(
    d: &crate::scenario::Delegation,
    start: time::OffsetDateTime,
) -> (Value, Option<String>) {
    let mut note = None;
    let deadline = d.deadline_in_ms.map(|ms| {
        let (lo, hi) = deadline_bounds();
        let at = start
            .checked_add(time::Duration::milliseconds(ms))
            .filter(|t| (lo..=hi).contains(t))
            .unwrap_or_else(|| {
                note = Some(format!(
                    "scenario: delegation {:?}: deadline_in_ms {ms} is out of range; sent clamped",
                    d.id
                ));
                if ms < 0 { lo } else { hi }
            });
        a2a_protocol::Timestamp::from_datetime(at).to_rfc3339()
    });
    let chain: Vec<String> = d
        .chain
        .iter()
        .map(|c| {
            if c == "$self" {
                SELF_URL.to_string()
            } else {
                c.clone()
            }
        })
        .collect();
    let msg = json!({
        "type": "delegate",
        "id": d.id,
        "capability": d.capability,
        "text": d.text,
        "inputs": d.inputs,
        "artifact_spec": {"mime_types": d.mime_types, "max_size_bytes": d.max_size_bytes, "streaming_preferred": d.streaming_preferred, "schema": d.schema},
        "timeout_seconds": d.timeout_seconds,
        "deadline": deadline,
        "budget_usd": d.budget_usd,
        "max_retries": d.max_retries,
        "priority": "normal",
        "depth": d.depth,
        "chain": chain,
        "children": if d.children.is_empty() { Value::Null } else { json!(d.children.iter().map(|c| json!({"id": c.id, "capability": c.capability, "text": c.text})).collect::<Vec<_>>()) },
        "refine_of": d.refine_of,
    });
    (msg, note)
}

/// The command that reproduces a case (shell-quoted).
pub fn repro_command(s: &Scenario, cfg: &RunSettings) -> String {
    format!(
        "a2a-harness run --case {} --seed {} --delegator {}",
        crate::driver::shell_quote(&s.id),
        cfg.seed,
        crate::driver::shell_quote(&cfg.delegator)
    )
}

impl CaseResult {
    fn empty(s: &Scenario, cfg: &RunSettings) -> CaseResult {
        CaseResult {
            id: s.id.clone(),
            title: s.title.clone(),
            verdict: Verdict::Unknown,
            rules: Vec::new(),
            seed: cfg.seed,
            repro: repro_command(s, cfg),
            duration_ms: 0,
            notes: Vec::new(),
            outcomes: BTreeMap::new(),
            messages: Vec::new(),
            stderr: String::new(),
            journal: Vec::new(),
        }
    }

    /// A FAIL for a case the harness could not finish (for example a panic in its task).
    pub fn harness_failure(s: &Scenario, cfg: &RunSettings, note: String) -> CaseResult {
        let mut r = CaseResult::empty(s, cfg);
        r.verdict = Verdict::Fail;
        r.notes.push(note);
        r
    }
}

/// What the harness keeps of a case's delegator: bounded notes and messages, contract checks.
#[derive(Default)]
struct Intake {
    notes: Vec<String>,
    notes_dropped: u64,
    contract_broken: bool,
    messages: Vec<Value>,
    messages_dropped: u64,
    garbage: u64,
    /// Delegations that reported `done` in this process life.
    done: BTreeSet<String>,
    stalled_noted: bool,
}

impl Intake {
    fn note(&mut self, n: String) {
        if n.starts_with("contract:") {
            self.contract_broken = true;
        }
        if self.notes.len() < MAX_NOTES {
            self.notes.push(n);
        } else {
            self.notes_dropped += 1;
        }
    }

    /// Check a protocol message against the contract and keep it.
    fn message(&mut self, m: &Value) {
        if let Some(p) = contract_problem(m) {
            self.note(format!("contract: {p}"));
        }
        if m.get("type").and_then(Value::as_str) == Some("done")
            && let Some(id) = m.get("id").and_then(Value::as_str)
            && !self.done.insert(id.to_string())
        {
            self.note(format!(
                "contract: a second done for {id:?} in the same process life"
            ));
        }
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(m.clone());
        } else {
            self.messages_dropped += 1;
        }
    }

    /// A non-protocol line (or an over-long one); false once the harness should stop reading.
    fn garbage(&mut self, line: Option<&str>) -> bool {
        self.garbage += 1;
        if self.garbage <= GARBAGE_QUOTED {
            self.note(match line {
                Some(g) => format!("contract: non-protocol stdout line: {g}"),
                None => format!(
                    "contract: line longer than {} MiB (discarded up to its newline)",
                    crate::driver::MAX_LINE >> 20
                ),
            });
        }
        if self.garbage >= MAX_GARBAGE {
            self.note(format!(
                "contract: stopped reading the delegator's stdout after {MAX_GARBAGE} non-protocol lines"
            ));
            return false;
        }
        true
    }

    /// A send failed: a stalled stdin is a contract break (noted once), other errors a note.
    fn send_failed(&mut self, e: &DriverError) {
        match e {
            DriverError::Stalled { .. } => {
                if !std::mem::replace(&mut self.stalled_noted, true) {
                    self.note(format!("contract: {e}"));
                }
            }
            e => self.note(e.to_string()),
        }
    }

    /// A new process life (after a restart): `done` may be reported again.
    fn new_life(&mut self) {
        self.done.clear();
    }

    /// The notes, with one line for each count of what was not kept.
    fn closing_notes(&mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.notes);
        if self.garbage > GARBAGE_QUOTED {
            notes.push(format!(
                "contract: {} more non-protocol stdout lines not listed ({} in all)",
                self.garbage - GARBAGE_QUOTED,
                self.garbage
            ));
        }
        if self.messages_dropped > 0 {
            notes.push(format!(
                "{} more protocol messages not kept (the first {MAX_MESSAGES} are)",
                self.messages_dropped
            ));
        }
        if self.notes_dropped > 0 {
            notes.push(format!(
                "{} more notes not kept (the first {MAX_NOTES} are)",
                self.notes_dropped
            ));
        }
        notes
    }
}

/// Send `msg`, bounded by `deadline`; a failure is noted. True when it was queued.
async fn send(
    proc: &mut DelegatorProcess,
    intake: &mut Intake,
    msg: &Value,
    deadline: tokio::time::Instant,
) -> bool {
    match proc.send(msg, deadline).await {
        Ok(()) => true,
        Err(e) => {
            intake.send_failed(&e);
            false
        }
    }
}

/// Run one case against the delegator.
pub async fn run_case(s: &Scenario, cfg: &RunSettings) -> CaseResult {
    let t0 = Instant::now();
    let start = time::OffsetDateTime::now_utc();
    let mut intake = Intake::default();
    let mut spec = s.network.clone();
    spec.seed ^= cfg.seed;
    let mut result = CaseResult::empty(s, cfg);
    let net = match Network::start(spec).await {
        Ok(n) => n,
        Err(e) => {
            result.notes.push(format!("network did not start: {e}"));
            return result;
        }
    };
    let store = cfg.work_dir.join(s.id.replace(['/', ' '], "_"));
    let _ = std::fs::remove_dir_all(&store);
    let _ = std::fs::create_dir_all(&store);
    let cards: Vec<String> = net.names().filter_map(|n| net.card_url(n)).collect();
    let mut options = json!({"seed": cfg.seed, "retry_base_ms": 50, "retry_cap_ms": 500, "poll_interval_ms": 50, "deadline_margin_ms": 200});
    if let Some(o) = options.as_object_mut() {
        for (k, v) in &s.options {
            o.insert(k.clone(), v.clone());
        }
    }
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let deadline = tokio::time::Instant::now() + Duration::from_millis(s.timeout_ms);
    let mut outcomes: BTreeMap<String, Value> = BTreeMap::new();
    let mut given: Vec<(String, String, String)> = Vec::new();
    let mut snapshot: Option<Value> = None;
    let mut crash_seq = None;
    let mut unsupported = false;
    let mut canceled: Vec<String> = Vec::new();
    let mut webhook_url: Option<String> = None;
    let mut forged: Vec<u16> = Vec::new();
    let mut forged_for: Vec<String> = Vec::new();
    // True once the harness stopped reading the delegator (a flood of garbage).
    let mut flooded = false;

    let mut proc = match DelegatorProcess::spawn(&cfg.delegator, stderr.clone()) {
        Ok(p) => p,
        Err(e) => {
            result.notes.push(e.to_string());
            result.verdict = Verdict::Fail;
            net.shutdown().await;
            return result;
        }
    };
    let journal = net.journal().clone();
    // Crash injection: a tripwire inside the journal SIGKILLs the delegator's process group at
    // the trigger, before the agent that recorded it answers; the loop below then restarts it.
    // Triggers that mean "the delegator has seen it and waits" are found by polling instead.
    let tripped = Arc::new(AtomicU64::new(0));
    if let Some(c) = s.crash.as_ref().filter(|c| at_the_agent(c.trigger)) {
        let state = Mutex::new(TriggerState::new(c.trigger, c.chunks));
        let killer = proc.killer();
        let fired = tripped.clone();
        journal.set_tripwire(Arc::new(move |e: &Entry| {
            let hit = state.lock().unwrap_or_else(|p| p.into_inner()).observe(e);
            if hit {
                fired.store(e.seq, Ordering::SeqCst);
                killer.kill();
            }
            hit
        }));
    }
    let init = |recovering: bool| {
        init_message(
            &store.display().to_string(),
            recovering,
            &cards,
            Some(WEBHOOK_BASE),
            SELF_URL,
            OWN_CREDENTIAL,
            options.clone(),
        )
    };
    let mut alive = send(&mut proc, &mut intake, &init(false), deadline).await;
    // Wait for init_ok, bounded by INIT_WAIT and the case deadline.
    let init_until = (tokio::time::Instant::now() + INIT_WAIT).min(deadline);
    let mut inited = false;
    while alive && !inited && !flooded {
        let left = init_until.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            intake.note(format!(
                "the delegator did not answer init within {} ms",
                INIT_WAIT.as_millis().min(u128::from(s.timeout_ms))
            ));
            break;
        }
        match proc.recv(left).await {
            None => {}
            Some(FromDelegator::Message(m)) => {
                intake.message(&m);
                let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
                match ty {
                    "init_ok" => {
                        inited = true;
                        webhook_url = m
                            .get("webhook_url")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    "error" => {
                        if m.get("code").and_then(Value::as_str) == Some("unsupported") {
                            unsupported = true;
                        }
                        intake.note(format!("init refused: {m}"));
                        alive = false;
                    }
                    ty if validators().contains_key(ty) => {
                        intake.note(format!("contract: {ty} before init_ok"))
                    }
                    // Already noted as an unknown type.
                    _ => {}
                }
            }
            Some(FromDelegator::Garbage(g)) => flooded = !intake.garbage(Some(&g)),
            Some(FromDelegator::TooLong) => flooded = !intake.garbage(None),
            Some(FromDelegator::Eof) => {
                intake.note("the delegator exited before init_ok".into());
                alive = false;
            }
        }
    }
    let inited = inited && !flooded;
    if inited {
        for d in s.delegations.iter().filter(|d| d.after.is_none()) {
            let (msg, note) = delegate_message(d, start);
            if let Some(n) = note {
                intake.note(n);
            }
            send(&mut proc, &mut intake, &msg, deadline).await;
        }
    }
    let mut crashed = false;
    // Messages the killed process wrote before it died, handled after the restart.
    let mut backlog: VecDeque<Value> = VecDeque::new();
    while inited && !all_done(s, &outcomes) && tokio::time::Instant::now() < deadline {
        if let (Some(c), false) = (&s.crash, crashed) {
            let (seq, how) = match tripped.load(Ordering::SeqCst) {
                0 => (
                    journal.with_entries(|j| crash_fired(c.trigger, c.chunks, j)),
                    "found by polling the journal",
                ),
                seq => (Some(seq), "by the journal tripwire"),
            };
            if let Some(seq) = seq {
                crashed = true;
                crash_seq = Some(seq);
                proc.kill_group().await;
                intake.note(format!(
                    "crash injected: SIGKILL at journal seq {seq} ({:?}, {how})",
                    c.trigger
                ));
                // What the killed process wrote before it died is evidence too.
                let until = (tokio::time::Instant::now() + Duration::from_secs(1)).min(deadline);
                loop {
                    let left = until.saturating_duration_since(tokio::time::Instant::now());
                    match proc.recv(left).await {
                        Some(FromDelegator::Message(m)) => {
                            intake.message(&m);
                            backlog.push_back(m);
                        }
                        Some(FromDelegator::Garbage(g)) => {
                            if !intake.garbage(Some(&g)) {
                                flooded = true;
                                break;
                            }
                        }
                        Some(FromDelegator::TooLong) => {
                            if !intake.garbage(None) {
                                flooded = true;
                                break;
                            }
                        }
                        Some(FromDelegator::Eof) | None => break,
                    }
                }
                if flooded {
                    break;
                }
                intake.new_life();
                match DelegatorProcess::spawn(&cfg.delegator, stderr.clone()) {
                    Ok(p) => proc = p,
                    Err(e) => {
                        intake.note(format!("restart failed: {e}"));
                        break;
                    }
                }
                send(&mut proc, &mut intake, &init(true), deadline).await;
                continue;
            }
        }
        let (msg, old_life) = if let Some(m) = backlog.pop_front() {
            (m, true)
        } else {
            let left = deadline
                .saturating_duration_since(tokio::time::Instant::now())
                .min(Duration::from_millis(50));
            match proc.recv(left).await {
                None => continue,
                Some(FromDelegator::Eof) => {
                    if s.crash.is_some() && !crashed {
                        // Our own SIGKILL from the tripwire: restart at the top of the loop.
                        if tripped.load(Ordering::SeqCst) != 0 {
                            continue;
                        }
                        // It died on its own: give a pending crash trigger a chance.
                        let wait = deadline
                            .saturating_duration_since(tokio::time::Instant::now())
                            .min(Duration::from_millis(2000));
                        let c = s.crash.as_ref().map(|c| (c.trigger, c.chunks));
                        let fired =
                            |j: &[Entry]| c.is_some_and(|(t, k)| crash_fired(t, k, j).is_some());
                        let _ = journal.wait_for(wait, fired).await;
                        if tripped.load(Ordering::SeqCst) != 0 || journal.with_entries(fired) {
                            continue;
                        }
                    }
                    intake
                        .note("the delegator exited before every delegation had an outcome".into());
                    break;
                }
                Some(FromDelegator::Garbage(g)) => {
                    if intake.garbage(Some(&g)) {
                        continue;
                    }
                    flooded = true;
                    break;
                }
                Some(FromDelegator::TooLong) => {
                    if intake.garbage(None) {
                        continue;
                    }
                    flooded = true;
                    break;
                }
                Some(FromDelegator::Message(m)) => {
                    intake.message(&m);
                    (m, false)
                }
            }
        };
        let ty = msg.get("type").and_then(Value::as_str).unwrap_or_default();
        let id = msg
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match ty {
            "state" if !old_life => {
                let st = msg.get("state").and_then(Value::as_str).unwrap_or_default();
                if s.forge_push
                    && !forged_for.contains(&id)
                    && st.ends_with("WORKING")
                    && let (Some(url), Some(task)) =
                        (&webhook_url, msg.get("task_id").and_then(Value::as_str))
                {
                    forged_for.push(id.clone());
                    let ctx = msg
                        .get("context_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if let Some(code) = forge_push(url, &id, task, ctx).await {
                        forged.push(code);
                    }
                }
                let bare = |x: &str| x.trim_start_matches("TASK_STATE_").to_ascii_uppercase();
                for c in &s.cancels {
                    if c.id == id
                        && !canceled.contains(&c.id)
                        && c.when_state.as_deref().is_none_or(|w| bare(w) == bare(st))
                    {
                        canceled.push(c.id.clone());
                        let cancel = json!({"type": "cancel", "id": id});
                        send(&mut proc, &mut intake, &cancel, deadline).await;
                    }
                }
            }
            // An escalation of the killed process is reported again by the restarted one.
            "escalate" if !old_life => {
                let kind = msg.get("kind").and_then(Value::as_str).unwrap_or_default();
                let used = given
                    .iter()
                    .filter(|(i, k, _)| *i == id && k == kind)
                    .count();
                let answers: Vec<&crate::scenario::Answer> = s
                    .answers
                    .iter()
                    .filter(|a| a.id == id && a.kind == kind)
                    .collect();
                if let Some(a) = answers.get(used).or(answers.last()) {
                    let reply = if kind == "auth" {
                        json!({"type": "credential", "id": id, "credential": a.value})
                    } else {
                        json!({"type": "answer", "id": id, "text": a.value})
                    };
                    given.push((id.clone(), kind.to_string(), a.value.clone()));
                    send(&mut proc, &mut intake, &reply, deadline).await;
                }
            }
            "done" => {
                outcomes.insert(id.clone(), msg.clone());
                for d in s
                    .delegations
                    .iter()
                    .filter(|d| d.after.as_deref() == Some(id.as_str()))
                {
                    let (m, note) = delegate_message(d, start);
                    if let Some(n) = note {
                        intake.note(n);
                    }
                    send(&mut proc, &mut intake, &m, deadline).await;
                }
            }
            "error" => {
                if msg.get("code").and_then(Value::as_str) == Some("unsupported") {
                    unsupported = true;
                    outcomes.insert(id.clone(), msg.clone());
                }
                intake.note(format!("delegator error: {msg}"));
            }
            // Other types need no action (unknown ones were noted as contract breaks).
            _ => {}
        }
    }
    journal.clear_tripwire();
    if inited && !flooded && !all_done(s, &outcomes) {
        let missing = s
            .delegations
            .iter()
            .filter(|d| !outcomes.contains_key(&d.id))
            .count();
        intake.note(format!(
            "time bound: {missing} of {} delegations had no outcome after {} ms",
            s.delegations.len(),
            s.timeout_ms
        ));
    }
    // A delegator whose stdin has stayed full does not read its requests.
    let stalled = proc
        .write_blocked()
        .filter(|(blocked, _)| *blocked >= STDIN_STALL);
    if let Some((blocked, queued)) = stalled
        && !intake.stalled_noted
    {
        intake.stalled_noted = true;
        intake.note(format!(
            "contract: the delegator did not read its stdin: a write blocked for {} ms, {queued} more messages queued",
            blocked.as_millis()
        ));
    }
    // Snapshot, then EOF.
    let snapshot_until = tokio::time::Instant::now() + Duration::from_secs(5);
    if inited
        && !flooded
        && stalled.is_none()
        && send(
            &mut proc,
            &mut intake,
            &json!({"type": "snapshot"}),
            snapshot_until,
        )
        .await
    {
        loop {
            let left = snapshot_until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            match proc.recv(left).await {
                Some(FromDelegator::Message(m)) => {
                    intake.message(&m);
                    if m.get("type").and_then(Value::as_str) == Some("snapshot_ok") {
                        snapshot = Some(m);
                        break;
                    }
                }
                Some(FromDelegator::Garbage(g)) => {
                    if !intake.garbage(Some(&g)) {
                        flooded = true;
                        break;
                    }
                }
                Some(FromDelegator::TooLong) => {
                    if !intake.garbage(None) {
                        flooded = true;
                        break;
                    }
                }
                Some(FromDelegator::Eof) | None => break,
            }
        }
    }
    let peak_rss_kib = proc.peak_rss_kib();
    if flooded {
        proc.kill_group().await;
    } else {
        // Without init_ok, or with a stdin it does not read, there is no work to let it finish.
        let grace = if inited && stalled.is_none() {
            Duration::from_secs(3)
        } else {
            Duration::from_millis(300)
        };
        proc.finish(grace).await;
    }
    drop(proc);
    let entries = net.journal().entries();
    net.shutdown().await;

    let messages = std::mem::take(&mut intake.messages);
    let ev = Evidence {
        scenario: s,
        journal: &entries,
        messages: &messages,
        outcomes: &outcomes,
        snapshot: snapshot.as_ref(),
        self_url: SELF_URL,
        credential: OWN_CREDENTIAL,
        given: &given,
        crash_seq,
        start,
        forged_pushes: &forged,
        peak_rss_kib,
    };
    let mut verdicts = Vec::new();
    for r in registry() {
        let listed = s.rules.iter().any(|x| x == r.id);
        if !listed && !r.always {
            continue;
        }
        let Some(check) = r.check else {
            continue;
        };
        let (verdict, expected, observed, witnesses) = match check(&ev) {
            Check::Pass => (Verdict::Pass, None, None, vec![]),
            Check::NotApplicable if listed => (
                Verdict::Unknown,
                Some("evidence for this rule".to_string()),
                Some("nothing observed that bears on it".to_string()),
                vec![],
            ),
            Check::NotApplicable => continue,
            Check::Fail {
                expected,
                observed,
                witnesses,
            } => {
                let w: Vec<Entry> = entries
                    .iter()
                    .filter(|e| witnesses.contains(&e.seq))
                    .cloned()
                    .collect();
                let v = if r.level == Level::Must {
                    Verdict::Fail
                } else {
                    Verdict::NonStrict
                };
                (v, Some(expected), Some(observed), w)
            }
        };
        verdicts.push(crate::runner::RuleVerdict {
            id: r.id.to_string(),
            level: r.level,
            verdict,
            expected,
            observed,
            witnesses,
        });
    }
    result.verdict = case_verdict(&verdicts, intake.contract_broken, unsupported, inited);
    result.rules = verdicts;
    result.notes = intake.closing_notes();
    result.outcomes = outcomes;
    result.messages = messages;
    result.stderr =
        String::from_utf8_lossy(&stderr.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    result.journal = entries;
    result.duration_ms = t0.elapsed().as_millis() as u64;
    let _ = std::fs::remove_dir_all(&store);
    result
}

/// The verdict of a case: a broken MUST or contract wins over UNSUPPORTED, which wins over the
/// rest (a delegator that declined some work is not judged on what it declined).
fn case_verdict(
    verdicts: &[RuleVerdict],
    contract_broken: bool,
    unsupported: bool,
    inited: bool,
) -> Verdict {
    let any = |v: Verdict| verdicts.iter().any(|r| r.verdict == v);
    if contract_broken || any(Verdict::Fail) {
        Verdict::Fail
    } else if unsupported {
        Verdict::Unsupported
    } else if !inited {
        Verdict::Fail
    } else if any(Verdict::Unknown) {
        Verdict::Unknown
    } else if any(Verdict::NonStrict) {
        Verdict::NonStrict
    } else {
        Verdict::Pass
    }
}

/// Every delegation of the case (not counting fan-out children) has an outcome.
fn all_done(s: &Scenario, outcomes: &BTreeMap<String, Value>) -> bool {
    s.delegations.iter().all(|d| outcomes.contains_key(&d.id))
}

/// Apply a known-failing list: FAIL becomes XFAIL, PASS becomes XPASS.
pub fn apply_known_failing(results: &mut [CaseResult], known: &[crate::catalog::CaseGlob]) {
    for r in results {
        // With `--repeat`, result ids are `<case id>@<seed>`: an entry names either.
        let case = r.id.split_once('@').map_or(r.id.as_str(), |(c, _)| c);
        if known.iter().any(|k| k.matches(&r.id) || k.matches(case)) {
            r.verdict = match r.verdict {
                Verdict::Fail | Verdict::NonStrict | Verdict::Unknown => Verdict::XFail,
                Verdict::Pass => Verdict::XPass,
                v => v,
            };
        }
    }
}

/// POST a forged push notification (a FAILED status with a wrong token) to the delegator's webhook.
async fn forge_push(base: &str, id: &str, task: &str, ctx: &str) -> Option<u16> {
    let body = json!({"statusUpdate": {"taskId": task, "contextId": ctx,
        "status": {"state": "TASK_STATE_FAILED", "timestamp": a2a_protocol::Timestamp::now().to_rfc3339()}}});
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let url = format!("{}/a2a-webhook/{id}", base.trim_end_matches('/'));
    let r = client
        .post(url)
        .header("Authorization", "Bearer forged-token")
        .header("X-A2A-Notification-Token", "forged-token")
        .json(&body)
        .send()
        .await
        .ok()?;
    Some(r.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_driver_schema_compiles() {
        for (ty, _) in DELEGATOR_SCHEMAS {
            assert!(validators().contains_key(ty), "{ty}");
        }
        assert_eq!(
            contract_problem(
                &json!({"type": "state", "id": "d1", "state": "WORKING", "task_id": null, "context_id": null})
            ),
            None
        );
        assert!(
            contract_problem(&json!({"type": "state", "id": "d1", "state": "NOPE"}))
                .is_some_and(|p| p.contains("state.json"))
        );
        assert!(
            contract_problem(&json!({"type": "bogus"}))
                .is_some_and(|p| p.contains("unknown message type"))
        );
    }

    #[test]
    fn a_huge_deadline_is_clamped_not_a_panic() {
        let d: crate::scenario::Delegation = toml::from_str(
            "id = \"d1\"\ncapability = \"c\"\ntext = \"t\"\ndeadline_in_ms = 9223372036854775807\n",
        )
        .unwrap();
        let start = time::OffsetDateTime::now_utc();
        let (m, note) = delegate_message(&d, start);
        assert_eq!(m["deadline"], "9999-12-31T23:59:59.999Z");
        assert!(note.is_some_and(|n| n.contains("out of range")));
        let d = crate::scenario::Delegation {
            deadline_in_ms: Some(i64::MIN),
            ..d
        };
        let (m, _) = delegate_message(&d, start);
        assert_eq!(m["deadline"], "0001-01-01T00:00:00.000Z");
        let d = crate::scenario::Delegation {
            deadline_in_ms: Some(-1000),
            ..d
        };
        let (_, note) = delegate_message(&d, start);
        assert!(note.is_none());
    }

    #[test]
    fn a_must_failure_or_contract_break_wins_over_unsupported() {
        let rule = |verdict| RuleVerdict {
            id: "X".into(),
            level: Level::Must,
            verdict,
            expected: None,
            observed: None,
            witnesses: vec![],
        };
        let failed = [rule(Verdict::Pass), rule(Verdict::Fail)];
        assert_eq!(case_verdict(&failed, false, true, true), Verdict::Fail);
        assert_eq!(case_verdict(&[], true, true, true), Verdict::Fail);
        let unknown = [rule(Verdict::Unknown)];
        assert_eq!(
            case_verdict(&unknown, false, true, true),
            Verdict::Unsupported
        );
        assert_eq!(case_verdict(&[], false, true, false), Verdict::Unsupported);
        assert_eq!(case_verdict(&[], false, false, false), Verdict::Fail);
        assert_eq!(case_verdict(&unknown, false, false, true), Verdict::Unknown);
    }

    #[test]
    fn intake_caps_notes_and_messages_and_counts_the_rest() {
        let mut i = Intake::default();
        for n in 0..(MAX_NOTES + 5) {
            i.note(format!("n{n}"));
        }
        i.note("contract: late".into());
        assert!(i.contract_broken, "a dropped contract note still counts");
        let m = json!({"type": "state", "id": "d1", "state": "WORKING"});
        for _ in 0..(MAX_MESSAGES + 3) {
            i.message(&m);
        }
        assert_eq!(i.messages.len(), MAX_MESSAGES);
        let done = json!({"type": "done", "id": "d1", "state": "COMPLETED", "reason": "r", "task_id": null, "context_id": null, "message": null, "artifacts": []});
        i.message(&done);
        i.message(&done);
        i.new_life();
        i.message(&done);
        let mut stopped = 0;
        for _ in 0..MAX_GARBAGE {
            if !i.garbage(Some("x")) {
                stopped += 1;
            }
        }
        assert_eq!(stopped, 1);
        let notes = i.closing_notes();
        assert_eq!(notes.len(), MAX_NOTES + 3);
        assert!(notes.iter().any(|n| n.contains("more notes not kept")));
        assert!(
            notes
                .iter()
                .any(|n| n.contains("6 more protocol messages not kept"))
        );
    }
}
