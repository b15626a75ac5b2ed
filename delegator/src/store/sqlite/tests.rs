//! Tests of the SQLite store: round trips, reopening, group commit, migrations, no secrets
//! on disk.

use super::*;
use crate::request::DelegationRequest;
use crate::store::now_text;
use crate::store::{ArtifactRecord, EscalationKind, InputRound, RecordError};
use rusqlite::params;

pub(crate) fn sample(id: &str) -> DelegationRecord {
    let req = DelegationRequest::new(id, "skill", "text");
    DelegationRecord {
        id: id.to_string(),
        parent_id: None,
        skill: req.capability.clone(),
        request: req,
        agent_url: Some("http://a/.well-known/agent-card.json".into()),
        rpc_url: None,
        protocol_version: Some("1.0".into()),
        message_ids: [("create".to_string(), "m1".to_string())].into(),
        task_id: None,
        context_id: None,
        state: DelegationState::Sending,
        reason: None,
        budget_usd: 1.0,
        budget_share: 0.9,
        spend_usd: 0.0,
        deadline: now_text(),
        depth: 0,
        chain: vec![],
        refine_of: None,
        reference_task_ids: vec![],
        streaming: false,
        push_token_sha256: vec!["ab".repeat(32)],
        attempts: 0,
        last_error: None,
        error_code: None,
        final_message: None,
        priority: "normal".into(),
        created_at: now_text(),
        updated_at: now_text(),
        terminal_at: None,
        dlq: false,
        input_rounds: vec![],
        artifacts: vec![],
        errors: vec![],
    }
}

#[test]
fn round_trip_and_open_filter() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    let mut a = sample("a");
    s.insert(&a).unwrap();
    assert!(matches!(s.insert(&a), Err(StoreError::Duplicate(_))));
    a.state = DelegationState::Completed;
    a.task_id = Some("t1".into());
    a.input_rounds.push(InputRound {
        round: 1,
        kind: EscalationKind::Input,
        question: "which?".into(),
        question_message_id: None,
        answer: Some("x".into()),
        source: Some("inputs.k".into()),
        answer_message_id: Some("m2".into()),
        asked_at: Some(now_text()),
        answered_at: None,
        sent_at: None,
    });
    a.artifacts.push(ArtifactRecord {
        artifact_id: "art".into(),
        name: None,
        media_type: "text/plain".into(),
        bytes: 3,
        sha256: "00".into(),
        path: "/p".into(),
        agent_url: "u".into(),
        skill: "skill".into(),
        task_id: "t1".into(),
        committed: true,
    });
    a.push_error(RecordError {
        at: now_text(),
        op: "SendMessage".into(),
        code: Some(-32001),
        http_status: None,
        transient: false,
        message: "nope".into(),
    });
    s.save(&a).unwrap();
    s.insert(&sample("b")).unwrap();
    let got = s.get("a").unwrap().unwrap();
    assert_eq!(got, a);
    let open = s.open_delegations().unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].id, "b");
    assert_eq!(s.list().unwrap().len(), 2);
    // No secret is kept: push tokens as hashes only.
    let snap = serde_json::to_value(got.to_snapshot()).unwrap();
    assert!(snap.get("scoped_credential").is_none());
    assert!(snap.get("push_token").is_none());
    assert_eq!(snap["push_token_sha256"][0], "ab".repeat(32));
    assert_eq!(snap["input_rounds"][0]["kind"], "input");
    assert_eq!(snap["state"], "COMPLETED");
}

#[test]
fn reopen_keeps_records_and_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        s.insert(&sample("a")).unwrap();
    }
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    assert!(s.get("a").unwrap().is_some());
    let settings = |conn: &Connection| -> (i64, String, i64) {
        (
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap(),
            conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap(),
            conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap(),
        )
    };
    let want = (SqliteStore::schema_version(), "wal".to_string(), 2);
    assert_eq!(settings(&s.lock()), want, "reader: WAL, synchronous=FULL");
    let (tx, rx) = mpsc::sync_channel(1);
    on_writer(&s, move |c| {
        let _ = tx.send(settings(c));
    });
    assert_eq!(rx.recv().unwrap(), want, "writer: WAL, synchronous=FULL");
}

/// Run `f` on the writer thread's connection, between batches, and wait for it.
fn on_writer(s: &SqliteStore, f: impl FnOnce(&Connection) + Send + 'static) {
    let (tx, rx) = mpsc::sync_channel(1);
    s.enqueue(Work::Inspect(Box::new(f)), WriteReply::Blocking(tx))
        .unwrap();
    rx.recv().unwrap().unwrap();
}

/// Hold the writer thread until the returned sender is dropped (bounded: 30 s).
fn hold_writer(s: &SqliteStore) -> mpsc::Sender<()> {
    let (release, held) = mpsc::channel::<()>();
    let (tx, _rx) = mpsc::sync_channel(1);
    s.enqueue(
        Work::Inspect(Box::new(move |_| {
            let _ = held.recv_timeout(std::time::Duration::from_secs(30));
        })),
        WriteReply::Blocking(tx),
    )
    .unwrap();
    release
}

#[test]
fn writes_queued_together_commit_in_one_batch_and_fail_alone() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    s.insert(&sample("a")).unwrap();
    let release = hold_writer(&s);
    let before = s.group_commit_stats();
    let mut pending = Vec::new();
    for i in 0..20 {
        pending.push(
            s.submit(WriteOp::Insert(Box::new(sample(&format!("b{i}")))))
                .unwrap(),
        );
    }
    let dup = s.submit(WriteOp::Insert(Box::new(sample("a")))).unwrap();
    let unknown = s.submit(WriteOp::MarkReported("zz".into())).unwrap();
    let mut done = sample("c");
    done.state = DelegationState::Completed;
    let last = s.submit(WriteOp::Insert(Box::new(done))).unwrap();
    drop(release);
    for p in pending {
        p.blocking_recv().unwrap().unwrap();
    }
    assert!(matches!(
        dup.blocking_recv().unwrap(),
        Err(StoreError::Duplicate(_))
    ));
    assert!(matches!(
        unknown.blocking_recv().unwrap(),
        Err(StoreError::NotFound(_))
    ));
    last.blocking_recv().unwrap().unwrap();
    let after = s.group_commit_stats();
    assert_eq!(after.batches - before.batches, 1, "one transaction for all");
    assert_eq!(after.writes - before.writes, 23);
    // The failed writes changed nothing; the others are all there, and durable: a reopen
    // (a fresh writer and reader) sees them.
    drop(s);
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    assert_eq!(s.list().unwrap().len(), 22);
    assert_eq!(
        s.get("a").unwrap().unwrap().state,
        DelegationState::Sending,
        "the duplicate insert changed nothing"
    );
    assert_eq!(s.unreported().unwrap().len(), 1);
}

#[test]
fn a_write_is_answered_only_after_its_batch_commits() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    let release = hold_writer(&s);
    let mut pending = s.submit(WriteOp::Insert(Box::new(sample("a")))).unwrap();
    // The writer is held: the write is queued, not committed, and not answered.
    assert!(matches!(
        pending.try_recv(),
        Err(tokio::sync::oneshot::error::TryRecvError::Empty)
    ));
    assert!(
        s.get("a").unwrap().is_none(),
        "not visible before its commit"
    );
    drop(release);
    pending.blocking_recv().unwrap().unwrap();
    assert!(s.get("a").unwrap().is_some(), "visible once answered");
}

#[test]
fn many_threads_writing_at_once_share_commits() {
    let dir = tempfile::tempdir().unwrap();
    let s = std::sync::Arc::new(SqliteStore::open_dir(dir.path()).unwrap());
    let release = hold_writer(&s);
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || s.insert(&sample(&format!("t{i}"))))
        })
        .collect();
    // Release once every thread has queued its write (bounded wait on the counter).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while s.group_commit_stats().queued < 17 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    drop(release);
    for t in threads {
        t.join().unwrap().unwrap();
    }
    let st = s.group_commit_stats();
    assert_eq!(st.writes, 16);
    assert_eq!(st.batches, 1, "16 blocked writers, one commit");
    assert_eq!(s.list().unwrap().len(), 16);
}

#[test]
fn too_new_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    assert!(matches!(
        SqliteStore::open_dir(dir.path()),
        Err(StoreError::TooNew { found: 99, .. })
    ));
}

#[test]
fn final_writes_are_unreported_until_marked() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    let mut a = sample("a");
    s.insert(&a).unwrap();
    assert!(
        s.unreported().unwrap().is_empty(),
        "an open record owes nothing"
    );
    let mut r = sample("r");
    r.state = DelegationState::Refused;
    s.insert(&r).unwrap();
    a.state = DelegationState::Completed;
    s.save(&a).unwrap();
    let ids = |v: Vec<DelegationRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(s.unreported().unwrap()), vec!["a", "r"]);
    s.mark_reported("a").unwrap();
    assert_eq!(ids(s.unreported().unwrap()), vec!["r"]);
    // The mark survives a reopen; an unknown id is an error.
    drop(s);
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    assert_eq!(ids(s.unreported().unwrap()), vec!["r"]);
    assert!(matches!(
        s.mark_reported("zz"),
        Err(StoreError::NotFound(_))
    ));
    // Writing the final record again owes its `done` again.
    s.save(&a).unwrap();
    assert_eq!(ids(s.unreported().unwrap()), vec!["a", "r"]);
}

#[test]
fn a_version_1_store_migrates_with_its_records_reported() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        let req = serde_json::to_string(&DelegationRequest::new("old", "s", "t")).unwrap();
        conn.execute(
            "INSERT INTO delegations (id, request_json, skill, instructions, inputs_json,
                message_ids_json, state, budget_usd, budget_share, spend_usd, deadline, depth,
                chain_json, reference_task_ids_json, streaming, attempts, priority,
                created_at, updated_at)
             VALUES ('old', ?1, 's', 't', '{}', '{}', 'COMPLETED', 1.0, 0.9, 0.0,
                '2030-01-01T00:00:00Z', 0, '[]', '[]', 0, 1, 'normal',
                '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')",
            params![req],
        )
        .unwrap();
        for a in ["b", "a"] {
            conn.execute(
                "INSERT INTO artifacts (delegation_id, artifact_id, media_type, bytes, sha256,
                    path, agent_url, skill, task_id, committed)
                 VALUES ('old', ?1, 'text/plain', 1, '00', '/p', 'u', 's', 't', 1)",
                params![a],
            )
            .unwrap();
        }
    }
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    assert_eq!(SqliteStore::schema_version(), 4);
    let old = s.get("old").unwrap().unwrap();
    assert_eq!(old.state, DelegationState::Completed);
    assert_eq!(
        old.artifacts
            .iter()
            .map(|a| a.artifact_id.as_str())
            .collect::<Vec<_>>(),
        vec!["b", "a"],
        "artifacts kept, in order"
    );
    assert!(s.unreported().unwrap().is_empty());
}

/// Every byte of every file in `dir` (the database, its WAL and shared-memory index).
fn bytes_under(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        all.extend(std::fs::read(e.unwrap().path()).unwrap());
    }
    all
}

fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_version_3_store_keeps_push_tokens_as_hashes_and_forgets_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let (token, cred) = ("push-token-0123456789abcdef", "Bearer scoped-secret-42");
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        for m in &MIGRATIONS[..3] {
            conn.execute_batch(m).unwrap();
        }
        conn.pragma_update(None, "user_version", 3).unwrap();
        let req = serde_json::to_string(&DelegationRequest::new("old", "s", "t")).unwrap();
        conn.execute(
            "INSERT INTO delegations (id, request_json, skill, instructions, inputs_json,
                message_ids_json, state, budget_usd, budget_share, spend_usd, deadline, depth,
                chain_json, reference_task_ids_json, streaming, push_token, scoped_credential,
                attempts, priority, created_at, updated_at)
             VALUES ('old', ?1, 's', 't', '{}', '{}', 'WORKING', 1.0, 0.9, 0.0,
                '2030-01-01T00:00:00Z', 0, '[]', '[]', 0, ?2, ?3, 1, 'normal',
                '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')",
            params![req, token, cred],
        )
        .unwrap();
        assert!(
            holds(&bytes_under(dir.path()), token),
            "the old store held it"
        );
    }
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    let old = s.get("old").unwrap().unwrap();
    assert_eq!(
        old.push_token_sha256,
        vec![crate::webhook::token_sha256(token)]
    );
    s.insert(&sample("new")).unwrap();
    let all = bytes_under(dir.path());
    for secret in [token, cred, "scoped-secret-42"] {
        assert!(!holds(&all, secret), "{secret} is still in the store files");
    }
}

#[test]
fn artifacts_of_different_tasks_may_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    let mut p = sample("parent");
    s.insert(&p).unwrap();
    p.state = DelegationState::Completed;
    for task in ["t-child-1", "t-child-2"] {
        p.artifacts.push(ArtifactRecord {
            artifact_id: "a-1".into(),
            name: None,
            media_type: "text/plain".into(),
            bytes: 1,
            sha256: "00".into(),
            path: format!("/p/{task}"),
            agent_url: "u".into(),
            skill: "skill".into(),
            task_id: task.into(),
            committed: true,
        });
    }
    s.save(&p).unwrap();
    assert_eq!(s.get("parent").unwrap().unwrap(), p);
}

#[test]
fn dlq_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open_dir(dir.path()).unwrap();
    let mut a = sample("a");
    s.insert(&a).unwrap();
    a.state = DelegationState::DeadLettered;
    a.dlq = true;
    let e = DlqEntry {
        delegation_id: "a".into(),
        at: now_text(),
        request: a.request.clone(),
        errors: vec![],
        partial_artifacts: vec![],
        chain: vec!["http://me".into()],
        task_id: None,
        agent_url: a.agent_url.clone(),
        resubmitted_as: None,
    };
    s.dead_letter(&a, &e).unwrap();
    assert_eq!(s.dlq_list().unwrap(), vec![e]);
    assert_eq!(
        s.unreported().unwrap().len(),
        1,
        "a dead letter owes its done"
    );
    s.dlq_mark_resubmitted("a", "a.r1").unwrap();
    assert_eq!(
        s.dlq_list().unwrap()[0].resubmitted_as.as_deref(),
        Some("a.r1")
    );
    assert!(s.dlq_mark_resubmitted("zz", "x").is_err());
    assert!(s.get("a").unwrap().unwrap().dlq);
}
