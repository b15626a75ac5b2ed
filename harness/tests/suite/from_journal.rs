//! `scenario from-journal`: catalog cases run with the reference delegator, their journals
//! converted to scenarios, the scenarios run again; the agents' side of the new journals must
//! match the recorded ones (methods, states, artifacts, errors and faults, in order) and the
//! verdicts must be the same. Also: an unsupported construct yields a TODO and a loadable
//! file; a malformed journal line is an error naming it.

use crate::common;

use a2a_harness_core::catalog::{CaseGlob, load_case, load_catalog, select};
use a2a_harness_core::run::{RunOptions, run};
use a2a_harness_core::runner::{CaseResult, Verdict};
use a2a_harness_record::from_journal::{
    ConvertOptions, LITERAL_MAX_BYTES, Record, RecordedJournal, convert, read_journal,
};
use a2a_harness_record::record::{RecordOptions, Recorder, UpstreamSpec};
use a2a_mock_agents::{Entry, Event};
use std::collections::BTreeMap;
use std::process::Command;

/// Cases of varied constructs: states with a status message, a chunked artifact, an input
/// round, a Message reply, a JSON-RPC error, a 429, a stream reset, a stalled send, a lost
/// response (indefinite send, deduplicated resend).
const CASES: &str = "{states.completed,states.failed,interrupted.input-escalated,sending.direct-message,errors.internal-error,retries.429-retry-after,observation.stream-reset,hostile.stall-unary,retries.indefinite-send}";

fn delegator() -> String {
    format!("{} drive", common::delegator().display())
}

/// The agents' side of a journal without ids, ports or timing: per agent, its transport (the
/// sends it got, its errors, faults, cuts and drops) and its tasks (creations, states,
/// continuations, chunks, artifacts), each in order. How the two interleave is timing.
fn agent_side(journal: &[Entry]) -> BTreeMap<(String, &'static str), Vec<String>> {
    let mut out: BTreeMap<(String, &'static str), Vec<String>> = BTreeMap::new();
    // Streams whose last event was a Message: a recorder names their end `upstream_closed`.
    let mut ended_by_message: std::collections::BTreeSet<(String, u64)> = Default::default();
    for e in journal {
        if let Event::SseEvent { req, data, .. } = &e.event {
            let message = data.get("result").unwrap_or(data).get("message").is_some();
            let key = (e.agent.to_string(), *req);
            if message {
                ended_by_message.insert(key);
            } else {
                ended_by_message.remove(&key);
            }
        }
        let side = match &e.event {
            Event::TaskCreated { .. }
            | Event::TaskState { .. }
            | Event::Continued { .. }
            | Event::ArtifactChunk { .. }
            | Event::ArtifactSent { .. } => "tasks",
            _ => "transport",
        };
        let item = match &e.event {
            // Sends are the delegator's and the agent's script keys off them; the number of
            // polls and resubscriptions depends on the delegator's timers, not the agent.
            Event::Request {
                method: Some(m), ..
            } if m.starts_with("Send") => {
                let continues = matches!(&e.event, Event::Request { params, .. } if params.pointer("/message/taskId").is_some());
                Some(format!(
                    "request {m}{}",
                    if continues { " (continues)" } else { "" }
                ))
            }
            Event::Response {
                status,
                rpc_error,
                retry_after_s,
                ..
            } if *status >= 400 || rpc_error.is_some() => Some(format!(
                "response {status} {rpc_error:?} retry-after {retry_after_s:?}"
            )),
            // A stream the agent ended early, as the mock and as a recorder name it.
            Event::StreamClosed {
                req,
                events,
                reason,
            } if reason == "fault"
                || (reason == "upstream_closed"
                    && !ended_by_message.contains(&(e.agent.to_string(), *req))) =>
            {
                Some(format!("stream cut after {events} events"))
            }
            Event::ConnectionDropped { phase, .. } => Some(format!("dropped {phase}")),
            Event::Fault { kind, .. } => Some(format!("fault {kind}")),
            Event::TaskCreated { dedup, .. } => Some(format!("task created dedup={dedup}")),
            Event::TaskState { state, .. } => Some(format!("state {state}")),
            Event::Continued { outcome, .. } => Some(format!("continued {outcome}")),
            Event::ArtifactChunk {
                append,
                last_chunk,
                bytes,
                ..
            } => Some(format!("chunk {bytes} append={append} last={last_chunk}")),
            Event::ArtifactSent { bytes, sha256, .. } => Some(if *bytes <= LITERAL_MAX_BYTES {
                format!("artifact {bytes} bytes sha256 {sha256}")
            } else {
                format!("artifact {bytes} bytes (generated)")
            }),
            _ => None,
        };
        if let Some(i) = item {
            out.entry((e.agent.to_string(), side)).or_default().push(i);
        }
    }
    out
}

fn verdicts(r: &CaseResult) -> BTreeMap<String, Verdict> {
    r.rules.iter().map(|v| (v.id.clone(), v.verdict)).collect()
}

fn describe(r: &CaseResult) -> String {
    format!(
        "{} {:?} notes {:?} rules {:?}",
        r.id,
        r.verdict,
        r.notes,
        r.rules
            .iter()
            .filter(|v| v.verdict != Verdict::Pass)
            .map(|v| (&v.id, v.verdict, &v.observed))
            .collect::<Vec<_>>()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn recorded_cases_replay_with_the_same_agent_traffic_and_verdicts() {
    let catalog = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    let cases = select(&catalog, &CaseGlob::new(CASES).expect("glob"));
    assert_eq!(cases.len(), 9, "the case list names catalog cases");
    let mut options = RunOptions::new(delegator());
    options.jobs = 4;
    let recorded = run(&cases, &options).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut converted = Vec::new();
    for r in &recorded.results {
        assert_eq!(r.verdict, Verdict::Pass, "{}", describe(r));
        let journal = RecordedJournal {
            source: format!("{}.json", r.id),
            case_id: Some(r.id.clone()),
            records: r.journal.iter().cloned().map(Record::Entry).collect(),
        };
        let c = convert(&journal, &ConvertOptions::default());
        assert!(
            c.unsupported.is_empty(),
            "{}: {:?}\n{}",
            r.id,
            c.unsupported,
            c.toml
        );
        if r.id == "retries.429-retry-after" {
            assert!(
                c.toml.contains("retry_after_s = 1"),
                "the 429's Retry-After comes back from the journal:\n{}",
                c.toml
            );
        }
        let file = dir.path().join(format!("{}.toml", r.id));
        c.write(&file).expect("write");
        let mut s = load_case(&file).unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
        assert_eq!(s.id, format!("{}.replay", r.id));
        // The delegator's own configuration (`init.options`, such as a request timeout) is not
        // traffic: no journal holds it. The user edits it in; so does this test.
        let case = cases.iter().find(|c| c.id == r.id).expect("the case ran");
        s.options = case.options.clone();
        converted.push((r, s, c.toml));
    }
    let scenarios: Vec<_> = converted.iter().map(|(_, s, _)| s.clone()).collect();
    let replayed = run(&scenarios, &options).await;
    let mut problems: Vec<String> = Vec::new();
    for (orig, _, toml) in &converted {
        let replay = replayed
            .results
            .iter()
            .find(|x| x.id == format!("{}.replay", orig.id))
            .expect("every converted case ran");
        agent_behaviour_kept(&orig.id, &orig.journal, &replay.journal, &mut problems);
        let (was, now) = (agent_side(&orig.journal), agent_side(&replay.journal));
        if was != now {
            problems.push(format!(
                "{}: the agents' side differs\nrecorded: {was:?}\nreplayed: {now:?}\n{toml}",
                orig.id
            ));
        }
        if replay.verdict != orig.verdict {
            problems.push(format!("verdict differs: {}\n{toml}", describe(replay)));
        }
        let (a, b) = (verdicts(orig), verdicts(replay));
        for (rule, v) in &a {
            if let Some(w) = b.get(rule).filter(|w| *w != v) {
                problems.push(format!(
                    "{}: {rule} was {v:?}, is {w:?}: {}",
                    orig.id,
                    describe(replay)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Record a case: its network behind the recording proxies, the reference delegator driven
/// through them; the journal's path (under `out`) and the `done` lines by delegation id.
async fn record_case(
    s: &a2a_harness_core::scenario::Scenario,
    out: &std::path::Path,
) -> (std::path::PathBuf, BTreeMap<String, serde_json::Value>) {
    let net = a2a_mock_agents::Network::start(s.network.clone())
        .await
        .expect("network");
    let upstreams: Vec<UpstreamSpec> = net
        .names()
        .map(|n| UpstreamSpec {
            url: net.card_url(n).expect("card url"),
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        })
        .collect();
    let rec = Recorder::start(&upstreams, RecordOptions::new(out))
        .await
        .expect("recorder");
    let cards: Vec<String> = rec.agents().iter().map(|a| a.card_url()).collect();
    let done = drive_through(&cards, &out.join("store"), s).await;
    let path = rec.journal().path().to_path_buf();
    rec.shutdown().await;
    net.shutdown().await;
    (path, done)
}

/// The reference delegator driven through the recording proxies (`cards`) with the case's
/// delegations, as the harness would start it; the `done` lines by delegation id.
async fn drive_through(
    cards: &[String],
    store: &std::path::Path,
    s: &a2a_harness_core::scenario::Scenario,
) -> BTreeMap<String, serde_json::Value> {
    use a2a_driver_contract::process::{DelegatorOutput, DelegatorProcess, init_message};
    use a2a_driver_contract::{Delegate, InitOptions, ToDelegator};
    let wait = std::time::Duration::from_secs(60);
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut p = DelegatorProcess::spawn(&delegator(), stderr.clone()).expect("spawn delegator");
    let deadline = tokio::time::Instant::now() + wait;
    let options = InitOptions {
        seed: Some(1),
        ..InitOptions::default()
    };
    let init = init_message(
        &store.display().to_string(),
        false,
        cards,
        Some("http://127.0.0.1:0"),
        "http://127.0.0.1:9/delegator-under-test",
        "Bearer delegator-own-token",
        options,
    );
    p.send(&init, deadline).await.expect("init");
    let mut done = BTreeMap::new();
    while done.len() < s.delegations.len() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let v = match p.recv(left).await {
            Some(DelegatorOutput::Message(v)) => v,
            Some(DelegatorOutput::Eof) | None => panic!(
                "{}: the delegator ended or timed out; stderr:\n{}",
                s.id,
                String::from_utf8_lossy(&stderr.lock().unwrap_or_else(|e| e.into_inner()))
            ),
            Some(_) => continue,
        };
        match v["type"].as_str() {
            Some("init_ok") => {
                for d in &s.delegations {
                    let mut m = Delegate::new(&d.id, &d.capability, &d.text);
                    m.artifact_spec.mime_types = d.mime_types.clone();
                    m.artifact_spec.max_size_bytes = d.max_size_bytes;
                    m.timeout_seconds = d.timeout_seconds;
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
    p.finish(std::time::Duration::from_secs(10)).await;
    done
}

/// The agents' side as both a recording proxy and a mock network journal it. What the proxy
/// cannot see is left out: the mock's `fault` entries (their effects are compared) and, for an
/// agent whose chunks the delegator never saw (it read the artifact back from the final task),
/// the chunks (the artifact's bytes are compared). The ways each names a dropped connection are
/// made one, and a task's states and its artifacts are compared each in order (a recorder learns
/// an artifact read back with the final task after its state).
fn agent_side_seen_through_a_proxy(
    recorded: &[Entry],
    journal: &[Entry],
) -> BTreeMap<(String, &'static str), Vec<String>> {
    let saw_chunks: std::collections::BTreeSet<String> = recorded
        .iter()
        .filter(|e| matches!(e.event, Event::ArtifactChunk { .. }))
        .map(|e| e.agent.to_string())
        .collect();
    let mut out: BTreeMap<(String, &'static str), Vec<String>> = BTreeMap::new();
    for ((agent, side), items) in agent_side(journal) {
        for i in items {
            if i.starts_with("fault ") || (i.starts_with("chunk ") && !saw_chunks.contains(&agent))
            {
                continue;
            }
            let i = match i.as_str() {
                "dropped before_processing"
                | "dropped after_processing"
                | "dropped before_response" => "dropped before a response".to_string(),
                _ => i,
            };
            let side = match side {
                "tasks" if i.starts_with("chunk ") || i.starts_with("artifact ") => "artifacts",
                other => other,
            };
            out.entry((agent.clone(), side)).or_default().push(i);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_recorded_through_the_proxy_replays_with_the_same_agent_traffic() {
    let catalog = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    let cases = select(
        &catalog,
        &CaseGlob::new("{states.completed,observation.stream-reset,observation.stream-closed-early,retries.429-retry-after,sending.direct-message,errors.internal-error}").expect("glob"),
    );
    assert_eq!(cases.len(), 6);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut scenarios = Vec::new();
    let mut recorded = Vec::new();
    for s in &cases {
        // Record: the case's network behind the proxy, the reference delegator in front.
        let out = dir.path().join(&s.id);
        let (path, done) = record_case(s, &out).await;
        // Convert the recording, as `scenario from-journal` does.
        let journal = read_journal(&path).expect("the recording reads");
        let c = convert(
            &journal,
            &ConvertOptions {
                id: Some(format!("{}.recorded", s.id)),
                ..Default::default()
            },
        );
        if s.id == "retries.429-retry-after" {
            assert!(
                c.toml.contains("retry_after_s = 1"),
                "the recorder journals the 429's Retry-After:\n{}",
                c.toml
            );
        }
        let file = dir.path().join(format!("{}.toml", s.id));
        c.write(&file).expect("write");
        let scenario = load_case(&file).unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
        let entries: Vec<Entry> = journal.entries().cloned().collect();
        recorded.push((s.id.clone(), done, entries, c.toml));
        scenarios.push(scenario);
    }
    let mut options = RunOptions::new(delegator());
    options.jobs = 4;
    let replayed = run(&scenarios, &options).await;
    let mut problems: Vec<String> = Vec::new();
    for (id, done, entries, toml) in &recorded {
        let replay = replayed
            .results
            .iter()
            .find(|r| r.id == format!("{id}.recorded"))
            .expect("every converted case ran");
        agent_behaviour_kept(id, entries, &replay.journal, &mut problems);
        let (was, now) = (
            agent_side_seen_through_a_proxy(entries, entries),
            agent_side_seen_through_a_proxy(entries, &replay.journal),
        );
        if was != now {
            problems.push(format!(
                "{id}: the agents' side differs\nrecorded: {was:?}\nreplayed: {now:?}\n{toml}"
            ));
        }
        // The same verdict as the catalog case (every one of these passes), and the outcome
        // the delegator reported through the proxy.
        if replay.verdict != Verdict::Pass {
            problems.push(format!("{}\n{toml}", describe(replay)));
        }
        for (d, v) in done {
            let state = replay
                .outcomes
                .get(d)
                .and_then(|o| serde_json::to_value(o).ok())
                .and_then(|o| o.get("state").cloned());
            if state.as_ref() != v.get("state") {
                problems.push(format!(
                    "{id}: delegation {d} ended {:?} through the proxy, {state:?} in the replay",
                    v.get("state")
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Issue 26: `journal diff --agent-behaviour RECORDING REPLAY` finds no difference (the
/// replayed agents did what the recorded ones did); the first difference otherwise.
fn agent_behaviour_kept(
    id: &str,
    recorded: &[Entry],
    replayed: &[Entry],
    problems: &mut Vec<String>,
) {
    if let Some(d) = a2a_journal_diff::compare_agent_behaviour(recorded, replayed) {
        problems.push(format!(
            "{id}: the agents' behaviour differs in the replay\n{d}"
        ));
    }
}

/// A small journal in the mock network's format, as JSON lines.
fn line(seq: u64, event: serde_json::Value) -> String {
    let mut v = serde_json::json!({"seq": seq, "at_us": seq * 1000, "agent": "svc"});
    if let (Some(o), serde_json::Value::Object(e)) = (v.as_object_mut(), event) {
        o.extend(e);
    }
    v.to_string()
}

fn send(seq: u64, req: u64, text: &str) -> String {
    line(
        seq,
        serde_json::json!({"event": "request", "req": req, "binding": "jsonrpc", "http_method": "POST", "path": "/a2a",
            "method": "SendMessage", "params": {"message": {"messageId": "m1", "role": "ROLE_USER",
            "metadata": {"skill": "lookup"}, "parts": [{"text": text}]}}, "headers": {}}),
    )
}

#[test]
fn an_unsupported_construct_becomes_a_todo_and_the_file_still_loads() {
    let journal = [
        send(1, 1, "Look it up"),
        line(
            2,
            serde_json::json!({"event": "task_created", "task_id": "t1", "context_id": "c1", "message_id": "m1"}),
        ),
        line(
            3,
            serde_json::json!({"event": "task_state", "task_id": "t1", "state": "TASK_STATE_SUBMITTED"}),
        ),
        line(
            4,
            serde_json::json!({"event": "response", "req": 1, "status": 200, "body": {"result": {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}}}),
        ),
        line(
            5,
            serde_json::json!({"event": "request", "req": 2, "binding": "jsonrpc", "http_method": "POST", "path": "/a2a", "method": "GetTask", "params": {"id": "t1"}, "headers": {}}),
        ),
        line(
            6,
            serde_json::json!({"event": "response", "req": 2, "status": 200, "body": {"result": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}}),
        ),
        // A 503 on the second GetTask: a queued fault would hit the first one.
        line(
            7,
            serde_json::json!({"event": "request", "req": 3, "binding": "jsonrpc", "http_method": "POST", "path": "/a2a", "method": "GetTask", "params": {"id": "t1"}, "headers": {}}),
        ),
        line(
            8,
            serde_json::json!({"event": "response", "req": 3, "status": 503, "body": null}),
        ),
        line(
            9,
            serde_json::json!({"event": "task_state", "task_id": "t1", "state": "TASK_STATE_COMPLETED"}),
        ),
        line(10, serde_json::json!({"event": "mystery", "text": "?"})),
    ]
    .join("\n");
    let dir = tempfile::tempdir().expect("temp dir");
    let jfile = dir.path().join("odd.jsonl");
    std::fs::write(&jfile, &journal).expect("write");
    let j = read_journal(&jfile).expect("reads");
    let c = convert(&j, &ConvertOptions::default());
    let seqs: Vec<u64> = c.unsupported.iter().map(|u| u.seq).collect();
    assert_eq!(seqs, vec![7, 10], "{:?}", c.unsupported);
    assert!(c.unsupported.iter().all(|u| u.agent == "svc"));
    assert!(
        c.unsupported[0]
            .to_string()
            .starts_with("seq 7 (agent svc): GetTask")
    );
    assert!(c.toml.contains("# TODO (seq 7): GetTask"), "{}", c.toml);
    assert!(
        c.toml
            .contains("# TODO (seq 10): journal event \"mystery\""),
        "{}",
        c.toml
    );
    // Written through the CLI: the TODOs on stderr, the file loads with the catalog loader.
    let out_dir = dir.path().join("cases");
    std::fs::create_dir(&out_dir).expect("mkdir");
    let case = out_dir.join("odd.toml");
    let o = Command::new(common::harness())
        .args(["scenario", "from-journal"])
        .arg(&jfile)
        .arg("--out")
        .arg(&case)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("seq 7 (agent svc)") && stderr.contains("seq 10 (agent svc)"),
        "{stderr}"
    );
    let s = load_case(&case).expect("loads");
    assert_eq!(s.id, "recorded.odd");
    assert_eq!(s.delegations.len(), 1);
    assert_eq!(s.delegations[0].capability, "lookup");
    let listed = Command::new(common::harness())
        .args(["list", "--no-builtin", "--scenarios"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    assert!(listed.status.success());
    assert!(String::from_utf8_lossy(&listed.stdout).contains("recorded.odd"));
}

#[test]
fn a_recorded_card_gives_the_agent_its_card() {
    let card = serde_json::json!({
        "name": "translator",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:1/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": false, "pushNotifications": true},
        "defaultOutputModes": ["text/markdown"],
        "skills": [{"id": "translate", "outputModes": ["text/markdown"], "tags": ["lang"]}]
    });
    let journal = [
        line(
            1,
            serde_json::json!({"event": "request", "req": 1, "binding": "jsonrpc", "http_method": "GET", "path": "/.well-known/agent-card.json", "params": null, "headers": {}}),
        ),
        line(
            2,
            serde_json::json!({"event": "response", "req": 1, "status": 200, "body": card}),
        ),
        line(
            3,
            serde_json::json!({"event": "request", "req": 2, "binding": "rest", "http_method": "POST", "path": "/rest/message:send",
                "method": "SendMessage", "params": {"message": {"messageId": "m1", "role": "ROLE_USER",
                "metadata": {"skill": "translate"}, "parts": [{"text": "Translate this"}]}}, "headers": {}}),
        ),
        line(
            4,
            serde_json::json!({"event": "response", "req": 2, "status": 200, "body": {"result": {"message": {"messageId": "r1", "role": "ROLE_AGENT", "parts": [{"text": "Traduis ceci"}]}}}}),
        ),
    ]
    .join("\n");
    let dir = tempfile::tempdir().expect("temp dir");
    let jfile = dir.path().join("card.jsonl");
    std::fs::write(&jfile, &journal).expect("write");
    let c = convert(
        &read_journal(&jfile).expect("reads"),
        &ConvertOptions {
            id: Some("my.case".into()),
            ..Default::default()
        },
    );
    assert!(c.unsupported.is_empty(), "{:?}", c.unsupported);
    let file = dir.path().join("case.toml");
    c.write(&file).expect("write");
    let s = load_case(&file).unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    assert_eq!(s.id, "my.case");
    let a = &s.network.agents[0];
    assert!(!a.streaming, "{}", c.toml);
    assert_eq!(
        a.bindings,
        Some(vec![
            a2a_protocol::Binding::Rest,
            a2a_protocol::Binding::JsonRpc
        ])
    );
    assert_eq!(a.output_modes, vec!["text/markdown".to_string()]);
    assert_eq!(a.skills[0].id, "translate");
    assert_eq!(a.skills[0].output_modes, vec!["text/markdown".to_string()]);
    assert_eq!(a.skills[0].tags, vec!["lang".to_string()]);
    assert!(
        matches!(&a.rules[0].steps[..], [a2a_mock_agents::ScriptStep::Reply { text, .. }] if text == "Traduis ceci"),
        "{}",
        c.toml
    );
    assert!(!s.delegations[0].streaming_preferred);
    assert_eq!(
        s.delegations[0].expect.state,
        vec![a2a_driver_contract::Outcome::AnsweredDirect]
    );
    assert!(
        s.rules.contains(&"DLG-SEND-05".to_string()),
        "{:?}",
        s.rules
    );
}

#[test]
fn a_malformed_journal_line_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let jfile = dir.path().join("bad.jsonl");
    std::fs::write(
        &jfile,
        format!("{}\n{{\"seq\": 2, \"agent\": \"svc\"\n", send(1, 1, "x")),
    )
    .expect("write");
    let out = dir.path().join("case.toml");
    let o = Command::new(common::harness())
        .args(["scenario", "from-journal"])
        .arg(&jfile)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!("{}:2: not JSON", jfile.display())),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written on a bad journal");
}

/// The steps of an agent streaming artifacts of several sizes and part kinds: a 4,000-byte text
/// in four chunks of 1,000 (each under the journal's 4,096-byte inline bound), raw bytes with a
/// UTF-8 sequence split across two chunks, a data value holding a `null` (TOML has none), a large
/// data value, a small text with a media type, and one chunk of a text and a raw part. The raw
/// and data contents are part files beside the scenario (written to `dir`); and 9,000 raw bytes
/// in one part, over the journal's inline bound for strings.
fn artifact_steps(dir: &std::path::Path) -> String {
    let text: String = (0..4000)
        .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
        .collect();
    let chunk = |i: usize| &text[i * 1000..(i + 1) * 1000];
    // "€" is e2 82 ac: the first chunk ends inside it.
    let mut first = vec![b'x'; 699];
    first.extend([0xe2, 0x82]);
    let mut second = vec![0xac];
    second.extend((0..700u32).map(|i| (i % 251) as u8));
    let parts = dir.join("source.d");
    std::fs::create_dir_all(&parts).expect("mkdir");
    std::fs::write(parts.join("split-1.bin"), &first).expect("write");
    std::fs::write(parts.join("split-2.bin"), &second).expect("write");
    std::fs::write(
        parts.join("null.json"),
        r#"{"ok": true, "missing": null, "list": [1, 2.5, "x", null]}"#,
    )
    .expect("write");
    let big: Vec<serde_json::Value> = (0..80)
        .map(|i| serde_json::json!({"row": i, "name": format!("item {i}")}))
        .collect();
    std::fs::write(
        parts.join("big.json"),
        serde_json::to_vec(&serde_json::json!({"rows": big})).expect("json"),
    )
    .expect("write");
    std::fs::write(parts.join("mixed.bin"), [0u8, 1, 2, 0xff, 0xfe]).expect("write");
    // 9,000 bytes in one part: over the journal's 4,096-byte inline bound, kept whole by
    // `record`'s artifact budget.
    let big_raw: Vec<u8> = (0..9000u32).map(|i| (i * 31 % 256) as u8).collect();
    std::fs::write(parts.join("big.bin"), big_raw).expect("write");
    format!(
        r#"steps = [
  {{ do = "state", state = "TASK_STATE_WORKING" }},
  {{ do = "artifact", artifact_id = "text-4000", chunks = [[{{ text = "{}" }}], [{{ text = "{}" }}], [{{ text = "{}" }}], [{{ text = "{}" }}]] }},
  {{ do = "artifact", artifact_id = "raw-split-utf8", chunks = [[{{ raw_file = "source.d/split-1.bin", media_type = "application/octet-stream" }}], [{{ raw_file = "source.d/split-2.bin" }}]] }},
  {{ do = "artifact", artifact_id = "data-null", parts = [{{ data_file = "source.d/null.json" }}] }},
  {{ do = "artifact", artifact_id = "data-big", chunks = [[{{ data_file = "source.d/big.json" }}], [{{ text = "end" }}]] }},
  {{ do = "artifact", artifact_id = "small", parts = [{{ text = "héllo wörld", media_type = "text/plain", filename = "hi.txt" }}] }},
  {{ do = "artifact", artifact_id = "mixed", parts = [{{ text = "head" }}, {{ raw_file = "source.d/mixed.bin" }}] }},
  {{ do = "artifact", artifact_id = "raw-9000", parts = [{{ raw_file = "source.d/big.bin", filename = "big.bin" }}] }},
  {{ do = "state", state = "TASK_STATE_COMPLETED" }},
]
"#,
        chunk(0),
        chunk(1),
        chunk(2),
        chunk(3)
    )
}

/// Issue 26: bytes recorded are bytes replayed. Agents serving JSON-RPC, HTTP+JSON and gRPC
/// stream artifacts of several sizes and part kinds through the recording proxy to the
/// reference delegator; the recording is converted and replayed; every artifact's sha256 in the
/// replay equals the recording's.
#[tokio::test(flavor = "multi_thread")]
async fn recorded_artifact_bytes_are_replayed_byte_for_byte_over_every_binding() {
    let dir = tempfile::tempdir().expect("temp dir");
    let steps = artifact_steps(dir.path());
    let mut text = String::from(
        "id = \"repro.bytes\"\ntitle = \"bytes\"\nrules = [\"DLG-ART-08\"]\n[network]\nseed = 3\n",
    );
    for b in ["jsonrpc", "rest", "grpc"] {
        text.push_str(&format!(
            "[[network.agent]]\nname = \"{b}\"\nbindings = [\"{b}\"]\n[[network.agent.skill]]\nid = \"files-{b}\"\n[[network.agent.rule]]\n{steps}"
        ));
    }
    for b in ["jsonrpc", "rest", "grpc"] {
        text.push_str(&format!(
            "[[delegate]]\nid = \"d-{b}\"\ncapability = \"files-{b}\"\ntext = \"fetch the files over {b}\"\n"
        ));
    }
    let source = dir.path().join("source.toml");
    std::fs::write(&source, &text).expect("write");
    let s = load_case(&source).unwrap_or_else(|e| panic!("{e}"));
    // Record: the network behind the proxy, the reference delegator in front.
    let out = dir.path().join("rec");
    let (path, done) = record_case(&s, &out).await;
    for (d, v) in &done {
        assert_eq!(v["state"], "COMPLETED", "{d} through the proxy: {v}");
    }
    let journal = read_journal(&path).expect("the recording reads");
    let entries: Vec<Entry> = journal.entries().cloned().collect();
    let recorded = common::artifacts_sent(&entries);
    assert_eq!(
        recorded.len(),
        21,
        "seven artifacts per agent: {recorded:?}"
    );
    // Convert, as `scenario from-journal --out case/case.toml` does.
    let c = convert(
        &journal,
        &ConvertOptions {
            id: Some("repro.bytes.recorded".into()),
            files_dir: Some("case.d".into()),
        },
    );
    assert!(c.unsupported.is_empty(), "{:?}\n{}", c.unsupported, c.toml);
    assert!(
        !c.toml.contains("\nbytes_differ = [") && !c.toml.contains("do = \"artifacts\""),
        "no artifact is generated content:\n{}",
        c.toml
    );
    assert!(
        c.files.iter().any(|(p, _)| p.ends_with(".bin"))
            && c.files.iter().any(|(p, _)| p.ends_with(".txt"))
            && c.files.iter().any(|(p, _)| p.ends_with(".json")),
        "long parts go to files: {:?}",
        c.files.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    let case_dir = dir.path().join("case");
    std::fs::create_dir_all(&case_dir).expect("mkdir");
    let file = case_dir.join("case.toml");
    c.write(&file).expect("write");
    let replay_case = load_case(&file).unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    let mut options = RunOptions::new(delegator());
    options.jobs = 1;
    let replayed = run(&[replay_case], &options).await;
    let r = &replayed.results[0];
    let now = common::artifacts_sent(&r.journal);
    let mut pairs = Vec::new();
    let mut problems = Vec::new();
    for (agent, id, bytes, sha) in &recorded {
        match now.iter().find(|x| (&x.0, &x.1) == (agent, id)) {
            Some((_, _, b, h)) if b == bytes && h == sha => {
                pairs.push(format!("{agent}/{id}: {bytes} bytes {sha} = {h}"))
            }
            other => problems.push(format!(
                "{agent}/{id}: recorded {bytes} bytes {sha}, replayed {other:?}"
            )),
        }
    }
    eprintln!("sha256 pairs (recording = replay):\n{}", pairs.join("\n"));
    agent_behaviour_kept("repro.bytes", &entries, &r.journal, &mut problems);
    assert!(
        problems.is_empty(),
        "{}\n{}\n{}",
        problems.join("\n"),
        describe(r),
        c.toml
    );
    assert_eq!(r.verdict, Verdict::Pass, "{}\n{}", describe(r), c.toml);
}

/// Issue 26: two delegations with the same text to the same agent stay two: two `[[delegate]]`
/// entries and two rules, each answering its own delegation as recorded (the second text gets
/// ` [2]`), and the replay delivers each artifact with its recorded sha256.
#[tokio::test(flavor = "multi_thread")]
async fn two_delegations_with_the_same_text_stay_two() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = r#"id = "repro.same-text"
title = "same text"
rules = ["DLG-ART-08"]
[network]
seed = 5
[[network.agent]]
name = "svc"
[[network.agent.skill]]
id = "lookup"
[[network.agent.rule]]
times = 1
steps = [
  { do = "artifact", artifact_id = "first", parts = [{ text = "the first answer" }] },
  { do = "state", state = "TASK_STATE_COMPLETED" },
]
[[network.agent.rule]]
steps = [
  { do = "artifact", artifact_id = "second", parts = [{ raw = "the second answer, longer" }] },
  { do = "state", state = "TASK_STATE_COMPLETED" },
]
[[delegate]]
id = "a"
capability = "lookup"
text = "look it up"
[[delegate]]
id = "b"
capability = "lookup"
text = "look it up"
"#;
    let source = dir.path().join("source.toml");
    std::fs::write(&source, text).expect("write");
    let s = load_case(&source).unwrap_or_else(|e| panic!("{e}"));
    let out = dir.path().join("rec");
    let (path, done) = record_case(&s, &out).await;
    assert_eq!(done.len(), 2);
    let journal = read_journal(&path).expect("the recording reads");
    let entries: Vec<Entry> = journal.entries().cloned().collect();
    let recorded = common::artifacts_sent(&entries);
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    let c = convert(&journal, &ConvertOptions::default());
    assert!(c.unsupported.is_empty(), "{:?}\n{}", c.unsupported, c.toml);
    assert_eq!((c.delegations, c.rules), (2, 2), "{}", c.toml);
    assert!(
        c.toml.contains("text = \"look it up\"") && c.toml.contains("text = \"look it up [2]\""),
        "{}",
        c.toml
    );
    let file = dir.path().join("case.toml");
    c.write(&file).expect("write");
    let replay_case = load_case(&file).unwrap_or_else(|e| panic!("{e}\n{}", c.toml));
    let options = RunOptions::new(delegator());
    let replayed = run(&[replay_case], &options).await;
    let r = &replayed.results[0];
    let mut problems = Vec::new();
    agent_behaviour_kept("repro.same-text", &entries, &r.journal, &mut problems);
    assert!(problems.is_empty(), "{}\n{}", problems.join("\n"), c.toml);
    assert_eq!(
        common::artifacts_sent(&r.journal),
        recorded,
        "{}\n{}",
        describe(r),
        c.toml
    );
    assert_eq!(r.verdict, Verdict::Pass, "{}\n{}", describe(r), c.toml);
}

/// A case whose recorded bytes are not replayed (`bytes_differ`) says so when it runs, once per
/// artifact, naming the case and the artifact; a case without the list says nothing of it.
#[test]
fn run_notes_each_artifact_whose_recorded_bytes_are_not_replayed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).expect("mkdir");
    let case = |id: &str, differ: &str| {
        format!(
            r#"id = "{id}"
title = "A recorded artifact replayed as generated content"
rules = ["DLG-ART-04"]
{differ}
[network]
seed = 7
[[network.agent]]
name = "svc"
[[network.agent.skill]]
id = "report"
[[network.agent.rule]]
steps = [
  {{ do = "artifacts", count = 1, chunks = 2, chunk_bytes = 1000 }},
  {{ do = "state", state = "TASK_STATE_COMPLETED" }},
]

[[delegate]]
id = "d1"
capability = "report"
text = "Write the report ({id})"
expect = {{ state = ["COMPLETED"] }}
"#
        )
    };
    let differ = r#"bytes_differ = ["artifact report-1 of task t-1: 2000 bytes, sha256 0f1e"]"#;
    std::fs::write(cases.join("differ.toml"), case("recorded.differ", differ)).expect("write");
    std::fs::write(cases.join("same.toml"), case("recorded.same", "")).expect("write");
    let o = Command::new(common::harness())
        .args(["run", "--no-builtin", "--jobs", "2", "--scenarios"])
        .arg(&cases)
        .arg("--delegator")
        .arg(delegator())
        .arg("--out")
        .arg(dir.path().join("report"))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("the recorded bytes are not replayed"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].contains("case recorded.differ")
            && notes[0].contains("artifact report-1 of task t-1: 2000 bytes, sha256 0f1e"),
        "{}",
        notes[0]
    );
}
