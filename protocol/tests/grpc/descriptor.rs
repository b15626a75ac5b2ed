//! (a) The descriptor protox compiles from `proto/a2a/a2a.proto` equals the SDK's
//! `a2a.types.a2a_pb2.DESCRIPTOR`: every message's fields (name, number, label, type, type
//! name, JSON name, oneof, proto3 `optional`, `field_behavior`), oneofs, enums, and every RPC
//! (types, streaming, `google.api.http`, `method_signature`).
//!
//! The descriptor set is read with a minimal hand-written schema of `descriptor.proto` that also
//! keeps the two `google.api` extensions (prost drops unknown extension fields otherwise).

use super::*;
use a2a_protocol::grpc::FILE_DESCRIPTOR_SET;
use prost::Message as _;

#[derive(Clone, PartialEq, prost::Message)]
struct FileSet {
    #[prost(message, repeated, tag = "1")]
    file: Vec<File>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct File {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    package: String,
    #[prost(string, repeated, tag = "3")]
    dependency: Vec<String>,
    #[prost(message, repeated, tag = "4")]
    message_type: Vec<Msg>,
    #[prost(message, repeated, tag = "5")]
    enum_type: Vec<Enum>,
    #[prost(message, repeated, tag = "6")]
    service: Vec<Service>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Msg {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, repeated, tag = "2")]
    field: Vec<Field>,
    #[prost(message, repeated, tag = "3")]
    nested_type: Vec<Msg>,
    #[prost(message, repeated, tag = "4")]
    enum_type: Vec<Enum>,
    #[prost(message, repeated, tag = "8")]
    oneof_decl: Vec<Oneof>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Field {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int32, tag = "3")]
    number: i32,
    #[prost(int32, tag = "4")]
    label: i32,
    #[prost(int32, tag = "5")]
    r#type: i32,
    #[prost(string, tag = "6")]
    type_name: String,
    #[prost(message, optional, tag = "8")]
    options: Option<FieldOptions>,
    #[prost(int32, optional, tag = "9")]
    oneof_index: Option<i32>,
    #[prost(string, tag = "10")]
    json_name: String,
    #[prost(bool, tag = "17")]
    proto3_optional: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FieldOptions {
    /// `google.api.field_behavior`.
    #[prost(int32, repeated, packed = "false", tag = "1052")]
    field_behavior: Vec<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Oneof {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Enum {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, repeated, tag = "2")]
    value: Vec<EnumValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct EnumValue {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int32, tag = "2")]
    number: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Service {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, repeated, tag = "2")]
    method: Vec<Method>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Method {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    input_type: String,
    #[prost(string, tag = "3")]
    output_type: String,
    #[prost(message, optional, tag = "4")]
    options: Option<MethodOptions>,
    #[prost(bool, tag = "5")]
    client_streaming: bool,
    #[prost(bool, tag = "6")]
    server_streaming: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
struct MethodOptions {
    /// `google.api.method_signature`.
    #[prost(string, repeated, tag = "1051")]
    method_signature: Vec<String>,
    /// `google.api.http`.
    #[prost(message, optional, tag = "72295728")]
    http: Option<HttpRule>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HttpRule {
    #[prost(string, optional, tag = "2")]
    get: Option<String>,
    #[prost(string, optional, tag = "3")]
    put: Option<String>,
    #[prost(string, optional, tag = "4")]
    post: Option<String>,
    #[prost(string, optional, tag = "5")]
    delete: Option<String>,
    #[prost(string, optional, tag = "6")]
    patch: Option<String>,
    #[prost(string, tag = "7")]
    body: String,
    #[prost(message, repeated, tag = "11")]
    additional_bindings: Vec<HttpRule>,
}

/// The same ProtoJSON `MessageToDict` writes for a `google.api.HttpRule`.
fn http_json(r: &HttpRule) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in [
        ("get", &r.get),
        ("put", &r.put),
        ("post", &r.post),
        ("delete", &r.delete),
        ("patch", &r.patch),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    if !r.body.is_empty() {
        m.insert("body".into(), json!(r.body));
    }
    if !r.additional_bindings.is_empty() {
        let b: Vec<Value> = r.additional_bindings.iter().map(http_json).collect();
        m.insert("additionalBindings".into(), Value::Array(b));
    }
    Value::Object(m)
}

/// Our descriptor of `a2a/a2a.proto` in the shape of `sdk_oracle.py pb-descriptor`.
fn rust_descriptor() -> Value {
    let set = FileSet::decode(FILE_DESCRIPTOR_SET).expect("embedded descriptor set decodes");
    let file = set
        .file
        .iter()
        .find(|f| f.name == "a2a/a2a.proto")
        .expect("a2a/a2a.proto in the set");
    let mut messages = serde_json::Map::new();
    let mut oneofs = serde_json::Map::new();
    let mut enums = serde_json::Map::new();
    fn enum_json(e: &Enum) -> Value {
        Value::Object(
            e.value
                .iter()
                .map(|v| (v.name.clone(), json!(v.number)))
                .collect(),
        )
    }
    fn walk(
        prefix: &str,
        m: &Msg,
        messages: &mut serde_json::Map<String, Value>,
        oneofs: &mut serde_json::Map<String, Value>,
        enums: &mut serde_json::Map<String, Value>,
    ) {
        let full = format!("{prefix}.{}", m.name);
        let mut fields: Vec<&Field> = m.field.iter().collect();
        fields.sort_by_key(|f| f.number);
        let fields: Vec<Value> = fields
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "number": f.number,
                    "label": f.label,
                    "type": f.r#type,
                    "typeName": f.type_name,
                    "jsonName": f.json_name,
                    "oneof": f.oneof_index.and_then(|i| m.oneof_decl.get(i as usize)).map(|o| o.name.clone()),
                    "proto3Optional": f.proto3_optional,
                    "behavior": f.options.as_ref().map(|o| o.field_behavior.clone()).unwrap_or_default(),
                })
            })
            .collect();
        messages.insert(full.clone(), Value::Array(fields));
        oneofs.insert(
            full.clone(),
            m.oneof_decl.iter().map(|o| json!(o.name)).collect(),
        );
        for n in &m.nested_type {
            walk(&full, n, messages, oneofs, enums);
        }
        for e in &m.enum_type {
            enums.insert(format!("{full}.{}", e.name), enum_json(e));
        }
    }
    let prefix = format!(".{}", file.package);
    for m in &file.message_type {
        walk(&prefix, m, &mut messages, &mut oneofs, &mut enums);
    }
    for e in &file.enum_type {
        enums.insert(format!("{prefix}.{}", e.name), enum_json(e));
    }
    let mut services = serde_json::Map::new();
    for s in &file.service {
        let methods: Vec<Value> = s
            .method
            .iter()
            .map(|m| {
                let o = m.options.clone().unwrap_or_default();
                json!({
                    "name": m.name,
                    "input": m.input_type,
                    "output": m.output_type,
                    "clientStreaming": m.client_streaming,
                    "serverStreaming": m.server_streaming,
                    "http": o.http.as_ref().map(http_json).unwrap_or(json!({})),
                    "signatures": o.method_signature,
                })
            })
            .collect();
        services.insert(format!("{prefix}.{}", s.name), Value::Array(methods));
    }
    let mut deps = file.dependency.clone();
    deps.sort();
    json!({
        "package": file.package,
        "dependencies": deps,
        "messages": messages,
        "oneofs": oneofs,
        "enums": enums,
        "services": services,
    })
}

#[test]
fn compiled_proto_equals_the_sdk_descriptor() {
    let ours = rust_descriptor();
    let sdk = oracle("pb-descriptor", None);
    let mut diffs = Vec::new();
    diff(&sdk, &ours, "$", &mut diffs);
    assert!(
        diffs.is_empty(),
        "our a2a.proto differs from a2a-sdk's a2a_pb2.DESCRIPTOR (sdk vs ours):\n{}",
        diffs.join("\n")
    );
    // Guard against a vacuous comparison.
    assert_eq!(
        ours["messages"].as_object().map(|m| m.len() >= 44),
        Some(true)
    );
    assert_eq!(
        ours["services"][".lf.a2a.v1.A2AService"]
            .as_array()
            .map(Vec::len),
        Some(11)
    );
}

#[test]
fn field_numbers_of_the_bindings_table() {
    // Spot checks of bindings §3.2 independent of the SDK.
    let d = rust_descriptor();
    let num = |msg: &str, field: &str| -> i64 {
        d["messages"][format!(".lf.a2a.v1.{msg}")]
            .as_array()
            .and_then(|fs| fs.iter().find(|f| f["name"] == field))
            .and_then(|f| f["number"].as_i64())
            .unwrap_or(-1)
    };
    assert_eq!(num("ListTaskPushNotificationConfigsRequest", "tenant"), 4);
    assert_eq!(num("ListTaskPushNotificationConfigsRequest", "task_id"), 1);
    assert_eq!(num("StreamResponse", "artifact_update"), 4);
    assert_eq!(num("AgentCard", "icon_url"), 14);
    assert_eq!(num("AgentCard", "signatures"), 13);
    assert_eq!(num("Part", "media_type"), 7);
    assert_eq!(num("ListTasksRequest", "include_artifacts"), 8);
    assert_eq!(num("TaskPushNotificationConfig", "authentication"), 6);
    assert_eq!(
        d["enums"][".lf.a2a.v1.TaskState"]["TASK_STATE_AUTH_REQUIRED"],
        8
    );
    assert_eq!(d["enums"][".lf.a2a.v1.Role"]["ROLE_AGENT"], 2);
}
