//! Serde defaults shared by the script types.

pub(super) fn one() -> u32 {
    1
}

pub(super) fn half() -> f64 {
    0.5
}
