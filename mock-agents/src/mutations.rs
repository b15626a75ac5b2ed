//! Deliberate wire mutations (wrong JSON-RPC id, 0.3 legacy fields, lowercase enums, unknown
//! fields) applied to every response and event sent about a task.

use crate::script::*;
use a2a_protocol::compat03::{self};
use serde_json::{Value, json};

/// Apply deliberate wire mutations to an outgoing JSON-RPC response or event.
pub(crate) fn mutate(v: &mut Value, mutations: &[Mutation]) {
    for m in mutations {
        match m {
            Mutation::WrongRpcId => {
                if let Some(o) = v.as_object_mut()
                    && o.contains_key("jsonrpc")
                {
                    o.insert("id".into(), json!("wrong-id-from-mock"));
                }
            }
            Mutation::UnknownField => {
                if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                    r.insert("mockExtraField".into(), json!(true));
                }
            }
            Mutation::LegacyFields => {
                // A bare Task result (GetTask, CancelTask) carries its own `kind`.
                if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut)
                    && r.contains_key("id")
                    && r.contains_key("status")
                {
                    r.insert("kind".into(), json!("task"));
                }
                legacy(v)
            }
            Mutation::LowercaseEnums => lowercase(v),
        }
    }
}

/// Add 0.3 `kind` discriminators (and `final`, `index`) to every wrapped object.
pub(crate) fn legacy(v: &mut Value) {
    walk(v, &mut |k, o| match k {
        "task" => {
            o.insert("kind".into(), json!("task"));
        }
        "message" => {
            o.insert("kind".into(), json!("message"));
        }
        "statusUpdate" => {
            o.insert("kind".into(), json!("status-update"));
            let fin = o
                .get("status")
                .and_then(|s| s.get("state"))
                .and_then(Value::as_str)
                .is_some_and(compat03::is_final_state);
            o.insert("final".into(), json!(fin));
        }
        "artifactUpdate" => {
            o.insert("kind".into(), json!("artifact-update"));
            o.insert("index".into(), json!(0));
        }
        _ => {}
    });
}

pub(crate) fn walk(v: &mut Value, f: &mut impl FnMut(&str, &mut serde_json::Map<String, Value>)) {
    if let Value::Object(o) = v {
        for (k, x) in o.iter_mut() {
            if let Value::Object(inner) = x {
                f(k, inner);
            }
            walk(x, f);
        }
    } else if let Value::Array(a) = v {
        for x in a {
            walk(x, f);
        }
    }
}

pub(crate) fn lowercase(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "state" {
                    if let Some(s) = x.as_str().and_then(compat03::state_to_v03) {
                        *x = json!(s);
                    }
                } else if k == "role" {
                    if let Some(s) = x.as_str().and_then(compat03::role_to_v03) {
                        *x = json!(s);
                    }
                } else {
                    lowercase(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(lowercase),
        _ => {}
    }
}
