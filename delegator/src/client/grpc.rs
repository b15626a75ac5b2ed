//! The gRPC binding: `lf.a2a.v1.A2AService` over HTTP/2 through the generated tonic client.
//!
//! Params (ProtoJSON) become the prost request with [`a2a_protocol::grpc::to_pb`], responses go
//! back to ProtoJSON with [`a2a_protocol::grpc::from_pb`], so callers see the same `Value`s as
//! over JSON-RPC. Every call carries `a2a-version: 1.0`, the interface's `tenant` in the request,
//! the activated extensions as one `a2a-extensions` entry and, when given, `authorization`
//! metadata, and is bounded by the caller's timeout (`grpc-timeout` and a local bound).
//!
//! A non-OK status becomes a [`ClientError`] the same handlers understand: an A2A error (by the
//! `ErrorInfo` reason in `grpc-status-details-bin`, else by the code) is [`ClientError::Rpc`];
//! `UNAVAILABLE`, `RESOURCE_EXHAUSTED` and `DEADLINE_EXCEEDED` are transient like HTTP 503, 429
//! and 504; `UNAUTHENTICATED` and `PERMISSION_DENIED` without `ErrorInfo` are HTTP 401 and 403;
//! a status the client made itself is a connect error (the connection was refused) or a
//! transport error (outcome unknown). Channels are created lazily, one per interface URL, and
//! reused; plaintext h2c for `http://`.

use super::{
    CallResult, ClientError, Endpoint, EventStream, MAX_RESPONSE_BYTES, RpcClient,
    parse_retry_after,
};
use a2a_protocol::error::ERROR_INFO_TYPE;
use a2a_protocol::grpc::pb::a2a_service_client::A2aServiceClient;
use a2a_protocol::grpc::{
    EXTENSIONS_METADATA, VERSION_METADATA, from_pb, pb, status::failure_from_tonic, to_pb,
};
use a2a_protocol::jsonrpc::JsonRpcError;
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{ErrorCode, GrpcCode, Method};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;
use tonic::transport::Channel;

impl RpcClient {
    /// The channel for `ep` (created lazily, then shared by every call to that URL).
    fn channel(&self, ep: &Endpoint) -> Result<Channel, ClientError> {
        if let Some(c) = super::lock(&self.channels).get(&ep.url) {
            return Ok(c.clone());
        }
        let endpoint = tonic::transport::Endpoint::from_shared(ep.url.clone())
            .map_err(|e| ClientError::Connect {
                url: ep.url.clone(),
                message: format!("not a gRPC target: {e}"),
            })?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true);
        let channel = match &self.grpc_tls {
            Some(tls) => endpoint.connect_with_connector_lazy(tls.clone()),
            None => endpoint.connect_lazy(),
        };
        super::lock(&self.channels).insert(ep.url.clone(), channel.clone());
        Ok(channel)
    }

    fn grpc_client(
        &self,
        ep: &Endpoint,
        limit: usize,
    ) -> Result<A2aServiceClient<Channel>, ClientError> {
        Ok(A2aServiceClient::new(self.channel(ep)?)
            .max_decoding_message_size(limit)
            .max_encoding_message_size(MAX_RESPONSE_BYTES))
    }

    /// A unary gRPC call. `timeout` bounds the whole exchange.
    pub(super) async fn grpc_call(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        timeout: Duration,
    ) -> Result<CallResult, ClientError> {
        let params = prepare(ep, method, params)?;
        let mut c = self.grpc_client(ep, MAX_RESPONSE_BYTES)?;
        let call = async {
            macro_rules! unary {
                ($f:ident, $req:ty) => {{
                    let req = request::<$req>(ep, &params, auth, timeout)?;
                    let resp = c.$f(req).await.map_err(|s| status_error(&ep.url, &s))?;
                    value_of(resp.get_ref())
                }};
            }
            match method {
                Method::SendMessage => unary!(send_message, pb::SendMessageRequest),
                Method::GetTask => unary!(get_task, pb::GetTaskRequest),
                Method::ListTasks => unary!(list_tasks, pb::ListTasksRequest),
                Method::CancelTask => unary!(cancel_task, pb::CancelTaskRequest),
                Method::CreateTaskPushNotificationConfig => unary!(
                    create_task_push_notification_config,
                    pb::TaskPushNotificationConfig
                ),
                Method::GetTaskPushNotificationConfig => unary!(
                    get_task_push_notification_config,
                    pb::GetTaskPushNotificationConfigRequest
                ),
                Method::ListTaskPushNotificationConfigs => unary!(
                    list_task_push_notification_configs,
                    pb::ListTaskPushNotificationConfigsRequest
                ),
                Method::GetExtendedAgentCard => {
                    unary!(get_extended_agent_card, pb::GetExtendedAgentCardRequest)
                }
                Method::DeleteTaskPushNotificationConfig => {
                    let req = request::<pb::DeleteTaskPushNotificationConfigRequest>(
                        ep, &params, auth, timeout,
                    )?;
                    c.delete_task_push_notification_config(req)
                        .await
                        .map_err(|s| status_error(&ep.url, &s))?;
                    Ok(json!({}))
                }
                Method::SendStreamingMessage | Method::SubscribeToTask => Err(
                    ClientError::NotAvailable(method.as_str(), "unary gRPC call (it streams)"),
                ),
            }
        };
        let v = tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| ClientError::Transport(format!("{method}: no answer in time")))??;
        Ok(CallResult::of(v))
    }

    /// Open a server-streaming gRPC call. `head_timeout` bounds the time to the response head.
    pub(super) async fn grpc_stream(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        head_timeout: Duration,
    ) -> Result<EventStream, ClientError> {
        let params = prepare(ep, method, params)?;
        let mut c = self.grpc_client(ep, self.max_event_bytes)?;
        let open = async {
            match method {
                Method::SendStreamingMessage => {
                    let req = request::<pb::SendMessageRequest>(ep, &params, auth, None)?;
                    c.send_streaming_message(req).await
                }
                Method::SubscribeToTask => {
                    let req = request::<pb::SubscribeToTaskRequest>(ep, &params, auth, None)?;
                    c.subscribe_to_task(req).await
                }
                _ => {
                    return Err(ClientError::NotAvailable(
                        method.as_str(),
                        "streaming gRPC call (it is unary)",
                    ));
                }
            }
            .map_err(|s| status_error(&ep.url, &s))
        };
        let resp = tokio::time::timeout(head_timeout, open)
            .await
            .map_err(|_| ClientError::Transport(format!("{method}: no response head in time")))??;
        Ok(EventStream::grpc(method, ep.url.clone(), resp.into_inner()))
    }
}

/// The params with the interface's tenant, for a 1.0 interface.
fn prepare(ep: &Endpoint, method: Method, mut params: Value) -> Result<Value, ClientError> {
    if ep.version != ProtocolVersion::V1_0 {
        return Err(ClientError::NotAvailable(
            method.as_str(),
            "0.3 gRPC (only 0.3 JSON-RPC is adapted)",
        ));
    }
    if let (Some(t), Value::Object(m)) = (&ep.tenant, &mut params) {
        m.insert("tenant".into(), Value::String(t.clone()));
    }
    Ok(params)
}

/// The tonic request: the prost message of `params`, the version, extensions and credential
/// metadata, and `grpc-timeout` when bounded.
fn request<M: DeserializeOwned>(
    ep: &Endpoint,
    params: &Value,
    auth: Option<&str>,
    timeout: impl Into<Option<Duration>>,
) -> Result<tonic::Request<M>, ClientError> {
    let msg: M = to_pb(params).map_err(|e| ClientError::Protocol(format!("gRPC request: {e}")))?;
    let mut req = tonic::Request::new(msg);
    req.metadata_mut().insert(
        VERSION_METADATA,
        tonic::metadata::MetadataValue::from_static(ProtocolVersion::V1_0.header_value()),
    );
    if let Some(x) = ep.extensions_header() {
        let v = x.parse().map_err(|_| {
            ClientError::Protocol(format!("extension URIs are not a metadata value: {x}"))
        })?;
        req.metadata_mut().insert(EXTENSIONS_METADATA, v);
    }
    if let Some(a) = auth {
        let mut v: tonic::metadata::MetadataValue<tonic::metadata::Ascii> =
            a.parse().map_err(|_| {
                ClientError::Transport("the credential is not a valid metadata value".into())
            })?;
        // Never printed by a `Debug` of the request (a log line).
        v.set_sensitive(true);
        req.metadata_mut().insert("authorization", v);
    }
    if let Some(t) = timeout.into() {
        req.set_timeout(t);
    }
    Ok(req)
}

/// A response message as ProtoJSON.
fn value_of<M: Serialize>(m: &M) -> Result<Value, ClientError> {
    from_pb(m).map_err(|e| ClientError::Protocol(format!("gRPC response: {e}")))
}

/// The fast path for gRPC stream frames: an `artifactUpdate` of the plain shape (no metadata
/// on the event, the artifact or any part; `text`, `raw` or `url` parts) converted from prost to
/// the typed event by moving its strings and bytes: no ProtoJSON `Value`, no base64 round trip
/// for `raw` bytes. Proto3 empty strings are unset, as in ProtoJSON. Any other message is
/// handed back for [`stream_value`] (which owns the ProtoJSON rules: `Struct` metadata, `data`
/// parts, and task states, unknown ones included).
pub(super) fn stream_typed(
    m: pb::StreamResponse,
) -> Result<a2a_protocol::StreamResponse, Box<pb::StreamResponse>> {
    use a2a_protocol::{Artifact, Part, PartContent, StreamResponse, TaskArtifactUpdateEvent};
    let plain = match &m.payload {
        Some(pb::stream_response::Payload::ArtifactUpdate(u)) => {
            u.metadata.is_none()
                && u.artifact.as_ref().is_some_and(|a| {
                    a.metadata.is_none()
                        && a.parts.iter().all(|p| {
                            p.metadata.is_none()
                                && matches!(
                                    p.content,
                                    Some(
                                        pb::part::Content::Text(_)
                                            | pb::part::Content::Raw(_)
                                            | pb::part::Content::Url(_)
                                    )
                                )
                        })
                })
        }
        _ => false,
    };
    if !plain {
        return Err(Box::new(m));
    }
    let Some(pb::stream_response::Payload::ArtifactUpdate(u)) = m.payload else {
        return Err(Box::new(m));
    };
    let Some(a) = u.artifact else {
        return Err(Box::new(pb::StreamResponse {
            payload: Some(pb::stream_response::Payload::ArtifactUpdate(u)),
        }));
    };
    let some = |s: String| (!s.is_empty()).then_some(s);
    let parts = a
        .parts
        .into_iter()
        .map(|p| Part {
            content: match p.content {
                Some(pb::part::Content::Raw(b)) => PartContent::Raw(b),
                Some(pb::part::Content::Url(u)) => PartContent::Url(u),
                Some(pb::part::Content::Text(t)) => PartContent::Text(t),
                // Excluded by `plain` above.
                _ => PartContent::Text(String::new()),
            },
            metadata: None,
            filename: some(p.filename),
            media_type: some(p.media_type),
        })
        .collect();
    Ok(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: u.task_id,
        context_id: u.context_id,
        artifact: Artifact {
            artifact_id: a.artifact_id,
            name: some(a.name),
            description: some(a.description),
            parts,
            metadata: None,
            extensions: a.extensions,
        },
        append: u.append,
        last_chunk: u.last_chunk,
        metadata: None,
    }))
}

/// A stream message as ProtoJSON (an undecodable one breaks the protocol).
pub(super) fn stream_value(m: &pb::StreamResponse) -> Result<Value, ClientError> {
    from_pb(m).map_err(|e| ClientError::AgentProtocol(format!("gRPC stream message: {e}")))
}

/// True when the status was made by the client's own transport, not received from the agent.
fn is_local(s: &tonic::Status) -> bool {
    std::error::Error::source(s).is_some()
}

/// True when a local status means the connection could not be made at all.
fn is_connect_failure(s: &tonic::Status) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(s);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::AddrNotAvailable
                    | std::io::ErrorKind::NotFound
            )
        {
            return true;
        }
        let text = e.to_string().to_ascii_lowercase();
        if text.contains("tcp connect error")
            || text.contains("connection refused")
            || text.contains("dns error")
        {
            return true;
        }
        cur = e.source();
    }
    false
}

/// True for the statuses tonic's codec makes for a message it cannot take (too large, not
/// protobuf): the agent's reply, not its answer.
fn is_codec_failure(s: &tonic::Status) -> bool {
    let m = s.message();
    m.contains("message length too large") || m.starts_with("failed to decode")
}

/// The [`ClientError`] of a non-OK status in a stream: as [`status_error`], except that a
/// message the codec cannot take breaks the protocol (as an oversize SSE event does).
pub(super) fn stream_status_error(url: &str, s: &tonic::Status) -> ClientError {
    if is_codec_failure(s) {
        return ClientError::AgentProtocol(format!("gRPC stream: {}", s.message()));
    }
    status_error(url, s)
}

/// The [`ClientError`] of a non-OK status (see the module documentation).
pub(super) fn status_error(url: &str, s: &tonic::Status) -> ClientError {
    if is_codec_failure(s) {
        return ClientError::Protocol(format!("gRPC reply: {}", s.message()));
    }
    if is_local(s) {
        return if is_connect_failure(s) {
            ClientError::Connect {
                url: url.to_string(),
                message: s.to_string(),
            }
        } else {
            ClientError::Transport(format!("gRPC: {s}"))
        };
    }
    let failure = failure_from_tonic(s).ok();
    let info = failure.as_ref().and_then(|f| f.error_info.clone());
    let retry_after = s
        .metadata()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let http = |status: u16| ClientError::Http {
        status,
        retry_after,
    };
    match GrpcCode::from_number(s.code() as i32) {
        Some(GrpcCode::Unavailable) => return http(503),
        Some(GrpcCode::ResourceExhausted) => return http(429),
        Some(GrpcCode::DeadlineExceeded) => return http(504),
        Some(GrpcCode::Cancelled) => return ClientError::Transport(format!("gRPC: {s}")),
        Some(GrpcCode::Unauthenticated) if info.is_none() => return http(401),
        Some(GrpcCode::PermissionDenied) if info.is_none() => return http(403),
        _ => {}
    }
    let code = match &failure {
        Some(f) => f.error_code,
        None => ErrorCode::from_status(
            GrpcCode::from_number(s.code() as i32).unwrap_or(GrpcCode::Unknown),
            None,
        ),
    };
    let data = info.map(|i| {
        json!([{
            "@type": ERROR_INFO_TYPE,
            "reason": i.reason,
            "domain": i.domain,
            "metadata": i.metadata,
        }])
    });
    ClientError::Rpc(JsonRpcError {
        code: code.code(),
        message: if s.message().is_empty() {
            code.default_message().to_string()
        } else {
            s.message().to_string()
        },
        data,
    })
}
