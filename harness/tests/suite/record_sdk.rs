//! Record to repro with a real peer: the official Python SDK agent (a2a-sdk 1.3.0,
//! `interop/sdk_agent.py --artifacts mixed`: artifacts of several sizes and part kinds, text,
//! raw, data and a UTF-8 sequence split across two raw chunks, each streamed in chunks)
//! recorded through `a2a-harness record` while the reference delegator works against it, over
//! each binding first in its card (gRPC on a port of its own, which the recorder proxies at a
//! listen address of its own), the journal converted with `scenario from-journal`, the scenario
//! run with the reference delegator. The replay's agent side (sends, errors, task states,
//! artifacts with their sha256, in order) must match the recording, the replay must pass,
//! `journal diff` must find no difference in agent behaviour, and each delegation must end as
//! it did through the proxy, with the same artifacts byte for byte (the sha256 pairs are
//! printed).
//!
//! Without `.venv` (or without grpcio in it) these tests skip with a message; with `CI` set they
//! fail instead (run `bash scripts/setup-python.sh`), as the other interop tests do.

use crate::common;
#[path = "../../../interop/sdk_agent.rs"]
mod sdk_agent;

use a2a_driver_contract::process::{DelegatorOutput, DelegatorProcess, init_message};
use a2a_driver_contract::{Delegate, InitOptions, ToDelegator};
use a2a_harness_core::catalog::load_case;
use a2a_harness_core::run::{RunOptions, run};
use a2a_harness_core::runner::Verdict;
use a2a_harness_record::from_journal::{ConvertOptions, convert, read_journal};
use a2a_harness_record::record::{RecordOptions, Recorder, UpstreamSpec};
use a2a_mock_agents::{Entry, Event};
use a2a_protocol::Binding;
use sdk_agent::SdkAgent;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The artifacts each SDK task gets with `--artifacts mixed`: `result` and five more.
const MIXED_ARTIFACTS: usize = 6;

/// Start the SDK agent with its card listing the bindings in `order` and every task getting
/// the mixed artifacts.
async fn sdk_agent(order: &str) -> Option<SdkAgent> {
    SdkAgent::start(&common::root(), &["--order", order, "--artifacts", "mixed"]).await
}

/// The reference delegator driven through the proxy's card URL with `delegations` (id,
/// streaming preferred); the `done` lines by delegation id.
async fn drive(
    card: &str,
    store: &std::path::Path,
    delegations: &[(&str, bool)],
) -> BTreeMap<String, Value> {
    let command = format!("{} drive", common::delegator().display());
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut p = DelegatorProcess::spawn(&command, stderr.clone()).expect("spawn delegator");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let options = InitOptions {
        seed: Some(1),
        ..InitOptions::default()
    };
    let init = init_message(
        &store.display().to_string(),
        false,
        &[card.to_string()],
        Some("http://127.0.0.1:0"),
        "http://127.0.0.1:9/delegator-under-test",
        "Bearer delegator-own-token",
        options,
    );
    p.send(&init, deadline).await.expect("init");
    let mut done = BTreeMap::new();
    while done.len() < delegations.len() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let v = match p.recv(left).await {
            Some(DelegatorOutput::Message(v)) => v,
            Some(DelegatorOutput::Eof) | None => panic!(
                "the delegator ended or timed out; stderr:\n{}",
                String::from_utf8_lossy(&stderr.lock().unwrap_or_else(|e| e.into_inner()))
            ),
            Some(_) => continue,
        };
        match v["type"].as_str() {
            Some("init_ok") => {
                for (id, streaming) in delegations {
                    let mut m = Delegate::new(*id, "work", format!("do the work for {id}"));
                    m.artifact_spec.mime_types = vec![
                        "text/plain".into(),
                        "application/octet-stream".into(),
                        "application/json".into(),
                    ];
                    m.artifact_spec.streaming_preferred = *streaming;
                    m.timeout_seconds = 30;
                    p.send(&ToDelegator::Delegate(m), deadline)
                        .await
                        .expect("delegate");
                }
            }
            Some("done") => {
                done.insert(v["id"].as_str().unwrap_or_default().to_string(), v);
            }
            _ => {}
        }
    }
    p.finish(Duration::from_secs(10)).await;
    done
}

/// The agent's side of a journal without ids, ports or timing: the sends it got (whether they
/// continued a task), its error answers, and for each task its life (creation and states in
/// order, then its artifacts with bytes and sha256 in order: a recorder learns an artifact
/// read back with the final task after that task's state). Polls and resubscriptions are the delegator's
/// timers, and how concurrent delegations interleave is timing: the sends and the tasks'
/// lives are compared as sorted lists.
fn agent_side(journal: &[Entry]) -> BTreeMap<&'static str, Vec<String>> {
    let mut sends = Vec::new();
    let mut errors = Vec::new();
    let mut tasks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut artifacts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in journal {
        match &e.event {
            Event::Request {
                method: Some(m),
                params,
                ..
            } if m.starts_with("Send") => sends.push(format!(
                "request {m}{}",
                if params.pointer("/message/taskId").is_some() {
                    " (continues)"
                } else {
                    ""
                }
            )),
            Event::Response {
                status,
                rpc_error,
                retry_after_s,
                ..
            } if *status >= 400 || rpc_error.is_some() => errors.push(format!(
                "response {status} {rpc_error:?} retry-after {retry_after_s:?}"
            )),
            Event::ConnectionDropped { phase, .. } => errors.push(format!("dropped {phase}")),
            Event::TaskCreated { task_id, dedup, .. } => tasks
                .entry(task_id.clone())
                .or_default()
                .push(format!("created dedup={dedup}")),
            Event::TaskState { task_id, state, .. } => tasks
                .entry(task_id.clone())
                .or_default()
                .push(format!("state {state}")),
            Event::ArtifactSent {
                task_id,
                bytes,
                sha256,
                ..
            } => artifacts
                .entry(task_id.clone())
                .or_default()
                .push(format!("artifact {bytes} bytes sha256 {sha256}")),
            _ => {}
        }
    }
    sends.sort();
    let mut lives: Vec<String> = tasks
        .into_iter()
        .map(|(t, l)| {
            let a = artifacts.remove(&t).unwrap_or_default();
            format!("{}; {}", l.join(", "), a.join(", "))
        })
        .collect();
    // Artifacts of a task whose creation the journal does not hold.
    lives.extend(
        artifacts
            .into_values()
            .map(|a| format!("; {}", a.join(", "))),
    );
    lives.sort();
    BTreeMap::from([("sends", sends), ("errors", errors), ("tasks", lives)])
}

/// Record the SDK agent (card order `order`) through the proxy with `delegations`, convert,
/// replay, compare.
async fn round_trip(order: &str, delegations: &[(&str, bool)]) {
    let Some(agent) = sdk_agent(order).await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("recording");
    let upstream = UpstreamSpec {
        url: agent.card_url.clone(),
        listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let rec = Recorder::start(&[upstream], RecordOptions::new(&out))
        .await
        .expect("recorder");
    let card = rec.agents()[0].card_url();
    let done = drive(&card, &out.join("store"), delegations).await;
    let path = rec.journal().path().to_path_buf();
    rec.shutdown().await;
    drop(agent);
    for (id, d) in &done {
        assert_eq!(d["state"], "COMPLETED", "{id} through the proxy: {d}");
        assert_eq!(
            shas(d).len(),
            MIXED_ARTIFACTS,
            "{id} through the proxy: {d}"
        );
    }

    let journal = read_journal(&path).expect("the recording reads");
    // The delegator took the card's first interface, and the proxy saw every send on it (gRPC
    // included, on its own port: a send the proxy did not see would be missing here).
    let first = match order.split(',').next() {
        Some("grpc") => Binding::Grpc,
        Some("rest") => Binding::Rest,
        _ => Binding::JsonRpc,
    };
    let sent: Vec<Binding> = journal
        .entries()
        .filter_map(|e| match &e.event {
            Event::Request {
                binding,
                method: Some(m),
                ..
            } if m.starts_with("Send") => Some(*binding),
            _ => None,
        })
        .collect();
    assert!(
        sent.len() >= delegations.len() && sent.iter().all(|b| *b == first),
        "every send recorded, over {first:?}: {sent:?}"
    );
    let id = format!("sdk.{}", order.replace(',', "-"));
    let c = convert(
        &journal,
        &ConvertOptions {
            id: Some(id.clone()),
            ..Default::default()
        },
    );
    assert!(
        c.unsupported.is_empty(),
        "{:?}\n{}\n{}",
        c.unsupported,
        c.toml,
        std::fs::read_to_string(&path).unwrap_or_default()
    );
    let file = dir.path().join("case.toml");
    c.write(&file).expect("write");
    let scenario = load_case(&file).unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    eprintln!(
        "scenario {id}: {} bytes, {} agent(s), rules {:?}, {} delegation(s)",
        c.toml.len(),
        scenario.network.agents.len(),
        scenario.rules,
        scenario.delegations.len()
    );
    assert_eq!(scenario.delegations.len(), delegations.len(), "{}", c.toml);
    let recorded: Vec<Entry> = journal.entries().cloned().collect();

    let replayed = run(
        std::slice::from_ref(&scenario),
        &RunOptions::new(format!("{} drive", common::delegator().display())),
    )
    .await;
    let replay = &replayed.results[0];
    assert_eq!(
        replay.verdict,
        Verdict::Pass,
        "{:?} {:?}\n{}",
        replay.notes,
        replay
            .rules
            .iter()
            .filter(|v| v.verdict != Verdict::Pass)
            .map(|v| (&v.id, v.verdict, &v.observed))
            .collect::<Vec<_>>(),
        c.toml
    );
    let (was, now) = (agent_side(&recorded), agent_side(&replay.journal));
    assert!(
        was["tasks"].len() == delegations.len()
            && was["tasks"].iter().all(|t| t.contains("; artifact ")),
        "the recording holds the SDK's artifact: {was:?}"
    );
    assert_eq!(was, now, "the agent's side differs\n{}", c.toml);
    // The sha256 of every artifact, recorded and replayed, side by side.
    let (a, b) = (
        common::artifacts_sent(&recorded),
        common::artifacts_sent(&replay.journal),
    );
    for (i, ((_, id, bytes, sha), (_, _, _, again))) in a.iter().zip(&b).enumerate() {
        eprintln!("{order} artifact {i} {id} {bytes} bytes: recorded {sha} replayed {again}");
    }
    assert_eq!(
        a, b,
        "artifact bytes differ between the recording and the replay"
    );
    assert_eq!(a.len(), delegations.len() * MIXED_ARTIFACTS, "{a:?}");
    // `journal diff --agent-behaviour RECORDING REPLAY`: the replayed agent is the recorded one.
    let replay_file = dir.path().join("replay.jsonl");
    let lines: Vec<String> = replay
        .journal
        .iter()
        .map(|e| serde_json::to_string(e).expect("an entry serialises"))
        .collect();
    std::fs::write(&replay_file, lines.join("\n")).expect("write the replay's journal");
    let o = std::process::Command::new(common::harness())
        .args(["journal", "diff", "--agent-behaviour"])
        .arg(&path)
        .arg(&replay_file)
        .output()
        .expect("run journal diff");
    let said = String::from_utf8_lossy(&o.stdout);
    eprintln!("{order}: journal diff --agent-behaviour: {said}");
    assert!(
        o.status.success() && said.starts_with("no difference in agent behaviour"),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Each delegation ends as it did through the proxy, with the same artifact bytes.
    let outcomes: Vec<Value> = replay
        .outcomes
        .values()
        .filter_map(|o| serde_json::to_value(o).ok())
        .collect();
    for (d, v) in &done {
        let replayed = outcomes
            .iter()
            .find(|o| o.get("state") == v.get("state") && same_artifacts(o, v))
            .is_some();
        assert!(
            replayed,
            "delegation {d} ended {v} through the proxy; the replay's outcomes: {outcomes:?}"
        );
    }
}

/// The artifacts' sha256 values of a `done` line or an outcome, sorted.
fn shas(v: &Value) -> Vec<String> {
    let mut s: Vec<String> = v
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| a.get("sha256").and_then(Value::as_str).map(str::to_string))
        .collect();
    s.sort();
    s
}

fn same_artifacts(a: &Value, b: &Value) -> bool {
    shas(a) == shas(b)
}

/// HTTP+JSON first: one streamed (SSE) and one polled delegation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_agent_over_http_json_recorded_and_replayed() {
    round_trip(
        "rest,jsonrpc,grpc",
        &[("streamed", true), ("polled", false)],
    )
    .await;
}

/// JSON-RPC first: a streamed delegation (SSE through the proxy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_agent_over_jsonrpc_recorded_and_replayed() {
    round_trip("jsonrpc,rest,grpc", &[("streamed", true)]).await;
}

/// gRPC first: the SDK agent serves gRPC on a port of its own, another origin than its card's;
/// the recorder proxies it at a listen address of its own and journals it under the same agent.
/// One streamed and one polled delegation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_agent_over_grpc_on_its_own_port_recorded_and_replayed() {
    round_trip(
        "grpc,rest,jsonrpc",
        &[("streamed", true), ("polled", false)],
    )
    .await;
}
