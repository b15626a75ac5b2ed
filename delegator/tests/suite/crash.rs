//! Crash recovery: SIGKILL `a2a-delegator drive` at several points, restart it on the same store
//! with `recovering: true`, and check that no delegation is lost, no intent creates a second task
//! (the mock agents deduplicate `messageId`), and artifacts are byte-exact.

use crate::support;

use a2a_delegator::policy::message_id;
use a2a_mock_agents::{Fault, MockAgent, Network, Step};
use a2a_protocol::{Method, TaskState};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use support::{Driver, card, chunk, network, requests, sha, tasks};

fn delegate(id: &str, skill: &str) -> Value {
    json!({"type": "delegate", "id": id, "capability": skill, "text": "go",
           "artifact_spec": {"mime_types": ["text/plain"], "max_size_bytes": 100000},
           "timeout_seconds": 120, "max_retries": 5})
}

const OPTIONS: &str = r#"{"poll_interval_ms": 20, "retry_base_ms": 20, "retry_cap_ms": 100}"#;

/// Longer than any test: the delegator is killed while the agent holds the request.
const HOLD: Fault = Fault::Stall { ms: 120_000 };
/// The send is processed (the task exists), then its answer is held past the kill.
const LAND_THEN_HOLD: Fault = Fault::StallResponse { ms: 120_000 };

/// Tasks created per `messageId` across both agents: more than one is a duplicate.
fn duplicates(net: &Network) -> usize {
    let mut per: HashMap<String, usize> = HashMap::new();
    for a in ["poll", "stream"] {
        for (_, m) in tasks(net, a) {
            *per.entry(m).or_default() += 1;
        }
    }
    per.values().filter(|n| **n > 1).count()
}

fn agents() -> Vec<a2a_mock_agents::AgentSpec> {
    let poll = MockAgent::builder("poll")
        .skill("poll")
        .skill("ask")
        .streaming(false)
        .push_notifications(false)
        .mount(
            MockAgent::when()
                .skill("poll")
                .step(chunk("out", "polled ", false, false))
                .step(chunk("out", "result", true, true))
                .state(TaskState::Completed),
        )
        .mount(
            MockAgent::when()
                .skill("ask")
                .step(Step::input_required("Which airport?"))
                .step(chunk("out", "after answer", false, true))
                .state(TaskState::Completed),
        );
    let stream = MockAgent::builder("stream")
        .skill("stream")
        .streaming(true)
        .push_notifications(false)
        .mount(
            MockAgent::when()
                .skill("stream")
                .step(chunk("s", "part1-", false, false))
                .step(chunk("s", "part2-", true, false))
                .state(TaskState::Working)
                .step(Step::gate_within("resume", Duration::from_secs(120)))
                .step(chunk("s", "part3", true, true))
                .state(TaskState::Completed),
        );
    vec![poll.build(), stream.build()]
}

#[tokio::test]
async fn sigkill_at_several_points_loses_and_duplicates_nothing() {
    let options: Value = serde_json::from_str(OPTIONS).unwrap();
    let net = network(agents()).await;
    let (poll_card, stream_card) = (card(&net, "poll"), card(&net, "stream"));
    let agents = [poll_card.as_str(), stream_card.as_str()];
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let mut kills = 0;
    let mut delegations = 0;

    // Kill 1: after the intent is written, before the send lands (the agent holds the request
    // unprocessed).
    net.queue_fault("poll", Method::SendMessage, HOLD, 1)
        .unwrap();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, false, options.clone()).await;
    d.send(delegate("k1", "poll")).await;
    delegations += 1;
    d.until(10, |v| v["type"] == "state" && v["state"] == "SENDING")
        .await;
    support::wait_count(&net, "poll", "SendMessage", 1).await;
    d.crash().await;
    kills += 1;
    assert_eq!(tasks(&net, "poll").len(), 0, "the first send did not land");

    // Kill 2: the send landed (task created) but the reply never came back.
    net.queue_fault("poll", Method::SendMessage, LAND_THEN_HOLD, 1)
        .unwrap();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, true, options.clone()).await;
    // Recovery resends k1 with the same messageId: the held reply is that resend's.
    let k1_create = message_id("k1", "create");
    support::wait_task_for(&net, "poll", &k1_create).await;
    d.crash().await;
    kills += 1;
    assert_eq!(requests(&net, "poll", "SendMessage").len(), 2);
    assert_eq!(tasks(&net, "poll").len(), 1, "the resend landed once");

    // Kill 3: mid-stream, with several delegations in flight.
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, true, options.clone()).await;
    let k1 = d
        .until(20, |v| v["type"] == "done" && v["id"] == "k1")
        .await;
    assert_eq!(k1["state"], "COMPLETED", "{k1}");
    for i in 0..3 {
        d.send(delegate(&format!("s{i}"), "stream")).await;
        delegations += 1;
    }
    let mut working = std::collections::BTreeSet::new();
    while working.len() < 3 {
        let v = d
            .until(20, |v| v["type"] == "state" && v["state"] == "WORKING")
            .await;
        working.insert(v["id"].as_str().unwrap().to_string());
    }
    d.crash().await;
    kills += 1;

    // Restart: every stream delegation is reconciled (GetTask, then SubscribeToTask), and the
    // agent finishes only after the delegator is back.
    let before = requests(&net, "stream", "SubscribeToTask").len();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, true, options.clone()).await;
    support::wait_calls(&net, "stream", 20, |rs| {
        rs.iter().filter(|r| r.method == "SubscribeToTask").count() >= before + 3
    })
    .await;
    net.open_gate("resume");
    let mut outcomes: BTreeMap<String, Value> = BTreeMap::new();
    while outcomes.len() < 3 {
        let v = d.until(30, |v| v["type"] == "done").await;
        outcomes.insert(v["id"].as_str().unwrap().to_string(), v);
    }
    for (id, o) in &outcomes {
        assert_eq!(o["state"], "COMPLETED", "{id}: {o}");
        assert_eq!(
            o["artifacts"][0]["sha256"],
            sha(b"part1-part2-part3"),
            "{id}"
        );
        assert_eq!(o["artifacts"][0]["bytes"], 17);
        let path = o["artifacts"][0]["path"].as_str().unwrap();
        assert_eq!(std::fs::read(path).unwrap(), b"part1-part2-part3");
    }

    // Kill 4: while an input escalation waits for the caller; the restart asks again.
    d.send(delegate("e1", "ask")).await;
    delegations += 1;
    let e = d.until(20, |v| v["type"] == "escalate").await;
    assert_eq!(e["id"], "e1");
    d.crash().await;
    kills += 1;
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, true, options.clone()).await;
    let e = d.until(20, |v| v["type"] == "escalate").await;
    assert_eq!(e["id"], "e1");
    d.send(json!({"type": "answer", "id": "e1", "text": "SFO"}))
        .await;
    let o = d
        .until(20, |v| v["type"] == "done" && v["id"] == "e1")
        .await;
    assert_eq!(o["state"], "COMPLETED", "{o}");
    assert_eq!(o["artifacts"][0]["sha256"], sha(b"after answer"));

    // Kill 5: right after a burst of delegations was accepted (some sends landed, some not).
    for i in 0..4 {
        d.send(delegate(&format!("b{i}"), "poll")).await;
        delegations += 1;
    }
    d.until(20, |v| {
        v["type"] == "state" && v["state"] == "SENDING" && v["id"] == "b3"
    })
    .await;
    d.crash().await;
    kills += 1;
    // Admissions run concurrently: b3's first message says nothing of b0-b2. A `delegate` the
    // killed process wrote nothing about may not have reached its store, so it is re-sent after
    // the restart, as the harness does (driver protocol, "Re-sent requests after a restart").
    while d.next(5).await.is_some() {}
    let unacknowledged: Vec<String> = (0..4)
        .map(|i| format!("b{i}"))
        .filter(|id| !d.seen.iter().any(|v| v["id"] == id.as_str()))
        .collect();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, true, options.clone()).await;
    for id in &unacknowledged {
        d.send(delegate(id, "poll")).await;
    }
    let mut burst = std::collections::BTreeSet::new();
    while burst.len() < 4 {
        let v = d
            .until(20, |v| {
                v["type"] == "done" && v["id"].as_str().is_some_and(|i| i.starts_with('b'))
            })
            .await;
        assert_eq!(v["state"], "COMPLETED", "{v}");
        assert_eq!(v["artifacts"][0]["sha256"], sha(b"polled result"));
        burst.insert(v["id"].as_str().unwrap().to_string());
    }

    // Kill 6: a refinement (new task in k1's context) whose send landed without a reply: the
    // restart finds it with ListTasks by context instead of sending it again.
    net.queue_fault("poll", Method::SendMessage, LAND_THEN_HOLD, 1)
        .unwrap();
    let mut r = delegate("r1", "poll");
    r["refine_of"] = json!("k1");
    d.send(r).await;
    delegations += 1;
    let r1_create = message_id("r1", "create");
    support::wait_task_for(&net, "poll", &r1_create).await;
    d.crash().await;
    kills += 1;
    let lists_before = requests(&net, "poll", "ListTasks").len();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &agents, true, options.clone()).await;
    let o = d
        .until(20, |v| v["type"] == "done" && v["id"] == "r1")
        .await;
    assert_eq!(o["state"], "COMPLETED", "{o}");
    assert_eq!(requests(&net, "poll", "ListTasks").len(), lists_before + 1);
    let sends_of = |m: &str| {
        requests(&net, "poll", "SendMessage")
            .iter()
            .filter(|r| r.params["message"]["messageId"] == m)
            .count()
    };
    assert_eq!(sends_of(&r1_create), 1, "found by ListTasks, not resent");
    assert_eq!(o["context_id"], k1["context_id"]);

    d.send(json!({"type": "snapshot"})).await;
    let snap = d.until(10, |v| v["type"] == "snapshot_ok").await;
    d.close_stdin();
    assert!(d.wait_exit(20).await.success());

    let records = snap["records"].as_array().unwrap();
    let lost = records.iter().filter(|r| r["state"] != "COMPLETED").count();
    let dups = duplicates(&net);
    // k1's polled artifact is byte-exact too.
    let k1_rec = records.iter().find(|r| r["id"] == "k1").unwrap();
    assert_eq!(k1_rec["artifacts"][0]["sha256"], sha(b"polled result"));
    // Every send of one intent carried the same messageId.
    assert_eq!(
        sends_of(&k1_create),
        3,
        "k1 was sent three times, always with the same messageId"
    );
    let mut derived: Vec<String> = ["k1", "e1", "b0", "b1", "b2", "b3", "s0", "s1", "s2", "r1"]
        .iter()
        .map(|id| message_id(id, "create"))
        .collect();
    derived.push(message_id("e1", "input-1"));
    for r in net.journal().requests() {
        if let Some(m) = r.params["message"]["messageId"].as_str() {
            assert!(derived.iter().any(|d| d == m), "unexpected messageId {m}");
        }
    }
    let (poll_tasks, stream_tasks) = (tasks(&net, "poll").len(), tasks(&net, "stream").len());
    eprintln!(
        "crash test figures: kills={kills} delegations={delegations} lost={lost} duplicated={dups} \
         (tasks: poll={poll_tasks}, stream={stream_tasks})"
    );
    assert_eq!(records.len(), delegations);
    assert_eq!(lost, 0);
    assert_eq!(dups, 0);
    assert_eq!(poll_tasks, 1 + 1 + 4 + 1);
    assert_eq!(stream_tasks, 3);
}

/// Every byte of every file under `dir`.
fn bytes_under(dir: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all.extend(bytes_under(&p));
        } else {
            all.extend(std::fs::read(&p).unwrap());
        }
    }
    all
}

fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// A scoped credential lives in memory only: killed after the auth round was recorded and before
/// the agent took the answer, the restarted delegator asks its caller again, and continues the
/// task with the credential it gets; no file under the store ever held it.
#[tokio::test]
async fn an_auth_round_cut_by_a_kill_asks_for_the_credential_again() {
    const CRED: &str = "Bearer scoped-vault-secret-7";
    let vault = MockAgent::builder("vault")
        .skill("vault")
        .streaming(false)
        .push_notifications(false)
        .mount(
            MockAgent::when()
                .step(Step::auth_required(CRED))
                .step(chunk("v", "opened", false, true))
                .state(TaskState::Completed),
        );
    let net = network(vec![vault.build()]).await;
    let vault_card = card(&net, "vault");
    let options: Value = serde_json::from_str(OPTIONS).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &[vault_card.as_str()], false, options.clone())
        .await;
    d.send(delegate("a1", "vault")).await;
    d.until(20, |v| v["type"] == "escalate" && v["kind"] == "auth")
        .await;
    // The answer is recorded, then sent; the agent holds it unprocessed and the process dies.
    net.queue_fault("vault", Method::SendMessage, HOLD, 1)
        .unwrap();
    d.send(json!({"type": "credential", "id": "a1", "credential": CRED}))
        .await;
    support::wait_count(&net, "vault", "SendMessage", 2).await;
    d.crash().await;
    assert!(!holds(&bytes_under(store), "scoped-vault-secret"));

    let mut d = Driver::spawn(store, &[]);
    d.init(store, &[vault_card.as_str()], true, options).await;
    let again = d
        .until(20, |v| v["type"] == "escalate" && v["kind"] == "auth")
        .await;
    assert_eq!(again["id"], "a1");
    d.send(json!({"type": "credential", "id": "a1", "credential": CRED}))
        .await;
    let done = d
        .until(20, |v| v["type"] == "done" && v["id"] == "a1")
        .await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    d.send(json!({"type": "snapshot"})).await;
    let snap = d.until(10, |v| v["type"] == "snapshot_ok").await;
    d.close_stdin();
    assert!(d.wait_exit(20).await.success());
    // The continuation after the restart carried the credential, under the round's messageId.
    let sends = requests(&net, "vault", "SendMessage");
    let last = sends.last().unwrap();
    assert_eq!(last.header("authorization"), Some(CRED));
    assert_eq!(
        last.params["message"]["messageId"],
        json!(message_id("a1", "auth-1"))
    );
    assert!(!snap.to_string().contains("scoped-vault-secret"));
    assert!(!holds(&bytes_under(store), "scoped-vault-secret"));
}

/// Recovery of a refinement whose send landed without a reply finds its task with `ListTasks` in
/// the context the agent gave, following `nextPageToken` (the agent serves one task per page and
/// the task is on the second) percent-encoded over HTTP+JSON; the intent is not sent again.
#[tokio::test]
async fn recovery_follows_list_tasks_pages_over_http_json() {
    use a2a_mock_agents::Event;
    use a2a_protocol::Binding;
    let p = MockAgent::builder("p")
        .skill("poll")
        .skill("slow")
        .bindings([Binding::Rest])
        .streaming(false)
        .push_notifications(false)
        .list_page_size_max(1)
        .mount(
            MockAgent::when()
                .skill("poll")
                .step(chunk("out", "polled", false, true))
                .state(TaskState::Completed),
        )
        .mount(
            MockAgent::when()
                .skill("slow")
                .state(TaskState::Working)
                .step(Step::gate_within("later", Duration::from_secs(120)))
                .step(chunk("out", "slow", false, true))
                .state(TaskState::Completed),
        );
    let net = network(vec![p.build()]).await;
    let p_card = card(&net, "p");
    let options: Value = serde_json::from_str(OPTIONS).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let mut d = Driver::spawn(store, &[]);
    d.init(store, &[p_card.as_str()], false, options.clone())
        .await;
    d.send(delegate("k1", "poll")).await;
    let k1 = d
        .until(20, |v| v["type"] == "done" && v["id"] == "k1")
        .await;
    assert_eq!(k1["state"], "COMPLETED", "{k1}");
    // r1: a refinement in k1's context whose send lands, its reply held past the kill; it
    // completes at once on the agent.
    net.queue_fault("p", Method::SendMessage, LAND_THEN_HOLD, 1)
        .unwrap();
    let mut r1 = delegate("r1", "poll");
    r1["refine_of"] = json!("k1");
    d.send(r1).await;
    let r1_create = message_id("r1", "create");
    support::wait_task_for(&net, "p", &r1_create).await;
    let r1_task = tasks(&net, "p")
        .into_iter()
        .find(|(_, m)| *m == r1_create)
        .map(|(t, _)| t)
        .unwrap();
    support::wait_journal(&net, "r1's task completes", 10, |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::TaskState { task_id, state }
                if *task_id == r1_task && state == "TASK_STATE_COMPLETED")
        })
    })
    .await;
    // r2: another task in the same context, changed after r1's: listed first.
    let mut r2 = delegate("r2", "slow");
    r2["refine_of"] = json!("k1");
    d.send(r2).await;
    d.until(20, |v| {
        v["type"] == "state" && v["id"] == "r2" && v["task_id"].is_string()
    })
    .await;
    d.crash().await;
    let journal_at_restart = net.journal().len() as u64;

    let mut d = Driver::spawn(store, &[]);
    d.init(store, &[p_card.as_str()], true, options).await;
    let o = d
        .until(20, |v| v["type"] == "done" && v["id"] == "r1")
        .await;
    assert_eq!(o["state"], "COMPLETED", "{o}");
    assert_eq!(o["task_id"], json!(r1_task));
    net.open_gate("later");
    let o2 = d
        .until(20, |v| v["type"] == "done" && v["id"] == "r2")
        .await;
    assert_eq!(o2["state"], "COMPLETED", "{o2}");
    d.close_stdin();
    assert!(d.wait_exit(20).await.success());
    let sends_of_r1 = requests(&net, "p", "SendMessage")
        .iter()
        .filter(|r| r.params["message"]["messageId"] == json!(r1_create))
        .count();
    assert_eq!(sends_of_r1, 1, "found by ListTasks, not resent");
    // The pages: the first without a token, then each with the last page's token, encoded.
    let lists: Vec<(String, Value)> = net
        .journal()
        .entries()
        .into_iter()
        .filter(|e| e.seq > journal_at_restart)
        .filter_map(|e| match e.event {
            Event::Request {
                method: Some(m),
                path,
                params,
                ..
            } if m == "ListTasks" => Some((path, *params)),
            _ => None,
        })
        .collect();
    assert!(lists.len() >= 2, "{lists:?}");
    assert!(lists[0].1.get("pageToken").is_none());
    assert_eq!(lists[1].1["contextId"], k1["context_id"]);
    let token = lists[1].1["pageToken"].as_str().unwrap();
    assert!(token.contains(['+', '/', '=']), "a base64 token: {token}");
    let raw = lists[1].0.split("pageToken=").nth(1).unwrap();
    let raw = raw.split('&').next().unwrap();
    assert!(!raw.contains(['+', '/', '=']), "percent-encoded: {raw}");
}
