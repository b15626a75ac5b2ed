//! Decoding entry points with errors that name the JSON path of the problem.
//!
//! Decoding is lenient (unknown fields ignored, numeric enums and legacy spellings accepted,
//! `null` treated as unset); [`crate::conformance`] reports what a strict 1.0 peer would reject.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A payload could not be decoded into the expected type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not JSON.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The JSON does not fit the type; `path` is a JSON path such as `$.status.state`.
    #[error("{path}: {message}")]
    Shape {
        /// Where the problem is.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl DecodeError {
    /// The JSON path of the problem (`$` for syntax errors).
    pub fn path(&self) -> &str {
        match self {
            DecodeError::Syntax { .. } => "$",
            DecodeError::Shape { path, .. } => path,
        }
    }
}

fn to_json_path(p: &serde_path_to_error::Path) -> String {
    let mut out = String::from("$");
    for seg in p.iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => {
                out.push('.');
                out.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                out.push('.');
                out.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => out.push_str(".?"),
        }
    }
    out
}

/// Decode JSON text or bytes into `T`, naming the JSON path of any shape error.
///
/// ```
/// use a2a_protocol::{codec::decode, Task};
/// let err = decode::<Task>(br#"{"id":"t","status":{"state":"NOPE"}}"#).unwrap_err();
/// assert_eq!(err.path(), "$.status.state");
/// ```
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() {
            DecodeError::Syntax {
                line: inner.line(),
                column: inner.column(),
                message: inner.to_string(),
            }
        } else {
            DecodeError::Shape {
                path: to_json_path(e.path()),
                message: strip_position(inner),
            }
        }
    })?;
    de.end().map_err(|e| DecodeError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    Ok(v)
}

/// Decode an already-parsed JSON value into `T`, naming the JSON path of any shape error.
pub fn decode_value<T: DeserializeOwned>(value: &Value) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize(value).map_err(|e| DecodeError::Shape {
        path: to_json_path(e.path()),
        message: e.inner().to_string(),
    })
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
