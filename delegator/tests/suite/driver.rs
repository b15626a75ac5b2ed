//! The driver contract, tested on the binary exactly as the harness uses it: every line the
//! delegator writes must validate against `docs/driver-schema/<type>.json`.

use crate::support;

use a2a_mock_agents::Step;
use a2a_protocol::{Method, TaskState};
use serde_json::{Value, json};
use std::path::PathBuf;
use support::{Driver, agent, calls, card, chunk, scripted};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/driver-schema")
}

fn validate(line: &Value) {
    let ty = line["type"].as_str().expect("type");
    let path = schema_dir().join(format!("{ty}.json"));
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(line).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{ty} line {line} violates its schema: {errors:?}"
    );
}

#[test]
fn every_schema_is_valid_and_examples_validate() {
    for name in [
        "init",
        "delegate",
        "answer",
        "credential",
        "cancel",
        "snapshot",
        "init_ok",
        "state",
        "escalate",
        "done",
        "snapshot_ok",
        "error",
    ] {
        let path = schema_dir().join(format!("{name}.json"));
        let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // The examples of docs/driver-protocol.md.
    for ex in [
        json!({"type":"init","store_dir":"/tmp/s","recovering":false,"agents":["http://127.0.0.1:9101/.well-known/agent-card.json"],
               "webhook_base_url":"http://127.0.0.1:0","self_url":"http://127.0.0.1:4100/","credential":"Bearer x",
               "options":{"max_depth":3,"input_round_cap":3,"deadline_margin_ms":2000,"budget_reserve_fraction":0.1,
                          "retry_base_ms":2000,"retry_cap_ms":60000,"poll_interval_ms":500,"seed":42}}),
        json!({"type":"delegate","id":"d1","capability":"c","text":"t","inputs":{"j":"E"},
               "artifact_spec":{"mime_types":["application/json"],"max_size_bytes":1048576,"streaming_preferred":true,"schema":{"type":"object"}},
               "timeout_seconds":120,"deadline":null,"budget_usd":1.5,"max_retries":3,"priority":"normal","depth":0,"chain":[],
               "children":null,"refine_of":null}),
        json!({"type":"answer","id":"d1","text":"English law"}),
        json!({"type":"credential","id":"d1","credential":"Bearer scoped"}),
        json!({"type":"cancel","id":"d1"}),
        json!({"type":"snapshot"}),
    ] {
        validate(&ex);
    }
}

#[tokio::test]
async fn init_delegate_snapshot_and_eof() {
    let net = scripted(
        agent("a"),
        vec![
            chunk("a", "result", false, true),
            Step::state(TaskState::Completed).message("ok").into(),
        ],
    )
    .await;
    let a = card(&net, "a");
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &[]);
    // Before init: refused.
    d.send(json!({"type": "snapshot"})).await;
    let e = d.next(10).await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["code"].as_str()),
        (Some("error"), Some("bad_request"))
    );
    let ok = d
        .init(
            dir.path(),
            &[&a, "http://127.0.0.1:1/nope.json"],
            false,
            json!({"poll_interval_ms": 20}),
        )
        .await;
    validate(&ok);
    assert_eq!(ok["agents"][0]["ok"], true);
    assert_eq!(ok["agents"][1]["ok"], false);
    // Malformed lines get errors naming the problem.
    d.send_raw("this is not json").await;
    d.send(json!({"no": "type"})).await;
    d.send(json!({"type": "teleport", "id": "x"})).await;
    d.send(json!({"type": "delegate", "id": "bad", "capability": "work", "text": "t", "timeout_seconds": 5}))
        .await;
    d.send(json!({"type": "delegate", "id": "bad2", "capability": "work", "text": "t", "max_retries": "many"}))
        .await;
    d.send(json!({"type": "answer", "id": "nobody", "text": "x"}))
        .await;
    let mut errs = Vec::new();
    for _ in 0..6 {
        let v = d.next(10).await.unwrap();
        validate(&v);
        errs.push(v);
    }
    assert_eq!(errs[2]["code"], "unsupported");
    assert!(
        errs[3]["message"]
            .as_str()
            .unwrap()
            .contains("timeout_seconds")
    );
    assert_eq!(errs[3]["id"], "bad");
    assert!(
        errs[4]["message"].as_str().unwrap().contains("max_retries"),
        "{}",
        errs[4]
    );
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 30}),
    )
    .await;
    let done = d.until(20, |v| v["type"] == "done").await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    assert_eq!(done["artifacts"][0]["bytes"], 6);
    d.send(json!({"type": "snapshot"})).await;
    let snap = d.until(10, |v| v["type"] == "snapshot_ok").await;
    let rec = &snap["records"][0];
    assert_eq!(rec["id"], "d1");
    assert_eq!(rec["state"], "COMPLETED");
    assert_eq!(rec["artifacts"][0]["skill"], "work");
    assert!(rec["message_ids"]["create"].is_string());
    d.close_stdin();
    assert!(d.next(10).await.is_none());
    assert!(d.wait_exit(10).await.success());
    for v in &d.seen {
        validate(v);
    }
    // The first state line is SENDING, then the task's, with ids from the first task line on.
    let states: Vec<&Value> = d.seen.iter().filter(|v| v["type"] == "state").collect();
    assert_eq!(states[0]["state"], "SENDING");
    assert!(states[1]["task_id"].is_string());
}

#[tokio::test]
async fn eof_finishes_open_work_before_exiting() {
    let net = scripted(
        agent("a"),
        vec![Step::gate("g"), Step::state(TaskState::Completed).into()],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &[]);
    d.init(
        dir.path(),
        &[&card(&net, "a")],
        false,
        json!({"poll_interval_ms": 20}),
    )
    .await;
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 30}),
    )
    .await;
    support::wait_count(&net, "a", "GetTask", 1).await;
    d.close_stdin();
    net.open_gate("g");
    let done = d.until(20, |v| v["type"] == "done").await;
    assert_eq!(done["state"], "COMPLETED");
    assert!(d.wait_exit(10).await.success());
}

#[tokio::test]
async fn sigterm_exits_now() {
    let net = scripted(agent("a"), vec![Step::gate("never")]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &[]);
    d.init(dir.path(), &[&card(&net, "a")], false, json!({}))
        .await;
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 600}),
    )
    .await;
    support::wait_count(&net, "a", "SendMessage", 1).await;
    d.signal(nix::sys::signal::Signal::SIGTERM);
    let st = d.wait_exit(10).await;
    assert!(st.success(), "{st:?}");
}

#[tokio::test]
async fn escalations_round_trip_over_the_driver() {
    let net = scripted(
        agent("a"),
        vec![
            Step::input_required("Which airport?").into(),
            Step::auth_required("Bearer scoped-7"),
            Step::state(TaskState::Completed).into(),
        ],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &[]);
    d.init(
        dir.path(),
        &[&card(&net, "a")],
        false,
        json!({"poll_interval_ms": 20}),
    )
    .await;
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 30}),
    )
    .await;
    let e = d.until(20, |v| v["type"] == "escalate").await;
    validate(&e);
    assert_eq!(e["kind"], "input");
    d.send(json!({"type": "answer", "id": "d1", "text": "SFO"}))
        .await;
    let e = d.until(20, |v| v["type"] == "escalate").await;
    assert_eq!(e["kind"], "auth");
    d.send(json!({"type": "credential", "id": "d1", "credential": "Bearer scoped-7"}))
        .await;
    let done = d.until(20, |v| v["type"] == "done").await;
    assert_eq!(done["state"], "COMPLETED");
    let to_agent = calls(&net, "a");
    assert!(
        to_agent
            .iter()
            .any(|r| r.header("authorization") == Some("Bearer scoped-7"))
    );
    for r in to_agent {
        assert_ne!(r.header("authorization"), Some("Bearer own-secret-token"));
    }
    d.close_stdin();
    assert!(d.wait_exit(10).await.success());
}

#[test]
fn help_lists_the_commands_with_examples() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-delegator"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for w in ["drive", "delegate", "dlq", "status", "Examples"] {
        assert!(text.contains(w), "{w} missing from --help:\n{text}");
    }
    // Without the planted-bugs feature, --bug does not exist.
    if !cfg!(feature = "planted-bugs") {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-delegator"))
            .args(["drive", "--bug", "blocking-send"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success());
    }
}

#[tokio::test]
async fn cli_delegate_dlq_and_status() {
    let net = scripted(
        agent("a"),
        vec![
            chunk("a", "cli", false, true),
            Step::state(TaskState::Completed).into(),
        ],
    )
    .await;
    let a = card(&net, "a");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().to_str().unwrap().to_string();
    let bin = env!("CARGO_BIN_EXE_a2a-delegator");
    let run = |args: Vec<String>| {
        tokio::process::Command::new(bin)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
    };
    let base = |id: &str| -> Vec<String> {
        [
            "delegate",
            "--agent",
            &a,
            "--skill",
            "work",
            "--text",
            "go",
            "--id",
            id,
            "--accept",
            "text/plain",
            "--timeout",
            "30",
            "--store",
            &store,
            "--retry-base-ms",
            "10",
            "--max-retries",
            "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let out = run(base("c1")).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let done: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(done["state"], "COMPLETED");
    net.queue_fault("a", Method::SendMessage, support::busy(), 2)
        .unwrap();
    let out = run(base("c2")).await.unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("DEAD_LETTERED"));
    let out = run(vec![
        "dlq".into(),
        "list".into(),
        "--store".into(),
        store.clone(),
    ])
    .await
    .unwrap();
    let list = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(list.contains("\"delegation_id\":\"c2\""));
    let out = run(vec!["status".into(), "--store".into(), store.clone()])
        .await
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(status.contains("dead-lettered: 1"), "{status}");
    assert!(status.contains(&a));
    let out = run(vec![
        "dlq".into(),
        "resubmit".into(),
        "c2".into(),
        "--store".into(),
        store.clone(),
    ])
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(vec![
        "dlq".into(),
        "list".into(),
        "--store".into(),
        store.clone(),
    ])
    .await
    .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"resubmitted_as\":\"c2.r1\""));
    let out = run(vec![
        "status".into(),
        "--json".into(),
        "--store".into(),
        store,
    ])
    .await
    .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["per_agent_skill"][0]["delegations"], 3);
}

/// `init.agent_credentials` and `init.extensions` reach the engine: an agent whose card requires
/// its credential on every call and an extension gets both on every request; the credential
/// appears in nothing the delegator writes (stdout, snapshot, store).
#[tokio::test]
async fn init_agent_credentials_and_extensions_are_used() {
    const CRED: &str = "Bearer agent-cred-driver-42";
    const EXT: &str = "https://example.com/ext/trace/v1";
    let net = scripted(
        agent("locked")
            .security(CRED, a2a_mock_agents::SecurityScope::All)
            .extension(EXT, "trace", true)
            .extended_skill("premium"),
        vec![
            chunk("a1", "unlocked", false, true),
            Step::state(TaskState::Completed).into(),
        ],
    )
    .await;
    let url = card(&net, "locked");
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &[]);
    d.send(
        json!({"type": "init", "store_dir": dir.path(), "recovering": false,
        "agents": [url], "webhook_base_url": null, "self_url": "http://127.0.0.1:1/delegator",
        "credential": "Bearer own-secret-token", "agent_credentials": {url.clone(): CRED},
        "extensions": [EXT], "options": {"poll_interval_ms": 20}}),
    )
    .await;
    let ok = d.next(20).await.unwrap();
    assert_eq!(ok["type"], "init_ok", "{ok}");
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "premium", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}}),
    )
    .await;
    let done = d
        .until(20, |v| v["type"] == "done" && v["id"] == "d1")
        .await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    d.send(json!({"type": "snapshot"})).await;
    d.until(10, |v| v["type"] == "snapshot_ok").await;
    d.close_stdin();
    assert!(d.wait_exit(20).await.success());
    let got = calls(&net, "locked");
    assert!(got.iter().any(|r| r.method == "GetExtendedAgentCard"));
    for r in &got {
        assert_eq!(r.header("authorization"), Some(CRED), "{}", r.method);
        assert_eq!(r.header("a2a-extensions"), Some(EXT), "{}", r.method);
    }
    for line in &d.seen {
        assert!(!line.to_string().contains("agent-cred-driver"), "{line}");
    }
    fn holds(dir: &std::path::Path) -> bool {
        std::fs::read_dir(dir).unwrap().any(|e| {
            let p = e.unwrap().path();
            if p.is_dir() {
                holds(&p)
            } else {
                let b = std::fs::read(&p).unwrap();
                b.windows(17).any(|w| w == b"agent-cred-driver")
            }
        })
    }
    assert!(!holds(dir.path()));
}
