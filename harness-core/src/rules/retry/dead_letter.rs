//! DLG-RETRY-04: a delegation whose retries are exhausted is dead-lettered, and its dead-letter
//! entry holds what the journal shows.

use super::*;

/// The dead-letter entry holds what the journal shows: the accepted request (its id and
/// text), at least one error per failed attempt with the status the agent answered, the chain it
/// was given, and every artifact that reached the delegator partially.
fn dlq_entry_matches_journal(ev: &Evidence, d: &crate::scenario::Delegation) -> Result<(), Check> {
    use serde_json::Value;
    let Some(rec) = snapshot_records(ev)
        .into_iter()
        .find(|r| r.id() == Some(d.id.as_str()))
    else {
        return Ok(());
    };
    // The entry may be the record itself or an object under `dlq`.
    let field = |k: &str| {
        rec.0
            .get("dlq")
            .and_then(|q| q.get(k))
            .filter(|v| !v.is_null())
            .or_else(|| rec.0.get(k))
    };
    let request = field("request");
    let same_request = request.is_some_and(|q| {
        q.get("id").and_then(Value::as_str) == Some(d.id.as_str())
            && q.get("text").and_then(Value::as_str) == Some(d.text.as_str())
    });
    if !same_request {
        return Err(fail(
            format!(
                "the dead-letter entry of {} holds its request (id, text)",
                d.id
            ),
            format!(
                "request {}",
                request.map_or("absent".to_string(), |q| q.to_string())
            ),
            vec![],
        ));
    }
    let failed: Vec<(u64, Option<u16>)> = requests(ev.journal)
        .iter()
        .filter(|r| r.is_send() && delegation_of(ev, r).is_some_and(|x| x.id == d.id))
        .filter_map(|r| {
            let response = response_of(ev.journal, r.req);
            let status = response.and_then(|e| match &e.event {
                Event::Response { status, .. } => Some(*status),
                _ => None,
            });
            let dropped = ev.journal.iter().find(
                |e| matches!(&e.event, Event::ConnectionDropped { req, .. } if *req == r.req),
            );
            // An attempt of a killed process whose failure came with or after the kill never reached
            // it: only the restarted process's record can hold errors, and it never saw this one.
            let outcome_at = dropped.or(response).map(|e| e.seq);
            if ev
                .crash_seq
                .is_some_and(|k| r.seq <= k && outcome_at.is_none_or(|s| s >= k))
            {
                return None;
            }
            (dropped.is_some() || status.is_some_and(|s| s == 429 || s >= 500))
                .then_some((r.seq, status))
        })
        .collect();
    let errors: Vec<&Value> = field("errors")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    if errors.len() < failed.len() {
        return Err(fail(
            format!(
                "the dead-letter entry of {} lists the {} failed attempts the journal shows",
                d.id,
                failed.len()
            ),
            format!("{} errors", errors.len()),
            failed.iter().map(|f| f.0).collect(),
        ));
    }
    for (seq, status) in &failed {
        let Some(s) = status else { continue };
        let named = errors.iter().any(|e| {
            e.get("http_status").and_then(Value::as_u64) == Some(u64::from(*s))
                || e.to_string().contains(&s.to_string())
        });
        if !named {
            return Err(fail(
                format!(
                    "the dead-letter errors of {} name the agent's HTTP {s}",
                    d.id
                ),
                format!(
                    "errors {}",
                    Value::Array(errors.iter().map(|e| (*e).clone()).collect())
                ),
                vec![*seq],
            ));
        }
    }
    let given: Vec<String> = incoming_chain(ev, d);
    let chain: Option<Vec<String>> = field("chain")
        .or_else(|| request.and_then(|q| q.get("chain")))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        });
    if chain.as_ref() != Some(&given) {
        return Err(fail(
            format!(
                "the dead-letter entry of {} holds its chain ({})",
                d.id,
                crate::rules::words::list(&given)
            ),
            format!(
                "chain {}",
                chain.as_ref().map_or_else(
                    || "absent".to_string(),
                    |c| format!("({})", crate::rules::words::list(c))
                )
            ),
            vec![],
        ));
    }
    let until = seen_until(ev, &d.id);
    for (t, _) in tasks_of(ev, &d.id) {
        for e in ev.journal {
            if let Event::ArtifactChunk {
                task_id,
                artifact_id,
                ..
            } = &e.event
                && *task_id == t
                && delivered_between(ev.journal, &t, e.seq, until).is_some()
            {
                let kept = field("artifacts")
                    .and_then(Value::as_array)
                    .is_some_and(|a| {
                        a.iter().any(|x| {
                            x.get("artifact_id").and_then(Value::as_str)
                                == Some(artifact_id.as_str())
                        })
                    });
                if !kept {
                    return Err(fail(
                        format!(
                            "the partial artifact {artifact_id} kept in {}'s dead-letter entry",
                            d.id
                        ),
                        "missing",
                        vec![e.seq],
                    ));
                }
            }
        }
    }
    Ok(())
}

pub(in crate::rules) fn exhausted_retries_dead_lettered(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if !d.expect.state.contains(&Outcome::DeadLettered) {
            continue;
        }
        // Where the case also allows another outcome, retries were not necessarily exhausted:
        // only a DEAD_LETTERED report is this rule's to judge (its entry must then be right).
        if d.expect.state.len() > 1 && done_state(ev, &d.id) != Some(Outcome::DeadLettered) {
            continue;
        }
        any = true;
        if done_state(ev, &d.id) != Some(Outcome::DeadLettered) {
            return fail(
                format!("{} dead-lettered", d.id),
                format!(
                    "outcome {}",
                    crate::rules::words::or_none(shown_state(ev, &d.id), "none reported")
                ),
                vec![],
            );
        }
        let in_dlq = snapshot_records(ev)
            .into_iter()
            .find(|r| r.id() == Some(d.id.as_str()))
            .is_some_and(|r| r.in_dlq());
        if !in_dlq {
            return fail(
                format!(
                    "{} in the dead-letter table with request, errors and chain",
                    d.id
                ),
                "no dlq entry in the snapshot",
                vec![],
            );
        }
        if let Err(f) = dlq_entry_matches_journal(ev, d) {
            return f;
        }
    }
    Check::held_if_seen(any)
}
