//! Round-trip property: 1.0 → 0.3 → 1.0 is lossless on the lossless subset.

use super::*;

fn id() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,12}"
}

fn small_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[ -~]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object_json() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-zA-Z_-]{1,6}", small_json(), 0..3)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn insert_opt(m: &mut serde_json::Map<String, Value>, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v);
    }
}

/// 1.0 parts in the lossless subset: no media type on text/data parts, object data only.
fn part1() -> impl Strategy<Value = Value> {
    let media = prop::option::of("[a-z]{1,5}/[a-z]{1,5}");
    let name = prop::option::of("[a-z]{1,6}\\.[a-z]{2,3}");
    let content = prop_oneof![
        "[ -~]{0,20}".prop_map(|t| ("text", Value::String(t), false)),
        "[A-Za-z0-9+/]{0,8}(==)?".prop_map(|b| ("raw", Value::String(b), true)),
        "https://[a-z]{1,8}\\.example/[a-z]{0,8}".prop_map(|u| ("url", Value::String(u), true)),
        object_json().prop_map(|d| ("data", d, false)),
    ];
    (content, media, name, prop::option::of(object_json())).prop_map(
        |((key, value, is_file), media, name, metadata)| {
            let mut m = serde_json::Map::new();
            m.insert(key.into(), value);
            if is_file {
                insert_opt(&mut m, "mediaType", media.map(Value::String));
                insert_opt(&mut m, "filename", name.map(Value::String));
            }
            insert_opt(&mut m, "metadata", metadata);
            Value::Object(m)
        },
    )
}

fn message1_strategy() -> impl Strategy<Value = Value> {
    (
        id(),
        prop::option::of(id()),
        prop::option::of(id()),
        prop_oneof![Just("ROLE_USER"), Just("ROLE_AGENT")],
        prop::collection::vec(part1(), 1..4),
        prop::option::of(object_json()),
        prop::option::of(prop::collection::vec(id(), 1..3)),
    )
        .prop_map(|(mid, ctx, task, role, parts, metadata, refs)| {
            let mut m = serde_json::Map::new();
            m.insert("messageId".into(), Value::String(mid));
            insert_opt(&mut m, "contextId", ctx.map(Value::String));
            insert_opt(&mut m, "taskId", task.map(Value::String));
            m.insert("role".into(), Value::String(role.into()));
            m.insert("parts".into(), Value::Array(parts));
            insert_opt(&mut m, "metadata", metadata);
            insert_opt(&mut m, "referenceTaskIds", refs.map(|r| json!(r)));
            Value::Object(m)
        })
}

const ALL_STATES: [&str; 9] = [
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];

fn task1_strategy() -> impl Strategy<Value = Value> {
    let status = (
        prop::sample::select(&ALL_STATES[..]),
        prop::option::of(Just("2026-03-20T10:00:00.000Z")),
        prop::option::of(message1_strategy()),
    )
        .prop_map(|(state, ts, msg)| {
            let mut m = serde_json::Map::new();
            m.insert("state".into(), json!(state));
            insert_opt(&mut m, "timestamp", ts.map(|t| json!(t)));
            insert_opt(&mut m, "message", msg);
            Value::Object(m)
        });
    let artifact = (
        id(),
        prop::option::of("[a-z ]{1,10}"),
        prop::collection::vec(part1(), 1..3),
    )
        .prop_map(|(aid, name, parts)| {
            let mut m = serde_json::Map::new();
            m.insert("artifactId".into(), json!(aid));
            insert_opt(&mut m, "name", name.map(Value::String));
            m.insert("parts".into(), Value::Array(parts));
            Value::Object(m)
        });
    (
        id(),
        id(),
        status,
        prop::option::of(prop::collection::vec(message1_strategy(), 1..3)),
        prop::option::of(prop::collection::vec(artifact, 1..3)),
        prop::option::of(object_json()),
    )
        .prop_map(|(tid, ctx, status, history, artifacts, metadata)| {
            let mut m = serde_json::Map::new();
            m.insert("id".into(), json!(tid));
            m.insert("contextId".into(), json!(ctx));
            m.insert("status".into(), status);
            insert_opt(&mut m, "history", history.map(Value::Array));
            insert_opt(&mut m, "artifacts", artifacts.map(Value::Array));
            insert_opt(&mut m, "metadata", metadata);
            Value::Object(m)
        })
}

proptest! {
    #[test]
    fn message_round_trip_through_0_3(m in message1_strategy()) {
        let old = to_v03(ObjectKind::Message, &m).expect("to_v03");
        prop_assert_eq!(old.get("kind"), Some(&json!("message")));
        let back = to_v1(ObjectKind::Message, &old).expect("to_v1");
        prop_assert_eq!(back, m);
    }

    #[test]
    fn task_round_trip_through_0_3(t in task1_strategy()) {
        let old = to_v03(ObjectKind::Task, &t).expect("to_v03");
        prop_assert_eq!(old.get("kind"), Some(&json!("task")));
        let back = to_v1(ObjectKind::Task, &old).expect("to_v1");
        prop_assert_eq!(&back, &t);
        // The same task inside a stream / send result wrapper.
        let wrapped = json!({"task": t});
        let old = to_v03(ObjectKind::StreamResult, &wrapped).expect("stream to_v03");
        prop_assert_eq!(to_v1(ObjectKind::StreamResult, &old).expect("stream to_v1"), wrapped);
    }
}
