//! The HTTP+JSON (REST) binding (specification §11, bindings reference §2): the HTTP method,
//! path and query of every operation ([`RestRequest`] for a client, [`route`] for a server), the
//! error body in both directions ([`error_body`], [`error_from_body`]) and the media type.
//!
//! Bodies are the JSON-RPC `params` and `result` objects unchanged (both are the ProtoJSON of
//! the same proto messages), so the rest of the crate's types serve this binding as they are.
//! Streams are SSE whose every `data:` is one bare `StreamResponse`.
//!
//! ```
//! use a2a_protocol::rest::{RestRequest, route};
//! use a2a_protocol::Method;
//! use serde_json::json;
//! let req = RestRequest::new(Method::GetTask, &json!({"id": "t:1", "historyLength": 2})).unwrap();
//! assert_eq!(req.path_and_query(), "/tasks/t%3A1?historyLength=2");
//! let (method, params) = route("GET", "/tasks/t%3A1", Some("historyLength=2"), None).unwrap();
//! assert_eq!(method, Method::GetTask);
//! assert_eq!(params, json!({"id": "t:1", "historyLength": 2}));
//! ```

use crate::error::{ERROR_INFO_TYPE, ErrorCode, GrpcCode};
use crate::jsonrpc::{JsonRpcError, Method};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Map, Value, json};
use std::fmt;

/// The media type of HTTP+JSON bodies (§11.1); `application/json` is accepted too.
pub const REST_CONTENT_TYPE: &str = "application/a2a+json";

/// Everything but RFC 3986 unreserved characters is encoded in a path segment or query value
/// (`:` too: it separates a custom verb).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The HTTP methods the binding uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `DELETE`.
    Delete,
}

impl HttpMethod {
    /// The method name, upper case.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
        }
    }
}

impl fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One operation as an HTTP request of the binding, relative to the interface `url`.
#[derive(Debug, Clone, PartialEq)]
pub struct RestRequest {
    /// The HTTP method.
    pub http_method: HttpMethod,
    /// The path, percent-encoded, starting with `/` (with the `/{tenant}` prefix if any).
    pub path: String,
    /// Query parameters (camelCase names, unencoded values).
    pub query: Vec<(&'static str, String)>,
    /// The JSON body (`None` for GET and DELETE).
    pub body: Option<Value>,
}

/// Why a request cannot be expressed in, or routed from, the HTTP+JSON binding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestError {
    /// A path field (`id`, `taskId`) is missing or not a string.
    #[error("{method}: `{field}` must be a non-empty string to address the resource")]
    MissingPathField {
        /// The operation.
        method: &'static str,
        /// The field's JSON name.
        field: &'static str,
    },
    /// No route has this path.
    #[error("no HTTP+JSON route {path:?}")]
    NotFound {
        /// The request path.
        path: String,
    },
    /// The path exists but not with this HTTP method.
    #[error("{http_method} is not allowed on {path:?} (allowed: {allowed})")]
    MethodNotAllowed {
        /// The request's method.
        http_method: String,
        /// The request path.
        path: String,
        /// The methods the path serves, comma-separated (the `Allow` header).
        allowed: &'static str,
    },
    /// A query parameter has a value of the wrong type.
    #[error("query parameter `{name}`: {reason} (got {value:?})")]
    BadQuery {
        /// The parameter's name.
        name: String,
        /// Its raw value.
        value: String,
        /// What was expected.
        reason: &'static str,
    },
    /// The body is not a JSON object.
    #[error("the request body must be a JSON object")]
    BodyNotObject,
}

impl RestError {
    /// The HTTP status a server answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            RestError::NotFound { .. } => 404,
            RestError::MethodNotAllowed { .. } => 405,
            _ => 400,
        }
    }
}

/// The first path segments of the binding's routes (anything else first is a tenant).
const ROOTS: [&str; 4] = [
    "message:send",
    "message:stream",
    "tasks",
    "extendedAgentCard",
];

fn encode(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

impl RestRequest {
    /// The request for an operation whose JSON-RPC `params` are `params` (a `tenant` field
    /// becomes the `/{tenant}` path prefix; path fields leave the body).
    pub fn new(method: Method, params: &Value) -> Result<Self, RestError> {
        let mut body = match params {
            Value::Object(m) => m.clone(),
            Value::Null => Map::new(),
            _ => return Err(RestError::BodyNotObject),
        };
        let tenant = match body.remove("tenant") {
            Some(Value::String(t)) if !t.is_empty() => Some(t),
            _ => None,
        };
        let mut take = |field: &'static str| match body.remove(field) {
            Some(Value::String(s)) if !s.is_empty() => Ok(encode(&s)),
            _ => Err(RestError::MissingPathField {
                method: method.as_str(),
                field,
            }),
        };
        use HttpMethod::*;
        let (http_method, path) = match method {
            Method::SendMessage => (Post, "/message:send".to_string()),
            Method::SendStreamingMessage => (Post, "/message:stream".to_string()),
            Method::GetTask => (Get, format!("/tasks/{}", take("id")?)),
            Method::ListTasks => (Get, "/tasks".to_string()),
            Method::CancelTask => (Post, format!("/tasks/{}:cancel", take("id")?)),
            Method::SubscribeToTask => (Post, format!("/tasks/{}:subscribe", take("id")?)),
            Method::CreateTaskPushNotificationConfig => (
                Post,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")?),
            ),
            Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
                let task = take("taskId")?;
                let id = take("id")?;
                let verb = if method == Method::GetTaskPushNotificationConfig {
                    Get
                } else {
                    Delete
                };
                (verb, format!("/tasks/{task}/pushNotificationConfigs/{id}"))
            }
            Method::ListTaskPushNotificationConfigs => (
                Get,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")?),
            ),
            Method::GetExtendedAgentCard => (Get, "/extendedAgentCard".to_string()),
        };
        let path = match tenant {
            Some(t) => format!("/{}{path}", encode(&t)),
            None => path,
        };
        if http_method == Post {
            return Ok(RestRequest {
                http_method,
                path,
                query: Vec::new(),
                body: Some(Value::Object(body)),
            });
        }
        // GET and DELETE: the remaining fields travel in the query (§11.5), in a fixed order.
        let names: &[&'static str] = match method {
            Method::GetTask => &["historyLength"],
            Method::ListTasks => &[
                "contextId",
                "status",
                "pageSize",
                "pageToken",
                "historyLength",
                "statusTimestampAfter",
                "includeArtifacts",
            ],
            Method::ListTaskPushNotificationConfigs => &["pageSize", "pageToken"],
            _ => &[],
        };
        let query = names
            .iter()
            .filter_map(|name| {
                let v = body.get(*name)?;
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return None,
                };
                // `pageSize` of the push-config list has no presence: 0 means unset.
                if method == Method::ListTaskPushNotificationConfigs && text == "0" {
                    return None;
                }
                Some((*name, text))
            })
            .collect();
        Ok(RestRequest {
            http_method,
            path,
            query,
            body: None,
        })
    }

    /// The path with its query string, ready to append to the interface `url`.
    pub fn path_and_query(&self) -> String {
        let mut out = self.path.clone();
        for (i, (k, v)) in self.query.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(k);
            out.push('=');
            out.push_str(&encode(v));
        }
        out
    }
}

/// Join an interface `url` and a request path (a trailing `/` of the url is dropped).
pub fn join_url(base: &str, path_and_query: &str) -> String {
    format!("{}{path_and_query}", base.trim_end_matches('/'))
}

fn decode(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

/// Route a request of the binding to its operation and JSON-RPC-shaped `params`.
///
/// `path` is relative to the interface url and still percent-encoded; `query` is the raw query
/// string. Path fields win over the same fields in the body (a client may send both). Both
/// `POST` and `GET` are accepted for `:subscribe` (the specification and its proto disagree).
/// `A2A-Version` and unknown query keys are ignored here (the version is the transport's).
pub fn route(
    http_method: &str,
    path: &str,
    query: Option<&str>,
    body: Option<Value>,
) -> Result<(Method, Value), RestError> {
    let not_found = || RestError::NotFound {
        path: path.to_string(),
    };
    let (tenant, segments) = split_tenant(path);
    let not_allowed = |allowed: &'static str| RestError::MethodNotAllowed {
        http_method: http_method.to_string(),
        path: path.to_string(),
        allowed,
    };
    let is = |m: &str| http_method.eq_ignore_ascii_case(m);
    let mut params = match body {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(RestError::BodyNotObject),
    };
    let query_pairs = parse_query(query);
    let method = match segments.as_slice() {
        ["message:send"] if is("POST") => Method::SendMessage,
        ["message:stream"] if is("POST") => Method::SendStreamingMessage,
        ["message:send" | "message:stream"] => return Err(not_allowed("POST")),
        ["extendedAgentCard"] if is("GET") => Method::GetExtendedAgentCard,
        ["extendedAgentCard"] => return Err(not_allowed("GET")),
        ["tasks"] if is("GET") => {
            params = Map::new();
            for (k, v) in &query_pairs {
                let value = match k.as_str() {
                    "contextId" | "pageToken" | "statusTimestampAfter" => Value::String(v.clone()),
                    "status" => Value::String(task_state_name(v)?),
                    "pageSize" | "historyLength" => int32(k, v)?,
                    "includeArtifacts" => boolean(k, v)?,
                    _ => continue,
                };
                params.insert(k.clone(), value);
            }
            Method::ListTasks
        }
        ["tasks"] => return Err(not_allowed("GET")),
        ["tasks", seg] => {
            let seg = decode(seg);
            // The custom verb follows the last colon; an id may itself contain colons.
            let (id, verb) = match seg.rsplit_once(':') {
                Some((id, verb @ ("cancel" | "subscribe"))) => (id.to_string(), Some(verb)),
                _ => (seg.clone(), None),
            };
            let method = match verb {
                Some("cancel") if is("POST") => Method::CancelTask,
                Some("cancel") => return Err(not_allowed("POST")),
                Some(_) if is("POST") || is("GET") => {
                    params = Map::new();
                    Method::SubscribeToTask
                }
                Some(_) => return Err(not_allowed("GET, POST")),
                None if is("GET") => {
                    params = Map::new();
                    if let Some((k, v)) = query_pairs.iter().rfind(|(k, _)| k == "historyLength") {
                        params.insert(k.clone(), int32(k, v)?);
                    }
                    Method::GetTask
                }
                None => return Err(not_allowed("GET")),
            };
            if id.is_empty() {
                return Err(not_found());
            }
            params.insert("id".into(), Value::String(id));
            method
        }
        ["tasks", task, "pushNotificationConfigs"] => {
            let method = if is("POST") {
                Method::CreateTaskPushNotificationConfig
            } else if is("GET") {
                params = Map::new();
                for (k, v) in &query_pairs {
                    match k.as_str() {
                        "pageSize" => params.insert(k.clone(), int32(k, v)?),
                        "pageToken" => params.insert(k.clone(), Value::String(v.clone())),
                        _ => None,
                    };
                }
                Method::ListTaskPushNotificationConfigs
            } else {
                return Err(not_allowed("GET, POST"));
            };
            params.insert("taskId".into(), Value::String(decode(task)));
            method
        }
        ["tasks", task, "pushNotificationConfigs", config] => {
            let method = if is("GET") {
                Method::GetTaskPushNotificationConfig
            } else if is("DELETE") {
                Method::DeleteTaskPushNotificationConfig
            } else {
                return Err(not_allowed("GET, DELETE"));
            };
            params = Map::new();
            params.insert("taskId".into(), Value::String(decode(task)));
            params.insert("id".into(), Value::String(decode(config)));
            method
        }
        _ => return Err(not_found()),
    };
    if let Some(t) = tenant {
        params.insert("tenant".into(), Value::String(t));
    }
    Ok((method, Value::Object(params)))
}

/// The `/{tenant}` prefix of a request path relative to the interface url (still
/// percent-encoded), decoded; `None` when the path starts with one of the binding's own
/// routes. This is the tenant an HTTP+JSON request carries (a `tenant` in a body does not
/// count: the binding puts it in the path).
///
/// ```
/// use a2a_protocol::rest::path_tenant;
/// assert_eq!(path_tenant("/acme%20corp/tasks/t-1").as_deref(), Some("acme corp"));
/// assert_eq!(path_tenant("/tasks/t-1"), None);
/// assert_eq!(path_tenant("/message:send"), None);
/// ```
pub fn path_tenant(path: &str) -> Option<String> {
    split_tenant(path).0
}

/// The decoded tenant prefix, if any, and the route's segments (still encoded).
fn split_tenant(path: &str) -> (Option<String>, Vec<&str>) {
    let mut segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if segments.last() == Some(&"") && segments.len() > 1 {
        segments.pop();
    }
    let mut tenant = None;
    if segments.len() > 1 && !ROOTS.contains(&segments[0]) {
        tenant = Some(decode(segments.remove(0)));
    }
    (tenant, segments)
}

/// Decoded `key=value` pairs of a query string (`+` is a space, as in forms).
fn parse_query(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or_default()
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(&k.replace('+', " ")), decode(&v.replace('+', " ")))
        })
        .collect()
}

fn int32(name: &str, v: &str) -> Result<Value, RestError> {
    v.parse::<i32>()
        .map(Value::from)
        .map_err(|_| RestError::BadQuery {
            name: name.to_string(),
            value: v.to_string(),
            reason: "expected a decimal int32",
        })
}

fn boolean(name: &str, v: &str) -> Result<Value, RestError> {
    match v {
        "true" => Ok(Value::Bool(true)),
        "false" => Ok(Value::Bool(false)),
        _ => Err(RestError::BadQuery {
            name: name.to_string(),
            value: v.to_string(),
            reason: "expected true or false",
        }),
    }
}

/// A `status` query value: a `TaskState` name as is, or its proto number turned into the name.
fn task_state_name(v: &str) -> Result<String, RestError> {
    const NAMES: [&str; 9] = [
        "TASK_STATE_UNSPECIFIED",
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    ];
    match v.parse::<usize>() {
        Ok(n) => NAMES
            .get(n)
            .map(|s| s.to_string())
            .ok_or_else(|| RestError::BadQuery {
                name: "status".into(),
                value: v.to_string(),
                reason: "expected a TaskState name or number",
            }),
        Err(_) => Ok(v.to_string()),
    }
}

/// The HTTP status and body (AIP-193 envelope, §11.6) for an error a dispatcher produced in
/// JSON-RPC form: `code` is the HTTP status, `status` the gRPC code name, `details` the
/// `ErrorInfo` (added for an A2A error that lacks one) and any other typed details.
pub fn error_body(e: &JsonRpcError) -> (u16, Value) {
    let code = ErrorCode::from_code(e.code);
    let status = match code {
        ErrorCode::Other(_) => 500,
        c => c.http_status(),
    };
    let grpc = match code {
        ErrorCode::Other(_) => GrpcCode::Unknown,
        c => c.grpc_code(),
    };
    let mut details: Vec<Value> = match &e.data {
        Some(Value::Array(items)) => items
            .iter()
            .filter(|d| d.get("@type").is_some())
            .cloned()
            .collect(),
        Some(d @ Value::Object(_)) if d.get("@type").is_some() => vec![d.clone()],
        _ => Vec::new(),
    };
    if e.error_info().is_none()
        && let Some(Value::Array(info)) = code.to_error(None, &[]).data
    {
        details.extend(info);
    }
    let body = json!({"error": {
        "code": status,
        "status": grpc.name(),
        "message": e.message,
        "details": details,
    }});
    (status, body)
}

/// The error an HTTP+JSON error response carries, in JSON-RPC form so that one set of handlers
/// serves every binding: the code comes from the `ErrorInfo` reason, else from the status name,
/// else from the HTTP status. Accepts the AIP-193 envelope, a bare `google.rpc.Status` and RFC
/// 9457 problem details; `None` when the body is none of them.
pub fn error_from_body(http_status: u16, body: &Value) -> Option<JsonRpcError> {
    let (grpc, message, details) = if let Some(err) = body.get("error").filter(|e| e.is_object()) {
        let grpc = err
            .get("status")
            .and_then(Value::as_str)
            .and_then(GrpcCode::from_name)
            .unwrap_or_else(|| GrpcCode::from_http_status(http_status));
        (grpc, err.get("message"), err.get("details"))
    } else if let (Some(n), Some(_)) = (
        body.get("code").and_then(Value::as_i64),
        body.get("message"),
    ) {
        // A bare google.rpc.Status: `code` is the gRPC number.
        let grpc = i32::try_from(n)
            .ok()
            .and_then(GrpcCode::from_number)
            .unwrap_or_else(|| GrpcCode::from_http_status(http_status));
        (grpc, body.get("message"), body.get("details"))
    } else if body.get("title").is_some() || body.get("type").is_some() {
        // RFC 9457 problem details (tolerated, never emitted).
        let message = body.get("detail").or_else(|| body.get("title"));
        (GrpcCode::from_http_status(http_status), message, None)
    } else {
        return None;
    };
    let details: Vec<Value> = details
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let reason = details
        .iter()
        .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    let code = ErrorCode::from_status(grpc, reason);
    Some(JsonRpcError {
        code: code.code(),
        message: message
            .and_then(Value::as_str)
            .unwrap_or(code.default_message())
            .to_string(),
        data: (!details.is_empty()).then_some(Value::Array(details)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(method: Method, params: Value) {
        let req = RestRequest::new(method, &params).unwrap();
        let pq = req.path_and_query();
        let (path, query) = match pq.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (pq.clone(), None),
        };
        let (m, back) = route(req.http_method.as_str(), &path, query.as_deref(), req.body).unwrap();
        assert_eq!(m, method, "{pq}");
        assert_eq!(back, params, "{pq}");
    }

    #[test]
    fn every_operation_round_trips_through_its_route() {
        round_trip(
            Method::SendMessage,
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
        );
        round_trip(
            Method::SendStreamingMessage,
            json!({"tenant": "acme", "message": {}}),
        );
        round_trip(
            Method::GetTask,
            json!({"id": "a/b:c d", "historyLength": 0}),
        );
        round_trip(
            Method::ListTasks,
            json!({"tenant": "t 1", "contextId": "c+1", "status": "TASK_STATE_WORKING",
                   "pageSize": 10, "pageToken": "a+/=", "historyLength": 1,
                   "statusTimestampAfter": "2026-03-20T10:00:00.000Z", "includeArtifacts": true}),
        );
        round_trip(
            Method::CancelTask,
            json!({"id": "t:1", "metadata": {"k": 1}}),
        );
        round_trip(Method::SubscribeToTask, json!({"id": "t1:subscribe"}));
        round_trip(
            Method::CreateTaskPushNotificationConfig,
            json!({"taskId": "t1", "url": "http://127.0.0.1:1/hook", "token": "x"}),
        );
        round_trip(
            Method::GetTaskPushNotificationConfig,
            json!({"taskId": "t1", "id": "c1"}),
        );
        round_trip(
            Method::DeleteTaskPushNotificationConfig,
            json!({"taskId": "t1", "id": "c1"}),
        );
        round_trip(
            Method::ListTaskPushNotificationConfigs,
            json!({"taskId": "t1", "pageSize": 5, "pageToken": "p"}),
        );
        round_trip(Method::GetExtendedAgentCard, json!({"tenant": "acme"}));
    }

    #[test]
    fn opaque_ids_and_tenants_survive_the_path() {
        // Every character a URL path treats specially, an encoded slash and a non-ASCII letter.
        let id = "task/7f 9c%2F?q#f+x:é&=-1";
        round_trip(Method::GetTask, json!({"tenant": "v2 ü/x", "id": id}));
        round_trip(Method::CancelTask, json!({"id": id}));
        round_trip(Method::SubscribeToTask, json!({"id": id}));
        round_trip(
            Method::GetTaskPushNotificationConfig,
            json!({"taskId": id, "id": id}),
        );
        let req =
            RestRequest::new(Method::GetTask, &json!({"tenant": "v2 ü/x", "id": id})).unwrap();
        assert_eq!(path_tenant(&req.path).as_deref(), Some("v2 ü/x"));
        // A raw slash in an id is another segment: no route, never another task.
        assert!(matches!(
            route("GET", "/tasks/a/b", None, None),
            Err(RestError::NotFound { .. })
        ));
        // A tenant only in the body is not the path's.
        let (_, p) = route("POST", "/message:send", None, Some(json!({"tenant": "b"}))).unwrap();
        assert_eq!(p["tenant"], "b");
        assert_eq!(path_tenant("/message:send"), None);
        assert_eq!(path_tenant("/acme/message:send").as_deref(), Some("acme"));
    }

    #[test]
    fn routes_are_exact() {
        assert_eq!(
            route("GET", "/tasks/t1:subscribe", None, None).unwrap().0,
            Method::SubscribeToTask
        );
        let (m, p) = route(
            "POST",
            "/tasks/t1:cancel",
            None,
            Some(json!({"id": "other"})),
        )
        .unwrap();
        assert_eq!((m, p), (Method::CancelTask, json!({"id": "t1"})));
        assert_eq!(
            route("GET", "/tasks/", None, None).unwrap().0,
            Method::ListTasks
        );
        let (m, p) = route("GET", "/tasks/tasks", None, None).unwrap();
        assert_eq!((m, p), (Method::GetTask, json!({"id": "tasks"})));
        assert!(matches!(
            route("PUT", "/tasks/t1", None, None),
            Err(RestError::MethodNotAllowed { allowed: "GET", .. })
        ));
        assert!(matches!(
            route("GET", "/nope", None, None),
            Err(RestError::NotFound { .. })
        ));
        assert!(matches!(
            route("GET", "/v1/tasks/a/b/c/d", None, None),
            Err(RestError::NotFound { .. })
        ));
        let e = route("GET", "/tasks", Some("pageSize=ten"), None).unwrap_err();
        assert_eq!(e.http_status(), 400);
        let (_, p) = route("GET", "/tasks", Some("status=2&A2A-Version=1.0&x=y"), None).unwrap();
        assert_eq!(p, json!({"status": "TASK_STATE_WORKING"}));
        assert_eq!(
            route("POST", "/message:send", None, Some(json!([1]))),
            Err(RestError::BodyNotObject)
        );
        assert!(RestRequest::new(Method::GetTask, &json!({})).is_err());
    }

    #[test]
    fn errors_round_trip_in_every_accepted_shape() {
        for code in ErrorCode::ALL {
            let e = code.to_error(Some("boom"), &[("taskId", "t1")]);
            let (status, body) = error_body(&e);
            assert_eq!(status, code.http_status());
            let back = error_from_body(status, &body).unwrap();
            let expected = if code.is_a2a() {
                *code
            } else {
                ErrorCode::from_status(code.grpc_code(), None)
            };
            assert_eq!(back.error_code(), expected, "{code}");
            assert_eq!(back.message, "boom");
        }
        let bare = json!({"code": 5, "message": "gone", "details": [
            {"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]});
        assert_eq!(
            error_from_body(404, &bare).unwrap().error_code(),
            ErrorCode::TaskNotFound
        );
        let problem = json!({"type": "about:blank", "title": "Bad", "status": 400});
        assert_eq!(
            error_from_body(400, &problem).unwrap().error_code(),
            ErrorCode::InvalidParams
        );
        assert!(error_from_body(500, &json!({"unrelated": true})).is_none());
        // Six errors share FAILED_PRECONDITION: without a reason the status alone is not enough.
        let env = json!({"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "x"}});
        assert!(!error_from_body(400, &env).unwrap().error_code().is_a2a());
    }
}
