//! Artifacts: literal parts when small and kept by the journal, generated content of the same
//! length otherwise, interleaved runs, url parts, appends to unknown artifacts.

use super::*;

/// Generated content: (chunks, chunk bytes, content kind, media type, whether a recorded part
/// said the kind and media type).
pub(super) type Shape = (u32, u64, ContentKind, Option<String>, bool);

/// One artifact's chunks as recorded: (seq, at_us, append, last_chunk, bytes).
pub(super) type ChunkRec = (u64, u64, bool, bool, u64);

/// Write a run of artifact chunks (consecutive in the task's events) as steps.
#[allow(clippy::too_many_arguments)]
pub(super) fn flush_artifacts(
    agent: &str,
    view: &TaskView,
    run: &[(String, ChunkRec)],
    sent: &BTreeMap<String, (u64, String)>,
    blobs: &[(String, u64, String)],
    last_at: &mut u64,
    steps: &mut Vec<StepLine>,
    m: &mut Model,
) {
    let Some((_, first)) = run.first() else {
        return;
    };
    let delay = gap_ms(*last_at, first.1);
    if delay > 0 {
        steps.push(StepLine::Step(
            ScriptStep::Wait { ms: delay },
            format!("before seq {}", first.0),
        ));
    }
    if let Some((_, last)) = run.last() {
        *last_at = last.1;
    }
    // Artifacts in order of their first chunk.
    let mut ids: Vec<&str> = Vec::new();
    for (id, _) in run {
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    let interleaved =
        ids.len() > 1 && run.windows(2).filter(|w| w[0].0 != w[1].0).count() >= ids.len();
    let per: Vec<(&str, Vec<ChunkRec>)> = ids
        .iter()
        .map(|id| {
            (
                *id,
                run.iter()
                    .filter(|(a, _)| a == id)
                    .map(|(_, c)| *c)
                    .collect(),
            )
        })
        .collect();
    // Interleaved generated artifacts of one shape: one `artifacts` step.
    if interleaved {
        let shapes: Vec<Option<Shape>> = per
            .iter()
            .map(|(id, chunks)| generated_shape(view, id, chunks))
            .collect();
        if let Some(Some(s)) = shapes.first()
            && shapes.iter().all(|x| x.as_ref() == Some(s))
            && per.iter().all(|(id, c)| !literal_ok(view, id, c))
        {
            let (chunks, chunk_bytes, content, media_type, _) = s.clone();
            for (id, _) in &per {
                m.generated.push((
                    first.0,
                    format!(
                        "seq {}: artifact {id:?}, {}",
                        first.0,
                        recorded_hashes(&[id], sent)
                    ),
                ));
            }
            note_rule(m, "DLG-ART-01", "artifact chunks were appended");
            note_rule(m, "DLG-ART-02", "artifacts came in several chunks");
            steps.push(StepLine::Step(
                ScriptStep::Artifacts {
                    count: per.len() as u32,
                    chunks,
                    chunk_bytes: chunk_bytes as usize,
                    content,
                    text: None,
                    interleave: true,
                    media_type,
                    omit_last_chunk: false,
                    delay_ms: chunk_delay(run.iter().map(|(_, c)| *c)),
                },
                format!(
                    "seq {}-{}: {} artifacts interleaved, generated content of the recorded lengths ({})",
                    first.0,
                    run.last().map_or(first.0, |l| l.1.0),
                    per.len(),
                    recorded_hashes(&ids, sent)
                ),
            ));
            return;
        }
        let t = todo(
            m,
            agent,
            first.0,
            format!(
                "the chunks of {} artifacts were interleaved; written one artifact after another",
                ids.len()
            ),
        );
        steps.push(t);
    }
    for (id, chunks) in per {
        artifact_steps(agent, view, id, &chunks, sent, blobs, steps, m);
    }
}

pub(super) fn recorded_hashes(ids: &[&str], sent: &BTreeMap<String, (u64, String)>) -> String {
    ids.iter()
        .map(|id| match sent.get(*id) {
            Some((b, h)) => format!("{id}: {b} bytes, sha256 {h}"),
            None => format!("{id}: not completed"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The typical gap between chunks, in ms (0 below the noise floor).
pub(super) fn chunk_delay(chunks: impl Iterator<Item = ChunkRec>) -> u64 {
    let ats: Vec<u64> = chunks.map(|c| c.1).collect();
    let mut gaps: Vec<u64> = ats.windows(2).map(|w| gap_ms(w[0], w[1])).collect();
    gaps.sort_unstable();
    gaps.get(gaps.len() / 2).copied().unwrap_or(0)
}

/// The recorded parts of each chunk of one artifact, where the journal kept them: aligned from
/// the streams that carried its updates, else from a task snapshot.
pub(super) fn chunk_parts(
    view: &TaskView,
    id: &str,
    chunks: &[ChunkRec],
) -> Vec<Option<Vec<Value>>> {
    let mut out: Vec<Option<Vec<Value>>> = vec![None; chunks.len()];
    for list in view.updates.values() {
        let mine: Vec<&Value> = list
            .iter()
            .filter(|u| u.pointer("/artifact/artifactId").and_then(Value::as_str) == Some(id))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let fits = |o: usize| {
            mine.iter().enumerate().all(|(j, u)| {
                chunks.get(o + j).is_some_and(|c| {
                    let parts = u.pointer("/artifact/parts").and_then(Value::as_array);
                    let bytes: u64 = parts.into_iter().flatten().filter_map(part_bytes).sum();
                    u.get("append").and_then(Value::as_bool).unwrap_or(false) == c.2
                        && u.get("lastChunk").and_then(Value::as_bool).unwrap_or(false) == c.3
                        && bytes == c.4
                })
            })
        };
        if let Some(o) = (0..chunks.len()).find(|o| fits(*o)) {
            for (j, u) in mine.iter().enumerate() {
                if out[o + j].is_none() {
                    out[o + j] = u
                        .pointer("/artifact/parts")
                        .and_then(Value::as_array)
                        .cloned();
                }
            }
        }
    }
    // A snapshot keeps the appended parts in order: one part per chunk lines up, or all of
    // them in the one chunk.
    let Some(parts) = view
        .snapshot
        .as_ref()
        .and_then(|t| t.get("artifacts"))
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|x| x.get("artifactId").and_then(Value::as_str) == Some(id))
        })
        .and_then(|a| a.get("parts"))
        .and_then(Value::as_array)
    else {
        return out;
    };
    if let [only] = chunks
        && out[0].is_none()
        && parts
            .iter()
            .map(|p| part_bytes(p).unwrap_or(0))
            .sum::<u64>()
            == only.4
    {
        out[0] = Some(parts.clone());
    }
    if out.iter().any(Option::is_none)
        && parts.len() == chunks.len()
        && parts
            .iter()
            .zip(chunks)
            .all(|(p, c)| part_bytes(p).unwrap_or(0) == c.4)
    {
        for (j, p) in parts.iter().enumerate() {
            if out[j].is_none() {
                out[j] = Some(vec![p.clone()]);
            }
        }
    }
    out
}

/// The artifact's own fields (name, description, metadata) from its first recorded update.
pub(super) fn artifact_fields(view: &TaskView, id: &str) -> Option<Value> {
    view.updates
        .values()
        .flatten()
        .filter_map(|u| u.get("artifact"))
        .chain(
            view.snapshot
                .as_ref()
                .and_then(|t| t.get("artifacts"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .find(|a| {
            a.get("artifactId").and_then(Value::as_str) == Some(id) && a.get("name").is_some()
        })
        .cloned()
}

pub(super) fn total(chunks: &[ChunkRec]) -> u64 {
    chunks.iter().map(|c| c.4).sum()
}

pub(super) fn standard_flags(chunks: &[ChunkRec]) -> bool {
    chunks
        .iter()
        .enumerate()
        .all(|(i, c)| c.2 == (i > 0) && c.3 == (i + 1 == chunks.len()))
}

/// Whether the artifact is written literally: every chunk's bytes in the journal (whatever
/// their size: long parts go to files beside the scenario).
pub(super) fn literal_ok(view: &TaskView, id: &str, chunks: &[ChunkRec]) -> bool {
    chunk_parts(view, id, chunks)
        .iter()
        .all(|p| p.as_ref().is_some_and(|p| !p.iter().any(has_summary)))
}

/// The shape of generated content that reproduces these chunks: (chunks, chunk bytes, content
/// kind, media type), when every chunk but none is of one size.
pub(super) fn generated_shape(view: &TaskView, id: &str, chunks: &[ChunkRec]) -> Option<Shape> {
    let size = chunks.first()?.4;
    if size == 0 || chunks.iter().any(|c| c.4 != size) {
        return None;
    }
    let part = view
        .updates
        .values()
        .flatten()
        .chain(view.snapshot.iter())
        .filter_map(|u| {
            u.get("artifact")
                .filter(|a| a.get("artifactId").and_then(Value::as_str) == Some(id))
                .or_else(|| {
                    u.get("artifacts").and_then(Value::as_array).and_then(|a| {
                        a.iter()
                            .find(|x| x.get("artifactId").and_then(Value::as_str) == Some(id))
                    })
                })
        })
        .find_map(|a| a.pointer("/parts/0").cloned());
    let content = match &part {
        Some(p) if p.get("raw").is_some() => ContentKind::Raw,
        _ => ContentKind::Text,
    };
    let media = part
        .as_ref()
        .and_then(|p| p.get("mediaType"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((chunks.len() as u32, size, content, media, part.is_some()))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn artifact_steps(
    agent: &str,
    view: &TaskView,
    id: &str,
    chunks: &[ChunkRec],
    sent: &BTreeMap<String, (u64, String)>,
    blobs: &[(String, u64, String)],
    steps: &mut Vec<StepLine>,
    m: &mut Model,
) {
    let Some(first) = chunks.first() else {
        return;
    };
    let seqs = match chunks.last() {
        Some(l) if l.0 != first.0 => format!("seq {}-{}", first.0, l.0),
        _ => format!("seq {}", first.0),
    };
    let recorded = match sent.get(id) {
        Some((b, h)) => format!("recorded {b} bytes, sha256 {h}"),
        None => "never completed".to_string(),
    };
    // Only an artifact sent in full is one a delegator reports.
    if sent.contains_key(id) {
        note_rule(m, "DLG-ART-08", "an artifact was delivered");
        if chunks.len() > 1 {
            note_rule(m, "DLG-ART-01", "artifact chunks were appended");
            note_rule(m, "DLG-ART-02", "an artifact came in several chunks");
        }
    }
    // An append to an artifact this task never started: the mock's `append_unknown`.
    let started_before = view.events.iter().any(|(s, _, e)| {
        *s < first.0 && matches!(e, Event::ArtifactChunk { artifact_id, .. } if artifact_id == id)
    });
    if first.2 && !started_before && chunks.len() == 1 {
        note_rule(m, "DLG-ART-09", "an append to an artifact never started");
        steps.push(StepLine::Step(
            ScriptStep::AppendUnknown,
            format!(
                "{seqs}: an append (lastChunk={}) to artifact {id:?}, never started",
                first.3
            ),
        ));
        return;
    }
    let parts = chunk_parts(view, id, chunks);
    let fields = artifact_fields(view, id);
    // A url part (zero inline bytes): by reference.
    if chunks.len() == 1
        && first.4 == 0
        && let Some(Some(p)) = parts.first()
        && let [part] = p.as_slice()
        && let Some(url) = part.get("url").and_then(Value::as_str)
    {
        note_rule(
            m,
            "DLG-ART-03",
            "an artifact was sent by reference (url part)",
        );
        let blob = blobs.iter().find(|(k, _, _)| url.contains(k.as_str()));
        let media_type = part
            .get("mediaType")
            .and_then(Value::as_str)
            .map(str::to_string);
        match blob {
            Some((_, bytes, sha)) => steps.push(StepLine::Step(
                ScriptStep::ArtifactUrl {
                    bytes: *bytes,
                    media_type,
                    target: Default::default(),
                },
                format!("{seqs}: a url part served by the agent, {bytes} bytes (recorded sha256 {sha}; the generated bytes differ)"),
            )),
            None => steps.push(StepLine::Step(
                literal_artifact(id, fields.as_ref(), &[vec![part.clone()]], m),
                format!("{seqs}: a url part ({url}); the mock does not serve that address"),
            )),
        }
        return;
    }
    if literal_ok(view, id, chunks) {
        let lists: Vec<Vec<Value>> = parts.into_iter().flatten().collect();
        if standard_flags(chunks) {
            steps.push(StepLine::Step(
                literal_artifact(id, fields.as_ref(), &lists, m),
                format!(
                    "{seqs}: {} bytes in {} chunk(s), literal ({recorded})",
                    total(chunks),
                    chunks.len()
                ),
            ));
            return;
        }
        // Unusual flags: hand-made chunks, when each is one text part.
        let texts: Option<Vec<String>> = lists
            .iter()
            .map(|l| match l.as_slice() {
                [p] => p.get("text").and_then(Value::as_str).map(str::to_string),
                _ => None,
            })
            .collect();
        if let Some(texts) = texts {
            for (c, text) in chunks.iter().zip(texts) {
                steps.push(StepLine::Step(
                    ScriptStep::Chunk {
                        artifact_id: id.to_string(),
                        text,
                        append: c.2,
                        last_chunk: c.3,
                    },
                    format!("seq {}: append={} lastChunk={}", c.0, c.2, c.3),
                ));
            }
            return;
        }
        let t = todo(
            m,
            agent,
            first.0,
            format!(
                "artifact {id:?}: chunks with unusual append/lastChunk flags and parts other than one text part"
            ),
        );
        steps.push(t);
        return;
    }
    // Large, or its bytes not in the journal: generated content of the same length.
    let omit_last = !chunks.last().is_some_and(|c| c.3);
    let flags_ok = chunks.iter().enumerate().all(|(i, c)| c.2 == (i > 0))
        && chunks[..chunks.len() - 1].iter().all(|c| !c.3);
    match generated_shape(view, id, chunks) {
        Some((n, size, content, media_type, seen)) if flags_ok => {
            m.generated
                .push((first.0, format!("{seqs}: artifact {id:?}, {recorded}")));
            let data_part = parts
                .iter()
                .flatten()
                .flatten()
                .any(|p| p.get("data").is_some());
            if data_part {
                let t = todo(
                    m,
                    agent,
                    first.0,
                    format!("artifact {id:?}: a large data part; its value is not in the journal"),
                );
                steps.push(t);
                return;
            }
            steps.push(StepLine::Step(
                ScriptStep::Artifacts {
                    count: 1,
                    chunks: n,
                    chunk_bytes: size as usize,
                    content,
                    text: None,
                    interleave: false,
                    media_type,
                    omit_last_chunk: omit_last,
                    delay_ms: chunk_delay(chunks.iter().copied()),
                },
                format!(
                    "{seqs}: {} bytes in {n} chunk(s) of {size}, generated: same length{}, not the same bytes ({recorded}; the artifact id becomes artifact-N)",
                    total(chunks),
                    if seen {
                        " and media type"
                    } else {
                        " (the journal summarised every part: text, no media type, as a guess)"
                    }
                ),
            ));
        }
        _ => {
            let sizes: Vec<u64> = chunks.iter().map(|c| c.4).collect();
            let t = todo(
                m,
                agent,
                first.0,
                format!(
                    "artifact {id:?}: {} bytes in chunks of {sizes:?} with flags the generated step cannot reproduce ({recorded})",
                    total(chunks)
                ),
            );
            steps.push(t);
        }
    }
}

/// An `artifact` step of literal parts.
pub(super) fn literal_artifact(
    id: &str,
    fields: Option<&Value>,
    lists: &[Vec<Value>],
    m: &mut Model,
) -> ScriptStep {
    let mut number = None;
    let specs: Vec<Vec<PartSpec>> = lists
        .iter()
        .enumerate()
        .map(|(c, l)| {
            l.iter()
                .filter_map(part_spec)
                .enumerate()
                .map(|(k, p)| kept_in_file(p, m, &mut number, c + 1, k + 1))
                .collect()
        })
        .collect();
    let name = fields
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .filter(|n| *n != id)
        .map(str::to_string);
    let (parts, chunks) = if specs.len() == 1 {
        (specs.into_iter().next().unwrap_or_default(), Vec::new())
    } else {
        (Vec::new(), specs)
    };
    ScriptStep::Artifact {
        artifact_id: Some(id.to_string()),
        name,
        description: fields
            .and_then(|f| f.get("description"))
            .and_then(Value::as_str)
            .map(str::to_string),
        metadata: fields
            .and_then(|f| f.get("metadata"))
            .and_then(Value::as_object)
            .cloned(),
        parts,
        chunks,
        delay_ms: 0,
    }
}

/// Whether a JSON value holds something a TOML value cannot (`null`).
fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

/// A part whose content is longer than [`LITERAL_MAX_BYTES`] (or a `data` value TOML cannot
/// hold) moved to a file beside the scenario: `<dir>/artifact-N.chunk-C.part-P.<ext>`, N
/// numbering the artifacts with files (`number`, set at the first file of this artifact).
fn kept_in_file(
    mut p: PartSpec,
    m: &mut Model,
    number: &mut Option<u32>,
    chunk: usize,
    part: usize,
) -> PartSpec {
    let max = LITERAL_MAX_BYTES as usize;
    let (ext, bytes) = if let Some(t) = p.text.as_ref().filter(|t| t.len() > max) {
        ("txt", t.as_bytes().to_vec())
    } else if let Some(b) = p.raw_base64.as_ref().filter(|b| b.0.len() > max) {
        ("bin", b.0.clone())
    } else if let Some(d) = p.data.as_ref()
        && let Ok(json) = serde_json::to_vec(d)
        && (json.len() > max || has_null(d))
    {
        ("json", json)
    } else {
        return p;
    };
    let n = *number.get_or_insert_with(|| {
        m.file_artifacts += 1;
        m.file_artifacts
    });
    let path = format!(
        "{}/artifact-{n}.chunk-{chunk}.part-{part}.{ext}",
        m.files_dir
    );
    match ext {
        "txt" => {
            p.text = None;
            p.text_file = Some(path.clone());
        }
        "bin" => {
            p.raw_base64 = None;
            p.raw_file = Some(path.clone());
        }
        _ => {
            p.data = None;
            p.data_file = Some(path.clone());
        }
    }
    m.files.push((path, bytes));
    p
}
