//! The card and the front door over every binding: tenants, a patch version on the card,
//! required extensions and their echo, card caching and card changes, the security scheme in
//! front of the extended card (or every request), opaque ids, and what the journal records of
//! each (the refused requests included).

use crate::common;
use a2a_mock_agents::{Event, IdStyle, MockAgent, Network, SecurityScope};
use a2a_protocol::grpc::{from_pb, pb, to_pb};
use a2a_protocol::{Binding, Method};
use common::*;
use serde_json::{Value, json};
use std::time::Duration;
use tonic::Code;

const EXT: &str = "https://example.com/ext/trace/v1";
const OPT: &str = "https://example.com/ext/optional/v1";

/// An agent on all three bindings whose rules answer a reply or run a short task.
fn agent(extra: &str) -> String {
    format!(
        r#"
        seed = 11
        [[agent]]
        name = "a"
        bindings = ["jsonrpc", "rest", "grpc"]
        {extra}
        [[agent.rule]]
        when = {{ text_contains = "reply" }}
        steps = [{{ do = "reply", text = "hi" }}]
        [[agent.rule]]
        steps = [{{ do = "state", state = "TASK_STATE_COMPLETED" }}]
        "#
    )
}

/// A gRPC unary call with extra metadata: the ProtoJSON result and the response metadata, or
/// the status.
async fn grpc_call(
    net: &Network,
    method: Method,
    params: Value,
    metadata: &[(&'static str, &str)],
) -> Result<(Value, tonic::metadata::MetadataMap), tonic::Status> {
    let mut c = grpc_client(&net.grpc_url("a").unwrap()).await;
    macro_rules! req {
        ($t:ty) => {{
            let m: $t = to_pb(&params).expect("params convert to protobuf");
            let mut r = versioned(m);
            for (k, v) in metadata {
                r.metadata_mut()
                    .append(*k, v.parse().expect("metadata value"));
            }
            r
        }};
    }
    macro_rules! done {
        ($resp:expr) => {{
            let resp = $resp?;
            let md = resp.metadata().clone();
            Ok((from_pb(&resp.into_inner()).expect("ProtoJSON"), md))
        }};
    }
    match method {
        Method::SendMessage => done!(c.send_message(req!(pb::SendMessageRequest)).await),
        Method::GetTask => done!(c.get_task(req!(pb::GetTaskRequest)).await),
        Method::CancelTask => done!(c.cancel_task(req!(pb::CancelTaskRequest)).await),
        Method::GetExtendedAgentCard => {
            done!(
                c.get_extended_agent_card(req!(pb::GetExtendedAgentCardRequest))
                    .await
            )
        }
        other => panic!("not used here: {other:?}"),
    }
}

/// The journal's response to the last request of `method`: (status, rpc_error, grpc_status).
fn last_response(net: &Network, method: &str) -> (u16, Option<i64>, Option<i32>) {
    let req = *reqs_of(net.journal(), method)
        .last()
        .expect("request journaled");
    events_of(net.journal(), req)
        .into_iter()
        .find_map(|e| match e {
            Event::Response {
                status,
                rpc_error,
                grpc_status,
                ..
            } => Some((status, rpc_error, grpc_status)),
            _ => None,
        })
        .expect("response journaled")
}

/// The card the agent serves now.
async fn card(net: &Network) -> Value {
    client()
        .get(net.card_url("a").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn with_tenant(mut p: Value, tenant: &str) -> Value {
    p["tenant"] = json!(tenant);
    p
}

#[tokio::test]
async fn every_interface_carries_the_tenant_and_every_binding_checks_it() {
    let net = start(&agent(r#"tenant = "acme""#)).await;
    let c = card(&net).await;
    let ifaces = c["supportedInterfaces"].as_array().unwrap();
    assert_eq!(ifaces.len(), 3);
    assert!(ifaces.iter().all(|i| i["tenant"] == "acme"), "{c}");
    assert!(ifaces.iter().all(|i| i["protocolVersion"] == "1.0"), "{c}");

    // JSON-RPC: params.tenant exactly.
    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    let ok = call(
        &http,
        &rpc,
        "SendMessage",
        with_tenant(send_params("x"), "acme"),
    )
    .await;
    let tid = ok["task"]["id"].as_str().unwrap().to_string();
    for (params, sent) in [
        (send_params("x"), None),
        (with_tenant(send_params("x"), "other"), Some("other")),
        (with_tenant(send_params("x"), "ACME"), Some("ACME")),
    ] {
        let v = rpc_h(&http, &rpc, "SendMessage", params, &[]).await;
        assert_eq!(code(&v), Some(-32602), "{v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("\"acme\""), "{msg}");
        // Journaled with the tenant the client sent.
        let r = net.journal().requests().pop().unwrap();
        assert_eq!(r.params.get("tenant").and_then(Value::as_str), sent);
        assert_eq!(
            last_response(&net, "SendMessage"),
            (200, Some(-32602), None)
        );
    }
    // A refused send created no task.
    assert_eq!(tasks_created(net.journal()).len(), 1);

    // HTTP+JSON: the path prefix.
    let rurl = net.rest_url("a").unwrap();
    let got = rest_ok(
        &http,
        &rurl,
        Method::GetTask,
        json!({"tenant": "acme", "id": tid}),
    )
    .await;
    assert_eq!(got["id"], tid);
    let (status, body) = rest(&http, &rurl, Method::GetTask, json!({"id": tid})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(last_response(&net, "GetTask"), (400, Some(-32602), None));
    // A tenant in the body is not the binding's: refused.
    let r = http
        .post(format!("{rurl}/message:send"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/a2a+json")
        .body(serde_json::to_vec(&with_tenant(send_params("x"), "acme")).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    // gRPC: the request's tenant field.
    let (got, _) = grpc_call(
        &net,
        Method::GetTask,
        json!({"tenant": "acme", "id": tid}),
        &[],
    )
    .await
    .unwrap();
    assert_eq!(got["id"], tid);
    let status = grpc_call(&net, Method::GetTask, json!({"id": tid}), &[])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("tenant missing"), "{status:?}");
    assert_eq!(
        last_response(&net, "GetTask"),
        (400, Some(-32602), Some(Code::InvalidArgument as i32))
    );
    let status = grpc_call(
        &net,
        Method::GetTask,
        json!({"tenant": "beta", "id": tid}),
        &[],
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let r = net.journal().requests().pop().unwrap();
    assert_eq!(
        (r.binding, r.params["tenant"].as_str()),
        (Binding::Grpc, Some("beta"))
    );
    net.shutdown().await;
}

#[tokio::test]
async fn a_patch_version_on_the_card_is_still_spoken_as_1_0() {
    let net = start(&agent(r#"card_protocol_version = "1.0.3""#)).await;
    let c = card(&net).await;
    assert!(
        c["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["protocolVersion"] == "1.0.3"),
        "{c}"
    );
    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    for v in ["1.0", "1.0.3", "1.0.0"] {
        let r = http
            .post(&rpc)
            .header("A2A-Version", v)
            .header("Content-Type", "application/json")
            .body(serde_json::to_vec(&envelope("SendMessage", send_params("reply"))).unwrap())
            .send()
            .await
            .unwrap();
        let body: Value = r.json().await.unwrap();
        assert!(body.get("result").is_some(), "{v}: {body}");
    }
    let r = rest_request(
        &http,
        &net.rest_url("a").unwrap(),
        Method::SendMessage,
        &send_params("reply"),
    )
    .header("A2A-Version", "1.0.3")
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let (got, _) = grpc_call(
        &net,
        Method::SendMessage,
        send_params("reply"),
        &[("a2a-version", "1.0.3")],
    )
    .await
    .unwrap();
    assert!(got.get("message").is_some(), "{got}");
    // 2.0 is still refused.
    let v: Value = http
        .post(&rpc)
        .header("A2A-Version", "2.0")
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(&envelope("GetTask", json!({"id": "x"}))).unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(code(&v), Some(-32009), "{v}");
    net.shutdown().await;
}

#[tokio::test]
async fn a_required_extension_is_enforced_and_activated_ones_are_echoed() {
    let net = start(&agent(&format!(
        r#"
        [[agent.extension]]
        uri = "{EXT}"
        description = "trace ids"
        required = true
        [[agent.extension]]
        uri = "{OPT}"
        "#
    )))
    .await;
    let c = card(&net).await;
    assert_eq!(
        c["capabilities"]["extensions"],
        json!([{"uri": EXT, "description": "trace ids", "required": true}, {"uri": OPT}])
    );
    let http = client();
    let rpc = net.rpc_url("a").unwrap();

    // JSON-RPC: missing, or only the optional one: -32008 with the missing URI.
    for headers in [vec![], vec![("A2A-Extensions", OPT)]] {
        let r = post(
            &http,
            &rpc,
            &envelope("SendMessage", send_params("x")),
            &headers,
        )
        .await
        .unwrap();
        assert_eq!(r.status(), 200);
        let echoed = r.headers().get("a2a-extensions").cloned();
        let v: Value = r.json().await.unwrap();
        assert_eq!(code(&v), Some(-32008), "{v}");
        assert_eq!(
            v.pointer("/error/data/0/reason"),
            Some(&json!("EXTENSION_SUPPORT_REQUIRED"))
        );
        assert_eq!(
            v.pointer("/error/data/0/metadata/extensions"),
            Some(&json!(EXT))
        );
        assert_eq!(
            echoed.as_ref().map(|h| h.to_str().unwrap()),
            (!headers.is_empty()).then_some(OPT)
        );
        assert_eq!(
            last_response(&net, "SendMessage"),
            (200, Some(-32008), None)
        );
    }
    assert!(tasks_created(net.journal()).is_empty());

    // A comma-separated list with spaces, and the same on two lines: both accepted; the
    // response echoes what the card knows, not the unknown URI.
    let joined = format!(" {OPT} ,  {EXT},https://unknown.example/x ");
    let r = post(
        &http,
        &rpc,
        &envelope("SendMessage", send_params("reply")),
        &[("A2A-Extensions", joined.as_str())],
    )
    .await
    .unwrap();
    assert_eq!(
        r.headers()["a2a-extensions"].to_str().unwrap(),
        format!("{OPT}, {EXT}")
    );
    assert!(r.json::<Value>().await.unwrap().get("result").is_some());
    let r = post(
        &http,
        &rpc,
        &envelope("SendMessage", send_params("reply")),
        &[("A2A-Extensions", EXT), ("A2A-Extensions", OPT)],
    )
    .await
    .unwrap();
    assert_eq!(
        r.headers()["a2a-extensions"].to_str().unwrap(),
        format!("{EXT}, {OPT}")
    );
    // The journal keeps the two lines apart from one comma-separated line.
    let two = net.journal().requests().pop().unwrap();
    assert_eq!(
        two.header("a2a-extensions"),
        Some(format!("{EXT}\n{OPT}").as_str())
    );
    assert_eq!(two.header_lines("a2a-extensions"), vec![EXT, OPT]);
    let one = &net.journal().requests()[net.journal().requests().len() - 2];
    assert_eq!(one.header_lines("a2a-extensions"), vec![joined.trim()]);

    // HTTP+JSON: 400 FAILED_PRECONDITION with the reason.
    let rurl = net.rest_url("a").unwrap();
    let (status, body) = rest(&http, &rurl, Method::SendMessage, send_params("x")).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(
        rest_reason(&body).as_deref(),
        Some("EXTENSION_SUPPORT_REQUIRED")
    );
    let r = rest_request(&http, &rurl, Method::SendMessage, &send_params("reply"))
        .header("A2A-Extensions", EXT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["a2a-extensions"].to_str().unwrap(), EXT);

    // gRPC: metadata both ways.
    let status = grpc_call(&net, Method::SendMessage, send_params("x"), &[])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert_eq!(
        grpc_reason(&status).as_deref(),
        Some("EXTENSION_SUPPORT_REQUIRED")
    );
    assert_eq!(
        last_response(&net, "SendMessage"),
        (400, Some(-32008), Some(Code::FailedPrecondition as i32))
    );
    let (got, md) = grpc_call(
        &net,
        Method::SendMessage,
        send_params("reply"),
        &[("a2a-extensions", &format!("{EXT},{OPT}"))],
    )
    .await
    .unwrap();
    assert!(got.get("message").is_some());
    assert_eq!(
        md.get("a2a-extensions").unwrap().to_str().unwrap(),
        format!("{EXT}, {OPT}")
    );
    net.shutdown().await;
}

/// A card fetch: status, the caching headers, the body.
async fn fetch_card(
    net: &Network,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Option<Value>) {
    let mut rb = client().get(net.card_url("a").unwrap());
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let h = r.headers().clone();
    let bytes = r.bytes().await.unwrap();
    (status, h, serde_json::from_slice(&bytes).ok())
}

/// The journal body of the last card response.
fn card_served(net: &Network) -> Value {
    net.journal()
        .entries()
        .into_iter()
        .rev()
        .find_map(|e| match e.event {
            Event::Response { body, .. } if body.get("card_version").is_some() => Some(body),
            _ => None,
        })
        .expect("a card response")
}

#[tokio::test]
async fn card_caching_headers_are_configurable() {
    let net = start(&agent("card_max_age_s = 5")).await;
    let (status, h, _) = fetch_card(&net, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(h["cache-control"], "max-age=5");
    let etag = h["etag"].to_str().unwrap().to_string();
    let (status, h304, body) = fetch_card(&net, &[("If-None-Match", &etag)]).await;
    assert_eq!((status, body), (304, None));
    assert_eq!(h304["etag"].to_str().unwrap(), etag);
    assert_eq!(card_served(&net), json!({"card_version": 0, "etag": etag}));
    net.shutdown().await;

    let net = start(&agent("card_cache_headers = false")).await;
    let (status, h, body) = fetch_card(&net, &[("If-None-Match", "*")]).await;
    assert_eq!(status, 200, "no validators: nothing to revalidate");
    assert!(body.is_some());
    for name in ["cache-control", "etag", "last-modified"] {
        assert!(h.get(name).is_none(), "{name}: {h:?}");
    }
    let (status, _, _) = fetch_card(
        &net,
        &[("If-Modified-Since", "Sun, 06 Nov 2095 08:49:37 GMT")],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(card_served(&net), json!({"card_version": 0}));
    // The conditional headers the client sent are in the request's headers.
    let req = net
        .journal()
        .entries()
        .into_iter()
        .rev()
        .find_map(|e| match e.event {
            Event::Request { headers, .. } => Some(headers),
            _ => None,
        })
        .unwrap();
    assert_eq!(req["if-modified-since"], "Sun, 06 Nov 2095 08:49:37 GMT");
    net.shutdown().await;
}

#[tokio::test]
async fn a_changed_card_advertises_its_tenant_and_both_tenants_work() {
    // The change takes effect with the agent's first task (after_ms = 0 counts from it): the
    // test moves the card on by creating that task, not by waiting for a moment in time.
    let net = start(&agent(
        r#"
        tenant = "v1"
        [[agent.card_change]]
        after_ms = 0
        tenant = "v2"
        "#,
    ))
    .await;
    let (status, h, body) = fetch_card(&net, &[]).await;
    assert_eq!(status, 200);
    let first = body.unwrap();
    // No task yet: the first card.
    assert_eq!(card_served(&net)["card_version"], 0);
    assert_eq!(first["supportedInterfaces"][0]["tenant"], "v1");
    let etag = h["etag"].to_str().unwrap().to_string();
    let modified = h["last-modified"].to_str().unwrap().to_string();
    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    // Before the change "v2" is no tenant of this agent.
    let v = rpc_h(
        &http,
        &rpc,
        "SendMessage",
        with_tenant(send_params("reply"), "v2"),
        &[],
    )
    .await;
    assert_eq!(code(&v), Some(-32602), "{v}");
    // The change counts from the agent's first task: none yet, so however long the client
    // took, the first card is still served.
    assert_eq!(fetch_card(&net, &[("If-None-Match", &etag)]).await.0, 304);
    let v = rpc_h(
        &http,
        &rpc,
        "SendMessage",
        with_tenant(send_params("make a task"), "v1"),
        &[],
    )
    .await;
    assert!(v["result"].get("task").is_some(), "{v}");

    // Both validators see the change.
    for cond in [
        ("If-None-Match", etag.as_str()),
        ("If-Modified-Since", modified.as_str()),
    ] {
        let (status, h, body) = fetch_card(&net, &[cond]).await;
        assert_eq!(status, 200, "{cond:?}");
        let c = body.unwrap();
        assert!(
            c["supportedInterfaces"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i["tenant"] == "v2"),
            "{c}"
        );
        assert_ne!(h["etag"].to_str().unwrap(), etag);
        let lm2 = httpdate::parse_http_date(h["last-modified"].to_str().unwrap()).unwrap();
        assert!(lm2 > httpdate::parse_http_date(&modified).unwrap());
        assert_eq!(card_served(&net)["card_version"], 1);
        // And 304 works for the changed card.
        let new_etag = h["etag"].to_str().unwrap().to_string();
        let new_lm = h["last-modified"].to_str().unwrap().to_string();
        assert_eq!(
            fetch_card(&net, &[("If-None-Match", &new_etag)]).await.0,
            304
        );
        assert_eq!(
            fetch_card(&net, &[("If-Modified-Since", &new_lm)]).await.0,
            304
        );
    }
    // The new tenant works, and so does the old one (a client that never revalidates only
    // shows on the wire).
    for t in ["v2", "v1"] {
        let v = rpc_h(
            &http,
            &rpc,
            "SendMessage",
            with_tenant(send_params("reply"), t),
            &[],
        )
        .await;
        assert!(v.get("result").is_some(), "{t}: {v}");
    }
    let v = rpc_h(&http, &rpc, "SendMessage", send_params("reply"), &[]).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"v1\" or \"v2\""),
        "{v}"
    );
    net.shutdown().await;
}

const SECURE: &str = r#"
    security = { credential = "Bearer agent-cred-7", scope = "extended_card" }
    extended_tenant = "premium"
    [[agent.extended_skill]]
    id = "premium-booking"
"#;

#[tokio::test]
async fn the_extended_card_needs_the_card_credential_on_every_binding() {
    let net = start(&agent(SECURE)).await;
    let c = card(&net).await;
    assert_eq!(
        c["securitySchemes"],
        json!({"bearer": {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "HTTP Bearer authentication; GetExtendedAgentCard requires it"}}})
    );
    // The scheme guards only the extended card: no card-level requirement (that would say
    // every request needs it, §7.3).
    assert!(c.get("securityRequirements").is_none(), "{c}");
    assert_eq!(c["capabilities"]["extendedAgentCard"], true);
    assert!(c["supportedInterfaces"][0].get("tenant").is_none(), "{c}");

    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    // JSON-RPC: 401 with a challenge and a JSON-RPC error body.
    for (auth, invalid) in [
        (None, false),
        (Some("Bearer wrong"), true),
        (Some("bearer agent-cred-7"), true),
    ] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let r = post(
            &http,
            &rpc,
            &envelope("GetExtendedAgentCard", json!({})),
            &headers,
        )
        .await
        .unwrap();
        assert_eq!(r.status(), 401);
        let challenge = r.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(challenge.starts_with("Bearer realm=\"a\""), "{challenge}");
        assert_eq!(challenge.contains("invalid_token"), invalid, "{challenge}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(code(&v), Some(a2a_mock_agents::UNAUTHENTICATED_CODE), "{v}");
        assert_eq!(
            last_response(&net, "GetExtendedAgentCard"),
            (401, Some(-32000), None)
        );
    }
    // The credential exactly: the extended card, its tenant's interfaces first.
    let v = rpc_h(
        &http,
        &rpc,
        "GetExtendedAgentCard",
        json!({}),
        &[("Authorization", "Bearer agent-cred-7")],
    )
    .await;
    let ext = &v["result"];
    let ifaces = ext["supportedInterfaces"].as_array().unwrap();
    assert_eq!(ifaces.len(), 6, "{ext}");
    assert!(
        ifaces[..3].iter().all(|i| i["tenant"] == "premium"),
        "{ext}"
    );
    assert!(
        ifaces[3..].iter().all(|i| i.get("tenant").is_none()),
        "{ext}"
    );
    assert!(
        ext["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "premium-booking")
    );
    // Other methods need nothing (scope extended_card); both tenants are accepted.
    for p in [
        send_params("reply"),
        with_tenant(send_params("reply"), "premium"),
    ] {
        assert!(
            call(&http, &rpc, "SendMessage", p)
                .await
                .get("message")
                .is_some()
        );
    }
    let v = rpc_h(
        &http,
        &rpc,
        "SendMessage",
        with_tenant(send_params("reply"), "x"),
        &[],
    )
    .await;
    assert_eq!(code(&v), Some(-32602));

    // HTTP+JSON: 401, AIP-193 UNAUTHENTICATED, the challenge.
    let rurl = net.rest_url("a").unwrap();
    let r = rest_request(&http, &rurl, Method::GetExtendedAgentCard, &json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(r.headers().contains_key("www-authenticate"));
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
    assert_eq!(body["error"]["code"], 401);
    let r = rest_request(
        &http,
        &rurl,
        Method::GetExtendedAgentCard,
        &json!({"tenant": "premium"}),
    )
    .header("Authorization", "Bearer agent-cred-7")
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);

    // gRPC: UNAUTHENTICATED with the challenge in metadata.
    let status = grpc_call(&net, Method::GetExtendedAgentCard, json!({}), &[])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    assert!(status.metadata().contains_key("www-authenticate"));
    assert_eq!(
        last_response(&net, "GetExtendedAgentCard"),
        (401, Some(-32000), Some(Code::Unauthenticated as i32))
    );
    let (got, _) = grpc_call(
        &net,
        Method::GetExtendedAgentCard,
        json!({}),
        &[("authorization", "Bearer agent-cred-7")],
    )
    .await
    .unwrap();
    assert_eq!(got["supportedInterfaces"][0]["tenant"], "premium");
    net.shutdown().await;
}

#[tokio::test]
async fn scope_all_guards_every_request_but_not_the_card() {
    let net = start(&agent(
        r#"security = { credential = "Basic dXNlcjpwdw==", scope = "all" }"#,
    ))
    .await;
    let c = card(&net).await;
    assert_eq!(
        c["securitySchemes"]["basic"]["httpAuthSecurityScheme"]["scheme"],
        "Basic"
    );
    // Every request needs it: the card-level requirement says so (§7.3).
    assert_eq!(
        c["securityRequirements"],
        json!([{"schemes": {"basic": {}}}])
    );
    // No extended card here: the card says so.
    assert_eq!(c["capabilities"]["extendedAgentCard"], false);
    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    let r = post(
        &http,
        &rpc,
        &envelope("SendMessage", send_params("reply")),
        &[],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["www-authenticate"].to_str().unwrap(),
        "Basic realm=\"a\""
    );
    let auth = [("Authorization", "Basic dXNlcjpwdw==")];
    let v = rpc_h(&http, &rpc, "SendMessage", send_params("reply"), &auth).await;
    assert!(v.get("result").is_some(), "{v}");
    // Authenticated but no extended card: -32004 as before.
    let v = rpc_h(&http, &rpc, "GetExtendedAgentCard", json!({}), &auth).await;
    assert_eq!(code(&v), Some(-32004), "{v}");
    // Two Authorization lines are not the credential.
    let r = post(
        &http,
        &rpc,
        &envelope("GetTask", json!({"id": "x"})),
        &[auth[0], auth[0]],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 401);
    let rurl = net.rest_url("a").unwrap();
    let (status, _) = rest(&http, &rurl, Method::GetTask, json!({"id": "x"})).await;
    assert_eq!(status, 401);
    let status = grpc_call(&net, Method::GetTask, json!({"id": "x"}), &[])
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
    let status = grpc_call(
        &net,
        Method::GetTask,
        json!({"id": "x"}),
        &[("authorization", auth[0].1)],
    )
    .await
    .unwrap_err();
    assert_eq!(
        status.code(),
        Code::NotFound,
        "past the door: the task is unknown"
    );
    net.shutdown().await;
}

#[tokio::test]
async fn opaque_ids_are_seeded_and_reachable_on_every_binding() {
    let toml = agent(r#"id_style = "opaque""#);
    let net = start(&toml).await;
    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    let t = call(&http, &rpc, "SendMessage", send_params("work")).await;
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    let ctx = t["task"]["contextId"].as_str().unwrap().to_string();
    for s in [&tid, &ctx] {
        for ch in ['/', ' ', '%', '?', '#', '+', ':', '&', '=', 'é'] {
            assert!(s.contains(ch), "{s:?} lacks {ch:?}");
        }
    }
    // JSON-RPC and gRPC carry them as strings.
    let got = call(&http, &rpc, "GetTask", json!({"id": tid})).await;
    assert_eq!(
        (got["id"].as_str(), got["contextId"].as_str()),
        (Some(tid.as_str()), Some(ctx.as_str()))
    );
    let (got, _) = grpc_call(&net, Method::GetTask, json!({"id": tid}), &[])
        .await
        .unwrap();
    assert_eq!(got["id"], tid);
    // HTTP+JSON: percent-encoded in the path, decoded once.
    let rurl = net.rest_url("a").unwrap();
    let got = rest_ok(&http, &rurl, Method::GetTask, json!({"id": tid})).await;
    assert_eq!(got["id"], tid);
    let path = a2a_protocol::rest::RestRequest::new(Method::GetTask, &json!({"id": tid}))
        .unwrap()
        .path;
    assert!(path.contains("%252F"), "{path}");
    let r = http
        .get(format!("{rurl}/tasks/{}", tid.replace(' ', "%20")))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "a raw `/` and `?` never reach the task");
    let (status, body) = rest(&http, &rurl, Method::CancelTask, json!({"id": tid})).await;
    assert_eq!(
        (status, rest_reason(&body).as_deref()),
        (400, Some("TASK_NOT_CANCELABLE"))
    );
    // Listing by the opaque context id (a query value).
    let got = rest_ok(&http, &rurl, Method::ListTasks, json!({"contextId": ctx})).await;
    assert_eq!(got["tasks"][0]["id"], tid, "{got}");
    // The journal has the encoded path as sent.
    let r = net
        .journal()
        .entries()
        .into_iter()
        .rev()
        .find_map(|e| match e.event {
            Event::Request {
                path,
                method: Some(m),
                ..
            } if m == "ListTasks" => Some(path),
            _ => None,
        })
        .unwrap();
    assert!(r.starts_with("/rest/tasks?contextId=ctx%2F"), "{r}");
    net.shutdown().await;

    // The same seed mints the same ids.
    let again = start(&toml).await;
    let t = call(
        &http,
        &again.rpc_url("a").unwrap(),
        "SendMessage",
        send_params("work"),
    )
    .await;
    assert_eq!(t["task"]["id"], tid);
    again.shutdown().await;
}

#[tokio::test]
async fn the_journal_keeps_the_query_and_the_jsonrpc_envelope() {
    let net = start(&agent("")).await;
    let http = client();
    let rpc = net.rpc_url("a").unwrap();
    let send = |body: Vec<u8>, url: String| {
        http.post(url)
            .header("A2A-Version", "1.0")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    // A query on the JSON-RPC URL, an extra member, a wrong `jsonrpc`, no `jsonrpc`.
    let r = send(
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage",
            "params": send_params("reply"), "extra": [1]}))
        .unwrap(),
        format!("{rpc}?A2A-Version=1.0&x=%2F"),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    for body in [
        json!({"jsonrpc": "1.0", "id": "w", "method": "GetTask", "params": {"id": "t"}}),
        json!({"id": "n", "method": "GetTask", "params": {"id": "t"}}),
    ] {
        let v: Value = send(serde_json::to_vec(&body).unwrap(), rpc.clone())
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(code(&v), Some(-32600), "{v}");
    }
    send(b"[1, 2]".to_vec(), rpc.clone()).await.unwrap();
    send(b"{not json".to_vec(), rpc.clone()).await.unwrap();
    let reqs: Vec<(String, Option<Value>)> = net
        .journal()
        .entries()
        .into_iter()
        .filter_map(|e| match e.event {
            Event::Request { path, envelope, .. } => Some((path, envelope.map(|b| *b))),
            _ => None,
        })
        .collect();
    assert_eq!(
        reqs,
        vec![
            (
                "/a2a?A2A-Version=1.0&x=%2F".to_string(),
                Some(json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "extra": [1]}))
            ),
            (
                "/a2a".to_string(),
                Some(json!({"jsonrpc": "1.0", "id": "w", "method": "GetTask"}))
            ),
            (
                "/a2a".to_string(),
                Some(json!({"id": "n", "method": "GetTask"}))
            ),
            ("/a2a".to_string(), Some(json!([1, 2]))),
            ("/a2a".to_string(), None),
        ]
    );
    // HTTP+JSON keeps its query too, and gRPC records the tenant in its params.
    let rurl = net.rest_url("a").unwrap();
    rest_ok(&http, &rurl, Method::ListTasks, json!({"pageSize": 5})).await;
    let (got, _) = grpc_call(
        &net,
        Method::SendMessage,
        with_tenant(send_params("reply"), "t 1"),
        &[],
    )
    .await
    .unwrap();
    assert!(got.get("message").is_some());
    let reqs = net.journal().requests();
    let list = reqs.iter().find(|r| r.method == "ListTasks").unwrap();
    assert_eq!(list.envelope, None);
    let grpc = reqs.last().unwrap();
    assert_eq!(
        (grpc.binding, &grpc.params["tenant"]),
        (Binding::Grpc, &json!("t 1"))
    );
    let paths: Vec<String> = net
        .journal()
        .entries()
        .into_iter()
        .filter_map(|e| match e.event {
            Event::Request {
                path,
                method: Some(m),
                ..
            } if m == "ListTasks" => Some(path),
            _ => None,
        })
        .collect();
    assert_eq!(paths, vec!["/rest/tasks?pageSize=5".to_string()]);
    net.shutdown().await;
}

#[test]
fn the_builder_writes_what_the_script_says() {
    let built = MockAgent::builder("a")
        .tenant("acme")
        .card_protocol_version("1.0.3")
        .extension(EXT, "trace ids", true)
        .card_max_age(Duration::from_secs(5))
        .card_cache_headers(false)
        .card_change(Duration::from_millis(2000), "acme-v2")
        .security("Bearer agent-cred-7", SecurityScope::ExtendedCard)
        .extended_tenant("premium")
        .id_style(IdStyle::Opaque)
        .build();
    let parsed = a2a_mock_agents::NetworkSpec::from_toml(
        "b.toml",
        &format!(
            r#"
            [[agent]]
            name = "a"
            tenant = "acme"
            card_protocol_version = "1.0.3"
            card_max_age_s = 5
            card_cache_headers = false
            security = {{ credential = "Bearer agent-cred-7" }}
            extended_tenant = "premium"
            id_style = "opaque"
            [[agent.extension]]
            uri = "{EXT}"
            description = "trace ids"
            required = true
            [[agent.card_change]]
            after_ms = 2000
            tenant = "acme-v2"
            "#
        ),
    )
    .unwrap();
    assert_eq!(parsed.agents[0], built);
    assert!(MockAgent::network(1, vec![built]).validate().is_ok());
}
