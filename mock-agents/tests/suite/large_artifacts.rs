//! Large generated artifacts over every binding: what a client reassembles from the stream,
//! and what `GetTask` returns once the task completed (the mock keeps no chunk bodies and
//! regenerates them), are byte-exact against the journal's length and sha256.

use crate::common;
use a2a_mock_agents::Network;
use a2a_protocol::Method;
use common::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// 16 MiB of text in 64 KiB chunks, and 1 MiB of raw bytes (base64 in JSON) with a media type
/// in 20,000-byte chunks (not a multiple of 3 or 8).
const AGENT: &str = r#"
    seed = 11
    [[agent]]
    name = "a"
    bindings = ["jsonrpc", "rest", "grpc"]
    [[agent.rule]]
    steps = [
      { do = "state", state = "TASK_STATE_WORKING" },
      { do = "artifacts", count = 1, chunks = 256, chunk_bytes = 65536 },
      { do = "artifacts", count = 1, chunks = 53, chunk_bytes = 20000, content = "raw", media_type = "application/octet-stream" },
      { do = "state", state = "TASK_STATE_COMPLETED" },
    ]
"#;

/// Concatenated part bytes of every artifact of a task (`GetTask` result).
fn task_artifacts(task: &Value) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for a in task
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = a["artifactId"].as_str().expect("artifactId").to_string();
        let mut bytes = Vec::new();
        for p in a["parts"].as_array().into_iter().flatten() {
            bytes.extend(part_bytes(p));
        }
        out.insert(id, bytes);
    }
    out
}

/// The task id of the first event that names one.
fn task_id_of(results: &[Value]) -> String {
    results
        .iter()
        .find_map(|r| {
            r.pointer("/task/id")
                .or_else(|| r.pointer("/statusUpdate/taskId"))
                .or_else(|| r.pointer("/artifactUpdate/taskId"))
                .and_then(Value::as_str)
        })
        .expect("a task id")
        .to_string()
}

/// Both artifacts, as reassembled, match the journal's truth for this task.
fn check_truth(net: &Network, tid: &str, arts: &BTreeMap<String, Vec<u8>>, what: &str) {
    let truth = artifacts_sent(net.journal());
    for (aid, len) in [("artifact-1", 16u64 << 20), ("artifact-2", 53 * 20000)] {
        let (bytes, sha) = truth
            .get(&(tid.to_string(), aid.to_string()))
            .unwrap_or_else(|| panic!("no artifact_sent for {aid}"));
        assert_eq!(*bytes, len, "{what}: journal length of {aid}");
        let got = arts.get(aid).unwrap_or_else(|| panic!("{what}: no {aid}"));
        assert_eq!(got.len() as u64, *bytes, "{what}: length of {aid}");
        assert_eq!(&sha256(got), sha, "{what}: sha256 of {aid}");
    }
    let text = arts.get("artifact-1").expect("artifact-1");
    assert!(std::str::from_utf8(text).is_ok(), "{what}: text is UTF-8");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_artifacts_stream_and_poll_byte_exact_over_jsonrpc() {
    let net = start(AGENT).await;
    let http = client();
    let url = net.rpc_url("a").expect("agent a");
    let s = stream(&http, &url, "SendStreamingMessage", send_params("go")).await;
    let results = s.results();
    let tid = task_id_of(&results);
    check_truth(&net, &tid, &reassemble(&results), "jsonrpc stream");
    wait_state(net.journal(), &tid, "TASK_STATE_COMPLETED").await;
    let t = call(&http, &url, "GetTask", json!({"id": tid})).await;
    check_truth(&net, &tid, &task_artifacts(&t), "jsonrpc GetTask");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_artifacts_stream_and_poll_byte_exact_over_rest() {
    let net = start(AGENT).await;
    let http = client();
    let url = net.rest_url("a").expect("agent a");
    let s = rest_stream(&http, &url, Method::SendStreamingMessage, send_params("go")).await;
    let results = s.payloads();
    let tid = task_id_of(&results);
    check_truth(&net, &tid, &reassemble(&results), "rest stream");
    wait_state(net.journal(), &tid, "TASK_STATE_COMPLETED").await;
    let (status, t) = rest(&http, &url, Method::GetTask, json!({"id": tid})).await;
    assert_eq!(status, 200);
    check_truth(&net, &tid, &task_artifacts(&t), "rest GetTask");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_artifacts_stream_and_poll_byte_exact_over_grpc() {
    let net = start(AGENT).await;
    let addr = net.grpc_url("a").expect("agent a");
    let s = grpc_stream(&addr, Method::SendStreamingMessage, send_params("go"))
        .await
        .expect("stream");
    assert!(s.status.is_none(), "{:?}", s.status);
    let tid = task_id_of(&s.messages);
    check_truth(&net, &tid, &reassemble(&s.messages), "grpc stream");
    wait_state(net.journal(), &tid, "TASK_STATE_COMPLETED").await;
    let t = grpc_unary(&addr, Method::GetTask, json!({"id": tid}))
        .await
        .expect("GetTask");
    check_truth(&net, &tid, &task_artifacts(&t), "grpc GetTask");
}

/// `[journal] detail = "truth"` (the bench's journal): of a streamed generated artifact only the
/// chunk that starts it has an `artifact_chunk` entry and none an `sse_event`, `artifact_sent`
/// counts every chunk, requests keep no params or headers and answers no body; the stream's
/// other events, the bytes and the truth stay as they are. With the default (`"full"`) every
/// chunk has its `artifact_chunk` and `sse_event` and every payload is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_truth_journal_counts_chunks_and_keeps_no_payloads() {
    use a2a_mock_agents::Event;
    for detail in ["full", "truth"] {
        let net = start(&format!(
            r#"
    seed = 3
    [journal]
    detail = "{detail}"
    [[agent]]
    name = "a"
    [[agent.rule]]
    steps = [
      {{ do = "state", state = "TASK_STATE_WORKING" }},
      {{ do = "artifacts", count = 1, chunks = 8, chunk_bytes = 3000 }},
      {{ do = "state", state = "TASK_STATE_COMPLETED" }},
    ]
"#
        ))
        .await;
        let full = detail == "full";
        let http = client();
        let url = net.rpc_url("a").expect("agent a");
        let s = stream(&http, &url, "SendStreamingMessage", send_params("go")).await;
        let results = s.results();
        let tid = task_id_of(&results);
        let arts = reassemble(&results);
        let truth = artifacts_sent(net.journal());
        let (bytes, sha) = truth
            .get(&(tid.clone(), "artifact-1".to_string()))
            .expect("artifact_sent");
        assert_eq!((*bytes, sha), (8 * 3000, &sha256(&arts["artifact-1"])));
        let entries = net.journal().entries();
        let count = |f: &dyn Fn(&Event) -> bool| entries.iter().filter(|e| f(&e.event)).count();
        let chunks = count(&|e| matches!(e, Event::ArtifactChunk { .. }));
        let events = count(&|e| matches!(e, Event::SseEvent { .. }));
        assert_eq!(chunks, if full { 8 } else { 1 }, "{detail}");
        assert!(
            entries.iter().any(|e| matches!(
                &e.event,
                Event::ArtifactChunk { append: false, task_id, .. } if *task_id == tid
            )),
            "{detail}: the chunk that starts the artifact is kept (when it began)"
        );
        let counted: Vec<u64> = entries
            .iter()
            .filter_map(|e| match &e.event {
                Event::ArtifactSent { chunks, .. } => Some(*chunks),
                _ => None,
            })
            .collect();
        assert_eq!(counted, [8], "{detail}: artifact_sent counts every chunk");
        // The task, WORKING and COMPLETED are events either way; the chunks only in full.
        assert_eq!(
            events,
            if full { 3 + 8 } else { 3 },
            "{detail}: {entries:?}"
        );
        assert_eq!(
            results.len(),
            3 + 8,
            "the client gets every event either way"
        );
        let payloads = count(&|e| match e {
            Event::Request {
                params, headers, ..
            } => !params.is_null() || !headers.is_empty(),
            Event::SseEvent { data, .. } => !data.is_null(),
            _ => false,
        });
        if full {
            assert!(payloads > 3, "the send and three events: {entries:?}");
        } else {
            assert_eq!(payloads, 0, "{entries:?}");
        }
        assert!(
            count(
                &|e| matches!(e, Event::TaskCreated { message_id, .. } if !message_id.is_empty())
            ) == 1,
            "the task's creation names its message either way"
        );
    }
}
