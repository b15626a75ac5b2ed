//! A task's steps, from its own events and the stream events about it, in journal order.

use super::*;

/// The steps of a task, and its `on_cancel`.
#[allow(clippy::too_many_arguments)]
pub(super) fn task_steps(
    journal_end: u64,
    agent: &str,
    creator: &ReqInfo,
    view: &TaskView,
    tasks: &BTreeMap<String, TaskView>,
    blobs: &[(String, u64, String)],
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    m: &mut Model,
) -> (Vec<StepLine>, Option<CancelBehaviour>) {
    let mut steps: Vec<StepLine> = Vec::new();
    let mut last_at = view.created_at;
    let mut seen_states: BTreeMap<String, usize> = BTreeMap::new();
    let mut after_accepted = false;
    let mut input_open: Option<usize> = None;
    let mut wrong = 0u32;
    let mut pending_chunks: Vec<(String, ChunkRec)> = Vec::new();
    let mut sent: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut on_cancel = None;
    let mut canceled_by_client = false;
    let mut rejected_by_limits = false;
    let mut final_state: Option<TaskState> = None;
    let message_for = |state: &str, k: usize| -> Option<String> {
        view.statuses
            .iter()
            .filter(|s| state_of(&s.0) == state_of(state))
            .nth(k)
            .or_else(|| {
                view.statuses
                    .iter()
                    .rfind(|s| state_of(&s.0) == state_of(state))
            })
            .and_then(|s| s.2.clone())
    };
    let continuation = |message_id: &str| -> Option<&ReqInfo> {
        reqs.values().find(|r| {
            r.agent == agent && r.continues().is_some() && r.message_id() == Some(message_id)
        })
    };
    // The task's own stream events and the raw ones, in journal order.
    let mut raw = view.raw.iter().peekable();
    let mut doubtful: Vec<String> = Vec::new();
    let mut active_seen = false;
    for (i, (seq, at, ev)) in view.events.iter().enumerate() {
        if !matches!(ev, Event::ArtifactChunk { .. } | Event::ArtifactSent { .. })
            && !pending_chunks.is_empty()
        {
            let run = std::mem::take(&mut pending_chunks);
            flush_artifacts(agent, view, &run, &sent, blobs, &mut last_at, &mut steps, m);
        }
        while let Some((rseq, rat, data)) = raw.next_if(|r| r.0 < *seq) {
            if !pending_chunks.is_empty() {
                let run = std::mem::take(&mut pending_chunks);
                flush_artifacts(agent, view, &run, &sent, blobs, &mut last_at, &mut steps, m);
            }
            raw_step(
                agent,
                *rseq,
                *rat,
                data,
                &mut last_at,
                &mut steps,
                &mut doubtful,
                m,
            );
        }
        match ev {
            Event::TaskState { state, .. } => {
                let k = seen_states.entry(state.clone()).or_insert(0);
                let occurrence = *k;
                *k += 1;
                let Some(s) = state_of(state) else {
                    steps.push(StepLine::Step(
                        ScriptStep::UnknownState {
                            state: state.clone(),
                        },
                        format!("seq {seq}: a state outside the protocol's enum"),
                    ));
                    note_rule(m, "DLG-STATE-04", "an unknown state was sent");
                    last_at = *at;
                    continue;
                };
                if s == TaskState::Submitted && occurrence == 0 {
                    continue; // Set by the agent on creation.
                }
                if s == TaskState::Working && after_accepted {
                    after_accepted = false;
                    last_at = *at;
                    continue; // Set by the input_required step once answered.
                }
                after_accepted = false;
                if s == TaskState::InputRequired && input_open.is_some() && wrong > 0 {
                    last_at = *at;
                    continue; // The same question again after a wrong answer.
                }
                if s == TaskState::Rejected && rejected_by_limits {
                    final_state = Some(s);
                    continue;
                }
                if s == TaskState::Canceled && view.cancels.iter().any(|(c, _)| *c < *seq) {
                    canceled_by_client = true;
                    final_state = Some(s);
                    continue; // The mock cancels on CancelTask by itself.
                }
                if s == TaskState::Failed
                    && let Some(ix) = input_open
                    && wrong > 0
                {
                    // Failed on a wrong answer: the step fails the task itself.
                    if let Some(StepLine::Step(
                        ScriptStep::InputRequired {
                            on_wrong,
                            max_wrong,
                            ..
                        },
                        _,
                    )) = steps.get_mut(ix)
                    {
                        if wrong == 1 {
                            *on_wrong = OnWrongAnswer::Fail;
                        } else {
                            *max_wrong = wrong - 1;
                        }
                    }
                    final_state = Some(s);
                    continue;
                }
                let delay = gap_ms(last_at, *at);
                last_at = *at;
                let message = message_for(state, occurrence);
                match s {
                    TaskState::InputRequired => {
                        note_rule(m, "DLG-INPUT-01", "the agent asked for input");
                        input_open = Some(steps.len());
                        wrong = 0;
                        if delay > 0 {
                            steps.push(StepLine::Step(
                                ScriptStep::Wait { ms: delay },
                                format!("before seq {seq}"),
                            ));
                            input_open = Some(steps.len());
                        }
                        let question = message.clone().unwrap_or_default();
                        steps.push(StepLine::Step(
                            ScriptStep::InputRequired {
                                question,
                                expect: None,
                                rounds: 1,
                                on_wrong: OnWrongAnswer::Reask,
                                max_wrong: 3,
                                timeout_ms: 30_000,
                            },
                            format!("seq {seq}: INPUT_REQUIRED"),
                        ));
                        if message.is_none() {
                            let t = todo(
                                m,
                                agent,
                                *seq,
                                "the question of this INPUT_REQUIRED is not in the journal",
                            );
                            steps.push(t);
                        }
                    }
                    TaskState::AuthRequired => {
                        note_rule(m, "DLG-AUTH-01", "the agent asked for credentials");
                        // The credential: the Authorization header of the accepted continuation.
                        let cred = view.events[i..].iter().find_map(|(_, _, e)| match e {
                            Event::Continued {
                                message_id,
                                outcome,
                                ..
                            } if outcome == "accepted" => continuation(message_id)
                                .and_then(|r| r.headers.get("authorization").cloned()),
                            _ => None,
                        });
                        match cred.filter(|c| !c.to_ascii_lowercase().contains("redacted") && !c.is_empty()) {
                            Some(credential) => steps.push(StepLine::Step(
                                ScriptStep::AuthRequired {
                                    credential,
                                    message: message.clone(),
                                    max_wrong: 3,
                                    timeout_ms: 30_000,
                                    resume_after_ms: None,
                                },
                                format!("seq {seq}: AUTH_REQUIRED; the credential is the accepted continuation's Authorization header"),
                            )),
                            None => {
                                let t = todo(m, agent, *seq, "AUTH_REQUIRED: the credential the agent accepted is not in the journal (redacted or never given)");
                                steps.push(t);
                            }
                        }
                        input_open = None;
                    }
                    _ => {
                        if s.is_terminal() {
                            final_state = Some(s);
                            match s {
                                TaskState::Completed => {}
                                _ => note_rule(
                                    m,
                                    "DLG-STATE-03",
                                    format!("a task ended {}", s.as_str()),
                                ),
                            }
                        } else if s == TaskState::Unspecified {
                            note_rule(m, "DLG-STATE-04", "an UNSPECIFIED state was sent");
                        } else {
                            active_seen = true;
                        }
                        steps.push(StepLine::Step(
                            ScriptStep::State {
                                state: s.as_str().to_string(),
                                message,
                                parts: Vec::new(),
                                delay_ms: delay,
                            },
                            format!("seq {seq}"),
                        ));
                    }
                }
            }
            Event::Continued {
                message_id,
                outcome,
                ..
            } => {
                last_at = *at;
                match outcome.as_str() {
                    "accepted" => {
                        after_accepted = true;
                        if let Some(ix) = input_open.take() {
                            let answer = continuation(message_id)
                                .and_then(|r| r.message().and_then(all_text));
                            if let Some(StepLine::Step(ScriptStep::InputRequired { expect, .. }, c)) =
                                steps.get_mut(ix)
                                && let Some(a) = answer.filter(|a| !a.trim().is_empty())
                            {
                                c.push_str(&format!(
                                    "; answered at seq {seq} with {:?}",
                                    clip(&a, 40)
                                ));
                                *expect = Some(Matcher {
                                    text_contains: Some(a),
                                    ..Default::default()
                                });
                            }
                        }
                        wrong = 0;
                    }
                    "wrong_answer" => {
                        wrong += 1;
                        if wrong > 3
                            && let Some(ix) = input_open
                            && let Some(StepLine::Step(
                                ScriptStep::InputRequired { max_wrong, .. },
                                _,
                            )) = steps.get_mut(ix)
                        {
                            *max_wrong = wrong;
                        }
                    }
                    "wrong_credential" => {}
                    other => {
                        let t = todo(
                            m,
                            agent,
                            *seq,
                            format!("a continuation the agent took as {other:?}"),
                        );
                        steps.push(t);
                    }
                }
            }
            Event::ArtifactChunk {
                artifact_id,
                append,
                last_chunk,
                bytes,
                ..
            } => pending_chunks.push((
                artifact_id.clone(),
                (*seq, *at, *append, *last_chunk, *bytes),
            )),
            Event::ArtifactSent {
                artifact_id,
                bytes,
                sha256,
                ..
            } => {
                sent.insert(artifact_id.clone(), (*bytes, sha256.clone()));
                // Known only from a task the delegator read (a recorder saw no chunk of it):
                // one chunk, before the final state that carried it.
                let chunked = view.events.iter().any(|(s, _, e)| {
                    *s < *seq
                        && matches!(e, Event::ArtifactChunk { artifact_id: a, .. } if a == artifact_id)
                }) || pending_chunks.iter().any(|(a, _)| a == artifact_id);
                if !chunked {
                    let mut added = Vec::new();
                    artifact_steps(
                        agent,
                        view,
                        artifact_id,
                        &[(*seq, *at, false, true, *bytes)],
                        &sent,
                        blobs,
                        &mut added,
                        m,
                    );
                    for line in &mut added {
                        if let StepLine::Step(_, c) = line {
                            c.push_str(" (seen only in a task read back: one chunk)");
                        }
                    }
                    let at_end = matches!(
                        steps.last(),
                        Some(StepLine::Step(ScriptStep::State { state, .. }, _))
                            if state_of(state).is_some_and(TaskState::is_terminal)
                    );
                    let pos = if at_end { steps.len() - 1 } else { steps.len() };
                    steps.splice(pos..pos, added);
                }
            }
            Event::TaskPurged { .. } => {
                let delay = gap_ms(last_at, *at);
                last_at = *at;
                if delay > 0 {
                    steps.push(StepLine::Step(
                        ScriptStep::Wait { ms: delay },
                        format!("before seq {seq}"),
                    ));
                }
                steps.push(StepLine::Step(
                    ScriptStep::Purge,
                    format!("seq {seq}: the agent forgot the task"),
                ));
                note_rule(m, "DLG-REC-04", "the agent purged a task it had created");
            }
            Event::LimitRejected { reason, .. } => {
                rejected_by_limits = true;
                steps.push(StepLine::Comment(format!(
                    "seq {seq}: the agent rejected the work on its x-deleg limits ({reason}); the mock's own check (enforce_x_deleg, max_depth) does the same, no step needed"
                )));
                note_rule(m, "DLG-STATE-03", "the agent rejected the work");
            }
            Event::Delegated {
                to, child_task_id, ..
            } => {
                let delay = gap_ms(last_at, *at);
                last_at = *at;
                let child = child_task_id.as_ref().and_then(|c| {
                    reqs.values()
                        .find(|r| r.task.as_ref().is_some_and(|t| t.0 == *c && !t.1))
                });
                match child.and_then(|c| c.text().map(|t| (t, c.skill()))) {
                    Some((text, skill)) => {
                        if delay > 0 {
                            steps.push(StepLine::Step(
                                ScriptStep::Wait { ms: delay },
                                format!("before seq {seq}"),
                            ));
                        }
                        steps.push(StepLine::Step(
                            ScriptStep::Delegate {
                                to: to.clone(),
                                text,
                                skill,
                                margin_ms: 1000,
                                budget_share: 0.5,
                            },
                            format!("seq {seq}: delegated to {to}"),
                        ));
                        let _ = tasks;
                    }
                    None => {
                        let t = todo(
                            m,
                            agent,
                            *seq,
                            format!(
                                "delegated to {to}, but the child's request is not in the journal"
                            ),
                        );
                        steps.push(t);
                    }
                }
            }
            Event::Push { .. } => {}
            _ => {}
        }
    }
    if !pending_chunks.is_empty() {
        let run = std::mem::take(&mut pending_chunks);
        flush_artifacts(agent, view, &run, &sent, blobs, &mut last_at, &mut steps, m);
    }
    for (rseq, rat, data) in raw {
        raw_step(
            agent,
            *rseq,
            *rat,
            data,
            &mut last_at,
            &mut steps,
            &mut doubtful,
            m,
        );
    }
    // Silent for the rest of the recording without a final state: the agent holds the task
    // (and its streams) open at least as long, instead of ending its script.
    let interrupted = steps.iter().any(|s| {
        matches!(
            s,
            StepLine::Step(
                ScriptStep::InputRequired { .. } | ScriptStep::AuthRequired { .. },
                _
            )
        )
    });
    if final_state.is_none() && !interrupted {
        let left = ms(journal_end.saturating_sub(last_at));
        let hold = (left + 5000).div_ceil(1000) * 1000;
        steps.push(StepLine::Step(
            ScriptStep::Wait { ms: hold },
            format!("silent for the {left} ms the recording went on, with no final state"),
        ));
    }
    // What a correct delegator may rightly reject: an append to an artifact never started, an
    // artifact of a media type the request did not accept.
    let accepted = strings(creator.params.pointer("/configuration/acceptedOutputModes"));
    for line in &steps {
        match line {
            StepLine::Step(ScriptStep::AppendUnknown, _) => {
                doubtful.push("an append to an artifact never started".into());
            }
            StepLine::Step(step, _) => {
                for mt in media_types(step) {
                    if !accepted.is_empty() && !accepted.iter().any(|a| accepts(a, &mt)) {
                        note_rule(
                            m,
                            "DLG-ART-05",
                            format!("an artifact of {mt}, which the request did not accept"),
                        );
                        doubtful.push(format!(
                            "an artifact of {mt}, which the request did not accept"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if active_seen && final_state.is_some_and(TaskState::is_terminal) && doubtful.is_empty() {
        note_rule(
            m,
            "DLG-STATE-01",
            "the task was SUBMITTED or WORKING, then ended",
        );
    }
    if final_state == Some(TaskState::Completed) && doubtful.is_empty() {
        note_rule(m, "DLG-STATE-02", "a task completed");
    }
    if !doubtful.is_empty()
        && let Some(task_id) = view_task_id(view)
    {
        m.doubtful.insert(task_id, doubtful.join("; "));
    }
    // A cancel the agent answered without canceling: it ignores cancels.
    if !canceled_by_client
        && view.cancels.iter().any(|(_, ok)| *ok)
        && !final_state.is_some_and(TaskState::is_terminal)
    {
        on_cancel = Some(CancelBehaviour::Ignore);
    }
    if final_state.is_none()
        && !steps.iter().any(|s| {
            matches!(
                s,
                StepLine::Step(
                    ScriptStep::InputRequired { .. } | ScriptStep::AuthRequired { .. },
                    _
                )
            )
        })
    {
        note_rule(
            m,
            "DLG-OBS-01",
            "the task never reached a final state while recorded",
        );
    }
    let _ = creator;
    (steps, on_cancel)
}

/// The task id of a view (from its events).
pub(super) fn view_task_id(view: &TaskView) -> Option<String> {
    view.events.iter().find_map(|(_, _, e)| match e {
        Event::TaskState { task_id, .. }
        | Event::ArtifactChunk { task_id, .. }
        | Event::Continued { task_id, .. } => Some(task_id.clone()),
        _ => None,
    })
}

/// The media types of the parts a step sends.
pub(super) fn media_types(step: &ScriptStep) -> Vec<String> {
    match step {
        ScriptStep::Artifact { parts, chunks, .. } => parts
            .iter()
            .chain(chunks.iter().flatten())
            .filter_map(|p| p.media_type.clone())
            .collect(),
        ScriptStep::Artifacts { media_type, .. }
        | ScriptStep::ArtifactUrl { media_type, .. }
        | ScriptStep::DataArtifact { media_type, .. } => media_type.iter().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Does an accepted mode (`type/sub`, `type/*`, `*/*`) accept this media type?
pub(super) fn accepts(mode: &str, media_type: &str) -> bool {
    let essence = |m: &str| {
        m.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    };
    let (mode, mt) = (essence(mode), essence(media_type));
    mode == mt
        || mode == "*/*"
        || mode
            .strip_suffix("/*")
            .is_some_and(|fam| mt.split('/').next() == Some(fam))
}

/// A stream event that is no event of the task's own, as a raw step.
#[allow(clippy::too_many_arguments)]
pub(super) fn raw_step(
    agent: &str,
    seq: u64,
    at: u64,
    data: &Value,
    last_at: &mut u64,
    steps: &mut Vec<StepLine>,
    doubtful: &mut Vec<String>,
    m: &mut Model,
) {
    let delay = gap_ms(*last_at, at);
    *last_at = at;
    if has_summary(data) {
        let t = todo(
            m,
            agent,
            seq,
            "a stream event that is no event of the task's own holds text the journal summarised",
        );
        steps.push(t);
        doubtful.push("a stream event of unknown content".into());
        return;
    }
    if delay > 0 {
        steps.push(StepLine::Step(
            ScriptStep::Wait { ms: delay },
            format!("before seq {seq}"),
        ));
    }
    note_rule(
        m,
        "DLG-ART-09",
        "the stream carried an event that is no event of the task's own",
    );
    let (step, what) = match data {
        Value::String(text) => (
            ScriptStep::RawSse { data: text.clone() },
            "a stream event that is not JSON",
        ),
        _ => {
            let res = result_of(data);
            let what = match item_of(res) {
                Some(Item::Message(_)) => "a Message on a task's stream",
                Some(Item::Status(_)) => "a status update for another task or of an unknown state",
                Some(Item::Artifact(_)) => "an artifact update for another task",
                Some(Item::Task(_)) => "another task",
                None => "an event that is no A2A stream event",
            };
            (
                ScriptStep::RawEvent {
                    result: res.clone(),
                },
                what,
            )
        }
    };
    doubtful.push(what.to_string());
    steps.push(StepLine::Step(
        step,
        format!("seq {seq}: {what}, sent as recorded"),
    ));
}
