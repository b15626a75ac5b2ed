//! Each planted bug changes exactly its behaviour (built only with `--features planted-bugs`).

#![cfg(feature = "planted-bugs")]

use crate::support;

use a2a_delegator::bugs::{Bug, Bugs};
use a2a_delegator::engine::{EngineConfig, Options};
use a2a_delegator::request::DelegationRequest;
use a2a_delegator::store::DelegationState;
use a2a_mock_agents::{Network, ScriptStep, Step};
use a2a_protocol::{Method, TaskState};
use serde_json::json;
use std::time::Duration;
use support::{Driver, EngineRun, agent, calls, card, chunk, network, requests, scripted, sha};

const OWN: &str = "Bearer own-secret-token";

async fn start(net: &Network, bug: Bug, o: Options) -> EngineRun {
    EngineRun::start(|dir| {
        EngineConfig::new(dir, "http://127.0.0.1:1/delegator")
            .agents(vec![card(net, "a")])
            .own_credential(Some(OWN.into()))
            .options(o)
            .with_bugs(Bugs::none().with(bug))
    })
    .await
}

fn opts() -> Options {
    Options {
        deadline_margin_ms: 200,
        ..support::fast_options()
    }
}

fn req(id: &str) -> DelegationRequest {
    support::request(id)
}

fn completed() -> ScriptStep {
    Step::state(TaskState::Completed).into()
}

fn delegate_line() -> serde_json::Value {
    json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
        "artifact_spec": {"mime_types": ["text/plain"]}, "timeout_seconds": 60})
}

#[tokio::test]
async fn random_message_id_on_retry() {
    let net = network(vec![
        agent("a")
            .queue_fault(Method::SendMessage, support::busy(), 1)
            .build(),
    ])
    .await;
    let mut h = start(&net, Bug::RandomMessageIdOnRetry, opts()).await;
    h.run(req("d1")).await;
    let s = requests(&net, "a", "SendMessage");
    assert_ne!(
        s[0].params["message"]["messageId"],
        s[1].params["message"]["messageId"]
    );
}

#[tokio::test]
async fn blocking_send() {
    let net = network(vec![agent("a").build()]).await;
    let mut h = start(&net, Bug::BlockingSend, opts()).await;
    h.run(req("d1")).await;
    let sends = requests(&net, "a", "SendMessage");
    assert!(sends[0].params["configuration"]["returnImmediately"].is_null());
}

#[tokio::test]
async fn assume_task() {
    let net = scripted(agent("a"), vec![Step::reply("hi")]).await;
    let mut h = start(&net, Bug::AssumeTask, opts()).await;
    assert_eq!(h.run(req("d1")).await.state, DelegationState::Failed);
}

#[tokio::test]
async fn message_terminal_task() {
    let net = network(vec![agent("a").build()]).await;
    let mut h = start(&net, Bug::MessageTerminalTask, opts()).await;
    let first = h.run(req("d0")).await;
    let mut r = req("d1");
    r.refine_of = Some("d0".into());
    let o = h.run(r).await;
    assert_eq!(o.state, DelegationState::SendFailed);
    assert_eq!(
        requests(&net, "a", "SendMessage")[1].params["message"]["taskId"],
        json!(first.task_id)
    );
}

#[tokio::test]
async fn guess_inputs() {
    let net = scripted(
        agent("a"),
        vec![Step::input_required("Which airport?").into(), completed()],
    )
    .await;
    let mut h = start(&net, Bug::GuessInputs, opts()).await;
    assert_eq!(h.run(req("d1")).await.state, DelegationState::Completed);
    assert_eq!(
        requests(&net, "a", "SendMessage")[1].params["message"]["parts"][0]["text"],
        "yes"
    );
}

#[tokio::test]
async fn forward_own_credential() {
    let net = scripted(agent("a"), vec![Step::auth_required(OWN), completed()]).await;
    let mut h = start(&net, Bug::ForwardOwnCredential, opts()).await;
    assert_eq!(h.run(req("d1")).await.state, DelegationState::Completed);
    assert_eq!(
        requests(&net, "a", "SendMessage")[1].header("authorization"),
        Some(OWN)
    );
}

#[tokio::test]
async fn no_limit_checks() {
    // The agent itself accepts any depth: the delegator's own check is what the bug removes.
    let net = network(vec![agent("a").max_depth(100).build()]).await;
    let mut h = start(&net, Bug::NoLimitChecks, opts()).await;
    let mut r = req("d1");
    r.depth = 9;
    h.run(r).await;
    assert_eq!(requests(&net, "a", "SendMessage").len(), 1);
}

#[tokio::test]
async fn ignore_append() {
    let net = scripted(
        agent("a").streaming(true),
        vec![
            chunk("a", "1", false, false),
            chunk("a", "2", true, true),
            completed(),
        ],
    )
    .await;
    let mut h = start(&net, Bug::IgnoreAppend, opts()).await;
    assert_eq!(h.run(req("d1")).await.artifacts[0].sha256, sha(b"2"));
}

#[tokio::test]
async fn keep_last_chunk_only() {
    let net = scripted(
        agent("a").streaming(true),
        vec![
            chunk("a", "1", false, false),
            chunk("a", "2", true, false),
            chunk("a", "3", true, true),
            completed(),
        ],
    )
    .await;
    let mut h = start(&net, Bug::KeepLastChunkOnly, opts()).await;
    assert_eq!(h.run(req("d1")).await.artifacts[0].sha256, sha(b"3"));
}

#[tokio::test]
async fn no_local_deadline() {
    let net = scripted(agent("a"), vec![Step::gate("g"), completed()]).await;
    let mut h = start(&net, Bug::NoLocalDeadline, opts()).await;
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
    assert!(requests(&net, "a", "CancelTask").is_empty());
    net.open_gate("g");
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
}

#[tokio::test]
async fn misreport_sha256() {
    let net = scripted(agent("a"), vec![chunk("a", "x", false, true), completed()]).await;
    let mut h = start(&net, Bug::MisreportSha256, opts()).await;
    let o = h.run(req("d1")).await;
    assert_ne!(o.artifacts[0].sha256, sha(b"x"));
    assert_eq!(std::fs::read(&o.artifacts[0].path).unwrap(), b"x");
}

#[tokio::test]
async fn no_recovery() {
    let net = scripted(agent("a"), vec![Step::gate("g")]).await;
    let a = card(&net, "a");
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &["--bug", "no-recovery"]);
    d.init(dir.path(), &[&a], false, json!({"poll_interval_ms": 20}))
        .await;
    d.send(delegate_line()).await;
    support::wait_count(&net, "a", "GetTask", 1).await;
    d.crash().await;
    let before = calls(&net, "a").len();
    let mut d = Driver::spawn(dir.path(), &["--bug", "no-recovery"]);
    d.init(dir.path(), &[&a], true, json!({"poll_interval_ms": 20}))
        .await;
    d.send(json!({"type": "snapshot"})).await;
    let snap = d.until(10, |v| v["type"] == "snapshot_ok").await;
    assert_eq!(snap["records"][0]["state"], "SUBMITTED");
    assert_eq!(calls(&net, "a").len(), before, "nothing resumed");
}

#[tokio::test]
async fn ignore_unknown_state_exits() {
    let net = scripted(
        agent("a").streaming(true),
        vec![Step::unknown_state("TASK_STATE_PAUSED"), completed()],
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(dir.path(), &["--bug", "ignore-unknown-state"]);
    d.init(dir.path(), &[&card(&net, "a")], false, json!({}))
        .await;
    d.send(delegate_line()).await;
    let st = d.wait_exit(20).await;
    assert!(!st.success());
}

#[tokio::test]
async fn no_input_cap() {
    let ask = || Step::input_required("Which jurisdiction?").into();
    let net = scripted(agent("a"), vec![ask(), ask(), ask(), ask(), completed()]).await;
    let mut h = start(&net, Bug::NoInputCap, opts()).await;
    let mut r = req("d1");
    r.inputs = json!({"jurisdiction": "England"})
        .as_object()
        .cloned()
        .unwrap();
    assert_eq!(h.run(r).await.state, DelegationState::Completed);
    assert_eq!(requests(&net, "a", "SendMessage").len(), 5);
}

#[tokio::test]
async fn persist_secrets() {
    const CRED: &str = "Bearer scoped-written-down";
    let net = scripted(agent("a"), vec![Step::auth_required(CRED), completed()]).await;
    let mut h = start(&net, Bug::PersistSecrets, opts()).await;
    h.engine.delegate(req("d1")).await.unwrap();
    let (_, kind, _) = h.escalation().await;
    assert_eq!(kind, a2a_delegator::EscalationKind::Auth);
    h.engine.credential("d1", CRED.into()).unwrap();
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
    assert!(
        h.store_holds(CRED),
        "the credential is in the store's debug log"
    );
}

/// The journal times (µs) of `agent`'s requests of `method`, in order.
fn request_times(net: &Network, agent: &str, method: &str) -> Vec<u64> {
    net.journal()
        .entries()
        .into_iter()
        .filter(|e| {
            e.rpc_request()
                .is_some_and(|r| r.method == method && r.agent == agent)
        })
        .map(|e| e.at_us)
        .collect()
}

#[tokio::test]
async fn constant_poll_interval() {
    let net = scripted(agent("a"), vec![Step::gate("g"), completed()]).await;
    // First interval 20 ms, backing off ×1.5 up to 200 ms: twelve polls take a backing-off
    // poller at least 20+30+45+67+101+151+200·5 = 1414 ms.
    let o = Options {
        poll_interval_ms: 20,
        ..opts()
    };
    let mut h = start(&net, Bug::ConstantPollInterval, o).await;
    h.engine.delegate(req("d1")).await.unwrap();
    support::wait_count(&net, "a", "GetTask", 12).await;
    net.open_gate("g");
    assert_eq!(h.done("d1").await.state, DelegationState::Completed);
    let polls = request_times(&net, "a", "GetTask");
    let span_ms = (polls[11] - polls[0]) / 1000;
    assert!(span_ms < 1414, "twelve polls over {span_ms} ms");
}

#[tokio::test]
async fn fixed_retry_backoff() {
    let net = network(vec![
        agent("a")
            .queue_fault(Method::SendMessage, support::busy(), 6)
            .build(),
    ])
    .await;
    // Base 40 ms, cap 4 s: equal jitter waits at least 20+40+80+160+320+640 = 1260 ms over six
    // backoffs.
    let o = Options {
        retry_base_ms: 40,
        retry_cap_ms: 4_000,
        ..opts()
    };
    let mut h = start(&net, Bug::FixedRetryBackoff, o).await;
    let mut r = req("d1");
    r.max_retries = 6;
    assert_eq!(h.run(r).await.state, DelegationState::Completed);
    let sends = request_times(&net, "a", "SendMessage");
    assert_eq!(sends.len(), 7);
    let span_ms = (sends[6] - sends[0]) / 1000;
    assert!(span_ms < 1260, "six backoffs over {span_ms} ms");
}
