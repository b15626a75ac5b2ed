//! The schema of the SQLite store: the migrations (`PRAGMA user_version`), the Rust step
//! that removes secrets from older files, and the settings of every connection.

use super::SqliteStore;
use super::rows::json;
use crate::store::StoreError;
use rusqlite::{Connection, params};
use std::path::Path;

/// Schema migrations; index `i` upgrades version `i` to `i + 1`. Only ever append: a store
/// written by an older version is migrated forward on open.
pub(super) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE delegations (
    id TEXT PRIMARY KEY,
    parent_id TEXT,
    request_json TEXT NOT NULL,
    agent_url TEXT,
    rpc_url TEXT,
    protocol_version TEXT,
    skill TEXT NOT NULL,
    instructions TEXT NOT NULL,
    inputs_json TEXT NOT NULL,
    message_ids_json TEXT NOT NULL,
    task_id TEXT,
    context_id TEXT,
    state TEXT NOT NULL,
    reason TEXT,
    budget_usd REAL NOT NULL,
    budget_share REAL NOT NULL,
    spend_usd REAL NOT NULL,
    deadline TEXT NOT NULL,
    depth INTEGER NOT NULL,
    chain_json TEXT NOT NULL,
    refine_of TEXT,
    reference_task_ids_json TEXT NOT NULL,
    streaming INTEGER NOT NULL,
    push_token TEXT,
    scoped_credential TEXT,
    attempts INTEGER NOT NULL,
    last_error TEXT,
    error_code INTEGER,
    final_message TEXT,
    priority TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    terminal_at TEXT,
    dlq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX delegations_state ON delegations(state);
CREATE INDEX delegations_task ON delegations(task_id);
CREATE TABLE input_rounds (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    round INTEGER NOT NULL,
    kind TEXT NOT NULL,
    question TEXT NOT NULL,
    question_message_id TEXT,
    answer TEXT,
    source TEXT,
    answer_message_id TEXT,
    asked_at TEXT NOT NULL,
    answered_at TEXT,
    sent_at TEXT,
    PRIMARY KEY (delegation_id, round)
);
CREATE TABLE artifacts (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    artifact_id TEXT NOT NULL,
    name TEXT,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    agent_url TEXT NOT NULL,
    skill TEXT NOT NULL,
    task_id TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (delegation_id, artifact_id)
);
CREATE TABLE errors (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    op TEXT NOT NULL,
    code INTEGER,
    http_status INTEGER,
    transient INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (delegation_id, seq)
);
CREATE TABLE dlq (
    delegation_id TEXT PRIMARY KEY REFERENCES delegations(id),
    at TEXT NOT NULL,
    request_json TEXT NOT NULL,
    errors_json TEXT NOT NULL,
    partial_artifacts_json TEXT NOT NULL,
    chain_json TEXT NOT NULL,
    task_id TEXT,
    agent_url TEXT,
    resubmitted_as TEXT
);
"#,
    // 2: the outbox. `unreported` = 1 on a final record whose `done` line has not been written
    // and flushed yet. Records of a version-1 store count as reported (that version kept no
    // trace of it), so an upgrade does not report old delegations a second time.
    r#"
ALTER TABLE delegations ADD COLUMN unreported INTEGER NOT NULL DEFAULT 0;
CREATE INDEX delegations_unreported ON delegations(unreported) WHERE unreported = 1;
"#,
    // 3: an artifact is keyed by its task too. A fan-out parent holds its children's artifacts,
    // and two children's tasks may well name their artifacts alike; keyed by
    // (delegation, artifact id) alone, the parent's final save failed.
    r#"
CREATE TABLE artifacts_v3 (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    artifact_id TEXT NOT NULL,
    name TEXT,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    agent_url TEXT NOT NULL,
    skill TEXT NOT NULL,
    task_id TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (delegation_id, task_id, artifact_id)
);
INSERT INTO artifacts_v3 (delegation_id, artifact_id, name, media_type, bytes, sha256, path,
    agent_url, skill, task_id, committed)
SELECT delegation_id, artifact_id, name, media_type, bytes, sha256, path, agent_url, skill,
    task_id, committed
FROM artifacts ORDER BY rowid;
DROP TABLE artifacts;
ALTER TABLE artifacts_v3 RENAME TO artifacts;
"#,
    // 4: no secret at rest. Push tokens are kept as sha256 only (hashed from the old column by
    // `hash_push_tokens` before it is dropped); scoped credentials are not kept at all (a
    // delegation that still needs one after a restart asks its caller again).
    r#"
ALTER TABLE delegations ADD COLUMN push_token_sha256_json TEXT NOT NULL DEFAULT '[]';
"#,
];

/// The version whose migration drops the secret columns (after [`hash_push_tokens`]).
const NO_SECRETS_VERSION: usize = 4;

/// Migration 4, in Rust: the sha256 of each stored push token goes to `push_token_sha256_json`,
/// then the columns that held secrets are dropped (their content is overwritten:
/// `secure_delete`).
fn hash_push_tokens(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let tokens: Vec<(String, String)> = {
        let mut stmt =
            tx.prepare("SELECT id, push_token FROM delegations WHERE push_token IS NOT NULL")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    for (id, token) in tokens {
        tx.execute(
            "UPDATE delegations SET push_token_sha256_json = ?2 WHERE id = ?1",
            params![id, json(&vec![crate::webhook::token_sha256(&token)])],
        )?;
    }
    tx.execute_batch(
        "UPDATE delegations SET push_token = NULL, scoped_credential = NULL;
         ALTER TABLE delegations DROP COLUMN push_token;
         ALTER TABLE delegations DROP COLUMN scoped_credential;",
    )?;
    Ok(())
}

/// Open one connection with the store's settings.
pub(super) fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "secure_delete", "ON")?;
    Ok(conn)
}

/// Move the file at `conn` up to the current schema, one migration per transaction; a file
/// written by a newer program is refused.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let supported = SqliteStore::schema_version();
    if current > supported {
        return Err(StoreError::TooNew {
            found: current,
            supported,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        if i + 1 == NO_SECRETS_VERSION {
            hash_push_tokens(&tx)?;
        }
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    if (current as usize) < NO_SECRETS_VERSION && current > 0 {
        // An older store held secrets: rebuild the file and empty the WAL so that no old
        // page keeps them.
        conn.execute_batch("VACUUM")?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    Ok(())
}
