use super::*;
use serde_json::json;

fn spec(types: &[&str], max: u64) -> ArtifactSpec {
    ArtifactSpec {
        mime_types: types.iter().map(|s| s.to_string()).collect(),
        max_size_bytes: max,
        streaming_preferred: true,
        schema: None,
    }
}

fn art(id: &str, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: id.into(),
        parts,
        ..Default::default()
    }
}

fn prov() -> Provenance {
    Provenance {
        agent_url: "http://a".into(),
        skill: "s".into(),
        task_id: "t".into(),
    }
}

fn sha(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

#[tokio::test]
async fn appended_chunks_join_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(
        dir.path().into(),
        &spec(&["text/plain"], 100),
        1024,
        Bugs::none(),
    );
    r.apply_chunk(&http, art("a", vec![Part::text("one ")]), false, false)
        .await
        .unwrap();
    r.apply_chunk(&http, art("a", vec![Part::text("two ")]), true, false)
        .await
        .unwrap();
    r.apply_chunk(&http, art("a", vec![Part::text("three")]), true, true)
        .await
        .unwrap();
    let recs = r.commit(&prov()).await.unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].bytes, 13);
    assert_eq!(recs[0].sha256, sha(b"one two three"));
    assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"one two three");
    assert!(recs[0].committed);
}

#[tokio::test]
async fn a_chunk_without_append_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(
        dir.path().into(),
        &spec(&["text/plain"], 100),
        1024,
        Bugs::none(),
    );
    r.apply_chunk(&http, art("a", vec![Part::text("old")]), false, false)
        .await
        .unwrap();
    r.apply_chunk(&http, art("a", vec![Part::text("new")]), false, true)
        .await
        .unwrap();
    let recs = r.commit(&prov()).await.unwrap();
    assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"new");
}

#[tokio::test]
async fn append_to_unknown_and_after_terminal_fail() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(dir.path().into(), &spec(&["*/*"], 100), 1024, Bugs::none());
    let e = r
        .apply_chunk(&http, art("x", vec![Part::text("a")]), true, false)
        .await
        .unwrap_err();
    assert_eq!(e, ArtifactError::UnknownAppend("x".into()));
    r.set_terminal();
    let e = r
        .apply_chunk(&http, art("y", vec![Part::text("a")]), false, false)
        .await
        .unwrap_err();
    assert_eq!(e, ArtifactError::AfterTerminal("y".into()));
}

#[tokio::test]
async fn oversize_is_rejected_once_crossed() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(dir.path().into(), &spec(&["*/*"], 5), 1024, Bugs::none());
    r.apply_chunk(&http, art("a", vec![Part::text("12345")]), false, false)
        .await
        .unwrap();
    let e = r
        .apply_chunk(&http, art("a", vec![Part::text("6")]), true, false)
        .await
        .unwrap_err();
    assert!(matches!(e, ArtifactError::TooLarge { limit: 5, .. }));
}

#[tokio::test]
async fn media_type_and_schema_problems() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut s = spec(&["application/json"], 1000);
    s.schema = Some(json!({"type": "object", "required": ["n"]}));
    let mut r = Reassembler::new(dir.path().into(), &s, 1024, Bugs::none());
    r.apply_chunk(&http, art("a", vec![Part::text("hi")]), false, true)
        .await
        .unwrap();
    r.apply_chunk(
        &http,
        art("b", vec![Part::data(json!({"m": 1}))]),
        false,
        true,
    )
    .await
    .unwrap();
    let p = r.problems();
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[0].contains("text/plain"));
    assert!(p[1].contains("schema"));
    // Replacing the artifacts with good ones clears the problems.
    r.apply_chunk(
        &http,
        art("a", vec![Part::data(json!({"n": 1}))]),
        false,
        true,
    )
    .await
    .unwrap();
    r.apply_chunk(
        &http,
        art("b", vec![Part::data(json!({"n": 2}))]),
        false,
        true,
    )
    .await
    .unwrap();
    assert!(r.problems().is_empty());
    let recs = r.commit(&prov()).await.unwrap();
    assert_eq!(std::fs::read(&recs[0].path).unwrap(), br#"{"n":1}"#);
}

#[tokio::test]
async fn snapshot_replaces_streamed_progress() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(dir.path().into(), &spec(&["*/*"], 100), 1024, Bugs::none());
    r.apply_chunk(&http, art("a", vec![Part::text("par")]), false, false)
        .await
        .unwrap();
    r.set_terminal();
    r.apply_snapshot(
        &http,
        &[art(
            "a",
            vec![Part::text("part1"), Part::raw(vec![0u8, 1, 2])],
        )],
    )
    .await
    .unwrap();
    let recs = r.commit(&prov()).await.unwrap();
    assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"part1\x00\x01\x02");
}

#[tokio::test]
async fn large_and_small_parts_keep_their_order() {
    // Parts larger than the write buffer go to the writer as they are, smaller ones are
    // buffered: the file must hold them in arrival order whatever the mix.
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(
        dir.path().into(),
        &spec(&["*/*"], 1 << 20),
        1024,
        Bugs::none(),
    );
    let mut want = Vec::new();
    for i in 0..40usize {
        let len = [10, 5000, 1023, 1024, 3, 70_000][i % 6];
        let bytes: Vec<u8> = (0..len).map(|k| (k + i) as u8).collect();
        want.extend_from_slice(&bytes);
        r.apply_chunk(&http, art("a", vec![Part::raw(bytes)]), i > 0, i == 39)
            .await
            .unwrap();
    }
    let recs = r.commit(&prov()).await.unwrap();
    assert_eq!(recs[0].bytes, want.len() as u64);
    assert_eq!(recs[0].sha256, sha(&want));
    assert!(std::fs::read(&recs[0].path).unwrap() == want);
}

#[test]
fn safe_names_cannot_escape() {
    let n = safe_name("../../etc/passwd");
    assert!(!n.contains('/'));
    assert!(!n.starts_with('.'));
    assert_ne!(safe_name("a/b"), safe_name("ab"));
    assert_eq!(safe_name("").len(), 12);
}
