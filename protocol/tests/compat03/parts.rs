//! Parts.

use super::*;

#[test]
fn part_text() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "text", "text": "hello"}),
        json!({"text": "hello"}),
    );
}

#[test]
fn part_file_bytes() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"bytes": "iVBORw0KGgo=", "mimeType": "image/png", "name": "in.png"}}),
        json!({"raw": "iVBORw0KGgo=", "mediaType": "image/png", "filename": "in.png"}),
    );
}

#[test]
fn part_file_uri() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"uri": "https://files.example/out.pdf", "mimeType": "application/pdf", "name": "out.pdf"}}),
        json!({"url": "https://files.example/out.pdf", "mediaType": "application/pdf", "filename": "out.pdf"}),
    );
}

#[test]
fn part_file_minimal() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"uri": "https://x/y"}}),
        json!({"url": "https://x/y"}),
    );
}

#[test]
fn part_data_object() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "data", "data": {"budgetUsd": 3.5, "items": [1, 2]}}),
        json!({"data": {"budgetUsd": 3.5, "items": [1, 2]}}),
    );
}

#[test]
fn part_data_non_object_is_wrapped_for_0_3() {
    for x in [
        json!([1, 2]),
        json!("s"),
        json!(4),
        json!(true),
        json!(null),
    ] {
        let v1 = json!({"data": x.clone()});
        if x.is_null() {
            // `null` means unset: there is no content at all.
            assert!(to_v03(ObjectKind::Part, &v1).is_err());
            continue;
        }
        assert_eq!(
            to_v03(ObjectKind::Part, &v1).expect("wrap"),
            json!({"kind": "data", "data": {"value": x}})
        );
    }
}

#[test]
fn part_metadata_is_kept() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "text", "text": "t", "metadata": {"k": [1]}}),
        json!({"text": "t", "metadata": {"k": [1]}}),
    );
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"bytes": "AA=="}, "metadata": {"k": 1}}),
        json!({"raw": "AA==", "metadata": {"k": 1}}),
    );
}

#[test]
fn part_media_type_of_text_and_data_is_dropped_for_0_3() {
    assert_eq!(
        to_v03(
            ObjectKind::Part,
            &json!({"text": "t", "mediaType": "text/plain", "filename": "a.txt"})
        )
        .expect("text"),
        json!({"kind": "text", "text": "t"})
    );
    assert_eq!(
        to_v03(
            ObjectKind::Part,
            &json!({"data": {"a": 1}, "mediaType": "application/json"})
        )
        .expect("data"),
        json!({"kind": "data", "data": {"a": 1}})
    );
}

#[test]
fn part_without_kind_is_inferred() {
    assert_eq!(
        to_v1(ObjectKind::Part, &json!({"text": "t"})).expect("text"),
        json!({"text": "t"})
    );
    assert_eq!(
        to_v1(ObjectKind::Part, &json!({"file": {"bytes": "AA=="}})).expect("file"),
        json!({"raw": "AA=="})
    );
    assert_eq!(
        to_v1(ObjectKind::Part, &json!({"url": "u", "mediaType": "m"})).expect("1.0 already"),
        json!({"url": "u", "mediaType": "m"})
    );
}

#[test]
fn part_errors_name_the_path() {
    let e = to_v1(ObjectKind::Part, &json!({"kind": "image", "image": 1})).expect_err("kind");
    assert_eq!(e.path, "$.kind");
    assert_eq!(e.kind, AdaptErrorKind::UnknownKind("image".into()));

    let e = to_v1(
        ObjectKind::Part,
        &json!({"kind": "file", "file": {"bytes": "AA==", "uri": "u"}}),
    )
    .expect_err("both");
    assert_eq!(e.path, "$.file");
    assert!(matches!(e.kind, AdaptErrorKind::Ambiguous(_)));

    let e = to_v1(ObjectKind::Part, &json!({"kind": "file", "file": {}})).expect_err("none");
    assert_eq!(e.to_string(), "$.file: none of bytes, uri is present");

    let e = to_v1(ObjectKind::Part, &json!({"kind": "text"})).expect_err("no text");
    assert_eq!(e.to_string(), "$.text: missing required field");

    let e = to_v03(ObjectKind::Part, &json!({"text": "a", "url": "b"})).expect_err("two");
    assert_eq!(e.to_string(), "$: more than one of text, url is present");

    let e = to_v03(ObjectKind::Part, &json!({"metadata": {}})).expect_err("none");
    assert_eq!(e.kind, AdaptErrorKind::NoContent("text, raw, url, data"));

    let e = to_v03(ObjectKind::Part, &json!("text")).expect_err("not object");
    assert_eq!(e.to_string(), "$: expected object, found string");
}
