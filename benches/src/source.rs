//! The source: a mock network (in process) whose one agent produces a workload's artifacts,
//! the raw reader that measures the ceiling, and the journal's truth about what was sent.

use crate::workload::{BindingKind, Delivery, PartKind, Workload};
use a2a_mock_agents::script::{ContentKind, JournalDetail, JournalSpec, SkillSpec};
use a2a_mock_agents::{AgentSpec, Entry, Event, Fault, NetworkSpec, PartSpec, Rule, ScriptStep};
use futures::StreamExt;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The skill the source agent advertises (and delegations ask for).
pub const SKILL: &str = "bench";
/// The source agent's name.
pub const AGENT: &str = "source";

/// The media type of a part kind.
pub fn media_type(p: PartKind) -> &'static str {
    match p {
        PartKind::Text => "text/plain",
        PartKind::Raw => "application/octet-stream",
        PartKind::Data => "application/json",
    }
}

/// The network of one workload: one agent, every new send streams the artifacts then completes.
pub fn network_spec(w: &Workload, seed: u64) -> NetworkSpec {
    let chunks = w.chunks_per_artifact();
    let chunk = w.chunk_bytes.0 as usize;
    let mt = media_type(w.part).to_string();
    let mut steps = Vec::new();
    match w.part {
        PartKind::Text | PartKind::Raw => steps.push(ScriptStep::Artifacts {
            count: w.artifacts,
            chunks: u32::try_from(chunks).unwrap_or(u32::MAX),
            chunk_bytes: chunk,
            content: if w.part == PartKind::Text {
                ContentKind::Text
            } else {
                ContentKind::Raw
            },
            text: None,
            interleave: false,
            media_type: Some(mt.clone()),
            omit_last_chunk: false,
            delay_ms: 0,
        }),
        PartKind::Data => {
            // The JSON text of a string is its characters plus two quotes.
            let payload: String = (0..chunk.saturating_sub(2).max(1))
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            for a in 0..w.artifacts {
                steps.push(ScriptStep::Artifact {
                    artifact_id: Some(format!("artifact-{}", a + 1)),
                    name: None,
                    description: None,
                    metadata: None,
                    parts: Vec::new(),
                    chunks: (0..chunks)
                        .map(|_| {
                            vec![PartSpec {
                                data: Some(serde_json::Value::String(payload.clone())),
                                media_type: Some(mt.clone()),
                                ..PartSpec::default()
                            }]
                        })
                        .collect(),
                    delay_ms: 0,
                });
            }
        }
    }
    steps.push(ScriptStep::State {
        state: "TASK_STATE_COMPLETED".into(),
        message: None,
        parts: Vec::new(),
        delay_ms: 0,
    });
    let fault = match (&w.faults.latency_ms, &w.faults.trickle_bytes_per_sec) {
        (_, Some(t)) => Some(Fault::Trickle { bytes_per_sec: t.0 }),
        (Some(ms), None) => Some(Fault::Stall { ms: *ms }),
        (None, None) => None,
    };
    let bindings = match w.binding {
        BindingKind::Jsonrpc => None,
        // The workload's binding first (the delegator takes the card's first usable one); the
        // raw reader reads over JSON-RPC.
        b => Some(vec![b.binding(), a2a_protocol::Binding::JsonRpc]),
    };
    let per_delegation = u64::from(w.artifacts) * chunks * 3 + 64;
    let agent = AgentSpec {
        name: AGENT.into(),
        bindings,
        streaming: w.delivery == Delivery::Stream,
        push_notifications: w.delivery == Delivery::Push,
        max_block_ms: w.time_limit_s * 1000,
        max_connections: (w.parallel as usize * 2 + 64).max(1024),
        skills: vec![SkillSpec {
            id: SKILL.into(),
            output_modes: vec![mt],
            tags: Vec::new(),
        }],
        rules: vec![Rule {
            fault,
            steps,
            ..Rule::default()
        }],
        ..AgentSpec::default()
    };
    NetworkSpec {
        seed,
        journal: JournalSpec {
            // Two ceilings' and one run's worth, whatever the scale.
            max_entries: (per_delegation * u64::from(w.parallel) * 2).clamp(200_000, 20_000_000)
                as usize,
            max_string_bytes: 256,
            // What the bench verifies (task lives, `artifact_chunk`, `artifact_sent`) and no
            // payloads, no `sse_event` per chunk (64 x 64 MiB: 65,536 entries fewer).
            detail: JournalDetail::Truth,
        },
        default_bindings: None,
        tls: false,
        agents: vec![agent],
    }
}

/// The journal's truth about one task: artifact id -> (bytes, sha256), chunk events, and when
/// the first chunk was sent (microseconds since the network started).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskTruth {
    /// Per artifact: bytes and sha256 of what was sent.
    pub artifacts: BTreeMap<String, (u64, String)>,
    /// Artifact chunk events sent, as the finished artifacts' `artifact_sent` count them.
    pub chunks: u64,
    /// When the first chunk was sent.
    pub first_chunk_us: Option<u64>,
}

/// Every task's truth, and each new send's task (by `messageId`).
#[derive(Debug, Default)]
pub struct Truth {
    /// Task id -> truth.
    pub tasks: BTreeMap<String, TaskTruth>,
    /// `messageId` -> task id.
    pub by_message: BTreeMap<String, String>,
    /// Entries the journal dropped at its bound.
    pub dropped: u64,
}

impl Truth {
    /// Read the journal.
    pub fn of(entries: &[Entry], dropped: u64) -> Truth {
        let mut t = Truth {
            dropped,
            ..Truth::default()
        };
        for e in entries {
            match &e.event {
                Event::TaskCreated {
                    task_id,
                    message_id,
                    ..
                } => {
                    t.by_message.insert(message_id.clone(), task_id.clone());
                }
                // The journal keeps the chunks that start an artifact; `artifact_sent`
                // counts them all (`JournalDetail::Truth`).
                Event::ArtifactChunk { task_id, .. } => {
                    let tt = t.tasks.entry(task_id.clone()).or_default();
                    tt.first_chunk_us.get_or_insert(e.at_us);
                }
                Event::ArtifactSent {
                    task_id,
                    artifact_id,
                    bytes,
                    sha256,
                    chunks,
                } => {
                    let tt = t.tasks.entry(task_id.clone()).or_default();
                    tt.chunks += chunks;
                    tt.artifacts
                        .insert(artifact_id.clone(), (*bytes, sha256.clone()));
                }
                _ => {}
            }
        }
        t
    }
}

/// What one raw read saw.
#[derive(Debug, Clone)]
pub struct RawRead {
    /// The request's `messageId`.
    pub message_id: String,
    /// Body bytes read (the wire: SSE or JSON, not parsed).
    pub wire_bytes: u64,
    /// When the request was sent.
    pub sent: Instant,
    /// When the body ended.
    pub ended: Instant,
    /// An error, if the read failed.
    pub error: Option<String>,
}

/// Read one response raw: `SendStreamingMessage` (stream) or a blocking `SendMessage` (poll,
/// push) over JSON-RPC, counting body bytes without parsing them.
pub async fn raw_read(
    client: &reqwest::Client,
    rpc_url: &str,
    delivery: Delivery,
    message_id: String,
    limit: Duration,
) -> RawRead {
    let method = if delivery == Delivery::Stream {
        "SendStreamingMessage"
    } else {
        "SendMessage"
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": method,
        "params": {
            "message": {"messageId": message_id, "role": "ROLE_USER",
                        "parts": [{"text": "bench ceiling"}]},
            "configuration": {"returnImmediately": false},
        }
    });
    let sent = Instant::now();
    let mut out = RawRead {
        message_id,
        wire_bytes: 0,
        sent,
        ended: sent,
        error: None,
    };
    let read = async {
        let resp = client
            .post(rpc_url)
            .header("A2A-Version", "1.0")
            .header("Accept", "text/event-stream, application/json")
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !resp.status().is_success() {
            return Err(format!("HTTP {}", resp.status()));
        }
        let mut stream = resp.bytes_stream();
        let mut n = 0u64;
        while let Some(b) = stream.next().await {
            n += b.map_err(|e| e.to_string())?.len() as u64;
        }
        Ok::<u64, String>(n)
    };
    match tokio::time::timeout(limit, read).await {
        Ok(Ok(n)) => out.wire_bytes = n,
        Ok(Err(e)) => out.error = Some(e),
        Err(_) => out.error = Some(format!("not done within {} s", limit.as_secs())),
    }
    out.ended = Instant::now();
    out
}
