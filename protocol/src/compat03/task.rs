//! Tasks, statuses, artifacts and stream events.

use serde_json::{Map, Value};

use super::errors::*;
use super::helpers::*;
use super::message::*;
use super::names::*;

pub(super) fn task_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "task")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "status" => Field::Set(status_to_v1(val, p)?),
            "history" => Field::Set(map_array(val, p, message_to_v1)?),
            "artifacts" => Field::Set(map_array(val, p, artifact_to_v1)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn task_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "status" => Field::Set(status_to_v03(val, p)?),
            "history" => Field::Set(map_array(val, p, message_to_v03)?),
            "artifacts" => Field::Set(map_array(val, p, artifact_to_v03)?),
            _ => Field::Keep,
        })
    })?;
    Ok(with_kind(out, "task"))
}

pub(super) fn status_convert(v: &Value, path: &str, v1: bool) -> Res {
    let src = obj(v, path)?;
    if !present(src, "state") {
        return Err(err(&key_path(path, "state"), AdaptErrorKind::Missing));
    }
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "state" => Field::Set(state_value(val, p, v1)?),
            "message" if v1 => Field::Set(message_to_v1(val, p)?),
            "message" => Field::Set(message_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn status_to_v1(v: &Value, path: &str) -> Res {
    status_convert(v, path, true)
}

pub(super) fn status_to_v03(v: &Value, path: &str) -> Res {
    status_convert(v, path, false)
}

pub(super) fn artifact_convert(v: &Value, path: &str, f: fn(&Value, &str) -> Res) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "parts" => Field::Set(map_array(val, p, f)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn artifact_to_v1(v: &Value, path: &str) -> Res {
    artifact_convert(v, path, part_to_v1)
}

pub(super) fn artifact_to_v03(v: &Value, path: &str) -> Res {
    artifact_convert(v, path, part_to_v03)
}

pub(super) fn status_update_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "status-update")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" | "final" => Field::Drop,
            "status" => Field::Set(status_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn status_update_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut is_final = false;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" | "final" => Field::Drop,
            "status" => {
                let status = status_to_v03(val, p)?;
                is_final = status
                    .get("state")
                    .and_then(Value::as_str)
                    .is_some_and(is_final_state);
                Field::Set(status)
            }
            _ => Field::Keep,
        })
    })?;
    out.insert("final".into(), Value::Bool(is_final));
    Ok(with_kind(out, "status-update"))
}

pub(super) fn artifact_update_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "artifact-update")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "artifact" => Field::Set(artifact_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn artifact_update_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "artifact" => Field::Set(artifact_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })?;
    Ok(with_kind(out, "artifact-update"))
}

/// `(0.3 kind, 1.0 wrapper key, 0.3→1.0, 1.0→0.3)` of each payload a result can carry.
pub(super) type WrappedKind = (
    &'static str,
    &'static str,
    fn(&Value, &str) -> Res,
    fn(&Value, &str) -> Res,
);

pub(super) const SEND_RESULT_KINDS: &[WrappedKind] = &[
    ("task", "task", task_to_v1, task_to_v03),
    ("message", "message", message_to_v1, message_to_v03),
];

pub(super) const STREAM_KINDS: &[WrappedKind] = &[
    ("task", "task", task_to_v1, task_to_v03),
    ("message", "message", message_to_v1, message_to_v03),
    (
        "status-update",
        "statusUpdate",
        status_update_to_v1,
        status_update_to_v03,
    ),
    (
        "artifact-update",
        "artifactUpdate",
        artifact_update_to_v1,
        artifact_update_to_v03,
    ),
];

/// Guess the 0.3 `kind` of a bare result object that lacks one, from its required fields.
pub(super) fn infer_kind(src: &Map<String, Value>) -> Option<&'static str> {
    if present(src, "taskId") && present(src, "status") {
        Some("status-update")
    } else if present(src, "taskId") && present(src, "artifact") {
        Some("artifact-update")
    } else if present(src, "status") {
        Some("task")
    } else if present(src, "messageId") || present(src, "role") {
        Some("message")
    } else {
        None
    }
}

pub(super) fn wrapped_to_v1(v: &Value, path: &str, kinds: &[WrappedKind]) -> Res {
    let src = obj(v, path)?;
    let kind_path = key_path(path, "kind");
    let kind = match get(src, "kind") {
        Some(k) => str_at(k, &kind_path)?,
        None => infer_kind(src).ok_or_else(|| err(&kind_path, AdaptErrorKind::Missing))?,
    };
    let (_, key, convert, _) = kinds
        .iter()
        .find(|(k, ..)| *k == kind)
        .ok_or_else(|| err(&kind_path, AdaptErrorKind::UnknownKind(kind.to_owned())))?;
    let mut out = Map::new();
    out.insert((*key).to_owned(), convert(v, path)?);
    Ok(Value::Object(out))
}

pub(super) fn wrapped_to_v03(v: &Value, path: &str, kinds: &[WrappedKind]) -> Res {
    let src = obj(v, path)?;
    let found: Vec<&WrappedKind> = kinds
        .iter()
        .filter(|(_, key, ..)| present(src, key))
        .collect();
    match found.as_slice() {
        [(_, key, _, convert)] => {
            let inner = get(src, key).unwrap_or(&Value::Null);
            convert(inner, &key_path(path, key))
        }
        [] => {
            let names = if kinds.len() == 2 {
                "task, message"
            } else {
                "task, message, statusUpdate, artifactUpdate"
            };
            Err(err(path, AdaptErrorKind::NoContent(names)))
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(_, key, ..)| *key).collect();
            Err(err(path, AdaptErrorKind::Ambiguous(names.join(", "))))
        }
    }
}
