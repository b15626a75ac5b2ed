//! The HTTP surface of a mock agent around the JSON-RPC methods: which paths answer, what
//! other paths get, content types, JSON-RPC ids and notifications, and card caching.

use crate::common;

use a2a_mock_agents::{Event, MockAgent};
use common::*;
use serde_json::{Value, json};

fn agent() -> Vec<a2a_mock_agents::AgentSpec> {
    vec![MockAgent::builder("a").build()]
}

#[tokio::test]
async fn the_rpc_endpoint_answers_with_and_without_a_trailing_slash() {
    let f = Fixture::agents(agent()).await;
    for url in [f.url.clone(), format!("{}/", f.url)] {
        let v = rpc(&f.http, &url, "SendMessage", send_params("hi")).await;
        assert_eq!(
            v.pointer("/result/task/status/state"),
            Some(&json!("TASK_STATE_COMPLETED")),
            "{url}: {v}"
        );
    }
    f.shutdown().await;
}

#[tokio::test]
async fn other_paths_get_a_json_404_and_are_journaled() {
    // (GET on the JSON-RPC path is a 405, with the same JSON body and journal entry.)
    let f = Fixture::agents(agent()).await;
    let base = f.url.trim_end_matches("/a2a").to_string();
    for (method, path, status) in [
        ("POST", "/a2a/extra", 404),
        ("GET", "/nothing-here", 404),
        ("GET", "/a2a", 405),
    ] {
        let r = f
            .http
            .request(method.parse().unwrap(), format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), status, "{method} {path}");
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["path"], path);
        assert_eq!(body["method"], method);
        let entries = f.j().entries();
        let req = entries
            .iter()
            .find_map(|e| match &e.event {
                Event::Request {
                    req,
                    http_method,
                    path: p,
                    ..
                } if http_method == method && p == path => Some(*req),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{method} {path} is journaled"));
        assert_eq!(response_of(f.j(), req).map(|r| r.0), Some(status));
    }
    f.shutdown().await;
}

/// POST raw bytes with a Content-Type (or none); status and JSON body.
async fn post_raw(f: &Fixture, content_type: Option<&str>, body: &str) -> (u16, Value) {
    let mut rb = f
        .http
        .post(&f.url)
        .header("A2A-Version", "1.0")
        .body(body.to_string());
    if let Some(ct) = content_type {
        rb = rb.header("Content-Type", ct);
    }
    let r = rb.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_non_json_content_type_gets_32005_before_parsing() {
    let f = Fixture::agents(agent()).await;
    let body = envelope("GetTask", json!({"id": "nope"})).to_string();
    // Valid JSON, but declared as text: -32005, not parsed (so not -32001 either).
    let (status, v) = post_raw(&f, Some("text/plain"), &body).await;
    assert_eq!((status, code(&v)), (200, Some(-32005)), "{v}");
    assert_eq!(
        v["error"]["data"][0]["reason"],
        "CONTENT_TYPE_NOT_SUPPORTED"
    );
    assert_eq!(v["id"], Value::Null);
    // Not JSON and declared as text: still -32005, not -32700.
    let (_, v) = post_raw(&f, Some("text/plain"), "hello").await;
    assert_eq!(code(&v), Some(-32005));
    // JSON types (with parameters, +json) and a missing Content-Type are parsed.
    for ct in [
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        Some("application/a2a+json"),
        None,
    ] {
        let (_, v) = post_raw(&f, ct, &body).await;
        assert_eq!(code(&v), Some(-32001), "{ct:?}: {v}");
    }
    let (_, v) = post_raw(&f, Some("application/json"), "{not json").await;
    assert_eq!(code(&v), Some(-32700));
    f.shutdown().await;
}

#[tokio::test]
async fn an_id_that_is_not_a_string_number_or_null_gets_32600() {
    let f = Fixture::agents(agent()).await;
    for id in [json!({"a": 1}), json!([1]), json!(true)] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "GetTask", "params": {"id": "x"}});
        let (status, v) = post_raw(&f, Some("application/json"), &body.to_string()).await;
        assert_eq!((status, code(&v)), (200, Some(-32600)), "{id}: {v}");
        assert_eq!(v["id"], Value::Null);
    }
    // String, number and null ids are echoed.
    for id in [json!("s"), json!(7), Value::Null] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "GetTask", "params": {"id": "x"}});
        let (_, v) = post_raw(&f, Some("application/json"), &body.to_string()).await;
        assert_eq!((code(&v), &v["id"]), (Some(-32001), &id));
    }
    f.shutdown().await;
}

#[tokio::test]
async fn a_notification_is_processed_but_gets_no_response_body() {
    let f = Fixture::agents(agent()).await;
    let body = json!({"jsonrpc": "2.0", "method": "SendMessage", "params": {"message":
        {"messageId": "note-1", "role": "ROLE_USER", "parts": [{"text": "fire and forget"}]}}});
    let r = f
        .http
        .post(&f.url)
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.bytes().await.unwrap().is_empty());
    wait_for(f.j(), "the notification's task", |es| {
        es.iter().any(
            |e| matches!(&e.event, Event::TaskCreated { message_id, .. } if message_id == "note-1"),
        )
    })
    .await;
    // Even an error (here: no A2A-Version) is not answered with a body.
    let r = f
        .http
        .post(&f.url)
        .header("Content-Type", "application/json")
        .body(json!({"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(r.bytes().await.unwrap().is_empty());
    f.shutdown().await;
}

#[tokio::test]
async fn the_card_has_an_etag_and_last_modified_and_answers_304() {
    let f = Fixture::agents(agent()).await;
    let card_url = f.net.card_url("a").unwrap();
    let r = f.http.get(&card_url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let etag = r.headers()["etag"].to_str().unwrap().to_string();
    let modified = r.headers()["last-modified"].to_str().unwrap().to_string();
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 10,
        "{etag}"
    );
    assert!(httpdate::parse_http_date(&modified).is_ok(), "{modified}");
    assert_eq!(r.headers()["cache-control"], "max-age=60");
    let card: Value = r.json().await.unwrap();
    assert_eq!(card["name"], "a");
    let get = |h: &'static str, v: String| {
        let rb = f.http.get(&card_url).header(h, v);
        async move { rb.send().await.unwrap() }
    };
    let r = get("If-None-Match", etag.clone()).await;
    assert_eq!(r.status(), 304);
    assert_eq!(r.headers()["etag"].to_str().unwrap(), etag);
    assert!(r.bytes().await.unwrap().is_empty());
    assert_eq!(
        get("If-None-Match", format!("\"x\", W/{etag}"))
            .await
            .status(),
        304
    );
    assert_eq!(get("If-None-Match", "\"stale\"".into()).await.status(), 200);
    assert_eq!(
        get("If-Modified-Since", modified.clone()).await.status(),
        304
    );
    let earlier = httpdate::fmt_http_date(
        httpdate::parse_http_date(&modified).unwrap() - std::time::Duration::from_secs(60),
    );
    assert_eq!(get("If-Modified-Since", earlier).await.status(), 200);
    // The journal records the 304s.
    let n304 = f
        .j()
        .entries()
        .iter()
        .filter(|e| matches!(e.event, Event::Response { status: 304, .. }))
        .count();
    assert_eq!(n304, 3);
    f.shutdown().await;
}

#[tokio::test]
async fn unsupported_input_media_types_get_32005_when_the_agent_says_so() {
    let strict = MockAgent::builder("strict")
        .input_modes(&["text/plain", "image/*"])
        .reject_unsupported_input_modes(true)
        .build();
    let lenient = MockAgent::builder("lenient").build();
    let f = Fixture::agents(vec![strict, lenient]).await;
    let with_type = |m: &str| {
        json!({"message": {"messageId": mid(), "role": "ROLE_USER",
                           "parts": [{"text": "x"}, {"raw": "AAAA", "mediaType": m}]}})
    };
    let v = f
        .rpc(
            "SendMessage",
            with_type("application/x-unsupported-tck-type"),
        )
        .await;
    assert_eq!(code(&v), Some(-32005), "{v}");
    assert_eq!(
        v["error"]["data"][0]["metadata"]["mediaType"],
        "application/x-unsupported-tck-type"
    );
    for ok in ["text/plain; charset=utf-8", "image/png"] {
        let v = f.rpc("SendMessage", with_type(ok)).await;
        assert!(v.get("result").is_some(), "{ok}: {v}");
    }
    let card: Value = f
        .http
        .get(f.net.card_url("strict").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["defaultInputModes"], json!(["text/plain", "image/*"]));
    // Off by default.
    let url = f.net.rpc_url("lenient").unwrap();
    let v = rpc(
        &f.http,
        &url,
        "SendMessage",
        with_type("application/x-unsupported-tck-type"),
    )
    .await;
    assert!(v.get("result").is_some(), "{v}");
    f.shutdown().await;
}

#[tokio::test]
async fn the_extended_card_adds_its_skills() {
    let f = Fixture::agents(vec![
        MockAgent::builder("x")
            .skill("public")
            .extended_skill("private")
            .build(),
        MockAgent::builder("plain").build(),
    ])
    .await;
    let card: Value = f
        .http
        .get(f.net.card_url("x").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    assert_eq!(card["skills"].as_array().unwrap().len(), 1);
    let ext = f.call("GetExtendedAgentCard", json!({})).await;
    let ids: Vec<&str> = ext["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, ["public", "private"]);
    let d = a2a_protocol::conformance::conformance(
        a2a_protocol::conformance::ObjectType::AgentCard,
        &ext,
    );
    assert!(d.is_empty(), "{d:?}");
    let url = f.net.rpc_url("plain").unwrap();
    let v = rpc(&f.http, &url, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(code(&v), Some(-32004));
    f.shutdown().await;
}
