//! JSON-RPC method handlers: [`dispatch`] picks the rule and applies its faults, then each A2A
//! method is answered here ([`send`] for the two send methods, [`tasks`] for listing and
//! cancelling; push-config methods live in [`crate::push`]).

pub(crate) mod send;
pub(crate) mod tasks;

use send::{continue_task, new_work, stream_task};
use tasks::{cancel_task, list_tasks};

use crate::agent::*;
use crate::faults::{post_fault, pre_fault, take_queued};
use crate::matching::select_rule;
use crate::push::push_config;
use crate::rpc::{Call, respond};
use crate::script::*;
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::*;
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Decode params; the error is the ready -32602 response.
#[allow(clippy::result_large_err)]
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    st: &AgentState,
    call: &Call,
    params: &Value,
) -> Result<T, Response> {
    codec::decode_value(params)
        .map_err(|e| call.error(st, ErrorCode::InvalidParams, Some(&e.to_string()), &[]))
}

pub(crate) fn ok(
    st: &AgentState,
    call: &Call,
    kind: ObjectKind,
    v: Value,
    mutations: &[Mutation],
) -> Response {
    let v = if call.v03 {
        compat03::to_v03(kind, &v).unwrap_or(v)
    } else {
        v
    };
    respond(st, call, Ok(v), mutations)
}

/// Dispatch one JSON-RPC call (already version-checked and translated to 1.0 names): the front
/// door ([`crate::gate`]: credential, tenant, required extensions) first, the activated
/// extensions echoed on whatever answers.
pub(crate) async fn dispatch(
    st: Arc<AgentState>,
    call: Call,
    method: String,
    params: Value,
) -> Response {
    if let Some(refused) = crate::gate::refuse(&st, &call, &method) {
        return crate::gate::echo_extensions(&st, &call.headers, refused);
    }
    let headers = call.headers.clone();
    let resp = process(st.clone(), call, method, params).await;
    crate::gate::echo_extensions(&st, &headers, resp)
}

/// Everything after the front door: queued faults, the rule, the method.
async fn process(st: Arc<AgentState>, mut call: Call, method: String, params: Value) -> Response {
    // A queued fault comes first; one answered without processing counts for no rule or round.
    let queued = take_queued(&st, &method);
    if let Some(resp) = pre_fault(&st, &call, queued.as_ref()).await {
        return resp;
    }
    let is_send = method == "SendMessage" || method == "SendStreamingMessage";
    let continues = is_send
        && params
            .pointer("/message/taskId")
            .and_then(Value::as_str)
            .is_some();
    let round = if is_send && !continues {
        st.sends.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        0
    };
    let rule = select_rule(&st, &method, &params, round);
    // A queued fault replaces the rule's (its pre-processing part already ran above).
    let fault = match queued {
        Some(q) => Some(q),
        None => {
            let f = rule.as_ref().and_then(|(_, r)| r.fault.clone());
            if let Some(resp) = pre_fault(&st, &call, f.as_ref()).await {
                return resp;
            }
            f
        }
    };
    call.dropping |= matches!(fault, Some(Fault::DropResponse));
    if let Some(Fault::OmitFields { pointers }) = &fault {
        call.omit = pointers.clone();
    }
    let resp = handle(
        &st,
        &call,
        &method,
        params,
        continues,
        rule.map(|(_, r)| r),
        fault.as_ref(),
    )
    .await;
    post_fault(&st, &call, fault.as_ref(), resp).await
}

/// Run one method (after pre-faults) and produce its response.
pub(crate) async fn handle(
    st: &Arc<AgentState>,
    call: &Call,
    method: &str,
    params: Value,
    continues: bool,
    rule: Option<Rule>,
    fault: Option<&Fault>,
) -> Response {
    // A scripted error answers whatever the rule matched, before anything is processed.
    if let Some(ScriptStep::Error { code, message }) = rule
        .as_ref()
        .and_then(|r| r.steps.first())
        .filter(|_| rule.as_ref().is_some_and(|r| r.steps.len() == 1))
    {
        let e = ErrorCode::from_code(*code).to_error(message.as_deref(), &[]);
        let m = rule.as_ref().map(|r| r.mutate.clone()).unwrap_or_default();
        return respond(st, call, Err(e), &m);
    }
    match method {
        "SendMessage" | "SendStreamingMessage" => {
            let streaming = method == "SendStreamingMessage";
            if streaming && !st.spec.streaming {
                return call.error(
                    st,
                    ErrorCode::UnsupportedOperation,
                    Some("streaming is not supported"),
                    &[],
                );
            }
            let req: SendMessageRequest = match parse(st, call, &params) {
                Ok(r) => r,
                Err(resp) => return resp,
            };
            if req.message.message_id.is_empty() || req.message.parts.is_empty() {
                return call.error(
                    st,
                    ErrorCode::InvalidParams,
                    Some("message.messageId and message.parts are required"),
                    &[],
                );
            }
            if st.spec.reject_unsupported_input_modes
                && let Some(m) = unsupported_input(&st.input_modes(), &req.message)
            {
                return call.error(
                    st,
                    ErrorCode::ContentTypeNotSupported,
                    Some(&format!("input media type {m:?} is not supported")),
                    &[("mediaType", &m)],
                );
            }
            if continues {
                continue_task(st, call, req, streaming, fault).await
            } else {
                new_work(st, call, req, streaming, rule.unwrap_or_default(), fault).await
            }
        }
        "GetTask" => {
            let req: GetTaskRequest = match parse(st, call, &params) {
                Ok(r) => r,
                Err(resp) => return resp,
            };
            if req.history_length.is_some_and(|h| h < 0) {
                return call.error(
                    st,
                    ErrorCode::InvalidParams,
                    Some("historyLength must not be negative"),
                    &[],
                );
            }
            match st.task(&req.id) {
                None => call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &req.id)]),
                Some(e) => {
                    let (t, m) = {
                        let g = e.lock();
                        (
                            st.present(&g.snapshot(), req.history_length),
                            g.mutations.clone(),
                        )
                    };
                    ok(st, call, ObjectKind::Task, to_value(&t), &m)
                }
            }
        }
        "ListTasks" => list_tasks(st, call, &params),
        "CancelTask" => cancel_task(st, call, &params).await,
        "SubscribeToTask" => {
            if !st.spec.streaming {
                return call.error(
                    st,
                    ErrorCode::UnsupportedOperation,
                    Some("streaming is not supported"),
                    &[],
                );
            }
            let req: SubscribeToTaskRequest = match parse(st, call, &params) {
                Ok(r) => r,
                Err(resp) => return resp,
            };
            let id = req.id;
            match st.task(&id) {
                None => call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &id)]),
                Some(e) => {
                    if e.lock().task.status.state.is_terminal() {
                        return call.error(
                            st,
                            ErrorCode::UnsupportedOperation,
                            Some("task is in a terminal state"),
                            &[("taskId", &id)],
                        );
                    }
                    stream_task(st, call, &e, fault)
                }
            }
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => push_config(st, call, method, &params),
        "GetExtendedAgentCard" => match st.extended_card() {
            Some(card) => ok(st, call, ObjectKind::AgentCard, to_value(&card), &[]),
            None => call.error(
                st,
                ErrorCode::UnsupportedOperation,
                Some("no extended agent card"),
                &[],
            ),
        },
        other => call.error(
            st,
            ErrorCode::MethodNotFound,
            Some(&format!("unknown method {other:?}")),
            &[],
        ),
    }
}

/// The first part `mediaType` of the message that no input mode accepts (`*/*` and `type/*`
/// entries accept families; parameters are ignored).
fn unsupported_input(modes: &[String], msg: &Message) -> Option<String> {
    let essence = |m: &str| {
        m.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    };
    let accepted = |m: &str| {
        let m = essence(m);
        let family = m.split('/').next().unwrap_or_default().to_string();
        modes.iter().any(|mode| {
            let mode = essence(mode);
            mode == m || mode == "*/*" || mode == format!("{family}/*")
        })
    };
    msg.parts
        .iter()
        .filter_map(|p| p.media_type.as_deref())
        .find(|m| !accepted(m))
        .map(str::to_string)
}

pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

pub(crate) fn with_history(t: &Task, n: Option<i32>) -> Task {
    let mut t = t.clone();
    if let Some(n) = n {
        let n = n.max(0) as usize;
        let len = t.history.len();
        t.history = t.history.split_off(len.saturating_sub(n));
    }
    t
}
