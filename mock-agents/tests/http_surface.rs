//! The HTTP surface of a mock agent around the JSON-RPC methods: which paths answer, what
//! other paths get, content types, JSON-RPC ids and notifications, and card caching.

mod common;

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
