//! Wire conformance (DLG-WIRE-*): every request to a 1.0 agent is a conformant 1.0 request,
//! every JSON-RPC request a JSON-RPC 2.0 request, and timestamps in any valid form are read.

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use a2a_driver_contract::Outcome;
use a2a_mock_agents::{Event, TimestampStyle};
use a2a_protocol::Binding;
use serde_json::Value;

pub(super) fn requests_conform_to_v1(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let v1 = agent_spec(ev, r.agent)
            .is_some_and(|a| a.protocol == a2a_mock_agents::script::ProtocolVersion::V1_0);
        if !v1 {
            continue;
        }
        any = true;
        let Some(t) = a2a_protocol::conformance::params_type(r.method) else {
            return fail(
                "an A2A 1.0 method name",
                format!("{:?}", r.method),
                vec![r.seq],
            );
        };
        let found = a2a_protocol::conformance::conformance(t, r.params);
        // Long strings are summarised in the journal; that never changes the shape checked here.
        if let Some(d) = found.first() {
            let all: Vec<String> = found.iter().take(5).map(|d| d.to_string()).collect();
            return fail(
                format!("{} params conformant to A2A 1.0", r.method),
                format!(
                    "{} deviation(s), first {d}: {}",
                    found.len(),
                    all.join("; ")
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// Whether a media type is JSON: `application/json` or any `+json` type.
fn json_media_type(ct: &str) -> bool {
    let bare = ct
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    bare == "application/json" || bare.ends_with("+json")
}

/// DLG-WIRE-02 (spec §9.3, MUST): every JSON-RPC request is a JSON-RPC 2.0 request object:
/// `jsonrpc` exactly `"2.0"`, an `id` that is a string or a number (a request without one is a
/// notification, which gets no answer; `null` is reserved), a string `method`, and `params`, when
/// present, an object (JSON-RPC 2.0 lets a request without parameters omit them); a batch (an
/// array of requests, which JSON-RPC 2.0 allows) is judged member by member. Judged on the
/// envelope the mock journals as received; a body declared JSON that is no JSON fails too.
pub(super) fn jsonrpc_envelope(ev: &Evidence) -> Check {
    let mut any = false;
    for h in delegator_http(ev.journal).into_iter().filter(|h| {
        h.binding == Binding::JsonRpc && h.http_method.eq_ignore_ascii_case("POST") && h.is_a2a()
    }) {
        let Some(env) = h.envelope else {
            let declared_json = h
                .headers
                .get("content-type")
                .is_some_and(|c| json_media_type(c));
            if declared_json && h.method.is_none() && h.params.is_string() {
                return fail(
                    "a JSON-RPC 2.0 request object",
                    format!("a body that is no JSON at {}", h.target()),
                    vec![h.seq],
                );
            }
            continue;
        };
        any = true;
        // A batch (JSON-RPC 2.0 allows one) is recorded whole: each member is judged.
        let problem = match env {
            Value::Array(batch) if !batch.is_empty() => batch
                .iter()
                .find_map(|m| envelope_problem(m, m.get("params").unwrap_or(&Value::Null))),
            Value::Object(_) => envelope_problem(env, h.params),
            other => Some(format!(
                "a body that is no request object: {}",
                short(other)
            )),
        };
        if let Some(p) = problem {
            return fail(
                "JSON-RPC 2.0 requests: jsonrpc \"2.0\", a string or number id, a method, params an object",
                format!("{p} (to {})", h.agent),
                vec![h.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// What is wrong with one JSON-RPC request object `env` (without its params) whose params are
/// `params` (`null` when omitted), if anything.
fn envelope_problem(env: &Value, params: &Value) -> Option<String> {
    if !env.is_object() {
        Some(format!("a member that is no object: {}", short(env)))
    } else if env.get("jsonrpc") != Some(&Value::from("2.0")) {
        Some(match env.get("jsonrpc") {
            None => "no jsonrpc member".to_string(),
            Some(v) => format!("jsonrpc {}", short(v)),
        })
    } else if !matches!(env.get("id"), Some(Value::String(_) | Value::Number(_))) {
        Some(match env.get("id") {
            None => "no id (a notification: it gets no answer)".to_string(),
            Some(v) => format!("id {}", short(v)),
        })
    } else if !matches!(env.get("method"), Some(Value::String(_))) {
        Some(match env.get("method") {
            None => "no method".to_string(),
            Some(v) => format!("method {}", short(v)),
        })
    } else if !(params.is_object() || params.is_null()) {
        Some(format!("params {}", short(params)))
    } else {
        None
    }
}

/// A JSON value in a message, cut to 60 characters.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

/// The default timestamp form: three fractional digits and `Z`.
fn millis_z(t: &str) -> bool {
    t.strip_suffix('Z')
        .and_then(|s| s.rsplit_once('.'))
        .is_some_and(|(_, f)| f.len() == 3 && f.bytes().all(|b| b.is_ascii_digit()))
}

/// Every `timestamp` string inside `v`.
fn timestamps<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x {
                    Value::String(s) if k == "timestamp" => out.push(s),
                    _ => timestamps(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| timestamps(x, out)),
        _ => {}
    }
}

/// DLG-WIRE-03 (spec §5.6.1, MUST): timestamps in any valid RFC 3339 form (0 to 9 fractional
/// digits, `Z` or an offset) are parsed. Judged on agents with a `timestamp_style` other than
/// the default once a timestamp in another form reached the delegator (an answer or stream
/// event over JSON-RPC or HTTP+JSON; gRPC's binary timestamps have one form): each delegation
/// (each child of a fan-out) whose task at such an agent ended in a terminal state ends the same (COMPLETED, FAILED,
/// CANCELED, REJECTED). Delegations the harness cancels, and those whose case allows other
/// outcomes than the task's, are not judged here.
pub(super) fn every_timestamp_form_parsed(ev: &Evidence) -> Check {
    let http = delegator_http(ev.journal);
    let truth = task_truth(ev.journal);
    let mut any = false;
    let mut grpc_only = None;
    for a in ev
        .scenario
        .network
        .agents
        .iter()
        .filter(|a| a.timestamp_style != TimestampStyle::Millis)
    {
        let ours: Vec<&Http> = http
            .iter()
            .filter(|h| h.agent == a.name && h.is_a2a())
            .collect();
        let json_reqs: Vec<u64> = ours
            .iter()
            .filter(|h| h.binding != Binding::Grpc)
            .map(|h| h.req)
            .collect();
        let mut seen_forms = Vec::new();
        for e in ev.journal.iter().filter(|e| e.agent == a.name) {
            match &e.event {
                Event::Response { req, body, .. } if json_reqs.contains(req) => {
                    timestamps(body, &mut seen_forms)
                }
                Event::SseEvent { req, data, .. } if json_reqs.contains(req) => {
                    timestamps(data, &mut seen_forms)
                }
                _ => {}
            }
        }
        if !seen_forms.iter().any(|t| !millis_z(t)) {
            if !ours.is_empty() && json_reqs.is_empty() {
                grpc_only = Some(a.name.clone());
            }
            continue;
        }
        for w in works(ev) {
            let (d, id) = (w.delegation, w.id);
            if ev
                .scenario
                .cancels
                .iter()
                .any(|c| c.id == id || c.id == d.id)
            {
                continue;
            }
            let Some((task, _)) = tasks_of(ev, id)
                .into_iter()
                .rev()
                .find(|(_, agent)| *agent == a.name)
            else {
                continue;
            };
            let Some((state, seq)) = truth.get(&task) else {
                continue;
            };
            let want = match state.as_str() {
                "TASK_STATE_COMPLETED" => Outcome::Completed,
                "TASK_STATE_FAILED" => Outcome::Failed,
                "TASK_STATE_CANCELED" => Outcome::Canceled,
                "TASK_STATE_REJECTED" => Outcome::Rejected,
                _ => continue,
            };
            if !d.expect.state.is_empty() && !d.expect.state.contains(&want) {
                continue;
            }
            any = true;
            let got = done_state(ev, id);
            if got != Some(want) {
                return fail(
                    format!(
                        "delegation {} {} as its task at {} did (timestamps in the {} style)",
                        id,
                        want.as_str(),
                        a.name,
                        serde_json::to_value(a.timestamp_style)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default()
                    ),
                    super::words::or_none(got.map(Outcome::as_str), "no outcome"),
                    vec![*seq],
                );
            }
        }
    }
    match grpc_only {
        Some(agent) if !any => Check::NotExercised {
            why: format!(
                "{agent} was spoken to over gRPC only, whose binary timestamps have one form"
            ),
        },
        _ => Check::held_if_seen(any),
    }
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use serde_json::{Value, json};

    #[test]
    fn wire_01_legacy_fields_and_names() {
        let c = good("");
        assert_eq!(c.check(checker("DLG-WIRE-01")), Check::Pass);
        let mut c = good("");
        c.j.send("a", "m2", "other", json!({"message": {"kind": "message"}}));
        assert!(fails(c.check(checker("DLG-WIRE-01"))), "kind");
        let mut c = good("");
        c.j.rpc("a", "tasks/get", json!({"id": "t1"}), &[]);
        assert!(
            fails(c.check(checker("DLG-WIRE-01"))),
            "0.3 name to a 1.0 agent"
        );
        let mut c = good("");
        c.j.send("a", "m3", "other", json!({"message": {"role": "user"}}));
        assert!(fails(c.check(checker("DLG-WIRE-01"))), "lowercase enum");
    }

    #[test]
    fn wire_02_the_json_rpc_2_0_envelope() {
        use a2a_protocol::Binding::JsonRpc;
        let r = checker("DLG-WIRE-02");
        let params = json!({"id": "t1"});
        let mut c = Case::new(&delegation(""));
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("GetTask"),
            params.clone(),
            &[],
            Some(json!({"jsonrpc": "2.0", "id": "r-1", "method": "GetTask"})),
        );
        // params may be omitted (JSON-RPC 2.0); a number id is as good as a string.
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("GetExtendedAgentCard"),
            Value::Null,
            &[],
            Some(json!({"jsonrpc": "2.0", "id": 7, "method": "GetExtendedAgentCard"})),
        );
        // A batch of well-formed requests (JSON-RPC 2.0 allows one).
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            None,
            Value::Null,
            &[],
            Some(json!([{"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": "t1"}}])),
        );
        assert_eq!(c.check(r), Check::Pass);
        for (env, p) in [
            (
                json!({"jsonrpc": "1.0", "id": 1, "method": "GetTask"}),
                params.clone(),
            ),
            (json!({"id": 1, "method": "GetTask"}), params.clone()),
            (
                json!({"jsonrpc": "2.0", "method": "GetTask"}),
                params.clone(),
            ),
            (
                json!({"jsonrpc": "2.0", "id": null, "method": "GetTask"}),
                params.clone(),
            ),
            (
                json!({"jsonrpc": "2.0", "id": {"n": 1}, "method": "GetTask"}),
                params.clone(),
            ),
            (json!({"jsonrpc": "2.0", "id": 1}), params.clone()),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask"}),
                json!(["t1"]),
            ),
            // A batch with one bad member; a body that is no request at all.
            (
                json!([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}, {"jsonrpc": "2.0", "method": "GetTask"}]),
                Value::Null,
            ),
            (json!("GetTask"), Value::Null),
        ] {
            let mut c = Case::new(&delegation(""));
            c.j.http(
                "a",
                JsonRpc,
                "POST",
                "/a2a",
                Some("GetTask"),
                p,
                &[],
                Some(env.clone()),
            );
            assert!(fails(c.check(r)), "{env}");
        }
        // A body declared JSON that is none.
        let mut c = Case::new(&delegation(""));
        let (s, _) = c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            None,
            json!("not json"),
            &[("content-type", "application/json")],
            None,
        );
        if let a2a_mock_agents::Event::Request { envelope, .. } =
            &mut c.j.entries[s as usize - 1].event
        {
            *envelope = None;
        }
        assert!(fails(c.check(r)));
    }

    /// Agent `a` writing timestamps in `style`; d1's task t1 completes; the delegator polled
    /// over `binding` and got `stamp` back.
    fn stamped(
        style: a2a_mock_agents::TimestampStyle,
        binding: a2a_protocol::Binding,
        stamp: &str,
    ) -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].timestamp_style = style;
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        let (_, q) = c.j.http(
            "a",
            binding,
            "POST",
            "/a2a",
            Some("GetTask"),
            json!({"id": "t1"}),
            &[],
            None,
        );
        c.j.resp("a", q, 200, None, json!({"result": {"id": "t1", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": stamp}}}));
        c
    }

    #[test]
    fn wire_03_every_timestamp_form_is_read() {
        use a2a_mock_agents::TimestampStyle::{Offset, Rotate};
        use a2a_protocol::Binding::{Grpc, JsonRpc, Rest};
        let r = checker("DLG-WIRE-03");
        for (style, stamp) in [
            (Offset, "2026-03-20T15:30:01.123+05:30"),
            (Rotate, "2026-03-20T10:00:01.123000000Z"),
            (Rotate, "2026-03-20T10:00:01Z"),
        ] {
            let mut c = stamped(style, JsonRpc, stamp);
            c.done("d1", "COMPLETED", json!([]));
            assert_eq!(c.check(r), Check::Pass, "{stamp}");
            // A delegator that choked on it and gave up, or never ended.
            let mut c = stamped(style, Rest, stamp);
            c.done("d1", "FAILED", json!([]));
            assert!(fails(c.check(r)), "{stamp}");
            let c = stamped(style, JsonRpc, stamp);
            assert!(fails(c.check(r)), "{stamp}: no outcome");
        }
        // Only the default form reached it: nothing to judge.
        let mut c = stamped(Rotate, JsonRpc, "2026-03-20T10:00:01.123Z");
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::NotApplicable);
        // Over gRPC, timestamps are binary: one form.
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].timestamp_style = Rotate;
        c.j.http(
            "a",
            Grpc,
            "POST",
            "/lf.a2a.v1.A2AService/SendMessage",
            Some("SendMessage"),
            json!({}),
            &[],
            None,
        );
        assert!(matches!(c.check(r), Check::NotExercised { .. }));
    }

    #[test]
    fn wire_03_judges_each_child_of_a_fan_out() {
        let r = checker("DLG-WIRE-03");
        let mut c = fan_out_completed("2026-03-20T15:30:01.123+05:30");
        c.s.network.agents[0].timestamp_style = a2a_mock_agents::TimestampStyle::Offset;
        assert_eq!(c.check(r), Check::Pass);
        // One child choked on the offset and gave up while its task completed.
        c.done("d1-b", "FAILED", json!([]));
        assert!(fails(c.check(r)));
    }
}
