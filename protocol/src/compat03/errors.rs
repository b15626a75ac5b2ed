//! [`AdaptError`], what went wrong where, and the JSONPath helpers that build it.

use serde_json::Value;

/// A payload could not be translated; `path` is the JSONPath of the offending value (for example
/// `$.status.state`) so the message can be reported to the peer verbatim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {kind}")]
pub struct AdaptError {
    /// JSONPath of the problem, rooted at `$` (the object passed to [`to_v1`](super::to_v1)/[`to_v03`](super::to_v03)).
    pub path: String,
    /// What is wrong there.
    pub kind: AdaptErrorKind,
}

/// The reason an [`AdaptError`] was raised, separate from its location so tests and callers can
/// match on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdaptErrorKind {
    /// The value has the wrong JSON type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// The JSON type required here.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A field needed for the translation is absent (or `null`).
    #[error("missing required field")]
    Missing,
    /// A task state in no known spelling.
    #[error("unknown state {0:?}")]
    UnknownState(String),
    /// A role in no known spelling.
    #[error("unknown role {0:?}")]
    UnknownRole(String),
    /// A 0.3 `kind` discriminator this kind of object cannot have.
    #[error("unknown kind {0:?}")]
    UnknownKind(String),
    /// A 0.3 security scheme `type` that is not one of the five known ones.
    #[error("unknown security scheme type {0:?}")]
    UnknownSchemeType(String),
    /// None of the alternatives of a oneof is present.
    #[error("none of {0} is present")]
    NoContent(&'static str),
    /// More than one alternative of a oneof is present.
    #[error("more than one of {0} is present")]
    Ambiguous(String),
    /// Any other invalid value, described in words.
    #[error("{0}")]
    Invalid(String),
}

pub(super) fn err(path: &str, kind: AdaptErrorKind) -> AdaptError {
    AdaptError {
        path: path.to_owned(),
        kind,
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(super) fn wrong_type(path: &str, expected: &'static str, found: &Value) -> AdaptError {
    err(
        path,
        AdaptErrorKind::WrongType {
            expected,
            found: type_name(found),
        },
    )
}

pub(super) fn key_path(base: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{base}.{key}")
    } else {
        format!("{base}[{}]", Value::String(key.to_owned()))
    }
}

pub(super) fn idx_path(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}
