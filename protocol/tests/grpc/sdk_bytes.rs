//! (b) Protobuf bytes cross to and from the Python SDK: Rust-encoded bytes parse with the SDK's
//! `a2a_pb2` classes (`FromString`, `MessageToDict` equals our ProtoJSON), and bytes the SDK
//! serializes decode in Rust to the SDK's ProtoJSON.

use super::*;
use a2a_protocol::grpc::{decode_to_json, encode_from_json};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;

fn results(out: &Value, n: usize) -> &Vec<Value> {
    let a = out.as_array().expect("oracle answers an array");
    assert_eq!(a.len(), n, "one answer per item");
    a
}

#[test]
fn rust_bytes_parse_in_the_sdk_to_our_proto_json() {
    let items = rust_items();
    let mut ours = Vec::new();
    let input: Vec<Value> = items
        .iter()
        .map(|(label, t, j)| {
            let bytes = encode_from_json(*t, j).unwrap_or_else(|e| panic!("{label}: {e}"));
            ours.push(decode_to_json(*t, &bytes).unwrap_or_else(|e| panic!("{label}: {e}")));
            json!({"type": t.name(), "b64": B64.encode(&bytes)})
        })
        .collect();
    let out = oracle("pb-decode", Some(&Value::Array(input)));
    let mut failures = Vec::new();
    for (((label, _, _), ours), sdk) in items.iter().zip(&ours).zip(results(&out, items.len())) {
        if sdk["ok"] != true {
            failures.push(format!("{label}: SDK FromString failed: {}", sdk["error"]));
            continue;
        }
        let mut d = Vec::new();
        diff(&sdk["json"], ours, "$", &mut d);
        if !d.is_empty() {
            failures.push(format!("{label} (sdk vs ours):\n  {}", d.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn sdk_bytes_decode_in_rust_to_the_sdk_proto_json() {
    // The SDK's own fully populated instances (every type, every one-of member) ...
    let emitted = oracle("emit", None);
    let mut items: Vec<(String, Value, Value)> = emitted
        .as_array()
        .expect("emit answers an array")
        .iter()
        .map(|e| {
            (
                e["label"].as_str().unwrap_or("?").to_string(),
                e["type"].clone(),
                e["json"].clone(),
            )
        })
        .collect();
    // ... and ours, as the SDK re-serializes them.
    for (label, t, j) in rust_items() {
        items.push((format!("rust:{label}"), json!(t.name()), j));
    }
    let input: Vec<Value> = items
        .iter()
        .map(|(_, t, j)| json!({"type": t, "json": j}))
        .collect();
    let out = oracle("pb-encode", Some(&Value::Array(input)));
    let answers = results(&out, items.len());
    // The SDK's ProtoJSON of exactly those bytes.
    let decode_input: Vec<Value> = items
        .iter()
        .zip(answers)
        .map(|((_, t, _), a)| json!({"type": t, "b64": a["b64"]}))
        .collect();
    let sdk_json = oracle("pb-decode", Some(&Value::Array(decode_input)));
    let sdk_json = results(&sdk_json, items.len());
    let mut failures = Vec::new();
    for (((label, t, _), enc), dec) in items.iter().zip(answers).zip(sdk_json) {
        assert_eq!(
            enc["ok"], true,
            "{label}: SDK could not encode: {}",
            enc["error"]
        );
        let t = ObjectType::from_name(t.as_str().unwrap_or("")).expect("known type");
        let bytes = B64
            .decode(enc["b64"].as_str().unwrap_or(""))
            .expect("base64");
        match decode_to_json(t, &bytes) {
            Ok(ours) => {
                let mut d = Vec::new();
                diff(&dec["json"], &ours, "$", &mut d);
                if !d.is_empty() {
                    failures.push(format!("{label} (sdk vs ours):\n  {}", d.join("\n  ")));
                }
            }
            Err(e) => failures.push(format!("{label}: Rust cannot decode SDK bytes: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unknown_enum_numbers_are_kept_like_the_sdk_does() {
    let out = oracle(
        "pb-decode",
        Some(&json!([{"type": "TaskStatus", "b64": B64.encode([0x08, 0x09])}])),
    );
    let ours = decode_to_json(O::TaskStatus, &[0x08, 0x09]).unwrap();
    assert_eq!(out[0]["json"], ours);
    assert_eq!(ours, json!({"state": 9}));
}

#[test]
fn null_part_data_is_a_null_value_not_unset() {
    // ProtoJSON `null` for a google.protobuf.Value field is NullValue (the part keeps content).
    let part = json!({"data": null, "mediaType": "application/json"});
    let ours = encode_from_json(O::Part, &part).expect("encodes");
    let out = oracle("pb-encode", Some(&json!([{"type": "Part", "json": part}])));
    assert_eq!(out[0]["ok"], true, "{}", out[0]["error"]);
    assert_eq!(out[0]["b64"], B64.encode(&ours), "same bytes as the SDK");
    assert_eq!(decode_to_json(O::Part, &ours).unwrap(), part);
}
