//! A2A errors as gRPC statuses (§10.6, bindings §3.3): `grpc-status`, a percent-encoded
//! `grpc-message` and `grpc-status-details-bin` (base64 of a `google.rpc.Status` whose details
//! hold a `google.rpc.ErrorInfo` with the A2A reason and domain `a2a-protocol.org`), and back.
//!
//! ```
//! use a2a_protocol::ErrorCode;
//! use a2a_protocol::grpc::status::{error_trailers, failure_from_trailers};
//! let trailers = error_trailers(ErrorCode::TaskNotFound, None, &[("taskId", "t-1")]);
//! assert_eq!(trailers["grpc-status"], "5");
//! let failure = failure_from_trailers(&trailers).unwrap().unwrap();
//! assert_eq!(failure.error_code, ErrorCode::TaskNotFound);
//! assert_eq!(failure.error_info.unwrap().metadata["taskId"], "t-1");
//! ```

use super::rpc;
use crate::error::{ERROR_DOMAIN, ErrorCode, GrpcCode};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use http::{HeaderMap, HeaderValue};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use prost::Message as _;

/// Trailer with the numeric status code.
pub const GRPC_STATUS: &str = "grpc-status";
/// Trailer with the percent-encoded status message.
pub const GRPC_MESSAGE: &str = "grpc-message";
/// Trailer with the base64 `google.rpc.Status`.
pub const GRPC_STATUS_DETAILS_BIN: &str = "grpc-status-details-bin";
/// `Any.type_url` of a `google.rpc.ErrorInfo`.
pub const ERROR_INFO_TYPE_URL: &str = crate::error::ERROR_INFO_TYPE;
/// `Any.type_url` of a `google.rpc.BadRequest`.
pub const BAD_REQUEST_TYPE_URL: &str = "type.googleapis.com/google.rpc.BadRequest";

/// gRPC percent-encodes `grpc-message` bytes outside printable ASCII, and `%` itself.
const GRPC_MESSAGE_SET: &AsciiSet = &CONTROLS.add(b'%');

/// Percent-encode a status message for the `grpc-message` trailer (gRPC over HTTP/2 spec).
pub fn encode_grpc_message(message: &str) -> String {
    utf8_percent_encode(message, GRPC_MESSAGE_SET).to_string()
}

/// Decode a `grpc-message` value (invalid UTF-8 is replaced, never an error).
pub fn decode_grpc_message(value: &[u8]) -> String {
    let s = String::from_utf8_lossy(value);
    percent_decode_str(&s).decode_utf8_lossy().into_owned()
}

/// A `google.rpc.ErrorInfo` for an A2A error: its reason, domain `a2a-protocol.org`, metadata.
/// `None` for codes without a reason (JSON-RPC standard errors).
pub fn error_info(code: ErrorCode, metadata: &[(&str, &str)]) -> Option<rpc::ErrorInfo> {
    code.reason().map(|reason| rpc::ErrorInfo {
        reason: reason.to_string(),
        domain: ERROR_DOMAIN.to_string(),
        metadata: metadata
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

/// Wrap a detail message as a `google.protobuf.Any`.
pub fn pack_any(type_url: &str, detail: &impl prost::Message) -> pbjson_types::Any {
    pbjson_types::Any {
        type_url: type_url.to_string(),
        value: detail.encode_to_vec().into(),
    }
}

/// The `google.rpc.Status` of an A2A error: the code's gRPC status, `message` (or the code's
/// default message) and an `ErrorInfo` detail when the code has a reason.
pub fn a2a_status(
    code: ErrorCode,
    message: Option<&str>,
    metadata: &[(&str, &str)],
) -> rpc::Status {
    rpc::Status {
        code: code.grpc_code().number(),
        message: message.unwrap_or(code.default_message()).to_string(),
        details: error_info(code, metadata)
            .map(|info| pack_any(ERROR_INFO_TYPE_URL, &info))
            .into_iter()
            .collect(),
    }
}

/// The `google.rpc.Status` of a validation failure (bindings §3.3): `INVALID_ARGUMENT` with a
/// `google.rpc.BadRequest` listing `(field, description)` violations (field paths as in the
/// request, e.g. `message.message_id`).
pub fn validation_status(message: &str, violations: &[(&str, &str)]) -> rpc::Status {
    let bad = rpc::BadRequest {
        field_violations: violations
            .iter()
            .map(|(field, description)| rpc::bad_request::FieldViolation {
                field: field.to_string(),
                description: description.to_string(),
                ..Default::default()
            })
            .collect(),
    };
    rpc::Status {
        code: GrpcCode::InvalidArgument.number(),
        message: message.to_string(),
        details: vec![pack_any(BAD_REQUEST_TYPE_URL, &bad)],
    }
}

/// The trailer pairs of a failed call (for a trailers-only response, send them as headers
/// together with `:status 200` and `content-type: application/grpc`).
pub fn status_trailers(status: &rpc::Status) -> HeaderMap {
    let mut h = HeaderMap::with_capacity(3);
    h.insert(GRPC_STATUS, HeaderValue::from(status.code));
    // Percent-encoding leaves only visible ASCII, which is always a valid header value.
    if let Ok(v) = HeaderValue::from_str(&encode_grpc_message(&status.message)) {
        h.insert(GRPC_MESSAGE, v);
    }
    if !status.details.is_empty() {
        let b64 = STANDARD_NO_PAD.encode(status.encode_to_vec());
        if let Ok(v) = HeaderValue::from_str(&b64) {
            h.insert(GRPC_STATUS_DETAILS_BIN, v);
        }
    }
    h
}

/// The trailers of an A2A error: [`status_trailers`] of [`a2a_status`].
pub fn error_trailers(
    code: ErrorCode,
    message: Option<&str>,
    metadata: &[(&str, &str)],
) -> HeaderMap {
    status_trailers(&a2a_status(code, message, metadata))
}

/// The trailers of a successful call (`grpc-status: 0`).
pub fn ok_trailers() -> HeaderMap {
    let mut h = HeaderMap::with_capacity(1);
    h.insert(GRPC_STATUS, HeaderValue::from_static("0"));
    h
}

/// A `tonic::Status` carrying the same code, message and details (for tonic servers).
pub fn to_tonic_status(status: &rpc::Status) -> tonic::Status {
    tonic::Status::with_details(
        tonic::Code::from_i32(status.code),
        status.message.clone(),
        status.encode_to_vec().into(),
    )
}

/// The `tonic::Status` of an A2A error.
pub fn a2a_tonic_status(
    code: ErrorCode,
    message: Option<&str>,
    metadata: &[(&str, &str)],
) -> tonic::Status {
    to_tonic_status(&a2a_status(code, message, metadata))
}

/// What a client learns from a failed call.
#[derive(Debug, Clone, PartialEq)]
pub struct GrpcFailure {
    /// The `grpc-status` number as received.
    pub grpc_code: i32,
    /// The decoded `grpc-message`.
    pub message: String,
    /// The first `ErrorInfo` of `grpc-status-details-bin`, if any.
    pub error_info: Option<rpc::ErrorInfo>,
    /// Every detail of `grpc-status-details-bin`.
    pub details: Vec<pbjson_types::Any>,
    /// The A2A code: by `ErrorInfo.reason`, else by the gRPC code.
    pub error_code: ErrorCode,
}

impl GrpcFailure {
    /// The status code (`None` for a number outside 0..=16).
    pub fn code(&self) -> Option<GrpcCode> {
        GrpcCode::from_number(self.grpc_code)
    }

    /// The `ErrorInfo.domain` is `a2a-protocol.org`.
    pub fn is_a2a_domain(&self) -> bool {
        self.error_info
            .as_ref()
            .is_some_and(|i| i.domain == ERROR_DOMAIN)
    }
}

/// Trailers or details that do not form a valid status.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// No `grpc-status` trailer.
    #[error("no grpc-status trailer")]
    MissingStatus,
    /// `grpc-status` is not a decimal number.
    #[error("invalid grpc-status {0:?}")]
    InvalidStatus(String),
    /// `grpc-status-details-bin` is not base64.
    #[error("grpc-status-details-bin is not base64: {0}")]
    DetailsBase64(#[from] base64::DecodeError),
    /// `grpc-status-details-bin` is not a `google.rpc.Status`.
    #[error("grpc-status-details-bin is not a google.rpc.Status: {0}")]
    DetailsDecode(#[from] prost::DecodeError),
}

/// Read a failure from the details bytes of a status (`google.rpc.Status`, may be empty).
pub fn failure_from_parts(
    grpc_code: i32,
    message: String,
    details: &[u8],
) -> Result<GrpcFailure, StatusError> {
    let (info, details) = if details.is_empty() {
        (None, Vec::new())
    } else {
        let st = rpc::Status::decode(details)?;
        let info = st
            .details
            .iter()
            .filter(|a| a.type_url == ERROR_INFO_TYPE_URL)
            .find_map(|a| rpc::ErrorInfo::decode(a.value.as_ref()).ok());
        (info, st.details)
    };
    let code = GrpcCode::from_number(grpc_code).unwrap_or(GrpcCode::Unknown);
    let error_code = ErrorCode::from_status(code, info.as_ref().map(|i| i.reason.as_str()));
    Ok(GrpcFailure {
        grpc_code,
        message,
        error_info: info,
        details,
        error_code,
    })
}

/// The failure of a tonic call.
pub fn failure_from_tonic(status: &tonic::Status) -> Result<GrpcFailure, StatusError> {
    failure_from_parts(
        status.code() as i32,
        status.message().to_string(),
        status.details(),
    )
}

/// The failure in trailers (or trailers-only headers); `Ok(None)` when `grpc-status` is 0.
pub fn failure_from_trailers(trailers: &HeaderMap) -> Result<Option<GrpcFailure>, StatusError> {
    let raw = trailers
        .get(GRPC_STATUS)
        .ok_or(StatusError::MissingStatus)?;
    let text = String::from_utf8_lossy(raw.as_bytes());
    let code: i32 = text
        .trim()
        .parse()
        .map_err(|_| StatusError::InvalidStatus(text.to_string()))?;
    if code == 0 {
        return Ok(None);
    }
    let message = trailers
        .get(GRPC_MESSAGE)
        .map(|v| decode_grpc_message(v.as_bytes()))
        .unwrap_or_default();
    let details = match trailers.get(GRPC_STATUS_DETAILS_BIN) {
        Some(v) => {
            let b = v.as_bytes();
            let b = b
                .strip_suffix(b"==")
                .or_else(|| b.strip_suffix(b"="))
                .unwrap_or(b);
            STANDARD_NO_PAD
                .decode(b)
                .or_else(|_| STANDARD.decode(v.as_bytes()))?
        }
        None => Vec::new(),
    };
    failure_from_parts(code, message, &details).map(Some)
}
