//! The gRPC binding (placeholder until the protocol crate's gRPC module lands).

use crate::agent::AgentState;
use crate::rpc::Call;
use axum::response::Response;
use serde_json::Value;

/// Render a unary answer as gRPC.
pub(crate) fn respond(
    st: &AgentState,
    call: &Call,
    envelope: Value,
    rpc_error: Option<i64>,
) -> Response {
    crate::rest::respond(st, call, envelope, rpc_error)
}
