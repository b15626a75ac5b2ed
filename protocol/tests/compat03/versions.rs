//! Protocol version negotiation from the version header.

use super::*;

#[test]
fn version_missing_header_is_0_3() {
    assert_eq!(negotiate(None), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_empty_or_blank_header_is_0_3() {
    assert_eq!(negotiate(Some("")), Ok(ProtocolVersion::V0_3));
    assert_eq!(negotiate(Some("  ")), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_1_0() {
    assert_eq!(negotiate(Some("1.0")), Ok(ProtocolVersion::V1_0));
    assert_eq!(negotiate(Some(" 1.0 ")), Ok(ProtocolVersion::V1_0));
}

#[test]
fn version_patch_is_ignored() {
    assert_eq!(negotiate(Some("1.0.3")), Ok(ProtocolVersion::V1_0));
    assert_eq!(negotiate(Some("1.0.0-rc1")), Ok(ProtocolVersion::V1_0));
    assert_eq!(negotiate(Some("0.3.0")), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_bare_major_means_minor_zero() {
    assert_eq!(negotiate(Some("1")), Ok(ProtocolVersion::V1_0));
    assert!(negotiate(Some("0")).is_err());
}

#[test]
fn version_0_3_explicit() {
    assert_eq!(negotiate(Some("0.3")), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_2_0_is_an_error_carrying_the_request() {
    let e = negotiate(Some("2.0")).expect_err("2.0 unsupported");
    assert_eq!(
        e,
        VersionError {
            requested: "2.0".into()
        }
    );
    assert!(e.to_string().contains("\"2.0\""), "{e}");
}

#[test]
fn version_other_errors() {
    for bad in [
        "1.1", "0.2", "v1.0", "1.x", "1.0.", ".1", "1..0", "abc", "1,0",
    ] {
        let e = negotiate(Some(bad)).expect_err(bad);
        assert_eq!(e.requested, bad);
    }
}

#[test]
fn version_header_values() {
    assert_eq!(ProtocolVersion::V0_3.header_value(), "0.3");
    assert_eq!(ProtocolVersion::V1_0.header_value(), "1.0");
    assert_eq!(ProtocolVersion::V1_0.to_string(), "1.0");
    for v in [ProtocolVersion::V0_3, ProtocolVersion::V1_0] {
        assert_eq!(negotiate(Some(v.header_value())), Ok(v));
    }
}
