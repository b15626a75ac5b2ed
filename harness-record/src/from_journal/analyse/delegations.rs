//! The `[[delegate]]` entries: the first send of each delegation, `x-deleg`, the outcome the
//! rules force, answers and cancels.

use super::*;

/// The delegations: the first new send of each (skill, text), from the delegator (not a child
/// of a `delegate` step).
pub(super) fn build_delegations(
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    tasks: &BTreeMap<String, TaskView>,
    children: &BTreeSet<String>,
    journal_end: u64,
    m: &mut Model,
) {
    let mut sends: Vec<&ReqInfo> = reqs
        .values()
        .filter(|r| r.is_send() && r.continues().is_none())
        .filter(|r| !r.task.as_ref().is_some_and(|(t, _)| children.contains(t)))
        .collect();
    sends.sort_by_key(|r| r.seq);
    let mut keys: Vec<(Option<String>, Option<String>)> = Vec::new();
    for r in &sends {
        let key = (r.skill(), r.text());
        if keys.contains(&key) {
            continue;
        }
        keys.push(key.clone());
        let n = m.delegations.len() + 1;
        let mut d = DelegationModel {
            id: format!("d{n}"),
            ..Default::default()
        };
        d.comments
            .push(format!("{} to agent {}", describe(r), r.agent));
        d.text = match &key.1 {
            Some(t) => t.clone(),
            None => {
                d.comments.push(format!(
                    "TODO (seq {}): the message has no text part; the text here is a placeholder",
                    r.seq
                ));
                m.unsupported.push(Unsupported {
                    seq: r.seq,
                    agent: r.agent.clone(),
                    what: "the delegation's first message has no text part".into(),
                });
                format!("(no text: seq {})", r.seq)
            }
        };
        d.capability =
            match &key.0 {
                Some(s) => s.clone(),
                None => {
                    let skill = m
                        .agents
                        .iter()
                        .find(|a| a.name == r.agent)
                        .and_then(|a| a.skills.first())
                        .map(|s| s.0.clone());
                    d.comments.push(format!(
                    "the message names no skill (metadata.skill): the capability is the agent's {}",
                    if skill.is_some() { "first skill" } else { "placeholder skill `recorded`" }
                ));
                    match skill {
                        Some(s) => s,
                        None => {
                            if let Some(a) = m.agents.iter_mut().find(|a| a.name == r.agent) {
                                a.skills.push(("recorded".into(), Vec::new(), Vec::new()));
                            }
                            "recorded".into()
                        }
                    }
                }
            };
        if let Some(msg) = r.message() {
            d.inputs = msg
                .get("parts")
                .and_then(Value::as_array)
                .and_then(|ps| {
                    ps.iter()
                        .find_map(|p| p.get("data").and_then(Value::as_object))
                })
                .cloned();
        }
        let modes = strings(r.params.pointer("/configuration/acceptedOutputModes"));
        if !modes.is_empty() {
            d.mime_types = Some(modes);
        }
        if r.method10().as_deref() == Some("SendMessage") {
            d.streaming_preferred = Some(false);
            d.comments.push("the recorded delegator sent SendMessage, not SendStreamingMessage: streaming_preferred = false".into());
        }
        if let Some(x) = r.params.pointer("/metadata/x-deleg") {
            x_deleg(&mut d, x, r, tasks);
        }
        // Refinement: a reference to a task of an earlier delegation.
        if let Some(refs) = r
            .message()
            .and_then(|m| m.get("referenceTaskIds"))
            .and_then(Value::as_array)
            && let Some(prev) = refs.iter().filter_map(Value::as_str).find_map(|t| {
                sends
                    .iter()
                    .find(|o| o.task.as_ref().is_some_and(|x| x.0 == t))
            })
        {
            let pk = (prev.skill(), prev.text());
            if let Some(pd) = keys.iter().position(|k| *k == pk) {
                d.refine_of = Some(format!("d{}", pd + 1));
                note_rule(m, "DLG-STATE-06", "a refinement referenced an earlier task");
            }
        }
        // What the agent ended in, for this delegation's tasks.
        let mine: Vec<&&ReqInfo> = sends
            .iter()
            .filter(|o| (o.skill(), o.text()) == key)
            .collect();
        outcome(&mut d, &mine, tasks, reqs, &m.doubtful, journal_end);
        m.delegations.push(d);
    }
    if m.delegations.iter().any(|d| d.deadline_in_ms.is_some()) {
        let open = m
            .delegations
            .iter()
            .any(|d| d.deadline_in_ms.is_some() && d.expect_state.contains(&"CANCELED"));
        if open {
            note_rule(
                m,
                "DLG-LIMIT-03",
                "a delegation with a deadline was left open by its agent",
            );
        }
    }
}

/// Deadline, budget, depth and chain from the forwarded `x-deleg`.
pub(super) fn x_deleg(
    d: &mut DelegationModel,
    x: &Value,
    r: &ReqInfo,
    tasks: &BTreeMap<String, TaskView>,
) {
    if let Some(b) = x.get("budget_usd").and_then(Value::as_f64) {
        d.budget_usd = Some(b);
        d.comments.push(format!(
            "budget_usd: what the delegator forwarded ({b}); its own budget was at least that"
        ));
    }
    if let Some(depth) = x.get("depth").and_then(Value::as_u64) {
        // The delegator adds one before forwarding (DLG-LIMIT-08).
        d.depth = Some(depth.saturating_sub(1) as u32);
    }
    if let Some(chain) = x.get("chain").and_then(Value::as_array) {
        let chain: Vec<String> = chain
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        // The delegator appends its own identity (DLG-LIMIT-08): the incoming chain is the rest.
        if let Some((own, incoming)) = chain.split_last() {
            let incoming: Vec<String> = incoming
                .iter()
                .map(|u| {
                    if u == own {
                        "$self".to_string()
                    } else {
                        u.clone()
                    }
                })
                .collect();
            if !incoming.is_empty() {
                d.chain = Some(incoming);
            }
        }
    }
    let Some(deadline) = x.get("deadline").and_then(Value::as_str) else {
        return;
    };
    let Ok(deadline) =
        time::OffsetDateTime::parse(deadline, &time::format_description::well_known::Rfc3339)
    else {
        d.comments.push(format!(
            "x-deleg deadline {deadline:?} is not RFC 3339: deadline_in_ms not set"
        ));
        return;
    };
    // A wall-clock anchor: a status timestamp the agent sent, at a known journal time.
    let anchor = tasks.values().filter(|t| t.agent == r.agent).find_map(|t| {
        t.statuses.iter().find_map(|(state, ts, _)| {
            let at = t
                .events
                .iter()
                .find_map(|(_, at, e)| match e {
                    Event::TaskState { state: s, .. } if s == state => Some(*at),
                    _ => None,
                })
                .or_else(|| {
                    (state_of(state) == Some(TaskState::Submitted)).then_some(t.created_at)
                })?;
            let wall =
                time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339)
                    .ok()?;
            Some((wall, at))
        })
    });
    match anchor {
        Some((wall, at)) => {
            let request_wall = wall - time::Duration::microseconds(at as i64 - r.at_us as i64);
            let left_ms = (deadline - request_wall).whole_milliseconds();
            // To the nearest 100 ms: status timestamps have millisecond precision at best.
            let rounded = ((left_ms as f64 / 100.0).round() * 100.0) as i64;
            let default_ms = 60_000;
            if (rounded - default_ms).abs() < 1000 {
                d.comments.push(format!(
                    "the forwarded deadline was {left_ms} ms after the first request: the default timeout (60 s), so deadline_in_ms is left unset"
                ));
            } else if rounded.abs() <= 10 * 24 * 3_600_000 {
                d.deadline_in_ms = Some(rounded);
                d.comments.push(format!(
                    "deadline_in_ms: the forwarded deadline was {left_ms} ms after the first request (wall clock from the agent's status timestamps); the delegator keeps a margin, so its own was a little later"
                ));
            }
        }
        None => d.comments.push("x-deleg deadline: no wall-clock anchor in the journal (no status timestamp), deadline_in_ms not set".into()),
    }
}

/// `expect.state` from what the agent ended in, where the rules leave a correct delegator no
/// choice; answers for the input and auth rounds.
pub(super) fn outcome(
    d: &mut DelegationModel,
    sends: &[&&ReqInfo],
    tasks: &BTreeMap<String, TaskView>,
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    doubtful: &BTreeMap<String, String>,
    journal_end: u64,
) {
    let last = sends.last();
    let task = sends.iter().rev().find_map(|r| match &r.task {
        Some((t, false)) => tasks.get(t).map(|v| (t.clone(), v)),
        _ => None,
    });
    if let Some((task_id, view)) = &task {
        // After a protocol error a cancel is the delegator's own reaction, not the caller's.
        if !doubtful.contains_key(task_id) {
            caller_cancels(d, sends, view);
        }
        // An artifact larger than the default size bound (10 MiB), sent in full.
        let largest = view
            .events
            .iter()
            .filter_map(|(_, _, e)| match e {
                Event::ArtifactSent { bytes, .. } => Some(*bytes),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        if largest > 10 * 1024 * 1024 {
            let bound = largest.div_ceil(1024 * 1024).next_power_of_two() * 1024 * 1024;
            d.max_size_bytes = Some(bound);
            d.comments.push(format!(
                "max_size_bytes: the agent sent a {largest}-byte artifact in full, which the default bound (10 MiB) would reject; the journal does not hold the delegation's own bound"
            ));
        }
        for (seq, _, e) in &view.events {
            if let Event::Continued {
                message_id,
                outcome,
                ..
            } = e
                && outcome == "accepted"
                && let Some(c) = reqs.values().find(|r| {
                    r.continues().is_some() && r.message_id() == Some(message_id.as_str())
                })
            {
                let awaited = view.events.iter().rev().find_map(|(s, _, e)| match e {
                    Event::TaskState { state, .. }
                        if *s < *seq
                            && (state == "TASK_STATE_INPUT_REQUIRED"
                                || state == "TASK_STATE_AUTH_REQUIRED") =>
                    {
                        Some(state.clone())
                    }
                    _ => None,
                });
                match awaited.as_deref() {
                    Some("TASK_STATE_AUTH_REQUIRED") => {
                        if let Some(cred) = c
                            .headers
                            .get("authorization")
                            .filter(|v| !v.to_ascii_lowercase().contains("redacted"))
                        {
                            d.answers.push((
                                "auth",
                                cred.clone(),
                                format!("seq {}: the credential the agent accepted", c.seq),
                            ));
                        }
                    }
                    _ => {
                        if let Some(a) = c.message().and_then(all_text) {
                            d.answers.push(("input", a, format!("seq {}: the answer the agent accepted (given if the delegator escalates)", c.seq)));
                        }
                    }
                }
            }
        }
        let final_state = view.events.iter().rev().find_map(|(_, _, e)| match e {
            Event::TaskState { state, .. } => state_of(state).filter(|s| s.is_terminal()),
            _ => None,
        });
        let canceled_by_client =
            final_state == Some(TaskState::Canceled) && !view.cancels.is_empty();
        match final_state {
            Some(s) if s != TaskState::Completed && doubtful.contains_key(task_id) => {
                d.expect_state = vec!["FAILED", "CANCELED"];
                d.comments.push(format!(
                    "expect: the agent sent {} and its task ended {}: a correct delegator fails visibly (DLG-ART-09)",
                    doubtful[task_id],
                    s.as_str()
                ));
            }
            Some(TaskState::Completed) if doubtful.contains_key(task_id) => {
                d.expect_state = vec!["COMPLETED", "FAILED"];
                d.comments.push(format!(
                    "expect: the agent's task completed, but with {}: a correct delegator fails visibly or completes with what it may keep (DLG-ART-05, DLG-ART-09)",
                    doubtful[task_id]
                ));
            }
            Some(s) if !canceled_by_client => {
                let name = match s {
                    TaskState::Completed => "COMPLETED",
                    TaskState::Failed => "FAILED",
                    TaskState::Canceled => "CANCELED",
                    _ => "REJECTED",
                };
                d.expect_state = vec![name];
                d.comments.push(format!(
                    "expect: the agent's task ended {} (DLG-STATE-02/03: a correct delegator reports that final state); edit if yours may rightly decide otherwise (a rejected artifact)",
                    s.as_str()
                ));
            }
            Some(_) => d.comments.push("expect left empty: the delegator canceled the task itself; a recording shows one run, not what every correct delegator must do".into()),
            None => {
                // Open past the deadline: the delegator must cancel at its deadline.
                let past = match (d.deadline_in_ms, sends.first()) {
                    (Some(dl), Some(first)) => {
                        (journal_end.saturating_sub(first.at_us) / 1000) as i64 >= dl
                    }
                    _ => false,
                };
                if let Some(what) = doubtful.get(task_id) {
                    d.expect_state = vec!["FAILED", "CANCELED"];
                    d.comments.push(format!("expect: the agent sent {what} and its task never ended while recorded: a correct delegator fails visibly (DLG-ART-09) or cancels at its deadline"));
                } else if past {
                    d.expect_state = vec!["CANCELED", "FAILED"];
                    d.comments.push("expect: the agent left its task open past the delegation's deadline: a correct delegator cancels it at its deadline (DLG-LIMIT-03) and ends CANCELED or FAILED".into());
                } else {
                    d.comments.push("expect left empty: the agent's task never reached a final state while recorded; a recording shows one run, not what every correct delegator must do".into());
                }
            }
        }
        return;
    }
    let Some(r) = last else {
        return;
    };
    let reply = r
        .response
        .as_ref()
        .map(|x| result_of(&x.4))
        .into_iter()
        .chain(r.events.iter().map(|(_, v)| result_of(v)))
        .any(|res| matches!(item_of(res), Some(Item::Message(_))));
    if reply {
        d.expect_state = vec!["ANSWERED_DIRECT"];
        d.comments.push(
            "expect: the agent answered with a Message (DLG-SEND-05: answered directly)".into(),
        );
    } else if let Some(code) = r.response.as_ref().and_then(|x| x.3) {
        d.expect_state = vec!["SEND_FAILED"];
        d.comments.push(format!(
            "expect: the agent answered error {code} to the send (DLG-SEND-09: a definite error)"
        ));
    } else {
        d.comments.push("expect left empty: the agent created no task and sent no answer the rules tie to an outcome; a recording shows one run, not what every correct delegator must do".into());
    }
}

/// Cancels that came well before the delegation's deadline were asked by the caller, not by the
/// delegator's deadline watch (DLG-LIMIT-03): the harness sends one when the delegator reports
/// the state the task was in.
pub(super) fn caller_cancels(d: &mut DelegationModel, sends: &[&&ReqInfo], view: &TaskView) {
    let Some(first) = sends.first() else {
        return;
    };
    let deadline_ms = d.deadline_in_ms.unwrap_or(60_000);
    for (k, at) in view.cancel_at.iter().enumerate() {
        let after_ms = at.saturating_sub(first.at_us) as i64 / 1000;
        if after_ms + 1000 >= deadline_ms {
            continue;
        }
        let seq = view.cancels.get(k).map_or(0, |c| c.0);
        let state = view
            .events
            .iter()
            .filter(|(s, _, _)| *s < seq)
            .filter_map(|(_, _, e)| match e {
                Event::TaskState { state, .. } => state_of(state),
                _ => None,
            })
            .next_back()
            .unwrap_or(TaskState::Submitted);
        let name = state.as_str().trim_start_matches("TASK_STATE_").to_string();
        d.cancels.push((
            name.clone(),
            format!(
                "seq {seq}: the delegator canceled the task {after_ms} ms after the first request, well before its deadline: a cancel the caller asked for, sent once the delegator reports {name}"
            ),
        ));
    }
}
