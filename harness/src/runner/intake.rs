//! What the harness keeps of a delegator's output: bounded notes and messages, every message
//! checked against the driver schemas (`docs/driver-schema/`), garbage counted.

use crate::driver::DriverError;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Protocol messages kept per case; later ones are counted.
pub const MAX_MESSAGES: usize = 10_000;
/// Notes kept per case; later ones are counted.
pub const MAX_NOTES: usize = 200;
/// Non-protocol stdout lines after which the harness stops reading the delegator.
pub const MAX_GARBAGE: u64 = 1000;
/// Non-protocol lines quoted one note each; the rest are counted in one note.
const GARBAGE_QUOTED: u64 = 20;

/// The driver schemas of the messages a delegator writes (`docs/driver-schema/`), embedded:
/// they are part of the contract.
const DELEGATOR_SCHEMAS: &[(&str, &str)] = &[
    (
        "init_ok",
        include_str!("../../../docs/driver-schema/init_ok.json"),
    ),
    (
        "state",
        include_str!("../../../docs/driver-schema/state.json"),
    ),
    (
        "escalate",
        include_str!("../../../docs/driver-schema/escalate.json"),
    ),
    (
        "done",
        include_str!("../../../docs/driver-schema/done.json"),
    ),
    (
        "snapshot_ok",
        include_str!("../../../docs/driver-schema/snapshot_ok.json"),
    ),
    (
        "error",
        include_str!("../../../docs/driver-schema/error.json"),
    ),
];

pub(super) fn validators() -> &'static BTreeMap<&'static str, jsonschema::Validator> {
    static V: OnceLock<BTreeMap<&'static str, jsonschema::Validator>> = OnceLock::new();
    V.get_or_init(|| {
        DELEGATOR_SCHEMAS
            .iter()
            .filter_map(|(ty, text)| {
                // Both cannot fail for the embedded files (a unit test compiles each).
                let schema: Value = serde_json::from_str(text).ok()?;
                Some((*ty, jsonschema::validator_for(&schema).ok()?))
            })
            .collect()
    })
}

/// What is wrong with a message from the delegator, against the driver schemas.
pub fn contract_problem(m: &Value) -> Option<String> {
    let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
    let Some(v) = validators().get(ty) else {
        return Some(format!("unknown message type {ty:?}"));
    };
    let errors: Vec<String> = v.iter_errors(m).take(3).map(|e| e.to_string()).collect();
    if errors.is_empty() {
        None
    } else {
        Some(format!(
            "{ty} message violates docs/driver-schema/{ty}.json: {}",
            errors.join("; ")
        ))
    }
}

/// What the harness keeps of a case's delegator: bounded notes and messages, contract checks.
#[derive(Default)]
pub(super) struct Intake {
    pub(super) notes: Vec<String>,
    pub(super) notes_dropped: u64,
    pub(super) contract_broken: bool,
    pub(super) messages: Vec<Value>,
    pub(super) messages_dropped: u64,
    pub(super) garbage: u64,
    /// Delegations that reported `done` in this process life.
    pub(super) done: BTreeSet<String>,
    pub(super) stalled_noted: bool,
}

impl Intake {
    pub(super) fn note(&mut self, n: String) {
        if n.starts_with("contract:") {
            self.contract_broken = true;
        }
        if self.notes.len() < MAX_NOTES {
            self.notes.push(n);
        } else {
            self.notes_dropped += 1;
        }
    }

    /// Check a protocol message against the contract and keep it.
    pub(super) fn message(&mut self, m: &Value) {
        if let Some(p) = contract_problem(m) {
            self.note(format!("contract: {p}"));
        }
        if m.get("type").and_then(Value::as_str) == Some("done")
            && let Some(id) = m.get("id").and_then(Value::as_str)
            && !self.done.insert(id.to_string())
        {
            self.note(format!(
                "contract: a second done for {id:?} in the same process life"
            ));
        }
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(m.clone());
        } else {
            self.messages_dropped += 1;
        }
    }

    /// A non-protocol line (or an over-long one); false once the harness should stop reading.
    pub(super) fn garbage(&mut self, line: Option<&str>) -> bool {
        self.garbage += 1;
        if self.garbage <= GARBAGE_QUOTED {
            self.note(match line {
                Some(g) => format!("contract: non-protocol stdout line: {g}"),
                None => format!(
                    "contract: line longer than {} MiB (discarded up to its newline)",
                    crate::driver::MAX_LINE >> 20
                ),
            });
        }
        if self.garbage >= MAX_GARBAGE {
            self.note(format!(
                "contract: stopped reading the delegator's stdout after {MAX_GARBAGE} non-protocol lines"
            ));
            return false;
        }
        true
    }

    /// A send failed: a stalled stdin is a contract break (noted once), other errors a note.
    pub(super) fn send_failed(&mut self, e: &DriverError) {
        match e {
            DriverError::Stalled { .. } => {
                if !std::mem::replace(&mut self.stalled_noted, true) {
                    self.note(format!("contract: {e}"));
                }
            }
            e => self.note(e.to_string()),
        }
    }

    /// A new process life (after a restart): `done` may be reported again.
    pub(super) fn new_life(&mut self) {
        self.done.clear();
    }

    /// The notes, with one line for each count of what was not kept.
    pub(super) fn closing_notes(&mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.notes);
        if self.garbage > GARBAGE_QUOTED {
            notes.push(format!(
                "contract: {} more non-protocol stdout lines not listed ({} in all)",
                self.garbage - GARBAGE_QUOTED,
                self.garbage
            ));
        }
        if self.messages_dropped > 0 {
            notes.push(format!(
                "{} more protocol messages not kept (the first {MAX_MESSAGES} are)",
                self.messages_dropped
            ));
        }
        if self.notes_dropped > 0 {
            notes.push(format!(
                "{} more notes not kept (the first {MAX_NOTES} are)",
                self.notes_dropped
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_embedded_driver_schema_compiles() {
        for (ty, _) in DELEGATOR_SCHEMAS {
            assert!(validators().contains_key(ty), "{ty}");
        }
        assert_eq!(
            contract_problem(
                &json!({"type": "state", "id": "d1", "state": "WORKING", "task_id": null, "context_id": null})
            ),
            None
        );
        assert!(
            contract_problem(&json!({"type": "state", "id": "d1", "state": "NOPE"}))
                .is_some_and(|p| p.contains("state.json"))
        );
        assert!(
            contract_problem(&json!({"type": "bogus"}))
                .is_some_and(|p| p.contains("unknown message type"))
        );
    }

    #[test]
    fn intake_caps_notes_and_messages_and_counts_the_rest() {
        let mut i = Intake::default();
        for n in 0..(MAX_NOTES + 5) {
            i.note(format!("n{n}"));
        }
        i.note("contract: late".into());
        assert!(i.contract_broken, "a dropped contract note still counts");
        let m = json!({"type": "state", "id": "d1", "state": "WORKING"});
        for _ in 0..(MAX_MESSAGES + 3) {
            i.message(&m);
        }
        assert_eq!(i.messages.len(), MAX_MESSAGES);
        let done = json!({"type": "done", "id": "d1", "state": "COMPLETED", "reason": "r", "task_id": null, "context_id": null, "message": null, "artifacts": []});
        i.message(&done);
        i.message(&done);
        i.new_life();
        i.message(&done);
        let mut stopped = 0;
        for _ in 0..MAX_GARBAGE {
            if !i.garbage(Some("x")) {
                stopped += 1;
            }
        }
        assert_eq!(stopped, 1);
        let notes = i.closing_notes();
        assert_eq!(notes.len(), MAX_NOTES + 3);
        assert!(notes.iter().any(|n| n.contains("more notes not kept")));
        assert!(
            notes
                .iter()
                .any(|n| n.contains("6 more protocol messages not kept"))
        );
    }
}
