//! JSON-RPC 2.0 envelopes ([`JsonRpcRequest`], [`JsonRpcResponse`], [`JsonRpcError`]), request
//! [`Id`]s echoed unchanged, and the A2A [`Method`] names (reference §1.2, §1.3).

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;

use crate::version::ProtocolVersion;

/// The JSON-RPC version string.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string, a number or null. It is echoed unchanged in the response.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// A numeric id, kept as its JSON number so it echoes exactly.
    Number(serde_json::Number),
    /// A string id.
    String(String),
    /// `null` (used for a response to an unparseable request).
    Null,
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
            Id::Null => f.write_str("null"),
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_string())
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::String(s)
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(n.into())
    }
}

/// A JSON-RPC request. `P` is the params type; [`Value`] for raw access.
// The explicit bound drops the `P: Default` that serde would infer from `#[serde(default)]`
// on `params` (an absent `params` is `None` whatever `P` is, e.g. `Box<RawValue>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id (absent for a notification; `"id": null` is kept as `Some(Id::Null)`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_id"
    )]
    pub id: Option<Id>,
    /// The method name.
    pub method: String,
    /// The params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

/// A present `id` member, including `null` (JSON-RPC: only an absent `id` makes a notification).
fn present_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Id>, D::Error> {
    Id::deserialize(d).map(Some)
}

impl<P> JsonRpcRequest<P> {
    /// A request with the given id, method and params.
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: P) -> Self {
        JsonRpcRequest {
            jsonrpc: JSONRPC_VERSION.to_string(),
            id: Some(id.into()),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A JSON-RPC error object. Its `data` keeps whatever shape the peer sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcError {
    /// The error code.
    pub code: i64,
    /// A short description.
    #[serde(default)]
    pub message: String,
    /// Details (for A2A errors an array of `ErrorInfo`-like objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl fmt::Display for JsonRpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.code,
            self.error_code().name(),
            self.message
        )
    }
}

impl std::error::Error for JsonRpcError {}

/// A JSON-RPC response: a `result` or an `error`, with the request's id.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcResponse<R = Value> {
    /// The id of the request this answers.
    pub id: Id,
    /// The result or the error.
    pub payload: Result<R, JsonRpcError>,
}

impl<R> JsonRpcResponse<R> {
    /// A success response.
    pub fn success(id: Id, result: R) -> Self {
        JsonRpcResponse {
            id,
            payload: Ok(result),
        }
    }

    /// An error response.
    pub fn error(id: Id, error: JsonRpcError) -> Self {
        JsonRpcResponse {
            id,
            payload: Err(error),
        }
    }
}

impl<R: Serialize> Serialize for JsonRpcResponse<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        m.serialize_entry("id", &self.id)?;
        match &self.payload {
            Ok(r) => m.serialize_entry("result", r)?,
            Err(e) => m.serialize_entry("error", e)?,
        }
        m.end()
    }
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for JsonRpcResponse<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(bound(deserialize = "R: DeserializeOwned"))]
        struct Raw<R> {
            #[serde(default)]
            id: Option<Id>,
            /// `None`: absent; `Some(None)`: present and `null`; `Some(Some(r))`: a value.
            #[serde(default = "none", deserialize_with = "present")]
            result: Option<Option<R>>,
            #[serde(default)]
            error: Option<JsonRpcError>,
        }
        fn none<R>() -> Option<R> {
            None
        }
        fn present<'de, D: Deserializer<'de>, R: DeserializeOwned>(
            d: D,
        ) -> Result<Option<Option<R>>, D::Error> {
            Option::<R>::deserialize(d).map(Some)
        }
        let raw = Raw::<R>::deserialize(d)?;
        let id = raw.id.unwrap_or(Id::Null);
        match (raw.result, raw.error) {
            (_, Some(e)) => Ok(JsonRpcResponse {
                id,
                payload: Err(e),
            }),
            (Some(Some(r)), None) => Ok(JsonRpcResponse { id, payload: Ok(r) }),
            // `"result": null` (e.g. PY's answer to DeleteTaskPushNotificationConfig) is a
            // result when `R` can represent null (`Value`, `()`, `Option<_>`).
            (Some(None), None) => match R::deserialize(Value::Null) {
                Ok(r) => Ok(JsonRpcResponse { id, payload: Ok(r) }),
                Err(e) => Err(serde::de::Error::custom(format!("result is null: {e}"))),
            },
            (None, None) => Err(serde::de::Error::custom(
                "response has neither result nor error",
            )),
        }
    }
}

/// The A2A 1.0 JSON-RPC methods (case-sensitive PascalCase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `SendMessage`.
    SendMessage,
    /// `SendStreamingMessage` (SSE).
    SendStreamingMessage,
    /// `GetTask`.
    GetTask,
    /// `ListTasks`.
    ListTasks,
    /// `CancelTask`.
    CancelTask,
    /// `SubscribeToTask` (SSE).
    SubscribeToTask,
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig,
    /// `GetTaskPushNotificationConfig`.
    GetTaskPushNotificationConfig,
    /// `ListTaskPushNotificationConfigs` (plural).
    ListTaskPushNotificationConfigs,
    /// `DeleteTaskPushNotificationConfig`.
    DeleteTaskPushNotificationConfig,
    /// `GetExtendedAgentCard`.
    GetExtendedAgentCard,
}

impl Method {
    /// Every method.
    pub const ALL: &'static [Method] = &[
        Method::SendMessage,
        Method::SendStreamingMessage,
        Method::GetTask,
        Method::ListTasks,
        Method::CancelTask,
        Method::SubscribeToTask,
        Method::CreateTaskPushNotificationConfig,
        Method::GetTaskPushNotificationConfig,
        Method::ListTaskPushNotificationConfigs,
        Method::DeleteTaskPushNotificationConfig,
        Method::GetExtendedAgentCard,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SendMessage => "SendMessage",
            Method::SendStreamingMessage => "SendStreamingMessage",
            Method::GetTask => "GetTask",
            Method::ListTasks => "ListTasks",
            Method::CancelTask => "CancelTask",
            Method::SubscribeToTask => "SubscribeToTask",
            Method::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            Method::GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
            Method::ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
            Method::DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
            Method::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// The 0.3 JSON-RPC name of this method, so a client can talk to a 0.3 peer; `None` for
    /// `ListTasks`, which 0.3 offered only over gRPC/REST. (Every 0.3 JSON-RPC method has a 1.0
    /// counterpart; `agent/getAuthenticatedExtendedCard` became `GetExtendedAgentCard`.)
    pub fn as_v03_str(self) -> Option<&'static str> {
        Some(match self {
            Method::SendMessage => "message/send",
            Method::SendStreamingMessage => "message/stream",
            Method::GetTask => "tasks/get",
            Method::ListTasks => return None,
            Method::CancelTask => "tasks/cancel",
            Method::SubscribeToTask => "tasks/resubscribe",
            Method::CreateTaskPushNotificationConfig => "tasks/pushNotificationConfig/set",
            Method::GetTaskPushNotificationConfig => "tasks/pushNotificationConfig/get",
            Method::ListTaskPushNotificationConfigs => "tasks/pushNotificationConfig/list",
            Method::DeleteTaskPushNotificationConfig => "tasks/pushNotificationConfig/delete",
            Method::GetExtendedAgentCard => "agent/getAuthenticatedExtendedCard",
        })
    }

    /// The wire name of this method in the given protocol version; `None` when the method does
    /// not exist there (only `ListTasks` in 0.3).
    pub fn name_in(self, version: ProtocolVersion) -> Option<&'static str> {
        match version {
            ProtocolVersion::V1_0 => Some(self.as_str()),
            ProtocolVersion::V0_3 => self.as_v03_str(),
        }
    }

    /// The method with this exact 1.0 wire name (case-sensitive).
    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.iter().copied().find(|m| m.as_str() == name)
    }

    /// The method with this exact wire name in either version (case-sensitive), with the version
    /// the name belongs to: `"SendMessage"` ⇒ 1.0, `"message/send"` ⇒ 0.3. No name is spelled
    /// the same in both versions, so the answer is unique.
    ///
    /// ```
    /// use a2a_protocol::{Method, version::ProtocolVersion};
    /// assert_eq!(Method::parse_any("tasks/get"), Some((Method::GetTask, ProtocolVersion::V0_3)));
    /// assert_eq!(Method::parse_any("GetTask"), Some((Method::GetTask, ProtocolVersion::V1_0)));
    /// assert_eq!(Method::parse_any("tasks/list"), None);
    /// ```
    pub fn parse_any(name: &str) -> Option<(Method, ProtocolVersion)> {
        if let Some(m) = Method::parse(name) {
            return Some((m, ProtocolVersion::V1_0));
        }
        Method::ALL
            .iter()
            .copied()
            .find(|m| m.as_v03_str() == Some(name))
            .map(|m| (m, ProtocolVersion::V0_3))
    }

    /// True for the two methods that answer with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::SendStreamingMessage | Method::SubscribeToTask)
    }

    /// True for the four push-config methods.
    pub fn is_push_config(self) -> bool {
        matches!(
            self,
            Method::CreateTaskPushNotificationConfig
                | Method::GetTaskPushNotificationConfig
                | Method::ListTaskPushNotificationConfigs
                | Method::DeleteTaskPushNotificationConfig
        )
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_any_accepts_both_names_of_every_method() {
        for &m in Method::ALL {
            assert_eq!(
                Method::parse_any(m.as_str()),
                Some((m, ProtocolVersion::V1_0))
            );
            assert_eq!(m.name_in(ProtocolVersion::V1_0), Some(m.as_str()));
            match m.as_v03_str() {
                Some(old) => {
                    assert_eq!(Method::parse_any(old), Some((m, ProtocolVersion::V0_3)));
                    assert_eq!(Method::parse(old), None, "{old} is not a 1.0 name");
                    assert_eq!(m.name_in(ProtocolVersion::V0_3), Some(old));
                }
                None => assert_eq!(m, Method::ListTasks, "only ListTasks is 1.0-only"),
            }
        }
    }

    #[test]
    fn names_are_unique_across_versions() {
        let mut names: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
        names.extend(Method::ALL.iter().filter_map(|m| m.as_v03_str()));
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(n, 2 * Method::ALL.len() - 1);
    }

    #[test]
    fn parse_any_rejects_unknown_and_misspelled_names() {
        for bad in [
            "",
            "sendMessage",
            "sendmessage",
            "SendMessage ",
            "Message/send",
            "tasks/list",
            "tasks/pushNotificationConfig/create",
            "agent/getExtendedCard",
            "ListTaskPushNotificationConfig",
        ] {
            assert_eq!(Method::parse_any(bad), None, "{bad:?}");
        }
    }
}
