//! Test support for the checkers: a journal builder and a case with the evidence a checker reads.

use super::evidence::Evidence;
use super::registry::{Check, registry};
use crate::scenario::Scenario;
use a2a_driver_contract::{Done, DoneArtifact, Escalate, EscalationKind, FromDelegator, Outcome};
use a2a_mock_agents::{Entry, Event};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub(crate) const SELF: &str = "http://127.0.0.1:9/delegator-under-test";
pub(crate) const CRED: &str = "Bearer own-secret";

pub(crate) fn scenario(extra: &str) -> Scenario {
    let text = format!(
        "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n{extra}\n[network]\nseed = 1\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent]]\nname = \"old\"\nprotocol = \"0.3\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent]]\nname = \"attacker\"\n[[network.agent.skill]]\nid = \"x\"\n"
    );
    Scenario::from_toml(std::path::Path::new("t.toml"), &text).expect("test scenario")
}

pub(crate) fn delegation(extra: &str) -> String {
    format!("[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n{extra}\n")
}

#[derive(Clone)]
pub(crate) struct J {
    pub(crate) entries: Vec<Entry>,
    pub(crate) req: u64,
}

impl J {
    pub(crate) fn new() -> Self {
        J {
            entries: Vec::new(),
            req: 0,
        }
    }
    pub(crate) fn push(&mut self, agent: &str, event: Event) -> u64 {
        let seq = self.entries.len() as u64 + 1;
        self.entries.push(Entry {
            seq,
            at_us: seq * 1000,
            agent: agent.into(),
            event,
        });
        seq
    }
    pub(crate) fn at(&mut self, seq: u64, at_us: u64) {
        self.entries[seq as usize - 1].at_us = at_us;
    }
    pub(crate) fn rpc(
        &mut self,
        agent: &str,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> (u64, u64) {
        self.req += 1;
        let mut h: BTreeMap<String, String> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        h.entry("a2a-version".into()).or_insert("1.0".into());
        let seq = self.push(
            agent,
            Event::Request {
                binding: a2a_protocol::Binding::JsonRpc,
                req: self.req,
                http_method: "POST".into(),
                path: "/a2a".into(),
                method: Some(method.into()),
                rpc_id: Some(Box::new(json!(1))),
                params: Box::new(params),
                headers: Box::new(h),
                envelope: None,
            },
        );
        (seq, self.req)
    }
    /// A request over `binding` (method `None`: one the agent could not route).
    pub(crate) fn over(
        &mut self,
        agent: &str,
        binding: a2a_protocol::Binding,
        method: Option<&str>,
    ) -> u64 {
        self.req += 1;
        self.push(
            agent,
            Event::Request {
                binding,
                req: self.req,
                http_method: "POST".into(),
                path: "/".into(),
                method: method.map(str::to_string),
                rpc_id: None,
                params: Box::new(json!({})),
                headers: Box::new(BTreeMap::new()),
                envelope: None,
            },
        )
    }
    pub(crate) fn send(&mut self, agent: &str, mid: &str, text: &str, extra: Value) -> (u64, u64) {
        let mut p = json!({"message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"returnImmediately": true, "acceptedOutputModes": ["text/plain", "application/json", "application/octet-stream"]},
            "metadata": {"x-deleg": {"deadline": "2099-01-01T00:00:00.000Z", "budget_usd": 1.0, "depth": 1, "chain": [SELF]}}});
        merge(&mut p, extra);
        self.rpc(agent, "SendMessage", p, &[])
    }
    pub(crate) fn answer(
        &mut self,
        agent: &str,
        mid: &str,
        task: &str,
        ctx: &str,
        text: &str,
        headers: &[(&str, &str)],
    ) -> (u64, u64) {
        let p = json!({"message": {"messageId": mid, "role": "ROLE_USER", "taskId": task, "contextId": ctx, "parts": [{"text": text}]}});
        self.rpc(agent, "SendMessage", p, headers)
    }
    pub(crate) fn resp(
        &mut self,
        agent: &str,
        req: u64,
        status: u16,
        rpc_error: Option<i64>,
        body: Value,
    ) -> u64 {
        self.push(
            agent,
            Event::Response {
                retry_after_s: None,
                grpc_status: None,
                req,
                status,
                rpc_error,
                body,
            },
        )
    }
    pub(crate) fn created(
        &mut self,
        agent: &str,
        task: &str,
        ctx: &str,
        mid: &str,
        dedup: bool,
    ) -> u64 {
        self.push(
            agent,
            Event::TaskCreated {
                task_id: task.into(),
                context_id: ctx.into(),
                message_id: mid.into(),
                dedup,
            },
        )
    }
    pub(crate) fn state(&mut self, agent: &str, task: &str, state: &str) -> u64 {
        self.push(
            agent,
            Event::TaskState {
                task_id: task.into(),
                state: state.into(),
            },
        )
    }
    pub(crate) fn sent(
        &mut self,
        agent: &str,
        task: &str,
        aid: &str,
        bytes: u64,
        sha: &str,
    ) -> u64 {
        self.push(
            agent,
            Event::ArtifactSent {
                task_id: task.into(),
                artifact_id: aid.into(),
                bytes,
                sha256: sha.into(),
                chunks: 1,
            },
        )
    }
}

impl J {
    /// One artifact chunk produced by the agent for `task`.
    pub(crate) fn chunk(
        &mut self,
        agent: &str,
        task: &str,
        aid: &str,
        append: bool,
        bytes: u64,
    ) -> u64 {
        self.push(
            agent,
            Event::ArtifactChunk {
                task_id: task.into(),
                artifact_id: aid.into(),
                append,
                last_chunk: true,
                bytes,
            },
        )
    }
    /// A stream event on request `req` (delivered to the delegator).
    pub(crate) fn sse(&mut self, agent: &str, req: u64) -> u64 {
        self.sse_data(agent, req, json!({}))
    }
    /// A stream event on request `req` carrying `data` (the JSON-RPC event as recorded).
    pub(crate) fn sse_data(&mut self, agent: &str, req: u64, data: Value) -> u64 {
        self.push(
            agent,
            Event::SseEvent {
                req,
                index: 0,
                data,
            },
        )
    }
    /// Make the request recorded at `seq` carry its version in the request URL instead of a
    /// header: its target becomes `path` (such as `/a2a?A2A-Version=1.0`) and its
    /// `a2a-version` header is dropped.
    pub(crate) fn version_in_query(&mut self, seq: u64, target: &str) {
        if let Event::Request { path, headers, .. } = &mut self.entries[seq as usize - 1].event {
            *path = target.into();
            headers.remove("a2a-version");
        }
    }
}

/// A streaming delegation d1 on agent `a` whose task t1 gets one artifact (`bytes` long), delivered
/// on the stream, then completes; no outcome yet. Returns the case and the chunk's sequence.
pub(crate) fn streamed(extra: &str, bytes: u64) -> (Case, u64) {
    let mut c = Case::new(&delegation(extra));
    let (_, r) = c.j.rpc(
        "a",
        "SendStreamingMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
        &[],
    );
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.j.sse("a", r);
    let chunk = c.j.chunk("a", "t1", "artifact-1", false, bytes);
    c.j.sent("a", "t1", "artifact-1", bytes, "bad");
    c.j.sse("a", r);
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    c.j.sse("a", r);
    (c, chunk)
}

pub(crate) fn merge(a: &mut Value, b: Value) {
    if let (Value::Object(a), Value::Object(b)) = (a, b) {
        for (k, v) in b {
            match a.get_mut(&k) {
                Some(x) if x.is_object() && v.is_object() => merge(x, v),
                _ => {
                    a.insert(k, v);
                }
            }
        }
    }
}

pub(crate) struct Case {
    pub(crate) s: Scenario,
    pub(crate) j: J,
    pub(crate) messages: Vec<FromDelegator>,
    pub(crate) outcomes: BTreeMap<String, FromDelegator>,
    /// A `snapshot_ok` message (its `records` are the evidence).
    pub(crate) snapshot: Option<Value>,
    pub(crate) given: Vec<(String, EscalationKind, String)>,
    pub(crate) crash: Option<u64>,
    pub(crate) forged: Vec<u16>,
    pub(crate) memory: Option<crate::delegator_process::MemoryReading>,
    /// Journal sequence when each outcome was received (absent: the whole journal).
    pub(crate) done_at: BTreeMap<String, u64>,
    /// What the reported artifact files held (absent: not read).
    pub(crate) files: BTreeMap<(String, String), super::evidence::FileFact>,
    /// The secret scan (default: nothing scanned).
    pub(crate) secrets: super::secret::SecretScan,
    /// The store directory (default `/store`, where [`Case::done`] puts its files).
    pub(crate) store_dir: std::path::PathBuf,
    /// Trap entries found outside the store (default: none).
    pub(crate) trap_hits: Vec<std::path::PathBuf>,
}

impl Case {
    pub(crate) fn new(extra: &str) -> Self {
        Case {
            s: scenario(extra),
            j: J::new(),
            messages: Vec::new(),
            outcomes: BTreeMap::new(),
            snapshot: None,
            given: Vec::new(),
            crash: None,
            forged: Vec::new(),
            memory: None,
            done_at: BTreeMap::new(),
            files: BTreeMap::new(),
            secrets: Default::default(),
            store_dir: "/store".into(),
            trap_hits: Vec::new(),
        }
    }
    /// Give `agent`'s script a rule (`rule`: its JSON, such as `{"steps": [...]}`).
    pub(crate) fn script(&mut self, agent: &str, rule: Value) {
        let rule: a2a_mock_agents::script::Rule = serde_json::from_value(rule).expect("test rule");
        if let Some(a) = self.s.network.agents.iter_mut().find(|a| a.name == agent) {
            a.rules.push(rule);
        }
    }
    /// Give `agent`'s script a rule whose WORKING status message says `text` (to plant text).
    pub(crate) fn script_says(&mut self, agent: &str, text: &str) {
        self.script(
            agent,
            json!({"steps": [
                {"do": "state", "state": "TASK_STATE_WORKING", "message": text},
                {"do": "state", "state": "TASK_STATE_COMPLETED"},
            ]}),
        );
    }
    /// Record a `done` for `id`; `artifacts` give `artifact_id`, `bytes` and `sha256`.
    pub(crate) fn done(&mut self, id: &str, state: &str, artifacts: Value) {
        let artifacts = artifacts
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| DoneArtifact {
                artifact_id: a["artifact_id"].as_str().unwrap_or_default().into(),
                name: None,
                bytes: a["bytes"].as_u64().unwrap_or_default(),
                sha256: a["sha256"].as_str().unwrap_or_default().into(),
                media_type: "application/json".into(),
                path: format!("/store/{id}"),
            })
            .collect();
        let done = Done {
            id: id.into(),
            state: Outcome::parse(state).expect("an outcome"),
            reason: None,
            task_id: None,
            context_id: None,
            message: None,
            artifacts,
        };
        self.outcomes.insert(id.into(), FromDelegator::Done(done));
    }
    /// Record that the delegator escalated `id`.
    pub(crate) fn escalated(&mut self, id: &str, kind: EscalationKind) {
        self.messages.push(FromDelegator::Escalate(Escalate {
            id: id.into(),
            kind,
            question: "which one?".into(),
            agent: "http://127.0.0.1:1/a".into(),
            task_id: Some("t1".into()),
        }));
    }
    pub(crate) fn check(&self, f: fn(&Evidence) -> Check) -> Check {
        self.with_evidence(f)
    }
    /// Run `f` over this case's evidence.
    pub(crate) fn with_evidence<R>(&self, f: impl FnOnce(&Evidence) -> R) -> R {
        let ev = Evidence {
            scenario: &self.s,
            journal: &self.j.entries,
            messages: &self.messages,
            outcomes: &self.outcomes,
            snapshot: self
                .snapshot
                .as_ref()
                .and_then(|s| s["records"].as_array())
                .map(Vec::as_slice),
            self_url: SELF,
            credential: CRED,
            given: &self.given,
            crash_seq: self.crash,
            start: time::OffsetDateTime::now_utc(),
            forged_pushes: &self.forged,
            memory: self.memory.clone(),
            done_at: &self.done_at,
            artifact_files: &self.files,
            secrets: &self.secrets,
            store_dir: &self.store_dir,
            trap_hits: &self.trap_hits,
        };
        f(&ev)
    }
}

pub(crate) fn fails(c: Check) -> bool {
    matches!(c, Check::Fail { .. })
}

pub(crate) fn checker(id: &str) -> fn(&Evidence) -> Check {
    registry()
        .into_iter()
        .find(|r| r.id == id)
        .and_then(|r| r.check)
        .expect("rule with a checker")
}

/// A completed, well-behaved delegation d1 on agent `a` with one artifact.
pub(crate) fn good(extra: &str) -> Case {
    let mut c = Case::new(&delegation(extra));
    let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
    c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.j.sent("a", "t1", "artifact-1", 10, "abc");
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    // The delegator read the final state (a poll after it).
    let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", g, 200, None, json!({"result": {"id": "t1"}}));
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}]),
    );
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "task_id": "t1", "artifacts": [{"agent_url": "a", "skill": "s", "task_id": "t1"}], "dlq": false}]}),
    );
    c
}

/// A fan-out d1 (expecting COMPLETED) on agent `a` whose children d1-a and d1-b ("child A",
/// "child B") each got a task (t1, t2) that delivered one artifact and completed, read by a poll
/// whose answer carries `stamp` as the status timestamp; every child and the parent reported
/// COMPLETED with its artifacts.
pub(crate) fn fan_out_completed(stamp: &str) -> Case {
    let mut c = Case::new(&delegation(
        "children = [{ id = \"d1-a\", capability = \"s\", text = \"child A\" }, { id = \"d1-b\", capability = \"s\", text = \"child B\" }]\nexpect = { state = [\"COMPLETED\"] }",
    ));
    let mut all = Vec::new();
    for (child, m, t, text) in [
        ("d1-a", "m1", "t1", "child A"),
        ("d1-b", "m2", "t2", "child B"),
    ] {
        let (_, r) = c.j.send("a", m, text, json!({}));
        c.j.created("a", t, "c1", m, false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": t}}}));
        let aid = format!("artifact-{t}");
        c.j.sent("a", t, &aid, 10, "abc");
        c.j.state("a", t, "TASK_STATE_COMPLETED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": t}), &[]);
        c.j.resp(
            "a",
            g,
            200,
            None,
            json!({"result": {"id": t, "status": {"state": "TASK_STATE_COMPLETED", "timestamp": stamp}}}),
        );
        let art = json!({"artifact_id": aid, "bytes": 10, "sha256": "abc"});
        c.done(child, "COMPLETED", json!([art]));
        all.push(art);
    }
    c.done("d1", "COMPLETED", Value::Array(all));
    c
}

/// Requests at the front door: any binding, path, headers and envelope; card fetches.
impl J {
    /// A request as the journal records it; `method` `None` for one the agent could not route.
    /// JSON-RPC requests get the envelope `{"jsonrpc": "2.0", "id": req, "method": …}` unless
    /// `envelope` says otherwise. Returns (seq, req).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn http(
        &mut self,
        agent: &str,
        binding: a2a_protocol::Binding,
        http_method: &str,
        path: &str,
        method: Option<&str>,
        params: Value,
        headers: &[(&str, &str)],
        envelope: Option<Value>,
    ) -> (u64, u64) {
        self.req += 1;
        let mut h: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in headers {
            h.entry(k.to_string())
                .and_modify(|e: &mut String| {
                    e.push('\n');
                    e.push_str(v);
                })
                .or_insert_with(|| v.to_string());
        }
        let envelope = match binding {
            a2a_protocol::Binding::JsonRpc if http_method == "POST" => Some(
                envelope
                    .unwrap_or_else(|| json!({"jsonrpc": "2.0", "id": self.req, "method": method})),
            ),
            _ => envelope,
        };
        let seq = self.push(
            agent,
            Event::Request {
                binding,
                req: self.req,
                http_method: http_method.into(),
                path: path.into(),
                method: method.map(str::to_string),
                rpc_id: None,
                params: Box::new(params),
                headers: Box::new(h),
                envelope: envelope.map(Box::new),
            },
        );
        (seq, self.req)
    }
    /// A fetch of `agent`'s card with `headers`, answered `status` with card version `version`.
    /// Returns (request seq, response seq).
    pub(crate) fn card(
        &mut self,
        agent: &str,
        headers: &[(&str, &str)],
        status: u16,
        version: u64,
    ) -> (u64, u64) {
        let (seq, req) = self.http(
            agent,
            a2a_protocol::Binding::JsonRpc,
            "GET",
            a2a_protocol::AGENT_CARD_PATH,
            None,
            Value::Null,
            headers,
            None,
        );
        let r = self.resp(
            agent,
            req,
            status,
            None,
            json!({"card_version": version, "etag": format!("\"v{version}\"")}),
        );
        (seq, r)
    }
}
