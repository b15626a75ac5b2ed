//! [`Timestamp`]: a `google.protobuf.Timestamp` as RFC 3339 text, always emitted in UTC with `Z`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// A point in time on the wire. Parsing accepts any RFC 3339 offset and fraction (a tolerant client
/// does); output is always UTC `Z` with millisecond precision (reference §2, R05).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub OffsetDateTime);

impl Timestamp {
    /// The current time, truncated to milliseconds so it round-trips exactly.
    pub fn now() -> Self {
        Self::from_datetime(OffsetDateTime::now_utc())
    }

    /// Wrap a date-time, converting it to UTC and truncating it to milliseconds.
    pub fn from_datetime(dt: OffsetDateTime) -> Self {
        let utc = dt.to_offset(UtcOffset::UTC);
        let ms = utc.millisecond();
        // Truncation cannot fail: nanoseconds are always a valid millisecond multiple.
        let utc = utc.replace_millisecond(ms).unwrap_or(utc);
        Timestamp(utc)
    }

    /// Parse RFC 3339 text (any offset, any fraction).
    pub fn parse(s: &str) -> Result<Self, time::error::Parse> {
        OffsetDateTime::parse(s, &Rfc3339).map(Self::from_datetime)
    }

    /// Format as `YYYY-MM-DDTHH:MM:SS.sssZ`.
    pub fn to_rfc3339(&self) -> String {
        let d = self.0;
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second(),
            d.millisecond()
        )
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s)
            .map_err(|e| serde::de::Error::custom(format!("invalid RFC 3339 timestamp {s:?}: {e}")))
    }
}

/// True when RFC 3339 text uses the `Z` designator (R05 forbids other offsets on output).
pub fn is_utc_z(s: &str) -> bool {
    s.ends_with('Z') || s.ends_with('z')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_millis_and_converts_offsets() {
        let t = Timestamp::parse("2026-03-20T12:00:01.123456+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-20T10:00:01.123Z");
        let t = Timestamp::parse("2026-03-20T10:00:01Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-20T10:00:01.000Z");
        assert!(Timestamp::parse("yesterday").is_err());
    }
}
