//! The gRPC binding (A2A 1.0 §10, bindings §3): `lf.a2a.v1.A2AService` over HTTP/2.
//!
//! - [`pb`]: the prost messages generated from `proto/a2a/a2a.proto` (no `protoc` needed), the
//!   tonic client [`pb::a2a_service_client::A2aServiceClient`] and server
//!   [`pb::a2a_service_server::A2aServiceServer`] (trait `A2aService`), and ProtoJSON serde
//!   impls on every message; [`rpc`]: `google.rpc.Status` and its error details;
//! - [`convert`]: ProtoJSON <-> prost ([`to_pb`], [`from_pb`]) and the typed pairs between the
//!   crate's wire types and the prost messages ([`PbWire`]);
//! - [`framing`]: the 5-byte gRPC message framing, for servers hand-rolled on axum/hyper;
//! - [`status`]: A2A errors as `grpc-status`/`grpc-message`/`grpc-status-details-bin` and back;
//! - [`Rpc`]: the 11 RPCs, their paths (`/lf.a2a.v1.A2AService/<Rpc>`) and [`Method`]s;
//! - [`conformance_pb`] / [`conformance_frame`]: the [`crate::conformance`] check on protobuf
//!   payloads (it runs on their ProtoJSON).
//!
//! ```
//! use a2a_protocol::grpc::{Rpc, pb, framing, conformance_frame};
//! use a2a_protocol::conformance::ObjectType;
//! assert_eq!(Rpc::GetTask.path(), "/lf.a2a.v1.A2AService/GetTask");
//! // A Message with no message_id and ROLE_UNSPECIFIED: the checker reports both.
//! let m = pb::Message { parts: vec![pb::Part { content: Some(pb::part::Content::Text("hi".into())),
//!     ..Default::default() }], ..Default::default() };
//! let body = framing::encode_frame(&m);
//! let deviations = conformance_frame(ObjectType::Message, &body[5..]).unwrap();
//! assert!(deviations.iter().any(|d| d.path.contains("messageId")));
//! ```

pub mod convert;
pub mod framing;
pub mod status;
pub mod wkt;

pub use convert::{ConvertError, OpenEnums, PbWire, from_pb, to_pb};

use crate::Method;
use crate::conformance::{Deviation, ObjectType, conformance};
use serde_json::Value;

/// The generated `lf.a2a.v1` protobuf messages, enums, the tonic client and server, and their
/// ProtoJSON serde impls (pbjson).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("lf.a2a.v1");
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.serde.rs"));
}

/// The generated `google.rpc` messages: `Status` and the standard error details (`ErrorInfo`,
/// `BadRequest`, ...).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod rpc {
    tonic::include_proto!("google.rpc");
}

/// The encoded `FileDescriptorSet` of `a2a/a2a.proto` with its imports and the `google.rpc`
/// protos (for reflection and descriptor comparisons).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptor.bin"));

/// The protobuf package.
pub const PACKAGE: &str = "lf.a2a.v1";
/// The fully qualified service name.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";
/// Every RPC path starts with this (`/lf.a2a.v1.A2AService/SendMessage`).
pub const PATH_PREFIX: &str = "/lf.a2a.v1.A2AService/";
/// The gRPC content type.
pub const CONTENT_TYPE: &str = "application/grpc";
/// The explicit protobuf form of [`CONTENT_TYPE`] (servers must accept both).
pub const CONTENT_TYPE_PROTO: &str = "application/grpc+proto";
/// The version metadata key (`a2a-version: 1.0`).
pub const VERSION_METADATA: &str = "a2a-version";
/// The extensions metadata key (comma-joined URIs).
pub const EXTENSIONS_METADATA: &str = "a2a-extensions";

/// True for `application/grpc`, `application/grpc+proto` and `application/grpc;…` variants
/// (case-insensitive), false for other codecs such as `application/grpc+json`.
pub fn is_grpc_content_type(value: &str) -> bool {
    let base = value.split(';').next().unwrap_or("").trim();
    base.eq_ignore_ascii_case(CONTENT_TYPE) || base.eq_ignore_ascii_case(CONTENT_TYPE_PROTO)
}

/// One of the 11 RPCs of `A2AService`; the same names as the JSON-RPC [`Method`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Rpc {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreateTaskPushNotificationConfig,
    GetTaskPushNotificationConfig,
    ListTaskPushNotificationConfigs,
    DeleteTaskPushNotificationConfig,
    GetExtendedAgentCard,
}

impl Rpc {
    /// Every RPC, in the proto's order of the JSON-RPC methods.
    pub const ALL: [Rpc; 11] = [
        Rpc::SendMessage,
        Rpc::SendStreamingMessage,
        Rpc::GetTask,
        Rpc::ListTasks,
        Rpc::CancelTask,
        Rpc::SubscribeToTask,
        Rpc::CreateTaskPushNotificationConfig,
        Rpc::GetTaskPushNotificationConfig,
        Rpc::ListTaskPushNotificationConfigs,
        Rpc::DeleteTaskPushNotificationConfig,
        Rpc::GetExtendedAgentCard,
    ];

    /// The RPC name (`GetTask`), equal to the JSON-RPC method name.
    pub fn name(self) -> &'static str {
        Method::from(self).as_str()
    }

    /// The HTTP/2 `:path` (`/lf.a2a.v1.A2AService/GetTask`).
    pub fn path(self) -> &'static str {
        match Method::from(self) {
            Method::SendMessage => "/lf.a2a.v1.A2AService/SendMessage",
            Method::SendStreamingMessage => "/lf.a2a.v1.A2AService/SendStreamingMessage",
            Method::GetTask => "/lf.a2a.v1.A2AService/GetTask",
            Method::ListTasks => "/lf.a2a.v1.A2AService/ListTasks",
            Method::CancelTask => "/lf.a2a.v1.A2AService/CancelTask",
            Method::SubscribeToTask => "/lf.a2a.v1.A2AService/SubscribeToTask",
            Method::CreateTaskPushNotificationConfig => {
                "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig"
            }
            Method::GetTaskPushNotificationConfig => {
                "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig"
            }
            Method::ListTaskPushNotificationConfigs => {
                "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs"
            }
            Method::DeleteTaskPushNotificationConfig => {
                "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig"
            }
            Method::GetExtendedAgentCard => "/lf.a2a.v1.A2AService/GetExtendedAgentCard",
        }
    }

    /// The RPC of a `:path`; `None` for other services or names (answer `UNIMPLEMENTED`).
    pub fn from_path(path: &str) -> Option<Rpc> {
        let name = path.strip_prefix(PATH_PREFIX)?;
        Rpc::ALL.iter().copied().find(|r| r.name() == name)
    }

    /// True for the two server-streaming RPCs.
    pub fn is_server_streaming(self) -> bool {
        matches!(self, Rpc::SendStreamingMessage | Rpc::SubscribeToTask)
    }

    /// The request message type.
    pub fn request_type(self) -> ObjectType {
        match Method::from(self) {
            Method::SendMessage | Method::SendStreamingMessage => ObjectType::SendMessageRequest,
            Method::GetTask => ObjectType::GetTaskRequest,
            Method::ListTasks => ObjectType::ListTasksRequest,
            Method::CancelTask => ObjectType::CancelTaskRequest,
            Method::SubscribeToTask => ObjectType::SubscribeToTaskRequest,
            Method::CreateTaskPushNotificationConfig => ObjectType::TaskPushNotificationConfig,
            Method::GetTaskPushNotificationConfig => {
                ObjectType::GetTaskPushNotificationConfigRequest
            }
            Method::ListTaskPushNotificationConfigs => {
                ObjectType::ListTaskPushNotificationConfigsRequest
            }
            Method::DeleteTaskPushNotificationConfig => {
                ObjectType::DeleteTaskPushNotificationConfigRequest
            }
            Method::GetExtendedAgentCard => ObjectType::GetExtendedAgentCardRequest,
        }
    }

    /// The response message type (of each stream message for streaming RPCs); `None` for
    /// `DeleteTaskPushNotificationConfig`, which returns `google.protobuf.Empty`.
    pub fn response_type(self) -> Option<ObjectType> {
        Some(match Method::from(self) {
            Method::SendMessage => ObjectType::SendMessageResponse,
            Method::SendStreamingMessage | Method::SubscribeToTask => ObjectType::StreamResponse,
            Method::GetTask | Method::CancelTask => ObjectType::Task,
            Method::ListTasks => ObjectType::ListTasksResponse,
            Method::CreateTaskPushNotificationConfig | Method::GetTaskPushNotificationConfig => {
                ObjectType::TaskPushNotificationConfig
            }
            Method::ListTaskPushNotificationConfigs => {
                ObjectType::ListTaskPushNotificationConfigsResponse
            }
            Method::DeleteTaskPushNotificationConfig => return None,
            Method::GetExtendedAgentCard => ObjectType::AgentCard,
        })
    }
}

impl From<Method> for Rpc {
    fn from(m: Method) -> Self {
        match m {
            Method::SendMessage => Rpc::SendMessage,
            Method::SendStreamingMessage => Rpc::SendStreamingMessage,
            Method::GetTask => Rpc::GetTask,
            Method::ListTasks => Rpc::ListTasks,
            Method::CancelTask => Rpc::CancelTask,
            Method::SubscribeToTask => Rpc::SubscribeToTask,
            Method::CreateTaskPushNotificationConfig => Rpc::CreateTaskPushNotificationConfig,
            Method::GetTaskPushNotificationConfig => Rpc::GetTaskPushNotificationConfig,
            Method::ListTaskPushNotificationConfigs => Rpc::ListTaskPushNotificationConfigs,
            Method::DeleteTaskPushNotificationConfig => Rpc::DeleteTaskPushNotificationConfig,
            Method::GetExtendedAgentCard => Rpc::GetExtendedAgentCard,
        }
    }
}

impl From<Rpc> for Method {
    fn from(r: Rpc) -> Self {
        match r {
            Rpc::SendMessage => Method::SendMessage,
            Rpc::SendStreamingMessage => Method::SendStreamingMessage,
            Rpc::GetTask => Method::GetTask,
            Rpc::ListTasks => Method::ListTasks,
            Rpc::CancelTask => Method::CancelTask,
            Rpc::SubscribeToTask => Method::SubscribeToTask,
            Rpc::CreateTaskPushNotificationConfig => Method::CreateTaskPushNotificationConfig,
            Rpc::GetTaskPushNotificationConfig => Method::GetTaskPushNotificationConfig,
            Rpc::ListTaskPushNotificationConfigs => Method::ListTaskPushNotificationConfigs,
            Rpc::DeleteTaskPushNotificationConfig => Method::DeleteTaskPushNotificationConfig,
            Rpc::GetExtendedAgentCard => Method::GetExtendedAgentCard,
        }
    }
}

impl std::fmt::Display for Rpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A protobuf payload could not be turned into ProtoJSON or back.
#[derive(Debug, thiserror::Error)]
pub enum PbJsonError {
    /// The bytes are not a valid encoding of the message.
    #[error("undecodable protobuf {message}: {source}")]
    Decode {
        /// The proto message name.
        message: String,
        /// The prost error.
        #[source]
        source: prost::DecodeError,
    },
    /// ProtoJSON conversion failed.
    #[error(transparent)]
    Convert(#[from] ConvertError),
}

macro_rules! by_type {
    ($t:expr, $m:ident => $body:expr, $($v:ident),* $(,)?) => {
        match $t {
            $( ObjectType::$v => { type $m = pb::$v; $body } )*
        }
    };
}

macro_rules! all_types {
    ($t:expr, $m:ident => $body:expr) => {
        by_type!($t, $m => $body,
            Message, Part, Task, TaskStatus, Artifact, TaskStatusUpdateEvent,
            TaskArtifactUpdateEvent, SendMessageRequest, SendMessageConfiguration,
            SendMessageResponse, StreamResponse, GetTaskRequest, ListTasksRequest,
            ListTasksResponse, CancelTaskRequest, SubscribeToTaskRequest,
            TaskPushNotificationConfig, AuthenticationInfo, GetTaskPushNotificationConfigRequest,
            DeleteTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest,
            ListTaskPushNotificationConfigsResponse, GetExtendedAgentCardRequest, AgentCard,
            AgentInterface, AgentProvider, AgentCapabilities, AgentExtension, AgentSkill,
            AgentCardSignature, SecurityRequirement, StringList, SecurityScheme,
            ApiKeySecurityScheme, HttpAuthSecurityScheme, OAuth2SecurityScheme,
            OpenIdConnectSecurityScheme, MutualTlsSecurityScheme, OAuthFlows,
            AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow,
            ImplicitOAuthFlow, PasswordOAuthFlow)
    };
}

/// Decode the protobuf encoding of a message of type `t` (a frame body) into ProtoJSON.
pub fn decode_to_json(t: ObjectType, bytes: &[u8]) -> Result<Value, PbJsonError> {
    all_types!(t, M => {
        let m = <M as prost::Message>::decode(bytes).map_err(|source| PbJsonError::Decode {
            message: t.name(),
            source,
        })?;
        Ok(from_pb(&m)?)
    })
}

/// Encode the ProtoJSON of a message of type `t` as protobuf bytes (no frame header).
pub fn encode_from_json(t: ObjectType, json: &Value) -> Result<Vec<u8>, PbJsonError> {
    all_types!(t, M => {
        let m: M = to_pb(json)?;
        Ok(prost::Message::encode_to_vec(&m))
    })
}

/// The conformance check on a protobuf message: its ProtoJSON through
/// [`crate::conformance::conformance`]. REQUIRED fields left at their default (`""`, 0,
/// `UNSPECIFIED`) are absent from ProtoJSON and so reported as missing.
pub fn conformance_pb<M: serde::Serialize>(
    t: ObjectType,
    message: &M,
) -> Result<Vec<Deviation>, ConvertError> {
    Ok(conformance(t, &from_pb(message)?))
}

/// The conformance check on a frame body holding a message of type `t`.
pub fn conformance_frame(t: ObjectType, body: &[u8]) -> Result<Vec<Deviation>, PbJsonError> {
    Ok(conformance(t, &decode_to_json(t, body)?))
}
