//! Rejected artifacts and agent protocol errors (DLG-ART-05, -06, -07, -09): the bad bytes
//! reached the delegator, were never released as a result, and the problem was reported.
//! Failing, completing without the bad artifact, refining, or (for a protocol error)
//! recovering byte-exact from a fresh `GetTask` are all correct.
//!
//! - `artifacts`: DLG-ART-05, -06, -07 (a wrong media type, an oversize artifact, a schema
//!   violation);
//! - `protocol_error`: DLG-ART-09 (an agent's protocol error is never committed as a result);
//! - here: what both read from the scenario (the agents' scripts) and the byte-exact check of
//!   a recovered result.

mod artifacts;
mod protocol_error;
#[cfg(test)]
mod tests;

pub(super) use artifacts::{
    oversize_rejected, schema_violation_rejected, wrong_media_type_rejected,
};
pub(super) use protocol_error::protocol_error_not_garbage;

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_driver_contract::Done;
use serde_json::Value;

/// The script of agent `name` (its rules and queued faults) as JSON, for the situation tests
/// below: what the agent was told to send is known from the scenario, not guessed from names.
pub(super) fn script_of(ev: &Evidence, name: &str) -> Value {
    ev.scenario
        .network
        .agents
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| serde_json::to_value((&a.rules, &a.queued_faults)).ok())
        .unwrap_or(Value::Null)
}

/// The steps of `agent`'s rules as JSON (what it sends; not its matchers).
pub(super) fn steps_of(ev: &Evidence, name: &str) -> Value {
    ev.scenario
        .network
        .agents
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| {
            serde_json::to_value(a.rules.iter().map(|r| &r.steps).collect::<Vec<_>>()).ok()
        })
        .unwrap_or(Value::Null)
}

/// Every JSON object in `v`, recursively.
pub(super) fn objects<'v>(v: &'v Value, out: &mut Vec<&'v serde_json::Map<String, Value>>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| objects(x, out)),
        Value::Object(o) => {
            out.push(o);
            o.values().for_each(|x| objects(x, out));
        }
        _ => {}
    }
}

/// The reported artifacts are byte-exact with what the agent delivered in `tasks`; returns the
/// first that is not.
pub(super) fn byte_exact(ev: &Evidence, done: &Done, tasks: &[String]) -> Result<(), Check> {
    for a in &done.artifacts {
        let exact = tasks.iter().any(|t| {
            artifact_truth(ev.journal, t)
                .get(a.artifact_id.as_str())
                .is_some_and(|(b, sha, _)| *b == a.bytes && *sha == a.sha256)
        });
        if !exact {
            return Err(fail(
                format!(
                    "{}: artifact {} byte-exact with what the agent delivered",
                    done.id, a.artifact_id
                ),
                format!(
                    "{} bytes, sha256 {} match nothing the agent sent",
                    a.bytes, a.sha256
                ),
                vec![],
            ));
        }
    }
    Ok(())
}
