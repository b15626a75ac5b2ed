//! Each planted bug changes exactly its behaviour (built only with `--features planted-bugs`).

#![cfg(feature = "planted-bugs")]

mod support;

use a2a_delegator::bugs::{Bug, Bugs};
use a2a_delegator::engine::{Done, Engine, EngineConfig, Event, Options};
use a2a_delegator::request::{ArtifactSpec, DelegationRequest};
use a2a_delegator::store::DelegationState;
use a2a_protocol::{Part, TaskState};
use serde_json::json;
use std::time::Duration;
use support::{AgentConfig, Driver, FakeAgent, Fault, Step};
use tokio::sync::mpsc;

const OWN: &str = "Bearer own-secret-token";

struct H {
    engine: Engine,
    rx: mpsc::UnboundedReceiver<Event>,
    _dir: tempfile::TempDir,
}

async fn start(a: &FakeAgent, bug: Bug, o: Options) -> H {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let engine = Engine::start(
        EngineConfig::new(dir.path(), "http://127.0.0.1:1/delegator")
            .agents(vec![a.card_url.clone()])
            .own_credential(Some(OWN.into()))
            .options(o)
            .with_bugs(Bugs::none().with(bug)),
        tx,
    )
    .await
    .unwrap();
    H {
        engine,
        rx,
        _dir: dir,
    }
}

fn opts() -> Options {
    Options {
        retry_base_ms: 10,
        retry_cap_ms: 20,
        poll_interval_ms: 20,
        deadline_margin_ms: 200,
        terminal_grace_ms: 100,
        ..Options::default()
    }
}

impl H {
    async fn done(&mut self, id: &str) -> Done {
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(20), self.rx.recv())
                .await
                .expect("event in time")
                .expect("engine");
            if let Event::Done(o) = ev
                && o.id == id
            {
                return o;
            }
        }
    }
}

fn req(id: &str) -> DelegationRequest {
    let mut r = DelegationRequest::new(id, "work", "go");
    r.artifact_spec = ArtifactSpec {
        mime_types: vec!["text/plain".into()],
        max_size_bytes: 1000,
        streaming_preferred: true,
        schema: None,
    };
    r.timeout_seconds = 30;
    r
}

fn chunk(id: &str, t: &str, append: bool, last: bool) -> Step {
    Step::Artifact {
        id: id.into(),
        parts: vec![Part::text(t)],
        append,
        last,
    }
}

fn sha(b: &[u8]) -> String {
    use sha2::Digest;
    a2a_delegator::artifacts::hex(&sha2::Sha256::digest(b))
}

#[tokio::test]
async fn random_message_id_on_retry() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.fault("SendMessage", Fault::Http(503, None));
    let mut h = start(&a, Bug::RandomMessageIdOnRetry, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    h.done("d1").await;
    let s = a.requests("SendMessage");
    assert_ne!(
        s[0].params["message"]["messageId"],
        s[1].params["message"]["messageId"]
    );
}

#[tokio::test]
async fn blocking_send() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    let mut h = start(&a, Bug::BlockingSend, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    h.done("d1").await;
    assert!(a.requests("SendMessage")[0].params["configuration"]["returnImmediately"].is_null());
}

#[tokio::test]
async fn assume_task() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.script("work", vec![Step::Reply("hi".into())]);
    let mut h = start(&a, Bug::AssumeTask, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    assert_eq!(h.done("d1").await.state, DelegationState::Failed);
}

#[tokio::test]
async fn message_terminal_task() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    let mut h = start(&a, Bug::MessageTerminalTask, opts()).await;
    h.engine.delegate(req("d0")).await.unwrap();
    let first = h.done("d0").await;
    let mut r = req("d1");
    r.refine_of = Some("d0".into());
    h.engine.delegate(r).await.unwrap();
    let o = h.done("d1").await;
    assert_eq!(o.state, DelegationState::SendFailed);
    assert_eq!(
        a.requests("SendMessage")[1].params["message"]["taskId"],
        json!(first.task_id)
    );
}

#[tokio::test]
async fn guess_inputs() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.script(
        "work",
        vec![
            Step::AskInput("Which airport?".into()),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::GuessInputs, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
    assert_eq!(
        a.requests("SendMessage")[1].params["message"]["parts"][0]["text"],
        "yes"
    );
}

#[tokio::test]
async fn forward_own_credential() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.script(
        "work",
        vec![
            Step::AskAuth("sign in".into(), OWN.into()),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::ForwardOwnCredential, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
    assert_eq!(
        a.requests("SendMessage")[1].authorization.as_deref(),
        Some(OWN)
    );
}

#[tokio::test]
async fn no_limit_checks() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    let mut h = start(&a, Bug::NoLimitChecks, opts()).await;
    let mut r = req("d1");
    r.depth = 9;
    h.engine.delegate(r).await.unwrap();
    h.done("d1").await;
    assert_eq!(a.requests("SendMessage").len(), 1);
}

#[tokio::test]
async fn ignore_append() {
    let a = FakeAgent::start(AgentConfig {
        streaming: true,
        ..Default::default()
    })
    .await;
    a.script(
        "work",
        vec![
            chunk("a", "1", false, false),
            chunk("a", "2", true, true),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::IgnoreAppend, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    assert_eq!(h.done("d1").await.artifacts[0].sha256, sha(b"2"));
}

#[tokio::test]
async fn keep_last_chunk_only() {
    let a = FakeAgent::start(AgentConfig {
        streaming: true,
        ..Default::default()
    })
    .await;
    a.script(
        "work",
        vec![
            chunk("a", "1", false, false),
            chunk("a", "2", true, false),
            chunk("a", "3", true, true),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::KeepLastChunkOnly, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    assert_eq!(h.done("d1").await.artifacts[0].sha256, sha(b"3"));
}

#[tokio::test]
async fn no_local_deadline() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.script(
        "work",
        vec![
            Step::Gate("g".into()),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::NoLocalDeadline, opts()).await;
    let mut r = req("d1");
    r.deadline = Some(
        a2a_protocol::Timestamp::from_datetime(
            time::OffsetDateTime::now_utc() + time::Duration::milliseconds(600),
        )
        .to_rfc3339(),
    );
    h.engine.delegate(r).await.unwrap();
    // Well past the deadline the task is still observed and never canceled.
    let past = tokio::time::timeout(Duration::from_millis(1500), h.done("d1")).await;
    assert!(past.is_err());
    assert!(a.requests("CancelTask").is_empty());
    a.open_gate("g");
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
}

#[tokio::test]
async fn misreport_sha256() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.script(
        "work",
        vec![
            chunk("a", "x", false, true),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::MisreportSha256, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    let o = h.done("d1").await;
    assert_ne!(o.artifacts[0].sha256, sha(b"x"));
    assert_eq!(std::fs::read(&o.artifacts[0].path).unwrap(), b"x");
}

#[tokio::test]
async fn no_recovery() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    a.script("work", vec![Step::Gate("g".into())]);
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &["--bug", "no-recovery"]);
    d.init(
        dir.path(),
        &[&a.card_url],
        false,
        json!({"poll_interval_ms": 20}),
    )
    .await;
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 60}),
    )
    .await;
    a.wait_for(10, |j| j.iter().any(|r| r.method == "GetTask"))
        .await;
    d.sigkill();
    d.wait_exit(10).await;
    let before = a.journal().len();
    let mut d = Driver::spawn(dir.path(), &["--bug", "no-recovery"]);
    d.init(
        dir.path(),
        &[&a.card_url],
        true,
        json!({"poll_interval_ms": 20}),
    )
    .await;
    d.send(json!({"type": "snapshot"})).await;
    let snap = d.until(10, |v| v["type"] == "snapshot_ok").await;
    assert_eq!(snap["records"][0]["state"], "SUBMITTED");
    assert_eq!(a.journal().len(), before, "nothing resumed");
}

#[tokio::test]
async fn ignore_unknown_state_exits() {
    let a = FakeAgent::start(AgentConfig {
        streaming: true,
        ..Default::default()
    })
    .await;
    a.script(
        "work",
        vec![
            Step::RawState("TASK_STATE_PAUSED".into()),
            Step::State(TaskState::Completed, None),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &["--bug", "ignore-unknown-state"]);
    d.init(dir.path(), &[&a.card_url], false, json!({})).await;
    d.send(
        json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 60}),
    )
    .await;
    let st = d.wait_exit(20).await;
    assert!(!st.success());
}

#[tokio::test]
async fn no_input_cap() {
    let a = FakeAgent::start(AgentConfig::default()).await;
    let ask = || Step::AskInput("Which jurisdiction?".into());
    a.script(
        "work",
        vec![
            ask(),
            ask(),
            ask(),
            ask(),
            Step::State(TaskState::Completed, None),
        ],
    );
    let mut h = start(&a, Bug::NoInputCap, opts()).await;
    let mut r = req("d1");
    r.inputs = json!({"jurisdiction": "England"})
        .as_object()
        .cloned()
        .unwrap();
    h.engine.delegate(r).await.unwrap();
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
    assert_eq!(a.requests("SendMessage").len(), 5);
}
