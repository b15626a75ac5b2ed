//! The A2A protocol version: the one [`ProtocolVersion`] type, the `A2A-Version` header
//! ([`VERSION_HEADER`]) and its negotiation ([`negotiate`], reference §3.6 and R03).
//!
//! Every crate that names a version uses this type: a server negotiates the header with
//! [`negotiate`], a client sends [`ProtocolVersion::header_value`], configuration files spell it
//! `"1.0"`/`"0.3"` (serde and, for scenario schemas, schemars), and a check on a recorded header
//! uses [`is_v1`].
//!
//! ```
//! use a2a_protocol::version::{ProtocolVersion, is_v1, negotiate};
//! let v: ProtocolVersion = "0.3".parse()?;
//! assert_eq!(v, ProtocolVersion::V0_3);
//! assert_eq!(serde_json::to_string(&ProtocolVersion::V1_0).unwrap(), r#""1.0""#);
//! assert_eq!(negotiate(Some("1.0.2")), Ok(ProtocolVersion::V1_0));
//! assert!(is_v1("1.0.2") && !is_v1("0.3"));
//! # Ok::<(), a2a_protocol::version::VersionError>(())
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Name of the HTTP header (also accepted as a query parameter) that carries the requested
/// protocol version, so callers do not hard-code the spelling.
pub const VERSION_HEADER: &str = "A2A-Version";

/// The protocol version this crate speaks natively (the [`ProtocolVersion::V1_0`] header value).
pub const PROTOCOL_VERSION: &str = ProtocolVersion::V1_0.header_value();

/// JSON-RPC code of `VersionNotSupportedError`, the answer to a [`VersionError`]; it is a 1.0
/// code that 0.3 peers do not know.
pub const VERSION_NOT_SUPPORTED_CODE: i64 = -32009;

/// A protocol version this harness can serve, identified by `Major.Minor` only (§3.6: patch
/// numbers are ignored in negotiation).
///
/// Serialized (serde, JSON Schema) as its header value, `"1.0"` or `"0.3"`; parsed from text
/// with [`FromStr`], which follows [`negotiate`] except that an empty string is an error. The
/// default is 1.0, the version this crate speaks natively (a *missing header* still negotiates
/// to 0.3, see [`negotiate`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum ProtocolVersion {
    /// A2A 0.3: slash-style method names, `kind` discriminators, kebab-case states.
    #[serde(rename = "0.3")]
    V0_3,
    /// A2A 1.0: PascalCase methods, ProtoJSON objects, `TASK_STATE_*` enums.
    #[default]
    #[serde(rename = "1.0")]
    V1_0,
}

impl ProtocolVersion {
    /// Both versions, oldest first.
    pub const ALL: [ProtocolVersion; 2] = [ProtocolVersion::V0_3, ProtocolVersion::V1_0];

    /// The `A2A-Version` header value for this version (`"0.3"` or `"1.0"`), which is what a
    /// client sends and a server echoes.
    pub const fn header_value(self) -> &'static str {
        match self {
            ProtocolVersion::V0_3 => "0.3",
            ProtocolVersion::V1_0 => "1.0",
        }
    }

    /// Same as [`ProtocolVersion::header_value`].
    pub const fn as_str(self) -> &'static str {
        self.header_value()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.header_value())
    }
}

impl FromStr for ProtocolVersion {
    type Err = VersionError;

    /// A version written as [`negotiate`] reads a header (`"1.0"`, `"1.0.3"`, `"1"`, `"0.3"`),
    /// except that an empty or blank string is an error rather than 0.3.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().is_empty() {
            return Err(VersionError {
                requested: s.to_owned(),
            });
        }
        negotiate(Some(s))
    }
}

/// The requested `A2A-Version` is not one this harness serves; answer it with
/// `VersionNotSupportedError` ([`VERSION_NOT_SUPPORTED_CODE`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("A2A version {requested:?} is not supported (supported: 0.3, 1.0)")]
pub struct VersionError {
    /// The header value exactly as the client sent it, for the error message and logs.
    pub requested: String,
}

/// Decide the protocol version from an `A2A-Version` header (or query parameter) value.
///
/// Rules (R03): missing, empty or blank ⇒ 0.3; otherwise `Major[.Minor[.Patch…]]` with numeric
/// major and minor, surrounding whitespace ignored. Only `Major.Minor` is compared: the patch part
/// (anything after the second dot, which must not be empty) is ignored, so `"1.0.2"` ⇒ 1.0. A
/// bare major (`"1"`) is read as minor 0, so `"1"` ⇒ 1.0 and `"0"` ⇒ 0.0 (unsupported). Anything
/// else, including `"1.1"` and `"2.0"`, is a [`VersionError`].
///
/// ```
/// use a2a_protocol::compat03::{negotiate, ProtocolVersion};
/// assert_eq!(negotiate(None).ok(), Some(ProtocolVersion::V0_3));
/// assert_eq!(negotiate(Some("1.0.3")).ok(), Some(ProtocolVersion::V1_0));
/// assert!(negotiate(Some("2.0")).is_err());
/// ```
pub fn negotiate(header: Option<&str>) -> Result<ProtocolVersion, VersionError> {
    let raw = header.unwrap_or_default();
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(ProtocolVersion::V0_3);
    }
    let fail = || VersionError {
        requested: raw.to_owned(),
    };
    let mut parts = trimmed.splitn(3, '.');
    let major = parts
        .next()
        .and_then(parse_version_number)
        .ok_or_else(fail)?;
    let minor = match parts.next() {
        None => 0,
        Some(m) => parse_version_number(m).ok_or_else(fail)?,
    };
    if parts.next().is_some_and(str::is_empty) {
        return Err(fail());
    }
    match (major, minor) {
        (0, 3) => Ok(ProtocolVersion::V0_3),
        (1, 0) => Ok(ProtocolVersion::V1_0),
        _ => Err(fail()),
    }
}

/// Whether a present `A2A-Version` header value asks for 1.0 (`"1.0"`, `"1.0.2"`, `" 1 "`), by
/// [`negotiate`]; `false` for 0.3, blank and unsupported values.
pub fn is_v1(header: &str) -> bool {
    negotiate(Some(header)) == Ok(ProtocolVersion::V1_0)
}

pub(crate) fn parse_version_number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_round_trip_uses_the_header_values() {
        for v in ProtocolVersion::ALL {
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(json, format!("\"{}\"", v.header_value()));
            assert_eq!(serde_json::from_str::<ProtocolVersion>(&json).unwrap(), v);
        }
        assert!(serde_json::from_str::<ProtocolVersion>(r#""1.0.2""#).is_err());
        assert!(serde_json::from_str::<ProtocolVersion>(r#""V1_0""#).is_err());
    }

    #[test]
    fn from_str_follows_negotiation_but_rejects_blank() {
        assert_eq!("1.0".parse(), Ok(ProtocolVersion::V1_0));
        assert_eq!(" 1.0.7 ".parse(), Ok(ProtocolVersion::V1_0));
        assert_eq!("1".parse(), Ok(ProtocolVersion::V1_0));
        assert_eq!("0.3".parse(), Ok(ProtocolVersion::V0_3));
        for bad in ["", "  ", "2.0", "1.1", "v1", "1.0."] {
            assert_eq!(
                bad.parse::<ProtocolVersion>(),
                Err(VersionError {
                    requested: bad.into()
                }),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn is_v1_accepts_only_1_0_with_any_patch() {
        for yes in ["1.0", "1.0.0", "1.0.12", " 1.0 ", "1"] {
            assert!(is_v1(yes), "{yes:?}");
        }
        for no in ["", "0.3", "1.1", "10.0", "1.0.", "1.x", "2"] {
            assert!(!is_v1(no), "{no:?}");
        }
    }

    #[test]
    fn default_constants_and_schema() {
        assert_eq!(ProtocolVersion::default(), ProtocolVersion::V1_0);
        assert_eq!(PROTOCOL_VERSION, "1.0");
        assert_eq!(ProtocolVersion::V0_3.as_str(), "0.3");
        let schema = serde_json::to_value(schemars::schema_for!(ProtocolVersion)).unwrap();
        let text = schema.to_string();
        assert!(
            text.contains("\"1.0\"") && text.contains("\"0.3\""),
            "{text}"
        );
    }
}
