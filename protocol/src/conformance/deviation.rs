//! What the check reports: a [`Deviation`] from A2A 1.0 and its [`DeviationKind`].

use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of deviation was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DeviationKind {
    /// A field the 1.0 proto does not have.
    UnknownField,
    /// A field from 0.3 or the 1.0 release candidates (`kind`, `final`, `index`, `blocking`, ...).
    LegacyField,
    /// A field spelled in snake_case instead of camelCase.
    SnakeCaseField,
    /// An enum value that is not the exact proto name (lowercase, kebab-case, unknown, a number).
    InvalidEnum,
    /// A required field is absent or empty.
    MissingRequired,
    /// A one-of has more than one member set.
    MultipleOneOf,
    /// A one-of has no member set.
    EmptyOneOf,
    /// A timestamp that is not RFC 3339 in UTC with `Z`.
    NonUtcTimestamp,
    /// A value of the wrong JSON type.
    WrongType,
    /// `raw` bytes that are not base64.
    InvalidBase64,
}

/// One deviation from A2A 1.0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deviation {
    /// JSON path such as `$.status.state`.
    pub path: String,
    /// The rule of reference §6 broken, such as `R07`.
    pub rule: String,
    /// What kind of deviation.
    pub kind: DeviationKind,
    /// A human-readable description.
    pub message: String,
}

impl fmt::Display for Deviation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}] {}", self.path, self.rule, self.message)
    }
}
