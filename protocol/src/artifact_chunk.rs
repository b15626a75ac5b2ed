//! Stream events decoded once from a shared payload, with the inline bytes of artifact chunks
//! left where they are: the hot path of a consumer that reassembles large streamed artifacts.
//!
//! [`decode_stream_response`] (a bare `StreamResponse`, the HTTP+JSON stream form) and
//! [`decode_jsonrpc_stream_response`] (a JSON-RPC response around one) read the JSON text of an
//! SSE payload held in [`Bytes`] straight into typed values, with no intermediate
//! `serde_json::Value`. An `artifactUpdate` becomes an [`ArtifactChunk`] whose `text` parts are
//! **slices of the payload** (no copy when the JSON string has no escapes, which is always the
//! case for generated text; one unescaping copy otherwise) and whose `raw` parts are decoded from
//! base64 once, into the buffer they are handed over in. Every other event (`task`, `message`,
//! `statusUpdate`) is the ordinary [`StreamResponse`].
//!
//! The decode accepts exactly what the typed decode of [`StreamResponse`] accepts and gives the
//! same values ([`SharedStreamResponse::into_stream_response`] turns the result into the
//! [`StreamResponse`] that decode gives; `tests/artifact_chunk.rs` checks the two against each
//! other). It runs no conformance check: a consumer that wants one runs
//! [`crate::conformance`] on the payloads it chooses, off this path.

use crate::de::nullable;
use crate::jsonrpc::{Id, JsonRpcError, JsonRpcResponse};
use crate::message::{Metadata, Part, PartContent, StrField, decode_base64_lenient};
use crate::task::{Artifact, StreamResponse, TaskArtifactUpdateEvent};
use bytes::Bytes;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// The inline content of a [`ChunkPart`]: the bytes of `text` and `raw` parts are shared.
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkContent {
    /// The UTF-8 bytes of a `text` part.
    Text(Bytes),
    /// The decoded bytes of a `raw` part.
    Raw(Bytes),
    /// A `url` part (the content is elsewhere).
    Url(String),
    /// A `data` part.
    Data(Value),
}

/// A part of an [`ArtifactChunk`]: [`Part`] with shared inline bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkPart {
    /// Which content this part carries.
    pub content: ChunkContent,
    /// Free-form metadata.
    pub metadata: Option<Metadata>,
    /// A file name hint.
    pub filename: Option<String>,
    /// The media type, as sent.
    pub media_type: Option<String>,
}

/// An `artifactUpdate` event ([`TaskArtifactUpdateEvent`]) with its artifact's fields inlined and
/// its parts' bytes shared ([`ChunkPart`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArtifactChunk {
    /// The task.
    pub task_id: String,
    /// The task's context.
    pub context_id: String,
    /// Add to the artifact with the same id.
    pub append: bool,
    /// The final chunk of the artifact.
    pub last_chunk: bool,
    /// The event's metadata.
    pub metadata: Option<Metadata>,
    /// The artifact's id.
    pub artifact_id: String,
    /// The artifact's name.
    pub name: Option<String>,
    /// The artifact's description.
    pub description: Option<String>,
    /// The artifact's metadata.
    pub artifact_metadata: Option<Metadata>,
    /// The artifact's extensions.
    pub extensions: Vec<String>,
    /// The artifact's parts.
    pub parts: Vec<ChunkPart>,
}

/// One stream event: an artifact chunk with shared bytes, or any other event.
#[derive(Debug, Clone, PartialEq)]
pub enum SharedStreamResponse {
    /// An `artifactUpdate`.
    ArtifactChunk(ArtifactChunk),
    /// A `task`, `message` or `statusUpdate` event.
    Other(StreamResponse),
}

impl ChunkContent {
    /// The bytes this content contributes to an artifact inline (as
    /// [`Part::inline_bytes`]): text and raw bytes as they are, the JSON text of data, nothing
    /// for a url.
    pub fn inline_bytes(&self) -> Option<Bytes> {
        match self {
            ChunkContent::Text(b) | ChunkContent::Raw(b) => Some(b.clone()),
            ChunkContent::Data(v) => serde_json::to_vec(v).ok().map(Bytes::from),
            ChunkContent::Url(_) => None,
        }
    }
}

impl From<Part> for ChunkPart {
    /// Moves the part's bytes into shared buffers (no copy).
    fn from(p: Part) -> Self {
        ChunkPart {
            content: match p.content {
                PartContent::Text(t) => ChunkContent::Text(Bytes::from(t)),
                PartContent::Raw(b) => ChunkContent::Raw(Bytes::from(b)),
                PartContent::Url(u) => ChunkContent::Url(u),
                PartContent::Data(v) => ChunkContent::Data(v),
            },
            metadata: p.metadata,
            filename: p.filename,
            media_type: p.media_type,
        }
    }
}

impl From<ChunkPart> for Part {
    /// Copies the shared bytes out.
    fn from(p: ChunkPart) -> Self {
        Part {
            content: match p.content {
                ChunkContent::Text(b) => PartContent::Text(String::from_utf8_lossy(&b).into()),
                ChunkContent::Raw(b) => PartContent::Raw(b.to_vec()),
                ChunkContent::Url(u) => PartContent::Url(u),
                ChunkContent::Data(v) => PartContent::Data(v),
            },
            metadata: p.metadata,
            filename: p.filename,
            media_type: p.media_type,
        }
    }
}

impl ArtifactChunk {
    /// A chunk made of `artifact` (its parts' bytes moved, not copied).
    pub fn from_artifact(artifact: Artifact, append: bool, last_chunk: bool) -> Self {
        ArtifactChunk {
            append,
            last_chunk,
            artifact_id: artifact.artifact_id,
            name: artifact.name,
            description: artifact.description,
            artifact_metadata: artifact.metadata,
            extensions: artifact.extensions,
            parts: artifact.parts.into_iter().map(ChunkPart::from).collect(),
            ..Default::default()
        }
    }
}

impl From<TaskArtifactUpdateEvent> for ArtifactChunk {
    fn from(e: TaskArtifactUpdateEvent) -> Self {
        ArtifactChunk {
            task_id: e.task_id,
            context_id: e.context_id,
            metadata: e.metadata,
            ..ArtifactChunk::from_artifact(e.artifact, e.append, e.last_chunk)
        }
    }
}

impl From<ArtifactChunk> for TaskArtifactUpdateEvent {
    /// Copies the shared bytes out.
    fn from(c: ArtifactChunk) -> Self {
        TaskArtifactUpdateEvent {
            task_id: c.task_id,
            context_id: c.context_id,
            artifact: Artifact {
                artifact_id: c.artifact_id,
                name: c.name,
                description: c.description,
                parts: c.parts.into_iter().map(Part::from).collect(),
                metadata: c.artifact_metadata,
                extensions: c.extensions,
            },
            append: c.append,
            last_chunk: c.last_chunk,
            metadata: c.metadata,
        }
    }
}

impl SharedStreamResponse {
    /// The [`StreamResponse`] this is (an artifact chunk's bytes copied out).
    pub fn into_stream_response(self) -> StreamResponse {
        match self {
            SharedStreamResponse::ArtifactChunk(c) => StreamResponse::ArtifactUpdate(c.into()),
            SharedStreamResponse::Other(r) => r,
        }
    }

    /// The wrapper key used on the wire (as [`StreamResponse::key`]).
    pub fn key(&self) -> &'static str {
        match self {
            SharedStreamResponse::ArtifactChunk(_) => "artifactUpdate",
            SharedStreamResponse::Other(r) => r.key(),
        }
    }
}

impl From<StreamResponse> for SharedStreamResponse {
    /// An artifact update becomes an [`ArtifactChunk`] (bytes moved, not copied).
    fn from(r: StreamResponse) -> Self {
        match r {
            StreamResponse::ArtifactUpdate(u) => SharedStreamResponse::ArtifactChunk(u.into()),
            other => SharedStreamResponse::Other(other),
        }
    }
}

/// Decode a bare `StreamResponse` (the `data:` of an HTTP+JSON stream event) from `payload`.
pub fn decode_stream_response(payload: &Bytes) -> serde_json::Result<SharedStreamResponse> {
    let view: StreamView<'_> = serde_json::from_slice(payload)?;
    Ok(view.share(payload))
}

/// Decode a JSON-RPC response around a `StreamResponse` (the `data:` of a JSON-RPC stream
/// event) from `payload`. Same rules as the `Deserialize` of
/// `JsonRpcResponse<StreamResponse>`: an `error` member wins, `"result": null` is an error.
pub fn decode_jsonrpc_stream_response(
    payload: &Bytes,
) -> serde_json::Result<JsonRpcResponse<SharedStreamResponse>> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(default)]
        id: Option<Id>,
        #[serde(default, borrow)]
        result: Option<StreamView<'a>>,
        #[serde(default)]
        error: Option<JsonRpcError>,
    }
    let env: Envelope<'_> = serde_json::from_slice(payload)?;
    let id = env.id.unwrap_or(Id::Null);
    match (env.result, env.error) {
        (_, Some(e)) => Ok(JsonRpcResponse::error(id, e)),
        (Some(r), None) => Ok(JsonRpcResponse::success(id, r.share(payload))),
        (None, None) => Err(de::Error::custom(
            "response has neither result nor error (or a null result)",
        )),
    }
}

/// `part` (borrowed from `whole`'s bytes) as a slice of `whole`; a copy if it is not one.
fn share_str(whole: &Bytes, part: Cow<'_, str>) -> Bytes {
    match part {
        Cow::Owned(s) => Bytes::from(s),
        Cow::Borrowed(s) => {
            let at = (s.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
            if at <= whole.len() && s.len() <= whole.len() - at {
                whole.slice(at..at + s.len())
            } else {
                Bytes::copy_from_slice(s.as_bytes())
            }
        }
    }
}

/// `StreamResponse` with the artifact update borrowed from the payload.
enum StreamView<'a> {
    Chunk(UpdateView<'a>),
    Other(StreamResponse),
}

impl StreamView<'_> {
    fn share(self, payload: &Bytes) -> SharedStreamResponse {
        match self {
            StreamView::Other(r) => SharedStreamResponse::Other(r),
            StreamView::Chunk(u) => SharedStreamResponse::ArtifactChunk(ArtifactChunk {
                task_id: u.task_id,
                context_id: u.context_id,
                append: u.append,
                last_chunk: u.last_chunk,
                metadata: u.metadata,
                artifact_id: u.artifact.artifact_id,
                name: u.artifact.name,
                description: u.artifact.description,
                artifact_metadata: u.artifact.metadata,
                extensions: u.artifact.extensions,
                parts: u
                    .artifact
                    .parts
                    .into_iter()
                    .map(|p| ChunkPart {
                        content: match p.content {
                            ContentView::Text(t) => ChunkContent::Text(share_str(payload, t)),
                            ContentView::Raw(b) => ChunkContent::Raw(Bytes::from(b)),
                            ContentView::Url(u) => ChunkContent::Url(u),
                            ContentView::Data(v) => ChunkContent::Data(v),
                        },
                        metadata: p.metadata,
                        filename: p.filename,
                        media_type: p.media_type,
                    })
                    .collect(),
            }),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for StreamView<'a> {
    /// As `StreamResponse`'s: the first member wins, later ones are still decoded.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = StreamView<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object with one of task, message, statusUpdate, artifactUpdate")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = None;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let v = match key.as_ref() {
                        "task" => Some(StreamView::Other(StreamResponse::Task(map.next_value()?))),
                        "message" => Some(StreamView::Other(StreamResponse::Message(
                            map.next_value()?,
                        ))),
                        "statusUpdate" | "status_update" => Some(StreamView::Other(
                            StreamResponse::StatusUpdate(map.next_value()?),
                        )),
                        "artifactUpdate" | "artifact_update" => {
                            Some(StreamView::Chunk(map.next_value()?))
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
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// [`TaskArtifactUpdateEvent`] borrowing its parts' text (same attributes).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct UpdateView<'a> {
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "task_id")]
    task_id: String,
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "context_id")]
    context_id: String,
    #[serde(deserialize_with = "nullable", borrow)]
    artifact: ArtifactView<'a>,
    #[serde(deserialize_with = "nullable")]
    append: bool,
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "last_chunk")]
    last_chunk: bool,
    metadata: Option<Metadata>,
}

/// [`Artifact`] borrowing its parts' text (same attributes).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ArtifactView<'a> {
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "artifact_id")]
    artifact_id: String,
    name: Option<String>,
    description: Option<String>,
    #[serde(deserialize_with = "nullable", borrow)]
    parts: Vec<PartView<'a>>,
    metadata: Option<Metadata>,
    #[serde(deserialize_with = "nullable")]
    extensions: Vec<String>,
}

enum ContentView<'a> {
    Text(Cow<'a, str>),
    Raw(Vec<u8>),
    Url(String),
    Data(Value),
}

/// [`Part`] borrowing its text (same decoding rules as `Part`'s `Deserialize`).
struct PartView<'a> {
    content: ContentView<'a>,
    metadata: Option<Metadata>,
    filename: Option<String>,
    media_type: Option<String>,
}

impl<'de: 'a, 'a> Deserialize<'de> for PartView<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = PartView<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part object with one of text, raw, url or data")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut content: Option<ContentView<'a>> = None;
                let (mut metadata, mut filename, mut media_type) = (None, None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    // The first content key wins (as for `Part`).
                    let c = match key.as_ref() {
                        "text" => map
                            .next_value::<Option<StrField<'de>>>()?
                            .map(|s| ContentView::Text(s.0)),
                        "raw" => match map.next_value::<Option<StrField<'de>>>()? {
                            Some(s) => {
                                Some(ContentView::Raw(decode_base64_lenient(&s.0).map_err(
                                    |e| de::Error::custom(format!("raw: invalid base64: {e}")),
                                )?))
                            }
                            None => None,
                        },
                        "url" => map.next_value::<Option<String>>()?.map(ContentView::Url),
                        "data" => Some(ContentView::Data(map.next_value::<Value>()?)),
                        "metadata" => {
                            metadata = map.next_value()?;
                            None
                        }
                        "filename" => {
                            filename = map.next_value()?;
                            None
                        }
                        "mediaType" | "media_type" => {
                            media_type = map.next_value()?;
                            None
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            None
                        }
                    };
                    if content.is_none() {
                        content = c;
                    }
                }
                let content = content
                    .ok_or_else(|| de::Error::custom("part has none of text, raw, url or data"))?;
                Ok(PartView {
                    content,
                    metadata,
                    filename,
                    media_type,
                })
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}
