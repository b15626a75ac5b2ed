//! `google.protobuf.Timestamp` with exact ProtoJSON serde.
//!
//! pbjson-types formats timestamps with a `+00:00` offset; ProtoJSON (and the Python SDK's
//! `MessageToDict`) write `Z` with 0, 3, 6 or 9 fractional digits. The generated code uses this
//! type for every `google.protobuf.Timestamp` field.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt::Write as _;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A `google.protobuf.Timestamp`: seconds and nanoseconds since the Unix epoch (UTC).
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    /// Non-negative fraction of a second, 0 to 999,999,999.
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

impl Timestamp {
    /// The instant as a UTC date-time (`None` when out of range or `nanos` is invalid).
    pub fn to_datetime(&self) -> Option<OffsetDateTime> {
        if !(0..1_000_000_000).contains(&self.nanos) {
            return None;
        }
        let base = OffsetDateTime::from_unix_timestamp(self.seconds).ok()?;
        base.replace_nanosecond(u32::try_from(self.nanos).ok()?)
            .ok()
    }

    /// The instant of a date-time.
    pub fn from_datetime(dt: OffsetDateTime) -> Self {
        Timestamp {
            seconds: dt.unix_timestamp(),
            // Always below 10^9, so the cast cannot truncate.
            nanos: dt.nanosecond() as i32,
        }
    }

    /// Canonical ProtoJSON text: RFC 3339 in UTC with `Z` and 0, 3, 6 or 9 fractional digits.
    pub fn to_proto_json(&self) -> Option<String> {
        let d = self.to_datetime()?;
        if !(1..=9999).contains(&d.year()) {
            return None;
        }
        let mut s = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second()
        );
        let n = d.nanosecond();
        // Formatting into a String cannot fail.
        let _ = if n == 0 {
            Ok(())
        } else if n % 1_000_000 == 0 {
            write!(s, ".{:03}", n / 1_000_000)
        } else if n % 1_000 == 0 {
            write!(s, ".{:06}", n / 1_000)
        } else {
            write!(s, ".{n:09}")
        };
        s.push('Z');
        Some(s)
    }
}

impl From<crate::timestamp::Timestamp> for Timestamp {
    fn from(t: crate::timestamp::Timestamp) -> Self {
        Timestamp::from_datetime(t.0)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.to_proto_json() {
            Some(text) => s.serialize_str(&text),
            None => Err(serde::ser::Error::custom(format!(
                "timestamp out of range: seconds {} nanos {}",
                self.seconds, self.nanos
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        OffsetDateTime::parse(&s, &Rfc3339)
            .map(Timestamp::from_datetime)
            .map_err(|e| serde::de::Error::custom(format!("invalid RFC 3339 timestamp {s:?}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_json_digits() {
        let t = |seconds, nanos| Timestamp { seconds, nanos }.to_proto_json();
        assert_eq!(t(0, 0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(t(1, 5_000_000).as_deref(), Some("1970-01-01T00:00:01.005Z"));
        assert_eq!(t(1, 5_000).as_deref(), Some("1970-01-01T00:00:01.000005Z"));
        assert_eq!(t(1, 5).as_deref(), Some("1970-01-01T00:00:01.000000005Z"));
        assert_eq!(t(1, -1), None);
        let back: Timestamp = serde_json::from_str("\"1970-01-01T02:00:01.5+02:00\"").unwrap();
        assert_eq!(
            back,
            Timestamp {
                seconds: 1,
                nanos: 500_000_000
            }
        );
    }
}
