//! Send params and push-notification configs.

use serde_json::{Map, Value};

use super::errors::*;
use super::helpers::*;
use super::message::*;

pub(super) fn send_params_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "message" => Field::Set(message_to_v1(val, p)?),
            "configuration" => Field::Set(config_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })?;
    if out
        .get("configuration")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        out.remove("configuration");
    }
    Ok(Value::Object(out))
}

pub(super) fn config_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "blocking" => match val {
                Value::Bool(true) => Field::Drop,
                Value::Bool(false) => Field::Rename("returnImmediately", Value::Bool(true)),
                other => return Err(wrong_type(p, "boolean", other)),
            },
            "pushNotificationConfig" => {
                Field::Rename("taskPushNotificationConfig", push_inner_to_v1(val, p)?)
            }
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn send_params_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "message" => Field::Set(message_to_v03(val, p)?),
            "configuration" => Field::Set(config_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })?;
    if !out.contains_key("configuration") {
        let mut config = Map::new();
        config.insert("blocking".into(), Value::Bool(true));
        out.insert("configuration".into(), Value::Object(config));
    }
    Ok(Value::Object(out))
}

pub(super) fn config_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut blocking = true;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "returnImmediately" => match val {
                Value::Bool(b) => {
                    blocking = !b;
                    Field::Drop
                }
                other => return Err(wrong_type(p, "boolean", other)),
            },
            "taskPushNotificationConfig" => {
                let flat = obj(val, p)?;
                Field::Rename("pushNotificationConfig", push_inner_to_v03(flat, p)?)
            }
            _ => Field::Keep,
        })
    })?;
    out.insert("blocking".into(), Value::Bool(blocking));
    Ok(Value::Object(out))
}

/// 0.3 `PushNotificationConfig` `{id,url,token,authentication}` ⇒ the flat 1.0 fields.
pub(super) fn push_inner_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "authentication" => Field::Set(auth_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

/// Flat 1.0 push config ⇒ 0.3 `PushNotificationConfig`; `taskId` and `tenant` are dropped (the
/// caller keeps them where 0.3 has a place for them).
pub(super) fn push_inner_to_v03(src: &Map<String, Value>, path: &str) -> Res {
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "taskId" | "tenant" => Field::Drop,
            "authentication" => Field::Set(auth_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn auth_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    if present(src, "scheme") {
        // Already the 1.0 shape.
        return copy_object(v, path);
    }
    let schemes_path = key_path(path, "schemes");
    let schemes = get(src, "schemes").ok_or_else(|| err(&schemes_path, AdaptErrorKind::Missing))?;
    let list = schemes
        .as_array()
        .ok_or_else(|| wrong_type(&schemes_path, "array", schemes))?;
    let first = list.first().ok_or_else(|| {
        err(
            &schemes_path,
            AdaptErrorKind::Invalid("empty list; 1.0 requires exactly one scheme".into()),
        )
    })?;
    let first = str_at(first, &idx_path(&schemes_path, 0))?;
    rebuild(src, path, |k, _, _| {
        Ok(match k {
            "schemes" => Field::Rename("scheme", Value::String(first.to_owned())),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn auth_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    if present(src, "schemes") {
        return copy_object(v, path);
    }
    let scheme_path = key_path(path, "scheme");
    let scheme = get(src, "scheme").ok_or_else(|| err(&scheme_path, AdaptErrorKind::Missing))?;
    str_at(scheme, &scheme_path)?;
    rebuild(src, path, |k, val, _| {
        Ok(match k {
            "scheme" => Field::Rename("schemes", Value::Array(vec![val.clone()])),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn push_config_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let inner_path = key_path(path, "pushNotificationConfig");
    let inner = get(src, "pushNotificationConfig")
        .ok_or_else(|| err(&inner_path, AdaptErrorKind::Missing))?;
    let inner = push_inner_to_v1(inner, &inner_path)?;
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "pushNotificationConfig" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    if let Value::Object(fields) = inner {
        for (k, val) in fields {
            out.insert(k, val);
        }
    }
    Ok(Value::Object(out))
}

pub(super) fn push_config_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let inner_fields = ["id", "url", "token", "authentication"];
    let inner: Map<String, Value> = src
        .iter()
        .filter(|(k, _)| inner_fields.contains(&k.as_str()))
        .map(|(k, val)| (k.clone(), val.clone()))
        .collect();
    let inner = push_inner_to_v03(&inner, path)?;
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(if inner_fields.contains(&k) {
            Field::Drop
        } else {
            Field::Keep
        })
    })?;
    out.insert("pushNotificationConfig".into(), inner);
    Ok(Value::Object(out))
}

pub(super) fn push_id_params_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let task_id =
        get(src, "id").ok_or_else(|| err(&key_path(path, "id"), AdaptErrorKind::Missing))?;
    let config_id = get(src, "pushNotificationConfigId")
        .unwrap_or(task_id)
        .clone();
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "id" | "pushNotificationConfigId" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    out.insert("taskId".into(), task_id.clone());
    out.insert("id".into(), config_id);
    Ok(Value::Object(out))
}

pub(super) fn push_id_params_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let task_id = get(src, "taskId")
        .ok_or_else(|| err(&key_path(path, "taskId"), AdaptErrorKind::Missing))?;
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "id" | "taskId" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    out.insert("id".into(), task_id.clone());
    if let Some(config_id) = get(src, "id") {
        out.insert("pushNotificationConfigId".into(), config_id.clone());
    }
    Ok(Value::Object(out))
}

pub(super) fn rename_task_id(v: &Value, path: &str, from: &'static str, to: &'static str) -> Res {
    let src = obj(v, path)?;
    if !present(src, from) {
        return Err(err(&key_path(path, from), AdaptErrorKind::Missing));
    }
    rebuild(src, path, |k, val, _| {
        Ok(if k == from {
            Field::Rename(to, val.clone())
        } else if k == to {
            Field::Drop
        } else {
            Field::Keep
        })
    })
    .map(Value::Object)
}
