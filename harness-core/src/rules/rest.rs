//! The HTTP+JSON binding (DLG-REST-*): the media type of request bodies (spec §11.1) and the
//! parameters of GET and DELETE in the path and query (spec §11.5): camelCase names, RFC 3986
//! percent-encoding, no nested objects.

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use a2a_mock_agents::Event;
use a2a_protocol::{Binding, Method};
use serde_json::Value;

/// DLG-REST-01 (spec §11.1, SHOULD): an HTTP+JSON request with a body (`Content-Length` above
/// zero, or a chunked one) says `Content-Type: application/a2a+json` (the media type compared
/// without case, parameters such as `charset` allowed).
pub(super) fn rest_bodies_are_a2a_json(ev: &Evidence) -> Check {
    let mut any = false;
    for h in delegator_http(ev.journal)
        .into_iter()
        .filter(|h| h.binding == Binding::Rest)
    {
        let has_body = h
            .headers
            .get("content-length")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
            || h.headers.contains_key("transfer-encoding");
        if !has_body {
            continue;
        }
        any = true;
        let ct = h.headers.get("content-type").map(String::as_str);
        let bare = ct
            .and_then(|c| c.split(';').next())
            .map(|c| c.trim().to_ascii_lowercase());
        if bare.as_deref() != Some(a2a_protocol::rest::REST_CONTENT_TYPE) {
            return fail(
                format!(
                    "HTTP+JSON bodies sent as {}",
                    a2a_protocol::rest::REST_CONTENT_TYPE
                ),
                format!(
                    "{} with {}",
                    h.what(),
                    super::words::quoted_or(ct, "no Content-Type")
                ),
                vec![h.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// The bytes RFC 3986 allows unencoded in a path or query (unreserved, sub-delims, `:`, `@`,
/// `/`, `?`), `%` being checked apart.
fn allowed_raw(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b)
}

/// The first byte of a request target that is not valid RFC 3986 (a character that must be
/// percent-encoded, or a `%` not followed by two hex digits), if any.
fn invalid_in_target(target: &str) -> Option<String> {
    let b = target.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let ok =
                b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
            if !ok {
                return Some("a % not followed by two hex digits".to_string());
            }
            i += 3;
            continue;
        }
        if !allowed_raw(b[i]) {
            let c = target[i..].chars().next().unwrap_or('?');
            return Some(format!("{c:?} unencoded"));
        }
        i += 1;
    }
    None
}

/// The query parameters an operation takes over HTTP+JSON (spec §11.5, the proto's camelCase
/// names); `A2A-Version` is allowed with every one (spec §3.6.1).
fn query_fields(m: Method) -> &'static [&'static str] {
    match m {
        Method::GetTask => &["historyLength"],
        Method::ListTasks => &[
            "contextId",
            "status",
            "pageSize",
            "pageToken",
            "historyLength",
            "statusTimestampAfter",
            "includeArtifacts",
        ],
        Method::ListTaskPushNotificationConfigs => &["pageSize", "pageToken"],
        _ => &[],
    }
}

fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(&s.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

/// The values an agent minted before journal entry `before` that a client sends back in paths
/// and queries: task ids, context ids and ListTasks page tokens.
fn minted(ev: &Evidence, agent: &str, before: u64) -> Vec<String> {
    let mut out = Vec::new();
    for e in ev
        .journal
        .iter()
        .filter(|e| e.agent == agent && e.seq < before)
    {
        match &e.event {
            Event::TaskCreated {
                task_id,
                context_id,
                ..
            } => {
                out.push(task_id.clone());
                out.push(context_id.clone());
            }
            Event::Response { body, .. } => {
                if let Some(t) = body
                    .pointer("/result/nextPageToken")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    out.push(t.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// The ASCII letters and digits of `s`.
fn alnum(s: &str) -> String {
    s.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The agent-minted value a wrongly encoded `got` was meant to be: one `got` differs from but
/// shares at least ten leading characters with (truncated at a `?` or `#`, a `%2F` decoded
/// twice), or whose letters and digits it has exactly (a `+` read as a space).
fn meant<'m>(got: &str, minted: &'m [String]) -> Option<&'m str> {
    if minted.iter().any(|m| m == got) {
        return None;
    }
    minted
        .iter()
        .find(|m| {
            let common = m
                .chars()
                .zip(got.chars())
                .take_while(|(a, b)| a == b)
                .count();
            common >= 10 || (!alnum(m).is_empty() && alnum(m) == alnum(got))
        })
        .map(String::as_str)
}

/// DLG-REST-02 (spec §11.5, MUST): HTTP+JSON parameters travel in the path or query, percent
/// encoded per RFC 3986, GET and DELETE query keys under the operation's camelCase field names
/// (or `A2A-Version`), values flat (no nested objects). Judged on the raw target as journaled:
/// a character that must be encoded, a query key that is no field of the operation (snake_case
/// included) or nested, a task path that routes nowhere (HTTP 404), and an id, context id or page
/// token that arrived differing from the one the agent minted (a `/`, `?`, `#`, `+` or `%` not
/// encoded). Path ids count for every operation that takes one (`:cancel` and `:subscribe`
/// too).
pub(super) fn rest_parameters_encoded(ev: &Evidence) -> Check {
    let mut any = false;
    for h in delegator_http(ev.journal)
        .into_iter()
        .filter(|h| h.binding == Binding::Rest)
    {
        let Some(sub) = h.rest_sub_path() else {
            continue;
        };
        let serves = agent_spec(ev, h.agent).is_some_and(|a| {
            a.served_bindings(ev.scenario.network.default_bindings.as_deref())
                .contains(&Binding::Rest)
        });
        if !serves {
            continue;
        }
        let get_or_delete = h.http_method.eq_ignore_ascii_case("GET")
            || h.http_method.eq_ignore_ascii_case("DELETE");
        let route = match a2a_protocol::rest::path_tenant(sub) {
            Some(t) if !t.is_empty() => sub
                .trim_start_matches('/')
                .split_once('/')
                .map_or("", |(_, r)| r),
            _ => sub.trim_start_matches('/'),
        };
        let task_path = route.starts_with("tasks/");
        if !get_or_delete && !task_path {
            continue;
        }
        any = true;
        if let Some(bad) = invalid_in_target(h.path) {
            return fail(
                "HTTP+JSON path and query percent-encoded (RFC 3986)",
                format!("{} {}: {bad}", h.http_method, h.path),
                vec![h.seq],
            );
        }
        if get_or_delete && let (Some(q), Some(m)) = (h.query(), h.method_v1()) {
            for kv in q.split('&').filter(|kv| !kv.is_empty()) {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                let (k, v) = (decode(k), decode(v));
                if k == a2a_protocol::VERSION_HEADER {
                    continue;
                }
                let nested = k.contains(['.', '[']) || v.starts_with('{') || v.starts_with('[');
                if nested || !query_fields(m).contains(&k.as_str()) {
                    return fail(
                        format!(
                            "{} query parameters under their camelCase names ({}), flat",
                            m.as_str(),
                            super::words::list(query_fields(m))
                        ),
                        format!(
                            "query parameter {k:?}{}",
                            if nested { " (nested)" } else { "" }
                        ),
                        vec![h.seq],
                    );
                }
            }
        }
        let minted = minted(ev, h.agent, h.seq);
        if task_path && h.method.is_none() {
            let unrouted =
                answer(ev.journal, h.req).is_some_and(|(_, _, status, _, _)| status == 404);
            if unrouted {
                return fail(
                    "task ids percent-encoded as one path segment",
                    format!("{} {} routes nowhere (HTTP 404)", h.http_method, h.path),
                    vec![h.seq],
                );
            }
        }
        // The parameters that carry what the agent minted (a push config's own id is the
        // client's or the agent's choice: not compared).
        let fields: &[&str] = match h.method_v1() {
            Some(Method::GetTask | Method::CancelTask | Method::SubscribeToTask) => &["id"],
            Some(
                Method::CreateTaskPushNotificationConfig
                | Method::GetTaskPushNotificationConfig
                | Method::ListTaskPushNotificationConfigs
                | Method::DeleteTaskPushNotificationConfig,
            ) => &["taskId", "pageToken"],
            Some(Method::ListTasks) => &["contextId", "pageToken"],
            _ => &[],
        };
        for field in fields {
            let Some(got) = h.params.get(field).and_then(Value::as_str) else {
                continue;
            };
            if let Some(want) = meant(got, &minted) {
                return fail(
                    format!(
                        "{field} {want:?} percent-encoded (RFC 3986) so that it arrives as sent"
                    ),
                    format!("{} {}: it arrived as {got:?}", h.http_method, h.path),
                    vec![h.seq],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_protocol::Binding::Rest;
    use serde_json::{Value, json};

    /// The opaque task id the mock mints (`id_style = "opaque"`).
    const ID: &str = "task/1f2e3d4c é%2F?5a6b7c8d#+:&=9a8b";
    const CTX: &str = "ctx/0a1b2c3d é%2F?4e5f6a7b#+:&=8c9d";

    /// Agent `a` on HTTP+JSON with task ID in context CTX.
    fn opaque() -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].bindings = Some(vec![Rest]);
        c.j.created("a", ID, CTX, "m1", false);
        c
    }

    fn get(c: &mut Case, path: &str, method: Option<&str>, params: Value, status: u16) {
        let (_, q) = c.j.http("a", Rest, "GET", path, method, params, &[], None);
        c.j.resp("a", q, status, None, json!({}));
    }

    #[test]
    fn rest_01_bodies_are_a2a_json() {
        let r = checker("DLG-REST-01");
        for ct in [
            "application/a2a+json",
            "Application/A2A+JSON; charset=utf-8",
        ] {
            let mut c = opaque();
            c.j.http(
                "a",
                Rest,
                "POST",
                "/rest/message:send",
                Some("SendMessage"),
                json!({}),
                &[("content-type", ct), ("content-length", "80")],
                None,
            );
            assert_eq!(c.check(r), Check::Pass, "{ct}");
        }
        let mut c = opaque();
        c.j.http(
            "a",
            Rest,
            "POST",
            "/rest/message:send",
            Some("SendMessage"),
            json!({}),
            &[
                ("content-type", "application/json"),
                ("content-length", "80"),
            ],
            None,
        );
        assert!(fails(c.check(r)));
        // A request without a body says nothing.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks/t1",
            Some("GetTask"),
            json!({"id": "t1"}),
            200,
        );
        c.j.http(
            "a",
            Rest,
            "POST",
            "/rest/tasks/t1:cancel",
            Some("CancelTask"),
            json!({"id": "t1"}),
            &[("content-length", "0")],
            None,
        );
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn rest_02_opaque_ids_percent_encoded_in_the_path() {
        let r = checker("DLG-REST-02");
        // Every reserved character encoded (the protocol crate's encoding).
        let path = a2a_protocol::rest::RestRequest::new(
            a2a_protocol::Method::GetTask,
            &json!({"id": ID, "historyLength": 2}),
        )
        .unwrap()
        .path_and_query();
        let mut c = opaque();
        get(
            &mut c,
            &format!("/rest{path}&A2A-Version=1.0"),
            Some("GetTask"),
            json!({"id": ID, "historyLength": 2}),
            200,
        );
        assert_eq!(c.check(r), Check::Pass);
        // Another correct encoding: sub-delims and `:` may stay raw in a path segment.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks/task%2F1f2e3d4c%20%C3%A9%252F%3F5a6b7c8d%23+:&=9a8b",
            Some("GetTask"),
            json!({"id": ID}),
            200,
        );
        assert_eq!(c.check(r), Check::Pass);
        // `/` left raw: another path, which routes nowhere.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks/task/1f2e3d4c%20%C3%A9%2F",
            None,
            Value::Null,
            404,
        );
        assert!(fails(c.check(r)));
        // `%` left raw: `%2F` decoded into `/`, another id arrives.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks/task%2F1f2e3d4c%20%C3%A9%2F%3F5a6b7c8d%23+:&=9a8b",
            Some("GetTask"),
            json!({"id": "task/1f2e3d4c é/?5a6b7c8d#+:&=9a8b"}),
            404,
        );
        assert!(fails(c.check(r)));
        // A raw space: not a valid target.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks/a b",
            Some("GetTask"),
            json!({"id": "a b"}),
            404,
        );
        assert!(fails(c.check(r)));
    }

    #[test]
    fn rest_02_query_names_and_values() {
        let r = checker("DLG-REST-02");
        let enc = |s: &str| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        let mut c = opaque();
        get(
            &mut c,
            &format!("/rest/tasks?contextId={}&pageSize=2", enc(CTX)),
            Some("ListTasks"),
            json!({"contextId": CTX, "pageSize": 2}),
            200,
        );
        assert_eq!(c.check(r), Check::Pass);
        // snake_case: no field of ListTasks (the agent silently drops it).
        let mut c = opaque();
        get(
            &mut c,
            &format!("/rest/tasks?context_id={}", enc(CTX)),
            Some("ListTasks"),
            json!({}),
            200,
        );
        assert!(fails(c.check(r)));
        // A nested object.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks?filter.contextId=x",
            Some("ListTasks"),
            json!({}),
            200,
        );
        assert!(fails(c.check(r)));
        // `+` and `&` left raw in the value: the context id arrives cut.
        let mut c = opaque();
        get(
            &mut c,
            "/rest/tasks?contextId=ctx%2F0a1b2c3d%20%C3%A9%252F%3F4e5f6a7b%23+:&=8c9d",
            Some("ListTasks"),
            json!({"contextId": "ctx/0a1b2c3d é%2F?4e5f6a7b# :"}),
            200,
        );
        assert!(fails(c.check(r)));
        // A page token the agent gave, `+` read as a space.
        let mut c = opaque();
        let (_, q) = c.j.http(
            "a",
            Rest,
            "GET",
            "/rest/tasks",
            Some("ListTasks"),
            json!({}),
            &[],
            None,
        );
        c.j.resp(
            "a",
            q,
            200,
            None,
            json!({"result": {"nextPageToken": "+/+/dGFzay0x=="}}),
        );
        get(
            &mut c,
            "/rest/tasks?pageToken=+/+/dGFzay0x==",
            Some("ListTasks"),
            json!({"pageToken": " / /dGFzay0x=="}),
            400,
        );
        assert!(fails(c.check(r)));
    }
}
