//! ProtoJSON <-> prost conversions.
//!
//! The generated prost types carry pbjson serde impls that read and write ProtoJSON, and the
//! crate's wire types ([`crate::Task`], [`crate::Message`], ...) read and write ProtoJSON too, so
//! every conversion is serde through a [`serde_json::Value`]:
//!
//! * [`to_pb`] / [`from_pb`]: any ProtoJSON value <-> any generated message;
//! * [`PbWire`]: the typed pairs (`Task` <-> [`pb::Task`], ...), also as `TryFrom` impls.
//!
//! Proto3 enums are open: a `TaskState` or `Role` number the enum does not name is written by
//! [`from_pb`] as the bare number (as protobuf's `MessageToDict` does) so the conformance checker
//! sees it, and [`PbWire::from_pb`] turns it into the wire layer's unknown state,
//! [`TaskState::Unspecified`](crate::TaskState::Unspecified) (or `Role::Unspecified`), instead of
//! failing. `Struct`/`Value` numbers are doubles in protobuf: [`from_pb`] writes the integral ones
//! as JSON integers.
//!
//! ```
//! use a2a_protocol::grpc::{PbWire, pb};
//! use a2a_protocol::{Message, Role};
//! let m = Message::user_text("m-1", "hi");
//! let p: pb::Message = m.to_pb().unwrap();
//! assert_eq!(p.role, pb::Role::User as i32);
//! assert_eq!(Message::from_pb(&p).unwrap(), m);
//! ```

use super::pb;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A conversion between ProtoJSON, prost messages and wire types failed.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// The ProtoJSON value does not deserialize into the protobuf message.
    #[error("ProtoJSON does not fit protobuf {message}: {source}")]
    ToProto {
        /// The Rust type of the target message.
        message: &'static str,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The protobuf message cannot be written as ProtoJSON (e.g. a timestamp out of range).
    #[error("protobuf {message} has no ProtoJSON form: {source}")]
    FromProto {
        /// The Rust type of the source message.
        message: &'static str,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The ProtoJSON of a protobuf message does not deserialize into the wire type.
    #[error("ProtoJSON of protobuf {message} does not fit the wire type: {source}")]
    ToWire {
        /// The Rust type of the source message.
        message: &'static str,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
}

/// Deserialize a ProtoJSON value into a generated message (camelCase and snake_case keys,
/// enum names or numbers; unknown keys are an error).
///
/// `Struct`/`Value` numbers are doubles: an integer beyond ±2^53 becomes the nearest double
/// (as protobuf's Python `ParseDict` does) instead of failing the conversion.
pub fn to_pb<M: DeserializeOwned>(value: &Value) -> Result<M, ConvertError> {
    let fixed;
    let value = if has_wide_integers(value) {
        let mut v = value.clone();
        widen_integers(&mut v);
        fixed = v;
        &fixed
    } else {
        value
    };
    M::deserialize(value).map_err(|source| ConvertError::ToProto {
        message: std::any::type_name::<M>(),
        source,
    })
}

/// 2^53: integers below this magnitude are exact doubles (pbjson-types accepts only those).
const EXACT_DOUBLE: f64 = 9_007_199_254_740_992.0;

fn is_wide(n: &serde_json::Number) -> bool {
    !n.is_f64() && n.as_f64().is_some_and(|f| f.abs() >= EXACT_DOUBLE)
}

fn has_wide_integers(v: &Value) -> bool {
    match v {
        Value::Number(n) => is_wide(n),
        Value::Array(a) => a.iter().any(has_wide_integers),
        Value::Object(o) => o.values().any(has_wide_integers),
        _ => false,
    }
}

/// Integers beyond ±2^53 (only `Struct`/`Value` numbers can be: A2A has no 64-bit fields)
/// become doubles; pbjson-types rejects them otherwise.
fn widen_integers(v: &mut Value) {
    match v {
        Value::Number(n) if is_wide(n) => {
            if let Some(f) = n.as_f64().and_then(serde_json::Number::from_f64) {
                *n = f;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(widen_integers),
        Value::Object(o) => o.values_mut().for_each(widen_integers),
        _ => {}
    }
}

/// Serialize a generated message as canonical ProtoJSON (camelCase keys, default values
/// omitted, enum names, base64 bytes, RFC 3339 `Z` timestamps, integral numbers as integers).
///
/// Fails only for values ProtoJSON cannot express (a timestamp out of range, a non-finite
/// double).
pub fn from_pb<M: Serialize>(message: &M) -> Result<Value, ConvertError> {
    let mut v = serde_json::to_value(message).map_err(|source| ConvertError::FromProto {
        message: std::any::type_name::<M>(),
        source,
    })?;
    integral_numbers(&mut v);
    Ok(v)
}

/// `Struct`/`Value` numbers are doubles: write `1.0` as `1` (the Python oracle does the same).
fn integral_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < EXACT_DOUBLE
            {
                // Exact: |f| < 2^53 and integral.
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_numbers),
        Value::Object(o) => o.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// A wire type of this crate with its generated protobuf counterpart.
pub trait PbWire: Serialize + DeserializeOwned {
    /// The generated prost message.
    type Pb: prost::Message + Default + Serialize + DeserializeOwned + OpenEnums + Clone;

    /// The protobuf message for this wire value.
    fn to_pb(&self) -> Result<Self::Pb, ConvertError> {
        let mut v = serde_json::to_value(self).map_err(|source| ConvertError::ToProto {
            message: std::any::type_name::<Self::Pb>(),
            source,
        })?;
        widen_integers(&mut v);
        to_pb(&v)
    }

    /// The wire value of a protobuf message; unknown enum numbers become `UNSPECIFIED`.
    fn from_pb(pb: &Self::Pb) -> Result<Self, ConvertError> {
        let v = if pb.has_unknown_enums() {
            let mut clamped = pb.clone();
            clamped.clamp_unknown_enums();
            from_pb(&clamped)?
        } else {
            from_pb(pb)?
        };
        serde_json::from_value(v).map_err(|source| ConvertError::ToWire {
            message: std::any::type_name::<Self::Pb>(),
            source,
        })
    }
}

/// Generated messages that (transitively) hold an open enum field.
pub trait OpenEnums {
    /// True when some `TaskState`/`Role` field holds a number the enum does not name.
    fn has_unknown_enums(&self) -> bool {
        false
    }
    /// Set every such field to 0 (`UNSPECIFIED`).
    fn clamp_unknown_enums(&mut self) {}
}

fn unknown_state(n: i32) -> bool {
    pb::TaskState::try_from(n).is_err()
}

fn unknown_role(n: i32) -> bool {
    pb::Role::try_from(n).is_err()
}

impl OpenEnums for pb::Message {
    fn has_unknown_enums(&self) -> bool {
        unknown_role(self.role)
    }
    fn clamp_unknown_enums(&mut self) {
        if unknown_role(self.role) {
            self.role = 0;
        }
    }
}

impl OpenEnums for pb::TaskStatus {
    fn has_unknown_enums(&self) -> bool {
        unknown_state(self.state) || self.message.as_ref().is_some_and(|m| m.has_unknown_enums())
    }
    fn clamp_unknown_enums(&mut self) {
        if unknown_state(self.state) {
            self.state = 0;
        }
        if let Some(m) = self.message.as_mut() {
            m.clamp_unknown_enums();
        }
    }
}

impl OpenEnums for pb::Task {
    fn has_unknown_enums(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.has_unknown_enums())
            || self.history.iter().any(|m| m.has_unknown_enums())
    }
    fn clamp_unknown_enums(&mut self) {
        if let Some(s) = self.status.as_mut() {
            s.clamp_unknown_enums();
        }
        self.history
            .iter_mut()
            .for_each(|m| m.clamp_unknown_enums());
    }
}

impl OpenEnums for pb::TaskStatusUpdateEvent {
    fn has_unknown_enums(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.has_unknown_enums())
    }
    fn clamp_unknown_enums(&mut self) {
        if let Some(s) = self.status.as_mut() {
            s.clamp_unknown_enums();
        }
    }
}

impl OpenEnums for pb::SendMessageRequest {
    fn has_unknown_enums(&self) -> bool {
        self.message.as_ref().is_some_and(|m| m.has_unknown_enums())
    }
    fn clamp_unknown_enums(&mut self) {
        if let Some(m) = self.message.as_mut() {
            m.clamp_unknown_enums();
        }
    }
}

impl OpenEnums for pb::SendMessageResponse {
    fn has_unknown_enums(&self) -> bool {
        use pb::send_message_response::Payload;
        match &self.payload {
            Some(Payload::Task(t)) => t.has_unknown_enums(),
            Some(Payload::Message(m)) => m.has_unknown_enums(),
            None => false,
        }
    }
    fn clamp_unknown_enums(&mut self) {
        use pb::send_message_response::Payload;
        match &mut self.payload {
            Some(Payload::Task(t)) => t.clamp_unknown_enums(),
            Some(Payload::Message(m)) => m.clamp_unknown_enums(),
            None => {}
        }
    }
}

impl OpenEnums for pb::StreamResponse {
    fn has_unknown_enums(&self) -> bool {
        use pb::stream_response::Payload;
        match &self.payload {
            Some(Payload::Task(t)) => t.has_unknown_enums(),
            Some(Payload::Message(m)) => m.has_unknown_enums(),
            Some(Payload::StatusUpdate(e)) => e.has_unknown_enums(),
            Some(Payload::ArtifactUpdate(_)) | None => false,
        }
    }
    fn clamp_unknown_enums(&mut self) {
        use pb::stream_response::Payload;
        match &mut self.payload {
            Some(Payload::Task(t)) => t.clamp_unknown_enums(),
            Some(Payload::Message(m)) => m.clamp_unknown_enums(),
            Some(Payload::StatusUpdate(e)) => e.clamp_unknown_enums(),
            Some(Payload::ArtifactUpdate(_)) | None => {}
        }
    }
}

impl OpenEnums for pb::ListTasksRequest {
    fn has_unknown_enums(&self) -> bool {
        unknown_state(self.status)
    }
    fn clamp_unknown_enums(&mut self) {
        if unknown_state(self.status) {
            self.status = 0;
        }
    }
}

impl OpenEnums for pb::ListTasksResponse {
    fn has_unknown_enums(&self) -> bool {
        self.tasks.iter().any(|t| t.has_unknown_enums())
    }
    fn clamp_unknown_enums(&mut self) {
        self.tasks.iter_mut().for_each(|t| t.clamp_unknown_enums());
    }
}

macro_rules! no_enums {
    ($($t:ident),* $(,)?) => { $( impl OpenEnums for pb::$t {} )* };
}

no_enums!(
    Part,
    Artifact,
    TaskArtifactUpdateEvent,
    AgentCard,
    GetTaskRequest,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    GetExtendedAgentCardRequest,
    SendMessageConfiguration,
    AuthenticationInfo,
);

macro_rules! pb_wire {
    ($($wire:ty => $pb:ident),* $(,)?) => {$(
        impl PbWire for $wire {
            type Pb = pb::$pb;
        }
        impl TryFrom<&$wire> for pb::$pb {
            type Error = ConvertError;
            fn try_from(w: &$wire) -> Result<Self, ConvertError> {
                w.to_pb()
            }
        }
        impl TryFrom<&pb::$pb> for $wire {
            type Error = ConvertError;
            fn try_from(p: &pb::$pb) -> Result<Self, ConvertError> {
                <$wire as PbWire>::from_pb(p)
            }
        }
    )*};
}

pb_wire!(
    crate::Message => Message,
    crate::Part => Part,
    crate::Task => Task,
    crate::TaskStatus => TaskStatus,
    crate::Artifact => Artifact,
    crate::TaskStatusUpdateEvent => TaskStatusUpdateEvent,
    crate::TaskArtifactUpdateEvent => TaskArtifactUpdateEvent,
    crate::StreamResponse => StreamResponse,
    crate::SendMessageResponse => SendMessageResponse,
    crate::SendMessageRequest => SendMessageRequest,
    crate::SendMessageConfiguration => SendMessageConfiguration,
    crate::AgentCard => AgentCard,
    crate::GetTaskRequest => GetTaskRequest,
    crate::ListTasksRequest => ListTasksRequest,
    crate::ListTasksResponse => ListTasksResponse,
    crate::CancelTaskRequest => CancelTaskRequest,
    crate::SubscribeToTaskRequest => SubscribeToTaskRequest,
    crate::TaskPushNotificationConfig => TaskPushNotificationConfig,
    crate::AuthenticationInfo => AuthenticationInfo,
    crate::TaskPushNotificationConfigRef => GetTaskPushNotificationConfigRequest,
    crate::ListTaskPushNotificationConfigsRequest => ListTaskPushNotificationConfigsRequest,
    crate::ListTaskPushNotificationConfigsResponse => ListTaskPushNotificationConfigsResponse,
    crate::GetExtendedAgentCardRequest => GetExtendedAgentCardRequest,
);

/// `DeleteTaskPushNotificationConfigRequest` has the same fields as the Get request, and the
/// wire layer uses one type ([`crate::TaskPushNotificationConfigRef`]) for both.
pub fn delete_push_config_to_pb(
    r: &crate::TaskPushNotificationConfigRef,
) -> Result<pb::DeleteTaskPushNotificationConfigRequest, ConvertError> {
    to_pb(
        &serde_json::to_value(r).map_err(|source| ConvertError::ToProto {
            message: "DeleteTaskPushNotificationConfigRequest",
            source,
        })?,
    )
}

/// The wire form of a `DeleteTaskPushNotificationConfigRequest`.
pub fn delete_push_config_from_pb(
    p: &pb::DeleteTaskPushNotificationConfigRequest,
) -> Result<crate::TaskPushNotificationConfigRef, ConvertError> {
    serde_json::from_value(from_pb(p)?).map_err(|source| ConvertError::ToWire {
        message: "DeleteTaskPushNotificationConfigRequest",
        source,
    })
}
