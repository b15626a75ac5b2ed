//! The front door of an agent as the journal saw it: every HTTP request the delegator sent (A2A
//! calls on any binding, routed or not, card fetches, blob fetches) with the tenant it carried
//! where its binding puts it, the card fetches and their freshness, the delegator's process
//! lives, and what an agent's cards advertised over time (tenants per card version, the extended
//! card). Read by the card, extension, HTTP+JSON, wire and routing checkers.

use super::evidence::*;
use a2a_mock_agents::{AgentSpec, Entry, Event};
use a2a_protocol::{Binding, Method};
use serde_json::Value;
use std::collections::BTreeMap;

/// One HTTP request the delegator sent to an agent, as journaled.
pub(super) struct Http<'a> {
    /// Journal sequence.
    pub seq: u64,
    /// Microseconds since the network started.
    pub at_us: u64,
    /// Request number (its response carries it).
    pub req: u64,
    /// The agent it reached.
    pub agent: &'a str,
    /// The binding it arrived on (card and blob fetches count as JSON-RPC).
    pub binding: Binding,
    /// HTTP method.
    pub http_method: &'a str,
    /// Path and query as sent, still percent-encoded.
    pub path: &'a str,
    /// The A2A method, when the agent could route the request to one.
    pub method: Option<&'a str>,
    /// The JSON-RPC-shaped params (the raw body text if it was no JSON).
    pub params: &'a Value,
    /// Headers, lowercase names, repeated lines joined with `"\n"`.
    pub headers: &'a BTreeMap<String, String>,
    /// The JSON-RPC envelope without params, when recorded.
    pub envelope: Option<&'a Value>,
}

impl<'a> Http<'a> {
    /// The path without its query.
    pub fn target(&self) -> &'a str {
        self.path.split('?').next().unwrap_or_default()
    }
    /// The raw query string, if any.
    pub fn query(&self) -> Option<&'a str> {
        self.path.split_once('?').map(|(_, q)| q)
    }
    /// A GET of the agent card (the well-known path).
    pub fn is_card_fetch(&self) -> bool {
        self.http_method.eq_ignore_ascii_case("GET")
            && self.target() == a2a_protocol::AGENT_CARD_PATH
    }
    /// An A2A call on some binding, routed or not: neither a GET under `/.well-known/` (a card,
    /// the 0.3 card path) nor a blob fetch.
    pub fn is_a2a(&self) -> bool {
        !(self.http_method.eq_ignore_ascii_case("GET")
            && (self.target().starts_with("/.well-known/") || self.target().starts_with("/blobs/")))
    }
    /// The A2A method it called (1.0 or 0.3 name), if routed.
    pub fn method_v1(&self) -> Option<Method> {
        self.method.and_then(v1_method)
    }
    /// The lines of header `name` (lowercase), in the order sent; empty when absent.
    pub fn header_lines(&self, name: &str) -> Vec<&'a str> {
        self.headers
            .get(name)
            .map(|v| v.split('\n').collect())
            .unwrap_or_default()
    }
    /// The path of an HTTP+JSON request relative to the interface url (`/rest` stripped).
    pub fn rest_sub_path(&self) -> Option<&'a str> {
        let t = self.target();
        if t == a2a_mock_agents::REST_PATH {
            return Some("");
        }
        t.strip_prefix(a2a_mock_agents::REST_PATH)
            .filter(|s| s.starts_with('/'))
    }
    /// The tenant the request carries where its binding puts it (spec §8.3.2 (4), bindings
    /// reference): JSON-RPC `params.tenant`, the gRPC request's `tenant`, the HTTP+JSON
    /// `/{tenant}` path prefix (a `tenant` in an HTTP+JSON body does not count). `None` for
    /// none or `""`; a tenant that is no string reads as its JSON text (which names no tenant).
    pub fn tenant(&self) -> Option<String> {
        match self.binding {
            Binding::Rest => self
                .rest_sub_path()
                .and_then(a2a_protocol::rest::path_tenant)
                .filter(|t| !t.is_empty()),
            Binding::JsonRpc | Binding::Grpc => match self.params.get("tenant") {
                None | Some(Value::Null) => None,
                Some(Value::String(t)) if t.is_empty() => None,
                Some(Value::String(t)) => Some(t.clone()),
                Some(other) => Some(other.to_string()),
            },
        }
    }
    /// The protocol version asked for: the `A2A-Version` header (gRPC metadata), else the
    /// `A2A-Version` query parameter (spec §3.6.1); `None` without either.
    pub fn version(&self) -> Option<std::borrow::Cow<'a, str>> {
        if let Some(v) = self.headers.get("a2a-version") {
            return Some(std::borrow::Cow::Borrowed(v.as_str()));
        }
        query_param(self.path, a2a_protocol::VERSION_HEADER)
    }
    /// A short name for messages: the A2A method, else `HTTP-METHOD path`.
    pub fn what(&self) -> String {
        match self.method {
            Some(m) => m.to_string(),
            None => format!("{} {}", self.http_method, self.target()),
        }
    }
    /// True for a SendMessage / SendStreamingMessage that starts new work (no taskId).
    pub fn is_new_send(&self) -> bool {
        matches!(
            self.method_v1(),
            Some(Method::SendMessage | Method::SendStreamingMessage)
        ) && self
            .params
            .pointer("/message/taskId")
            .and_then(Value::as_str)
            .is_none()
    }
}

/// Every HTTP request the delegator sent to an agent (requests one mock agent sent another are
/// simulation traffic and left out), in journal order.
pub(super) fn delegator_http(j: &[Entry]) -> Vec<Http<'_>> {
    j.iter()
        .filter_map(|e| match &e.event {
            Event::Request {
                req,
                binding,
                http_method,
                path,
                method,
                params,
                headers,
                envelope,
                ..
            } if !headers.contains_key(a2a_mock_agents::MOCK_PEER_HEADER) => Some(Http {
                seq: e.seq,
                at_us: e.at_us,
                req: *req,
                agent: &e.agent,
                binding: *binding,
                http_method,
                path,
                method: method.as_deref(),
                params,
                headers,
                envelope: envelope.as_deref(),
            }),
            _ => None,
        })
        .collect()
}

/// The response to request `req`: (journal sequence, microseconds, HTTP status, JSON-RPC error
/// code, body).
pub(super) fn answer(j: &[Entry], req: u64) -> Option<(u64, u64, u16, Option<i64>, &Value)> {
    j.iter().find_map(|e| match &e.event {
        Event::Response {
            req: r,
            status,
            rpc_error,
            body,
            ..
        } if *r == req => Some((e.seq, e.at_us, *status, *rpc_error, body)),
        _ => None,
    })
}

/// Which life of the delegator's process an entry falls in: 0 up to the crash (the last journal
/// sequence before the SIGKILL), 1 after it. The harness restarts a delegator only after the
/// crash it injects, so that boundary is the only one.
pub(super) fn life(ev: &Evidence, seq: u64) -> u8 {
    match ev.crash_seq {
        Some(k) if seq > k => 1,
        _ => 0,
    }
}

/// One fetch of an agent card by the delegator.
pub(super) struct CardFetch {
    /// Journal sequence of the request.
    pub seq: u64,
    /// When it arrived (µs).
    pub at_us: u64,
    /// It carried `If-None-Match` or `If-Modified-Since`.
    pub conditional: bool,
    /// The answer: (µs, HTTP status, card version served), if the agent answered.
    pub answer: Option<(u64, u16, Option<u64>)>,
    /// The process life it belongs to.
    pub life: u8,
}

impl CardFetch {
    /// When the card it got (200) or revalidated (304) stops being fresh (µs), for a card
    /// served with `max-age = max_age_s`; `None` when it got no card.
    pub fn fresh_until(&self, max_age_s: u64) -> Option<u64> {
        match self.answer {
            Some((at, 200 | 304, _)) => {
                Some(at.saturating_add(max_age_s.saturating_mul(1_000_000)))
            }
            _ => None,
        }
    }
    /// The card version it obtained with a 200 (a 304 obtains none).
    pub fn version(&self) -> Option<u64> {
        match self.answer {
            Some((_, 200, v)) => v,
            _ => None,
        }
    }
}

/// The delegator's fetches of `agent`'s card, in order.
pub(super) fn card_fetches(ev: &Evidence, agent: &str) -> Vec<CardFetch> {
    delegator_http(ev.journal)
        .into_iter()
        .filter(|h| h.agent == agent && h.is_card_fetch())
        .map(|h| CardFetch {
            seq: h.seq,
            at_us: h.at_us,
            conditional: h.headers.contains_key("if-none-match")
                || h.headers.contains_key("if-modified-since"),
            answer: answer(ev.journal, h.req).map(|(_, at, status, _, body)| {
                (at, status, body.get("card_version").and_then(Value::as_u64))
            }),
            life: life(ev, h.seq),
        })
        .collect()
}

/// The card version `agent` served at `at_us` (how many `card_change`s had taken effect:
/// they count from the agent's first `task_created`).
pub(super) fn card_version_at(ev: &Evidence, agent: &AgentSpec, at_us: u64) -> usize {
    let first_task = ev.journal.iter().find_map(|e| match &e.event {
        Event::TaskCreated { .. } if e.agent == agent.name => Some(e.at_us),
        _ => None,
    });
    let Some(first) = first_task else {
        return 0;
    };
    agent
        .card_changes
        .iter()
        .take_while(|c| first.saturating_add(c.after_ms.saturating_mul(1000)) <= at_us)
        .count()
}

/// The tenant the interfaces of card version `v` carry.
pub(super) fn tenant_at(agent: &AgentSpec, v: usize) -> Option<&str> {
    match v {
        0 => agent.tenant.as_deref(),
        k => agent.card_changes.get(k - 1).map(|c| c.tenant.as_str()),
    }
}

/// Whether `agent`'s card declares `capabilities.extendedAgentCard` (it has extended skills or
/// an extended tenant).
pub(super) fn has_extended_card(agent: &AgentSpec) -> bool {
    !agent.extended_skills.is_empty() || agent.extended_tenant.is_some()
}

/// Journal sequences at which a GetExtendedAgentCard of `agent` was answered without an error:
/// the moments the delegator obtained the extended card.
pub(super) fn extended_card_obtained(ev: &Evidence, agent: &str) -> Vec<u64> {
    delegator_http(ev.journal)
        .into_iter()
        .filter(|h| h.agent == agent && h.method_v1() == Some(Method::GetExtendedAgentCard))
        .filter_map(|h| match answer(ev.journal, h.req) {
            Some((seq, _, status, None, _)) if (200..300).contains(&status) => Some(seq),
            _ => None,
        })
        .collect()
}

/// The tenants `agent` advertised to the delegator by the time of journal entry `seq` (at
/// `at_us`): the tenant of every card version so far (`None`: an interface without tenant),
/// and the extended card's tenant once the delegator had obtained that card.
pub(super) fn advertised_tenants(
    ev: &Evidence,
    agent: &AgentSpec,
    seq: u64,
    at_us: u64,
) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::new();
    for v in 0..=card_version_at(ev, agent, at_us) {
        let t = tenant_at(agent, v).map(str::to_string);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if let Some(t) = &agent.extended_tenant
        && extended_card_obtained(ev, &agent.name)
            .iter()
            .any(|s| *s < seq)
    {
        let t = Some(t.clone());
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// A tenant as a reader writes it: `"acme"` or `no tenant`.
pub(super) fn shown_tenant(t: Option<&str>) -> String {
    super::words::quoted_or(t, "no tenant")
}

/// The delegation a request's message belongs to (by its text), if it carries one.
pub(super) fn delegation_of_http<'e>(
    ev: &'e Evidence,
    h: &Http,
) -> Option<&'e crate::scenario::Delegation> {
    delegation_with_text(ev, &message_text(h.params))
}

/// The checkers of the front door over a journal the mock network recorded from real HTTP
/// traffic (a client doing what a correct delegator does, in its own ways), not a synthetic one.
#[cfg(test)]
mod live {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_mock_agents::Network;
    use serde_json::{Value, json};

    const TRACE: &str = "https://example.com/ext/trace/v1";
    const AUDIT: &str = "https://example.com/ext/audit/v1";
    const CRED: &str = "Bearer agent-cred-live-1";

    fn case() -> Case {
        let text = format!(
            r#"id = "live"
title = "live"
rules = ["DLG-EXT-01"]
extensions = ["{TRACE}", "{AUDIT}"]
[network]
seed = 5
[[network.agent]]
name = "live"
bindings = ["jsonrpc", "rest"]
tenant = "acme"
extended_tenant = "premium"
id_style = "opaque"
security = {{ credential = "{CRED}", scope = "extended_card" }}
[[network.agent.extension]]
uri = "{TRACE}"
required = true
[[network.agent.extension]]
uri = "{AUDIT}"
required = true
[[network.agent.skill]]
id = "s"
[[delegate]]
id = "d1"
capability = "s"
text = "first thing"
[[delegate]]
id = "d2"
capability = "s"
text = "second thing"
"#
        );
        let mut c = Case::new("");
        c.s = crate::scenario::Scenario::from_toml(std::path::Path::new("live.toml"), &text)
            .expect("live scenario");
        c
    }

    fn message(text: &str, mid: &str) -> Value {
        json!({"message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]},
               "configuration": {"returnImmediately": true}})
    }

    #[tokio::test]
    async fn a_correct_client_passes_the_front_door_rules_on_a_real_journal() {
        let mut c = case();
        let net = Network::start(c.s.network.clone()).await.expect("network");
        let http = reqwest::Client::new();
        let card = net.card_url("live").expect("card url");
        let rpc = net.rpc_url("live").expect("rpc url");
        let rest = net.rest_url("live").expect("rest url");
        // The card, then a revalidation with If-None-Match (304).
        let r = http.get(&card).send().await.expect("card");
        let etag = r.headers()["etag"].to_str().expect("etag").to_string();
        let r = http
            .get(&card)
            .header("if-none-match", &etag)
            .send()
            .await
            .expect("card again");
        assert_eq!(r.status(), 304);
        // JSON-RPC on the public interface: tenant in params, both extensions on one line
        // with extra whitespace.
        let mut p = message("first thing", "m-1");
        p["tenant"] = json!("acme");
        let body = json!({"jsonrpc": "2.0", "id": "r-1", "method": "SendMessage", "params": p});
        let r = http
            .post(&rpc)
            .header("a2a-version", "1.0")
            .header("a2a-extensions", format!(" {AUDIT} ,{TRACE} "))
            .json(&body)
            .send()
            .await
            .expect("send");
        let v: Value = r.json().await.expect("json");
        let task = v["result"]["task"]["id"]
            .as_str()
            .expect("a task")
            .to_string();
        // The extended card over HTTP+JSON, authenticated with the agent's credential.
        let r = http
            .get(format!("{rest}/acme/extendedAgentCard"))
            .header("a2a-version", "1.0")
            .header("a2a-extensions", format!("{TRACE}, {AUDIT}"))
            .header("authorization", CRED)
            .send()
            .await
            .expect("extended card");
        assert_eq!(r.status(), 200);
        // New work over the extended card's first interface (tenant in the path).
        let r = http
            .post(format!("{rest}/premium/message:send"))
            .header("a2a-version", "1.0")
            .header("a2a-extensions", format!("{TRACE},{AUDIT}"))
            .header("content-type", "application/a2a+json")
            .body(message("second thing", "m-2").to_string())
            .send()
            .await
            .expect("second send");
        assert_eq!(r.status(), 200);
        // The first task read back by its opaque id, percent-encoded.
        let path = a2a_protocol::rest::RestRequest::new(
            a2a_protocol::Method::GetTask,
            &json!({"id": task, "tenant": "acme"}),
        )
        .expect("a GetTask path")
        .path_and_query();
        let r = http
            .get(format!("{rest}{path}"))
            .header("a2a-version", "1.0")
            .header("a2a-extensions", format!("{TRACE}, {AUDIT}"))
            .send()
            .await
            .expect("get task");
        assert_eq!(r.status(), 200, "{path}");
        c.j.entries = net.journal().entries();
        for id in [
            "DLG-CARD-02",
            "DLG-CARD-04",
            "DLG-CARD-05",
            "DLG-EXT-01",
            "DLG-EXT-02",
            "DLG-REST-01",
            "DLG-REST-02",
            "DLG-ROUTE-07",
            "DLG-ROUTE-09",
            "DLG-WIRE-02",
        ] {
            assert_eq!(c.check(checker(id)), Check::Pass, "{id}");
        }
        // The same extensions on two header lines: the agent takes them, DLG-EXT-02 does not.
        http.post(&rpc)
            .header("a2a-version", "1.0")
            .header("a2a-extensions", TRACE)
            .header("a2a-extensions", AUDIT)
            .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task, "tenant": "acme"}}))
            .send()
            .await
            .expect("get task");
        c.j.entries = net.journal().entries();
        assert!(fails(c.check(checker("DLG-EXT-02"))));
        assert_eq!(c.check(checker("DLG-EXT-01")), Check::Pass);
        net.shutdown().await;
    }
}
