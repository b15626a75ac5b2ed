//! The agent-side events the mock network journals from its own state (`task_created`,
//! `task_state`, `artifact_chunk`, `artifact_sent`), derived here from what the proxy saw on the
//! wire: tasks in answers, status and artifact updates in streams and push notifications.
//!
//! What a recording cannot know: states the delegator never observed (a blocking `SendMessage`
//! shows only the state it returns with; a stream shows every one), and chunks of an artifact
//! the delegator fetched only by polling (the final task gives its `artifact_sent`, journaled
//! before the final state).

use a2a_mock_agents::Event;
use a2a_protocol::Part;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// Per-agent task state as observed.
#[derive(Default)]
pub struct TaskTracker {
    states: HashMap<String, String>,
    /// Artifacts being received chunk by chunk: bytes hashed so far and their count.
    open: HashMap<(String, String), (Sha256, u64, u64)>,
    /// Artifacts whose `artifact_sent` was recorded.
    sent: HashSet<(String, String)>,
}

/// Terminal states of 1.0 (and their 0.3 names).
pub fn is_terminal(state: &str) -> bool {
    matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
            | "completed"
            | "failed"
            | "canceled"
            | "rejected"
    )
}

/// Interrupted states (the stream closes there).
pub fn is_interrupted(state: &str) -> bool {
    matches!(
        state,
        "TASK_STATE_INPUT_REQUIRED"
            | "TASK_STATE_AUTH_REQUIRED"
            | "input-required"
            | "auth-required"
    )
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The bytes of an artifact's parts as the mock counts them ([`Part::inline_bytes`]); parts
/// that do not decode count nothing.
fn part_bytes(parts: &Value, mut each: impl FnMut(&[u8])) {
    for p in parts.as_array().into_iter().flatten() {
        if let Ok(part) = serde_json::from_value::<Part>(p.clone())
            && let Some(b) = part.inline_bytes()
        {
            each(&b);
        }
    }
}

impl TaskTracker {
    /// Events for one A2A result (`SendMessageResponse`, `StreamResponse`, a `Task`, a
    /// `ListTasksResponse`). `created_by` is the `messageId` of the request when the result
    /// answers a send (a task first seen there is recorded as created).
    pub fn observe(&mut self, result: &Value, created_by: Option<&str>) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some(t) = result.get("task") {
            self.task(t, created_by, &mut out);
        } else if let Some(u) = result.get("statusUpdate") {
            if let (Some(id), Some(state)) = (
                str_at(u, "taskId"),
                u.get("status").and_then(|s| str_at(s, "state")),
            ) {
                self.set_state(id, state, &mut out);
            }
        } else if let Some(u) = result.get("artifactUpdate") {
            self.chunk(u, &mut out);
        } else if let Some(list) = result.get("tasks").and_then(Value::as_array) {
            for t in list {
                self.task(t, None, &mut out);
            }
        } else if result.get("id").is_some() && result.get("status").is_some() {
            self.task(result, created_by, &mut out);
        }
        out
    }

    fn set_state(&mut self, task: &str, state: &str, out: &mut Vec<Event>) {
        if self.states.get(task).map(String::as_str) != Some(state) {
            self.states.insert(task.to_string(), state.to_string());
            out.push(Event::TaskState {
                task_id: task.to_string(),
                state: state.to_string(),
            });
        }
    }

    fn task(&mut self, t: &Value, created_by: Option<&str>, out: &mut Vec<Event>) {
        let Some(id) = str_at(t, "id") else {
            return;
        };
        if let Some(mid) = created_by
            && !self.states.contains_key(id)
        {
            out.push(Event::TaskCreated {
                task_id: id.to_string(),
                context_id: str_at(t, "contextId").unwrap_or_default().to_string(),
                message_id: mid.to_string(),
                dedup: false,
            });
        }
        let state = t.get("status").and_then(|s| str_at(s, "state"));
        // A final task's artifacts that no stream delivered: their truth from the task (no
        // chunk: how the agent made them is unknown), before the final state (the agent made
        // them before it finished, as the mock journals a task it completes with artifacts).
        if state.is_some_and(is_terminal) {
            for a in t
                .get("artifacts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(aid) = str_at(a, "artifactId") else {
                    continue;
                };
                let key = (id.to_string(), aid.to_string());
                if self.sent.contains(&key) || self.open.contains_key(&key) {
                    continue;
                }
                let mut h = Sha256::new();
                let mut n = 0u64;
                part_bytes(a.get("parts").unwrap_or(&Value::Null), |b| {
                    h.update(b);
                    n += b.len() as u64;
                });
                self.sent.insert(key);
                out.push(Event::ArtifactSent {
                    task_id: id.to_string(),
                    artifact_id: aid.to_string(),
                    bytes: n,
                    sha256: hex::encode(h.finalize()),
                    // No chunk carried them (the task did).
                    chunks: 0,
                });
            }
        }
        if let Some(state) = state {
            self.set_state(id, state, out);
        }
    }

    fn chunk(&mut self, u: &Value, out: &mut Vec<Event>) {
        let (Some(task), Some(a)) = (str_at(u, "taskId"), u.get("artifact")) else {
            return;
        };
        let Some(aid) = str_at(a, "artifactId") else {
            return;
        };
        let append = u.get("append").and_then(Value::as_bool).unwrap_or(false);
        let last_chunk = u.get("lastChunk").and_then(Value::as_bool).unwrap_or(false);
        let key = (task.to_string(), aid.to_string());
        let e = self
            .open
            .entry(key.clone())
            .or_insert_with(|| (Sha256::new(), 0, 0));
        if !append {
            *e = (Sha256::new(), 0, 0);
            self.sent.remove(&key);
        }
        let (mut n, mut content) = (0u64, false);
        part_bytes(a.get("parts").unwrap_or(&Value::Null), |b| {
            e.0.update(b);
            e.1 += b.len() as u64;
            n += b.len() as u64;
            content = true;
        });
        // As the mock counts them: chunks with content parts.
        e.2 += u64::from(content);
        out.push(Event::ArtifactChunk {
            task_id: task.to_string(),
            artifact_id: aid.to_string(),
            append,
            last_chunk,
            bytes: n,
        });
        if last_chunk && let Some((h, total, chunks)) = self.open.remove(&key) {
            self.sent.insert(key);
            out.push(Event::ArtifactSent {
                task_id: task.to_string(),
                artifact_id: aid.to_string(),
                bytes: total,
                sha256: hex::encode(h.finalize()),
                chunks,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_and_chunked_artifacts_become_mock_events() {
        let mut t = TaskTracker::default();
        let ev = t.observe(
            &json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
            Some("m1"),
        );
        assert!(
            matches!(&ev[0], Event::TaskCreated { task_id, message_id, .. } if task_id == "t1" && message_id == "m1")
        );
        assert!(
            matches!(&ev[1], Event::TaskState { state, .. } if state == "TASK_STATE_SUBMITTED")
        );
        let up = |text: &str, append: bool, last: bool| {
            json!({"artifactUpdate": {"taskId": "t1", "append": append, "lastChunk": last,
                "artifact": {"artifactId": "a", "parts": [{"text": text}]}}})
        };
        assert_eq!(t.observe(&up("ab", false, false), None).len(), 1);
        let ev = t.observe(&up("c", true, true), None);
        match &ev[1] {
            Event::ArtifactSent { bytes, sha256, .. } => {
                assert_eq!(*bytes, 3);
                assert_eq!(*sha256, hex::encode(Sha256::digest(b"abc")));
            }
            other => panic!("{other:?}"),
        }
        // The final task repeats the artifact: not counted twice; a repeated state is no event.
        let ev = t.observe(
            &json!({"id": "t1", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "abc"}]}]}),
            None,
        );
        assert_eq!(ev.len(), 1, "{ev:?}");
        assert!(t.observe(&json!({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}}), None).is_empty());
    }

    #[test]
    fn a_polled_task_gives_its_artifacts_before_its_final_state() {
        let mut t = TaskTracker::default();
        t.observe(
            &json!({"task": {"id": "t2", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}),
            Some("m2"),
        );
        let ev = t.observe(
            &json!({"id": "t2", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "b", "parts": [{"text": "hello"}]}]}),
            None,
        );
        assert!(
            matches!(&ev[..], [
                Event::ArtifactSent { bytes: 5, .. },
                Event::TaskState { state, .. },
            ] if state == "TASK_STATE_COMPLETED"),
            "{ev:?}"
        );
    }
}
