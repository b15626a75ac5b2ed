//! The delegator's webhook (DLG-PUSH-*): genuine pushes are acknowledged with 2xx (spec §4.3.3,
//! §13.2), a push about a task the delegator never created changes no delegation, and each
//! push config has its own token.
//!
//! The mock agents POST every push to the webhook of a push config the delegator gave them,
//! with that config's `token` and `authentication`: a journal `push` entry about a task some
//! `task_created` names is genuine; one about a task no `task_created` names is a
//! `push_foreign` step's (a confused or hostile agent). Forged pushes (a wrong token) are the
//! harness's own and DLG-OBS-04's.

use super::ctx::holds_text;
use super::evidence::*;
use super::registry::{Check, fail};
use super::state::observed_to_final;
use a2a_mock_agents::{Event, ScriptStep};
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The push configs in a request's params (JSON-RPC shaped, 1.0 or 0.3 names): the one in a
/// send's configuration, or the one a push-config call registers.
pub(super) fn push_configs<'a>(method: &str, params: &'a Value) -> Vec<&'a Value> {
    let mut configs: Vec<&Value> = [
        "/configuration/taskPushNotificationConfig",
        "/configuration/pushNotificationConfig",
        "/pushNotificationConfig",
        "/config",
    ]
    .iter()
    .filter_map(|p| params.pointer(p))
    .filter(|c| c.is_object())
    .collect();
    if v1_method(method) == Some(Method::CreateTaskPushNotificationConfig) && configs.is_empty() {
        configs.push(params);
    }
    configs
}

/// The tokens of one push config: its `token` and `authentication.credentials`, non-empty.
pub(super) fn config_tokens(config: &Value) -> Vec<&str> {
    ["/token", "/authentication/credentials"]
        .iter()
        .filter_map(|p| config.pointer(p).and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The delegator's requests that carry a push config (never a mock agent's own traffic).
fn config_requests<'a>(ev: &'a Evidence) -> Vec<(Req<'a>, Vec<&'a Value>)> {
    requests(ev.journal)
        .into_iter()
        .filter(|r| !r.from_mock_peer())
        .filter_map(|r| {
            let c = push_configs(r.method, r.params);
            (!c.is_empty()).then_some((r, c))
        })
        .collect()
}

/// Why a push rule was not exercised when the delegator gave no agent a push config.
fn no_push() -> Check {
    Check::NotExercised {
        why: "the delegator configured no push notifications (it streamed or polled)".into(),
    }
}

/// Every task id some agent created.
fn created_tasks<'a>(ev: &'a Evidence) -> BTreeSet<&'a str> {
    ev.journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::TaskCreated { task_id, .. } => Some(task_id.as_str()),
            _ => None,
        })
        .collect()
}

/// DLG-PUSH-01: every genuine push that reached the webhook (a journal `push` with an HTTP
/// status, about a task an agent created for the delegator, sent with the configured token)
/// was answered 2xx — duplicates and pushes after the delegation ended included (spec §4.3.3:
/// the webhook acknowledges receipt; it may ignore what it does not need). A push about a task
/// whose push config the delegator deleted before it (DeleteTaskPushNotificationConfig) is no
/// longer genuine.
pub(super) fn genuine_pushes_acknowledged(ev: &Evidence) -> Check {
    let created = created_tasks(ev);
    // A push config the delegator deleted is no longer configured: a push about its task after
    // the delete is no genuine push any more (a race the agent lost).
    let deleted: Vec<(u64, &str)> = requests(ev.journal)
        .iter()
        .filter(|r| !r.from_mock_peer() && r.calls(&[Method::DeleteTaskPushNotificationConfig]))
        .filter_map(|r| {
            let t = r.params.get("taskId").or_else(|| r.params.get("id"));
            Some((r.seq, t.and_then(Value::as_str)?))
        })
        .collect();
    let configs = config_requests(ev);
    // After a kill, the port of a webhook address that only the killed process configured may
    // be held by anything: an answer from it says nothing about the restarted delegator's
    // webhook (which re-registers or polls).
    let live_address = |url: &str, at: u64| match ev.crash_seq {
        Some(kill) if at > kill => configs.iter().any(|(r, cs)| {
            r.seq > kill
                && cs
                    .iter()
                    .any(|c| c.get("url").and_then(Value::as_str) == Some(url))
        }),
        _ => true,
    };
    let mut any = false;
    for e in ev.journal {
        let Event::Push {
            task_id,
            status: Some(status),
            url,
            ..
        } = &e.event
        else {
            continue;
        };
        if !created.contains(task_id.as_str())
            || deleted.iter().any(|(at, t)| *at < e.seq && t == task_id)
            || !live_address(url, e.seq)
        {
            continue;
        }
        any = true;
        if !(200..300).contains(status) {
            return fail(
                "the webhook answers 2xx to every genuine push (configured token, a task it created)",
                format!(
                    "it answered HTTP {status} to {}'s push about task {task_id}",
                    e.agent
                ),
                vec![e.seq],
            );
        }
    }
    if any {
        Check::Pass
    } else if configs.is_empty() {
        no_push()
    } else {
        Check::NotApplicable
    }
}

/// The delegations whose push config registered webhook `url` (a send's config: the
/// delegation of the send; a push-config call: the delegation of its task).
fn owners_of_webhook(ev: &Evidence, url: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (r, configs) in config_requests(ev) {
        if !configs
            .iter()
            .any(|c| c.get("url").and_then(Value::as_str) == Some(url))
        {
            continue;
        }
        let id = if r.is_send() && r.task_id().is_none() {
            delegation_of(ev, &r).map(|d| d.id.clone())
        } else {
            let task = r
                .task_id()
                .or_else(|| r.params.get("taskId").and_then(Value::as_str));
            ev.scenario
                .delegations
                .iter()
                .find(|d| task.is_some_and(|t| tasks_of(ev, &d.id).iter().any(|(x, _)| x == t)))
                .map(|d| d.id.clone())
        };
        if let Some(id) = id
            && !out.contains(&id)
        {
            out.push(id);
        }
    }
    out
}

/// The status messages of `agent`'s `push_foreign` steps.
fn foreign_messages(ev: &Evidence, agent: &str) -> Vec<String> {
    agent_spec(ev, agent)
        .into_iter()
        .flat_map(|a| &a.rules)
        .flat_map(|r| &r.steps)
        .filter_map(|s| match s {
            ScriptStep::PushForeign {
                message: Some(m), ..
            } if !m.trim().is_empty() => Some(m.trim().to_string()),
            _ => None,
        })
        .collect()
}

/// DLG-PUSH-02: after a push about a task no agent created for the delegator (a `push_foreign`
/// step) reached its webhook — answered 2xx or not, both are fine — the delegation whose
/// webhook it reached still ends as its own task's states justify: after its own task's final
/// state reached it (or, for a FAILED or CANCELED of its own, after it observed its task), in
/// an outcome the scenario expects, and without the foreign status message as its message.
/// Only an outcome reported after the foreign push is judged.
pub(super) fn foreign_push_changes_nothing(ev: &Evidence) -> Check {
    let created = created_tasks(ev);
    let mut any = false;
    let mut reached = false;
    for e in ev.journal {
        let Event::Push {
            task_id,
            url,
            status: Some(_),
            ..
        } = &e.event
        else {
            continue;
        };
        if created.contains(task_id.as_str()) {
            continue;
        }
        reached = true;
        let foreign_text = foreign_messages(ev, &e.agent);
        for id in owners_of_webhook(ev, url) {
            if seen_until(ev, &id) < e.seq {
                // Its outcome came before the foreign push: nothing it could change.
                continue;
            }
            let Some(d) = ev.scenario.delegations.iter().find(|d| d.id == id) else {
                continue;
            };
            let Ok((own, _, _)) = work_task(ev, &id) else {
                continue;
            };
            any = true;
            if let Err(f) = observed_to_final(ev, &id, &own, false) {
                return f;
            }
            let Some(done) = done_of(ev, &id) else {
                continue;
            };
            if !d.expect.state.is_empty() && !d.expect.state.contains(&done.state) {
                return fail(
                    format!(
                        "{id} ends as its own task {own} justifies ({}), whatever a push about task {task_id} says",
                        super::words::list(names(&d.expect.state))
                    ),
                    format!("it ended in {}", done.state),
                    vec![e.seq],
                );
            }
            if let Some(m) = foreign_text
                .iter()
                .find(|m| done.message.as_deref().is_some_and(|x| holds_text(x, m)))
            {
                return fail(
                    format!("{id}'s outcome carries nothing of the push about task {task_id}"),
                    format!("its message is the foreign status message \"{m}\""),
                    vec![e.seq],
                );
            }
        }
    }
    if any {
        Check::Pass
    } else if config_requests(ev).is_empty() {
        no_push()
    } else if reached {
        Check::NotApplicable
    } else {
        Check::NotExercised {
            why: "no push about a foreign task reached the delegator's webhook".into(),
        }
    }
}

/// DLG-PUSH-03: every push config the delegator gave carries a token, and no token serves two
/// configs. A config is known by the task it is for (the task a send created or continued, the
/// task of a push-config call), else by its send's messageId: resending the same intent
/// re-sends the same config. The situation: at least two configs.
pub(super) fn push_tokens_unique(ev: &Evidence) -> Check {
    let by_req = request_tasks(ev.journal);
    let configs = config_requests(ev);
    if configs.is_empty() {
        return no_push();
    }
    let mut owners: BTreeMap<&str, (String, u64)> = BTreeMap::new();
    let mut keys = BTreeSet::new();
    for (r, cs) in &configs {
        let key = by_req
            .get(&r.req)
            .map(|t| format!("task {t}"))
            .or_else(|| {
                r.params
                    .get("taskId")
                    .and_then(Value::as_str)
                    .map(|t| format!("task {t}"))
            })
            .or_else(|| r.message_id().map(|m| format!("message {m}")))
            .unwrap_or_else(|| format!("request {}", r.req));
        let key = format!("{}: {key}", r.agent);
        keys.insert(key.clone());
        for c in cs {
            let tokens = config_tokens(c);
            if tokens.is_empty() {
                return fail(
                    "each push config carries its own token",
                    format!("the push config sent to {} carries no token", r.agent),
                    vec![r.seq],
                );
            }
            for t in tokens {
                match owners.get(t) {
                    Some((other, seq)) if *other != key => {
                        return fail(
                            "each push config gets its own token (unique, single-purpose)",
                            format!("one token serves the configs for {other} and {key}"),
                            vec![*seq, r.seq],
                        );
                    }
                    Some(_) => {}
                    None => {
                        owners.insert(t, (key.clone(), r.seq));
                    }
                }
            }
        }
    }
    Check::held_if_seen(keys.len() >= 2)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use a2a_mock_agents::Event;
    use serde_json::json;

    const HOOK: &str = "http://127.0.0.1:9/a2a-webhook/d1";

    fn push(c: &mut Case, task: &str, status: Option<u16>) -> u64 {
        c.j.push(
            "a",
            Event::Push {
                task_id: task.into(),
                url: HOOK.into(),
                status,
                error: status.is_none().then(|| "connection refused".into()),
            },
        )
    }

    /// d1 observed by push: its send carries a push config with `token`; the agent creates t1,
    /// works, completes; pushes (2xx) tell the delegator, which reads the task.
    fn pushed(token: &str) -> Case {
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        let (_, r) = c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": HOOK, "token": token}}}),
        );
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.state("a", "t1", "TASK_STATE_WORKING");
        push(&mut c, "t1", Some(200));
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        push(&mut c, "t1", Some(200));
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({"result": {"id": "t1"}}));
        c.done("d1", "COMPLETED", json!([]));
        c
    }

    #[test]
    fn push_01_genuine_pushes_answered_2xx() {
        let mut c = pushed("tok-1");
        assert_eq!(c.check(checker("DLG-PUSH-01")), Check::Pass);
        // A duplicate answered 204: still an acknowledgement.
        push(&mut c, "t1", Some(204));
        assert_eq!(c.check(checker("DLG-PUSH-01")), Check::Pass);
        // An undeliverable push (the webhook gone) shows nothing about the webhook's answer.
        push(&mut c, "t1", None);
        assert_eq!(c.check(checker("DLG-PUSH-01")), Check::Pass);
        // A duplicate after the delegation ended, refused.
        let mut late = pushed("tok-1");
        push(&mut late, "t1", Some(401));
        assert!(fails(late.check(checker("DLG-PUSH-01"))));
        // Unless the delegator had deleted the push config first.
        let mut late = pushed("tok-1");
        late.j.rpc(
            "a",
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": "t1", "id": "cfg-1"}),
            &[],
        );
        push(&mut late, "t1", Some(401));
        assert_eq!(late.check(checker("DLG-PUSH-01")), Check::Pass);
    }

    /// After a kill, the old webhook address belongs to nobody in particular: a 404 from it is
    /// not the restarted delegator's answer. A push to an address the restarted process
    /// configured is judged as before.
    #[test]
    fn push_01_after_a_kill_only_live_addresses_count() {
        let mut c = pushed("tok-1");
        c.crash = Some(c.j.entries.last().map_or(0, |e| e.seq));
        push(&mut c, "t1", Some(404));
        assert_eq!(c.check(checker("DLG-PUSH-01")), Check::Pass);
        // The restarted process configures the same address again: its 404 is its own.
        c.j.rpc(
            "a",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t1", "url": HOOK, "token": "tok-2"}),
            &[],
        );
        push(&mut c, "t1", Some(404));
        assert!(fails(c.check(checker("DLG-PUSH-01"))));
    }

    #[test]
    fn push_01_a_foreign_push_may_be_refused_and_polling_is_another_path() {
        let mut c = pushed("tok-1");
        push(&mut c, "someone-elses-task", Some(404));
        assert_eq!(c.check(checker("DLG-PUSH-01")), Check::Pass);
        assert!(matches!(
            good("").check(checker("DLG-PUSH-01")),
            Check::NotExercised { .. }
        ));
    }

    /// [`pushed`] with a foreign push (FAILED, "Your order was canceled") after WORKING.
    fn with_foreign(status: u16) -> Case {
        let mut c = pushed("tok-1");
        c.script(
            "a",
            json!({"steps": [
                {"do": "state", "state": "TASK_STATE_WORKING"},
                {"do": "push_foreign", "state": "TASK_STATE_FAILED", "message": "Your order was canceled"},
                {"do": "state", "state": "TASK_STATE_COMPLETED"},
            ]}),
        );
        let at = c
            .j
            .entries
            .iter()
            .position(|e| matches!(&e.event, Event::TaskState { state, .. } if state == "TASK_STATE_COMPLETED"))
            .unwrap_or(0);
        c.j.entries.insert(
            at,
            a2a_mock_agents::Entry {
                seq: 0,
                at_us: 0,
                agent: "a".into(),
                event: Event::Push {
                    task_id: "foreign-1".into(),
                    url: HOOK.into(),
                    status: Some(status),
                    error: None,
                },
            },
        );
        for (i, e) in c.j.entries.iter_mut().enumerate() {
            e.seq = i as u64 + 1;
        }
        c
    }

    #[test]
    fn push_02_the_foreign_push_changes_nothing() {
        // Acknowledged or refused: both fine, as long as it is not applied.
        assert_eq!(with_foreign(200).check(checker("DLG-PUSH-02")), Check::Pass);
        assert_eq!(with_foreign(401).check(checker("DLG-PUSH-02")), Check::Pass);
        // Applied: the foreign FAILED ended the delegation.
        let mut c = with_foreign(200);
        c.done("d1", "FAILED", json!([]));
        assert!(fails(c.check(checker("DLG-PUSH-02"))));
        // Applied: its message became the outcome's.
        let mut c = with_foreign(200);
        if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
            d.message = Some("Your order was canceled".into());
        }
        assert!(fails(c.check(checker("DLG-PUSH-02"))));
    }

    #[test]
    fn push_02_an_early_completion_from_a_foreign_completed_fails() {
        // The outcome came right after the foreign push, before the own task completed.
        let mut c = with_foreign(200);
        let foreign =
            c.j.entries
                .iter()
                .find(|e| matches!(&e.event, Event::Push { task_id, .. } if task_id == "foreign-1"))
                .map(|e| e.seq)
                .unwrap_or(0);
        c.done_at.insert("d1".into(), foreign);
        assert!(fails(c.check(checker("DLG-PUSH-02"))));
    }

    #[test]
    fn push_02_not_exercised_without_push() {
        assert!(matches!(
            good("").check(checker("DLG-PUSH-02")),
            Check::NotExercised { .. }
        ));
        assert!(matches!(
            pushed("tok").check(checker("DLG-PUSH-02")),
            Check::NotExercised { .. }
        ));
    }

    #[test]
    fn push_03_one_token_per_config() {
        let mut c = pushed("tok-1");
        assert_eq!(
            c.check(checker("DLG-PUSH-03")),
            Check::NotApplicable,
            "one config: nothing to compare"
        );
        // A resend of the same intent re-sends its config: same token, same config.
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": HOOK, "token": "tok-1"}}}),
        );
        assert_eq!(c.check(checker("DLG-PUSH-03")), Check::NotApplicable);
        // A second delegation's config with its own token.
        let mut ok = c;
        ok.j.send(
            "a",
            "m2",
            "do the other thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/h/d2", "token": "tok-2", "authentication": {"scheme": "Bearer", "credentials": "tok-2"}}}}),
        );
        ok.j.created("a", "t2", "c2", "m2", false);
        assert_eq!(ok.check(checker("DLG-PUSH-03")), Check::Pass);
        // The same token for both.
        let mut bad = pushed("tok-1");
        bad.j.send(
            "a",
            "m2",
            "do the other thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/h/d2", "authentication": {"scheme": "Bearer", "credentials": "tok-1"}}}}),
        );
        bad.j.created("a", "t2", "c2", "m2", false);
        assert!(fails(bad.check(checker("DLG-PUSH-03"))));
        // A config without a token.
        let mut none = pushed("tok-1");
        none.j.rpc(
            "a",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t1", "url": HOOK}),
            &[],
        );
        assert!(fails(none.check(checker("DLG-PUSH-03"))));
    }
}
