//! History invariants: checks over a whole case's evidence (the journal, the delegator's
//! messages across its process lives, the crash) that need no expected outcome, beyond the
//! always-on rules of the registry. They are what a generated or swept run can be judged by
//! when nobody wrote down what should happen:
//!
//! - `HIST-01`: every delegation ends exactly once, with an outcome the journal justifies;
//! - `HIST-02`: no delegation open when the delegator was killed is lost across the restart;
//! - `HIST-03`: no message is sent for a delegation after its deadline passed (beyond
//!   [`DEADLINE_MARGIN_MS`]).
//!
//! Resends keeping their `messageId` (DLG-SEND-02), one task per intent (DLG-REC-05), reported
//! bytes (DLG-ART-04), the own credential (DLG-AUTH-01), input not guessed (DLG-INPUT-03) and child
//! budgets (DLG-LIMIT-05) are always-on rules already and are not repeated here.
//!
//! They report under their own ids, not under a registry rule: none of the registry's rules says
//! exactly this (DLG-REC-01 also asks for the case's expected outcome, which a generated case has
//! not), and a verdict under a rule id must mean what that rule says. [`describe`] gives every
//! report the requirement of an id of either kind. They are evaluated by `explore`,
//! `run --crash-sweep`, `run --crash-at-event` and `run --invariants` ([`apply`]); [`check`] is
//! the entry point for other engines.

use crate::rules::{Level, Req, direct_reply, registry, requests};
use crate::runner::{CaseResult, Received, RuleVerdict, Verdict, parse_message};
use crate::scenario::Scenario;
use a2a_driver_contract::{Done, DriverErrorCode, FromDelegator, Outcome};
use a2a_mock_agents::{Entry, Event};
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A history invariant: its id, level and requirement (as a registry rule has them).
#[derive(Debug, Clone, Copy)]
pub struct Invariant {
    /// Stable id such as `HIST-01`.
    pub id: &'static str,
    /// How binding it is (every invariant is a MUST).
    pub level: Level,
    /// The requirement in one sentence.
    pub requirement: &'static str,
    /// Where it comes from.
    pub source: &'static str,
}

/// How late (ms) a send may reach an agent after its delegation's deadline before HIST-03
/// fails: a send decided just before the deadline (the delegator stops `deadline_margin_ms`,
/// 200 ms by default, before it) is still in flight, and on a loaded two-core machine its
/// arrival can lag by hundreds of milliseconds. A delegator that goes on sending after the
/// deadline does so by whole retry or polling rounds, well past a second.
pub const DEADLINE_MARGIN_MS: u64 = 1_000;

/// Every history invariant, in id order.
pub const INVARIANTS: &[Invariant] = &[
    Invariant {
        id: "HIST-01",
        level: Level::Must,
        requirement: "Every delegation ends exactly once (one done per process life; a repeat after a restart reports the same outcome) with an outcome the journal justifies.",
        source: "docs/driver-protocol.md done; issue 14 history invariants",
    },
    Invariant {
        id: "HIST-02",
        level: Level::Must,
        requirement: "No delegation is lost across a crash: every delegation open when the delegator was killed gets its outcome from the restarted process.",
        source: "000 Observing and recovering; docs/driver-protocol.md restart",
    },
    Invariant {
        id: "HIST-03",
        level: Level::Must,
        requirement: "No message is sent for a delegation after its deadline passed (beyond a margin of a second); CancelTask and GetTask after it are allowed.",
        source: "000 Deadlines; issue 14 history invariants",
    },
];

/// What a report shows for a rule or invariant id: its level and requirement.
pub fn describe(id: &str) -> Option<(Level, &'static str)> {
    if let Some(r) = registry().into_iter().find(|r| r.id == id) {
        return Some((r.level, r.requirement));
    }
    INVARIANTS
        .iter()
        .find(|i| i.id == id)
        .map(|i| (i.level, i.requirement))
}

/// Judge every history invariant over a case's result (its journal, messages, crash record
/// and timing): one verdict per invariant that has something to judge, PASS or FAIL.
pub fn check(s: &Scenario, r: &CaseResult) -> Vec<RuleVerdict> {
    let h = History::of(s, r);
    let mut out = Vec::new();
    for (inv, result) in [
        (&INVARIANTS[0], h.ends_once_justified()),
        (&INVARIANTS[1], h.nothing_lost_across_crash()),
        (&INVARIANTS[2], h.no_send_after_deadline()),
    ] {
        let Some(result) = result else { continue };
        let (verdict, expected, observed, witnesses) = match result {
            Ok(()) => (Verdict::Pass, None, None, Vec::new()),
            Err(f) => (
                Verdict::Fail,
                Some(f.expected),
                Some(f.observed),
                r.journal
                    .iter()
                    .filter(|e| f.witnesses.contains(&e.seq))
                    .cloned()
                    .collect(),
            ),
        };
        out.push(RuleVerdict {
            id: inv.id.to_string(),
            level: inv.level,
            verdict,
            expected,
            observed,
            witnesses,
        });
    }
    out
}

/// Add the verdicts of [`check`] to the result; a failed invariant fails a case that would
/// otherwise pass (or be unknown). Call before known-failing entries are applied.
pub fn apply(s: &Scenario, r: &mut CaseResult) {
    let verdicts = check(s, r);
    if verdicts.iter().any(|v| v.verdict == Verdict::Fail)
        && matches!(
            r.verdict,
            Verdict::Pass | Verdict::NonStrict | Verdict::NotExercised | Verdict::Unknown
        )
    {
        r.verdict = Verdict::Fail;
    }
    r.rules.extend(verdicts);
}

/// A broken invariant: what should have happened, what did, the witness entries.
struct Broken {
    expected: String,
    observed: String,
    witnesses: Vec<u64>,
}

fn broken(expected: impl Into<String>, observed: impl Into<String>, witnesses: Vec<u64>) -> Broken {
    Broken {
        expected: expected.into(),
        observed: observed.into(),
        witnesses,
    }
}

/// `None`: nothing to judge; `Some(Ok)`: held; `Some(Err)`: broken.
type Judged = Option<Result<(), Broken>>;

/// One delegation of the case as the invariants see it: a top-level one or a child.
struct Deleg<'a> {
    id: &'a str,
    /// Texts its traffic carries (its own; a parent's also its children's).
    texts: Vec<&'a str>,
    /// The delegation whose `done` must come before the harness sends this one.
    after: Option<&'a str>,
    /// The parent of a child.
    parent: Option<&'a str>,
    deadline_in_ms: Option<i64>,
}

/// How a delegation ended, as the delegator said.
enum Ending<'a> {
    Done(&'a Done),
    /// An `error` with the delegation's id that declines it (`unsupported`, `bad_request`).
    Declined(DriverErrorCode),
}

/// The evidence of one case, arranged for the invariants.
struct History<'a> {
    s: &'a Scenario,
    r: &'a CaseResult,
    /// The delegator's messages in order (their index in the case's messages), `snapshot_ok`
    /// left out.
    messages: Vec<(usize, FromDelegator)>,
    delegations: Vec<Deleg<'a>>,
    reqs: Vec<Req<'a>>,
}

impl<'a> History<'a> {
    fn of(s: &'a Scenario, r: &'a CaseResult) -> Self {
        let messages = r
            .messages
            .iter()
            .enumerate()
            .filter_map(|(i, m)| match parse_message(m) {
                Ok(Received::Message(m)) => Some((i, m)),
                _ => None,
            })
            .collect();
        let mut delegations = Vec::new();
        for d in &s.delegations {
            let mut texts = vec![d.text.as_str()];
            texts.extend(d.children.iter().map(|c| c.text.as_str()));
            delegations.push(Deleg {
                id: &d.id,
                texts,
                after: d.after.as_deref(),
                parent: None,
                deadline_in_ms: d.deadline_in_ms,
            });
            for c in &d.children {
                delegations.push(Deleg {
                    id: &c.id,
                    texts: vec![c.text.as_str()],
                    after: None,
                    parent: Some(&d.id),
                    deadline_in_ms: d.deadline_in_ms,
                });
            }
        }
        History {
            s,
            r,
            messages,
            delegations,
            reqs: requests(&r.journal),
        }
    }

    /// Index of the first message of the restarted process (all messages when there was a
    /// crash but no restart); `None` without a crash.
    fn restart(&self) -> Option<usize> {
        let c = self.r.crash.as_ref()?;
        Some(c.messages_before_restart.unwrap_or(self.r.messages.len()))
    }

    /// The process life a message index belongs to: 0 before the restart, 1 after.
    fn life(&self, i: usize) -> u8 {
        u8::from(self.restart().is_some_and(|b| i >= b))
    }

    fn endings(&self, id: &str) -> Vec<(usize, Ending<'_>)> {
        // An `error` declines a `delegate` only as the first message about the delegation (the
        // contract: a `delegate` is acknowledged by its first message). After a `state`,
        // `escalate` or `done` about it, in either process life, an `error` answers a later
        // request about it: a `cancel`, as re-sent after a restart, which the restarted process
        // may answer before or after it reports again the `done` the killed one never wrote.
        let acknowledged_before = |at: usize| {
            self.messages.iter().any(|(j, m)| {
                *j < at
                    && match m {
                        FromDelegator::Done(d) => d.id == id,
                        FromDelegator::State(s) => s.id == id,
                        FromDelegator::Escalate(e) => e.id == id,
                        _ => false,
                    }
            })
        };
        self.messages
            .iter()
            .filter_map(|(i, m)| match m {
                FromDelegator::Done(d) if d.id == id => Some((*i, Ending::Done(d))),
                FromDelegator::Error(e)
                    if e.id.as_deref() == Some(id)
                        && !acknowledged_before(*i)
                        && matches!(
                            e.code,
                            DriverErrorCode::Unsupported | DriverErrorCode::BadRequest
                        ) =>
                {
                    Some((*i, Ending::Declined(e.code)))
                }
                _ => None,
            })
            .collect()
    }

    /// Index of the message after which the harness sent the delegation's `delegate`: the
    /// first `init_ok`, or the first ending of the delegation it waits for; `None` when it was
    /// never sent. A child is sent with its parent.
    fn sent_after(&self, d: &Deleg) -> Option<usize> {
        if let Some(p) = d.parent {
            let parent = self.delegations.iter().find(|x| x.id == p)?;
            return self.sent_after(parent);
        }
        let inited = self
            .messages
            .iter()
            .find(|(_, m)| matches!(m, FromDelegator::InitOk(_)))
            .map(|(i, _)| *i)?;
        match d.after {
            None => Some(inited),
            Some(a) => self.endings(a).first().map(|(i, _)| *i),
        }
    }

    /// True when a message index `< before` names the delegation, or the journal shows a send
    /// carrying its text at a sequence `<= until_seq`.
    fn acknowledged(&self, d: &Deleg, before: usize, until_seq: u64) -> bool {
        self.messages
            .iter()
            .any(|(i, m)| *i < before && message_id(m) == Some(d.id))
            || self
                .traffic(d)
                .iter()
                .any(|r| r.is_send() && r.seq <= until_seq)
    }

    /// The requests that carry the delegation's text (its sends) and those that name one of
    /// its tasks.
    fn traffic(&self, d: &Deleg) -> Vec<&Req<'a>> {
        self.reqs
            .iter()
            .filter(|r| {
                let text = r.text();
                d.texts.iter().any(|t| text.contains(t))
            })
            .collect()
    }

    /// The tasks of the delegation: created by its sends' `messageId`s, or continued by them.
    fn tasks(&self, d: &Deleg) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for r in self.traffic(d) {
            if let Some(t) = r.task_id() {
                out.insert(t.to_string());
            }
            let Some(m) = r.message_id() else { continue };
            for e in &self.r.journal {
                if let Event::TaskCreated {
                    task_id,
                    message_id,
                    ..
                } = &e.event
                    && e.agent == r.agent
                    && message_id == m
                {
                    out.insert(task_id.clone());
                }
            }
        }
        out
    }

    /// Delegations open when the delegator was killed: acknowledged before the kill (a message
    /// of the killed process names them, or a send of theirs reached an agent), with no ending
    /// from the killed process.
    fn open_at_kill(&self, d: &Deleg) -> bool {
        let (Some(b), Some(c)) = (self.restart(), self.r.crash.as_ref()) else {
            return false;
        };
        self.acknowledged(d, b, c.last_seq_before_kill)
            && !self.endings(d.id).iter().any(|(i, _)| *i < b)
    }

    /// HIST-01.
    fn ends_once_justified(&self) -> Judged {
        let mut judged = false;
        for d in &self.delegations {
            let endings = self.endings(d.id);
            if endings.is_empty() {
                let Some(sent) = self.sent_after(d) else {
                    continue;
                };
                // A child may never be created (its parent refused or failed first); a
                // `delegate` written to a process that died before acknowledging it may be lost
                // (the contract owes nothing un-acknowledged); an open one at the kill is
                // HIST-02's.
                let to_live_process = self.restart().is_none_or(|b| sent >= b)
                    || self.acknowledged(d, usize::MAX, u64::MAX);
                if d.parent.is_some() || !to_live_process || self.open_at_kill(d) {
                    continue;
                }
                return Some(Err(broken(
                    format!("one outcome (done) for {}", d.id),
                    "it never ended",
                    vec![],
                )));
            }
            judged = true;
            for (k, (i, e)) in endings.iter().enumerate() {
                for (j, other) in &endings[..k] {
                    if self.life(*i) == self.life(*j) {
                        return Some(Err(broken(
                            format!("one done for {} per process life", d.id),
                            format!(
                                "two endings in one process life: {} then {}",
                                describe_ending(other),
                                describe_ending(e)
                            ),
                            vec![],
                        )));
                    }
                    if outcome_key(other) != outcome_key(e) {
                        return Some(Err(broken(
                            format!(
                                "a done for {} repeated after the restart reports the same outcome",
                                d.id
                            ),
                            format!(
                                "{} before the restart, {} after",
                                describe_ending(other),
                                describe_ending(e)
                            ),
                            vec![],
                        )));
                    }
                }
            }
            if let Some((_, Ending::Done(done))) = endings.last()
                && let Err(b) = self.justified(d, done)
            {
                return Some(Err(b));
            }
        }
        judged.then_some(Ok(()))
    }

    /// An outcome is justified when the journal (up to the moment the harness received it)
    /// shows its cause. FAILED, DEAD_LETTERED, SEND_FAILED and REFUSED may be the delegator's
    /// own decision (its deadline, a rejected artifact, retries exhausted, a definite error, its
    /// limits): the rules about each judge those, here they are taken as given.
    fn justified(&self, d: &Deleg, done: &Done) -> Result<(), Broken> {
        let until = self.r.done_at.get(d.id).copied().unwrap_or(u64::MAX);
        let entries: Vec<&Entry> = self.r.journal.iter().filter(|e| e.seq <= until).collect();
        let traffic: Vec<&Req> = self
            .traffic(d)
            .into_iter()
            .filter(|r| r.seq <= until)
            .collect();
        let tasks = self.tasks(d);
        let reached = |state: &str| {
            entries.iter().any(|e| match &e.event {
                Event::TaskState { task_id, state: s } => {
                    tasks.contains(task_id) && s.trim_start_matches("TASK_STATE_") == state
                }
                _ => false,
            })
        };
        let direct = traffic
            .iter()
            .any(|r| r.is_new_send() && direct_reply(&self.r.journal, r.req));
        let names_task = |r: &Req| {
            r.params
                .get("id")
                .and_then(Value::as_str)
                .or(r.task_id())
                .is_some_and(|t| tasks.contains(t))
        };
        let (ok, cause) = match done.state {
            Outcome::Completed => (
                reached("COMPLETED") || direct,
                "a COMPLETED state of one of its tasks, or a Message reply",
            ),
            Outcome::AnsweredDirect => (direct, "a Message reply to one of its sends"),
            Outcome::Rejected => (reached("REJECTED"), "a REJECTED state of one of its tasks"),
            Outcome::Canceled => (
                reached("CANCELED")
                    || self
                        .s
                        .cancels
                        .iter()
                        .any(|c| c.id == d.id || Some(c.id.as_str()) == d.parent)
                    || self
                        .reqs
                        .iter()
                        .any(|r| r.seq <= until && r.calls(&[Method::CancelTask]) && names_task(r)),
                "a cancel: the harness's, a CancelTask of one of its tasks, or a CANCELED state",
            ),
            Outcome::Lost => (
                entries.iter().any(|e| match &e.event {
                    Event::TaskPurged { task_id } => tasks.contains(task_id),
                    Event::Response {
                        req,
                        rpc_error: Some(-32001),
                        ..
                    } => self.reqs.iter().any(|r| r.req == *req && names_task(r)),
                    _ => false,
                }),
                "-32001 (task not found) for one of its tasks",
            ),
            Outcome::Failed | Outcome::DeadLettered | Outcome::SendFailed | Outcome::Refused => {
                (true, "")
            }
        };
        if ok {
            Ok(())
        } else {
            Err(broken(
                format!("{} justified by the journal: {cause}", done.state.as_str()),
                format!(
                    "{} reported {}; the journal up to seq {} shows no such cause",
                    d.id,
                    done.state.as_str(),
                    if until == u64::MAX {
                        "its end".to_string()
                    } else {
                        until.to_string()
                    }
                ),
                vec![],
            ))
        }
    }

    /// HIST-02.
    fn nothing_lost_across_crash(&self) -> Judged {
        let (b, c) = (self.restart()?, self.r.crash.as_ref()?);
        let mut any = false;
        for d in self.delegations.iter().filter(|d| self.open_at_kill(d)) {
            any = true;
            if !self.endings(d.id).iter().any(|(i, _)| *i >= b) {
                return Some(Err(broken(
                    format!(
                        "{} (open when the delegator was killed after seq {}) driven to an outcome by the restarted process",
                        d.id, c.last_seq_before_kill
                    ),
                    "lost: no outcome after the restart",
                    vec![c.last_seq_before_kill],
                )));
            }
        }
        any.then_some(Ok(()))
    }

    /// HIST-03.
    fn no_send_after_deadline(&self) -> Judged {
        let started = i128::from(self.r.started_at_us?);
        let at_us: BTreeMap<u64, u64> = self.r.journal.iter().map(|e| (e.seq, e.at_us)).collect();
        let mut any = false;
        for d in self.delegations.iter().filter(|d| d.parent.is_none()) {
            let Some(ms) = d.deadline_in_ms else { continue };
            let deadline = started + i128::from(ms) * 1000;
            let limit = deadline + i128::from(DEADLINE_MARGIN_MS) * 1000;
            for r in self.traffic(d).into_iter().filter(|r| r.is_send()) {
                any = true;
                let at = i128::from(at_us.get(&r.seq).copied().unwrap_or(0));
                if at > limit {
                    return Some(Err(broken(
                        format!(
                            "no send for {} after its deadline (+{DEADLINE_MARGIN_MS} ms)",
                            d.id
                        ),
                        format!(
                            "{} {} reached {} {} ms after the deadline",
                            r.method,
                            r.message_id().unwrap_or("(no messageId)"),
                            r.agent,
                            (at - deadline) / 1000
                        ),
                        vec![r.seq],
                    )));
                }
            }
        }
        any.then_some(Ok(()))
    }
}

/// The delegation id a message of the delegator names.
fn message_id(m: &FromDelegator) -> Option<&str> {
    match m {
        FromDelegator::State(s) => Some(&s.id),
        FromDelegator::Escalate(e) => Some(&e.id),
        FromDelegator::Done(d) => Some(&d.id),
        FromDelegator::Error(e) => e.id.as_deref(),
        _ => None,
    }
}

/// What makes two endings the same outcome: the state, the task and the artifacts reported.
fn outcome_key(e: &Ending) -> String {
    match e {
        Ending::Done(d) => {
            let artifacts: Vec<String> = d
                .artifacts
                .iter()
                .map(|a| format!("{}:{}:{}", a.artifact_id, a.bytes, a.sha256))
                .collect();
            format!(
                "done {} task {} [{}]",
                d.state.as_str(),
                d.task_id.as_deref().unwrap_or("-"),
                artifacts.join(",")
            )
        }
        Ending::Declined(code) => format!("error {code:?}"),
    }
}

fn describe_ending(e: &Ending) -> String {
    match e {
        Ending::Done(d) => format!("done {}", d.state.as_str()),
        Ending::Declined(code) => format!("error {code:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_support::{Case, delegation, good};
    use crate::runner::CrashRecord;
    use crate::scenario::CrashTrigger;
    use serde_json::json;

    fn init_ok() -> Value {
        json!({"type": "init_ok", "name": "d", "version": "1", "supports": []})
    }

    fn state(id: &str) -> Value {
        json!({"type": "state", "id": id, "state": "WORKING", "task_id": null, "context_id": null})
    }

    /// The `done` the case records for `id`, as the delegator writes it.
    fn done_of(c: &Case, id: &str) -> Value {
        serde_json::to_value(&c.outcomes[id]).unwrap()
    }

    /// The case's result with these messages; `crash`: (last seq before the kill, messages of
    /// the killed process).
    fn result(c: &Case, messages: Vec<Value>, crash: Option<(u64, usize)>) -> CaseResult {
        let cfg = crate::runner::RunSettings {
            delegator: "d".into(),
            seed: 1,
            work_dir: std::env::temp_dir(),
            binding: None,
            tls: false,
        };
        let mut r = CaseResult::harness_failure(&c.s, &cfg, String::new());
        r.verdict = Verdict::Pass;
        r.journal = c.j.entries.clone();
        r.messages = messages;
        r.started_at_us = Some(0);
        r.crash = crash.map(|(seq, before)| CrashRecord {
            trigger: CrashTrigger::AtEvent,
            fired_seq: seq,
            last_seq_before_kill: seq,
            point: String::new(),
            at_named_point: true,
            messages_before_restart: Some(before),
        });
        r
    }

    fn verdict_of(c: &Case, r: &CaseResult, id: &str) -> Option<Verdict> {
        check(&c.s, r)
            .into_iter()
            .find(|v| v.id == id)
            .map(|v| v.verdict)
    }

    #[test]
    fn hist_01_one_justified_outcome_per_delegation() {
        let c = good("");
        let done = done_of(&c, "d1");
        let r = result(&c, vec![init_ok(), state("d1"), done.clone()], None);
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Pass));
        // Two in one process life.
        let r = result(&c, vec![init_ok(), done.clone(), done.clone()], None);
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Fail));
        // Never ended, though sent to a process that lived on.
        let r = result(&c, vec![init_ok(), state("d1")], None);
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Fail));
        // Nothing to judge before init_ok.
        let r = result(&c, vec![], None);
        assert_eq!(verdict_of(&c, &r, "HIST-01"), None);
    }

    #[test]
    fn hist_01_a_repeat_after_the_restart_must_be_the_same_outcome() {
        let mut c = good("");
        let done = done_of(&c, "d1");
        // Once before the kill (seq 3), once again from the restarted process: one outcome.
        let r = result(
            &c,
            vec![init_ok(), done.clone(), init_ok(), done.clone()],
            Some((3, 2)),
        );
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Pass));
        c.done("d1", "FAILED", json!([]));
        let failed = done_of(&c, "d1");
        let r = result(
            &c,
            vec![init_ok(), done.clone(), init_ok(), failed],
            Some((3, 2)),
        );
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Fail));
        // The restarted process reports the `done` again, then answers the `cancel` the harness
        // re-sent with `error`: still one ending.
        let error =
            json!({"type": "error", "id": "d1", "code": "bad_request", "message": "not running"});
        let r = result(
            &c,
            vec![init_ok(), init_ok(), done.clone(), error.clone()],
            Some((3, 1)),
        );
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Pass));
        // Acknowledged before the kill; the restarted process answers the re-sent `cancel`
        // first (the record is final in its store) and then reports the `done` the killed one
        // never wrote: the `error` answers the cancel, one ending (crash sweep of
        // recovery.crash-during-cancel, seed 18, position 14).
        let r = result(
            &c,
            vec![
                init_ok(),
                state("d1"),
                init_ok(),
                error.clone(),
                done.clone(),
            ],
            Some((3, 2)),
        );
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Pass));
        // An `error` declining the delegation next to a `done` is two endings.
        let r = result(&c, vec![init_ok(), error, done], None);
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Fail));
    }

    #[test]
    fn hist_01_an_outcome_needs_its_cause_in_the_journal() {
        // The agent's task failed; the delegator reported COMPLETED.
        let mut c = Case::new(&delegation(""));
        let (_, req) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp(
            "a",
            req,
            200,
            None,
            json!({"result": {"task": {"id": "t1"}}}),
        );
        c.j.state("a", "t1", "TASK_STATE_FAILED");
        c.done("d1", "COMPLETED", json!([]));
        let r = result(&c, vec![init_ok(), done_of(&c, "d1")], None);
        let v = check(&c.s, &r);
        let h = v.iter().find(|v| v.id == "HIST-01").unwrap();
        assert_eq!(h.verdict, Verdict::Fail);
        assert!(
            h.expected.as_deref().unwrap().contains("COMPLETED"),
            "{h:?}"
        );
        // FAILED is the delegator's to decide; REJECTED needs the agent's REJECTED.
        for (state, verdict) in [("FAILED", Verdict::Pass), ("REJECTED", Verdict::Fail)] {
            c.done("d1", state, json!([]));
            let r = result(&c, vec![init_ok(), done_of(&c, "d1")], None);
            assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(verdict), "{state}");
        }
        c.j.state("a", "t1", "TASK_STATE_REJECTED");
        let r = result(&c, vec![init_ok(), done_of(&c, "d1")], None);
        assert_eq!(verdict_of(&c, &r, "HIST-01"), Some(Verdict::Pass));
    }

    #[test]
    fn hist_02_a_delegation_open_at_the_kill_ends_after_the_restart() {
        let c = good("");
        let done = done_of(&c, "d1");
        // Killed after seq 1 (its send reached the agent): open, ended by the new process.
        let r = result(
            &c,
            vec![init_ok(), state("d1"), init_ok(), done.clone()],
            Some((1, 2)),
        );
        assert_eq!(verdict_of(&c, &r, "HIST-02"), Some(Verdict::Pass));
        // Lost: nothing after the restart.
        let r = result(&c, vec![init_ok(), state("d1"), init_ok()], Some((1, 2)));
        let v = check(&c.s, &r);
        assert_eq!(
            v.iter().find(|v| v.id == "HIST-02").map(|v| v.verdict),
            Some(Verdict::Fail)
        );
        // Lost is HIST-02's, not also HIST-01's.
        assert_eq!(verdict_of(&c, &r, "HIST-01"), None);
        // Ended before the kill: nothing was open.
        let r = result(&c, vec![init_ok(), done, init_ok()], Some((9, 2)));
        assert_eq!(verdict_of(&c, &r, "HIST-02"), None);
        // No crash, nothing to judge.
        let r = result(&c, vec![init_ok()], None);
        assert_eq!(verdict_of(&c, &r, "HIST-02"), None);
    }

    #[test]
    fn hist_03_no_send_after_the_deadline_beyond_the_margin() {
        let mut c = Case::new(&delegation("deadline_in_ms = 1000"));
        let (s1, _) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.at(s1, 100_000);
        let (s2, _) = c.j.send("a", "m1", "do the thing", json!({}));
        // Within the margin: in flight at the deadline.
        c.j.at(s2, 1_000_000 + DEADLINE_MARGIN_MS * 1000 - 1);
        // Reading and cancelling after the deadline is allowed.
        let (g, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.at(g, 9_000_000);
        let (x, _) = c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
        c.j.at(x, 9_000_000);
        let r = result(&c, vec![init_ok()], None);
        assert_eq!(verdict_of(&c, &r, "HIST-03"), Some(Verdict::Pass));
        let (late, _) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.at(late, 2_000_001 + DEADLINE_MARGIN_MS * 1000);
        let r = result(&c, vec![init_ok()], None);
        let v = check(&c.s, &r);
        let h = v.iter().find(|v| v.id == "HIST-03").unwrap();
        assert_eq!(h.verdict, Verdict::Fail);
        assert_eq!(h.witnesses.first().map(|w| w.seq), Some(late));
        // No deadline, nothing to judge.
        let c = good("");
        let r = result(&c, vec![init_ok()], None);
        assert_eq!(verdict_of(&c, &r, "HIST-03"), None);
    }

    #[test]
    fn apply_fails_a_passing_case_and_describe_knows_both_kinds_of_ids() {
        let c = good("");
        let mut r = result(&c, vec![init_ok(), state("d1")], None);
        apply(&c.s, &mut r);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.rules.iter().any(|v| v.id == "HIST-01"));
        assert!(describe("HIST-02").is_some_and(|(_, req)| req.contains("crash")));
        assert!(describe("DLG-REC-01").is_some());
        assert!(describe("NOPE-1").is_none());
    }
}
