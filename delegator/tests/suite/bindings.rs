//! The delegator over every binding: HTTP+JSON (against the mock agents' REST binding and a small
//! axum stub), gRPC (against a tonic stub of the generated `A2aService`), interface selection by
//! card order and by the `bindings` option, fallback when an advertised binding is not served,
//! and a visible failure when none works. Tests wait on events and journals, never on sleeps.

use crate::support;

use a2a_delegator::client::{ClientError, Endpoint, RpcClient};
use a2a_delegator::engine::{EngineConfig, Options};
use a2a_delegator::store::DelegationState;
use a2a_mock_agents::{Network, Step};
use a2a_protocol::grpc::pb;
use a2a_protocol::grpc::pb::a2a_service_server::{A2aService, A2aServiceServer};
use a2a_protocol::grpc::status::a2a_tonic_status;
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{Binding, ErrorCode, Method, TaskState};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{EngineRun, agent, card, chunk, requests, scripted};

const SELF_URL: &str = "http://127.0.0.1:1/delegator";
const T: Duration = Duration::from_secs(5);

fn opts() -> Options {
    support::fast_options()
}

async fn start_with(agents: Vec<String>, o: Options) -> EngineRun {
    EngineRun::start(|dir| EngineConfig::new(dir, SELF_URL).agents(agents).options(o)).await
}

async fn start(net: &Network, o: Options) -> EngineRun {
    start_with(net.names().map(|n| card(net, n)).collect(), o).await
}

fn client() -> RpcClient {
    RpcClient::new(1024 * 1024, None).unwrap()
}

fn ep(binding: Binding, url: &str) -> Endpoint {
    Endpoint {
        url: url.to_string(),
        version: ProtocolVersion::V1_0,
        tenant: None,
        binding,
        extensions: Vec::new(),
        fallbacks: Vec::new(),
    }
}

/// A loopback address nothing listens on (bound, then released).
fn closed_addr() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

async fn serve(router: axum::Router) -> SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(l, router).await;
    });
    addr
}

/// A card with skill `work`, these `(binding, url)` interfaces in order, and `streaming`.
fn card_json(interfaces: &[(&str, String)], streaming: bool) -> Value {
    let ifaces: Vec<Value> = interfaces
        .iter()
        .map(|(b, u)| json!({"url": u, "protocolBinding": b, "protocolVersion": "1.0"}))
        .collect();
    json!({
        "name": "stub", "description": "d", "version": "1",
        "supportedInterfaces": ifaces,
        "capabilities": {"streaming": streaming, "pushNotifications": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "work", "name": "n", "description": "d", "tags": ["x"]}]
    })
}

// ---------------------------------------------------------------- gRPC stub

/// One call the gRPC stub saw: the RPC, its metadata and its request as ProtoJSON.
type GrpcCall = (String, BTreeMap<String, String>, Value);

/// What the gRPC stub saw.
#[derive(Clone, Default)]
struct GrpcStub {
    seen: Arc<Mutex<Vec<GrpcCall>>>,
    calls: Arc<tokio::sync::Notify>,
}

impl GrpcStub {
    fn record<M: serde::Serialize>(&self, rpc: &str, req: &tonic::Request<M>) {
        let meta = req
            .metadata()
            .iter()
            .filter_map(|kv| match kv {
                tonic::metadata::KeyAndValueRef::Ascii(k, v) => {
                    Some((k.to_string(), v.to_str().unwrap_or_default().to_string()))
                }
                _ => None,
            })
            .collect();
        let body = a2a_protocol::grpc::from_pb(req.get_ref()).unwrap_or(Value::Null);
        self.seen
            .lock()
            .unwrap()
            .push((rpc.to_string(), meta, body));
        self.calls.notify_waiters();
    }

    fn seen(&self, rpc: &str) -> Vec<(BTreeMap<String, String>, Value)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(r, _, _)| r == rpc)
            .map(|(_, m, b)| (m.clone(), b.clone()))
            .collect()
    }
}

fn pb_of<M: serde::de::DeserializeOwned>(v: Value) -> M {
    a2a_protocol::grpc::to_pb(&v).unwrap()
}

fn task_json(id: &str, state: &str, with_artifact: bool) -> Value {
    let mut t = json!({"id": id, "contextId": "c-1", "status": {"state": state}});
    if with_artifact {
        t["artifacts"] = json!([{"artifactId": "a1", "name": "out",
            "parts": [{"text": "hello over grpc", "mediaType": "text/plain"}]}]);
    }
    t
}

type EventStreamOf = std::pin::Pin<
    Box<dyn futures::Stream<Item = Result<pb::StreamResponse, tonic::Status>> + Send + 'static>,
>;

fn events(items: Vec<Value>) -> EventStreamOf {
    let items: Vec<Result<pb::StreamResponse, tonic::Status>> =
        items.into_iter().map(|v| Ok(pb_of(v))).collect();
    Box::pin(futures::stream::iter(items))
}

#[tonic::async_trait]
impl A2aService for GrpcStub {
    async fn send_message(
        &self,
        r: tonic::Request<pb::SendMessageRequest>,
    ) -> Result<tonic::Response<pb::SendMessageResponse>, tonic::Status> {
        self.record("SendMessage", &r);
        if r.get_ref().message.as_ref().is_some_and(|m| {
            m.parts
                .iter()
                .any(|p| matches!(&p.content, Some(pb::part::Content::Text(t)) if t == "busy"))
        }) {
            return Err(tonic::Status::unavailable("busy"));
        }
        Ok(tonic::Response::new(pb_of(
            json!({"task": task_json("t-1", "TASK_STATE_WORKING", false)}),
        )))
    }

    type SendStreamingMessageStream = EventStreamOf;
    async fn send_streaming_message(
        &self,
        r: tonic::Request<pb::SendMessageRequest>,
    ) -> Result<tonic::Response<EventStreamOf>, tonic::Status> {
        self.record("SendStreamingMessage", &r);
        Ok(tonic::Response::new(events(vec![
            json!({"task": task_json("t-2", "TASK_STATE_WORKING", false)}),
            json!({"artifactUpdate": {"taskId": "t-2", "contextId": "c-1", "lastChunk": true,
                "artifact": {"artifactId": "a1", "name": "out",
                    "parts": [{"text": "streamed over grpc", "mediaType": "text/plain"}]}}}),
            json!({"statusUpdate": {"taskId": "t-2", "contextId": "c-1",
                "status": {"state": "TASK_STATE_COMPLETED"}}}),
        ])))
    }

    async fn get_task(
        &self,
        r: tonic::Request<pb::GetTaskRequest>,
    ) -> Result<tonic::Response<pb::Task>, tonic::Status> {
        self.record("GetTask", &r);
        let id = r.get_ref().id.clone();
        if id != "t-1" {
            return Err(a2a_tonic_status(
                ErrorCode::TaskNotFound,
                None,
                &[("taskId", &id)],
            ));
        }
        Ok(tonic::Response::new(pb_of(task_json(
            "t-1",
            "TASK_STATE_COMPLETED",
            true,
        ))))
    }

    async fn list_tasks(
        &self,
        _r: tonic::Request<pb::ListTasksRequest>,
    ) -> Result<tonic::Response<pb::ListTasksResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("ListTasks"))
    }

    async fn cancel_task(
        &self,
        r: tonic::Request<pb::CancelTaskRequest>,
    ) -> Result<tonic::Response<pb::Task>, tonic::Status> {
        self.record("CancelTask", &r);
        let id = r.get_ref().id.clone();
        Ok(tonic::Response::new(pb_of(task_json(
            &id,
            "TASK_STATE_CANCELED",
            false,
        ))))
    }

    type SubscribeToTaskStream = EventStreamOf;
    async fn subscribe_to_task(
        &self,
        r: tonic::Request<pb::SubscribeToTaskRequest>,
    ) -> Result<tonic::Response<EventStreamOf>, tonic::Status> {
        self.record("SubscribeToTask", &r);
        let id = r.get_ref().id.clone();
        Ok(tonic::Response::new(events(vec![json!({
            "task": task_json(&id, "TASK_STATE_COMPLETED", true)
        })])))
    }

    async fn create_task_push_notification_config(
        &self,
        _r: tonic::Request<pb::TaskPushNotificationConfig>,
    ) -> Result<tonic::Response<pb::TaskPushNotificationConfig>, tonic::Status> {
        Err(tonic::Status::unimplemented("push"))
    }

    async fn get_task_push_notification_config(
        &self,
        _r: tonic::Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<pb::TaskPushNotificationConfig>, tonic::Status> {
        Err(tonic::Status::unimplemented("push"))
    }

    async fn list_task_push_notification_configs(
        &self,
        _r: tonic::Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<tonic::Response<pb::ListTaskPushNotificationConfigsResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("push"))
    }

    async fn get_extended_agent_card(
        &self,
        _r: tonic::Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<tonic::Response<pb::AgentCard>, tonic::Status> {
        Err(tonic::Status::unimplemented("card"))
    }

    async fn delete_task_push_notification_config(
        &self,
        _r: tonic::Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<tonic::Response<()>, tonic::Status> {
        Err(tonic::Status::unimplemented("push"))
    }
}

/// A gRPC stub agent: the service on h2c and its card (gRPC interface `host:port`, then any
/// `extra` interfaces) on the same port. Returns the stub and the card URL.
async fn grpc_agent(streaming: bool, extra: Vec<(&'static str, String)>) -> (GrpcStub, String) {
    let stub = GrpcStub::default();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let mut ifaces = vec![("GRPC", addr.to_string())];
    ifaces.extend(extra);
    let card = card_json(&ifaces, streaming);
    let router = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let c = card.clone();
                async move { axum::Json(c) }
            }),
        )
        .route_service(
            "/lf.a2a.v1.A2AService/{rpc}",
            A2aServiceServer::new(stub.clone()),
        );
    tokio::spawn(async move {
        let _ = axum::serve(l, router).await;
    });
    (stub, format!("http://{addr}/.well-known/agent-card.json"))
}

// ---------------------------------------------------------------- REST stub

/// What the REST stub saw: (method, path, headers).
type RestSeen = Arc<Mutex<Vec<(String, String, BTreeMap<String, String>)>>>;

/// An HTTP+JSON stub: GetTask of `t-1` answers a task, any other id `TASK_NOT_FOUND`;
/// `:subscribe` answers 405 to POST and an SSE stream (task, then `event: error`) to GET;
/// `/message:send` answers 503 with `Retry-After: 2`.
async fn rest_stub() -> (SocketAddr, RestSeen) {
    let seen: RestSeen = Arc::default();
    let s = seen.clone();
    let router = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let s = s.clone();
        async move {
            let method = req.method().to_string();
            let path = req.uri().path().to_string();
            let headers = req
                .headers()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
                .collect();
            s.lock()
                .unwrap()
                .push((method.clone(), path.clone(), headers));
            let json = |status: u16, v: Value| {
                (
                    axum::http::StatusCode::from_u16(status).unwrap(),
                    [("content-type", "application/a2a+json")],
                    v.to_string(),
                )
                    .into_response()
            };
            match (method.as_str(), path.as_str()) {
                ("POST", "/message:send") => (
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    [("retry-after", "2")],
                    "",
                )
                    .into_response(),
                ("GET", "/tasks/t-1") => json(200, task_json("t-1", "TASK_STATE_WORKING", false)),
                ("POST", "/tasks/t-1:subscribe") => {
                    axum::http::StatusCode::METHOD_NOT_ALLOWED.into_response()
                }
                ("GET", "/tasks/t-1:subscribe") => {
                    let (_, err) = a2a_protocol::rest::error_body(
                        &ErrorCode::UnsupportedOperation.to_error(Some("gone"), &[]),
                    );
                    let body = format!(
                        "data: {}\n\nevent: error\ndata: {}\n\n",
                        json!({"task": task_json("t-1", "TASK_STATE_WORKING", false)}),
                        err
                    );
                    ([("content-type", "text/event-stream")], body).into_response()
                }
                ("GET", p) if p.starts_with("/tasks/") => {
                    let (status, body) = a2a_protocol::rest::error_body(
                        &ErrorCode::TaskNotFound.to_error(None, &[]),
                    );
                    json(status, body)
                }
                _ => axum::http::StatusCode::NOT_FOUND.into_response(),
            }
        }
    });
    (serve(router).await, seen)
}

// ---------------------------------------------------------------- client level

mod client_level {
    use super::*;

    #[tokio::test]
    async fn task_not_found_reaches_the_same_handler_over_rest_and_grpc() {
        let (rest, _) = rest_stub().await;
        let (_, card_url) = grpc_agent(false, vec![]).await;
        let grpc_addr = card_url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let c = client();
        let params = json!({"id": "nope"});
        let over_rest = c
            .call(
                &ep(Binding::Rest, &format!("http://{rest}/")),
                Method::GetTask,
                params.clone(),
                None,
                T,
            )
            .await
            .unwrap_err();
        let over_grpc = c
            .call(
                &ep(Binding::Grpc, &format!("http://{grpc_addr}")),
                Method::GetTask,
                params,
                None,
                T,
            )
            .await
            .unwrap_err();
        for e in [&over_rest, &over_grpc] {
            assert_eq!(e.code(), Some(ErrorCode::TaskNotFound.code()), "{e}");
            assert!(!e.is_transient(), "{e}");
            let ClientError::Rpc(rpc) = e else {
                panic!("{e}")
            };
            assert_eq!(
                rpc.error_info().map(|i| i.reason),
                Some("TASK_NOT_FOUND".into())
            );
        }
    }

    #[tokio::test]
    async fn rest_requests_carry_the_binding_headers_and_map_errors() {
        let (rest, seen) = rest_stub().await;
        let c = client();
        let e = ep(Binding::Rest, &format!("http://{rest}"));
        let r = c
            .call(
                &e,
                Method::GetTask,
                json!({"id": "t-1"}),
                Some("Bearer scoped"),
                T,
            )
            .await
            .unwrap();
        assert_eq!(r.result["id"], "t-1");
        // 503 with Retry-After: transient, like over JSON-RPC.
        let err = c
            .call(
                &e,
                Method::SendMessage,
                json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
                None,
                T,
            )
            .await
            .unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert_eq!(err.http_status(), Some(503));
        assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
        let seen = seen.lock().unwrap().clone();
        let (m, p, h) = &seen[0];
        assert_eq!((m.as_str(), p.as_str()), ("GET", "/tasks/t-1"));
        assert_eq!(h.get("a2a-version").map(String::as_str), Some("1.0"));
        assert_eq!(
            h.get("authorization").map(String::as_str),
            Some("Bearer scoped")
        );
        let (_, _, h) = &seen[1];
        assert_eq!(
            h.get("content-type").map(String::as_str),
            Some("application/a2a+json")
        );
    }

    #[tokio::test]
    async fn rest_subscribe_retries_with_get_on_405_and_reads_error_events() {
        let (rest, seen) = rest_stub().await;
        let c = client();
        let e = ep(Binding::Rest, &format!("http://{rest}"));
        let mut s = c
            .stream(&e, Method::SubscribeToTask, json!({"id": "t-1"}), None, T)
            .await
            .unwrap();
        let first = s.next().await.unwrap().unwrap();
        assert!(
            matches!(
                first.event,
                a2a_protocol::artifact_chunk::SharedStreamResponse::Other(
                    a2a_protocol::StreamResponse::Task(_)
                )
            ),
            "{first:?}"
        );
        let err = s.next().await.unwrap().unwrap_err();
        assert_eq!(
            err.code(),
            Some(ErrorCode::UnsupportedOperation.code()),
            "{err}"
        );
        let verbs: Vec<String> = seen.lock().unwrap().iter().map(|x| x.0.clone()).collect();
        assert_eq!(verbs, ["POST", "GET"]);
        let (_, _, h) = &seen.lock().unwrap()[1];
        assert_eq!(
            h.get("accept").map(String::as_str),
            Some("text/event-stream")
        );
    }

    #[tokio::test]
    async fn grpc_unavailable_is_transient_and_metadata_is_sent() {
        let (stub, card_url) = grpc_agent(false, vec![]).await;
        let addr = card_url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap();
        let c = client();
        let e = ep(Binding::Grpc, addr_url(addr).as_str());
        let err = c
            .call(
                &e,
                Method::SendMessage,
                json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "busy"}]}}),
                Some("Bearer scoped"),
                T,
            )
            .await
            .unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert_eq!(err.http_status(), Some(503));
        let (meta, body) = stub.seen("SendMessage").remove(0);
        assert_eq!(meta.get("a2a-version").map(String::as_str), Some("1.0"));
        assert_eq!(
            meta.get("authorization").map(String::as_str),
            Some("Bearer scoped")
        );
        assert_eq!(body["message"]["messageId"], "m");
        // A connection refused is a connect error (transient, a fallback trigger).
        let dead = ep(Binding::Grpc, &format!("http://{}", closed_addr()));
        let err = c
            .call(&dead, Method::GetTask, json!({"id": "t-1"}), None, T)
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Connect { .. }), "{err}");
        // UNIMPLEMENTED without ErrorInfo: an unknown operation, a fallback trigger.
        let err = c
            .call(&e, Method::ListTasks, json!({}), None, T)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(-32601));
        assert!(err.is_unserved(Binding::Grpc));
    }

    fn addr_url(addr: &str) -> String {
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn fallback_goes_to_the_next_interface_and_remembers_it() {
        let (stub, card_url) = grpc_agent(false, vec![]).await;
        let addr = card_url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap();
        let c = client();
        let mut primary = ep(Binding::Rest, &format!("http://{}/rest", closed_addr()));
        primary.fallbacks = vec![ep(Binding::Grpc, &addr_url(addr))];
        let r = c
            .call(&primary, Method::GetTask, json!({"id": "t-1"}), None, T)
            .await
            .unwrap();
        assert_eq!(r.result["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(c.in_use(&primary).binding, Binding::Grpc);
        // An A2A error is an answer: no fallback, the error as is.
        let err = c
            .call(&primary, Method::GetTask, json!({"id": "nope"}), None, T)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::TaskNotFound.code()));
        assert_eq!(stub.seen("GetTask").len(), 2);
    }

    #[tokio::test]
    async fn when_no_interface_answers_the_error_names_every_binding_tried() {
        let (rest, _) = rest_stub().await;
        let c = client();
        // REST answers 404 without ErrorInfo for /tasks (ListTasks), JSON-RPC is not listening.
        let mut primary = ep(Binding::Rest, &format!("http://{rest}"));
        primary.fallbacks = vec![ep(
            Binding::JsonRpc,
            &format!("http://{}/rpc", closed_addr()),
        )];
        let err = c
            .call(&primary, Method::ListTasks, json!({}), None, T)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ClientError::Unserved { .. }), "{err}");
        assert!(
            text.contains("rest http://") && text.contains("jsonrpc http://"),
            "{text}"
        );
        assert!(err.is_transient(), "a refused connection may heal: {err}");
    }
}

// ---------------------------------------------------------------- engine level

mod engine_level {
    use super::*;

    #[tokio::test]
    async fn rest_agent_polling_completes_with_the_same_duties() {
        let net = scripted(
            agent("a").bindings([Binding::Rest]),
            vec![
                Step::state(TaskState::Working).into(),
                chunk("a1", "hello rest", false, true),
                Step::state(TaskState::Completed).into(),
            ],
        )
        .await;
        let mut h = start(&net, opts()).await;
        let o = h.run(support::request("r1")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        assert_eq!(o.artifacts.len(), 1);
        assert_eq!(o.artifacts[0].sha256, support::sha(b"hello rest"));
        let sends = requests(&net, "a", "SendMessage");
        assert_eq!(sends.len(), 1);
        assert_eq!(sends[0].binding, Binding::Rest);
        assert_eq!(sends[0].header("a2a-version"), Some("1.0"));
        assert!(sends[0].params["message"]["messageId"].is_string());
        assert!(
            sends[0].params["message"]["metadata"]["x-deleg"].is_object()
                || sends[0].params["metadata"]["x-deleg"].is_object(),
            "{}",
            sends[0].params
        );
        assert!(
            support::calls(&net, "a")
                .iter()
                .all(|r| r.binding == Binding::Rest)
        );
    }

    #[tokio::test]
    async fn rest_agent_streaming_completes() {
        let net = scripted(
            agent("a").bindings([Binding::Rest]).streaming(true),
            vec![
                Step::state(TaskState::Working).into(),
                chunk("a1", "streamed ", false, false),
                chunk("a1", "rest", true, true),
                Step::state(TaskState::Completed).into(),
            ],
        )
        .await;
        let mut h = start(&net, opts()).await;
        let o = h.run(support::request("r2")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        assert_eq!(o.artifacts[0].sha256, support::sha(b"streamed rest"));
        assert_eq!(requests(&net, "a", "SendStreamingMessage").len(), 1);
        assert_eq!(
            requests(&net, "a", "SendStreamingMessage")[0].binding,
            Binding::Rest
        );
    }

    #[tokio::test]
    async fn selection_follows_card_order_unless_the_option_says_otherwise() {
        let steps = || {
            vec![
                chunk("a1", "x", false, true),
                Step::state(TaskState::Completed).into(),
            ]
        };
        let net = scripted(
            agent("a").bindings([Binding::Rest, Binding::JsonRpc]),
            steps(),
        )
        .await;
        let mut h = start(&net, opts()).await;
        let init = h.engine.agents().await;
        assert_eq!(init[0].endpoint.binding, Binding::Rest);
        assert_eq!(
            h.run(support::request("s1")).await.state,
            DelegationState::Completed
        );
        assert_eq!(requests(&net, "a", "SendMessage")[0].binding, Binding::Rest);

        let net = scripted(
            agent("a").bindings([Binding::Rest, Binding::JsonRpc]),
            steps(),
        )
        .await;
        let o = Options {
            bindings: vec![Binding::JsonRpc],
            ..opts()
        };
        let mut h = start(&net, o).await;
        assert_eq!(
            h.run(support::request("s2")).await.state,
            DelegationState::Completed
        );
        assert!(
            support::calls(&net, "a")
                .iter()
                .all(|r| r.binding == Binding::JsonRpc)
        );
    }

    #[tokio::test]
    async fn an_advertised_but_unserved_binding_falls_back() {
        let net = scripted(
            agent("a")
                .bindings([Binding::JsonRpc])
                .advertised_bindings([Binding::Rest, Binding::JsonRpc]),
            vec![
                chunk("a1", "fallback", false, true),
                Step::state(TaskState::Completed).into(),
            ],
        )
        .await;
        let mut h = start(&net, opts()).await;
        let o = h.run(support::request("f1")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        let sends = requests(&net, "a", "SendMessage");
        assert_eq!(sends.len(), 1, "exactly one send reached the agent");
        assert_eq!(sends[0].binding, Binding::JsonRpc);
    }

    #[tokio::test]
    async fn failure_is_visible_when_no_binding_works() {
        let dead_rest = format!("http://{}/rest", closed_addr());
        let dead_rpc = format!("http://{}/rpc", closed_addr());
        let card = card_json(&[("HTTP+JSON", dead_rest), ("JSONRPC", dead_rpc)], false);
        let router = axum::Router::new().route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let c = card.clone();
                async move { axum::Json(c) }
            }),
        );
        let addr = serve(router).await;
        let mut h = start_with(
            vec![format!("http://{addr}/.well-known/agent-card.json")],
            opts(),
        )
        .await;
        let mut r = support::request("x1");
        r.max_retries = 0;
        let o = h.run(r).await;
        assert_ne!(o.state, DelegationState::Completed, "{o:?}");
        let reason = o.reason.clone().unwrap_or_default();
        assert!(
            reason.contains("rest") && reason.contains("jsonrpc"),
            "{o:?}"
        );
    }

    #[tokio::test]
    async fn grpc_agent_polling_and_streaming_complete() {
        let (stub, card_url) = grpc_agent(false, vec![]).await;
        let mut h = start_with(vec![card_url], opts()).await;
        let o = h.run(support::request("g1")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        assert_eq!(o.artifacts[0].sha256, support::sha(b"hello over grpc"));
        let (meta, body) = stub.seen("SendMessage").remove(0);
        assert_eq!(meta.get("a2a-version").map(String::as_str), Some("1.0"));
        assert!(body["message"]["messageId"].is_string());
        assert!(
            body["metadata"]["x-deleg"].is_object()
                || body["message"]["metadata"]["x-deleg"].is_object(),
            "{body}"
        );
        assert!(!stub.seen("GetTask").is_empty());

        let (stub, card_url) = grpc_agent(true, vec![]).await;
        let mut h = start_with(vec![card_url], opts()).await;
        let o = h.run(support::request("g2")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        assert_eq!(o.artifacts[0].sha256, support::sha(b"streamed over grpc"));
        assert_eq!(stub.seen("SendStreamingMessage").len(), 1);
    }

    #[tokio::test]
    async fn grpc_first_in_card_order_falls_back_to_rest_when_unserved() {
        // The gRPC interface points at a port nothing listens on; REST is served by the mock.
        let net = scripted(
            agent("a").bindings([Binding::Rest]),
            vec![
                chunk("a1", "via rest", false, true),
                Step::state(TaskState::Completed).into(),
            ],
        )
        .await;
        let rest_url = net.rest_url("a").expect("a serves REST");
        let card = card_json(
            &[("GRPC", closed_addr().to_string()), ("HTTP+JSON", rest_url)],
            false,
        );
        let router = axum::Router::new().route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let c = card.clone();
                async move { axum::Json(c) }
            }),
        );
        let addr = serve(router).await;
        let mut h = start_with(
            vec![format!("http://{addr}/.well-known/agent-card.json")],
            opts(),
        )
        .await;
        let o = h.run(support::request("gf")).await;
        assert_eq!(o.state, DelegationState::Completed, "{o:?}");
        assert!(
            support::calls(&net, "a")
                .iter()
                .all(|r| r.binding == Binding::Rest)
        );
    }
}
