//! Lenient deserialisation helpers shared by the wire types.
//!
//! ProtoJSON says `null` means "unset" for every field and that `int32` values may arrive as
//! numeric strings. These helpers let the typed structs accept both without giving up strictness
//! elsewhere: the [`crate::conformance`] check reports such deviations separately.

use serde::{Deserialize, Deserializer};

/// Deserialise a value where `null` means the type's default.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An `int32` given as a JSON number or a numeric string (ProtoJSON allows both).
#[derive(Deserialize)]
#[serde(untagged)]
enum IntOrString {
    Int(i64),
    Str(String),
}

fn to_i32<E: serde::de::Error>(v: IntOrString) -> Result<i32, E> {
    let n = match v {
        IntOrString::Int(n) => n,
        IntOrString::Str(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| E::custom(format!("expected an integer, found {s:?}")))?,
    };
    i32::try_from(n).map_err(|_| E::custom(format!("integer {n} out of int32 range")))
}

/// An optional `int32` that accepts numbers, numeric strings and `null`.
pub(crate) fn opt_i32<'de, D>(d: D) -> Result<Option<i32>, D::Error>
where
    D: Deserializer<'de>,
{
    match Option::<IntOrString>::deserialize(d)? {
        None => Ok(None),
        Some(v) => to_i32(v).map(Some),
    }
}

/// A non-optional `int32` that accepts numbers, numeric strings and `null` (as 0).
pub(crate) fn i32_lenient<'de, D>(d: D) -> Result<i32, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(opt_i32(d)?.unwrap_or(0))
}

/// True when a boolean is false: used to omit proto3 default values on output.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// True when an `i32` is zero: used to omit proto3 default values on output.
pub(crate) fn is_zero(n: &i32) -> bool {
    *n == 0
}
