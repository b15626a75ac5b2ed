//! Tasks and what streams about them: [`Task`], [`TaskStatus`], [`Artifact`], the two update events
//! and the one-of wrappers [`SendMessageResponse`] and [`StreamResponse`] (reference §3.3-§3.7).

use crate::de::{is_false, nullable};
use crate::enums::TaskState;
use crate::message::{Message, Metadata, Part};
use crate::timestamp::Timestamp;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The status of a task: its state, an optional agent message and when it was set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TaskStatus {
    /// The state; required.
    #[serde(deserialize_with = "nullable")]
    pub state: TaskState,
    /// A message from the agent about this status (a question, a reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the status was set (UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn new(state: TaskState) -> Self {
        TaskStatus {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }
}

/// A unit of work on an agent, identified by a server-generated `id`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Task {
    /// Server-generated, unique; required.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// The conversation this task belongs to.
    #[serde(
        deserialize_with = "nullable",
        skip_serializing_if = "String::is_empty"
    )]
    #[serde(alias = "context_id")]
    pub context_id: String,
    /// Current status; required.
    #[serde(deserialize_with = "nullable")]
    pub status: TaskStatus,
    /// Outputs produced so far.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub artifacts: Vec<Artifact>,
    /// Messages exchanged, as the agent chose to keep them.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub history: Vec<Message>,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// An output of a task, made of parts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Artifact {
    /// Unique within the task; required. Chunks are joined by this id.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// A human-readable name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A human-readable description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The content; at least one part is required.
    #[serde(deserialize_with = "nullable")]
    pub parts: Vec<Part>,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of extensions that contributed.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<String>,
}

/// A change of a task's status, sent on a stream or a webhook. There is no `final` flag in 1.0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TaskStatusUpdateEvent {
    /// The task; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The task's context; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "context_id")]
    pub context_id: String,
    /// The new status; required.
    #[serde(deserialize_with = "nullable")]
    pub status: TaskStatus,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// A new artifact or a chunk of one. `append` adds parts to the artifact with the same id;
/// `lastChunk` marks its final chunk. There is no `index` in 1.0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TaskArtifactUpdateEvent {
    /// The task; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The task's context; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "context_id")]
    pub context_id: String,
    /// The artifact or chunk; required.
    #[serde(deserialize_with = "nullable")]
    pub artifact: Artifact,
    /// Add to the previously sent artifact with the same id (absent means false).
    #[serde(skip_serializing_if = "is_false", deserialize_with = "nullable")]
    pub append: bool,
    /// This is the final chunk of the artifact.
    #[serde(skip_serializing_if = "is_false", deserialize_with = "nullable")]
    #[serde(alias = "last_chunk")]
    pub last_chunk: bool,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Serialize a one-of wrapper as `{"<key>": value}`.
fn one_key<S: Serializer, T: Serialize>(s: S, key: &str, v: &T) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(1))?;
    m.serialize_entry(key, v)?;
    m.end()
}

/// The result of `SendMessage`: the agent answered with a [`Task`] or directly with a [`Message`].
#[derive(Debug, Clone, PartialEq)]
pub enum SendMessageResponse {
    /// Work was accepted as a task.
    Task(Task),
    /// The agent answered directly; no task exists.
    Message(Message),
}

/// One event of a stream (and the body of a push notification).
#[derive(Debug, Clone, PartialEq)]
pub enum StreamResponse {
    /// A task snapshot (always the first event of a task stream).
    Task(Task),
    /// A direct answer (the only event of a message stream).
    Message(Message),
    /// A status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact or a chunk.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// The task this event is about, if any.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            StreamResponse::Task(t) => Some(&t.id),
            StreamResponse::Message(m) => m.task_id.as_deref(),
            StreamResponse::StatusUpdate(e) => Some(&e.task_id),
            StreamResponse::ArtifactUpdate(e) => Some(&e.task_id),
        }
    }

    /// The state this event reports, if it reports one.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            StreamResponse::Task(t) => Some(t.status.state),
            StreamResponse::StatusUpdate(e) => Some(e.status.state),
            _ => None,
        }
    }

    /// The wrapper key used on the wire.
    pub fn key(&self) -> &'static str {
        match self {
            StreamResponse::Task(_) => "task",
            StreamResponse::Message(_) => "message",
            StreamResponse::StatusUpdate(_) => "statusUpdate",
            StreamResponse::ArtifactUpdate(_) => "artifactUpdate",
        }
    }
}

impl From<SendMessageResponse> for StreamResponse {
    fn from(r: SendMessageResponse) -> Self {
        match r {
            SendMessageResponse::Task(t) => StreamResponse::Task(t),
            SendMessageResponse::Message(m) => StreamResponse::Message(m),
        }
    }
}

impl Serialize for SendMessageResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SendMessageResponse::Task(t) => one_key(s, "task", t),
            SendMessageResponse::Message(m) => one_key(s, "message", m),
        }
    }
}

impl Serialize for StreamResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            StreamResponse::Task(t) => one_key(s, "task", t),
            StreamResponse::Message(m) => one_key(s, "message", m),
            StreamResponse::StatusUpdate(e) => one_key(s, "statusUpdate", e),
            StreamResponse::ArtifactUpdate(e) => one_key(s, "artifactUpdate", e),
        }
    }
}

impl<'de> Deserialize<'de> for StreamResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StreamResponse;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object with one of task, message, statusUpdate, artifactUpdate")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StreamResponse, A::Error> {
                let mut out = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    // The first member wins; conformance reports any second one.
                    let v = match key.as_ref() {
                        "task" => Some(StreamResponse::Task(map.next_value()?)),
                        "message" => Some(StreamResponse::Message(map.next_value()?)),
                        "statusUpdate" | "status_update" => {
                            Some(StreamResponse::StatusUpdate(map.next_value()?))
                        }
                        "artifactUpdate" | "artifact_update" => {
                            Some(StreamResponse::ArtifactUpdate(map.next_value()?))
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            None
                        }
                    };
                    if out.is_none() {
                        out = v;
                    }
                }
                out.ok_or_else(|| {
                    de::Error::custom(
                        "none of task, message, statusUpdate or artifactUpdate is present",
                    )
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for SendMessageResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match StreamResponse::deserialize(d)? {
            StreamResponse::Task(t) => Ok(SendMessageResponse::Task(t)),
            StreamResponse::Message(m) => Ok(SendMessageResponse::Message(m)),
            other => Err(de::Error::custom(format!(
                "a SendMessageResponse holds task or message, not {}",
                other.key()
            ))),
        }
    }
}
