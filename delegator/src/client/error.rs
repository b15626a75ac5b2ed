//! [`ClientError`]: how a call failed, and whether a retry may help.

use super::*;

/// A call failed. [`ClientError::is_transient`] tells whether a retry may help.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The connection could not be made: the request never reached the agent.
    #[error("connect to {url}: {message}")]
    Connect {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// The request may or may not have reached the agent (timeout, reset, body error).
    #[error("transport error (outcome unknown): {0}")]
    Transport(String),
    /// A non-2xx HTTP status without an A2A error body (or a 429/5xx, or the gRPC statuses
    /// `UNAVAILABLE` = 503, `RESOURCE_EXHAUSTED` = 429, `DEADLINE_EXCEEDED` = 504).
    #[error("HTTP {status}{}", retry_after.map(|d| format!(" (Retry-After {}s)", d.as_secs())).unwrap_or_default())]
    Http {
        /// The status.
        status: u16,
        /// `Retry-After`, when given.
        retry_after: Option<Duration>,
    },
    /// An A2A (or JSON-RPC) error: a definite answer, in JSON-RPC form whatever the binding.
    #[error("JSON-RPC error {0}")]
    Rpc(JsonRpcError),
    /// The agent's reply is not valid A2A (garbage, wrong shape, oversize).
    #[error("invalid response: {0}")]
    Protocol(String),
    /// The agent broke the protocol in a way a retry cannot mend: a response or stream event
    /// whose JSON-RPC `id` is not the request's, an SSE event that is not JSON, too large, or not
    /// a `StreamResponse`. The delegation fails visibly.
    #[error("agent protocol error: {0}")]
    AgentProtocol(String),
    /// The method does not exist for this agent's protocol version.
    #[error("{0} is not available for a {1} agent")]
    NotAvailable(&'static str, &'static str),
    /// No interface of the agent served the call: each failed at the transport level before any
    /// answer. Classified like the last failure, except that it is transient if any was.
    #[error("no advertised interface answered (tried {})", tried.join("; "))]
    Unserved {
        /// `binding url: error` of each interface tried, in order.
        tried: Vec<String>,
        /// The last failure.
        last: Box<ClientError>,
        /// Whether any of the failures was transient.
        any_transient: bool,
    },
}

impl ClientError {
    /// Connect errors, transport errors, 5xx, 408, 429 and invalid responses: worth a retry.
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Connect { .. } | ClientError::Transport(_) | ClientError::Protocol(_) => {
                true
            }
            ClientError::Http { status, .. } => *status >= 500 || *status == 429 || *status == 408,
            ClientError::Rpc(_) | ClientError::NotAvailable(..) | ClientError::AgentProtocol(_) => {
                false
            }
            ClientError::Unserved { any_transient, .. } => *any_transient,
        }
    }

    /// Whether the agent broke the protocol (see [`ClientError::AgentProtocol`]).
    pub fn is_agent_protocol(&self) -> bool {
        match self {
            ClientError::AgentProtocol(_) => true,
            ClientError::Unserved { last, .. } => last.is_agent_protocol(),
            _ => false,
        }
    }

    /// The JSON-RPC code, for an RPC error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            ClientError::Unserved { last, .. } => last.code(),
            _ => None,
        }
    }

    /// The HTTP status, for an HTTP error.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            ClientError::Unserved { last, .. } => last.http_status(),
            _ => None,
        }
    }

    /// `Retry-After`, for an HTTP error that carried one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Http { retry_after, .. } => *retry_after,
            ClientError::Unserved { last, .. } => last.retry_after(),
            _ => None,
        }
    }

    /// Whether `binding` failed at the transport level before any answer, so that the same call
    /// may go to another interface: connection refused, HTTP 404/405 without an A2A error,
    /// HTTP 415, and, except over JSON-RPC (where -32601 is an answer), an unknown operation
    /// without `ErrorInfo` (gRPC `UNIMPLEMENTED`, an HTTP+JSON router's 404/405).
    pub fn is_unserved(&self, binding: Binding) -> bool {
        match self {
            ClientError::Connect { .. } => true,
            ClientError::Http { status, .. } => matches!(status, 404 | 405 | 415),
            ClientError::Rpc(e) => {
                binding != Binding::JsonRpc
                    && e.error_code() == ErrorCode::MethodNotFound
                    && e.error_info().is_none()
            }
            _ => false,
        }
    }
}
