//! Every A2A error (-32001 to -32009) and standard JSON-RPC error, with code, name, reason and the
//! `google.rpc.ErrorInfo` data shape (reference §3.13, §5).

use crate::jsonrpc::JsonRpcError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The `domain` of every A2A `ErrorInfo`.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
/// The `@type` of an `ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// A known error code. [`ErrorCode::Other`] keeps any code this list does not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// -32001: task id unknown, purged or not visible.
    TaskNotFound,
    /// -32002: the task cannot be canceled (it is terminal).
    TaskNotCancelable,
    /// -32003: push notifications are not supported.
    PushNotificationNotSupported,
    /// -32004: the operation is not supported (streaming off, terminal task, ...).
    UnsupportedOperation,
    /// -32005: a media type is not supported.
    ContentTypeNotSupported,
    /// -32006: the agent produced a response that violates the spec.
    InvalidAgentResponse,
    /// -32007: an extended card is declared but not configured.
    ExtendedAgentCardNotConfigured,
    /// -32008: a required extension was not requested.
    ExtensionSupportRequired,
    /// -32009: the requested `A2A-Version` is not served.
    VersionNotSupported,
    /// -32700: the body is not JSON.
    JsonParse,
    /// -32600: not a valid JSON-RPC request.
    InvalidRequest,
    /// -32601: unknown method.
    MethodNotFound,
    /// -32602: params fail to parse or validate.
    InvalidParams,
    /// -32603: server fault.
    Internal,
    /// Any other code.
    Other(i64),
}

impl ErrorCode {
    /// Every named code (without [`ErrorCode::Other`]).
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::TaskNotFound,
        ErrorCode::TaskNotCancelable,
        ErrorCode::PushNotificationNotSupported,
        ErrorCode::UnsupportedOperation,
        ErrorCode::ContentTypeNotSupported,
        ErrorCode::InvalidAgentResponse,
        ErrorCode::ExtendedAgentCardNotConfigured,
        ErrorCode::ExtensionSupportRequired,
        ErrorCode::VersionNotSupported,
        ErrorCode::JsonParse,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::Internal,
    ];

    /// The numeric code.
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::TaskNotFound => -32001,
            ErrorCode::TaskNotCancelable => -32002,
            ErrorCode::PushNotificationNotSupported => -32003,
            ErrorCode::UnsupportedOperation => -32004,
            ErrorCode::ContentTypeNotSupported => -32005,
            ErrorCode::InvalidAgentResponse => -32006,
            ErrorCode::ExtendedAgentCardNotConfigured => -32007,
            ErrorCode::ExtensionSupportRequired => -32008,
            ErrorCode::VersionNotSupported => -32009,
            ErrorCode::JsonParse => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::Internal => -32603,
            ErrorCode::Other(c) => c,
        }
    }

    /// The code for a number.
    pub fn from_code(code: i64) -> Self {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.code() == code)
            .unwrap_or(ErrorCode::Other(code))
    }

    /// The error's name in the specification, such as `TaskNotFoundError`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::TaskNotFound => "TaskNotFoundError",
            ErrorCode::TaskNotCancelable => "TaskNotCancelableError",
            ErrorCode::PushNotificationNotSupported => "PushNotificationNotSupportedError",
            ErrorCode::UnsupportedOperation => "UnsupportedOperationError",
            ErrorCode::ContentTypeNotSupported => "ContentTypeNotSupportedError",
            ErrorCode::InvalidAgentResponse => "InvalidAgentResponseError",
            ErrorCode::ExtendedAgentCardNotConfigured => "ExtendedAgentCardNotConfiguredError",
            ErrorCode::ExtensionSupportRequired => "ExtensionSupportRequiredError",
            ErrorCode::VersionNotSupported => "VersionNotSupportedError",
            ErrorCode::JsonParse => "JSONParseError",
            ErrorCode::InvalidRequest => "InvalidRequestError",
            ErrorCode::MethodNotFound => "MethodNotFoundError",
            ErrorCode::InvalidParams => "InvalidParamsError",
            ErrorCode::Internal => "InternalError",
            ErrorCode::Other(_) => "UnknownError",
        }
    }

    /// The `ErrorInfo.reason` of an A2A error (`None` for JSON-RPC standard codes).
    pub fn reason(self) -> Option<&'static str> {
        Some(match self {
            ErrorCode::TaskNotFound => "TASK_NOT_FOUND",
            ErrorCode::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            ErrorCode::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ErrorCode::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            ErrorCode::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            ErrorCode::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            ErrorCode::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ErrorCode::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            ErrorCode::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            _ => return None,
        })
    }

    /// A short default message such as `Task not found`.
    pub fn default_message(self) -> &'static str {
        match self {
            ErrorCode::TaskNotFound => "Task not found",
            ErrorCode::TaskNotCancelable => "Task cannot be canceled",
            ErrorCode::PushNotificationNotSupported => "Push notifications are not supported",
            ErrorCode::UnsupportedOperation => "This operation is not supported",
            ErrorCode::ContentTypeNotSupported => "Incompatible content types",
            ErrorCode::InvalidAgentResponse => "Invalid agent response",
            ErrorCode::ExtendedAgentCardNotConfigured => "Extended agent card not configured",
            ErrorCode::ExtensionSupportRequired => "Extension support required",
            ErrorCode::VersionNotSupported => "Version not supported",
            ErrorCode::JsonParse => "Invalid JSON payload",
            ErrorCode::InvalidRequest => "Request payload validation error",
            ErrorCode::MethodNotFound => "Method not found",
            ErrorCode::InvalidParams => "Invalid parameters",
            ErrorCode::Internal => "Internal error",
            ErrorCode::Other(_) => "Error",
        }
    }

    /// True for the A2A range -32001..-32099.
    pub fn is_a2a(self) -> bool {
        (-32099..=-32001).contains(&self.code())
    }

    /// Build the JSON-RPC error object, with an `ErrorInfo` detail for A2A codes.
    pub fn to_error(self, message: Option<&str>, metadata: &[(&str, &str)]) -> JsonRpcError {
        let data = self.reason().map(|reason| {
            let info = ErrorInfo {
                type_url: ERROR_INFO_TYPE.to_string(),
                reason: reason.to_string(),
                domain: ERROR_DOMAIN.to_string(),
                metadata: metadata
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            };
            json!([info])
        });
        JsonRpcError {
            code: self.code(),
            message: message.unwrap_or(self.default_message()).to_string(),
            data,
        }
    }
}

impl ErrorCode {
    /// The code for an `ErrorInfo.reason` such as `TASK_NOT_FOUND` (the nine A2A errors).
    pub fn from_reason(reason: &str) -> Option<Self> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.reason() == Some(reason))
    }

    /// The gRPC status code of this error (bindings §4).
    pub fn grpc_code(self) -> GrpcCode {
        match self {
            ErrorCode::TaskNotFound => GrpcCode::NotFound,
            ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ExtendedAgentCardNotConfigured
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported => GrpcCode::FailedPrecondition,
            ErrorCode::ContentTypeNotSupported
            | ErrorCode::JsonParse
            | ErrorCode::InvalidRequest
            | ErrorCode::InvalidParams => GrpcCode::InvalidArgument,
            ErrorCode::InvalidAgentResponse | ErrorCode::Internal => GrpcCode::Internal,
            ErrorCode::MethodNotFound => GrpcCode::Unimplemented,
            ErrorCode::Other(_) => GrpcCode::Unknown,
        }
    }

    /// The HTTP status of this error over HTTP+JSON (bindings §4): the status `google.rpc.Code`
    /// documents for [`ErrorCode::grpc_code`], except an unknown operation, which is the router's
    /// 404.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::MethodNotFound => 404,
            other => other.grpc_code().http_status(),
        }
    }

    /// The code of an error received over gRPC or HTTP+JSON: the `ErrorInfo` reason decides when
    /// there is one (six A2A errors share `FAILED_PRECONDITION`); otherwise the status does.
    pub fn from_status(code: GrpcCode, reason: Option<&str>) -> Self {
        if let Some(c) = reason.and_then(ErrorCode::from_reason) {
            return c;
        }
        match code {
            GrpcCode::InvalidArgument | GrpcCode::OutOfRange => ErrorCode::InvalidParams,
            GrpcCode::Unimplemented => ErrorCode::MethodNotFound,
            GrpcCode::Internal | GrpcCode::DataLoss | GrpcCode::Unknown => ErrorCode::Internal,
            other => ErrorCode::Other(-(40000 + i64::from(other.number()))),
        }
    }
}

/// A gRPC status code (`google.rpc.Code`), with its canonical name and HTTP mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum GrpcCode {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl GrpcCode {
    /// Every code, in numeric order.
    pub const ALL: [GrpcCode; 17] = [
        GrpcCode::Ok,
        GrpcCode::Cancelled,
        GrpcCode::Unknown,
        GrpcCode::InvalidArgument,
        GrpcCode::DeadlineExceeded,
        GrpcCode::NotFound,
        GrpcCode::AlreadyExists,
        GrpcCode::PermissionDenied,
        GrpcCode::ResourceExhausted,
        GrpcCode::FailedPrecondition,
        GrpcCode::Aborted,
        GrpcCode::OutOfRange,
        GrpcCode::Unimplemented,
        GrpcCode::Internal,
        GrpcCode::Unavailable,
        GrpcCode::DataLoss,
        GrpcCode::Unauthenticated,
    ];

    /// The number carried in `grpc-status`.
    pub fn number(self) -> i32 {
        self as i32
    }

    /// The code for a number (`None` outside 0..=16).
    pub fn from_number(n: i32) -> Option<Self> {
        usize::try_from(n)
            .ok()
            .and_then(|i| GrpcCode::ALL.get(i).copied())
    }

    /// The canonical name such as `NOT_FOUND` (the `status` of an HTTP+JSON error body).
    pub fn name(self) -> &'static str {
        match self {
            GrpcCode::Ok => "OK",
            GrpcCode::Cancelled => "CANCELLED",
            GrpcCode::Unknown => "UNKNOWN",
            GrpcCode::InvalidArgument => "INVALID_ARGUMENT",
            GrpcCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            GrpcCode::NotFound => "NOT_FOUND",
            GrpcCode::AlreadyExists => "ALREADY_EXISTS",
            GrpcCode::PermissionDenied => "PERMISSION_DENIED",
            GrpcCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            GrpcCode::FailedPrecondition => "FAILED_PRECONDITION",
            GrpcCode::Aborted => "ABORTED",
            GrpcCode::OutOfRange => "OUT_OF_RANGE",
            GrpcCode::Unimplemented => "UNIMPLEMENTED",
            GrpcCode::Internal => "INTERNAL",
            GrpcCode::Unavailable => "UNAVAILABLE",
            GrpcCode::DataLoss => "DATA_LOSS",
            GrpcCode::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The code for a canonical name.
    pub fn from_name(name: &str) -> Option<Self> {
        GrpcCode::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// The HTTP status `google/rpc/code.proto` documents for this code.
    pub fn http_status(self) -> u16 {
        match self {
            GrpcCode::Ok => 200,
            GrpcCode::Cancelled => 499,
            GrpcCode::Unknown | GrpcCode::Internal | GrpcCode::DataLoss => 500,
            GrpcCode::InvalidArgument | GrpcCode::FailedPrecondition | GrpcCode::OutOfRange => 400,
            GrpcCode::DeadlineExceeded => 504,
            GrpcCode::NotFound => 404,
            GrpcCode::AlreadyExists | GrpcCode::Aborted => 409,
            GrpcCode::PermissionDenied => 403,
            GrpcCode::ResourceExhausted => 429,
            GrpcCode::Unimplemented => 501,
            GrpcCode::Unavailable => 503,
            GrpcCode::Unauthenticated => 401,
        }
    }

    /// The code an HTTP status stands for when an error body names none (the inverse of
    /// [`GrpcCode::http_status`], ambiguous statuses resolved to the commonest code).
    pub fn from_http_status(status: u16) -> Self {
        match status {
            200..=299 => GrpcCode::Ok,
            400 => GrpcCode::InvalidArgument,
            401 => GrpcCode::Unauthenticated,
            403 => GrpcCode::PermissionDenied,
            404 => GrpcCode::NotFound,
            405 => GrpcCode::Unimplemented,
            409 => GrpcCode::Aborted,
            429 => GrpcCode::ResourceExhausted,
            499 => GrpcCode::Cancelled,
            501 => GrpcCode::Unimplemented,
            503 => GrpcCode::Unavailable,
            504 => GrpcCode::DeadlineExceeded,
            s if (400..500).contains(&s) => GrpcCode::FailedPrecondition,
            _ => GrpcCode::Internal,
        }
    }
}

impl std::fmt::Display for GrpcCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.number())
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

/// A `google.rpc.ErrorInfo` detail, as carried in `error.data[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// Always `type.googleapis.com/google.rpc.ErrorInfo`.
    #[serde(rename = "@type")]
    pub type_url: String,
    /// The reason such as `TASK_NOT_FOUND`.
    pub reason: String,
    /// Always `a2a-protocol.org` for A2A errors.
    pub domain: String,
    /// Context such as the task id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

impl JsonRpcError {
    /// The known code of this error.
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::from_code(self.code)
    }

    /// The first `ErrorInfo` in `data`, whatever shape `data` has (array, object, string, absent).
    pub fn error_info(&self) -> Option<ErrorInfo> {
        let data = self.data.as_ref()?;
        let items: Vec<&Value> = match data {
            Value::Array(a) => a.iter().collect(),
            Value::Object(_) => vec![data],
            _ => return None,
        };
        items.into_iter().find_map(|v| {
            let is_info = v.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE)
                || v.get("reason").is_some();
            if is_info {
                serde_json::from_value(v.clone()).ok()
            } else {
                None
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(c.code()), *c);
        }
        assert_eq!(ErrorCode::from_code(-1), ErrorCode::Other(-1));
    }

    #[test]
    fn binding_mapping_matches_the_specification_table() {
        // bindings §4: (error, gRPC code, HTTP status).
        let table = [
            (ErrorCode::TaskNotFound, 5, 404),
            (ErrorCode::TaskNotCancelable, 9, 400),
            (ErrorCode::PushNotificationNotSupported, 9, 400),
            (ErrorCode::UnsupportedOperation, 9, 400),
            (ErrorCode::ContentTypeNotSupported, 3, 400),
            (ErrorCode::InvalidAgentResponse, 13, 500),
            (ErrorCode::ExtendedAgentCardNotConfigured, 9, 400),
            (ErrorCode::ExtensionSupportRequired, 9, 400),
            (ErrorCode::VersionNotSupported, 9, 400),
            (ErrorCode::InvalidParams, 3, 400),
            (ErrorCode::MethodNotFound, 12, 404),
            (ErrorCode::Internal, 13, 500),
        ];
        for (code, grpc, http) in table {
            assert_eq!(code.grpc_code().number(), grpc, "{code}");
            assert_eq!(code.http_status(), http, "{code}");
            // The reason always wins over the shared status.
            assert_eq!(
                ErrorCode::from_status(code.grpc_code(), code.reason()),
                if code.is_a2a() {
                    code
                } else {
                    ErrorCode::from_status(code.grpc_code(), None)
                },
            );
        }
        for c in GrpcCode::ALL {
            assert_eq!(GrpcCode::from_number(c.number()), Some(c));
            assert_eq!(GrpcCode::from_name(c.name()), Some(c));
        }
        assert_eq!(GrpcCode::from_number(17), None);
        assert_eq!(
            ErrorCode::from_status(GrpcCode::FailedPrecondition, Some("VERSION_NOT_SUPPORTED")),
            ErrorCode::VersionNotSupported
        );
    }
}
