//! Running one case: start its network, drive the delegator through the driver contract, answer
//! its escalations, inject the crash, collect the evidence and turn it into verdicts.

use crate::driver::{DelegatorProcess, FromDelegator, init_message};
use crate::rules::{Check, Evidence, Level, registry};
use crate::scenario::{CrashTrigger, Scenario};
use a2a_mock_agents::{Entry, Event, Network};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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

fn crash_fired(trigger: CrashTrigger, k: u64, j: &[Entry]) -> Option<u64> {
    let mut chunks = 0;
    for e in j {
        let hit = match (&e.event, trigger) {
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
                chunks += 1;
                chunks >= k.max(1)
            }
            (Event::TaskState { state, .. }, CrashTrigger::InputRound) => {
                state == "TASK_STATE_INPUT_REQUIRED"
            }
            (Event::Fault { kind, .. }, CrashTrigger::RetryBackoff) => {
                kind.starts_with("http_status")
            }
            _ => false,
        };
        if hit {
            return Some(e.seq);
        }
    }
    None
}

fn delegate_message(
    s: &Scenario,
    d: &crate::scenario::Delegation,
    start: time::OffsetDateTime,
    outcomes: &BTreeMap<String, Value>,
) -> Value {
    let deadline = d.deadline_in_ms.map(|ms| {
        a2a_protocol::Timestamp::from_datetime(start + time::Duration::milliseconds(ms))
            .to_rfc3339()
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
    let _ = s;
    let _ = outcomes;
    json!({
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
    })
}

/// Run one case against the delegator.
pub async fn run_case(s: &Scenario, cfg: &RunSettings) -> CaseResult {
    let t0 = Instant::now();
    let start = time::OffsetDateTime::now_utc();
    let mut notes = Vec::new();
    let mut spec = s.network.clone();
    spec.seed ^= cfg.seed;
    let repro = format!(
        "a2a-harness run --case {} --seed {} --delegator '{}'",
        s.id, cfg.seed, cfg.delegator
    );
    let mut result = CaseResult {
        id: s.id.clone(),
        title: s.title.clone(),
        verdict: Verdict::Unknown,
        rules: Vec::new(),
        seed: cfg.seed,
        repro,
        duration_ms: 0,
        notes: Vec::new(),
        outcomes: BTreeMap::new(),
        messages: Vec::new(),
        stderr: String::new(),
        journal: Vec::new(),
    };
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
    let mut messages: Vec<Value> = Vec::new();
    let mut given: Vec<(String, String, String)> = Vec::new();
    let mut snapshot: Option<Value> = None;
    let mut crash_seq = None;
    let mut unsupported = false;
    let mut started: Vec<String> = Vec::new();
    let mut canceled: Vec<String> = Vec::new();
    let mut webhook_url: Option<String> = None;
    let mut forged: Vec<u16> = Vec::new();
    let mut forged_for: Vec<String> = Vec::new();

    let mut proc = match DelegatorProcess::spawn(&cfg.delegator, stderr.clone()) {
        Ok(p) => p,
        Err(e) => {
            result.notes.push(e.to_string());
            result.verdict = Verdict::Fail;
            net.shutdown().await;
            return result;
        }
    };
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
    let mut alive = proc.send(&init(false)).await.is_ok();
    // Wait for init_ok.
    let mut inited = false;
    while alive && !inited {
        match proc.recv(Duration::from_secs(15)).await {
            Some(FromDelegator::Message(m)) => {
                let ty = m
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                messages.push(m.clone());
                match ty.as_str() {
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
                        notes.push(format!("init refused: {m}"));
                        alive = false;
                    }
                    _ => notes.push(format!("contract: {ty} before init_ok")),
                }
            }
            Some(FromDelegator::Garbage(g)) => {
                notes.push(format!("contract: non-protocol stdout line: {g}"))
            }
            Some(FromDelegator::Eof) | None => {
                notes.push("the delegator exited or stayed silent before init_ok".into());
                alive = false;
            }
        }
    }
    if inited {
        for d in s.delegations.iter().filter(|d| d.after.is_none()) {
            if proc
                .send(&delegate_message(s, d, start, &outcomes))
                .await
                .is_err()
            {
                notes.push("cannot write to the delegator".into());
            }
            started.push(d.id.clone());
        }
    }
    let journal = net.journal().clone();
    let mut crashed = false;
    while inited && !all_done(s, &outcomes) && tokio::time::Instant::now() < deadline {
        if let (Some(c), false) = (&s.crash, crashed)
            && let Some(seq) = journal.with_entries(|j| crash_fired(c.trigger, c.chunks, j))
        {
            crashed = true;
            crash_seq = Some(seq);
            proc.kill_group().await;
            notes.push(format!(
                "crash injected: SIGKILL at journal seq {seq} ({:?})",
                c.trigger
            ));
            match DelegatorProcess::spawn(&cfg.delegator, stderr.clone()) {
                Ok(p) => proc = p,
                Err(e) => {
                    notes.push(format!("restart failed: {e}"));
                    break;
                }
            }
            let _ = proc.send(&init(true)).await;
            continue;
        }
        let msg = match proc.recv(Duration::from_millis(50)).await {
            None => continue,
            Some(FromDelegator::Eof) => {
                notes.push("the delegator exited before every delegation had an outcome".into());
                // Give a pending crash trigger a chance; otherwise stop.
                if s.crash.is_some() && !crashed {
                    let _ = journal
                        .wait_for(Duration::from_millis(2000), |j| {
                            s.crash
                                .as_ref()
                                .is_some_and(|c| crash_fired(c.trigger, c.chunks, j).is_some())
                        })
                        .await;
                    if journal.with_entries(|j| {
                        s.crash
                            .as_ref()
                            .is_some_and(|c| crash_fired(c.trigger, c.chunks, j).is_some())
                    }) {
                        continue;
                    }
                }
                break;
            }
            Some(FromDelegator::Garbage(g)) => {
                notes.push(format!("contract: non-protocol stdout line: {g}"));
                continue;
            }
            Some(FromDelegator::Message(m)) => m,
        };
        messages.push(msg.clone());
        let ty = msg.get("type").and_then(Value::as_str).unwrap_or_default();
        let id = msg
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match ty {
            "init_ok" | "snapshot_ok" => {}
            "state" => {
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
                        let _ = proc.send(&json!({"type": "cancel", "id": id})).await;
                    }
                }
            }
            "escalate" => {
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
                    let _ = proc.send(&reply).await;
                }
            }
            "done" => {
                outcomes.insert(id.clone(), msg.clone());
                for d in s
                    .delegations
                    .iter()
                    .filter(|d| d.after.as_deref() == Some(id.as_str()))
                {
                    let _ = proc.send(&delegate_message(s, d, start, &outcomes)).await;
                    started.push(d.id.clone());
                }
            }
            "error" => {
                if msg.get("code").and_then(Value::as_str) == Some("unsupported") {
                    unsupported = true;
                    outcomes.insert(id.clone(), msg.clone());
                }
                notes.push(format!("delegator error: {msg}"));
            }
            other => notes.push(format!("contract: unknown message type {other:?}")),
        }
    }
    if inited && !all_done(s, &outcomes) {
        let missing = s
            .delegations
            .iter()
            .filter(|d| !outcomes.contains_key(&d.id))
            .count();
        notes.push(format!(
            "time bound: {missing} of {} delegations had no outcome after {} ms",
            s.delegations.len(),
            s.timeout_ms
        ));
    }
    // Snapshot, then EOF.
    if inited && proc.send(&json!({"type": "snapshot"})).await.is_ok() {
        let until = tokio::time::Instant::now() + Duration::from_secs(5);
        while tokio::time::Instant::now() < until {
            match proc.recv(Duration::from_millis(200)).await {
                Some(FromDelegator::Message(m)) => {
                    let is_snap = m.get("type").and_then(Value::as_str) == Some("snapshot_ok");
                    messages.push(m.clone());
                    if is_snap {
                        snapshot = Some(m);
                        break;
                    }
                }
                Some(FromDelegator::Eof) => break,
                _ => {}
            }
        }
    }
    let peak_rss_kib = proc.peak_rss_kib();
    proc.finish(Duration::from_secs(3)).await;
    let entries = net.journal().entries();
    net.shutdown().await;

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
    let contract_broken = notes.iter().any(|n| n.starts_with("contract:"));
    result.verdict = if unsupported {
        Verdict::Unsupported
    } else if !inited || contract_broken || verdicts.iter().any(|v| v.verdict == Verdict::Fail) {
        Verdict::Fail
    } else if verdicts.iter().any(|v| v.verdict == Verdict::Unknown) {
        Verdict::Unknown
    } else if verdicts.iter().any(|v| v.verdict == Verdict::NonStrict) {
        Verdict::NonStrict
    } else {
        Verdict::Pass
    };
    result.rules = verdicts;
    result.notes = notes;
    result.outcomes = outcomes;
    result.messages = messages;
    result.stderr =
        String::from_utf8_lossy(&stderr.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    result.journal = entries;
    result.duration_ms = t0.elapsed().as_millis() as u64;
    let _ = std::fs::remove_dir_all(&store);
    let _ = started;
    result
}

/// Every delegation of the case (not counting fan-out children) has an outcome.
fn all_done(s: &Scenario, outcomes: &BTreeMap<String, Value>) -> bool {
    s.delegations.iter().all(|d| outcomes.contains_key(&d.id))
}

/// Apply a known-failing list: FAIL becomes XFAIL, PASS becomes XPASS.
pub fn apply_known_failing(results: &mut [CaseResult], known: &[String]) {
    for r in results {
        if known.iter().any(|k| crate::scenario::glob_match(k, &r.id)) {
            r.verdict = match r.verdict {
                Verdict::Fail | Verdict::NonStrict | Verdict::Unknown => Verdict::XFail,
                Verdict::Pass => Verdict::XPass,
                v => v,
            };
        }
    }
}

/// Read a known-failing file: one case id (or glob) per line, `#` comments.
pub fn read_known_failing(path: &Path) -> std::io::Result<Vec<String>> {
    Ok(std::fs::read_to_string(path)?
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect())
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
