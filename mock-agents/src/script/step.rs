//! The behaviour steps of a task's script ([`ScriptStep`]) and the values they take.

use super::*;

/// Where an `artifact_url` step's url points. Every address is loopback; the trap is the
/// network's trap server on `127.0.0.9` (started when a script names a target that needs it),
/// which journals every connection it accepts (`trap_connection`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UrlTarget {
    /// This agent's own blob endpoint (`http://127.0.0.1:PORT/blobs/KEY`): an allowed origin.
    #[default]
    Blob,
    /// The trap: `http://127.0.0.9:TRAP/trap/KEY`, an origin outside the allowed ones.
    Trap,
    /// This agent's own blob endpoint, which answers `302 Found` with `Location` the trap.
    RedirectToTrap,
    /// This agent's own blob endpoint with userinfo: `http://a2a:trap@127.0.0.1:PORT/blobs/KEY`
    /// (the blob is served: a delegator that drops the userinfo and fetches it is seen).
    Userinfo,
    /// `file:///etc/passwd`.
    File,
    /// `ftp://127.0.0.9:TRAP/KEY` (the trap sees any connection).
    Ftp,
    /// A `data:` URL holding a few bytes.
    Data,
}

impl UrlTarget {
    /// The agent's own blob, fetched as usual.
    pub fn is_blob(&self) -> bool {
        *self == UrlTarget::Blob
    }

    /// The trap server must listen for this target.
    pub fn needs_trap(&self) -> bool {
        matches!(
            self,
            UrlTarget::Trap | UrlTarget::RedirectToTrap | UrlTarget::Ftp
        )
    }

    /// Why a delegator must not fetch it (`None` for the own blob), as journaled in
    /// `forbidden_url`.
    pub fn forbidden_because(&self) -> Option<&'static str> {
        match self {
            UrlTarget::Blob => None,
            UrlTarget::Trap => Some("origin outside the allowed fetch origins"),
            UrlTarget::RedirectToTrap => {
                Some("the allowed origin redirects to an origin outside the allowed ones")
            }
            UrlTarget::Userinfo => Some("userinfo in the url"),
            UrlTarget::File => Some("scheme file"),
            UrlTarget::Ftp => Some("scheme ftp"),
            UrlTarget::Data => Some("scheme data"),
        }
    }
}

/// How generated artifact content is encoded in parts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    /// `text` parts of printable ASCII.
    #[default]
    Text,
    /// `raw` parts (base64 bytes).
    Raw,
}

/// What to do with a wrong answer to an input request.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OnWrongAnswer {
    /// Ask the same question again (a new INPUT_REQUIRED status); after `max_wrong` wrong
    /// answers the task fails.
    #[default]
    Reask,
    /// Fail the task at the first wrong answer.
    Fail,
}

/// One behaviour step of a task's script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "do", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptStep {
    /// Answer with a `Message` and create no task (must be the only step).
    Reply {
        /// The answer text (a first text part; may be empty when `parts` are given).
        #[serde(default)]
        text: String,
        /// Literal parts after the text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartSpec>,
    },
    /// Answer the request with this JSON-RPC error and do nothing else (must be the only step).
    /// Applies to whatever method the rule matches (by default the two send methods); A2A codes
    /// (-32001..-32099) carry an `ErrorInfo` detail.
    Error {
        /// The JSON-RPC error code, such as -32001 or -32603.
        code: i64,
        /// The error message (default: the code's standard message).
        #[serde(default)]
        message: Option<String>,
    },
    /// Move the task to a state after a delay.
    State {
        /// A `TASK_STATE_*` name.
        state: String,
        /// The status message text (a reason or progress note).
        #[serde(default)]
        message: Option<String>,
        /// Literal parts of the status message (after `message`'s text part, if any).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartSpec>,
        /// Milliseconds to wait first.
        #[serde(default)]
        delay_ms: u64,
    },
    /// An artifact of literal parts, sent whole (`parts`) or in chunks (`chunks`: the first
    /// starts the artifact, later ones have `append`, the last has `lastChunk`).
    Artifact {
        /// The artifact id (default `artifact-N`, N counting this task's artifacts).
        #[serde(default)]
        artifact_id: Option<String>,
        /// The artifact's `name` (default: its id).
        #[serde(default)]
        name: Option<String>,
        /// The artifact's `description`.
        #[serde(default)]
        description: Option<String>,
        /// The artifact's `metadata`.
        #[serde(default)]
        metadata: Option<serde_json::Map<String, Value>>,
        /// The parts, sent in one event.
        #[serde(default)]
        parts: Vec<PartSpec>,
        /// The parts of each chunk, one event per chunk.
        #[serde(default)]
        chunks: Vec<Vec<PartSpec>>,
        /// Milliseconds between chunks.
        #[serde(default)]
        delay_ms: u64,
    },
    /// Stream N artifacts of M chunks each, generated from the seed (or from `text`).
    Artifacts {
        /// Number of artifacts.
        #[serde(default = "one")]
        count: u32,
        /// Chunks per artifact.
        #[serde(default = "one")]
        chunks: u32,
        /// Bytes per chunk.
        #[serde(default = "default_chunk")]
        chunk_bytes: usize,
        /// Text or raw parts.
        #[serde(default)]
        content: ContentKind,
        /// Literal content instead of generated bytes (split into `chunks`).
        #[serde(default)]
        text: Option<String>,
        /// Send the chunks of all artifacts interleaved (round robin).
        #[serde(default)]
        interleave: bool,
        /// `mediaType` of every part.
        #[serde(default)]
        media_type: Option<String>,
        /// Never set `lastChunk` (a protocol violation).
        #[serde(default)]
        omit_last_chunk: bool,
        /// Milliseconds between chunks.
        #[serde(default)]
        delay_ms: u64,
    },
    /// An artifact whose part is a `url` to this agent's blob endpoint, serving `bytes` bytes.
    ArtifactUrl {
        /// Size of the blob.
        bytes: u64,
        /// `mediaType` of the part.
        #[serde(default)]
        media_type: Option<String>,
        /// Where the url points (default `blob`: this agent's own blob endpoint). The other
        /// targets are url parts a delegator must not fetch (A2A §14.1.1): the agent journals
        /// `forbidden_url` when it sends one, and no `artifact_sent` (there is nothing to commit).
        #[serde(default, skip_serializing_if = "UrlTarget::is_blob")]
        target: UrlTarget,
    },
    /// An artifact with one `data` part holding this value.
    DataArtifact {
        /// The data.
        data: Value,
        /// `mediaType` (default `application/json`).
        #[serde(default)]
        media_type: Option<String>,
    },
    /// Ask for input and wait for the answer on the same task, for `rounds` rounds.
    InputRequired {
        /// The question.
        question: String,
        /// The answer must match this (default: any answer).
        #[serde(default)]
        expect: Option<Matcher>,
        /// Number of questions asked in a row.
        #[serde(default = "one")]
        rounds: u32,
        /// What a wrong answer does.
        #[serde(default)]
        on_wrong: OnWrongAnswer,
        /// With `on_wrong = "reask"`: wrong answers tolerated before the task fails.
        #[serde(default = "default_max_wrong")]
        max_wrong: u32,
        /// Longest wait for an answer before failing the task.
        #[serde(default = "default_wait")]
        timeout_ms: u64,
    },
    /// Ask for credentials; only a message sent with `Authorization: <credential>` continues.
    AuthRequired {
        /// The exact `Authorization` header value required.
        credential: String,
        /// The status message.
        #[serde(default)]
        message: Option<String>,
        /// Messages with a wrong or missing credential tolerated (each answered with
        /// AUTH_REQUIRED again) before the task fails.
        #[serde(default = "default_max_wrong")]
        max_wrong: u32,
        /// Longest wait before failing the task.
        #[serde(default = "default_wait")]
        timeout_ms: u64,
        /// Resume this long after AUTH_REQUIRED without any client message, as if the
        /// credential arrived out of band (§7.6.2): the task goes on with the next step
        /// (journal: `continued` with outcome `out_of_band`). Must be below `timeout_ms`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_after_ms: Option<u64>,
    },
    /// Delegate to another agent of the network, propagating `x-deleg`, and wait for it.
    Delegate {
        /// The other agent's name.
        to: String,
        /// The text sent.
        text: String,
        /// The skill requested (`metadata.skill`).
        #[serde(default)]
        skill: Option<String>,
        /// Deadline margin kept for this hop.
        #[serde(default = "default_margin")]
        margin_ms: u64,
        /// Share of the remaining budget given to the child.
        #[serde(default = "half")]
        budget_share: f64,
    },
    /// Wait.
    Wait {
        /// Milliseconds.
        ms: u64,
    },
    /// Emit this value as the `result` of a stream event (raw access: anything goes).
    RawEvent {
        /// The `result` value.
        result: Value,
    },
    /// Emit this exact text as an SSE `data:` payload (for invalid JSON).
    RawSse {
        /// The data text.
        data: String,
    },
    /// Emit an `append: true` chunk for an artifact id never sent.
    AppendUnknown,
    /// Emit one hand-made artifact chunk: one text part for the artifact `artifact_id`, with the
    /// given `append` and `lastChunk` flags (the task's artifacts follow A2A's append/replace
    /// semantics, as for `artifacts`).
    Chunk {
        /// The artifact's id (a chunk without `append` starts or replaces it).
        artifact_id: String,
        /// The chunk's text.
        text: String,
        /// Append to the artifact instead of replacing it.
        #[serde(default)]
        append: bool,
        /// Mark the artifact complete.
        #[serde(default)]
        last_chunk: bool,
    },
    /// Emit a status update for the task whose `state` is this name outside the protocol's
    /// enum, such as `TASK_STATE_PAUSED` (the task's own state does not change).
    UnknownState {
        /// The state name sent; a known state is rejected (use `state`).
        state: String,
    },
    /// Emit one stream event larger than any sane limit.
    HugeEvent {
        /// Size of the event in bytes.
        bytes: usize,
    },
    /// Hold the task here until the test opens this gate (`Network::open_gate`); the task
    /// fails if it is not opened within `timeout_ms`. Gates are shared by the whole network and
    /// stay open once opened.
    Gate {
        /// The gate's name.
        gate: String,
        /// Longest wait for the gate.
        #[serde(default = "default_wait")]
        timeout_ms: u64,
    },
    /// Forget the task: later calls get -32001.
    Purge,
    /// Close every open stream of the task now, whatever its state.
    CloseStreams,
    /// POST, to every webhook configured for this task (with that config's token and
    /// authentication, as genuine pushes), a status update for a task and context the client
    /// never saw (fresh ids from the seed). Journal: `push` entries whose `task_id` is the
    /// foreign task's.
    PushForeign {
        /// The state of the foreign status update (a `TASK_STATE_*` name).
        state: String,
        /// Its status message text.
        #[serde(default)]
        message: Option<String>,
    },
    /// Send the task's stream subscribers a copy of a well-formed event of the task with one
    /// REQUIRED field removed (spec §5.7, §14.1.1); the task itself does not change.
    MalformedEvent {
        /// The event copied (default: `artifact_update` when `omit` starts with `artifact`,
        /// `task` for `id`, else `status_update`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<EventKind>,
        /// The REQUIRED field removed, as a dotted path in the event: `taskId`, `contextId`,
        /// `status`, `status.state` (status update), `taskId`, `contextId`, `artifact`,
        /// `artifact.artifactId`, `artifact.parts` (artifact update), `id`, `status`,
        /// `status.state` (task).
        omit: String,
    },
}

impl ScriptStep {
    /// How long the step's own timers hold the task (`wait`, `delay_ms` per event, an auth
    /// round's `resume_after_ms`), in ms;
    /// 0 for a step that answers at once. What a runner reads to start the slow cases first.
    pub fn scripted_wait_ms(&self) -> u64 {
        match self {
            ScriptStep::Wait { ms } => *ms,
            ScriptStep::State { delay_ms, .. } => *delay_ms,
            ScriptStep::Artifact {
                delay_ms, chunks, ..
            } => delay_ms.saturating_mul(chunks.len().max(1) as u64),
            ScriptStep::Artifacts {
                delay_ms,
                chunks,
                count,
                ..
            } => delay_ms
                .saturating_mul(u64::from(*chunks))
                .saturating_mul(u64::from(*count)),
            ScriptStep::AuthRequired {
                resume_after_ms, ..
            } => resume_after_ms.unwrap_or(0),
            _ => 0,
        }
    }
}

/// Which event a `malformed_event` step copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A status update repeating the task's current status.
    StatusUpdate,
    /// An artifact update of a fresh one-chunk text artifact (`artifact-malformed-N`).
    ArtifactUpdate,
    /// The task snapshot.
    Task,
}

impl EventKind {
    /// The event a `malformed_event` step copies when it names none.
    pub fn for_omitted(omit: &str) -> EventKind {
        if omit == "artifact" || omit.starts_with("artifact.") {
            EventKind::ArtifactUpdate
        } else if omit == "id" {
            EventKind::Task
        } else {
            EventKind::StatusUpdate
        }
    }

    /// The REQUIRED fields a `malformed_event` step may omit from this event.
    pub fn omittable(self) -> &'static [&'static str] {
        match self {
            EventKind::StatusUpdate => &["taskId", "contextId", "status", "status.state"],
            EventKind::ArtifactUpdate => &[
                "taskId",
                "contextId",
                "artifact",
                "artifact.artifactId",
                "artifact.parts",
            ],
            EventKind::Task => &["id", "status", "status.state"],
        }
    }

    /// The member of `StreamResponse` that holds this event.
    pub fn member(self) -> &'static str {
        match self {
            EventKind::StatusUpdate => "statusUpdate",
            EventKind::ArtifactUpdate => "artifactUpdate",
            EventKind::Task => "task",
        }
    }
}

fn default_chunk() -> usize {
    1024
}
fn default_wait() -> u64 {
    30_000
}
fn default_max_wrong() -> u32 {
    3
}
fn default_margin() -> u64 {
    1000
}
