//! # a2a-protocol: the A2A 1.0 wire layer
//!
//! Everything the mock agents, the reference delegator and the harness need to speak A2A 1.0
//! over JSON-RPC, HTTP+JSON and gRPC, and nothing about mocks, stores or scenarios:
//!
//! - the wire objects ([`Message`], [`Part`], [`Task`], [`AgentCard`], the method params and
//!   results), emitted exactly as ProtoJSON and decoded leniently ([`codec`]);
//! - JSON-RPC 2.0 envelopes and [`Method`] names ([`jsonrpc`]) and every error code ([`error`]);
//! - the SSE codec for streams ([`sse`]);
//! - [`grpc`]: the gRPC binding: prost types and a tonic client/server generated from
//!   `proto/a2a/a2a.proto` (package `lf.a2a.v1`, compiled without `protoc`), ProtoJSON <-> prost
//!   conversions for every wire type, the 5-byte message framing, A2A errors as gRPC status
//!   trailers (`google.rpc.ErrorInfo` details) and the conformance check on protobuf payloads;
//! - [`conformance`]: the deviations from 1.0 found in a payload, each with a JSON path and a rule;
//! - [`version`]: the one [`ProtocolVersion`] type, the `A2A-Version` header and its negotiation;
//! - [`compat03`]: the one adapter for 0.3 peers;
//! - [`xdeleg`]: the `x-deleg` metadata convention for deadlines, budgets, depth and chain.
//!
//! Raw access is always possible: every payload can be built and sent as a `serde_json::Value`.
//!
//! ```
//! use a2a_protocol::{Message, SendMessageRequest, jsonrpc::JsonRpcRequest, Method};
//! let req = JsonRpcRequest::new(
//!     "r-1",
//!     Method::SendMessage.as_str(),
//!     SendMessageRequest { message: Message::user_text("m-1", "hello"), ..Default::default() },
//! );
//! let json = serde_json::to_string(&req).unwrap();
//! assert!(json.contains(r#""role":"ROLE_USER""#));
//! ```

#![warn(missing_docs)]

pub mod artifact_chunk;
pub mod binding;
pub mod card;
pub mod codec;
pub mod compat03;
pub mod conformance;
pub(crate) mod de;
pub mod enums;
pub mod error;
pub mod grpc;
pub mod jsonrpc;
pub mod message;
pub mod requests;
pub mod rest;
#[cfg(feature = "signing")]
pub mod signing;
pub mod sse;
pub mod task;
pub mod timestamp;
pub mod version;
pub mod xdeleg;

pub use binding::{BINDING_GRPC, BINDING_HTTP_JSON, Binding};
pub use card::*;
pub use enums::{Role, TaskState};
pub use error::{ErrorCode, ErrorInfo, GrpcCode};
pub use jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method};
pub use message::{Message, Metadata, Part, PartContent};
pub use requests::*;
pub use task::*;
pub use timestamp::Timestamp;
pub use version::{PROTOCOL_VERSION, ProtocolVersion, VERSION_HEADER};
