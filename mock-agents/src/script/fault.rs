//! Deliberate misbehaviour: a [`Fault`] applied to one request in the transport or HTTP layer,
//! and a [`Mutation`] applied to every payload about a task.

use super::*;

/// A fault applied to one request, in the transport or HTTP layer.
///
/// Names follow the issue; toxiproxy equivalents: `stall` ≈ `latency`/`timeout`, `trickle` ≈
/// `bandwidth`, `close_after` ≈ `limit_data`, `reset_after` ≈ `reset_peer`.
///
/// Every fault applies to every binding the agent serves, in that transport's terms:
///
/// | fault | JSON-RPC | HTTP+JSON | gRPC |
/// |---|---|---|---|
/// | `drop_before`, `drop_response` | TCP reset | TCP reset | TCP reset (the whole HTTP/2 connection) |
/// | `http_status` | that status, text body | that status, AIP-193 error body | the gRPC code of that status (503 `UNAVAILABLE`, 429 `RESOURCE_EXHAUSTED`, 500 `INTERNAL`, …), trailers-only; `retry-after` kept as response metadata |
/// | `stall`, `stall_response` | no answer meanwhile | same | same |
/// | `close_after` | the SSE stream ends cleanly | same | the call ends with `OK` after that many messages (a premature clean end) |
/// | `reset_after` | half an SSE event, then TCP reset | same | half a frame, then TCP reset |
/// | `trickle` | the body (unary or SSE) sent slowly | same | the frames sent slowly, trailers last |
/// | `rpc_error` | HTTP 200 with the JSON-RPC error | the mapped HTTP status and error body | the mapped gRPC status with `ErrorInfo` details |
/// | `garbage_body` | HTTP 200, body not JSON | HTTP 200, body not JSON | one frame that is not protobuf (`0xFF` + the text), then `OK` |
/// | `omit_fields` | the envelope without the pointers | the body (the `result`) without them | the message encoded without them: a message field absent, a string or enum at its default |
///
/// Stream steps follow the same rule: `raw_sse` is that `data:` text over SSE and a frame of
/// undecodable protobuf (`0xFF` + the text) over gRPC; `huge_event` an SSE event or a gRPC
/// frame of that many bytes; `unknown_state` the unknown name over SSE and the unknown enum
/// number 99 (or the state itself when it is a number) over gRPC; `raw_event` its `result`
/// as the bare event (HTTP+JSON) or encoded as a `StreamResponse` (gRPC, sent as an
/// undecodable frame when it is no valid `StreamResponse`); `malformed_event` its event without
/// the field (gRPC: the field at its default, or an absent message). Mutations are defined on the
/// JSON-RPC envelope: `wrong_rpc_id` has no meaning on the other bindings, `unknown_field`,
/// `legacy_fields` and `lowercase_enums` act on HTTP+JSON bodies and have no protobuf form
/// (a gRPC answer they would make unencodable is sent unmutated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Close the connection before the request is processed: nothing happened.
    DropBefore,
    /// Process the request, then close the connection instead of answering: an indefinite outcome.
    DropResponse,
    /// Answer with this HTTP status (and `Retry-After` seconds if given) without processing.
    HttpStatus {
        /// The HTTP status such as 500, 503 or 429.
        status: u16,
        /// `Retry-After` header value in seconds.
        #[serde(default)]
        retry_after_s: Option<u64>,
    },
    /// Wait this long before processing.
    Stall {
        /// Milliseconds.
        ms: u64,
    },
    /// Process the request (the task exists), then hold the answer this long: the client sees
    /// no reply meanwhile, an indefinite outcome (for example while it is killed).
    StallResponse {
        /// Milliseconds.
        ms: u64,
    },
    /// On a stream: close cleanly after this many events.
    CloseAfter {
        /// Events sent before the close.
        events: u32,
    },
    /// On a stream: after this many events send half an event and reset the connection.
    ResetAfter {
        /// Events sent before the reset.
        events: u32,
    },
    /// Send the response body at this many bytes per second.
    Trickle {
        /// Bytes per second (at least 1).
        bytes_per_sec: u64,
    },
    /// Answer with this JSON-RPC error without processing (HTTP 200).
    RpcError {
        /// The JSON-RPC error code, such as -32603.
        code: i64,
        /// The error message (default: the code's standard message).
        #[serde(default)]
        message: Option<String>,
    },
    /// Answer HTTP 200 with a body that is not JSON, without processing.
    GarbageBody {
        /// The body (default `<<garbage>>`).
        #[serde(default)]
        body: Option<String>,
    },
    /// Process the request normally, then remove these JSON pointers (into the JSON-RPC
    /// envelope, each starting with `/result/`) from the answer: a unary answer, or the first
    /// stream event in which any of them exists. A well-formed answer lacking REQUIRED fields
    /// (spec §5.7, §14.1.1). Journal: a `fault` entry `omit_fields:<the pointers removed>`
    /// just before the `response` or `sse_event` that lacks them.
    OmitFields {
        /// JSON pointers such as `/result/task/status` or `/result/statusUpdate/taskId`.
        pointers: Vec<String>,
    },
}

impl Fault {
    /// How long the fault's own timers hold a request (a stall, a `Retry-After`), in ms; 0 for
    /// a fault that acts at once.
    pub fn scripted_wait_ms(&self) -> u64 {
        match self {
            Fault::Stall { ms } | Fault::StallResponse { ms } => *ms,
            Fault::HttpStatus {
                retry_after_s: Some(s),
                ..
            } => s.saturating_mul(1000),
            _ => 0,
        }
    }

    /// [`Fault::OmitFields`]: process normally, then remove these JSON pointers (each starting
    /// with `/result/`) from the answer.
    pub fn omit_fields<'a>(pointers: impl IntoIterator<Item = &'a str>) -> Fault {
        Fault::OmitFields {
            pointers: pointers.into_iter().map(str::to_string).collect(),
        }
    }
}

/// A deliberate deviation applied to every payload sent about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mutation {
    /// Answer with a JSON-RPC `id` different from the request's.
    WrongRpcId,
    /// Add 0.3 `kind` discriminators and `final` flags.
    LegacyFields,
    /// Emit states and roles in lowercase 0.3 spelling.
    LowercaseEnums,
    /// Add a field no proto has.
    UnknownField,
}
