//! Literal parts in scripts: text, raw (UTF-8 literal or base64), url and data parts with
//! `filename`, `mediaType` and `metadata`, in reply messages, status messages and artifacts
//! (whole and chunked), from TOML and from the builder; malformed parts are located.

use crate::common;

use a2a_mock_agents::{MockAgent, NetworkSpec, PartSpec, Step};
use a2a_protocol::TaskState;
use common::*;
use serde_json::{Value, json};

const SCRIPT: &str = r#"
[[agent]]
name = "p"
[[agent.rule]]
when = { text_equals = "reply" }
steps = [{ do = "reply", parts = [
  { text = "hello", media_type = "text/plain", metadata = { lang = "en" } },
  { raw = "tck", filename = "output.txt", media_type = "text/plain" },
] }]
[[agent.rule]]
when = { text_equals = "task" }
steps = [
  { do = "artifact", artifact_id = "out", name = "outputs", description = "all kinds", parts = [
      { text = "Generated text content" },
      { raw_base64 = "AAEC/w==", filename = "b.bin", media_type = "application/octet-stream" },
      { url = "https://example.com/output.txt", filename = "output.txt", media_type = "text/plain" },
      { data = { key = "value", count = 42 }, metadata = { source = "script" } },
  ] },
  { do = "artifact", chunks = [[{ text = "chunk-1 " }], [{ text = "chunk-2" }]] },
  { do = "state", state = "TASK_STATE_COMPLETED", message = "Hello from TCK",
    parts = [{ data = { done = true } }] },
]
"#;

fn conformant(kind: a2a_protocol::conformance::ObjectType, v: &Value) {
    let d = a2a_protocol::conformance::conformance(kind, v);
    assert!(d.is_empty(), "{d:?} in {v}");
}

#[tokio::test]
async fn toml_parts_reach_replies_status_messages_and_artifacts() {
    let f = Fixture::toml(SCRIPT, "p").await;
    let r = f.call("SendMessage", send_params("reply")).await;
    assert_eq!(
        r["message"]["parts"],
        json!([
            {"text": "hello", "mediaType": "text/plain", "metadata": {"lang": "en"}},
            {"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"},
        ])
    );
    conformant(
        a2a_protocol::conformance::ObjectType::Message,
        &r["message"],
    );

    let s = f.stream("SendStreamingMessage", send_params("task")).await;
    let updates: Vec<Value> = s
        .results()
        .into_iter()
        .filter_map(|r| r.get("artifactUpdate").cloned())
        .collect();
    assert_eq!(updates.len(), 3, "{updates:?}");
    assert_eq!(updates[0]["artifact"]["artifactId"], "out");
    assert_eq!(updates[0]["artifact"]["name"], "outputs");
    assert_eq!(updates[0]["artifact"]["description"], "all kinds");
    assert_eq!(
        updates[0]["artifact"]["parts"],
        json!([
            {"text": "Generated text content"},
            {"raw": "AAEC/w==", "filename": "b.bin", "mediaType": "application/octet-stream"},
            {"url": "https://example.com/output.txt", "filename": "output.txt",
             "mediaType": "text/plain"},
            {"data": {"key": "value", "count": 42}, "metadata": {"source": "script"}},
        ])
    );
    assert_eq!(updates[0]["lastChunk"], true);
    assert_eq!(updates[0].get("append"), None);
    // Chunked: the first starts the artifact, the second appends and is the last.
    assert_eq!(updates[1]["artifact"]["artifactId"], "artifact-2");
    assert_eq!(
        updates[1]["artifact"]["parts"],
        json!([{"text": "chunk-1 "}])
    );
    assert_eq!(updates[1].get("append"), None);
    assert_eq!(updates[1].get("lastChunk"), None);
    assert_eq!(
        updates[2]["artifact"]["parts"],
        json!([{"text": "chunk-2"}])
    );
    assert_eq!(updates[2]["append"], true);
    assert_eq!(updates[2]["lastChunk"], true);
    for u in &updates {
        conformant(
            a2a_protocol::conformance::ObjectType::StreamResponse,
            &json!({"artifactUpdate": u}),
        );
    }
    let last = s.results().last().cloned().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        last["statusUpdate"]["status"]["message"]["parts"],
        json!([{"text": "Hello from TCK"}, {"data": {"done": true}}])
    );
    // The task keeps the reassembled chunked artifact.
    let tid = task_id_of(&s);
    let t = f.call("GetTask", json!({"id": tid})).await;
    assert_eq!(
        t["artifacts"][1]["parts"],
        json!([{"text": "chunk-1 "}, {"text": "chunk-2"}])
    );
    conformant(a2a_protocol::conformance::ObjectType::Task, &t);
    f.shutdown().await;
}

#[tokio::test]
async fn builder_parts_are_the_same() {
    let agent = MockAgent::builder("b")
        .mount(
            MockAgent::when()
                .text_equals("reply")
                .step(Step::reply_parts(vec![
                    PartSpec::url("https://example.com/x")
                        .filename("x")
                        .media_type("text/plain"),
                ])),
        )
        .mount(
            MockAgent::when()
                .step(
                    Step::artifact()
                        .id("a")
                        .part(PartSpec::raw(vec![0u8, 255]).filename("z.bin"))
                        .part(PartSpec::data(json!([1, 2])).metadata("k", json!("v"))),
                )
                .step(
                    Step::artifact()
                        .chunk(vec![PartSpec::text("1")])
                        .chunk(vec![PartSpec::text("2")]),
                )
                .step(
                    Step::state(TaskState::Completed)
                        .message("done")
                        .part(PartSpec::text("more")),
                ),
        )
        .build();
    let f = Fixture::agents(vec![agent]).await;
    let r = f.call("SendMessage", send_params("reply")).await;
    assert_eq!(
        r["message"]["parts"],
        json!([{"url": "https://example.com/x", "filename": "x", "mediaType": "text/plain"}])
    );
    let t = f.call("SendMessage", send_params("work")).await;
    assert_eq!(
        t["task"]["artifacts"][0]["parts"],
        json!([{"raw": "AP8=", "filename": "z.bin"}, {"data": [1, 2], "metadata": {"k": "v"}}])
    );
    assert_eq!(
        t["task"]["artifacts"][1]["parts"],
        json!([{"text": "1"}, {"text": "2"}])
    );
    assert_eq!(
        t["task"]["status"]["message"]["parts"],
        json!([{"text": "done"}, {"text": "more"}])
    );
    f.shutdown().await;
}

#[test]
fn malformed_parts_are_located() {
    let cases = [
        // An unknown key in a part.
        (
            "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{ do = \"reply\", parts = [{ txt = \"x\" }] }]\n",
            "bad.toml:4:",
            "unknown field `txt`",
        ),
        // Two contents in one part.
        (
            "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [\n  { do = \"artifact\", parts = [{ text = \"x\", url = \"u\" }] },\n]\n",
            "bad.toml:5:",
            "agent[0].rule[0].steps[0].parts[0]: a part needs exactly one of",
        ),
        // Bad base64.
        (
            "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{ do = \"reply\", parts = [{ raw_base64 = \"!!\" }] }]\n",
            "bad.toml:4:",
            "invalid base64",
        ),
        // Both parts and chunks.
        (
            "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [\n  { do = \"artifact\", parts = [{ text = \"x\" }], chunks = [[{ text = \"y\" }]] },\n]\n",
            "bad.toml:5:",
            "exactly one of `parts` and `chunks`",
        ),
        // An empty reply.
        (
            "[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{ do = \"reply\" }]\n",
            "bad.toml:4:",
            "text or parts must not be empty",
        ),
    ];
    for (text, at, what) in cases {
        let e = NetworkSpec::from_toml("bad.toml", text)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(at) && e.contains(what),
            "{e}\nwanted {at} … {what}"
        );
    }
}
