//! What the harness keeps of a delegator's output: bounded notes and messages, every message
//! checked against the driver schemas (`docs/driver-schema/`) as written, then parsed into the
//! typed contract ([`Received`]), garbage counted.

use crate::delegator_process::DelegatorProcessError;
use a2a_driver_contract::FromDelegator;
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

/// A message from the delegator as the harness uses it, after the schema check.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// Any message but `snapshot_ok`, in the contract's typed form.
    Message(FromDelegator),
    /// The records of a `snapshot_ok`, as written. The published schema constrains only a few
    /// record fields and leaves the rest (described in prose) open, so a foreign delegator's
    /// records are not parsed into the strict
    /// [`SnapshotRecord`](a2a_driver_contract::SnapshotRecord) but read through the lenient
    /// typed accessors of [`Record`](crate::rules::Record).
    Snapshot(Vec<Value>),
}

/// Parse a message that passed [`contract_problem`] into its typed form; the error says why the
/// typed contract does not accept it (for example a field the schema leaves open but the type
/// constrains). Never panics, whatever the delegator wrote.
pub fn parse_message(m: &Value) -> Result<Received, String> {
    let ty = m.get("type").and_then(Value::as_str).unwrap_or_default();
    if ty == "snapshot_ok" {
        return match m.get("records").and_then(Value::as_array) {
            Some(records) => Ok(Received::Snapshot(records.clone())),
            None => Err("snapshot_ok message has no records array".into()),
        };
    }
    serde_json::from_value::<FromDelegator>(m.clone())
        .map(Received::Message)
        .map_err(|e| format!("{ty} message does not parse as the typed driver contract: {e}"))
}

/// What the harness keeps of a case's delegator: bounded notes and messages, contract checks.
#[derive(Default)]
pub(super) struct Intake {
    pub(super) notes: Vec<String>,
    pub(super) notes_dropped: u64,
    pub(super) contract_broken: bool,
    /// Every message as written (for the report).
    pub(super) messages: Vec<Value>,
    /// The typed form of every kept message but `snapshot_ok` (for the rules).
    pub(super) typed: Vec<FromDelegator>,
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

    /// Check a protocol message against the contract's schemas as written, keep it, and parse
    /// it into its typed form: `None` when it does not parse (a contract note, unless the
    /// schema check already noted the message).
    pub(super) fn message(&mut self, m: &Value) -> Option<Received> {
        let schema_problem = contract_problem(m);
        let schema_broken = schema_problem.is_some();
        if let Some(p) = schema_problem {
            self.note(format!("contract: {p}"));
        }
        let received = match parse_message(m) {
            Ok(r) => Some(r),
            Err(e) => {
                if !schema_broken {
                    self.note(format!("contract: {e}"));
                }
                None
            }
        };
        if let Some(Received::Message(FromDelegator::Done(d))) = &received
            && !self.done.insert(d.id.clone())
        {
            self.note(format!(
                "contract: a second done for {:?} in the same process life",
                d.id
            ));
        }
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(m.clone());
            if let Some(Received::Message(t)) = &received {
                self.typed.push(t.clone());
            }
        } else {
            self.messages_dropped += 1;
        }
        received
    }

    /// A non-protocol line (or an over-long one); false once the harness should stop reading.
    pub(super) fn garbage(&mut self, line: Option<&str>) -> bool {
        self.garbage += 1;
        if self.garbage <= GARBAGE_QUOTED {
            self.note(match line {
                Some(g) => format!("contract: non-protocol stdout line: {g}"),
                None => format!(
                    "contract: line longer than {} MiB (discarded up to its newline)",
                    crate::delegator_process::MAX_LINE >> 20
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
    pub(super) fn send_failed(&mut self, e: &DelegatorProcessError) {
        match e {
            DelegatorProcessError::Stalled { .. } => {
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

    fn done_with_bytes(bytes: Value) -> Value {
        json!({"type": "done", "id": "d1", "state": "COMPLETED", "reason": null, "task_id": "t1",
            "context_id": null, "message": null, "artifacts": [{"artifact_id": "a1", "bytes": bytes,
            "sha256": "0".repeat(64), "media_type": "application/json", "path": "/s/a1"}]})
    }

    #[test]
    fn a_line_that_passes_the_schema_is_parsed_into_the_typed_contract() {
        let m = done_with_bytes(json!(10));
        assert_eq!(contract_problem(&m), None);
        let Ok(Received::Message(FromDelegator::Done(d))) = parse_message(&m) else {
            panic!("{:?}", parse_message(&m));
        };
        assert_eq!(d.state, a2a_driver_contract::Outcome::Completed);
        assert_eq!(d.artifacts[0].bytes, 10);
        let mut i = Intake::default();
        assert!(i.message(&m).is_some());
        assert!(!i.contract_broken, "{:?}", i.notes);
        assert_eq!((i.messages.len(), i.typed.len()), (1, 1));
    }

    #[test]
    fn a_line_that_passes_the_schema_but_not_the_typed_contract_is_a_contract_note() {
        // 10.0 is an integer to JSON Schema but not a u64 to the typed contract.
        let m = done_with_bytes(json!(10.0));
        assert_eq!(contract_problem(&m), None, "the schema accepts it");
        let e = parse_message(&m).unwrap_err();
        assert!(
            e.contains("does not parse as the typed driver contract"),
            "{e}"
        );
        let mut i = Intake::default();
        assert_eq!(i.message(&m), None);
        assert!(i.contract_broken);
        assert_eq!(i.notes.len(), 1, "{:?}", i.notes);
        assert!(i.notes[0].starts_with("contract: done message does not parse"));
        // Kept as written for the report, not for the rules.
        assert_eq!((i.messages.len(), i.typed.len()), (1, 0));
        // A line the schema already rejects is noted once, not twice.
        let mut i = Intake::default();
        assert_eq!(i.message(&done_with_bytes(json!("ten"))), None);
        assert_eq!(i.notes.len(), 1, "{:?}", i.notes);
        assert!(i.notes[0].contains("violates docs/driver-schema/done.json"));
    }

    #[test]
    fn snapshot_records_are_kept_as_written() {
        // Record fields the schema leaves open may have any shape: no contract note.
        let m = json!({"type": "snapshot_ok", "records": [{"id": "d1", "message_ids": {},
            "task_id": null, "context_id": null, "state": "COMPLETED", "attempts": 1, "dlq": false,
            "input_rounds": [], "artifacts": [], "errors": [{"what": "no at, op or message"}]}]});
        assert_eq!(contract_problem(&m), None);
        let mut i = Intake::default();
        let Some(Received::Snapshot(records)) = i.message(&m) else {
            panic!("{:?}", i.notes);
        };
        assert_eq!(records[0]["id"], "d1");
        assert!(
            serde_json::from_value::<a2a_driver_contract::SnapshotRecord>(records[0].clone())
                .is_err(),
            "the strict record type would have refused it"
        );
        assert!(!i.contract_broken, "{:?}", i.notes);
        assert!(parse_message(&json!({"type": "snapshot_ok"})).is_err());
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
