//! Observation (DLG-OBS-*): early stream ends, committed results, forged pushes, polling rate.

use super::evidence::*;
use super::registry::{Check, and_then, fail};
use super::state::outcome_expected;
use a2a_driver_contract::{FromDelegator, Outcome};
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) fn early_stream_end_followed_up(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let truth = task_truth(ev.journal);
    let mut any = false;
    for e in ev.journal {
        let (req, early) = match &e.event {
            Event::StreamClosed { req, reason, .. }
                if reason == "fault" || reason == "interrupted" =>
            {
                (*req, true)
            }
            Event::ConnectionDropped { req, phase } if phase == "mid_event" => (*req, true),
            _ => continue,
        };
        if !early {
            continue;
        }
        let Some(r) = reqs.iter().find(|r| r.req == req) else {
            continue;
        };
        // The task of the stream: the continued task or the one the send created.
        let tid = r.task_id().map(str::to_string).or_else(|| {
            r.message_id().and_then(|m| {
                tasks_created_by(ev.journal, r.agent, m)
                    .first()
                    .map(|t| t.0.clone())
            })
        });
        let Some(tid) = tid else { continue };
        if truth.get(&tid).is_some_and(|(s, seq)| {
            *seq < e.seq
                && a2a_protocol::TaskState::parse_lenient(s).is_some_and(|s| s.is_terminal())
        }) {
            continue;
        }
        any = true;
        // Reading the task again, answering it, or canceling it all show the close was not
        // taken as the outcome.
        let followed = reqs.iter().any(|o| {
            o.seq > e.seq
                && (o.calls(&[Method::GetTask, Method::SubscribeToTask, Method::CancelTask])
                    && o.params.get("id").and_then(Value::as_str) == Some(tid.as_str())
                    || o.task_id() == Some(tid.as_str()))
        });
        if !followed {
            return fail(
                format!("SubscribeToTask or GetTask for {tid} after the stream ended early"),
                "nothing",
                vec![e.seq],
            );
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

pub(super) fn only_completed_work_committed(ev: &Evidence) -> Check {
    let mut any = false;
    for (id, d) in ev.outcomes {
        // An `error` that declined the delegation counts as an outcome without artifacts.
        let (state, n) = match d {
            FromDelegator::Done(d) => (d.state.as_str(), d.artifacts.len()),
            _ => ("", 0),
        };
        if state != Outcome::Completed.as_str() {
            any = true;
            if n > 0 {
                return fail(
                    format!("{id}: no artifacts committed from a {state} delegation"),
                    format!("{n} artifacts reported"),
                    vec![],
                );
            }
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

pub(super) fn forged_push_rejected(ev: &Evidence) -> Check {
    if !ev.scenario.forge_push {
        return Check::NotApplicable;
    }
    if ev.forged_pushes.is_empty() {
        return fail(
            "a forged push notification delivered to the webhook",
            "the webhook was never reached (no webhook_url in init_ok?)",
            vec![],
        );
    }
    if let Some(code) = ev.forged_pushes.iter().find(|c| (200..300).contains(*c)) {
        return fail(
            "a push notification with a wrong token is rejected (non-2xx)",
            format!("the webhook answered HTTP {code}"),
            vec![],
        );
    }
    // A forged notification must change nothing: the outcome still agrees with the agent's truth.
    and_then(outcome_expected(ev))
}

pub(super) fn polling_backs_off(ev: &Evidence) -> Check {
    let mut per_task: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in ev.journal {
        if let Event::Request {
            method: Some(m),
            params,
            ..
        } = &e.event
            && v1_method(m) == Some(Method::GetTask)
            && let Some(t) = params.get("id").and_then(Value::as_str)
        {
            per_task.entry(t).or_default().push(e.at_us);
        }
    }
    if per_task.is_empty() {
        return Check::NotApplicable;
    }
    for (t, mut times) in per_task {
        // A handful of polls is not hammering, whatever their spacing.
        if times.len() < 8 {
            continue;
        }
        times.sort_unstable();
        let span_s = times[times.len() - 1].saturating_sub(times[0]) as f64 / 1e6;
        let rate = times.len() as f64 / span_s.max(0.001);
        // Only the rate is judged: a delegator may legitimately read the task at once when a
        // push notification or a stream event wakes it, so single short gaps are fine.
        if rate > 50.0 {
            return fail(
                format!("GetTask on {t} backs off (at most 50 polls/s)"),
                format!("{} polls at {rate:.0}/s", times.len()),
                vec![],
            );
        }
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use a2a_mock_agents::Event;
    use serde_json::json;

    #[test]
    fn obs_02_stream_end_taken_as_outcome() {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_WORKING");
        c.j.push(
            "a",
            Event::StreamClosed {
                req: r,
                events: 2,
                reason: "fault".into(),
            },
        );
        assert!(fails(c.check(checker("DLG-OBS-02"))));
        c.j.rpc("a", "SubscribeToTask", json!({"id": "t1"}), &[]);
        assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
    }

    #[test]
    fn obs_03_artifacts_committed_from_a_failed_task() {
        let mut c = good("");
        c.done("d1", "FAILED", json!([{"artifact_id": "artifact-1"}]));
        assert!(fails(c.check(checker("DLG-OBS-03"))));
    }

    #[test]
    fn obs_05_polling_hammers() {
        let mut c = good("");
        for i in 0..40 {
            let (seq, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.at(seq, 1_000_000 + i * 1000);
        }
        assert!(fails(c.check(checker("DLG-OBS-05"))));
    }

    #[test]
    fn obs_04_forged_push_believed() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.s.forge_push = true;
        assert!(fails(c.check(checker("DLG-OBS-04"))), "never delivered");
        c.forged.push(401);
        assert_eq!(c.check(checker("DLG-OBS-04")), Check::Pass);
        c.done("d1", "FAILED", json!([]));
        assert!(
            fails(c.check(checker("DLG-OBS-04"))),
            "the forged FAILED was believed"
        );
    }

    #[test]
    fn obs_04_forged_push_accepted_with_2xx() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.s.forge_push = true;
        c.forged.push(204);
        assert!(fails(c.check(checker("DLG-OBS-04"))));
    }
}
