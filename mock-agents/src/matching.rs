//! Rule selection: which [`Rule`] of an agent's script a request matches, and the matcher
//! semantics (method, task, round, skill, text, data, message id, context, metadata, references).
//!
//! Order: rules are tried by descending [`Rule::priority`]; within one priority a rule with a
//! longer `message_id_prefix` goes first (so `tck-artifact-file-url` beats `tck-artifact-file`
//! wherever they are written); otherwise file order. The first rule that matches and whose
//! `times` is not used up wins.

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
        (None, Some(_)) if is_send && m.has_task_id.is_none() => return false,
        _ => {}
    }
    if let Some(want) = m.has_task_id
        && want != task_id.is_some()
    {
        return false;
    }
    if let Some(r) = m.round
        && r != round
    {
        return false;
    }
    let request_metadata = params.get("metadata");
    if let Some(skill) = &m.skill {
        let s = msg
            .and_then(|m| m.get("metadata"))
            .and_then(|md| md.get("skill"))
            .or_else(|| request_metadata.and_then(|md| md.get("skill")))
            .and_then(Value::as_str);
        if s != Some(skill.as_str()) {
            return false;
        }
    }
    if reads_message(m) {
        let parsed: Option<Message> = msg.and_then(|m| serde_json::from_value(m.clone()).ok());
        let Some(parsed) = parsed else { return false };
        if !message_matches_in(m, &parsed, request_metadata) {
            return false;
        }
    }
    true
}

/// Does the matcher look inside the message?
fn reads_message(m: &Matcher) -> bool {
    m.text_contains.is_some()
        || m.text_equals.is_some()
        || m.data.is_some()
        || m.message_id.is_some()
        || m.message_id_prefix.is_some()
        || m.message_id_regex.is_some()
        || m.context_id.is_some()
        || m.metadata_keys.is_some()
        || m.has_reference_task_ids.is_some()
}

/// Does a message satisfy the message-level fields of a matcher (text, data, message id,
/// context, metadata keys, references)? Used for `input_required` answers.
pub(crate) fn message_matches(m: &Matcher, msg: &Message) -> bool {
    message_matches_in(m, msg, None)
}

/// [`message_matches`], with the request's own `metadata` also searched for `metadata_keys`.
fn message_matches_in(m: &Matcher, msg: &Message, request_metadata: Option<&Value>) -> bool {
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
    if let Some(id) = &m.message_id
        && msg.message_id != *id
    {
        return false;
    }
    if let Some(prefix) = &m.message_id_prefix
        && !msg.message_id.starts_with(prefix.as_str())
    {
        return false;
    }
    if let Some(re) = &m.message_id_regex
        && !re.is_match(&msg.message_id)
    {
        return false;
    }
    if let Some(c) = &m.context_id
        && msg.context_id.as_deref() != Some(c.as_str())
    {
        return false;
    }
    if let Some(keys) = &m.metadata_keys {
        let has = |k: &str| {
            msg.metadata.as_ref().is_some_and(|md| md.contains_key(k))
                || request_metadata.is_some_and(|md| md.get(k).is_some())
        };
        if !keys.iter().all(|k| has(k)) {
            return false;
        }
    }
    let has_references = !msg.reference_task_ids.is_empty();
    if let Some(want) = m.has_reference_task_ids
        && want != has_references
    {
        return false;
    }
    true
}

/// The order in which rules are tried (see the module documentation).
pub(crate) fn rule_order(rules: &[Rule]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rules.len()).collect();
    order.sort_by_key(|&i| {
        let r = &rules[i];
        let prefix = r.when.message_id_prefix.as_ref().map_or(0, String::len);
        (std::cmp::Reverse(r.priority), std::cmp::Reverse(prefix))
    });
    order
}

/// Find the rule for a request and count the hit.
pub(crate) fn select_rule(
    st: &AgentState,
    method: &str,
    params: &Value,
    round: u32,
) -> Option<(usize, Rule)> {
    let mut hits = lock_map(&st.rule_hits);
    for &i in &st.rule_order {
        let r = &st.spec.rules[i];
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
