//! Generic helpers shared by the object translations: walking, rebuilding, enum lookup.

use serde_json::{Map, Value};

use super::errors::*;
use super::names::*;

pub(super) type Res = Result<Value, AdaptError>;

/// What to do with one field while rebuilding an object.
pub(super) enum Field {
    Keep,
    Drop,
    Set(Value),
    Rename(&'static str, Value),
}

pub(super) fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, AdaptError> {
    v.as_object().ok_or_else(|| wrong_type(path, "object", v))
}

pub(super) fn present(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).is_some_and(|v| !v.is_null())
}

pub(super) fn get<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

/// Rebuild an object field by field; `null` fields are dropped before `f` sees them.
pub(super) fn rebuild(
    src: &Map<String, Value>,
    path: &str,
    mut f: impl FnMut(&str, &Value, &str) -> Result<Field, AdaptError>,
) -> Result<Map<String, Value>, AdaptError> {
    let mut out = Map::new();
    for (k, val) in src {
        if val.is_null() {
            continue;
        }
        match f(k, val, &key_path(path, k))? {
            Field::Keep => {
                out.insert(k.clone(), val.clone());
            }
            Field::Drop => {}
            Field::Set(new) => {
                out.insert(k.clone(), new);
            }
            Field::Rename(name, new) => {
                out.insert(name.to_owned(), new);
            }
        }
    }
    Ok(out)
}

pub(super) fn copy_object(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |_, _, _| Ok(Field::Keep)).map(Value::Object)
}

pub(super) fn map_array(v: &Value, path: &str, f: fn(&Value, &str) -> Res) -> Res {
    let arr = v.as_array().ok_or_else(|| wrong_type(path, "array", v))?;
    arr.iter()
        .enumerate()
        .map(|(i, x)| f(x, &idx_path(path, i)))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

pub(super) fn str_at<'a>(v: &'a Value, path: &str) -> Result<&'a str, AdaptError> {
    v.as_str().ok_or_else(|| wrong_type(path, "string", v))
}

/// Check a 0.3 `kind` discriminator if present; absent is accepted (lenient input).
pub(super) fn expect_kind(
    src: &Map<String, Value>,
    path: &str,
    expected: &'static str,
) -> Result<(), AdaptError> {
    match get(src, "kind") {
        None => Ok(()),
        Some(k) => {
            let p = key_path(path, "kind");
            let found = str_at(k, &p)?;
            if found == expected {
                Ok(())
            } else {
                Err(err(&p, AdaptErrorKind::UnknownKind(found.to_owned())))
            }
        }
    }
}

pub(super) fn with_kind(mut m: Map<String, Value>, kind: &str) -> Value {
    m.insert("kind".into(), Value::String(kind.to_owned()));
    Value::Object(m)
}

pub(super) fn enum_lookup(
    v: &Value,
    path: &str,
    by_name: fn(&str) -> Option<&'static str>,
    table: &[(&'static str, &'static str, i64)],
    v1: bool,
    unknown: fn(String) -> AdaptErrorKind,
) -> Res {
    let name = match v {
        Value::String(s) => by_name(s),
        Value::Number(n) => n.as_i64().and_then(|n| {
            table
                .iter()
                .find(|(_, _, num)| *num == n)
                .map(|(old, new, _)| if v1 { *new } else { *old })
        }),
        other => return Err(wrong_type(path, "string", other)),
    };
    name.map(|s| Value::String(s.to_owned())).ok_or_else(|| {
        let shown = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        err(path, unknown(shown))
    })
}

pub(super) fn state_value(v: &Value, path: &str, v1: bool) -> Res {
    let f = if v1 { state_to_v1 } else { state_to_v03 };
    enum_lookup(v, path, f, STATES, v1, AdaptErrorKind::UnknownState)
}

pub(super) fn role_value(v: &Value, path: &str, v1: bool) -> Res {
    let f = if v1 { role_to_v1 } else { role_to_v03 };
    enum_lookup(v, path, f, ROLES, v1, AdaptErrorKind::UnknownRole)
}
