//! The committed schemas are the generated ones, and the generated driver schemas accept and
//! reject exactly what the hand-written ones they replaced did.
//!
//! `UPDATE_SCHEMAS=1 cargo test -p a2a-driver-contract --test schemas` rewrites the committed
//! files from the types.

#![recursion_limit = "256"]

use a2a_driver_contract::schema::{self, Direction, MESSAGE_TYPES};
use a2a_driver_contract::{FromDelegator, ToDelegator};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("driver-contract/ has a parent directory")
        .to_path_buf()
}

#[test]
fn committed_schemas_are_generated_from_the_types() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (rel, text) in schema::generated_files() {
        let path = root().join(&rel);
        if update {
            std::fs::create_dir_all(path.parent().expect("a parent directory")).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let same = serde_json::from_str::<Value>(&committed).ok()
            == Some(serde_json::from_str::<Value>(&text).unwrap());
        if !same {
            stale.push(rel);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated schema files: {stale:?}\nregenerate them with `UPDATE_SCHEMAS=1 cargo test -p a2a-driver-contract --test schemas` and commit the result"
    );
}

#[test]
fn every_generated_schema_compiles() {
    for m in MESSAGE_TYPES {
        jsonschema::validator_for(&m.schema()).unwrap_or_else(|e| panic!("{}: {e}", m.name));
    }
    jsonschema::validator_for(&schema::index_schema()).expect("index schema compiles");
}

// ---------------------------------------------------------------------------------------------
// Equivalence with the hand-written schemas
// ---------------------------------------------------------------------------------------------

fn legacy(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/legacy-driver-schema")
        .join(format!("{name}.json"));
    let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

fn generated(name: &str) -> jsonschema::Validator {
    let m = schema::message_type(name).unwrap_or_else(|| panic!("no type {name}"));
    jsonschema::validator_for(&m.schema()).unwrap()
}

/// A valid message of every type, with every optional field present.
fn full_examples() -> Vec<Value> {
    vec![
        json!({"type":"init","store_dir":"/tmp/s","recovering":true,
               "agents":["http://127.0.0.1:9101/.well-known/agent-card.json"],
               "webhook_base_url":"http://127.0.0.1:0","webhook_listen":"127.0.0.1:0",
               "self_url":"http://127.0.0.1:4100/","credential":"Bearer own",
               "options":{"max_depth":3,"input_round_cap":3,"deadline_margin_ms":2000,
                          "budget_reserve_fraction":0.1,"retry_base_ms":2000,"retry_cap_ms":60000,
                          "poll_interval_ms":500,"seed":42,"max_event_bytes":1024}}),
        json!({"type":"delegate","id":"d1","capability":"c","text":"t","inputs":{"k":"v"},
               "artifact_spec":{"mime_types":["application/json","text/*"],"max_size_bytes":1048576,
                                "streaming_preferred":true,"schema":{"type":"object"}},
               "timeout_seconds":120,"deadline":"2026-01-01T00:00:00Z","budget_usd":1.5,
               "max_retries":3,"priority":"high","depth":1,"chain":["http://a/"],
               "children":[{"id":"c1","capability":"c","text":"t","inputs":{"a":1},
                            "artifact_spec":{"mime_types":["text/plain"],"max_size_bytes":10,
                                             "streaming_preferred":false,"schema":null},
                            "max_retries":2,
                            "priority":"low"}],
               "refine_of":"d0","agent":"http://127.0.0.1:9101/.well-known/agent-card.json"}),
        json!({"type":"answer","id":"d1","text":"English law"}),
        json!({"type":"credential","id":"d1","credential":"Bearer scoped"}),
        json!({"type":"cancel","id":"d1"}),
        json!({"type":"snapshot"}),
        json!({"type":"init_ok","name":"a2a-delegator","version":"0.1.0","supports":["delegate"],
               "webhook_url":"http://127.0.0.1:43121",
               "agents":[{"card_url":"http://a/card","ok":true,"name":"legal","protocol_version":"1.0"},
                         {"card_url":"http://b/card","ok":false,"error":"404"}]}),
        json!({"type":"state","id":"d1","state":"WORKING","task_id":"t-1","context_id":"c-1"}),
        json!({"type":"escalate","id":"d1","kind":"auth","question":"Which airport?",
               "agent":"http://a/card","task_id":"t-1"}),
        json!({"type":"done","id":"d1","state":"COMPLETED","reason":"ok","task_id":"t-1",
               "context_id":"c-1","message":"m",
               "artifacts":[{"artifact_id":"a-1","name":"n","bytes":2048,
                             "sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                             "media_type":"application/json","path":"/tmp/a"}]}),
        json!({"type":"snapshot_ok","records":[{
            "id":"d1","parent_id":null,"request":{"id":"d1"},"agent_url":"http://a/card",
            "rpc_url":"http://a/rpc","protocol_version":"1.0","skill":"c",
            "message_ids":{"create":"m-1"},"task_id":"t-1","context_id":"c-1","state":"DEAD_LETTERED",
            "reason":"r","budget_usd":1.0,"budget_share":0.9,"spend_usd":0.0,
            "deadline":"2026-01-01T00:00:00Z","depth":0,"chain":[],"refine_of":null,
            "reference_task_ids":[],"streaming":false,"push_token_sha256":[],"attempts":4,
            "last_error":"e","error_code":-32603,"final_message":null,"priority":"normal",
            "created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z",
            "terminal_at":null,"dlq":true,
            "input_rounds":[{"round":1,"kind":"input","question":"q","question_message_id":"m",
                             "answer":"a","source":"caller","answer_message_id":"m2",
                             "asked_at":"2026-01-01T00:00:00Z","answered_at":null,"sent_at":null}],
            "artifacts":[{"artifact_id":"a","name":null,"media_type":"text/plain","bytes":3,
                          "sha256":"x","path":"/p","agent_url":"http://a/card","skill":"c",
                          "task_id":"t-1","committed":false}],
            "errors":[{"at":"2026-01-01T00:00:00Z","op":"SendMessage","code":null,
                       "http_status":503,"transient":true,"message":"busy"}]}]}),
        json!({"type":"error","id":null,"code":"bad_request","message":"timeout_seconds: too small"}),
    ]
}

/// Values substituted at every position of a message.
fn substitutes() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(5),
        json!(4294967297_u64),
        json!(""),
        json!("x"),
        json!("a".repeat(129)),
        json!("text/plain"),
        json!("COMPLETED"),
        json!("WORKING"),
        json!("input"),
        json!("unsupported"),
        json!([]),
        json!(["x"]),
        json!({}),
    ]
}

/// Every variant of `v`: each member removed, each value replaced by each substitute, and an
/// unknown member added, at every depth.
fn mutations(v: &Value, out: &mut Vec<Value>) {
    fn walk(root: &Value, path: &mut Vec<String>, out: &mut Vec<Value>) {
        let here = pointer(root, path).clone();
        for s in substitutes() {
            if !path.is_empty() {
                out.push(replaced(root, path, Some(s)));
            }
        }
        match &here {
            Value::Object(m) => {
                let mut extra = here.clone();
                extra
                    .as_object_mut()
                    .unwrap()
                    .insert("x-unknown".into(), json!({"a": 1}));
                out.push(replaced(root, path, Some(extra)));
                for k in m.keys() {
                    path.push(k.clone());
                    out.push(replaced(root, path, None));
                    walk(root, path, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for i in 0..a.len() {
                    path.push(i.to_string());
                    walk(root, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    walk(v, &mut Vec::new(), out);
}

fn pointer<'a>(v: &'a Value, path: &[String]) -> &'a Value {
    path.iter().fold(v, |v, k| match v {
        Value::Object(m) => &m[k],
        Value::Array(a) => &a[k.parse::<usize>().unwrap()],
        _ => unreachable!(),
    })
}

/// `root` with the value at `path` replaced (or removed when `with` is `None`).
fn replaced(root: &Value, path: &[String], with: Option<Value>) -> Value {
    let mut out = root.clone();
    if path.is_empty() {
        return with.unwrap_or(Value::Null);
    }
    let (last, parent) = path.split_last().unwrap();
    let mut cur = &mut out;
    for k in parent {
        cur = match cur {
            Value::Object(m) => m.get_mut(k).unwrap(),
            Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
    }
    match (cur, with) {
        (Value::Object(m), Some(w)) => {
            m.insert(last.clone(), w);
        }
        (Value::Object(m), None) => {
            m.remove(last);
        }
        (Value::Array(a), Some(w)) => a[last.parse::<usize>().unwrap()] = w,
        (Value::Array(a), None) => {
            a.remove(last.parse::<usize>().unwrap());
        }
        _ => unreachable!(),
    }
    out
}

/// The messages of `docs/driver-protocol.md`: its JSON blocks and inline `{"type":…}` spans
/// that parse as JSON.
fn doc_examples() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("docs/driver-protocol.md")).unwrap();
    let mut found = Vec::new();
    for block in text.split("```json").skip(1) {
        if let Some(body) = block.split("```").next() {
            found.push(body.to_owned());
        }
    }
    for span in text.split('`').skip(1).step_by(2) {
        if span.starts_with("{\"type\"") {
            found.push(span.to_owned());
        }
    }
    found
        .iter()
        .filter_map(|s| serde_json::from_str::<Value>(s).ok())
        .collect()
}

#[test]
fn generated_schemas_accept_and_reject_what_the_hand_written_ones_did() {
    let mut corpus = full_examples();
    corpus.extend(doc_examples());
    let mut all = Vec::new();
    for v in &corpus {
        all.push(v.clone());
        mutations(v, &mut all);
    }
    let mut validators: BTreeMap<&str, (jsonschema::Validator, jsonschema::Validator)> =
        BTreeMap::new();
    for m in MESSAGE_TYPES {
        validators.insert(m.name, (legacy(m.name), generated(m.name)));
    }
    let mut differences = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for v in &all {
        let Some(ty) = v.get("type").and_then(Value::as_str) else {
            continue;
        };
        let Some((old, new)) = validators.get(ty) else {
            continue;
        };
        let (o, n) = (old.is_valid(v), new.is_valid(v));
        if o {
            accepted += 1;
        } else {
            rejected += 1;
        }
        if o != n {
            differences.push(format!("legacy {o}, generated {n}: {v}"));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} messages judged differently:\n{}",
        differences.len(),
        all.len(),
        differences
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(accepted > 500 && rejected > 500, "{accepted} / {rejected}");
}

#[test]
fn doc_examples_are_valid_typed_messages() {
    let examples = doc_examples();
    assert!(examples.len() >= 10, "found {} examples", examples.len());
    let mut seen = Vec::new();
    for v in examples {
        let ty = v["type"].as_str().unwrap().to_owned();
        let m = schema::message_type(&ty).unwrap();
        let valid = jsonschema::validator_for(&m.schema()).unwrap().is_valid(&v);
        // The `done` example elides its hash ("9f86d0…"), which the pattern rejects.
        if ty == "done" {
            assert!(!valid, "{v}");
        } else {
            assert!(valid, "{v}");
        }
        let line = v.to_string();
        match m.direction {
            Direction::ToDelegator => {
                ToDelegator::from_line(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            }
            Direction::FromDelegator => {
                FromDelegator::from_line(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            }
        }
        seen.push(ty);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), MESSAGE_TYPES.len() - 1, "{seen:?}"); // snapshot_ok's is elided
}

#[test]
fn typed_messages_round_trip_and_serialize_valid() {
    for v in full_examples() {
        let ty = v["type"].as_str().unwrap();
        let m = schema::message_type(ty).unwrap();
        let validator = jsonschema::validator_for(&m.schema()).unwrap();
        let line = v.to_string();
        let again: Value = match m.direction {
            Direction::ToDelegator => {
                let t = ToDelegator::from_line(&line).unwrap();
                assert_eq!(t.type_name(), ty);
                let out = t.to_line().unwrap();
                assert_eq!(ToDelegator::from_line(&out).unwrap(), t);
                serde_json::from_str(&out).unwrap()
            }
            Direction::FromDelegator => {
                let t = FromDelegator::from_line(&line).unwrap();
                assert_eq!(t.type_name(), ty);
                let out = t.to_line().unwrap();
                assert_eq!(FromDelegator::from_line(&out).unwrap(), t);
                serde_json::from_str(&out).unwrap()
            }
        };
        assert!(validator.is_valid(&again), "{again}");
        // Every member of the (complete) example survives.
        assert_eq!(again, v, "{ty}");
    }
}

#[test]
fn unknown_types_and_missing_tags_are_errors() {
    assert!(ToDelegator::from_line(r#"{"type":"bogus"}"#).is_err());
    assert!(FromDelegator::from_line(r#"{"id":"d1"}"#).is_err());
    assert!(FromDelegator::from_line(r#"{"type":"init"}"#).is_err());
    assert!(ToDelegator::from_line("not json").is_err());
    // Unknown fields are ignored, also on a unit message.
    assert_eq!(
        ToDelegator::from_line(r#"{"type":"snapshot","later":1}"#).unwrap(),
        ToDelegator::Snapshot
    );
}

#[test]
fn index_schema_accepts_the_readme_example() {
    let text = std::fs::read_to_string(root().join("reports/README.md")).unwrap();
    let block = text
        .split("```json")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    let example: Value = serde_json::from_str(block).unwrap();
    let validator = jsonschema::validator_for(&schema::index_schema()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&example)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let typed: a2a_driver_contract::RunIndex = serde_json::from_value(example.clone()).unwrap();
    assert_eq!(
        typed.schema_version,
        a2a_driver_contract::INDEX_SCHEMA_VERSION
    );
    assert_eq!(serde_json::to_value(&typed).unwrap(), example);
}

#[test]
fn enum_violations_name_the_allowed_values() {
    let v = generated("state");
    let bad = json!({"type":"state","id":"d1","state":"NOPE","task_id":null,"context_id":null});
    let errors: Vec<String> = v.iter_errors(&bad).map(|e| e.to_string()).collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("is not one of") && e.contains("SENDING")),
        "the message should list the states: {errors:?}"
    );
}
