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

/// A temporary directory, a client, and a reassembler writing there under `spec` (1 KiB buffer).
fn setup(spec: &ArtifactSpec) -> (tempfile::TempDir, reqwest::Client, Reassembler) {
    let dir = tempfile::tempdir().unwrap();
    let r = Reassembler::new(dir.path().into(), spec, 1024, Bugs::none());
    (dir, reqwest::Client::new(), r)
}

fn sha(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

#[tokio::test]
async fn appended_chunks_join_in_order() {
    let (_dir, http, mut r) = setup(&spec(&["text/plain"], 100));
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
    let (_dir, http, mut r) = setup(&spec(&["text/plain"], 100));
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
    let (_dir, http, mut r) = setup(&spec(&["*/*"], 100));
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
    let (_dir, http, mut r) = setup(&spec(&["*/*"], 5));
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
    let (_dir, http, mut r) = setup(&spec(&["*/*"], 100));
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
    let (_dir, http, mut r) = setup(&spec(&["*/*"], 1 << 20));
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

#[tokio::test]
async fn delegations_sharing_a_directory_keep_their_files_apart() {
    // The same artifact id in two delegations (and ids built to look like a prefix) never
    // name the same file; both commit into the one directory and its fsyncs are shared.
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let shared = Arc::new(DirSync::new(dir.path().join("artifacts")));
    let mut recs = Vec::new();
    for (delegation, artifact, body) in [
        ("d1", "a", "first"),
        ("d2", "a", "second"),
        ("d1~a", "x", "third"),
        ("d", "1~a", "fourth"),
    ] {
        let mut r = Reassembler::sharing(
            shared.clone(),
            delegation,
            &spec(&["*/*"], 100),
            1024,
            Bugs::none(),
        );
        r.apply_chunk(&http, art(artifact, vec![Part::text(body)]), false, true)
            .await
            .unwrap();
        recs.push((r.commit(&prov()).await.unwrap().remove(0), body));
    }
    let mut paths: Vec<&str> = recs.iter().map(|(r, _)| r.path.as_str()).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), 4, "{paths:?}");
    for (rec, body) in &recs {
        let p = Path::new(&rec.path);
        assert_eq!(p.parent().unwrap(), dir.path().join("artifacts"));
        assert_eq!(std::fs::read(p).unwrap(), body.as_bytes());
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("artifacts"))
            .unwrap()
            .count(),
        4
    );
}

#[tokio::test]
async fn a_small_artifact_touches_the_disk_only_when_drained() {
    // Chunks that fit the write buffer open nothing; the commit creates, writes and syncs the
    // file (one trip), and an artifact with no bytes still gets its (empty) file.
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(
        dir.path().join("new"),
        &spec(&["*/*"], 100),
        1024,
        Bugs::none(),
    );
    r.apply_chunk(&http, art("a", vec![Part::text("ab")]), false, false)
        .await
        .unwrap();
    r.apply_chunk(&http, art("a", vec![Part::text("cd")]), true, true)
        .await
        .unwrap();
    r.apply_chunk(&http, art("empty", vec![]), false, true)
        .await
        .unwrap();
    assert!(
        !dir.path().join("new").exists(),
        "nothing written before the drain"
    );
    let recs = r.commit(&prov()).await.unwrap();
    assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"abcd");
    assert_eq!(recs[0].sha256, sha(b"abcd"));
    assert_eq!(std::fs::read(&recs[1].path).unwrap(), b"");
    assert!(recs.iter().all(|r| !r.path.ends_with(".part")));
}

#[tokio::test]
async fn partials_of_unwritten_artifacts_are_on_disk_and_a_replacement_truncates() {
    // A large first version goes to the file through the writer; its replacement is small and
    // stays buffered; the dead-letter partials sync the replacement alone.
    let (_dir, http, mut r) = setup(&spec(&["*/*"], 1 << 20));
    r.apply_chunk(
        &http,
        art("a", vec![Part::raw(vec![7u8; 5000])]),
        false,
        false,
    )
    .await
    .unwrap();
    r.apply_chunk(&http, art("a", vec![Part::text("short")]), false, false)
        .await
        .unwrap();
    r.apply_chunk(&http, art("b", vec![Part::text("b")]), false, false)
        .await
        .unwrap();
    let parts = r.partials(&prov()).await;
    assert!(
        parts
            .iter()
            .all(|p| !p.committed && p.path.ends_with(".part"))
    );
    assert_eq!(std::fs::read(&parts[0].path).unwrap(), b"short");
    assert_eq!(parts[0].sha256, sha(b"short"));
    assert_eq!(std::fs::read(&parts[1].path).unwrap(), b"b");
}

#[tokio::test]
async fn a_failed_drain_stays_failed_even_once_the_disk_would_take_the_file() {
    // The bytes the failed drain was writing are gone: a later commit must not succeed with an
    // empty file under the old hash and length.
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, b"a file where the directory should be").unwrap();
    let http = reqwest::Client::new();
    let mut r = Reassembler::new(blocked.clone(), &spec(&["*/*"], 100), 1024, Bugs::none());
    r.apply_chunk(&http, art("a", vec![Part::text("abcd")]), false, true)
        .await
        .unwrap();
    assert!(r.commit(&prov()).await.is_err());
    std::fs::remove_file(&blocked).unwrap();
    std::fs::create_dir(&blocked).unwrap();
    assert!(r.commit(&prov()).await.is_err());
}

#[tokio::test]
async fn a_rename_that_fails_part_way_leaves_the_renamed_files_known_by_their_new_names() {
    let (dir, http, mut r) = setup(&spec(&["*/*"], 100));
    for id in ["a", "b"] {
        r.apply_chunk(&http, art(id, vec![Part::text(id)]), false, true)
            .await
            .unwrap();
    }
    // A non-empty directory where b's final name goes: its rename fails.
    let b_final = dir.path().join(safe_name("b"));
    std::fs::create_dir_all(b_final.join("x")).unwrap();
    let e = r.commit(&prov()).await.unwrap_err();
    assert!(e.to_string().contains(&safe_name("b")), "{e}");
    let parts = r.partials(&prov()).await;
    assert_eq!(
        parts[0].path,
        dir.path().join(safe_name("a")).display().to_string()
    );
    assert_eq!(std::fs::read(&parts[0].path).unwrap(), b"a");
    assert!(parts[1].path.ends_with(".part"), "{}", parts[1].path);
}
