//! One agent: its card, its queued faults and its rules, from the requests it got.

use super::*;

/// Where an agent's card comes from and what it says.
pub(super) fn card(agent: &mut AgentModel, reqs: &[&ReqInfo]) {
    let card_body = reqs.iter().find_map(|r| {
        (r.http_method == "GET" && r.path.contains("agent-card") || r.path.contains("agent.json"))
            .then(|| r.response.as_ref().map(|x| &x.4))
            .flatten()
            // A recorded card; the mock journals only which card it served
            // (`{"card_version", "etag"}`), which says nothing about skills.
            .filter(|b| b.get("skills").is_some() || b.get("supportedInterfaces").is_some())
    });
    if let Some(c) = card_body {
        agent.card_source = "the card response it served".into();
        for s in c
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = s.get("id").and_then(Value::as_str) {
                agent.skills.push((
                    id.to_string(),
                    strings(s.get("outputModes")),
                    strings(s.get("tags")),
                ));
            }
        }
        agent.output_modes = strings(c.get("defaultOutputModes"));
        agent.input_modes = strings(c.get("defaultInputModes"));
        let caps = c.get("capabilities");
        agent.streaming = caps
            .and_then(|c| c.get("streaming"))
            .and_then(Value::as_bool);
        agent.push = caps
            .and_then(|c| c.get("pushNotifications"))
            .and_then(Value::as_bool);
        let interfaces = c
            .get("supportedInterfaces")
            .or_else(|| c.get("additionalInterfaces"))
            .and_then(Value::as_array);
        for i in interfaces.into_iter().flatten() {
            if let Some(b) = i
                .get("protocolBinding")
                .or_else(|| i.get("transport"))
                .and_then(Value::as_str)
                .and_then(Binding::from_protocol_binding)
                && !agent.bindings.contains(&b)
            {
                agent.bindings.push(b);
            }
        }
        // 0.3 cards name their version at the top; 1.0 cards per interface.
        let versions: Vec<&str> = c
            .get("protocolVersion")
            .into_iter()
            .chain(
                interfaces
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.get("protocolVersion")),
            )
            .filter_map(Value::as_str)
            .collect();
        agent.v03 = !versions.is_empty() && versions.iter().all(|v| v.starts_with("0."));
        if agent.bindings == [Binding::JsonRpc] || agent.v03 {
            agent.bindings.clear();
        }
        return;
    }
    agent.card_source = "inferred from the traffic (no card body in the journal)".into();
    for r in reqs {
        if let Some(s) = r.skill()
            && !agent.skills.iter().any(|k| k.0 == s)
        {
            agent.skills.push((s, Vec::new(), Vec::new()));
        }
        if r.method.is_some() && !agent.bindings.contains(&r.binding) {
            agent.bindings.push(r.binding);
        }
        if r.method.as_deref().is_some_and(|m| m.contains('/')) {
            agent.v03 = true;
        }
        // (A SubscribeToTask to a finished task gets -32004 too: only a send says it.)
        if r.method10().as_deref() == Some("SendStreamingMessage")
            && r.response.as_ref().is_some_and(|x| x.3 == Some(-32004))
        {
            agent.streaming = Some(false);
        }
    }
    if agent.bindings == [Binding::JsonRpc] || agent.v03 {
        agent.bindings.clear();
    }
}

/// What a request got, as a fault that acts before processing, if it was one.
pub(super) fn pre_fault(r: &ReqInfo, journal_end: u64) -> Option<(Fault, String)> {
    if r.task.is_some() {
        return None;
    }
    if let Some((_, phase)) = &r.dropped
        && phase == "before_processing"
    {
        return Some((
            Fault::DropBefore,
            format!(
                "seq {}: the connection was dropped before processing",
                r.seq
            ),
        ));
    }
    if let Some((seq, _, status, rpc_error, body)) = &r.response {
        // What the mock answers by itself from its task store (an unknown or purged task, a
        // task that cannot be canceled, push or streaming unsupported) is no fault.
        let natural = !r.is_send() && matches!(rpc_error, Some(-32004..=-32001 | -32601));
        if let Some(code) = rpc_error.filter(|_| !natural) {
            let message = body
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string);
            return Some((
                Fault::RpcError { code, message },
                format!("seq {seq}: JSON-RPC error {code}"),
            ));
        }
        if *status >= 400 && !natural {
            return Some((
                Fault::HttpStatus {
                    status: *status,
                    retry_after_s: r.retry_after_s,
                },
                format!("seq {seq}: HTTP {status}"),
            ));
        }
        return None;
    }
    if r.dropped.is_none() && r.events.is_empty() {
        // Never answered while the recording lasted: a stall longer than what is left of it.
        let left = ms(journal_end.saturating_sub(r.at_us));
        let stall = (left + 5000).div_ceil(1000) * 1000;
        return Some((
            Fault::Stall { ms: stall },
            format!(
                "seq {}: never answered in the {left} ms the recording went on; stalled longer than that",
                r.seq
            ),
        ));
    }
    None
}

#[allow(clippy::too_many_arguments)]
pub(super) fn build_agent(
    name: &str,
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    tasks: &BTreeMap<String, TaskView>,
    blobs: &[(String, u64, String)],
    children: &BTreeSet<String>,
    journal_end: u64,
    m: &mut Model,
) -> AgentModel {
    let mut mine: Vec<&ReqInfo> = reqs.values().filter(|r| r.agent == name).collect();
    mine.sort_by_key(|r| r.seq);
    let mut agent = AgentModel {
        name: name.to_string(),
        ..Default::default()
    };
    card(&mut agent, &mine);
    if agent.v03 {
        note_rule(m, "DLG-ROUTE-03", format!("agent {name} speaks A2A 0.3"));
    }
    // Methods that have seen a processed call: later faults on them cannot be queued.
    let mut processed: BTreeSet<String> = BTreeSet::new();
    // The last new send of each method that failed before processing.
    let mut last_failed: BTreeMap<String, (&ReqInfo, Fault)> = BTreeMap::new();
    for r in &mine {
        let Some(method) = r.method10() else {
            continue;
        };
        let new_send = r.is_send() && r.continues().is_none();
        if let Some((fault, comment)) = pre_fault(r, journal_end) {
            note_fault_rules(m, &fault, r, &mine);
            let resent_later = mine.iter().any(|o| {
                o.seq > r.seq
                    && o.is_send()
                    && o.message_id().is_some()
                    && o.message_id() == r.message_id()
            });
            let definite_error =
                matches!(fault, Fault::RpcError { .. }) && new_send && !resent_later;
            if definite_error {
                // The agent's answer to this message: an `error` step.
                let Fault::RpcError { code, message } = fault else {
                    continue;
                };
                note_rule(
                    m,
                    "DLG-SEND-09",
                    format!("agent {name} answered a send with JSON-RPC error {code}"),
                );
                push_rule(
                    &mut agent,
                    r,
                    None,
                    vec![StepLine::Step(ScriptStep::Error { code, message }, comment)],
                    Vec::new(),
                    None,
                );
                processed.insert(method);
                continue;
            }
            if !processed.contains(&method) {
                if new_send {
                    last_failed.insert(method.clone(), (*r, fault.clone()));
                }
                match agent.queued.last_mut() {
                    Some(q) if q.method == method && q.fault == fault => {
                        q.times += 1;
                        q.comment.push_str(&format!("; {comment}"));
                    }
                    _ => agent.queued.push(QueuedModel {
                        method,
                        times: 1,
                        fault,
                        comment,
                    }),
                }
            } else if new_send {
                // After a success of the same method: a rule of its own, once, in order.
                push_rule(
                    &mut agent,
                    r,
                    Some((fault, comment)),
                    Vec::new(),
                    Vec::new(),
                    None,
                );
            } else {
                let what = format!(
                    "{method} got {comment:?} after an earlier {method} succeeded: faults are queued only before the first processed call of a method"
                );
                let t = todo(m, name, r.seq, what);
                agent.notes.push(t);
            }
            continue;
        }
        processed.insert(method.clone());
        if !new_send {
            // A stream cut on a resubscription: a fault queued for that method.
            if method == "SubscribeToTask"
                && let Some((fault, comment)) = stream_fault(r)
            {
                note_rule(m, "DLG-OBS-02", format!("agent {name} cut a stream"));
                agent.queued.push(QueuedModel {
                    method,
                    times: 1,
                    fault,
                    comment,
                });
            }
            continue;
        }
        // A new send that was processed.
        match &r.task {
            Some((_, true)) => {
                // A resend deduplicated to the task it created: the mock does the same.
                if let Some(rule) = agent
                    .rules
                    .iter_mut()
                    .rev()
                    .find(|x| x.key == (r.skill(), r.text()))
                {
                    rule.comments.push(format!(
                        "seq {}: resent with the same messageId; the agent deduplicated it to this rule's task",
                        r.seq
                    ));
                }
                note_rule(
                    m,
                    "DLG-REC-05",
                    format!("agent {name} deduplicated a resent messageId"),
                );
            }
            Some((task_id, false)) => {
                let Some(view) = tasks.get(task_id) else {
                    continue;
                };
                let mut comments = Vec::new();
                if children.contains(task_id) {
                    comments
                        .push("sent by another agent of the network (a delegate step)".to_string());
                }
                let fault = rule_fault(r, view, m);
                let before: BTreeSet<&'static str> = m.rules.keys().copied().collect();
                let (steps, on_cancel) =
                    task_steps(journal_end, name, r, view, tasks, blobs, reqs, m);
                // Artifacts count for the rules only when the task completed: a delegator
                // commits nothing of a failed task.
                let completed = view.events.iter().any(|(_, _, e)| {
                    matches!(e, Event::TaskState { state, .. } if state_of(state) == Some(TaskState::Completed))
                });
                // Nor of one the delegator may rightly fail (a protocol error, a rejected type).
                if !completed || m.doubtful.contains_key(task_id) {
                    for id in [
                        "DLG-ART-01",
                        "DLG-ART-02",
                        "DLG-ART-03",
                        "DLG-ART-08",
                        "DLG-STATE-01",
                    ] {
                        if !before.contains(id) {
                            m.rules.remove(id);
                        }
                    }
                }
                push_rule(&mut agent, r, fault, steps, comments, on_cancel);
            }
            None => {
                // A Message reply, or something the journal does not explain.
                let reply = r
                    .response
                    .as_ref()
                    .map(|x| result_of(&x.4))
                    .into_iter()
                    .chain(r.events.iter().map(|(_, d)| result_of(d)))
                    .find_map(|res| match item_of(res) {
                        Some(Item::Message(msg)) => Some(msg.clone()),
                        _ => None,
                    });
                match reply {
                    Some(msg) => {
                        note_rule(
                            m,
                            "DLG-SEND-05",
                            format!("agent {name} answered with a Message"),
                        );
                        let parts: Vec<&Value> = msg
                            .get("parts")
                            .and_then(Value::as_array)
                            .map(|a| a.iter().collect())
                            .unwrap_or_default();
                        let line = if parts.iter().any(|p| has_summary(p)) {
                            todo(
                                m,
                                name,
                                r.seq,
                                "the Message reply holds text the journal summarised (its bytes are not in the journal)",
                            )
                        } else {
                            let mut specs: Vec<PartSpec> =
                                parts.iter().filter_map(|p| part_spec(p)).collect();
                            let text = match specs.first() {
                                Some(p)
                                    if p.text.is_some()
                                        && p.filename.is_none()
                                        && p.media_type.is_none()
                                        && p.metadata.is_none() =>
                                {
                                    specs.remove(0).text.unwrap_or_default()
                                }
                                _ => String::new(),
                            };
                            StepLine::Step(
                                ScriptStep::Reply { text, parts: specs },
                                format!(
                                    "seq {}: a Message reply",
                                    r.response.as_ref().map_or(r.seq, |x| x.0)
                                ),
                            )
                        };
                        // A Message ends its stream: no cut to reproduce.
                        push_rule(&mut agent, r, None, vec![line], Vec::new(), None);
                    }
                    None => {
                        let what = format!(
                            "{method} was answered (HTTP {}) with neither a task nor a Message nor an error",
                            r.response.as_ref().map_or(0, |x| x.2)
                        );
                        let t = todo(m, name, r.seq, what);
                        push_rule(&mut agent, r, None, vec![t], Vec::new(), None);
                    }
                }
            }
        }
    }
    // A method whose every send failed while recorded goes on failing: the queued faults
    // cover the recorded attempts, a rule the ones after.
    for (method, (r, fault)) in last_failed {
        if processed.contains(&method) {
            continue;
        }
        push_rule(
            &mut agent,
            r,
            Some((
                fault,
                format!(
                    "every {method} of this message failed so while recorded: further ones too"
                ),
            )),
            Vec::new(),
            Vec::new(),
            None,
        );
        if let Some(last) = agent.rules.last_mut() {
            last.sticky = true;
        }
    }
    // A rule with a fault acts once: further sends of its message (resends) get the same
    // steps without it, as the recorded resends did.
    let mut i = 0;
    while i < agent.rules.len() {
        let later = agent.rules[i + 1..]
            .iter()
            .any(|o| o.key == agent.rules[i].key);
        if agent.rules[i].fault.is_some() && !later && !agent.rules[i].sticky {
            let mut plain = agent.rules[i].clone();
            plain.fault = None;
            plain.comments = vec![format!(
                "further sends of that message, without the fault ({})",
                agent.rules[i].comments.first().cloned().unwrap_or_default()
            )];
            agent.rules.insert(i + 1, plain);
        }
        i += 1;
    }
    // All but the last rule of a matcher apply once; the last one takes any further sends.
    let n = agent.rules.len();
    for i in 0..n {
        let later = agent.rules[i + 1..]
            .iter()
            .any(|o| o.key == agent.rules[i].key);
        agent.rules[i].times = later.then_some(1);
    }
    // A rule whose text another rule's text contains goes after it: longest texts first.
    let texts: Vec<Option<String>> = agent.rules.iter().map(|r| r.key.1.clone()).collect();
    let overlap = texts.iter().enumerate().any(|(i, a)| {
        texts.iter().enumerate().any(|(j, b)| {
            i != j && matches!((a, b), (Some(a), Some(b)) if a != b && a.contains(b.as_str()))
        })
    });
    if overlap {
        agent
            .rules
            .sort_by_key(|r| std::cmp::Reverse(r.key.1.as_ref().map_or(0, String::len)));
    }
    // Output modes: a media type sent that the default card does not list is added.
    if agent.output_modes.is_empty() {
        let defaults = ["text/plain", "application/json", "application/octet-stream"];
        let mut extra: Vec<String> = Vec::new();
        for t in tasks.values().filter(|t| t.agent == name) {
            for list in t.updates.values() {
                for u in list {
                    for p in u
                        .pointer("/artifact/parts")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(mt) = p.get("mediaType").and_then(Value::as_str)
                            && !defaults.contains(&mt)
                            && !extra.iter().any(|e| e == mt)
                        {
                            extra.push(mt.to_string());
                        }
                    }
                }
            }
        }
        if !extra.is_empty() {
            agent.output_modes = defaults
                .iter()
                .map(|s| s.to_string())
                .chain(extra)
                .collect();
        }
    }
    agent
}

pub(super) fn push_rule(
    agent: &mut AgentModel,
    r: &ReqInfo,
    fault: Option<(Fault, String)>,
    steps: Vec<StepLine>,
    mut comments: Vec<String>,
    on_cancel: Option<CancelBehaviour>,
) {
    comments.insert(0, describe(r));
    let key = (r.skill(), r.text());
    agent.rules.push(RuleModel {
        comments,
        when: Matcher {
            skill: key.0.clone(),
            text_contains: key.1.clone(),
            ..Default::default()
        },
        times: None,
        fault,
        on_cancel,
        steps,
        key,
        sticky: false,
    });
}

pub(super) fn note_fault_rules(m: &mut Model, fault: &Fault, r: &ReqInfo, all: &[&ReqInfo]) {
    let resent = all.iter().any(|o| {
        o.seq > r.seq
            && o.method == r.method
            && o.message_id().is_some()
            && o.message_id() == r.message_id()
    });
    match fault {
        // A transient failure (429, 5xx, a dropped connection) followed by a resend: backoff.
        Fault::HttpStatus { status, .. } if resent && (*status == 429 || *status >= 500) => {
            note_rule(
                m,
                "DLG-RETRY-02",
                format!("HTTP {status} was followed by a resend (backoff)"),
            );
        }
        Fault::DropBefore if resent => {
            note_rule(
                m,
                "DLG-RETRY-02",
                "a dropped connection was followed by a resend (backoff)",
            );
        }
        Fault::RpcError { code, .. } if r.is_send() => {
            note_rule(
                m,
                "DLG-SEND-09",
                format!("a JSON-RPC error {code} answered a send"),
            );
        }
        _ => {}
    }
}

/// A stream that ended early: `close_after` (clean end) or `reset_after`.
pub(super) fn stream_fault(r: &ReqInfo) -> Option<(Fault, String)> {
    let mock_kind = r
        .faults
        .iter()
        .find(|k| *k == "close_after" || *k == "reset_after")
        .map(String::as_str);
    let (seq, fault) = match (mock_kind, &r.closed, &r.dropped) {
        (Some("close_after"), Some((seq, events, _)), _) => {
            (*seq, Fault::CloseAfter { events: *events })
        }
        // The mock journals the half event it sends before the reset.
        (Some("reset_after"), _, Some((seq, _))) => (
            *seq,
            Fault::ResetAfter {
                events: r.events.len().saturating_sub(1) as u32,
            },
        ),
        // A recorder sees only whole events.
        (None, Some((seq, events, reason)), _) if reason == "upstream_closed" => {
            (*seq, Fault::CloseAfter { events: *events })
        }
        (None, Some((seq, events, reason)), _) if reason == "upstream_reset" => {
            (*seq, Fault::ResetAfter { events: *events })
        }
        _ => return None,
    };
    let (what, events) = match fault {
        Fault::CloseAfter { events } => ("closed cleanly", events),
        Fault::ResetAfter { events } => ("reset mid-event", events),
        _ => return None,
    };
    Some((
        fault,
        format!("seq {seq}: the stream was {what} after {events} events, before a final state"),
    ))
}

/// The fault of a rule whose send created a task.
pub(super) fn rule_fault(r: &ReqInfo, view: &TaskView, m: &mut Model) -> Option<(Fault, String)> {
    if let Some((seq, phase)) = &r.dropped
        && phase == "after_processing"
    {
        note_rule(
            m,
            "DLG-RETRY-03",
            "a send was processed and its response dropped (indefinite)",
        );
        return Some((
            Fault::DropResponse,
            format!("seq {seq}: processed, then the connection was dropped instead of answering"),
        ));
    }
    if r.faults.iter().any(|k| k == "stall") {
        let ms = gap_ms(r.at_us, view.created_at).max(1);
        return Some((
            Fault::Stall { ms },
            format!("seq {}: held {ms} ms before processing", r.seq),
        ));
    }
    let f = stream_fault(r);
    if f.is_some() {
        note_rule(m, "DLG-OBS-02", "a stream ended before a final state");
    }
    f
}
