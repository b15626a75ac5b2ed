//! The walk: a [`Checker`] reads a JSON value against the shape table and records each
//! deviation, bounded in depth and in the size of its report.

use super::shapes::Req::Req as R;
use super::shapes::Ty::*;
use super::shapes::*;
use super::{Deviation, DeviationKind, MAX_DEVIATIONS, ObjectType};
use crate::enums::TaskState;
use crate::timestamp::{Timestamp, is_utc_z};
use serde_json::Value;

/// Walks a value against [`shapes`](super::shapes) and collects what deviates.
#[derive(Default)]
pub(super) struct Checker {
    pub(super) out: Vec<Deviation>,
}

/// Nesting bound, so a hostile payload cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

impl Checker {
    pub(super) fn push(&mut self, path: &str, rule: &str, kind: DeviationKind, message: String) {
        if self.out.len() < MAX_DEVIATIONS {
            self.out.push(Deviation {
                path: path.to_string(),
                rule: rule.to_string(),
                kind,
                message,
            });
        }
    }

    pub(super) fn object(&mut self, t: ObjectType, v: &Value, path: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.push(
                path,
                "R06",
                DeviationKind::WrongType,
                "nesting too deep".into(),
            );
            return;
        }
        let Some(obj) = v.as_object() else {
            self.push(
                path,
                "R05",
                DeviationKind::WrongType,
                format!("expected a {} object", t.name()),
            );
            return;
        };
        let members = one_of(t).unwrap_or(&[]);
        let flds = fields(t);
        let mut set_members = Vec::new();
        for (key, val) in obj {
            let p = format!("{path}.{key}");
            if let Some((_, ty)) = members.iter().find(|(k, _)| k == key) {
                if !val.is_null() || matches!(ty, Any) {
                    set_members.push(key.as_str());
                    self.value(*ty, val, &p, depth);
                }
                continue;
            }
            if let Some((_, ty, _)) = flds.iter().find(|(k, _, _)| k == key) {
                if !val.is_null() {
                    self.value(*ty, val, &p, depth);
                }
                continue;
            }
            if let Some(rule) = legacy_field(t, key) {
                self.push(
                    &p,
                    rule,
                    DeviationKind::LegacyField,
                    format!("legacy field {key:?} is not part of A2A 1.0 {}", t.name()),
                );
                continue;
            }
            let camel = snake_to_camel(key);
            let member = members.iter().find(|(k, _)| *k == camel);
            let field = flds.iter().find(|(k, _, _)| *k == camel);
            if key.contains('_') && (member.is_some() || field.is_some()) {
                self.push(
                    &p,
                    "R05",
                    DeviationKind::SnakeCaseField,
                    format!("field {key:?} must be emitted as {camel:?}"),
                );
                // Lenient decoders read the snake_case spelling: count a one-of member as set
                // (no spurious EmptyOneOf) and check what it holds.
                if let Some((k, ty)) = member {
                    if !val.is_null() || matches!(ty, Any) {
                        set_members.push(*k);
                        self.value(*ty, val, &p, depth);
                    }
                } else if let Some((_, ty, _)) = field
                    && !val.is_null()
                {
                    self.value(*ty, val, &p, depth);
                }
                continue;
            }
            self.push(
                &p,
                "R06",
                DeviationKind::UnknownField,
                format!("unknown field {key:?} for {}", t.name()),
            );
        }
        if !members.is_empty() {
            match set_members.len() {
                0 => {
                    let names: Vec<&str> = members.iter().map(|(k, _)| *k).collect();
                    self.push(
                        path,
                        "R06",
                        DeviationKind::EmptyOneOf,
                        format!("{} needs exactly one of {}", t.name(), names.join(", ")),
                    );
                }
                1 => {}
                _ => self.push(
                    path,
                    "R06",
                    DeviationKind::MultipleOneOf,
                    format!("{} has several of {}", t.name(), set_members.join(", ")),
                ),
            }
        }
        for (key, ty, req) in flds {
            if *req != R {
                continue;
            }
            let present = match obj.get(*key) {
                None | Some(Value::Null) => false,
                // A required enum set to its zero value (`*_UNSPECIFIED`) is unset in proto3.
                Some(v) if matches!(ty, State | Role) && is_unspecified_enum(*ty, v) => false,
                Some(Value::String(s)) => !s.is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                Some(_) => true,
            };
            // A snake_case spelling was already reported; do not also call the field missing.
            let snake_present = obj
                .keys()
                .any(|k| k.contains('_') && snake_to_camel(k) == *key);
            if !present && !snake_present {
                let what = if matches!(ty, Arr(_) | ArrStr) {
                    "required, with at least one element"
                } else {
                    "required"
                };
                self.push(
                    &format!("{path}.{key}"),
                    "R06",
                    DeviationKind::MissingRequired,
                    format!("{key:?} is {what} in {}", t.name()),
                );
            }
        }
    }

    fn value(&mut self, ty: Ty, v: &Value, path: &str, depth: usize) {
        let wrong = |c: &mut Checker, want: &str| {
            c.push(
                path,
                "R05",
                DeviationKind::WrongType,
                format!("expected {want}, found {}", json_type(v)),
            );
        };
        match ty {
            Str => {
                if !v.is_string() {
                    wrong(self, "a string");
                }
            }
            Bool => {
                if !v.is_boolean() {
                    wrong(self, "a boolean");
                }
            }
            Int => match v {
                Value::Number(n) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => {}
                Value::String(s) if s.parse::<i32>().is_ok() => {}
                _ => wrong(self, "an int32"),
            },
            State => self.enum_value(
                v,
                path,
                "TaskState",
                |s| TaskState::from_proto_name(s).is_some(),
                |s| TaskState::parse_lenient(s).is_some(),
            ),
            Role => self.enum_value(
                v,
                path,
                "Role",
                |s| crate::enums::Role::from_proto_name(s).is_some(),
                |s| crate::enums::Role::parse_lenient(s).is_some(),
            ),
            Time => match v.as_str() {
                Some(s) => match Timestamp::parse(s) {
                    Err(_) => self.push(
                        path,
                        "R05",
                        DeviationKind::NonUtcTimestamp,
                        format!("{s:?} is not an RFC 3339 timestamp"),
                    ),
                    Ok(_) if !is_utc_z(s) => self.push(
                        path,
                        "R05",
                        DeviationKind::NonUtcTimestamp,
                        format!("{s:?} must use UTC with Z"),
                    ),
                    Ok(_) => {}
                },
                None => wrong(self, "an RFC 3339 string"),
            },
            Bytes => match v.as_str() {
                Some(s) => {
                    if crate::message::decode_base64_lenient(s).is_err() {
                        self.push(
                            path,
                            "R05",
                            DeviationKind::InvalidBase64,
                            "raw is not valid base64".into(),
                        );
                    }
                }
                None => wrong(self, "a base64 string"),
            },
            Struct => {
                if !v.is_object() {
                    wrong(self, "an object");
                }
            }
            Any => {}
            Obj(t) => self.object(t, v, path, depth + 1),
            ArrStr => match v.as_array() {
                Some(a) => {
                    for (i, x) in a.iter().enumerate() {
                        if !x.is_string() {
                            self.push(
                                &format!("{path}[{i}]"),
                                "R05",
                                DeviationKind::WrongType,
                                "expected a string".into(),
                            );
                        }
                    }
                }
                None => wrong(self, "an array"),
            },
            Arr(t) => match v.as_array() {
                Some(a) => {
                    for (i, x) in a.iter().enumerate() {
                        self.object(t, x, &format!("{path}[{i}]"), depth + 1);
                    }
                }
                None => wrong(self, "an array"),
            },
            MapStr => match v.as_object() {
                Some(m) => {
                    for (k, x) in m {
                        if !x.is_string() {
                            self.push(
                                &format!("{path}.{k}"),
                                "R05",
                                DeviationKind::WrongType,
                                "expected a string".into(),
                            );
                        }
                    }
                }
                None => wrong(self, "an object"),
            },
            Map(t) => match v.as_object() {
                Some(m) => {
                    for (k, x) in m {
                        self.object(t, x, &format!("{path}.{k}"), depth + 1);
                    }
                }
                None => wrong(self, "an object"),
            },
        }
    }

    fn enum_value(
        &mut self,
        v: &Value,
        path: &str,
        name: &str,
        exact: impl Fn(&str) -> bool,
        lenient: impl Fn(&str) -> bool,
    ) {
        match v {
            Value::String(s) if exact(s) => {}
            Value::String(s) if lenient(s) => self.push(
                path,
                "R05",
                DeviationKind::InvalidEnum,
                format!("{name} {s:?} is not the proto name"),
            ),
            Value::String(s) => self.push(
                path,
                "R05",
                DeviationKind::InvalidEnum,
                format!("unknown {name} {s:?}"),
            ),
            Value::Number(n) => self.push(
                path,
                "R05",
                DeviationKind::InvalidEnum,
                format!("{name} given as number {n}; emit the proto name"),
            ),
            _ => self.push(
                path,
                "R05",
                DeviationKind::WrongType,
                format!("expected a {name} name, found {}", json_type(v)),
            ),
        }
    }
}

/// True when a `TaskState` or `Role` value means the proto zero value (unset).
fn is_unspecified_enum(ty: Ty, v: &Value) -> bool {
    match (ty, v) {
        (_, Value::Number(n)) => n.as_i64() == Some(0),
        (State, Value::String(s)) => TaskState::parse_lenient(s) == Some(TaskState::Unspecified),
        (Role, Value::String(s)) => {
            crate::enums::Role::parse_lenient(s) == Some(crate::enums::Role::Unspecified)
        }
        _ => false,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
