//! The step runner: the background run of a task's [`ScriptStep`]s in order (states,
//! artifacts, input and auth rounds, gates, sub-delegation, violations).

use crate::agent::*;
use crate::content::ContentStream;
use crate::delegation::delegate;
use crate::journal::Event;
use crate::script::*;
use crate::task_events::*;
use a2a_protocol::*;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The url of an `artifact_url` step's part, registering what the agent serves for it: the blob
/// (own origin, with or without userinfo) or the redirect to the trap. Every address is loopback.
fn forbidden_or_blob_url(
    st: &AgentState,
    target: UrlTarget,
    key: &str,
    seed: u64,
    bytes: u64,
) -> String {
    let trap = st
        .net
        .trap
        .map(|a| a.to_string())
        .unwrap_or_else(|| format!("{}:9", crate::trap::TRAP_HOST));
    let trap_url = format!("http://{trap}{}{key}", crate::trap::TRAP_PATH_PREFIX);
    let own = format!("{}/blobs/{key}", st.base_url);
    match target {
        UrlTarget::Blob | UrlTarget::Userinfo => {
            crate::agent::lock_map(&st.blobs).insert(key.to_string(), (bytes, seed, false));
            if target == UrlTarget::Userinfo {
                match own.split_once("://") {
                    Some((scheme, rest)) => format!("{scheme}://a2a:trap@{rest}"),
                    None => own,
                }
            } else {
                own
            }
        }
        UrlTarget::RedirectToTrap => {
            crate::agent::lock_map(&st.redirects).insert(key.to_string(), trap_url);
            own
        }
        UrlTarget::Trap => trap_url,
        UrlTarget::Ftp => format!("ftp://{trap}/{key}"),
        UrlTarget::File => "file:///etc/passwd".into(),
        UrlTarget::Data => {
            "data:application/octet-stream;base64,YTJhLXRyYXA6IGRhdGEgdXJsIGNvbnRlbnQK".into()
        }
    }
}

/// Run a task's steps in order.
pub(crate) async fn run_task(
    st: Arc<AgentState>,
    entry: Arc<TaskEntry>,
    steps: Vec<ScriptStep>,
    mut cont_rx: mpsc::Receiver<Continuation>,
) {
    let reason = run_steps(&st, &entry, steps, &mut cont_rx).await;
    if frozen(&entry) {
        // A cancel took the task over (its abort may land after this point): it sets the
        // final state and then ends the streams. Ending them here could close a stream before
        // the final status event reached it.
        return;
    }
    let reason = reason.unwrap_or_else(|| {
        if entry.lock().task.status.state.is_terminal() {
            "terminal"
        } else {
            "script_end"
        }
    });
    finish_task(&entry, reason).await;
}

/// The steps of [`run_task`]; `Some(reason)` when they stopped early.
pub(crate) async fn run_steps(
    st: &Arc<AgentState>,
    entry: &Arc<TaskEntry>,
    steps: Vec<ScriptStep>,
    cont_rx: &mut mpsc::Receiver<Continuation>,
) -> Option<&'static str> {
    let mut truth = ArtifactTruth::default();
    let (task_id, content_key) = {
        let g = entry.lock();
        (g.task.id.clone(), g.content_key)
    };
    let mut artifact_no = 0u32;
    let mut delegations = 0u64;
    let mut foreign_pushes = 0u64;
    let mut malformed = 0u64;
    for step in steps {
        if frozen(entry) {
            return Some("terminal");
        }
        match step {
            ScriptStep::Reply { .. } | ScriptStep::Error { .. } => {}
            ScriptStep::State {
                state,
                message,
                parts,
                delay_ms,
            } => {
                if delay_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                }
                let s = TaskState::parse_lenient(&state).unwrap_or_default();
                let mut all = text_parts(message.as_deref());
                all.extend(parts.iter().map(PartSpec::to_part));
                apply_state(st, entry, s, all, false).await;
            }
            ScriptStep::Artifact {
                artifact_id,
                name,
                description,
                metadata,
                parts,
                chunks,
                delay_ms,
            } => {
                artifact_no += 1;
                let aid = artifact_id.unwrap_or_else(|| format!("artifact-{artifact_no}"));
                let chunks = if chunks.is_empty() {
                    vec![parts]
                } else {
                    chunks
                };
                let n = chunks.len();
                for (c, chunk) in chunks.into_iter().enumerate() {
                    if delay_ms > 0 && c > 0 {
                        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                    }
                    if frozen(entry) {
                        return Some("terminal");
                    }
                    let first = c == 0;
                    let artifact = Artifact {
                        artifact_id: aid.clone(),
                        name: first.then(|| name.clone().unwrap_or_else(|| aid.clone())),
                        description: description.clone().filter(|_| first),
                        metadata: metadata.clone().filter(|_| first),
                        parts: chunk.iter().map(PartSpec::to_part).collect(),
                        ..Default::default()
                    };
                    emit_chunk(st, entry, &mut truth, artifact, !first, c + 1 == n).await;
                }
            }
            ScriptStep::Wait { ms } => tokio::time::sleep(Duration::from_millis(ms)).await,
            ScriptStep::Artifacts {
                count,
                chunks,
                chunk_bytes,
                content,
                text,
                interleave,
                media_type,
                omit_last_chunk,
                delay_ms,
            } => {
                let mut gens: Vec<(String, ContentStream, GenRecord)> = (0..count)
                    .map(|i| {
                        let n = artifact_no + i;
                        let seed = crate::content::derive_seed(&[
                            &st.net.seed.to_le_bytes(),
                            st.spec.name.as_bytes(),
                            &content_key.to_le_bytes(),
                            &n.to_le_bytes(),
                        ]);
                        let text = content == ContentKind::Text;
                        (
                            format!("artifact-{}", n + 1),
                            ContentStream::new(seed, text),
                            GenRecord {
                                seed,
                                raw: !text,
                                chunk_bytes,
                                chunks: 0,
                                media_type: media_type.clone(),
                            },
                        )
                    })
                    .collect();
                artifact_no += count;
                let literal: Option<Vec<String>> = text.map(|t| split_literal(&t, chunks as usize));
                let mut order: Vec<(usize, u32)> = Vec::new();
                if interleave {
                    for c in 0..chunks {
                        for a in 0..count as usize {
                            order.push((a, c));
                        }
                    }
                } else {
                    for a in 0..count as usize {
                        for c in 0..chunks {
                            order.push((a, c));
                        }
                    }
                }
                let context_id = entry.lock().task.context_id.clone();
                let in_flight = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT_KIB as usize));
                let chunk_kib = u32::try_from(chunk_bytes.div_ceil(1024))
                    .unwrap_or(u32::MAX)
                    .clamp(1, IN_FLIGHT_KIB);
                for (a, c) in order {
                    if delay_ms > 0 && c > 0 {
                        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                    }
                    if frozen(entry) {
                        return Some("terminal");
                    }
                    let Some((id, gen_, record)) = gens.get_mut(a) else {
                        continue;
                    };
                    let last = c + 1 == chunks && !omit_last_chunk;
                    let Some(l) = &literal else {
                        // Generated content: the hot path, bytes written once into a buffer
                        // shared by every subscriber; the task keeps only how to regenerate it.
                        // A subscriber that stopped reading is dropped by `broadcast` after
                        // its timeout, so waiting longer for a permit is never needed.
                        let permit = tokio::time::timeout(
                            SUBSCRIBER_SEND_TIMEOUT,
                            in_flight.clone().acquire_many_owned(chunk_kib),
                        )
                        .await
                        .ok()
                        .and_then(Result::ok);
                        let mut payload = bytes::BytesMut::new();
                        gen_.extend(&mut payload, chunk_bytes);
                        let chunk = GenChunk {
                            task_id: task_id.clone(),
                            context_id: context_id.clone(),
                            artifact_id: id.clone(),
                            name: (c == 0).then(|| id.clone()),
                            media_type: media_type.clone(),
                            raw: content == ContentKind::Raw,
                            payload: payload.freeze(),
                            append: c > 0,
                            last_chunk: last,
                            _permit: permit,
                        };
                        emit_generated(st, entry, &mut truth, chunk, record).await;
                        continue;
                    };
                    let bytes: &[u8] = l.get(c as usize).map(String::as_bytes).unwrap_or(&[]);
                    let part = match content {
                        ContentKind::Text => {
                            Part::text(String::from_utf8_lossy(bytes).into_owned())
                        }
                        ContentKind::Raw => Part::raw(bytes.to_vec()),
                    };
                    let part = match &media_type {
                        Some(m) => part.with_media_type(m.clone()),
                        None => part,
                    };
                    let artifact = Artifact {
                        artifact_id: id.clone(),
                        name: (c == 0).then(|| id.clone()),
                        parts: vec![part],
                        ..Default::default()
                    };
                    emit_chunk(st, entry, &mut truth, artifact, c > 0, last).await;
                }
                // Artifacts whose lastChunk was withheld: still record what was sent.
                for (id, _, _) in &gens {
                    if let Some(sent) = truth.finish(&task_id, id) {
                        st.journal(sent);
                    }
                }
            }
            ScriptStep::ArtifactUrl {
                bytes,
                media_type,
                target,
            } => {
                artifact_no += 1;
                let key = format!("{}-{}", task_id, artifact_no);
                let seed =
                    crate::content::derive_seed(&[&st.net.seed.to_le_bytes(), key.as_bytes()]);
                let url = forbidden_or_blob_url(st, target, &key, seed, bytes);
                let part = Part::url(url.clone()).with_media_type(
                    media_type.unwrap_or_else(|| "application/octet-stream".into()),
                );
                let aid = format!("artifact-{artifact_no}");
                let artifact = Artifact {
                    artifact_id: aid.clone(),
                    name: Some(aid.clone()),
                    parts: vec![part],
                    ..Default::default()
                };
                if let Some(why) = target.forbidden_because() {
                    // Journaled before the chunk goes out: the delegator cannot act on it first.
                    st.journal(Event::ForbiddenUrl {
                        task_id: task_id.clone(),
                        artifact_id: aid.clone(),
                        url,
                        why: why.to_string(),
                    });
                    emit_chunk(st, entry, &mut truth, artifact, false, true).await;
                } else {
                    let (len, sha) = crate::content::expected(seed, false, bytes);
                    emit_chunk(st, entry, &mut truth, artifact, false, true).await;
                    st.journal(Event::ArtifactSent {
                        task_id: task_id.clone(),
                        artifact_id: aid,
                        bytes: len,
                        sha256: sha,
                        chunks: 1,
                    });
                }
            }
            ScriptStep::DataArtifact { data, media_type } => {
                artifact_no += 1;
                let aid = format!("artifact-{artifact_no}");
                let part = Part::data(data)
                    .with_media_type(media_type.unwrap_or_else(|| "application/json".into()));
                let artifact = Artifact {
                    artifact_id: aid.clone(),
                    name: Some(aid),
                    parts: vec![part],
                    ..Default::default()
                };
                emit_chunk(st, entry, &mut truth, artifact, false, true).await;
            }
            ScriptStep::InputRequired {
                question,
                expect,
                rounds,
                on_wrong,
                max_wrong,
                timeout_ms,
            } => {
                let mut answered = 0u32;
                let mut wrong = 0u32;
                if !interrupt(st, entry, TaskState::InputRequired, &question).await {
                    return Some("terminal");
                }
                while answered < rounds {
                    let Some(c) = next_continuation(cont_rx, timeout_ms).await else {
                        fail_task(st, entry, "no answer to the input request in time").await;
                        return Some("terminal");
                    };
                    let good = expect
                        .as_ref()
                        .is_none_or(|m| crate::matching::message_matches(m, &c.message));
                    st.journal(Event::Continued {
                        task_id: task_id.clone(),
                        message_id: c.message.message_id.clone(),
                        outcome: if good { "accepted" } else { "wrong_answer" }.into(),
                    });
                    if good {
                        answered += 1;
                        set_state(st, entry, TaskState::Working, None).await;
                        if answered < rounds {
                            interrupt(st, entry, TaskState::InputRequired, &question).await;
                        }
                    } else {
                        wrong += 1;
                        if on_wrong == OnWrongAnswer::Fail || wrong > max_wrong {
                            let reason = if on_wrong == OnWrongAnswer::Fail {
                                "the answer to the input request was wrong"
                            } else {
                                "too many wrong answers to the input request"
                            };
                            fail_task(st, entry, reason).await;
                            Continuation::acknowledge(c.ack, entry);
                            return Some("terminal");
                        }
                        // Ask again: the same question, a new INPUT_REQUIRED status.
                        interrupt(st, entry, TaskState::InputRequired, &question).await;
                    }
                    // Acknowledge once the state this answer leads to is set, so a blocking
                    // continuation answers with it.
                    Continuation::acknowledge(c.ack, entry);
                }
            }
            ScriptStep::AuthRequired {
                credential,
                message,
                max_wrong,
                timeout_ms,
                resume_after_ms,
            } => {
                let text = message.unwrap_or_else(|| {
                    "This task needs a credential scoped to this agent and task".into()
                });
                if !interrupt(st, entry, TaskState::AuthRequired, &text).await {
                    return Some("terminal");
                }
                let resume_at = resume_after_ms
                    .map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
                let mut wrong = 0u32;
                loop {
                    let next = match resume_at {
                        Some(at) => {
                            let fail_at =
                                tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
                            match tokio::time::timeout_at(at.min(fail_at), cont_rx.recv()).await {
                                Ok(c) => c,
                                // The resume comes first (it is below `timeout_ms`).
                                Err(_) if at <= fail_at => {
                                    resume_out_of_band(st, entry, &task_id, cont_rx).await;
                                    break;
                                }
                                Err(_) => None,
                            }
                        }
                        None => next_continuation(cont_rx, timeout_ms).await,
                    };
                    let Some(c) = next else {
                        fail_task(st, entry, "no credential in time").await;
                        return Some("terminal");
                    };
                    let good = c.authorization.as_deref() == Some(credential.as_str());
                    st.journal(Event::Continued {
                        task_id: task_id.clone(),
                        message_id: c.message.message_id.clone(),
                        outcome: if good { "accepted" } else { "wrong_credential" }.into(),
                    });
                    if good {
                        set_state(st, entry, TaskState::Working, None).await;
                        Continuation::acknowledge(c.ack, entry);
                        break;
                    }
                    wrong += 1;
                    if wrong > max_wrong {
                        fail_task(st, entry, "too many attempts without the right credential")
                            .await;
                        Continuation::acknowledge(c.ack, entry);
                        return Some("terminal");
                    }
                    interrupt(st, entry, TaskState::AuthRequired, &text).await;
                    Continuation::acknowledge(c.ack, entry);
                }
            }
            ScriptStep::Delegate {
                to,
                text,
                skill,
                margin_ms,
                budget_share,
            } => {
                delegations += 1;
                if !delegate(
                    st,
                    entry,
                    &task_id,
                    delegations,
                    &to,
                    &text,
                    skill,
                    margin_ms,
                    budget_share,
                )
                .await
                {
                    return Some("terminal");
                }
            }
            ScriptStep::RawEvent { result } => broadcast(entry, Outgoing::Raw(result)).await,
            ScriptStep::RawSse { data } => broadcast(entry, Outgoing::RawText(data)).await,
            ScriptStep::HugeEvent { bytes } => broadcast(entry, Outgoing::Huge(bytes)).await,
            ScriptStep::AppendUnknown => {
                let artifact = Artifact {
                    artifact_id: "artifact-never-started".into(),
                    parts: vec![Part::text("orphan chunk")],
                    ..Default::default()
                };
                let (tid, ctx) = {
                    let g = entry.lock();
                    (g.task.id.clone(), g.task.context_id.clone())
                };
                st.journal(Event::ArtifactChunk {
                    task_id: tid.clone(),
                    artifact_id: artifact.artifact_id.clone(),
                    append: true,
                    last_chunk: true,
                    bytes: 12,
                });
                let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: tid,
                    context_id: ctx,
                    artifact,
                    append: true,
                    last_chunk: true,
                    metadata: None,
                });
                broadcast(entry, Outgoing::Event(Arc::new(ev))).await;
            }
            ScriptStep::Chunk {
                artifact_id,
                text,
                append,
                last_chunk,
            } => {
                let artifact = Artifact {
                    artifact_id,
                    parts: vec![Part::text(text)],
                    ..Default::default()
                };
                emit_chunk(st, entry, &mut truth, artifact, append, last_chunk).await;
            }
            ScriptStep::UnknownState { state } => {
                let result = {
                    let g = entry.lock();
                    serde_json::json!({"statusUpdate": {
                        "taskId": g.task.id,
                        "contextId": g.task.context_id,
                        "status": {"state": state},
                    }})
                };
                broadcast(entry, Outgoing::Raw(result)).await;
            }
            ScriptStep::Purge => {
                entry.lock().purged = true;
                entry.changed.notify_waiters();
                st.journal(Event::TaskPurged {
                    task_id: task_id.clone(),
                });
                return Some("purged");
            }
            ScriptStep::CloseStreams => close_streams(entry, "script").await,
            ScriptStep::PushForeign { state, message } => {
                foreign_pushes += 1;
                let s = TaskState::parse_lenient(&state).unwrap_or_default();
                crate::push::push_foreign(st, entry, foreign_pushes, s, message.as_deref()).await;
            }
            ScriptStep::MalformedEvent { event, omit } => {
                malformed += 1;
                let kind = event.unwrap_or_else(|| EventKind::for_omitted(&omit));
                let mut result = well_formed(st, entry, kind, malformed);
                let pointer = crate::omit::event_pointer(kind.member(), &omit);
                let removed = crate::omit::from_result(&mut result, std::slice::from_ref(&pointer));
                broadcast(entry, Outgoing::Omitted { result, removed }).await;
            }
            ScriptStep::Gate { gate, timeout_ms } => {
                if !st
                    .net
                    .wait_gate(&gate, Duration::from_millis(timeout_ms))
                    .await
                {
                    fail_task(st, entry, &format!("gate {gate:?} was not opened in time")).await;
                    return Some("terminal");
                }
            }
        }
    }
    None
}

/// The credential "arrived out of band" (`resume_after_ms`): the task resumes without a
/// client message. Messages that raced the resume are acknowledged and journaled `ignored`.
async fn resume_out_of_band(
    st: &AgentState,
    entry: &TaskEntry,
    task_id: &str,
    cont_rx: &mut mpsc::Receiver<Continuation>,
) {
    st.journal(Event::Continued {
        task_id: task_id.to_string(),
        message_id: String::new(),
        outcome: "out_of_band".into(),
    });
    set_state(st, entry, TaskState::Working, None).await;
    while let Ok(c) = cont_rx.try_recv() {
        st.journal(Event::Continued {
            task_id: task_id.to_string(),
            message_id: c.message.message_id.clone(),
            outcome: "ignored".into(),
        });
        Continuation::acknowledge(c.ack, entry);
    }
}

/// A well-formed stream event of the task (a `StreamResponse` as JSON) for a
/// `malformed_event` step to remove a field from: a status update repeating the current
/// status, a one-chunk text artifact `artifact-malformed-N` (never part of the task), or the
/// task snapshot as this agent shows it.
fn well_formed(st: &AgentState, entry: &TaskEntry, kind: EventKind, n: u64) -> serde_json::Value {
    let g = entry.lock();
    let ev = match kind {
        EventKind::StatusUpdate => StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: g.task.id.clone(),
            context_id: g.task.context_id.clone(),
            status: g.task.status.clone(),
            metadata: None,
        }),
        EventKind::ArtifactUpdate => {
            let id = format!("artifact-malformed-{n}");
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: g.task.id.clone(),
                context_id: g.task.context_id.clone(),
                artifact: Artifact {
                    artifact_id: id.clone(),
                    name: Some(id),
                    parts: vec![Part::text(
                        "the content of an artifact update that lacks a required field",
                    )],
                    ..Default::default()
                },
                append: false,
                last_chunk: true,
                metadata: None,
            })
        }
        EventKind::Task => StreamResponse::Task(st.present(&g.snapshot(), None)),
    };
    crate::methods::to_value(&ev)
}

/// Split literal text into `n` chunks of about equal byte size, never inside a UTF-8 character.
pub(crate) fn split_literal(t: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let size = t.len().div_ceil(n).max(1);
    let mut out = Vec::with_capacity(n);
    let mut cur = String::new();
    for ch in t.chars() {
        if cur.len() >= size && out.len() + 1 < n {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(ch);
    }
    out.push(cur);
    out.resize(n, String::new());
    out
}
