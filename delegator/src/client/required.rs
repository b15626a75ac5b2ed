//! REQUIRED fields of what agents send (spec §5.7 and §14.1.1: a client validates them and
//! rejects a message that lacks one). Decoding is lenient (an absent string decodes as `""`, an
//! absent status as the default one), so these checks look at the ProtoJSON value the agent sent.
//!
//! A required string counts as missing when it is absent, `null` or empty (proto3 cannot tell
//! the last from absent); a required message (`status`, `artifact`) when it is absent or not an
//! object; `artifact.parts` when it holds no part. `status.state` is checked for presence only on
//! the JSON bindings: over gRPC an absent enum is its default, `TASK_STATE_UNSPECIFIED`, which is
//! also a state an agent may report (it is then observed as an unknown state).
//!
//! ```
//! use a2a_delegator::client::required;
//! use serde_json::json;
//! let ev = json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {}}});
//! assert_eq!(required::stream_response(&ev, true), ["statusUpdate.status.state"]);
//! assert!(required::stream_response(&ev, false).is_empty());
//! let task = json!({"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}});
//! assert!(required::task(&task, true).is_empty());
//! ```

use a2a_protocol::artifact_chunk::{ArtifactChunk, SharedStreamResponse};
use a2a_protocol::{StreamResponse, TaskState};
use serde_json::{Map, Value};

/// The member `camel` (or its snake_case form `snake`) of `o`.
fn member<'a>(o: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    o.get(camel)
        .filter(|v| !v.is_null())
        .or_else(|| o.get(snake).filter(|v| !v.is_null()))
}

fn has_string(o: &Map<String, Value>, camel: &str, snake: &str) -> bool {
    member(o, camel, snake).is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()))
}

/// The missing parts of a `TaskStatus` member named `status` of `o`, prefixed with `at`.
fn status(o: &Map<String, Value>, at: &str, state_presence: bool, out: &mut Vec<String>) {
    match member(o, "status", "status").and_then(Value::as_object) {
        None => out.push(format!("{at}status")),
        Some(s) => {
            if state_presence && member(s, "state", "state").is_none() {
                out.push(format!("{at}status.state"));
            }
        }
    }
}

/// The REQUIRED fields a `Task` value lacks: `id`, `status`, `status.state` (the last only with
/// `state_presence`, i.e. not over gRPC). Empty when it is complete (or not an object at all:
/// the decoder reports that).
pub fn task(v: &Value, state_presence: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = v.as_object() {
        task_at(o, "", state_presence, &mut out);
    }
    out
}

fn task_at(o: &Map<String, Value>, at: &str, state_presence: bool, out: &mut Vec<String>) {
    if !has_string(o, "id", "id") {
        out.push(format!("{at}id"));
    }
    status(o, at, state_presence, out);
}

/// The REQUIRED fields a `StreamResponse` value (a stream event, a push body) lacks, named by
/// their path (`statusUpdate.taskId`, `artifactUpdate.artifact.parts`, `task.status`, ...).
/// A `message` event is not checked here.
pub fn stream_response(v: &Value, state_presence: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some(o) = v.as_object() else {
        return out;
    };
    if let Some(t) = member(o, "task", "task").and_then(Value::as_object) {
        task_at(t, "task.", state_presence, &mut out);
    } else if let Some(u) = member(o, "statusUpdate", "status_update").and_then(Value::as_object) {
        for (camel, snake) in [("taskId", "task_id"), ("contextId", "context_id")] {
            if !has_string(u, camel, snake) {
                out.push(format!("statusUpdate.{camel}"));
            }
        }
        status(u, "statusUpdate.", state_presence, &mut out);
    } else if let Some(u) =
        member(o, "artifactUpdate", "artifact_update").and_then(Value::as_object)
    {
        for (camel, snake) in [("taskId", "task_id"), ("contextId", "context_id")] {
            if !has_string(u, camel, snake) {
                out.push(format!("artifactUpdate.{camel}"));
            }
        }
        match member(u, "artifact", "artifact").and_then(Value::as_object) {
            None => out.push("artifactUpdate.artifact".into()),
            Some(a) => {
                if !has_string(a, "artifactId", "artifact_id") {
                    out.push("artifactUpdate.artifact.artifactId".into());
                }
                if member(a, "parts", "parts")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
                {
                    out.push("artifactUpdate.artifact.parts".into());
                }
            }
        }
    }
    out
}

/// The REQUIRED fields a decoded artifact chunk lacks (exact for a gRPC frame, where an empty
/// string is an absent one).
pub fn chunk(c: &ArtifactChunk) -> Vec<String> {
    let mut out = Vec::new();
    if c.task_id.is_empty() {
        out.push("artifactUpdate.taskId".to_string());
    }
    if c.context_id.is_empty() {
        out.push("artifactUpdate.contextId".to_string());
    }
    if c.artifact_id.is_empty() {
        out.push("artifactUpdate.artifact.artifactId".to_string());
    }
    if c.parts.is_empty() {
        out.push("artifactUpdate.artifact.parts".to_string());
    }
    out
}

/// Whether a decoded event may lack a REQUIRED field (an empty id, no parts, an UNSPECIFIED
/// state that may stand for an absent one): the caller then checks the value it came from.
/// False for every complete event, so complete events are never read twice.
pub fn suspicious(ev: &SharedStreamResponse) -> bool {
    match ev {
        SharedStreamResponse::ArtifactChunk(c) => !chunk(c).is_empty(),
        SharedStreamResponse::Other(StreamResponse::StatusUpdate(u)) => {
            u.task_id.is_empty()
                || u.context_id.is_empty()
                || u.status.state == TaskState::Unspecified
        }
        SharedStreamResponse::Other(StreamResponse::Task(t)) => {
            t.id.is_empty() || t.status.state == TaskState::Unspecified
        }
        SharedStreamResponse::Other(StreamResponse::ArtifactUpdate(u)) => {
            u.task_id.is_empty()
                || u.context_id.is_empty()
                || u.artifact.artifact_id.is_empty()
                || u.artifact.parts.is_empty()
        }
        SharedStreamResponse::Other(StreamResponse::Message(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_required_field_of_every_event_is_named() {
        let full_status = json!({"state": "TASK_STATE_WORKING"});
        let su = |m: Value| json!({"statusUpdate": m});
        assert!(
            stream_response(
                &su(json!({"taskId": "t", "contextId": "c", "status": full_status})),
                true
            )
            .is_empty()
        );
        assert_eq!(
            stream_response(&su(json!({"contextId": "c", "status": full_status})), true),
            ["statusUpdate.taskId"]
        );
        assert_eq!(
            stream_response(&su(json!({"taskId": "", "contextId": "c"})), true),
            ["statusUpdate.taskId", "statusUpdate.status"]
        );
        // snake_case members count (the decoder accepts them).
        assert!(
            stream_response(
                &json!({"status_update": {"task_id": "t", "context_id": "c", "status": full_status}}),
                true
            )
            .is_empty()
        );
        let au =
            |a: Value| json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": a}});
        assert!(
            stream_response(
                &au(json!({"artifactId": "a", "parts": [{"text": "x"}]})),
                true
            )
            .is_empty()
        );
        assert_eq!(
            stream_response(&au(json!({"parts": []})), true),
            [
                "artifactUpdate.artifact.artifactId",
                "artifactUpdate.artifact.parts"
            ]
        );
        assert_eq!(
            stream_response(
                &json!({"artifactUpdate": {"taskId": "t", "contextId": "c"}}),
                true
            ),
            ["artifactUpdate.artifact"]
        );
        assert_eq!(
            stream_response(
                &json!({"task": {"status": {"state": "TASK_STATE_WORKING"}}}),
                true
            ),
            ["task.id"]
        );
        assert_eq!(
            stream_response(&json!({"task": {"id": "t", "status": {}}}), true),
            ["task.status.state"]
        );
        // Over gRPC an absent state is UNSPECIFIED: not reported.
        assert!(stream_response(&json!({"task": {"id": "t", "status": {}}}), false).is_empty());
        assert_eq!(task(&json!({"id": "t"}), false), ["status"]);
        assert!(stream_response(&json!({"message": {}}), true).is_empty());
    }

    #[test]
    fn complete_events_are_not_suspicious() {
        use a2a_protocol::{Artifact, Part, Task, TaskArtifactUpdateEvent, TaskStatus};
        let art = TaskArtifactUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            artifact: Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text("x")],
                ..Default::default()
            },
            ..Default::default()
        };
        let shared: SharedStreamResponse = StreamResponse::ArtifactUpdate(art.clone()).into();
        assert!(!suspicious(&shared));
        let mut no_id = art;
        no_id.artifact.artifact_id.clear();
        let shared: SharedStreamResponse = StreamResponse::ArtifactUpdate(no_id).into();
        assert!(suspicious(&shared));
        let t = Task {
            id: "t".into(),
            status: TaskStatus {
                state: TaskState::Working,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(!suspicious(&StreamResponse::Task(t.clone()).into()));
        let mut unspecified = t;
        unspecified.status.state = TaskState::Unspecified;
        assert!(suspicious(&StreamResponse::Task(unspecified).into()));
    }
}
