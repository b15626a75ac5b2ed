//! Records as rows: writing a [`DelegationRecord`] (with its input rounds, artifacts and
//! errors) and reading records back, each JSON column parsed with the column named on error.

use crate::store::{
    ArtifactRecord, DelegationRecord, DelegationState, EscalationKind, InputRound, RecordError,
    StoreError,
};
use rusqlite::{Connection, Row, params};

/// A value as the text of a JSON column.
pub(super) fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

pub(super) fn write_record(tx: &Connection, r: &DelegationRecord) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO delegations (id, parent_id, request_json, agent_url, rpc_url,
            protocol_version, skill, instructions, inputs_json, message_ids_json, task_id,
            context_id, state, reason, budget_usd, budget_share, spend_usd, deadline, depth,
            chain_json, refine_of, reference_task_ids_json, streaming, push_token_sha256_json,
            attempts, last_error, error_code, final_message, priority,
            created_at, updated_at, terminal_at, dlq, unreported)
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,
                 ?23,?24,?25,?26,?27,?28,?29,?30,?31,?32,?33,?34)
         ON CONFLICT(id) DO UPDATE SET parent_id=excluded.parent_id,
            request_json=excluded.request_json, agent_url=excluded.agent_url,
            rpc_url=excluded.rpc_url, protocol_version=excluded.protocol_version,
            skill=excluded.skill, instructions=excluded.instructions,
            inputs_json=excluded.inputs_json, message_ids_json=excluded.message_ids_json,
            task_id=excluded.task_id, context_id=excluded.context_id, state=excluded.state,
            reason=excluded.reason, budget_usd=excluded.budget_usd,
            budget_share=excluded.budget_share, spend_usd=excluded.spend_usd,
            deadline=excluded.deadline, depth=excluded.depth, chain_json=excluded.chain_json,
            refine_of=excluded.refine_of, reference_task_ids_json=excluded.reference_task_ids_json,
            streaming=excluded.streaming,
            push_token_sha256_json=excluded.push_token_sha256_json, attempts=excluded.attempts,
            last_error=excluded.last_error, error_code=excluded.error_code,
            final_message=excluded.final_message, priority=excluded.priority,
            updated_at=excluded.updated_at, terminal_at=excluded.terminal_at, dlq=excluded.dlq,
            unreported=excluded.unreported",
    )?
    .execute(params![
        r.id,
        r.parent_id,
        json(&r.request),
        r.agent_url,
        r.rpc_url,
        r.protocol_version,
        r.skill,
        r.request.text,
        json(&r.request.inputs),
        json(&r.message_ids),
        r.task_id,
        r.context_id,
        r.state.as_str(),
        r.reason,
        r.budget_usd,
        r.budget_share,
        r.spend_usd,
        r.deadline,
        r.depth,
        json(&r.chain),
        r.refine_of,
        json(&r.reference_task_ids),
        r.streaming,
        json(&r.push_token_sha256),
        r.attempts,
        r.last_error,
        r.error_code,
        r.final_message,
        r.priority,
        r.created_at,
        r.updated_at,
        r.terminal_at,
        r.dlq,
        // Every write of a final state owes its `done` until `mark_reported`.
        r.state.is_final(),
    ])?;
    tx.prepare_cached("DELETE FROM input_rounds WHERE delegation_id = ?1")?
        .execute(params![r.id])?;
    for q in &r.input_rounds {
        tx.prepare_cached(
            "INSERT INTO input_rounds (delegation_id, round, kind, question, question_message_id,
                answer, source, answer_message_id, asked_at, answered_at, sent_at)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
        )?
        .execute(params![
            r.id,
            q.round,
            q.kind.as_str(),
            q.question,
            q.question_message_id,
            q.answer,
            q.source,
            q.answer_message_id,
            q.asked_at.as_deref().unwrap_or_default(),
            q.answered_at,
            q.sent_at
        ])?;
    }
    tx.prepare_cached("DELETE FROM artifacts WHERE delegation_id = ?1")?
        .execute(params![r.id])?;
    for a in &r.artifacts {
        tx.prepare_cached(
            "INSERT INTO artifacts (delegation_id, artifact_id, name, media_type, bytes, sha256,
                path, agent_url, skill, task_id, committed)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
        )?
        .execute(params![
            r.id,
            a.artifact_id,
            a.name,
            a.media_type,
            a.bytes as i64,
            a.sha256,
            a.path,
            a.agent_url,
            a.skill,
            a.task_id,
            a.committed
        ])?;
    }
    tx.prepare_cached("DELETE FROM errors WHERE delegation_id = ?1")?
        .execute(params![r.id])?;
    for (seq, e) in r.errors.iter().enumerate() {
        tx.prepare_cached(
            "INSERT INTO errors (delegation_id, seq, at, op, code, http_status, transient, message)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
        )?
        .execute(params![
            r.id,
            seq as i64,
            e.at,
            e.op,
            e.code,
            e.http_status,
            e.transient,
            e.message
        ])?;
    }
    Ok(())
}

pub(super) fn parse_json<T: serde::de::DeserializeOwned>(
    id: &str,
    column: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        id: id.to_string(),
        column,
        message: e.to_string(),
    })
}

/// Scalar columns of a `delegations` row, before the JSON columns are parsed.
struct RawRow {
    id: String,
    parent_id: Option<String>,
    request_json: String,
    agent_url: Option<String>,
    rpc_url: Option<String>,
    protocol_version: Option<String>,
    skill: String,
    message_ids_json: String,
    task_id: Option<String>,
    context_id: Option<String>,
    state: String,
    reason: Option<String>,
    budget_usd: f64,
    budget_share: f64,
    spend_usd: f64,
    deadline: String,
    depth: u32,
    chain_json: String,
    refine_of: Option<String>,
    reference_task_ids_json: String,
    streaming: bool,
    push_token_sha256_json: String,
    attempts: u32,
    last_error: Option<String>,
    error_code: Option<i64>,
    final_message: Option<String>,
    priority: String,
    created_at: String,
    updated_at: String,
    terminal_at: Option<String>,
    dlq: bool,
}

const SELECT_COLUMNS: &str = "id, parent_id, request_json, agent_url, rpc_url, protocol_version,
    skill, message_ids_json, task_id, context_id, state, reason, budget_usd, budget_share,
    spend_usd, deadline, depth, chain_json, refine_of, reference_task_ids_json, streaming,
    push_token_sha256_json, attempts, last_error, error_code, final_message, priority,
    created_at, updated_at, terminal_at, dlq";

fn raw_row(r: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        request_json: r.get(2)?,
        agent_url: r.get(3)?,
        rpc_url: r.get(4)?,
        protocol_version: r.get(5)?,
        skill: r.get(6)?,
        message_ids_json: r.get(7)?,
        task_id: r.get(8)?,
        context_id: r.get(9)?,
        state: r.get(10)?,
        reason: r.get(11)?,
        budget_usd: r.get(12)?,
        budget_share: r.get(13)?,
        spend_usd: r.get(14)?,
        deadline: r.get(15)?,
        depth: r.get(16)?,
        chain_json: r.get(17)?,
        refine_of: r.get(18)?,
        reference_task_ids_json: r.get(19)?,
        streaming: r.get(20)?,
        push_token_sha256_json: r.get(21)?,
        attempts: r.get(22)?,
        last_error: r.get(23)?,
        error_code: r.get(24)?,
        final_message: r.get(25)?,
        priority: r.get(26)?,
        created_at: r.get(27)?,
        updated_at: r.get(28)?,
        terminal_at: r.get(29)?,
        dlq: r.get(30)?,
    })
}

fn finish_record(conn: &Connection, raw: RawRow) -> Result<DelegationRecord, StoreError> {
    let id = raw.id.clone();
    let state = DelegationState::parse(&raw.state).ok_or_else(|| StoreError::Corrupt {
        id: id.clone(),
        column: "state",
        message: format!("unknown state {:?}", raw.state),
    })?;
    let mut stmt = conn.prepare_cached(
        "SELECT round, kind, question, question_message_id, answer, source, answer_message_id,
                asked_at, answered_at, sent_at
         FROM input_rounds WHERE delegation_id = ?1 ORDER BY round",
    )?;
    let input_rounds = stmt
        .query_map(params![id], |r| {
            let kind: String = r.get(1)?;
            let kind = EscalationKind::parse(&kind).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Text,
                    format!("unknown escalation kind {kind:?}").into(),
                )
            })?;
            let asked_at: String = r.get(7)?;
            Ok(InputRound {
                round: r.get(0)?,
                kind,
                question: r.get(2)?,
                question_message_id: r.get(3)?,
                answer: r.get(4)?,
                source: r.get(5)?,
                answer_message_id: r.get(6)?,
                asked_at: Some(asked_at).filter(|a| !a.is_empty()),
                answered_at: r.get(8)?,
                sent_at: r.get(9)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT artifact_id, name, media_type, bytes, sha256, path, agent_url, skill, task_id,
                committed
         FROM artifacts WHERE delegation_id = ?1 ORDER BY rowid",
    )?;
    let artifacts = stmt
        .query_map(params![id], |r| {
            Ok(ArtifactRecord {
                artifact_id: r.get(0)?,
                name: r.get(1)?,
                media_type: r.get(2)?,
                bytes: r.get::<_, i64>(3)?.max(0) as u64,
                sha256: r.get(4)?,
                path: r.get(5)?,
                agent_url: r.get(6)?,
                skill: r.get(7)?,
                task_id: r.get(8)?,
                committed: r.get(9)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT at, op, code, http_status, transient, message
         FROM errors WHERE delegation_id = ?1 ORDER BY seq",
    )?;
    let errors = stmt
        .query_map(params![id], |r| {
            Ok(RecordError {
                at: r.get(0)?,
                op: r.get(1)?,
                code: r.get(2)?,
                http_status: r.get(3)?,
                transient: r.get(4)?,
                message: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DelegationRecord {
        request: parse_json(&id, "request_json", &raw.request_json)?,
        message_ids: parse_json(&id, "message_ids_json", &raw.message_ids_json)?,
        chain: parse_json(&id, "chain_json", &raw.chain_json)?,
        reference_task_ids: parse_json(
            &id,
            "reference_task_ids_json",
            &raw.reference_task_ids_json,
        )?,
        push_token_sha256: parse_json(&id, "push_token_sha256_json", &raw.push_token_sha256_json)?,
        id,
        parent_id: raw.parent_id,
        agent_url: raw.agent_url,
        rpc_url: raw.rpc_url,
        protocol_version: raw.protocol_version,
        skill: raw.skill,
        task_id: raw.task_id,
        context_id: raw.context_id,
        state,
        reason: raw.reason,
        budget_usd: raw.budget_usd,
        budget_share: raw.budget_share,
        spend_usd: raw.spend_usd,
        deadline: raw.deadline,
        depth: raw.depth,
        refine_of: raw.refine_of,
        streaming: raw.streaming,
        attempts: raw.attempts,
        last_error: raw.last_error,
        error_code: raw.error_code,
        final_message: raw.final_message,
        priority: raw.priority,
        created_at: raw.created_at,
        updated_at: raw.updated_at,
        terminal_at: raw.terminal_at,
        dlq: raw.dlq,
        input_rounds,
        artifacts,
        errors,
    })
}

pub(super) fn query_records(
    conn: &Connection,
    where_clause: &str,
    args: &[&dyn rusqlite::ToSql],
) -> Result<Vec<DelegationRecord>, StoreError> {
    let sql = format!("SELECT {SELECT_COLUMNS} FROM delegations {where_clause} ORDER BY rowid ASC");
    // A handful of distinct filters: each stays prepared on the connection.
    let mut stmt = conn.prepare_cached(&sql)?;
    let raws = stmt
        .query_map(args, raw_row)?
        .collect::<Result<Vec<_>, _>>()?;
    raws.into_iter().map(|r| finish_record(conn, r)).collect()
}
