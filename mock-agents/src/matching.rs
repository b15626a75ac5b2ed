//! Rule selection: which [`Rule`] of an agent's script a request matches, and the matcher
//! semantics (method, task, round, skill, text, data).

use crate::agent::*;
use crate::script::*;
use a2a_protocol::*;
use serde_json::Value;

/// Does the matcher accept this request?
pub(crate) fn matches(m: &Matcher, method: &str, params: &Value, round: u32) -> bool {
    let msg = params.get("message");
    let is_send = method == "SendMessage" || method == "SendStreamingMessage";
    match &m.method {
        Some(want) => {
            if want != method {
                return false;
            }
        }
        None => {
            if !is_send {
                return false;
            }
        }
    }
    // The task a request is about: the continued task of a send, else `id`/`taskId` of params.
    let task_id = if is_send {
        msg.and_then(|m| m.get("taskId")).and_then(Value::as_str)
    } else {
        params
            .get("taskId")
            .or_else(|| params.get("id"))
            .and_then(Value::as_str)
    };
    match (&m.task_id, task_id) {
        (Some(want), Some(got)) if want == got => {}
        (Some(_), _) => return false,
        (None, Some(_)) if is_send => return false,
        _ => {}
    }
    if let Some(r) = m.round
        && r != round
    {
        return false;
    }
    if let Some(skill) = &m.skill {
        let s = msg
            .and_then(|m| m.get("metadata"))
            .and_then(|md| md.get("skill"))
            .or_else(|| params.get("metadata").and_then(|md| md.get("skill")))
            .and_then(Value::as_str);
        if s != Some(skill.as_str()) {
            return false;
        }
    }
    if m.text_contains.is_some() || m.text_equals.is_some() || m.data.is_some() {
        let parsed: Option<Message> = msg.and_then(|m| serde_json::from_value(m.clone()).ok());
        let Some(parsed) = parsed else { return false };
        if !message_matches(m, &parsed) {
            return false;
        }
    }
    true
}

/// Does a message satisfy the text and data parts of a matcher?
pub(crate) fn message_matches(m: &Matcher, msg: &Message) -> bool {
    let text = msg.text();
    if let Some(t) = &m.text_contains
        && !text.contains(t.as_str())
    {
        return false;
    }
    if let Some(t) = &m.text_equals
        && text.trim() != t.trim()
    {
        return false;
    }
    if let Some(data) = &m.data {
        for (ptr, want) in data {
            let found = msg.parts.iter().any(|p| match &p.content {
                PartContent::Data(d) => d.pointer(ptr) == Some(want),
                _ => false,
            });
            if !found {
                return false;
            }
        }
    }
    true
}

/// Find the rule for a request and count the hit.
pub(crate) fn select_rule(
    st: &AgentState,
    method: &str,
    params: &Value,
    round: u32,
) -> Option<(usize, Rule)> {
    let mut hits = lock_map(&st.rule_hits);
    for (i, r) in st.spec.rules.iter().enumerate() {
        if let Some(t) = r.times
            && hits[i] >= t
        {
            continue;
        }
        if matches(&r.when, method, params, round) {
            hits[i] += 1;
            return Some((i, r.clone()));
        }
    }
    None
}
