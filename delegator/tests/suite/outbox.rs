//! The outbox: no `done` is lost to a crash. `a2a-delegator drive` is aborted at a crash point
//! (feature `planted-bugs`, [`CrashPoint`]) right after a final record was saved, or right after
//! its `done` line was written, and restarted on the same store with `recovering: true`: the
//! `done` arrives (again, identical), and once it was flushed it is never reported a third time.

#![cfg(feature = "planted-bugs")]

use a2a_delegator::bugs::CrashPoint;
use a2a_delegator::store::{DelegationState, DelegationStore, SqliteStore};
use a2a_mock_agents::{MockAgent, Network, Step};
use a2a_protocol::TaskState;
use serde_json::{Value, json};
use sha2::Digest;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The artifact the agent delivers.
const TEXT: &str = "the result, in two chunks";

/// Longest wait for one line or for the process to end.
const WAIT: Duration = Duration::from_secs(30);

/// One `a2a-delegator drive` process.
struct Drive {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Drive {
    /// Start `drive` on `store`, with `crash` armed (or none).
    fn spawn(store: &Path, crash: Option<CrashPoint>) -> Drive {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2a-delegator"));
        cmd.arg("drive")
            .arg("--store")
            .arg(store)
            .env_remove(CrashPoint::ENV)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some(p) = crash {
            cmd.env(CrashPoint::ENV, p.name());
        }
        let mut child = cmd.spawn().expect("a2a-delegator starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        Drive {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        }
    }

    async fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{v}\n").as_bytes())
            .await
            .expect("write to the delegator");
        stdin.flush().await.expect("flush to the delegator");
    }

    /// The next line, or `None` at EOF.
    async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("a line or EOF in time")
            .expect("read stdout")?;
        Some(serde_json::from_str(&line).expect("stdout lines are JSON"))
    }

    /// `init` on `store` with the agent `card`, answered by `init_ok`.
    async fn init(&mut self, store: &Path, card: &str, recovering: bool) {
        self.send(json!({
            "type": "init", "store_dir": store, "recovering": recovering, "agents": [card],
            "webhook_base_url": null, "self_url": "http://127.0.0.1:1/delegator",
            "credential": null,
            "options": {"poll_interval_ms": 20, "retry_base_ms": 20, "retry_cap_ms": 100}
        }))
        .await;
        let first = self.next().await.expect("init_ok");
        assert_eq!(first["type"], "init_ok", "{first}");
    }

    /// Lines until the first `done`; `None` when the process ended first.
    async fn until_done(&mut self, seen: &mut Vec<Value>) -> Option<Value> {
        while let Some(v) = self.next().await {
            seen.push(v.clone());
            if v["type"] == "done" {
                return Some(v);
            }
        }
        None
    }

    /// Close stdin (when still open), read every remaining line, and wait for the exit.
    async fn finish(mut self) -> (Vec<Value>, ExitStatus) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(v) = self.next().await {
            rest.push(v);
        }
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the process ends in time")
            .expect("wait for the process");
        (rest, status)
    }
}

fn dones(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|v| v["type"] == "done").collect()
}

/// One agent that streams [`TEXT`] as one artifact and completes; the rule expects exactly one
/// task, so a re-emitted `done` must not come from running the delegation again.
async fn network() -> Network {
    let spec = MockAgent::network(
        9,
        vec![
            MockAgent::builder("worker")
                .skill("work")
                .mount(
                    MockAgent::when()
                        .named("the one task")
                        .step(
                            Step::artifacts(1)
                                .chunks(2)
                                .text(TEXT)
                                .media_type("text/plain"),
                        )
                        .step(Step::state(TaskState::Completed))
                        .expect(1),
                )
                .build(),
        ],
    );
    Network::start(spec).await.expect("the mock network starts")
}

fn delegate() -> Value {
    json!({"type": "delegate", "id": "d1", "capability": "work", "text": "go",
           "artifact_spec": {"mime_types": ["text/plain"], "max_size_bytes": 100000},
           "timeout_seconds": 60, "max_retries": 3})
}

/// The `done` of `d1` is COMPLETED with the agent's bytes, in the file it names.
fn assert_completed_with_the_artifact(done: &Value) {
    assert_eq!(
        (&done["id"], &done["state"]),
        (&json!("d1"), &json!("COMPLETED")),
        "{done}"
    );
    let arts = done["artifacts"].as_array().expect("artifacts");
    assert_eq!(arts.len(), 1, "{done}");
    let sha = a2a_delegator::artifacts::hex(&sha2::Sha256::digest(TEXT.as_bytes()));
    assert_eq!(arts[0]["bytes"], TEXT.len(), "{done}");
    assert_eq!(arts[0]["sha256"], sha, "{done}");
    let path = arts[0]["path"].as_str().expect("path");
    assert_eq!(std::fs::read(path).expect("artifact file"), TEXT.as_bytes());
}

/// A restart on `store` with `recovering: true` and stdin closed right after `init_ok`: every
/// line it writes until it exits.
async fn recover_and_close(store: &Path, card: &str) -> (Vec<Value>, ExitStatus) {
    let mut d = Drive::spawn(store, None);
    d.init(store, card, true).await;
    d.finish().await
}

/// A third life on the same store reports nothing: every `done` was flushed and marked.
async fn nothing_is_owed(store: &Path, card: &str) {
    let (rest, status) = recover_and_close(store, card).await;
    assert!(status.success(), "{status}");
    assert!(dones(&rest).is_empty(), "nothing owed, got {rest:?}");
    let s = SqliteStore::open_dir(store).expect("store opens");
    assert!(s.unreported().expect("unreported").is_empty());
}

#[tokio::test]
async fn a_crash_between_the_final_save_and_done_loses_nothing() {
    let net = network().await;
    let card = net.card_url("worker").expect("card url");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path();

    // First life: aborted right after the final record is durable, before `done` is written.
    let mut d = Drive::spawn(store, Some(CrashPoint::AfterFinalSave));
    d.init(store, &card, false).await;
    d.send(delegate()).await;
    let mut seen = Vec::new();
    assert_eq!(d.until_done(&mut seen).await, None, "no done: {seen:?}");
    let (_, status) = d.finish().await;
    assert!(!status.success(), "the crash point aborted it: {status}");
    {
        let s = SqliteStore::open_dir(store).expect("store opens");
        let rec = s.get("d1").expect("get").expect("d1 is recorded");
        assert_eq!(
            rec.state,
            DelegationState::Completed,
            "the final save landed"
        );
        let owed: Vec<String> = s
            .unreported()
            .expect("unreported")
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(owed, vec!["d1"]);
    }

    // Second life: recovery reports the `done` that was never written, and only that (stdin
    // is closed at once: nothing is open, so everything owed is written before the exit).
    let (rest, status) = recover_and_close(store, &card).await;
    assert!(status.success(), "{status}");
    let got = dones(&rest);
    assert_eq!(got.len(), 1, "exactly the owed done: {rest:?}");
    assert_completed_with_the_artifact(got[0]);

    nothing_is_owed(store, &card).await;
    // The agent saw one task: the done came from the outbox, not from running d1 again.
    net.verify().expect("one task");
    net.shutdown().await;
}

#[tokio::test]
async fn a_done_written_but_not_marked_is_reported_again_identically() {
    let net = network().await;
    let card = net.card_url("worker").expect("card url");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path();

    // First life: the `done` line is written and flushed, then the process dies before the
    // store marks it reported.
    let mut d = Drive::spawn(store, Some(CrashPoint::AfterDoneWritten));
    d.init(store, &card, false).await;
    d.send(delegate()).await;
    let mut seen = Vec::new();
    let first = d.until_done(&mut seen).await.expect("the done is written");
    assert_completed_with_the_artifact(&first);
    let (rest, status) = d.finish().await;
    assert!(!status.success(), "the crash point aborted it: {status}");
    assert!(dones(&rest).is_empty(), "{rest:?}");

    // Second life: the same `done` again, identical (the contract lets receivers treat it as
    // one).
    let (rest, status) = recover_and_close(store, &card).await;
    assert!(status.success(), "{status}");
    assert_eq!(
        dones(&rest),
        vec![&first],
        "the same done once more: {rest:?}"
    );

    nothing_is_owed(store, &card).await;
    net.verify().expect("one task");
    net.shutdown().await;
}

#[tokio::test]
async fn a_clean_run_owes_nothing_after_a_restart() {
    let net = network().await;
    let card = net.card_url("worker").expect("card url");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path();
    let mut d = Drive::spawn(store, None);
    d.init(store, &card, false).await;
    d.send(delegate()).await;
    let mut seen = Vec::new();
    let done = d.until_done(&mut seen).await.expect("done");
    assert_completed_with_the_artifact(&done);
    let (rest, status) = d.finish().await;
    assert!(status.success(), "{status}");
    assert!(dones(&rest).is_empty(), "{rest:?}");
    nothing_is_owed(store, &card).await;
    net.verify().expect("one task");
    net.shutdown().await;
}
