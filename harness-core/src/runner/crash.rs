//! Crash injection: each trigger's named point, the journal tripwire that watches for it, and the
//! SIGKILL of the delegator's process group exactly there (see `scenarios/README.md`, "Crash
//! points").
//!
//! Most triggers name an event at an agent, and the kill is synchronous with its journal entry
//! (inside [`Journal::record`](a2a_mock_agents::Journal::record), before the agent goes on):
//!
//! - `before_first_send`: the delegation's first send reached an agent that drops it before
//!   processing it (`connection_dropped` `before_processing`, a `drop_before` fault): the kill
//!   lands at that entry, so no agent holds anything of the delegation and the delegator has not
//!   seen the drop. A drop of a later send (an earlier one reached an agent) misses the point.
//! - `first_request`: the first send of a message reached an agent (its `request` entry); the
//!   agent has not processed it yet.
//! - `indefinite_send`: a send was processed and its response dropped (`connection_dropped`
//!   `after_processing`): the delegator cannot know whether it landed.
//! - `after_chunks`: the K-th artifact chunk was handed to the stream (its `artifact_chunk`
//!   entry), before the next one.
//! - `cancel_request`: the delegator's `CancelTask` reached the agent (its `request` entry),
//!   which has not processed it.
//! - `final_state`: the agent recorded a terminal state of a task (its `task_state` entry), before
//!   it sent it to anyone: the delegator has not reported `done` and cannot have.
//! - `at_event`: the K-th journal entry of the network (seq K), whatever it is (the crash
//!   sweep's point). A run whose journal ends before seq K has no kill (a note says so).
//!
//! Three name a point where the delegator has seen something and waits; the kill lands inside the
//! wait, and a tripwire guards its far end so the kill can never land after the wait ended:
//!
//! - `retry_backoff`: the agent answered a send with a transient HTTP error (the `response` entry
//!   of an `http_status` fault, which ends its HTTP/1.1 connection with `Connection: close`) and
//!   no resend has reached an agent. The kill lands when the delegator closes that connection
//!   (the `client_closed` entry): a client closes it once it has read the error (RFC 9112 §9.6),
//!   so the delegator holds the error and waits out its backoff (the case asks for one of a
//!   second or more). A resend arriving first is killed synchronously at its `request` entry
//!   and the record says the point was missed.
//! - `input_round`: the agent sent INPUT_REQUIRED (its `task_state` entry) and no answer has
//!   arrived. The kill lands when the delegator reports the question to the harness (its
//!   `escalate` of kind input), before the harness answers; an answer reaching the agent first is
//!   killed synchronously at its `request` entry and the record says the point was missed.
//! - `auth_round`: the same for AUTH_REQUIRED, the delegator's `escalate` of kind auth and the
//!   credential the harness has not given.

use crate::scenario::CrashTrigger;
use a2a_mock_agents::{Entry, Event, Journal};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long the harness waits for a kill whose wait has begun when the delegator's output ends
/// first (the delegator closed its connection, and with it its stdout, by dying on its own).
pub(super) const PENDING_KILL_WAIT: Duration = Duration::from_secs(1);

/// Where the delegator was killed: the entry that fired the trigger and the last journal entry
/// before the SIGKILL (`cases/<id>.json`, field `crash`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashRecord {
    /// The trigger.
    pub trigger: CrashTrigger,
    /// Journal sequence of the entry that fired the trigger (reached its named point).
    pub fired_seq: u64,
    /// The last journal sequence recorded before the SIGKILL was sent.
    pub last_seq_before_kill: u64,
    /// The point, in words: what had happened when the kill landed.
    pub point: String,
    /// False when the delegator went past the named point before the kill could land there
    /// (then the case did not test what it names).
    pub at_named_point: bool,
    /// How many protocol messages of the delegator the harness had kept when it restarted it:
    /// the killed process's (those it wrote before it died included) come first in the case's
    /// `messages`, the restarted one's after. `None` until the restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_before_restart: Option<usize>,
}

/// What one journal entry does to a trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// Nothing.
    None,
    /// The named point: kill now, synchronously.
    KillNow(String),
    /// The wait the trigger names has begun: kill inside it.
    Armed(String),
    /// The delegator showed it is inside the wait: kill now, at the armed point.
    KillArmed(String),
    /// The wait ended before the kill landed: kill now, the point was missed.
    Overrun(String),
}

/// A crash trigger evaluated one journal entry at a time.
#[derive(Debug, Clone)]
struct TriggerState {
    trigger: CrashTrigger,
    k: u64,
    chunks: u64,
    /// `retry_backoff`: the request number of the injected transient error.
    fault_req: Option<u64>,
    /// The wait has begun (`retry_backoff`, `input_round`, `auth_round`): the task waiting for
    /// input or auth, if any.
    waiting: Option<Option<String>>,
    /// `before_first_send`: the request numbers of the message sends seen so far.
    sends: Vec<u64>,
}

/// A request that sends a message (1.0 or 0.3 method names).
fn sends_message(e: &Entry) -> Option<(u64, &serde_json::Value)> {
    match &e.event {
        Event::Request {
            req,
            method: Some(m),
            params,
            ..
        } if m.contains("Message") || m.starts_with("message/") => Some((*req, params)),
        _ => None,
    }
}

/// The kind of a journal event as the journal names it (`request`, `task_state`, ...).
fn event_kind(e: &Event) -> String {
    serde_json::to_value(e)
        .ok()
        .and_then(|v| {
            v.as_object()
                .and_then(|o| o.get("event").or_else(|| o.get("type")))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| "entry".to_string())
}

impl TriggerState {
    fn new(trigger: CrashTrigger, k: u64) -> Self {
        TriggerState {
            trigger,
            k,
            chunks: 0,
            fault_req: None,
            waiting: None,
            sends: Vec::new(),
        }
    }

    fn observe(&mut self, e: &Entry) -> Step {
        if let Some(task) = &self.waiting {
            if let Event::ClientClosed { req } = &e.event
                && self.trigger == CrashTrigger::RetryBackoff
                && self.fault_req == Some(*req)
            {
                return Step::KillArmed(format!(
                    "the delegator read it and closed the connection (Connection: close) at seq {}",
                    e.seq
                ));
            }
            return match sends_message(e) {
                Some((req, params)) => {
                    let for_task = params
                        .pointer("/message/taskId")
                        .and_then(serde_json::Value::as_str);
                    match task {
                        // An input answer continues the waiting task.
                        Some(t) if for_task != Some(t.as_str()) => Step::None,
                        Some(_) => Step::Overrun(format!(
                            "the delegator's answer or credential (req {req}) reached the agent first"
                        )),
                        None => {
                            Step::Overrun(format!("a resend (req {req}) reached the agent first"))
                        }
                    }
                }
                None => Step::None,
            };
        }
        match (&e.event, self.trigger) {
            (_, CrashTrigger::BeforeFirstSend) => {
                if let Some((req, _)) = sends_message(e) {
                    self.sends.push(req);
                }
                match &e.event {
                    Event::ConnectionDropped { phase, req }
                        if phase == "before_processing" && self.sends.contains(req) =>
                    {
                        if self.sends.first() == Some(req) {
                            Step::KillNow(format!(
                                "{} dropped the first send (req {req}) before processing it: no agent holds anything of the delegation",
                                e.agent
                            ))
                        } else {
                            Step::Overrun(format!(
                                "a send (req {req}) was dropped unprocessed, but not the first: req {} reached an agent before it",
                                self.sends.first().copied().unwrap_or_default()
                            ))
                        }
                    }
                    _ => Step::None,
                }
            }
            (_, CrashTrigger::CancelRequest) => match &e.event {
                Event::Request {
                    req,
                    method: Some(m),
                    ..
                } if m.contains("CancelTask") || m == "tasks/cancel" => Step::KillNow(format!(
                    "the delegator's cancel (req {req}) reached {} before it was processed",
                    e.agent
                )),
                _ => Step::None,
            },
            (Event::TaskState { task_id, state }, CrashTrigger::FinalState)
                if a2a_protocol::TaskState::parse_lenient(state)
                    .is_some_and(|s| s.is_terminal()) =>
            {
                Step::KillNow(format!(
                    "{} recorded the final state {state} of task {task_id}, before telling the delegator",
                    e.agent
                ))
            }
            (_, CrashTrigger::FirstRequest) => match sends_message(e) {
                Some((req, _)) => Step::KillNow(format!(
                    "the first send (req {req}) reached {} before it was processed",
                    e.agent
                )),
                None => Step::None,
            },
            (Event::ConnectionDropped { phase, req }, CrashTrigger::IndefiniteSend)
                if phase == "after_processing" =>
            {
                Step::KillNow(format!(
                    "{} processed the send (req {req}) and dropped its response",
                    e.agent
                ))
            }
            (_, CrashTrigger::AtEvent) if e.seq >= self.k.max(1) => Step::KillNow(format!(
                "{} recorded journal entry {} ({}), the agent not gone on yet",
                e.agent,
                e.seq,
                event_kind(&e.event)
            )),
            (Event::ArtifactChunk { .. }, CrashTrigger::AfterChunks) => {
                self.chunks += 1;
                if self.chunks >= self.k.max(1) {
                    Step::KillNow(format!(
                        "{} sent artifact chunk {} and not the next",
                        e.agent, self.chunks
                    ))
                } else {
                    Step::None
                }
            }
            (Event::Fault { kind, req }, CrashTrigger::RetryBackoff)
                if kind.starts_with("http_status") =>
            {
                self.fault_req = Some(*req);
                Step::None
            }
            (Event::Response { req, status, .. }, CrashTrigger::RetryBackoff)
                if self.fault_req == Some(*req) =>
            {
                self.waiting = Some(None);
                Step::Armed(format!(
                    "{} answered the send (req {req}) with HTTP {status}; no resend had reached it",
                    e.agent
                ))
            }
            (Event::TaskState { task_id, state }, CrashTrigger::InputRound)
                if state == "TASK_STATE_INPUT_REQUIRED" =>
            {
                self.waiting = Some(Some(task_id.clone()));
                Step::Armed(format!(
                    "{} sent INPUT_REQUIRED for task {task_id}; no answer had arrived",
                    e.agent
                ))
            }
            (Event::TaskState { task_id, state }, CrashTrigger::AuthRound)
                if state == "TASK_STATE_AUTH_REQUIRED" =>
            {
                self.waiting = Some(Some(task_id.clone()));
                Step::Armed(format!(
                    "{} sent AUTH_REQUIRED for task {task_id}; no credential had arrived",
                    e.agent
                ))
            }
            _ => Step::None,
        }
    }
}

/// SIGKILLs the delegator's process group; false when there was nothing to kill.
pub(super) type Kill = Arc<dyn Fn() -> bool + Send + Sync>;

struct Inner {
    state: TriggerState,
    /// The wait has begun: the entry that began it and the point in words.
    armed: Option<(u64, String)>,
    record: Option<CrashRecord>,
}

/// One case's crash: watches the journal (as its tripwire), kills the delegator at the
/// trigger's named point, and keeps the [`CrashRecord`].
pub(super) struct CrashInjector {
    trigger: CrashTrigger,
    journal: Journal,
    kill: Kill,
    inner: Mutex<Inner>,
    /// Notified when the kill lands, for [`CrashInjector::wait_while_pending`].
    landed: Condvar,
}

impl CrashInjector {
    pub(super) fn new(trigger: CrashTrigger, k: u64, journal: Journal, kill: Kill) -> Arc<Self> {
        Arc::new(CrashInjector {
            trigger,
            journal,
            kill,
            inner: Mutex::new(Inner {
                state: TriggerState::new(trigger, k),
                armed: None,
                record: None,
            }),
            landed: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Install the injector as the journal's tripwire.
    pub(super) fn arm(self: &Arc<Self>) {
        let me = self.clone();
        self.journal
            .set_tripwire(Arc::new(move |e: &Entry| me.observe(e)));
    }

    /// Watch one journal entry (synchronously, inside `Journal::record`); true once nothing more
    /// is to be watched.
    pub(super) fn observe(self: &Arc<Self>, e: &Entry) -> bool {
        let mut g = self.lock();
        if g.record.is_some() {
            return true;
        }
        match g.state.observe(e) {
            Step::None => false,
            Step::KillNow(point) => {
                self.kill_locked(&mut g, e.seq, point, true);
                true
            }
            Step::Armed(point) => {
                g.armed = Some((e.seq, point));
                false
            }
            Step::KillArmed(how) => {
                let (fired, point) = g.armed.take().unwrap_or((e.seq, String::new()));
                self.kill_locked(&mut g, fired, format!("{point}; {how}"), true);
                true
            }
            Step::Overrun(what) => {
                let (fired, point) = g.armed.take().unwrap_or((e.seq, String::new()));
                self.kill_locked(
                    &mut g,
                    fired,
                    format!("{point}; but {what}: killed at seq {}", e.seq),
                    false,
                );
                true
            }
        }
    }

    /// Kill inside the wait the trigger names (the delegator's `escalate`);
    /// false when the wait has not begun or the kill already happened.
    pub(super) fn kill_at_point(&self, how: &str) -> bool {
        let mut g = self.lock();
        if g.record.is_some() {
            return false;
        }
        let Some((fired, point)) = g.armed.take() else {
            return false;
        };
        self.kill_locked(&mut g, fired, format!("{point}; {how}"), true);
        true
    }

    fn kill_locked(&self, g: &mut Inner, fired_seq: u64, point: String, at_named_point: bool) {
        // Read before the kill: every entry up to here happened before it.
        let last = self
            .journal
            .with_entries(|j| j.last().map(|e| e.seq))
            .unwrap_or(0)
            .max(fired_seq);
        g.record = Some(CrashRecord {
            trigger: self.trigger,
            fired_seq,
            last_seq_before_kill: last,
            point,
            at_named_point,
            messages_before_restart: None,
        });
        (self.kill)();
        self.landed.notify_all();
    }

    /// The kill, once it happened.
    pub(super) fn record(&self) -> Option<CrashRecord> {
        self.lock().record.clone()
    }

    /// True while the wait has begun and the kill is still to land.
    pub(super) fn pending(&self) -> bool {
        let g = self.lock();
        g.record.is_none() && g.armed.is_some()
    }

    /// Block until a pending kill (see [`CrashInjector::pending`]) has landed, at most `bound`;
    /// the kill, if it happened.
    pub(super) fn wait_while_pending(&self, bound: Duration) -> Option<CrashRecord> {
        let g = self.lock();
        let (g, _) = self
            .landed
            .wait_timeout_while(g, bound, |g| g.record.is_none() && g.armed.is_some())
            .unwrap_or_else(|p| p.into_inner());
        g.record.clone()
    }

    /// The trigger.
    pub(super) fn trigger(&self) -> CrashTrigger {
        self.trigger
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_mock_agents::script::JournalSpec;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn request(req: u64, params: serde_json::Value) -> Event {
        Event::Request {
            binding: a2a_protocol::Binding::JsonRpc,
            req,
            http_method: "POST".into(),
            path: "/".into(),
            method: Some("SendMessage".into()),
            rpc_id: None,
            params: Box::new(params),
            headers: Box::new(BTreeMap::new()),
            envelope: None,
        }
    }

    /// A journal with an injector whose kill counts calls and notes the last seq it saw.
    fn setup(trigger: CrashTrigger, k: u64) -> (Journal, Arc<CrashInjector>, Arc<AtomicU64>) {
        let j = Journal::new(JournalSpec::default());
        let killed_at = Arc::new(AtomicU64::new(0));
        let (k2, j2) = (killed_at.clone(), j.clone());
        let kill: Kill = Arc::new(move || {
            k2.store(
                j2.with_entries(|e| e.last().map(|e| e.seq)).unwrap_or(0),
                Ordering::SeqCst,
            );
            true
        });
        let inj = CrashInjector::new(trigger, k, j.clone(), kill);
        inj.arm();
        (j, inj, killed_at)
    }

    fn backoff_fault(j: &Journal) -> u64 {
        j.record("flaky", request(1, json!({"message": {"messageId": "m1"}})));
        j.record(
            "flaky",
            Event::Fault {
                req: 1,
                kind: "http_status_503".into(),
            },
        );
        j.record(
            "flaky",
            Event::Response {
                retry_after_s: None,
                grpc_status: None,
                req: 1,
                status: 503,
                rpc_error: None,
                body: serde_json::Value::Null,
            },
        )
    }

    #[test]
    fn retry_backoff_arms_at_the_error_response_and_kills_when_the_delegator_closes_its_connection()
    {
        let (j, inj, killed_at) = setup(CrashTrigger::RetryBackoff, 0);
        let response = backoff_fault(&j);
        // Armed synchronously at the response, not killed yet: the delegator must read the 503.
        assert!(inj.pending());
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        // Other traffic (a card fetch, another request's connection closing) does not end it.
        j.record(
            "flaky",
            Event::Request {
                binding: a2a_protocol::Binding::JsonRpc,
                req: 2,
                http_method: "GET".into(),
                path: "/.well-known/agent-card.json".into(),
                method: None,
                rpc_id: None,
                params: Box::new(serde_json::Value::Null),
                headers: Box::new(BTreeMap::new()),
                envelope: None,
            },
        );
        j.record("flaky", Event::ClientClosed { req: 2 });
        assert!(inj.pending());
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        // The delegator closed the 503's connection: killed inside `record`, synchronously.
        let closed = j.record("flaky", Event::ClientClosed { req: 1 });
        assert_eq!(killed_at.load(Ordering::SeqCst), closed);
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (response, closed));
        assert!(r.at_named_point);
        assert!(r.point.contains("HTTP 503"), "{}", r.point);
        assert!(r.point.contains("closed the connection"), "{}", r.point);
        assert!(!inj.pending());
        // Once only.
        assert!(!inj.kill_at_point("again"));
        j.record("flaky", request(3, json!({})));
        assert_eq!(inj.record(), Some(r));
    }

    #[test]
    fn a_connection_closed_before_the_error_does_not_kill() {
        let (j, inj, killed_at) = setup(CrashTrigger::RetryBackoff, 0);
        j.record("flaky", Event::ClientClosed { req: 1 });
        backoff_fault(&j);
        assert!(inj.pending());
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        assert!(inj.record().is_none());
    }

    #[test]
    fn a_resend_before_the_backoff_kill_is_killed_synchronously_and_marked_missed() {
        let (j, inj, killed_at) = setup(CrashTrigger::RetryBackoff, 0);
        let response = backoff_fault(&j);
        let resend = j.record("flaky", request(2, json!({"message": {"messageId": "m1"}})));
        // Killed inside `record`, before the agent could process the resend.
        assert_eq!(killed_at.load(Ordering::SeqCst), resend);
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (response, resend));
        assert!(!r.at_named_point);
        assert!(r.point.contains("resend"), "{}", r.point);
    }

    #[test]
    fn input_round_kills_at_the_escalation_or_at_an_answer_that_arrives_first() {
        let input = |j: &Journal| {
            j.record(
                "flights",
                Event::TaskState {
                    task_id: "t1".into(),
                    state: "TASK_STATE_INPUT_REQUIRED".into(),
                },
            )
        };
        let (j, inj, killed_at) = setup(CrashTrigger::InputRound, 0);
        assert!(!inj.kill_at_point("escalated"), "no question yet");
        let q = input(&j);
        // A send for another task is not the answer.
        j.record(
            "flights",
            request(5, json!({"message": {"taskId": "t9", "messageId": "x"}})),
        );
        assert!(inj.pending());
        assert!(inj.kill_at_point("the delegator escalated it"));
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (q, q + 1));
        assert_eq!(killed_at.load(Ordering::SeqCst), q + 1);
        assert!(r.at_named_point);

        let (j, inj, killed_at) = setup(CrashTrigger::InputRound, 0);
        let q = input(&j);
        let answer = j.record(
            "flights",
            request(6, json!({"message": {"taskId": "t1", "messageId": "a"}})),
        );
        assert_eq!(killed_at.load(Ordering::SeqCst), answer);
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (q, answer));
        assert!(!r.at_named_point);
    }

    #[test]
    fn agent_side_triggers_kill_synchronously_at_their_entry() {
        let (j, inj, killed_at) = setup(CrashTrigger::FirstRequest, 0);
        j.record(
            "w",
            Event::TaskPurged {
                task_id: "x".into(),
            },
        );
        let first = j.record("w", request(1, json!({})));
        assert_eq!(killed_at.load(Ordering::SeqCst), first);
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (first, first));

        let (j, inj, killed_at) = setup(CrashTrigger::AfterChunks, 2);
        let chunk = || Event::ArtifactChunk {
            task_id: "t".into(),
            artifact_id: "a".into(),
            append: true,
            last_chunk: false,
            bytes: 1,
        };
        j.record("s", chunk());
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        let second = j.record("s", chunk());
        assert_eq!(killed_at.load(Ordering::SeqCst), second);
        assert_eq!(inj.record().unwrap().fired_seq, second);

        let (j, inj, killed_at) = setup(CrashTrigger::IndefiniteSend, 0);
        let drop = j.record(
            "l",
            Event::ConnectionDropped {
                req: 1,
                phase: "after_processing".into(),
            },
        );
        assert_eq!(killed_at.load(Ordering::SeqCst), drop);
        assert!(inj.record().unwrap().at_named_point);
    }

    fn rpc(req: u64, method: &str, params: serde_json::Value) -> Event {
        match request(req, params) {
            Event::Request {
                binding,
                req,
                http_method,
                path,
                rpc_id,
                params,
                headers,
                envelope,
                ..
            } => Event::Request {
                binding,
                req,
                http_method,
                path,
                method: Some(method.into()),
                rpc_id,
                params,
                headers,
                envelope,
            },
            e => e,
        }
    }

    fn dropped_before(req: u64) -> Event {
        Event::ConnectionDropped {
            req,
            phase: "before_processing".into(),
        }
    }

    #[test]
    fn before_first_send_kills_at_the_drop_of_the_first_send_only() {
        let (j, inj, killed_at) = setup(CrashTrigger::BeforeFirstSend, 0);
        // A card fetch or other traffic is no send; the send's own request entry is not the point.
        j.record("w", rpc(1, "GetTask", json!({"id": "x"})));
        j.record("w", dropped_before(1));
        j.record("w", request(2, json!({"message": {"messageId": "m1"}})));
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        let drop = j.record("w", dropped_before(2));
        assert_eq!(killed_at.load(Ordering::SeqCst), drop);
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (drop, drop));
        assert!(r.at_named_point, "{r:?}");

        // A send that was not dropped reached an agent first: a later drop misses the point.
        let (j, inj, killed_at) = setup(CrashTrigger::BeforeFirstSend, 0);
        j.record("w", request(1, json!({"message": {"messageId": "m1"}})));
        j.record("w", request(2, json!({"message": {"messageId": "m2"}})));
        let drop = j.record("w", dropped_before(2));
        assert_eq!(killed_at.load(Ordering::SeqCst), drop);
        assert!(!inj.record().unwrap().at_named_point);
    }

    #[test]
    fn cancel_request_and_final_state_kill_synchronously_at_their_entry() {
        let (j, inj, killed_at) = setup(CrashTrigger::CancelRequest, 0);
        j.record("w", request(1, json!({"message": {"messageId": "m1"}})));
        j.record("w", rpc(2, "GetTask", json!({"id": "t"})));
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        let cancel = j.record("w", rpc(3, "CancelTask", json!({"id": "t"})));
        assert_eq!(killed_at.load(Ordering::SeqCst), cancel);
        assert!(inj.record().unwrap().at_named_point);
        // The 0.3 method name too.
        let (j, _, killed_at) = setup(CrashTrigger::CancelRequest, 0);
        let cancel = j.record("w", rpc(1, "tasks/cancel", json!({"id": "t"})));
        assert_eq!(killed_at.load(Ordering::SeqCst), cancel);

        let (j, inj, killed_at) = setup(CrashTrigger::FinalState, 0);
        let state = |s: &str| Event::TaskState {
            task_id: "t".into(),
            state: s.into(),
        };
        j.record("w", state("TASK_STATE_WORKING"));
        j.record("w", state("TASK_STATE_INPUT_REQUIRED"));
        j.record("w", state("TASK_STATE_AUTH_REQUIRED"));
        assert_eq!(
            killed_at.load(Ordering::SeqCst),
            0,
            "interrupted is not final"
        );
        let done = j.record("w", state("TASK_STATE_FAILED"));
        assert_eq!(killed_at.load(Ordering::SeqCst), done);
        let r = inj.record().unwrap();
        assert!(
            r.at_named_point && r.point.contains("TASK_STATE_FAILED"),
            "{r:?}"
        );
    }

    #[test]
    fn auth_round_kills_at_the_escalation_or_at_a_credential_that_arrives_first() {
        let auth = |j: &Journal| {
            j.record(
                "bank",
                Event::TaskState {
                    task_id: "t1".into(),
                    state: "TASK_STATE_AUTH_REQUIRED".into(),
                },
            )
        };
        let (j, inj, _) = setup(CrashTrigger::AuthRound, 0);
        // INPUT_REQUIRED does not arm it.
        j.record(
            "bank",
            Event::TaskState {
                task_id: "t1".into(),
                state: "TASK_STATE_INPUT_REQUIRED".into(),
            },
        );
        assert!(!inj.pending());
        let q = auth(&j);
        assert!(inj.pending());
        assert!(inj.kill_at_point("the delegator escalated it"));
        let r = inj.record().unwrap();
        assert_eq!(r.fired_seq, q);
        assert!(
            r.at_named_point && r.point.contains("AUTH_REQUIRED"),
            "{r:?}"
        );

        let (j, inj, killed_at) = setup(CrashTrigger::AuthRound, 0);
        auth(&j);
        let credential = j.record(
            "bank",
            request(6, json!({"message": {"taskId": "t1", "messageId": "a"}})),
        );
        assert_eq!(killed_at.load(Ordering::SeqCst), credential);
        assert!(!inj.record().unwrap().at_named_point);
    }

    #[test]
    fn at_event_kills_synchronously_at_the_kth_entry_whatever_it_is() {
        let (j, inj, killed_at) = setup(CrashTrigger::AtEvent, 3);
        j.record("w", request(1, json!({})));
        j.record(
            "w",
            Event::TaskPurged {
                task_id: "x".into(),
            },
        );
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        assert!(inj.record().is_none());
        let third = j.record(
            "w",
            Event::TaskState {
                task_id: "t".into(),
                state: "TASK_STATE_WORKING".into(),
            },
        );
        assert_eq!(third, 3);
        assert_eq!(killed_at.load(Ordering::SeqCst), 3);
        let r = inj.record().unwrap();
        assert_eq!((r.fired_seq, r.last_seq_before_kill), (3, 3));
        assert!(r.at_named_point);
        assert!(r.point.contains("entry 3 (task_state)"), "{}", r.point);
        // Once only.
        j.record("w", request(2, json!({})));
        assert_eq!(inj.record(), Some(r));
        // A journal that ends before seq K: no kill.
        let (j, inj, killed_at) = setup(CrashTrigger::AtEvent, 9);
        j.record("w", request(1, json!({})));
        assert_eq!(killed_at.load(Ordering::SeqCst), 0);
        assert!(inj.record().is_none());
    }
}
